//! Hand-worked cases of node, core and GPU selection (`job_test` and its
//! parts), and the shared cluster builders of the submodules' tests.

use super::*;
use gresim_model::catalog::model_by_name;
use gresim_model::job::GpuReq;
use gresim_model::job::MemReq;
use gresim_model::state::CoreSet;
use gresim_model::{ClusterState, GpuDevice, GpuType, GpuTypeId, NodeAdminState, Partition};
use gresim_model::{Node, NodeAlloc};

use super::cache::ShapeKey;
use super::gpu_bits::bits;
use crate::select::Skip;

fn cluster(n: usize) -> Cluster {
    // Two weights, so node sets are cut at weight changes too.
    a100_cluster(n, 8, |i| 1 + u32::from(i % 7 == 3))
}

/// `n` nodes `n0`… of 2 sockets × 8 cores and `gpus` A100s (half on
/// each socket), weights from `weight`, in one default partition `p`.
pub(super) fn a100_cluster(n: usize, gpus: usize, weight: impl Fn(usize) -> u32) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    let nodes = (0..n)
        .map(|i| Node {
            name: format!("n{i}"),
            sockets: 2,
            cores_per_socket: 8,
            threads_per_core: 1,
            memory_mib: 64_000,
            features: vec![],
            weight: weight(i),
            gpus: (0..gpus)
                .map(|g| GpuDevice {
                    ty: GpuTypeId(0),
                    model,
                    socket: Some((g / (gpus / 2).max(1)) as u16),
                    phys: g as u8,
                    mig: None,
                })
                .collect(),
            gpu_links: None,
            state: NodeAdminState::Up,
        })
        .collect();
    Cluster::new(
        nodes,
        vec![Partition {
            default: true,
            ..Partition::new("p", (0..n).map(NodeId::from_idx).collect())
        }],
        vec![GpuType {
            name: "a100".into(),
            model,
            mig: None,
        }],
    )
}

fn req(x: u64) -> JobRequest {
    let nodes = [1, 1, 1, 2, 3][(x % 5) as usize];
    let gpus = [1, 2, 3, 4, 8][((x / 5) % 5) as usize];
    JobRequest {
        min_nodes: nodes,
        max_nodes: nodes,
        cpus_per_gpu: (x % 3 == 0).then_some(2),
        mem: match x % 4 {
            0 => MemReq::PerNode(8_000),
            1 => MemReq::PerGpu(6_000),
            2 => MemReq::PerCpu(1_000),
            _ => MemReq::Default,
        },
        gpus_per_node: vec![GpuReq {
            ty: None,
            count: gpus,
        }],
        exclusive: x % 23 == 0,
        ..JobRequest::default()
    }
}

/// The one-pass candidate scan with runs of hopeless nodes folded into
/// one gap gives exactly the allocations of the full scan, on a cluster
/// filled and drained by a pseudo-random job stream.
/// A pseudo-random stream of `steps` requests on `c` (partition 0, from
/// `seed`): about a third of the steps release a running job, the others
/// hand `step` the state and a request from [`req`], and an allocation it
/// returns is made and kept running.
fn churn(
    c: &Cluster,
    seed: u64,
    steps: usize,
    mut step: impl FnMut(&ClusterState, &JobRequest) -> Option<Allocation>,
) {
    let mut s = ClusterState::new(c);
    let mut running: Vec<Allocation> = Vec::new();
    let mut x = seed;
    for _ in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x % 3 == 0 && !running.is_empty() {
            let a = running.swap_remove((x as usize / 3) % running.len());
            s.release(c, &a).expect("allocated");
            continue;
        }
        if let Some(a) = step(&s, &req(x >> 8)) {
            s.allocate(c, &a).expect("free");
            running.push(a);
        }
    }
}

fn test_params() -> SchedParams {
    SchedParams {
        def_mem_per_cpu: Some(1_000),
        ..SchedParams::default()
    }
}

#[test]
fn gap_scan_equals_full_scan() {
    let c = cluster(40);
    let p = test_params();
    let part = PartId::from_idx(0);
    let (mut fits, mut fails) = (0, 0);
    // One cache for the whole churn, as a policy keeps it.
    let mut sc = SelectCache::default();
    churn(&c, 0x2545_F491_4F6C_DD1D, 3_000, |s, r| {
        let mut test =
            |fast: bool| job_test_with(&c, &p, r, part, View::Now(s, None), &mut sc, fast);
        let (fast, full) = (test(true), test(false));
        assert_eq!(fast, full, "request {r:?}");
        if fast.is_some() {
            fits += 1;
        } else {
            fails += 1;
        }
        fast
    });
    // Both outcomes were exercised, many times.
    assert!(fits > 300 && fails > 300, "fits {fits}, fails {fails}");
}

/// `_cyclic_sync_core_bitmap`: a task's CPUs are packed into one socket
/// when one has room for whole tasks, other cores go one per socket per
/// round. With core 0 busy, an 8-CPU task skips socket 0 (7 free cores)
/// for socket 1, so the next 1-GPU job gets core 1 and a socket-0 GPU;
/// two 1-CPU tasks take a core on each socket. Recorded on Slurm 22.05:
/// conformance case `rnd_b202` (j23 on cores 16-31 of l2, then j26 on
/// CPU 1 with GPU 1 and j20 with GPUs 2,3).
#[test]
fn tasks_are_packed_per_socket_then_cores_go_round_robin() {
    let c = cluster(1);
    let p = test_params();
    let part = PartId::from_idx(0);
    let mut s = ClusterState::new(&c);
    let node = NodeId::from_idx(0);
    let place = |s: &mut ClusterState, r: &JobRequest| {
        let a = job_test(
            &mut SelectCache::default(),
            &c,
            &p,
            r,
            part,
            View::Now(s, None),
        )
        .expect("fits");
        s.allocate(&c, &a).expect("free");
        let na = &a.nodes[0];
        (
            na.cores.iter().collect::<Vec<_>>(),
            bits(na.gpus).collect::<Vec<_>>(),
        )
    };
    let gpu1 = JobRequest {
        min_nodes: 1,
        max_nodes: 1,
        gpus_per_node: vec![GpuReq { ty: None, count: 1 }],
        ..JobRequest::default()
    };
    assert_eq!(place(&mut s, &gpu1), (vec![0], vec![0]));
    let cpu8 = JobRequest {
        min_nodes: 1,
        max_nodes: 1,
        cpus_per_task: 8,
        ..JobRequest::default()
    };
    assert_eq!(place(&mut s, &cpu8), ((8..16).collect(), vec![]));
    assert_eq!(place(&mut s, &gpu1), (vec![1], vec![1]));
    // A fresh node: two 1-CPU tasks go to cores 0 and 8.
    let mut fresh = ClusterState::new(&c);
    let two = JobRequest {
        min_nodes: 1,
        max_nodes: 1,
        ntasks: Some(2),
        ..JobRequest::default()
    };
    assert_eq!(place(&mut fresh, &two), (vec![0, 8], vec![]));
    assert_eq!(fresh.node(node).free_cores.count(), 14);
}

/// Requests whose `ShapeKey` matches (they share cache entries and a
/// `fit_tree`) get the same `eval_node` answer on every node, in both
/// passes, on a filling and draining cluster: the node counts the key
/// leaves out are read only through what `JobCtx` derives from them.
#[test]
fn shared_shapes_evaluate_alike() {
    let c = cluster(24);
    let p = test_params();
    let part = PartId::from_idx(0);
    let (mut shared, mut apart) = (0, 0);
    let mut sc = SelectCache::default();
    churn(&c, 0x9E37_79B9_7F4A_7C15, 400, |s, base| {
        let mut variants = Vec::new();
        for nodes in [1, 2, 3] {
            for ntasks in [None, Some(2), Some(3)] {
                // A field the key must keep: pairs differing in it may
                // not share a shape.
                for cpus_per_gpu in [base.cpus_per_gpu, Some(4)] {
                    variants.push(JobRequest {
                        min_nodes: nodes,
                        max_nodes: nodes,
                        ntasks,
                        cpus_per_gpu,
                        ..base.clone()
                    });
                }
            }
        }
        let ctxs: Vec<JobCtx<'_>> = variants.iter().map(|r| JobCtx::new(&c, &p, r)).collect();
        for a in &ctxs {
            let key = ShapeKey::of(a);
            assert!(key.matches(a));
            for b in &ctxs {
                if !key.matches(b) {
                    apart += 1;
                    continue;
                }
                shared += 1;
                for id in (0..c.nodes.len()).map(NodeId::from_idx) {
                    let u = s.node(id);
                    for first in [true, false] {
                        assert_eq!(
                            eval_node(a, id, u, first),
                            eval_node(b, id, u, first),
                            "{:?} / {:?} on {id:?}",
                            a.req,
                            b.req
                        );
                    }
                }
            }
        }
        job_test_with(&c, &p, base, part, View::Now(s, None), &mut sc, true)
    });
    // Both kinds of pairs occur: node counts alone share a shape,
    // while task counts that change the per-node bounds do not.
    assert!(
        shared > 1_000 && apart > 1_000,
        "shared {shared}, apart {apart}"
    );
}

/// Four CPU-only nodes of 16 cores; `part` lists the partition's nodes.
fn cpu_cluster(part: &[usize]) -> Cluster {
    let nodes = (0..4)
        .map(|i| Node {
            name: format!("n{}", i + 1),
            sockets: 1,
            cores_per_socket: 16,
            threads_per_core: 1,
            memory_mib: 64_000,
            features: vec![],
            weight: 1,
            gpus: vec![],
            gpu_links: None,
            state: NodeAdminState::Up,
        })
        .collect();
    Cluster::new(
        nodes,
        vec![Partition {
            default: true,
            ..Partition::new("p", part.iter().map(|&i| NodeId::from_idx(i)).collect())
        }],
        vec![],
    )
}

/// Where a 2-CPU job goes when n1 has 4 cores busy, with `avoid` and a
/// drained n3 as given.
fn two_cpu_job_on(c: &Cluster, drain_n3: bool, avoid: Option<&[bool]>) -> String {
    let p = test_params();
    let mut s = ClusterState::new(c);
    let n1 = NodeId::from_idx(0);
    s.allocate(
        c,
        &Allocation {
            nodes: vec![NodeAlloc {
                node: n1,
                cores: CoreSet::first(4),
                cpus: 4,
                mem_mib: 4_000,
                gpus: 0,
                tasks: 1,
                share: None,
            }],
            exclusive: false,
            row_use: gresim_model::RowUse::NONE,
        },
    )
    .expect("free");
    if drain_n3 {
        s.set_admin(NodeId::from_idx(2), NodeAdminState::Drain);
    }
    let r = JobRequest {
        min_nodes: 1,
        max_nodes: 1,
        cpus_per_task: 2,
        ..JobRequest::default()
    };
    let a = job_test(
        &mut SelectCache::default(),
        c,
        &p,
        &r,
        PartId::from_idx(0),
        View::Now(&s, avoid.map(Skip::Flags)),
    )
    .expect("fits");
    c.node(a.nodes[0].node).name.clone()
}

/// `_eval_nodes` walks the whole node table: a node outside the job's
/// node map (another partition, drained, reserved by backfill) ends the
/// current set, and the sufficient set with the fewest CPUs wins before
/// best fit looks inside it. With n1-n4 in one set, best fit takes n1
/// (12 free CPUs); cut before n4, the sets {n1, n2} (28) and {n4} (16)
/// give n4 (recorded on Slurm 22.05: conformance case `node_sets`).
#[test]
fn nodes_outside_the_node_map_end_node_sets() {
    let all = cpu_cluster(&[0, 1, 2, 3]);
    assert_eq!(two_cpu_job_on(&all, false, None), "n1");
    // n3 in another partition.
    let gap = cpu_cluster(&[0, 1, 3]);
    assert_eq!(two_cpu_job_on(&gap, false, None), "n4");
    // n3 drained.
    assert_eq!(two_cpu_job_on(&all, true, None), "n4");
    // n3 kept for a higher-priority job's backfill reservation.
    let avoid = [false, false, true, false];
    assert_eq!(two_cpu_job_on(&all, false, Some(&avoid)), "n4");
}

/// A xorshift step.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// A small random cluster: 1 to 10 nodes of 1 or 2 sockets, 1 to 6 cores
/// per socket, 1 or 2 threads per core, 0 to 8 GPUs (of two types when
/// `x` says so, some close to no socket), two weights.
fn random_cluster(x: &mut u64) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    let n = 1 + (next(x) % 10) as usize;
    let sockets = 1 + (next(x) % 2) as u16;
    let cps = 1 + (next(x) % 6) as u16;
    let tpc = 1 + (next(x) % 2) as u16;
    let typed = next(x) % 3 == 0;
    let nodes = (0..n)
        .map(|i| {
            let gpus = (next(x) % 9) as usize;
            Node {
                name: format!("n{i}"),
                sockets,
                cores_per_socket: cps,
                threads_per_core: tpc,
                memory_mib: [4_000, 16_000, 64_000][(next(x) % 3) as usize],
                features: vec![],
                weight: 1 + u32::from(next(x) % 5 == 0),
                gpus: (0..gpus)
                    .map(|g| GpuDevice {
                        ty: GpuTypeId(u16::from(typed && g % 2 == 1)),
                        model,
                        socket: (g % 4 != 3).then_some((g % usize::from(sockets)) as u16),
                        phys: g as u8,
                        mig: None,
                    })
                    .collect(),
                gpu_links: None,
                state: NodeAdminState::Up,
            }
        })
        .collect();
    let ty = |name: &str| GpuType {
        name: name.into(),
        model,
        mig: None,
    };
    Cluster::new(
        nodes,
        vec![Partition {
            default: true,
            ..Partition::new("p", (0..n).map(NodeId::from_idx).collect())
        }],
        vec![ty("a100"), ty("b100")],
    )
}

/// A random request over every option `finish` reads: tasks (`-n`,
/// `--ntasks-per-node`, `-c`), node counts, memory (per node, per CPU, per
/// GPU, whole node, default), GPUs per node, per task or per job (typed
/// or not, alone or together), `--cpus-per-gpu`, `--exclusive`.
fn random_req(x: &mut u64) -> JobRequest {
    let min_nodes = 1 + (next(x) % 3) as u32;
    let max_nodes = min_nodes + (next(x) % 3) as u32;
    let ty = |x: &mut u64| (next(x) % 3 == 0).then_some(GpuTypeId((next(x) % 2) as u16));
    let gpu = |x: &mut u64| GpuReq {
        ty: ty(x),
        count: 1 + (next(x) % 4) as u32,
    };
    let mut r = JobRequest {
        min_nodes,
        max_nodes,
        max_nodes_open: next(x) % 4 == 0,
        ntasks: (next(x) % 2 == 0).then(|| 1 + (next(x) % 12) as u32),
        ntasks_per_node: (next(x) % 4 == 0).then(|| 1 + (next(x) % 3) as u32),
        cpus_per_task: 1 + (next(x) % 3) as u32,
        mem: match next(x) % 6 {
            0 => MemReq::PerNode(500 + next(x) % 8_000),
            1 => MemReq::PerCpu(200 + next(x) % 3_000),
            2 => MemReq::PerGpu(500 + next(x) % 6_000),
            3 => MemReq::WholeNode,
            _ => MemReq::Default,
        },
        exclusive: next(x) % 7 == 0,
        cpus_per_gpu: (next(x) % 4 == 0).then(|| 1 + (next(x) % 3) as u32),
        ..JobRequest::default()
    };
    match next(x) % 6 {
        0 => {}
        1 => r.gpus_per_node = vec![gpu(x)],
        2 => r.gpus_per_task = Some(gpu(x)),
        3 => r.gpus_per_job = Some(gpu(x)),
        4 => {
            r.gpus_per_node = vec![gpu(x)];
            r.gpus_per_job = Some(gpu(x));
        }
        _ => r.gpus_per_node = vec![gpu(x), gpu(x)],
    }
    r
}

/// The nodes-only selection backfill plans with ([`job_test_nodes`], whose
/// `finish::fits` answers without making the allocation) picks exactly the
/// nodes of the full selection and fails exactly where it fails: random
/// clusters, requests and states (filled by the full selection's own
/// allocations, some released again), with and without nodes to avoid.
#[test]
fn nodes_only_selection_answers_as_the_full_one() {
    let params = test_params();
    let part = PartId::from_idx(0);
    let (mut agree_some, mut agree_none) = (0u32, 0u32);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..400 {
        let c = random_cluster(&mut x);
        let mut s = ClusterState::new(&c);
        let mut running: Vec<Allocation> = Vec::new();
        let (mut full_cache, mut nodes_cache) = (SelectCache::default(), SelectCache::default());
        for _ in 0..60 {
            if next(&mut x) % 4 == 0 && !running.is_empty() {
                let a = running.swap_remove(next(&mut x) as usize % running.len());
                s.release(&c, &a).expect("allocated");
                continue;
            }
            let r = random_req(&mut x);
            let avoid: Vec<bool> = (0..c.nodes.len()).map(|_| next(&mut x) % 5 == 0).collect();
            let mut bits = vec![0u64; c.nodes.len().div_ceil(64)];
            for (i, _) in avoid.iter().enumerate().filter(|x| *x.1) {
                bits[i / 64] |= 1 << (i % 64);
            }
            for av in [None, Some(Skip::Flags(&avoid)), Some(Skip::Bits(&bits))] {
                let full = job_test(&mut full_cache, &c, &params, &r, part, View::Now(&s, av));
                let nodes =
                    job_test_nodes(&mut nodes_cache, &c, &params, &r, part, View::Now(&s, av));
                let want: Option<Vec<NodeId>> = full.as_ref().map(|a| a.node_ids().collect());
                assert_eq!(nodes, want, "request {r:?}");
                if nodes.is_some() {
                    agree_some += 1;
                } else {
                    agree_none += 1;
                }
                if let (Some(a), None) = (full, av) {
                    s.allocate(&c, &a).expect("free");
                    running.push(a);
                }
            }
        }
    }
    // Both outcomes were seen often.
    assert!(
        agree_some > 5_000 && agree_none > 5_000,
        "{agree_some} {agree_none}"
    );
}

/// `--exclusive --gpus=N`: whole nodes hold all their GPUs, which count
/// towards the per-job request (finishing the allocation failed on every
/// node before, as the whole node's GPUs were not counted).
#[test]
fn exclusive_jobs_with_gpus_per_job_take_whole_nodes() {
    let c = a100_cluster(2, 4, |_| 1);
    let p = test_params();
    let part = PartId::from_idx(0);
    let s = ClusterState::new(&c);
    let per_job = |gpus: u32, nodes: u32| JobRequest {
        min_nodes: nodes,
        max_nodes: nodes,
        gpus_per_job: Some(GpuReq {
            ty: None,
            count: gpus,
        }),
        exclusive: true,
        ..JobRequest::default()
    };
    let alloc = |r: &JobRequest| {
        job_test(
            &mut SelectCache::default(),
            &c,
            &p,
            r,
            part,
            View::Now(&s, None),
        )
    };
    let a = alloc(&per_job(2, 1)).expect("one idle node holds two GPUs");
    assert_eq!(a.nodes.len(), 1);
    assert_eq!(bits(a.nodes[0].gpus).count(), 4, "the whole node's GPUs");
    assert_eq!(a.nodes[0].cores.count(), 16, "the whole node's cores");
    let b = alloc(&per_job(6, 2)).expect("two idle nodes hold six GPUs");
    assert_eq!(b.nodes.len(), 2);
    assert!(b.nodes.iter().all(|na| bits(na.gpus).count() == 4));
    // More GPUs than the nodes have still fails.
    assert!(alloc(&per_job(9, 2)).is_none());
}

/// A request that [`finish::finish`]'s one-core path takes: one task per
/// node of one CPU, GPUs per node only (one or two requests, typed or not,
/// or none), with or without `--cpus-per-gpu`, any memory request.
fn one_core_req(x: &mut u64) -> JobRequest {
    let mut r = random_req(x);
    r.exclusive = false;
    r.ntasks = None;
    r.ntasks_per_node = None;
    r.cpus_per_task = 1;
    r.gpus_per_task = None;
    r.gpus_per_job = None;
    if r.gpus_per_node.is_empty() && next(x) % 4 != 0 {
        r.gpus_per_node = vec![GpuReq {
            ty: None,
            count: 1 + (next(x) % 4) as u32,
        }];
    }
    if next(x) % 3 == 0 {
        r.cpus_per_gpu = Some(1 + (next(x) % 6) as u32);
    }
    r
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// `finish`'s one-core path gives the allocation of the general one
    /// (the same nodes, cores, CPUs, memory and GPU indices) and fails
    /// where it fails: random clusters, one-core requests (and others, which
    /// both take the general path) and states filled by the allocations.
    #[test]
    fn one_core_finish_equals_general(seed in proptest::prelude::any::<u64>()) {
        let params = test_params();
        let part = PartId::from_idx(0);
        let mut x = seed | 1;
        let (mut some, mut none) = (0u32, 0u32);
        for _ in 0..8 {
            let c = random_cluster(&mut x);
            let mut s = ClusterState::new(&c);
            let mut running: Vec<Allocation> = Vec::new();
            let mut fast_cache = SelectCache::default();
            let mut general_cache = SelectCache::default();
            general_cache.scratch.fit.general_only = true;
            for _ in 0..40 {
                if next(&mut x) % 4 == 0 && !running.is_empty() {
                    let a = running.swap_remove(next(&mut x) as usize % running.len());
                    s.release(&c, &a).expect("allocated");
                    continue;
                }
                let r = if next(&mut x) % 5 == 0 {
                    random_req(&mut x)
                } else {
                    one_core_req(&mut x)
                };
                let view = View::Now(&s, None);
                let fast = job_test(&mut fast_cache, &c, &params, &r, part, view);
                let view = View::Now(&s, None);
                let general = job_test(&mut general_cache, &c, &params, &r, part, view);
                proptest::prop_assert_eq!(&fast, &general, "request {:?}", r);
                match fast {
                    Some(a) => {
                        some += 1;
                        s.allocate(&c, &a).expect("free");
                        running.push(a);
                    }
                    None => none += 1,
                }
            }
        }
        proptest::prop_assert!(some > 20 && none > 0, "{} {}", some, none);
    }
}
