//! Slurm's queue order (`sort_job_queue2()`): partition PriorityTier, then job
//! priority, then submit time, then job id (array tasks: array id, task id).

use std::cmp::Reverse;

use gresim_model::job::{Job, Time};
use gresim_model::{Cluster, JobIdx, PartId};

/// Position of one (job, partition) record in the queue. Smaller is earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueKey {
    tier: Reverse<u16>,
    priority: Reverse<u32>,
    submit: Time,
    id: u32,
    task: u32,
    pub part: PartId,
    pub job: JobIdx,
}

impl QueueKey {
    /// Partition tier and priority: the part of the order that is "priority".
    pub fn rank(&self) -> (Reverse<u16>, Reverse<u32>) {
        (self.tier, self.priority)
    }

    /// The record's priority.
    pub fn priority(&self) -> u32 {
        self.priority.0
    }

    /// The key of `job`'s record in `part`, with that record's priority.
    pub fn new(cluster: &Cluster, job: &Job, idx: JobIdx, part: PartId, priority: u32) -> Self {
        let id = job.array_job_id.or(job.job_id).map_or(u32::MAX, |j| j.0);
        QueueKey {
            tier: Reverse(cluster.partition(part).priority_tier),
            priority: Reverse(priority),
            submit: job.submit,
            id,
            task: job.task.unwrap_or(0),
            part,
            job: idx,
        }
    }
}

/// The partitions a job is queued in: its `-p` list, or the default partition.
pub fn job_partitions<'a>(cluster: &'a Cluster, job: &'a Job) -> impl Iterator<Item = PartId> + 'a {
    let default = if job.request.partitions.is_empty() {
        cluster.default_partition()
    } else {
        None
    };
    job.request.partitions.iter().copied().chain(default)
}

/// Priorities changed (`Policy::reprioritize`): every record of `queue`
/// again with its priority now, `keys` (each job's records) kept in step.
/// Under priority/basic nothing changes.
pub fn reprioritize(
    queue: &mut std::collections::BTreeSet<QueueKey>,
    keys: &mut [Vec<QueueKey>],
    ctx: &crate::EnqueueCtx<'_>,
) {
    if matches!(ctx.params.priority, crate::priority::PriorityConfig::Basic) {
        return;
    }
    let old: Vec<QueueKey> = std::mem::take(queue).into_iter().collect();
    for k in &old {
        keys[k.job.idx()].clear();
    }
    for k in old {
        let j = &ctx.jobs[k.job.idx()];
        let prio = crate::record_priority(
            ctx.cluster,
            ctx.params,
            ctx.specs,
            j,
            k.part,
            ctx.now,
            ctx.acct,
        );
        let nk = QueueKey::new(ctx.cluster, j, k.job, k.part, prio);
        queue.insert(nk);
        keys[k.job.idx()].push(nk);
    }
}
