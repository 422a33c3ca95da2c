//! Preemption as the engine applies a policy's `Preempt` decisions: at
//! once, or after the grace time (`slurm_job_preempt()`), the job requeued
//! (PreemptMode=REQUEUE) or killed, ending PREEMPTED, its work since the
//! last checkpoint lost (docs/preemption.md). Which jobs to preempt is the
//! policy's choice.

use gresim_model::preempt::PreemptMode;
use gresim_model::{JobIdx, JobState, Reason};

use super::Engine;
use crate::event::{EventKind, Phase};
use crate::EngineError;

impl Engine<'_> {
    /// A policy's preemption: at once, or after the grace time (Slurm's
    /// `slurm_job_preempt()`: the job gets SIGTERM and its end time becomes
    /// now + GraceTime; the batch script is not signalled, so it runs on
    /// until then). A job already in its grace time is left alone.
    /// Returns whether the job's resources are free now.
    pub(super) fn apply_preempt(&mut self, p: gresim_policy::Preempt) -> Result<bool, EngineError> {
        let j = &self.jobs[p.job.idx()];
        if j.state != JobState::Running || j.runs.is_empty() {
            return Ok(false);
        }
        let run = j.runs.len() as u32 - 1;
        if self.live.signalled.get(&p.job) == Some(&run) {
            return Ok(false);
        }
        if p.grace == 0 {
            let completing = self.kill_time(p.job, self.params.preempt_completing);
            self.preempt_now(p.job, p.mode)?;
            return Ok(completing == 0);
        }
        self.live.signalled.insert(p.job, run);
        let end = self.now.saturating_add(p.grace);
        let planned = j.planned_end;
        if end < planned {
            // Backfill plans with the new end time.
            self.live.ends.remove(&(planned, p.job));
            self.live.ends.insert((end, p.job));
            self.jobs[p.job.idx()].planned_end = end;
        }
        self.queue.push(
            end,
            Phase::Admin,
            EventKind::PreemptKill {
                job: p.job,
                run,
                mode: p.mode,
            },
        );
        Ok(false)
    }

    /// Ends a preempted job's run: requeued (PreemptMode=REQUEUE and the job
    /// may be requeued) or killed, ending PREEMPTED. The work since its last
    /// checkpoint is lost either way. Its resources are free at once, and a
    /// requeued job's begin time is `cred_expire + 1` s later; with
    /// `preempt_completing` they stay taken that long, and the begin time
    /// counts from then (docs/preemption.md).
    pub(super) fn preempt_now(
        &mut self,
        job: JobIdx,
        mode: PreemptMode,
    ) -> Result<(), EngineError> {
        self.live.signalled.remove(&job);
        if self.jobs[job.idx()].state != JobState::Running {
            return Ok(());
        }
        let requeue = mode == PreemptMode::Requeue && self.jobs[job.idx()].requeue;
        let completing = self.kill_time(job, self.params.preempt_completing);
        if completing > 0 {
            // The kill takes `preempt_completing` s (and slurmd's wait for a
            // program that ignores SIGTERM): the run ends now, its resources
            // stay taken until then (on_completed), when a requeued job goes
            // back to the queue.
            self.account_failed_run(job);
            self.kill_running(job, JobState::Preempted, Reason::None, completing)?;
            if requeue {
                self.live.requeue_on_done.insert(job);
            }
            return Ok(());
        }
        if requeue {
            self.requeue(job, JobState::Preempted, 0)?;
        } else {
            self.finish_run(job, JobState::Preempted)?;
            self.terminate(job, JobState::Preempted, Reason::None);
        }
        self.mark_dirty();
        Ok(())
    }
}
