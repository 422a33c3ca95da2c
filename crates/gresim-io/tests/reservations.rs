//! Reservations as inputs (docs/reservations.md): the scenario's
//! `reservations` refused with their JSON path (the harness's `scontrol …
//! reservation` commands are tested in gresim-conformance).

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
