//! Advance reservations in the passes: `job_test_resv()`
//! (`src/slurmctld/reservation.c`, Slurm 22.05) as the main pass
//! (`_get_req_features()` in node_scheduler.c) and backfill
//! (`_attempt_backfill()`) call it.
//!
//! A job with `--reservation` may use only its reservation's nodes, and
//! only once the reservation has begun (else `Reservation`); other
//! reservations that overlap its run take their nodes too, unless its own
//! is `MAINT` (or `OVERLAP`, against all but `MAINT` ones). A job without
//! one may not use the nodes of any reservation whose window meets its
//! run, `[when, when + time limit)`; a `MAINT` reservation that holds its
//! whole partition makes it wait with "ReqNodeNotAvail, Reserved for
//! maintenance". The passes ask only when the cluster has reservations
//! (`PassCtx::resv`), so a run without them tests nothing.

use gresim_model::job::Time;
use gresim_model::reservation::{Reservations, ResvFlags};
use gresim_model::{JobIdx, PartId};

use crate::PassCtx;

/// What `job_test_resv()` answers for one job and start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Test {
    /// It may start then, on nodes not flagged `excluded`; `overlap`: a
    /// reservation took nodes of its partition (Slurm's `resv_overlap`).
    Usable { overlap: bool },
    /// Its reservation begins at this time (`ESLURM_INVALID_TIME_VALUE`).
    NotYet(Time),
    /// Its reservation is gone, or ended before then (`ESLURM_RESERVATION_INVALID`).
    Ended,
    /// A `MAINT` reservation holds its whole partition until this time
    /// (`ESLURM_RESERVATION_MAINT`).
    Maint(Time),
}

/// `job_test_resv(job, when)` for a run of `dur` seconds: fills `excluded`
/// (a flag per node, every node of the cluster) with the nodes the job may
/// not use.
pub(crate) fn job_test(
    ctx: &PassCtx<'_>,
    all: &Reservations,
    job: JobIdx,
    part: PartId,
    when: Time,
    dur: Time,
    excluded: &mut [bool],
) -> Test {
    let now = ctx.now;
    excluded.fill(false);
    let end = when.saturating_add(dur);
    let spec = &ctx.specs[ctx.jobs[job.idx()].sub as usize];
    if let Some(name) = spec.reservation() {
        let Some(r) = all.get(name) else {
            return Test::Ended;
        };
        if !r.flags.has(ResvFlags::FLEX) {
            let (rs, re) = r.window(now);
            if when < rs {
                return Test::NotYet(rs);
            }
            if when > re {
                return Test::Ended;
            }
            excluded.fill(true);
            for n in &r.nodes {
                excluded[n.idx()] = false;
            }
        }
        // Overlapping reservations take their nodes (e.g. MAINT ones).
        let mut overlap = false;
        for r2 in &all.list {
            if r.flags.has(ResvFlags::MAINT)
                || (r.flags.has(ResvFlags::OVERLAP) && !r2.flags.has(ResvFlags::MAINT))
                || r2.name == r.name
                || !r2.overlaps(now, when, end)
            {
                continue;
            }
            for n in &r2.nodes {
                if !excluded[n.idx()] {
                    excluded[n.idx()] = true;
                    overlap = true;
                }
            }
        }
        return Test::Usable { overlap };
    }
    let mut overlap = false;
    let p = &ctx.cluster.partition(part).nodes;
    for r in &all.list {
        if !r.overlaps(now, when, end) {
            continue;
        }
        if r.flags.has(ResvFlags::MAINT) && p.iter().all(|n| r.holds(*n)) {
            return Test::Maint(r.window(now).1);
        }
        for n in &r.nodes {
            excluded[n.idx()] = true;
        }
        overlap |= p.iter().any(|n| r.holds(*n));
    }
    Test::Usable { overlap }
}

/// `find_resv_end(start, bf_resolution)`: the first end of a reservation at
/// or after `start`, rounded up to the backfill resolution.
pub(crate) fn resv_end_after(
    all: &Reservations,
    now: Time,
    start: Time,
    res: Time,
) -> Option<Time> {
    all.first_end_after(now, start)
        .map(|e| e.div_ceil(res.max(1)) * res.max(1))
}
