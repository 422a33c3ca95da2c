//! The backfill pass as it was before the deep-queue rework (main at
//! f32fc72): reservations as a list walked node by node, and a fresh copy of
//! the state per tested job released end by end. Kept, behind the
//! `reference` feature, as the plain path the fast one in [`crate::backfill`]
//! must agree with: `fast_backfill_decides_as_the_plain_pass` in
//! `crates/gresim-engine/tests/properties.rs` runs random clusters and queues
//! through both and compares every decision, and `crate::bf_map`'s tests
//! check the slot map against the reservation-list functions here.
//!
//! Backfill in the manner of sched/backfill (`_attempt_backfill()`).
//!
//! Records are visited in queue order until `bf_max_job_test` of them have
//! reached a try with enough usable nodes (`_try_sched()`; Slurm's
//! `bf_last_depth_try`: a job whose every try finds too few nodes free of
//! reservations does not count). Each job is
//! planned with its time limit (never its real run time), as Slurm 22.05
//! plans it:
//!
//! 1. From a first possible start `start_res` (now at first), the job may use
//!    the partition nodes that no reservation of a higher-priority job holds
//!    in any slot of the backfill map overlapping `[start_res, start_res +
//!    limit]` (a reservation beginning exactly at the window's end counts).
//!    `later_start` is the first time after `start_res` at which a reserved
//!    partition node becomes free again.
//! 2. `_will_run_test()` on those nodes: if the job fits in the current
//!    state it can start at `start_res`; otherwise running jobs on those
//!    nodes are released in the order of their planned ends (start + limit),
//!    in groups (the first group reaches 30 s past the first end rounded up to
//!    a multiple of 30 s of wall-clock time, and each later one twice as far),
//!    and the job's start is the planned end of the last job of the first
//!    group after which it fits.
//! 3. A job that can start now starts, on the nodes above. One whose start
//!    lies after `later_start` is planned again from `later_start`. Otherwise
//!    the nodes it would get are reserved, as whole nodes, from its start to
//!    its start plus its limit (both rounded down to `bf_resolution`), unless
//!    that overlaps another reservation, in which case it is planned again
//!    from its start.

use std::borrow::Cow;
use std::collections::BTreeSet;

use gresim_model::job::Time;
use gresim_model::{Allocation, ClusterState, JobIdx, NodeId, PartId};

use crate::backfill::plan_limit;
use crate::fifo::partition_limit_reason;
use crate::queue::QueueKey;
use crate::select::{try_select, SelectCache};
use crate::PassCtx;

/// Nodes held for a pending job over `[start, end)`.
#[derive(Debug, Clone)]
pub(crate) struct Reservation {
    pub(crate) start: Time,
    pub(crate) end: Time,
    pub(crate) nodes: Vec<NodeId>,
}

/// Marks, in `m`, the nodes reserved in any slot of the backfill map that
/// overlaps `[a, b]`: a slot overlaps when it ends after `a` and begins no
/// later than `b`, so a reservation beginning exactly at `b` counts. `list`
/// gets the marked nodes, each once.
pub(crate) fn blocked_into(
    res: &[Reservation],
    a: Time,
    b: Time,
    m: &mut [bool],
    list: &mut Vec<NodeId>,
) {
    for id in list.drain(..) {
        m[id.idx()] = false;
    }
    for r in res {
        if r.start <= b && a < r.end {
            for &id in &r.nodes {
                if !m[id.idx()] {
                    m[id.idx()] = true;
                    list.push(id);
                }
            }
        }
    }
}

/// Whether `nodes` (marked) are reserved anywhere in `[s, e)`
/// (`_test_resv_overlap()`: slots ending after `s` and beginning before `e`).
pub(crate) fn resv_overlap(res: &[Reservation], on: &[bool], s: Time, e: Time) -> bool {
    res.iter()
        .any(|r| r.end > s && r.start < e && r.nodes.iter().any(|n| on[n.idx()]))
}

/// Slurm's `later_start`: walking the backfill map's slots from the one
/// holding `start_res` to the first that begins after `end_time`, the end of
/// the first slot after which a node of the partition that was reserved in it
/// is free. The map ends at `map_end`; its last slot has no successor.
/// `events` are the reservations' starts and ends, sorted (see [`reserve`]).
pub(crate) fn later_start(
    res: &[Reservation],
    events: &[(Time, bool, usize)],
    start_res: Time,
    end_time: Time,
    map_end: Time,
    in_part: &dyn Fn(NodeId) -> bool,
    cover: &mut [u32],
) -> Option<Time> {
    cover.fill(0);
    let mut k = 0usize;
    let mut slot_begin: Option<Time> = None;
    while k < events.len() {
        let t = events[k].0;
        if t >= map_end {
            break;
        }
        // `t` ends the slot [slot_begin, t) and begins the next one.
        let check = slot_begin.is_some() && t > start_res;
        let mut freed = false;
        let mut k2 = k;
        while k2 < events.len() && events[k2].0 == t && !events[k2].1 {
            for id in &res[events[k2].2].nodes {
                cover[id.idx()] -= 1;
            }
            k2 += 1;
        }
        let mut k3 = k2;
        while k3 < events.len() && events[k3].0 == t {
            for id in &res[events[k3].2].nodes {
                cover[id.idx()] += 1;
            }
            k3 += 1;
        }
        if check {
            for e in &events[k..k2] {
                if res[e.2]
                    .nodes
                    .iter()
                    .any(|&id| cover[id.idx()] == 0 && in_part(id))
                {
                    freed = true;
                    break;
                }
            }
            if freed {
                return Some(t);
            }
            if slot_begin.is_some_and(|b| b > end_time) {
                return None;
            }
        }
        slot_begin = Some(t);
        k = k3;
    }
    None
}

/// Adds `r` to the backfill map: to `res`, and its start and end to
/// `events`, kept sorted by (time, ends before starts, reservation) so a node
/// handed from one reservation to the next is never seen free.
pub(crate) fn reserve(
    res: &mut Vec<Reservation>,
    events: &mut Vec<(Time, bool, usize)>,
    r: Reservation,
) {
    let i = res.len();
    for e in [(r.end, false, i), (r.start, true, i)] {
        let at = events.partition_point(|x| *x < e);
        events.insert(at, e);
    }
    res.push(r);
}

/// Most request shapes whose fit counts one pass remembers.
const FITS_MEMO_MAX: usize = 16;

/// `node_may_fit` of every node of `part` for requests of `req`'s shape.
struct FitsMemo {
    req: std::sync::Arc<gresim_model::job::JobRequest>,
    part: PartId,
    fits: Vec<Option<u32>>,
}

/// A running job as backfill plans with it.
struct Running<'a> {
    /// Its planned end, start + limit (possibly past).
    end: Time,
    alloc: Cow<'a, Allocation>,
    /// Its nodes (a compact copy of the allocation's, for the scans of
    /// `will_run_release`).
    nodes: Box<[NodeId]>,
}

impl<'a> Running<'a> {
    fn new(end: Time, alloc: Cow<'a, Allocation>) -> Self {
        let nodes = alloc.node_ids().collect();
        Running { end, alloc, nodes }
    }
}

/// Whether `n_fit` nodes offering `g_fit` GPUs to a per-job request, each of
/// which could hold its share of `req` by counts alone, could hold `req`: a
/// necessary condition for a fit.
fn counts_fit(req: &gresim_model::job::JobRequest, n_fit: u32, g_fit: u64) -> bool {
    !req.nodelist.is_empty()
        || (n_fit >= req.min_nodes.max(1)
            && req
                .gpus_per_job
                .is_none_or(|pj| g_fit >= u64::from(pj.count)))
}

/// Most jobs `_will_run_test()` releases before it tests again.
const WILL_RUN_MAX_RM: u32 = 201;

/// One backfill pass over `queue`. Returns the jobs it started.
pub fn backfill_pass(
    queue: &BTreeSet<QueueKey>,
    ctx: &mut PassCtx<'_>,
    placement: &crate::placement::Placement,
    cache: &mut SelectCache,
) -> Vec<JobIdx> {
    let now = ctx.now;
    let res_q = ctx.params.bf_resolution.max(1);
    let horizon = now + ctx.params.bf_window;
    // The backfill map covers [map_begin, map_end).
    let map_begin = now / res_q * res_q;
    let map_end = horizon / res_q * res_q;
    let group = ctx.params.bf_will_run_window;
    let phase = ctx.params.bf_epoch_phase;
    let nnodes = ctx.cluster.nodes.len();
    let mut reservations: Vec<Reservation> = Vec::new();
    let mut started: Vec<JobIdx> = Vec::new();
    let mut tested = 0u32;
    // Planned ends of running jobs, in order. The allocations are borrowed
    // from the job table; only jobs this pass starts own theirs.
    let jobs: &[gresim_model::job::Job] = ctx.jobs;
    let mut ends: Vec<Running<'_>> = ctx
        .running
        .iter()
        .filter_map(|&(e, j)| {
            let run = jobs[j.idx()].runs.last()?;
            Some(Running::new(e, Cow::Borrowed(&run.alloc)))
        })
        .collect();
    // What `node_may_fit` says of each partition node in the current state,
    // by request shape and partition; valid until this pass starts a job.
    let mut fits_memo: Vec<FitsMemo> = Vec::new();
    let mut avoid = vec![false; nnodes];
    let mut masked: Vec<NodeId> = Vec::new();
    let mut on = vec![false; nnodes];
    let mut cover = vec![0u32; nnodes];
    let mut events: Vec<(Time, bool, usize)> = Vec::new();

    for k in queue.iter() {
        if tested >= ctx.params.bf_max_job_test {
            break;
        }
        let (job, part) = (k.job, k.part);
        if started.contains(&job) {
            continue;
        }
        if partition_limit_reason(ctx, job, part).is_some() {
            continue;
        }
        // `job_array_start_test()` names the throttle in backfill too.
        if !ctx.throttle_allows(job) {
            ctx.set_reason(job, gresim_model::Reason::JobArrayTaskLimit, None);
            continue;
        }
        // An accounting limit holds the job: no reservation (`acct_policy_job_runnable_*`).
        if let Some(r) = crate::acct_policy::runnable(ctx, job, part) {
            ctx.set_reason(job, r, None);
            continue;
        }
        // `bf_max_job_test` counts the jobs that reach `_try_sched()`
        // (`bf_last_depth_try`), below.
        let mut counted = false;
        // A `NoReserve` QOS's job is planned for one minute under any
        // PreemptMode, runs with its own limit, and reserves nothing.
        let run_limit = plan_limit(ctx, job, part);
        let no_reserve =
            crate::preempt::no_reserve(ctx.cluster, &ctx.specs[ctx.jobs[job.idx()].sub as usize]);
        let limit = if no_reserve && ctx.params.preempt.mode_set() {
            60
        } else {
            run_limit
        };
        let req =
            crate::select::request_now(ctx.cluster, &ctx.jobs[job.idx()], ctx.now, ctx.params);
        let pnodes = &ctx.cluster.partition(part).nodes;
        let need_nodes = req.min_nodes.max(1);

        let memo = match fits_memo
            .iter()
            .position(|m| m.part == part && m.req.same_shape(&req))
        {
            Some(i) => i,
            None => {
                let mut f: Vec<Option<u32>> = vec![None; nnodes];
                for &id in pnodes {
                    f[id.idx()] = crate::select::node_may_fit(
                        ctx.cluster,
                        ctx.params,
                        ctx.state.node(id),
                        id,
                        &req,
                    );
                }
                if fits_memo.len() >= FITS_MEMO_MAX {
                    fits_memo.remove(0);
                }
                fits_memo.push(FitsMemo {
                    req: std::sync::Arc::clone(&req),
                    part,
                    fits: f,
                });
                fits_memo.len() - 1
            }
        };

        let mut start_res = now;
        let mut timeline = Timeline::new();
        // Usable partition nodes, and those that could hold the job now by
        // counts (with their GPUs), before any mask.
        let base = {
            let fits = &fits_memo[memo].fits;
            let (mut usable, mut n_fit, mut g_fit) = (0u32, 0u32, 0u64);
            for &id in pnodes {
                if let Some(g) = fits[id.idx()] {
                    n_fit += 1;
                    g_fit += u64::from(g);
                }
                if ctx.state.node(id).schedulable() && !req.exclude.contains(&id) {
                    usable += 1;
                }
            }
            (usable, n_fit, g_fit)
        };
        // Each retry starts later (or on other nodes); the cap only guards
        // against a planning loop.
        for _try in 0..64 {
            let end_time = start_res.max(now) + limit;
            blocked_into(&reservations, start_res, end_time, &mut avoid, &mut masked);
            let later = {
                let cl = ctx.cluster;
                let st = &*ctx.state;
                let in_part = |id: NodeId| cl.in_partition(part, id) && st.node(id).schedulable();
                later_start(
                    &reservations,
                    &events,
                    start_res,
                    end_time,
                    map_end,
                    &in_part,
                    &mut cover,
                )
            };
            // Enough usable nodes, and the required ones among them? With
            // the nodes (and GPUs) that could hold the job now by counts.
            // (The partition's totals less what the masked nodes hold.)
            let (mut usable, mut n_fit, mut g_fit) = base;
            let fits = &fits_memo[memo].fits;
            for &id in &masked {
                if ctx.cluster.in_partition(part, id) {
                    if let Some(g) = fits[id.idx()] {
                        n_fit -= 1;
                        g_fit -= u64::from(g);
                    }
                    if ctx.state.node(id).schedulable() && !req.exclude.contains(&id) {
                        usable -= 1;
                    }
                }
            }
            if usable < need_nodes || req.nodelist.iter().any(|id| avoid[id.idx()]) {
                // `goto TRY_LATER` only for a job that may reserve: a
                // `NoReserve` one is done (and, never having reached
                // `_try_sched()`, uncounted).
                match later.filter(|_| !no_reserve) {
                    Some(l) => {
                        start_res = l;
                        continue;
                    }
                    None => break,
                }
            }
            if !counted {
                counted = true;
                tested += 1;
            }

            // Can it start now (or at start_res) on those nodes?
            if start_res <= now {
                if let Ok(alloc) = crate::placement::place(
                    cache,
                    placement,
                    ctx.cluster,
                    ctx.params,
                    ctx.state,
                    &req,
                    part,
                    Some(&avoid),
                ) {
                    let planned = Running::new(now + run_limit, Cow::Owned(alloc.clone()));
                    let whole = alloc.exclusive;
                    if ctx.start(job, part, alloc, true, k.priority()).is_ok() {
                        started.push(job);
                        fits_memo.clear();
                        // `_bf_reserve_running()`: a whole-node job started
                        // here also holds its nodes in the backfill map, from
                        // the map's start to its planned end.
                        if whole {
                            let e = (now + run_limit) / res_q * res_q;
                            reserve(
                                &mut reservations,
                                &mut events,
                                Reservation {
                                    start: map_begin,
                                    end: e.max(map_begin + res_q),
                                    nodes: planned.alloc.node_ids().collect(),
                                },
                            );
                        }
                        // Later jobs plan with this one's end too.
                        let at = ends.partition_point(|e| e.end <= planned.end);
                        ends.insert(at, planned);
                    }
                    break;
                }
            }
            let found = if start_res > now && counts_fit(&req, n_fit, g_fit) {
                try_select(
                    cache,
                    ctx.cluster,
                    ctx.params,
                    ctx.state,
                    &req,
                    part,
                    Some(&avoid),
                )
                .map(|a| (now, a))
            } else {
                None
            }
            .or_else(|| {
                will_run_release(
                    ctx,
                    cache,
                    &req,
                    part,
                    &avoid,
                    &ends,
                    &fits_memo[memo].fits,
                    &mut timeline,
                    (n_fit, g_fit),
                    group,
                    phase,
                    later.map_or(horizon, |l| l.min(horizon)),
                )
            });
            let Some((t, alloc)) = found else {
                match later {
                    Some(l) => {
                        start_res = l;
                        continue;
                    }
                    None => break,
                }
            };
            let start = t.max(start_res);
            if let Some(l) = later {
                if start > l {
                    // Try again when some reserved nodes are free.
                    start_res = l;
                    continue;
                }
            }
            if start > horizon {
                break;
            }
            // Planned, but `NoReserve`: no reservation.
            if no_reserve {
                break;
            }
            let s = start / res_q * res_q;
            let e = (start + limit) / res_q * res_q;
            on.fill(false);
            for id in alloc.node_ids() {
                on[id.idx()] = true;
            }
            if resv_overlap(&reservations, &on, s, e) {
                start_res = start;
                continue;
            }
            let s = s.max(map_begin);
            reserve(
                &mut reservations,
                &mut events,
                Reservation {
                    start: s,
                    end: e.max(s + res_q),
                    nodes: alloc.node_ids().collect(),
                },
            );
            break;
        }
    }
    started
}

/// The running jobs released one by one in planned-end order, shared by the
/// tries of one job. A node's fit depends only on the jobs on it, so releasing
/// also the jobs on nodes a try may not use changes nothing on the nodes it
/// may: one order serves every node mask.
struct Timeline {
    /// Per end index, in order: the partition nodes whose fit for the job it
    /// changes, with the fit before and after.
    changes: Vec<(usize, NodeId, Option<u32>, Option<u32>)>,
    /// The state after the first `done` ends, and the fits then.
    sweep: Option<ClusterState>,
    fits: Vec<Option<u32>>,
    done: usize,
    /// A state after the first `at` ends, for node selection.
    mat: Option<(usize, ClusterState)>,
}

impl Timeline {
    fn new() -> Self {
        Timeline {
            changes: Vec::new(),
            sweep: None,
            fits: Vec::new(),
            done: 0,
            mat: None,
        }
    }

    /// Records the changes of the ends up to index `upto` (exclusive).
    fn extend_to(
        &mut self,
        ctx: &PassCtx<'_>,
        req: &gresim_model::job::JobRequest,
        part: PartId,
        ends: &[Running<'_>],
        fits0: &[Option<u32>],
        upto: usize,
    ) {
        let cl = ctx.cluster;
        while self.done < upto.min(ends.len()) {
            let st = self.sweep.get_or_insert_with(|| ctx.state.clone());
            if self.fits.is_empty() {
                self.fits.extend_from_slice(fits0);
            }
            let r = &ends[self.done];
            let _ = st.release(cl, &r.alloc);
            for na in &r.alloc.nodes {
                if cl.in_partition(part, na.node) {
                    let n = na.node.idx();
                    let old = self.fits[n];
                    let new =
                        crate::select::node_may_fit(cl, ctx.params, st.node(na.node), na.node, req);
                    if old != new {
                        self.fits[n] = new;
                        self.changes.push((self.done, na.node, old, new));
                    }
                }
            }
            self.done += 1;
        }
    }

    /// The state after the first `at` ends (at most the ends recorded): the
    /// sweep's own state, or a copy of it with the later ends given back.
    fn state_at(&mut self, ctx: &PassCtx<'_>, ends: &[Running<'_>], at: usize) -> &ClusterState {
        let cl = ctx.cluster;
        if at == self.done {
            return self.sweep.get_or_insert_with(|| ctx.state.clone());
        }
        let mut ok = false;
        if let Some((k, st)) = self.mat.as_mut() {
            if *k >= at {
                ok = true;
                while *k > at {
                    if st.allocate(cl, &ends[*k - 1].alloc).is_err() {
                        ok = false;
                        break;
                    }
                    *k -= 1;
                }
            }
        }
        if !ok {
            let mut st = self.sweep.clone().unwrap_or_else(|| ctx.state.clone());
            let mut k = if self.sweep.is_some() { self.done } else { 0 };
            while k > at {
                if st.allocate(cl, &ends[k - 1].alloc).is_err() {
                    // Replay from the current state instead.
                    st = ctx.state.clone();
                    k = 0;
                    break;
                }
                k -= 1;
            }
            while k < at {
                let _ = st.release(cl, &ends[k].alloc);
                k += 1;
            }
            self.mat = Some((k, st));
        }
        &self.mat.as_ref().expect("just set").1
    }
}

/// `_will_run_test()` after the job did not fit in the current state: release
/// the running jobs on usable nodes in planned-end order, a group at a time,
/// and test after each group. Returns the planned start (the end of the last
/// job released) and the allocation then. A start after `cutoff` is as good
/// as none to the caller (it plans again from `later_start`, or makes no
/// reservation beyond the window), so the release stops there.
#[allow(clippy::too_many_arguments)]
fn will_run_release(
    ctx: &PassCtx<'_>,
    cache: &mut SelectCache,
    req: &gresim_model::job::JobRequest,
    part: PartId,
    avoid: &[bool],
    ends: &[Running<'_>],
    fits0: &[Option<u32>],
    tl: &mut Timeline,
    (mut n_fit, mut g_fit): (u32, u64),
    group: Time,
    phase: Time,
    cutoff: Time,
) -> Option<(Time, Allocation)> {
    let now = ctx.now;
    let cl = ctx.cluster;
    let usable = |id: NodeId| cl.in_partition(part, id) && !avoid[id.idx()];
    // Changes of `tl` applied to the counts so far.
    let mut applied = 0usize;
    let mut anchor: Option<Time> = None;
    let mut window = group;
    let mut i = 0usize;
    loop {
        // The next group ends no earlier than its first usable job.
        ends[i..]
            .iter()
            .take_while(|r| r.end.max(now + 1) <= cutoff)
            .find(|r| r.nodes.iter().any(|&id| usable(id)))?;
        let mut last: Option<Time> = None;
        let mut more = true;
        let mut removed = 0u32;
        let mut skip_test = false;
        loop {
            let Some(r) = ends.get(i) else {
                more = false;
                break;
            };
            i += 1;
            if !r.nodes.iter().any(|&id| usable(id)) {
                continue;
            }
            if anchor.is_none() {
                // Aligned on a multiple of the window in wall-clock time.
                anchor = Some(if group > 0 {
                    r.end + (group - (r.end + phase) % group)
                } else {
                    r.end
                });
            }
            last = Some(r.end);
            match ends.get(i) {
                None => {
                    more = false;
                    break;
                }
                Some(n) => {
                    let limit = if group > 0 {
                        anchor.unwrap_or(r.end) + window
                    } else {
                        r.end
                    };
                    if n.end > limit {
                        break;
                    }
                }
            }
            removed += 1;
            if removed > WILL_RUN_MAX_RM {
                skip_test = true;
                break;
            }
        }
        let last = last?;
        // A job past its planned end is expected to end in the next second.
        let start = last.max(now + 1);
        if start > cutoff {
            return None;
        }
        // The ends released so far (`ends[..i]`) in the counts.
        tl.extend_to(ctx, req, part, ends, fits0, i);
        while applied < tl.changes.len() && tl.changes[applied].0 < i {
            let (_, id, old, new) = tl.changes[applied];
            if usable(id) {
                if let Some(g) = old {
                    n_fit -= 1;
                    g_fit -= u64::from(g);
                }
                if let Some(g) = new {
                    n_fit += 1;
                    g_fit += u64::from(g);
                }
            }
            applied += 1;
        }
        if !skip_test {
            if group > 0 {
                let a = anchor.unwrap_or(last);
                loop {
                    window *= 2;
                    if ends.get(i).is_none_or(|n| n.end <= a + window) {
                        break;
                    }
                }
            }
            if counts_fit(req, n_fit, g_fit) {
                let fut = tl.state_at(ctx, ends, i);
                if let Some(a) = try_select(cache, cl, ctx.params, fut, req, part, Some(avoid)) {
                    return Some((start, a));
                }
            }
        }
        if !more {
            return None;
        }
    }
}
