//! Backfill in the manner of sched/backfill (`_attempt_backfill()`).
//!
//! Records are visited in queue order, up to `bf_max_job_test`. Each job is
//! planned with its time limit (never its real run time). If it fits now on
//! nodes that no earlier job has reserved for any part of `[now, now + limit)`,
//! it starts. Otherwise its earliest start is found by releasing running jobs
//! in the order of their planned ends (start + limit), and the nodes it would
//! get then are reserved, as whole nodes, for `[start, start + limit)`, so no
//! later job can delay it.

use std::borrow::Cow;
use std::collections::BTreeSet;

use gresim_model::job::Time;
use gresim_model::{Allocation, ClusterState, JobIdx, NodeId, PartId};

use crate::fifo::partition_limit_reason;
use crate::queue::QueueKey;
use crate::select::try_select;
use crate::PassCtx;

/// Nodes held for a pending job over `[start, end)`.
#[derive(Debug, Clone)]
struct Reservation {
    start: Time,
    end: Time,
    nodes: Vec<NodeId>,
}

/// The planning time limit of a job in a partition: its limit, capped by the
/// partition's MaxTime; unlimited plans as MaxTime, or a year.
fn plan_limit(ctx: &PassCtx<'_>, job: JobIdx, part: PartId) -> Time {
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

/// Marks the nodes reserved over any part of `[a, b)`.
fn blocked(res: &[Reservation], a: Time, b: Time, n: usize) -> Vec<bool> {
    let mut m = vec![false; n];
    for r in res {
        // A job ending exactly when a reservation begins still conflicts with
        // it (the recordings show a job held back by a reservation starting
        // at its planned end).
        if r.start <= b && a < r.end {
            for id in &r.nodes {
                m[id.idx()] = true;
            }
        }
    }
    m
}

/// Most request shapes whose fit counts one pass remembers.
const FITS_MEMO_MAX: usize = 16;

/// `node_may_fit` of every node of `part` for requests of `req`'s shape.
struct FitsMemo {
    req: std::sync::Arc<gresim_model::job::JobRequest>,
    part: PartId,
    fits: Vec<Option<u32>>,
}

/// The distinct times of `ends` (sorted) and `res` (sorted), in order, into `out`.
fn merge_dedup(ends: &[(Time, Cow<'_, Allocation>)], res: &[Time], out: &mut Vec<Time>) {
    out.clear();
    let (mut i, mut k) = (0, 0);
    while i < ends.len() || k < res.len() {
        let t = match (ends.get(i), res.get(k)) {
            (Some(e), Some(&r)) if e.0 <= r => {
                i += 1;
                e.0
            }
            (_, Some(&r)) => {
                k += 1;
                r
            }
            (Some(e), None) => {
                i += 1;
                e.0
            }
            (None, None) => break,
        };
        if out.last() != Some(&t) {
            out.push(t);
        }
    }
}

/// One backfill pass over `queue`. Returns the jobs it started.
pub fn backfill_pass(
    queue: &BTreeSet<QueueKey>,
    ctx: &mut PassCtx<'_>,
    placement: crate::placement::Placement,
) -> Vec<JobIdx> {
    let now = ctx.now;
    let res_q = ctx.params.bf_resolution.max(1);
    let horizon = now + ctx.params.bf_window;
    let nnodes = ctx.cluster.nodes.len();
    let mut reservations: Vec<Reservation> = Vec::new();
    let mut started: Vec<JobIdx> = Vec::new();
    let mut tested = 0u32;
    // Planned ends of running jobs, in order; a job past its limit is planned
    // to end in the next second. The allocations are borrowed from the job
    // table; only jobs this pass starts own theirs.
    let jobs: &[gresim_model::job::Job] = ctx.jobs;
    let mut ends: Vec<(Time, Cow<'_, Allocation>)> = ctx
        .running
        .iter()
        .filter_map(|&(e, j)| {
            let run = jobs[j.idx()].runs.last()?;
            Some((e.max(now + 1), Cow::Borrowed(&run.alloc)))
        })
        .collect();
    // What `node_may_fit` says of each partition node in the current state,
    // by request shape and partition; valid until this pass starts a job.
    let mut fits_memo: Vec<FitsMemo> = Vec::new();
    let mut times: Vec<Time> = Vec::new();
    let mut res_ends: Vec<Time> = Vec::new();

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
        tested += 1;
        let limit = plan_limit(ctx, job, part);
        let req = std::sync::Arc::clone(&ctx.jobs[job.idx()].request);

        // Can it start now without touching a reservation?
        let avoid = blocked(&reservations, now, now + limit, nnodes);
        if let Ok(alloc) = crate::placement::place(
            placement,
            ctx.cluster,
            ctx.params,
            ctx.state,
            &req,
            part,
            Some(&avoid),
        ) {
            let planned = (now + limit, Cow::Owned(alloc.clone()));
            if ctx.start(job, part, alloc, true).is_ok() {
                started.push(job);
                fits_memo.clear();
                // Later jobs plan with this one's end too.
                let at = ends.partition_point(|e| e.0 <= planned.0);
                ends.insert(at, planned);
            }
            continue;
        }

        // When could it start? Release running jobs in planned-end order and
        // try at each end, and after each reservation that blocked it.
        let mut future: ClusterState = ctx.state.clone();
        // Every planned end and reservation end, in order: `ends` is sorted
        // already, so only the reservation ends need sorting before a merge.
        res_ends.clear();
        res_ends.extend(reservations.iter().map(|r| r.end));
        res_ends.sort_unstable();
        merge_dedup(&ends, &res_ends, &mut times);
        let mut next_end = 0usize;
        let mut found: Option<(Time, Allocation)> = None;
        // Which partition nodes could hold the job by counts alone; kept up
        // to date as jobs are released, so times when it cannot fit anyway
        // cost no node selection.
        let pnodes = &ctx.cluster.partition(part).nodes;
        let fits_of = |st: &ClusterState, id: gresim_model::NodeId| {
            crate::select::node_may_fit(ctx.cluster, ctx.params, st.node(id), id, &req)
        };
        // Reservations overlapping the window [t, t + limit] (a reservation
        // beginning at the window's end counts): one enters when t reaches
        // `start - limit` and leaves when t reaches its end. `blk[n]` counts
        // those covering node n; `avoid` mirrors `blk[n] > 0`.
        let mut enters: Vec<(Time, usize)> = reservations
            .iter()
            .enumerate()
            .map(|(i, r)| (r.start.saturating_sub(limit), i))
            .collect();
        enters.sort_unstable();
        let mut leaves: Vec<(Time, usize)> = reservations
            .iter()
            .enumerate()
            .map(|(i, r)| (r.end, i))
            .collect();
        leaves.sort_unstable();
        let (mut next_enter, mut next_leave) = (0usize, 0usize);
        let mut active = vec![false; reservations.len()];
        let mut blk = vec![0u32; nnodes];
        let mut avoid = vec![false; nnodes];
        // Nodes that could hold the job by counts alone and are not reserved
        // over the window: kept up to date as jobs are released and
        // reservations enter or leave the window, so only times when the job
        // could fit run the node selection.
        let memo = match fits_memo
            .iter()
            .position(|m| m.part == part && m.req.same_shape(&req))
        {
            Some(i) => i,
            None => {
                let mut f: Vec<Option<u32>> = vec![None; nnodes];
                for &id in pnodes {
                    f[id.idx()] = fits_of(&future, id);
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
        let mut fits: Vec<Option<u32>> = fits_memo[memo].fits.clone();
        let (mut n_fit, mut g_fit) = (0u32, 0u32);
        let count = |f: Option<u32>, n: &mut u32, g: &mut u32, add: bool| {
            if let Some(x) = f {
                if add {
                    *n += 1;
                    *g = g.saturating_add(x);
                } else {
                    *n -= 1;
                    *g = g.saturating_sub(x);
                }
            }
        };
        for &id in pnodes {
            count(fits[id.idx()], &mut n_fit, &mut g_fit, true);
        }
        let need_nodes = req.min_nodes.max(1);
        let check = req.nodelist.is_empty();
        for &t in &times {
            if t > horizon {
                break;
            }
            // Reservations leaving, then entering, the window at t.
            while next_leave < leaves.len() && leaves[next_leave].0 <= t {
                let i = leaves[next_leave].1;
                if active[i] {
                    active[i] = false;
                    for id in &reservations[i].nodes {
                        let n = id.idx();
                        blk[n] -= 1;
                        if blk[n] == 0 {
                            avoid[n] = false;
                            if ctx.cluster.in_partition(part, *id) {
                                count(fits[n], &mut n_fit, &mut g_fit, true);
                            }
                        }
                    }
                }
                next_leave += 1;
            }
            while next_enter < enters.len() && enters[next_enter].0 <= t {
                let i = enters[next_enter].1;
                if reservations[i].end > t {
                    active[i] = true;
                    for id in &reservations[i].nodes {
                        let n = id.idx();
                        if blk[n] == 0 {
                            avoid[n] = true;
                            if ctx.cluster.in_partition(part, *id) {
                                count(fits[n], &mut n_fit, &mut g_fit, false);
                            }
                        }
                        blk[n] += 1;
                    }
                }
                next_enter += 1;
            }
            while next_end < ends.len() && ends[next_end].0 <= t {
                let _ = future.release(ctx.cluster, &ends[next_end].1);
                for na in &ends[next_end].1.nodes {
                    if ctx.cluster.in_partition(part, na.node) {
                        let i = na.node.idx();
                        let old = fits[i];
                        fits[i] = fits_of(&future, na.node);
                        if blk[i] == 0 {
                            count(old, &mut n_fit, &mut g_fit, false);
                            count(fits[i], &mut n_fit, &mut g_fit, true);
                        }
                    }
                }
                next_end += 1;
            }
            if check && (n_fit < need_nodes || req.gpus_per_job.is_some_and(|pj| g_fit < pj.count))
            {
                continue;
            }
            debug_assert_eq!(avoid, blocked(&reservations, t, t + limit, nnodes));
            if let Some(a) = try_select(ctx.cluster, ctx.params, &future, &req, part, Some(&avoid))
            {
                found = Some((t, a));
                break;
            }
        }
        if let Some((t, alloc)) = found {
            let start = t / res_q * res_q;
            let end = ((t + limit) / res_q * res_q).max(start + res_q);
            reservations.push(Reservation {
                start,
                end,
                nodes: alloc.node_ids().collect(),
            });
        }
    }
    started
}
