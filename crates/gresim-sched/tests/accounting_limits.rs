//! Accounting limits and priority factors that read decayed usage, worked
//! out by hand from `acct_policy.c` and `priority_multifactor.c`
//! (slurm-22-05-8-1): `GrpTRESMins` and `GrpWall` (with `safe`),
//! `PriorityUsageResetPeriod`, partition `TRESBillingWeights` and the
//! association priority factor.
//!
//! Every scenario runs priority/multifactor with the decay thread every 60 s
//! and no decay (half-life 0), so usage is exact whole TRES-seconds.

use std::path::Path;

use gresim_engine::SimOutput;
use gresim_model::job::JobState;
use gresim_sched::PolicyKind;
use gresim_test_support::run_text;

fn run(name: &str, text: &str) -> SimOutput {
    run_text(
        &format!("accounting_limits/{name}.json"),
        text,
        PolicyKind::Slurm,
    )
}

/// `(start, state)` of job `key`'s last run, or `None` if it never ran.
fn started(out: &SimOutput, key: &str) -> Option<(u64, JobState)> {
    let j = out
        .jobs
        .iter()
        .find(|j| out.specs[j.sub as usize].key == key)
        .unwrap_or_else(|| panic!("no job {key}"));
    j.runs.last().map(|r| (r.start, r.state))
}

/// Every pending reason job `key` had, in order.
fn reasons(out: &SimOutput, key: &str) -> Vec<&'static str> {
    let idx = out
        .jobs
        .iter()
        .position(|j| out.specs[j.sub as usize].key == key)
        .unwrap_or_else(|| panic!("no job {key}"));
    out.reasons.as_ref().expect("reasons are recorded")[idx]
        .iter()
        .map(|c| c.reason.as_str())
        .collect()
}

fn scenario(priority: &str, accounting: &str, partitions: &str, jobs: &str) -> String {
    format!(
        r#"{{
          "schema_version": 1,
          "cluster": {{"nodes": [
            {{"names": "gpu01", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}
          ]}},
          "partitions": [{partitions}],
          "scheduler": {{"sched_interval": 1, "timelimit_check_interval": 0,
                        "def_mem_per_cpu": 1024, "priority_type": "multifactor",
                        "priority_weights": {{"decay_half_life": 0, "calc_period": 60{priority}}}}},
          "accounting": {accounting},
          "workload": {{"jobs": [{jobs}]}}
        }}"#
    )
}

const GPU_PART: &str = r#"{"name": "gpu", "nodes": "ALL", "default": true}"#;

fn grp_tres_mins(reset: &str) -> String {
    scenario(
        reset,
        r#"{"sacctmgr": ["add account lab GrpTRESMins=gres/gpu=120",
                          "add user u1 Account=lab"]}"#,
        GPU_PART,
        r#"{"id": "a", "user": "u1", "submit": 0, "gres": "gpu:1", "time": 60, "run_time": 3600},
           {"id": "b", "user": "u1", "submit": 0, "gres": "gpu:1", "time": 60, "run_time": 3600},
           {"id": "c", "user": "u1", "submit": 0, "gres": "gpu:1", "time": 60, "run_time": 3600}"#,
    )
}

/// 120 GPU-minutes for the account. With `safe`, a and b fit (60 each on
/// top of 0 and of a's 60 still to run); c's 60 on top of 120 to run does
/// not. When a and b end their 120 GPU-minutes are used: c never runs.
#[test]
fn grp_tres_mins_holds_the_job_the_budget_cannot_finish() {
    let out = run("grp_tres_mins", &grp_tres_mins(""));
    assert_eq!(started(&out, "a"), Some((0, JobState::Completed)));
    assert_eq!(started(&out, "b"), Some((0, JobState::Completed)));
    assert_eq!(started(&out, "c"), None);
    assert_eq!(reasons(&out, "c").last(), Some(&"AssocGrpGRESMinutes"));
}

/// PriorityUsageResetPeriod=DAILY clears the used GPU-minutes at midnight
/// (simulated time 86400 is 1970-01-02 00:00 UTC). The decay thread runs
/// then (every 60 s from 0); c starts in the main pass after it, a second
/// later (within a second, passes come before the decay thread's run).
#[test]
fn a_daily_usage_reset_frees_the_budget_at_midnight() {
    let out = run(
        "usage_reset",
        &grp_tres_mins(r#", "usage_reset_period": "DAILY""#),
    );
    assert_eq!(started(&out, "a"), Some((0, JobState::Completed)));
    assert_eq!(started(&out, "c"), Some((86_401, JobState::Completed)));
    assert!(reasons(&out, "c").contains(&"AssocGrpGRESMinutes"));
}

/// QOS GrpWall=10 (minutes of wall time of its running jobs). a uses 9;
/// then b (5 minutes) would pass 10 and waits QOSGrpWallLimit for good,
/// while c (1 minute) fits and runs.
#[test]
fn grp_wall_holds_jobs_whose_time_limit_would_pass_it() {
    let out = run(
        "grp_wall",
        &scenario(
            "",
            r#"{"sacctmgr": ["modify qos normal set GrpWall=10",
                              "add account lab", "add user u1 Account=lab"]}"#,
            GPU_PART,
            r#"{"id": "a", "user": "u1", "submit": 0, "gres": "gpu:1", "time": 9, "run_time": 540},
               {"id": "b", "user": "u1", "submit": 600, "gres": "gpu:1", "time": 5, "run_time": 60},
               {"id": "c", "user": "u1", "submit": 601, "gres": "gpu:1", "time": 1, "run_time": 60}"#,
        ),
    );
    assert_eq!(started(&out, "a"), Some((0, JobState::Completed)));
    assert_eq!(started(&out, "b"), None);
    assert_eq!(reasons(&out, "b").last(), Some(&"QOSGrpWallLimit"));
    assert_eq!(started(&out, "c"), Some((601, JobState::Completed)));
}

/// GrpTRES=billing=20 on the account. In partition `w` a GPU bills 10 (and
/// a CPU nothing): two one-GPU jobs use the 20 and the third waits
/// AssocGrpBilling until one ends. In partition `plain` billing is the
/// CPU count (1 per job): all three run at once.
#[test]
fn partition_billing_weights_count_against_billing_limits() {
    let jobs = |part: &str| {
        format!(
            r#"{{"id": "a", "user": "u1", "submit": 0, "gres": "gpu:1", "partition": "{part}", "time": 10, "run_time": 100}},
               {{"id": "b", "user": "u1", "submit": 0, "gres": "gpu:1", "partition": "{part}", "time": 10, "run_time": 100}},
               {{"id": "c", "user": "u1", "submit": 0, "gres": "gpu:1", "partition": "{part}", "time": 10, "run_time": 100}}"#
        )
    };
    let acct = r#"{"sacctmgr": ["add account lab GrpTRES=billing=20", "add user u1 Account=lab"],
                   "tres_billing_weights": {"w": "CPU=0,GRES/gpu=10"}}"#;
    let parts = r#"{"name": "w", "nodes": "ALL", "default": true},
                   {"name": "plain", "nodes": "ALL"}"#;
    let out = run("billing_w", &scenario("", acct, parts, &jobs("w")));
    assert_eq!(started(&out, "a").map(|s| s.0), Some(0));
    assert_eq!(started(&out, "b").map(|s| s.0), Some(0));
    assert_eq!(started(&out, "c").map(|s| s.0), Some(100));
    assert!(
        reasons(&out, "c").contains(&"AssocGrpBilling"),
        "{:?}",
        reasons(&out, "c")
    );
    let out = run("billing_plain", &scenario("", acct, parts, &jobs("plain")));
    for k in ["a", "b", "c"] {
        assert_eq!(started(&out, k).map(|s| s.0), Some(0), "{k}");
    }
}

/// PriorityWeightAssoc: hi's association has Priority=100 (the largest), lo's
/// none. Both wait behind blk for the one GPU; hi, submitted later, runs
/// first. Without the weight submission order decides.
#[test]
fn association_priority_orders_the_queue() {
    let run_with = |w: &str| {
        run(
            "assoc_priority",
            &scenario(
                w,
                r#"{"sacctmgr": ["add account lab", "add user lo Account=lab",
                                  "add user hi Account=lab Priority=100"]}"#,
                r#"{"name": "gpu", "nodes": "ALL", "default": true}"#,
                r#"{"id": "blk", "user": "lo", "submit": 0, "gres": "gpu:4", "time": 10, "run_time": 100},
                   {"id": "l", "user": "lo", "submit": 1, "gres": "gpu:4", "time": 10, "run_time": 100},
                   {"id": "h", "user": "hi", "submit": 2, "gres": "gpu:4", "time": 10, "run_time": 100}"#,
            ),
        )
    };
    let out = run_with(r#", "assoc": 1000, "age": 0"#);
    assert_eq!(started(&out, "h").map(|s| s.0), Some(100));
    assert_eq!(started(&out, "l").map(|s| s.0), Some(200));
    let out = run_with("");
    assert_eq!(started(&out, "l").map(|s| s.0), Some(100));
    assert_eq!(started(&out, "h").map(|s| s.0), Some(200));
}

#[test]
fn bad_billing_weights_and_reset_periods_name_their_path() {
    let acct = r#"{"sacctmgr": ["add account lab", "add user u1 Account=lab"],
                   "tres_billing_weights": {"gpu": "GRES/tpu=2"}}"#;
    let text = scenario(
        "",
        acct,
        GPU_PART,
        r#"{"id": "a", "user": "u1", "submit": 0}"#,
    );
    let e = gresim_io::parse_scenario(Path::new("s.json"), &text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("accounting.tres_billing_weights.gpu") && e.contains("GRES/tpu"),
        "{e}"
    );
    let text = scenario(
        r#", "usage_reset_period": "HOURLY""#,
        r#"{"sacctmgr": []}"#,
        GPU_PART,
        r#"{"id": "a", "submit": 0}"#,
    );
    let e = gresim_io::parse_scenario(Path::new("s.json"), &text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("scheduler.priority_weights.usage_reset_period") && e.contains("WEEKLY"),
        "{e}"
    );
}
