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
use gresim_model::{Allocation, JobIdx, NodeId, PartId};

use crate::bf_map::{self, BfMap};
use crate::fifo::PassLimits;
use crate::queue::QueueKey;
use crate::select::{try_select_nodes, SelectCache, Skip};
use crate::sweep::{Ends, FitChanges, Sweep};
use crate::PassCtx;

mod count;
mod picks;
use count::{
    first_try, plan_nodes_bound, reaches_try, todo_nodes, Budget, Check, Counted, FirstTry,
};
use picks::{Key, Picks, ReqId};

/// The planning time limit of a job in a partition: its limit, capped by the
/// partition's MaxTime; unlimited plans as MaxTime, or a year.
pub(crate) fn plan_limit(ctx: &PassCtx<'_>, job: JobIdx, part: PartId) -> Time {
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

/// A job's time limits in backfill: the one it runs with if it starts
/// ([`plan_limit`]) and the one it is planned with, and whether its QOS is
/// `NoReserve` (`_attempt_backfill()`: such a job is planned for one minute
/// under any PreemptMode, and reserves nothing).
fn plan_limits(ctx: &PassCtx<'_>, job: JobIdx, part: PartId) -> (Time, Time, bool) {
    let run_limit = plan_limit(ctx, job, part);
    let no_reserve =
        crate::preempt::no_reserve(ctx.cluster, &ctx.specs[ctx.jobs[job.idx()].sub as usize]);
    let limit = if no_reserve && ctx.params.preempt.mode_set() {
        60
    } else {
        run_limit
    };
    (run_limit, limit, no_reserve)
}

/// Most request shapes whose fit counts one pass remembers.
const FITS_MEMO_MAX: usize = 16;

/// `node_may_fit` of every node of `part` for requests like `req` (to it:
/// [`crate::select::same_node_fit`]),
/// now (brought up to date when the pass starts a job) and as the running
/// jobs end (valid until the pass starts a job).
struct FitsMemo {
    req: std::sync::Arc<gresim_model::job::JobRequest>,
    part: PartId,
    fits: Vec<Option<Fit>>,
    /// The nodes with a fit, and their counts.
    bits: Vec<u64>,
    base: Counts,
    changes: FitChanges<Fit>,
}

/// The pass's [`FitsMemo`]s, and spare ones whose memory a new shape takes
/// (kept from one pass to the next in [`Scratch`]).
#[derive(Default)]
struct Memos {
    list: Vec<FitsMemo>,
    spare: Vec<FitsMemo>,
}

impl Memos {
    /// A new pass: every memo is spare.
    fn restart(&mut self) {
        self.spare.append(&mut self.list);
    }
}

impl std::ops::Deref for Memos {
    type Target = Vec<FitsMemo>;
    fn deref(&self) -> &Vec<FitsMemo> {
        &self.list
    }
}

impl std::ops::DerefMut for Memos {
    fn deref_mut(&mut self) -> &mut Vec<FitsMemo> {
        &mut self.list
    }
}

impl FitsMemo {
    /// A job started on `alloc`'s nodes: their fits in the new state. (The
    /// fit changes are worked out again from the sweep's log, which
    /// [`Sweep::started`] brings to the new state.)
    fn started(&mut self, ctx: &PassCtx<'_>, alloc: &Allocation) {
        for id in alloc.node_ids() {
            if !ctx.cluster.in_partition(self.part, id) {
                continue;
            }
            let new = node_fit(ctx, ctx.state.node(id), id, &self.req);
            if let Some(f) = std::mem::replace(&mut self.fits[id.idx()], new) {
                self.base.sub(f);
                bf_map::clear_bit(&mut self.bits, id);
            }
            if let Some(f) = new {
                self.base.add(f);
                bf_map::set_bit(&mut self.bits, id);
            }
        }
        self.changes.reset();
    }
}

/// A running job as backfill plans with it.
struct Running<'a> {
    /// Its planned end, start + limit (possibly past).
    end: Time,
    alloc: Cow<'a, Allocation>,
    /// Its nodes as a bitmap, when it has many on a cluster too wide for
    /// [`EndBlocks`]' flat bitmaps.
    bits: Option<Box<[u64]>>,
}

impl<'a> Running<'a> {
    fn new(end: Time, alloc: Cow<'a, Allocation>, words: usize) -> Self {
        // A wide job is tested against a node mask word by word (only
        // [`EndBlocks`] without `flat` asks).
        let bits = (words > FLAT_WORDS && alloc.nodes.len() > 2 * words).then(|| {
            let mut m = bf_map::bitmap(words);
            for id in alloc.node_ids() {
                bf_map::set_bit(&mut m, id);
            }
            m.into_boxed_slice()
        });
        Running { end, alloc, bits }
    }
}

impl Ends for [Running<'_>] {
    fn count(&self) -> usize {
        self.len()
    }

    fn alloc(&self, k: usize) -> &Allocation {
        &self[k].alloc
    }
}

/// The running jobs' nodes in blocks of [`END_BLOCK`] consecutive ends (one
/// bitmap per block), so the search for the next end on a usable node skips
/// whole blocks of ends on blocked nodes; and, so that the searches read
/// small arrays rather than the ends' allocations, each end's nodes in one
/// flat list and the ends' times.
struct EndBlocks {
    words: usize,
    masks: Vec<u64>,
    /// The nodes of the ends on several nodes (unless wide: then their
    /// bitmaps), each end's in one range of `nodes` given by `lists`, which
    /// [`EndBlocks::single`] indexes. An inserted end's list goes at the
    /// end: nothing moves.
    nodes: Vec<u32>,
    lists: Vec<(u32, u32)>,
    /// On a cluster of at most [`FLAT_WORDS`] words of nodes, instead of
    /// the lists: `flat[k * words..(k + 1) * words]`, the nodes of end `k`.
    flat: Vec<u64>,
    /// Without `flat`: the node of each end on one node, so that most ends
    /// are tested with one bit; for an end on several, [`MANY`] with the
    /// index of its list in `lists`.
    single: Vec<u32>,
    times: Vec<Time>,
}

/// The bit of [`EndBlocks::single`] that marks an end on several nodes
/// (the bits below it index [`EndBlocks::lists`]).
const MANY: u32 = 1 << 31;

const END_BLOCK: usize = 64;

/// The widest node bitmap [`EndBlocks`] keeps per end (up to 128 nodes).
const FLAT_WORDS: usize = 2;

impl EndBlocks {
    fn new(ends: &[Running<'_>], words: usize) -> Self {
        let mut masks = vec![0u64; ends.len().div_ceil(END_BLOCK) * words];
        let flat_ends = words <= FLAT_WORDS;
        let mut flat = Vec::new();
        if flat_ends {
            flat.resize(ends.len() * words, 0);
        }
        for (k, r) in ends.iter().enumerate() {
            let m = &mut masks[k / END_BLOCK * words..(k / END_BLOCK + 1) * words];
            for id in r.alloc.node_ids() {
                bf_map::set_bit(m, id);
                if flat_ends {
                    bf_map::set_bit(&mut flat[k * words..(k + 1) * words], id);
                }
            }
        }
        let mut b = EndBlocks {
            words,
            masks,
            nodes: Vec::new(),
            lists: Vec::new(),
            flat,
            single: Vec::new(),
            times: ends.iter().map(|r| r.end).collect(),
        };
        if !flat_ends {
            b.single = ends.iter().map(|r| b.single_of(r)).collect();
        }
        b
    }

    /// [`EndBlocks::single`] of `r`: its node, or a new list of its nodes.
    fn single_of(&mut self, r: &Running<'_>) -> u32 {
        if let [one] = &r.alloc.nodes[..] {
            return one.node.idx() as u32;
        }
        let from = self.nodes.len() as u32;
        if r.bits.is_none() {
            self.nodes
                .extend(r.alloc.node_ids().map(|id| id.idx() as u32));
        }
        self.lists.push((from, self.nodes.len() as u32));
        MANY | (self.lists.len() - 1) as u32
    }

    /// `ends` gained the end at index `at` (the others in order after it):
    /// its entries go in, and each block's bitmap takes the nodes of the end
    /// moved into it from the block before. A bitmap may then also hold the
    /// nodes of an end moved out of its block: the searches take a block's
    /// bitmap only as a filter before testing its ends one by one, so a
    /// superset finds the same ends as a rebuilt [`EndBlocks::new`] would.
    fn insert(&mut self, ends: &[Running<'_>], at: usize) {
        let w = self.words;
        let r = &ends[at];
        self.times.insert(at, r.end);
        if w <= FLAT_WORDS {
            self.flat.splice(at * w..at * w, std::iter::repeat_n(0, w));
            for id in r.alloc.node_ids() {
                bf_map::set_bit(&mut self.flat[at * w..(at + 1) * w], id);
            }
        } else {
            let one = self.single_of(r);
            self.single.insert(at, one);
        }
        let blocks = ends.len().div_ceil(END_BLOCK);
        self.masks.resize(blocks * w, 0);
        for b in at / END_BLOCK..blocks {
            let k = if b == at / END_BLOCK {
                at
            } else {
                b * END_BLOCK
            };
            let m = &mut self.masks[b * w..(b + 1) * w];
            for id in ends[k].alloc.node_ids() {
                bf_map::set_bit(m, id);
            }
        }
    }

    /// Whether end `k` runs on a node of `mask`.
    #[inline(always)]
    fn touches(&self, ends: &[Running<'_>], k: usize, mask: &[u64]) -> bool {
        if !self.flat.is_empty() {
            return self.flat_touches(k, mask);
        }
        let n = self.single[k];
        if n & MANY == 0 {
            return mask[n as usize / 64] & (1 << (n % 64)) != 0;
        }
        match &ends[k].bits {
            Some(b) => b.iter().zip(mask).any(|(x, y)| x & y != 0),
            None => {
                let (from, to) = self.lists[(n & !MANY) as usize];
                self.nodes[from as usize..to as usize]
                    .iter()
                    .any(|&n| mask[n as usize / 64] & (1 << (n % 64)) != 0)
            }
        }
    }

    /// [`EndBlocks::touches`] on a small cluster (`flat` kept: one or two
    /// words per end).
    #[inline(always)]
    fn flat_touches(&self, k: usize, mask: &[u64]) -> bool {
        let w = self.words;
        let e = &self.flat[k * w..(k + 1) * w];
        e[0] & mask[0] != 0 || (w == 2 && e[1] & mask[1] != 0)
    }

    /// The first end at or after index `from` planned to end after `limit`
    /// (or the number of ends): a search in steps doubling from `from`, as
    /// the answer is usually close.
    fn past(&self, from: usize, limit: Time) -> usize {
        let t = &self.times;
        let (mut lo, mut step) = (from, 1usize);
        while lo + step <= t.len() && t[lo + step - 1] <= limit {
            lo += step;
            step *= 2;
        }
        let hi = (lo + step).min(t.len());
        lo + t[lo..hi].partition_point(|&x| x <= limit)
    }

    /// The last end at or after index `from` and before `to` on a node of
    /// `mask`, which end `from` is.
    fn prev_touching(&self, ends: &[Running<'_>], mask: &[u64], from: usize, to: usize) -> usize {
        let mut i = to;
        while i > from {
            let b = (i - 1) / END_BLOCK;
            let bm = &self.masks[b * self.words..(b + 1) * self.words];
            let block_start = (b * END_BLOCK).max(from);
            if bm.iter().zip(mask).any(|(x, y)| x & y != 0) {
                if let Some(j) = (block_start..i)
                    .rev()
                    .find(|&j| self.touches(ends, j, mask))
                {
                    return j;
                }
            }
            i = block_start;
        }
        from
    }

    /// The first end at or after index `i` on a node of `mask`.
    fn next_touching(&self, ends: &[Running<'_>], mask: &[u64], mut i: usize) -> Option<usize> {
        while i < ends.len() {
            let b = i / END_BLOCK;
            let bm = &self.masks[b * self.words..(b + 1) * self.words];
            let block_end = ((b + 1) * END_BLOCK).min(ends.len());
            if bm.iter().zip(mask).any(|(x, y)| x & y != 0) {
                let found = if self.flat.is_empty() {
                    (i..block_end).find(|&j| self.touches(ends, j, mask))
                } else {
                    (i..block_end).find(|&j| self.flat_touches(j, mask))
                };
                if found.is_some() {
                    return found;
                }
            }
            i = block_end;
        }
        None
    }
}

/// What a node that `node_may_fit` admits offers a request: its GPUs for a
/// per-job GPU count, and its free CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fit {
    gpus: u32,
    cpus: u32,
}

/// `node_may_fit`, with the node's free CPUs.
fn node_fit(
    ctx: &PassCtx<'_>,
    u: &gresim_model::state::NodeUsage,
    id: NodeId,
    req: &gresim_model::job::JobRequest,
) -> Option<Fit> {
    crate::select::node_may_fit(ctx.cluster, ctx.params, u, id, req).map(|gpus| Fit {
        gpus,
        cpus: u.free_cores.count() * u32::from(ctx.cluster.node(id).threads_per_core.max(1)),
    })
}

/// Node-fit counts: nodes, their GPUs and their free CPUs.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    nodes: u32,
    gpus: u64,
    cpus: u64,
}

impl Counts {
    fn add(&mut self, f: Fit) {
        self.nodes += 1;
        self.gpus += u64::from(f.gpus);
        self.cpus += u64::from(f.cpus);
    }

    fn sub(&mut self, f: Fit) {
        self.nodes -= 1;
        self.gpus -= u64::from(f.gpus);
        self.cpus -= u64::from(f.cpus);
    }
}

/// Whether nodes with these counts, each of which could hold its share of
/// `req` by counts alone, could hold `req`: a necessary condition for a fit.
/// Enough nodes, enough GPUs for a per-job count, and enough free CPUs for
/// the CPUs `_eval_nodes()` must gather (its `min_cpus`: the job's tasks at
/// its minimum node count, times `--cpus-per-task`).
fn counts_fit(req: &gresim_model::job::JobRequest, c: Counts) -> bool {
    let min_nodes = req.min_nodes.max(1);
    !req.nodelist.is_empty()
        || (c.nodes >= min_nodes
            && req
                .gpus_per_job
                .is_none_or(|pj| c.gpus >= u64::from(pj.count))
            && c.cpus
                >= u64::from(req.total_tasks(min_nodes)) * u64::from(req.cpus_per_task.max(1)))
}

/// A job backfill tested, in queue order, whose plan may wait.
enum Todo {
    /// Plan it (with its record's priority, `bf_job_priority`), and whether
    /// it is already counted against `bf_max_job_test` (see [`Budget`]).
    Plan(JobIdx, PartId, u32, Counted),
    /// A preemptor's reservation: its index in the pass's holds (nodes,
    /// and the end of the reservation from the map's start). Kept out of
    /// line so that a plan stays small.
    Hold(u32),
}

/// One backfill pass over `queue`. Returns the jobs it started; adds the
/// jobs it tested to `tested`.
/// A job this pass started (`planned`, with its planned end): later jobs
/// plan with it. The fit memos count it, and the sweep goes on in the new
/// state and order of ends, and so do the ends' blocks.
fn plan_with<'a>(
    ctx: &PassCtx<'_>,
    planned: Running<'a>,
    fits_memo: &mut [FitsMemo],
    (sweep, blocks, picks): (&mut Sweep, &mut Option<EndBlocks>, &mut Picks),
    ends: &mut Vec<Running<'a>>,
) {
    picks.clear();
    for m in fits_memo.iter_mut() {
        m.started(ctx, &planned.alloc);
    }
    let at = ends.partition_point(|e| e.end <= planned.end);
    sweep.started(ctx.cluster, ctx.state, &planned.alloc, at);
    ends.insert(at, planned);
    if let Some(b) = blocks {
        b.insert(ends, at);
    }
}

/// The buffers of a backfill pass that a policy keeps from one pass to the
/// next: each pass empties them and fills them again, so only their memory
/// is kept (a deep queue's pass would otherwise grow them from nothing).
#[derive(Default)]
pub struct Scratch {
    map: Option<BfMap>,
    sweep: Sweep,
    windows: bf_map::Windows,
    memos: Memos,
    picks: Picks,
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scratch").finish_non_exhaustive()
    }
}

#[allow(clippy::too_many_arguments)]
pub fn backfill_pass(
    queue: &BTreeSet<QueueKey>,
    ctx: &mut PassCtx<'_>,
    placement: &crate::placement::Placement,
    cache: &mut SelectCache,
    scratch: &mut Scratch,
    tested_count: &mut u64,
    tentative_count: &mut u64,
    preempt_start: &mut [Option<gresim_model::job::Time>],
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
    let map = scratch.map.get_or_insert_with(|| BfMap::new(nnodes));
    map.reset(nnodes);
    let words = bf_map::words_for(nnodes);
    let mut started: Vec<JobIdx> = Vec::new();
    let mut budget = Budget {
        max: ctx.params.bf_max_job_test,
        ..Budget::default()
    };
    // Planned ends of running jobs, in order. The allocations are borrowed
    // from the job table; only jobs this pass starts own theirs.
    let jobs: &[gresim_model::job::Job] = ctx.jobs;
    let mut ends: Vec<Running<'_>> = ctx
        .running
        .iter()
        .filter_map(|&(e, j)| {
            let run = jobs[j.idx()].runs.last()?;
            Some(Running::new(e, Cow::Borrowed(&run.alloc), words))
        })
        .collect();
    // What `node_may_fit` says of each partition node in the current state,
    // by request shape and partition, brought up to date at each start.
    let mut fits_memo = std::mem::take(&mut scratch.memos);
    fits_memo.restart();
    // The running jobs released in planned-end order (valid until the pass
    // starts a job).
    let sweep = &mut scratch.sweep;
    sweep.reset();
    // The node selections made on the sweep's states, read back when asked
    // again (emptied at each start).
    let picks = &mut scratch.picks;
    picks.restart();
    // The ends' nodes by blocks, for `will_run_release`'s scans (made again
    // with the sweep).
    let mut blocks: Option<EndBlocks> = None;
    // The nodes the reservations block for the current try, and the same
    // as node selection takes them.
    let mut blocked = bf_map::bitmap(words);
    let windows = &mut scratch.windows;
    windows.restart();
    let mut avoid = Avoid::new(nnodes);
    let mut on = bf_map::bitmap(words);
    let mut usable_bits = bf_map::bitmap(words);
    let mut ub = bf_map::bitmap(words);
    let mut parts = PartMasks::new(ctx.cluster.partitions.len());
    let mut acct_memo = crate::acct_policy::RunnableMemo::default();
    // With reservations: the nodes they keep from the job being planned.
    let mut resv_ex: Vec<bool> = if ctx.resv.is_some() {
        vec![false; nnodes]
    } else {
        Vec::new()
    };
    let mut limits = PassLimits::default();

    // Tested jobs that cannot start now, whatever the reservations, wait
    // here unplanned: their reservations matter only to a later job that
    // could start now, and are made, in queue order, before it is planned.
    // Jobs still waiting when the pass ends would have changed nothing;
    // they are planned earlier only where `bf_max_job_test`'s count must be
    // known before a record that could change something ([`Budget`], and
    // `tentative` below). A preemptor's reservation waits there too, in its
    // place.
    let mut deferred: std::collections::VecDeque<Todo> = std::collections::VecDeque::with_capacity(
        queue.len().min(ctx.params.bf_max_job_test as usize),
    );
    let mut ready: std::collections::VecDeque<Todo> = Default::default();
    let mut holds: Vec<(Vec<NodeId>, Time)> = Vec::new();
    let mut records = queue.iter();
    // Past a point where the count may have reached `bf_max_job_test`
    // (`Check::Resolve`), records are looked at tentatively: one that only
    // waits is deferred like the others, as its plan matters only if a
    // later job may start now. Whether the pass reached it is settled (the
    // waiting jobs planned, as far as the count needs) only before a record
    // that could change something: a job that may start now, a reason to
    // set, a preemption or a row start. That record is held and looked at
    // again once the count is known.
    let mut tentative = 0u64;
    let mut settle = false;
    let mut held: Option<&QueueKey> = None;
    loop {
        let (job, part, prio, mut counted) = match ready.pop_front() {
            Some(Todo::Plan(job, part, prio, counted)) => {
                (job, part, prio, counted == Counted::Yes)
            }
            Some(Todo::Hold(i)) => {
                if let Some((nodes, end)) = holds.get(i as usize) {
                    let e = end / res_q * res_q;
                    map.reserve(map_begin, e.max(map_begin + res_q), nodes);
                }
                continue;
            }
            None => {
                // `bf_max_job_test` counts the jobs that reached a try
                // (`bf_last_depth_try`); the deferred ones not known to
                // are asked where they could reach the limit, and planned
                // only when a held record needs the count settled.
                let unsure = match budget.check() {
                    Check::Full => break,
                    Check::Resolve => {
                        // A job not known to reach a try is asked now: every
                        // job before it is planned (its reservation in the
                        // map) or waits (at most `pending` more nodes).
                        for t in deferred.range_mut(budget.asked..) {
                            if !matches!(budget.check(), Check::Resolve) {
                                break;
                            }
                            let nodes = todo_nodes(ctx, &holds, t);
                            if let Todo::Plan(job, part, _, certain @ Counted::Unknown) = t {
                                let (job, part) = (*job, *part);
                                *certain = Counted::Asked;
                                let f = first_try(
                                    ctx,
                                    map,
                                    windows,
                                    (&mut blocked, &mut avoid, &mut usable_bits, &mut resv_ex),
                                    &mut parts,
                                    &mut fits_memo,
                                    job,
                                    part,
                                );
                                if f.surely_tries(ctx, job, budget.asked_nodes) {
                                    *certain = Counted::Yes;
                                    budget.tried += 1;
                                    budget.unknown -= 1;
                                }
                            }
                            budget.asked += 1;
                            budget.asked_nodes = budget.asked_nodes.saturating_add(nodes);
                        }
                        // The first waiting job, with no other before it,
                        // would be planned on the map as it stands: its
                        // tries' node counts alone tell whether it reaches
                        // a try, without its plan. One that never does
                        // leaves nothing to plan (it would reserve nothing).
                        while matches!(budget.check(), Check::Resolve) {
                            let Some(Todo::Plan(job, part, _, c)) = deferred.front_mut() else {
                                break;
                            };
                            if *c == Counted::Yes {
                                break;
                            }
                            let (job, part) = (*job, *part);
                            match reaches_try(
                                ctx,
                                map,
                                windows,
                                (&mut blocked, &mut avoid, &mut usable_bits),
                                &mut parts,
                                job,
                                part,
                                map_end,
                            ) {
                                Some(true) => {
                                    *c = Counted::Yes;
                                    budget.tried += 1;
                                    budget.unknown -= 1;
                                }
                                Some(false) => {
                                    deferred.pop_front();
                                    budget.unknown -= 1;
                                    budget.left_front(1, plan_nodes_bound(ctx, job, part));
                                }
                                None => break,
                            }
                        }
                        if !matches!(budget.check(), Check::Resolve) {
                            continue;
                        }
                        // The count may have reached the limit: the next
                        // record is looked at tentatively, unless a held one
                        // needs the count settled.
                        if settle {
                            // Up to the first job not known to reach a try;
                            // those after it wait on (their bound counts the
                            // nodes of the waiting jobs before them, a superset
                            // of those left).
                            let upto = deferred
                                .iter()
                                .position(|t| matches!(t, Todo::Plan(.., c) if *c != Counted::Yes))
                                .map_or(deferred.len(), |u| u + 1);
                            let mut nodes = 0u32;
                            for t in deferred.range(..upto) {
                                if let Todo::Plan(.., certain) = t {
                                    budget.unknown -= u32::from(*certain != Counted::Yes);
                                }
                                nodes = nodes.saturating_add(todo_nodes(ctx, &holds, t));
                            }
                            budget.left_front(upto, nodes);
                            ready.extend(deferred.drain(..upto));
                            continue;
                        }
                        true
                    }
                    Check::Room => {
                        // Every record looked at so far was reached.
                        *tested_count += std::mem::take(&mut tentative);
                        settle = false;
                        false
                    }
                };
                let Some(k) = held.take().or_else(|| records.next()) else {
                    break;
                };
                let (job, part, prio) = (k.job, k.part, k.priority());
                if started.contains(&job) {
                    continue;
                }
                if limits.reason(ctx, job, part).is_some() {
                    continue;
                }
                // A record that may change something before the count is
                // known: the count is settled first, then it is looked at
                // again (or the pass ends before it).
                let mut hold = || {
                    held = Some(k);
                    settle = true;
                };
                // `job_array_start_test()` names the throttle in backfill too.
                if !ctx.throttle_allows(job) {
                    if unsure {
                        hold();
                        continue;
                    }
                    ctx.set_reason(job, gresim_model::Reason::JobArrayTaskLimit, None);
                    continue;
                }
                // An accounting limit holds the job: no reservation (`acct_policy_job_runnable_*`).
                if let Some(r) = acct_memo.runnable(ctx, job, part) {
                    if unsure {
                        hold();
                        continue;
                    }
                    ctx.set_reason(job, r, None);
                    continue;
                }
                if unsure
                    && (ctx.params.preempt.enabled()
                        || ctx
                            .params
                            .row_sharing(ctx.cluster.partition(part), &ctx.jobs[job.idx()].request))
                {
                    hold();
                    continue;
                }
                if unsure {
                    tentative += 1;
                } else {
                    *tested_count += 1;
                }
                // `_try_sched()` with preemption candidates: a job that fits
                // once they are gone starts now, and `select_nodes()`
                // preempts them for it; it starts in a later pass.
                if ctx.params.preempt.enabled() {
                    match crate::preempt::backfill_preempt(
                        ctx,
                        cache,
                        job,
                        part,
                        prio,
                        preempt_start,
                    ) {
                        crate::preempt::BfPreempt::No => {}
                        // (Preemption is `_try_sched()`'s: the job reached it.)
                        crate::preempt::BfPreempt::Started => {
                            budget.tried += 1;
                            continue;
                        }
                        // It waits for its preemptees: its nodes are
                        // reserved for it from now for its time limit
                        // (`_add_reservation()` after `_start_job()`
                        // failed), in its place among the plans.
                        crate::preempt::BfPreempt::Waits(alloc) => {
                            budget.tried += 1;
                            let end = now.saturating_add(plan_limit(ctx, job, part));
                            budget.pending_nodes += alloc.nodes.len() as u32;
                            deferred.push_back(Todo::Hold(holds.len() as u32));
                            holds.push((alloc.node_ids().collect(), end));
                            continue;
                        }
                    }
                }
                // A partition whose jobs share cores (OverSubscribe=FORCE:N, or YES:N
                // for a job with --oversubscribe):
                // it starts in a row of its partition.
                if ctx
                    .params
                    .row_sharing(ctx.cluster.partition(part), &ctx.jobs[job.idx()].request)
                    && crate::select::select(
                        cache,
                        ctx.cluster,
                        ctx.params,
                        ctx.state,
                        &ctx.jobs[job.idx()].request,
                        part,
                        None,
                    )
                    .is_err()
                    && crate::gang::row_start(ctx, job, part, prio, None, true)
                {
                    budget.tried += 1;
                    started.push(job);
                    // As for a start below: later jobs plan with it.
                    if let Some(s) = ctx.started.last() {
                        let limit = plan_limit(ctx, job, part);
                        let planned = Running::new(now + limit, Cow::Owned(s.alloc.clone()), words);
                        plan_with(
                            ctx,
                            planned,
                            &mut fits_memo,
                            (sweep, &mut blocks, picks),
                            &mut ends,
                        );
                    }
                    continue;
                }
                // Starting needs a selection on nodes no reservation blocks,
                // which needs the counts of all the nodes to fit.
                let req = &ctx.jobs[job.idx()].request;
                let slurm = placement.is_slurm();
                let (wait, first) = if slurm && req.nodelist.is_empty() && {
                    let m = memo_for(&mut fits_memo, ctx, req, part);
                    !counts_fit(req, fits_memo[m].base)
                } {
                    // (Whether it reaches a try is asked only if the
                    // count needs it: `Check::Resolve`, at the next record.)
                    (true, FirstTry::default())
                } else if slurm && !deferred.is_empty() {
                    let f = first_try(
                        ctx,
                        map,
                        windows,
                        (&mut blocked, &mut avoid, &mut usable_bits, &mut resv_ex),
                        &mut parts,
                        &mut fits_memo,
                        job,
                        part,
                    );
                    (!f.may_start, f)
                } else {
                    (false, FirstTry::default())
                };
                if !wait && unsure {
                    tentative -= 1;
                    hold();
                    continue;
                }
                if wait {
                    // It cannot start now even on the map without the
                    // reservations of the jobs waiting before it, which
                    // only take nodes away: it waits with them. It reaches
                    // a try for certain where its first one has enough
                    // usable nodes even if each job waiting before it
                    // reserves as many more as it may take.
                    let certain = first.surely_tries(ctx, job, budget.pending_nodes);
                    if certain {
                        budget.tried += 1;
                    } else {
                        budget.unknown += 1;
                    }
                    budget.pending_nodes = budget
                        .pending_nodes
                        .saturating_add(plan_nodes_bound(ctx, job, part));
                    let counted = match (certain, first.usable) {
                        (true, _) => Counted::Yes,
                        (false, Some(_)) => Counted::Asked,
                        (false, None) => Counted::Unknown,
                    };
                    deferred.push_back(Todo::Plan(job, part, prio, counted));
                } else {
                    ready.extend(deferred.drain(..));
                    budget.drained();
                    ready.push_back(Todo::Plan(job, part, prio, Counted::Unknown));
                }
                continue;
            }
        };
        let (run_limit, limit, no_reserve) = plan_limits(ctx, job, part);
        let req =
            crate::select::request_now(ctx.cluster, &ctx.jobs[job.idx()], ctx.now, ctx.params);
        let need_nodes = req.min_nodes.max(1);
        let memo = memo_for(&mut fits_memo, ctx, &req, part);
        let rid = picks.request(&req);

        let mut start_res = now;
        // Usable partition nodes (schedulable, not excluded), before any mask.
        let pm = parts.of(ctx, part);
        usable_bits.copy_from_slice(&pm.sched);
        for &id in &req.exclude {
            bf_map::clear_bit(&mut usable_bits, id);
        }
        // Each retry starts later (or on other nodes); the cap only guards
        // against a planning loop.
        // The map does not change while one job is planned, and its tries
        // only move later: their windows slide over the slots.
        windows.restart();
        for _try in 0..64 {
            let end_time = start_res.max(now) + limit;
            map.blocked_in(windows, start_res, end_time, &mut blocked);
            avoid.stale();
            let pm = parts.of(ctx, part);
            let mut later =
                map.later_start_from(windows.first_after(), end_time, map_end, &pm.sched);
            // `job_test_resv(job, start_res, move_time)`: the nodes
            // reservations keep from the job are blocked too; when one took
            // nodes of its partition, the job is tried again just after the
            // first reservation end (`find_resv_end()` + 1), if sooner.
            if let Some(all) = ctx.resv {
                match crate::resv::job_test(
                    ctx,
                    all,
                    job,
                    part,
                    start_res.max(now),
                    limit,
                    &mut resv_ex,
                ) {
                    // "reservation defer": not planned in this pass.
                    crate::resv::Test::NotYet(_) | crate::resv::Test::Ended => break,
                    crate::resv::Test::Maint(until) => {
                        if until <= start_res {
                            break;
                        }
                        start_res = until;
                        continue;
                    }
                    crate::resv::Test::Usable { overlap } => {
                        for (i, &x) in resv_ex.iter().enumerate() {
                            if x {
                                bf_map::set_bit(&mut blocked, NodeId::from_idx(i));
                            }
                        }
                        if overlap {
                            if let Some(e) = crate::resv::resv_end_after(all, now, start_res, res_q)
                            {
                                let e = e + 1;
                                if e < horizon && later.is_none_or(|l| e < l) {
                                    later = Some(e);
                                }
                            }
                        }
                    }
                }
            }
            // Enough usable nodes, and the required ones among them?
            let usable = bf_map::count_unblocked(&usable_bits, &blocked);
            if usable < need_nodes || req.nodelist.iter().any(|&id| bf_map::has_bit(&blocked, id)) {
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
            // The job reaches `_try_sched()`: it counts against
            // `bf_max_job_test` (once).
            if !counted {
                counted = true;
                budget.tried += 1;
            }
            // The nodes (and GPUs) that could hold the job now by counts:
            // the partition's totals less what the blocked nodes hold.
            let fm = &fits_memo[memo];
            let mut counts = fm.base;
            for id in bf_map::ids_both(&fm.bits, &blocked) {
                if let Some(f) = fm.fits[id.idx()] {
                    counts.sub(f);
                }
            }
            // Can it start now (or at start_res) on those nodes? (Not
            // without the counts, which every selection needs.)
            if start_res <= now && counts_fit(&req, counts) {
                if let Ok(alloc) = crate::placement::place(
                    cache,
                    placement,
                    ctx.cluster,
                    ctx.params,
                    ctx.state,
                    &req,
                    part,
                    Some(avoid.get(&blocked)),
                ) {
                    let planned = Running::new(now + run_limit, Cow::Owned(alloc.clone()), words);
                    let whole = alloc.exclusive;
                    if ctx.start(job, part, alloc, true, prio).is_ok() {
                        started.push(job);
                        // `_bf_reserve_running()`: a whole-node job started
                        // here also holds its nodes in the backfill map, from
                        // the map's start to its planned end.
                        if whole {
                            let e = (now + run_limit) / res_q * res_q;
                            let nodes: Vec<NodeId> = planned.alloc.node_ids().collect();
                            map.reserve(map_begin, e.max(map_begin + res_q), &nodes);
                        }
                        plan_with(
                            ctx,
                            planned,
                            &mut fits_memo,
                            (sweep, &mut blocks, picks),
                            &mut ends,
                        );
                    }
                    break;
                }
            }
            // A `NoReserve` job that cannot start now makes no reservation:
            // its plan changes nothing (its tries only move later).
            if no_reserve {
                break;
            }
            // A plan needs only the nodes: the selections below make no
            // allocation (`try_select_nodes`, which succeeds exactly where a
            // full selection would).
            // The selection now and the walk are both functions of the
            // request and the blocked nodes: one key names them.
            let key = Key {
                req: rid,
                part,
                n: 0,
                blocked: &blocked,
            };
            let found = if start_res > now && counts_fit(&req, counts) {
                picks
                    .selection(ctx.state, key, || {
                        try_select_nodes(
                            cache,
                            ctx.cluster,
                            ctx.params,
                            ctx.state,
                            &req,
                            part,
                            Some(Skip::Bits(&blocked)),
                        )
                    })
                    .map(|a| (now, a))
            } else {
                None
            }
            .or_else(|| {
                // The walk is a function of the job's request, the blocked
                // nodes and the cutoff (the counts follow from them): what
                // one made before tells is read back.
                let cutoff = later.map_or(horizon, |l| l.min(horizon));
                if let Some(found) = picks.walk(ctx.state, key, cutoff) {
                    return found;
                }
                // The partition's nodes this try may use.
                let pm = parts.of(ctx, part);
                for ((u, p), b) in ub.iter_mut().zip(&pm.members).zip(&blocked) {
                    *u = p & !b;
                }
                let found = will_run_release(
                    ctx,
                    cache,
                    &req,
                    (part, &blocked, &ub),
                    &ends,
                    (&mut *sweep, &mut blocks, &mut *picks, rid),
                    &mut fits_memo[memo],
                    counts,
                    group,
                    phase,
                    cutoff,
                );
                picks.walked(key, cutoff, &found);
                found
            });
            let Some((t, nodes)) = found else {
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
            let s = start / res_q * res_q;
            let e = (start + limit) / res_q * res_q;
            on.fill(0);
            for &id in &nodes {
                bf_map::set_bit(&mut on, id);
            }
            // The nodes were chosen outside `blocked`, which holds every
            // node reserved in the try's window: only the slots after it
            // can hold them (`start_res` and `start` share their first slot,
            // as every boundary is a multiple of `bf_resolution`).
            debug_assert!(on.iter().zip(&blocked).all(|(o, b)| o & b == 0));
            debug_assert_eq!(
                map.overlaps_past(windows, s, e, &on),
                map.overlaps(s, e, &on)
            );
            if map.overlaps_past(windows, s, e, &on) {
                start_res = start;
                continue;
            }
            let s = s.max(map_begin);
            map.reserve(s, e.max(s + res_q), &nodes);
            break;
        }
    }
    *tentative_count += tentative;
    scratch.memos = fits_memo;
    started
}

/// The index in `memo` of the fits of `req`'s shape in `part`, computed on
/// the current state if absent.
fn memo_for(
    memo: &mut Memos,
    ctx: &PassCtx<'_>,
    req: &std::sync::Arc<gresim_model::job::JobRequest>,
    part: PartId,
) -> usize {
    if let Some(i) = memo
        .iter()
        .position(|m| m.part == part && crate::select::same_node_fit(&m.req, req))
    {
        return i;
    }
    let nnodes = ctx.cluster.nodes.len();
    // (A spare memo's memory is taken where there is one.)
    let spare = memo.spare.pop();
    let (mut fits, mut bits, mut changes) = match spare {
        Some(m) => (m.fits, m.bits, m.changes),
        None => Default::default(),
    };
    fits.clear();
    fits.resize(nnodes, None);
    bits.clear();
    bits.resize(bf_map::words_for(nnodes), 0);
    changes.reset();
    let mut base = Counts::default();
    for &id in &ctx.cluster.partition(part).nodes {
        fits[id.idx()] = node_fit(ctx, ctx.state.node(id), id, req);
        if let Some(x) = fits[id.idx()] {
            bf_map::set_bit(&mut bits, id);
            base.add(x);
        }
    }
    if memo.len() >= FITS_MEMO_MAX {
        let old = memo.list.remove(0);
        memo.spare.push(old);
    }
    memo.push(FitsMemo {
        req: std::sync::Arc::clone(req),
        part,
        fits,
        bits,
        base,
        changes,
    });
    memo.len() - 1
}

/// The blocked nodes as node selection takes them (a flag per node), brought
/// up to date from the bitmap only when a try gets as far as selecting nodes,
/// and then only where the bitmap changed since.
struct Avoid {
    flags: Vec<bool>,
    /// The nodes `flags` holds, as a bitmap.
    bits: Vec<u64>,
    fresh: bool,
}

impl Avoid {
    fn new(nodes: usize) -> Self {
        Avoid {
            flags: vec![false; nodes],
            bits: bf_map::bitmap(bf_map::words_for(nodes)),
            fresh: true,
        }
    }

    /// The bitmap changed.
    fn stale(&mut self) {
        self.fresh = false;
    }

    fn get(&mut self, blocked: &[u64]) -> &[bool] {
        if !self.fresh {
            for (w, (have, &want)) in self.bits.iter_mut().zip(blocked).enumerate() {
                for id in bf_map::word_ids(w, *have ^ want) {
                    self.flags[id.idx()] = bf_map::has_bit(blocked, id);
                }
                *have = want;
            }
            self.fresh = true;
        }
        &self.flags
    }
}

/// A partition's nodes as bitmaps: all of them, and the schedulable ones
/// (no node changes state during a pass).
struct PartMask {
    members: Vec<u64>,
    sched: Vec<u64>,
}

/// [`PartMask`] per partition, made when first needed.
struct PartMasks(Vec<Option<PartMask>>);

impl PartMasks {
    fn new(parts: usize) -> Self {
        PartMasks((0..parts).map(|_| None).collect())
    }

    fn of(&mut self, ctx: &PassCtx<'_>, part: PartId) -> &PartMask {
        self.0[part.idx()].get_or_insert_with(|| {
            let words = bf_map::words_for(ctx.cluster.nodes.len());
            let mut m = PartMask {
                members: bf_map::bitmap(words),
                sched: bf_map::bitmap(words),
            };
            for &id in &ctx.cluster.partition(part).nodes {
                bf_map::set_bit(&mut m.members, id);
                if ctx.state.node(id).schedulable() {
                    bf_map::set_bit(&mut m.sched, id);
                }
            }
            m
        })
    }
}

/// `_will_run_test()` after the job did not fit in the current state: release
/// the running jobs on usable nodes in planned-end order, a group at a time,
/// and test after each group. Returns the planned start (the end of the last
/// job released) and the nodes of the allocation then. A start after `cutoff` is as good
/// as none to the caller (it plans again from `later_start`, or makes no
/// reservation beyond the window), so the release stops there.
///
/// The plain pass (`backfill_plain.rs`) also cuts a group after 201 usable
/// ends without testing, and goes on with the same limit: the group is then
/// tested at its end all the same, and a cutoff check on the way fails only
/// where the one at the group's end would, so the cut changes nothing and is
/// not made here.
#[allow(clippy::too_many_arguments)]
fn will_run_release(
    ctx: &PassCtx<'_>,
    cache: &mut SelectCache,
    req: &gresim_model::job::JobRequest,
    (part, blocked, ub): (PartId, &[u64], &[u64]),
    ends: &[Running<'_>],
    (sweep, blocks, picks, rid): (&mut Sweep, &mut Option<EndBlocks>, &mut Picks, ReqId),
    memo: &mut FitsMemo,
    mut counts: Counts,
    group: Time,
    phase: Time,
    cutoff: Time,
) -> Option<(Time, Vec<NodeId>)> {
    let now = ctx.now;
    let cl = ctx.cluster;
    let usable = |id: NodeId| bf_map::has_bit(ub, id);
    // Changes of `tl` applied to the counts so far.
    let mut applied = 0usize;
    let mut anchor: Option<Time> = None;
    let mut window = group;
    let mut i = 0usize;
    loop {
        // The next group ends no earlier than its first usable job.
        let blocks = blocks.get_or_insert_with(|| EndBlocks::new(ends, ub.len()));
        let first = blocks.next_touching(ends, ub, i)?;
        if ends[first].end.max(now + 1) > cutoff {
            return None;
        }
        let a = *anchor.get_or_insert_with(|| {
            // Aligned on a multiple of the window in wall-clock time.
            let e = ends[first].end;
            if group > 0 {
                e + (group - (e + phase) % group)
            } else {
                e
            }
        });
        // The group takes the usable ends from `first` on, and ends after the
        // first of them whose next end lies past the limit (the ends between
        // are released too, and change nothing on usable nodes). Usable ends
        // before the last end within the limit are all taken, so the search
        // jumps there instead of stepping through them.
        let mut j = first;
        let (last, more) = loop {
            let limit = if group > 0 { a + window } else { ends[j].end };
            let q = blocks.past(j + 1, limit);
            if q == j + 1 {
                i = j + 1;
                break (ends[j].end, i < ends.len());
            }
            match blocks.next_touching(ends, ub, q - 1) {
                Some(k) => j = k,
                None => {
                    // No usable end from there: the group takes the last one
                    // before, and everything is released.
                    let k = blocks.prev_touching(ends, ub, j, q - 1);
                    i = ends.len();
                    break (ends[k].end, false);
                }
            }
        };
        // A job past its planned end is expected to end in the next second.
        let start = last.max(now + 1);
        if start > cutoff {
            return None;
        }
        // The ends released so far (`ends[..i]`) in the counts.
        sweep.extend_to(cl, ctx.state, ends, i);
        let tl = &mut memo.changes;
        tl.extend_to(cl, part, &memo.fits, sweep, i, |u, id| {
            node_fit(ctx, u, id, req)
        });
        let upto = tl.before(i);
        debug_assert_eq!(upto, tl.changes.partition_point(|c| c.0 < i));
        for &(_, id, old, new) in &tl.changes[applied..upto] {
            if usable(id) {
                if let Some(f) = old {
                    counts.sub(f);
                }
                if let Some(f) = new {
                    counts.add(f);
                }
            }
        }
        applied = upto;
        if group > 0 {
            loop {
                window *= 2;
                if ends.get(i).is_none_or(|n| n.end <= a + window) {
                    break;
                }
            }
        }
        if counts_fit(req, counts) {
            // (The state after the first `i` ends, made only if the record
            // does not have this selection.)
            let key = Key {
                req: rid,
                part,
                n: i as u64,
                blocked,
            };
            if let Some(a) = picks.selection(ctx.state, key, || {
                let fut = sweep.state_at(cl, ctx.state, ends, i);
                try_select_nodes(
                    cache,
                    cl,
                    ctx.params,
                    fut,
                    req,
                    part,
                    Some(Skip::Bits(blocked)),
                )
            }) {
                return Some((start, a));
            }
        }
        if !more {
            return None;
        }
    }
}

#[cfg(test)]
mod tests;
