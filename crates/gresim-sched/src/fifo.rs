//! The main scheduler with strict per-partition blocking, and no backfill.
//!
//! Records are visited in queue order. A record that fits starts. The first
//! record of a partition that does not fit for lack of free resources
//! (Resources) marks its partition failed and takes the partition's nodes out
//! of the rest of the pass, so no lower-priority job starts ahead of it on
//! those nodes; later records of a failed partition get reason Priority.
//! Records blocked by partition limits or unavailable nodes do not block.

use std::collections::{BTreeMap, BTreeSet};

use gresim_model::job::{Job, JobSpec};
use gresim_model::{Cluster, ClusterState, JobIdx, NodeId, PartId, Reason};

use crate::placement::Placement;
use crate::queue::QueueKey;
use crate::select::{SelectCache, SelectFail};
use crate::{EnqueueCtx, PassCtx, Policy, SchedParams};

/// The main scheduler: priority order with strict per-partition blocking,
/// with or without Slurm's backfill pass.
#[derive(Debug, Default)]
pub struct Fifo {
    /// Run the backfill pass (sched/backfill); without it, sched/builtin.
    backfill: bool,
    queue: BTreeSet<QueueKey>,
    /// Each job's queue records, to remove them.
    keys: crate::queue::JobKeys,
    /// Pass number in which each job was last visited or started.
    visited: Vec<u32>,
    /// When each job last preempted others (`preempt_start_time`).
    preempt_start: Vec<Option<gresim_model::job::Time>>,
    pass: u32,
    /// Jobs queued since the last pass and jobs last given `Resources`:
    /// the only ones whose reason a pass that stops early must still fix.
    watch: Vec<JobIdx>,
    /// Pending jobs beyond a partition's limits, with the limit's reason.
    limited: Vec<(JobIdx, Reason)>,
    /// How many queued records have each priority, kept only on a cluster
    /// of several partitions (see [`Fifo::enqueue`]).
    prios: Option<BTreeMap<u32, u32>>,
    /// How nodes and GPUs are chosen (Slurm's cons_tres by default).
    placement: Placement,
    /// Pass counters for benchmarks (decision-neutral).
    stats: crate::PassStats,
    /// Node selection's caches, for this policy's passes and admission checks.
    cache: SelectCache,
    /// Backfill's buffers, kept from pass to pass.
    bf_scratch: crate::backfill::Scratch,
    /// The main pass's lists, kept from pass to pass (empty between passes).
    main_scratch: MainScratch,
    /// Backfill through the plain reference pass (`reference` feature only).
    #[cfg(feature = "reference")]
    plain_backfill: bool,
}

/// [`Fifo::main_pass`]'s lists, kept so that a pass allocates nothing in
/// the common case: partitions failed, jobs started, and the spare list
/// that becomes the next pass's [`Fifo::watch`].
#[derive(Debug, Default)]
struct MainScratch {
    failed: Vec<bool>,
    started: Vec<JobIdx>,
    resources: Vec<JobIdx>,
}

impl Fifo {
    /// The main scheduler alone (`fifo`).
    pub fn new() -> Self {
        Fifo::default()
    }

    /// Main scheduler plus backfill, as sched/backfill (`slurm`).
    pub fn with_backfill() -> Self {
        Fifo {
            backfill: true,
            ..Fifo::default()
        }
    }

    /// `slurm` with the plain backfill pass the fast one is checked against
    /// ([`crate::backfill_plain`]).
    #[cfg(feature = "reference")]
    pub fn with_plain_backfill() -> Self {
        Fifo {
            backfill: true,
            plain_backfill: true,
            ..Fifo::default()
        }
    }

    /// Main scheduler plus backfill, choosing nodes and GPUs with `placement`.
    pub fn with_placement(placement: Placement) -> Self {
        Fifo {
            backfill: true,
            placement,
            ..Fifo::default()
        }
    }

    fn ensure(&mut self, job: JobIdx) {
        if self.visited.len() <= job.idx() {
            self.visited.resize(job.idx() + 1, 0);
            self.preempt_start.resize(job.idx() + 1, None);
        }
    }

    fn remove_job(&mut self, job: JobIdx) {
        crate::queue::remove(&mut self.queue, &mut self.keys, &mut self.prios, job);
    }
}

/// CPUs of all the partition's nodes.
pub fn partition_cpus(cluster: &Cluster, part: PartId) -> u64 {
    cluster
        .partition(part)
        .nodes
        .iter()
        .map(|n| u64::from(cluster.node(*n).cpus()))
        .sum()
}

/// Whether the partition's nodes have at least `cpus` CPUs in all:
/// [`partition_cpus`] `>= cpus`, stopping as soon as the sum gets there.
pub fn partition_has_cpus(cluster: &Cluster, part: PartId, cpus: u64) -> bool {
    let mut sum = 0u64;
    for n in &cluster.partition(part).nodes {
        if sum >= cpus {
            return true;
        }
        sum += u64::from(cluster.node(*n).cpus());
    }
    sum >= cpus
}

/// Whether two partitions share a node.
pub(crate) fn partitions_overlap(cluster: &Cluster, a: PartId, b: PartId) -> bool {
    a == b
        || cluster
            .partition(a)
            .nodes
            .iter()
            .any(|n| cluster.in_partition(b, *n))
}

/// Reasons that come from partition limits, checked before selection. These
/// records never block their partition.
pub fn partition_limit_reason(ctx: &PassCtx<'_>, job: JobIdx, part: PartId) -> Option<Reason> {
    limit_reason(ctx.cluster, &ctx.jobs[job.idx()], part)
}

/// [`partition_limit_reason`] for a job record.
pub fn limit_reason(cluster: &Cluster, j: &Job, part: PartId) -> Option<Reason> {
    limit_reason_by(cluster, j, part, |cpus| {
        partition_has_cpus(cluster, part, cpus)
    })
}

/// [`partition_limit_reason`] for the records of one pass, which asks the
/// partitions' CPU totals once each (the cluster does not change during a
/// pass): the same answers without summing a partition's CPUs per record.
#[derive(Debug, Default)]
pub(crate) struct PassLimits {
    cpus: Vec<Option<u64>>,
}

impl PassLimits {
    pub(crate) fn reason(
        &mut self,
        ctx: &PassCtx<'_>,
        job: JobIdx,
        part: PartId,
    ) -> Option<Reason> {
        let cluster = ctx.cluster;
        if self.cpus.len() < cluster.partitions.len() {
            self.cpus.resize(cluster.partitions.len(), None);
        }
        let total = &mut self.cpus[part.idx()];
        limit_reason_by(cluster, &ctx.jobs[job.idx()], part, |cpus| {
            *total.get_or_insert_with(|| partition_cpus(cluster, part)) >= cpus
        })
    }
}

/// [`limit_reason`], asking `has_cpus(n)` whether the partition's nodes have
/// at least `n` CPUs in all.
fn limit_reason_by(
    cluster: &Cluster,
    j: &Job,
    part: PartId,
    has_cpus: impl FnOnce(u64) -> bool,
) -> Option<Reason> {
    use gresim_model::cluster::PartitionState;
    let p = cluster.partition(part);
    match p.state {
        PartitionState::Down => return Some(Reason::PartitionDown),
        PartitionState::Inactive => return Some(Reason::PartitionInactive),
        PartitionState::Up | PartitionState::Drain => {}
    }
    let req = &j.request;
    if req.min_nodes as usize > p.nodes.len()
        || p.max_nodes.is_some_and(|m| req.min_nodes > m)
        || req.min_nodes < p.min_nodes
    {
        return Some(Reason::PartitionNodeLimit);
    }
    // More CPUs than the whole partition has: accepted, pends (PartitionConfig).
    let min_cpus = u64::from(req.total_tasks(req.min_nodes)) * u64::from(req.cpus_per_task);
    if !has_cpus(min_cpus) {
        return Some(Reason::PartitionConfig);
    }
    if let (Some(Some(limit)), Some(max)) = (req.time_limit, p.max_time) {
        if limit > max {
            return Some(Reason::PartitionTimeLimit);
        }
    }
    if let (Some(None), Some(_)) = (req.time_limit, p.max_time) {
        return Some(Reason::PartitionTimeLimit);
    }
    None
}

/// A job that does not fit on free resources may preempt running jobs
/// (`select_nodes()` with preemption candidates); it waits either way.
/// `preempt_start` holds when each job last preempted; `prio` is the
/// priority of the job's record in `part`.
fn try_preempt(
    preempt_start: &mut [Option<gresim_model::job::Time>],
    ctx: &mut PassCtx<'_>,
    job: JobIdx,
    (part, prio): (PartId, u32),
    avoid: Option<&[bool]>,
) {
    if ctx.params.preempt.enabled() {
        let _ =
            crate::preempt::preempt_for(ctx, job, part, prio, avoid, &mut preempt_start[job.idx()]);
    }
}

/// With reservations, a job that does not fit now: whether it could not run
/// even on idle nodes outside `avoid` (the reserved nodes and those the
/// pass took away). Slurm's `_pick_best_nodes()` then finds it runnable on
/// the partition but not on the available nodes, with no node busy in its
/// sense (allocated whole or completing): ESLURM_NODE_NOT_AVAIL, reason
/// "ReqNodeNotAvail, May be reserved for other job", and the partition is
/// not failed. Only asked when the cluster has reservations.
fn resv_blocks_only(
    ctx: &PassCtx<'_>,
    req: &gresim_model::JobRequest,
    part: PartId,
    avoid: &[bool],
) -> bool {
    let idle = ClusterState::new(ctx.cluster);
    let mask: Vec<bool> = avoid
        .iter()
        .enumerate()
        .map(|(i, &a)| a || !ctx.state.node(NodeId::from_idx(i)).schedulable())
        .collect();
    let mut cache = SelectCache::default();
    crate::select::try_select(
        &mut cache,
        ctx.cluster,
        ctx.params,
        &idle,
        req,
        part,
        Some(&mask),
    )
    .is_none()
}

/// A later record of a job that got Resources earlier in this pass stands
/// behind a failed partition: the job ends the pass with Priority (Slurm
/// sets a job's reason at each of its records, the last one stays).
fn resources_to_priority(ctx: &mut PassCtx<'_>, job: JobIdx) {
    ctx.reasons.retain(|r| r.0 != job);
    ctx.set_reason(job, Reason::Priority, None);
}

impl Policy for Fifo {
    fn accounting_rejection(
        &mut self,
        cluster: &Cluster,
        usage: &gresim_model::accounting::AcctUsage,
        spec: &gresim_model::JobSpec,
        job_cnt: u32,
    ) -> Option<(gresim_model::Reason, String)> {
        crate::acct_policy::submit_rejection(cluster, usage, spec, job_cnt)
    }

    fn name(&self) -> &'static str {
        if !self.placement.is_slurm() {
            self.placement.name()
        } else if self.backfill {
            "slurm"
        } else {
            "fifo"
        }
    }

    fn submission_rejection(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        spec: &JobSpec,
    ) -> Option<String> {
        crate::admission::submission_rejection(&mut self.cache, cluster, params, spec)
    }

    fn beyond_partition_limits(&self, cluster: &Cluster, job: &Job) -> bool {
        crate::admission::beyond_partition_limits(cluster, job)
    }

    fn unavailable_at_submit(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        state: &ClusterState,
        job: &Job,
    ) -> Option<Vec<NodeId>> {
        crate::admission::unavailable_at_submit(&mut self.cache, cluster, params, state, job)
    }

    fn cluster_changed(&mut self) {
        self.cache.clear();
    }

    fn has_backfill(&self) -> bool {
        self.backfill
    }

    fn backfill_pass(&mut self, ctx: &mut PassCtx<'_>) {
        if !self.backfill {
            return;
        }
        let (queued, mut tested, mut tentative) = (self.queue.len(), 0, 0);
        #[cfg(feature = "reference")]
        if self.plain_backfill {
            for job in crate::backfill_plain::backfill_pass(
                &self.queue,
                ctx,
                &self.placement,
                &mut self.cache,
            ) {
                self.remove_job(job);
            }
            return;
        }
        for job in crate::backfill::backfill_pass(
            &self.queue,
            ctx,
            &self.placement,
            &mut self.cache,
            &mut self.bf_scratch,
            &mut tested,
            &mut tentative,
            &mut self.preempt_start,
        ) {
            self.remove_job(job);
        }
        // Jobs backfill started over suspended ones (SUSPEND,GANG).
        for k in 0..ctx.suspended.len() {
            self.remove_job(ctx.suspended[k].by);
        }
        self.stats.add_backfill_pass(queued, tested);
        self.stats.tentative += tentative;
    }

    fn stats(&self) -> crate::PassStats {
        self.stats
    }

    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool {
        self.ensure(job);
        let top = crate::queue::enqueue(
            &mut self.queue,
            &mut self.keys,
            &mut self.prios,
            &mut self.limited,
            job,
            ctx,
        );
        self.watch.push(job);
        top
    }

    fn reprioritize(&mut self, ctx: &EnqueueCtx<'_>) {
        crate::queue::reprioritize(&mut self.queue, &mut self.keys, &mut self.prios, ctx);
    }

    fn dequeue(&mut self, job: JobIdx, _jobs: &[Job], _cluster: &Cluster) {
        self.remove_job(job);
        self.limited.retain(|(j, _)| *j != job);
    }

    fn main_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.stats.main_passes += 1;
        self.pass = self.pass.wrapping_add(1).max(1);
        let pass = self.pass;
        let nparts = ctx.cluster.partitions.len();
        let mut scratch = std::mem::take(&mut self.main_scratch);
        let mut failed = std::mem::take(&mut scratch.failed);
        failed.clear();
        failed.resize(nparts, false);
        let mut nfailed = 0;
        let mut avoid: Option<Vec<bool>> = None;
        // Nodes required by a `-w` job that could not start in this pass.
        let mut held: Option<Vec<bool>> = None;
        let mut started = std::mem::take(&mut scratch.started);
        started.clear();
        let mut watch = std::mem::take(&mut self.watch);
        // Jobs no partition can take get their limit as the reason.
        for &(job, r) in &self.limited {
            if self.keys.of(job).is_empty() {
                ctx.set_reason(job, r, None);
            }
        }
        let mut resources = std::mem::take(&mut scratch.resources);
        resources.clear();
        let mut acct_memo = crate::acct_policy::RunnableMemo::default();
        // With reservations: the reservations whose jobs failed in this pass,
        // and each job's nodes to avoid.
        let mut failed_resv: Vec<String> = Vec::new();
        let mut resv_avoid: Vec<bool> = Vec::new();

        let mut stopped_at: Option<QueueKey> = None;
        for k in self.queue.iter() {
            if nfailed == nparts {
                stopped_at = Some(*k);
                break;
            }
            let (job, part) = (k.job, k.part);
            if self.visited[job.idx()] == pass && started.contains(&job) {
                continue;
            }
            self.visited[job.idx()] = pass;
            // What Slurm checks while building the queue comes first: the
            // array throttle, then the partition-failure skip of `_schedule()`.
            if !ctx.throttle_allows(job) {
                ctx.set_reason(job, Reason::JobArrayTaskLimit, None);
                continue;
            }
            let (jobs, specs) = (ctx.jobs, ctx.specs);
            let resv_name = ctx
                .resv
                .and_then(|_| specs[jobs[job.idx()].sub as usize].reservation());
            // `_schedule()`: a job of a reservation that failed in this
            // pass waits with Priority; one with a reservation is not held
            // back by its partition's failure.
            if let Some(name) = resv_name {
                if failed_resv.iter().any(|r| r == name) {
                    ctx.set_reason(job, Reason::Priority, None);
                    continue;
                }
            } else if failed[part.idx()] {
                // The reason as this pass left it: a job of several
                // partitions may have got Resources from an earlier record.
                let r = ctx.jobs[job.idx()].reason;
                if resources.contains(&job) {
                    resources_to_priority(ctx, job);
                } else if matches!(r, Reason::None | Reason::Resources) {
                    ctx.set_reason(job, Reason::Priority, None);
                }
                continue;
            }
            // `acct_policy_job_runnable_pre_select()` and `_post_select()`:
            // a job an accounting limit holds does not block its partition.
            if let Some(r) = acct_memo.runnable(ctx, job, part) {
                ctx.set_reason(job, r, None);
                continue;
            }
            let relaxed = crate::select::switches_relaxed(
                ctx.cluster,
                &ctx.jobs[job.idx()],
                ctx.now,
                ctx.params,
            );
            let req = relaxed.as_ref().unwrap_or(&ctx.jobs[job.idx()].request);
            // `_schedule()`: fewer available (not DOWN or DRAINED) nodes in
            // the partition than the job needs gives Resources, unless the
            // job already waits for its required nodes.
            if !ctx.state.all_schedulable() {
                let j = &ctx.jobs[job.idx()];
                let waits_required = j.reason == Reason::ReqNodeNotAvail
                    && req
                        .nodelist
                        .iter()
                        .any(|n| !ctx.state.node(*n).schedulable());
                let avail = ctx
                    .cluster
                    .partition(part)
                    .nodes
                    .iter()
                    .filter(|n| ctx.state.node(**n).schedulable())
                    .count();
                if !waits_required && (req.min_nodes.max(1) as usize) > avail {
                    ctx.set_reason(
                        job,
                        Reason::Resources,
                        Some(
                            "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
                                .into(),
                        ),
                    );
                    // Slurm also fails the partition here (the jobs behind
                    // show Priority); gresim judges them on their own.
                    continue;
                }
            }
            // Required nodes an earlier `-w` job of this pass could not
            // start on are out of `avail_node_bitmap`: ReqNodeNotAvail.
            if let Some(h) = held.as_deref() {
                if req.nodelist.iter().any(|n| h[n.idx()]) {
                    let gone: Vec<_> = req
                        .nodelist
                        .iter()
                        .copied()
                        .filter(|n| h[n.idx()] && ctx.cluster.in_partition(part, *n))
                        .collect();
                    let names = gresim_model::hostlist::compress(&ctx.cluster.node_names(&gone));
                    ctx.set_reason(
                        job,
                        Reason::ReqNodeNotAvail,
                        Some(format!("UnavailableNodes:{names}")),
                    );
                    continue;
                }
            }
            // `job_test_resv()` at now: the nodes reservations keep from
            // the job join those the pass has taken away.
            let mut resv_overlap = false;
            if let Some(all) = ctx.resv {
                let dur = crate::backfill::plan_limit(ctx, job, part);
                resv_avoid.resize(ctx.cluster.nodes.len(), false);
                match crate::resv::job_test(ctx, all, job, part, ctx.now, dur, &mut resv_avoid) {
                    crate::resv::Test::NotYet(_) | crate::resv::Test::Ended => {
                        ctx.set_reason(job, Reason::Reservation, None);
                        continue;
                    }
                    crate::resv::Test::Maint(_) => {
                        ctx.set_reason(
                            job,
                            Reason::ReqNodeNotAvail,
                            Some("Reserved for maintenance".into()),
                        );
                        continue;
                    }
                    crate::resv::Test::Usable { overlap } => {
                        resv_overlap = overlap;
                        if let Some(a) = avoid.as_deref() {
                            for (x, y) in resv_avoid.iter_mut().zip(a) {
                                *x |= *y;
                            }
                        }
                    }
                }
            }
            let job_avoid = if ctx.resv.is_some() {
                Some(&resv_avoid[..])
            } else {
                avoid.as_deref()
            };
            let req = &ctx.jobs[job.idx()].request;
            match crate::placement::place(
                &mut self.cache,
                &self.placement,
                ctx.cluster,
                ctx.params,
                ctx.state,
                req,
                part,
                job_avoid,
            ) {
                Ok(alloc) => {
                    if ctx.start(job, part, alloc, false, k.priority()).is_ok() {
                        started.push(job);
                    }
                }
                // SUSPEND,GANG: it starts at once over lower-tier jobs.
                Err(SelectFail::Busy)
                    if ctx.params.preempt.enabled()
                        && crate::preempt::suspend_start(
                            ctx,
                            job,
                            part,
                            k.priority(),
                            job_avoid,
                            false,
                        ) =>
                {
                    started.push(job);
                }
                // A partition whose jobs share cores (OverSubscribe=FORCE:N, or YES:N
                // for a job with --oversubscribe):
                // it starts in a row of its partition.
                Err(SelectFail::Busy)
                    if ctx
                        .params
                        .row_sharing(ctx.cluster.partition(part), &ctx.jobs[job.idx()].request)
                        && crate::gang::row_start(
                            ctx,
                            job,
                            part,
                            k.priority(),
                            job_avoid,
                            false,
                        ) =>
                {
                    started.push(job);
                }
                Err(SelectFail::Busy)
                    if resv_overlap && resv_blocks_only(ctx, req, part, &resv_avoid) =>
                {
                    // A reservation took nodes of its partition (or the
                    // nodes the job requires), and only the nodes taken
                    // keep it from running: Slurm's
                    // `_pick_best_nodes()` finds it runnable on the
                    // partition but not on the nodes left (no node busy):
                    // ESLURM_NODE_NOT_AVAIL, which does not fail the partition.
                    ctx.set_reason(
                        job,
                        Reason::ReqNodeNotAvail,
                        Some("May be reserved for other job".into()),
                    );
                }
                Err(SelectFail::Busy) if req.nodelist.len() >= req.min_nodes.max(1) as usize => {
                    try_preempt(
                        &mut self.preempt_start,
                        ctx,
                        job,
                        (part, k.priority()),
                        avoid.as_deref(),
                    );
                    // `_schedule()`: a job whose required nodes cover its
                    // node count does not block its partition; its nodes
                    // leave `avail_node_bitmap` for the rest of the pass.
                    ctx.set_reason(job, Reason::Resources, None);
                    resources.push(job);
                    let n_all = ctx.cluster.nodes.len();
                    let h = held.get_or_insert_with(|| vec![false; n_all]);
                    let a = avoid.get_or_insert_with(|| vec![false; n_all]);
                    for n in &req.nodelist {
                        h[n.idx()] = true;
                        a[n.idx()] = true;
                    }
                }
                Err(SelectFail::Busy) if resv_name.is_some() => {
                    // `_schedule()`: a reservation's job that does not fit
                    // fails its reservation, not its partition.
                    ctx.set_reason(job, Reason::Resources, None);
                    resources.push(job);
                    failed_resv.extend(resv_name.map(str::to_string));
                }
                Err(SelectFail::Busy) => {
                    try_preempt(
                        &mut self.preempt_start,
                        ctx,
                        job,
                        (part, k.priority()),
                        avoid.as_deref(),
                    );
                    ctx.set_reason(job, Reason::Resources, None);
                    resources.push(job);
                    failed[part.idx()] = true;
                    nfailed += 1;
                    let a = avoid.get_or_insert_with(|| vec![false; ctx.cluster.nodes.len()]);
                    for n in &ctx.cluster.partition(part).nodes {
                        a[n.idx()] = true;
                    }
                }
                Err(SelectFail::Unavailable(nodes)) => {
                    let names = gresim_model::hostlist::compress(&ctx.cluster.node_names(&nodes));
                    ctx.set_reason(
                        job,
                        Reason::ReqNodeNotAvail,
                        Some(format!("UnavailableNodes:{names}")),
                    );
                }
                Err(SelectFail::Never) => {
                    ctx.set_reason(job, Reason::BadConstraints, None);
                }
            }
        }
        // A pass that stopped early did not visit every record: the ones it
        // skipped stand behind a failed partition, as Slurm would have said.
        // That holds for the later records of a job of several partitions
        // too, which Slurm visits after the one that got Resources.
        if let Some(stop) = stopped_at {
            for &job in &resources {
                if self.keys.of(job).iter().any(|q| *q >= stop) {
                    resources_to_priority(ctx, job);
                }
            }
        }
        for &job in &watch {
            let j = &ctx.jobs[job.idx()];
            if self.visited[job.idx()] != pass
                && !self.keys.of(job).is_empty()
                && matches!(j.reason, Reason::None | Reason::Resources)
            {
                ctx.set_reason(job, Reason::Priority, None);
            }
        }
        for &job in &started {
            self.remove_job(job);
        }
        self.watch = resources;
        watch.clear();
        started.clear();
        self.main_scratch = MainScratch {
            failed,
            started,
            resources: watch,
        };
    }

    fn queued(&self) -> usize {
        self.queue.len() + self.limited.len()
    }

    fn take_failure(&mut self) -> Option<String> {
        self.placement.take_failure()
    }
}
