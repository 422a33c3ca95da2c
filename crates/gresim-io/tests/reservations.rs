//! Advance reservations end to end (docs/reservations.md): a scenario's
//! `reservations` and reservation events, read here, decided by
//! `gresim-sched`'s main pass and backfill (`job_test_resv()`), carried out
//! by the engine. Each outcome is worked out by hand from Slurm's rules.
//!
//! Two nodes with 2 A100s each, one partition; `sched_interval: 1` and
//! `bf_interval: 1`, no 30-s limit check (jobs end at their run time).

use std::path::Path;

use gresim_engine::SimOutput;
use gresim_model::job::Job;
use gresim_model::Reason;
use serde_json::{json, Value};

fn scenario(jobs: Value, reservations: Value, events: Value) -> Value {
    json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}],
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                      "def_mem_per_cpu": 1024},
        "reservations": reservations,
        "workload": {"jobs": jobs},
        "events": events,
    })
}

fn run(v: Value) -> SimOutput {
    let s = gresim_io::parse_scenario(Path::new("resv.json"), &v.to_string())
        .unwrap_or_else(|e| panic!("the scenario does not parse: {e}"));
    let mut input = s.sim_input(s.seed);
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

/// (start, first node) of the job's only run.
fn start(out: &SimOutput, key: &str) -> (u64, String) {
    let r = job(out, key)
        .1
        .runs
        .first()
        .unwrap_or_else(|| panic!("{key} never ran"));
    let n = r.alloc.nodes[0].node;
    (r.start, out.cluster.node(n).name.clone())
}

fn reasons(out: &SimOutput, key: &str) -> Vec<Reason> {
    let (i, _) = job(out, key);
    out.reasons.as_ref().expect("reasons recorded")[i]
        .iter()
        .map(|c| c.reason)
        .collect()
}

/// A reservation for u1 on gpu02 for the whole run: u2's second whole-node
/// job waits for gpu01 although gpu02 is idle.
#[test]
fn other_jobs_avoid_reserved_nodes() {
    let out = run(scenario(
        json!([
            {"id": "a", "user": "u2", "gres": "gpu:2", "time": 10, "run_time": 100},
            {"id": "b", "user": "u2", "submit": 1, "gres": "gpu:2", "time": 10, "run_time": 100},
        ]),
        json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 0, "duration": 60}]),
        json!([]),
    ));
    assert_eq!(start(&out, "a"), (0, "gpu01".into()));
    assert_eq!(
        start(&out, "b"),
        (100, "gpu01".into()),
        "b must not use the reserved gpu02"
    );
}

/// A MAINT window on gpu02 at [600, 1200): b (20-min limit) would still run
/// at 600 and waits for gpu01; c (5-min limit) ends before the window and
/// starts on gpu02 at once.
#[test]
fn a_job_whose_limit_crosses_the_window_waits() {
    let out = run(scenario(
        json!([
            {"id": "a", "gres": "gpu:2", "time": 20, "run_time": 100},
            {"id": "b", "submit": 1, "gres": "gpu:2", "time": 20, "run_time": 100},
            {"id": "c", "submit": 2, "gres": "gpu:2", "time": 5, "run_time": 60},
        ]),
        json!([{"name": "maint", "nodes": "gpu02", "users": "root", "start": 600,
                "duration": 10, "flags": "MAINT"}]),
        json!([]),
    ));
    assert_eq!(start(&out, "a"), (0, "gpu01".into()));
    assert_eq!(start(&out, "b"), (100, "gpu01".into()));
    assert_eq!(start(&out, "c"), (2, "gpu02".into()));
}

/// A MAINT reservation over the whole partition: the job waits with
/// "ReqNodeNotAvail, Reserved for maintenance" and starts at its end.
#[test]
fn maint_over_the_partition_gives_its_reason() {
    let out = run(scenario(
        json!([{"id": "a", "submit": 1, "gres": "gpu:1", "time": 5, "run_time": 60}]),
        json!([{"name": "m", "nodes": "ALL", "users": "root", "start": 0, "duration": 10,
                "flags": "MAINT"}]),
        json!([]),
    ));
    assert_eq!(start(&out, "a").0, 600);
    let (i, _) = job(&out, "a");
    let hist = &out.reasons.as_ref().expect("reasons")[i];
    assert!(
        hist.iter().any(|c| c.reason == Reason::ReqNodeNotAvail
            && c.desc.as_deref() == Some("Reserved for maintenance")),
        "{hist:?}"
    );
}

/// A job with --reservation waits (Reservation) until its reservation
/// begins, then runs on its nodes only; sbatch refuses a job naming a
/// reservation its user may not use, or one that does not exist.
#[test]
fn a_reservation_job_starts_only_inside_it() {
    let out = run(scenario(
        json!([
            {"id": "x", "user": "u1", "gres": "gpu:1", "time": 5, "run_time": 60,
             "reservation": "team"},
            {"id": "y", "user": "u2", "gres": "gpu:1", "time": 5, "run_time": 60,
             "reservation": "team"},
            {"id": "z", "user": "u1", "gres": "gpu:1", "time": 5, "run_time": 60,
             "reservation": "nosuch"},
        ]),
        json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 300, "duration": 10}]),
        json!([]),
    ));
    assert_eq!(start(&out, "x"), (300, "gpu02".into()));
    assert!(
        reasons(&out, "x").contains(&Reason::Reservation),
        "{:?}",
        reasons(&out, "x")
    );
    assert_eq!(
        job(&out, "y").1.rejected(),
        Some("Access denied to requested reservation")
    );
    assert_eq!(
        job(&out, "z").1.rejected(),
        Some("Requested reservation is invalid")
    );
}

/// Backfill plans around a future MAINT window on gpu03 at [600, 1200),
/// three nodes. `hog` holds gpu01 and gpu02 until 1100; `w` (both GPUs of a
/// node, 10 min) then waits for Resources, which stops the main pass at its
/// partition, so only backfill starts the later jobs: `s` (5 min) and `s3`
/// (4 min) end before the window and run on gpu03 at once; `s4` (5 min at
/// 330) would still run at 600 and must wait for the other nodes; `big`
/// (all three nodes) runs when the window is over.
#[test]
fn backfill_plans_around_a_future_window() {
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu[01-03]", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}],
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                      "def_mem_per_cpu": 1024},
        "reservations": [{"name": "maint", "nodes": "gpu03", "users": "root", "start": 600,
                          "duration": 10, "flags": "MAINT"}],
        "workload": {"jobs": [
            {"id": "hog", "nodes": 2, "gres": "gpu:2", "time": 20, "run_time": 1100},
            {"id": "w", "submit": 1, "gres": "gpu:2", "time": 10, "run_time": 60},
            {"id": "big", "submit": 2, "nodes": 3, "gres": "gpu:2", "time": 10, "run_time": 60},
            {"id": "s", "submit": 10, "gres": "gpu:2", "time": 5, "run_time": 60},
            {"id": "s3", "submit": 320, "gres": "gpu:2", "time": 4, "run_time": 60},
            {"id": "s4", "submit": 330, "gres": "gpu:2", "time": 5, "run_time": 60},
        ]},
    });
    let out = run(v);
    assert_eq!(start(&out, "hog").0, 0);
    assert_eq!(start(&out, "s"), (10, "gpu03".into()));
    assert_eq!(start(&out, "s3"), (320, "gpu03".into()));
    let s4 = start(&out, "s4");
    assert!(
        s4.0 >= 1100 && s4.1 != "gpu03",
        "s4 must not cross the window: {s4:?}"
    );
    assert!(
        reasons(&out, "s").contains(&Reason::Priority),
        "{:?}",
        reasons(&out, "s")
    );
    assert_eq!(start(&out, "w").0, 1100);
    assert_eq!(
        start(&out, "big").0,
        1200,
        "big runs once the window is over"
    );
}

/// Reservations made, changed and deleted by timed actions, as `scontrol`
/// does: the delete at 50 frees gpu02 for `b`.
#[test]
fn timed_reservation_actions() {
    let out = run(scenario(
        json!([
            {"id": "a", "gres": "gpu:2", "time": 10, "run_time": 200},
            {"id": "b", "submit": 20, "gres": "gpu:2", "time": 10, "run_time": 30},
        ]),
        json!([]),
        json!([
            {"at": 10, "action": "create_reservation",
             "reservation": {"name": "r", "nodes": "gpu02", "users": "u9", "duration": 60}},
            {"at": 30, "action": "update_reservation",
             "reservation": {"name": "r", "users": "u8"}},
            {"at": 50, "action": "delete_reservation", "reservation": {"name": "r"}},
        ]),
    ));
    assert_eq!(start(&out, "b"), (50, "gpu02".into()));
    assert_eq!(out.resv_history.len(), 3, "created, updated, deleted");
    assert!(out.reservations_at(60).is_some_and(|r| r.is_empty()));
    assert!(out.resv_refused.is_empty(), "{:?}", out.resv_refused);
}

/// `create_resv()` refuses a reservation on nodes still held by running
/// jobs at its start, unless IGNORE_JOBS.
#[test]
fn a_reservation_on_busy_nodes_needs_ignore_jobs() {
    let events = |flags: &str| {
        json!([{"at": 5, "action": "create_reservation",
                "reservation": {"name": "m", "nodes": "gpu01", "users": "root",
                                "start": 60, "duration": 10, "flags": flags}}])
    };
    let jobs = json!([{"id": "a", "gres": "gpu:2", "time": 10, "run_time": 100}]);
    let out = run(scenario(jobs.clone(), json!([]), events("MAINT")));
    assert_eq!(out.resv_refused.len(), 1);
    assert_eq!(out.resv_refused[0].error, "Requested nodes are busy");
    let out = run(scenario(jobs, json!([]), events("MAINT,IGNORE_JOBS")));
    assert!(out.resv_refused.is_empty());
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
        json!([{"name": "r", "nodes": "gpu09", "users": "u1", "duration": 10}]),
        json!([]),
    ));
    assert!(
        e.contains("reservations[0].nodes") && e.contains("gpu09"),
        "{e}"
    );
    let e = parse_err(scenario(
        json!([]),
        json!([
            {"name": "a", "nodes": "gpu[01-02]", "users": "u1", "duration": 10},
            {"name": "b", "nodes": "gpu02", "users": "u2", "start": 300, "duration": 10},
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
            {"name": "a", "nodes": "gpu[01-02]", "users": "u1", "duration": 10},
            {"name": "b", "nodes": "gpu02", "users": "u2", "start": 300, "duration": 10,
             "flags": "OVERLAP"},
        ]),
        json!([]),
    );
    assert!(gresim_io::parse_scenario(Path::new("ok.json"), &ok.to_string()).is_ok());
    let e = parse_err(scenario(
        json!([]),
        json!([{"name": "r", "nodes": "gpu01", "users": "u1", "duration": 10, "flags": "STATIC"}]),
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
