//! gresim's discrete-event engine.
//!
//! The engine owns simulated time, the job table and the job lifecycle
//! (submission, eligibility, start, end, requeue, timed admin actions). It
//! knows schedulers only through [`gresim_policy::Policy`] (it depends on
//! `gresim-policy` and the model, not on `gresim-sched`). See
//! `docs/architecture.md` for the event-ordering contract.

pub mod event;
mod memo;
mod run;
mod runtime;

pub use run::{run, Engine};
pub use run::{run_with_progress, ProgressFn, PROGRESS_EVERY};

use gresim_model::job::{Job, JobSpec, Time};
use gresim_model::{Cluster, JobIdx, NodeId, Reason};
use gresim_policy::SchedParams;

/// An administrative action at a given time (`scontrol`-like).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `scontrol update State=DOWN`: running jobs are requeued or end NODE_FAIL.
    NodeDown(Vec<NodeId>),
    /// `State=RESUME` of a DOWN node.
    NodeUp(Vec<NodeId>),
    /// `State=DRAIN`: running jobs go on, no new ones start.
    NodeDrain(Vec<NodeId>),
    /// `State=RESUME` of a drained node.
    NodeResume(Vec<NodeId>),
    /// `scontrol hold` (admin) or `scontrol hold` by the user.
    Hold { sub: u32, admin: bool },
    /// `scontrol release`, by an administrator (`owner: false`) or by the
    /// job's owner, who cannot release an administrator's hold (Slurm
    /// answers "Access/permission denied" and nothing changes).
    Release { sub: u32, owner: bool },
    /// `scancel`.
    Cancel { sub: u32 },
    /// `scancel` with filters (`--state`, `--user`): the jobs named (every
    /// job when `subs` is `None`) that are in `state` (pending or running;
    /// any when `None`) and belong to `user` (anyone's when `None`).
    CancelWhere {
        subs: Option<Vec<u32>>,
        state: Option<gresim_model::JobState>,
        user: Option<std::sync::Arc<str>>,
    },
    /// `scancel --signal=SIG [--batch]`: a signal to a running job. Without
    /// `batch` it goes to the job's steps; gresim's jobs run their batch
    /// script only, so nothing changes. With `batch` the batch shell dies of
    /// it: the job ends FAILED with the signal as its exit code
    /// `signal_exit_delay` seconds later (the job's processes are reaped).
    Signal { sub: u32, signal: u8, batch: bool },
    /// `scontrol requeue`.
    Requeue { sub: u32 },
    /// `scontrol requeuehold [State=SpecialExit]`: the running job is killed
    /// and stays COMPLETING (its resources held) for `requeue_completing`
    /// seconds, then goes back to pending held by the user (JobHeldUser,
    /// whoever asked), or in SPECIAL_EXIT (held, no reason) with
    /// `special_exit`, until `release`.
    RequeueHold { sub: u32, special_exit: bool },
    /// `scontrol suspend`: the running job stops; it keeps its resources and
    /// its run time and time limit stop counting until [`Action::Resume`].
    Suspend { sub: u32 },
    /// `scontrol resume` of a suspended job.
    Resume { sub: u32 },
    /// `scontrol top`: the jobs go to the top of their owner's pending jobs
    /// in the same partition and association (Slurm's `_set_top()`). An
    /// `owner`'s request is refused unless SchedulerParameters has
    /// `enable_user_top`.
    Top { subs: Vec<u32>, owner: bool },
    /// `scontrol update JobId=`: one change of a job.
    Update { sub: u32, change: JobChange },
    /// `scontrol create reservation`: refused, changing nothing, as
    /// `create_resv()` refuses it (an existing name, an overlap without
    /// `OVERLAP`, nodes still held by running jobs at its start without
    /// `IGNORE_JOBS`, too few nodes for a node count).
    ResvCreate(Box<ResvRequest>),
    /// `scontrol update ReservationName=`: the fields given change
    /// (`update_resv()`), unless the result would be refused as a new one.
    ResvUpdate(Box<ResvChange>),
    /// `scontrol delete ReservationName=` (`delete_resv()`): refused while
    /// a job runs in it.
    ResvDelete(std::sync::Arc<str>),
    /// A hardware failure (from a failure model): the nodes go DOWN like
    /// [`Action::NodeDown`]; admin actions while they are failed take effect
    /// at the repair.
    NodeFail(Vec<NodeId>),
    /// The failed nodes are repaired and return to the state they had (or an
    /// admin set while they were failed): UP, DRAIN or DOWN.
    NodeRepair(Vec<NodeId>),
}

/// A reservation to create: its nodes, or a count of nodes to pick
/// (`NodeCnt=`, from `partition` when given) at its creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResvRequest {
    pub resv: gresim_model::reservation::Reservation,
    pub node_cnt: Option<u32>,
    pub partition: Option<gresim_model::PartId>,
}

/// What `scontrol update ReservationName=` changes (`None`: unchanged).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResvChange {
    pub name: std::sync::Arc<str>,
    pub start: Option<Time>,
    pub end: Option<Time>,
    /// `Duration=`: the end moves to start + duration.
    pub duration: Option<Time>,
    pub nodes: Option<Vec<NodeId>>,
    pub users: Option<Vec<std::sync::Arc<str>>>,
    pub accounts: Option<Vec<std::sync::Arc<str>>>,
    /// `Flags=`, with `PURGE_COMP`'s purge time when it sets one.
    pub flags: Option<(gresim_model::reservation::ResvFlags, Option<u64>)>,
}

/// A reservation admin action the engine refused, and why (Slurm's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResvRefusal {
    pub t: Time,
    pub name: String,
    pub error: String,
}

/// What `scontrol update JobId=` changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobChange {
    /// `TimeLimit=`: of a pending job, or of a running one (its kill moves;
    /// suspended time does not count). `None` is UNLIMITED.
    TimeLimit(Option<gresim_model::slurm_time::Seconds>),
    /// `Partition=` of a pending job.
    Partition(gresim_model::PartId),
    /// `Nice=`: under priority/basic the priority moves by the difference
    /// (at least 2), under multifactor the nice term changes.
    Nice(i32),
    /// `Dependency=` of a pending job (`None` clears it: the job is
    /// eligible from now).
    Dependency(Option<gresim_model::job::Dependency>),
    /// `NumNodes=min[-max]` of a pending job.
    NumNodes(u32, u32),
}

/// An action and when it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedAction {
    pub at: Time,
    pub action: Action,
}

/// A lazily generated stream of [`Action::NodeFail`] / [`Action::NodeRepair`]
/// actions in order of time (failures before repairs within a second). The
/// engine pulls one at a time, and stops pulling once the rest of the run
/// cannot be affected: nothing runs, nothing is failed, nothing else is due.
pub type FailureSource<'a> = Box<dyn Iterator<Item = TimedAction> + 'a>;

/// A change of a node's admin state, as the engine applied it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeChange {
    pub t: Time,
    pub node: NodeId,
    pub state: gresim_model::NodeAdminState,
    /// Caused by a failure model (a failure or its repair).
    pub failure: bool,
}

/// An error from the workload source while the run goes on (a bad line in a streamed trace).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

/// Errors that stop a run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The workload could not be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// Submissions must come in order of submit time.
    #[error("submission {index} ({key}) is submitted at {at}, before the previous one at {prev}: the workload must be sorted by submit time")]
    Unsorted {
        index: u32,
        key: String,
        at: Time,
        prev: Time,
    },
    /// A scheduler asked for resources that were not free: a bug.
    #[error("internal error: {0}")]
    Internal(String),
    /// A policy of one's own failed (`Policy::take_failure`): its error, or
    /// a decision its checks refused.
    #[error("policy {policy}: {msg}")]
    Policy { policy: String, msg: String },
}

/// The workload: submissions in order of submit time.
pub type JobSource<'a> = Box<dyn Iterator<Item = Result<JobSpec, SourceError>> + 'a>;

/// Everything a run needs besides the policy.
pub struct SimInput<'a> {
    pub cluster: Cluster,
    pub params: SchedParams,
    pub jobs: JobSource<'a>,
    pub actions: Vec<TimedAction>,
    /// Stop at this time even if jobs remain.
    pub horizon: Option<Time>,
    /// Stop once no job runs and nothing but the periodic passes and the
    /// decay thread has happened for this long (the conformance harness's
    /// `--stall`, after which it cancels what is left).
    pub stall: Option<Time>,
    /// Keep every job's pending-reason history (costs memory on big runs).
    pub record_reasons: bool,
    /// Random node failures and repairs (see [`FailureSource`]).
    pub failures: Option<FailureSource<'a>>,
    /// The reservations in force from the start (the scenario's
    /// `reservations`); timed actions create, change and delete others.
    pub reservations: gresim_model::reservation::Reservations,
}

/// The cluster's load at one instant (recorded whenever it changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub t: Time,
    pub alloc_gpus: u32,
    /// Allocated GPU compute in sevenths of a GPU (MIG slices weigh less).
    pub alloc_gpu_sevenths: u32,
    pub alloc_cpus: u32,
    /// GPUs on nodes that are not DOWN.
    pub avail_gpus: u32,
    pub running: u32,
    pub pending: u32,
}

/// Time integrals of allocated and available resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage {
    /// Allocated device-seconds per GPU type (index: `GpuTypeId`).
    pub gpu_alloc_secs: Vec<u128>,
    /// Available (not DOWN) device-seconds per GPU type.
    pub gpu_avail_secs: Vec<u128>,
    /// Allocated GPU compute-seconds in sevenths.
    pub gpu_sevenths_alloc_secs: u128,
    /// Available GPU compute-seconds in sevenths.
    pub gpu_sevenths_avail_secs: u128,
    pub cpu_alloc_secs: u128,
    pub cpu_avail_secs: u128,
    /// Integration window.
    pub from: Time,
    pub to: Time,
}

/// One pending-reason change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasonChange {
    pub t: Time,
    pub reason: Reason,
    pub desc: Option<String>,
}

/// A change of a job's priority ([`gresim_model::Job::priority`]) after
/// its submission: a hold or release, `scontrol update Priority=`/`Nice=`,
/// `scontrol top`. What same-QOS preemption (`WITHIN`) compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PriorityChange {
    pub t: Time,
    pub job: JobIdx,
    pub from: u32,
    pub to: u32,
}

/// The outcome of a run.
#[derive(Debug)]
pub struct SimOutput {
    pub cluster: Cluster,
    pub params: SchedParams,
    pub policy: String,
    pub specs: Vec<JobSpec>,
    pub jobs: Vec<Job>,
    /// Per job, its reason history (when recorded).
    pub reasons: Option<Vec<Vec<ReasonChange>>>,
    pub timeline: Vec<Sample>,
    pub usage: Usage,
    /// Time of the last event.
    pub end_time: Time,
    /// Events processed.
    pub events: u64,
    /// Whether the horizon stopped the run.
    pub hit_horizon: bool,
    /// Every change of a node's admin state, in the order applied.
    pub node_log: Vec<NodeChange>,
    /// Per node: how many times a failure model took it down.
    pub node_failures: Vec<u32>,
    /// The policy's pass counters ([`gresim_policy::Policy::stats`]).
    pub pass_stats: gresim_policy::PassStats,
    /// Association and QOS usage at the end, with accounting (`sim sshare`).
    pub acct: Option<gresim_model::accounting::AcctUsage>,
    /// Every association's fair-share factor as the decay thread computed
    /// it, sampled at most once an hour (accounting with priority/multifactor).
    pub fairshare_log: Vec<(Time, Vec<f64>)>,
    /// The reservations after each change (creation, update, deletion, the
    /// end of a window), from the start: empty when there were none.
    pub resv_history: Vec<(Time, gresim_model::reservation::Reservations)>,
    /// Reservation actions refused.
    pub resv_refused: Vec<ResvRefusal>,
    /// Every change of a job's priority, in the order applied; recorded
    /// (`Some`) only where same-QOS preemption can compare priorities
    /// ([`gresim_model::preempt::PreemptConfig::same_qos`]).
    pub priority_log: Option<Vec<PriorityChange>>,
}

impl SimOutput {
    /// The reservations in force at `t` (the last change at or before it).
    pub fn reservations_at(&self, t: Time) -> Option<&gresim_model::reservation::Reservations> {
        let i = self.resv_history.partition_point(|(at, _)| *at <= t);
        i.checked_sub(1).map(|i| &self.resv_history[i].1)
    }

    pub fn job(&self, idx: JobIdx) -> &Job {
        &self.jobs[idx.idx()]
    }
}
