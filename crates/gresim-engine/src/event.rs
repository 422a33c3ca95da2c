//! The event queue.
//!
//! Events are ordered by `(time, phase, seq)`: time first; within one second,
//! by [`Phase`], which models the order in which slurmctld handles what
//! happens in the same second; and then by insertion sequence, so events of
//! the same time and phase run first in, first out. Nothing else (no hash
//! order, no clock) decides the order, so a run is a pure function of its input.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use gresim_model::job::Time;
use gresim_model::JobIdx;

/// Order of events within one second.
///
/// The order follows what recordings of real Slurm show when its loops run
/// every second: a cancel is seen by the main pass of its second, which runs
/// first otherwise, then submissions and admin actions arrive, then backfill
/// runs; jobs end later in the second
/// (their scripts start a fraction of a second after the start second). So a
/// job submitted in second T is first seen by backfill in T and by the main
/// pass in T + 1, and resources freed in T are used in T + 1 unless the end
/// itself triggers a pass (`pass_on_end`). See docs/slurm-fidelity.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// `scancel`: slurmctld handles the RPC at once, and the recordings show
    /// the main pass of the same second already seeing the job COMPLETING.
    Cancel = 0,
    /// The main scheduling pass.
    MainPass = 1,
    /// Jobs that a main pass started end on their own, once that pass runs
    /// after the ends of the jobs backfill started
    /// (`SchedParams::main_after_ends_from`): the main pass of second T then
    /// stands for Slurm's main pass late in T − 1, and the jobs it starts run
    /// whole seconds from then, so they end after the main pass of their
    /// last second and before its submissions and backfill pass.
    MainStartedEnd = 2,
    /// Submissions. The conformance harness submits the jobs due in a
    /// second before it runs the actions due then.
    Submit = 3,
    /// Timed admin actions on jobs (hold, release, requeue) and nodes
    /// going DOWN or DRAIN.
    Admin = 4,
    /// Jobs whose begin time arrives.
    Eligible = 5,
    /// The backfill pass.
    Backfill = 6,
    /// The main pass where it runs just after backfill, before the jobs
    /// backfill started end (`SchedParams::main_after_backfill`, until
    /// `SchedParams::main_after_ends_from`).
    MainAfterBackfill = 7,
    /// Jobs end (completion, time-limit kill).
    JobEnd = 8,
    /// Nodes return to service (RESUME, UP).
    NodeReturn = 9,
}

/// What happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Run number `run` of `job` ends on its own (completion or time limit).
    RunEnd {
        job: JobIdx,
        run: u32,
    },
    /// The timed action with this index.
    Action(u32),
    /// The next submission from the workload.
    Submit,
    /// `scontrol requeue` of run `run` of `job` (see `JobSpec::requeue_after_start`).
    Requeue {
        job: JobIdx,
        run: u32,
    },
    /// `job`'s begin time has come.
    Begin {
        job: JobIdx,
    },
    /// The next action of the failure model (see `FailureSource`).
    Failure,
    MainPass,
    BackfillPass,
    /// The repartitioning of dynamic MIG GPU `gpu` completes (docs/mig.md).
    MigReady {
        gpu: u32,
    },
    /// A job killed while running leaves the COMPLETING state
    /// (`SchedParams::kill_completing`).
    /// The accounting tick (`PriorityCalcPeriod`).
    AcctTick,
    /// A reservation's window opens or closes: the passes look again.
    ResvEdge,
    /// `job_resv_check()`, with the time-limit check: `PURGE_COMP`
    /// reservations that have been idle long enough end.
    ResvPurgeCheck,
    /// The time-limit check after the end of the grace time of run `run`
    /// of a preempted `job` (or that end itself, with `GraceKill::AtEnd`):
    /// unless a preemption attempt has killed it, it is killed and
    /// cancelled or requeued as `mode` says.
    PreemptKill {
        job: JobIdx,
        run: u32,
        mode: gresim_model::preempt::PreemptMode,
    },
    Completed {
        job: JobIdx,
    },
    /// A job's `--switches` wait is over (topology/tree): a pass may now
    /// start it over more leaf switches, though nothing else changed.
    SwitchWaitOver,
    /// The gang scheduler's timeslicer wakes up (`SchedulerTimeSlice`;
    /// only while a time-sliced job waits for its turn).
    GangTick,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: Time,
    pub phase: Phase,
    pub seq: u64,
    pub kind: EventKind,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.time, other.phase, other.seq).cmp(&(self.time, self.phase, self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A min-queue of events with FIFO order among equals.
///
/// Two binary heaps, one order: the passes and the next submission, which
/// are few and due soon, are kept apart from the rest (mostly job ends, one
/// per running job, due later), and [`EventQueue::pop`] takes the earlier
/// of the two heads. The events come out exactly as from one heap (the
/// order is `Event`'s, and every event has its own sequence number;
/// `tests.rs` checks both on random pushes and pops), but the several
/// pass and submission events of each job are pushed into and popped out
/// of a heap of a handful of events instead of one of thousands.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// Passes and submissions.
    near: BinaryHeap<Event>,
    /// Everything else.
    far: BinaryHeap<Event>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, phase: Phase, kind: EventKind) {
        self.seq += 1;
        let e = Event {
            time,
            phase,
            seq: self.seq,
            kind,
        };
        match kind {
            EventKind::MainPass | EventKind::BackfillPass | EventKind::Submit => self.near.push(e),
            _ => self.far.push(e),
        }
    }

    /// The heap whose head comes first (`None`: both empty).
    #[inline]
    fn first(&mut self) -> Option<&mut BinaryHeap<Event>> {
        match (self.near.peek(), self.far.peek()) {
            // Reversed order: the greater is the earlier.
            (Some(n), Some(f)) if f > n => Some(&mut self.far),
            (Some(_), _) => Some(&mut self.near),
            (None, Some(_)) => Some(&mut self.far),
            (None, None) => None,
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.first()?.pop()
    }
    pub fn peek(&self) -> Option<&Event> {
        match (self.near.peek(), self.far.peek()) {
            (Some(n), Some(f)) => Some(if f > n { f } else { n }),
            (n, f) => n.or(f),
        }
    }
    pub fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }
    pub fn is_empty(&self) -> bool {
        self.near.is_empty() && self.far.is_empty()
    }
}

#[cfg(test)]
mod tests;
