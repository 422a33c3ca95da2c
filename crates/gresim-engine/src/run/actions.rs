//! Timed admin actions (`scontrol`, `scancel`), applied in their phase of
//! their second: `on_action` dispatches each [`Action`] to the concern
//! that owns it (nodes, reservations, holds) and handles the job actions
//! here: cancel (with filters), signals, requeue and requeuehold, suspend
//! and resume, `scontrol top` (`_set_top()`) and `scontrol update JobId=`.

use gresim_model::{JobIdx, JobState, NodeAdminState, Reason};
use gresim_policy::priority::PriorityConfig;

use super::Engine;
use crate::event::Phase;
use crate::{Action, EngineError, JobChange};

/// When in its second an action takes effect: nodes coming back to service
/// (resume, up, repair) after the passes of that second, everything else
/// before them (docs/architecture.md, the event-ordering contract).
pub(super) fn action_phase(a: &Action) -> Phase {
    match a {
        Action::NodeUp(_) | Action::NodeResume(_) | Action::NodeRepair(_) => Phase::NodeReturn,
        Action::Cancel { .. } => Phase::Cancel,
        _ => Phase::Admin,
    }
}

impl Engine<'_> {
    pub(super) fn on_action(&mut self, i: usize) -> Result<(), EngineError> {
        let action = self.actions[i].action.clone();
        self.apply(action)
    }

    pub(super) fn apply(&mut self, action: Action) -> Result<(), EngineError> {
        match action {
            Action::ResvCreate(r) => self.resv_create(*r),
            Action::ResvUpdate(c) => self.resv_update(*c),
            Action::ResvDelete(name) => self.resv_delete(&name),
            Action::NodeDown(nodes) => self.nodes_down(nodes)?,
            Action::NodeFail(nodes) => self.nodes_fail(nodes)?,
            Action::NodeRepair(nodes) => self.nodes_repair(nodes),
            Action::NodeUp(nodes) | Action::NodeResume(nodes) => {
                self.nodes_to(nodes, NodeAdminState::Up)
            }
            Action::NodeDrain(nodes) => self.nodes_to(nodes, NodeAdminState::Drain),
            Action::Hold { sub, admin } => {
                for j in self.sub_jobs(sub) {
                    self.hold_pending(JobIdx(j), admin);
                }
            }
            Action::Release { sub, owner } => {
                for j in self.sub_jobs(sub) {
                    let jr = &mut self.jobs[j as usize];
                    // The owner may not release an administrator's hold.
                    if owner && jr.held == Some(false) {
                        continue;
                    }
                    if jr.state == JobState::Pending && jr.held.take().is_some() {
                        self.special_exit.remove(&JobIdx(j));
                        self.set_priority(JobIdx(j), self.next_priority);
                        self.next_priority = self.next_priority.saturating_sub(1).max(1);
                        self.set_reason(JobIdx(j), Reason::None, None);
                        self.try_eligible(JobIdx(j));
                    }
                }
            }
            Action::Cancel { sub } => {
                for j in self.sub_jobs(sub) {
                    self.cancel_job(JobIdx(j))?;
                }
            }
            Action::Requeue { sub } => {
                for j in self.sub_jobs(sub) {
                    if self.jobs[j as usize].state == JobState::Running {
                        self.requeue_killed(
                            JobIdx(j),
                            JobState::Requeued,
                            self.params.requeue_completing,
                            true,
                        )?;
                    }
                }
            }
            Action::CancelWhere { subs, state, user } => {
                let jobs: Vec<u32> = match &subs {
                    Some(subs) => subs.iter().flat_map(|&s| self.sub_jobs(s)).collect(),
                    None => (0..self.jobs.len() as u32).collect(),
                };
                let mut by_sub: Vec<u32> = Vec::new();
                for j in jobs {
                    let jr = &self.jobs[j as usize];
                    let in_state = state.is_none_or(|s| s == jr.state);
                    let by_user = user
                        .as_deref()
                        .is_none_or(|u| *self.specs[jr.sub as usize].user == *u);
                    if in_state && by_user && !jr.state.is_terminal() {
                        by_sub.push(j);
                    }
                }
                for j in by_sub {
                    self.cancel_job(JobIdx(j))?;
                }
            }
            Action::Signal { sub, signal, batch } => {
                if batch {
                    for j in self.sub_jobs(sub) {
                        self.signal_batch(JobIdx(j), signal);
                    }
                }
            }
            Action::RequeueHold { sub, special_exit } => {
                for j in self.sub_jobs(sub) {
                    let job = JobIdx(j);
                    match self.jobs[j as usize].state {
                        JobState::Running => {
                            // slurmd's SIGTERM wait, as for `requeue`.
                            let completing = self.kill_time(job, self.params.requeue_completing);
                            self.account_failed_run(job);
                            self.kill_running(job, JobState::Requeued, Reason::None, completing)?;
                            self.live.requeue_held.insert(job, special_exit);
                        }
                        // A pending job is held where it is.
                        JobState::Pending => {
                            if special_exit {
                                self.special_exit.insert(job);
                            }
                            self.hold_pending(job, false);
                        }
                        _ => {}
                    }
                }
            }
            Action::Suspend { sub } => {
                for j in self.sub_jobs(sub) {
                    // An admin suspension takes the job out of gang
                    // scheduling (`gs_job_fini()`), a resume puts it back
                    // at the end of its partition's list (`gs_job_start()`).
                    if self.suspend_job(JobIdx(j)) && self.gang.is_some() {
                        self.gang_fini(JobIdx(j));
                    }
                }
            }
            Action::Resume { sub } => {
                for j in self.sub_jobs(sub) {
                    if self.resume_job(JobIdx(j)) && self.gang.is_some() {
                        self.gang_start(JobIdx(j));
                    }
                }
            }
            Action::Top { subs, owner } => {
                if !owner || self.params.enable_user_top {
                    self.set_top(&subs);
                }
            }
            Action::Update { sub, change } => {
                for j in self.sub_jobs(sub) {
                    self.update_job(JobIdx(j), &change);
                }
            }
        }
        self.mark_dirty();
        Ok(())
    }

    /// `scancel` of one job: pending, it ends at once; running, it is
    /// killed (COMPLETING for `kill_completing` seconds, and slurmd's
    /// `MAX(KillWait, 5)` more when its program ignores SIGTERM).
    pub(super) fn cancel_job(&mut self, job: JobIdx) -> Result<(), EngineError> {
        match self.jobs[job.idx()].state {
            JobState::Pending => {
                if self.jobs[job.idx()].eligible.take().is_some() {
                    self.policy.dequeue(job, &self.jobs, &self.cluster);
                }
                self.special_exit.remove(&job);
                self.terminate(job, JobState::Cancelled, Reason::None);
            }
            JobState::Running => {
                let completing = self.kill_time(job, self.params.kill_completing);
                if completing > 0 {
                    self.kill_running(job, JobState::Cancelled, Reason::None, completing)?;
                } else {
                    self.finish_run(job, JobState::Cancelled)?;
                    self.terminate(job, JobState::Cancelled, Reason::None);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `scancel --batch --signal=SIG` of a running job: the batch shell
    /// dies of the signal, and the job ends FAILED with the signal as its
    /// exit code `signal_exit_delay` seconds later (unless it ends before).
    pub(super) fn signal_batch(&mut self, job: JobIdx, signal: u8) {
        if self.jobs[job.idx()].state != JobState::Running {
            return;
        }
        let at = self.now + self.params.signal_exit_delay;
        let j = &mut self.jobs[job.idx()];
        if j.natural_end.is_some_and(|n| n <= at) {
            return;
        }
        j.natural_end = Some(at);
        j.exit_code = i32::from(signal);
        self.reschedule_end(job);
    }

    /// The job's partition for `scontrol top` (its only one, or the default).
    pub(super) fn sole_partition(&self, job: JobIdx) -> Option<gresim_model::PartId> {
        let parts = &self.jobs[job.idx()].request.partitions;
        match parts.as_slice() {
            [] => self.cluster.default_partition(),
            [p] => Some(*p),
            _ => None,
        }
    }

    /// The priority the job's queue record has (Slurm's `job_ptr->priority`).
    pub(super) fn current_priority(&self, job: JobIdx, part: gresim_model::PartId) -> u32 {
        gresim_policy::record_priority(
            &self.cluster,
            &self.params,
            &self.specs,
            &self.jobs[job.idx()],
            part,
            Some(self.now),
            self.acct.usage.as_ref(),
        )
    }

    /// Changes a pending job that may be in the policy's queue: out of the
    /// queue, `f`, back in (keeping its eligible time), so the policy sees
    /// the new request and priority.
    pub(super) fn requeue_in_policy(&mut self, job: JobIdx, f: impl FnOnce(&mut Self)) {
        let queued = self.jobs[job.idx()].eligible.is_some();
        if queued {
            self.policy.dequeue(job, &self.jobs, &self.cluster);
        }
        f(self);
        if queued {
            self.enqueue(job);
        }
    }

    /// Sets the job's priority: under priority/basic its own value; the nice
    /// value moves by the same amount the other way (as Slurm's
    /// `details->nice`), which is what moves it under multifactor.
    pub(super) fn shift_priority(&mut self, job: JobIdx, to: u32, from: u32) {
        let delta = i64::from(to) - i64::from(from);
        self.requeue_in_policy(job, |e| {
            e.set_priority(job, to);
            let spec = &mut e.specs[e.jobs[job.idx()].sub as usize];
            spec.nice = (i64::from(spec.nice) - delta)
                .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        });
    }

    /// `scontrol top`: Slurm's `_set_top()`. The named pending jobs take the
    /// highest priorities among themselves and the other pending jobs of
    /// the first one's user, partition and association (in the order
    /// named); those others go down by the sum of what the named ones
    /// gained, shared out among them, and stay below the last named one.
    /// A job in several partitions refuses the whole request.
    pub(super) fn set_top(&mut self, subs: &[u32]) {
        let mut top: Vec<(JobIdx, u32)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut first: Option<(JobIdx, gresim_model::PartId)> = None;
        for &sub in subs {
            for j in self.sub_jobs(sub) {
                let job = JobIdx(j);
                let jr = &self.jobs[j as usize];
                if jr.state != JobState::Pending {
                    continue;
                }
                let Some(part) = self.sole_partition(job) else {
                    return;
                };
                if jr.held.is_some() || !seen.insert(job) {
                    continue;
                }
                first.get_or_insert((job, part));
                top.push((job, self.current_priority(job, part)));
            }
        }
        let Some((first, part)) = first else {
            return;
        };
        let fspec = &self.specs[self.jobs[first.idx()].sub as usize];
        let (user, acct) = (std::sync::Arc::clone(&fspec.user), fspec.acct());
        let mut others: Vec<(JobIdx, u32)> = Vec::new();
        for (i, jr) in self.jobs.iter().enumerate() {
            let job = JobIdx(i as u32);
            if jr.state != JobState::Pending || jr.held.is_some() || seen.contains(&job) {
                continue;
            }
            let spec = &self.specs[jr.sub as usize];
            if *spec.user != *user || spec.acct() != acct || self.sole_partition(job) != Some(part)
            {
                continue;
            }
            let p = self.current_priority(job, part);
            if p > 1 {
                others.push((job, p));
            }
        }
        let mut prios: Vec<u32> = top.iter().chain(&others).map(|&(_, p)| p).collect();
        prios.sort_unstable_by(|a, b| b.cmp(a));
        let mut prios = prios.into_iter();
        let mut last: Option<u32> = None;
        let mut total: i64 = 0;
        for (job, cur) in top {
            let Some(mut next) = prios.next() else {
                break;
            };
            if let Some(l) = last {
                if next == l && l > 2 {
                    next = l - 1;
                }
            }
            last = Some(next);
            total += i64::from(next) - i64::from(cur);
            self.shift_priority(job, next, cur);
        }
        let last = i64::from(last.unwrap_or(u32::MAX));
        let mut left = others.len() as i64;
        for (job, cur) in others {
            let mut delta = total / left;
            let mut next = i64::from(cur) - delta;
            if next >= last {
                next = last - 1;
                delta = i64::from(cur) - next;
            }
            total -= delta;
            left -= 1;
            self.shift_priority(job, next.clamp(1, i64::from(u32::MAX)) as u32, cur);
        }
    }

    /// `scontrol update JobId=`: see [`JobChange`]. Changes Slurm refuses
    /// (of a job that is not pending, but for a running job's time limit and
    /// nice value) change nothing.
    pub(super) fn update_job(&mut self, job: JobIdx, change: &JobChange) {
        let state = self.jobs[job.idx()].state;
        match (change, state) {
            (JobChange::TimeLimit(l), JobState::Running) => {
                std::sync::Arc::make_mut(&mut self.jobs[job.idx()].request).time_limit = Some(*l);
                self.reschedule_end(job);
            }
            (JobChange::Nice(n), JobState::Pending | JobState::Running) => {
                let sub = self.jobs[job.idx()].sub as usize;
                let old = self.specs[sub].nice;
                self.requeue_in_policy(job, |e| {
                    if matches!(e.params.priority, PriorityConfig::Basic) {
                        let cur = e.jobs[job.idx()].priority;
                        if cur != 0 {
                            let p = i64::from(cur) + i64::from(old) - i64::from(*n);
                            e.set_priority(job, p.clamp(2, i64::from(u32::MAX)) as u32);
                        }
                    }
                    e.specs[sub].nice = *n;
                });
            }
            (_, JobState::Pending) => {
                self.requeue_in_policy(job, |e| {
                    let sub = e.jobs[job.idx()].sub as usize;
                    let req = std::sync::Arc::make_mut(&mut e.jobs[job.idx()].request);
                    match change {
                        JobChange::TimeLimit(l) => req.time_limit = Some(*l),
                        JobChange::Partition(p) => req.partitions = vec![*p],
                        JobChange::NumNodes(lo, hi) => {
                            req.min_nodes = *lo;
                            req.max_nodes = *hi;
                        }
                        JobChange::Dependency(d) => {
                            e.specs[sub].set_dependency(d.clone());
                            for t in d.iter().flat_map(|d| &d.terms) {
                                if let Some(target) = t.target {
                                    let v = e.deps.dependents.entry(target).or_default();
                                    if !v.contains(&(sub as u32)) {
                                        v.push(sub as u32);
                                    }
                                }
                            }
                        }
                        JobChange::Nice(_) => {}
                    }
                });
                // Slurm judges the changed job anew: a limit it was held by
                // may be gone (the passes name what still holds it).
                let j = &self.jobs[job.idx()];
                if j.eligible.is_some()
                    && !matches!(j.reason, Reason::Dependency | Reason::BeginTime)
                    && j.held.is_none()
                {
                    self.set_reason(job, Reason::None, None);
                }
                if let JobChange::Dependency(_) = change {
                    // Eligible again from now, or waiting on the new dependency.
                    if self.jobs[job.idx()].eligible.take().is_some() {
                        self.policy.dequeue(job, &self.jobs, &self.cluster);
                    }
                    if self.jobs[job.idx()].reason == Reason::Dependency {
                        self.set_reason(job, Reason::None, None);
                    }
                    self.try_eligible(job);
                }
            }
            _ => {}
        }
    }
}
