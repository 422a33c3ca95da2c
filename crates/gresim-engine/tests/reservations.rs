//! Reservation admin actions (docs/reservations.md): `scontrol create,
//! update and delete reservation` as scenario events, carried out by the
//! engine, and the refusals slurmctld makes (`create_resv()`).

use gresim_engine::SimOutput;
use gresim_sched::PolicyKind;
use gresim_test_support::{job, run_text};
use serde_json::{json, Value};

/// Nodes n1 and n2 with 4 GPUs each; passes every second, no 30-s limit check.
fn run_events(jobs: Value, events: Value) -> SimOutput {
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "n[1-2]", "cores_per_socket": 4, "memory": "32G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}]},
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                      "def_mem_per_cpu": 512},
        "workload": {"jobs": jobs},
        "events": events,
    });
    run_text("resv_events.json", &v.to_string(), PolicyKind::Slurm)
}

/// Made, changed and deleted by timed actions: the delete at 50 frees n2
/// for `b`, which the reservation (for other users) kept off it.
#[test]
fn timed_reservation_actions() {
    let out = run_events(
        json!([
            {"id": "a", "gres": "gpu:4", "time": 10, "run_time": 200},
            {"id": "b", "submit": 20, "gres": "gpu:4", "time": 10, "run_time": 30},
        ]),
        json!([
            {"at": 10, "action": "create_reservation",
             "reservation": {"name": "r", "nodes": "n2", "users": "u9", "duration": 60}},
            {"at": 30, "action": "update_reservation",
             "reservation": {"name": "r", "users": "u8"}},
            {"at": 50, "action": "delete_reservation", "reservation": {"name": "r"}},
        ]),
    );
    let b = &job(&out, "b").runs[0];
    assert_eq!(
        (
            b.start,
            out.cluster.node(b.alloc.nodes[0].node).name.as_str()
        ),
        (50, "n2")
    );
    assert_eq!(out.resv_history.len(), 3, "created, updated, deleted");
    assert!(out
        .reservations_at(40)
        .is_some_and(|r| &*r.list[0].users[0] == "u8"));
    assert!(out.reservations_at(60).is_some_and(|r| r.is_empty()));
    assert!(out.resv_refused.is_empty(), "{:?}", out.resv_refused);
}

/// `create_resv()` refuses a reservation on nodes that running jobs still
/// hold at its start (start + time limit after it), unless IGNORE_JOBS; and
/// a second one overlapping it without OVERLAP.
#[test]
fn refusals_change_nothing() {
    let create = |name: &str, start: u64, flags: &str| {
        json!({"at": 5, "action": "create_reservation",
               "reservation": {"name": name, "nodes": "n1", "users": "root",
                               "start": start, "duration": 10, "flags": flags}})
    };
    let jobs = json!([{"id": "a", "gres": "gpu:4", "time": 10, "run_time": 100}]);
    let out = run_events(jobs.clone(), json!([create("m", 60, "MAINT")]));
    assert_eq!(out.resv_refused.len(), 1);
    assert_eq!(out.resv_refused[0].error, "Requested nodes are busy");
    assert!(out.resv_history.is_empty());
    let out = run_events(
        jobs,
        json!([
            create("m", 60, "IGNORE_JOBS"),
            create("n", 300, "IGNORE_JOBS")
        ]),
    );
    assert_eq!(out.resv_refused.len(), 1, "{:?}", out.resv_refused);
    assert!(
        out.resv_refused[0].error.contains("overlaps"),
        "{:?}",
        out.resv_refused
    );
    assert_eq!(out.resv_refused[0].name, "n");
}
