//! Advance reservations in Slurm's passes (docs/reservations.md): a
//! scenario's `reservations`, decided by `gresim-sched`'s main pass and
//! backfill (`job_test_resv()`). Each outcome is worked out by hand from
//! Slurm's rules.
//!
//! Two nodes with 2 A100s each, one partition; `sched_interval: 1` and
//! `bf_interval: 1`, no 30-s limit check (jobs end at their run time).

use gresim_engine::SimOutput;
use gresim_model::Reason;
use gresim_sched::PolicyKind;
use gresim_test_support::{job, run_text};
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
    run_text("resv.json", &v.to_string(), PolicyKind::Slurm)
}

/// The index of the job whose key is `key`.
fn index(out: &SimOutput, key: &str) -> usize {
    let j = job(out, key);
    out.jobs
        .iter()
        .position(|x| std::ptr::eq(x, j))
        .expect("the job is in the run")
}

/// (start, first node) of the job's only run.
fn start(out: &SimOutput, key: &str) -> (u64, String) {
    let r = job(out, key)
        .runs
        .first()
        .unwrap_or_else(|| panic!("{key} never ran"));
    let n = r.alloc.nodes[0].node;
    (r.start, out.cluster.node(n).name.clone())
}

fn reasons(out: &SimOutput, key: &str) -> Vec<Reason> {
    out.reasons.as_ref().expect("reasons recorded")[index(out, key)]
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
    let hist = &out.reasons.as_ref().expect("reasons")[index(&out, "a")];
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
        job(&out, "y").rejected(),
        Some("Access denied to requested reservation")
    );
    assert_eq!(
        job(&out, "z").rejected(),
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

/// A job running in a reservation when the reservation ends is timed out
/// at the time-limit check after its end, whatever its own limit
/// (`job_time_limit()`; the conformance case `resv_end_heldout` recorded
/// it): team holds gpu02 over [0, 60); x (10-min limit, 300 s of work)
/// ends TIMEOUT at 61, the first second past the end (the check runs every
/// second here). A FLEX reservation's job runs on to its own end;
/// `resv_over_run` gives it that much longer; moving the reservation's end
/// moves the kill.
#[test]
fn a_job_in_a_reservation_is_timed_out_when_the_reservation_ends() {
    use gresim_model::JobState;
    let end = |flags: &str, over: Option<u64>, events: Value| {
        let mut v = scenario(
            json!([{"id": "x", "user": "u1", "gres": "gpu:2", "time": 10, "run_time": 300,
                    "reservation": "team"}]),
            json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 0,
                    "duration": 1, "flags": flags}]),
            events,
        );
        if let Some(o) = over {
            v["scheduler"]["resv_over_run"] = json!(o);
        }
        let out = run(v);
        let j = job(&out, "x");
        (j.state, j.runs[0].start, j.runs[0].end)
    };
    assert_eq!(end("", None, json!([])), (JobState::Timeout, 0, Some(61)));
    assert_eq!(
        end("FLEX", None, json!([])),
        (JobState::Completed, 0, Some(300))
    );
    assert_eq!(
        end("", Some(30), json!([])),
        (JobState::Timeout, 0, Some(91))
    );
    // `scontrol update reservation` to 2 minutes (an end at 120): the kill
    // follows.
    let update = json!([{"at": 10, "action": "update_reservation",
                          "reservation": {"name": "team", "duration": 2}}]);
    assert_eq!(end("", None, update), (JobState::Timeout, 0, Some(121)));
}

/// A job that requires (`-w`) a node another reservation holds waits with
/// `ReqNodeNotAvail, May be reserved for other job`, not `Resources`:
/// `_pick_best_nodes()` answers ESLURM_NODE_NOT_AVAIL (not runnable on the
/// available nodes, none busy in its sense) before it looks at the
/// required nodes being busy; once the reservation has ended and only the
/// job holding the node keeps it, `Resources` (the recording of
/// `resv_end_heldout` showed both).
#[test]
fn a_job_that_requires_a_reserved_node_waits_with_req_node_not_avail() {
    let out = run(scenario(
        json!([
            {"id": "x", "user": "u1", "gres": "gpu:2", "time": 10, "run_time": 200,
             "reservation": "team"},
            {"id": "y", "user": "u2", "submit": 1, "gres": "gpu:2", "time": 1, "run_time": 10,
             "nodelist": "gpu02"},
        ]),
        json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 0, "duration": 1}]),
        json!([]),
    ));
    let y = index(&out, "y");
    let changes = &out.reasons.as_ref().expect("reasons recorded")[y];
    let first = changes
        .iter()
        .find(|c| c.reason != Reason::None)
        .expect("y waits");
    assert_eq!(
        (first.reason, first.desc.as_deref()),
        (
            Reason::ReqNodeNotAvail,
            Some("May be reserved for other job")
        )
    );
    assert_eq!(
        reasons(&out, "y").last(),
        Some(&Reason::Resources),
        "{changes:?}"
    );
    assert_eq!(
        start(&out, "y"),
        (61, "gpu02".into()),
        "after x's kill at 61"
    );
}

/// The jobs of the `PURGE_COMP` tests: x (u1, 20 s) in team, z (u2, 300 s)
/// on the other node, y (u2, 10 s, 1-minute limit) kept off team's node,
/// and w naming team at 150.
fn purge_jobs() -> Value {
    json!([
        {"id": "x", "user": "u1", "gres": "gpu:2", "time": 10, "run_time": 20,
         "reservation": "team"},
        {"id": "z", "user": "u2", "gres": "gpu:2", "time": 10, "run_time": 300},
        {"id": "y", "user": "u2", "submit": 1, "gres": "gpu:2", "time": 1, "run_time": 10},
        {"id": "w", "user": "u1", "submit": 150, "gres": "gpu:1", "time": 1, "run_time": 10,
         "reservation": "team"},
    ])
}

/// `PURGE_COMP=1:00`: team (gpu02, [0, 600)) is idle once x, its only job,
/// ends at 20; `job_resv_check()` (every second here) ends it a minute
/// later, so y, kept off gpu02 by it, starts there then instead of on
/// gpu01 when z ends at 300, and sbatch refuses w, which names team after
/// that. Without the flag team holds gpu02 to its end.
#[test]
fn an_idle_purge_comp_reservation_ends() {
    let run_with = |flags: &str, events: Value| {
        run(scenario(
            purge_jobs(),
            json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 0,
                    "duration": 10, "flags": flags}]),
            events,
        ))
    };
    let out = run_with("PURGE_COMP=1:00", json!([]));
    let (t, node) = start(&out, "y");
    assert!((80..=81).contains(&t) && node == "gpu02", "{t} {node}");
    assert_eq!(job(&out, "w").state, gresim_model::JobState::Rejected);
    let out = run_with("", json!([]));
    assert_eq!(start(&out, "y"), (300, "gpu01".into()));
    assert_eq!(start(&out, "w").1, "gpu02");
    // `Flags=PURGE_COMP=0:30` given by an update sets the purge time too:
    // idle from 20, ended 30 s later.
    let update = json!([{"at": 10, "action": "update_reservation",
                          "reservation": {"name": "team", "flags": "PURGE_COMP=0:30"}}]);
    let (t, node) = start(&run_with("", update), "y");
    assert!((50..=51).contains(&t) && node == "gpu02", "{t} {node}");
}

/// `DAILY,PURGE_COMP=1:00`: as above, but team recurs, so the idle
/// occurrence is not deleted: `_advance_resv_time()` moves it to the next
/// day ([86400, 87000)). y still starts on gpu02 a minute after team fell
/// idle; w, naming team at 150, is accepted and waits for tomorrow's
/// occurrence (`Reservation`), where it runs. The run ends then: the
/// reservation's daily wake-ups stop once no job is left.
#[test]
fn an_idle_recurring_purge_comp_reservation_moves_to_its_next_occurrence() {
    let out = run(scenario(
        purge_jobs(),
        json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 0,
                "duration": 10, "flags": "DAILY,PURGE_COMP=1:00"}]),
        json!([]),
    ));
    let (t, node) = start(&out, "y");
    assert!((80..=81).contains(&t) && node == "gpu02", "{t} {node}");
    assert_eq!(start(&out, "w"), (86_400, "gpu02".into()));
    assert_eq!(reasons(&out, "w").last(), Some(&Reason::Reservation));
    assert!(
        out.end_time < 86_400 + 60,
        "no wake-up after the last job: {}",
        out.end_time
    );
}

/// A DAILY reservation whose only job is held for ever: the run does not
/// wake up at every occurrence for ever. Nothing happens for eight days of
/// occurrences on an idle cluster (counted from the later of a's end at 20
/// and the reservation's start at 100), and the wake-ups stop: the last
/// one kept is the start of the occurrence eight days after 100.
#[test]
fn a_recurring_reservation_does_not_keep_a_run_going_for_ever() {
    let held = |events: Value| {
        run(scenario(
            json!([
                {"id": "a", "user": "u1", "gres": "gpu:2", "time": 10, "run_time": 20},
                {"id": "h", "user": "u1", "submit": 1, "gres": "gpu:1", "time": 1,
                 "run_time": 10, "reservation": "team", "hold": true},
            ]),
            json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 100,
                    "duration": 10, "flags": "DAILY"}]),
            events,
        ))
    };
    let out = held(json!([]));
    assert!(job(&out, "h").runs.is_empty());
    assert_eq!(out.end_time, 8 * 86_400 + 100);
    // Released on day 20, long after the wake-ups stopped, h runs in that
    // day's occurrence: the release queues them again.
    let out = held(json!([{"at": 20 * 86_400, "action": "release", "job": "h"}]));
    assert_eq!(start(&out, "h"), (20 * 86_400 + 100, "gpu02".into()));
    // A job waiting for a weekly reservation that begins in 20 days runs in
    // its first occurrence: the quiet days count from the reservation's
    // start.
    let out = run(scenario(
        json!([{"id": "f", "user": "u1", "gres": "gpu:1", "time": 1, "run_time": 10,
                "reservation": "team"}]),
        json!([{"name": "team", "nodes": "gpu02", "users": "u1", "start": 20 * 86_400,
                "duration": 10, "flags": "WEEKLY"}]),
        json!([]),
    ));
    assert_eq!(start(&out, "f"), (20 * 86_400, "gpu02".into()));
}

/// A reservation's job whose required nodes (`-w`) are busy does not fail
/// its reservation: `_schedule()` takes the required-nodes branch (the
/// nodes leave the pass) before the reservation one, so x2, of the same
/// reservation, is still tried by the main pass and starts at once on
/// gpu01.
#[test]
fn a_reservation_job_waiting_for_its_required_node_does_not_block_its_reservation() {
    let mut v = scenario(
        json!([
            {"id": "r", "user": "u1", "gres": "gpu:2", "time": 10, "run_time": 100,
             "reservation": "team", "nodelist": "gpu02"},
            {"id": "x1", "user": "u1", "submit": 1, "gres": "gpu:2", "time": 1, "run_time": 10,
             "reservation": "team", "nodelist": "gpu02"},
            {"id": "x2", "user": "u1", "submit": 1, "gres": "gpu:2", "time": 1, "run_time": 10,
             "reservation": "team"},
        ]),
        json!([{"name": "team", "nodes": "gpu[01-02]", "users": "u1", "start": 0, "duration": 60}]),
        json!([]),
    );
    // Backfill only every minute, so that x2's start at 1 is the main
    // pass's.
    v["scheduler"]["bf_interval"] = json!(60);
    let out = run(v);
    assert_eq!(reasons(&out, "x1").last(), Some(&Reason::Resources));
    assert_eq!(
        start(&out, "x2"),
        (1, "gpu01".into()),
        "{:?}",
        reasons(&out, "x2")
    );
}

/// `Flags=REPLACE` on a `NodeCnt=1` reservation (`_resv_node_replace()`):
/// team starts on gpu01. When r, its job, starts there, `job_claim_resv()`
/// finds no idle node (x holds gpu02) and team keeps gpu01; once x ends at
/// 5 the next `job_resv_check()` swaps gpu01 (busy) for gpu02 (idle). So
/// r2, of team, runs on gpu02 at 20, and y, kept off gpu02 now, waits for
/// r's end (101) on gpu01. Without the flag team keeps gpu01 and y runs on
/// gpu02 at 10, r2 after r.
#[test]
fn a_replace_reservation_trades_busy_nodes_for_idle_ones() {
    let run_with = |flags: &str| {
        run(scenario(
            json!([
                {"id": "x", "user": "u2", "gres": "gpu:2", "time": 10, "run_time": 5},
                {"id": "r", "user": "u1", "submit": 1, "gres": "gpu:2", "time": 10,
                 "run_time": 100, "reservation": "team"},
                {"id": "y", "user": "u2", "submit": 10, "gres": "gpu:2", "time": 1, "run_time": 10},
                {"id": "r2", "user": "u1", "submit": 20, "gres": "gpu:2", "time": 1,
                 "run_time": 10, "reservation": "team"},
            ]),
            json!([{"name": "team", "node_count": 1, "users": "u1", "start": 0,
                    "duration": 10, "flags": flags}]),
            json!([]),
        ))
    };
    let out = run_with("REPLACE");
    assert_eq!(start(&out, "x"), (0, "gpu02".into()));
    assert_eq!(start(&out, "r"), (1, "gpu01".into()));
    assert_eq!(start(&out, "r2"), (20, "gpu02".into()));
    assert_eq!(start(&out, "y"), (101, "gpu01".into()));
    assert_eq!(reasons(&out, "y").last(), Some(&Reason::Resources));
    let out = run_with("");
    assert_eq!(start(&out, "y"), (10, "gpu02".into()));
    assert_eq!(start(&out, "r2"), (101, "gpu01".into()));
}

/// When a job of a `REPLACE` reservation starts on its only node and
/// another is idle, the reservation moves there at once (`job_claim_resv()`):
/// y, submitted a second later, may not use gpu02 and waits for r.
#[test]
fn a_replace_reservation_moves_when_its_job_starts() {
    let out = run(scenario(
        json!([
            {"id": "r", "user": "u1", "gres": "gpu:2", "time": 10, "run_time": 100,
             "reservation": "team"},
            {"id": "y", "user": "u2", "submit": 1, "gres": "gpu:2", "time": 1, "run_time": 10},
        ]),
        json!([{"name": "team", "node_count": 1, "users": "u1", "start": 0,
                "duration": 10, "flags": "REPLACE"}]),
        json!([]),
    ));
    assert_eq!(start(&out, "r"), (0, "gpu01".into()));
    assert_eq!(start(&out, "y"), (100, "gpu01".into()));
}
