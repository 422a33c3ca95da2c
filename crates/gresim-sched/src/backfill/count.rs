//! Backfill's count of `bf_max_job_test` (Slurm's `bf_last_depth_try`):
//! which of the jobs whose plans wait certainly reach a try
//! ([`FirstTry`], [`reaches_try`]), the most nodes their plans can
//! reserve, and the budget the pass checks before each record
//! ([`Budget`]).

use gresim_model::job::Time;
use gresim_model::{JobIdx, NodeId, PartId};

use super::{counts_fit, memo_for, plan_limits, Avoid, Memos, PartMasks, Todo};
use crate::bf_map::{self, BfMap};
use crate::PassCtx;

/// What the first try of `job`'s plan (below in [`backfill_pass`]) finds
/// on the backfill map as it stands, for a job whose plan may wait.
#[derive(Default)]
pub(super) struct FirstTry {
    /// Whether `job` may start now: the tests of its first try that only
    /// fail more where more nodes are reserved: the reservations' test,
    /// enough usable nodes and the required ones among them, and the counts
    /// (nodes, GPUs, CPUs) of the nodes no reservation blocks. A job for
    /// which it is false cannot start now once more reservations are in the
    /// map either, so its plan may wait with the jobs deferred before it.
    /// (Node selection itself is not asked: `_eval_nodes()` may fail on more
    /// nodes where it fits on fewer, e.g. by picking a node whose cores or
    /// GPUs then fail, or taking small nodes first and running out of
    /// nodes.)
    pub(super) may_start: bool,
    /// The usable nodes that no reservation blocks in the first try's
    /// window, where they alone decide whether the try reaches
    /// `_try_sched()` (no node list, no advance reservations).
    pub(super) usable: Option<u32>,
}

impl FirstTry {
    /// Whether `job`'s plan certainly reaches a try: its first one has
    /// enough usable nodes even if the jobs planned before it reserve
    /// `pending` more.
    pub(super) fn surely_tries(&self, ctx: &PassCtx<'_>, job: JobIdx, pending: u32) -> bool {
        let need = ctx.jobs[job.idx()].request.min_nodes.max(1);
        self.usable
            .is_some_and(|u| u64::from(u) >= u64::from(need) + u64::from(pending))
    }
}

/// [`FirstTry`] of `job` in `part`.
#[allow(clippy::too_many_arguments)]
pub(super) fn first_try(
    ctx: &PassCtx<'_>,
    map: &mut BfMap,
    windows: &mut bf_map::Windows,
    (blocked, avoid, usable_bits, resv_ex): (&mut [u64], &mut Avoid, &mut [u64], &mut [bool]),
    parts: &mut PartMasks,
    fits_memo: &mut Memos,
    job: JobIdx,
    part: PartId,
) -> FirstTry {
    let no = FirstTry::default();
    let now = ctx.now;
    let (_, limit, _) = plan_limits(ctx, job, part);
    let req = crate::select::request_now(ctx.cluster, &ctx.jobs[job.idx()], now, ctx.params);
    let need_nodes = req.min_nodes.max(1);
    let memo = memo_for(fits_memo, ctx, &req, part);
    usable_bits.copy_from_slice(&parts.of(ctx, part).sched);
    for &id in &req.exclude {
        bf_map::clear_bit(usable_bits, id);
    }
    windows.restart();
    if !map.blocked_first(now, now + limit, blocked) {
        map.blocked_in(windows, now, now + limit, blocked);
    }
    #[cfg(debug_assertions)]
    {
        let mut w = bf_map::Windows::default();
        let mut b = bf_map::bitmap(blocked.len());
        map.blocked_in(&mut w, now, now + limit, &mut b);
        debug_assert_eq!(&b[..], &blocked[..]);
    }
    // (The plan that may follow sets `blocked` again.)
    avoid.stale();
    if let Some(all) = ctx.resv {
        match crate::resv::job_test(ctx, all, job, part, now, limit, resv_ex) {
            crate::resv::Test::Usable { .. } => {
                for (i, &x) in resv_ex.iter().enumerate() {
                    if x {
                        bf_map::set_bit(blocked, NodeId::from_idx(i));
                    }
                }
            }
            _ => return no,
        }
    }
    let usable = bf_map::count_unblocked(usable_bits, blocked);
    let first = FirstTry {
        may_start: false,
        usable: (ctx.resv.is_none() && req.nodelist.is_empty()).then_some(usable),
    };
    if usable < need_nodes || req.nodelist.iter().any(|&id| bf_map::has_bit(blocked, id)) {
        return first;
    }
    let fm = &fits_memo[memo];
    let mut counts = fm.base;
    for id in bf_map::ids_both(&fm.bits, blocked) {
        if let Some(f) = fm.fits[id.idx()] {
            counts.sub(f);
        }
    }
    FirstTry {
        may_start: counts_fit(&req, counts),
        ..first
    }
}

/// Whether `job`'s plan on the map as it stands would reach a try
/// (`_try_sched()`): its tries as in [`backfill_pass`], from now and then
/// from each `later_start`, up to the first with enough usable nodes (and
/// the required ones) free of reservations in its window. `None` where
/// advance reservations take part (their test is the plan's).
#[allow(clippy::too_many_arguments)]
pub(super) fn reaches_try(
    ctx: &PassCtx<'_>,
    map: &BfMap,
    windows: &mut bf_map::Windows,
    (blocked, avoid, usable_bits): (&mut [u64], &mut Avoid, &mut [u64]),
    parts: &mut PartMasks,
    job: JobIdx,
    part: PartId,
    map_end: Time,
) -> Option<bool> {
    if ctx.resv.is_some() {
        return None;
    }
    let now = ctx.now;
    let (_, limit, no_reserve) = plan_limits(ctx, job, part);
    let req = crate::select::request_now(ctx.cluster, &ctx.jobs[job.idx()], now, ctx.params);
    let need_nodes = req.min_nodes.max(1);
    let pm = parts.of(ctx, part);
    usable_bits.copy_from_slice(&pm.sched);
    for &id in &req.exclude {
        bf_map::clear_bit(usable_bits, id);
    }
    let mut start_res = now;
    windows.restart();
    for _try in 0..64 {
        let end_time = start_res.max(now) + limit;
        map.blocked_in(windows, start_res, end_time, blocked);
        avoid.stale();
        let later = map.later_start_from(windows.first_after(), end_time, map_end, &pm.sched);
        if bf_map::count_unblocked(usable_bits, blocked) >= need_nodes
            && !req.nodelist.iter().any(|&id| bf_map::has_bit(blocked, id))
        {
            return Some(true);
        }
        match later.filter(|_| !no_reserve) {
            Some(l) => start_res = l,
            None => return Some(false),
        }
    }
    Some(false)
}

/// The most nodes a waiting [`Todo`] can reserve once planned.
pub(super) fn todo_nodes(ctx: &PassCtx<'_>, holds: &[(Vec<NodeId>, Time)], t: &Todo) -> u32 {
    match *t {
        Todo::Plan(job, part, ..) => plan_nodes_bound(ctx, job, part),
        Todo::Hold(i) => holds.get(i as usize).map_or(0, |h| h.0.len() as u32),
    }
}

/// The most nodes a plan of `job` in `part` can reserve.
pub(super) fn plan_nodes_bound(ctx: &PassCtx<'_>, job: JobIdx, part: PartId) -> u32 {
    let req = &ctx.jobs[job.idx()].request;
    if req.max_nodes_open {
        ctx.cluster.partition(part).nodes.len() as u32
    } else {
        req.max_nodes.max(req.min_nodes).max(1)
    }
}

/// `bf_max_job_test` as sched/backfill counts it: `bf_last_depth_try`, the
/// jobs of the pass that reached `_try_sched()` in some try (the
/// reservations left them enough usable nodes), checked before each next
/// record. A job whose plan waits ([`Todo::Plan`]) is counted when it is
/// queued if its first try certainly reaches `_try_sched()`; otherwise it is
/// `unknown` until planned. Once the waiting jobs could make the count, the
/// pass looks at later records tentatively, and plans the waiting jobs
/// (which it may do at any time before a later job) only before a record
/// that could change something, as far as the count needs.
#[derive(Default)]
pub(super) struct Budget {
    /// `bf_max_job_test`.
    pub(super) max: u32,
    pub(super) tried: u32,
    pub(super) unknown: u32,
    /// The most nodes the waiting jobs' plans can reserve.
    pub(super) pending_nodes: u32,
    /// The first `asked` waiting jobs have none not asked among them, and
    /// their plans may reserve `asked_nodes` nodes in all (the waiting jobs
    /// are asked from there on, not again from the first).
    pub(super) asked: usize,
    pub(super) asked_nodes: u32,
}

/// Whether a job waiting to be planned counts against `bf_max_job_test`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Counted {
    /// Not known yet; its first try was not asked.
    Unknown,
    /// Not known: its first try was asked and does not settle it (its plan
    /// will).
    Asked,
    /// It reaches a try: counted.
    Yes,
}

/// What [`Budget::check`] allows before the next record.
pub(super) enum Check {
    Room,
    /// The waiting jobs could make the count: plan them first.
    Resolve,
    Full,
}

impl Budget {
    pub(super) fn check(&self) -> Check {
        if self.tried >= self.max {
            Check::Full
        } else if u64::from(self.tried) + u64::from(self.unknown) >= u64::from(self.max) {
            Check::Resolve
        } else {
            Check::Room
        }
    }

    /// The waiting jobs went to be planned (before any later job).
    pub(super) fn drained(&mut self) {
        self.unknown = 0;
        self.pending_nodes = 0;
        self.asked = 0;
        self.asked_nodes = 0;
    }

    /// The first `n` waiting jobs, whose plans may reserve `nodes` nodes,
    /// left the list (to be planned, or never reaching a try).
    pub(super) fn left_front(&mut self, n: usize, nodes: u32) {
        self.pending_nodes = self.pending_nodes.saturating_sub(nodes);
        (self.asked, self.asked_nodes) = if self.asked >= n {
            (self.asked - n, self.asked_nodes.saturating_sub(nodes))
        } else {
            (0, 0)
        };
    }
}
