//! Unit tests of `shares` (shares.rs).

use super::*;

#[test]
fn spreads_like_slurm() {
    assert_eq!(spread_evenly(10, 4), vec![2, 2, 3, 3]);
    assert_eq!(spread_evenly(64, 2), vec![32, 32]);
    assert_eq!(spread_evenly(400, 4), vec![100; 4]);
    assert_eq!(spread_evenly(1, 3), vec![0, 0, 1]);
    assert!(spread_evenly(5, 0).is_empty());
    for (n, g) in [(7u64, 3usize), (100, 7), (3, 8)] {
        assert_eq!(
            spread_evenly(n, g)
                .iter()
                .map(|&c| u64::from(c))
                .sum::<u64>(),
            n
        );
    }
}

#[test]
fn mps_percentages() {
    // gres.shtml: 200 of a GPU with Count=1300 is 15 %.
    assert_eq!(mps_percentage(200, 1300), 15);
    assert_eq!(mps_percentage(50, 100), 50);
    assert_eq!(mps_percentage(1, 1000), 1);
    assert_eq!(mps_percentage(1, 0), 0);
}

use crate::catalog::model_by_name;
use crate::cluster::{Cluster, GpuDevice, GpuType, Node, NodeAdminState};
use crate::ids::{GpuTypeId, NodeId};
use crate::state::{Allocation, ClusterState, CoreSet, NodeAlloc};
use proptest::prelude::*;

const CAPS: [u32; 3] = [4, 7, 0];

/// Two nodes of three GPUs whose shard counts are [`CAPS`].
fn cluster() -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").unwrap();
    let node = |name: &str| Node {
        name: name.into(),
        sockets: 1,
        cores_per_socket: 4,
        threads_per_core: 1,
        memory_mib: 1000,
        features: vec![],
        weight: 1,
        gpus: (0..3)
            .map(|i| GpuDevice {
                ty: GpuTypeId(0),
                model,
                socket: None,
                phys: i,
                mig: None,
            })
            .collect(),
        gpu_links: None,
        state: NodeAdminState::Up,
    };
    let mut c = Cluster::new(
        vec![node("n1"), node("n2")],
        vec![],
        vec![GpuType {
            name: "a100".into(),
            model,
            mig: None,
        }],
    );
    let sh = NodeShares {
        kind: ShareKind::Shard,
        per_gpu: CAPS.to_vec(),
        one_sharing: false,
    };
    c.set_shares(vec![Some(sh.clone()), Some(sh)]);
    c
}

fn alloc(node: usize, gpus: u64, share: Option<(u8, u32)>) -> Allocation {
    Allocation {
        nodes: vec![NodeAlloc {
            node: NodeId::from_idx(node),
            cores: CoreSet::default(),
            cpus: 0,
            mem_mib: 0,
            gpus,
            tasks: 1,
            share: share.map(|(gpu, count)| ShareAlloc { gpu, count }),
        }],
        exclusive: false,
        row_use: crate::state::RowUse::NONE,
    }
}

#[derive(Debug, Clone)]
enum Op {
    Share(usize, u8, u32),
    Whole(usize, u8),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..2usize, 0..3u8, 0..6u32).prop_map(|(n, g, c)| Op::Share(n, g, c)),
        1 => (0..2usize, 0..3u8).prop_map(|(n, g)| Op::Whole(n, g)),
        2 => (0..64usize).prop_map(Op::Release),
    ]
}

proptest! {
    /// Under any sequence of share and whole-GPU allocations and
    /// releases, `allocate` accepts exactly what fits: shares never
    /// exceed a GPU's count, and a GPU is never both whole and shared.
    #[test]
    fn shares_are_never_overcommitted(ops in proptest::collection::vec(op(), 1..80)) {
        let c = cluster();
        let mut s = ClusterState::new(&c);
        let mut used = [[0u32; 3]; 2];
        let mut whole = [[false; 3]; 2];
        let mut live: Vec<(Allocation, usize, u8, Option<u32>)> = Vec::new();
        for op in ops {
            match op {
                Op::Share(n, g, k) => {
                    let gi = usize::from(g);
                    let fits = k > 0 && !whole[n][gi] && used[n][gi] + k <= CAPS[gi];
                    let a = alloc(n, 0, Some((g, k)));
                    prop_assert_eq!(s.allocate(&c, &a).is_ok(), fits, "share {} {} {}", n, g, k);
                    if fits {
                        used[n][gi] += k;
                        live.push((a, n, g, Some(k)));
                    }
                }
                Op::Whole(n, g) => {
                    let gi = usize::from(g);
                    let fits = !whole[n][gi] && used[n][gi] == 0;
                    let a = alloc(n, 1 << g, None);
                    prop_assert_eq!(s.allocate(&c, &a).is_ok(), fits, "whole {} {}", n, g);
                    if fits {
                        whole[n][gi] = true;
                        live.push((a, n, g, None));
                    }
                }
                Op::Release(i) => {
                    if live.is_empty() {
                        continue;
                    }
                    let (a, n, g, k) = live.remove(i % live.len());
                    s.release(&c, &a).unwrap();
                    // A second release must fail unless other jobs still
                    // hold as many shares of that GPU (counts cannot tell).
                    if k.is_none_or(|k| used[n][usize::from(g)] < 2 * k) {
                        prop_assert!(s.release(&c, &a).is_err());
                    }
                    match k {
                        Some(k) => used[n][usize::from(g)] -= k,
                        None => whole[n][usize::from(g)] = false,
                    }
                }
            }
            for n in 0..2 {
                let id = NodeId::from_idx(n);
                prop_assert_eq!(s.share_used(&c, id), &used[n][..]);
                for g in 0..3 {
                    prop_assert!(used[n][g] <= CAPS[g]);
                    let free = s.node(id).free_gpus & (1 << g) != 0;
                    prop_assert_eq!(free, !whole[n][g] && used[n][g] == 0);
                }
            }
        }
    }
}

#[test]
fn names() {
    assert_eq!(ShareKind::from_name("SHARD"), Some(ShareKind::Shard));
    assert_eq!(ShareKind::from_name("mps"), Some(ShareKind::Mps));
    assert_eq!(ShareKind::from_name("gpu"), None);
    assert!(ShareKind::Mps.default_one_sharing() && !ShareKind::Shard.default_one_sharing());
}
