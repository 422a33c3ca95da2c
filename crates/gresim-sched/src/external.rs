//! A whole main pass decided outside gresim: a [`PassDecider`] sees the
//! queue and the live cluster at each main pass and answers with
//! [`PassDecisions`] (jobs to start, with or without their nodes and GPUs;
//! a queue order to start in; pending reasons). [`ExternalPass`] is the
//! [`Policy`] around it: Slurm's admission and queue (priority order, one
//! record per partition), no backfill, and a check of every decision before
//! anything is allocated. The Python package's whole-pass policies and its
//! `SchedulingEnv` are deciders; the engine knows neither, only the trait.
//!
//! What the decisions mean, in the order they are applied:
//!
//! 1. `starts`: each job starts now, in its partition (the given one, else
//!    the first of its partitions where it fits), on the nodes and GPU
//!    indices given (checked by [`crate::placement::apply_choice`]) or else
//!    on cons_tres's choice on the live state. A job that is not queued, is
//!    started twice, names a partition it is not queued in, or does not fit
//!    is refused.
//! 2. `order`: the queued jobs listed start in that order, each on
//!    cons_tres's choice, until the first that does not fit for lack of free
//!    resources: it gets reason Resources, and the rest of the list Priority
//!    (a strict order: nothing starts around the job that waits). A job that
//!    can never run where it is queued gets BadConstraints, one that waits
//!    for DOWN or DRAINED nodes ReqNodeNotAvail; neither stops the list.
//! 3. `reasons`: a job left pending gets the reason given.
//!
//! A refused decision stops the run (the policy's failure, reported by
//! [`Policy::take_failure`]) unless the policy is lenient
//! ([`ExternalPass::lenient`]): then the decision is skipped and kept for
//! [`ExternalPass::take_rejected`] (the environment's invalid actions).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use gresim_model::job::{Job, JobSpec};
use gresim_model::{Cluster, ClusterState, JobIdx, NodeId, PartId, Reason};

use crate::queue::QueueKey;
use crate::select::{SelectCache, SelectFail};
use crate::{EnqueueCtx, PassCtx, Policy, SchedParams};

/// One queued job as a decider sees it: its partitions in queue order
/// (the order of its records) and its priority in the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedJob {
    pub job: JobIdx,
    /// The Slurm job id decisions name it by.
    pub id: u32,
    pub partitions: Vec<PartId>,
    pub priority: u32,
}

/// What a decider reads at a main pass: the pass context (time, cluster,
/// live allocations, job table) and the queue in priority order.
pub struct PassView<'v, 'a> {
    pub ctx: &'v PassCtx<'a>,
    pub queue: &'v [QueuedJob],
}

/// A job to start now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartDecision {
    /// Its Slurm job id.
    pub id: u32,
    /// The partition; `None`: the first of its partitions where it fits.
    pub partition: Option<PartId>,
    /// The nodes and on each the GPU indices (a mask); `None`: cons_tres's choice.
    pub nodes: Option<Vec<(NodeId, u64)>>,
}

/// A decider's answer for one pass (see the module's documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassDecisions {
    pub starts: Vec<StartDecision>,
    /// Job ids to start in this order until the first that does not fit.
    pub order: Option<Vec<u32>>,
    /// Pending reasons, by job id.
    pub reasons: Vec<(u32, Reason, Option<String>)>,
}

/// Decides a whole main pass.
pub trait PassDecider: Send {
    /// The policy's name, as reports spell it.
    fn name(&self) -> &'static str;

    /// The decisions for this pass, or why the decider cannot go on (the
    /// run stops with that message).
    fn decide(&mut self, view: &PassView<'_, '_>) -> Result<PassDecisions, String>;
}

/// Decisions handed over before each pass by a caller that steps the run
/// (the engine's `next_pass`/`run_pass`): each pass takes what was set, or
/// decides nothing.
#[derive(Debug, Default)]
pub struct Scripted {
    pub next: Option<PassDecisions>,
}

impl PassDecider for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn decide(&mut self, _view: &PassView<'_, '_>) -> Result<PassDecisions, String> {
        Ok(self.next.take().unwrap_or_default())
    }
}

/// The policy around a [`PassDecider`].
pub struct ExternalPass<D> {
    decider: D,
    queue: BTreeSet<QueueKey>,
    keys: crate::queue::JobKeys,
    /// Pending jobs beyond a partition's limits, with the limit's reason.
    limited: Vec<(JobIdx, Reason)>,
    /// Queued priorities on a cluster of several partitions (`crate::queue::enqueue`).
    prios: Option<std::collections::BTreeMap<u32, u32>>,
    cache: SelectCache,
    failure: Option<String>,
    lenient: bool,
    rejected: Vec<String>,
    started: Vec<u32>,
    stats: crate::PassStats,
}

impl<D: PassDecider> ExternalPass<D> {
    /// A policy whose refused decisions stop the run.
    pub fn new(decider: D) -> Self {
        ExternalPass {
            decider,
            queue: BTreeSet::new(),
            keys: crate::queue::JobKeys::default(),
            limited: Vec::new(),
            prios: None,
            cache: SelectCache::default(),
            failure: None,
            lenient: false,
            rejected: Vec::new(),
            started: Vec::new(),
            stats: crate::PassStats::default(),
        }
    }

    /// A policy whose refused decisions are skipped and kept for
    /// [`ExternalPass::take_rejected`].
    pub fn lenient(decider: D) -> Self {
        ExternalPass {
            lenient: true,
            ..ExternalPass::new(decider)
        }
    }

    pub fn decider(&self) -> &D {
        &self.decider
    }

    pub fn decider_mut(&mut self) -> &mut D {
        &mut self.decider
    }

    /// The decisions refused since the last call (lenient policies), each
    /// with why.
    pub fn take_rejected(&mut self) -> Vec<String> {
        std::mem::take(&mut self.rejected)
    }

    /// The job ids started by the passes since the last call.
    pub fn take_started(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.started)
    }

    /// The queue in priority order, one entry per job.
    pub fn queue_view(&self, jobs: &[Job]) -> Vec<QueuedJob> {
        let mut out: Vec<QueuedJob> = Vec::new();
        let mut seen: BTreeSet<JobIdx> = BTreeSet::new();
        for k in &self.queue {
            if seen.insert(k.job) {
                out.push(QueuedJob {
                    job: k.job,
                    id: job_id(&jobs[k.job.idx()]),
                    partitions: self.keys.of(k.job).iter().map(|q| q.part).collect(),
                    priority: k.priority(),
                });
            }
        }
        out
    }

    fn remove_job(&mut self, job: JobIdx) {
        crate::queue::remove(&mut self.queue, &mut self.keys, &mut self.prios, job);
    }

    fn refuse(&mut self, msg: String) {
        if self.lenient {
            self.rejected.push(msg);
        } else if self.failure.is_none() {
            self.failure = Some(msg);
        }
    }
}

/// A job's Slurm id as decisions name it (the array task's own id once it
/// has one, else the array's).
pub fn job_id(j: &Job) -> u32 {
    j.job_id.or(j.array_job_id).map_or(u32::MAX, |i| i.0)
}

/// Starts `job` in one of `parts` on cons_tres's choice or on `nodes`.
fn start_one(
    cache: &mut SelectCache,
    ctx: &mut PassCtx<'_>,
    job: JobIdx,
    parts: &[PartId],
    nodes: Option<&[(NodeId, u64)]>,
) -> Result<(), (String, Option<SelectFail>)> {
    let mut last: Option<(String, Option<SelectFail>)> = None;
    for &part in parts {
        if let Some(r) = crate::fifo::partition_limit_reason(ctx, job, part) {
            last = Some((format!("it is beyond a limit of the partition ({r})"), None));
            continue;
        }
        let req = &ctx.jobs[job.idx()].request;
        let alloc = match nodes {
            Some(choice) => crate::placement::apply_choice(
                cache,
                ctx.cluster,
                ctx.params,
                ctx.state,
                req,
                part,
                None,
                choice,
            )
            .map_err(|e| (e, None)),
            None => {
                crate::select::select(cache, ctx.cluster, ctx.params, ctx.state, req, part, None)
                    .map_err(|f| {
                        let why = match &f {
                            SelectFail::Busy => "not enough free resources now".to_string(),
                            SelectFail::Unavailable(_) => {
                                "its nodes are DOWN or DRAINED".to_string()
                            }
                            SelectFail::Never => "it can never run there".to_string(),
                        };
                        (why, Some(f))
                    })
            }
        };
        match alloc {
            Ok(a) => {
                // An external decider orders the queue itself: the job's own priority.
                let prio = ctx.jobs[job.idx()].priority;
                return ctx
                    .start(job, part, a, false, prio)
                    .map_err(|e| (format!("the allocation conflicts: {e}"), None));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| ("it has no partition".into(), None)))
}

impl<D: PassDecider> Policy for ExternalPass<D> {
    fn name(&self) -> &'static str {
        self.decider.name()
    }

    fn accounting_rejection(
        &mut self,
        cluster: &Cluster,
        usage: &gresim_model::accounting::AcctUsage,
        spec: &JobSpec,
        job_cnt: u32,
    ) -> Option<(Reason, String)> {
        crate::acct_policy::submit_rejection(cluster, usage, spec, job_cnt)
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

    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool {
        // Slurm's queue and `_top_priority()`, as `Fifo::enqueue` keeps them.
        crate::queue::enqueue(
            &mut self.queue,
            &mut self.keys,
            &mut self.prios,
            &mut self.limited,
            job,
            ctx,
        )
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
        if self.failure.is_some() {
            return;
        }
        for &(job, r) in &self.limited {
            if self.keys.of(job).is_empty() {
                ctx.set_reason(job, r, None);
            }
        }
        let queue = self.queue_view(ctx.jobs);
        let decisions = match self.decider.decide(&PassView {
            ctx: &*ctx,
            queue: &queue,
        }) {
            Ok(d) => d,
            Err(msg) => {
                // The decider's own failure stops the run even when lenient.
                self.failure.get_or_insert(msg);
                return;
            }
        };
        let find = |id: u32| queue.iter().position(|q| q.id == id);
        let mut started: Vec<usize> = Vec::new();
        for s in &decisions.starts {
            let Some(i) = find(s.id) else {
                self.refuse(format!("start: job {} is not pending in the queue", s.id));
                continue;
            };
            if started.contains(&i) {
                self.refuse(format!("start: job {} is started twice", s.id));
                continue;
            }
            let q = &queue[i];
            let parts: Vec<PartId> = match s.partition {
                Some(p) if q.partitions.contains(&p) => vec![p],
                Some(p) => {
                    let name = ctx
                        .cluster
                        .partitions
                        .get(p.idx())
                        .map_or_else(|| format!("#{}", p.idx()), |x| x.name.clone());
                    self.refuse(format!(
                        "start: job {} is not queued in partition {name}",
                        s.id
                    ));
                    continue;
                }
                None => q.partitions.clone(),
            };
            if !ctx.throttle_allows(q.job) {
                self.refuse(format!(
                    "start: job {} is held by its array's throttle",
                    s.id
                ));
                continue;
            }
            match start_one(&mut self.cache, ctx, q.job, &parts, s.nodes.as_deref()) {
                Ok(()) => started.push(i),
                Err((why, _)) => self.refuse(format!("start: job {} does not fit: {why}", s.id)),
            }
        }
        if let Some(order) = &decisions.order {
            let mut listed: Vec<usize> = Vec::with_capacity(order.len());
            for &id in order {
                match find(id) {
                    None => self.refuse(format!("order: job {id} is not pending in the queue")),
                    Some(i) if listed.contains(&i) => {
                        self.refuse(format!("order: job {id} is listed twice"))
                    }
                    Some(i) => listed.push(i),
                }
            }
            let mut blocked = false;
            for i in listed {
                if started.contains(&i) {
                    continue;
                }
                let q = &queue[i];
                if blocked {
                    ctx.set_reason(q.job, Reason::Priority, None);
                    continue;
                }
                if !ctx.throttle_allows(q.job) {
                    ctx.set_reason(q.job, Reason::JobArrayTaskLimit, None);
                    continue;
                }
                match start_one(&mut self.cache, ctx, q.job, &q.partitions, None) {
                    Ok(()) => started.push(i),
                    Err((_, Some(SelectFail::Never))) => {
                        ctx.set_reason(q.job, Reason::BadConstraints, None)
                    }
                    Err((_, Some(SelectFail::Unavailable(nodes)))) => {
                        let names =
                            gresim_model::hostlist::compress(&ctx.cluster.node_names(&nodes));
                        ctx.set_reason(
                            q.job,
                            Reason::ReqNodeNotAvail,
                            Some(format!("UnavailableNodes:{names}")),
                        );
                    }
                    Err(_) => {
                        ctx.set_reason(q.job, Reason::Resources, None);
                        blocked = true;
                    }
                }
            }
        }
        for (id, r, desc) in &decisions.reasons {
            match find(*id) {
                None => self.refuse(format!("reason: job {id} is not pending in the queue")),
                Some(i) if started.contains(&i) => {
                    self.refuse(format!("reason: job {id} was started in this pass"))
                }
                Some(i) => ctx.set_reason(queue[i].job, *r, desc.clone()),
            }
        }
        for i in started {
            self.started.push(queue[i].id);
            self.remove_job(queue[i].job);
        }
    }

    fn queued(&self) -> usize {
        self.queue.len() + self.limited.len()
    }

    fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    fn stats(&self) -> crate::PassStats {
        self.stats
    }
}

/// A policy shared with the caller that steps the run: the engine owns one
/// handle, the caller keeps another to read the queue and hand over
/// decisions between passes. Every call locks; nothing else holds the lock
/// while the engine runs.
pub struct Shared<P>(pub Arc<Mutex<P>>);

impl<P> Shared<P> {
    fn get(&self) -> std::sync::MutexGuard<'_, P> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<P: Policy> Policy for Shared<P> {
    fn name(&self) -> &'static str {
        self.get().name()
    }
    fn submission_rejection(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        spec: &JobSpec,
    ) -> Option<String> {
        self.get().submission_rejection(cluster, params, spec)
    }
    fn beyond_partition_limits(&self, cluster: &Cluster, job: &Job) -> bool {
        self.get().beyond_partition_limits(cluster, job)
    }
    fn unavailable_at_submit(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        state: &ClusterState,
        job: &Job,
    ) -> Option<Vec<NodeId>> {
        self.get()
            .unavailable_at_submit(cluster, params, state, job)
    }
    fn accounting_rejection(
        &mut self,
        cluster: &Cluster,
        usage: &gresim_model::accounting::AcctUsage,
        spec: &JobSpec,
        job_cnt: u32,
    ) -> Option<(Reason, String)> {
        self.get()
            .accounting_rejection(cluster, usage, spec, job_cnt)
    }
    fn cluster_changed(&mut self) {
        self.get().cluster_changed()
    }
    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool {
        self.get().enqueue(job, ctx)
    }
    fn reprioritize(&mut self, ctx: &EnqueueCtx<'_>) {
        self.get().reprioritize(ctx)
    }
    fn dequeue(&mut self, job: JobIdx, jobs: &[Job], cluster: &Cluster) {
        self.get().dequeue(job, jobs, cluster)
    }
    fn main_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.get().main_pass(ctx)
    }
    fn backfill_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.get().backfill_pass(ctx)
    }
    fn has_backfill(&self) -> bool {
        self.get().has_backfill()
    }
    fn queued(&self) -> usize {
        self.get().queued()
    }
    fn take_mig_reconfigs(&mut self) -> Vec<crate::MigReconfig> {
        self.get().take_mig_reconfigs()
    }
    fn take_failure(&mut self) -> Option<String> {
        self.get().take_failure()
    }
    fn stats(&self) -> crate::PassStats {
        self.get().stats()
    }
}

/// A reason as a decider names it: one of Slurm's plain reason names
/// (`Priority`, `Resources`, …) is that reason; any other text is reason
/// `None` with the text as its description (squeue prints `(None, text)`).
pub fn reason_from_name(name: &str) -> (Reason, Option<String>) {
    const PLAIN: [Reason; 9] = [
        Reason::None,
        Reason::Priority,
        Reason::Resources,
        Reason::ReqNodeNotAvail,
        Reason::BadConstraints,
        Reason::BeginTime,
        Reason::Dependency,
        Reason::JobArrayTaskLimit,
        Reason::PartitionConfig,
    ];
    match PLAIN.iter().find(|r| r.as_str() == name) {
        Some(&r) => (r, None),
        None => (Reason::None, Some(name.to_string())),
    }
}
