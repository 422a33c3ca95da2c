//! Unit tests of `select` (select.rs).

use super::*;
use gresim_model::catalog::model_by_name;
use gresim_model::job::GpuReq;
use gresim_model::{GpuDevice, GpuType, GpuTypeId, Partition};

/// A node with `sockets`×`cps` cores (1 thread) and `gpus` devices; GPU i
/// sits on socket `sock(i)`.
fn node(name: &str, weight: u32, cps: u16, gpus: usize, sock: fn(usize) -> Option<u16>) -> Node {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    Node {
        name: name.into(),
        sockets: 2,
        cores_per_socket: cps,
        threads_per_core: 1,
        memory_mib: 100_000,
        features: vec![],
        weight,
        gpus: (0..gpus)
            .map(|i| GpuDevice {
                ty: GpuTypeId(0),
                model,
                socket: sock(i),
                phys: i as u8,
                mig: None,
            })
            .collect(),
        gpu_links: None,
        state: NodeAdminState::Up,
    }
}

fn cluster(nodes: Vec<Node>) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    let ids = (0..nodes.len()).map(NodeId::from_idx).collect();
    Cluster::new(
        nodes,
        vec![Partition {
            default: true,
            ..Partition::new("p", ids)
        }],
        vec![GpuType {
            name: "a100".into(),
            model,
            mig: None,
        }],
    )
}

fn gres(n: u32) -> JobRequest {
    JobRequest {
        mem: gresim_model::job::MemReq::PerNode(1000),
        gpus_per_node: vec![GpuReq { ty: None, count: n }],
        ..JobRequest::default()
    }
}

fn run(c: &Cluster, s: &mut ClusterState, r: &JobRequest) -> Allocation {
    let p = SchedParams::default();
    let a = select(
        &mut SelectCache::default(),
        c,
        &p,
        s,
        r,
        PartId::from_idx(0),
        None,
    )
    .expect("fits");
    s.allocate(c, &a).expect("consistent");
    a
}

fn idx(a: &Allocation, k: usize) -> Vec<u16> {
    gresim_model::state::gpu_indices(a.nodes[k].gpus)
        .map(u16::from)
        .collect()
}

/// Requests [`same_node_fit`] pairs get the same `node_may_fit` on nodes
/// with and without free GPUs, cores and memory; changing a field it
/// reads can change the answer, and then it does not pair them.
#[test]
fn same_node_fit_pairs_requests_node_may_fit_answers_alike() {
    let c = cluster(vec![node("n1", 1, 4, 4, |_| None)]);
    let p = SchedParams::default();
    let id = NodeId::from_idx(0);
    let idle = ClusterState::new(&c);
    let mut busy = ClusterState::new(&c);
    run(&c, &mut busy, &gres(3));
    let base = JobRequest {
        mem: MemReq::PerCpu(100),
        gpus_per_job: Some(GpuReq { ty: None, count: 2 }),
        ..JobRequest::default()
    };
    let counts_only = JobRequest {
        min_nodes: 3,
        ntasks: Some(12),
        cpus_per_task: 2,
        mem: MemReq::PerCpu(700),
        gpus_per_job: Some(GpuReq { ty: None, count: 9 }),
        ..base.clone()
    };
    let other = [
        JobRequest {
            exclusive: true,
            ..base.clone()
        },
        JobRequest {
            mem: MemReq::PerNode(1_000_000),
            ..base.clone()
        },
        JobRequest {
            gpus_per_node: vec![GpuReq { ty: None, count: 2 }],
            ..base.clone()
        },
    ];
    let fit = |s: &ClusterState, r: &JobRequest| node_may_fit(&c, &p, s.node(id), id, r);
    assert!(same_node_fit(&base, &counts_only));
    for s in [&idle, &busy] {
        assert_eq!(fit(s, &base), fit(s, &counts_only));
    }
    for r in &other {
        assert!(!same_node_fit(&base, r));
    }
    // Each field it reads changes the answer on some node state.
    assert!(other
        .iter()
        .all(|r| [&idle, &busy].iter().any(|s| fit(s, r) != fit(s, &base))));
}

/// `_set_node_bits`: the first GPU is the lowest free index, the rest are
/// the free GPUs best linked to it (two NVLink islands {0,2,4,6}/{1,3,5,7}).
#[test]
fn links_islands_decide_indices() {
    let mut n = node("n1", 1, 16, 8, |_| None);
    n.gpu_links = Some(
        (0..8)
            .map(|i| (0..8).map(|j| u8::from(i != j && i % 2 == j % 2)).collect())
            .collect(),
    );
    let c = cluster(vec![n]);
    let mut s = ClusterState::new(&c);
    assert_eq!(idx(&run(&c, &mut s, &gres(4)), 0), vec![0, 2, 4, 6]);
    assert_eq!(idx(&run(&c, &mut s, &gres(2)), 0), vec![1, 3]);
}

/// Without Links the same requests are first-fit by index.
#[test]
fn no_links_is_first_fit() {
    let c = cluster(vec![node("n1", 1, 16, 8, |_| None)]);
    let mut s = ClusterState::new(&c);
    assert_eq!(idx(&run(&c, &mut s, &gres(1)), 0), vec![0]);
    assert_eq!(idx(&run(&c, &mut s, &gres(2)), 0), vec![1, 2]);
}

/// `gres_select_filter_sock_core` (first pass): sockets with most free
/// cores are tried first and only sockets holding usable GPUs keep their
/// cores; cores are chosen before GPUs. With GPU 0 (socket 0) busy,
/// `gpu:4` gets a core on socket 1 and GPUs 4-7.
#[test]
fn cores_affinity_moves_cpu_and_gpus() {
    let c = cluster(vec![node("n1", 1, 16, 8, |i| Some((i / 4) as u16))]);
    let mut s = ClusterState::new(&c);
    let first = run(&c, &mut s, &gres(1));
    assert_eq!(
        (idx(&first, 0), first.nodes[0].cores.iter().next()),
        (vec![0], Some(0))
    );
    let a = run(&c, &mut s, &gres(4));
    assert_eq!(idx(&a, 0), vec![4, 5, 6, 7]);
    assert_eq!(a.nodes[0].cores.iter().collect::<Vec<_>>(), vec![16]);
}

/// `_eval_nodes`: the lowest-weight set wins; inside it a single-node job
/// takes the node with the fewest available CPUs that still fits (best fit).
#[test]
fn weight_then_best_fit() {
    let c = cluster(vec![
        node("n1", 10, 4, 0, |_| None),
        node("n2", 1, 4, 0, |_| None),
        node("n3", 1, 4, 0, |_| None),
    ]);
    let mut s = ClusterState::new(&c);
    let cpu = |n: u32| JobRequest {
        mem: gresim_model::job::MemReq::PerNode(10),
        ntasks: Some(n),
        ..JobRequest::default()
    };
    // Equal weight, equal size: the lowest index.
    assert_eq!(run(&c, &mut s, &cpu(6)).nodes[0].node, NodeId::from_idx(1));
    // n2 has 2 CPUs left, n3 has 8: best fit takes n2.
    assert_eq!(run(&c, &mut s, &cpu(1)).nodes[0].node, NodeId::from_idx(1));
    // 4 CPUs fit only on n3 among the weight-1 nodes.
    assert_eq!(run(&c, &mut s, &cpu(4)).nodes[0].node, NodeId::from_idx(2));
    // Weight 10 only when the weight-1 nodes cannot hold it.
    assert_eq!(run(&c, &mut s, &cpu(8)).nodes[0].node, NodeId::from_idx(0));
}

/// `--gpus=N` (`_set_job_bits1`): when no single node holds N GPUs the
/// job spreads over nodes in index order, each taking at most
/// (remaining − nodes after it).
#[test]
fn gpus_per_job_spreads_in_order() {
    let c = cluster(vec![
        node("n1", 1, 4, 4, |_| None),
        node("n2", 1, 4, 4, |_| None),
    ]);
    let mut s = ClusterState::new(&c);
    let r = JobRequest {
        mem: gresim_model::job::MemReq::PerNode(10),
        max_nodes: 6,
        gpus_per_job: Some(GpuReq { ty: None, count: 6 }),
        ..JobRequest::default()
    };
    let a = run(&c, &mut s, &r);
    assert_eq!(a.nodes.len(), 2);
    assert_eq!((idx(&a, 0), idx(&a, 1)), (vec![0, 1, 2, 3], vec![0, 1]));
    // A count one node can hold stays on one node.
    let mut s = ClusterState::new(&c);
    let r2 = JobRequest {
        gpus_per_job: Some(GpuReq { ty: None, count: 3 }),
        ..r
    };
    assert_eq!(run(&c, &mut s, &r2).nodes.len(), 1);
}

/// `--exclusive`: the job gets every CPU and every GPU of an idle node,
/// and never a node without the requested GRES.
#[test]
fn exclusive_takes_whole_node() {
    let c = cluster(vec![
        node("c1", 1, 4, 0, |_| None),
        node("g1", 5, 4, 4, |i| Some((i / 2) as u16)),
    ]);
    let mut s = ClusterState::new(&c);
    let r = JobRequest {
        exclusive: true,
        ..gres(1)
    };
    let a = run(&c, &mut s, &r);
    assert_eq!(a.nodes[0].node, NodeId::from_idx(1));
    assert_eq!(idx(&a, 0), vec![0, 1, 2, 3]);
    assert_eq!(a.nodes[0].cpus, 8);
    // Nothing else fits there now.
    let p = SchedParams::default();
    assert_eq!(
        select(
            &mut SelectCache::default(),
            &c,
            &p,
            &s,
            &gres(1),
            PartId::from_idx(0),
            None
        ),
        Err(SelectFail::Busy)
    );
}

/// A job with no memory option (pn_min_memory 0) takes the whole node's
/// memory and cannot share a node that has memory allocated.
#[test]
fn no_mem_option_needs_untouched_memory() {
    let c = cluster(vec![node("g1", 1, 4, 4, |_| None)]);
    let mut s = ClusterState::new(&c);
    run(&c, &mut s, &gres(1));
    let r = JobRequest {
        mem: gresim_model::job::MemReq::Default,
        ..gres(1)
    };
    let p = SchedParams::default();
    assert_eq!(
        select(
            &mut SelectCache::default(),
            &c,
            &p,
            &s,
            &r,
            PartId::from_idx(0),
            None
        ),
        Err(SelectFail::Busy)
    );
}
