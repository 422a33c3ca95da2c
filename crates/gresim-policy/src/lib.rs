//! The policy interface: what the engine knows of a scheduler, and all it knows.
//!
//! The engine (`gresim-engine`) depends on this crate and on the model,
//! never on a concrete scheduler: it tells a [`Policy`] which jobs are
//! queued, asks it whether a submission is admitted, and asks it to run its
//! main and backfill passes. A pass reads the cluster and the job table
//! through a [`PassCtx`] and returns its decisions there ([`decision`]):
//! starts through [`PassCtx::start`], which does the resource accounting,
//! preemptions through [`PassCtx::preempt`], and pending reasons through
//! [`PassCtx::set_reason`].
//!
//! Slurm's own policies and node selection live in `gresim-sched`, which
//! implements this trait; a policy of one's own implements it too.
//! [`SchedParams`] (Slurm's scheduler settings) and [`priority`]
//! (priority/basic and priority/multifactor) are here because both sides
//! read them: the engine for the passes' cadence, the policies for order.

pub mod decision;
pub mod fairshare;
mod params;
pub mod priority;

use gresim_model::job::{Job, JobSpec, Time};
use gresim_model::slurm_time::Seconds;
use gresim_model::{Allocation, Cluster, ClusterState, JobIdx, NodeId, PartId, Reason};

pub use decision::{MigReconfig, Preempt, Start, Suspend};
pub use params::{GraceKill, SchedParams};

/// Everything a pass may read, and the one thing it may change: allocations.
pub struct PassCtx<'a> {
    pub now: Time,
    pub cluster: &'a Cluster,
    pub params: &'a SchedParams,
    pub state: &'a mut ClusterState,
    pub jobs: &'a [Job],
    pub specs: &'a [JobSpec],
    /// Running tasks per submission (for array throttles).
    pub array_running: &'a [u32],
    /// Running jobs by the end Slurm plans with: start + time limit.
    pub running: &'a std::collections::BTreeSet<(Time, JobIdx)>,
    /// Jobs being killed (COMPLETING), each with what it holds on its
    /// nodes until slurmd reports the kill done. Slurm keeps those nodes out
    /// of every selection (`cg_node_bitmap`), also when it tries what
    /// preempting would free.
    pub completing: &'a [(JobIdx, gresim_model::Allocation)],
    /// Jobs started in this pass, in start order.
    pub started: Vec<Start>,
    /// Reason changes decided in this pass.
    pub reasons: Vec<(JobIdx, Reason, Option<String>)>,
    /// Running jobs preempted in this pass, in decision order.
    pub preempted: Vec<Preempt>,
    /// Jobs suspended in this pass for a higher-tier job that starts on
    /// their cores (SUSPEND,GANG), in decision order.
    pub suspended: Vec<Suspend>,
    /// Use of associations and QOS, when the cluster has accounting:
    /// [`PassCtx::start`] counts the jobs a pass starts, so that later jobs
    /// of the same pass see them.
    pub acct: Option<&'a mut gresim_model::accounting::AcctUsage>,
    /// The advance reservations (`scontrol create reservation`), when the
    /// cluster has any: `None` otherwise, so that a pass without them tests
    /// nothing (docs/reservations.md).
    pub resv: Option<&'a gresim_model::reservation::Reservations>,
}

impl<'a> PassCtx<'a> {
    /// Starts `job` on `alloc`; `priority` is that of the queue record it
    /// starts from ([`Start::priority`]). Fails, changing nothing, if the
    /// allocation conflicts with what is already allocated (a policy bug).
    pub fn start(
        &mut self,
        job: JobIdx,
        partition: PartId,
        alloc: Allocation,
        by_backfill: bool,
        priority: u32,
    ) -> Result<(), gresim_model::state::AllocError> {
        let mut alloc = alloc;
        // How the job counts in cons_common's node states depends on the
        // partition it starts in, whatever the policy that chose the nodes.
        alloc.row_use = self
            .cluster
            .row_use(partition, self.jobs[job.idx()].request.oversubscribe);
        self.state.allocate(self.cluster, &alloc)?;
        if let (Some(a), Some(u)) = (self.cluster.accounting(), self.acct.as_deref_mut()) {
            let j = &self.jobs[job.idx()];
            let spec = &self.specs[j.sub as usize];
            if let Some(ja) = spec.acct() {
                let tres = a.alloc_tres(self.cluster, &alloc, Some(partition));
                let limit = time_limit_in(self.cluster, j, partition).unwrap_or(ACCT_UNLIMITED);
                u.job_begin(a, ja, &spec.user, &tres, limit);
            }
        }
        self.started.push(Start {
            job,
            partition,
            alloc,
            by_backfill,
            priority,
        });
        Ok(())
    }

    /// Preempts a running job for a pending one. The engine carries it out
    /// after the pass (a job preempted twice, or no longer running, is left alone).
    pub fn preempt(&mut self, p: Preempt) {
        if !self.preempted.iter().any(|q| q.job == p.job) {
            self.preempted.push(p);
        }
    }

    /// Suspends a running job (or lends more cores of a suspended one) for
    /// `s.by`, which the policy then starts on those cores: they are free
    /// in `state` at once. Fails, changing nothing, if a core is not
    /// allocated (a policy bug).
    pub fn suspend(&mut self, s: Suspend) -> Result<(), gresim_model::state::AllocError> {
        for (k, (n, c)) in s.cores.iter().enumerate() {
            if let Err(e) = self.state.lend_cores(self.cluster, *n, c) {
                for (n, c) in &s.cores[..k] {
                    let _ = self.state.reclaim_cores(self.cluster, *n, c);
                }
                return Err(e);
            }
        }
        self.suspended.push(s);
        Ok(())
    }

    /// Records a new pending reason for `job` if it differs from the current one.
    pub fn set_reason(&mut self, job: JobIdx, reason: Reason, desc: Option<String>) {
        let j = &self.jobs[job.idx()];
        if j.reason != reason || j.reason_desc != desc {
            self.reasons.push((job, reason, desc));
        }
    }

    /// The time limit `job` runs with in `part`: `None` is unlimited.
    pub fn time_limit(&self, job: JobIdx, part: PartId) -> Option<Seconds> {
        time_limit_in(self.cluster, &self.jobs[job.idx()], part)
    }

    /// True when the job's array throttle lets one more task start.
    pub fn throttle_allows(&self, job: JobIdx) -> bool {
        let j = &self.jobs[job.idx()];
        match self.specs[j.sub as usize].array().and_then(|a| a.throttle) {
            Some(max) => {
                // Tasks of the same array started earlier in this pass count too.
                let now_started = self
                    .started
                    .iter()
                    .filter(|s| self.jobs[s.job.idx()].sub == j.sub)
                    .count() as u32;
                self.array_running[j.sub as usize] + now_started < max
            }
            None => true,
        }
    }
}

/// The account a job runs under, when the cluster has accounting (what a
/// reservation's `Accounts=` is matched against).
pub fn job_account<'c>(cluster: &'c Cluster, spec: &JobSpec) -> Option<&'c str> {
    let a = cluster.accounting()?;
    let ja = spec.acct()?;
    a.assocs.get(ja.assoc as usize).map(|x| x.account.as_str())
}

/// The seconds an unlimited job counts for in TRES-run-minute limits (a year).
pub const ACCT_UNLIMITED: Seconds = 365 * 86400;

/// The time limit a job gets in a partition (its `--time`, else the partition's DefaultTime).
pub fn time_limit_in(cluster: &Cluster, job: &Job, part: PartId) -> Option<Seconds> {
    match job.request.time_limit {
        Some(l) => l,
        None => cluster.partition(part).effective_default_time(),
    }
}

/// The priority of `job`'s queue record in `part`: the engine's FIFO value
/// under priority/basic, the multifactor sum otherwise (0 while held).
/// `now` is when it is computed (the age factor), `acct` the accounting
/// usage (fair-share and QOS factors).
pub fn record_priority(
    cluster: &Cluster,
    params: &SchedParams,
    specs: &[JobSpec],
    job: &Job,
    part: PartId,
    now: Option<gresim_model::job::Time>,
    acct: Option<&gresim_model::accounting::AcctUsage>,
) -> u32 {
    match &params.priority {
        crate::priority::PriorityConfig::Basic => job.priority,
        crate::priority::PriorityConfig::Multifactor(m) => {
            if job.priority == 0 {
                0
            } else {
                let spec = &specs[job.sub as usize];
                let factors = match (cluster.accounting(), acct, spec.acct()) {
                    (Some(a), Some(u), Some(ja)) => {
                        let maxq = a.max_qos_priority();
                        let maxa = if m.weight_assoc > 0 {
                            a.max_assoc_priority()
                        } else {
                            0
                        };
                        crate::priority::AcctFactors {
                            assoc: if maxa > 0 {
                                f64::from(a.assocs[ja.assoc as usize].priority) / f64::from(maxa)
                            } else {
                                0.0
                            },
                            fairshare: u.fairshare[ja.assoc as usize],
                            qos: if maxq > 0 {
                                f64::from(a.qos[ja.qos as usize].priority) / f64::from(maxq)
                            } else {
                                0.0
                            },
                        }
                    }
                    _ => crate::priority::AcctFactors::default(),
                };
                m.priority(
                    cluster,
                    job,
                    part,
                    now.unwrap_or(job.eligible.unwrap_or(job.submit)),
                    spec.nice,
                    factors,
                )
            }
        }
    }
}

/// What a policy may read when a job joins its queue.
pub struct EnqueueCtx<'a> {
    pub cluster: &'a Cluster,
    pub params: &'a SchedParams,
    pub jobs: &'a [Job],
    pub specs: &'a [JobSpec],
    /// Accounting usage (fair-share, QOS), when the cluster has accounting.
    pub acct: Option<&'a gresim_model::accounting::AcctUsage>,
    /// When priorities are recomputed ([`Policy::reprioritize`]); `None` at enqueue.
    pub now: Option<Time>,
}

/// A scheduling policy. The engine knows schedulers only through this trait.
///
/// A policy owns whatever it caches between calls (`gresim-sched`'s
/// policies own their node-selection caches); nothing lives in the thread.
///
/// The admission questions (`submission_rejection`,
/// `beyond_partition_limits`, `unavailable_at_submit`) are what slurmctld
/// checks when a job is submitted; `gresim_sched::admission` answers them
/// as Slurm does, for any policy that wants Slurm's admission.
pub trait Policy: Send {
    /// The policy's name, as `--policy` and reports spell it.
    fn name(&self) -> &'static str;

    /// Why slurmctld would refuse `spec` at submission (`_valid_job_part`,
    /// `select_nodes` in test-only mode): no node of its partitions could
    /// ever run it. `None` when the submission is accepted, even if it must
    /// pend. The answer must depend only on the configuration and the
    /// request's shape ([`gresim_model::job::JobRequest::same_shape`]): the
    /// engine remembers it by shape while the cluster has no dynamic MIG GPU.
    fn submission_rejection(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        spec: &JobSpec,
    ) -> Option<String>;

    /// Whether the limits of every partition of the just-submitted `job`
    /// keep it from running there (the engine gives it reason
    /// PartitionConfig at submission; the passes name the limit later).
    fn beyond_partition_limits(&self, cluster: &Cluster, job: &Job) -> bool;

    /// sbatch's test of a new job against the nodes, asked while some node
    /// is DOWN or DRAINED: if in each of its partitions the job could run
    /// only once unavailable nodes come back, those nodes (the engine gives
    /// it reason ReqNodeNotAvail); otherwise `None`.
    fn unavailable_at_submit(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        state: &ClusterState,
        job: &Job,
    ) -> Option<Vec<NodeId>>;

    /// With accounting (`AccountingStorageEnforce=limits`): the limit that
    /// refuses a submission of `job_cnt` jobs, and slurmctld's error
    /// (`acct_policy_validate()`). `gresim_sched::acct_policy` answers it as
    /// Slurm does; a policy that ignores accounting keeps the default, `None`.
    fn accounting_rejection(
        &mut self,
        _cluster: &Cluster,
        _usage: &gresim_model::accounting::AcctUsage,
        _spec: &JobSpec,
        _job_cnt: u32,
    ) -> Option<(Reason, String)> {
        None
    }

    /// The cluster's GRES types changed (a MIG repartitioning began or
    /// ended): anything the policy remembers about nodes must go.
    fn cluster_changed(&mut self) {}

    /// `job` became eligible: it joins the queue. Returns whether it is "top
    /// priority" (Slurm's `_top_priority()`): no queued job ahead of it in a
    /// partition that shares nodes with its own. A job submitted behind others
    /// gets reason Priority at once.
    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool;

    /// Priorities changed (priority/multifactor's periodic recalculation,
    /// `decay_apply_weighted_factors()`): recompute the queue order of
    /// every queued job. Policies whose order does not depend on priority
    /// do nothing.
    fn reprioritize(&mut self, _ctx: &EnqueueCtx<'_>) {}

    /// `job` left the queue without being started by the policy (held,
    /// cancelled). Jobs a pass starts are removed by the policy itself.
    fn dequeue(&mut self, job: JobIdx, jobs: &[Job], cluster: &Cluster);

    /// The main scheduling pass.
    fn main_pass(&mut self, ctx: &mut PassCtx<'_>);

    /// The backfill pass. Policies without backfill do nothing.
    fn backfill_pass(&mut self, _ctx: &mut PassCtx<'_>) {}

    /// Whether [`Policy::backfill_pass`] does anything (the engine skips its cadence otherwise).
    fn has_backfill(&self) -> bool {
        false
    }

    /// Jobs in the queue, for reports and checks.
    fn queued(&self) -> usize;

    /// MIG layout changes decided in the last pass (only `dynamic-mig` makes
    /// any). The engine applies each one between passes: the GPU, which
    /// must be idle, is out of service for the cluster's reconfiguration delay.
    fn take_mig_reconfigs(&mut self) -> Vec<MigReconfig> {
        Vec::new()
    }

    /// A policy that cannot go on (a policy of one's own raised an error,
    /// or made a decision its checks refused) says why here; the engine
    /// asks after every pass and stops the run with
    /// `EngineError::Policy`. gresim's own policies never fail.
    fn take_failure(&mut self) -> Option<String> {
        None
    }

    /// Counters of the passes run so far, for benchmarks. Decision-neutral.
    fn stats(&self) -> PassStats {
        PassStats::default()
    }
}

/// What a policy's passes did, for benchmarks and reports; counting never
/// changes a decision. Policies without counters report zeros.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Main passes run.
    pub main_passes: u64,
    /// Backfill passes run (`slurm`: the backfill pass; `easy` and
    /// `conservative`: main passes, which is where they plan).
    pub backfill_passes: u64,
    /// Jobs tested by those passes (`slurm`: the records a pass looked at
    /// past its limit checks, the jobs `bf_max_job_test` counts (those that
    /// reached a try) among them, less those in `tentative`;
    /// `easy`/`conservative`: jobs planned or tried).
    pub tested: u64,
    /// Most jobs tested by one backfill pass.
    pub tested_max: u64,
    /// `slurm`: records a backfill pass looked at past a point where
    /// `bf_max_job_test` may have been reached, and which it never had to
    /// settle (each only waited, and no later record could start or change
    /// anything): Slurm's pass looked at some of them. Not in `tested`.
    pub tentative: u64,
    /// Queued jobs at the start of each backfill pass, summed (divide by
    /// `backfill_passes` for the mean).
    pub queued_sum: u64,
    /// Most queued jobs at the start of a backfill pass.
    pub queued_max: u64,
}

impl PassStats {
    /// Counts one backfill pass that began with `queued` jobs queued and
    /// tested `tested` of them.
    pub fn add_backfill_pass(&mut self, queued: usize, tested: u64) {
        self.backfill_passes += 1;
        self.tested += tested;
        self.tested_max = self.tested_max.max(tested);
        self.queued_sum += queued as u64;
        self.queued_max = self.queued_max.max(queued as u64);
    }
}
