//! Preemption as the engine applies a policy's `Preempt` decisions: at
//! once, or after the grace time (`slurm_job_preempt()`: by the next
//! `Preempt` decision or time-limit check that finds it over, as Slurm's
//! `_job_check_grace_internal()`; `GraceKill`), the job requeued
//! (PreemptMode=REQUEUE) or killed, ending PREEMPTED, its work since the
//! last checkpoint lost (docs/preemption.md); and its `Suspend` decisions
//! (SUSPEND,GANG): the suspended job lends the cores a higher-tier job
//! starts on, stops running, and takes them back and runs on when that job
//! ends (`gs_job_fini()` in src/slurmctld/gang.c resumes it at once). Which
//! jobs to preempt or suspend is the policy's choice.

use gresim_model::preempt::PreemptMode;
use gresim_model::{Allocation, CoreSet, JobIdx, JobState, NodeId, Reason, Time};
use gresim_policy::GraceKill;

use super::Engine;
use crate::event::{EventKind, Phase};
use crate::EngineError;

/// A preempted job in its grace time (`preempt_time` set in Slurm).
#[derive(Debug, Clone, Copy)]
pub(super) struct Signalled {
    /// The run that was signalled.
    pub(super) run: u32,
    /// The end of its grace time: `MIN(end_time, now + GraceTime)`, so no
    /// later than the end of its time limit.
    pub(super) end: Time,
    /// Its PreemptMode, which whatever kills it applies.
    pub(super) mode: PreemptMode,
}

/// Cores a gang-suspended job lent to the job that runs on them.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lend {
    /// The suspended job.
    pub(super) lender: JobIdx,
    /// The higher-tier job holding the cores.
    pub(super) borrower: JobIdx,
    pub(super) node: NodeId,
    pub(super) cores: CoreSet,
}

impl Engine<'_> {
    /// A policy's gang suspension: the cores are free for `s.by` already
    /// (`PassCtx::suspend`); the job stops running (its run time and time
    /// limit stand still) unless it is suspended already.
    pub(super) fn apply_suspend(&mut self, s: gresim_policy::Suspend) {
        for &(node, cores) in &s.cores {
            self.live.lent.push(Lend {
                lender: s.job,
                borrower: s.by,
                node,
                cores,
            });
        }
        self.suspend_job(s.job);
    }

    /// Gives back what the ending run of `job` holds: its allocation less
    /// the cores it lent (the borrower holds those); then the cores it
    /// borrowed go back to their lenders, and a lender that has all its
    /// cores back resumes.
    pub(super) fn release_run(
        &mut self,
        job: JobIdx,
        alloc: &Allocation,
    ) -> Result<(), EngineError> {
        let internal = |e: gresim_model::state::AllocError| EngineError::Internal(e.to_string());
        let stacked = self.gang.is_some();
        if self.live.lent.is_empty() && !stacked {
            return self.state.release(&self.cluster, alloc).map_err(internal);
        }
        let lends = self.live.lent.iter().any(|l| l.lender == job);
        if lends || stacked {
            let mut a = alloc.clone();
            let tpc = |n: NodeId| u32::from(self.cluster.node(n).threads_per_core.max(1));
            for na in a.nodes.iter_mut() {
                let mut gone = CoreSet::EMPTY;
                for l in self
                    .live
                    .lent
                    .iter()
                    .filter(|l| l.lender == job && l.node == na.node)
                {
                    gone.union_with(&l.cores);
                }
                if stacked {
                    // Gang time-slicing: a core another job still holds
                    // stays allocated (each core counted once).
                    gone.union_with(&self.held_by_others(job, na.node));
                }
                gone.intersect_with(&na.cores);
                na.cores.difference_with(&gone);
                na.cpus = na.cpus.saturating_sub(gone.count() * tpc(na.node));
            }
            if lends {
                self.live.lent.retain(|l| l.lender != job);
            }
            self.state.release(&self.cluster, &a).map_err(internal)?;
        } else {
            self.state.release(&self.cluster, alloc).map_err(internal)?;
        }
        if self.live.lent.is_empty() {
            return Ok(());
        }
        let mut back: Vec<JobIdx> = Vec::new();
        let mut k = 0;
        while k < self.live.lent.len() {
            let l = self.live.lent[k];
            if l.borrower != job {
                k += 1;
                continue;
            }
            self.live.lent.swap_remove(k);
            self.state
                .reclaim_cores(&self.cluster, l.node, &l.cores)
                .map_err(internal)?;
            back.push(l.lender);
        }
        back.sort_unstable();
        back.dedup();
        for lender in back {
            if !self.live.lent.iter().any(|l| l.lender == lender) {
                self.resume_job(lender);
            }
        }
        Ok(())
    }

    /// The cores of `node` that jobs other than `job` still hold (running,
    /// suspended or COMPLETING), less those they lent: with gang
    /// time-slicing several jobs hold the same cores.
    fn held_by_others(&self, job: JobIdx, node: NodeId) -> CoreSet {
        let mut held = CoreSet::EMPTY;
        let others = self.live.node_jobs[node.idx()]
            .iter()
            .copied()
            .chain(self.live.completing.iter().map(|(j, _)| *j))
            .filter(|&j| j != job);
        for j in others {
            let Some(run) = self.jobs[j.idx()].runs.last() else {
                continue;
            };
            if let Some(na) = run.alloc.nodes.iter().find(|na| na.node == node) {
                let mut c = na.cores;
                for l in self
                    .live
                    .lent
                    .iter()
                    .filter(|l| l.lender == j && l.node == node)
                {
                    c.difference_with(&l.cores);
                }
                held.union_with(&c);
            }
        }
        held
    }

    /// A policy's preemption: at once, or after the grace time (Slurm's
    /// `slurm_job_preempt()`: the job gets SIGTERM and its end time becomes
    /// now + GraceTime; the batch script is not signalled, so it runs on
    /// until then). A job already in its grace time is killed if that time
    /// is over ([`GraceKill::Checked`]: `_job_check_grace_internal()` finds
    /// `now >= end_time`), and left alone otherwise.
    /// Returns whether the job's resources are free now.
    pub(super) fn apply_preempt(&mut self, p: gresim_policy::Preempt) -> Result<bool, EngineError> {
        let j = &self.jobs[p.job.idx()];
        if j.state != JobState::Running || j.runs.is_empty() {
            return Ok(false);
        }
        let run = j.runs.len() as u32 - 1;
        if let Some(&s) = self.live.signalled.get(&p.job) {
            if s.run == run {
                if self.params.grace_kill == GraceKill::Checked && self.now >= s.end {
                    let completing = self.kill_time(p.job, self.params.preempt_completing);
                    self.preempt_now(p.job, p.mode)?;
                    return Ok(completing == 0);
                }
                return Ok(false);
            }
        }
        if p.grace == 0 {
            let completing = self.kill_time(p.job, self.params.preempt_completing);
            self.preempt_now(p.job, p.mode)?;
            return Ok(completing == 0);
        }
        // `_job_check_grace_internal()`: `end_time = MIN(end_time, now +
        // GraceTime)`: a time limit that ends first ends the grace time
        // (and the check that kills the job then preempts it: on_run_end).
        let planned = j.planned_end;
        let end = self.now.saturating_add(p.grace).min(planned);
        self.live.signalled.insert(
            p.job,
            Signalled {
                run,
                end,
                mode: p.mode,
            },
        );
        if end < planned {
            // Backfill plans with the new end time.
            self.live.ends.remove(&(planned, p.job));
            self.live.ends.insert((end, p.job));
            self.jobs[p.job.idx()].planned_end = end;
        }
        // Slurm: the time-limit check at or after the end kills it, unless
        // a preemption attempt has done so first (apply_preempt again).
        let kill_at = match self.params.grace_kill {
            GraceKill::Checked => self.limit_check_at(end),
            GraceKill::AtEnd => end,
        };
        self.queue.push(
            kill_at,
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
