//! The classic queue policies of the scheduling literature, beside Slurm's:
//!
//! * `strict-fifo`: jobs start in queue order; the first job that does not
//!   fit stops the pass, so nothing overtakes it.
//! * `easy`: EASY backfilling. The queue head that does not fit gets a
//!   reservation at the earliest time it fits; a later job starts now if it
//!   fits now on resources the head's reservation leaves alone (or it ends
//!   before the reservation begins).
//! * `conservative`: conservative backfilling. Every queued job holds a
//!   reservation at the earliest time it fits without delaying any job
//!   ahead of it; a job starts when its reservation begins now.
//!
//! All three plan with requested time limits (the walltime), never with real
//! run times, and queue jobs first come, first served (submit time, then
//! submission order), ignoring Slurm's priorities and partition tiers. They
//! follow Batsim's scheduler batsched (`fcfs`, `easy_bf`,
//! `conservative_bf`), which is what `docs/reproductions.md` checks them
//! against:
//!
//! * A running job holds its resources until its planned end (start +
//!   limit). A job fits at `t` on what is free once the running jobs
//!   planned to end by `t` are gone, minus what reservations hold during
//!   any part of `[t, t + limit)`. Conservative's reservations hold whole
//!   nodes (as Slurm's backfill does here); EASY's one reservation holds
//!   exactly the head's cores, memory and GPUs, so a job that would still
//!   run when it begins may use the rest of those nodes. For whole-node
//!   jobs, Batsim's hosts, the two are the same.
//! * Nodes are chosen first fit: the lowest node-table indices that hold
//!   the job (batsched's default selector), through
//!   [`Placement::FirstFit`], so a node's CPUs, memory and GPUs are
//!   accounted exactly as for every other policy.
//! * The earliest start is the earliest of now and the planned ends of
//!   running jobs and reservations: availability only grows at those times.
//! * EASY recomputes the head's reservation only when resources were
//!   released (a job ended, a node came back, a queued job left) or the head
//!   changed, and then tries every queued job; a pass after submissions only
//!   tries the new jobs. The outcome is the same as trying everything,
//!   because nothing that failed before can fit now.
//! * Conservative, after a release, compresses the schedule in queue order:
//!   each job's reservation is taken out and the job re-planned at its
//!   earliest fit, with the later jobs' reservations still in place. A pass
//!   after submissions only plans the new jobs.
//!
//! Cost of one pass: a job's earliest fit sweeps once over the running jobs'
//! planned ends and the reservations (the profile), with counts of the
//! fitting nodes, their GPUs and their free CPUs kept up to date as nodes
//! are released or reserved, so node selection runs only at times when the
//! job could fit; conservative compression is O(queue × profile) sweeps.
//! The releases themselves are shared: until the pass starts a job, one
//! release sweep of the ends (`crate::sweep`) serves every job it plans,
//! and each request shape's node fits, and how the ends change them, are
//! worked out once. (`classic/plain.rs` keeps the search without these
//! shortcuts, for the property tests to compare.)

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::{Excluded, Unbounded};

use gresim_model::job::{Job, JobRequest, Time};
use gresim_model::{Allocation, Cluster, ClusterState, JobIdx, NodeId, PartId, Reason};

use crate::fifo::limit_reason;
use crate::placement::{place, Placement};
use crate::queue::job_partitions;
use crate::select::{node_may_fit, try_select, SelectCache, SelectFail, Skip};
use crate::sweep::{Ends, FitChanges, Sweep};
use crate::{EnqueueCtx, PassCtx, Policy};

#[cfg(feature = "reference")]
mod plain;

/// Which classic policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassicKind {
    /// `strict-fifo`.
    StrictFifo,
    /// `easy`: only the queue head holds a reservation.
    Easy,
    /// `conservative`: every queued job holds a reservation.
    Conservative,
}

impl ClassicKind {
    /// The policy's name, as `--policy` spells it.
    pub fn name(self) -> &'static str {
        match self {
            ClassicKind::StrictFifo => "strict-fifo",
            ClassicKind::Easy => "easy",
            ClassicKind::Conservative => "conservative",
        }
    }
}

/// What a queued job holds over `[start, end)`: the resources it would get
/// then (`alloc`), and their nodes.
#[derive(Debug, Clone)]
struct Resv {
    start: Time,
    end: Time,
    nodes: Vec<NodeId>,
    alloc: Allocation,
}

/// A classic queue policy (see the module documentation).
#[derive(Debug)]
pub struct Classic {
    kind: ClassicKind,
    /// Queued jobs by (submit time, job), with the partition they run in.
    queue: BTreeMap<(Time, JobIdx), PartId>,
    /// Each queued job's submit key, to find it in `queue`.
    key: Vec<Option<Time>>,
    /// Jobs beyond every partition's limits, with the limit's reason.
    limited: Vec<(JobIdx, Reason)>,
    /// Jobs queued since the last pass.
    fresh: Vec<JobIdx>,
    /// Reservations by job, and the same ordered by start and by end.
    resv: Vec<Option<Resv>>,
    by_start: BTreeSet<(Time, JobIdx)>,
    by_end: BTreeSet<(Time, JobIdx)>,
    /// Running jobs right after the last pass: fewer now means some ended.
    expect_running: usize,
    /// Which nodes were schedulable at the last pass (a checksum).
    node_sig: u64,
    /// A queued job left (cancel, hold): its reservation is gone.
    dirty: bool,
    /// Pass counters for benchmarks (decision-neutral).
    stats: crate::PassStats,
    /// Jobs planned or tried in the current pass.
    tested: u64,
    /// Node selection's caches, for this policy's passes and admission checks.
    cache: SelectCache,
    /// Plan through the plain reference search (`reference` feature only).
    #[cfg(feature = "reference")]
    plain: bool,
}

impl Classic {
    pub fn new(kind: ClassicKind) -> Self {
        Classic {
            kind,
            queue: BTreeMap::new(),
            key: Vec::new(),
            limited: Vec::new(),
            fresh: Vec::new(),
            resv: Vec::new(),
            by_start: BTreeSet::new(),
            by_end: BTreeSet::new(),
            expect_running: 0,
            node_sig: 0,
            dirty: false,
            stats: crate::PassStats::default(),
            tested: 0,
            cache: SelectCache::new(),
            #[cfg(feature = "reference")]
            plain: false,
        }
    }

    /// `kind` planning through the plain earliest-fit search the fast one
    /// is checked against (`classic/plain.rs`).
    #[cfg(feature = "reference")]
    pub fn with_plain_planner(kind: ClassicKind) -> Self {
        Classic {
            plain: true,
            ..Classic::new(kind)
        }
    }

    /// The earliest-fit search of one pass.
    fn planner<'a>(&self, ctx: &PassCtx<'a>) -> Plan<'a> {
        #[cfg(feature = "reference")]
        if self.plain {
            return Box::new(plain::Planner::new(ctx));
        }
        Box::new(Planner::new(ctx))
    }

    pub fn kind(&self) -> ClassicKind {
        self.kind
    }

    fn ensure(&mut self, job: JobIdx) {
        if self.key.len() <= job.idx() {
            self.key.resize(job.idx() + 1, None);
            self.resv.resize_with(job.idx() + 1, || None);
        }
    }

    fn unreserve(&mut self, job: JobIdx) {
        if let Some(r) = self.resv.get_mut(job.idx()).and_then(Option::take) {
            self.by_start.remove(&(r.start, job));
            self.by_end.remove(&(r.end, job));
        }
    }

    /// Plans `job` against the reservations: starts it when it fits now
    /// (`Some(true)`), else reserves its earliest start (`Some(false)`; the
    /// caller sets the reason). `None`: it fits at no time, and its reason
    /// says why.
    fn start_or_reserve<'a>(
        &mut self,
        ctx: &mut PassCtx<'a>,
        plan: &mut Plan<'a>,
        cache: &mut SelectCache,
        job: JobIdx,
        part: PartId,
    ) -> Option<bool> {
        let w = plan_limit(ctx, job, part);
        match plan.earliest(ctx, cache, self, job, part, w) {
            Some((t, alloc)) if t == ctx.now => {
                if plan.start(ctx, job, part, alloc, w) {
                    self.remove_job(job);
                }
                Some(true)
            }
            Some((t, alloc)) => {
                let nodes = alloc.node_ids().collect();
                self.reserve(
                    job,
                    Resv {
                        start: t,
                        end: t.saturating_add(w),
                        nodes,
                        alloc,
                    },
                );
                Some(false)
            }
            None => {
                unplannable(ctx, cache, job, part);
                None
            }
        }
    }

    fn reserve(&mut self, job: JobIdx, r: Resv) {
        self.unreserve(job);
        self.by_start.insert((r.start, job));
        self.by_end.insert((r.end, job));
        self.resv[job.idx()] = Some(r);
    }

    fn remove_job(&mut self, job: JobIdx) {
        if let Some(k) = self.key.get_mut(job.idx()).and_then(Option::take) {
            self.queue.remove(&(k, job));
        }
        self.unreserve(job);
    }

    /// Whether resources may have been released since the last pass: a job
    /// ended, a node came back (or went), or a queued job left the queue.
    fn released(&mut self, ctx: &PassCtx<'_>) -> bool {
        let sig = ctx
            .state
            .nodes()
            .iter()
            .enumerate()
            .filter(|(_, u)| u.schedulable())
            .fold(0u64, |a, (i, _)| {
                a.wrapping_mul(31).wrapping_add(i as u64 + 1)
            });
        let r = self.dirty || ctx.running.len() < self.expect_running || sig != self.node_sig;
        self.node_sig = sig;
        self.dirty = false;
        r
    }

    /// Queued jobs in queue order, with their partitions.
    fn in_order(&self) -> Vec<(JobIdx, PartId)> {
        self.queue.iter().map(|(&(_, j), &p)| (j, p)).collect()
    }

    /// Queued jobs of `list` still in the queue, in queue order.
    fn in_order_of(&self, list: &[JobIdx]) -> Vec<(JobIdx, PartId)> {
        let mut v: Vec<(Time, JobIdx, PartId)> = list
            .iter()
            .filter_map(|&j| {
                let k = self.key.get(j.idx()).copied().flatten()?;
                Some((k, j, *self.queue.get(&(k, j))?))
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(|(_, j, p)| (j, p)).collect()
    }

    /// `Resources` for the first queued job, `Priority` for those behind it.
    fn waiting_reason(&self, job: JobIdx) -> Reason {
        if self.queue.keys().next().is_some_and(|k| k.1 == job) {
            Reason::Resources
        } else {
            Reason::Priority
        }
    }

    /// Jobs no partition can take get their limit as the reason.
    fn limited_reasons(&self, ctx: &mut PassCtx<'_>) {
        for &(job, r) in &self.limited {
            ctx.set_reason(job, r, None);
        }
    }

    fn strict_fifo_pass(&mut self, ctx: &mut PassCtx<'_>, cache: &mut SelectCache) {
        let fresh = std::mem::take(&mut self.fresh);
        let mut blocked = false;
        // Walk the queue from its head only as far as the pass gets.
        let mut cursor: Option<(Time, JobIdx)> = None;
        loop {
            let next = match cursor {
                None => self.queue.iter().next(),
                Some(c) => self.queue.range((Excluded(c), Unbounded)).next(),
            };
            let Some((&k, &part)) = next else { break };
            cursor = Some(k);
            let job = k.1;
            if !ctx.throttle_allows(job) {
                ctx.set_reason(job, Reason::JobArrayTaskLimit, None);
                continue;
            }
            let req =
                crate::select::request_now(ctx.cluster, &ctx.jobs[job.idx()], ctx.now, ctx.params);
            match place(
                cache,
                &Placement::FirstFit,
                ctx.cluster,
                ctx.params,
                ctx.state,
                &req,
                part,
                None,
            ) {
                Ok(alloc) => {
                    // No queue record priority here: the job's own.
                    let prio = ctx.jobs[job.idx()].priority;
                    if ctx.start(job, part, alloc, false, prio).is_ok() {
                        self.remove_job(job);
                    }
                }
                Err(SelectFail::Busy) => {
                    ctx.set_reason(job, Reason::Resources, None);
                    blocked = true;
                }
                Err(SelectFail::Unavailable(nodes)) => {
                    let names = gresim_model::hostlist::compress(&ctx.cluster.node_names(&nodes));
                    ctx.set_reason(
                        job,
                        Reason::ReqNodeNotAvail,
                        Some(format!("UnavailableNodes:{names}")),
                    );
                    blocked = true;
                }
                // A job that can never run does not hold the queue up.
                Err(SelectFail::Never) => ctx.set_reason(job, Reason::BadConstraints, None),
            }
            if blocked {
                break;
            }
        }
        // The jobs behind the blocked head wait for it.
        for (job, _) in self.in_order_of(&fresh) {
            if ctx.jobs[job.idx()].reason == Reason::None {
                ctx.set_reason(job, Reason::Priority, None);
            }
        }
    }

    fn easy_pass(&mut self, ctx: &mut PassCtx<'_>, cache: &mut SelectCache) {
        let released = self.released(ctx);
        let fresh = std::mem::take(&mut self.fresh);
        let mut plan = self.planner(ctx);
        let head_before = self.by_start.iter().next().map(|&(_, j)| j);
        let first = self.queue.keys().next().map(|&(_, j)| j);
        let replan = released || head_before.is_none() || head_before != first;
        let mut head: Option<JobIdx> = head_before;
        if replan {
            if let Some(h) = head_before {
                self.unreserve(h);
            }
            head = None;
            // Start jobs from the head while they fit; the first that does
            // not gets the reservation.
            for (job, part) in self.in_order() {
                if !ctx.throttle_allows(job) {
                    ctx.set_reason(job, Reason::JobArrayTaskLimit, None);
                    continue;
                }
                self.tested += 1;
                if self.start_or_reserve(ctx, &mut plan, cache, job, part) == Some(false) {
                    ctx.set_reason(job, Reason::Resources, None);
                    head = Some(job);
                    break;
                }
            }
        }
        // Backfill: every job after a release, else only the new ones.
        let cands = if replan {
            self.in_order()
        } else {
            self.in_order_of(&fresh)
        };
        let resv = head.and_then(|h| self.resv[h.idx()].clone());
        // The current state with the head's reserved resources taken, for
        // jobs that would still run when its reservation begins.
        let mut claimed: Option<ClusterState> = None;
        for (job, part) in cands {
            if Some(job) == head {
                continue;
            }
            if !ctx.throttle_allows(job) {
                ctx.set_reason(job, Reason::JobArrayTaskLimit, None);
                continue;
            }
            self.tested += 1;
            let w = plan_limit(ctx, job, part);
            // The reservation matters only if this job would still run
            // when it begins.
            let fit = match &resv {
                Some(r) if ctx.now.saturating_add(w) > r.start && ctx.now < r.end => {
                    let st = claimed.get_or_insert_with(|| claim(ctx.cluster, ctx.state, &r.alloc));
                    let req = &ctx.jobs[job.idx()].request;
                    first_fit(cache, ctx.cluster, ctx.params, st, req, part, None)
                }
                _ => fit_now(ctx, cache, job, part, None),
            };
            match fit {
                Some(alloc) => {
                    if plan.start(ctx, job, part, alloc, w) {
                        self.remove_job(job);
                        claimed = None;
                    }
                }
                None => {
                    let r = self.waiting_reason(job);
                    ctx.set_reason(job, r, None);
                }
            }
        }
        self.expect_running = ctx.running.len() + ctx.started.len();
    }

    fn conservative_pass(&mut self, ctx: &mut PassCtx<'_>, cache: &mut SelectCache) {
        let released = self.released(ctx);
        let fresh = std::mem::take(&mut self.fresh);
        let mut plan = self.planner(ctx);
        // After a release, compress: re-plan every job in queue order.
        let todo = if released {
            self.in_order()
        } else {
            self.in_order_of(&fresh)
        };
        for (job, part) in todo {
            if !ctx.throttle_allows(job) {
                self.unreserve(job);
                ctx.set_reason(job, Reason::JobArrayTaskLimit, None);
                continue;
            }
            self.unreserve(job);
            self.tested += 1;
            if self.start_or_reserve(ctx, &mut plan, cache, job, part) == Some(false) {
                let r = self.waiting_reason(job);
                ctx.set_reason(job, r, None);
            }
        }
        self.expect_running = ctx.running.len() + ctx.started.len();
    }
}

/// A job that fits at no time (it needs nodes that are down, or more than
/// the partition has): no reservation, and a reason saying why.
fn unplannable(ctx: &mut PassCtx<'_>, cache: &mut SelectCache, job: JobIdx, part: PartId) {
    let req = &ctx.jobs[job.idx()].request;
    match crate::select::classify(cache, ctx.cluster, ctx.params, ctx.state, req, part) {
        SelectFail::Unavailable(nodes) => {
            let names = gresim_model::hostlist::compress(&ctx.cluster.node_names(&nodes));
            ctx.set_reason(
                job,
                Reason::ReqNodeNotAvail,
                Some(format!("UnavailableNodes:{names}")),
            );
        }
        SelectFail::Never => ctx.set_reason(job, Reason::BadConstraints, None),
        SelectFail::Busy => ctx.set_reason(job, Reason::Resources, None),
    }
}

/// `state` with the parts of `alloc` that are free in it taken: what a job
/// may use now without touching resources reserved for `alloc`'s job.
/// Resources still held by running jobs are busy anyway; an exclusive
/// reservation takes a node that is idle now whole.
fn claim(cluster: &Cluster, state: &ClusterState, alloc: &Allocation) -> ClusterState {
    let mut st = state.clone();
    for na in &alloc.nodes {
        let u = state.node(na.node);
        if !u.schedulable() || u.exclusive {
            continue;
        }
        let mut p = na.clone();
        let mut busy = p.cores;
        busy.difference_with(&u.free_cores);
        p.cores.difference_with(&busy);
        p.cpus = p.cores.count() * u32::from(cluster.node(na.node).threads_per_core);
        p.mem_mib = p.mem_mib.min(u.free_mem);
        p.gpus &= u.free_gpus;
        p.share = None;
        let whole = alloc.exclusive && u.jobs == 0;
        if !whole && p.cores.is_empty() && p.mem_mib == 0 && p.gpus == 0 {
            continue;
        }
        let part = Allocation {
            nodes: vec![p],
            exclusive: whole,
            row_use: alloc.row_use,
        };
        // Cannot fail: every part is free in `state`.
        let _ = st.allocate(cluster, &part);
    }
    st
}

/// The time limit a job is planned with in `part`: its limit, capped by the
/// partition's MaxTime; unlimited plans as MaxTime, or a year.
pub fn plan_limit(ctx: &PassCtx<'_>, job: JobIdx, part: PartId) -> Time {
    const YEAR: Time = 365 * 86400;
    let max = ctx.cluster.partition(part).max_time;
    match (ctx.time_limit(job, part), max) {
        (Some(l), Some(m)) => l.min(m),
        (Some(l), None) => l,
        (None, Some(m)) => m,
        (None, None) => YEAR,
    }
    .max(1)
}

/// First-fit nodes for `job` now, avoiding `avoid`.
fn fit_now(
    ctx: &PassCtx<'_>,
    cache: &mut SelectCache,
    job: JobIdx,
    part: PartId,
    avoid: Option<&[bool]>,
) -> Option<Allocation> {
    let req = &ctx.jobs[job.idx()].request;
    first_fit(cache, ctx.cluster, ctx.params, ctx.state, req, part, avoid)
}

/// [`Placement::FirstFit`]'s choice for `req` in `state`, avoiding `avoid`,
/// or `None` if it does not fit. Most jobs fit on the first nodes that
/// could hold them by counts, one cons_tres evaluation; the rest go through
/// the placement's full search.
pub fn first_fit(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &crate::SchedParams,
    state: &ClusterState,
    req: &JobRequest,
    part: PartId,
    avoid: Option<&[bool]>,
) -> Option<Allocation> {
    if req.nodelist.is_empty() {
        // FirstFit places the job on the shortest prefix of the candidate
        // nodes (node-table order) that holds it. No prefix with fewer than
        // `min_nodes` nodes, or fewer free CPUs or per-job GPUs than the job
        // needs, can: the first prefix past those bounds is the answer
        // whenever it holds the job.
        let need = req.min_nodes.max(1) as usize;
        let need_cpus =
            u64::from(req.total_tasks(req.min_nodes.max(1))) * u64::from(req.cpus_per_task);
        let need_gpus = req.gpus_per_job.map_or(0, |g| g.count);
        let (mut cpus, mut gpus) = (0u64, 0u32);
        let mut prefix = Vec::with_capacity(need);
        for &id in &cluster.partition(part).nodes {
            if avoid.is_some_and(|a| a[id.idx()]) || req.exclude.contains(&id) {
                continue;
            }
            let u = state.node(id);
            if let Some(g) = node_may_fit(cluster, params, u, id, req) {
                prefix.push(id);
                cpus +=
                    u64::from(u.free_core_count()) * u64::from(cluster.node(id).threads_per_core);
                gpus = gpus.saturating_add(g);
                if prefix.len() >= need && cpus >= need_cpus && gpus >= need_gpus {
                    break;
                }
            }
        }
        if prefix.len() < need || cpus < need_cpus || gpus < need_gpus {
            return None;
        }
        let mut mask = vec![true; cluster.nodes.len()];
        for id in &prefix {
            mask[id.idx()] = false;
        }
        if let Some(a) = crate::cons_tres::job_test(
            cache,
            cluster,
            params,
            req,
            part,
            crate::select::View::Now(state, Some(Skip::Flags(&mask))),
        ) {
            return Some(a);
        }
    }
    try_select(cache, cluster, params, state, req, part, avoid)?;
    place(
        cache,
        &Placement::FirstFit,
        cluster,
        params,
        state,
        req,
        part,
        avoid,
    )
    .ok()
}

/// One pass's earliest-fit search: [`Planner`], or the plain reference
/// (`classic/plain.rs`).
trait Search<'a> {
    /// Starts `job` now; later searches plan with its end (`w` from now).
    fn start(
        &mut self,
        ctx: &mut PassCtx<'a>,
        job: JobIdx,
        part: PartId,
        alloc: Allocation,
        w: Time,
    ) -> bool;

    /// The earliest time `job` fits (limit `w`) around the running jobs and
    /// `policy`'s reservations, and the first-fit allocation it gets then.
    fn earliest(
        &mut self,
        ctx: &PassCtx<'a>,
        cache: &mut SelectCache,
        policy: &Classic,
        job: JobIdx,
        part: PartId,
        w: Time,
    ) -> Option<(Time, Allocation)>;
}

type Plan<'a> = Box<dyn Search<'a> + 'a>;

/// One pass's earliest-fit search: the planned ends of the jobs it started,
/// the release sweep and the per-shape fits it shares between the jobs it
/// plans until it starts one, and scratch space.
struct Planner<'a> {
    /// (planned end, index in `ctx.started`), sorted.
    started_ends: Vec<(Time, usize)>,
    /// The running jobs' and the started jobs' ends merged in the order the
    /// search releases them (made when first needed after each start).
    ends: Option<Vec<(Time, Cow<'a, Allocation>)>>,
    sweep: Sweep,
    /// Per request shape and partition, the nodes' fits in the current state
    /// and as the ends are released.
    shapes: Vec<ShapeFits>,
    blk: Vec<u32>,
    avoid: Vec<bool>,
    /// The searched job's fits at the time searched.
    fits: Vec<Option<Fit>>,
    /// The reservations the search took in (to leave the scratch clean).
    activated: Vec<JobIdx>,
}

/// Most request shapes whose fits one pass keeps.
const SHAPES_MAX: usize = 32;

/// `node_may_fit` (as [`Fit`]) of every node of `part` for requests like
/// `req` (to it: [`crate::select::same_node_fit`]) in the current state (brought up to date at each start),
/// and its changes as the ends are released.
struct ShapeFits {
    req: std::sync::Arc<JobRequest>,
    part: PartId,
    fits: Vec<Option<Fit>>,
    base: Counts,
    changes: FitChanges<Fit>,
}

/// A merged list of ends, as the sweep reads it.
impl Ends for [(Time, Cow<'_, Allocation>)] {
    fn count(&self) -> usize {
        self.len()
    }

    fn alloc(&self, k: usize) -> &Allocation {
        &self[k].1
    }
}

/// Starts `job` now and files its planned end (`w` from now) in
/// `started_ends`, (end, index in `ctx.started`) in order; its index, or
/// `None` if it could not start.
fn start_planned(
    ctx: &mut PassCtx<'_>,
    started_ends: &mut Vec<(Time, usize)>,
    job: JobIdx,
    part: PartId,
    alloc: Allocation,
    w: Time,
) -> Option<usize> {
    let prio = ctx.jobs[job.idx()].priority;
    ctx.start(job, part, alloc, false, prio).ok()?;
    let e = (ctx.now.saturating_add(w), ctx.started.len() - 1);
    let at = started_ends.partition_point(|x| x.0 <= e.0);
    started_ends.insert(at, e);
    Some(e.1)
}

/// The ends in release order: running jobs by planned end (a job past it is
/// planned to end next tick), and the jobs started in this pass
/// (`started_ends`), a running job first at equal times.
fn merged_ends<'a>(
    ctx: &PassCtx<'a>,
    started_ends: &[(Time, usize)],
) -> Vec<(Time, Cow<'a, Allocation>)> {
    let jobs: &'a [Job] = ctx.jobs;
    let now = ctx.now;
    let mut running = ctx
        .running
        .iter()
        .filter_map(|&(e, j)| Some((e.max(now + 1), &jobs[j.idx()].runs.last()?.alloc)))
        .peekable();
    let mut started = started_ends.iter().peekable();
    let mut v = Vec::with_capacity(ctx.running.len() + started_ends.len());
    loop {
        match (running.peek(), started.peek()) {
            (Some(&(a, alloc)), b) if b.is_none_or(|b| a <= b.0) => {
                v.push((a, Cow::Borrowed(alloc)));
                running.next();
            }
            (_, Some(&&(b, i))) => {
                v.push((b, Cow::Owned(ctx.started[i].alloc.clone())));
                started.next();
            }
            _ => break,
        }
    }
    v
}

/// [`Fit`] of node `id` in usage `u` for `req`.
fn fit_of(
    cluster: &Cluster,
    params: &crate::SchedParams,
    u: &gresim_model::state::NodeUsage,
    id: NodeId,
    req: &JobRequest,
) -> Option<Fit> {
    node_may_fit(cluster, params, u, id, req).map(|gpus| Fit {
        gpus,
        cpus: u.free_core_count() * u32::from(cluster.node(id).threads_per_core),
    })
}

/// What a node that `node_may_fit` admits offers a request: the free GPUs a
/// per-job count could use there, and its free CPUs as [`first_fit`]
/// counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fit {
    gpus: u32,
    cpus: u32,
}

/// Fitting nodes, their GPUs and their free CPUs.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    nodes: u32,
    gpus: u32,
    cpus: u64,
}

impl Counts {
    fn add(&mut self, f: Option<Fit>) {
        if let Some(f) = f {
            self.nodes += 1;
            self.gpus = self.gpus.saturating_add(f.gpus);
            self.cpus += u64::from(f.cpus);
        }
    }

    fn sub(&mut self, f: Option<Fit>) {
        if let Some(f) = f {
            self.nodes -= 1;
            self.gpus = self.gpus.saturating_sub(f.gpus);
            self.cpus -= u64::from(f.cpus);
        }
    }

    /// Whether [`first_fit`] could find `req` a prefix of these nodes: enough
    /// of them, enough GPUs for a per-job count, enough free CPUs for the
    /// tasks at the minimum node count (the bounds `first_fit` checks before
    /// any selection).
    fn may_hold(&self, req: &JobRequest) -> bool {
        let min_nodes = req.min_nodes.max(1);
        self.nodes >= min_nodes
            && req.gpus_per_job.is_none_or(|pj| self.gpus >= pj.count)
            && self.cpus >= u64::from(req.total_tasks(min_nodes)) * u64::from(req.cpus_per_task)
    }
}

impl<'a> Planner<'a> {
    fn new(ctx: &PassCtx<'a>) -> Self {
        let n = ctx.cluster.nodes.len();
        Planner {
            started_ends: Vec::new(),
            ends: None,
            sweep: Sweep::default(),
            shapes: Vec::new(),
            blk: vec![0; n],
            avoid: vec![false; n],
            fits: vec![None; n],
            activated: Vec::new(),
        }
    }

    /// The index in `shapes` of `req`'s shape in `part`, its fits computed
    /// in the current state if absent.
    fn shape(
        &mut self,
        ctx: &PassCtx<'_>,
        req: &std::sync::Arc<JobRequest>,
        part: PartId,
    ) -> usize {
        if let Some(i) = self
            .shapes
            .iter()
            .position(|s| s.part == part && crate::select::same_node_fit(&s.req, req))
        {
            return i;
        }
        let cluster = ctx.cluster;
        let mut fits = vec![None; cluster.nodes.len()];
        let mut base = Counts::default();
        for &id in &cluster.partition(part).nodes {
            fits[id.idx()] = fit_of(cluster, ctx.params, ctx.state.node(id), id, req);
            base.add(fits[id.idx()]);
        }
        if self.shapes.len() >= SHAPES_MAX {
            self.shapes.remove(0);
        }
        self.shapes.push(ShapeFits {
            req: std::sync::Arc::clone(req),
            part,
            fits,
            base,
            changes: FitChanges::default(),
        });
        self.shapes.len() - 1
    }
}

impl<'a> Search<'a> for Planner<'a> {
    fn start(
        &mut self,
        ctx: &mut PassCtx<'a>,
        job: JobIdx,
        part: PartId,
        alloc: Allocation,
        w: Time,
    ) -> bool {
        let Some(i) = start_planned(ctx, &mut self.started_ends, job, part, alloc, w) else {
            return false;
        };
        // The state changed on the started job's nodes, and the ends with it.
        let alloc = &ctx.started[i].alloc;
        for sh in &mut self.shapes {
            for id in alloc.node_ids() {
                if ctx.cluster.in_partition(sh.part, id) {
                    let new = fit_of(ctx.cluster, ctx.params, ctx.state.node(id), id, &sh.req);
                    let old = std::mem::replace(&mut sh.fits[id.idx()], new);
                    sh.base.sub(old);
                    sh.base.add(new);
                }
            }
            sh.changes.reset();
        }
        self.ends = None;
        self.sweep.reset();
        true
    }

    fn earliest(
        &mut self,
        ctx: &PassCtx<'a>,
        cache: &mut SelectCache,
        policy: &Classic,
        job: JobIdx,
        part: PartId,
        w: Time,
    ) -> Option<(Time, Allocation)> {
        let now = ctx.now;
        let cluster = ctx.cluster;
        let req =
            crate::select::request_now(ctx.cluster, &ctx.jobs[job.idx()], ctx.now, ctx.params);
        let m = self.shape(ctx, &req, part);
        let Planner {
            started_ends,
            ends,
            sweep,
            shapes,
            blk,
            avoid,
            fits,
            activated,
        } = self;
        let sh = &mut shapes[m];
        let mut counts = sh.base;
        let check = req.nodelist.is_empty();
        // Ends released, and fit changes applied, so far; the fits are the
        // shape's until the first release.
        let (mut k, mut applied, mut own_fits) = (0usize, 0usize, false);
        let mut enters = policy.by_start.iter().peekable();
        let mut leaves = policy.by_end.iter().peekable();
        // The end of the window the last step took reservations in for.
        let mut taken_to: Option<Time> = None;
        let mut t = now;
        let found = loop {
            // Release the ends planned by t (none is planned by now, so the
            // list is made only when a search gets past now).
            if let Some(ends) = ends.as_deref() {
                let mut upto = k;
                while ends.get(upto).is_some_and(|e| e.0 <= t) {
                    upto += 1;
                }
                if upto > k {
                    sweep.extend_to(cluster, ctx.state, ends, upto);
                    sh.changes
                        .extend_to(cluster, part, &sh.fits, sweep, upto, |u, id| {
                            fit_of(cluster, ctx.params, u, id, &req)
                        });
                    if !own_fits {
                        fits.copy_from_slice(&sh.fits);
                        own_fits = true;
                    }
                    while let Some(&(e, id, old, new)) = sh.changes.changes.get(applied) {
                        if e >= upto {
                            break;
                        }
                        let i = id.idx();
                        fits[i] = new;
                        if blk[i] == 0 {
                            counts.sub(old);
                            counts.add(new);
                        }
                        applied += 1;
                    }
                    k = upto;
                }
            }
            let cur: &[Option<Fit>] = if own_fits { fits } else { &sh.fits };
            // Reservations over by t leave the window [t, t + w) (those taken
            // in: begun before the last window's end) ...
            while let Some(&&(e, j)) = leaves.peek() {
                if e > t {
                    break;
                }
                leaves.next();
                let Some(r) = &policy.resv[j.idx()] else {
                    continue;
                };
                if taken_to.is_none_or(|to| r.start >= to) {
                    continue;
                }
                for id in &r.nodes {
                    let i = id.idx();
                    blk[i] -= 1;
                    if blk[i] == 0 {
                        avoid[i] = false;
                        if cluster.in_partition(part, *id) {
                            counts.add(cur[i]);
                        }
                    }
                }
            }
            // ... and those beginning before t + w enter it.
            let wend = t.saturating_add(w);
            while let Some(&&(s, j)) = enters.peek() {
                if s >= wend {
                    break;
                }
                enters.next();
                if let Some(r) = &policy.resv[j.idx()] {
                    if r.end > t {
                        activated.push(j);
                        for id in &r.nodes {
                            let i = id.idx();
                            if blk[i] == 0 {
                                avoid[i] = true;
                                if cluster.in_partition(part, *id) {
                                    counts.sub(cur[i]);
                                }
                            }
                            blk[i] += 1;
                        }
                    }
                }
            }
            taken_to = Some(wend);
            // `first_fit` on these nodes needs the counts to hold the job.
            if !check || counts.may_hold(&req) {
                let st = match ends.as_deref() {
                    Some(ends) if k > 0 => sweep.state_at(cluster, ctx.state, ends, k),
                    _ => &*ctx.state,
                };
                if let Some(a) = first_fit(cache, cluster, ctx.params, st, &req, part, Some(avoid))
                {
                    break Some((t, a));
                }
            }
            // The next time availability can grow.
            let ends = ends.get_or_insert_with(|| merged_ends(ctx, started_ends));
            let next = match (ends.get(k), leaves.peek()) {
                (Some(a), Some(b)) => Some(a.0.min(b.0)),
                (Some(a), None) => Some(a.0),
                (None, b) => b.map(|b| b.0),
            };
            match next {
                Some(n) => t = n.max(t + 1),
                None => break None,
            }
        };
        // Leave the scratch space clean for the next search.
        for j in activated.drain(..) {
            if let Some(r) = &policy.resv[j.idx()] {
                for id in &r.nodes {
                    blk[id.idx()] = 0;
                    avoid[id.idx()] = false;
                }
            }
        }
        found
    }
}

impl Policy for Classic {
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
        self.kind.name()
    }

    fn submission_rejection(
        &mut self,
        cluster: &Cluster,
        params: &crate::SchedParams,
        spec: &gresim_model::job::JobSpec,
    ) -> Option<String> {
        crate::admission::submission_rejection(&mut self.cache, cluster, params, spec)
    }

    fn beyond_partition_limits(&self, cluster: &Cluster, job: &Job) -> bool {
        crate::admission::beyond_partition_limits(cluster, job)
    }

    fn unavailable_at_submit(
        &mut self,
        cluster: &Cluster,
        params: &crate::SchedParams,
        state: &ClusterState,
        job: &Job,
    ) -> Option<Vec<NodeId>> {
        crate::admission::unavailable_at_submit(&mut self.cache, cluster, params, state, job)
    }

    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool {
        self.ensure(job);
        let j: &Job = &ctx.jobs[job.idx()];
        let mut limit: Option<Reason> = None;
        let part = job_partitions(ctx.cluster, j).find(|&p| {
            let r = limit_reason(ctx.cluster, j, p);
            if limit.is_none() {
                limit = r;
            }
            r.is_none()
        });
        let Some(part) = part else {
            self.limited
                .push((job, limit.unwrap_or(Reason::PartitionConfig)));
            return false;
        };
        let k = j.submit;
        let top = self.queue.range(..(k, job)).next().is_none();
        self.queue.insert((k, job), part);
        self.key[job.idx()] = Some(k);
        self.fresh.push(job);
        top
    }

    fn dequeue(&mut self, job: JobIdx, _jobs: &[Job], _cluster: &Cluster) {
        if self.resv.get(job.idx()).is_some_and(Option::is_some) {
            self.dirty = true;
        }
        self.remove_job(job);
        self.limited.retain(|(j, _)| *j != job);
        self.fresh.retain(|j| *j != job);
    }

    fn main_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.limited_reasons(ctx);
        self.stats.main_passes += 1;
        let queued = self.queue.len();
        self.tested = 0;
        // Out of `self` for the pass, which also lends `self` to the planner.
        let mut cache = std::mem::take(&mut self.cache);
        match self.kind {
            ClassicKind::StrictFifo => self.strict_fifo_pass(ctx, &mut cache),
            ClassicKind::Easy => self.easy_pass(ctx, &mut cache),
            ClassicKind::Conservative => self.conservative_pass(ctx, &mut cache),
        }
        // Kept for the next pass, as every policy keeps its caches.
        self.cache = cache;
        if self.kind != ClassicKind::StrictFifo {
            self.stats.add_backfill_pass(queued, self.tested);
        }
    }

    fn stats(&self) -> crate::PassStats {
        self.stats
    }

    fn cluster_changed(&mut self) {
        self.cache.clear();
    }

    fn queued(&self) -> usize {
        self.queue.len() + self.limited.len()
    }
}
