//! Admission: the workload's submissions in order of submit time, a new
//! job's records (array tasks, priority/basic's priority), what refuses a
//! submission (the policy's submission test, accounting limits, a
//! reservation it may not use), then eligibility: holds, begin times and
//! dependencies keep a job out of the policy's queue until they let it in.

use std::sync::Arc;

use gresim_model::job::{DepKind, Job, JobSpec};
use gresim_model::{JobId, JobIdx, JobState, Reason};

use super::deps::DepStatus;
use super::Engine;
use crate::event::{EventKind, Phase};
use crate::{EngineError, JobSource, ReasonChange};

/// The workload still to come: the source, the next submission (its
/// `Submit` event queued) and the submit time before it.
pub(super) struct Intake<'a> {
    pub(super) jobs: JobSource<'a>,
    pub(super) next: Option<JobSpec>,
    pub(super) prev_submit: gresim_model::job::Time,
}

impl<'a> Intake<'a> {
    pub(super) fn new(jobs: JobSource<'a>) -> Self {
        Intake {
            jobs,
            next: None,
            prev_submit: 0,
        }
    }
}

/// Per-submission bookkeeping (a plain job or a whole array).
#[derive(Debug, Clone, Default)]
pub(super) struct SubState {
    /// Index of the submission's first job record.
    pub(super) first: u32,
    pub(super) tasks: u32,
    /// Tasks that ended for good.
    pub(super) done: u32,
    /// Tasks that ended in a state other than COMPLETED.
    pub(super) not_ok: u32,
    /// Tasks not yet started (for array job ids).
    pub(super) unstarted: u32,
    pub(super) running: u32,
    pub(super) started_any: bool,
    pub(super) rejected: bool,
}

impl Engine<'_> {
    pub(super) fn pull_next_submission(&mut self) -> Result<(), EngineError> {
        match self.intake.jobs.next() {
            None => self.intake.next = None,
            Some(Err(e)) => return Err(EngineError::Source(e)),
            Some(Ok(spec)) => {
                let index = self.specs.len() as u32 + u32::from(self.intake.next.is_some());
                if spec.submit < self.intake.prev_submit {
                    return Err(EngineError::Unsorted {
                        index,
                        key: spec.key.clone(),
                        at: spec.submit,
                        prev: self.intake.prev_submit,
                    });
                }
                self.intake.prev_submit = spec.submit;
                self.queue
                    .push(spec.submit, Phase::Submit, EventKind::Submit);
                self.intake.next = Some(spec);
            }
        }
        Ok(())
    }

    pub(super) fn on_submit(&mut self) -> Result<(), EngineError> {
        let Some(mut spec) = self.intake.next.take() else {
            return Err(EngineError::Internal(
                "submit event without a submission".into(),
            ));
        };
        // OverSubscribe=EXCLUSIVE: `_resolve_shared_status()` gives a job of
        // the partition `whole_node`, as `--exclusive` does. (Slurm sets it
        // when the job is tried there and keeps it; a job of several
        // partitions gets it here from the start.)
        if !spec.request.exclusive && self.cluster.partitions.iter().any(|p| p.exclusive) {
            let parts = &spec.request.partitions;
            let excl = if parts.is_empty() {
                self.cluster
                    .default_partition()
                    .is_some_and(|p| self.cluster.partition(p).exclusive)
            } else {
                parts.iter().any(|&p| self.cluster.partition(p).exclusive)
            };
            if excl {
                Arc::make_mut(&mut spec.request).exclusive = true;
            }
        }
        let sub = self.specs.len() as u32;
        let first = self.jobs.len() as u32;
        let base_id = JobId(self.next_job_id);
        self.next_job_id += 1;
        // One job without an array (no list allocated for it).
        let tasks: Vec<Option<u32>>;
        let indices: &[Option<u32>] = match spec.array() {
            Some(a) => {
                tasks = a.indices.iter().map(|&i| Some(i)).collect();
                &tasks
            }
            None => &[None],
        };
        let mut reject = spec
            .reject()
            .map(str::to_string)
            .or_else(|| self.resv_rejection(&spec))
            .or_else(|| self.reject_reason(&spec));
        let mut reject_reason = Reason::BadConstraints;
        if reject.is_none() {
            if let Some(usage) = self.acct.usage.as_ref() {
                let n = spec.array().map_or(1, |a| a.indices.len() as u32);
                if let Some((r, msg)) =
                    self.policy
                        .accounting_rejection(&self.cluster, usage, &spec, n)
                {
                    reject = Some(msg);
                    reject_reason = r;
                }
            }
        }
        // priority/basic (`priority_p_set()`): one less than the last job,
        // minus the nice value; nice does not move the base for later jobs.
        let priority = {
            let base = self.next_priority;
            let nice = i64::from(spec.nice);
            let p = if nice <= 0 || i64::from(base) > nice + 1 {
                i64::from(base) - nice
            } else {
                i64::from(base)
            };
            p.clamp(1, i64::from(u32::MAX)) as u32
        };
        if reject.is_none() {
            self.next_priority = self.next_priority.saturating_sub(1).max(1);
        }
        let requeue = spec.requeue.unwrap_or(self.params.job_requeue);
        for task in indices {
            let (job_id, array_job_id) = match task {
                Some(_) => (None, Some(base_id)),
                None => (Some(base_id), None),
            };
            let run_time = spec.run_time_of(*task);
            self.jobs.push(Job {
                sub,
                task: *task,
                request: Arc::clone(&spec.request),
                job_id,
                array_job_id,
                submit: spec.submit,
                first_submit: spec.submit,
                eligible: None,
                state: JobState::Pending,
                reason: Reason::None,
                reason_desc: None,
                priority: if spec.hold { 0 } else { priority },
                run_time,
                exit_code: spec.exit_code,
                runs: Default::default(),
                held: spec.hold.then_some(true),
                planned_end: 0,
                begin: spec.begin,
                requeue,
                outcome: Default::default(),
                oom: false,
                natural_end: None,
            });
            if let Some(h) = self.rec.reasons.as_mut() {
                h.push(vec![ReasonChange {
                    t: self.now,
                    reason: Reason::None,
                    desc: None,
                }]);
            }
        }
        let n = indices.len() as u32;
        if let Some(name) = spec.reservation() {
            // The jobs `job_resv_check()` counts (on_resv_purge_check).
            self.resv
                .jobs
                .extend((first..first + n).map(|i| JobIdx::from_idx(i as usize)));
            if reject.is_none() {
                // `_validate_job_resv_internal()`: `_validate_node_choice()`.
                self.resv_replace_named(name);
            }
        }
        self.subs.push(SubState {
            first,
            tasks: n,
            unstarted: n,
            ..SubState::default()
        });
        self.array_running.push(0);
        let group = self.deps.register(sub, &spec);
        let singleton = spec
            .dependency()
            .is_some_and(|d| d.terms.iter().any(|t| t.kind == DepKind::Singleton));
        if let Some(sw) = spec.request.switches {
            if self.cluster.select_tree().is_some() {
                // The policy drops the leaf limit then (the slurm policy: select.rs `switches_relaxed`).
                let wait = sw.wait.unwrap_or(u64::MAX).min(self.params.max_switch_wait);
                self.queue.push(
                    spec.submit.saturating_add(wait),
                    Phase::Eligible,
                    EventKind::SwitchWaitOver,
                );
            }
        }
        self.specs.push(spec);

        if let Some(msg) = reject {
            let s = &mut self.subs[sub as usize];
            s.rejected = true;
            s.done = n;
            s.not_ok = n;
            s.unstarted = 0;
            for j in first..first + n {
                let job = &mut self.jobs[j as usize];
                job.state = JobState::Rejected;
                job.reason = reject_reason;
                job.set_rejected(Some(msg.clone()));
            }
            self.notify_dependents(sub);
        } else {
            self.pending += n;
            self.ensure_acct_tick();
            self.acct
                .submit(&self.cluster, &self.specs[sub as usize], n);
            let g = &mut self.deps.groups[group as usize];
            g.live.extend((first..first + n).map(JobIdx));
            if singleton {
                g.waiters.insert(sub);
            }
            for j in first..first + n {
                self.try_eligible_at(JobIdx(j), true);
            }
            if self.params.pass_on_submit {
                self.request_main(self.now);
            }
        }
        self.pull_next_submission()
    }

    /// Slurm tests a new job against the nodes (`select_nodes` in test-only
    /// mode): if it could run only on nodes that are down or drained, its
    /// reason is ReqNodeNotAvail from the start.
    pub(super) fn submit_test(&mut self, job: JobIdx) {
        let j = &self.jobs[job.idx()];
        let unavailable =
            self.policy
                .unavailable_at_submit(&self.cluster, &self.params, &self.state, j);
        if let Some(nodes) = unavailable {
            let names = gresim_model::hostlist::compress(&self.cluster.node_names(&nodes));
            self.set_reason(
                job,
                Reason::ReqNodeNotAvail,
                Some(format!("UnavailableNodes:{names}")),
            );
        }
    }

    /// Slurm refuses a submission that no node of its partitions could ever run.
    pub(super) fn reject_reason(&mut self, spec: &JobSpec) -> Option<String> {
        // The answer depends on the request's shape and the configuration,
        // which only dynamic MIG changes during a run.
        if self.cluster.dynamic_mig().is_some() {
            return self
                .policy
                .submission_rejection(&self.cluster, &self.params, spec);
        }
        let (cluster, params, policy) = (&self.cluster, &self.params, &mut self.policy);
        self.reject_memo.get_or(&spec.request, || {
            policy.submission_rejection(cluster, params, spec)
        })
    }

    /// Puts a pending job in the queue if nothing holds it back; otherwise sets the reason.
    pub(super) fn try_eligible(&mut self, job: JobIdx) {
        self.try_eligible_at(job, false);
    }

    pub(super) fn try_eligible_at(&mut self, job: JobIdx, at_submit: bool) {
        let j = &self.jobs[job.idx()];
        if j.state != JobState::Pending || j.eligible.is_some() {
            return;
        }
        if let Some(user) = j.held {
            let r = if self.special_exit.contains(&job) {
                Reason::None
            } else if user {
                Reason::JobHeldUser
            } else {
                Reason::JobHeldAdmin
            };
            self.set_reason(job, r, None);
            return;
        }
        if let Some(b) = j.begin {
            if b > self.now {
                self.set_reason(job, Reason::BeginTime, None);
                self.queue
                    .push(b, Phase::Eligible, EventKind::Begin { job });
                return;
            }
        }
        match self.dep_status(j.sub) {
            DepStatus::Waiting => {
                self.set_reason(job, Reason::Dependency, None);
                return;
            }
            DepStatus::Never => {
                if self.params.kill_invalid_depend {
                    self.terminate(job, JobState::Cancelled, Reason::DependencyNeverSatisfied);
                } else {
                    self.set_reason(job, Reason::DependencyNeverSatisfied, None);
                }
                return;
            }
            DepStatus::Met => {}
        }
        self.jobs[job.idx()].eligible = Some(self.now);
        if matches!(
            self.jobs[job.idx()].reason,
            Reason::Dependency | Reason::BeginTime
        ) {
            self.set_reason(job, Reason::None, None);
        }
        let top = self.enqueue(job);
        if at_submit && !top {
            self.set_reason(job, Reason::Priority, None);
        }
        if at_submit {
            // Partition limits at submission show as PartitionConfig; the
            // scheduler's passes then name the limit.
            let j = &self.jobs[job.idx()];
            if self.policy.beyond_partition_limits(&self.cluster, j) {
                self.set_reason(job, Reason::PartitionConfig, None);
            }
        }
        if at_submit && self.nodes.unavailable > 0 {
            // sbatch's submission test: nodes it needs are DOWN or DRAINED.
            self.submit_test(job);
        }
        self.mark_dirty();
    }

    pub(super) fn on_begin(&mut self, job: JobIdx) {
        let j = &self.jobs[job.idx()];
        if j.state == JobState::Pending && j.begin.is_some_and(|b| b <= self.now) {
            self.try_eligible(job);
        }
    }

    /// Holds a pending job (priority 0, out of the queue): an administrator's
    /// hold (JobHeldAdmin) or a user's (JobHeldUser; no reason in SPECIAL_EXIT).
    pub(super) fn hold_pending(&mut self, job: JobIdx, admin: bool) {
        if self.jobs[job.idx()].state != JobState::Pending {
            return;
        }
        if self.jobs[job.idx()].eligible.take().is_some() {
            self.policy.dequeue(job, &self.jobs, &self.cluster);
        }
        self.jobs[job.idx()].held = Some(!admin);
        self.set_priority(job, 0);
        let r = if admin {
            Reason::JobHeldAdmin
        } else if self.special_exit.contains(&job) {
            Reason::None
        } else {
            Reason::JobHeldUser
        };
        self.set_reason(job, r, None);
    }

    /// Puts the job in the policy's queue; whether nothing queued is ahead of it.
    pub(super) fn enqueue(&mut self, job: JobIdx) -> bool {
        let ectx = gresim_policy::EnqueueCtx {
            cluster: &self.cluster,
            params: &self.params,
            jobs: &self.jobs,
            specs: &self.specs,
            acct: self.acct.usage.as_ref(),
            now: None,
        };
        let top = self.policy.enqueue(job, &ectx);
        self.note_queue_priority(job, None);
        top
    }

    /// The job records of a submission; empty if it is not submitted yet
    /// (Slurm answers "Invalid job id specified" and nothing happens).
    pub(super) fn sub_jobs(&self, sub: u32) -> std::ops::Range<u32> {
        match self.subs.get(sub as usize) {
            Some(s) => s.first..s.first + s.tasks,
            None => 0..0,
        }
    }
}
