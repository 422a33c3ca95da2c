//! Node and GPU selection, in the manner of select/cons_tres.
//!
//! Given a job's request, a partition and the current free resources, choose
//! nodes, cores, memory and GPU indices, or say why not:
//! - nodes of lower `Weight` first; among them a single-node job takes the
//!   fitting node with the fewest free CPUs (best fit, lowest index on ties),
//!   a multi-node job takes fitting nodes in node-table order;
//! - GPUs by lowest free index of the requested type; cores on the sockets of
//!   the chosen GPUs first, lowest core id first;
//! - memory as `--mem`, `--mem-per-cpu`, `--mem-per-gpu`, DefMemPerCPU, or the
//!   whole node when none applies (Slurm's `pn_min_memory = 0`).

use gresim_model::job::{GpuReq, JobRequest, MemReq};
use gresim_model::state::{CoreSet, NodeUsage};
use gresim_model::{
    Allocation, Cluster, ClusterState, Node, NodeAdminState, NodeAlloc, NodeId, PartId,
};

use crate::SchedParams;

/// Why a job cannot start now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectFail {
    /// It would fit on the partition's available nodes if they were idle: Slurm's `Resources`.
    Busy,
    /// It would fit only if some unavailable (down or drained) nodes came back:
    /// `ReqNodeNotAvail`, with those nodes.
    Unavailable(Vec<NodeId>),
    /// It can never run in this partition, even on an idle cluster.
    Never,
}

/// How to view node usage while selecting.
#[derive(Clone, Copy)]
enum View<'a> {
    /// The real state, skipping `avoid`ed nodes.
    Now(&'a ClusterState, Option<&'a [bool]>),
    /// Every node idle, down and drained ones still unavailable.
    IdleAvail(&'a ClusterState),
    /// Every node idle and up.
    IdleAll,
}

impl View<'_> {
    #[inline]
    fn usage(&self, cluster: &Cluster, id: NodeId) -> Option<NodeUsage> {
        match *self {
            View::Now(s, avoid) => {
                if avoid.is_some_and(|a| a[id.idx()]) {
                    return None;
                }
                let u = s.node(id);
                u.schedulable().then(|| u.clone())
            }
            View::IdleAvail(s) => s
                .node(id)
                .schedulable()
                .then(|| idle_usage(cluster.node(id))),
            View::IdleAll => Some(idle_usage(cluster.node(id))),
        }
    }
}

fn idle_usage(node: &Node) -> NodeUsage {
    NodeUsage {
        free_cores: CoreSet::first(node.cores()),
        free_mem: node.memory_mib,
        free_gpus: gresim_model::state::full_mask(node.gpus.len()),
        jobs: 0,
        exclusive: false,
        admin: NodeAdminState::Up,
    }
}

/// Chooses resources for `req` in partition `part` now. `avoid` marks nodes
/// the current pass has taken away (strict partition blocking).
pub fn select(
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
) -> Result<Allocation, SelectFail> {
    if let Some(a) = select_in(cluster, params, req, part, View::Now(state, avoid)) {
        return Ok(a);
    }
    Err(classify(cluster, params, state, req, part))
}

/// Why `req` does not fit in `part` now: busy, waiting for unavailable nodes, or never.
pub fn classify(
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
) -> SelectFail {
    if select_in(cluster, params, req, part, View::IdleAvail(state)).is_some() {
        return SelectFail::Busy;
    }
    if select_in(cluster, params, req, part, View::IdleAll).is_none() {
        return SelectFail::Never;
    }
    let pool: Vec<NodeId> = if req.nodelist.is_empty() {
        cluster.partition(part).nodes.clone()
    } else {
        req.nodelist.clone()
    };
    SelectFail::Unavailable(
        pool.into_iter()
            .filter(|n| !state.node(*n).schedulable())
            .collect(),
    )
}

/// Whether `req` could ever run in `part`: on the whole partition, idle and up.
pub fn runnable_ever(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
) -> bool {
    select_in(cluster, params, req, part, View::IdleAll).is_some()
}

/// Tasks on each of `n` nodes: the first `ntasks % n` nodes get one more.
fn tasks_on(req: &JobRequest, n: u32, pos: u32) -> u32 {
    match (req.ntasks, req.ntasks_per_node) {
        (None, Some(tpn)) => tpn,
        (Some(t), Some(tpn)) => {
            let base = (t / n).min(tpn);
            let extra = u32::from(pos < t % n);
            (base + extra).min(tpn).max(1)
        }
        (Some(t), None) => (t / n + u32::from(pos < t % n)).max(1),
        (None, None) => 1,
    }
}

/// What one node must provide.
struct Need {
    tasks: u32,
    /// GPUs per node by type, plus `extra_any`/`extra_ty` GPUs from a per-job request.
    gpus: Vec<GpuReq>,
}

fn node_need(req: &JobRequest, tasks: u32, per_job_share: Option<GpuReq>) -> Need {
    let mut gpus = req.gpus_per_node.clone();
    if let Some(g) = req.gpus_per_task {
        gpus.push(GpuReq {
            ty: g.ty,
            count: g.count * tasks,
        });
    }
    if let Some(g) = per_job_share {
        gpus.push(g);
    }
    gpus.retain(|g| g.count > 0);
    Need { tasks, gpus }
}

/// Picks the lowest free GPU indices that satisfy `gpus`, typed requests first.
fn pick_gpus(node: &Node, free: u64, gpus: &[GpuReq]) -> Option<u64> {
    let mut taken = 0u64;
    let typed = gpus.iter().filter(|g| g.ty.is_some());
    let untyped = gpus.iter().filter(|g| g.ty.is_none());
    for g in typed.chain(untyped) {
        let mut left = g.count;
        for (i, d) in node.gpus.iter().enumerate() {
            if left == 0 {
                break;
            }
            let bit = 1u64 << i;
            if free & bit != 0 && taken & bit == 0 && g.ty.is_none_or(|t| t == d.ty) {
                taken |= bit;
                left -= 1;
            }
        }
        if left > 0 {
            return None;
        }
    }
    Some(taken)
}

/// Free GPUs on the node that a request of type `ty` may use.
fn usable_gpus(node: &Node, free: u64, ty: Option<gresim_model::GpuTypeId>) -> u32 {
    match ty {
        None => free.count_ones(),
        Some(t) => node
            .gpus
            .iter()
            .enumerate()
            .filter(|(i, d)| free & (1 << i) != 0 && d.ty == t)
            .count() as u32,
    }
}

/// Picks `n` free cores, on the sockets of `gpus` first, lowest id first.
fn pick_cores(node: &Node, free: &CoreSet, gpus: u64, n: u32) -> Option<CoreSet> {
    if free.count() < n {
        return None;
    }
    let mut near_sockets = 0u64;
    for (i, d) in node.gpus.iter().enumerate() {
        if gpus & (1 << i) != 0 {
            if let Some(s) = d.socket {
                near_sockets |= 1 << (s.min(63));
            }
        }
    }
    let mut out = CoreSet::default();
    let mut left = n;
    let near = |c: u32| near_sockets & (1 << node.socket_of_core(c).min(63)) != 0;
    for pass_near in [true, false] {
        if near_sockets == 0 && pass_near {
            continue;
        }
        for c in free.iter() {
            if left == 0 {
                break;
            }
            if (near_sockets == 0 || near(c) == pass_near) && !out.contains(c) {
                out.insert(c);
                left -= 1;
            }
        }
    }
    (left == 0).then_some(out)
}

/// Memory per node for a job holding `cpus` CPUs and `gpus` GPUs there.
fn mem_for(params: &SchedParams, node: &Node, mem: MemReq, cpus: u32, gpus: u32) -> u64 {
    match mem {
        MemReq::PerNode(m) => m,
        MemReq::PerCpu(m) => m.saturating_mul(u64::from(cpus)),
        MemReq::PerGpu(m) => m.saturating_mul(u64::from(gpus)),
        MemReq::WholeNode => node.memory_mib,
        MemReq::Default => match params.def_mem_per_cpu {
            Some(d) => d.saturating_mul(u64::from(cpus)),
            None => node.memory_mib,
        },
    }
}

/// Tries to fit `need` on one node.
fn fit_node(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    id: NodeId,
    u: &NodeUsage,
    need: &Need,
) -> Option<NodeAlloc> {
    let node = cluster.node(id);
    if u.exclusive {
        return None;
    }
    let tpc = u32::from(node.threads_per_core.max(1));
    let (cores, gpus) = if req.exclusive {
        if u.jobs > 0 {
            return None;
        }
        pick_gpus(node, u.free_gpus, &need.gpus)?;
        (u.free_cores, u.free_gpus)
    } else {
        let gpus = pick_gpus(node, u.free_gpus, &need.gpus)?;
        let mut cpus = need.tasks.saturating_mul(req.cpus_per_task);
        if let Some(cpg) = req.cpus_per_gpu {
            cpus = cpus.max(cpg.saturating_mul(gpus.count_ones()));
        }
        let ncores = cpus.div_ceil(tpc).max(1);
        (pick_cores(node, &u.free_cores, gpus, ncores)?, gpus)
    };
    let cpus = cores.count() * tpc;
    let mem = mem_for(params, node, req.mem, cpus, gpus.count_ones());
    let whole_mem = mem >= node.memory_mib;
    if mem > u.free_mem || (whole_mem && u.free_mem < node.memory_mib) {
        return None;
    }
    Some(NodeAlloc {
        node: id,
        cores,
        cpus,
        mem_mib: mem,
        gpus,
        tasks: need.tasks,
    })
}

/// Static checks that do not depend on usage.
fn node_eligible(cluster: &Cluster, req: &JobRequest, part: PartId, id: NodeId) -> bool {
    if !cluster.in_partition(part, id) || req.exclude.contains(&id) {
        return false;
    }
    let node = cluster.node(id);
    req.features.iter().all(|f| node.has_feature(f))
}

fn select_in(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
) -> Option<Allocation> {
    let p = cluster.partition(part);
    if req.min_nodes as usize > p.nodes.len() {
        return None;
    }
    // A per-job GPU count on a job that may span several nodes is spread in
    // node order; on one node it is simply a per-node count.
    let per_job = req.gpus_per_job;
    let min_n = req.min_nodes.max(1);
    let max_n = req.max_nodes.max(min_n);

    // Required nodes first (-w), then the rest in (weight, index) order.
    let mut cands: Vec<(u32, NodeId, NodeUsage)> = Vec::new();
    for &id in req.nodelist.iter() {
        if !node_eligible(cluster, req, part, id) {
            return None;
        }
        let u = view.usage(cluster, id)?;
        cands.push((0, id, u));
    }
    let required = cands.len();
    if required == 0 {
        for &id in &p.nodes {
            if !node_eligible(cluster, req, part, id) {
                continue;
            }
            if let Some(u) = view.usage(cluster, id) {
                cands.push((cluster.node(id).weight, id, u));
            }
        }
        // Stable sort keeps node-table order within a weight.
        cands.sort_by_key(|c| c.0);
    }

    if let Some(g) = per_job.filter(|_| max_n > 1) {
        return spread_per_job(cluster, params, req, &cands, required, g, min_n, max_n);
    }

    let n = if required > 0 {
        (required as u32).max(min_n)
    } else {
        min_n
    };
    let want = if required > 0 { n } else { max_n };
    let single = want == 1;
    let mut chosen: Vec<NodeAlloc> = Vec::with_capacity(want as usize);
    let mut best: Option<(u32, u32, NodeAlloc)> = None;
    for (pos, (w, id, u)) in cands.iter().enumerate() {
        let slot = chosen.len() as u32;
        let tasks = tasks_on(req, n, slot);
        let need = node_need(req, tasks, per_job);
        let fit = fit_node(cluster, params, req, *id, u, &need);
        if pos < required {
            chosen.push(fit?);
            continue;
        }
        let Some(fit) = fit else { continue };
        if single {
            // Best fit within the lowest weight that has a fitting node.
            let free_cpus =
                u.free_cores.count() * u32::from(cluster.node(*id).threads_per_core.max(1));
            match &best {
                Some((bw, bf, _)) if (*bw, *bf) <= (*w, free_cpus) => {}
                _ => best = Some((*w, free_cpus, fit)),
            }
            if best.as_ref().is_some_and(|b| b.0 < *w) {
                break;
            }
        } else {
            chosen.push(fit);
            if chosen.len() as u32 >= want {
                break;
            }
        }
    }
    if single {
        if let Some((_, _, a)) = best {
            chosen.push(a);
        }
    }
    if (chosen.len() as u32) < n {
        return None;
    }
    if chosen.len() as u32 != n && req.ntasks.is_some() && req.ntasks_per_node.is_none() {
        // Task counts were computed for `n` nodes; recompute for the real count.
        let real = chosen.len() as u32;
        for (slot, na) in chosen.iter_mut().enumerate() {
            na.tasks = tasks_on(req, real, slot as u32);
        }
    }
    chosen.sort_by_key(|a| a.node);
    Some(Allocation {
        nodes: chosen,
        exclusive: req.exclusive,
    })
}

/// `--gpus=N` over up to `max_n` nodes: take GPUs node by node, in order.
#[allow(clippy::too_many_arguments)]
fn spread_per_job(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    cands: &[(u32, NodeId, NodeUsage)],
    required: usize,
    g: GpuReq,
    min_n: u32,
    max_n: u32,
) -> Option<Allocation> {
    let mut left = g.count;
    let mut chosen: Vec<NodeAlloc> = Vec::new();
    for (pos, (_, id, u)) in cands.iter().enumerate() {
        if chosen.len() as u32 >= max_n || (left == 0 && chosen.len() as u32 >= min_n) {
            break;
        }
        let node = cluster.node(*id);
        let nodes_after = min_n.saturating_sub(chosen.len() as u32 + 1);
        let avail = usable_gpus(node, u.free_gpus, g.ty);
        let take = avail.min(left.saturating_sub(nodes_after));
        if take == 0 && pos >= required && left > 0 {
            continue;
        }
        let tasks = tasks_on(req, min_n, chosen.len() as u32);
        let need = node_need(
            req,
            tasks,
            Some(GpuReq {
                ty: g.ty,
                count: take,
            }),
        );
        match fit_node(cluster, params, req, *id, u, &need) {
            Some(a) => {
                left -= take;
                chosen.push(a);
            }
            None if pos < required => return None,
            None => {}
        }
    }
    if left > 0 || (chosen.len() as u32) < min_n {
        return None;
    }
    chosen.sort_by_key(|a| a.node);
    Some(Allocation {
        nodes: chosen,
        exclusive: req.exclusive,
    })
}
