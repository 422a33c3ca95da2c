//! `OverSubscribe=YES:N` and cons_common's node states through the library
//! entry point (docs/preemption.md, "OverSubscribe=YES and node states"):
//! under `YES:N` only a job that asks with `--oversubscribe` goes on to the
//! partition's rows, and `_verify_node_state()` keeps such a job (or any job
//! of a `FORCE` partition) off a node running a job that may not share, and
//! a job of a partition without rows off a node where a partition with rows
//! has jobs. The held-out conformance case `oversubscribe_yes_heldout` and
//! the case `oversubscribe_mixed` recorded the same on real Slurm.

use std::path::Path;

use gresim::{Scenario, Simulation};

/// `nodes` nodes with 8 cores (2 sockets), the given partitions (JSON
/// objects), no gang scheduling.
fn scenario(nodes: u32, partitions: &[&str], jobs: &[String]) -> Scenario {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "n[1-{nodes}]", "sockets": 2, "cores_per_socket": 4, "memory": "64G"}}]}},
            "partitions": [{}],
            "scheduler": {{"sched_interval": 1, "bf_interval": 1, "def_mem_per_cpu": "1G"}},
            "workload": {{"jobs": [{}]}}}}"#,
        partitions.join(","),
        jobs.join(",")
    );
    gresim_io::parse_scenario(Path::new("oversubscribe.json"), &text).expect("loads")
}

/// A job of `cpus` cores in `part` submitted at `submit` that runs `run`
/// seconds, with `--oversubscribe` when `share`.
fn job(id: &str, part: &str, cpus: u32, submit: u64, run: u64, share: bool) -> String {
    format!(
        r#"{{"id": "{id}", "partition": "{part}", "submit": {submit}, "run_time": {run}, "time": 10, "cpus_per_task": {cpus}, "oversubscribe": {share}}}"#
    )
}

/// Each job's start, end and node names.
fn runs(sc: &Scenario) -> Vec<(u64, Option<u64>, String)> {
    let o = Simulation::new(sc).run().expect("runs");
    let c = &o.output.cluster;
    o.output
        .jobs
        .iter()
        .map(|j| {
            let r = &j.runs[0];
            let nodes: Vec<&str> = r
                .alloc
                .nodes
                .iter()
                .map(|na| c.node(na.node).name.as_str())
                .collect();
            (r.start, r.end, nodes.join(","))
        })
        .collect()
}

const YES2: &str = r#"{"name": "p", "nodes": "ALL", "default": true, "oversubscribe": "YES:2"}"#;

#[test]
fn under_yes_only_jobs_that_ask_share_cores() {
    // Both ask: b starts at once in the second row, on a's cores.
    let both = [job("a", "p", 8, 0, 20, true), job("b", "p", 8, 1, 5, true)];
    let r = runs(&scenario(1, &[YES2], &both));
    assert_eq!((r[1].0, r[1].1), (1, Some(6)), "{r:?}");
    // b does not ask: it needs idle cores (test 1 only, no gang) and waits.
    let plain = [job("a", "p", 8, 0, 20, true), job("b", "p", 8, 1, 5, false)];
    let r = runs(&scenario(1, &[YES2], &plain));
    assert_eq!(r[1].0, 20, "{r:?}");
    // b asks but a did not: a is NODE_CR_ONE_ROW, which keeps b off the node.
    let first = [job("a", "p", 8, 0, 20, false), job("b", "p", 8, 1, 5, true)];
    let r = runs(&scenario(1, &[YES2], &first));
    assert_eq!(r[1].0, 20, "{r:?}");
    // Under NO nothing shares, whatever the jobs ask.
    let no = r#"{"name": "p", "nodes": "ALL", "default": true}"#;
    let r = runs(&scenario(1, &[no], &both));
    assert_eq!(r[1].0, 20, "{r:?}");
}

#[test]
fn a_job_that_shares_keeps_off_nodes_of_jobs_that_do_not() {
    // The held-out case's workload: e (asks) may not use n2's two idle
    // cores, where b and d (do not ask) run, and waits for c's row on n1;
    // f (does not ask) uses n1's idle cores beside e when a ends.
    let jobs = [
        job("a", "p", 8, 0, 30, true),
        job("b", "p", 4, 1, 40, false),
        job("c", "p", 8, 2, 20, true),
        job("d", "p", 2, 3, 10, false),
        job("e", "p", 2, 4, 15, true),
        job("f", "p", 6, 5, 10, false),
    ];
    let r = runs(&scenario(2, &[YES2], &jobs));
    let want: Vec<(u64, Option<u64>, String)> = [
        (0, 30, "n1"),
        (1, 41, "n2"),
        (2, 22, "n1"),
        (3, 13, "n2"),
        (22, 37, "n1"),
        (30, 40, "n1"),
    ]
    .into_iter()
    .map(|(s, e, n)| (s, Some(e), n.to_string()))
    .collect();
    assert_eq!(r, want);
}

#[test]
fn a_force_partition_and_one_without_rows_keep_off_each_others_nodes() {
    // oversubscribe_mixed's workload: b (shr) goes to n2 though n1 has six
    // idle cores, because a (ex) runs there; f (ex, 6 cores) may not use
    // n2, where shr's jobs hold cores, and waits until a ends on n1.
    let parts = [
        r#"{"name": "ex", "nodes": "ALL", "default": true}"#,
        r#"{"name": "shr", "nodes": "ALL", "oversubscribe": "FORCE:2"}"#,
    ];
    let jobs = [
        job("a", "ex", 2, 0, 20, false),
        job("b", "shr", 2, 1, 30, false),
        job("c", "ex", 2, 2, 20, false),
        job("d", "shr", 8, 3, 10, false),
        job("e", "ex", 1, 4, 10, false),
        job("f", "ex", 6, 5, 5, false),
    ];
    let r = runs(&scenario(2, &parts, &jobs));
    let nodes: Vec<&str> = r.iter().map(|x| x.2.as_str()).collect();
    assert_eq!(nodes, vec!["n1", "n2", "n1", "n2", "n1", "n1"], "{r:?}");
    assert_eq!(r[3].0, 3, "d starts at once in b's second row: {r:?}");
    assert_eq!(r[5].0, 20, "f waits for a's end: {r:?}");
}
