//! Node and GPU selection, in the manner of select/cons_tres.
//!
//! Given a job's request, a partition and the current free resources, choose
//! nodes, cores, memory and GPU indices, or say why not. The steps follow
//! Slurm 22.05's cons_tres (see [`crate::cons_tres`] for the details):
//! - per node, `can_job_run_on_node` + `_select_cores`: which cores and GPUs
//!   the job could use, with GPU/socket affinity (`gres_select_filter_*`) and
//!   the GPU co-location tweak of the node's scheduling weight;
//! - `_eval_nodes`: consecutive node sets by index, cut at weight changes,
//!   lowest weight, then best fit; `choose_nodes` retries without the
//!   affinity filter and with small nodes removed;
//! - cores before GPUs, then GPU indices by `_set_node_bits` /
//!   `_set_task_bits` / `_set_job_bits1/2` (lowest index, sockets of the
//!   job's cores, then NVLink `Links` counts);
//! - memory as `--mem`, `--mem-per-cpu`, `--mem-per-gpu`, DefMemPerCPU, or the
//!   whole node when none applies (Slurm's `pn_min_memory = 0`).
//!
//! Every entry point takes the caller's [`SelectCache`] (a policy owns one):
//! the caches are shortcuts that change no answer.

pub(crate) use gresim_model::fit_index::Skip;
use gresim_model::job::JobRequest;
use gresim_model::job::MemReq;
use gresim_model::state::{CoreSet, NodeUsage};
use gresim_model::{Allocation, Cluster, ClusterState, Node, NodeAdminState, NodeId, PartId};

use crate::cons_tres;
pub use crate::cons_tres::SelectCache;
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
pub(crate) enum View<'a> {
    /// The real state, skipping `avoid`ed nodes.
    Now(&'a ClusterState, Option<Skip<'a>>),
    /// Every node idle, down and drained ones still unavailable.
    IdleAvail(&'a ClusterState),
    /// Every node idle and up.
    IdleAll,
}

impl View<'_> {
    #[inline]
    pub(crate) fn usage(&self, cluster: &Cluster, id: NodeId) -> Option<NodeUsage> {
        match *self {
            View::Now(s, avoid) => {
                if avoid.is_some_and(|a| a.has(id.idx())) {
                    return None;
                }
                let u = s.node(id);
                u.schedulable().then_some(*u)
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
        one_row: 0,
        shared: 0,
        exclusive: false,
        admin: NodeAdminState::Up,
    }
}

/// Chooses resources for `req` in partition `part` now. `avoid` marks nodes
/// the current pass has taken away (strict partition blocking).
pub fn select(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
) -> Result<Allocation, SelectFail> {
    try_select(cache, cluster, params, state, req, part, avoid)
        .ok_or_else(|| classify(cache, cluster, params, state, req, part))
}

/// [`select`] without saying why not: for callers that only need the
/// allocation (backfill's planning), skipping the classification.
pub fn try_select(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
) -> Option<Allocation> {
    // `may_fit_now` is a necessary condition that `job_test` checks itself,
    // node by node, while it builds its candidates (`cons_tres::cannot_fit`),
    // so it no longer runs first; debug builds check that it never disagrees.
    let r = select_in(
        cache,
        cluster,
        params,
        req,
        part,
        View::Now(state, avoid.map(Skip::Flags)),
    );
    debug_assert!(r.is_none() || may_fit_now(cluster, params, state, req, part, avoid));
    r
}

/// [`try_select`] for a plan on a future state (backfill's reservations):
/// only the nodes the allocation would have, in its order, without making
/// it. It succeeds exactly where [`try_select`] does (see
/// `cons_tres::finish::fits`; debug builds check the two agree).
pub(crate) fn try_select_nodes(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<Skip<'_>>,
) -> Option<Vec<NodeId>> {
    let view = View::Now(state, avoid);
    let r = cons_tres::job_test_nodes(cache, cluster, params, req, part, view);
    debug_assert_eq!(
        r,
        select_in(cache, cluster, params, req, part, view).map(|a| a.node_ids().collect())
    );
    r
}

/// The request node selection sees for `job` at `now` when it differs
/// from the job's own: under topology/tree, a job whose `--switches` wait
/// is over selects without the leaf limit. Slurm's `_eval_nodes_topo()`
/// compares the time since `wait4switch_start` (its first evaluation, here
/// the first submission) with `wait4switch`, which job_mgr.c caps at
/// `max_switch_wait` (`_max_switch_wait()`); a job without `@time` waits up
/// to that cap. `None` (the common case, no allocation) when nothing changes.
pub fn switches_relaxed(
    cluster: &Cluster,
    job: &gresim_model::job::Job,
    now: gresim_model::Time,
    params: &SchedParams,
) -> Option<JobRequest> {
    let sw = job.request.switches?;
    cluster.select_tree()?;
    let wait = sw.wait.unwrap_or(u64::MAX).min(params.max_switch_wait);
    (now >= job.first_submit.saturating_add(wait)).then(|| JobRequest {
        switches: None,
        ..(*job.request).clone()
    })
}

/// `job`'s request as node selection sees it at `now` (see
/// [`switches_relaxed`]): the job's own, shared, in the common case.
pub fn request_now(
    cluster: &Cluster,
    job: &gresim_model::job::Job,
    now: gresim_model::Time,
    params: &SchedParams,
) -> std::sync::Arc<JobRequest> {
    match switches_relaxed(cluster, job, now, params) {
        Some(r) => std::sync::Arc::new(r),
        None => std::sync::Arc::clone(&job.request),
    }
}

/// A cheap necessary condition for `req` to fit in `part` now: enough nodes
/// each with a free core, the per-node memory and the per-node GPUs, and
/// enough free GPUs for a per-job count. When it fails the full node
/// selection would fail too, so a busy cluster is rejected in one pass over
/// plain counters.
fn may_fit_now(
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
) -> bool {
    if !req.nodelist.is_empty() {
        return true;
    }
    let mut nodes = 0u32;
    let mut job_gpus = 0u32;
    for &id in &cluster.partition(part).nodes {
        if avoid.is_some_and(|a| a[id.idx()]) {
            continue;
        }
        if let Some(g) = node_may_fit(cluster, params, state.node(id), id, req) {
            nodes += 1;
            job_gpus = job_gpus.saturating_add(g);
        }
    }
    nodes >= req.min_nodes.max(1) && req.gpus_per_job.is_none_or(|g| job_gpus >= g.count)
}

/// Whether node `id` in state `u` could hold its share of `req`, by counts
/// alone (a necessary condition); with the free GPUs a per-job request could
/// use there.
pub fn node_may_fit(
    cluster: &Cluster,
    params: &SchedParams,
    u: &NodeUsage,
    id: NodeId,
    req: &JobRequest,
) -> Option<u32> {
    if !u.schedulable() || u.exclusive || (req.exclusive && u.jobs > 0) || u.free_cores.is_empty() {
        return None;
    }
    let node = cluster.node(id);
    let whole_mem = matches!(req.mem, MemReq::WholeNode)
        || (matches!(req.mem, MemReq::Default) && params.def_mem_per_cpu.is_none());
    if whole_mem && u.free_mem < node.memory_mib {
        return None;
    }
    if let MemReq::PerNode(m) = req.mem {
        if m > u.free_mem {
            return None;
        }
    }
    let free_of = |ty: Option<gresim_model::GpuTypeId>| -> u32 {
        if ty.is_none() {
            return u.free_gpus.count_ones();
        }
        node.gpus
            .iter()
            .enumerate()
            .filter(|(i, d)| u.free_gpus & (1 << i) != 0 && Some(d.ty) == ty)
            .count() as u32
    };
    if req.gpus_per_node.iter().any(|g| free_of(g.ty) < g.count) {
        return None;
    }
    if let Some(g) = req.gpus_per_task {
        if free_of(g.ty) < g.count {
            return None;
        }
    }
    match req.gpus_per_job {
        Some(g) => {
            let f = free_of(g.ty);
            (f > 0).then_some(f)
        }
        None => Some(0),
    }
}

/// Whether [`node_may_fit`] answers `a` and `b` alike on every node in every
/// usage: they agree on each field it reads (whether the job is exclusive,
/// what its memory option asks of a node, its GPUs per node and per task,
/// and the GRES type of its per-job GPUs). Requests that differ only in
/// their node, task or CPU counts share per-node fits. Keep in step with
/// `node_may_fit`.
pub(crate) fn same_node_fit(a: &JobRequest, b: &JobRequest) -> bool {
    // What `node_may_fit` reads of the memory option: the whole node (or
    // DefMemPerCPU's absence) for these two, an amount per node, or nothing.
    let mem = |m: MemReq| match m {
        MemReq::Default => (0, 0),
        MemReq::WholeNode => (1, 0),
        MemReq::PerNode(x) => (2, x),
        MemReq::PerCpu(_) | MemReq::PerGpu(_) => (3, 0),
    };
    a.exclusive == b.exclusive
        && mem(a.mem) == mem(b.mem)
        && a.gpus_per_node == b.gpus_per_node
        && a.gpus_per_task == b.gpus_per_task
        && a.gpus_per_job.map(|g| g.ty) == b.gpus_per_job.map(|g| g.ty)
}

/// Why `req` does not fit in `part` now: busy, waiting for unavailable nodes, or never.
pub fn classify(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
) -> SelectFail {
    let all_up = if state.all_schedulable() {
        true
    } else if req.nodelist.is_empty() {
        cluster
            .partition(part)
            .nodes
            .iter()
            .all(|n| state.node(*n).schedulable())
    } else {
        req.nodelist.iter().all(|n| state.node(*n).schedulable())
    };
    // With every node up, idle-and-available is idle-and-up: a job with a
    // single partition was accepted at submission only because it can run
    // there, so it is merely waiting for resources.
    if all_up && req.partitions.len() <= 1 {
        return SelectFail::Busy;
    }
    if !all_up && select_in(cache, cluster, params, req, part, View::IdleAvail(state)).is_some() {
        return SelectFail::Busy;
    }
    if select_in(cache, cluster, params, req, part, View::IdleAll).is_none() {
        return SelectFail::Never;
    }
    // A job of several partitions that can run in this one, every node up:
    // busy, like a single-partition job (no node to call unavailable).
    if all_up {
        return SelectFail::Busy;
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
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
) -> bool {
    select_in(cache, cluster, params, req, part, View::IdleAll).is_some()
}

fn select_in(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
) -> Option<Allocation> {
    cons_tres::job_test(cache, cluster, params, req, part, view)
}

#[cfg(test)]
mod tests;
