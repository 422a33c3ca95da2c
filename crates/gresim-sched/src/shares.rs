//! Shared GRES (gres/shard, gres/mps) in node selection, as Slurm 22.05's
//! cons_tres does it (gres_sched.c `_build_sock_gres_by_topo`,
//! gres_select_filter.c `gres_select_filter_remove_unusable` and
//! `_pick_specific_topo`). See `gresim_model::shares` for the rules.
//!
//! cons_tres calls this module at two points, for jobs with a shared
//! request only: [`node_fits`] drops candidate nodes that cannot host the
//! shares after the CPU/memory evaluation, and [`assign`] picks the GPU on
//! each chosen node. Jobs without shares never come here.
//!
//! Simplifications: the socket filter `gres_select_filter_sock_core` is not
//! applied to shared requests (they do not restrict which cores the job
//! gets); the GPU is chosen by `_pick_specific_topo`'s order.

use gresim_model::shares::{NodeShares, ShareAlloc, SharedReq};
use gresim_model::{Allocation, Cluster, NodeId};

use crate::select::View;

/// The GPUs of a node that could host `per_node` more shares now: not
/// allocated as `gpu`, with enough left, and (one_sharing) already hosting
/// shares when any GPU of the node does.
fn usable_gpus(ns: &NodeShares, used: &[u32], free_gpus: u64, per_node: u32) -> u64 {
    let busy = ns.one_sharing && used.iter().any(|&u| u > 0);
    let mut m = 0u64;
    for (g, &cap) in ns.per_gpu.iter().enumerate().take(64) {
        let u = used.get(g).copied().unwrap_or(0);
        if cap == 0 || (busy && u == 0) {
            continue;
        }
        if u == 0 && free_gpus & (1 << g) == 0 {
            // Allocated as gres/gpu.
            continue;
        }
        if cap - u.min(cap) >= per_node {
            m |= 1 << g;
        }
    }
    m
}

/// Whether node `id` can host `sr` in `view`. In the idle views (Slurm's
/// test-only mode, `use_total_gres`) the node's whole count counts, not one
/// GPU's: Slurm does not apply the one-GPU limit there (bug 15283), so a
/// request larger than any single GPU but not than the node is accepted at
/// submission and then waits with reason Resources.
pub(crate) fn node_fits(cluster: &Cluster, view: &View<'_>, id: NodeId, sr: SharedReq) -> bool {
    let Some(ns) = cluster.node_shares(id) else {
        return false;
    };
    if ns.kind != sr.kind || sr.per_node == 0 {
        return false;
    }
    match *view {
        View::Now(state, _) => {
            let used = state.share_used(cluster, id);
            usable_gpus(ns, used, state.node(id).free_gpus, sr.per_node) != 0
        }
        View::IdleAvail(_) | View::IdleAll => ns.total() >= u64::from(sr.per_node),
    }
}

/// Picks the GPU for `sr` on every node of `alloc` (`_pick_specific_topo`):
/// the lowest-index usable GPU close to no particular socket, else one on
/// a socket holding the job's cores (sockets in order), else any usable
/// GPU. An exclusive job gets whole GPUs and no shares (Slurm's whole-node
/// allocation never allocates shared GRES). In the idle views (test-only:
/// the answer is yes or no, nothing is allocated) no GPU is picked, as
/// Slurm picks none in test-only mode. `None` when some node has no usable
/// GPU (the views disagree; not expected).
pub(crate) fn assign(
    cluster: &Cluster,
    view: &View<'_>,
    alloc: &mut Allocation,
    sr: SharedReq,
) -> Option<()> {
    let View::Now(state, _) = *view else {
        return Some(());
    };
    if alloc.exclusive {
        return Some(());
    }
    for na in &mut alloc.nodes {
        let node = cluster.node(na.node);
        let ns = cluster.node_shares(na.node)?;
        let usable = usable_gpus(
            ns,
            state.share_used(cluster, na.node),
            state.node(na.node).free_gpus,
            sr.per_node,
        );
        let mut job_socks = 0u64;
        for c in na.cores.iter() {
            job_socks |= 1u64 << node.socket_of_core(c).min(63);
        }
        let pick = gresim_model::state::gpu_indices(usable)
            .find(|&g| node.gpus[usize::from(g)].socket.is_none())
            .or_else(|| {
                (0..node.sockets.min(64)).find_map(|s| {
                    if job_socks & (1 << s) == 0 {
                        return None;
                    }
                    gresim_model::state::gpu_indices(usable)
                        .find(|&g| node.gpus[usize::from(g)].socket == Some(s))
                })
            })
            .or_else(|| gresim_model::state::gpu_indices(usable).next())?;
        na.share = Some(ShareAlloc {
            gpu: pick,
            count: sr.per_node,
        });
    }
    Some(())
}

#[cfg(test)]
mod tests;
