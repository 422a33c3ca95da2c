//! Failures, checkpoints, GPU memory and the CPU fallback, worked by hand
//! (docs/reliability.md). Every test runs a small scenario through
//! `gresim_io::parse_scenario` and the engine and asserts exact figures.

use gresim_engine::SimOutput;
use gresim_model::job::{JobState, Reason};
use gresim_model::NodeAdminState;
use gresim_sched::PolicyKind;
use gresim_test_support::{job, run_text};
use serde_json::{json, Value};

fn run(v: &Value) -> SimOutput {
    run_text("reliability.json", &v.to_string(), PolicyKind::Fifo)
}

/// Two nodes with two A100-80GB each and one with A100s cut into 1g.10gb slices.
fn scenario(jobs: Value, events: Value) -> Value {
    json!({
        "schema_version": 1,
        "cluster": {"nodes": [
            {"names": "gpu[01-02]", "sockets": 1, "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]},
            {"names": "mig01", "sockets": 1, "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 1,
                       "mig": ["1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"]}]}
        ]},
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}],
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                      "cred_expire": 0, "def_mem_per_cpu": "1G"},
        "workload": {"jobs": jobs},
        "events": events
    })
}

#[test]
fn a_requeued_job_resumes_from_its_last_checkpoint() {
    // ckpt: 1000 s of work, a checkpoint every 300 s, 50 s to restart.
    // It starts at 0 on gpu01; gpu01 fails at 700: checkpoints at 300 and
    // 600, so 100 s of work are lost. `nockpt` pins gpu02, and gpu01 returns at 800 (taking jobs from 801), so run 2 starts
    // at 801 on gpu01 and needs 50 + (1000 - 600) = 450 s: it ends at 1251.
    let out = run(&scenario(
        json!([
            {"id": "ckpt", "gres": "gpu:a100:2", "nodelist": "gpu01", "run_time": 1000,
             "checkpoint_interval": 300, "restart_overhead": 50, "requeue": true},
            {"id": "nockpt", "gres": "gpu:a100:2", "nodelist": "gpu02", "run_time": 1000, "requeue": true},
        ]),
        json!([
            {"at": 700, "action": "node_down", "nodes": "gpu[01-02]"},
            {"at": 800, "action": "node_up", "nodes": "gpu[01-02]"}
        ]),
    ));
    let c = job(&out, "ckpt");
    let runs: Vec<(u64, Option<u64>, JobState)> =
        c.runs.iter().map(|r| (r.start, r.end, r.state)).collect();
    assert_eq!(
        runs,
        vec![
            (0, Some(700), JobState::NodeFail),
            (801, Some(1251), JobState::Completed)
        ]
    );
    assert_eq!(c.work_saved(), 600);
    assert_eq!(c.lost_secs(), 100);
    assert_eq!(c.lost_gpu_secs(), 200, "100 s on 2 GPUs");
    // Without checkpoints the whole 700 s are lost and the job starts over.
    let n = job(&out, "nockpt");
    assert_eq!(n.lost_gpu_secs(), 1400);
    assert_eq!(n.runs[1].end.unwrap() - n.runs[1].start, 1000);
    let recs = gresim_report::records::job_records(&out);
    assert_eq!(recs[0].lost_gpu_seconds, 200);
    assert_eq!(recs[0].restarts, 1);
    let sum = gresim_report::summary::Summary::compute(&out, "t");
    assert_eq!(sum.restarts, 2);
    assert!((sum.lost_gpu_hours - 1600.0 / 3600.0).abs() < 1e-9);
}

#[test]
fn a_job_on_a_gpu_with_too_little_memory_fails_out_of_memory() {
    let out = run(&json!({
        "schema_version": 1,
        "cluster": scenario(json!([]), json!([]))["cluster"].clone(),
        "scheduler": {"sched_interval": 1, "def_mem_per_cpu": "1G"},
        "workload": {"oom_after": 12, "jobs": [
            {"id": "small", "gres": "gpu:a100_1g.10gb:1", "vram": "40G", "run_time": 600},
            {"id": "fits", "gres": "gpu:a100:1", "vram": "40G", "run_time": 600},
            {"id": "short", "gres": "gpu:a100_1g.10gb:1", "vram": "11G", "run_time": 5}
        ]}
    }));
    let s = job(&out, "small");
    assert_eq!(s.state, JobState::Failed);
    assert_eq!(s.reason, Reason::NonZeroExitCode);
    assert_eq!(s.exit_code, 1, "PyTorch's CUDA OOM exits 1");
    assert!(s.oom);
    let r = &s.runs[0];
    assert_eq!(r.end.unwrap() - r.start, 12);
    let f = job(&out, "fits");
    assert_eq!(
        (f.state, f.exit_code, f.oom),
        (JobState::Completed, 0, false)
    );
    // A program that ends before the OOM delay still dies of it.
    let sh = job(&out, "short");
    assert_eq!((sh.state, sh.oom), (JobState::Failed, true));
    assert_eq!(sh.runs[0].end.unwrap() - sh.runs[0].start, 5);
    let recs = gresim_report::records::job_records(&out);
    assert!(
        recs[0].oom && recs[0].note.contains("CUDA out of memory"),
        "{:?}",
        recs[0]
    );
    assert!(!recs[1].oom && recs[1].note.is_empty());
    let sum = gresim_report::summary::Summary::compute(&out, "t");
    assert_eq!(sum.oom_jobs, 2);
}

#[test]
fn a_job_that_expects_a_gpu_but_asked_for_none_runs_slower_on_the_cpu() {
    let mk = |slowdown: Option<f64>| {
        let mut v = scenario(
            json!([
                {"id": "pitfall", "run_time": 100, "expects_gpu": true},
                {"id": "cpu", "run_time": 100},
                {"id": "fine", "gres": "gpu:1", "run_time": 100, "expects_gpu": true}
            ]),
            json!([]),
        );
        if let Some(f) = slowdown {
            v["workload"]["cpu_fallback_slowdown"] = json!(f);
        }
        run(&v)
    };
    let len = |out: &SimOutput, k: &str| {
        let r = &job(out, k).runs[0];
        r.end.unwrap() - r.start
    };
    let out = mk(None);
    assert_eq!(len(&out, "pitfall"), 1000, "10x by default");
    assert_eq!(len(&out, "cpu"), 100);
    assert_eq!(len(&out, "fine"), 100);
    let recs = gresim_report::records::job_records(&out);
    assert!(recs[0].cpu_fallback && recs[0].note.contains("CPU of a GPU node"));
    assert!(!recs[1].cpu_fallback && !recs[2].cpu_fallback);
    let out = mk(Some(2.5));
    assert_eq!(len(&out, "pitfall"), 250);
}

/// A failure model with a rack that fails as a whole at fixed times.
fn rack_scenario(extra_events: Value, until: Option<u64>) -> Value {
    let mut v = scenario(
        json!([
            {"id": "long", "gres": "gpu:a100:1", "nodes": 1, "run_time": 5000, "requeue": true,
             "checkpoint_interval": 600, "restart_overhead": 60}
        ]),
        extra_events,
    );
    v["failures"] = json!({
        "seed": 5,
        "correlated": [{"name": "rack1", "nodes": "gpu[01-02]",
                        "mtbf": {"distribution": "fixed", "mean_seconds": 1000},
                        "repair": {"distribution": "fixed", "mean_seconds": 100}}]
    });
    if let Some(u) = until {
        v["failures"]["until"] = json!(u);
    }
    v
}

#[test]
fn a_correlated_failure_takes_the_whole_rack_down_and_repairs_restore_drains() {
    // The rack fails at 1000, 2100, 3200, … (up 1000 s, down 100 s).
    // gpu02 is drained at 10: after each repair it is DRAIN again.
    let out = run(&rack_scenario(
        json!([{"at": 10, "action": "node_drain", "nodes": "gpu02"}]),
        Some(2500),
    ));
    let log: Vec<(u64, &str, NodeAdminState, bool)> = out
        .node_log
        .iter()
        .map(|c| {
            (
                c.t,
                out.cluster.node(c.node).name.as_str(),
                c.state,
                c.failure,
            )
        })
        .collect();
    use NodeAdminState::*;
    assert_eq!(
        log,
        vec![
            (10, "gpu02", Drain, false),
            (1000, "gpu01", Down, true),
            (1000, "gpu02", Down, true),
            (1100, "gpu01", Up, true),
            (1100, "gpu02", Drain, true),
            (2100, "gpu01", Down, true),
            (2100, "gpu02", Down, true),
            (2200, "gpu01", Up, true),
            (2200, "gpu02", Drain, true),
        ]
    );
    assert_eq!(out.node_failures, vec![2, 2, 0]);
    // `long` runs on gpu01 (gpu02 drained, mig01 has no whole a100):
    // 0–1000 (checkpoint at 600, 400 s lost). A repaired node takes jobs
    // from the next second: 1101–2100 (60 s restart, then 939 s of work:
    // 600 + 939 = 1539, last checkpoint 1200, 399 s lost), then from 2201
    // it needs 60 + 5000 - 1200 = 3860 s.
    let l = job(&out, "long");
    let runs: Vec<(u64, Option<u64>)> = l.runs.iter().map(|r| (r.start, r.end)).collect();
    assert_eq!(
        runs,
        vec![(0, Some(1000)), (1101, Some(2100)), (2201, Some(6061))]
    );
    assert_eq!(l.state, JobState::Completed);
    assert_eq!(l.work_saved(), 1200);
    assert_eq!(l.lost_secs(), 400 + 399);
    // sinfo sees the states the failures left.
    let rf = gresim_report::run_file::RunFile::from_output(
        &out,
        &gresim_report::run_file::RunMeta::new("t"),
    );
    let rows = gresim_report::sinfo::node_rows(&rf, 1050);
    let states: Vec<&str> = rows.iter().map(|r| r.state.as_str()).collect();
    assert_eq!(states, vec!["down", "down", "idle"]);
    let rows = gresim_report::sinfo::node_rows(&rf, 1500);
    let states: Vec<&str> = rows.iter().map(|r| r.state.as_str()).collect();
    assert_eq!(states, vec!["mixed", "drained", "idle"]);
}

#[test]
fn the_failure_process_stops_when_nothing_is_left_to_affect() {
    // No `until`: the rack would fail forever; the run ends with the job.
    let out = run(&rack_scenario(json!([]), None));
    let l = job(&out, "long");
    assert_eq!(l.state, JobState::Completed);
    let end = l.runs.last().unwrap().end.unwrap();
    assert_eq!(out.end_time, end);
    assert!(out.node_failures[0] >= 4, "{:?}", out.node_failures);
}

#[test]
fn admin_actions_on_a_failed_node_take_effect_at_the_repair() {
    // gpu01 fails at 1000 (rack); an admin drains it at 1050 and resumes
    // gpu02 at 1060 although the rack is down: both apply at 1100.
    let out = run(&rack_scenario(
        json!([
            {"at": 1050, "action": "node_drain", "nodes": "gpu01"},
            {"at": 1060, "action": "node_down", "nodes": "gpu02"}
        ]),
        Some(1500),
    ));
    let at = |t: u64, name: &str| {
        let n = out.cluster.node_id(name).unwrap();
        out.node_log
            .iter()
            .rfind(|c| c.node == n && c.t <= t)
            .map_or(NodeAdminState::Up, |c| c.state)
    };
    assert_eq!(at(1099, "gpu01"), NodeAdminState::Down);
    assert_eq!(at(1100, "gpu01"), NodeAdminState::Drain);
    assert_eq!(at(1100, "gpu02"), NodeAdminState::Down);
}

#[test]
fn failure_runs_are_reproducible_and_seeds_matter() {
    let mk = |seed: Option<u64>| {
        let mut v = scenario(
            json!([{"id": "a", "gres": "gpu:1", "run_time": 20000, "requeue": true,
                    "array": "0-5", "checkpoint_interval": 900}]),
            json!([]),
        );
        v["failures"] = json!({
            "mtbf": {"distribution": "weibull", "shape": 0.7, "mean_hours": 2},
            "repair": {"distribution": "exponential", "mean_seconds": 600}
        });
        if let Some(s) = seed {
            v["failures"]["seed"] = json!(s);
        }
        run(&v)
    };
    let fingerprint = |o: &SimOutput| {
        (
            o.node_log.clone(),
            o.jobs
                .iter()
                .map(|j| (j.runs.len(), j.lost_gpu_secs(), j.state))
                .collect::<Vec<_>>(),
        )
    };
    let a = mk(Some(1));
    assert_eq!(fingerprint(&a), fingerprint(&mk(Some(1))));
    assert_ne!(fingerprint(&a).0, fingerprint(&mk(Some(2))).0);
    assert!(a.node_failures.iter().sum::<u32>() > 3);
    assert!(a.jobs.iter().all(|j| j.state == JobState::Completed));
}
