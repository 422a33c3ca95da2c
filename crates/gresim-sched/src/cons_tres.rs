//! The node, core and GPU choice of Slurm 22.05's select/cons_tres, written
//! from its behaviour (src/plugins/select/cons_tres/job_test.c,
//! cons_common/gres_select_filter.c, cons_tres/gres_sched.c):
//!
//! 1. [`eval_node`] — `can_job_run_on_node` + `_select_cores` +
//!    `gres_select_filter_remove_unusable` + `gres_select_filter_sock_core`:
//!    the cores the job may use on a node (on the first pass only sockets
//!    holding usable GPUs keep their cores), the CPUs `_eval_nodes` counts,
//!    and the number of GPUs close to free cores (lowers the node's
//!    scheduling weight: `(Weight << 8) | (0xff - near_gpus)`).
//! 2. [`eval_nodes`] — `_eval_nodes`: consecutive sets of usable nodes in
//!    node-index order, cut where the scheduling weight changes; lowest weight
//!    set, then a sufficient one, then the one with the fewest CPUs (an
//!    insufficient bigger one replaces an insufficient smaller one); inside a
//!    set one remaining node is chosen by best fit, several in index order.
//!    Under topology/tree, `_eval_nodes_topo` instead (cons_tres/topo.rs);
//!    under topology/block, beyond 22.05, `eval_nodes_block`
//!    (cons_tres/block.rs).
//! 3. [`job_test`] — `choose_nodes`: first pass with GPU/socket affinity,
//!    then without it, then dropping nodes with few resources (knapsack).
//! 4. [`finish::finish_node`] — the cores (lowest ids of the usable ones) and the GPU
//!    indices: `_set_node_bits` (per node), `_set_task_bits` (per task),
//!    `_set_job_bits1`/`_set_job_bits2` (per job, NVLink trimming).
//!
//! This file holds `choose_nodes` ([`job_test`]); the parts live beside it:
//! `eval.rs` (one node for one job), `nodes.rs` (the candidates and node
//! sets), `finish.rs` (tasks, cores, memory), `gpu_bits.rs` (GPU indices),
//! `cache.rs` (what selection keeps between calls), `fit_tree.rs` (the
//! per-shape node-set trees on the live state), `topo.rs` and `block.rs`
//! (topology/tree and topology/block).

// The code mirrors Slurm's loops closely on purpose (index loops over
// sockets, explicit zero checks before divisions), which keeps it reviewable
// against job_test.c and gres_select_filter.c.
#![allow(
    clippy::manual_checked_ops,
    clippy::needless_range_loop,
    clippy::nonminimal_bool,
    clippy::question_mark,
    clippy::manual_is_multiple_of,
    clippy::too_many_arguments
)]

use gresim_model::job::JobRequest;
use gresim_model::{Allocation, Cluster, NodeId, PartId};

use crate::select::View;
use crate::SchedParams;

mod block;
mod cache;
mod eval;
mod finish;
mod fit_tree;
mod gpu_bits;
mod nodes;
mod topo;

pub use cache::SelectCache;
use cache::{EvalCache, Scratch};
use eval::{cannot_fit, eval_all, eval_node, Eval, GresList, JobCtx, Quick};
use eval::{n_sockets, type_mask};
use finish::{finish, FitScratch};
use gpu_bits::{job_bits1, job_bits2, node_bits, task_bits};
use nodes::{better_set, cpus_to_use, enough_nodes, eval_nodes, push_walked, Cand, EvalScratch};

/// Slurm's NO_VAL for task counts.
const NO_VAL: u32 = u32::MAX;
/// Most sockets we track per node (socket masks are `u64`).
/// Sockets per node the selector tracks (nodes with more are treated as having this many).
const MAX_SOCK: usize = 16;

/// `choose_nodes` + the final resource pick. The engine entry point.
pub(crate) fn job_test(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
) -> Option<Allocation> {
    job_test_with(cluster, params, req, part, view, cache, true)
}

/// [`job_test`] for a plan on a future state, which needs only the nodes:
/// the same selection, with `finish` asked only whether it would succeed
/// ([`finish::fits`], which gives `finish`'s own answer without making the
/// allocation). Returns the nodes the allocation would have, in its order.
pub(crate) fn job_test_nodes(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
) -> Option<Vec<NodeId>> {
    match choose(cluster, params, req, part, view, cache, true, Want::Nodes)? {
        Chosen::Nodes(ids) => Some(ids),
        Chosen::Alloc(a) => Some(a.node_ids().collect()),
    }
}

/// What a selection hands back.
#[derive(Clone, Copy, PartialEq)]
enum Want {
    /// The allocation: nodes, cores, memory, GPU indices.
    Alloc,
    /// Only its nodes (see [`job_test_nodes`]).
    Nodes,
}

enum Chosen {
    Alloc(Allocation),
    Nodes(Vec<NodeId>),
}

/// The picked candidates turned into what `want` asks for: the allocation
/// (with its GPU shares), or, where [`finish::fits`] says `finish` would
/// succeed, their nodes.
fn complete(
    j: &JobCtx<'_>,
    view: &View<'_>,
    cands: &[Cand],
    picked: &[usize],
    want: Want,
    fit: &mut FitScratch,
) -> Option<Chosen> {
    if want == Want::Nodes && j.req.shared.is_none() {
        return finish::fits(j, cands, picked, fit)
            .then(|| Chosen::Nodes(picked.iter().map(|&i| cands[i].id).collect()));
    }
    let mut alloc = finish(j, cands, picked, fit)?;
    if let Some(sr) = j.req.shared {
        crate::shares::assign(j.cluster, view, &mut alloc, sr)?;
    }
    Some(Chosen::Alloc(alloc))
}

fn job_test_with(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
    cache: &mut SelectCache,
    fast: bool,
) -> Option<Allocation> {
    match choose(cluster, params, req, part, view, cache, fast, Want::Alloc)? {
        Chosen::Alloc(a) => Some(a),
        Chosen::Nodes(_) => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn choose(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
    cache: &mut SelectCache,
    fast: bool,
    want: Want,
) -> Option<Chosen> {
    let SelectCache {
        scratch:
            Scratch {
                cands,
                usable,
                orig,
                ev,
                fit,
            },
        eval: eval_cache,
        trees,
    } = cache;
    let p = cluster.partition(part);
    let min_nodes = req.min_nodes.max(1);
    let mut max_nodes = req.max_nodes.max(min_nodes);
    if min_nodes as usize > p.nodes.len() {
        return None;
    }
    let mut j = JobCtx::new(cluster, params, req);
    j.row_use = cluster.row_use(part, req.oversubscribe);
    // Candidates in node-index order.
    cands.clear();
    for &id in req.nodelist.iter() {
        if !cluster.in_partition(part, id) || req.exclude.contains(&id) {
            return None;
        }
        if !req.features.iter().all(|f| cluster.node(id).has_feature(f)) {
            return None;
        }
    }
    if let Some(n) = req.ntasks {
        if req.ntasks_per_node.is_none() && max_nodes > n {
            max_nodes = n.max(min_nodes);
        }
    }
    // node_scheduler.c: req_nodes is the maximum the job gave, else its minimum.
    let req_nodes = if req.max_nodes_open {
        min_nodes
    } else {
        max_nodes
    };
    // Nodes the view offers (before any is found unable to hold the job).
    let mut offered = 0usize;
    let plain = req.nodelist.is_empty() && req.exclude.is_empty() && req.features.is_empty();
    // topology/tree: `_eval_nodes_topo` instead of the consecutive node sets
    // (and so not their per-shape trees); topology/block likewise.
    let tree = cluster.select_tree();
    let by_topology = tree.is_some() || cluster.select_blocks().is_some();
    if let (View::Now(state, None), false) = (view, by_topology) {
        // On the live state (not a clone, such as backfill's future states):
        // the first pass's choice comes from the per-shape tree of node
        // sets, without visiting every node (see fit_tree). When it finds
        // nothing, the full selection below.
        if fast
            && plain
            && req.shared.is_none()
            && cluster.dynamic_mig().is_none()
            && state.fit_index().walkable(cluster, part.idx())
            && state.fit_index().tracked()
        {
            // The tree has just evaluated the picked nodes through the
            // evaluation cache, so their evaluations come from it.
            let cand = |eval_cache: &mut EvalCache, shape: u32, id: NodeId| {
                let usage = *state.node(id);
                let eval =
                    eval_cache.get_or(shape, id, &usage, true, || eval_node(&j, id, &usage, true));
                Cand {
                    id,
                    required: false,
                    usage,
                    eval,
                }
            };
            if fit_tree::applies(&j, min_nodes, req_nodes) {
                if let Some((shape, id)) = fit_tree::pick(&j, state, part, trees, eval_cache) {
                    let picked = [cand(eval_cache, shape, id)];
                    return complete(&j, &view, &picked, &[0], want, fit);
                }
            } else if fit_tree::applies_many(&j) {
                // Several nodes: the tree's sets, and only the chosen
                // sets' nodes visited.
                if let Some((shape, ids)) = fit_tree::pick_nodes(
                    &j, state, part, min_nodes, max_nodes, req_nodes, trees, eval_cache,
                ) {
                    let picked: Vec<Cand> = ids
                        .into_iter()
                        .map(|id| cand(eval_cache, shape, id))
                        .collect();
                    let all: Vec<usize> = (0..picked.len()).collect();
                    return complete(&j, &view, &picked, &all, want, fit);
                }
            }
        }
    }
    match view {
        View::Now(state, avoid)
            if fast && plain && state.fit_index().walkable(cluster, part.idx()) =>
        {
            // The common case, over the live usage: a node that certainly
            // cannot hold the job (`cannot_fit`) is unusable, and in
            // `_eval_nodes` a run of unusable nodes does nothing but end the
            // current node set. So each such run is kept as a single unusable
            // candidate, without copying any usage. The state's index visits
            // only the nodes with enough free GPUs (the others fail
            // `cannot_fit`) and says where skipped nodes lie between them.
            // `offered` is not counted: with fewer offered nodes than
            // `min_nodes`, `eval_nodes` finds too few usable ones anyway.
            let q = Quick::of(&j);
            let mut in_gap = false;
            offered = usize::MAX;
            for (id, gap_before) in state.fit_index().walk(part.idx(), q.min_gpus, avoid) {
                if gap_before && !in_gap {
                    in_gap = true;
                    cands.push(Cand::gap(id));
                }
                let u = state.node(id);
                push_walked(cands, &mut in_gap, id, u, cannot_fit(&j, &q, id, u));
            }
        }
        View::Now(state, avoid) if fast && plain && p.nodes.is_sorted() => {
            // As above, for a partition the index cannot walk: one pass over
            // its node list.
            let mut in_gap = false;
            let q = Quick::of(&j);
            for &id in &p.nodes {
                if avoid.is_some_and(|a| a.has(id.idx())) {
                    continue;
                }
                let u = state.node(id);
                if !u.schedulable() {
                    continue;
                }
                offered += 1;
                push_walked(cands, &mut in_gap, id, u, cannot_fit(&j, &q, id, u));
            }
        }
        _ => {
            for &id in &p.nodes {
                if req.exclude.contains(&id) {
                    continue;
                }
                let node = cluster.node(id);
                if !req.features.iter().all(|f| node.has_feature(f)) {
                    continue;
                }
                let required = req.nodelist.contains(&id);
                match view.usage(cluster, id) {
                    Some(usage) => cands.push(Cand {
                        id,
                        required,
                        usage,
                        eval: None,
                    }),
                    None if required => return None,
                    None => {}
                }
            }
            offered = cands.len();
            // Partition node lists are normally in index order already.
            if !cands.is_sorted_by_key(|c| c.id) {
                cands.sort_by_key(|c| c.id);
            }
        }
    }
    if offered < min_nodes as usize {
        return None;
    }
    usable.clear();
    usable.resize(cands.len(), true);

    eval_all(&j, cands, true, eval_cache);
    if let Some(sr) = req.shared {
        // gres/shard, gres/mps: nodes without a GPU that can host them.
        for c in cands.iter_mut().filter(|c| c.eval.is_some()) {
            if !crate::shares::node_fits(cluster, &view, c.id, sr) {
                c.eval = None;
            }
        }
    }
    for (i, c) in cands.iter().enumerate() {
        if c.eval.is_none() && !c.required {
            usable[i] = false;
        }
    }
    let mut picked = eval_nodes(&j, cands, usable, min_nodes, max_nodes, req_nodes, ev);
    if picked.is_none() {
        if !j.gres.is_empty() {
            eval_all(&j, cands, false, eval_cache);
        }
        orig.clear();
        orig.extend(cands.iter().map(|c| c.eval.is_some()));
        usable.copy_from_slice(orig);
        let mut rem = orig.iter().filter(|x| **x).count() as u32;
        if rem <= min_nodes {
            picked = eval_nodes(&j, cands, usable, min_nodes, max_nodes, req_nodes, ev);
        } else {
            let most = cands
                .iter()
                .filter_map(|c| c.eval.map(|e| e.res))
                .max()
                .unwrap_or(0);
            let mut count = 1;
            while count < most.max(2) {
                usable.copy_from_slice(orig);
                let mut nochange = true;
                for i in 0..cands.len() {
                    if !usable[i] {
                        continue;
                    }
                    let r = cands[i].eval.map_or(0, |e| e.res);
                    if r > 0 && r <= count && !cands[i].required {
                        nochange = false;
                        usable[i] = false;
                        orig[i] = false;
                        rem -= 1;
                        if rem <= min_nodes {
                            break;
                        }
                    }
                }
                if !(nochange && count != 1) {
                    picked = eval_nodes(&j, cands, usable, min_nodes, max_nodes, req_nodes, ev);
                    if picked.is_some() || rem <= min_nodes {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    let picked = picked?;
    if let (Some(t), Some(sw)) = (tree, req.switches) {
        // `--switches`: while the job still waits (the policy drops the
        // request once its wait is over), more leaves than asked fail
        // (`best_switch = false`).
        if t.leaf_count(picked.iter().map(|&i| cands[i].id)) > sw.count {
            return None;
        }
    }
    complete(&j, &view, cands, &picked, want, fit)
}

#[cfg(test)]
mod tests;
