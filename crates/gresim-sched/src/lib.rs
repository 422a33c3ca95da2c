//! Schedulers for gresim.
//!
//! The engine drives a scheduler only through the [`Policy`] trait: it tells
//! the policy which jobs are queued and asks it to run its main and backfill
//! passes. A pass reads the cluster and the job table and starts jobs through
//! [`PassCtx::start`], which does the resource accounting.
//!
//! Node and GPU choice ([`select`]) and queue order ([`queue`]) are shared by
//! every policy.

pub mod backfill;
mod bf_map;
pub mod classic;
pub mod cons_tres;
pub mod dynamic_mig;
pub mod fifo;
pub mod placement;
pub mod priority;
pub mod queue;
pub mod select;
pub mod shares;

use gresim_model::job::{Job, JobSpec, Time};
use gresim_model::slurm_time::Seconds;
use gresim_model::{Allocation, Cluster, ClusterState, JobIdx, PartId, Reason};

pub use fifo::Fifo;

/// Slurm settings the schedulers and the engine honour. Defaults are Slurm's.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedParams {
    /// `sched_interval` in seconds: period of the full main pass.
    pub sched_interval: u64,
    /// `bf_interval` in seconds: period of the backfill pass.
    pub bf_interval: u64,
    /// Run a main pass right after a job is submitted.
    pub pass_on_submit: bool,
    /// Run a main pass right after a job ends.
    pub pass_on_end: bool,
    /// Period of the time-limit check (Slurm's PERIODIC_TIMEOUT, 30 s). 0 kills exactly at the limit.
    pub timelimit_check_interval: u64,
    /// Offset of the controller's periodic work (the recording's `ctld_start`).
    pub ctld_phase: u64,
    /// `DefMemPerCPU` in MiB; `None` means a job without a memory option takes the whole node.
    pub def_mem_per_cpu: Option<u64>,
    /// `JobRequeue`: whether jobs without `--requeue`/`--no-requeue` are requeued on node failure.
    pub job_requeue: bool,
    /// AuthInfo `cred_expire`: a requeued job is eligible again `cred_expire + 1` s later.
    pub cred_expire: u64,
    /// Seconds a job killed while running (`scancel`) stays COMPLETING:
    /// its nodes take no new job (`cg_node_bitmap`) and jobs depending on
    /// it wait (`IS_JOB_COMPLETED`) until slurmd reports the kill done.
    /// 0 frees them at once.
    pub kill_completing: u64,
    /// Seconds between `scontrol requeue` of a running job and slurmd
    /// reporting the kill done (`batch_requeue_fini()`), which is when
    /// Slurm sets the job's begin time to `now + cred_expire + 1`. 0 counts
    /// from the requeue itself. A requeue by node failure has no such wait.
    pub requeue_completing: u64,
    /// From this time on, the main pass of a second runs after the jobs
    /// that backfill started end in that second, so the jobs the main pass
    /// starts from then on end after the main pass of their last second. slurmctld's main
    /// loop (`_slurmctld_background()`: ten 0.1-s sleeps plus its work) drifts
    /// later against the backfill loop (one 1-s sleep), so with 1-s loops the
    /// main pass starts just behind backfill and falls behind the ends of the
    /// jobs backfill started after a while (docs/slurm-fidelity.md). Before
    /// this time, and with `None`, every job ends before the next second's
    /// passes.
    pub main_after_ends_from: Option<Time>,
    /// `bf_window` in seconds.
    pub bf_window: u64,
    /// `bf_resolution` in seconds.
    pub bf_resolution: u64,
    /// `bf_max_job_test`.
    pub bf_max_job_test: u32,
    /// `_will_run_test()`'s grouping of running jobs' planned ends, in
    /// seconds (Slurm's fixed `time_window` of 30): backfill releases the
    /// jobs ending up to 30 s past the first end rounded up to a multiple of
    /// 30 s, tests, then doubles the reach. 0 tests after every end.
    pub bf_will_run_window: u64,
    /// Wall-clock second of simulated time 0, modulo `bf_will_run_window`
    /// (Slurm aligns the groups on epoch time).
    pub bf_epoch_phase: u64,
    /// DependencyParameters=kill_invalid_depend: cancel a job whose dependency can never be met.
    pub kill_invalid_depend: bool,
    /// PriorityType and its weights.
    pub priority: priority::PriorityConfig,
}

impl Default for SchedParams {
    fn default() -> Self {
        SchedParams {
            sched_interval: 60,
            bf_interval: 30,
            pass_on_submit: true,
            pass_on_end: true,
            timelimit_check_interval: 30,
            ctld_phase: 0,
            def_mem_per_cpu: None,
            job_requeue: true,
            cred_expire: 120,
            kill_completing: 0,
            requeue_completing: 0,
            main_after_ends_from: None,
            bf_window: 1440 * 60,
            bf_resolution: 60,
            bf_max_job_test: 500,
            bf_will_run_window: 30,
            bf_epoch_phase: 0,
            kill_invalid_depend: false,
            priority: priority::PriorityConfig::Basic,
        }
    }
}

/// A job the policy started in this pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub job: JobIdx,
    pub partition: PartId,
    pub alloc: Allocation,
    /// Which pass started it.
    pub by_backfill: bool,
}

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
    /// Jobs started in this pass, in start order.
    pub started: Vec<Start>,
    /// Reason changes decided in this pass.
    pub reasons: Vec<(JobIdx, Reason, Option<String>)>,
}

impl<'a> PassCtx<'a> {
    /// Starts `job` on `alloc`. Fails, changing nothing, if the allocation
    /// conflicts with what is already allocated (a policy bug).
    pub fn start(
        &mut self,
        job: JobIdx,
        partition: PartId,
        alloc: Allocation,
        by_backfill: bool,
    ) -> Result<(), gresim_model::state::AllocError> {
        self.state.allocate(self.cluster, &alloc)?;
        self.started.push(Start {
            job,
            partition,
            alloc,
            by_backfill,
        });
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

/// The priority of `job`'s queue record in `part`: the engine's FIFO value
/// under priority/basic, the multifactor sum otherwise (0 while held).
pub fn record_priority(
    cluster: &Cluster,
    params: &SchedParams,
    specs: &[JobSpec],
    job: &Job,
    part: PartId,
) -> u32 {
    match &params.priority {
        priority::PriorityConfig::Basic => job.priority,
        priority::PriorityConfig::Multifactor(m) => {
            if job.priority == 0 {
                0
            } else {
                m.priority(
                    cluster,
                    job,
                    part,
                    job.eligible.unwrap_or(job.submit),
                    specs[job.sub as usize].nice,
                )
            }
        }
    }
}

/// The time limit a job gets in a partition (its `--time`, else the partition's DefaultTime).
pub fn time_limit_in(cluster: &Cluster, job: &Job, part: PartId) -> Option<Seconds> {
    match job.request.time_limit {
        Some(l) => l,
        None => cluster.partition(part).effective_default_time(),
    }
}

/// What a policy may read when a job joins its queue.
pub struct EnqueueCtx<'a> {
    pub cluster: &'a Cluster,
    pub params: &'a SchedParams,
    pub jobs: &'a [Job],
    pub specs: &'a [JobSpec],
}

/// A scheduling policy. The engine knows schedulers only through this trait.
pub trait Policy: Send {
    /// The policy's name, as `--policy` and reports spell it.
    fn name(&self) -> &'static str;

    /// `job` became eligible: it joins the queue. Returns whether it is "top
    /// priority" (Slurm's `_top_priority()`): no queued job ahead of it in a
    /// partition that shares nodes with its own. A job submitted behind others
    /// gets reason Priority at once.
    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool;

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
    /// Jobs tested by those passes (`slurm`: counted against
    /// `bf_max_job_test`; `easy`/`conservative`: jobs planned or tried).
    pub tested: u64,
    /// Most jobs tested by one backfill pass.
    pub tested_max: u64,
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

/// A policy's request to repartition a dynamic MIG GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigReconfig {
    /// Index into [`gresim_model::mig_dynamic::DynamicMig::gpus`].
    pub gpu: usize,
    /// The new layout; it must be legal for the GPU's model.
    pub to: gresim_model::mig_dynamic::MigLayout,
}

/// Clears per-thread caches of node evaluations; call before a run on a new cluster.
pub fn reset_caches() {
    cons_tres::reset_eval_cache();
}

/// The names [`policy_by_name`] knows.
pub const POLICY_NAMES: &[&str] = &[
    "slurm",
    "fifo",
    "first-fit",
    "best-fit",
    "spread",
    "topology-aware",
    "dynamic-mig",
    "strict-fifo",
    "easy",
    "conservative",
];

/// Builds a policy by name.
pub fn policy_by_name(name: &str) -> Option<Box<dyn Policy>> {
    match name {
        "slurm" => Some(Box::new(Fifo::with_backfill())),
        "fifo" => Some(Box::new(Fifo::new())),
        "first-fit" => Some(Box::new(Fifo::with_placement(
            placement::Placement::FirstFit,
        ))),
        "best-fit" => Some(Box::new(Fifo::with_placement(
            placement::Placement::BestFit,
        ))),
        "spread" => Some(Box::new(Fifo::with_placement(placement::Placement::Spread))),
        "topology-aware" => Some(Box::new(Fifo::with_placement(
            placement::Placement::TopologyAware,
        ))),
        "strict-fifo" => Some(Box::new(classic::Classic::new(
            classic::ClassicKind::StrictFifo,
        ))),
        "easy" => Some(Box::new(classic::Classic::new(classic::ClassicKind::Easy))),
        "conservative" => Some(Box::new(classic::Classic::new(
            classic::ClassicKind::Conservative,
        ))),
        "dynamic-mig" => Some(Box::new(dynamic_mig::DynamicMigPolicy::new())),
        _ => None,
    }
}
