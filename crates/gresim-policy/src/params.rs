//! Slurm's scheduler settings (`slurm.conf`'s SchedulerParameters and
//! friends), read by the policies and by the engine's cadence.

use gresim_model::job::Time;

/// What kills a preempted job whose grace time is over (docs/preemption.md,
/// "The end of a grace time").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GraceKill {
    /// Slurm 22.05: the grace time only lowers the job's end time
    /// (`_job_check_grace_internal()` in src/slurmctld/preempt.c); the job
    /// is killed by the first call of `slurm_job_preempt()` that finds that
    /// time passed: a preemption attempt for it (a waiting preemptor's,
    /// every KillWait + MessageTimeout) or the time-limit check
    /// (`job_time_limit()`, every `timelimit_check_interval` s from
    /// `ctld_phase`).
    #[default]
    Checked,
    /// Exactly at the end of the grace time (gresim before it modelled
    /// Slurm's checks; not Slurm's behaviour).
    AtEnd,
}

impl std::str::FromStr for GraceKill {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "checked" => Ok(GraceKill::Checked),
            "at-end" | "at_end" => Ok(GraceKill::AtEnd),
            _ => Err(format!(
                "unknown grace kill `{s}`: expected checked or at-end"
            )),
        }
    }
}

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
    /// Seconds a preempted job's kill stays COMPLETING (its resources held,
    /// the preemptor waiting with reason Resources) before slurmd reports it
    /// done and slurmctld schedules again (`_slurm_rpc_epilog_complete()`).
    /// A requeued preemptee's begin time counts from then. 0 frees them at
    /// once.
    pub preempt_completing: u64,
    /// What kills a preempted job once its grace time is over
    /// ([`GraceKill`]; Slurm's way by default).
    pub grace_kill: GraceKill,
    /// slurm.conf `KillWait` (30 s by default): slurmd waits `MAX(KillWait,
    /// 5)` seconds between SIGTERM and SIGKILL when it ends a job, so a job
    /// whose program ignores SIGTERM stays COMPLETING that much longer
    /// ([`gresim_model::job::JobBehavior::ignores_sigterm`]).
    pub kill_wait: u64,
    /// slurm.conf `ResvOverRun`, in seconds (0 by default): how long after
    /// its reservation ends a job running in it may go on before the
    /// time-limit check ends it (`job_time_limit()`; a `FLEX` reservation's
    /// jobs run to their own limit).
    pub resv_over_run: u64,
    /// Seconds between `scancel --batch --signal` killing a job's batch
    /// shell and the job's end (slurmd reaping what the shell left). 0 ends
    /// it at once.
    pub signal_exit_delay: u64,
    /// SchedulerParameters=enable_user_top: users may `scontrol top` their
    /// own jobs (otherwise only operators may).
    pub enable_user_top: bool,
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
    /// Until `main_after_ends_from`, the main pass of a second runs just
    /// after backfill's and before the jobs backfill started end (the main
    /// loop starts a few milliseconds behind the backfill loop and drifts
    /// later), instead of first in the second. Off by default; the
    /// conformance cases turn it on (docs/slurm-fidelity.md, "The main
    /// pass just after backfill").
    pub main_after_backfill: bool,
    /// `PriorityCalcPeriod` in seconds (default 5 minutes): how often the
    /// priority plugin runs down running jobs' TRES-minutes and decays usage.
    pub priority_calc_period: u64,
    /// When the first priority calculation runs, modulo the period
    /// (slurmctld starts its decay thread when it starts).
    pub decay_phase: u64,
    /// `bf_window` in seconds.
    pub bf_window: u64,
    /// `bf_resolution` in seconds.
    pub bf_resolution: u64,
    /// `bf_max_job_test`: jobs per backfill pass that reach a try
    /// (Slurm's `bf_last_depth_try`).
    pub bf_max_job_test: u32,
    /// `max_switch_wait` in seconds (default 300): the longest a job's
    /// `--switches=N@time` may wait (job_mgr.c `_max_switch_wait()`).
    pub max_switch_wait: u64,
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
    pub priority: crate::priority::PriorityConfig,
    /// PreemptType, PreemptMode, PreemptExemptTime and the `preempt_*`
    /// SchedulerParameters; the default preempts nothing.
    pub preempt: gresim_model::preempt::PreemptConfig,
    /// `SchedulerTimeSlice` in seconds: how long the jobs of a partition
    /// with `OverSubscribe=FORCE:N` (N > 1) run before the gang scheduler
    /// lets the next ones run on their cores (with PreemptMode GANG;
    /// docs/preemption.md, "Gang time-slicing"). Slurm's default is 30.
    pub time_slice: u64,
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
            preempt_completing: 0,
            grace_kill: GraceKill::Checked,
            kill_wait: SchedParams::DEFAULT_KILL_WAIT,
            resv_over_run: 0,
            signal_exit_delay: 0,
            enable_user_top: false,
            main_after_ends_from: None,
            main_after_backfill: false,
            priority_calc_period: 300,
            decay_phase: 0,
            bf_window: 1440 * 60,
            bf_resolution: 60,
            bf_max_job_test: 500,
            max_switch_wait: 300,
            bf_will_run_window: 30,
            bf_epoch_phase: 0,
            kill_invalid_depend: false,
            priority: crate::priority::PriorityConfig::Basic,
            preempt: gresim_model::preempt::PreemptConfig::new(),
            time_slice: 30,
        }
    }
}

impl SchedParams {
    /// slurm.conf's default `KillWait`, seconds.
    pub const DEFAULT_KILL_WAIT: u64 = 30;
    /// slurm.conf's default `MessageTimeout`, seconds.
    pub const DEFAULT_MESSAGE_TIMEOUT: u64 = 10;

    /// Sets `KillWait`, and with it how long a preemptor waits before it
    /// preempts again (`kill_pending`: KillWait + MessageTimeout).
    pub fn set_kill_wait(&mut self, kill_wait: u64, message_timeout: u64) {
        self.kill_wait = kill_wait;
        self.preempt.kill_pending_wait = kill_wait + message_timeout;
    }

    /// Whether `part` has rows, so that its jobs may share cores:
    /// `OverSubscribe=FORCE:N` or `YES:N` with N > 1 (`num_rows` of
    /// cons_common). Which of its jobs do is [`SchedParams::row_sharing`].
    /// They run at once unless the gang scheduler time-slices them
    /// ([`SchedParams::time_sliced`]).
    #[inline]
    pub fn shares_cores(&self, part: &gresim_model::Partition) -> bool {
        part.oversubscribe > 1
    }

    /// Whether a job of `part` with request `req` goes on to the
    /// partition's rows when no idle cores are left (test 4 of
    /// `_job_test()`): the partition has rows, and the job is
    /// `NODE_CR_AVAILABLE` (`FORCE`, or `YES` and `--oversubscribe`;
    /// `_get_job_node_req()`) or PreemptMode has GANG, under which a
    /// `NODE_CR_ONE_ROW` job tries the rows too.
    #[inline]
    pub fn row_sharing(
        &self,
        part: &gresim_model::Partition,
        req: &gresim_model::job::JobRequest,
    ) -> bool {
        self.shares_cores(part) && (part.force || req.oversubscribe || self.preempt.mode.gang)
    }

    /// Whether the gang scheduler time-slices the jobs of `part`:
    /// PreemptMode has GANG and the partition lets more than one job use a
    /// core (`OverSubscribe=FORCE:N` or `YES:N`, N > 1).
    #[inline]
    pub fn time_sliced(&self, part: &gresim_model::Partition) -> bool {
        self.preempt.mode.gang && part.oversubscribe > 1
    }

    /// How much longer than the kill of a job that exits on SIGTERM the kill
    /// of `behavior`'s job takes: slurmd's `MAX(KillWait, 5)` seconds between
    /// SIGTERM and SIGKILL (`_rpc_terminate_job()`), for a program that
    /// ignores SIGTERM; nothing otherwise.
    pub fn sigterm_wait(&self, behavior: &gresim_model::job::JobBehavior) -> u64 {
        if behavior.ignores_sigterm {
            self.kill_wait.max(5)
        } else {
            0
        }
    }
}
