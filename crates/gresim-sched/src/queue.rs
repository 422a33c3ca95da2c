//! Slurm's queue order (`sort_job_queue2()`): partition PriorityTier, then job
//! priority, then submit time, then job id (array tasks: array id, task id).

use std::cmp::Reverse;

use gresim_model::job::{Job, Time};
use gresim_model::{Cluster, JobIdx, PartId};

/// Position of one (job, partition) record in the queue. Smaller is earlier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueKey {
    /// `sort_job_queue2()`: records of jobs with a reservation come before
    /// all others (false sorts first).
    no_resv: bool,
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
    pub fn rank(&self) -> (bool, Reverse<u16>, Reverse<u32>) {
        (self.no_resv, self.tier, self.priority)
    }

    /// The record of a job with a reservation (`--reservation`): ahead of
    /// every job without one.
    pub fn with_resv(mut self, has: bool) -> Self {
        self.no_resv = !has;
        self
    }

    /// The key of `job`'s record in `part`, with that record's priority.
    pub fn new(cluster: &Cluster, job: &Job, idx: JobIdx, part: PartId, priority: u32) -> Self {
        let id = job.array_job_id.or(job.job_id).map_or(u32::MAX, |j| j.0);
        QueueKey {
            no_resv: true,
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
