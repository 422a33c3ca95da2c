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

/// `TRES=` in `scontrol create reservation`, as 22.05's
/// `state_control_parse_resv_tres()` reads it: `node=N` is a node count;
/// GRES are refused by scontrol itself (no reservation is made); cores,
/// licenses and burst buffers are refused as not modelled.
#[test]
fn scontrol_reservation_tres() {
    let sc = gresim_io::parse_scenario(
        Path::new("ok.json"),
        &scenario(json!([]), json!([]), json!([])).to_string(),
    )
    .expect("a valid scenario");
    let words = |s: &'static str| s.split_whitespace().collect::<Vec<_>>();
    let create =
        "scontrol create reservation ReservationName=r StartTime=now Duration=10 Users=root";
    let parse = |extra: &'static str| {
        let line = format!("{create} {extra}");
        let w: Vec<&str> = line.split_whitespace().collect();
        (
            gresim_io::resv::scontrol_refusal(&w),
            gresim_io::resv::parse_scontrol(&w[1..], 0, &sc.cluster).map(|a| match a {
                Some(gresim_engine::Action::ResvCreate(r)) => r.node_cnt,
                other => panic!("expected a creation, got {other:?}"),
            }),
        )
    };
    assert_eq!(parse("TRES=node=2"), (None, Ok(Some(2))));
    assert_eq!(parse("tres=Node=1"), (None, Ok(Some(1))));
    let (refusal, parsed) = parse("Nodes=n1 TRES=gres/gpu=4");
    assert_eq!(
        refusal.as_deref(),
        Some("TRES type 'gres/gpu' not supported with reservations")
    );
    assert!(parsed.is_err_and(|e| e.contains("gres/gpu") && e.contains("NodeCnt")));
    // Several CPU counts are one item each after `cpu=`; cores are not modelled.
    let (refusal, parsed) = parse("TRES=cpu=2,4");
    assert_eq!(refusal, None);
    assert!(parsed.is_err_and(|e| e.contains("not modelled")));
    let (refusal, parsed) = parse("CoreCnt=4 Nodes=n1");
    assert_eq!(refusal, None);
    assert!(parsed.is_err_and(|e| e.contains("CoreCnt") && e.contains("not modelled")));
    assert!(parse("TRES=node=x")
        .1
        .is_err_and(|e| e.contains("node count")));
    // Other commands are never refused this way.
    assert_eq!(
        gresim_io::resv::scontrol_refusal(&words("scontrol hold 3")),
        None
    );
}

/// `REPLACE` needs `node_count`: slurmctld refuses it with `Nodes=`
/// (`create_resv()`), and `REPLACE_DOWN` is not modelled.
#[test]
fn replace_with_nodes_is_refused() {
    let e = parse_err(scenario(
        json!([]),
        json!([{"name": "r", "nodes": "n1", "users": "u1", "duration": 10, "flags": "REPLACE"}]),
        json!([]),
    ));
    assert!(
        e.contains("reservations[0].nodes") && e.contains("REPLACE needs node_count"),
        "{e}"
    );
    let e = parse_err(scenario(
        json!([]),
        json!([{"name": "r", "node_count": 1, "users": "u1", "duration": 10,
                "flags": "REPLACE_DOWN"}]),
        json!([]),
    ));
    assert!(
        e.contains("reservations[0].flags") && e.contains("not modelled"),
        "{e}"
    );
    let ok = scenario(
        json!([]),
        json!([{"name": "r", "node_count": 1, "users": "u1", "duration": 10, "flags": "replace"}]),
        json!([]),
    );
    assert!(gresim_io::parse_scenario(Path::new("ok.json"), &ok.to_string()).is_ok());
}
