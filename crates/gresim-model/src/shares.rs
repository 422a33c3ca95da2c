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
mod tests;
