//! Slurm's queue order (`sort_job_queue2()`): partition PriorityTier, then job
//! priority, then submit time, then job id (array tasks: array id, task id).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};

use gresim_model::job::{Job, Time};
use gresim_model::{Cluster, JobIdx, PartId, Reason};

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

    /// Whether the record is of a job with a reservation.
    pub fn has_resv(&self) -> bool {
        !self.no_resv
    }

    /// The record's priority.
    pub fn priority(&self) -> u32 {
        self.priority.0
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

/// Each job's queue records, in the order they were queued. A queued job's
/// list is one of a pool: a list taken out (the job started or left the
/// queue) is kept empty, with its memory, for the next job queued, so
/// queueing allocates nothing once the pool is as large as the queue has
/// been deep, and a job not queued costs 4 bytes.
#[derive(Debug, Default)]
pub struct JobKeys {
    /// Per job, its list in `lists` ([`JobKeys::NONE`]: no records).
    slot: Vec<u32>,
    lists: Vec<Vec<QueueKey>>,
    /// Lists of `lists` in no job's use (empty).
    free: Vec<u32>,
}

impl JobKeys {
    const NONE: u32 = u32::MAX;

    /// Room for jobs `0..len`.
    fn ensure(&mut self, len: usize) {
        if self.slot.len() < len {
            self.slot.resize(len, Self::NONE);
        }
    }

    /// `job`'s records (none for a job never seen).
    pub fn of(&self, job: JobIdx) -> &[QueueKey] {
        match self.slot.get(job.idx()) {
            Some(&s) if s != Self::NONE => &self.lists[s as usize],
            _ => &[],
        }
    }

    /// One more record of `job`, after its others.
    fn push(&mut self, job: JobIdx, k: QueueKey) {
        self.ensure(job.idx() + 1);
        let mut s = self.slot[job.idx()];
        if s == Self::NONE {
            s = match self.free.pop() {
                Some(f) => f,
                None => {
                    self.lists.push(Vec::new());
                    (self.lists.len() - 1) as u32
                }
            };
            self.slot[job.idx()] = s;
        }
        self.lists[s as usize].push(k);
    }

    /// Calls `f` on each of `job`'s records, in order, and forgets them.
    fn take(&mut self, job: JobIdx, mut f: impl FnMut(QueueKey)) {
        let Some(s) = self.slot.get_mut(job.idx()) else {
            return;
        };
        if *s == Self::NONE {
            return;
        }
        let list = &mut self.lists[*s as usize];
        for k in list.drain(..) {
            f(k);
        }
        self.free.push(*s);
        *s = Self::NONE;
    }
}

/// Counts one more (`add`) or one less record of priority `prio`.
fn prio_count(p: &mut BTreeMap<u32, u32>, prio: u32, add: bool) {
    if add {
        *p.entry(prio).or_insert(0) += 1;
    } else if let Some(c) = p.get_mut(&prio) {
        *c -= 1;
        if *c == 0 {
            p.remove(&prio);
        }
    }
}

/// Queues `job`'s records (one per partition it may run in) into `queue`,
/// `keys` kept in step; a partition whose limits the job exceeds gets no
/// record but an entry in `limited` with the limit's reason. Returns Slurm's
/// submission test `_top_priority()` (job_mgr.c): whether no queued record
/// ranks strictly higher.
///
/// That test meant to compare partition tiers, but for two jobs without a
/// reservation its "same reservation" test (`!xstrcmp(NULL, NULL)`) is true,
/// so it compares job priorities alone, in any partition: a job needing
/// preemption shows `Priority` while a lower-tier job waits ahead
/// (preempt_part_requeue's o2, o4). With one partition that is the tier and
/// overlap test below; with several, `prios` counts the queued priorities
/// of jobs without a reservation (created on the first such call). A job
/// with a reservation is compared only with jobs with one ("different
/// reservation": skipped), by the rank scan.
pub fn enqueue(
    queue: &mut BTreeSet<QueueKey>,
    keys: &mut JobKeys,
    prios: &mut Option<BTreeMap<u32, u32>>,
    limited: &mut Vec<(JobIdx, Reason)>,
    job: JobIdx,
    ctx: &crate::EnqueueCtx<'_>,
) -> bool {
    let cluster = ctx.cluster;
    let j = &ctx.jobs[job.idx()];
    let resv = ctx.specs[j.sub as usize].reservation().is_some();
    if prios.is_none() && cluster.partitions.len() > 1 {
        let mut p = BTreeMap::new();
        for k in queue.iter().filter(|k| !k.has_resv()) {
            prio_count(&mut p, k.priority(), true);
        }
        *prios = Some(p);
    }
    let mut top = true;
    let mut own: Option<u32> = None;
    for part in job_partitions(cluster, j) {
        // A job beyond a partition's limits is not runnable there: Slurm
        // leaves it out of the queue and names the limit as its reason.
        if let Some(r) = crate::fifo::limit_reason(cluster, j, part) {
            limited.push((job, r));
            continue;
        }
        let prio =
            crate::record_priority(cluster, ctx.params, ctx.specs, j, part, ctx.now, ctx.acct);
        let k = QueueKey::new(cluster, j, job, part, prio).with_resv(resv);
        if prios.is_some() && !resv {
            own = own.max(Some(prio));
        } else {
            // Anything of strictly higher (tier, priority) queued in a
            // partition sharing nodes with this one, with a reservation as
            // this job has one or not? Equal priority does not count.
            top &= !queue
                .range(..k)
                .take_while(|q| q.rank() < k.rank())
                .filter(|q| q.has_resv() == resv)
                .any(|q| q.part == part || crate::fifo::partitions_overlap(cluster, q.part, part));
        }
        queue.insert(k);
        keys.push(job, k);
    }
    if let (Some(p), Some(mine), false) = (prios.as_mut(), own, resv) {
        // Strictly higher priority only (the job's own records are not counted yet).
        top = p.range(mine.saturating_add(1)..).next().is_none() || mine == u32::MAX;
        for k in keys.of(job) {
            prio_count(p, k.priority(), true);
        }
    }
    top
}

/// Takes `job`'s records out of `queue` (and `prios`).
pub fn remove(
    queue: &mut BTreeSet<QueueKey>,
    keys: &mut JobKeys,
    prios: &mut Option<BTreeMap<u32, u32>>,
    job: JobIdx,
) {
    keys.take(job, |k| {
        queue.remove(&k);
        if let (Some(p), false) = (prios.as_mut(), k.has_resv()) {
            prio_count(p, k.priority(), false);
        }
    });
}

/// Priorities changed (`Policy::reprioritize`): every record of `queue`
/// again with its priority now, `keys` (each job's records) and `prios`
/// kept in step. Under priority/basic nothing changes.
pub fn reprioritize(
    queue: &mut BTreeSet<QueueKey>,
    keys: &mut JobKeys,
    prios: &mut Option<BTreeMap<u32, u32>>,
    ctx: &crate::EnqueueCtx<'_>,
) {
    if matches!(ctx.params.priority, crate::priority::PriorityConfig::Basic) {
        return;
    }
    let old: Vec<QueueKey> = std::mem::take(queue).into_iter().collect();
    for k in &old {
        keys.take(k.job, |_| {});
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
        let nk = QueueKey::new(ctx.cluster, j, k.job, k.part, prio).with_resv(k.has_resv());
        if let (Some(p), false) = (prios.as_mut(), k.has_resv()) {
            prio_count(p, k.priority(), false);
            prio_count(p, prio, true);
        }
        queue.insert(nk);
        keys.push(k.job, nk);
    }
}
