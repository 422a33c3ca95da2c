//! Gang time-slicing through the library entry point (docs/preemption.md,
//! "Gang time-slicing"): in a partition with `OverSubscribe=FORCE:N` under
//! PreemptMode GANG, jobs that find no idle cores start in another row on
//! cores other jobs hold, are suspended at once, and take turns every
//! `SchedulerTimeSlice` seconds; a job started as a filler keeps its turn
//! over the first wake-up; a job that ends lets the waiting ones run at
//! once; each job's end moves by the time it stood still. With FORCE:1
//! nothing is shared; without GANG the jobs sharing cores run at once.
//! `OverSubscribe=YES:N` and the node states are in `oversubscribe.rs`.

use std::path::Path;

use gresim::{Scenario, Simulation};

const GANG: &str = r#", "preempt": {"type": "preempt/none", "mode": "GANG"}, "time_slice": 10"#;

/// One node with 16 cores (2 sockets), one partition `p` with
/// `oversubscribe`, the scheduler settings `sched` added.
fn scenario(oversubscribe: &str, sched: &str, jobs: &[String]) -> Scenario {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 2, "cores_per_socket": 8, "memory": "64G"}}]}},
            "partitions": [{{"name": "p", "nodes": "ALL", "default": true, "oversubscribe": "{oversubscribe}"}}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G"{sched}}},
            "workload": {{"jobs": [{}]}}}}"#,
        jobs.join(",")
    );
    gresim_io::parse_scenario(Path::new("timeslice.json"), &text).expect("loads")
}

/// A job of `cpus` cores submitted at `submit` that runs `run` seconds.
fn job(id: &str, cpus: u32, submit: u64, run: u64) -> String {
    format!(
        r#"{{"id": "{id}", "submit": {submit}, "run_time": {run}, "time": 10, "cpus_per_task": {cpus}}}"#
    )
}

/// Each job's (start, end).
fn runs(sc: &Scenario) -> Vec<(u64, Option<u64>)> {
    let o = Simulation::new(sc).run().expect("runs");
    o.output
        .jobs
        .iter()
        .map(|j| (j.runs[0].start, j.runs[0].end))
        .collect()
}

fn cores(sc: &Scenario) -> Vec<Vec<u32>> {
    let o = Simulation::new(sc).run().expect("runs");
    o.output
        .jobs
        .iter()
        .map(|j| j.runs[0].alloc.nodes[0].cores.iter().collect())
        .collect()
}

#[test]
fn two_jobs_on_the_same_cores_take_turns_and_their_ends_move() {
    // t1 starts at 0 as a filler: the wake-up at 10 keeps it first, so it
    // runs 0-20; t2 (started at 1 on the same cores, suspended at once)
    // runs 20-30; t1 30-35 (25 s of work, ends 10 s late); t2 resumes at
    // once when t1 ends and runs its last 2 s.
    let sc = scenario(
        "FORCE:2",
        GANG,
        &[job("t1", 16, 0, 25), job("t2", 16, 1, 12)],
    );
    assert_eq!(runs(&sc), vec![(0, Some(35)), (1, Some(37))]);
    let c = cores(&sc);
    assert_eq!(c[0], c[1], "both hold every core");
    assert_eq!(c[0].len(), 16);
}

#[test]
fn with_one_row_the_jobs_queue_and_without_gang_they_share_and_run_at_once() {
    let jobs = [job("t1", 16, 0, 25), job("t2", 16, 1, 12)];
    let queued = vec![(0, Some(25)), (25, Some(37))];
    assert_eq!(runs(&scenario("FORCE:1", GANG, &jobs)), queued);
    assert_eq!(runs(&scenario("NO", GANG, &jobs)), queued);
    // FORCE:2 without gang scheduling: t2 starts in the second row on
    // t1's cores, and nothing suspends either (`_get_job_node_req()` gives
    // FORCE's jobs NODE_CR_AVAILABLE whether or not GANG is on).
    let sc = scenario("FORCE:2", r#", "time_slice": 10"#, &jobs);
    assert_eq!(runs(&sc), vec![(0, Some(25)), (1, Some(13))]);
    let c = cores(&sc);
    assert_eq!(c[0], c[1], "both hold every core");
    // A third job finds both rows full and waits for t2's end.
    let three = [
        job("t1", 16, 0, 25),
        job("t2", 16, 1, 12),
        job("t3", 4, 2, 5),
    ];
    let r = runs(&scenario("FORCE:2", r#", "time_slice": 10"#, &three));
    assert_eq!(r[2], (13, Some(18)), "{r:?}");
}

#[test]
fn a_job_that_ends_mid_slice_lets_the_waiting_one_run_at_once() {
    // t1 ends at 12, between wake-ups: t2 resumes then, not at 20.
    let sc = scenario(
        "FORCE:2",
        GANG,
        &[job("t1", 16, 0, 12), job("t2", 16, 1, 30)],
    );
    assert_eq!(runs(&sc), vec![(0, Some(12)), (1, Some(42))]);
}

#[test]
fn smaller_jobs_share_a_row_and_run_together_in_their_turn() {
    // t2 (8 cores) and t3 (4 cores) fit beside each other in the second
    // row: suspended at once, both run 20-28 while t1 waits, and t1
    // resumes when they end (20 s run before, 10 after: ends at 38).
    let sc = scenario(
        "FORCE:2",
        GANG,
        &[job("t1", 16, 0, 30), job("t2", 8, 1, 8), job("t3", 4, 2, 8)],
    );
    assert_eq!(runs(&sc), vec![(0, Some(38)), (1, Some(28)), (2, Some(28))]);
    let c = cores(&sc);
    assert!(c[1].iter().all(|x| !c[2].contains(x)), "{c:?}");
}

#[test]
fn a_third_job_waits_when_every_row_is_full() {
    // FORCE:2: t3 finds no row with 8 free cores until t1 ends (35); it
    // starts then (the end sets off a pass), in t1's row.
    let sc = scenario(
        "FORCE:2",
        GANG,
        &[
            job("t1", 16, 0, 25),
            job("t2", 16, 1, 25),
            job("t3", 8, 3, 5),
        ],
    );
    let r = runs(&sc);
    assert_eq!(r[0], (0, Some(35)));
    assert_eq!(r[2].0, 35, "t3 waits for a row until t1 ends: {r:?}");
    // With three rows it starts at once.
    let sc3 = scenario(
        "FORCE:3",
        GANG,
        &[
            job("t1", 16, 0, 25),
            job("t2", 16, 1, 25),
            job("t3", 8, 3, 5),
        ],
    );
    assert_eq!(runs(&sc3)[2].0, 3);
}

#[test]
fn bad_oversubscribe_and_time_slice_are_refused_with_their_path() {
    let bad = |over: &str, sched: &str, needle: &str| {
        let text = format!(
            r#"{{"schema_version": 1,
                "cluster": {{"nodes": [{{"names": "n1", "sockets": 2, "cores_per_socket": 8, "memory": "64G"}}]}},
                "partitions": [{{"name": "p", "oversubscribe": "{over}"}}],
                "scheduler": {{"preempt": {{"type": "preempt/none", "mode": "GANG"}}{sched}}},
                "workload": {{"jobs": []}}}}"#
        );
        let e = gresim_io::parse_scenario(Path::new("timeslice.json"), &text)
            .expect_err("refused")
            .to_string();
        assert!(e.contains(needle), "{e}");
    };
    bad("FORCE:0", "", "partitions[0].oversubscribe");
    // YES:N needs N of at least 2 (read_config.c).
    bad("YES:1", "", "partitions[0].oversubscribe");
    bad("SOMETIMES", "", "partitions[0].oversubscribe");
    bad("FORCE:2", r#", "time_slice": 4"#, "scheduler.time_slice");
    bad(
        "FORCE:2",
        r#", "time_slice": 70000"#,
        "scheduler.time_slice",
    );
}

/// Jobs with GPUs take turns too (docs/preemption.md, "Gang time-slicing"):
/// a row frees only cores, every job keeps its GPUs (suspended ones too),
/// and the gang scheduler compares cores only. On one node of 16 cores and
/// 4 GPUs: g1 (16 cores, 2 GPUs) runs; g2 (16 cores, 2 GPUs) starts over it
/// on the other two GPUs and they alternate as the CPU jobs above do; g3
/// (1 core, 2 GPUs) finds no free GPU in any row and waits for g1's.
#[test]
fn jobs_with_gpus_take_turns_on_their_cores_and_keep_their_gpus() {
    let gpu_job = |id: &str, cpus: u32, submit: u64, run: u64| {
        format!(
            r#"{{"id": "{id}", "submit": {submit}, "run_time": {run}, "time": 10, "cpus_per_task": {cpus}, "gres": "gpu:2"}}"#
        )
    };
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n1", "sockets": 2, "cores_per_socket": 8, "memory": "64G",
                                    "gpus": [{{"model": "A100-SXM4-80GB", "count": 4}}]}}]}},
            "partitions": [{{"name": "p", "nodes": "ALL", "default": true, "oversubscribe": "FORCE:3"}}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G"{GANG}}},
            "workload": {{"jobs": [{}, {}, {}]}}}}"#,
        gpu_job("g1", 16, 0, 25),
        gpu_job("g2", 16, 1, 12),
        gpu_job("g3", 1, 2, 5),
    );
    let sc = gresim_io::parse_scenario(Path::new("gpu_timeslice.json"), &text).expect("loads");
    let o = Simulation::new(&sc).run().expect("runs");
    let j = &o.output.jobs;
    let run = |i: usize| (j[i].runs[0].start, j[i].runs[0].end);
    // As two_jobs_on_the_same_cores_take_turns_and_their_ends_move.
    assert_eq!(run(0), (0, Some(35)));
    assert_eq!(run(1), (1, Some(37)));
    let (a, b) = (&j[0].runs[0].alloc.nodes[0], &j[1].runs[0].alloc.nodes[0]);
    assert_eq!(a.cores, b.cores, "the same cores");
    assert_eq!(a.gpus & b.gpus, 0, "GPUs are never shared");
    // g3 needs 2 free GPUs: none until g1 ends, though a third row has room.
    assert_eq!(run(2).0, 35, "{:?}", run(2));
}

/// `OverSubscribe=EXCLUSIVE`: every job of the partition takes whole nodes,
/// as with `--exclusive` (`_resolve_shared_status()` sets `whole_node`):
/// t1 (4 cores) gets all 16 and the node, so t2 (4 cores) waits for it.
#[test]
fn an_exclusive_partition_gives_each_job_whole_nodes() {
    let jobs = [job("t1", 4, 0, 20), job("t2", 4, 1, 5)];
    let sc = scenario("EXCLUSIVE", "", &jobs);
    assert_eq!(runs(&sc), vec![(0, Some(20)), (20, Some(25))]);
    assert_eq!(cores(&sc)[0].len(), 16, "the whole node");
    // The same jobs share the node under NO.
    assert_eq!(
        runs(&scenario("NO", "", &jobs)),
        vec![(0, Some(20)), (1, Some(6))]
    );
}
