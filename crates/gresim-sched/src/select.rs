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

use gresim_model::job::JobRequest;
use gresim_model::state::{CoreSet, NodeUsage};
use gresim_model::{Allocation, Cluster, ClusterState, Node, NodeAdminState, NodeId, PartId};

use crate::cons_tres;
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
    Now(&'a ClusterState, Option<&'a [bool]>),
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

fn select_in(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
) -> Option<Allocation> {
    cons_tres::job_test(cluster, params, req, part, view)
}
