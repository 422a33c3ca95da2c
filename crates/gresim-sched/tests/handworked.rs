//! Hand-worked scenarios: small clusters and workloads whose outcome was
//! computed by hand from Slurm's rules, asserted exactly (state, start, end,
//! nodes, GPU indices and, where it matters, job ids and pending reasons).
//!
//! Conventions used in every hand computation below:
//! - All times are integer seconds. Unless a test says otherwise the
//!   scheduler runs with `sched_interval: 1` (a main pass in the same second
//!   as any change) and `timelimit_check_interval: 0` (kill exactly at the
//!   limit).
//! - Jobs start in the second of a submission (pass_on_submit), of a job
//!   end (pass_on_end) or on a periodic tick. The scenarios avoid depending
//!   on the order of events within one second beyond that: jobs made
//!   eligible by an admin action, a begin time or a requeue find their
//!   resources busy and start at a later job end. (The in-second order
//!   changed from "ends, admin, submit, begin, main pass" to "main pass,
//!   admin, submit, begin, backfill, ends" while these were written; every
//!   non-ignored test holds under both.)
//! - Basic priority: earlier submissions have higher priority, so the queue
//!   is submission order.
//! - Node order is natural name order; GPUs are taken lowest free GRES index
//!   first; a single-node job takes the fitting node with the fewest free
//!   CPUs (lowest index on ties) among the lowest-weight nodes that fit.
//! - `def_mem_per_cpu` is set (1 CPU jobs take 1 GiB) wherever memory is not
//!   the point, so jobs do not take whole nodes' memory.

use gresim_sched::PolicyKind;
use gresim_test_support::run_text;

use gresim_engine::SimOutput;
use gresim_model::job::{Job, JobState, Reason};
use gresim_model::state::{gpu_indices, Allocation};

/// One job as `(key, state, start, end, "node:gpu,gpu node:gpu")`, from its last run.
type Row = (String, &'static str, Option<u64>, Option<u64>, String);

fn run_scenario(name: &str, text: &str) -> SimOutput {
    run_text(&format!("handworked/{name}.json"), text, PolicyKind::Fifo)
}

/// The scenario key of a job; array tasks are `key_task`.
fn key_of(out: &SimOutput, j: &Job) -> String {
    let k = &out.specs[j.sub as usize].key;
    match j.task {
        Some(t) => format!("{k}_{t}"),
        None => k.clone(),
    }
}

/// `gpu01:0,1 gpu02:4` (a node without GPUs is just its name).
fn alloc_str(out: &SimOutput, a: &Allocation) -> String {
    a.nodes
        .iter()
        .map(|na| {
            let name = &out.cluster.node(na.node).name;
            let gpus: Vec<String> = gpu_indices(na.gpus).map(|g| g.to_string()).collect();
            if gpus.is_empty() {
                name.clone()
            } else {
                format!("{name}:{}", gpus.join(","))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn summary(out: &SimOutput) -> Vec<Row> {
    out.jobs
        .iter()
        .map(|j| {
            let run = j.runs.last();
            (
                key_of(out, j),
                j.state.as_str(),
                run.map(|r| r.start),
                run.and_then(|r| r.end),
                run.map_or_else(String::new, |r| alloc_str(out, &r.alloc)),
            )
        })
        .collect()
}

/// A job that ran (its last run).
fn ran(key: &str, state: &'static str, start: u64, end: u64, alloc: &str) -> Row {
    (
        key.to_string(),
        state,
        Some(start),
        Some(end),
        alloc.to_string(),
    )
}

/// A job that never ran (PENDING at the end, or REJECTED).
fn never_ran(key: &str, state: &'static str) -> Row {
    (key.to_string(), state, None, None, String::new())
}

fn job<'a>(out: &'a SimOutput, key: &str) -> &'a Job {
    out.jobs
        .iter()
        .find(|j| key_of(out, j) == key)
        .unwrap_or_else(|| panic!("no job {key}"))
}

/// Every run of a job: (state, start, end, allocation).
fn runs(out: &SimOutput, key: &str) -> Vec<(&'static str, u64, Option<u64>, String)> {
    job(out, key)
        .runs
        .iter()
        .map(|r| (r.state.as_str(), r.start, r.end, alloc_str(out, &r.alloc)))
        .collect()
}

/// Slurm job ids by key.
fn job_ids(out: &SimOutput) -> Vec<(String, Option<u32>)> {
    out.jobs
        .iter()
        .map(|j| (key_of(out, j), j.job_id.map(|i| i.0)))
        .collect()
}

/// A job's pending-reason history: (time, reason).
fn reasons(out: &SimOutput, key: &str) -> Vec<(u64, &'static str)> {
    let idx = out
        .jobs
        .iter()
        .position(|j| key_of(out, j) == key)
        .unwrap_or_else(|| panic!("no job {key}"));
    out.reasons.as_ref().expect("reasons are recorded")[idx]
        .iter()
        .map(|c| (c.t, c.reason.as_str()))
        .collect()
}

// ---------------------------------------------------------------------------

#[test]
fn single_node_packing_takes_lowest_free_gpu_indices() {
    // One node with 8 A100s (GRES indices 0-7). Every job is 1 task × 1 CPU.
    let out = run_scenario(
        "packing",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "sockets": 2, "cores_per_socket": 8, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 8}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "a", "submit": 0,   "gres": "gpu:2", "run_time": 100},
            {"id": "b", "submit": 0,   "gres": "gpu:3", "run_time": 50},
            {"id": "c", "submit": 0,   "gres": "gpu:1", "run_time": 200},
            {"id": "d", "submit": 60,  "gres": "gpu:4", "run_time": 100},
            {"id": "e", "submit": 60,  "gres": "gpu:1", "run_time": 10},
            {"id": "f", "submit": 100, "gres": "gpu:3", "run_time": 10}
          ]}
        }"#,
    );
    // t=0: a takes the lowest two (0,1), b the next three (2,3,4), c 5.
    // t=50: b ends, freeing 2,3,4; free is now {2,3,4,6,7}.
    // t=60: d takes the four lowest free: 2,3,4,6 (skipping 5, held by c);
    //       e takes the last one, 7, and ends at 70.
    // t=100: a ends (job ends come before submissions in the same second),
    //        so f sees {0,1,7} free and takes exactly those.
    assert_eq!(
        summary(&out),
        vec![
            ran("a", "COMPLETED", 0, 100, "gpu01:0,1"),
            ran("b", "COMPLETED", 0, 50, "gpu01:2,3,4"),
            ran("c", "COMPLETED", 0, 200, "gpu01:5"),
            ran("d", "COMPLETED", 60, 160, "gpu01:2,3,4,6"),
            ran("e", "COMPLETED", 60, 70, "gpu01:7"),
            ran("f", "COMPLETED", 100, 110, "gpu01:0,1,7"),
        ]
    );
    // Plain jobs are numbered in submission order from 1.
    let ids: Vec<Option<u32>> = job_ids(&out).into_iter().map(|(_, i)| i).collect();
    assert_eq!(ids, (1..=6).map(Some).collect::<Vec<_>>());
}

#[test]
fn typed_requests_on_a_mixed_a100_h100_cluster() {
    // a01 has 4 A100s (type a100), h01 4 H100s (type h100); both 16 cores.
    let out = run_scenario(
        "typed",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "a01", "sockets": 2, "cores_per_socket": 8, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]},
            {"names": "h01", "sockets": 2, "cores_per_socket": 8, "memory": "256G",
             "gpus": [{"model": "H100-SXM5-80GB", "count": 4}]}
          ]},
          "partitions": [
            {"name": "all", "nodes": "ALL", "default": true},
            {"name": "aonly", "nodes": "a01"}
          ],
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "j1", "submit": 0, "gres": "gpu:h100:2", "run_time": 100},
            {"id": "j2", "submit": 0, "gres": "gpu:a100:3", "run_time": 100},
            {"id": "j3", "submit": 0, "gres": "gpu:2",      "run_time": 50},
            {"id": "j4", "submit": 0, "gpus": "a100:1",     "run_time": 100},
            {"id": "j5", "submit": 0, "gres": "gpu:h100:1", "run_time": 10},
            {"id": "j6", "submit": 0, "partition": "aonly", "gres": "gpu:h100:1", "run_time": 10}
          ]}
        }"#,
    );
    // j1 (h100 x2): a01 has no h100, so h01:0,1.
    // j2 (a100 x3): only a01 has a100s: a01:0,1,2.
    // j3 (any x2): both nodes have 15 free CPUs, so best fit ties and a01
    //    (lower index) is tried first, but it has one free GPU; h01:2,3.
    // j4 (--gpus=a100:1, one node): a01:3, the last a100.
    // j5 (h100 x1): h01 is full -> Resources; at 50 j3 frees h01:2,3 and j5
    //    takes the lower, 2.
    // j6: h100 in partition aonly, whose only node a01 has no h100: no node
    //    of the partition could ever run it -> REJECTED at submit.
    assert_eq!(
        summary(&out),
        vec![
            ran("j1", "COMPLETED", 0, 100, "h01:0,1"),
            ran("j2", "COMPLETED", 0, 100, "a01:0,1,2"),
            ran("j3", "COMPLETED", 0, 50, "h01:2,3"),
            ran("j4", "COMPLETED", 0, 100, "a01:3"),
            ran("j5", "COMPLETED", 50, 60, "h01:2"),
            never_ran("j6", "REJECTED"),
        ]
    );
    assert_eq!(
        job(&out, "j6").rejected(),
        Some("Requested node configuration is not available")
    );
    assert_eq!(reasons(&out, "j5"), vec![(0, "None"), (0, "Resources")]);
}

#[test]
fn mig_slices_are_typed_gres_and_untyped_takes_any() {
    // mig01: GPU 0 split as 3g.40gb + 2g.20gb + 1g.10gb + 1g.10gb, then a
    // whole A100. GRES indices follow the layout order:
    //   0 a100_3g.40gb, 1 a100_2g.20gb, 2 a100_1g.10gb, 3 a100_1g.10gb, 4 a100.
    let out = run_scenario(
        "mig",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "mig01", "sockets": 2, "cores_per_socket": 8, "memory": "256G",
             "gpus": [
               {"model": "A100-SXM4-80GB", "count": 1, "mig": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]},
               {"model": "A100-SXM4-80GB", "count": 1}
             ]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "m1", "submit": 0, "gres": "gpu:a100_1g.10gb:1", "run_time": 40},
            {"id": "m2", "submit": 0, "gres": "gpu:a100:1",         "run_time": 100},
            {"id": "m3", "submit": 0, "gres": "gpu:1",              "run_time": 100},
            {"id": "m4", "submit": 0, "gres": "gpu:a100_1g.10gb:1", "run_time": 100},
            {"id": "m5", "submit": 0, "gres": "gpu:a100_2g.20gb:1", "run_time": 100},
            {"id": "m6", "submit": 0, "gres": "gpu:a100_1g.10gb:1", "run_time": 10}
          ]}
        }"#,
    );
    // m1: the lowest a100_1g.10gb is index 2.
    // m2: type a100 means the whole GPU only (a MIG slice is another type): 4.
    // m3: untyped takes the lowest free index of any type: 0, the 3g slice.
    // m4: the other 1g slice, 3.   m5: the 2g slice, 1.
    // m6: no 1g slice is free -> Resources; m1 ends at 40 and m6 gets 2.
    assert_eq!(
        summary(&out),
        vec![
            ran("m1", "COMPLETED", 0, 40, "mig01:2"),
            ran("m2", "COMPLETED", 0, 100, "mig01:4"),
            ran("m3", "COMPLETED", 0, 100, "mig01:0"),
            ran("m4", "COMPLETED", 0, 100, "mig01:3"),
            ran("m5", "COMPLETED", 0, 100, "mig01:1"),
            ran("m6", "COMPLETED", 40, 50, "mig01:2"),
        ]
    );
    // The node exposes 5 GRES devices (4 slices + 1 whole GPU).
    assert_eq!(out.cluster.nodes[0].gpus.len(), 5);
}

#[test]
fn multi_node_2x8_gang_allocation_and_blocking() {
    // Three 8-H100 nodes with 32 cores each.
    let out = run_scenario(
        "ddp",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-03]", "sockets": 2, "cores_per_socket": 16, "memory": "512G",
             "gpus": [{"model": "H100-SXM5-80GB", "count": 4, "socket": 0},
                      {"model": "H100-SXM5-80GB", "count": 4, "socket": 1}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "small",  "submit": 0,  "gres": "gpu:1", "run_time": 300},
            {"id": "ddp",    "submit": 0,  "nodes": 2, "gres": "gpu:8", "ntasks_per_node": 8, "cpus_per_task": 4, "run_time": 100},
            {"id": "ddp2",   "submit": 10, "nodes": 2, "gres": "gpu:8", "run_time": 100},
            {"id": "small2", "submit": 20, "gres": "gpu:1", "run_time": 50}
          ]}
        }"#,
    );
    // small: all nodes tie on free CPUs -> gpu01:0.
    // ddp: needs 8 GPUs on each of 2 nodes; gpu01 has 7 free, so the first
    //      two fitting nodes in order are gpu02 and gpu03, all GPUs 0-7 (and
    //      all 32 cores: 8 tasks x 4 CPUs per node).
    // ddp2 (t=10): gpu01 alone fits -> Resources; it blocks the partition.
    // small2 (t=20): would fit on gpu01 but waits behind ddp2 (Priority).
    // t=100: ddp ends; ddp2 takes gpu02+gpu03 again; small2 goes to gpu01
    //      (best fit: 31 free CPUs, the others have none). cons_tres picks
    //      cores first, from the socket with the most free cores: socket 1
    //      (16 free; small holds a core of socket 0), and then a GPU on that
    //      socket: the lowest there is index 4.
    assert_eq!(
        summary(&out),
        vec![
            ran("small", "COMPLETED", 0, 300, "gpu01:0"),
            ran(
                "ddp",
                "COMPLETED",
                0,
                100,
                "gpu02:0,1,2,3,4,5,6,7 gpu03:0,1,2,3,4,5,6,7"
            ),
            ran(
                "ddp2",
                "COMPLETED",
                100,
                200,
                "gpu02:0,1,2,3,4,5,6,7 gpu03:0,1,2,3,4,5,6,7"
            ),
            ran("small2", "COMPLETED", 100, 150, "gpu01:4"),
        ]
    );
    let ddp = job(&out, "ddp").runs[0].alloc.clone();
    assert_eq!(
        ddp.nodes
            .iter()
            .map(|n| (n.cpus, n.tasks))
            .collect::<Vec<_>>(),
        vec![(32, 8), (32, 8)]
    );
    assert_eq!(reasons(&out, "ddp2"), vec![(10, "None"), (10, "Resources")]);
    assert_eq!(
        reasons(&out, "small2"),
        vec![(20, "None"), (20, "Priority")]
    );
}

#[test]
fn gpus_per_job_spreads_over_nodes_in_order() {
    // Three 8-A100 nodes.
    let out = run_scenario(
        "spread",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-03]", "sockets": 2, "cores_per_socket": 16, "memory": "512G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 8}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "pre",    "submit": 0, "gres": "gpu:2", "run_time": 500},
            {"id": "spread", "submit": 0, "gpus": 12, "run_time": 100},
            {"id": "pair",   "submit": 0, "nodes": 2, "gpus": 4, "run_time": 100}
          ]}
        }"#,
    );
    // pre: gpu01:0,1.
    // spread (--gpus=12, no -N: 1 to 12 nodes): for a GPU job cons_tres
    //   lowers the weight of nodes with more usable GPUs (0xff - near GPUs,
    //   capped at 12): gpu02 and gpu03 (8 each) weigh less than gpu01 (6), so
    //   they form the preferred node set, sufficient with 16 GPUs. GPUs are
    //   then taken node by node: all 8 of gpu02, then 4 of gpu03 (0-3).
    // pair (-N2 --gpus=4): gpu02 is full; gpu01 (6 free) and gpu03 (4 free)
    //   both count 4 near GPUs (capped at 4), so they weigh the same. Per node
    //   it takes up to (remaining - nodes still needed after it): gpu01 gives
    //   min(6, 4 - 1) = 3 (2,3,4), gpu03 the last one, its lowest free: 4.
    assert_eq!(
        summary(&out),
        vec![
            ran("pre", "COMPLETED", 0, 500, "gpu01:0,1"),
            ran(
                "spread",
                "COMPLETED",
                0,
                100,
                "gpu02:0,1,2,3,4,5,6,7 gpu03:0,1,2,3"
            ),
            ran("pair", "COMPLETED", 0, 100, "gpu01:2,3,4 gpu03:4"),
        ]
    );
}

#[test]
fn strict_fifo_blocks_its_partition_only() {
    // Partition a = gpu01, partition b = gpu02; 4 A100s each.
    let out = run_scenario(
        "fifo_block",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "sockets": 1, "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}
          ]},
          "partitions": [
            {"name": "a", "nodes": "gpu01", "default": true},
            {"name": "b", "nodes": "gpu02"}
          ],
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "big1",  "submit": 0, "gres": "gpu:3", "run_time": 100},
            {"id": "big2",  "submit": 0, "gres": "gpu:2", "run_time": 100},
            {"id": "small", "submit": 0, "gres": "gpu:1", "run_time": 30},
            {"id": "other", "submit": 0, "partition": "b", "gres": "gpu:1", "run_time": 30}
          ]}
        }"#,
    );
    // big1 takes gpu01:0,1,2. big2 needs 2 and only 3 is free -> Resources,
    // and partition a is blocked: small (1 GPU) would fit on gpu01:3 but
    // waits with reason Priority. other is in partition b on gpu02 and starts.
    // t=30: other ends; the pass changes nothing in partition a.
    // t=100: big1 ends; big2 takes 0,1 and small takes 2.
    assert_eq!(
        summary(&out),
        vec![
            ran("big1", "COMPLETED", 0, 100, "gpu01:0,1,2"),
            ran("big2", "COMPLETED", 100, 200, "gpu01:0,1"),
            ran("small", "COMPLETED", 100, 130, "gpu01:2"),
            ran("other", "COMPLETED", 0, 30, "gpu02:0"),
        ]
    );
    assert_eq!(reasons(&out, "big2"), vec![(0, "None"), (0, "Resources")]);
    assert_eq!(reasons(&out, "small"), vec![(0, "None"), (0, "Priority")]);
    assert_eq!(reasons(&out, "other"), vec![(0, "None")]);
}

#[test]
fn node_weight_first_then_best_fit() {
    // gpu01 has Weight=10, gpu02 and gpu03 the default 1. 8 cores, 4 L40S each.
    let out = run_scenario(
        "weight",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "weight": 10, "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 4}]},
            {"names": "gpu[02-03]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 4}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "a", "submit": 0, "gres": "gpu:1", "cpus_per_task": 4, "run_time": 100},
            {"id": "b", "submit": 0, "gres": "gpu:1", "run_time": 100},
            {"id": "c", "submit": 0, "gres": "gpu:1", "cpus_per_task": 4, "run_time": 100},
            {"id": "d", "submit": 0, "gres": "gpu:4", "run_time": 100},
            {"id": "e", "submit": 0, "gres": "gpu:1", "run_time": 100}
          ]}
        }"#,
    );
    // a: weight-1 nodes gpu02/gpu03 tie at 8 free CPUs -> gpu02:0 (4 CPUs left).
    // b: best fit among weight 1: gpu02 (4 free) beats gpu03 (8) -> gpu02:1.
    // c: 4 CPUs; gpu02 has only 3 left, so gpu03:0.
    // d: 4 GPUs; gpu02 has 2 free, gpu03 3; only gpu01 (weight 10) fits: 0-3.
    // e: gpu02 (3 free CPUs) beats gpu03 (4 free); gpu01 has no GPU left -> gpu02:2.
    assert_eq!(
        summary(&out),
        vec![
            ran("a", "COMPLETED", 0, 100, "gpu02:0"),
            ran("b", "COMPLETED", 0, 100, "gpu02:1"),
            ran("c", "COMPLETED", 0, 100, "gpu03:0"),
            ran("d", "COMPLETED", 0, 100, "gpu01:0,1,2,3"),
            ran("e", "COMPLETED", 0, 100, "gpu02:2"),
        ]
    );
}

#[test]
fn memory_limits_packing_and_default_takes_whole_node() {
    // One node, 100G, 4 GPUs, 16 cores; no DefMemPerCPU.
    let out = run_scenario(
        "memory",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "100G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0},
          "workload": {"jobs": [
            {"id": "j1", "submit": 0,   "gres": "gpu:1", "mem": "40G", "run_time": 100},
            {"id": "j2", "submit": 0,   "gres": "gpu:1", "mem": "40G", "run_time": 150},
            {"id": "j3", "submit": 0,   "gres": "gpu:1", "mem": "40G", "run_time": 50},
            {"id": "j4", "submit": 0,   "gres": "gpu:1", "run_time": 30},
            {"id": "j5", "submit": 200, "gres": "gpu:2", "mem_per_gpu": "30G", "run_time": 10},
            {"id": "j6", "submit": 200, "gres": "gpu:1", "mem_per_cpu": "50G", "run_time": 10}
          ]}
        }"#,
    );
    // j1, j2: 40G each -> GPUs 0, 1; 20G left.
    // j3: 40G > 20G -> Resources although 2 GPUs are free; j4 waits (Priority).
    // t=100: j1 ends (60G free): j3 takes GPU 0. j4 has no memory option and
    //   no DefMemPerCPU, so it needs the whole node's memory -> waits.
    // t=150: j2 and j3 end together; the node is empty; j4 gets GPU 0.
    // t=200: j5 --mem-per-gpu=30G x 2 GPUs = 60G -> GPUs 0,1.
    //   j6 --mem-per-cpu=50G x 1 CPU = 50G > 40G free -> waits until j5 ends
    //   at 210, then takes GPU 0.
    assert_eq!(
        summary(&out),
        vec![
            ran("j1", "COMPLETED", 0, 100, "gpu01:0"),
            ran("j2", "COMPLETED", 0, 150, "gpu01:1"),
            ran("j3", "COMPLETED", 100, 150, "gpu01:0"),
            ran("j4", "COMPLETED", 150, 180, "gpu01:0"),
            ran("j5", "COMPLETED", 200, 210, "gpu01:0,1"),
            ran("j6", "COMPLETED", 210, 220, "gpu01:0"),
        ]
    );
    let mem = |k: &str| job(&out, k).runs[0].alloc.nodes[0].mem_mib;
    assert_eq!(
        [mem("j1"), mem("j4"), mem("j5"), mem("j6")],
        [40 * 1024, 100 * 1024, 60 * 1024, 50 * 1024]
    );
}

#[test]
fn time_limit_kills_on_the_30_second_tick() {
    // timelimit_check_interval is left at its default, 30 s: a job over its
    // limit is killed at the first multiple of 30 at or after start + limit.
    // Partition DefaultTime is 2 minutes.
    let out = run_scenario(
        "timelimit",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 8}]}
          ]},
          "partitions": [{"name": "gpu", "default": true, "default_time": 2}],
          "scheduler": {"sched_interval": 1, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "t1", "submit": 5,  "gres": "gpu:1", "time": 1},
            {"id": "t3", "submit": 5,  "gres": "gpu:1", "time": 2, "run_time": 100},
            {"id": "t4", "submit": 5,  "gres": "gpu:1"},
            {"id": "t2", "submit": 31, "gres": "gpu:1", "time": "0:45", "run_time": 100}
          ]}
        }"#,
    );
    // t1: --time=1 (60 s), no run_time (runs to its limit). Starts at 5, limit
    //     reached at 65, killed at the next tick 90: TIMEOUT [5, 90].
    // t3: --time=2 (120 s) and runs 100 s: ends on its own at 105, COMPLETED.
    // t4: no --time, so DefaultTime 2 min = 120 s: 5 + 120 = 125 -> tick 150.
    // t2: --time=0:45 is M:S; sbatch rounds seconds up to whole minutes, so the
    //     limit is 60 s. Starts at 31, limit at 91, tick 120. Its own end
    //     (131) is later, so it is killed: TIMEOUT [31, 120].
    assert_eq!(
        summary(&out),
        vec![
            ran("t1", "TIMEOUT", 5, 90, "gpu01:0"),
            ran("t3", "COMPLETED", 5, 105, "gpu01:1"),
            ran("t4", "TIMEOUT", 5, 150, "gpu01:2"),
            ran("t2", "TIMEOUT", 31, 120, "gpu01:3"),
        ]
    );
    assert_eq!(job(&out, "t1").reason, Reason::TimeLimit);
}

#[test]
fn time_limit_is_exact_when_the_check_interval_is_zero() {
    let out = run_scenario(
        "timelimit_exact",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "over",  "submit": 5, "gres": "gpu:1", "time": 1, "run_time": 70},
            {"id": "under", "submit": 5, "gres": "gpu:1", "time": "1:30", "run_time": 100},
            {"id": "fail",  "submit": 5, "gres": "gpu:1", "time": 5, "run_time": 20, "exit_code": 3}
          ]}
        }"#,
    );
    // over: limit 60 s, wants 70: killed exactly at 5 + 60 = 65, TIMEOUT.
    // under: --time=1:30 (M:S, 90 s) rounds up to 2 min = 120 s >= 100: ends
    //        on its own at 105.
    // fail: ends at 25 with a nonzero exit code: FAILED.
    assert_eq!(
        summary(&out),
        vec![
            ran("over", "TIMEOUT", 5, 65, "gpu01:0"),
            ran("under", "COMPLETED", 5, 105, "gpu01:1"),
            ran("fail", "FAILED", 5, 25, "gpu01:2"),
        ]
    );
    assert_eq!(job(&out, "fail").reason, Reason::NonZeroExitCode);
}

#[test]
fn sixty_second_cadence_without_event_triggered_passes() {
    // sched_interval 60, and neither a submission nor a job end triggers a
    // pass: jobs start only on the ticks 0, 60, 120, ... after a change.
    let out = run_scenario(
        "cadence",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 60, "pass_on_submit": false, "pass_on_end": false,
                        "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "a", "submit": 10,  "gres": "gpu:2", "run_time": 30},
            {"id": "b", "submit": 20,  "gres": "gpu:1", "run_time": 100},
            {"id": "c", "submit": 130, "gres": "gpu:1", "run_time": 10},
            {"id": "d", "submit": 200, "gres": "gpu:2", "run_time": 10}
          ]}
        }"#,
    );
    // a (t=10) and b (t=20) wait for the tick at 60: a takes both GPUs, b is
    //   left with Resources. a ends at 90; the next tick is 120: b gets GPU 0.
    // c (t=130) waits for the tick at 180: GPU 1 (b still holds 0).
    // d (t=200): tick 240; b ended at 220, so both GPUs are free.
    assert_eq!(
        summary(&out),
        vec![
            ran("a", "COMPLETED", 60, 90, "gpu01:0,1"),
            ran("b", "COMPLETED", 120, 220, "gpu01:0"),
            ran("c", "COMPLETED", 180, 190, "gpu01:1"),
            ran("d", "COMPLETED", 240, 250, "gpu01:0,1"),
        ]
    );
    // b waited from its submission until the tick at 60 found no GPU for it
    // (whether it was told Priority at submit, behind the unstarted a, is
    // not the point here).
    let b = reasons(&out, "b");
    assert_eq!(
        (b.first().copied(), b.last().copied()),
        (Some((20, "None")), Some((60, "Resources")))
    );
}

#[test]
fn array_task_ids_and_throttle() {
    // One node with 4 GPUs. A 2-GPU blocker, a 4-task array throttled to 2
    // running tasks, and a plain job, submitted one second apart so each
    // submission's pass is over before the next one arrives.
    let out = run_scenario(
        "array",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "blocker", "submit": 0, "gres": "gpu:2", "run_time": 60},
            {"id": "arr", "submit": 1, "array": "0-3%2", "gres": "gpu:1", "run_time": 100,
             "task_run_times": {"1": 50}},
            {"id": "solo", "submit": 2, "gres": "gpu:1", "run_time": 500}
          ]}
        }"#,
    );
    // t=0: blocker, id 1, gets GPUs 0,1 until 60.
    // t=1: the array gets id 2. arr_0 -> GPU 2 and arr_1 -> GPU 3; each
    //   starts while other tasks are unstarted, so they take fresh ids 3 and
    //   4. Two tasks now run, so arr_2 and arr_3 wait with JobArrayTaskLimit,
    //   which does not block the partition.
    // t=2: solo gets id 5; no GPU is free -> Resources.
    // t=51: arr_1 ends (task_run_times: 50 s). arr_2 takes GPU 3 and id 6;
    //   two tasks run again, so arr_3 keeps waiting.
    // t=60: blocker ends; arr_3 is throttled, so solo starts on GPU 0.
    // t=101: arr_0 ends; arr_3 takes GPU 1 (lowest free of {1, 2}) and, as
    //   the last task to start, keeps the array's id 2.
    assert_eq!(
        summary(&out),
        vec![
            ran("blocker", "COMPLETED", 0, 60, "gpu01:0,1"),
            ran("arr_0", "COMPLETED", 1, 101, "gpu01:2"),
            ran("arr_1", "COMPLETED", 1, 51, "gpu01:3"),
            ran("arr_2", "COMPLETED", 51, 151, "gpu01:3"),
            ran("arr_3", "COMPLETED", 101, 201, "gpu01:1"),
            ran("solo", "COMPLETED", 60, 560, "gpu01:0"),
        ]
    );
    assert_eq!(
        job_ids(&out),
        vec![
            ("blocker".to_string(), Some(1)),
            ("arr_0".to_string(), Some(3)),
            ("arr_1".to_string(), Some(4)),
            ("arr_2".to_string(), Some(6)),
            ("arr_3".to_string(), Some(2)),
            ("solo".to_string(), Some(5)),
        ]
    );
    assert_eq!(job(&out, "arr_0").display_id(), "2_0");
    // arr_3 is held back by the throttle (JobArrayTaskLimit) from its first
    // passes until it starts; the intermediate reasons it is told are not
    // the point here.
    let r3 = reasons(&out, "arr_3");
    assert!(r3.contains(&(1, "JobArrayTaskLimit")) || r3.contains(&(2, "JobArrayTaskLimit")));
    assert_eq!(r3.last().map(|r| r.1), Some("JobArrayTaskLimit"));
}

/// The throttle must also hold within one pass: Slurm counts a task as
/// running as soon as it starts, so with `%2` only two tasks start even when
/// four GPUs are free.
#[test]
fn array_throttle_holds_within_one_pass() {
    let out = run_scenario(
        "array_throttle_one_pass",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "arr", "submit": 0, "array": "0-3%2", "gres": "gpu:1", "run_time": 100}
          ]}
        }"#,
    );
    // t=0: tasks 0 and 1 start (ids 2, 3); tasks 2 and 3 wait with
    // JobArrayTaskLimit. t=100: both end; tasks 2 (id 4) and 3 (the last,
    // id 1) start on GPUs 0 and 1.
    assert_eq!(
        summary(&out),
        vec![
            ran("arr_0", "COMPLETED", 0, 100, "gpu01:0"),
            ran("arr_1", "COMPLETED", 0, 100, "gpu01:1"),
            ran("arr_2", "COMPLETED", 100, 200, "gpu01:0"),
            ran("arr_3", "COMPLETED", 100, 200, "gpu01:1"),
        ]
    );
    let ids: Vec<Option<u32>> = job_ids(&out).into_iter().map(|(_, i)| i).collect();
    assert_eq!(ids, vec![Some(2), Some(3), Some(4), Some(1)]);
    assert_eq!(
        reasons(&out, "arr_2").last(),
        Some(&(0, "JobArrayTaskLimit"))
    );
}

#[test]
fn dependencies_afterok_afternotok_afterany_and_never_satisfied() {
    // One node with 8 GPUs: resources never get in the way here.
    let out = run_scenario(
        "deps",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 8}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "pre",   "submit": 0, "gres": "gpu:1", "run_time": 50},
            {"id": "bad",   "submit": 0, "gres": "gpu:1", "run_time": 20, "exit_code": 1},
            {"id": "ok",    "submit": 0, "gres": "gpu:1", "run_time": 10, "dependency": "afterok:pre"},
            {"id": "never", "submit": 0, "gres": "gpu:1", "run_time": 10, "dependency": "afterok:bad"},
            {"id": "notok", "submit": 0, "gres": "gpu:1", "run_time": 10, "dependency": "afternotok:bad"},
            {"id": "any",   "submit": 0, "gres": "gpu:1", "run_time": 10, "dependency": "afterany:bad"}
          ]}
        }"#,
    );
    // t=0: pre -> GPU 0, bad -> GPU 1; the four dependents wait (Dependency).
    // t=20: bad ends FAILED (exit 1). afterok:bad can never be met ->
    //   never stays PENDING, DependencyNeverSatisfied. afternotok and afterany
    //   are met: notok takes GPU 1 (just freed), any GPU 2.
    // t=50: pre COMPLETED -> ok is eligible and takes GPU 0.
    assert_eq!(
        summary(&out),
        vec![
            ran("pre", "COMPLETED", 0, 50, "gpu01:0"),
            ran("bad", "FAILED", 0, 20, "gpu01:1"),
            ran("ok", "COMPLETED", 50, 60, "gpu01:0"),
            never_ran("never", "PENDING"),
            ran("notok", "COMPLETED", 20, 30, "gpu01:1"),
            ran("any", "COMPLETED", 20, 30, "gpu01:2"),
        ]
    );
    assert_eq!(job(&out, "never").reason, Reason::DependencyNeverSatisfied);
    assert_eq!(
        reasons(&out, "never"),
        vec![
            (0, "None"),
            (0, "Dependency"),
            (20, "DependencyNeverSatisfied")
        ]
    );
    assert_eq!(
        reasons(&out, "ok"),
        vec![(0, "None"), (0, "Dependency"), (50, "None")]
    );
}

#[test]
fn singleton_and_begin_time() {
    // One node with 2 GPUs.
    let out = run_scenario(
        "singleton_begin",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "s1",   "submit": 0,  "name": "train", "dependency": "singleton", "gres": "gpu:1", "run_time": 40},
            {"id": "s2",   "submit": 0,  "name": "train", "dependency": "singleton", "gres": "gpu:1", "run_time": 10},
            {"id": "late", "submit": 0,  "begin": 30, "gres": "gpu:1", "run_time": 10},
            {"id": "f",    "submit": 20, "gres": "gpu:1", "run_time": 15}
          ]}
        }"#,
    );
    // s1: no other job named train by this user -> eligible, GPU 0.
    // s2: s1 (same user and name) came first and has not ended ->
    //   Dependency. GPU 1 stays free: s2 waits on s1, late on its begin time.
    // f (t=20): takes the idle GPU 1 until 35.
    // late: eligible at 30 (BeginTime until then), but both GPUs are busy;
    //   f ends at 35 and late takes GPU 1 until 45.
    // t=40: s1 ends, which releases s2 in the same second: GPU 0.
    assert_eq!(
        summary(&out),
        vec![
            ran("s1", "COMPLETED", 0, 40, "gpu01:0"),
            ran("s2", "COMPLETED", 40, 50, "gpu01:0"),
            ran("late", "COMPLETED", 35, 45, "gpu01:1"),
            ran("f", "COMPLETED", 20, 35, "gpu01:1"),
        ]
    );
    // Whether the pass that finds late's GPU busy runs in second 30 or 31 is
    // a matter of event order within a second: only the first entries count.
    assert_eq!(
        reasons(&out, "late")[..3],
        [(0, "None"), (0, "BeginTime"), (30, "None")]
    );
    assert_eq!(
        reasons(&out, "s2"),
        vec![(0, "None"), (0, "Dependency"), (40, "None")]
    );
}

#[test]
fn hold_and_release() {
    // One node with 2 GPUs.
    let out = run_scenario(
        "hold",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "h", "submit": 0,  "hold": true, "gres": "gpu:1", "run_time": 30},
            {"id": "w", "submit": 0,  "gres": "gpu:2", "run_time": 50},
            {"id": "x", "submit": 10, "gres": "gpu:1", "run_time": 200},
            {"id": "y", "submit": 10, "gres": "gpu:1", "run_time": 10},
            {"id": "z", "submit": 60, "gres": "gpu:1", "run_time": 60}
          ]},
          "events": [
            {"at": 20,  "action": "hold", "job": "y", "admin": true},
            {"at": 100, "action": "release", "job": "h"},
            {"at": 110, "action": "release", "job": "y"}
          ]
        }"#,
    );
    // h is submitted held (JobHeldUser) and is not queued.
    // w takes both GPUs until 50. x (t=10) -> Resources, y -> Priority.
    // t=20: an admin hold takes y out of the queue (JobHeldAdmin).
    // t=50: w ends; x takes GPU 0 until 250. h and y are held: GPU 1 idles.
    // t=60: z takes GPU 1 until 120.
    // t=100: h is released (a new priority, the lowest so far) and queued,
    //   but no GPU is free. t=110: y is released, queued behind h.
    // t=120: z ends; h, first in the queue, takes GPU 1 until 150; y then
    //   takes it from 150 to 160.
    assert_eq!(
        summary(&out),
        vec![
            ran("h", "COMPLETED", 120, 150, "gpu01:1"),
            ran("w", "COMPLETED", 0, 50, "gpu01:0,1"),
            ran("x", "COMPLETED", 50, 250, "gpu01:0"),
            ran("y", "COMPLETED", 150, 160, "gpu01:1"),
            ran("z", "COMPLETED", 60, 120, "gpu01:1"),
        ]
    );
    assert_eq!(
        reasons(&out, "h")[..3],
        [(0, "None"), (0, "JobHeldUser"), (100, "None")]
    );
    assert_eq!(
        reasons(&out, "y")[..4],
        [
            (10, "None"),
            (10, "Priority"),
            (20, "JobHeldAdmin"),
            (110, "None")
        ]
    );
}

#[test]
fn node_down_requeues_or_fails_running_jobs() {
    // gpu01, gpu02: 8 cores, 2 L40S each. JobRequeue is on (the default).
    let out = run_scenario(
        "node_down_requeue",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "r", "submit": 0,   "gres": "gpu:1", "run_time": 1000},
            {"id": "n", "submit": 0,   "gres": "gpu:1", "run_time": 1000, "requeue": false},
            {"id": "x", "submit": 0,   "gres": "gpu:1", "run_time": 1000},
            {"id": "f", "submit": 160, "gres": "gpu:2", "run_time": 100},
            {"id": "g", "submit": 160, "gres": "gpu:1", "run_time": 140}
          ]},
          "events": [
            {"at": 100, "action": "node_down", "nodes": "gpu01"},
            {"at": 150, "action": "node_up", "nodes": "gpu01"}
          ]
        }"#,
    );
    // t=0: r: tie -> gpu01:0. n: best fit, gpu01 (7 free CPUs) -> gpu01:1.
    //   x: gpu01 has no GPU left -> gpu02:0.
    // t=100: gpu01 goes down. r may be requeued: its run ends at 100, it is
    //   pending again, submit time 100, begin = 100 + cred_expire(120) + 1 =
    //   221. n has --no-requeue: it ends NODE_FAIL for good.
    // t=150: gpu01 is up again (and idle); r waits for its begin time.
    // t=160: f (2 GPUs) -> gpu01:0,1 (gpu02 has one GPU free); g -> gpu02:1.
    // t=221: r is eligible; every GPU is busy. f ends at 260: r takes
    //   gpu01 (the only node with a free GPU) GPU 0 and runs its 1000 s again.
    assert_eq!(
        summary(&out),
        vec![
            ran("r", "COMPLETED", 260, 1260, "gpu01:0"),
            ran("n", "NODE_FAIL", 0, 100, "gpu01:1"),
            ran("x", "COMPLETED", 0, 1000, "gpu02:0"),
            ran("f", "COMPLETED", 160, 260, "gpu01:0,1"),
            ran("g", "COMPLETED", 160, 300, "gpu02:1"),
        ]
    );
    // The first run closed at 100 on gpu01:0; its recorded state is checked
    // in node_failure_requeue_records_node_fail below.
    let r_runs: Vec<(u64, Option<u64>, String)> = runs(&out, "r")
        .into_iter()
        .map(|(_, s, e, a)| (s, e, a))
        .collect();
    assert_eq!(
        r_runs,
        vec![
            (0, Some(100), "gpu01:0".to_string()),
            (260, Some(1260), "gpu01:0".to_string()),
        ]
    );
    let r = job(&out, "r");
    assert_eq!(
        (r.restarts(), r.begin, r.submit, r.first_submit),
        (1, Some(221), 100, 0)
    );
    assert_eq!(
        reasons(&out, "r")[..3],
        [(0, "None"), (100, "BeginTime"), (221, "None")]
    );
    assert_eq!(job(&out, "n").reason, Reason::NodeDown);
}

/// Slurm's accounting record of a run killed by a node failure is NODE_FAIL
/// even when the job is requeued (kill_running_job_by_node_name sets
/// JOB_NODE_FAIL before job_completion_logger, then makes the job pending);
/// REQUEUED is what `scontrol requeue` records.
#[test]
fn node_failure_requeue_records_node_fail() {
    let out = run_scenario(
        "node_down_requeue_state",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "r", "submit": 0, "gres": "gpu:1", "run_time": 1000}
          ]},
          "events": [{"at": 100, "action": "node_down", "nodes": "gpu01"}]
        }"#,
    );
    // r starts on gpu01:0; gpu01 fails at 100; r is requeued and later
    // completes on gpu02. The first run's record is NODE_FAIL.
    let states: Vec<&str> = runs(&out, "r").into_iter().map(|r| r.0).collect();
    assert_eq!(states, vec!["NODE_FAIL", "COMPLETED"]);
    assert_eq!(
        runs(&out, "r")[0],
        ("NODE_FAIL", 0, Some(100), "gpu01:0".to_string())
    );
}

/// A job requeued after a node failure keeps its priority: Slurm's
/// kill_running_job_by_node_name does not call set_job_prio (only the
/// front-end variant does), and the recording pub_failures shows the
/// node-failed job r01 still ahead of r04, requeued earlier by scontrol. Its
/// submit time is reset, but priority comes first in the queue order, so it
/// goes back to the head of the queue once eligible again.
#[test]
fn node_failure_requeue_keeps_its_priority() {
    // gpu01, gpu02: 1 L40S each.
    let out = run_scenario(
        "requeue_priority",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 1}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "r", "submit": 0,  "gres": "gpu:1", "run_time": 1000},
            {"id": "x", "submit": 0,  "gres": "gpu:1", "run_time": 400},
            {"id": "w", "submit": 10, "gres": "gpu:1", "run_time": 100}
          ]},
          "events": [{"at": 100, "action": "node_down", "nodes": "gpu01"}]
        }"#,
    );
    // t=0: r -> gpu01, x -> gpu02. t=10: w waits (Resources).
    // t=100: gpu01 fails for good; r is requeued (eligible at 221) and keeps
    //   its priority, above w's.
    // t=400: x ends; r, first in the queue again, takes gpu02 until 1400; w
    //   follows at 1400.
    assert_eq!(
        summary(&out),
        vec![
            ran("r", "COMPLETED", 400, 1400, "gpu02:0"),
            ran("x", "COMPLETED", 0, 400, "gpu02:0"),
            ran("w", "COMPLETED", 1400, 1500, "gpu02:0"),
        ]
    );
}

/// `--nice` lowers a job's priority (priority/basic subtracts the nice value
/// from the next priority), so a later job without nice overtakes it.
#[test]
fn nice_lowers_priority() {
    let out = run_scenario(
        "nice",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 1}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "blk", "submit": 0, "gres": "gpu:1", "run_time": 10},
            {"id": "a",   "submit": 1, "gres": "gpu:1", "run_time": 10, "nice": 100},
            {"id": "b",   "submit": 2, "gres": "gpu:1", "run_time": 10}
          ]}
        }"#,
    );
    // blk holds the only GPU until 10. a's priority is 100 below what it
    // would have been, b's is one below blk's: b runs first at 10, a at 20.
    assert_eq!(
        summary(&out),
        vec![
            ran("blk", "COMPLETED", 0, 10, "gpu01:0"),
            ran("a", "COMPLETED", 20, 30, "gpu01:0"),
            ran("b", "COMPLETED", 10, 20, "gpu01:0"),
        ]
    );
}

#[test]
fn admin_requeue_and_cancel() {
    // One node with 2 GPUs.
    let out = run_scenario(
        "requeue_cancel",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "q",  "submit": 0,  "gres": "gpu:1", "run_time": 100},
            {"id": "c1", "submit": 0,  "gres": "gpu:1", "run_time": 1000},
            {"id": "c2", "submit": 0,  "gres": "gpu:2", "run_time": 10},
            {"id": "f",  "submit": 60, "gres": "gpu:1", "run_time": 140}
          ]},
          "events": [
            {"at": 30,  "action": "cancel", "job": "c2"},
            {"at": 50,  "action": "requeue", "job": "q"},
            {"at": 250, "action": "cancel", "job": "c1"}
          ]
        }"#,
    );
    // t=0: q -> GPU 0, c1 -> GPU 1, c2 (2 GPUs) -> Resources.
    // t=30: c2 is cancelled while pending: CANCELLED, it never ran.
    // t=50: scontrol requeue q: its run ends REQUEUED; it is pending again
    //   and eligible at 50 + cred_expire(120) + 1 = 171.
    // t=60: f takes the GPU q left, 0, until 200.
    // t=171: q is eligible but both GPUs are busy; f ends at 200 and q takes
    //   GPU 0 for its full 100 s.
    // t=250: c1 is cancelled while running: CANCELLED, its run ends at 250.
    assert_eq!(
        summary(&out),
        vec![
            ran("q", "COMPLETED", 200, 300, "gpu01:0"),
            ran("c1", "CANCELLED", 0, 250, "gpu01:1"),
            never_ran("c2", "CANCELLED"),
            ran("f", "COMPLETED", 60, 200, "gpu01:0"),
        ]
    );
    assert_eq!(
        runs(&out, "q"),
        vec![
            ("REQUEUED", 0, Some(50), "gpu01:0".to_string()),
            ("COMPLETED", 200, Some(300), "gpu01:0".to_string()),
        ]
    );
    let q = job(&out, "q");
    assert_eq!((q.restarts(), q.begin, q.submit), (1, Some(171), 50));
    assert_eq!(
        reasons(&out, "q")[..3],
        [(0, "None"), (50, "BeginTime"), (171, "None")]
    );
}

#[test]
fn node_down_without_requeue_ends_node_fail() {
    // JobRequeue=0: running jobs on a failed node end NODE_FAIL.
    let out = run_scenario(
        "node_down_fail",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024,
                        "job_requeue": false},
          "workload": {"jobs": [
            {"id": "k",    "submit": 0,   "gres": "gpu:1", "run_time": 1000},
            {"id": "d",    "submit": 0,   "gres": "gpu:1", "run_time": 10, "dependency": "afterany:k"},
            {"id": "dok",  "submit": 0,   "gres": "gpu:1", "run_time": 10, "dependency": "afterok:k"},
            {"id": "busy", "submit": 0,   "gres": "gpu:2", "run_time": 150},
            {"id": "pin",  "submit": 200, "gres": "gpu:1", "run_time": 10, "nodelist": "gpu01"}
          ]},
          "events": [
            {"at": 100, "action": "node_down", "nodes": "gpu01"}
          ]
        }"#,
    );
    // t=0: k -> gpu01:0 (tie, lowest index). d and dok wait on k. busy needs
    //   2 GPUs: gpu01 has one left, so gpu02:0,1 until 150.
    // t=100: gpu01 goes down; k ends NODE_FAIL (no requeue), reason NodeDown.
    //   afterany:k is met, but gpu01 is down and gpu02 full: d waits until
    //   busy ends at 150, then gpu02:0. afterok:k can never be met: dok
    //   stays PENDING (DependencyNeverSatisfied).
    // t=200: pin wants gpu01 (-w), which is down: ReqNodeNotAvail, and it
    //   stays pending (gpu01 never comes back).
    assert_eq!(
        summary(&out),
        vec![
            ran("k", "NODE_FAIL", 0, 100, "gpu01:0"),
            ran("d", "COMPLETED", 150, 160, "gpu02:0"),
            never_ran("dok", "PENDING"),
            ran("busy", "COMPLETED", 0, 150, "gpu02:0,1"),
            never_ran("pin", "PENDING"),
        ]
    );
    assert_eq!(
        (job(&out, "k").restarts(), job(&out, "k").reason),
        (0, Reason::NodeDown)
    );
    assert_eq!(job(&out, "dok").reason, Reason::DependencyNeverSatisfied);
    let pin = job(&out, "pin");
    assert_eq!(
        (pin.reason, pin.reason_desc.as_deref()),
        (Reason::ReqNodeNotAvail, Some("UnavailableNodes:gpu01"))
    );
}

#[test]
fn drained_node_keeps_its_jobs_but_takes_no_new_ones() {
    // gpu01, gpu02: 8 cores, 2 L40S each.
    let out = run_scenario(
        "drain",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "L40S", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "a", "submit": 0,  "gres": "gpu:1", "run_time": 100},
            {"id": "b", "submit": 20, "gres": "gpu:1", "run_time": 10},
            {"id": "c", "submit": 30, "gres": "gpu:2", "run_time": 10, "nodelist": "gpu01"}
          ]},
          "events": [
            {"at": 10, "action": "node_drain", "nodes": "gpu01"},
            {"at": 50, "action": "node_resume", "nodes": "gpu01"}
          ]
        }"#,
    );
    // a: tie -> gpu01:0; the drain at 10 lets it run to its end at 100.
    // b (t=20): best fit would pick gpu01 (7 free CPUs vs 8), but a drained
    //   node takes no new jobs -> gpu02:0.
    // c (t=30): -w gpu01, 2 GPUs: gpu01 is drained -> ReqNodeNotAvail.
    //   After the resume at 50, gpu01 still has a on GPU 0 (Resources); when
    //   a ends at 100 c takes both GPUs.
    assert_eq!(
        summary(&out),
        vec![
            ran("a", "COMPLETED", 0, 100, "gpu01:0"),
            ran("b", "COMPLETED", 20, 30, "gpu02:0"),
            ran("c", "COMPLETED", 100, 110, "gpu01:0,1"),
        ]
    );
    assert_eq!(
        reasons(&out, "c")[..2],
        [(30, "None"), (30, "ReqNodeNotAvail")]
    );
}

#[test]
fn exclusive_jobs_take_whole_nodes() {
    // gpu01, gpu02: 8 cores, 4 A100s each.
    let out = run_scenario(
        "exclusive",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 8, "memory": "64G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "s1",  "submit": 0, "gres": "gpu:1", "run_time": 50},
            {"id": "ex",  "submit": 0, "gres": "gpu:1", "exclusive": true, "run_time": 100},
            {"id": "s2",  "submit": 0, "gres": "gpu:1", "run_time": 60},
            {"id": "ex2", "submit": 0, "gres": "gpu:2", "exclusive": true, "run_time": 10}
          ]}
        }"#,
    );
    // s1: tie -> gpu01:0.
    // ex: gpu01 already runs a job, so gpu02; an exclusive job holds the whole
    //   node: all 8 CPUs and all 4 GPUs.
    // s2: gpu02 is exclusively held -> gpu01:1.
    // ex2: no node without jobs -> Resources. s1 ends at 50 (s2 still on
    //   gpu01); s2 ends at 60: gpu01 is empty, ex2 takes all of it.
    assert_eq!(
        summary(&out),
        vec![
            ran("s1", "COMPLETED", 0, 50, "gpu01:0"),
            ran("ex", "COMPLETED", 0, 100, "gpu02:0,1,2,3"),
            ran("s2", "COMPLETED", 0, 60, "gpu01:1"),
            ran("ex2", "COMPLETED", 60, 70, "gpu01:0,1,2,3"),
        ]
    );
    let ex = &job(&out, "ex").runs[0].alloc;
    assert!(ex.exclusive);
    assert_eq!(ex.nodes[0].cpus, 8);
}

#[test]
fn impossible_requests_are_rejected_at_submit() {
    // Two nodes with 8 A100s and 512G each.
    let out = run_scenario(
        "reject",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-02]", "cores_per_socket": 16, "memory": "512G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 8}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "ok1",      "submit": 0, "gres": "gpu:8", "run_time": 10},
            {"id": "nine",     "submit": 0, "gres": "gpu:9", "run_time": 10},
            {"id": "mem",      "submit": 0, "gres": "gpu:1", "mem": "1T", "run_time": 10},
            {"id": "three",    "submit": 0, "nodes": 3, "run_time": 10},
            {"id": "ok2",      "submit": 0, "gres": "gpu:1", "run_time": 10}
          ]}
        }"#,
    );
    // ok1: all of gpu01.
    // nine: no node has 9 GPUs -> REJECTED, "Requested node configuration is
    //   not available". mem: 1T > every node's 512G -> REJECTED, "Memory
    //   specification can not be satisfied". Both still consumed a job id.
    // three: -N3 in a 2-node partition is a partition limit, not a
    //   rejection: it pends with PartitionNodeLimit and does not block.
    // ok2: gpu01 has no GPU left -> gpu02:0.
    assert_eq!(
        summary(&out),
        vec![
            ran("ok1", "COMPLETED", 0, 10, "gpu01:0,1,2,3,4,5,6,7"),
            never_ran("nine", "REJECTED"),
            never_ran("mem", "REJECTED"),
            never_ran("three", "PENDING"),
            ran("ok2", "COMPLETED", 0, 10, "gpu02:0"),
        ]
    );
    assert_eq!(
        job(&out, "nine").rejected(),
        Some("Requested node configuration is not available")
    );
    assert_eq!(
        job(&out, "mem").rejected(),
        Some("Memory specification can not be satisfied")
    );
    assert_eq!(job(&out, "nine").state, JobState::Rejected);
    assert_eq!(job(&out, "three").reason, Reason::PartitionNodeLimit);
    let ids: Vec<Option<u32>> = job_ids(&out).into_iter().map(|(_, i)| i).collect();
    assert_eq!(ids, vec![Some(1), Some(2), Some(3), Some(4), Some(5)]);
}

/// A job that outlives its limit but ends on its own before the next
/// time-limit check is not killed: Slurm only acts at the check, and the job
/// ends COMPLETED (sacct shows Elapsed > Timelimit).
#[test]
fn job_ending_before_the_time_limit_check_completes() {
    let out = run_scenario(
        "timelimit_between_checks",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu01", "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}
          ]},
          "scheduler": {"sched_interval": 1, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "j", "submit": 5, "gres": "gpu:1", "time": 1, "run_time": 70}
          ]}
        }"#,
    );
    // Limit reached at 5 + 60 = 65, next check at 90; the job exits at 75.
    assert_eq!(summary(&out), vec![ran("j", "COMPLETED", 5, 75, "gpu01:0")]);
}

/// `-n N` without `-N` leaves the node count open, as in Slurm (job details
/// max_nodes = 0, req_nodes = min_nodes): tasks pack onto as few nodes as
/// hold them and spread only when one node cannot.
///
/// Two idle 8-core nodes, 1 GiB per CPU. t4 (4 tasks) fits one node: n1
/// (lowest index on the tie). t12 (12 tasks) fits no single node, so it
/// spreads at once over n1's 4 free cores and n2's 8. t20 (20 tasks) needs
/// more cores than the partition has: it pends (a partition-wide limit, not
/// a refusal at submission).
#[test]
fn bare_ntasks_spans_nodes_only_when_one_node_cannot_hold_it() {
    let out = run_scenario(
        "bare_ntasks",
        r#"{"schema_version": 1,
          "cluster": {"nodes": [{"names": "n[1-2]", "sockets": 1, "cores_per_socket": 8,
                                 "memory": "64G"}]},
          "partitions": [{"name": "p", "nodes": "ALL", "default": true}],
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0,
                        "def_mem_per_cpu": "1G"},
          "workload": {"jobs": [
            {"id": "t4", "submit": 0, "ntasks": 4, "run_time": 100, "time": 10},
            {"id": "t12", "submit": 1, "ntasks": 12, "run_time": 50, "time": 10},
            {"id": "t20", "submit": 2, "ntasks": 20, "run_time": 50, "time": 10}
          ]}}"#,
    );
    assert_eq!(
        summary(&out),
        vec![
            ran("t4", "COMPLETED", 0, 100, "n1"),
            ran("t12", "COMPLETED", 1, 51, "n1 n2"),
            never_ran("t20", "PENDING"),
        ]
    );
}
