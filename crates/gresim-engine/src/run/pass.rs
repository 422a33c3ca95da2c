//! The scheduling cadence and the passes: when the main pass and backfill
//! run (`sched_interval`, `bf_interval` from the controller's phase, or at
//! once when asked; `Cadence`), and a pass itself: the `Policy` decides on
//! a `PassCtx`, and the engine applies what it returns (reasons,
//! preemptions, suspensions, starts, MIG repartitionings) in that order.

use gresim_model::job::Time;
use gresim_policy::PassCtx;

use super::Engine;
use crate::event::{EventKind, Phase};
use crate::EngineError;

/// When the next passes are due, and the phase of the event being handled.
pub(super) struct Cadence {
    /// The main pass queued, if any (an earlier request supersedes it).
    pub(super) main_at: Option<Time>,
    /// The backfill pass queued, if any.
    pub(super) bf_at: Option<Time>,
    /// Phase of the event being handled.
    pub(super) phase: Phase,
    /// The times of the main-pass events in the queue (each once): a
    /// request for a time that already has one queues no other. Only main
    /// passes are queued in their phase ([`Phase::MainPass`], or
    /// [`Phase::MainAfterBackfill`]: one phase per time), so the events of one such
    /// time come out one after the other with nothing else between them,
    /// each running the pass if `main_at` names its time then: the first
    /// one does whatever the later ones would, and they find `main_at`
    /// cleared (a request made during that pass queues its own event,
    /// the first having left the queue). So one event per time changes no
    /// decision; it saves the many superseded ones (every submission asks
    /// for the next `sched_interval` tick, then for a pass at once).
    pub(super) main_queued: Vec<Time>,
    /// The list a pass hands its starts back in (`PassCtx::started`),
    /// kept empty from pass to pass so that a pass allocates none.
    pub(super) started: Vec<gresim_policy::Start>,
}

impl Default for Cadence {
    fn default() -> Self {
        Cadence {
            main_at: None,
            bf_at: None,
            phase: Phase::Admin,
            main_queued: Vec::new(),
            started: Vec::new(),
        }
    }
}

impl Cadence {
    /// The main-pass event of time `t` has left the queue.
    #[inline]
    pub(super) fn main_dequeued(&mut self, t: Time) {
        if let Some(k) = self.main_queued.iter().position(|&x| x == t) {
            self.main_queued.swap_remove(k);
        }
    }
}

impl Engine<'_> {
    /// The first tick of a period-`iv` timer whose pass (in `phase`) has not
    /// yet run: at or after now, or after now once this second's pass is over.
    #[inline]
    pub(super) fn next_tick(&self, iv: u64, phase_of_pass: Phase) -> Time {
        let t = if self.cadence.phase > phase_of_pass {
            self.now + 1
        } else {
            self.now
        };
        if iv <= 1 {
            return t;
        }
        let phase = self.params.ctld_phase % iv;
        if t <= phase {
            return phase;
        }
        phase + (t - phase).div_ceil(iv) * iv
    }

    #[inline]
    pub(super) fn request_main(&mut self, at: Time) {
        if self.cadence.main_at.is_none_or(|t| at < t) {
            self.cadence.main_at = Some(at);
            if !self.cadence.main_queued.contains(&at) {
                self.cadence.main_queued.push(at);
                let phase = self.main_phase(at);
                self.queue.push(at, phase, EventKind::MainPass);
            }
        }
    }

    /// Where in second `at` the main pass runs: first, or just after
    /// backfill (`SchedParams::main_after_backfill`, until
    /// `SchedParams::main_after_ends_from`).
    #[inline]
    pub(super) fn main_phase(&self, at: Time) -> Phase {
        if self.params.main_after_backfill
            && self.params.main_after_ends_from.is_none_or(|f| at < f)
        {
            Phase::MainAfterBackfill
        } else {
            Phase::MainPass
        }
    }

    #[inline]
    pub(super) fn request_backfill(&mut self, at: Time) {
        if self.policy.has_backfill() && self.cadence.bf_at.is_none_or(|t| at < t) {
            self.cadence.bf_at = Some(at);
            self.queue
                .push(at, Phase::Backfill, EventKind::BackfillPass);
        }
    }

    /// Something changed that a pass could act on: run the periodic passes at their next ticks.
    #[inline]
    pub(super) fn mark_dirty(&mut self) {
        let m = self.next_tick(self.params.sched_interval, self.main_phase(self.now));
        self.request_main(m);
        let b = self.next_tick(self.params.bf_interval, Phase::Backfill);
        self.request_backfill(b);
    }

    pub(super) fn pass(&mut self, backfill: bool) -> Result<(), EngineError> {
        if self.policy.queued() == 0 {
            return Ok(());
        }
        let mut ctx = PassCtx {
            now: self.now,
            cluster: &self.cluster,
            params: &self.params,
            state: &mut self.state,
            jobs: &self.jobs,
            specs: &self.specs,
            array_running: &self.array_running,
            running: &self.live.ends,
            completing: &self.live.completing,
            started: std::mem::take(&mut self.cadence.started),
            reasons: Vec::new(),
            preempted: Vec::new(),
            suspended: Vec::new(),
            acct: self.acct.usage.as_mut(),
            resv: (!self.resv.live.is_empty()).then_some(&self.resv.live),
        };
        if backfill {
            self.policy.backfill_pass(&mut ctx);
        } else {
            self.policy.main_pass(&mut ctx);
        }
        let PassCtx {
            mut started,
            reasons,
            preempted,
            suspended,
            ..
        } = ctx;
        if let Some(msg) = self.policy.take_failure() {
            return Err(EngineError::Policy {
                policy: self.policy.name().to_string(),
                msg,
            });
        }
        for (job, r, desc) in reasons {
            self.set_reason(job, r, desc);
        }
        let mut freed = false;
        for p in preempted {
            freed |= self.apply_preempt(p)?;
        }
        for s in suspended {
            self.apply_suspend(s);
        }
        for s in started.drain(..) {
            let job = s.job;
            self.start_job(s)?;
            if self.gang.is_some() {
                self.gang_start(job);
            }
        }
        self.cadence.started = started;
        if freed {
            // The end of a preempted job sets off a pass (Slurm's schedule()
            // on the job's completion), which starts the preemptor.
            self.request_main(self.now);
        }
        if !backfill
            && self.params.preempt.enabled()
            && self.policy.queued() > 0
            && self.running > 0
        {
            // slurmctld's main loop runs every sched_interval whatever
            // changed: a job may become preemptable only by running past
            // its PreemptExemptTime, which no event marks. (Only while
            // something runs: nothing else can change then.)
            self.request_main(self.now + self.params.sched_interval.max(1));
        }
        self.apply_mig_reconfigs()?;
        if !backfill {
            // What the main pass left behind, backfill may still start.
            let b = self.next_tick(self.params.bf_interval, Phase::Backfill);
            self.request_backfill(b);
        }
        Ok(())
    }
}
