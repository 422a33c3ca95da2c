//! The classic policies (`strict-fifo`, `easy`, `conservative`) on small
//! workloads whose schedules were worked out by hand from the textbook
//! rules (docs/reproductions.md, "Classic policies vs Batsim"):
//! - plans use time limits, never run times; a running job holds its nodes
//!   until start + limit;
//! - EASY: only the queue head holds a reservation; conservative: every
//!   queued job does, at its earliest fit around the ones ahead of it;
//! - nodes are taken first fit (lowest index).
//!
//! Times: `time` is in minutes, so limits are multiples of 60 s; passes run
//! after every submission and job end (`sched_interval: 1`), and jobs are
//! killed exactly at their limit.

use std::collections::BTreeMap;
use std::path::Path;

fn run(policy: &str, text: &str) -> BTreeMap<String, (u64, String)> {
    let sc = gresim_io::parse_scenario(Path::new("classic.json"), text).expect("valid scenario");
    let out = gresim_engine::run(
        sc.sim_input(1),
        policy
            .parse::<gresim_sched::PolicyKind>()
            .expect("known policy")
            .build(),
    )
    .expect("run");
    out.jobs
        .iter()
        .map(|j| {
            let key = out.specs[j.sub as usize].key.clone();
            let r = j
                .runs
                .first()
                .unwrap_or_else(|| panic!("{key} never started"));
            let names: Vec<String> = r
                .alloc
                .node_ids()
                .map(|n| out.cluster.node(n).name.clone())
                .collect();
            (key, (r.start, gresim_model::hostlist::compress(&names)))
        })
        .collect()
}

fn starts(policy: &str, text: &str) -> Vec<(String, u64)> {
    run(policy, text)
        .into_iter()
        .map(|(k, (s, _))| (k, s))
        .collect()
}

fn v(x: &[(&str, u64)]) -> Vec<(String, u64)> {
    x.iter().map(|(k, s)| (k.to_string(), *s)).collect()
}

/// Four whole-node hosts; A holds n1-n2 until 1200 and B n3 until 600.
/// H (3 nodes) must wait for A: its reservation is n1-n3 over [1200, 2400).
/// S (2 nodes, 8 min) and X (1 node, 14 min) come behind it.
///
/// - strict-fifo: H at 1200; S and X wait behind it until H ends at 2400.
/// - easy: X fits now on n4 and ends (843) before H's reservation: it
///   starts at 3. S never fits beside H's reservation while X and then H
///   hold n4 and n1-n3: it starts when H ends, 2400.
/// - conservative: S's reservation is n3-n4 at B's end [600, 1080); X on
///   n4 now would overlap it, so X is reserved after S, at 1080 on n4 (H's
///   reservation leaves n4 free). At 600 S starts; at 1080 X does.
const EASY_VS_CONSERVATIVE: &str = r#"{
  "schema_version": 1,
  "cluster": {"nodes": [{"names": "n[1-4]", "cores_per_socket": 1, "memory": "1G"}]},
  "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0},
  "workload": {"jobs": [
    {"id": "A", "submit": 0, "nodes": 2, "exclusive": true, "time": 20, "run_time": 1200},
    {"id": "B", "submit": 0, "nodes": 1, "exclusive": true, "time": 10, "run_time": 600},
    {"id": "H", "submit": 1, "nodes": 3, "exclusive": true, "time": 20, "run_time": 1200},
    {"id": "S", "submit": 2, "nodes": 2, "exclusive": true, "time": 8, "run_time": 480},
    {"id": "X", "submit": 3, "nodes": 1, "exclusive": true, "time": 14, "run_time": 840}
  ]}
}"#;

#[test]
fn strict_fifo_lets_nothing_overtake_the_head() {
    assert_eq!(
        starts("strict-fifo", EASY_VS_CONSERVATIVE),
        v(&[("A", 0), ("B", 0), ("H", 1200), ("S", 2400), ("X", 2400)])
    );
}

#[test]
fn easy_protects_only_the_head() {
    let r = run("easy", EASY_VS_CONSERVATIVE);
    assert_eq!(
        r["X"],
        (3, "n4".to_string()),
        "backfilled beside the reservation"
    );
    assert_eq!(r["H"], (1200, "n[1-3]".to_string()));
    assert_eq!(r["S"].0, 2400, "delayed by X, which EASY allows");
}

#[test]
fn conservative_protects_every_queued_job() {
    let r = run("conservative", EASY_VS_CONSERVATIVE);
    assert_eq!(r["S"], (600, "n[3-4]".to_string()));
    assert_eq!(r["X"], (1080, "n4".to_string()));
    assert_eq!(r["H"], (1200, "n[1-3]".to_string()), "never delayed");
}

/// Jobs that share nodes (2 nodes × 4 cores, a job of N tasks over 1-2
/// nodes takes any N cores, count-based as in the peers' benchmark): J1 takes 3 cores until
/// its end at 100, J2 needs 6 of the 5 left and blocks, J3 needs 1.
/// strict-fifo keeps J3 behind J2 (both start at 100, 6 + 1 ≤ 8); EASY
/// backfills J3 at once: it ends (302) before J2's reservation at J1's
/// planned end (600).
const SHARED: &str = r#"{
  "schema_version": 1,
  "cluster": {"nodes": [{"names": "c[1-2]", "cores_per_socket": 4, "memory": "8G"}]},
  "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": "1G"},
  "workload": {"jobs": [
    {"id": "J1", "submit": 0, "ntasks": 3, "nodes": "1-2", "time": 10, "run_time": 100},
    {"id": "J2", "submit": 1, "ntasks": 6, "nodes": "1-2", "time": 10, "run_time": 100},
    {"id": "J3", "submit": 2, "ntasks": 1, "time": 5, "run_time": 300}
  ]}
}"#;

#[test]
fn shared_nodes_count_cores() {
    assert_eq!(
        starts("strict-fifo", SHARED),
        v(&[("J1", 0), ("J2", 100), ("J3", 100)])
    );
    assert_eq!(
        starts("easy", SHARED),
        v(&[("J1", 0), ("J2", 100), ("J3", 2)])
    );
    assert_eq!(
        starts("conservative", SHARED),
        v(&[("J1", 0), ("J2", 100), ("J3", 2)])
    );
}

/// A job that can never run (more nodes than the cluster has) is rejected
/// at submission and holds nobody up; a job beyond the partition's MaxTime
/// pends with PartitionTimeLimit and holds nobody up either.
#[test]
fn impossible_jobs_do_not_block() {
    let text = r#"{
      "schema_version": 1,
      "cluster": {"nodes": [{"names": "n[1-2]", "cores_per_socket": 1, "memory": "1G"}]},
      "partitions": [{"name": "p", "nodes": "ALL", "default": true, "max_time": "30"}],
      "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0},
      "workload": {"impossible": "reject", "jobs": [
        {"id": "big", "submit": 0, "nodes": 3, "exclusive": true, "time": 5, "run_time": 10},
        {"id": "long", "submit": 0, "nodes": 1, "exclusive": true, "time": 60, "run_time": 10},
        {"id": "ok", "submit": 1, "nodes": 2, "exclusive": true, "time": 5, "run_time": 10}
      ]}
    }"#;
    for policy in ["strict-fifo", "easy", "conservative"] {
        let sc = gresim_io::parse_scenario(Path::new("c.json"), text).expect("valid");
        let out = gresim_engine::run(
            sc.sim_input(1),
            policy.parse::<gresim_sched::PolicyKind>().unwrap().build(),
        )
        .expect("run");
        let by_key = |k: &str| {
            out.jobs
                .iter()
                .find(|j| out.specs[j.sub as usize].key == k)
                .expect("job")
        };
        assert_eq!(
            by_key("ok").runs.first().map(|r| r.start),
            Some(1),
            "{policy}"
        );
        assert!(by_key("big").runs.is_empty(), "{policy}");
        let long = by_key("long");
        assert!(long.runs.is_empty(), "{policy}");
        assert_eq!(
            long.reason,
            gresim_model::Reason::PartitionTimeLimit,
            "{policy}"
        );
    }
}

/// The classic policies' fast first-fit choice is exactly
/// `Placement::FirstFit`'s, on random partly-busy states of a mixed cluster
/// (CPU and GPU nodes, different sizes) and random requests.
#[test]
fn first_fit_is_placement_first_fit() {
    use gresim_model::job::{GpuReq, JobRequest, MemReq};
    use gresim_model::{ClusterState, PartId};
    use gresim_sched::placement::{place, Placement};
    let text = r#"{
      "schema_version": 1,
      "cluster": {"nodes": [
        {"names": "c[1-5]", "sockets": 2, "cores_per_socket": 4, "memory": "32G"},
        {"names": "g[1-4]", "sockets": 2, "cores_per_socket": 8, "memory": "64G",
         "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]},
        {"names": "s[1-3]", "cores_per_socket": 2, "memory": "8G"}
      ]},
      "workload": {"jobs": []}
    }"#;
    let sc = gresim_io::parse_scenario(Path::new("ff.json"), text).expect("valid");
    let (cluster, params) = (&sc.cluster, &sc.params);
    let part = PartId::from_idx(0);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let request = |rnd: &mut dyn FnMut(u64) -> u64| {
        let min = 1 + rnd(3) as u32;
        let mut r = JobRequest {
            min_nodes: min,
            max_nodes: min + rnd(3) as u32,
            ntasks: Some(min + rnd(12) as u32),
            cpus_per_task: 1 + rnd(2) as u32,
            mem: MemReq::PerCpu(256 + 256 * rnd(4)),
            exclusive: rnd(5) == 0,
            ..JobRequest::default()
        };
        if rnd(3) == 0 {
            r.gpus_per_node = vec![GpuReq {
                ty: None,
                count: 1 + rnd(4) as u32,
            }];
        }
        r
    };
    let (mut compared, mut fits) = (0, 0);
    let mut cache = gresim_sched::select::SelectCache::new();
    for _ in 0..40 {
        // A random busy state: random jobs placed by cons_tres.
        let mut state = ClusterState::new(cluster);
        for _ in 0..rnd(12) {
            let r = request(&mut rnd);
            if let Ok(a) =
                gresim_sched::select::select(&mut cache, cluster, params, &state, &r, part, None)
            {
                state.allocate(cluster, &a).expect("a free allocation");
            }
        }
        for _ in 0..25 {
            let r = request(&mut rnd);
            let avoid: Option<Vec<bool>> =
                (rnd(2) == 0).then(|| (0..cluster.nodes.len()).map(|_| rnd(4) == 0).collect());
            let a = avoid.as_deref();
            let fast =
                gresim_sched::classic::first_fit(&mut cache, cluster, params, &state, &r, part, a);
            let slow = place(
                &mut cache,
                &Placement::FirstFit,
                cluster,
                params,
                &state,
                &r,
                part,
                a,
            )
            .ok();
            assert_eq!(fast, slow, "{r:?}");
            compared += 1;
            fits += usize::from(fast.is_some());
        }
    }
    assert!(
        fits > compared / 5 && fits < compared,
        "{fits} of {compared} fit: a mix"
    );
}
