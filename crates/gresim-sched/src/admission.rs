//! Admission: what slurmctld checks when a job is submitted, before any
//! pass. Every policy of this crate answers the [`crate::Policy`] trait's
//! admission questions with these functions; the scenario loader asks
//! [`submission_rejection`] before a run (`workload.impossible`).

use gresim_model::job::{Job, JobSpec};
use gresim_model::{Cluster, ClusterState, NodeId, PartId};

use crate::fifo::{limit_reason, partition_has_cpus};
use crate::queue::job_partitions;
use crate::select::{classify, runnable_ever, SelectCache, SelectFail};
use crate::SchedParams;

/// Why slurmctld would refuse `spec` at submission (`_valid_job_part`,
/// `select_nodes` in test-only mode): no node of its partitions could ever
/// run it. `None` when the submission is accepted, even if it must pend.
/// Depends only on the configuration, so it can be checked before a run.
pub fn submission_rejection(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    spec: &JobSpec,
) -> Option<String> {
    let req = &spec.request;
    let parts: Vec<PartId> = if req.partitions.is_empty() {
        match cluster.default_partition() {
            Some(p) => vec![p],
            None => return Some("No partition specified or system default partition".into()),
        }
    } else {
        req.partitions.clone()
    };
    // Dynamic MIG: a slice type no GPU has now may come with a repartitioning.
    if let Some(d) = cluster.dynamic_mig() {
        let typed = [req.gpus_per_job.as_ref(), req.gpus_per_task.as_ref()]
            .into_iter()
            .flatten()
            .chain(&req.gpus_per_node)
            .filter_map(|g| g.ty)
            .collect::<Vec<_>>();
        if !typed.is_empty() && typed.iter().all(|&t| d.can_offer(t)) {
            return None;
        }
    }
    let mut mem_only = true;
    for &p in &parts {
        let part = cluster.partition(p);
        // Limits of the partition as a whole make the job pend, not fail.
        let min_cpus = u64::from(req.total_tasks(req.min_nodes)) * u64::from(req.cpus_per_task);
        if req.min_nodes as usize > part.nodes.len() || !partition_has_cpus(cluster, p, min_cpus) {
            return None;
        }
        if runnable_ever(cache, cluster, params, req, p) {
            return None;
        }
        let mem_need = match req.mem {
            gresim_model::job::MemReq::PerNode(m) => Some(m),
            _ => None,
        };
        let any_mem = part
            .nodes
            .iter()
            .any(|n| mem_need.is_none_or(|m| m <= cluster.node(*n).memory_mib));
        mem_only &= !any_mem;
    }
    Some(if mem_only {
        "Memory specification can not be satisfied".into()
    } else {
        "Requested node configuration is not available".into()
    })
}

/// Whether every partition of `job` has a limit the job exceeds
/// ([`limit_reason`]): reason PartitionConfig at submission.
pub fn beyond_partition_limits(cluster: &Cluster, job: &Job) -> bool {
    job_partitions(cluster, job).all(|p| limit_reason(cluster, job, p).is_some())
}

/// Slurm tests a new job against the nodes (`select_nodes` in test-only
/// mode): if it could run only on nodes that are down or drained, in each
/// of its partitions, those nodes (its reason is ReqNodeNotAvail from the
/// start).
pub fn unavailable_at_submit(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    state: &ClusterState,
    job: &Job,
) -> Option<Vec<NodeId>> {
    let parts: Vec<PartId> = job_partitions(cluster, job).collect();
    let mut unavailable: Option<Vec<NodeId>> = None;
    for p in parts {
        match classify(cache, cluster, params, state, &job.request, p) {
            SelectFail::Unavailable(nodes) => unavailable = Some(nodes),
            _ => return None,
        }
    }
    unavailable
}
