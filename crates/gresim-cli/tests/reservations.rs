//! Bad reservations are refused with exit code 2, naming the file and the
//! JSON path (scenarios) or the command (conformance cases), and nothing is
//! written (docs/reservations.md).

use std::process::Command;

use serde_json::{json, Value};

/// `sim run` on a scenario with `reservations`: exit 2, the file and `needles` on stderr.
fn assert_bad_scenario(reservations: Value, jobs: Value, needles: &[&str]) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("bad.json");
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "reservations": reservations,
        "workload": {"jobs": jobs},
    });
    std::fs::write(&path, v.to_string()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .expect("run sim");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("bad.json"), "{err}");
    for n in needles {
        assert!(err.contains(n), "the error should mention {n:?}: {err}");
    }
    assert!(!dir.path().join("out").exists());
}

#[test]
fn bad_reservations_exit_2_with_their_path() {
    let job = json!([{"id": "a", "gres": "gpu:1", "run_time": 10}]);
    assert_bad_scenario(
        json!([{"name": "m", "nodes": "gpu07", "users": "root", "duration": 60}]),
        job.clone(),
        &[
            "reservations[0].nodes",
            "node 'gpu07' is not in the cluster",
        ],
    );
    assert_bad_scenario(
        json!([
            {"name": "a", "nodes": "gpu01", "users": "u1", "duration": 60},
            {"name": "b", "nodes": "gpu[01-02]", "users": "u2", "start": 600, "duration": 60},
        ]),
        job.clone(),
        &[
            "reservations[1].nodes",
            "overlaps reservation 'a'",
            "OVERLAP",
        ],
    );
    assert_bad_scenario(
        json!([{"name": "m", "nodes": "gpu01", "duration": 60}]),
        job.clone(),
        &["reservations[0].users", "expected users or accounts"],
    );
    assert_bad_scenario(
        json!([{"name": "m", "nodes": "gpu01", "users": "u1"}]),
        job,
        &[
            "reservations[0].duration",
            "expected either duration or end",
        ],
    );
}

/// A job naming a reservation that does not exist is not bad input: sbatch
/// refuses it, and the run shows a REJECTED record.
#[test]
fn an_unknown_reservation_is_a_rejected_submission() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("ok.json");
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu01", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "workload": {"jobs": [{"id": "a", "gres": "gpu:1", "run_time": 10,
                               "reservation": "nosuch"}]},
    });
    std::fs::write(&path, v.to_string()).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("run")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run sim");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let recs = std::fs::read_to_string(out.join("records.csv")).expect("records.csv");
    assert!(recs.contains("REJECTED"), "{recs}");
}

/// `sim conformance` on a case whose reservation command is bad: exit 2
/// naming the file, the action and what was expected.
#[test]
fn bad_reservation_commands_exit_2() {
    for (cmd, needle) in [
        (
            "scontrol create reservation ReservationName=m StartTime=now Duration=1 Users=root Nodes=n9",
            "node 'n9' is not in the cluster",
        ),
        (
            "scontrol create reservation ReservationName=m StartTime=soon Duration=1 Users=root Nodes=n1",
            "StartTime 'soon'",
        ),
        (
            "scontrol create reservation ReservationName=m Duration=1 Users=root Nodes=n1 Colour=red",
            "unsupported reservation key 'colour'",
        ),
    ] {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("case.json");
        let v = json!({
            "nodes": [{"name": "n1", "cpus": 16, "mem_mb": 64000,
                       "gpus": [{"type": "a100", "count": 4}]}],
            "actions": [{"at": 0, "cmd": cmd}],
            "jobs": [{"id": "j1", "gres": "gpu:1"}],
        });
        std::fs::write(&path, v.to_string()).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_sim"))
            .arg("conformance")
            .arg(&path)
            .arg("-o")
            .arg(dir.path().join("sim.json"))
            .output()
            .expect("run sim");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        assert!(
            err.contains("case.json") && err.contains("actions[0].cmd") && err.contains(needle),
            "{cmd}: {err}"
        );
        assert!(!dir.path().join("sim.json").exists());
    }
}

/// `sim explain` names the reservation that keeps a job off nodes, and
/// `sim sinfo` shows an idle node in a MAINT window as `maint`.
#[test]
fn explain_and_sinfo_show_reservations() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("m.json");
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "scheduler": {"def_mem_per_cpu": 1024},
        "reservations": [{"name": "maint", "nodes": "gpu02", "users": "root", "start": 600,
                          "duration": 10, "flags": "MAINT"}],
        "workload": {"jobs": [
            {"id": "a", "gres": "gpu:2", "time": 20, "run_time": 100},
            {"id": "b", "submit": 1, "gres": "gpu:2", "time": 20, "run_time": 100},
        ]},
    });
    std::fs::write(&path, v.to_string()).unwrap();
    let out = dir.path().join("out");
    let sim = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(args)
            .output()
            .expect("run sim");
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let p = path.to_str().unwrap();
    let o = out.to_str().unwrap();
    sim(&["run", p, "--out", o]);
    let e = sim(&["explain", o, "b", "--at", "50"]);
    assert!(e.contains("reservation maint (MAINT) holds gpu02"), "{e}");
    let s = sim(&["sinfo", o, "--at", "700"]);
    let line = s
        .lines()
        .find(|l| l.starts_with("gpu02"))
        .expect("gpu02's line");
    assert!(line.contains("maint"), "{s}");
    let s = sim(&["sinfo", o, "--at", "1300"]);
    let line = s
        .lines()
        .find(|l| l.starts_with("gpu02"))
        .expect("gpu02's line");
    assert!(line.contains("idle"), "{s}");
}
