//! The job lifecycle: a start (job ids of array tasks, the run's end and
//! its time-limit kill, the planned end backfill sees), the end of a run
//! (on its own, by the time-limit check, killed and COMPLETING), requeue,
//! suspend and resume, and a job's end for good (`terminate`), with the
//! state running and COMPLETING jobs carry beyond their records (`Live`).

use std::collections::{BTreeMap, BTreeSet};

use gresim_model::job::{Run, Time};
use gresim_model::{Allocation, JobId, JobIdx, JobState, Reason};
use gresim_policy::Start;

use super::{Engine, UNLIMITED_PLAN};
use crate::event::{EventKind, Phase};
use crate::EngineError;

/// What the engine keeps about running and COMPLETING jobs beyond their
/// job records.
pub(super) struct Live {
    /// Per node, the jobs running on it.
    pub(super) node_jobs: Vec<Vec<JobIdx>>,
    /// Running jobs by planned end (start + time limit), for backfill.
    pub(super) ends: BTreeSet<(Time, JobIdx)>,
    /// Jobs killed while running that are still COMPLETING, with what they
    /// hold beyond their own allocation (the rest of their nodes).
    pub(super) completing: Vec<(JobIdx, Allocation)>,
    /// Preempted jobs in their grace time: the run that was signalled, the
    /// end of its grace time and its PreemptMode.
    pub(super) signalled: BTreeMap<JobIdx, super::preempt::Signalled>,
    /// Running jobs that were suspended in their current run (see
    /// [`Engine::suspend_job`]).
    pub(super) suspended: BTreeMap<JobIdx, Suspension>,
    /// The time of the run-end event in force, for running jobs whose end
    /// moved (resume, a new time limit, a signal): the events queued before
    /// are stale.
    pub(super) moved_ends: BTreeMap<JobIdx, Time>,
    /// Jobs killed by `requeuehold` that are COMPLETING: whether they go to
    /// SPECIAL_EXIT rather than a user hold once the kill is done.
    pub(super) requeue_held: BTreeMap<JobIdx, bool>,
    /// Jobs to requeue when their kill is done: preempted ones
    /// (`SchedParams::preempt_completing`), and requeued ones whose program
    /// ignores SIGTERM ([`Engine::requeue_killed`]).
    pub(super) requeue_on_done: BTreeSet<JobIdx>,
    /// Cores gang-suspended jobs lent to the higher-tier jobs that run on
    /// them (SUSPEND,GANG; `super::preempt`); empty without suspensions.
    pub(super) lent: Vec<super::preempt::Lend>,
}

impl Live {
    pub(super) fn new(nodes: usize) -> Self {
        Live {
            node_jobs: vec![Vec::new(); nodes],
            ends: BTreeSet::new(),
            completing: Vec::new(),
            signalled: BTreeMap::new(),
            suspended: BTreeMap::new(),
            moved_ends: BTreeMap::new(),
            requeue_held: BTreeMap::new(),
            requeue_on_done: BTreeSet::new(),
            lent: Vec::new(),
        }
    }
}

/// A running job's suspensions in its current run.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Suspension {
    /// Suspended since, while it is.
    since: Option<Time>,
    /// Seconds suspended before `since`.
    total: u64,
}

impl Engine<'_> {
    /// Starts a job as the policy placed it: its job id (array tasks),
    /// its run, the events of its end, what accounting counts.
    pub(super) fn start_job(&mut self, s: Start) -> Result<(), EngineError> {
        let Start {
            job,
            partition,
            alloc,
            by_backfill,
            priority,
        } = s;
        let sub = self.jobs[job.idx()].sub as usize;
        // Array tasks take a fresh job id when they start, except the last
        // unstarted one, which keeps the array's id.
        if self.jobs[job.idx()].job_id.is_none() {
            let ss = &self.subs[sub];
            let id = if ss.unstarted > 1 {
                let id = JobId(self.next_job_id);
                self.next_job_id += 1;
                id
            } else {
                self.jobs[job.idx()].array_job_id.unwrap_or(JobId(0))
            };
            self.jobs[job.idx()].job_id = Some(id);
        }
        if self.jobs[job.idx()].runs.is_empty() {
            self.subs[sub].unstarted -= 1;
        }
        self.subs[sub].started_any = true;
        self.subs[sub].running += 1;
        self.array_running[sub] += 1;
        self.running += 1;
        self.pending -= 1;
        for n in alloc.node_ids() {
            self.live.node_jobs[n.idx()].push(job);
        }
        let limit = {
            let j = &self.jobs[job.idx()];
            gresim_policy::time_limit_in(&self.cluster, j, partition)
        };
        let oom = self.runs_out_of_gpu_memory(job, &alloc);
        let work = self.run_secs(job);
        let work = crate::runtime::run_time_for(&self.cluster, &self.specs[sub], &alloc, work);
        let now = self.now;
        let j = &mut self.jobs[job.idx()];
        j.state = JobState::Running;
        j.reason = Reason::None;
        j.reason_desc = None;
        let run = j.runs.len() as u32;
        self.note_priority(job, priority);
        let j = &mut self.jobs[job.idx()];
        j.runs.push(Run {
            start: now,
            end: None,
            state: JobState::Running,
            partition,
            alloc,
            priority,
        });
        // When does this run end on its own? (A program that runs out of
        // GPU memory fails shortly after it starts.)
        let natural = match (work, oom) {
            (Some(d), true) => Some(now + d.min(self.specs[sub].behavior().oom_after)),
            (None, true) => Some(now + self.specs[sub].behavior().oom_after),
            (Some(d), false) => Some(now + d),
            (None, false) => None,
        };
        j.oom = oom;
        j.natural_end = natural;
        // The check also ends a job whose reservation has ended.
        let kill = limit
            .map(|l| self.limit_check_at(now + l))
            .into_iter()
            .chain(self.resv_kill_at(job))
            .min();
        // The job exits on its own unless the time-limit check kills it first:
        // a job that ends after its limit but before the next check completes.
        let end_at = match (natural, kill) {
            (Some(n), Some(k)) => Some(n.min(k)),
            (Some(n), None) => Some(n),
            (None, Some(k)) => Some(k),
            // Runs to an unlimited limit: Slurm ends it after a year.
            (None, None) => Some(now + UNLIMITED_PLAN),
        };
        if let Some(t) = end_at {
            // A run the main pass started that ends on its own ends after
            // the main pass of its last second (`main_after_ends_from`).
            let own_end = natural.is_some_and(|n| kill.is_none_or(|k| n < k));
            let late = self.params.main_after_ends_from.is_some_and(|f| now >= f);
            let phase = if late && !by_backfill && own_end {
                Phase::MainStartedEnd
            } else {
                Phase::JobEnd
            };
            self.queue.push(t, phase, EventKind::RunEnd { job, run });
        }
        if let Some(r) = self.jobs[job.idx()].runs.last() {
            self.acct
                .job_start(&self.cluster, &self.specs[sub], job, r, limit, now);
        }
        self.ensure_acct_tick();
        let planned_end = now.saturating_add(limit.unwrap_or(UNLIMITED_PLAN));
        self.jobs[job.idx()].planned_end = planned_end;
        self.live.ends.insert((planned_end, job));
        if run == 0 {
            if let Some(d) = self.specs[sub].requeue_after_start() {
                self.queue
                    .push(now + d, Phase::Admin, EventKind::Requeue { job, run });
            }
        }
        // `job_claim_resv()`: a REPLACE reservation gives up the job's nodes.
        self.resv_claim(job);
        self.notify_dependents(sub as u32);
        Ok(())
    }

    /// The time-limit check that kills a job whose limit runs out at
    /// `deadline`: the first check (every `timelimit_check_interval` s from
    /// the controller's phase) at or after it.
    #[inline]
    pub(super) fn limit_check_at(&self, deadline: Time) -> Time {
        let iv = self.params.timelimit_check_interval;
        if iv == 0 {
            return deadline;
        }
        let phase = self.params.ctld_phase % iv;
        if deadline <= phase {
            phase
        } else {
            phase + (deadline - phase).div_ceil(iv) * iv
        }
    }

    /// Seconds the running `job` has been suspended in its current run.
    #[inline]
    pub(super) fn suspended_secs(&self, job: JobIdx) -> u64 {
        self.live.suspended.get(&job).map_or(0, |s| {
            s.total + s.since.map_or(0, |t| self.now.saturating_sub(t))
        })
    }

    #[inline]
    pub(super) fn is_suspended(&self, job: JobIdx) -> bool {
        self.live
            .suspended
            .get(&job)
            .is_some_and(|s| s.since.is_some())
    }

    /// Queues the running `job`'s end again after what decides it changed
    /// (its time limit, its own end, time spent suspended): the earlier of
    /// its own end and the time-limit check past start + suspended + limit.
    /// The run-end event queued before becomes stale.
    pub(super) fn reschedule_end(&mut self, job: JobIdx) {
        let j = &self.jobs[job.idx()];
        let Some(r) = j.runs.last() else {
            return;
        };
        let (start, part, run) = (r.start, r.partition, j.runs.len() as u32 - 1);
        let limit = gresim_policy::time_limit_in(&self.cluster, j, part);
        let base = start + self.suspended_secs(job);
        let kill = limit
            .map(|l| self.limit_check_at((base + l).max(self.now)))
            .into_iter()
            .chain(self.resv_kill_at(job).map(|r| r.max(self.now)))
            .min();
        let j = &self.jobs[job.idx()];
        let end_at = match (j.natural_end, kill) {
            (Some(n), Some(k)) => n.min(k),
            (Some(n), None) => n,
            (None, Some(k)) => k,
            (None, None) => base + UNLIMITED_PLAN,
        }
        .max(self.now);
        let planned = base.saturating_add(limit.unwrap_or(UNLIMITED_PLAN));
        self.live.ends.remove(&(j.planned_end, job));
        self.jobs[job.idx()].planned_end = planned;
        self.live.ends.insert((planned, job));
        self.live.moved_ends.insert(job, end_at);
        self.queue
            .push(end_at, Phase::JobEnd, EventKind::RunEnd { job, run });
    }

    /// Stops a running job (`scontrol suspend`; a preemption that suspends
    /// would do the same): it keeps its resources, and neither its run
    /// time nor its time limit counts until [`Self::resume_job`]. Returns
    /// whether it was running and not already suspended.
    pub(super) fn suspend_job(&mut self, job: JobIdx) -> bool {
        if self.jobs[job.idx()].state != JobState::Running || self.is_suspended(job) {
            return false;
        }
        self.live.suspended.entry(job).or_default().since = Some(self.now);
        true
    }

    /// Continues a suspended job: its own end and its time limit move by
    /// the time it was stopped.
    pub(super) fn resume_job(&mut self, job: JobIdx) -> bool {
        let now = self.now;
        let Some(s) = self.live.suspended.get_mut(&job) else {
            return false;
        };
        let Some(since) = s.since.take() else {
            return false;
        };
        let d = now.saturating_sub(since);
        s.total += d;
        let j = &mut self.jobs[job.idx()];
        j.natural_end = j.natural_end.map(|n| n + d);
        self.reschedule_end(job);
        true
    }

    /// Frees the job's resources and closes its current run.
    pub(super) fn finish_run(
        &mut self,
        job: JobIdx,
        run_state: JobState,
    ) -> Result<(), EngineError> {
        if matches!(
            run_state,
            JobState::NodeFail | JobState::Requeued | JobState::Preempted
        ) {
            self.account_failed_run(job);
        }
        self.live.signalled.remove(&job);
        let now = self.now;
        let j = &mut self.jobs[job.idx()];
        let Some(run) = j.runs.last_mut() else {
            return Err(EngineError::Internal(format!(
                "job {} ends without a run",
                j.display_id()
            )));
        };
        run.end = Some(now);
        run.state = run_state;
        let planned = (j.planned_end, job);
        let sub = j.sub as usize;
        self.live.ends.remove(&planned);
        self.forget_run_state(job);
        // Lent out of the run while its resources are freed (no copy), and
        // put back: nothing on the way reads this job's own allocation.
        let alloc: Allocation = self.jobs[job.idx()]
            .runs
            .last_mut()
            .map(|r| std::mem::take(&mut r.alloc))
            .unwrap_or_default();
        let freed = self.release_run(job, &alloc).and_then(|()| {
            for n in alloc.node_ids() {
                let v = &mut self.live.node_jobs[n.idx()];
                if let Some(p) = v.iter().position(|x| *x == job) {
                    v.swap_remove(p);
                }
            }
            self.hold_for_completing(&alloc)
        });
        if let Some(run) = self.jobs[job.idx()].runs.last_mut() {
            run.alloc = alloc;
        }
        freed?;
        self.acct_fini(job);
        self.subs[sub].running -= 1;
        self.array_running[sub] -= 1;
        self.running -= 1;
        Ok(())
    }

    /// A running job is killed (`scancel`): its run ends now, but like
    /// Slurm's COMPLETING job it keeps its nodes (`cg_node_bitmap`: no new
    /// job goes there, busy or not) and its dependents keep waiting
    /// (`IS_JOB_COMPLETED`) until slurmd reports the kill done,
    /// `completing` seconds later ([`Self::on_completed`]).
    pub(super) fn kill_running(
        &mut self,
        job: JobIdx,
        state: JobState,
        reason: Reason,
        completing: u64,
    ) -> Result<(), EngineError> {
        self.forget_run_state(job);
        let now = self.now;
        let done = now + completing;
        let j = &mut self.jobs[job.idx()];
        let Some(run) = j.runs.last_mut() else {
            return Err(EngineError::Internal(format!(
                "job {} ends without a run",
                j.display_id()
            )));
        };
        run.end = Some(now);
        run.state = state;
        j.state = state;
        j.reason = reason;
        let sub = j.sub as usize;
        // Backfill plans the nodes free when the completion is done.
        self.live.ends.remove(&(j.planned_end, job));
        j.planned_end = done;
        self.live.ends.insert((done, job));
        let mut hold = Allocation::default();
        for na in &run.alloc.nodes {
            if let Some(p) = self.live.node_jobs[na.node.idx()]
                .iter()
                .position(|x| *x == job)
            {
                self.live.node_jobs[na.node.idx()].swap_remove(p);
            }
            if let Some(free) = Self::free_to_hold(&self.state, na.node) {
                hold.nodes.push(free);
            }
        }
        self.state
            .allocate(&self.cluster, &hold)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        self.live.completing.push((job, hold));
        self.acct_fini(job);
        self.subs[sub].running -= 1;
        self.array_running[sub] -= 1;
        self.running -= 1;
        self.queue
            .push(done, Phase::JobEnd, EventKind::Completed { job });
        Ok(())
    }

    /// What is free on node `n`, as a COMPLETING job's hold takes it
    /// (`None` for a node that is not schedulable or held exclusively).
    fn free_to_hold(
        state: &gresim_model::ClusterState,
        n: gresim_model::NodeId,
    ) -> Option<gresim_model::NodeAlloc> {
        let u = state.node(n);
        (u.schedulable() && !u.exclusive).then_some(gresim_model::NodeAlloc {
            node: n,
            cores: u.free_cores,
            cpus: 0,
            mem_mib: u.free_mem,
            gpus: u.free_gpus,
            tasks: 0,
            share: None,
        })
    }

    /// How long the kill of `job` stays COMPLETING: `base` (the kill's own
    /// time: `kill_completing`, `preempt_completing`), plus slurmd's
    /// `MAX(KillWait, 5)` before SIGKILL when its program ignores SIGTERM.
    /// A suspended job (`scontrol suspend`, or gang-suspended) is killed
    /// without that wait: `_rpc_terminate_job()` finds its steps suspended
    /// (`ESLURMD_STEP_SUSPENDED` after the SIGCONT) and terminates them with
    /// SIGKILL at once.
    pub(super) fn kill_time(&self, job: JobIdx, base: u64) -> u64 {
        if !self.live.suspended.is_empty() && self.live.suspended.contains_key(&job) {
            return base;
        }
        let spec = &self.specs[self.jobs[job.idx()].sub as usize];
        base + self.params.sigterm_wait(spec.behavior())
    }

    /// What a job ending on a node where another job is still COMPLETING
    /// gave back stays held with that job: Slurm keeps a node with a
    /// COMPLETING job out of every selection (`cg_node_bitmap` in
    /// `_pick_best_nodes()`), whatever else ends there meanwhile. (Not
    /// applied when one kill's end frees resources beside another kill:
    /// with every kill of a preemption done in the same second, backfill
    /// would start scavengers on the preemptor's nodes between them, again
    /// and again; docs/preemption.md.)
    fn hold_for_completing(&mut self, freed: &Allocation) -> Result<(), EngineError> {
        if self.live.completing.is_empty() {
            return Ok(());
        }
        for n in freed.node_ids() {
            let Some(k) = self
                .live
                .completing
                .iter()
                .position(|(_, h)| h.nodes.iter().any(|na| na.node == n))
            else {
                continue;
            };
            let Some(more) = Self::free_to_hold(&self.state, n) else {
                continue;
            };
            if more.gpus == 0 && more.mem_mib == 0 && more.cores.is_empty() {
                continue;
            }
            self.state
                .allocate(
                    &self.cluster,
                    &Allocation {
                        nodes: vec![more.clone()],
                        exclusive: false,
                        row_use: gresim_model::RowUse::NONE,
                    },
                )
                .map_err(|e| EngineError::Internal(e.to_string()))?;
            let hold = &mut self.live.completing[k].1;
            if let Some(h) = hold.nodes.iter_mut().find(|na| na.node == n) {
                h.cores.union_with(&more.cores);
                h.mem_mib += more.mem_mib;
                h.gpus |= more.gpus;
            }
        }
        Ok(())
    }

    /// The kill of `job` is done: its nodes are free, its dependents may go.
    pub(super) fn on_completed(&mut self, job: JobIdx) -> Result<(), EngineError> {
        let Some(p) = self.live.completing.iter().position(|c| c.0 == job) else {
            return Ok(());
        };
        let (_, hold) = self.live.completing.swap_remove(p);
        let j = &self.jobs[job.idx()];
        self.live.ends.remove(&(j.planned_end, job));
        let (state, reason) = (j.state, j.reason);
        let alloc = j.runs.last().map(|r| r.alloc.clone()).unwrap_or_default();
        self.state
            .release(&self.cluster, &hold)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        self.release_run(job, &alloc)?;
        let preempted = state == JobState::Preempted;
        match self.live.requeue_held.remove(&job) {
            Some(special_exit) => self.back_to_queue(job, Some(special_exit)),
            None if self.live.requeue_on_done.remove(&job) => self.back_to_queue(job, None),
            None => self.terminate(job, state, reason),
        }
        self.mark_dirty();
        // A killed job's step was still alive, so slurmd reports the kill
        // with MESSAGE_EPILOG_COMPLETE, whose handler
        // (`_slurm_rpc_epilog_complete()`) schedules at once: a preemptor
        // starts then. For other kills, where the main pass comes first in
        // the second the next second's pass stands for it (a second later,
        // as before); where it comes after backfill, that would wait for
        // the next second's submissions and backfill pass, so it runs now.
        if preempted || self.main_phase(self.now) == Phase::MainAfterBackfill {
            self.request_main(self.now);
        }
        Ok(())
    }

    /// A requeued job's kill is done COMPLETING: it is pending again and
    /// eligible once `cred_expire + 1` s have passed (`batch_requeue_fini()`).
    /// After `requeuehold` (`held` is `Some(special_exit)`) it is also held
    /// by the user (Slurm sets JobHeldUser whoever asked) or in SPECIAL_EXIT,
    /// until released.
    pub(super) fn back_to_queue(&mut self, job: JobIdx, held: Option<bool>) {
        let now = self.now;
        let delay = self.params.cred_expire + 1;
        let j = &mut self.jobs[job.idx()];
        j.state = JobState::Pending;
        j.submit = now;
        j.eligible = None;
        j.begin = Some(now + delay);
        if let Some(special_exit) = held {
            j.held = Some(true);
            self.set_priority(job, 0);
            if special_exit {
                self.special_exit.insert(job);
            }
        }
        self.pending += 1;
        self.try_eligible(job);
        self.notify_singletons(job);
    }

    /// Drops what the engine keeps about a job's current run beyond the
    /// job record (suspensions, a moved end), when the run ends.
    #[inline]
    pub(super) fn forget_run_state(&mut self, job: JobIdx) {
        if !self.live.suspended.is_empty() {
            self.live.suspended.remove(&job);
        }
        if !self.live.moved_ends.is_empty() {
            self.live.moved_ends.remove(&job);
        }
        if self.gang.is_some() {
            // `gs_job_fini()`: the jobs waiting for its cores may run.
            self.gang_fini(job);
        }
    }

    /// The job ended for good in `state`.
    pub(super) fn terminate(&mut self, job: JobIdx, state: JobState, reason: Reason) {
        let j = &mut self.jobs[job.idx()];
        let was_pending = j.state == JobState::Pending;
        j.state = state;
        j.reason = reason;
        let sub = j.sub;
        if was_pending {
            self.pending -= 1;
            if j.runs.is_empty() {
                self.subs[sub as usize].unstarted -= 1;
            }
        }
        self.acct.unsubmit(&self.cluster, &self.specs[sub as usize]);
        let s = &mut self.subs[sub as usize];
        s.done += 1;
        if state != JobState::Completed {
            s.not_ok += 1;
        }
        let g = self.deps.sub_group[sub as usize] as usize;
        self.deps.groups[g].live.remove(&job);
        self.notify_dependents(sub);
        self.notify_singletons(job);
    }

    pub(super) fn on_run_end(&mut self, job: JobIdx, run: u32) -> Result<(), EngineError> {
        let j = &self.jobs[job.idx()];
        if j.state != JobState::Running || j.runs.len() as u32 != run + 1 {
            return Ok(()); // stale: the run was cancelled or requeued
        }
        let r = &j.runs[run as usize];
        let ran = (self.now - r.start).saturating_sub(self.suspended_secs(job));
        let limit = gresim_policy::time_limit_in(&self.cluster, j, r.partition);
        // Killed by the time-limit check, or ended on its own?
        let natural_end = j.natural_end;
        // A job that runs to its limit is killed by the check (an unlimited
        // one after Slurm's year); one with a run time ends on its own unless
        // the check came first.
        let timed_out = match natural_end {
            None => true,
            Some(n) => {
                n > self.now
                    && (limit.is_some_and(|l| ran >= l)
                        || self.resv_kill_at(job).is_some_and(|k| self.now >= k))
            }
        };
        if timed_out {
            if let Some(&s) = self.live.signalled.get(&job).filter(|s| s.run == run) {
                // In its grace time: Slurm's `job_time_limit()` takes the
                // preemption branch for a job with `preempt_time` set
                // (`slurm_job_preempt()` with its PreemptMode), never the
                // TIMEOUT one; its grace is over, since it ends no later
                // than the time limit (`apply_preempt`).
                self.preempt_now(job, s.mode)?;
                self.request_main(self.now);
                return Ok(());
            }
            let base = self.params.kill_completing;
            let completing = self.kill_time(job, base);
            if completing > base {
                // slurmd's SIGTERM goes unheeded: SIGKILL follows
                // MAX(KillWait, 5) s later, and then the kill's own time, as
                // a cancelled job's (`kill_completing`); the node takes no
                // job meanwhile.
                self.live.signalled.remove(&job);
                self.kill_running(job, JobState::Timeout, Reason::TimeLimit, completing)?;
                self.mark_dirty();
                return Ok(());
            }
        }
        let j = &self.jobs[job.idx()];
        let (state, reason) = if timed_out {
            (JobState::Timeout, Reason::TimeLimit)
        } else if j.oom {
            // PyTorch's "RuntimeError: CUDA out of memory" exits 1.
            self.jobs[job.idx()].exit_code = 1;
            (JobState::Failed, Reason::NonZeroExitCode)
        } else if j.exit_code != 0 {
            (JobState::Failed, Reason::NonZeroExitCode)
        } else {
            (JobState::Completed, Reason::None)
        };
        self.finish_run(job, state)?;
        self.terminate(job, state, reason);
        self.mark_dirty();
        if self.params.pass_on_end {
            self.request_main(self.now);
        }
        Ok(())
    }

    /// Requeues a running job (`scontrol requeue`, a node failure) as
    /// [`Engine::requeue`] does, but when its program ignores SIGTERM:
    /// slurmd's `_rpc_terminate_job()` waits `MAX(KillWait, 5)` s before
    /// SIGKILL for the REQUEST_TERMINATE_JOB that `deallocate_nodes()`
    /// sends on a requeue as on a cancel, so the kill stays COMPLETING
    /// `base` s plus that long, its nodes held (`cg_node_bitmap`), and the
    /// job goes back to the queue when it is done (`batch_requeue_fini()`).
    /// `waits` is false when no node of the job is left to signal (a node
    /// failure on all of them: slurmctld clears DOWN nodes from the kill).
    pub(super) fn requeue_killed(
        &mut self,
        job: JobIdx,
        run_state: JobState,
        base: u64,
        waits: bool,
    ) -> Result<(), EngineError> {
        let completing = if waits {
            self.kill_time(job, base)
        } else {
            base
        };
        if completing == base {
            return self.requeue(job, run_state, base);
        }
        self.account_failed_run(job);
        self.kill_running(job, run_state, Reason::None, completing)?;
        self.live.requeue_on_done.insert(job);
        Ok(())
    }

    /// Sends a running job back to the queue, as Slurm's requeue does. Its
    /// begin time counts from `completing` seconds later, when slurmd has
    /// reported the kill done (`batch_requeue_fini()`).
    pub(super) fn requeue(
        &mut self,
        job: JobIdx,
        run_state: JobState,
        completing: u64,
    ) -> Result<(), EngineError> {
        self.finish_run(job, run_state)?;
        let now = self.now;
        let delay = completing + self.params.cred_expire + 1;
        let j = &mut self.jobs[job.idx()];
        j.state = JobState::Pending;
        j.submit = now;
        j.eligible = None;
        j.begin = Some(now + delay);
        self.pending += 1;
        self.try_eligible(job);
        // A singleton waiting on this job may go now that it is no longer running.
        self.notify_singletons(job);
        Ok(())
    }
}
