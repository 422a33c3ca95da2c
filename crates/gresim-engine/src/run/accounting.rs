//! Usage accounting (`Accounting`): the association and QOS counters as
//! jobs are submitted, start and end (`acct_policy_add_job_submit()`,
//! `acct_policy_job_begin()`, `acct_policy_job_fini()`), and the priority
//! plugin's periodic work every `PriorityCalcPeriod`: `GrpTRESRunMins`
//! run-down, and under priority/multifactor the decay thread
//! (`_decay_thread()`): `PriorityUsageResetPeriod`, decayed usage and
//! `GrpTRESMins`/`GrpWall`, fair-share factors, and the queue's priorities
//! recomputed. The formulas are `gresim_policy::fairshare`'s; this module
//! owns the state and the times they run.

use std::collections::BTreeMap;

use gresim_model::accounting::{AcctUsage, TresArray};
use gresim_model::job::{Job, JobSpec, Run, Time};
use gresim_model::{Cluster, JobIdx};
use gresim_policy::fairshare::{self, UsageReset};
use gresim_policy::priority::PriorityConfig;
use gresim_policy::SchedParams;

use super::Engine;
use crate::event::{EventKind, Phase};

/// Seconds between the samples of [`crate::SimOutput::fairshare_log`].
const FAIRSHARE_SAMPLE: Time = 3600;

/// A running job's accounting: what it holds, its billable TRES, the
/// seconds of its time limit left, and when its use last counted.
struct AcctRun {
    tres: TresArray,
    billable: f64,
    left: u64,
    last: Time,
}

/// The accounting state of a run; inert (`usage` is `None`) when the
/// cluster has no accounting.
pub(super) struct Accounting {
    /// Use of associations and QOS, when the cluster has accounting.
    pub(super) usage: Option<AcctUsage>,
    /// Running jobs under accounting: TRES held, seconds of their time
    /// limit not yet run down, and when they were last run down.
    running: BTreeMap<JobIdx, AcctRun>,
    /// PriorityUsageResetPeriod: the last reset (slurmctld's start at
    /// first) and the next, once computed (`Time::MAX` once `NOW` has reset:
    /// none comes again).
    reset: (Time, Option<Time>),
    /// [`crate::SimOutput::fairshare_log`].
    pub(super) fairshare_log: Vec<(Time, Vec<f64>)>,
    /// The next accounting tick (the priority plugin's decay thread), if any.
    tick_at: Option<Time>,
}

/// The decay factor per second, and Fair Tree or classic.
fn fairshare_params(params: &SchedParams) -> (f64, bool) {
    match &params.priority {
        PriorityConfig::Multifactor(m) => (fairshare::decay_factor(m.half_life), m.fair_tree),
        PriorityConfig::Basic => (1.0, true),
    }
}

impl Accounting {
    pub(super) fn new(cluster: &Cluster) -> Self {
        Accounting {
            usage: cluster.accounting().map(AcctUsage::new),
            running: BTreeMap::new(),
            reset: (0, None),
            fairshare_log: Vec::new(),
            tick_at: None,
        }
    }

    /// The time of the next tick, when one is to be queued now: under
    /// priority/multifactor (priority/basic has no decay thread), when
    /// none is queued, at the next multiple of `PriorityCalcPeriod` from
    /// the decay thread's phase after `now`.
    #[inline]
    fn claim_tick(&mut self, params: &SchedParams, now: Time) -> Option<Time> {
        if self.usage.is_none()
            || self.tick_at.is_some()
            || !matches!(params.priority, PriorityConfig::Multifactor(_))
        {
            return None;
        }
        let iv = params.priority_calc_period.max(1);
        let phase = params.decay_phase % iv;
        let t = if now < phase {
            phase
        } else {
            phase + ((now - phase) / iv + 1) * iv
        };
        self.tick_at = Some(t);
        Some(t)
    }

    /// `n` jobs of `spec` are submitted (`acct_policy_add_job_submit()`).
    pub(super) fn submit(&mut self, cluster: &Cluster, spec: &JobSpec, n: u32) {
        if let (Some(a), Some(u)) = (cluster.accounting(), self.usage.as_mut()) {
            if let Some(ja) = spec.acct() {
                for _ in 0..n {
                    u.add_submit(a, ja, &spec.user);
                }
            }
        }
    }

    /// A job of `spec` ends for good (`acct_policy_remove_job_submit()`).
    pub(super) fn unsubmit(&mut self, cluster: &Cluster, spec: &JobSpec) {
        if let (Some(a), Some(u)) = (cluster.accounting(), self.usage.as_mut()) {
            if let Some(ja) = spec.acct() {
                u.remove_submit(a, ja, &spec.user);
            }
        }
    }

    /// `job` starts `run` with a time limit of `limit` seconds: it holds its
    /// TRES from now (the counters themselves moved when the pass started it,
    /// through `PassCtx::start`).
    pub(super) fn job_start(
        &mut self,
        cluster: &Cluster,
        spec: &JobSpec,
        job: JobIdx,
        run: &Run,
        limit: Option<u64>,
        now: Time,
    ) {
        let Some(a) = cluster.accounting() else {
            return;
        };
        if spec.acct().is_none() {
            return;
        }
        let tres = a.alloc_tres(cluster, &run.alloc, Some(run.partition));
        let billable = a.billable(&tres, a.part_weights(Some(run.partition)));
        let left = limit.unwrap_or(gresim_policy::ACCT_UNLIMITED);
        self.running.insert(
            job,
            AcctRun {
                tres,
                billable,
                left,
                last: now,
            },
        );
    }

    /// A running job under accounting stops holding its TRES (`acct_policy_job_fini`),
    /// and its use since the last tick counts (`priority_p_job_end()`).
    pub(super) fn job_end(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        spec: &JobSpec,
        job: JobIdx,
        now: Time,
    ) {
        let Some(AcctRun {
            tres,
            billable,
            left,
            last,
        }) = self.running.remove(&job)
        else {
            return;
        };
        let (df, _) = fairshare_params(params);
        let multifactor = matches!(params.priority, PriorityConfig::Multifactor(_));
        let (Some(a), Some(u)) = (cluster.accounting(), self.usage.as_mut()) else {
            return;
        };
        if let Some(ja) = spec.acct() {
            if multifactor {
                fairshare::accrue(a, u, ja, &tres, billable, now.saturating_sub(last), df);
            }
            let mut run_left = [0u64; gresim_model::accounting::MAX_TRES];
            for (r, t) in run_left.iter_mut().zip(&tres) {
                *r = t.saturating_mul(left);
            }
            u.job_fini(a, ja, &spec.user, &tres, &run_left);
        }
    }

    /// The tick's accounting at `now`: running jobs' TRES-seconds still to
    /// run shrink by the time they ran; under priority/multifactor usage
    /// resets when due, decays, running jobs' use since the last tick is
    /// added and the fair-share factors are recomputed. `false` when the
    /// cluster has no accounting.
    fn tick(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        jobs: &[Job],
        specs: &[JobSpec],
        now: Time,
    ) -> bool {
        self.tick_at = None;
        let (df, fair_tree) = fairshare_params(params);
        let (Some(a), Some(u)) = (cluster.accounting(), self.usage.as_mut()) else {
            return false;
        };
        // PriorityUsageResetPeriod: checked first of all.
        if let PriorityConfig::Multifactor(m) = &params.priority {
            use fairshare::{next_reset, reset_usage};
            match m.usage_reset {
                UsageReset::None => {}
                UsageReset::Now => {
                    if self.reset.1.is_none() {
                        reset_usage(u);
                        self.reset = (now, Some(Time::MAX));
                    }
                }
                p => {
                    let (last, next) = self.reset;
                    if let Some(next) = next.or_else(|| next_reset(p, last, now)) {
                        if now >= next {
                            reset_usage(u);
                            self.reset = (next, next_reset(p, next, now));
                        } else {
                            self.reset.1 = Some(next);
                        }
                    }
                }
            }
        }
        // Classic fair-share: the accounts' effective usage as the thread
        // finds it when it starts, before decay and new usage.
        let before = (!fair_tree).then(|| {
            fairshare::compute(a, u, false, None);
            u.shares.clone()
        });
        // The decay thread ran one period before its first tick here (it
        // starts with slurmctld), so the first decay spans one period.
        let since = if u.last_decay > 0 {
            now.saturating_sub(u.last_decay)
        } else {
            params.priority_calc_period.max(1)
        };
        fairshare::apply_decay(a, u, df.powf(since as f64));
        for (job, r) in self.running.iter_mut() {
            let ran = now.saturating_sub(r.last);
            let d = ran.min(r.left);
            r.left -= d;
            r.last = now;
            let spec = &specs[jobs[job.idx()].sub as usize];
            if let Some(ja) = spec.acct() {
                fairshare::accrue(a, u, ja, &r.tres, r.billable, ran, df);
                u.run_down(a, ja, &spec.user, &r.tres, d);
            }
        }
        fairshare::compute(a, u, fair_tree, before.as_deref());
        u.last_decay = now;
        if self
            .fairshare_log
            .last()
            .is_none_or(|&(t, _)| now >= t + FAIRSHARE_SAMPLE)
        {
            self.fairshare_log.push((now, u.fairshare.clone()));
        }
        true
    }

    /// Whether decay or a coming usage reset may still let a job start that
    /// `GrpTRESMins` or `GrpWall` holds: some usage is at least a minute
    /// (the limits count whole minutes) and such a job is pending.
    fn may_free_jobs(&self, params: &SchedParams, jobs: &[Job]) -> bool {
        let (Some(u), PriorityConfig::Multifactor(m)) = (self.usage.as_ref(), &params.priority)
        else {
            return false;
        };
        let resets = match m.usage_reset {
            UsageReset::None => false,
            UsageReset::Now => self.reset.1.is_none(),
            _ => true,
        };
        (m.half_life > 0 || resets)
            && u.assoc_decayed
                .iter()
                .chain(&u.qos_decayed)
                .any(|d| d.wall >= 60.0 || d.tres.iter().any(|t| *t >= 60.0))
            && jobs
                .iter()
                .any(|j| j.is_pending() && j.reason.reads_decayed_usage())
    }
}

impl Engine<'_> {
    /// The accounting tick runs while anything is left to happen, under
    /// priority/multifactor (priority/basic has no decay thread).
    #[inline]
    pub(super) fn ensure_acct_tick(&mut self) {
        if let Some(t) = self.acct.claim_tick(&self.params, self.now) {
            self.queue.push(t, Phase::JobEnd, EventKind::AcctTick);
        }
    }

    /// A running job under accounting stops holding its TRES and its use
    /// since the last tick counts ([`Accounting::job_end`]).
    pub(super) fn acct_fini(&mut self, job: JobIdx) {
        let spec = &self.specs[self.jobs[job.idx()].sub as usize];
        self.acct
            .job_end(&self.cluster, &self.params, spec, job, self.now);
    }

    /// The priority plugin's periodic work (`PriorityCalcPeriod`): running
    /// jobs' TRES-seconds still to run shrink by the time they ran.
    /// Also, under priority/multifactor (`_decay_thread()`, Fair Tree's
    /// `fair_tree_decay()`): usage decays, running jobs' use since the last
    /// tick is added, fair-share factors are recomputed, and so are the
    /// priorities of the queued jobs.
    pub(super) fn on_acct_tick(&mut self) {
        let now = self.now;
        if !self
            .acct
            .tick(&self.cluster, &self.params, &self.jobs, &self.specs, now)
        {
            return;
        }
        let ectx = gresim_policy::EnqueueCtx {
            cluster: &self.cluster,
            params: &self.params,
            jobs: &self.jobs,
            specs: &self.specs,
            acct: self.acct.usage.as_ref(),
            now: Some(now),
        };
        self.policy.reprioritize(&ectx);
        if self.rec.multifactor.is_some() {
            for i in 0..self.jobs.len() {
                let j = &self.jobs[i];
                if j.state == gresim_model::JobState::Pending && j.eligible.is_some() {
                    self.note_queue_priority(JobIdx(i as u32), Some(now));
                }
            }
        }
        // Ticks go on while anything else is left to happen (not for jobs
        // that can never start: a reordered queue alone starts nothing new).
        let more = !self.acct.running.is_empty()
            || !self.queue.is_empty()
            || self.intake.next.is_some()
            || self.acct.may_free_jobs(&self.params, &self.jobs);
        if self.policy.queued() > 0 {
            self.mark_dirty();
        }
        if more {
            self.ensure_acct_tick();
        }
    }
}
