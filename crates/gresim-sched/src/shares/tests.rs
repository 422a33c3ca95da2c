//! Unit tests of `shares` (shares.rs).

use super::*;
use crate::select::{runnable_ever, select, SelectCache, SelectFail};
use crate::SchedParams;
use gresim_model::catalog::model_by_name;
use gresim_model::job::{GpuReq, JobRequest, MemReq};
use gresim_model::shares::ShareKind;
use gresim_model::{ClusterState, GpuDevice, GpuType, GpuTypeId, Node, NodeAdminState};
use gresim_model::{PartId, Partition};

/// `n` nodes with 4 GPUs (sockets 0,0,1,1), 16 cores, shares per GPU.
fn cluster(n: usize, kind: ShareKind, per_gpu: &[u32], one_sharing: bool) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    let nodes: Vec<Node> = (0..n)
        .map(|i| Node {
            name: format!("g{}", i + 1),
            sockets: 2,
            cores_per_socket: 8,
            threads_per_core: 1,
            memory_mib: 100_000,
            features: vec![],
            weight: 1,
            gpus: (0..4)
                .map(|k| GpuDevice {
                    ty: GpuTypeId(0),
                    model,
                    socket: Some(k / 2),
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
    c.set_shares(
        (0..n)
            .map(|_| {
                Some(NodeShares {
                    kind,
                    per_gpu: per_gpu.to_vec(),
                    one_sharing,
                })
            })
            .collect(),
    );
    c
}

fn shared(kind: ShareKind, n: u32) -> JobRequest {
    JobRequest {
        mem: MemReq::PerNode(100),
        shared: Some(SharedReq { kind, per_node: n }),
        ..JobRequest::default()
    }
}

fn gpus(n: u32) -> JobRequest {
    JobRequest {
        mem: MemReq::PerNode(100),
        gpus_per_node: vec![GpuReq { ty: None, count: n }],
        ..JobRequest::default()
    }
}

fn start(c: &Cluster, s: &mut ClusterState, r: &JobRequest) -> Result<Allocation, SelectFail> {
    let a = select(
        &mut SelectCache::default(),
        c,
        &SchedParams::default(),
        s,
        r,
        PartId::from_idx(0),
        None,
    )?;
    s.allocate(c, &a)
        .expect("the selection is consistent with the state");
    Ok(a)
}

fn share_of(a: &Allocation) -> (u8, u32) {
    let sa = a.nodes[0].share.expect("a share");
    (sa.gpu, sa.count)
}

/// Shards pack onto the lowest GPU near the job's cores until it is
/// full; a request is never split over two GPUs.
#[test]
fn shards_fill_one_gpu_then_the_next() {
    let c = cluster(1, ShareKind::Shard, &[8, 8, 8, 8], false);
    let mut s = ClusterState::new(&c);
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Shard, 5)).unwrap()),
        (0, 5)
    );
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Shard, 3)).unwrap()),
        (0, 3)
    );
    // GPU 0 is full; 6 does not fit in GPU 0's remainder.
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Shard, 6)).unwrap()),
        (1, 6)
    );
    assert_eq!(s.share_used(&c, NodeId(0)), &[8, 6, 0, 0]);
    assert_eq!(s.node(NodeId(0)).free_gpus, 0b1100);
}

/// A GPU hosting shares is not available as gres/gpu, and a GPU
/// allocated as gres/gpu hosts no shares.
#[test]
fn gpu_and_shares_exclude_each_other() {
    let c = cluster(1, ShareKind::Shard, &[8, 8, 8, 8], false);
    let mut s = ClusterState::new(&c);
    start(&c, &mut s, &shared(ShareKind::Shard, 1)).unwrap();
    // Three whole GPUs left, not four.
    assert_eq!(start(&c, &mut s, &gpus(4)), Err(SelectFail::Busy));
    let g = start(&c, &mut s, &gpus(3)).unwrap();
    assert_eq!(g.nodes[0].gpus, 0b1110);
    // GPU 0 still has 7 shards; nothing else can host any.
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Shard, 7)).unwrap()),
        (0, 7)
    );
    assert_eq!(
        start(&c, &mut s, &shared(ShareKind::Shard, 1)),
        Err(SelectFail::Busy)
    );
}

/// mps is one_sharing by default: once a GPU of the node runs mps,
/// further mps jobs go to that GPU only; all_sharing lifts it.
#[test]
fn mps_one_sharing_uses_the_busy_gpu() {
    let c = cluster(1, ShareKind::Mps, &[100; 4], true);
    let mut s = ClusterState::new(&c);
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Mps, 60)).unwrap()),
        (0, 60)
    );
    assert_eq!(
        start(&c, &mut s, &shared(ShareKind::Mps, 50)),
        Err(SelectFail::Busy)
    );
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Mps, 40)).unwrap()),
        (0, 40)
    );
    let c = cluster(1, ShareKind::Mps, &[100; 4], false);
    let mut s = ClusterState::new(&c);
    start(&c, &mut s, &shared(ShareKind::Mps, 60)).unwrap();
    assert_eq!(
        share_of(&start(&c, &mut s, &shared(ShareKind::Mps, 50)).unwrap()),
        (1, 50)
    );
}

/// More than one GPU's count but not more than the node's: accepted
/// (test-only mode counts the node), never started. More than the
/// node's: never runnable. The wrong kind: never runnable.
#[test]
fn runnable_uses_the_node_total() {
    let c = cluster(1, ShareKind::Shard, &[8, 8, 8, 8], false);
    let p = SchedParams::default();
    let part = PartId::from_idx(0);
    assert!(runnable_ever(
        &mut SelectCache::default(),
        &c,
        &p,
        &shared(ShareKind::Shard, 12),
        part
    ));
    let s = ClusterState::new(&c);
    assert_eq!(
        select(
            &mut SelectCache::default(),
            &c,
            &p,
            &s,
            &shared(ShareKind::Shard, 12),
            part,
            None
        ),
        Err(SelectFail::Busy)
    );
    assert!(!runnable_ever(
        &mut SelectCache::default(),
        &c,
        &p,
        &shared(ShareKind::Shard, 33),
        part
    ));
    assert!(!runnable_ever(
        &mut SelectCache::default(),
        &c,
        &p,
        &shared(ShareKind::Mps, 1),
        part
    ));
}

/// The GPU is taken near the job's cores: with socket 0's cores all
/// busy (one 8-CPU task packed into socket 0), the job's core is on
/// socket 1 and so is its GPU.
#[test]
fn gpu_follows_the_cores_socket() {
    let c = cluster(1, ShareKind::Shard, &[8, 8, 8, 8], false);
    let mut s = ClusterState::new(&c);
    let cpu = JobRequest {
        mem: MemReq::PerNode(100),
        cpus_per_task: 8,
        ..JobRequest::default()
    };
    let a = start(&c, &mut s, &cpu).unwrap();
    assert_eq!(a.nodes[0].cores.iter().max(), Some(7));
    let b = start(&c, &mut s, &shared(ShareKind::Shard, 2)).unwrap();
    assert!(b.nodes[0].cores.iter().all(|x| x >= 8));
    assert_eq!(share_of(&b), (2, 2));
}

/// Releasing the last share of a GPU gives it back as a whole GPU.
#[test]
fn release_returns_the_gpu() {
    let c = cluster(1, ShareKind::Shard, &[8, 8, 8, 8], false);
    let mut s = ClusterState::new(&c);
    let a = start(&c, &mut s, &shared(ShareKind::Shard, 3)).unwrap();
    let b = start(&c, &mut s, &shared(ShareKind::Shard, 3)).unwrap();
    s.release(&c, &a).unwrap();
    assert_eq!(s.node(NodeId(0)).free_gpus, 0b1110);
    s.release(&c, &b).unwrap();
    assert_eq!(s.node(NodeId(0)).free_gpus, 0b1111);
    assert!(
        s.release(&c, &b).is_err(),
        "double free of shares is refused"
    );
    assert_eq!(start(&c, &mut s, &gpus(4)).unwrap().nodes[0].gpus, 0b1111);
}
