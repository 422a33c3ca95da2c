//! The order of events within one second in `sim conformance`: a job the
//! main pass starts ends after the main pass of its last second once the
//! main pass has fallen behind the ends of the jobs backfill started
//! (`SchedParams::main_after_ends_from`, 45 s after slurmctld's start in
//! the conformance settings), and before the next second's passes until then;
//! and until then the main pass runs just after the backfill pass of its
//! second (`SchedParams::main_after_backfill`).

use std::process::Command;

/// Start times by job id of the case's simulated outcome.
fn starts(case: &serde_json::Value) -> Vec<(String, u64, String)> {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let path = tmp.path().join("chain.json");
    std::fs::write(&path, case.to_string()).expect("write case");
    let out = tmp.path().join("chain.sim.json");
    let run = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("conformance")
        .arg(&path)
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run sim");
    assert!(
        run.status.success(),
        "sim conformance failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("output")).expect("JSON");
    v["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| {
            let r = &j["tasks"][0]["runs"][0];
            (
                j["id"].as_str().expect("id").to_string(),
                r["start"].as_u64().expect("start"),
                r["end"].as_u64().map_or(String::new(), |e| e.to_string()),
            )
        })
        .collect()
}

#[test]
fn main_started_jobs_end_after_the_main_pass_once_it_falls_behind() {
    // One node with two GPUs and a chain of jobs that each need both:
    // every job but the first waits for the one before it.
    let job = |id: &str, submit: u64, duration: u64| {
        serde_json::json!({"id": id, "submit": submit, "duration": duration,
                           "gres": "gpu:2", "time_limit": 2})
    };
    let case = serde_json::json!({
        "name": "chain",
        "nodes": [{"name": "n1", "cpus": 8, "sockets": 1, "mem_mb": 64000,
                   "gpus": [{"type": "a100", "count": 2}]}],
        "jobs": [job("a", 0, 10), job("b", 1, 5), job("c", 1, 30), job("d", 1, 5),
                 job("e", 1, 5)],
    });
    let got = starts(&case);
    let start = |id: &str| got.iter().find(|g| g.0 == id).expect("job").1;
    // a starts by backfill in its submission second and ends at 10, after
    // that second's passes: the main pass of 11 starts b.
    assert_eq!(start("a"), 0);
    assert_eq!(start("b"), 11);
    // Before 45 s a job the main pass started ends before the next second's
    // passes too: b ends at 16 and the main pass of 17 starts c.
    assert_eq!(start("c"), 17);
    // c ends at 47 and the main pass of 48 starts d, which ends at 53 after
    // that second's main pass: the backfill pass of 53 starts e at once.
    assert_eq!(start("d"), 48);
    assert_eq!(start("e"), 53, "{got:?}");
}

#[test]
fn early_in_a_case_the_main_pass_runs_after_backfill() {
    // One node with two GPUs, partitions `low` and `high` (higher tier) on
    // it. a (backfill starts it at 0) ends at 10; b waits for it from 1;
    // c, of the higher tier, is submitted at 11. The main pass of 11 runs
    // after that second's backfill pass (the controller's main loop starts
    // just behind the backfill loop), which sees c already and starts it
    // first: b waits for c. With the main pass first in the second, it
    // would start b at 11 before c arrived (and c at 16).
    let job = |id: &str, submit: u64, part: &str| {
        serde_json::json!({"id": id, "submit": submit, "duration": if id == "a" { 10 } else { 5 },
                           "gres": "gpu:2", "time_limit": 2, "partition": part})
    };
    let case = serde_json::json!({
        "name": "tiers",
        "nodes": [{"name": "n1", "cpus": 8, "sockets": 1, "mem_mb": 64000,
                   "gpus": [{"type": "a100", "count": 2}]}],
        "partitions": [
            {"name": "low", "nodes": "ALL", "default": true, "max_time": "INFINITE"},
            {"name": "high", "nodes": "ALL", "max_time": "INFINITE", "extra": "PriorityTier=2"}
        ],
        "jobs": [job("a", 0, "low"), job("b", 1, "low"), job("c", 11, "high")],
    });
    let got = starts(&case);
    let start = |id: &str| got.iter().find(|g| g.0 == id).expect("job").1;
    assert_eq!(start("a"), 0);
    assert_eq!(start("c"), 11, "{got:?}");
    // c ends at 16 after that second's passes (backfill's jobs end a few
    // hundredths after it, and the main pass comes before them): the
    // backfill pass of 17 starts b.
    assert_eq!(start("b"), 17, "{got:?}");
}
