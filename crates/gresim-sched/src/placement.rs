//! Named placement strategies beside Slurm's own node choice.
//!
//! Every strategy first asks cons_tres ([`select`]) whether the job fits at
//! all, so a job that cannot start gets exactly Slurm's answer (and reason).
//! When it fits, the strategy chooses among the nodes that could hold it by
//! re-running cons_tres on a restricted set of nodes, then (topology-aware
//! only) re-picks the GPU indices on each node:
//!
//! * `first-fit`: nodes in node-table order;
//! * `best-fit`: the fewest free GPUs (then cores) first, to keep whole nodes free;
//! * `spread`: the most free GPUs (then cores) first, to spread load;
//! * `topology-aware`: a single-node job goes to the node whose free GPUs
//!   form the widest ring for its GPU count (ties: best fit), and takes
//!   those GPUs — e.g. a 4-GPU job stays inside one NVLink island; a
//!   multi-node job is kept under one leaf switch when one can hold it
//!   (the fullest such leaf first), and takes the widest GPUs on each node.
//!
//! `slurm` is cons_tres unchanged. A placement of one's own
//! ([`CustomPlacement`]: a Python function, say) plugs in the same way: it
//! is asked only when cons_tres says the job fits now, chooses nodes and GPU
//! indices from a read-only [`PlaceQuery`], and [`apply_choice`] checks the
//! choice (cons_tres on exactly those nodes, then the GPU indices) before
//! anything is allocated. A choice it refuses fails the run, never the
//! allocator: the job waits, and the placement reports the failure through
//! [`CustomPlacement::take_failure`] (the engine stops after the pass).

use std::sync::Arc;

use gresim_model::job::JobRequest;
use gresim_model::state::gpu_indices;
use gresim_model::{Allocation, Cluster, ClusterState, GpuTypeId, NodeId, PartId};

use crate::select::{node_may_fit, select, SelectCache, SelectFail, Skip, View};
use crate::SchedParams;

/// A placement strategy.
#[derive(Clone, Default)]
pub enum Placement {
    /// select/cons_tres as Slurm does it.
    #[default]
    Slurm,
    FirstFit,
    BestFit,
    Spread,
    TopologyAware,
    /// A placement of one's own.
    Custom(Arc<dyn CustomPlacement>),
}

impl Placement {
    pub fn name(&self) -> &'static str {
        match self {
            Placement::Slurm => "slurm",
            Placement::FirstFit => "first-fit",
            Placement::BestFit => "best-fit",
            Placement::Spread => "spread",
            Placement::TopologyAware => "topology-aware",
            Placement::Custom(c) => c.name(),
        }
    }

    /// Slurm's own cons_tres choice, unchanged.
    pub fn is_slurm(&self) -> bool {
        matches!(self, Placement::Slurm)
    }

    /// The failure a custom placement reported since it was last asked.
    pub fn take_failure(&self) -> Option<String> {
        match self {
            Placement::Custom(c) => c.take_failure(),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Placement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placement::Custom(c) => write!(f, "Custom({})", c.name()),
            other => f.write_str(other.name()),
        }
    }
}

/// What a custom placement sees of a job that fits now, read-only.
pub struct PlaceQuery<'a> {
    pub cluster: &'a Cluster,
    pub state: &'a ClusterState,
    pub req: &'a JobRequest,
    pub part: PartId,
    /// The partition's nodes that could hold their share of the job now
    /// (not excluded, not blocked for this pass), in node-table order.
    pub candidates: &'a [NodeId],
    /// Per candidate: the free GPU indices of the types the job may use, as a mask.
    pub free_gpus: &'a [u64],
    /// Slurm's choice (cons_tres).
    pub slurm: &'a Allocation,
}

/// A custom placement's answer for one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// cons_tres's choice.
    Slurm,
    /// The job waits, as if it did not fit (reason Resources).
    Wait,
    /// These nodes, and on each the GPU indices (a mask over the node's GRES indices).
    Nodes(Vec<(NodeId, u64)>),
}

/// A placement of one's own, plugged into the passes of `slurm` (queue
/// order, main pass, backfill) in place of cons_tres's node and GPU choice.
pub trait CustomPlacement: Send + Sync {
    /// The policy's name, as reports spell it.
    fn name(&self) -> &'static str;

    /// Chooses for a job cons_tres can place now. A failure (the
    /// placement's own error) is kept and reported by
    /// [`CustomPlacement::take_failure`]; answer [`Choice::Wait`] then.
    fn choose(&self, q: &PlaceQuery<'_>) -> Choice;

    /// [`apply_choice`] refused the last choice: why. Keep it for
    /// [`CustomPlacement::take_failure`].
    fn refused(&self, why: String);

    /// The first failure since the last call, if any: the run stops.
    fn take_failure(&self) -> Option<String>;
}

/// Checks a custom placement's `choice` for `req` and turns it into an
/// allocation: the nodes must be distinct candidates of the job (in the
/// partition, not excluded or blocked, able to hold their share now);
/// cons_tres on exactly those nodes must place the job on all of them (it
/// chooses cores and memory); on each node the GPU indices must exist, be
/// free, and match in number and type the GPUs cons_tres takes there, and
/// replace them. Errors say what is wrong, naming nodes and GPUs.
#[allow(clippy::too_many_arguments)]
pub fn apply_choice(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
    choice: &[(NodeId, u64)],
) -> Result<Allocation, String> {
    let name = |id: NodeId| cluster.node(id).name.clone();
    if choice.is_empty() {
        return Err("no node chosen".into());
    }
    let mut nodes: Vec<NodeId> = Vec::with_capacity(choice.len());
    for &(id, _) in choice {
        if id.idx() >= cluster.nodes.len() {
            return Err(format!("node index {} does not exist", id.idx()));
        }
        if nodes.contains(&id) {
            return Err(format!("node {} is chosen twice", name(id)));
        }
        if !cluster.in_partition(part, id) {
            return Err(format!(
                "node {} is not in partition {}",
                name(id),
                cluster.partition(part).name
            ));
        }
        if avoid.is_some_and(|a| a[id.idx()]) || req.exclude.contains(&id) {
            return Err(format!(
                "node {} is not available to this job now (excluded, or held for a job ahead of it)",
                name(id)
            ));
        }
        if node_may_fit(cluster, params, state.node(id), id, req).is_none() {
            return Err(format!(
                "node {} cannot hold its share of the job now (free CPUs, memory or GPUs)",
                name(id)
            ));
        }
        nodes.push(id);
    }
    let mut alloc =
        test_on(cache, cluster, params, state, req, part, avoid, &nodes).ok_or_else(|| {
            let names: Vec<String> = nodes.iter().map(|&n| name(n)).collect();
            format!(
                "the job does not fit on {} (cons_tres finds no allocation there)",
                names.join(",")
            )
        })?;
    if alloc.nodes.len() != nodes.len() {
        let used: Vec<String> = alloc.nodes.iter().map(|n| name(n.node)).collect();
        return Err(format!(
            "{} node(s) chosen, but the job runs on {} of them ({})",
            nodes.len(),
            alloc.nodes.len(),
            used.join(",")
        ));
    }
    for na in alloc.nodes.iter_mut() {
        let Some(&(_, mask)) = choice.iter().find(|c| c.0 == na.node) else {
            return Err(format!("node {} was not chosen", name(na.node)));
        };
        let node = cluster.node(na.node);
        let n = node.gpus.len();
        if n < 64 && mask >> n != 0 {
            return Err(format!(
                "node {} has GPU indices 0..{} only, not {}",
                name(na.node),
                n.saturating_sub(1),
                gpu_indices(mask >> n << n)
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ));
        }
        let busy = mask & !state.node(na.node).free_gpus;
        if busy != 0 {
            return Err(format!(
                "GPU {} of node {} is not free",
                gpu_indices(busy)
                    .map(|g| g.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
                name(na.node)
            ));
        }
        let (want, got) = (na.gpus.count_ones(), mask.count_ones());
        if want != got {
            return Err(format!(
                "the job takes {want} GPU(s) on node {}, {got} chosen",
                name(na.node)
            ));
        }
        let types = |m: u64| {
            let mut v: Vec<GpuTypeId> = gpu_indices(m)
                .map(|g| node.gpus[usize::from(g)].ty)
                .collect();
            v.sort();
            v
        };
        if types(mask) != types(na.gpus) {
            let names = |m: u64| {
                types(m)
                    .iter()
                    .map(|t| cluster.gpu_type(*t).name.clone())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            return Err(format!(
                "the job takes GPU(s) of type {} on node {}, the GPU(s) chosen are {}",
                names(na.gpus),
                name(na.node),
                names(mask)
            ));
        }
        na.gpus = mask;
    }
    Ok(alloc)
}

/// Asks `custom` for `req`, which cons_tres places as `base`, and checks
/// what it answers. `Err(SelectFail::Busy)` when the job waits (by choice,
/// or because the choice was refused: then the placement has been told).
#[allow(clippy::too_many_arguments)]
fn custom_choice(
    custom: &dyn CustomPlacement,
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
    base: Allocation,
) -> Result<Allocation, SelectFail> {
    let types = req_types(req);
    let mut candidates = Vec::new();
    let mut free = Vec::new();
    for &id in &cluster.partition(part).nodes {
        if avoid.is_some_and(|a| a[id.idx()]) || req.exclude.contains(&id) {
            continue;
        }
        if !req.nodelist.is_empty() && !req.nodelist.contains(&id) {
            continue;
        }
        if node_may_fit(cluster, params, state.node(id), id, req).is_some() {
            candidates.push(id);
            free.push(eligible_free(cluster, state, id, &types));
        }
    }
    let q = PlaceQuery {
        cluster,
        state,
        req,
        part,
        candidates: &candidates,
        free_gpus: &free,
        slurm: &base,
    };
    match custom.choose(&q) {
        Choice::Slurm => Ok(base),
        Choice::Wait => Err(SelectFail::Busy),
        Choice::Nodes(v) => apply_choice(cache, cluster, params, state, req, part, avoid, &v)
            .map_err(|why| {
                custom.refused(why);
                SelectFail::Busy
            }),
    }
}

/// The GPU types the request names, if it names any.
fn req_types(req: &JobRequest) -> Vec<GpuTypeId> {
    let mut v: Vec<GpuTypeId> = req
        .gpus_per_node
        .iter()
        .chain(req.gpus_per_job.iter())
        .chain(req.gpus_per_task.iter())
        .filter_map(|g| g.ty)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Free devices on `id` the request could use, as a mask.
fn eligible_free(cluster: &Cluster, state: &ClusterState, id: NodeId, types: &[GpuTypeId]) -> u64 {
    let node = cluster.node(id);
    let free = state.node(id).free_gpus;
    let mut m = 0u64;
    for (i, d) in node.gpus.iter().enumerate() {
        if free & (1 << i) != 0 && (types.is_empty() || types.contains(&d.ty)) {
            m |= 1 << i;
        }
    }
    m
}

/// Whether device index = physical GPU index on this node (no MIG).
fn whole_gpus(cluster: &Cluster, id: NodeId) -> bool {
    cluster
        .node(id)
        .gpus
        .iter()
        .enumerate()
        .all(|(i, d)| d.mig.is_none() && usize::from(d.phys) == i)
}

/// cons_tres on the nodes in `allowed` only (plus the caller's `avoid`).
#[allow(clippy::too_many_arguments)]
fn test_on(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
    allowed: &[NodeId],
) -> Option<Allocation> {
    let mut mask = vec![true; cluster.nodes.len()];
    for id in allowed {
        mask[id.idx()] = avoid.is_some_and(|a| a[id.idx()]);
    }
    crate::cons_tres::job_test(
        cache,
        cluster,
        params,
        req,
        part,
        View::Now(state, Some(Skip::Flags(&mask))),
    )
}

/// The shortest prefix of `order` cons_tres can place the job on (by
/// galloping then bisection), and that placement.
#[allow(clippy::too_many_arguments)]
fn prefix_search(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
    order: &[NodeId],
) -> Option<Allocation> {
    let n = order.len();
    let min = (req.min_nodes.max(1) as usize).min(n);
    if n == 0 {
        return None;
    }
    let mut try_len =
        |l: usize| test_on(cache, cluster, params, state, req, part, avoid, &order[..l]);
    let mut lo = min.saturating_sub(1); // known to fail (or below the minimum)
    let mut hi = min;
    let mut found = loop {
        if let Some(a) = try_len(hi) {
            break Some((hi, a));
        }
        if hi == n {
            break None;
        }
        lo = hi;
        hi = (hi * 2).min(n);
    };
    while let Some((h, _)) = &found {
        if *h <= lo + 1 {
            break;
        }
        let mid = (lo + *h) / 2;
        match try_len(mid) {
            Some(a) => found = Some((mid, a)),
            None => lo = mid,
        }
    }
    found.map(|x| x.1)
}

/// Chooses resources for `req` with `placement`. Fails exactly when
/// [`select`] does, with the same reason.
#[allow(clippy::too_many_arguments)]
pub fn place(
    cache: &mut SelectCache,
    placement: &Placement,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
) -> Result<Allocation, SelectFail> {
    let base = select(cache, cluster, params, state, req, part, avoid)?;
    match placement {
        Placement::Slurm => return Ok(base),
        Placement::Custom(c) => {
            return custom_choice(
                c.as_ref(),
                cache,
                cluster,
                params,
                state,
                req,
                part,
                avoid,
                base,
            )
        }
        _ => {}
    }
    if !req.nodelist.is_empty() {
        return Ok(repick(placement, cluster, state, req, base));
    }
    let types = req_types(req);
    let mut cands: Vec<(NodeId, u32, u32)> = cluster
        .partition(part)
        .nodes
        .iter()
        .copied()
        .filter(|&id| !avoid.is_some_and(|a| a[id.idx()]) && !req.exclude.contains(&id))
        .filter(|&id| node_may_fit(cluster, params, state.node(id), id, req).is_some())
        .map(|id| {
            let g = eligible_free(cluster, state, id, &types).count_ones();
            (id, g, state.node(id).free_core_count())
        })
        .collect();
    let chosen = match placement {
        Placement::Slurm | Placement::Custom(_) => None,
        Placement::FirstFit => {
            let order: Vec<NodeId> = cands.iter().map(|c| c.0).collect();
            prefix_search(cache, cluster, params, state, req, part, avoid, &order)
        }
        Placement::BestFit => {
            cands.sort_by_key(|c| (c.1, c.2, c.0));
            let order: Vec<NodeId> = cands.iter().map(|c| c.0).collect();
            prefix_search(cache, cluster, params, state, req, part, avoid, &order)
        }
        Placement::Spread => {
            cands.sort_by_key(|c| (std::cmp::Reverse(c.1), std::cmp::Reverse(c.2), c.0));
            let order: Vec<NodeId> = cands.iter().map(|c| c.0).collect();
            prefix_search(cache, cluster, params, state, req, part, avoid, &order)
        }
        Placement::TopologyAware => topology_choice(
            cache, cluster, params, state, req, part, avoid, &base, &types, &cands,
        ),
    };
    Ok(repick(
        placement,
        cluster,
        state,
        req,
        chosen.unwrap_or(base),
    ))
}

#[allow(clippy::too_many_arguments)]
fn topology_choice(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
    base: &Allocation,
    types: &[GpuTypeId],
    cands: &[(NodeId, u32, u32)],
) -> Option<Allocation> {
    if base.nodes.len() <= 1 && req.min_nodes <= 1 {
        let k = base.nodes.first().map_or(0, |n| n.gpu_count()) as usize;
        // Free GPUs per leaf: single-node jobs pack the fullest leaves,
        // leaving whole leaves for multi-node jobs.
        let fabric = cluster.fabric();
        let mut leaf_free: Vec<(u32, u32)> = Vec::new();
        for &(id, g, _) in cands {
            let l = fabric.leaf(id.idx());
            match leaf_free.iter_mut().find(|x| x.0 == l) {
                Some(x) => x.1 += g,
                None => leaf_free.push((l, g)),
            }
        }
        // Score each node by the widest ring its free GPUs can form, then
        // by how little of the best remaining pair the choice destroys.
        let mut scored: Vec<(f64, f64, u32, u32, u32, NodeId)> = cands
            .iter()
            .map(|&(id, g, c)| {
                let (bw, loss) = if k >= 1 && whole_gpus(cluster, id) {
                    let t = cluster.topology(id);
                    let free = eligible_free(cluster, state, id, types);
                    let keep = |m: u64| pair_left(t, free & !m);
                    let before = pair_left(t, free);
                    t.best_subset_with(free, k, false, &keep)
                        .map_or((0.0, 0.0), |b| (b.0.gbs.min(1e18), before - keep(b.1)))
                } else {
                    (0.0, 0.0)
                };
                let lf = leaf_free
                    .iter()
                    .find(|x| x.0 == fabric.leaf(id.idx()))
                    .map_or(0, |x| x.1);
                (bw, loss, lf, g, c, id)
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
                .then(a.4.cmp(&b.4))
                .then(a.5.cmp(&b.5))
        });
        for &(_, _, _, _, _, id) in &scored {
            if let Some(a) = test_on(cache, cluster, params, state, req, part, avoid, &[id]) {
                return Some(a);
            }
        }
        return None;
    }
    // Multi-node: one leaf that can hold the job, the fullest first.
    let fabric = cluster.fabric();
    let mut leaves: Vec<(u32, u32, Vec<NodeId>)> = Vec::new();
    for &(id, g, _) in cands {
        let l = fabric.leaf(id.idx());
        match leaves.iter_mut().find(|x| x.0 == l) {
            Some(x) => {
                x.1 += g;
                x.2.push(id);
            }
            None => leaves.push((l, g, vec![id])),
        }
    }
    if leaves.len() <= 1 {
        return None;
    }
    leaves.sort_by_key(|x| (x.1, x.0));
    for (_, _, nodes) in &leaves {
        if nodes.len() < req.min_nodes.max(1) as usize {
            continue;
        }
        if let Some(a) = test_on(cache, cluster, params, state, req, part, avoid, nodes) {
            return Some(a);
        }
    }
    // No leaf holds it: span as few leaves as possible, the emptiest first.
    leaves.sort_by_key(|x| (std::cmp::Reverse(x.1), x.0));
    let order: Vec<NodeId> = leaves.iter().flat_map(|x| x.2.iter().copied()).collect();
    prefix_search(cache, cluster, params, state, req, part, avoid, &order)
}

/// The widest pair ring the free GPUs `free` still offer (0 with fewer than two).
fn pair_left(t: &gresim_model::topology::Topology, free: u64) -> f64 {
    t.best_subset(free, 2, false)
        .map_or(0.0, |b| b.0.gbs.min(1e18))
}

/// Topology-aware: on each node, the free GPUs of the same type forming
/// the widest ring replace cons_tres's pick when they are wider.
fn repick(
    placement: &Placement,
    cluster: &Cluster,
    state: &ClusterState,
    req: &JobRequest,
    mut alloc: Allocation,
) -> Allocation {
    if !matches!(placement, Placement::TopologyAware) {
        return alloc;
    }
    let _ = req;
    for na in alloc.nodes.iter_mut() {
        let k = na.gpus.count_ones() as usize;
        if k < 1 || !whole_gpus(cluster, na.node) {
            continue;
        }
        let node = cluster.node(na.node);
        let mut ty = None;
        let mut one_type = true;
        for g in gpu_indices(na.gpus) {
            let t = node.gpus[usize::from(g)].ty;
            one_type &= ty.is_none_or(|x| x == t);
            ty = Some(t);
        }
        let Some(ty) = ty.filter(|_| one_type) else {
            continue;
        };
        let topo = cluster.topology(na.node);
        let cands = eligible_free(cluster, state, na.node, &[ty]) | na.gpus;
        let now: Vec<usize> = gpu_indices(na.gpus).map(usize::from).collect();
        let cur = topo.ring(&now, false);
        let keep = |m: u64| pair_left(topo, cands & !m);
        if let Some((best, mask)) = topo.best_subset_with(cands, k, false, &keep) {
            if best.gbs > cur.gbs + 1e-9
                || (best.gbs >= cur.gbs - 1e-9 && keep(mask) > keep(na.gpus) + 1e-9)
            {
                na.gpus = mask;
            }
        }
    }
    alloc
}

#[cfg(test)]
mod tests;
