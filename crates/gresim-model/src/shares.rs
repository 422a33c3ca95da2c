//! GPU sharing: gres/shard and gres/mps, as Slurm 22.05 models them.
//!
//! A node may configure one shared GRES (`shard` or `mps`) on top of its
//! `gpu` devices: a count of shares per GPU device (gres.conf `Name=shard
//! Count=N` spread evenly over the GPUs, or per `File=`). Slurm's rules,
//! from src/plugins/gres/common/gres_c_s.c, src/common/gres.c and
//! src/plugins/select/cons_tres/gres_sched.c, cons_common/gres_select_filter.c:
//!
//! - a GPU allocated as `gpu` hosts no shares, and a GPU with any share
//!   allocated is not available as `gpu` ("shared" vs "sharing" GRES);
//! - a job's shares on one node come from **one** GPU (`max_node_gres` is
//!   the most any single GPU has free), so `--gres=mps:50` is 50 of one
//!   GPU's count, never 20 + 30 of two;
//! - gres/mps defaults to `one_sharing`: once the node has any mps
//!   allocated, further mps jobs must use a GPU that already hosts mps
//!   (`gres_use_busy_dev`); gres.conf `Flags=all_sharing` lifts it, and
//!   `Flags=one_sharing` sets it for shards;
//! - shares are never over-committed: the shares allocated on a GPU never
//!   exceed its configured count.
//!
//! [`crate::state::ClusterState`] keeps the per-GPU used counts.

use crate::ids::GpuIndex;

/// The shared GRES kinds Slurm 22.05 knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ShareKind {
    /// gres/shard: a count of equal slots per GPU, not fenced.
    Shard,
    /// gres/mps: CUDA MPS; the count per GPU is usually 100 (percent).
    Mps,
}

impl ShareKind {
    /// The GRES name (`shard`, `mps`).
    pub fn as_str(self) -> &'static str {
        match self {
            ShareKind::Shard => "shard",
            ShareKind::Mps => "mps",
        }
    }

    /// The kind of a GRES name, case-insensitively.
    pub fn from_name(name: &str) -> Option<ShareKind> {
        if name.eq_ignore_ascii_case("shard") {
            Some(ShareKind::Shard)
        } else if name.eq_ignore_ascii_case("mps") {
            Some(ShareKind::Mps)
        } else {
            None
        }
    }

    /// Slurm's default for `one_sharing` (mps: yes, shard: no).
    pub fn default_one_sharing(self) -> bool {
        self == ShareKind::Mps
    }
}

impl std::fmt::Display for ShareKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The shared GRES one node configures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShares {
    pub kind: ShareKind,
    /// Shares per GPU device, in GRES index order (0: the GPU hosts none).
    pub per_gpu: Vec<u32>,
    /// `one_sharing`: while any share is allocated on the node, new ones go
    /// only to GPUs that already host some.
    pub one_sharing: bool,
}

impl NodeShares {
    /// The node's total count (slurm.conf `Gres=shard:N`).
    pub fn total(&self) -> u64 {
        self.per_gpu.iter().map(|&c| u64::from(c)).sum()
    }

    /// The count of GPU `g` (0 when out of range).
    pub fn capacity(&self, g: GpuIndex) -> u32 {
        self.per_gpu.get(usize::from(g)).copied().unwrap_or(0)
    }
}

/// A job's request for shared GRES, per node (`--gres=shard:N`, `--gres=mps:N`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SharedReq {
    pub kind: ShareKind,
    /// Shares per node (all from one GPU).
    pub per_node: u32,
}

/// The shares one job holds on one node: `count` of GPU `gpu`'s shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShareAlloc {
    pub gpu: GpuIndex,
    pub count: u32,
}

/// Spreads `count` shares over `gpus` devices as Slurm does for a gres.conf
/// line without `File=` (or slurm.conf `Gres=` alone): device `i` of `n`
/// gets `rest / (n − i)` of what is left, so the remainder goes to the last
/// devices (`10` over 4 → `2,2,3,3`).
pub fn spread_evenly(count: u64, gpus: usize) -> Vec<u32> {
    let mut left = count;
    (0..gpus)
        .map(|i| {
            let c = left / (gpus - i) as u64;
            left -= c;
            u32::try_from(c).unwrap_or(u32::MAX)
        })
        .collect()
}

/// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` for `count` mps of a GPU whose mps
/// count is `capacity`: `count × 100 / capacity`, at least 1 (gres_mps.c).
pub fn mps_percentage(count: u32, capacity: u32) -> u32 {
    if capacity == 0 {
        return 0;
    }
    ((u64::from(count) * 100 / u64::from(capacity)) as u32).max(1)
}

#[cfg(test)]
mod tests {
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
}
