//! Programs that ignore SIGTERM (docs/preemption.md, "Programs that ignore
//! SIGTERM"): when Slurm ends such a job, slurmd waits `MAX(KillWait, 5)`
//! seconds before SIGKILL, the job stays COMPLETING that long, and Slurm
//! keeps the node out of every selection meanwhile (`cg_node_bitmap`), also
//! the resources another job frees there. Worked by hand on one node.

use gresim_engine::SimOutput;
use gresim_model::job::JobState;
use gresim_sched::PolicyKind;
use gresim_test_support::{job, run_text};
use serde_json::{json, Value};

/// Node n1 with 4 GPUs; passes every second, the time limit checked at the
/// limit itself, `kill_wait` as given.
fn run(kill_wait: u64, jobs: Value, events: Value) -> SimOutput {
    let v = json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "n1", "cores_per_socket": 8, "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}]},
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                      "def_mem_per_cpu": 512, "kill_wait": kill_wait},
        "workload": {"jobs": jobs},
        "events": events,
    });
    run_text("kill_wait.json", &v.to_string(), PolicyKind::Slurm)
}

fn start(out: &SimOutput, id: &str) -> u64 {
    job(out, id).runs[0].start
}

/// i ignores SIGTERM, h does not; both reach their one-minute limit at 60.
/// With i's kill taking MAX(8, 5) = 8 s, the node takes nothing until the
/// kill is done at 68, not even h's GPUs, free since 60: w1 and w2 start
/// together at the next pass, 69.
#[test]
fn a_timed_out_job_that_ignores_sigterm_holds_its_node_for_kill_wait() {
    let jobs = |ignores: bool| {
        json!([
            {"id": "i", "gres": "gpu:2", "time": 1, "run_time": 300, "ignores_sigterm": ignores},
            {"id": "h", "gres": "gpu:2", "time": 1, "run_time": 300},
            {"id": "w1", "submit": 5, "gres": "gpu:2", "time": 2, "run_time": 15},
            {"id": "w2", "submit": 6, "gres": "gpu:2", "time": 2, "run_time": 15},
        ])
    };
    let out = run(8, jobs(true), json!([]));
    for id in ["i", "h"] {
        let j = job(&out, id);
        assert_eq!(
            (j.state, j.runs[0].end),
            (JobState::Timeout, Some(60)),
            "{id}"
        );
    }
    assert_eq!((start(&out, "w1"), start(&out, "w2")), (69, 69));
    // A program that exits on SIGTERM frees its GPUs at once.
    let out = run(8, jobs(false), json!([]));
    assert_eq!((start(&out, "w1"), start(&out, "w2")), (60, 60));
}

/// `scancel` of a job that ignores SIGTERM: its GPUs come back MAX(KillWait,
/// 5) s later (x starts at the pass after); KillWait below 5 still waits 5.
#[test]
fn a_cancelled_job_that_ignores_sigterm_is_killed_after_max_kill_wait_5() {
    let jobs = json!([
        {"id": "c", "gres": "gpu:4", "time": 10, "run_time": 300, "ignores_sigterm": true},
        {"id": "x", "submit": 1, "gres": "gpu:4", "time": 10, "run_time": 10},
    ]);
    let events = json!([{"at": 10, "action": "cancel", "job": "c"}]);
    let out = run(2, jobs.clone(), events.clone());
    let c = job(&out, "c");
    assert_eq!((c.state, c.runs[0].end), (JobState::Cancelled, Some(10)));
    assert_eq!(start(&out, "x"), 16);
    let out = run(12, jobs, events);
    assert_eq!(start(&out, "x"), 23);
}

/// A suspended job is killed without slurmd's SIGTERM wait: after the
/// SIGCONT its steps are found suspended and SIGKILLed at once
/// (`_rpc_terminate_job()`). c, suspended at 5 and cancelled at 10, frees
/// its GPUs at once (x starts at 10); not suspended, 5 s later (x at 16).
#[test]
fn a_suspended_job_that_ignores_sigterm_is_killed_at_once() {
    let jobs = json!([
        {"id": "c", "gres": "gpu:4", "time": 10, "run_time": 300, "ignores_sigterm": true},
        {"id": "x", "submit": 1, "gres": "gpu:4", "time": 10, "run_time": 10},
    ]);
    let suspended = json!([
        {"at": 5, "action": "suspend", "job": "c"},
        {"at": 10, "action": "cancel", "job": "c"},
    ]);
    let out = run(2, jobs.clone(), suspended);
    let c = job(&out, "c");
    assert_eq!((c.state, c.runs[0].end), (JobState::Cancelled, Some(10)));
    assert_eq!(start(&out, "x"), 10);
    let out = run(2, jobs, json!([{"at": 10, "action": "cancel", "job": "c"}]));
    assert_eq!(start(&out, "x"), 16);
}

/// A job ends on its own beside a job being killed: the GPUs it gives back
/// stay out of reach until the kill is done (the node is COMPLETING).
#[test]
fn resources_freed_beside_a_completing_job_wait_for_its_kill() {
    let jobs = json!([
        {"id": "a", "gres": "gpu:2", "time": 10, "run_time": 300, "ignores_sigterm": true},
        {"id": "b", "gres": "gpu:2", "time": 10, "run_time": 22},
        {"id": "x", "submit": 1, "gres": "gpu:2", "time": 10, "run_time": 10},
    ]);
    // a's kill is done at 20 + 6 = 26; b's GPUs, free at 22, wait for it:
    // x starts at the pass after, 27.
    let events = json!([{"at": 20, "action": "cancel", "job": "a"}]);
    let out = run(6, jobs, events);
    assert_eq!(job(&out, "b").runs[0].end, Some(22));
    assert_eq!(start(&out, "x"), 27);
}

/// `scontrol requeue` (and `requeuehold`) of a job that ignores SIGTERM:
/// slurmd gets the same REQUEST_TERMINATE_JOB as for `scancel`
/// (`_job_requeue_op()` → `deallocate_nodes()`), so the GPUs come back
/// MAX(KillWait, 5) s later and x starts at the pass after; the requeued
/// job's begin time counts from the kill's end (cred_expire 120 + 1).
#[test]
fn a_requeued_job_that_ignores_sigterm_is_killed_after_kill_wait() {
    let jobs = |ignores: bool| {
        json!([
            {"id": "r", "gres": "gpu:4", "time": 10, "run_time": 300, "ignores_sigterm": ignores},
            {"id": "x", "submit": 1, "gres": "gpu:4", "time": 10, "run_time": 10},
        ])
    };
    for action in ["requeue", "requeue_hold"] {
        let events = json!([{"at": 10, "action": action, "job": "r"}]);
        let out = run(8, jobs(true), events.clone());
        let r = job(&out, "r");
        assert_eq!(
            (r.runs[0].state, r.runs[0].end),
            (JobState::Requeued, Some(10)),
            "{action}"
        );
        assert_eq!(start(&out, "x"), 19, "{action}: the kill is done at 18");
        if action == "requeue" {
            assert_eq!(r.runs.len(), 2);
            assert_eq!(r.runs[1].start, 18 + 121, "begin time from the kill's end");
        }
        // A program that exits on SIGTERM frees its GPUs at once (x starts
        // in that second after requeue, in the next after requeuehold,
        // whose kill is done after that second's pass).
        let out = run(8, jobs(false), events);
        let at_once = if action == "requeue" { 10 } else { 11 };
        assert_eq!(start(&out, "x"), at_once, "{action}");
    }
}

/// A node failure requeues a two-node job whose program ignores SIGTERM:
/// slurmctld kills it on its other node (the DOWN one is left out), where
/// slurmd waits MAX(KillWait, 5) s, so x, which needs that node, starts
/// once the kill is done. A job on the failed node alone has nothing to
/// wait for: it is pending again at once (begin time 10 + 121).
#[test]
fn a_node_failure_kills_a_job_that_ignores_sigterm_after_kill_wait_on_its_other_nodes() {
    let out = |nodes: u32, ignores: bool| {
        let v = json!({
            "schema_version": 1,
            "cluster": {"nodes": [{"names": "n[1-2]", "cores_per_socket": 8, "memory": "64G",
                                   "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}]},
            "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                          "def_mem_per_cpu": 512, "kill_wait": 8},
            "workload": {"jobs": [
                {"id": "m", "gres": "gpu:4", "nodes": nodes, "time": 10,
                 "run_time": 300, "ignores_sigterm": ignores},
                {"id": "x", "submit": 1, "gres": "gpu:4", "time": 10, "run_time": 10},
            ]},
            "events": [{"at": 10, "action": "node_down", "nodes": "n1"}],
        });
        run_text("kill_wait.json", &v.to_string(), PolicyKind::Slurm)
    };
    let o = out(2, true);
    let m = job(&o, "m");
    assert_eq!(
        (m.runs[0].state, m.runs[0].end),
        (JobState::NodeFail, Some(10))
    );
    assert_eq!(start(&o, "x"), 19, "n2's kill is done at 18");
    assert_eq!(start(&out(2, false), "x"), 10);
    // m on n1 alone (it came first; x took n2 at 1): requeued at once, m starts again at
    // its begin time on n2.
    let o = out(1, true);
    assert_eq!(start(&o, "x"), 1);
    assert_eq!(job(&o, "m").runs[1].start, 131);
}
