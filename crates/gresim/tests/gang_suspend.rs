//! PreemptMode=SUSPEND,GANG under preempt/partition_prio through the
//! library entry point (docs/preemption.md, "SUSPEND,GANG"): a higher-tier
//! job starts at once on the cores of lower-tier jobs, which are suspended
//! (their run time stands still) until it ends; a suspended job keeps its
//! GPUs, so a preemptor that needs them waits; a job cancelled while
//! suspended leaves the preemptor's cores alone.

use std::path::Path;

use gresim::{Scenario, Simulation};
use gresim_model::JobState;

const SUSPEND: &str = r#", "preempt": {"type": "preempt/partition_prio", "mode": "SUSPEND,GANG"}"#;

/// One node with 16 cores and 4 GPUs; `owner` (PriorityTier 10) and
/// `scav` (1) on it.
fn scenario(preempt: &str, jobs: &str, events: &str) -> Scenario {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 2, "cores_per_socket": 8, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}]}},
            "partitions": [{{"name": "owner", "nodes": "ALL", "default": true, "priority_tier": 10}},
                           {{"name": "scav", "nodes": "ALL", "priority_tier": 1}}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G", "cred_expire": 5{preempt}}},
            "workload": {{"jobs": [{jobs}]}}{events}}}"#
    );
    gresim_io::parse_scenario(Path::new("gang.json"), &text).expect("loads")
}

/// A job of `cpus` cores (and `gpus` GPUs when > 0).
fn job(id: &str, part: &str, cpus: u32, gpus: u32, submit: u64, run: u64) -> String {
    job_limit(id, part, cpus, gpus, submit, run, 10)
}

/// [`job`] with a time limit of `limit` minutes.
fn job_limit(
    id: &str,
    part: &str,
    cpus: u32,
    gpus: u32,
    submit: u64,
    run: u64,
    limit: u32,
) -> String {
    let gres = if gpus > 0 {
        format!(r#", "gres": "gpu:{gpus}""#)
    } else {
        String::new()
    };
    format!(
        r#"{{"id": "{id}", "partition": "{part}", "submit": {submit}, "run_time": {run}, "time": {limit},
             "cpus_per_task": {cpus}{gres}}}"#
    )
}

fn run(sc: &Scenario) -> gresim::Outcome {
    Simulation::new(sc).run().expect("runs")
}

fn cores(o: &gresim::Outcome, i: usize) -> Vec<u32> {
    o.output.jobs[i].runs[0].alloc.nodes[0]
        .cores
        .iter()
        .collect()
}

#[test]
fn an_owner_job_starts_on_a_scavengers_cores_which_resumes_when_it_ends() {
    let jobs = [
        job("s1", "scav", 8, 0, 0, 30),
        job("s2", "scav", 8, 0, 1, 30),
        job("o1", "owner", 8, 0, 5, 10),
    ]
    .join(",");
    let o = run(&scenario(SUSPEND, &jobs, ""));
    let j = &o.output.jobs;
    assert_eq!(j[2].runs[0].start, 5, "o1 starts at once");
    assert_eq!(j[2].runs[0].end, Some(15));
    // It runs on s1's cores (the lowest ones, as cons_tres picks them).
    assert_eq!(cores(&o, 2), cores(&o, 0));
    // s1 stood still for o1's 10 s: its 30 s of work end at 40.
    assert_eq!(j[0].runs.len(), 1, "suspended, not requeued");
    assert_eq!(j[0].runs[0].end, Some(40));
    assert_eq!(j[0].state, JobState::Completed);
    // s2 shares no core with o1 and runs through.
    assert_eq!(j[1].runs[0].end, Some(31));
}

#[test]
fn a_scavenger_overlapped_by_two_owner_jobs_resumes_when_both_have_ended() {
    let jobs = [
        job("s1", "scav", 16, 0, 0, 30),
        job("o1", "owner", 8, 0, 5, 10),
        job("o2", "owner", 8, 0, 8, 10),
    ]
    .join(",");
    let o = run(&scenario(SUSPEND, &jobs, ""));
    let j = &o.output.jobs;
    assert_eq!(j[1].runs[0].start, 5);
    assert_eq!(j[2].runs[0].start, 8, "o2 takes the rest of s1's cores");
    // Suspended from 5 until o2 ends at 18: 13 s.
    assert_eq!(j[0].runs[0].end, Some(43));
}

#[test]
fn a_suspended_job_keeps_its_gpus() {
    // Each workload under SUSPEND,GANG, its jobs' records.
    let jobs_of = |jobs: &[String]| run(&scenario(SUSPEND, &jobs.join(","), "")).output.jobs;
    // A GPU owner job: the scavengers' GPUs stay allocated, so it waits.
    let j = jobs_of(&[
        job("s1", "scav", 4, 2, 0, 30),
        job("s2", "scav", 4, 2, 1, 30),
        job("o1", "owner", 4, 2, 5, 10),
    ]);
    assert_eq!(j[0].runs[0].end, Some(30));
    assert_eq!(j[1].runs[0].end, Some(31));
    assert_eq!(j[2].runs[0].start, 30, "o1 waits for s1's GPUs");
    // A CPU-only owner job over a scavenger with a GPU and every core:
    // the scavenger is suspended 5-15 (its GPU stays its own), and an owner
    // job that needs every GPU waits for it all the same.
    let j = jobs_of(&[
        job("s1", "scav", 16, 1, 0, 30),
        job("o1", "owner", 4, 0, 5, 10),
        job("o2", "owner", 2, 4, 6, 5),
    ]);
    assert_eq!(j[1].runs[0].start, 5, "o1 suspends s1");
    assert_eq!(j[0].runs[0].end, Some(40), "s1 stood still 10 s");
    assert_eq!(j[2].runs[0].start, 40, "o2 waits for s1's GPU");
    // An owner job on the other GPUs suspends it too.
    let j = jobs_of(&[
        job("s1", "scav", 16, 1, 0, 30),
        job("o1", "owner", 4, 3, 5, 10),
    ]);
    assert_eq!(j[1].runs[0].start, 5);
    let (a, b) = (&j[0].runs[0].alloc.nodes[0], &j[1].runs[0].alloc.nodes[0]);
    assert_eq!(a.gpus & b.gpus, 0, "GPUs are never shared");
    assert_eq!(j[0].runs[0].end, Some(40));
}

#[test]
fn without_suspend_mode_cpu_jobs_are_preempted_as_before() {
    let requeue = r#", "preempt": {"type": "preempt/partition_prio", "mode": "REQUEUE"}"#;
    let jobs = [
        job("s1", "scav", 16, 0, 0, 30),
        job("o1", "owner", 8, 0, 5, 10),
    ]
    .join(",");
    let o = run(&scenario(requeue, &jobs, ""));
    let j = &o.output.jobs;
    assert_eq!(j[0].runs[0].state, JobState::Preempted);
    assert_eq!(j[0].runs.len(), 2);
}

#[test]
fn a_scavenger_cancelled_while_suspended_leaves_the_owner_running() {
    let jobs = [
        job("s1", "scav", 16, 0, 0, 30),
        job("o1", "owner", 8, 0, 5, 10),
        job("s2", "scav", 16, 0, 6, 5),
    ]
    .join(",");
    let events = r#", "events": [{"at": 8, "action": "cancel", "job": "s1"}]"#;
    let o = run(&scenario(SUSPEND, &jobs, events));
    let j = &o.output.jobs;
    assert_eq!(j[0].state, JobState::Cancelled);
    assert_eq!(j[1].runs[0].end, Some(15), "o1 runs on");
    // s2 needs the whole node: it starts once o1's cores are free too.
    assert!(j[2].runs[0].start >= 15, "{}", j[2].runs[0].start);
    assert_eq!(j[2].state, JobState::Completed);
}

#[test]
fn the_time_limit_counts_only_the_time_run() {
    // s1 would run 100 s under a 1-minute limit; o1 suspends it for 10 s.
    let jobs = [
        job_limit("s1", "scav", 16, 0, 0, 100, 1),
        job("o1", "owner", 8, 0, 5, 10),
    ]
    .join(",");
    let o = run(&scenario(SUSPEND, &jobs, ""));
    let j = &o.output.jobs;
    assert_eq!(j[0].state, JobState::Timeout);
    // Its 60 s of running are over at 70 (Slurm's end_time = resume +
    // limit - pre_sus_time); the time-limit check every 30 s kills it at 90.
    assert_eq!(j[0].runs[0].end, Some(90));
}
