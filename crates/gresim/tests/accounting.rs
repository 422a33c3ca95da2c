//! Accounts, QOS and limits through the library entry point: a scenario's
//! `accounting` section, sbatch's refusals at submission, and the pending
//! reasons of `acct_policy.c` in the main pass and in backfill.

use std::path::Path;

use gresim::{Scenario, Simulation};
use gresim_model::JobState;

fn scenario(accounting: &str, jobs: &str) -> Result<Scenario, gresim_io::error::InputError> {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n[1-2]", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 2}}]}}]}},
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G"}},
            "accounting": {accounting},
            "workload": {{"jobs": [{jobs}]}}}}"#
    );
    gresim_io::parse_scenario(Path::new("acct.json"), &text)
}

const ACCOUNTING: &str = r#"{
    "sacctmgr": ["add qos capped MaxTRESPerUser=gres/gpu=2",
                 "add qos strict MaxTRESPerJob=gres/gpu=1 Flags=DenyOnLimit",
                 "add account ml GrpJobs=3",
                 "add user alice Account=ml",
                 "modify user where name=alice set qos+=capped,strict"],
    "users": [{"name": "bob", "account": "ml"}]
}"#;

fn job(id: &str, user: &str, extra: &str, submit: u64) -> String {
    format!(
        r#"{{"id": "{id}", "user": "{user}", "submit": {submit}, "run_time": 100, "time": 10,
             "gres": "gpu:1"{extra}}}"#
    )
}

fn run(sc: &Scenario) -> gresim::Outcome {
    Simulation::new(sc)
        .record_reasons(true)
        .run()
        .expect("runs")
}

fn reasons(o: &gresim::Outcome, i: usize) -> Vec<&'static str> {
    o.output.reasons.as_ref().expect("recorded")[i]
        .iter()
        .map(|c| c.reason.as_str())
        .collect()
}

#[test]
fn a_per_user_gpu_cap_holds_the_third_job_with_slurms_reason() {
    let jobs = [
        job("a1", "alice", r#", "qos": "capped""#, 0),
        job("a2", "alice", r#", "qos": "capped""#, 0),
        job("a3", "alice", r#", "qos": "capped""#, 0),
    ]
    .join(",");
    let sc = scenario(ACCOUNTING, &jobs).expect("loads");
    let o = run(&sc);
    let j = &o.output.jobs;
    assert_eq!(j[0].runs.first().map(|r| r.start), Some(0));
    assert_eq!(j[1].runs.first().map(|r| r.start), Some(0));
    // Two GPUs free on the cluster, but alice may hold only two at a time.
    let third = j[2].runs.first().map(|r| r.start).expect("starts");
    assert!(
        third >= 100,
        "the third job waited for one of the first two: {third}"
    );
    assert!(
        reasons(&o, 2).contains(&"QOSMaxGRESPerUser"),
        "{:?}",
        reasons(&o, 2)
    );
}

/// Jobs of one user and shape that become startable in the same pass: the
/// first two start, and the cap they fill holds the third in that very pass
/// (the checks' per-pass memo must forget its answers at each start).
#[test]
fn a_cap_filled_within_one_pass_holds_the_next_job_of_that_pass() {
    let accounting = r#"{
        "sacctmgr": ["add qos capped MaxTRESPerUser=gres/gpu=2",
                     "add account ml",
                     "add user alice Account=ml",
                     "modify user where name=alice set qos+=capped"],
        "users": [{"name": "bob", "account": "ml"}]
    }"#;
    // bob's job holds all four GPUs until t=100; alice's three wait for it.
    let blocker = r#"{"id": "b0", "user": "bob", "submit": 0, "run_time": 100, "time": 10,
                      "nodes": 2, "gres": "gpu:2"}"#;
    let jobs = [
        blocker.to_string(),
        job("a1", "alice", r#", "qos": "capped""#, 1),
        job("a2", "alice", r#", "qos": "capped""#, 1),
        job("a3", "alice", r#", "qos": "capped""#, 1),
    ]
    .join(",");
    let sc = scenario(accounting, &jobs).expect("loads");
    let o = run(&sc);
    let starts: Vec<Option<u64>> = o
        .output
        .jobs
        .iter()
        .map(|x| x.runs.first().map(|r| r.start))
        .collect();
    assert_eq!(starts[..3], [Some(0), Some(100), Some(100)], "{starts:?}");
    let third = starts[3].expect("starts");
    assert!(third >= 200, "the third waited for one of alice's: {third}");
    assert!(
        reasons(&o, 3).contains(&"QOSMaxGRESPerUser"),
        "{:?}",
        reasons(&o, 3)
    );
}

#[test]
fn the_cap_is_per_user_and_an_association_limit_counts_all_its_users() {
    let jobs = [
        job("a1", "alice", r#", "qos": "capped""#, 0),
        job("a2", "alice", r#", "qos": "capped""#, 0),
        job("b1", "bob", "", 0),
        job("b2", "bob", "", 0),
    ]
    .join(",");
    let sc = scenario(ACCOUNTING, &jobs).expect("loads");
    let o = run(&sc);
    let j = &o.output.jobs;
    // ml's GrpJobs=3: the fourth job of the account waits with AssocGrpJobsLimit.
    let starts: Vec<u64> = j
        .iter()
        .map(|x| x.runs.first().map_or(0, |r| r.start))
        .collect();
    assert_eq!(starts.iter().filter(|&&s| s == 0).count(), 3, "{starts:?}");
    assert!(
        reasons(&o, 3).contains(&"AssocGrpJobsLimit"),
        "{:?}",
        reasons(&o, 3)
    );
}

#[test]
fn deny_on_limit_and_unknown_names_are_refused_at_submission() {
    let jobs = [
        job("big", "alice", r#", "qos": "strict", "gres": "gpu:2""#, 0),
        job("ok", "alice", r#", "qos": "strict""#, 0),
        job("nobody", "carol", "", 0),
        job("badqos", "bob", r#", "qos": "capped""#, 0),
        job("badacct", "bob", r#", "account": "bio""#, 0),
    ]
    .join(",")
    .replace(
        r#""gres": "gpu:1", "qos": "strict", "gres": "gpu:2""#,
        r#""qos": "strict", "gres": "gpu:2""#,
    );
    // With workload.impossible at its default, the scenario is refused with sbatch's message.
    let sc = scenario(ACCOUNTING, &jobs).expect("loads");
    let err = sc.impossible.as_ref().expect("refused").to_string();
    assert!(
        err.contains("Invalid account or account/partition combination specified"),
        "{err}"
    );
    let text_reject = jobs.clone();
    let sc = {
        let mut s = scenario(ACCOUNTING, &text_reject).expect("loads");
        s.impossible = None;
        s
    };
    let o = run(&sc);
    let j = &o.output.jobs;
    assert_eq!(j[0].state, JobState::Rejected);
    assert_eq!(j[0].reason.as_str(), "QOSMaxGRESPerJob");
    assert!(j[0]
        .rejected()
        .unwrap_or("")
        .contains("Job violates accounting/QOS policy"));
    assert_eq!(j[1].state, JobState::Completed);
    assert_eq!(
        j[2].rejected(),
        Some("Invalid account or account/partition combination specified")
    );
    assert_eq!(j[3].rejected(), Some("Invalid qos specification"));
    assert_eq!(
        j[4].rejected(),
        Some("Invalid account or account/partition combination specified")
    );
}

#[test]
fn bad_accounting_input_names_the_field() {
    let e = scenario(
        r#"{"sacctmgr": ["add qos q MaxTRESPerUser=gres/tpu=1"]}"#,
        &job("x", "root", "", 0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("accounting.sacctmgr[0]") && e.contains("unknown TRES"),
        "{e}"
    );
    let e = scenario(
        r#"{"accounts": [{"name": "a", "GrpJobs": -2}]}"#,
        &job("x", "root", "", 0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("accounting.accounts[0]") && e.contains("whole number"),
        "{e}"
    );
    // Parents must exist before their children, so a loop cannot be written.
    let e = scenario(
        r#"{"accounts": [{"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}]}"#,
        &job("x", "root", "", 0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("accounting.accounts[0]") && e.contains("unknown account \"b\""),
        "{e}"
    );
}

#[test]
fn without_accounting_account_and_qos_change_nothing() {
    let jobs = [job(
        "a1",
        "alice",
        r#", "qos": "nope", "account": "nope""#,
        0,
    )]
    .join(",");
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 2}}]}}]}},
            "workload": {{"jobs": [{jobs}]}}}}"#
    );
    let sc = gresim_io::parse_scenario(Path::new("plain.json"), &text).expect("loads");
    assert!(sc.impossible.is_none());
    let o = run(&sc);
    assert_eq!(o.output.jobs[0].state, JobState::Completed);
}

/// Two accounts with equal shares on one 2-GPU node; `heavy` runs alone
/// first, then both submit at once. Under Fair Tree with fair-share
/// dominating, `light`'s job goes first although it was submitted second;
/// without fair-share weight, submission order decides.
fn fairshare_order(weight: u32) -> (u64, u64) {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 2}}]}}]}},
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G",
                          "priority_type": "multifactor",
                          "priority_weights": {{"fairshare": {weight}, "age": 0, "calc_period": 60,
                                               "decay_half_life": 3600}}}},
            "accounting": {{"sacctmgr": ["add account heavy", "add account light",
                                          "add user h Account=heavy", "add user l Account=light"]}},
            "workload": {{"jobs": [
              {{"id": "warm", "user": "h", "submit": 0, "run_time": 600, "time": 20, "gres": "gpu:2"}},
              {{"id": "h2", "user": "h", "submit": 700, "run_time": 300, "time": 10, "gres": "gpu:2"}},
              {{"id": "l2", "user": "l", "submit": 701, "run_time": 300, "time": 10, "gres": "gpu:2"}},
              {{"id": "block", "user": "h", "submit": 650, "run_time": 100, "time": 10, "gres": "gpu:2"}}
            ]}}}}"#
    );
    let sc = gresim_io::parse_scenario(Path::new("fs.json"), &text).expect("loads");
    let o = run(&sc);
    let start = |key: &str| {
        let i = o
            .output
            .specs
            .iter()
            .position(|s| s.key == key)
            .expect("job");
        o.output.jobs[i].runs.first().expect("ran").start
    };
    (start("h2"), start("l2"))
}

#[test]
fn fair_tree_puts_the_light_account_first() {
    let (h2, l2) = fairshare_order(10000);
    assert!(l2 < h2, "light's job should start first: h2 {h2}, l2 {l2}");
    let (h2, l2) = fairshare_order(0);
    assert!(
        h2 < l2,
        "without fair-share, submission order: h2 {h2}, l2 {l2}"
    );
}

#[test]
fn sacct_traces_name_account_and_qos() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = "JobID|User|Account|QOS|Submit|Start|End|Timelimit|State|ReqTRES\n\
        1|alice|ml|capped|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:10:00|00:20:00|COMPLETED|cpu=1,gres/gpu=1,node=1\n\
        2|alice|bio|normal|2024-01-01T00:01:00|2024-01-01T00:01:00|2024-01-01T00:11:00|00:20:00|COMPLETED|cpu=1,gres/gpu=1,node=1\n\
        3|bob||strict|2024-01-01T00:02:00|2024-01-01T00:02:00|2024-01-01T00:12:00|00:20:00|COMPLETED|cpu=1,gres/gpu=1,node=1\n";
    std::fs::write(dir.path().join("site.sacct"), trace).expect("write");
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 2}}]}}]}},
            "scheduler": {{"def_mem_per_cpu": "1G"}},
            "accounting": {ACCOUNTING},
            "workload": {{"trace": "site.sacct", "format": "sacct"}}}}"#
    );
    let sc = gresim_io::parse_scenario(&dir.path().join("s.json"), &text).expect("loads");
    let o = run(&sc);
    let acct = o.output.cluster.accounting().expect("accounting");
    let names = |i: usize| {
        o.output.specs[i].acct().map(|ja| {
            (
                acct.assocs[ja.assoc as usize].account.clone(),
                acct.qos[ja.qos as usize].name.clone(),
            )
        })
    };
    assert_eq!(names(0), Some(("ml".into(), "capped".into())));
    // bio is not one of alice's accounts: sbatch's refusal, kept as a REJECTED record.
    assert_eq!(o.output.jobs[1].state, JobState::Rejected);
    // bob may not use strict.
    assert_eq!(
        o.output.jobs[2].rejected(),
        Some("Invalid qos specification")
    );
}
