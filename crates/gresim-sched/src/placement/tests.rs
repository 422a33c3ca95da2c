//! Unit tests of `placement` (placement.rs).

use super::*;
use gresim_model::catalog::model_by_name;
use gresim_model::job::{GpuReq, MemReq};
use gresim_model::topology::Topology;
use gresim_model::{GpuDevice, GpuType, Node, NodeAdminState, Partition};
use std::sync::Arc;

fn cluster(n: usize, preset: &str) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").expect("model");
    let t = Arc::new(Topology::preset(preset).expect("preset"));
    let g = t.gpu_count();
    let nodes: Vec<Node> = (0..n)
        .map(|i| Node {
            name: format!("n{}", i + 1),
            sockets: 2,
            cores_per_socket: 16,
            threads_per_core: 1,
            memory_mib: 100_000,
            features: vec![],
            weight: 1,
            gpus: (0..g)
                .map(|k| GpuDevice {
                    ty: GpuTypeId(0),
                    model,
                    socket: t.gpu_socket(k),
                    phys: k as u8,
                    mig: None,
                })
                .collect(),
            gpu_links: None,
            state: NodeAdminState::Up,
        })
        .collect();
    let mut c = Cluster::new(
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
    );
    c.set_topologies(vec![Some(t); n]);
    c
}

fn gres(k: u32) -> JobRequest {
    JobRequest {
        mem: MemReq::PerNode(100),
        gpus_per_node: vec![GpuReq { ty: None, count: k }],
        ..JobRequest::default()
    }
}

fn start(c: &Cluster, s: &mut ClusterState, p: Placement, r: &JobRequest) -> Allocation {
    let a = place(
        &mut SelectCache::default(),
        &p,
        c,
        &SchedParams::default(),
        s,
        r,
        PartId::from_idx(0),
        None,
    )
    .expect("fits");
    s.allocate(c, &a).expect("free");
    a
}

/// Workstation with NVLink pairs {0,1} and {2,3}: after a 1-GPU job
/// takes GPU 0, slurm gives the next 2-GPU job GPUs 1,2 (lowest free
/// indices, PCIe between them, 32 GB/s); topology-aware gives 2,3 (NVLink, 600 GB/s).
#[test]
fn topology_aware_keeps_pairs_on_nvlink() {
    let c = cluster(1, "workstation-4gpu-nvlink");
    for (p, want) in [
        (Placement::Slurm, 0b0110u64),
        (Placement::TopologyAware, 0b1100),
    ] {
        let mut s = ClusterState::new(&c);
        start(&c, &mut s, p.clone(), &gres(1));
        let a = start(&c, &mut s, p.clone(), &gres(2));
        assert_eq!(a.nodes[0].gpus, want, "{}", p.name());
    }
}

/// Two PCIe servers: n1 has 4 GPUs of socket 0 busy... a 4-GPU job
/// should go to a node where one socket's 4 GPUs are free.
#[test]
fn topology_aware_prefers_a_whole_socket() {
    let c = cluster(2, "pcie-8gpu");
    let mut s = ClusterState::new(&c);
    // Occupy GPUs 0,1 (switch 0) and 4,5 on n1 by hand: free 2,3,6,7 — a 4-ring crosses sockets.
    let mut a = place(
        &mut SelectCache::default(),
        &Placement::Slurm,
        &c,
        &SchedParams::default(),
        &s,
        &gres(4),
        PartId::from_idx(0),
        None,
    )
    .expect("fits");
    a.nodes[0].gpus = 0b0011_0011;
    s.allocate(&c, &a).expect("free");
    let b = start(&c, &mut s, Placement::TopologyAware, &gres(4));
    assert_eq!(b.nodes[0].node, NodeId::from_idx(1));
    let bw = c
        .topology(NodeId::from_idx(1))
        .ring(
            &gpu_indices(b.nodes[0].gpus)
                .map(usize::from)
                .collect::<Vec<_>>(),
            false,
        )
        .gbs;
    assert_eq!(bw, 32.0);
    // Best fit would have packed it onto n1 (4 free GPUs there).
    let mut s2 = ClusterState::new(&c);
    s2.allocate(&c, &a).expect("free");
    let d = start(&c, &mut s2, Placement::BestFit, &gres(4));
    assert_eq!(d.nodes[0].node, NodeId::from_idx(0));
    // Spread goes to the emptiest node, first-fit to the first that fits.
    let mut s3 = ClusterState::new(&c);
    s3.allocate(&c, &a).expect("free");
    assert_eq!(
        start(&c, &mut s3, Placement::Spread, &gres(1)).nodes[0].node,
        NodeId::from_idx(1)
    );
    assert_eq!(
        start(&c, &mut s3, Placement::FirstFit, &gres(1)).nodes[0].node,
        NodeId::from_idx(0)
    );
}

/// A job that does not fit fails with select's reason under every placement.
#[test]
fn failures_match_slurm() {
    let c = cluster(1, "workstation-4gpu-nvlink");
    let s = ClusterState::new(&c);
    for p in [
        Placement::FirstFit,
        Placement::BestFit,
        Placement::Spread,
        Placement::TopologyAware,
    ] {
        let r = place(
            &mut SelectCache::default(),
            &p,
            &c,
            &SchedParams::default(),
            &s,
            &gres(5),
            PartId::from_idx(0),
            None,
        );
        assert_eq!(
            r,
            select(
                &mut SelectCache::default(),
                &c,
                &SchedParams::default(),
                &s,
                &gres(5),
                PartId::from_idx(0),
                None
            )
        );
    }
}
