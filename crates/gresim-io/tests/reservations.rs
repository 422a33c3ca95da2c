//! Reservations as inputs (docs/reservations.md): the scenario's
//! `reservations` refused with their JSON path, and the harness's `scontrol
//! … reservation` commands read by the conformance reader.

use std::path::Path;

use serde_json::{json, Value};

/// Nodes n1 and n2 (one partition holding both) with `reservations`.
fn scenario(jobs: Value, reservations: Value, events: Value) -> Value {
    let node = json!({"names": "n[1-2]", "cores_per_socket": 2, "memory": "8G"});
    json!({"schema_version": 1, "cluster": {"nodes": [node]}, "reservations": reservations,
           "workload": {"jobs": jobs}, "events": events})
}

fn parse_err(v: Value) -> String {
    match gresim_io::parse_scenario(Path::new("bad.json"), &v.to_string()) {
        Ok(_) => panic!("the scenario must be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_reservations_name_their_path() {
    let e = parse_err(scenario(
        json!([]),
        json!([{"name": "r", "nodes": "n9", "users": "u1", "duration": 10}]),
        json!([]),
    ));
    assert!(
        e.contains("reservations[0].nodes") && e.contains("n9"),
        "{e}"
    );
    let e = parse_err(scenario(
        json!([]),
        json!([
            {"name": "a", "nodes": "n[1-2]", "users": "u1", "duration": 10},
            {"name": "b", "nodes": "n2", "users": "u2", "start": 300, "duration": 10},
        ]),
        json!([]),
    ));
    assert!(
        e.contains("reservations[1].nodes") && e.contains("OVERLAP"),
        "{e}"
    );
    // The same with OVERLAP (or MAINT) is accepted.
    let ok = scenario(
        json!([]),
        json!([
            {"name": "a", "nodes": "n[1-2]", "users": "u1", "duration": 10},
            {"name": "b", "nodes": "n2", "users": "u2", "start": 300, "duration": 10,
             "flags": "OVERLAP"},
        ]),
        json!([]),
    );
    assert!(gresim_io::parse_scenario(Path::new("ok.json"), &ok.to_string()).is_ok());
    let e = parse_err(scenario(
        json!([]),
        json!([{"name": "r", "nodes": "n1", "users": "u1", "duration": 10, "flags": "STATIC"}]),
        json!([]),
    ));
    assert!(
        e.contains("reservations[0].flags") && e.contains("STATIC"),
        "{e}"
    );
}

/// The conformance reader turns the harness's `scontrol` commands into the
/// same actions: `StartTime=now+90` at 0 s starts at 89 s, as recorded.
#[test]
fn scontrol_create_reservation_in_a_case() {
    let dir = std::env::temp_dir().join(format!("gresim-resv-case-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("case.json");
    let v = json!({
        "nodes": [{"name": "n[1-2]", "cpus": 16, "mem_mb": 64000,
                   "gpus": [{"type": "a100", "count": 4}]}],
        "actions": [{"at": 0, "cmd": "scontrol create reservation ReservationName=m StartTime=now+90 Duration=1 Users=root Flags=MAINT Nodes=n2"},
                    {"at": 1, "cmd": "scontrol show reservation"}],
        "jobs": [{"id": "j1", "submit": 1, "gres": "gpu:1", "time_limit": 1,
                  "sbatch_args": ["--reservation=m"]}],
    });
    std::fs::write(&path, v.to_string()).unwrap();
    let case = gresim_io::conformance::load_case(&path).expect("the case loads");
    let a = &case.scenario.actions;
    assert_eq!(a.len(), 1, "show changes nothing: {a:?}");
    match &a[0].action {
        gresim_engine::Action::ResvCreate(r) => {
            assert_eq!((r.resv.start, r.resv.end), (89, 149));
            assert_eq!(r.resv.nodes.len(), 1);
        }
        other => panic!("expected a reservation, got {other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}
