//! Preemption through the library entry point: partition-priority and QOS
//! preemption with REQUEUE and CANCEL, grace time, PreemptExemptTime,
//! checkpoints and lost work, and the default (no PreemptType) leaving
//! every decision alone.

use std::path::Path;

use gresim::{Scenario, Simulation};
use gresim_model::JobState;

/// One node with 4 GPUs; `owner` (PriorityTier 10) and `scav` (1) on it.
fn scenario(preempt: &str, scav_extra: &str, jobs: &str) -> Scenario {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}]}},
            "partitions": [{{"name": "owner", "nodes": "ALL", "default": true, "priority_tier": 10}},
                           {{"name": "scav", "nodes": "ALL", "priority_tier": 1{scav_extra}}}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5{preempt}}},
            "workload": {{"jobs": [{jobs}]}}}}"#
    );
    gresim_io::parse_scenario(Path::new("preempt.json"), &text).expect("loads")
}

fn job(id: &str, part: &str, gpus: u32, submit: u64, run: u64, extra: &str) -> String {
    format!(
        r#"{{"id": "{id}", "partition": "{part}", "submit": {submit}, "run_time": {run}, "time": 10,
             "gres": "gpu:{gpus}"{extra}}}"#
    )
}

fn run(sc: &Scenario) -> gresim::Outcome {
    Simulation::new(sc)
        .record_reasons(true)
        .run()
        .expect("runs")
}

const REQUEUE: &str = r#", "preempt": {"type": "preempt/partition_prio", "mode": "REQUEUE"}"#;
const CANCEL: &str = r#", "preempt": {"type": "preempt/partition_prio", "mode": "CANCEL"}"#;

fn jobs_two_scav_one_owner() -> String {
    [
        job("s1", "scav", 2, 0, 100, ""),
        job("s2", "scav", 2, 1, 100, ""),
        job("o1", "owner", 2, 10, 20, ""),
    ]
    .join(",")
}

#[test]
fn an_owner_job_requeues_the_oldest_scavenger_and_starts_in_the_same_second() {
    let o = run(&scenario(REQUEUE, "", &jobs_two_scav_one_owner()));
    let j = &o.output.jobs;
    // Both scavengers have the same tier and node count: the first in
    // the job list goes (slurm_find_preemptable_jobs' sort is stable).
    assert_eq!(j[0].runs.len(), 2, "s1 is requeued and runs again");
    assert_eq!(j[0].runs[0].state, JobState::Preempted);
    assert_eq!(j[0].runs[0].end, Some(10));
    assert_eq!(j[1].runs.len(), 1, "s2 is left alone");
    assert_eq!(j[2].runs[0].start, 10, "o1 starts once s1's GPUs are free");
    // The requeued job waits cred_expire + 1 s, then for o1's GPUs.
    assert!(j[0].runs[1].start >= 30, "{:?}", j[0].runs[1].start);
    assert_eq!(j[0].state, JobState::Completed);
    assert_eq!(j[0].restarts(), 1);
    // Without checkpoints its 10 s on 2 GPUs are lost.
    assert_eq!(j[0].lost_gpu_secs(), 20);
}

#[test]
fn with_cancel_the_preempted_job_ends_preempted_and_does_not_run_again() {
    let o = run(&scenario(CANCEL, "", &jobs_two_scav_one_owner()));
    let j = &o.output.jobs;
    assert_eq!(j[0].state, JobState::Preempted);
    assert_eq!(j[0].runs.len(), 1);
    assert_eq!(j[1].state, JobState::Completed);
    assert_eq!(j[2].runs[0].start, 10);
}

#[test]
fn without_a_preempt_type_the_owner_waits() {
    let o = run(&scenario("", "", &jobs_two_scav_one_owner()));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs.len(), 1);
    assert_eq!(j[0].state, JobState::Completed);
    assert!(j[2].runs[0].start >= 100, "{}", j[2].runs[0].start);
}

#[test]
fn a_partition_with_preempt_mode_off_is_never_preempted() {
    let o = run(&scenario(
        REQUEUE,
        r#", "preempt_mode": "OFF""#,
        &jobs_two_scav_one_owner(),
    ));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs.len(), 1);
    assert!(j[2].runs[0].start >= 100);
}

#[test]
fn grace_time_lets_the_preemptee_run_on_and_exempt_time_delays_it() {
    let o = run(&scenario(
        CANCEL,
        r#", "grace_time": 15"#,
        &jobs_two_scav_one_owner(),
    ));
    let j = &o.output.jobs;
    assert_eq!(j[0].state, JobState::Preempted);
    // Signalled at 10, its grace time is over at 10 + 15; o1's next
    // attempt comes 40 s after its first (KillWait + MessageTimeout by
    // default), so the time-limit check at 30 kills it.
    assert_eq!(j[0].runs[0].end, Some(30));
    assert_eq!(j[2].runs[0].start, 30);
    // The named option kills it at the end of its grace time.
    let at_end = CANCEL.replace(r#", "preempt""#, r#", "grace_kill": "at-end", "preempt""#);
    let o = run(&scenario(
        &at_end,
        r#", "grace_time": 15"#,
        &jobs_two_scav_one_owner(),
    ));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].end, Some(25), "killed at 10 + 15");
    assert_eq!(j[2].runs[0].start, 25);

    let exempt =
        r#", "preempt": {"type": "preempt/partition_prio", "mode": "CANCEL", "exempt_time": 30}"#;
    let o = run(&scenario(exempt, "", &jobs_two_scav_one_owner()));
    let j = &o.output.jobs;
    // s1 may be preempted from 0 + 30 on.
    assert_eq!(j[0].runs[0].end, Some(30));
    assert_eq!(j[2].runs[0].start, 30);
}

#[test]
fn a_checkpointing_job_loses_only_the_work_since_its_last_checkpoint() {
    let jobs = [
        job("s1", "scav", 4, 0, 100, r#", "checkpoint_interval": 8"#),
        job("o1", "owner", 2, 21, 20, ""),
    ]
    .join(",");
    let o = run(&scenario(REQUEUE, "", &jobs));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].end, Some(21));
    // Checkpoints at 8 and 16: 5 s on 4 GPUs lost, 16 s saved.
    assert_eq!(j[0].lost_gpu_secs(), 20);
    assert_eq!(j[0].state, JobState::Completed);
}

#[test]
fn the_owner_preempts_only_as_many_jobs_as_it_needs_on_the_node_it_chooses() {
    let jobs = [
        job("s1", "scav", 1, 0, 100, ""),
        job("s2", "scav", 1, 1, 100, ""),
        job("s3", "scav", 2, 2, 100, ""),
        job("o1", "owner", 2, 10, 20, ""),
    ]
    .join(",");
    let o = run(&scenario(REQUEUE, "", &jobs));
    let j = &o.output.jobs;
    // Lowest preemption priority first (tier, then node count: all equal),
    // so s1 then s2 go; s3 stays.
    assert_eq!(j[0].runs.len(), 2);
    assert_eq!(j[1].runs.len(), 2);
    assert_eq!(j[2].runs.len(), 1);
    assert_eq!(j[3].runs[0].start, 10);
}

/// One node with 2 GPUs under preempt/qos: QOS low (with `low_extra`), mid
/// (CANCEL), high (preempts low and mid); l (low) and m (mid) take a GPU
/// each, h (high, 2 GPUs) comes at 10 and n (normal) at `n_submit`.
fn qos_scenario(low_extra: &str, n_submit: u64) -> Scenario {
    let text = format!(
        r#"{{"schema_version": 1,
        "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                "gpus": [{{"model": "A100-SXM4-80GB", "count": 2}}]}}]}},
        "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5,
                      "preempt": {{"type": "preempt/qos", "mode": "REQUEUE"}}}},
        "accounting": {{"sacctmgr": ["add qos low{low_extra}", "add qos mid PreemptMode=cancel",
                                    "add qos high Preempt=low,mid",
                                    "add account a", "add user u Account=a",
                                    "modify user where name=u set qos+=low,mid,high"]}},
        "workload": {{"jobs": [
            {{"id": "l", "user": "u", "qos": "low", "submit": 0, "run_time": 100, "time": 10, "gres": "gpu:1"}},
            {{"id": "m", "user": "u", "qos": "mid", "submit": 1, "run_time": 100, "time": 10, "gres": "gpu:1"}},
            {{"id": "h", "user": "u", "qos": "high", "submit": 10, "run_time": 20, "time": 10, "gres": "gpu:2"}},
            {{"id": "n", "user": "u", "qos": "normal", "submit": {n_submit}, "run_time": 20, "time": 10, "gres": "gpu:2"}}]}}}}"#
    );
    gresim_io::parse_scenario(Path::new("q.json"), &text).expect("loads")
}

#[test]
fn qos_preemption_follows_the_preempt_list_and_the_qos_mode() {
    let o = run(&qos_scenario("", 40));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].state, JobState::Preempted, "low is requeued");
    assert_eq!(j[0].runs.len(), 2);
    assert_eq!(j[1].state, JobState::Preempted, "mid's own mode is CANCEL");
    assert_eq!(j[1].runs.len(), 1);
    assert_eq!(j[2].runs[0].start, 10);
    // normal may preempt nobody: it waits for the requeued low job.
    assert!(j[3].runs[0].start > j[0].runs[1].start);
}

#[test]
fn bad_preemption_settings_are_refused_naming_the_field() {
    let bad_mode = r#", "preempt": {"type": "preempt/partition_prio", "mode": "PAUSE"}"#;
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 4, "memory": "8G"}}]}},
            "scheduler": {{"sched_interval": 1{bad_mode}}},
            "workload": {{"jobs": []}}}}"#
    );
    let e = gresim_io::parse_scenario(Path::new("p.json"), &text).expect_err("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("scheduler.preempt.mode") && msg.contains("PAUSE"),
        "{msg}"
    );
    let off = text.replace("PAUSE", "OFF");
    let e = gresim_io::parse_scenario(Path::new("p.json"), &off).expect_err("refused");
    assert!(e.to_string().contains("incompatible"), "{e}");
    let when = text.replace("PAUSE", "CANCEL").replace(
        r#""sched_interval": 1,"#,
        r#""sched_interval": 1, "grace_kill": "later","#,
    );
    let e = gresim_io::parse_scenario(Path::new("p.json"), &when).expect_err("refused");
    let msg = e.to_string();
    assert!(
        msg.contains("scheduler.grace_kill") && msg.contains("later"),
        "{msg}"
    );
    // A QOS that would preempt itself through another one.
    let loop_text = r#"{"schema_version": 1,
        "cluster": {"nodes": [{"names": "n1", "sockets": 1, "cores_per_socket": 4, "memory": "8G"}]},
        "accounting": {"sacctmgr": ["add qos a", "add qos b Preempt=a", "modify qos a set Preempt=b"]},
        "workload": {"jobs": []}}"#;
    let e = gresim_io::parse_scenario(Path::new("l.json"), loop_text).expect_err("refused");
    assert!(e.to_string().contains("preemption loop"), "{e}");
}

#[test]
fn explain_names_the_jobs_a_pending_job_would_preempt() {
    let o = run(&scenario(
        CANCEL,
        r#", "grace_time": 15"#,
        &jobs_two_scav_one_owner(),
    ));
    let rf = o.run_file();
    // o1 waits from 10 to 30 while s1 runs through its grace time.
    let text = gresim_report::explain::explain(&rf, "o1", Some(15)).expect("explains");
    assert!(
        text.contains("preempt preempt/partition_prio in partition owner: it would preempt 1 \"s1\" (scav, CANCEL) and run on n1"),
        "{text}"
    );
    // Without preemption explain says nothing of it.
    let o = run(&scenario("", "", &jobs_two_scav_one_owner()));
    let text = gresim_report::explain::explain(&o.run_file(), "o1", Some(15)).expect("explains");
    assert!(!text.contains("preempt"), "{text}");
}

fn reason_list(o: &gresim::Outcome, i: usize) -> Vec<(u64, &'static str)> {
    o.output.reasons.as_ref().expect("recorded")[i]
        .iter()
        .map(|c| (c.t, c.reason.as_str()))
        .collect()
}

#[test]
fn a_slow_kill_holds_the_preemptees_resources_and_delays_its_requeue() {
    // slurmstepd's slow path (docs/preemption.md): the kill is done 4 s on.
    let mut sc = scenario(REQUEUE, "", &jobs_two_scav_one_owner());
    sc.params.preempt_completing = 4;
    let o = run(&sc);
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].state, JobState::Preempted);
    assert_eq!(j[0].runs[0].end, Some(10), "the run ends at the preemption");
    assert_eq!(j[2].runs[0].start, 14, "o1 waits for the kill to be done");
    assert!(
        reason_list(&o, 2).last() == Some(&(10, "Resources")),
        "o1 waits with Resources meanwhile: {:?}",
        reason_list(&o, 2)
    );
    // Begin time from the kill's end: 14 + cred_expire 5 + 1.
    assert!(
        reason_list(&o, 0).contains(&(14, "BeginTime")),
        "{:?}",
        reason_list(&o, 0)
    );
    assert!(j[0].runs[1].start >= 20, "{:?}", j[0].runs[1].start);
    assert_eq!(j[0].state, JobState::Completed);
    assert_eq!(j[0].restarts(), 1);
    assert_eq!(j[0].lost_gpu_secs(), 20, "lost up to the preemption");

    let mut sc = scenario(CANCEL, "", &jobs_two_scav_one_owner());
    sc.params.preempt_completing = 4;
    let o = run(&sc);
    let j = &o.output.jobs;
    assert_eq!(j[0].state, JobState::Preempted);
    assert_eq!(j[0].runs.len(), 1);
    assert_eq!(j[2].runs[0].start, 14);
}

#[test]
fn at_submission_a_job_shows_priority_behind_a_lower_tier_job_of_higher_priority() {
    // s2 (scav, tier 1) waits for s1; o1 (owner, tier 10) is submitted
    // later, so with a lower priority/basic value: _top_priority() compares
    // the priorities alone (neither has a reservation) and says Priority.
    let jobs = [
        job("s1", "scav", 4, 0, 100, ""),
        job("s2", "scav", 2, 1, 100, ""),
        job("o1", "owner", 2, 10, 20, ""),
    ]
    .join(",");
    let o = run(&scenario("", "", &jobs));
    assert!(
        reason_list(&o, 2).contains(&(10, "Priority")),
        "{:?}",
        reason_list(&o, 2)
    );
    // Alone in the queue it shows none at submission.
    let jobs = [
        job("s1", "scav", 4, 0, 100, ""),
        job("o1", "owner", 2, 10, 20, ""),
    ]
    .join(",");
    let o = run(&scenario("", "", &jobs));
    assert!(
        !reason_list(&o, 1).iter().any(|r| r.1 == "Priority"),
        "{:?}",
        reason_list(&o, 1)
    );
}

#[test]
fn explain_names_the_jobs_a_pending_job_would_preempt_under_preempt_qos() {
    // low's GraceTime keeps h pending from 10 to 30 while l runs on.
    let o = run(&qos_scenario(" GraceTime=20", 12));
    assert_eq!(
        o.output.jobs[2].runs[0].start, 30,
        "h waits for l's grace time"
    );
    let rf = o.run_file();
    let text = gresim_report::explain::explain(&rf, "h", Some(15)).expect("explains");
    assert!(
        text.contains("preempt preempt/qos in partition")
            && text.contains("it would preempt 1 \"l\" (")
            && text.contains("REQUEUE) and run on n1"),
        "{text}"
    );
    // normal's QOS preempts nobody.
    let text = gresim_report::explain::explain(&rf, "n", Some(15)).expect("explains");
    assert!(
        text.contains("preempt preempt/qos: no running job it may preempt would make room"),
        "{text}"
    );
}

/// A preempted scavenger whose program ignores SIGTERM is killed after its
/// grace time (by o1's next attempt at 10 + KillWait + MessageTimeout =
/// 21), but slurmd waits MAX(KillWait, 5) s before SIGKILL: the owner
/// starts then, not at the kill (preempt_grace's s1).
#[test]
fn a_preemptee_that_ignores_sigterm_keeps_its_gpus_for_kill_wait() {
    let preempt =
        r#", "kill_wait": 1, "preempt": {"type": "preempt/partition_prio", "mode": "CANCEL"}"#;
    let jobs = |extra: &str| {
        [
            job("s1", "scav", 4, 0, 100, extra),
            job("o1", "owner", 4, 10, 20, ""),
        ]
        .join(",")
    };
    let o = run(&scenario(
        preempt,
        r#", "grace_time": 10"#,
        &jobs(r#", "ignores_sigterm": true"#),
    ));
    let j = &o.output.jobs;
    assert_eq!(
        (j[0].state, j[0].runs[0].end),
        (JobState::Preempted, Some(21))
    );
    assert_eq!(j[1].runs[0].start, 26, "5 s after the kill");
    let o = run(&scenario(preempt, r#", "grace_time": 10"#, &jobs("")));
    assert_eq!(o.output.jobs[1].runs[0].start, 21);
}

/// One node with 2 GPUs under preempt/qos; QOS `low` has PreemptMode
/// `low_mode` (with `WITHIN` it preempts within itself) and a GraceTime of
/// 20 s. l1 runs from 0; l2 (same
/// QOS) comes at 5 with the lower priority/basic priority, and is raised
/// above l1 by `scontrol update Nice=-100` at 10.
fn within_scenario(low_mode: &str) -> Scenario {
    let text = r#"{"schema_version": 1,
        "cluster": {"nodes": [{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5,
                      "preempt": {"type": "preempt/qos", "mode": "REQUEUE"}},
        "accounting": {"sacctmgr": ["add qos low PreemptMode=MODE GraceTime=20",
                                    "add account a", "add user u Account=a",
                                    "modify user where name=u set qos+=low"]},
        "workload": {"jobs": [
            {"id": "l1", "user": "u", "qos": "low", "submit": 0, "run_time": 100, "time": 10, "gres": "gpu:2"},
            {"id": "l2", "user": "u", "qos": "low", "submit": 5, "run_time": 20, "time": 10, "gres": "gpu:2"}]},
        "events": [{"at": 10, "action": "update", "job": "l2", "nice": -100}]}"#
        .replace("MODE", low_mode);
    gresim_io::parse_scenario(Path::new("within.json"), &text).expect("loads")
}

#[test]
fn same_qos_preemption_goes_by_job_priority_and_explain_follows_it() {
    let o = run(&within_scenario("requeue,within"));
    let j = &o.output.jobs;
    // preempt_p_preemptable(): same QOS, WITHIN, and a strictly higher
    // priority: from 10 on l2 preempts l1, which runs its grace time.
    assert_eq!(
        (j[0].runs[0].state, j[0].runs[0].end),
        (JobState::Preempted, Some(30))
    );
    assert_eq!(j[1].runs[0].start, 30);
    let rf = o.run_file();
    assert!(rf.preempt.as_ref().is_some_and(|p| p.priorities));
    // Only l2's priority changed: only it carries a history.
    assert_eq!(rf.jobs[0].priorities, None);
    let h = rf.jobs[1].priorities.as_ref().expect("l2's priorities");
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!((h[0].0, h[1].0), (5, 10));
    assert!(h[1].1 > rf.jobs[0].priority && h[0].1 < rf.jobs[0].priority);
    // At 15 l2's priority is above l1's: it would preempt l1.
    let text = gresim_report::explain::explain(&rf, "l2", Some(15)).expect("explains");
    assert!(
        text.contains("preempt preempt/qos in partition")
            && text.contains("it would preempt 1 \"l1\" (")
            && text.contains("REQUEUE) and run on n1"),
        "{text}"
    );
    // At 7 it was below (its final priority is not the one that counts).
    let text = gresim_report::explain::explain(&rf, "l2", Some(7)).expect("explains");
    assert!(
        text.contains("preempt preempt/qos: no running job it may preempt would make room"),
        "{text}"
    );
    // A run file that does not say it recorded priorities (an older one):
    // explain says it cannot tell rather than guess.
    let mut older = rf.clone();
    if let Some(p) = older.preempt.as_mut() {
        p.priorities = false;
    }
    let text = gresim_report::explain::explain(&older, "l2", Some(15)).expect("explains");
    assert!(
        text.contains("no running job it may preempt would make room\npreempt same-QOS preemption (WITHIN) not worked out"),
        "{text}"
    );
    // The same run without WITHIN: l2 waits for l1's end, no history is kept.
    let o = run(&within_scenario("requeue"));
    assert_eq!(o.output.jobs[1].runs[0].start, 100);
    let rf = o.run_file();
    assert!(rf.jobs.iter().all(|j| j.priorities.is_none()));
    let text = gresim_report::explain::explain(&rf, "l2", Some(15)).expect("explains");
    assert!(
        text.contains("preempt preempt/qos: no running job it may preempt would make room"),
        "{text}"
    );
}

/// One node with 2 GPUs under preempt/qos with priority/multifactor
/// (or, without `multifactor`, priority/basic): PriorityWeightJobSize and PriorityWeightAge 10000,
/// PriorityMaxAge 60 s, PriorityCalcPeriod 60 s; QOS `low` is
/// `cancel,within` with a GraceTime of 20 s. r1 (1 CPU) and r2 (4 CPUs)
/// start at 0 with job-size priorities 5312 and 6250; b1 (2 CPUs, 5625)
/// comes at 5, e1 (1 CPU, 5312) at 30. Under priority/basic every later
/// job has the lower priority.
fn within_mf_scenario(multifactor: bool) -> Scenario {
    let text = r#"{"schema_version": 1,
        "cluster": {"nodes": [{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "scheduler": {"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5,
                      PRIORITY
                      "preempt": {"type": "preempt/qos", "mode": "REQUEUE"}},
        "accounting": {"sacctmgr": ["add qos low PreemptMode=cancel,within GraceTime=20",
                                    "add account a", "add user u Account=a",
                                    "modify user where name=u set qos+=low"]},
        "workload": {"jobs": [
            {"id": "r1", "user": "u", "qos": "low", "submit": 0, "run_time": 200, "time": 10, "gres": "gpu:1", "cpus_per_task": 1},
            {"id": "r2", "user": "u", "qos": "low", "submit": 0, "run_time": 200, "time": 10, "gres": "gpu:1", "cpus_per_task": 4},
            {"id": "b1", "user": "u", "qos": "low", "submit": 5, "run_time": 200, "time": 10, "gres": "gpu:1", "cpus_per_task": 2},
            {"id": "e1", "user": "u", "qos": "low", "submit": 30, "run_time": 20, "time": 10, "gres": "gpu:1", "cpus_per_task": 1}]}}"#
        .replace(
            "PRIORITY",
            if multifactor {
                r#""priority_type": "multifactor",
                   "priority_weights": {"job_size": 10000, "age": 10000, "max_age": 60, "calc_period": 60},"#
            } else {
                ""
            },
        );
    gresim_io::parse_scenario(Path::new("within_mf.json"), &text).expect("loads")
}

#[test]
fn same_qos_preemption_under_multifactor_compares_queue_priorities_and_kept_ones() {
    let o = run(&within_mf_scenario(true));
    let j = &o.output.jobs;
    let end = |i: usize| (j[i].runs[0].state, j[i].runs[0].end);
    // b1 (5625) is above r1 (5312), not r2 (6250): it preempts r1 at 5,
    // which runs its grace time (over at 25; killed by the time-limit
    // check at 30, before b1's next attempt at 45).
    assert_eq!(end(0), (JobState::Preempted, Some(30)));
    assert_eq!(j[2].runs[0].start, 30);
    // e1 (5312 at submission, as the jobs' priorities stood) waits; the
    // decay pass at 60 adds its age (30 s of 60: 5000): 10312 passes r2's
    // 6250 and b1's 5625, which they keep from their start (the same pass
    // gives pending jobs only their age). It preempts r2, the older, in
    // the pass after it (at 61), and starts after r2's grace time (over
    // at 81), at the time-limit check at 90.
    assert_eq!(end(1), (JobState::Preempted, Some(90)));
    assert_eq!(j[3].runs[0].start, 90);
    assert_eq!(end(2), (JobState::Completed, Some(230)));
    // The priorities each run started with.
    let prios: Vec<u32> = j.iter().map(|x| x.runs[0].priority).collect();
    assert_eq!(prios, [5312, 6250, 5625, 10312]);

    // The run file carries them, and explain replays the comparison.
    let rf = o.run_file();
    assert!(rf
        .preempt
        .as_ref()
        .is_some_and(|p| p.priorities && p.multifactor));
    assert_eq!(
        rf.jobs[1].priority_at(70),
        6250,
        "r2 keeps its priority while it runs"
    );
    assert_eq!(rf.jobs[3].priority_at(45), 5312);
    assert_eq!(rf.jobs[3].priority_at(70), 10312);
    let text = gresim_report::explain::explain(&rf, "b1", Some(10)).expect("explains");
    assert!(text.contains("it would preempt 1 \"r1\" ("), "{text}");
    let text = gresim_report::explain::explain(&rf, "e1", Some(45)).expect("explains");
    assert!(
        text.contains("preempt preempt/qos: no running job it may preempt would make room"),
        "{text}"
    );
    let text = gresim_report::explain::explain(&rf, "e1", Some(70)).expect("explains");
    assert!(text.contains("it would preempt 2 \"r2\" ("), "{text}");

    // Under priority/basic (submission order) no later job is above an
    // earlier one: nothing is preempted, and b1 waits for a GPU.
    let o = run(&within_mf_scenario(false));
    let j = &o.output.jobs;
    assert!(j.iter().all(|x| x.runs[0].state != JobState::Preempted));
    assert_eq!(j[2].runs[0].start, 200);
    assert!(!o.run_file().preempt.as_ref().is_some_and(|p| p.multifactor));
}

/// Backfill reserves a waiting preemptor's nodes (`_attempt_backfill()`:
/// its `select_nodes()` fails while the preemptee runs its grace time, and
/// backfill "drops through and reserves these resources"): the scavenger
/// s2 does not take the GPU x1 leaves on the preemptor's node at 15, and
/// starts with p1, once s1's grace time is over (as in preempt_bf_grace).
#[test]
fn backfill_starts_nothing_on_the_nodes_of_a_preemptor_waiting_for_a_grace_time() {
    let jobs = [
        job("s1", "scav", 3, 0, 100, ""),
        job("x1", "owner", 1, 0, 15, ""),
        job("p1", "owner", 3, 5, 20, ""),
        job("s2", "scav", 1, 8, 30, ""),
    ]
    .join(",");
    let o = run(&scenario(CANCEL, r#", "grace_time": 20"#, &jobs));
    let j = &o.output.jobs;
    // The grace time is over at 25; the time-limit check at 30 kills s1
    // (p1's next attempt would come at 5 + 40).
    assert_eq!(
        (j[0].runs[0].state, j[0].runs[0].end),
        (JobState::Preempted, Some(30))
    );
    assert_eq!(j[1].runs[0].end, Some(15));
    assert_eq!(j[2].runs[0].start, 30);
    assert_eq!(j[3].runs[0].start, 30, "s2 waits for p1's start");
}

/// The end of a grace time (docs/preemption.md, "The end of a grace time"):
/// Slurm lowers the preempted job's end time to now + GraceTime and kills
/// it when `slurm_job_preempt()` next finds that time passed, from a
/// preemption attempt (a waiting preemptor's, every KillWait +
/// MessageTimeout = 1 + 10 s here) or the time-limit check (every 30 s,
/// at 30 and 60 here), not at the end itself. As in preempt_grace_heldout:
/// o1 preempts a1 at 3 (grace over at 15), its attempts at 14 and 25: a1
/// is killed at 25; o2 preempts b1 at 26 (over at 38) and is cancelled at
/// 30: nothing tries again, and the check at 60 kills b1.
#[test]
fn a_grace_time_ends_at_the_next_preemption_attempt_or_time_limit_check() {
    let sc = |grace_kill: &str| {
        let text = format!(
            r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n[1-2]", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}]}},
            "partitions": [{{"name": "owner", "nodes": "ALL", "default": true, "priority_tier": 10}},
                           {{"name": "scav", "nodes": "ALL", "priority_tier": 1, "grace_time": 12}}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5,
                          "kill_wait": 1{grace_kill}{CANCEL}}},
            "workload": {{"jobs": [{}]}},
            "events": [{{"at": 30, "action": "cancel", "job": "o2"}}]}}"#,
            [
                job("a1", "scav", 4, 0, 300, ""),
                job("b1", "scav", 4, 0, 300, ""),
                job("o1", "owner", 4, 3, 10, ""),
                job("o2", "owner", 4, 26, 10, ""),
            ]
            .join(",")
        );
        gresim_io::parse_scenario(Path::new("grace_end.json"), &text).expect("loads")
    };
    let o = run(&sc(""));
    let j = &o.output.jobs;
    let end = |i: usize| (j[i].runs[0].state, j[i].runs[0].end);
    assert_eq!(
        end(0),
        (JobState::Preempted, Some(25)),
        "o1's attempt at 25"
    );
    assert_eq!(j[2].runs[0].start, 25);
    assert_eq!(end(1), (JobState::Preempted, Some(60)), "the check at 60");
    assert_eq!(j[3].state, JobState::Cancelled);
    assert!(j[3].runs.is_empty());

    // Killed at the end of the grace time (the named option), a1 is gone
    // at 15, o1 has ended by 26, and o2 starts on its node: b1 runs on.
    let o = run(&sc(r#", "grace_kill": "at-end""#));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].end, Some(15));
    assert_eq!(j[2].runs[0].start, 15);
    assert_eq!(j[3].runs[0].start, 26);
    assert_eq!(j[1].state, JobState::Completed);
}

/// A time limit that ends within the grace time ends the grace time
/// (`_job_check_grace_internal()`: `end_time = MIN(end_time, now +
/// GraceTime)`), and whatever kills the job then preempts it with its
/// PreemptMode: a preemptor's attempt (every KillWait + MessageTimeout = 11
/// s here) or the time-limit check, which takes the preemption branch for a
/// job in its grace time (`job_time_limit()`), never the TIMEOUT one.
/// s1 (from 5, 1-minute limit, grace 100 s) is preempted by o1 at 22: the
/// grace ends at 65, o1's attempt at 66 requeues it (the check would come
/// at 90). With CANCEL and o1 cancelled at 30, no attempt is left and the
/// check at 90 kills it, PREEMPTED.
#[test]
fn a_time_limit_within_the_grace_time_ends_it_and_the_job_is_preempted_not_timed_out() {
    let sc = |mode: &str, cancel_at: Option<u64>| {
        let events = cancel_at.map_or(String::new(), |t| {
            format!(r#", "events": [{{"at": {t}, "action": "cancel", "job": "o1"}}]"#)
        });
        let text = format!(
            r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}]}},
            "partitions": [{{"name": "owner", "nodes": "ALL", "default": true, "priority_tier": 10}},
                           {{"name": "scav", "nodes": "ALL", "priority_tier": 1, "grace_time": 100}}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5,
                          "kill_wait": 1, "preempt": {{"type": "preempt/partition_prio", "mode": "{mode}"}}}},
            "workload": {{"jobs": [
                {{"id": "s1", "partition": "scav", "submit": 5, "run_time": 300, "time": 1, "gres": "gpu:4"}},
                {}]}}{events}}}"#,
            job("o1", "owner", 4, 22, 10, ""),
        );
        gresim_io::parse_scenario(Path::new("grace_limit.json"), &text).expect("loads")
    };
    let o = run(&sc("REQUEUE", None));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].state, JobState::Preempted);
    assert_eq!(j[0].runs[0].end, Some(66), "o1's attempt at 66, after 65");
    assert_eq!(j[0].runs.len(), 2, "requeued, not timed out");
    assert_eq!(j[1].runs[0].start, 66);
    // Its second run is not preempted: it times out.
    assert_eq!(j[0].state, JobState::Timeout);

    let o = run(&sc("CANCEL", Some(30)));
    let j = &o.output.jobs;
    assert_eq!(j[1].state, JobState::Cancelled);
    assert_eq!(j[0].runs.len(), 1);
    assert_eq!(
        (j[0].state, j[0].runs[0].end),
        (JobState::Preempted, Some(90)),
        "the check at 90 preempts it"
    );
}

/// Two nodes of 4 GPUs; QOS scav with `flags` (sacctmgr's `Flags=`) and the
/// global PreemptMode `mode` (none: no preemption settings). b1 (40 s,
/// 2-minute limit) and b2 (100 s, 3-minute limit) fill the nodes; h needs
/// both (reserved from b2's planned end, 181 s); s (scav, 30 s, 10-minute
/// limit) and n (normal, 20 s, 1-minute limit) come after it.
fn no_reserve_scenario(flags: &str, mode: Option<&str>) -> Scenario {
    let preempt = mode.map_or(String::new(), |m| {
        format!(r#", "preempt": {{"type": "preempt/qos", "mode": "{m}"}}"#)
    });
    let text = format!(
        r#"{{"schema_version": 1,
        "cluster": {{"nodes": [{{"names": "n[1-2]", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
                                "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}]}},
        "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G"{preempt}}},
        "accounting": {{"sacctmgr": ["add qos scav{flags}", "add account a", "add user u Account=a",
                                    "modify user where name=u set qos+=scav"]}},
        "workload": {{"jobs": [
            {{"id": "b1", "user": "u", "submit": 0, "run_time": 40, "time": 2, "gres": "gpu:4"}},
            {{"id": "b2", "user": "u", "submit": 1, "run_time": 100, "time": 3, "gres": "gpu:4"}},
            {{"id": "h", "user": "u", "submit": 2, "run_time": 20, "time": 1, "nodes": 2, "gres": "gpu:4"}},
            {{"id": "s", "user": "u", "qos": "scav", "submit": 3, "run_time": 30, "time": 10, "gres": "gpu:4"}},
            {{"id": "n", "user": "u", "submit": 4, "run_time": 20, "time": 1, "gres": "gpu:4"}}]}}}}"#
    );
    gresim_io::parse_scenario(Path::new("noreserve.json"), &text).expect("loads")
}

/// The QOS flag `NoReserve` (`_attempt_backfill()`): under a PreemptMode
/// its jobs are planned for one minute, so s backfills into the 141 s
/// before h's reservation although its own limit is 10 minutes, and then
/// runs with that limit; without a PreemptMode it is planned with its
/// limit, and without the flag too: n takes the gap instead.
#[test]
fn a_no_reserve_qos_job_is_planned_for_one_minute_under_preemption() {
    let starts = |sc: &Scenario| -> Vec<u64> {
        run(sc)
            .output
            .jobs
            .iter()
            .map(|j| j.runs[0].start)
            .collect()
    };
    let with = no_reserve_scenario(" Flags=NoReserve", Some("REQUEUE"));
    let o = run(&with);
    assert_eq!(starts(&with), vec![0, 1, 101, 40, 70]);
    assert_eq!(o.output.jobs[3].state, JobState::Completed);
    // Without the flag, or without a PreemptMode, s cannot start before h.
    for sc in [
        no_reserve_scenario("", Some("REQUEUE")),
        no_reserve_scenario(" Flags=NoReserve", None),
    ] {
        let s = starts(&sc);
        assert_eq!(s[4], 40, "n takes the gap: {s:?}");
        assert!(s[3] >= s[2] + 20, "s waits for h: {s:?}");
    }
}
