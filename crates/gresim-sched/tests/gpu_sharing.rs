//! GPU sharing (gres/shard, gres/mps) through the engine, worked by hand:
//! capacity over many jobs, gpu/share exclusivity, pending reasons and the
//! share-weighted utilization.

use gresim_engine::SimOutput;
use gresim_model::job::{JobState, Reason};
use gresim_model::NodeId;
use gresim_report::summary::Summary;
use gresim_sched::PolicyKind;
use gresim_test_support::{job, run_text};
use serde_json::{json, Value};

fn run(v: &Value) -> SimOutput {
    run_text("sharing.json", &v.to_string(), PolicyKind::Slurm)
}

/// `nodes` nodes with `gpus` A100 each, every GPU with `share` (e.g.
/// `{"mps": 100}`), and `jobs`.
fn scenario(nodes: u32, gpus: u32, share: Value, jobs: Value) -> Value {
    let mut g = json!({"model": "A100-SXM4-80GB", "count": gpus});
    if let (Some(g), Some(s)) = (g.as_object_mut(), share.as_object()) {
        g.extend(s.clone());
    }
    json!({
        "schema_version": 1,
        "cluster": {"nodes": [
            {"names": format!("g[1-{nodes}]"), "sockets": 1, "cores_per_socket": 32, "memory": "256G",
             "gpus": [g]}
        ]},
        "partitions": [{"name": "p", "nodes": "ALL", "default": true}],
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "timelimit_check_interval": 0,
                      "cred_expire": 0, "def_mem_per_cpu": "1G"},
        "workload": {"jobs": jobs}
    })
}

/// Two mps:50 jobs share the one GPU; a third waits with reason Resources
/// until one ends; a whole-GPU job waits until the GPU hosts no mps.
#[test]
fn two_halves_fill_a_gpu() {
    let jobs = json!([
        {"id": "a", "gres": "mps:50", "run_time": 100},
        {"id": "b", "gres": "mps:50", "run_time": 100},
        {"id": "c", "gres": "mps:50", "run_time": 100, "submit": 1},
        {"id": "w", "gres": "gpu:1", "run_time": 10, "submit": 2}
    ]);
    let out = run(&scenario(1, 1, json!({"mps": 100}), jobs));
    let start = |k: &str| job(&out, k).runs[0].start;
    assert_eq!((start("a"), start("b")), (0, 0));
    // c needs 50 more: only after a or b ends at 100.
    assert!(start("c") >= 100, "c started at {}", start("c"));
    // The whole GPU only once no job holds mps on it.
    assert!(start("w") >= job(&out, "c").runs[0].end.unwrap());
    for k in ["a", "b", "c", "w"] {
        assert_eq!(job(&out, k).state, JobState::Completed);
    }
    // The share-weighted utilization: a and b make the GPU fully used over
    // [0, 100], c half used for 100 s, w fully for 10 s.
    let s = Summary::compute(&out, "t");
    let u = &out.usage;
    let c_run = &job(&out, "c").runs[0];
    let w_run = &job(&out, "w").runs[0];
    let busy = 100.0
        + 0.5 * (c_run.end.unwrap() - c_run.start) as f64
        + (w_run.end.unwrap() - w_run.start) as f64;
    let window = (u.to - u.from) as f64;
    assert!(
        (s.gpu_utilization - busy / window).abs() < 1e-9,
        "{} vs {}",
        s.gpu_utilization,
        busy / window
    );
    assert!((s.gpu_hours_allocated - busy / 3600.0).abs() < 1e-9);
}

/// A request larger than any one GPU's count but within the node's is
/// accepted (Slurm's test-only mode counts the node) and waits forever
/// with reason Resources; one larger than the node is rejected.
#[test]
fn more_than_one_gpu_waits_with_resources() {
    let jobs = json!([
        {"id": "big", "gres": "shard:12", "run_time": 10},
        {"id": "ok", "gres": "shard:8", "run_time": 10, "submit": 5}
    ]);
    let mut v = scenario(1, 2, json!({"shards": 8}), jobs);
    v["horizon"] = json!(1000);
    let out = run(&v);
    let big = job(&out, "big");
    assert_eq!(
        (big.state, big.reason),
        (JobState::Pending, Reason::Resources)
    );
    assert_eq!(job(&out, "ok").state, JobState::Completed);
    let jobs = json!([{"id": "huge", "gres": "shard:17", "run_time": 10}]);
    let mut v = scenario(1, 2, json!({"shards": 8}), jobs);
    v["workload"]["impossible"] = json!("reject");
    let out = run(&v);
    assert_eq!(job(&out, "huge").state, JobState::Rejected);
}

/// Many jobs of random share sizes over a few nodes: at every start the
/// shares on each GPU stay within its count, no GPU is held whole and as
/// shares at once, and every job runs.
#[test]
fn capacity_holds_across_many_jobs() {
    let mut jobs = Vec::new();
    let mut x = 12345u64;
    for i in 0..300 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (x >> 33) as u32;
        let gres = if r.is_multiple_of(5) {
            "gpu:1".to_string()
        } else {
            format!("shard:{}", 1 + r % 6)
        };
        jobs.push(json!({"id": format!("j{i}"), "gres": gres, "submit": i * 3,
                         "run_time": 20 + r % 200, "mem": "1G"}));
    }
    let out = run(&scenario(3, 4, json!({"shards": 6}), Value::Array(jobs)));
    assert!(out.jobs.iter().all(|j| j.state == JobState::Completed));
    // Replay every run's interval: shares per (node, gpu) and whole GPUs.
    let mut events: Vec<(u64, bool, usize)> = Vec::new();
    let runs: Vec<_> = out.jobs.iter().flat_map(|j| j.runs.iter()).collect();
    for (i, r) in runs.iter().enumerate() {
        events.push((r.start, true, i));
        events.push((r.end.unwrap(), false, i));
    }
    // Ends before starts at the same second (freed resources are reusable).
    events.sort_by_key(|&(t, start, i)| (t, start, i));
    let mut used = [[0u32; 4]; 3];
    let mut whole = [[false; 4]; 3];
    let mut shared_runs = 0;
    for (_, start, i) in events {
        for na in &runs[i].alloc.nodes {
            let n = na.node.idx();
            if let Some(sa) = na.share {
                let g = usize::from(sa.gpu);
                if start {
                    shared_runs += 1;
                    used[n][g] += sa.count;
                    assert!(used[n][g] <= 6, "GPU {g} of node {n} over-committed");
                    assert!(!whole[n][g], "GPU {g} of node {n} whole and shared");
                } else {
                    used[n][g] -= sa.count;
                }
            }
            for g in gresim_model::state::gpu_indices(na.gpus) {
                let g = usize::from(g);
                if start {
                    assert!(
                        !whole[n][g] && used[n][g] == 0,
                        "GPU {g} of node {n} taken twice"
                    );
                }
                whole[n][g] = start;
            }
        }
    }
    assert!(shared_runs > 200, "most jobs hold shards ({shared_runs})");
    assert!(out.cluster.node_shares(NodeId(0)).is_some());
}
