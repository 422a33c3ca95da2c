//! The job and node actions `scontrol` and `scancel` can take, as scenario
//! events (issue 18 item 5): each outcome worked out by hand from Slurm's
//! rules (docs/scenario-format.md, "Events"), and bad actions refused with
//! exit code 2, the file and the field path, in scenarios and in
//! `sim conformance` cases.
//!
//! Every scenario runs with `sched_interval: 1` (a main pass every second
//! something changed), `timelimit_check_interval: 0` (a job is killed
//! exactly at its limit) and `cred_expire: 1`. An admin action comes after
//! its second's main pass (docs/architecture.md, the event-ordering
//! contract): a job it lets run starts in the next second.

use std::path::Path;
use std::process::Command;

use gresim_engine::SimOutput;
use gresim_model::job::Job;
use serde_json::{json, Value};

fn run(jobs: Value, events: Value) -> SimOutput {
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "partitions": [{"name": "gpu", "nodes": "gpu01", "default": true},
                       {"name": "other", "nodes": "gpu02"}],
        "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0,
                      "def_mem_per_cpu": 1024, "cred_expire": 1},
        "workload": {"jobs": jobs},
        "events": events,
    });
    let scenario = gresim_io::parse_scenario(Path::new("admin.json"), &v.to_string())
        .unwrap_or_else(|e| panic!("the scenario does not parse: {e}"));
    let mut input = scenario.sim_input(scenario.seed);
    input.record_reasons = true;
    gresim_engine::run(input, gresim_sched::PolicyKind::Slurm.build())
        .unwrap_or_else(|e| panic!("the run failed: {e}"))
}

fn job<'a>(out: &'a SimOutput, key: &str) -> (usize, &'a Job) {
    out.jobs
        .iter()
        .enumerate()
        .find(|(_, j)| out.specs[j.sub as usize].key == key)
        .unwrap_or_else(|| panic!("no job {key}"))
}

/// Every run of a job: (state, start, end, node).
fn runs(out: &SimOutput, key: &str) -> Vec<(&'static str, u64, Option<u64>, String)> {
    job(out, key)
        .1
        .runs
        .iter()
        .map(|r| {
            let node = r
                .alloc
                .nodes
                .first()
                .map_or(String::new(), |n| out.cluster.node(n.node).name.clone());
            (r.state.as_str(), r.start, r.end, node)
        })
        .collect()
}

fn reasons(out: &SimOutput, key: &str) -> Vec<(u64, &'static str)> {
    let (i, _) = job(out, key);
    out.reasons.as_ref().expect("reasons")[i]
        .iter()
        .map(|c| (c.t, c.reason.as_str()))
        .collect()
}

#[test]
fn a_suspended_job_keeps_its_gpus_and_its_time_stops() {
    // a (2 GPUs, 30 s) runs from 0; suspended 5-15 it ends at 40, and b,
    // which needs a GPU of gpu01, waits until then. c (1 min limit, runs to
    // its limit) is suspended 10 s: TIMEOUT at 70 on gpu02.
    let out = run(
        json!([
            {"id": "a", "submit": 0, "gres": "gpu:2", "run_time": 30, "time": 5},
            {"id": "b", "submit": 1, "gres": "gpu:1", "run_time": 10, "time": 5},
            {"id": "c", "submit": 0, "gres": "gpu:1", "time": 1, "partition": "other"}
        ]),
        json!([
            {"at": 5, "action": "suspend", "job": "a"},
            {"at": 15, "action": "resume", "job": "a"},
            {"at": 20, "action": "suspend", "job": "c"},
            {"at": 30, "action": "resume", "job": "c"}
        ]),
    );
    assert_eq!(
        runs(&out, "a"),
        [("COMPLETED", 0, Some(40), "gpu01".into())]
    );
    assert_eq!(
        runs(&out, "b"),
        [("COMPLETED", 40, Some(50), "gpu01".into())]
    );
    assert_eq!(runs(&out, "c"), [("TIMEOUT", 0, Some(70), "gpu02".into())]);
}

#[test]
fn requeue_hold_holds_the_job_until_released_and_special_exit_shows_no_reason() {
    // a and s run from 0 on gpu01. requeue_hold at 10 and 12 (no
    // COMPLETING time in scenarios): held; released at 20 and 30 (their
    // begin time, kill + cred_expire + 1, long past), each runs again from
    // the next second.
    let out = run(
        json!([
            {"id": "a", "submit": 0, "gres": "gpu:1", "run_time": 30, "time": 5},
            {"id": "s", "submit": 0, "gres": "gpu:1", "run_time": 30, "time": 5}
        ]),
        json!([
            {"at": 10, "action": "requeue_hold", "job": "a"},
            {"at": 12, "action": "requeue_hold", "job": "s", "special_exit": true},
            {"at": 20, "action": "release", "job": "a"},
            {"at": 30, "action": "release", "job": "s", "owner": true}
        ]),
    );
    assert_eq!(
        runs(&out, "a"),
        [
            ("REQUEUED", 0, Some(10), "gpu01".into()),
            ("COMPLETED", 21, Some(51), "gpu01".into())
        ]
    );
    assert_eq!(
        runs(&out, "s"),
        [
            ("REQUEUED", 0, Some(12), "gpu01".into()),
            // Backfill's tick at 30 (bf_interval 30) follows the action.
            ("COMPLETED", 30, Some(60), "gpu01".into())
        ]
    );
    assert!(reasons(&out, "a").contains(&(10, "JobHeldUser")));
    assert!(!reasons(&out, "s")
        .iter()
        .any(|r| r.1.starts_with("JobHeld")));
}

#[test]
fn the_owner_cannot_release_an_administrators_hold() {
    // x fills gpu01 until 20; h is held by an admin at 1. The owner's
    // release at 5 is refused; the admin's at 30 lets it run.
    let out = run(
        json!([
            {"id": "x", "submit": 0, "gres": "gpu:2", "run_time": 20, "time": 5},
            {"id": "h", "submit": 0, "gres": "gpu:1", "run_time": 10, "time": 5}
        ]),
        json!([
            {"at": 1, "action": "hold", "job": "h", "admin": true},
            {"at": 5, "action": "release", "job": "h", "owner": true},
            {"at": 30, "action": "release", "job": "h"}
        ]),
    );
    assert_eq!(
        runs(&out, "h"),
        [("COMPLETED", 30, Some(40), "gpu01".into())]
    );
    assert!(reasons(&out, "h").contains(&(1, "JobHeldAdmin")));
}

#[test]
fn top_reorders_the_owners_pending_jobs_only() {
    // f fills gpu01 until 10; u1..u3 (user a) and v (user b, between u1 and
    // u2) wait for both GPUs. top u3 at 2: u3 first among a's jobs, then u1,
    // u2; v keeps its place (behind u1 but ahead of the lowered u2).
    // Then u3 10-15, u1 15-20, v 20-25, u2 25-30.
    let out = run(
        json!([
            {"id": "f", "submit": 0, "gres": "gpu:2", "run_time": 10, "time": 5},
            {"id": "u1", "submit": 1, "user": "a", "gres": "gpu:2", "run_time": 5, "time": 5},
            {"id": "v", "submit": 1, "user": "b", "gres": "gpu:2", "run_time": 5, "time": 5},
            {"id": "u2", "submit": 1, "user": "a", "gres": "gpu:2", "run_time": 5, "time": 5},
            {"id": "u3", "submit": 1, "user": "a", "gres": "gpu:2", "run_time": 5, "time": 5}
        ]),
        json!([
            {"at": 2, "action": "top", "job": "u3", "owner": true},
            {"at": 3, "action": "top", "job": "u3"}
        ]),
    );
    let start = |k: &str| runs(&out, k)[0].1;
    assert_eq!(
        [start("u3"), start("u1"), start("v"), start("u2")],
        [10, 15, 20, 25]
    );
}

#[test]
fn update_signal_and_filtered_cancel() {
    // r (runs 100 s, 5-min limit) gets a 1-min limit at 10: TIMEOUT at 60.
    // p waits in gpu (full) and moves to other at 5: starts there at 6.
    // k is signalled at 20: without batch nothing, with batch FAILED now
    // (signal_exit_delay 0 in scenarios) with exit code 10 (USR1).
    // The pending w1 (user a) and w2 (user b) wait behind r and k: cancel
    // --state=pending --user=a at 8 ends w1 only.
    let out = run(
        json!([
            {"id": "r", "submit": 0, "gres": "gpu:1", "run_time": 100, "time": 5},
            {"id": "k", "submit": 0, "gres": "gpu:1", "run_time": 100, "time": 5},
            {"id": "p", "submit": 1, "gres": "gpu:1", "run_time": 10, "time": 5},
            {"id": "w1", "submit": 1, "user": "a", "gres": "gpu:2", "run_time": 10, "time": 5},
            {"id": "w2", "submit": 1, "user": "b", "gres": "gpu:2", "run_time": 10, "time": 5}
        ]),
        json!([
            {"at": 5, "action": "update", "job": "p", "partition": "other"},
            {"at": 8, "action": "cancel", "state": "pending", "user": "a"},
            {"at": 10, "action": "update", "job": "r", "time_limit": 1},
            {"at": 15, "action": "signal", "job": "k", "signal": "USR1"},
            {"at": 20, "action": "signal", "job": "k", "signal": "SIGUSR1", "batch": true}
        ]),
    );
    assert_eq!(
        runs(&out, "p"),
        [("COMPLETED", 6, Some(16), "gpu02".into())]
    );
    assert_eq!(runs(&out, "k"), [("FAILED", 0, Some(20), "gpu01".into())]);
    assert_eq!(job(&out, "k").1.exit_code, 10);
    assert_eq!(runs(&out, "r"), [("TIMEOUT", 0, Some(60), "gpu01".into())]);
    assert_eq!(job(&out, "w1").1.state.as_str(), "CANCELLED");
    assert!(job(&out, "w1").1.runs.is_empty());
    // w2 needs both GPUs of gpu01: from r's end.
    assert_eq!(
        runs(&out, "w2"),
        [("COMPLETED", 60, Some(70), "gpu01".into())]
    );
}

/// `sim run` on a scenario with `events`: exit 2, the file and `needles` on stderr.
fn assert_bad_scenario(events: Value, needles: &[&str]) {
    assert_bad_with(json!({"events": events}), needles);
}

/// `sim run` on a one-node scenario with the top-level fields of `extra`
/// added: exit 2, the file and `needles` on stderr, nothing written.
fn assert_bad_with(extra: Value, needles: &[&str]) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("bad.json");
    let mut v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu01", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "workload": {"jobs": [{"id": "a", "gres": "gpu:1", "run_time": 10}]},
    });
    if let (Some(o), Some(x)) = (v.as_object_mut(), extra.as_object()) {
        o.extend(x.clone());
    }
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

/// Reservations on unknown nodes, overlapping without OVERLAP, for nobody,
/// or without a duration (docs/reservations.md).
#[test]
fn bad_reservations_exit_2_with_their_path() {
    let bad = |r: Value, needles: &[&str]| assert_bad_with(json!({"reservations": r}), needles);
    bad(
        json!([{"name": "m", "nodes": "gpu07", "users": "root", "duration": 60}]),
        &[
            "reservations[0].nodes",
            "node 'gpu07' is not in the cluster",
        ],
    );
    bad(
        json!([
            {"name": "a", "nodes": "gpu01", "users": "u1", "duration": 60},
            {"name": "b", "nodes": "gpu01", "users": "u2", "start": 600, "duration": 60},
        ]),
        &[
            "reservations[1].nodes",
            "overlaps reservation 'a'",
            "OVERLAP",
        ],
    );
    bad(
        json!([{"name": "m", "nodes": "gpu01", "duration": 60}]),
        &["reservations[0].users", "expected users or accounts"],
    );
    bad(
        json!([{"name": "m", "nodes": "gpu01", "users": "u1"}]),
        &[
            "reservations[0].duration",
            "expected either duration or end",
        ],
    );
}

#[test]
fn bad_scenario_actions_exit_2_with_their_path() {
    assert_bad_scenario(
        json!([{"at": 1, "action": "frobnicate", "job": "a"}]),
        &["events[0].action", "unknown action 'frobnicate'"],
    );
    assert_bad_scenario(
        json!([{"at": 1, "action": "signal", "job": "a", "signal": "STOP"}]),
        &["events[0].signal", "unsupported signal 'STOP'"],
    );
    assert_bad_scenario(
        json!([{"at": 1, "action": "update", "job": "a", "partition": "nope"}]),
        &["events[0].partition", "no such partition"],
    );
    assert_bad_scenario(
        json!([{"at": 1, "action": "update", "job": "a"}]),
        &["events[0].action", "needs one of"],
    );
    assert_bad_scenario(
        json!([{"at": 1, "action": "cancel", "job": "a", "state": "weird"}]),
        &["events[0].state", "unsupported job state"],
    );
    assert_bad_scenario(
        json!([{"at": 1, "action": "hold", "job": "a", "colour": "red"}]),
        &["events[0]", "colour"],
    );
}

/// `sim conformance` on a one-job case with one action: exit 2 naming the
/// file and the action's path.
fn assert_bad_case(cmd: &str, needle: &str) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("case.json");
    let v = json!({
        "nodes": [{"name": "n1", "cpus": 16, "mem_mb": 64000, "gpus": [{"type": "a100", "count": 4}]}],
        "actions": [{"at": 1, "cmd": cmd}],
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

#[test]
fn bad_case_commands_exit_2_with_their_path() {
    assert_bad_case("scontrol frobnicate {j1}", "unsupported command");
    assert_bad_case("scancel --frob {j1}", "unsupported scancel option '--frob'");
    assert_bad_case("scancel --state=SUSPENDED {j1}", "unsupported job state");
    assert_bad_case("scancel --signal=WINCH {j1}", "unsupported signal");
    assert_bad_case(
        "scontrol update JobId={j1} Colour=red",
        "unsupported job update key 'colour'",
    );
    assert_bad_case(
        "scontrol update NodeName=n1 State=MAINT",
        "unsupported node state 'MAINT'",
    );
    assert_bad_case("scontrol requeuehold State=Odd {j1}", "State=SpecialExit");
    assert_bad_case("scontrol hold {nope}", "no job 'nope'");
    // Reservations (docs/reservations.md).
    assert_bad_case(
        "scontrol create reservation ReservationName=m StartTime=now Duration=1 Users=root Nodes=n9",
        "node 'n9' is not in the cluster",
    );
    assert_bad_case(
        "scontrol create reservation ReservationName=m StartTime=soon Duration=1 Users=root Nodes=n1",
        "StartTime 'soon'",
    );
    assert_bad_case(
        "scontrol create reservation ReservationName=m Duration=1 Users=root Nodes=n1 Colour=red",
        "unsupported reservation key 'colour'",
    );
}
