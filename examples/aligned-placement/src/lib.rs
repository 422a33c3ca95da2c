//! `aligned`: a GPU placement written outside gresim, against its public
//! API only (docs/extending.md walks through it).
//!
//! Slurm's cons_tres takes the lowest free GPU indices on the node it
//! picks. On many boards GPUs are wired in aligned groups (NVLink pairs
//! 0-1 and 2-3, islands 0-3 and 4-7), so a 2-GPU job on GPUs 1 and 2 talks
//! over PCIe. `aligned` is a buddy allocator that knows nothing of the
//! wiring: a single-node job taking `g` GPUs gets the first `g` GPUs of a
//! free block of `next_power_of_two(g)` GPUs starting at a multiple of that
//! size, on the node where such a block leaves the fewest GPUs free (best
//! fit, to keep whole blocks for later jobs). Where no node has a free
//! aligned block, or the job spans nodes, it keeps Slurm's choice.
//!
//! It plugs into Slurm's passes (queue order, main pass, backfill) through
//! [`CustomPlacement`]: gresim asks it only for jobs that cons_tres can
//! place now, and checks the answer ([`gresim::placement::apply_choice`]) before
//! anything is allocated.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use gresim::model::{Allocation, Cluster, NodeId};
use gresim::placement::{Choice, CustomPlacement, PlaceQuery, Placement};

/// The buddy placement. Counts what it did, for reports and tests.
#[derive(Default)]
pub struct Aligned {
    /// Jobs it was asked about.
    pub asked: AtomicU64,
    /// Jobs it placed on an aligned block (the rest kept Slurm's choice).
    pub aligned: AtomicU64,
    failure: Mutex<Option<String>>,
}

impl Aligned {
    /// `Fifo::with_placement(Placement::Custom(..))`: Slurm's passes with
    /// this placement, ready for `Simulation::custom_policy`.
    pub fn policy(this: std::sync::Arc<Aligned>) -> Box<gresim::Fifo> {
        Box::new(gresim::Fifo::with_placement(Placement::Custom(this)))
    }
}

/// The GPUs of `alloc` on its only node, as `(node, mask)`; `None` for a
/// job on several nodes or without GPUs.
fn single_node_gpus(alloc: &Allocation) -> Option<(NodeId, u64)> {
    match alloc.nodes.as_slice() {
        [na] if na.gpus != 0 => Some((na.node, na.gpus)),
        _ => None,
    }
}

/// The first free aligned block of `size` GPUs in `free` (a mask over the
/// node's GPU indices), restricted to GPUs of the type at `like`.
fn aligned_block(
    cluster: &Cluster,
    node: NodeId,
    free: u64,
    size: u32,
    like: usize,
) -> Option<u64> {
    let gpus = &cluster.node(node).gpus;
    let ty = gpus.get(like)?.ty;
    let same_type = (0..gpus.len().min(64))
        .filter(|&i| gpus[i].ty == ty)
        .fold(0u64, |m, i| m | 1 << i);
    let usable = free & same_type;
    let block = if size >= 64 {
        u64::MAX
    } else {
        (1u64 << size) - 1
    };
    (0..gpus.len() as u32)
        .step_by(size as usize)
        .map(|start| block.checked_shl(start).unwrap_or(0))
        .find(|&m| m != 0 && m & usable == m)
}

impl CustomPlacement for Aligned {
    fn name(&self) -> &'static str {
        "aligned"
    }

    fn choose(&self, q: &PlaceQuery<'_>) -> Choice {
        self.asked.fetch_add(1, Ordering::Relaxed);
        let Some((_, slurm_mask)) = single_node_gpus(q.slurm) else {
            return Choice::Slurm;
        };
        let g = slurm_mask.count_ones();
        let size = g.next_power_of_two();
        // The type cons_tres chose (a job may allow several): stay on it.
        let like = slurm_mask.trailing_zeros() as usize;
        let mut best: Option<(u32, NodeId, u64)> = None;
        for (&node, &free) in q.candidates.iter().zip(q.free_gpus) {
            let Some(block) = aligned_block(q.cluster, node, free, size, like) else {
                continue;
            };
            let left = free.count_ones() - g;
            if best.is_none_or(|(l, _, _)| left < l) {
                best = Some((left, node, block));
            }
        }
        let Some((_, node, block)) = best else {
            return Choice::Slurm;
        };
        // The first g GPUs of the block.
        let mut take = 0u64;
        let mut m = block;
        for _ in 0..g {
            let low = m & m.wrapping_neg();
            take |= low;
            m &= !low;
        }
        self.aligned.fetch_add(1, Ordering::Relaxed);
        Choice::Nodes(vec![(node, take)])
    }

    fn refused(&self, why: String) {
        let mut f = self.failure.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(why);
    }

    fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_to_their_size() {
        let s = gresim::load_runnable_scenario(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../scenarios/topology_4node.json")
                .as_path(),
        )
        .unwrap();
        let c = &s.cluster;
        let n = NodeId(0);
        // GPUs 1 and 2 free, 0 and 3 busy: no aligned pair.
        assert_eq!(aligned_block(c, n, 0b0110, 2, 1), None);
        assert_eq!(aligned_block(c, n, 0b1110, 2, 1), Some(0b1100));
        assert_eq!(aligned_block(c, n, 0b1111, 4, 0), Some(0b1111));
        assert_eq!(aligned_block(c, n, 0b0111, 4, 0), None);
        assert_eq!(aligned_block(c, n, 0b0100, 1, 2), Some(0b0100));
    }
}
