//! Reservations through the CLI (docs/reservations.md): a job naming an
//! unknown reservation is a REJECTED record, and the views show
//! reservations. Bad reservations (exit 2) are tested with the other bad
//! inputs in admin_actions.rs.

use std::process::Command;

use serde_json::json;

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
