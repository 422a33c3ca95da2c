//! Job requests in Slurm's vocabulary, and the states and reasons a job goes through.

use std::sync::Arc;

use crate::ids::{GpuTypeId, NodeId, PartId};
use crate::slurm_time::Seconds;

/// Simulated time in whole seconds since the scenario's t0 (Slurm keeps whole seconds).
pub type Time = u64;

/// A GPU count, optionally restricted to one GRES type (`gpu:a100:4` vs `gpu:4`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuReq {
    pub ty: Option<GpuTypeId>,
    pub count: u32,
}

/// How the job asked for memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemReq {
    /// No memory option: DefMemPerCPU if configured, else the whole node's memory.
    #[default]
    Default,
    /// `--mem=N` (MiB per node). `--mem=0` is [`MemReq::WholeNode`].
    PerNode(u64),
    /// `--mem-per-cpu`.
    PerCpu(u64),
    /// `--mem-per-gpu`.
    PerGpu(u64),
    /// `--mem=0`: all memory of each node.
    WholeNode,
}

/// The resources a job asks for, already resolved against the cluster's names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRequest {
    /// `-N min[-max]`.
    pub min_nodes: u32,
    pub max_nodes: u32,
    /// The job gave no maximum node count (`-n N` or `--gpus` without `-N`;
    /// Slurm's job details `max_nodes = 0`): the selection aims at
    /// `min_nodes` (Slurm's `req_nodes`), with `max_nodes` only a bound.
    pub max_nodes_open: bool,
    /// `-n`; `None` when not given (then one task per node, or ntasks-per-node × nodes).
    pub ntasks: Option<u32>,
    pub ntasks_per_node: Option<u32>,
    /// `-c`.
    pub cpus_per_task: u32,
    pub mem: MemReq,
    /// `--gres=gpu[:type]:N` and `--gpus-per-node`, per node. At most one untyped entry.
    pub gpus_per_node: Vec<GpuReq>,
    /// `--gpus` (`-G`), for the whole job.
    pub gpus_per_job: Option<GpuReq>,
    /// `--gpus-per-task`.
    pub gpus_per_task: Option<GpuReq>,
    /// `--cpus-per-gpu`.
    pub cpus_per_gpu: Option<u32>,
    /// `--time`; `None` takes the partition's DefaultTime. `Some(None)` is UNLIMITED.
    pub time_limit: Option<Option<Seconds>>,
    /// `-p a,b`; empty means the default partition.
    pub partitions: Vec<PartId>,
    /// `-w`.
    pub nodelist: Vec<NodeId>,
    /// `-x`.
    pub exclude: Vec<NodeId>,
    /// `-C` as a plain AND of features.
    pub features: Vec<String>,
    pub exclusive: bool,
    /// `--oversubscribe` (`-s`): the job may share cores with other jobs
    /// where its partition allows it (`OverSubscribe=YES:N`; Slurm's
    /// `share_res`).
    pub oversubscribe: bool,
    /// `--gres=shard:N` / `--gres=mps:N`: shares of one GPU per node
    /// (crate::shares). Never together with a `gpu` request.
    pub shared: Option<crate::shares::SharedReq>,
    /// `--switches=N[@max-time]` (Slurm's `req_switch` and `wait4switch`):
    /// honoured only under TopologyPlugin=topology/tree.
    pub switches: Option<SwitchReq>,
    /// `--segment=N` (Slurm 24.05+, beyond 22.05: `segment_size`): under
    /// TopologyPlugin=topology/block the job's nodes come in segments of N,
    /// each inside one base block. `None` when not given (or 0).
    pub segment: Option<u32>,
}

/// `--switches=count[@max-time]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchReq {
    /// The most leaf switches the allocation may span.
    pub count: u32,
    /// How long the job waits for that, seconds (`None`: not given, which
    /// Slurm takes as INFINITE). Capped at submission by
    /// `SchedulerParameters=max_switch_wait` (job_mgr.c `_max_switch_wait()`).
    pub wait: Option<u64>,
}

impl Default for JobRequest {
    fn default() -> Self {
        JobRequest {
            min_nodes: 1,
            max_nodes: 1,
            max_nodes_open: false,
            ntasks: None,
            ntasks_per_node: None,
            cpus_per_task: 1,
            mem: MemReq::Default,
            gpus_per_node: Vec::new(),
            gpus_per_job: None,
            gpus_per_task: None,
            cpus_per_gpu: None,
            time_limit: None,
            partitions: Vec::new(),
            nodelist: Vec::new(),
            exclude: Vec::new(),
            features: Vec::new(),
            exclusive: false,
            oversubscribe: false,
            shared: None,
            switches: None,
            segment: None,
        }
    }
}

impl JobRequest {
    /// True when the job asks for any GPU at all.
    pub fn wants_gpus(&self) -> bool {
        !self.gpus_per_node.is_empty()
            || self.gpus_per_job.is_some()
            || self.gpus_per_task.is_some()
    }

    /// True when `self` and `other` ask for the same resources: equal in
    /// every field but `time_limit`. Jobs of one shape get the same answer
    /// from every question that ignores time (whether they can ever run,
    /// which nodes fit them now), which is what caches key on.
    pub fn same_shape(&self, other: &JobRequest) -> bool {
        // Every field is named, so a new field fails to compile here until
        // it is added to the comparison (and to `shape_hash`).
        let JobRequest {
            min_nodes,
            max_nodes,
            max_nodes_open,
            ntasks,
            ntasks_per_node,
            cpus_per_task,
            mem,
            gpus_per_node,
            gpus_per_job,
            gpus_per_task,
            cpus_per_gpu,
            time_limit: _,
            partitions,
            nodelist,
            exclude,
            features,
            exclusive,
            oversubscribe,
            shared,
            switches,
            segment,
        } = self;
        *min_nodes == other.min_nodes
            && *max_nodes == other.max_nodes
            && *max_nodes_open == other.max_nodes_open
            && *ntasks == other.ntasks
            && *ntasks_per_node == other.ntasks_per_node
            && *cpus_per_task == other.cpus_per_task
            && *mem == other.mem
            && *gpus_per_node == other.gpus_per_node
            && *gpus_per_job == other.gpus_per_job
            && *gpus_per_task == other.gpus_per_task
            && *cpus_per_gpu == other.cpus_per_gpu
            && *partitions == other.partitions
            && *nodelist == other.nodelist
            && *exclude == other.exclude
            && *features == other.features
            && *exclusive == other.exclusive
            && *oversubscribe == other.oversubscribe
            && *shared == other.shared
            && *switches == other.switches
            && *segment == other.segment
    }

    /// A hash of the fields [`JobRequest::same_shape`] compares (a cache
    /// index only: equal shapes hash equally, and a lookup still checks
    /// `same_shape`). Deterministic: FNV-1a over the values.
    pub fn shape_hash(&self) -> u64 {
        let JobRequest {
            min_nodes,
            max_nodes,
            max_nodes_open,
            ntasks,
            ntasks_per_node,
            cpus_per_task,
            mem,
            gpus_per_node,
            gpus_per_job,
            gpus_per_task,
            cpus_per_gpu,
            time_limit: _,
            partitions,
            nodelist,
            exclude,
            features,
            exclusive,
            oversubscribe,
            shared,
            switches,
            segment,
        } = self;
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut mix = |v: u64| {
            h ^= v;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        };
        let opt = |o: Option<u32>| o.map_or(u64::MAX, u64::from);
        let gpu =
            |g: &GpuReq| (u64::from(g.ty.map_or(u16::MAX, |t| t.0)) << 32) | u64::from(g.count);
        mix(u64::from(*min_nodes));
        mix(u64::from(*max_nodes));
        mix(opt(*ntasks));
        mix(opt(*ntasks_per_node));
        mix(u64::from(*cpus_per_task));
        match *mem {
            MemReq::Default => mix(1),
            MemReq::PerNode(m) => {
                mix(2);
                mix(m)
            }
            MemReq::PerCpu(m) => {
                mix(3);
                mix(m)
            }
            MemReq::PerGpu(m) => {
                mix(4);
                mix(m)
            }
            MemReq::WholeNode => mix(5),
        }
        mix(gpus_per_node.len() as u64);
        for g in gpus_per_node {
            mix(gpu(g));
        }
        mix(gpus_per_job.as_ref().map_or(u64::MAX, gpu));
        mix(gpus_per_task.as_ref().map_or(u64::MAX, gpu));
        mix(opt(*cpus_per_gpu));
        mix(partitions.len() as u64);
        for p in partitions {
            mix(p.idx() as u64);
        }
        mix(nodelist.len() as u64);
        for n in nodelist {
            mix(n.idx() as u64);
        }
        mix(exclude.len() as u64);
        mix(features.len() as u64);
        mix(u64::from(*exclusive));
        if *oversubscribe {
            mix(0x05c);
        }
        mix(u64::from(*max_nodes_open));
        mix(shared.map_or(u64::MAX, |s| u64::from(s.per_node)));
        if let Some(sw) = switches {
            // Only when given, so every other request hashes as before.
            mix(u64::from(sw.count));
            mix(sw.wait.unwrap_or(u64::MAX));
        }
        if let Some(s) = segment {
            mix(u64::from(*s) | (1 << 40));
        }
        h
    }

    /// Total tasks for a given node count.
    pub fn total_tasks(&self, nodes: u32) -> u32 {
        match (self.ntasks, self.ntasks_per_node) {
            (Some(n), _) => n,
            (None, Some(tpn)) => tpn * nodes,
            (None, None) => nodes,
        }
    }
}

/// Dependency kinds (`--dependency`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DepKind {
    After,
    AfterAny,
    AfterOk,
    AfterNotOk,
    Singleton,
}

impl DepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DepKind::After => "after",
            DepKind::AfterAny => "afterany",
            DepKind::AfterOk => "afterok",
            DepKind::AfterNotOk => "afternotok",
            DepKind::Singleton => "singleton",
        }
    }
}

/// One term of a dependency: a kind and the submission it waits on
/// (`None` for singleton). `task` narrows an array dependency to one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DepTerm {
    pub kind: DepKind,
    /// Index of the dependee submission in the workload.
    pub target: Option<u32>,
    pub task: Option<u32>,
}

/// `--dependency`: terms joined by `,` (all) or `?` (any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub terms: Vec<DepTerm>,
    pub any: bool,
}

/// A job array's index set and throttle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArraySpec {
    pub indices: Vec<u32>,
    /// `%N`: the most tasks that may run at once.
    pub throttle: Option<u32>,
    /// The step of the first `a-b:s` token, for SLURM_ARRAY_TASK_STEP.
    pub step: u32,
}

/// What a simulated job does once started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunTime {
    /// Runs this many seconds (then COMPLETED or FAILED by exit code, or TIMEOUT past the limit).
    Secs(Seconds),
    /// Runs until killed at its time limit.
    ToLimit,
}

/// A submission: one job, or one job array, as the user wrote it.
///
/// A run keeps one per submission for its whole length, so the fields most
/// submissions leave at their defaults (array, dependency, per-task run
/// times, rejection, admin requeue, program behaviour) live in one boxed
/// block that exists only when one of them is set; read them with
/// [`JobSpec::array`], [`JobSpec::dependency`] and the other accessors, set
/// them with the `set_` methods. `name` and `user` are shared strings: the
/// readers intern them ([`Names`]), so a million jobs of 50 users hold 50.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// The scenario's own name for the submission (used by dependencies).
    pub key: String,
    /// `--job-name`.
    pub name: Arc<str>,
    pub user: Arc<str>,
    pub request: Arc<JobRequest>,
    pub submit: Time,
    /// Run time; for arrays, the default for every task.
    pub run_time: RunTime,
    pub exit_code: i32,
    /// `--requeue` / `--no-requeue`; `None` takes the cluster's JobRequeue.
    pub requeue: Option<bool>,
    /// `--begin`.
    pub begin: Option<Time>,
    /// `--hold`.
    pub hold: bool,
    /// `--nice`.
    pub nice: i32,
    /// The job's communication profile: placement changes its run time
    /// (docs/topology.md). `None` keeps the run time as given.
    pub comm: Option<Arc<crate::comm::CommProfile>>,
    /// The rarely set fields; `None` while all of them have their defaults.
    rare: Option<Box<RareSpec>>,
}

/// The fields of a [`JobSpec`] most submissions leave at their defaults.
#[derive(Debug, Clone, PartialEq, Default)]
struct RareSpec {
    /// Per-task run times of an array, overriding `run_time`: (task index, run time).
    task_run_times: Vec<(u32, RunTime)>,
    array: Option<ArraySpec>,
    dependency: Option<Dependency>,
    /// Set when sbatch itself would refuse the submission (an unknown GPU
    /// type, say): the engine rejects it at submit with this message.
    reject: Option<String>,
    /// `scontrol requeue` this many seconds after the job's first start (an
    /// admin action tied to the job, as the conformance harness issues it).
    requeue_after_start: Option<u64>,
    /// What the job's program does that Slurm does not see: checkpoints,
    /// GPU memory, CPU fallback (docs/reliability.md).
    behavior: JobBehavior,
    /// The association and QOS the job runs under (with accounting).
    acct: Option<crate::accounting::JobAcct>,
    /// `--reservation=NAME`.
    reservation: Option<Arc<str>>,
}

/// The behaviour of a job whose spec sets none.
static DEFAULT_BEHAVIOR: JobBehavior = JobBehavior::DEFAULT;

/// Default seconds an out-of-memory run lasts before it fails.
pub const DEFAULT_OOM_AFTER: u64 = 30;

/// The program's side of a job, which Slurm neither sees nor manages.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobBehavior {
    /// The program saves a checkpoint every this many seconds of work; a
    /// restarted run resumes from the last one.
    pub checkpoint_interval: Option<u64>,
    /// Seconds a restarted run spends (loading the checkpoint, warming up)
    /// before useful work resumes. Only with `checkpoint_interval`.
    pub restart_overhead: u64,
    /// GPU memory the program needs per GPU, MiB. On a GPU or MIG slice with
    /// less, it fails with "CUDA out of memory".
    pub vram_mib: Option<u64>,
    /// How long a run that runs out of GPU memory lasts before it fails.
    pub oom_after: u64,
    /// The program expects a GPU but the job asked for none, so it runs on
    /// the CPU this many times slower (seed pitfall 1). `None`: no fallback.
    pub cpu_fallback_slowdown: Option<f64>,
    /// The program ignores SIGTERM. When Slurm ends the job (its time
    /// limit, `scancel`, preemption), slurmd sends SIGTERM and waits
    /// `MAX(KillWait, 5)` seconds before SIGKILL (`_rpc_terminate_job()`),
    /// so the job stays COMPLETING that much longer than one that exits on
    /// SIGTERM (docs/preemption.md, "Programs that ignore SIGTERM").
    pub ignores_sigterm: bool,
}

impl Default for JobBehavior {
    fn default() -> Self {
        JobBehavior::DEFAULT
    }
}

impl JobBehavior {
    /// A program with no checkpoints, no GPU memory need and no CPU fallback.
    pub const DEFAULT: JobBehavior = JobBehavior {
        checkpoint_interval: None,
        restart_overhead: 0,
        vram_mib: None,
        oom_after: DEFAULT_OOM_AFTER,
        cpu_fallback_slowdown: None,
        ignores_sigterm: false,
    };

    /// The seconds of run time `secs` of work takes on the CPU fallback.
    pub fn scaled(&self, secs: u64) -> u64 {
        match self.cpu_fallback_slowdown {
            Some(f) if f.is_finite() && f > 0.0 => {
                let v = (secs as f64 * f).ceil();
                if v >= u64::MAX as f64 {
                    u64::MAX / 4
                } else {
                    v as u64
                }
            }
            _ => secs,
        }
    }
}

impl JobSpec {
    /// A plain submission: one job, no dependency, exit code 0, the
    /// cluster's requeue default, default behaviour. Set the rest on the
    /// result.
    pub fn new(
        key: impl Into<String>,
        name: impl Into<Arc<str>>,
        user: impl Into<Arc<str>>,
        request: Arc<JobRequest>,
        submit: Time,
        run_time: RunTime,
    ) -> JobSpec {
        JobSpec {
            key: key.into(),
            name: name.into(),
            user: user.into(),
            request,
            submit,
            run_time,
            exit_code: 0,
            requeue: None,
            begin: None,
            hold: false,
            nice: 0,
            comm: None,
            rare: None,
        }
    }

    pub fn run_time_of(&self, task: Option<u32>) -> RunTime {
        if let Some(t) = task {
            if let Some((_, rt)) = self.task_run_times().iter().find(|(i, _)| *i == t) {
                return *rt;
            }
        }
        self.run_time
    }

    /// Per-task run times of an array, overriding `run_time`: (task index, run time).
    pub fn task_run_times(&self) -> &[(u32, RunTime)] {
        self.rare.as_ref().map_or(&[], |r| &r.task_run_times)
    }
    /// The job array's indices and throttle (`--array`), if it is one.
    pub fn array(&self) -> Option<&ArraySpec> {
        self.rare.as_ref().and_then(|r| r.array.as_ref())
    }
    /// How many jobs the submission makes: the array's tasks, else 1.
    pub fn task_count(&self) -> usize {
        self.array().map_or(1, |a| a.indices.len())
    }
    /// `--dependency`.
    pub fn dependency(&self) -> Option<&Dependency> {
        self.rare.as_ref().and_then(|r| r.dependency.as_ref())
    }
    /// Set when sbatch itself would refuse the submission (an unknown GPU
    /// type, say): the engine rejects it at submit with this message.
    pub fn reject(&self) -> Option<&str> {
        self.rare.as_ref().and_then(|r| r.reject.as_deref())
    }
    /// `scontrol requeue` this many seconds after the job's first start (an
    /// admin action tied to the job, as the conformance harness issues it).
    pub fn requeue_after_start(&self) -> Option<u64> {
        self.rare.as_ref().and_then(|r| r.requeue_after_start)
    }
    /// What the job's program does that Slurm does not see: checkpoints,
    /// GPU memory, CPU fallback (docs/reliability.md).
    pub fn behavior(&self) -> &JobBehavior {
        self.rare
            .as_ref()
            .map_or(&DEFAULT_BEHAVIOR, |r| &r.behavior)
    }

    pub fn set_task_run_times(&mut self, v: Vec<(u32, RunTime)>) {
        self.with_rare(|r| r.task_run_times = v);
    }
    pub fn set_array(&mut self, v: Option<ArraySpec>) {
        self.with_rare(|r| r.array = v);
    }
    pub fn set_dependency(&mut self, v: Option<Dependency>) {
        self.with_rare(|r| r.dependency = v);
    }
    /// The association and QOS the job runs under, when the cluster has accounting.
    pub fn acct(&self) -> Option<crate::accounting::JobAcct> {
        self.rare.as_ref().and_then(|r| r.acct)
    }
    pub fn set_acct(&mut self, v: Option<crate::accounting::JobAcct>) {
        self.with_rare(|r| r.acct = v);
    }
    /// `--reservation=NAME`: the job runs only inside that reservation.
    pub fn reservation(&self) -> Option<&str> {
        self.rare.as_ref().and_then(|r| r.reservation.as_deref())
    }
    pub fn set_reservation(&mut self, v: Option<Arc<str>>) {
        self.with_rare(|r| r.reservation = v);
    }
    pub fn set_reject(&mut self, v: Option<String>) {
        self.with_rare(|r| r.reject = v);
    }
    pub fn set_requeue_after_start(&mut self, v: Option<u64>) {
        self.with_rare(|r| r.requeue_after_start = v);
    }
    pub fn set_behavior(&mut self, v: JobBehavior) {
        self.with_rare(|r| r.behavior = v);
    }

    /// Changes the rare fields, keeping the block only while one of them
    /// differs from its default (so equal specs compare equal).
    fn with_rare(&mut self, f: impl FnOnce(&mut RareSpec)) {
        let r = self.rare.get_or_insert_with(Default::default);
        f(r);
        if **r == RareSpec::default() {
            self.rare = None;
        }
    }

    /// Replaces `name` and `user` by the copies in `names`, so that
    /// submissions with equal names share one string.
    pub fn intern_names(&mut self, names: &mut Names) {
        self.name = names.get(&self.name);
        self.user = names.get(&self.user);
    }
}

/// Interned strings (user and job names): one shared copy per distinct value.
#[derive(Debug, Clone, Default)]
pub struct Names {
    set: std::collections::BTreeSet<Arc<str>>,
}

impl Names {
    /// The shared copy of `s`, made on first use.
    pub fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.set.get(s) {
            return Arc::clone(a);
        }
        let a: Arc<str> = Arc::from(s);
        self.set.insert(Arc::clone(&a));
        a
    }
}

/// Slurm job states (base states; `squeue -t` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JobState {
    Pending,
    Running,
    Completed,
    Failed,
    Timeout,
    Cancelled,
    NodeFail,
    /// The state recorded for a run that ended in a requeue.
    Requeued,
    OutOfMemory,
    /// Refused at submission (sbatch printed an error; no job ran). Not a
    /// Slurm state: Slurm keeps such a record as FAILED with BadConstraints.
    Rejected,
    /// Ended by preemption (PreemptMode=CANCEL).
    Preempted,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Pending => "PENDING",
            JobState::Running => "RUNNING",
            JobState::Completed => "COMPLETED",
            JobState::Failed => "FAILED",
            JobState::Timeout => "TIMEOUT",
            JobState::Cancelled => "CANCELLED",
            JobState::NodeFail => "NODE_FAIL",
            JobState::Requeued => "REQUEUED",
            JobState::OutOfMemory => "OUT_OF_MEMORY",
            JobState::Rejected => "REJECTED",
            JobState::Preempted => "PREEMPTED",
        }
    }
    pub fn is_terminal(self) -> bool {
        !matches!(self, JobState::Pending | JobState::Running)
    }
    pub const ALL: [JobState; 11] = [
        JobState::Pending,
        JobState::Running,
        JobState::Completed,
        JobState::Failed,
        JobState::Timeout,
        JobState::Cancelled,
        JobState::NodeFail,
        JobState::Requeued,
        JobState::OutOfMemory,
        JobState::Rejected,
        JobState::Preempted,
    ];
}

/// Pending reasons, printed exactly as squeue prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    None,
    Priority,
    Resources,
    ReqNodeNotAvail,
    PartitionConfig,
    PartitionDown,
    PartitionInactive,
    PartitionNodeLimit,
    PartitionTimeLimit,
    JobArrayTaskLimit,
    Dependency,
    DependencyNeverSatisfied,
    BeginTime,
    JobHeldUser,
    JobHeldAdmin,
    BadConstraints,
    NodeDown,
    TimeLimit,
    NonZeroExitCode,
    /// A TRES limit of the job's association (or an ancestor's).
    AssocLimit(LimitKind, TresClass),
    /// A TRES limit of the job's QOS or partition QOS.
    QosLimit(LimitKind, TresClass),
    AssocGrpJobs,
    AssocMaxJobs,
    AssocGrpWall,
    AssocMaxWall,
    AssocGrpSubmitJobs,
    AssocMaxSubmitJobs,
    QosGrpJobs,
    QosMaxJobsPerUser,
    QosMaxJobsPerAccount,
    QosGrpWall,
    QosMaxWall,
    QosGrpSubmitJobs,
    QosMaxSubmitJobsPerUser,
    QosMaxSubmitJobsPerAccount,
    InvalidAccount,
    InvalidQos,
    /// `WAIT_RESERVATION`: the job's reservation has not begun, or the job
    /// cannot run beside the reservations (reservation.c, node_scheduler.c).
    Reservation,
}

/// Which TRES limit of an association or QOS holds a job (with the TRES
/// class, it names Slurm's reason: `QOSMaxGRESPerUser`, `AssocGrpCpuLimit` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LimitKind {
    Grp,
    GrpMins,
    GrpRunMins,
    MaxPerJob,
    MaxPerNode,
    MaxMinsPerJob,
    MaxPerUser,
    MaxPerAccount,
    MinPerJob,
}

/// The class of TRES a limit counts, as Slurm's reason strings name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TresClass {
    Cpu,
    Mem,
    Node,
    Billing,
    Gres,
    Unknown,
}

/// Slurm's reason string for a TRES limit (`job_reason_string()` of the
/// state `_get_tres_state_reason()` picks).
fn limit_str(qos: bool, k: LimitKind, c: TresClass) -> &'static str {
    use LimitKind as K;
    use TresClass as C;
    if !qos {
        return match (k, c) {
            (K::Grp, C::Cpu) => "AssocGrpCpuLimit",
            (K::Grp, C::Mem) => "AssocGrpMemLimit",
            (K::Grp, C::Node) => "AssocGrpNodeLimit",
            (K::Grp, C::Billing) => "AssocGrpBilling",
            (K::Grp, C::Gres) => "AssocGrpGRES",
            (K::Grp, C::Unknown) => "AssocGrpUnknown",
            (K::GrpMins, C::Cpu) => "AssocGrpCPUMinutesLimit",
            (K::GrpMins, C::Mem) => "AssocGrpMemMinutes",
            (K::GrpMins, C::Node) => "AssocGrpNodeMinutes",
            (K::GrpMins, C::Billing) => "AssocGrpBillingMinutes",
            (K::GrpMins, C::Gres) => "AssocGrpGRESMinutes",
            (K::GrpMins, C::Unknown) => "AssocGrpUnknownMinutes",
            (K::GrpRunMins, C::Cpu) => "AssocGrpCPURunMinutesLimit",
            (K::GrpRunMins, C::Mem) => "AssocGrpMemRunMinutes",
            (K::GrpRunMins, C::Node) => "AssocGrpNodeRunMinutes",
            (K::GrpRunMins, C::Billing) => "AssocGrpBillingRunMinutes",
            (K::GrpRunMins, C::Gres) => "AssocGrpGRESRunMinutes",
            (K::GrpRunMins, C::Unknown) => "AssocGrpUnknownRunMinutes",
            (K::MaxPerJob, C::Cpu) => "AssocMaxCpuPerJobLimit",
            (K::MaxPerJob, C::Mem) => "AssocMaxMemPerJob",
            (K::MaxPerJob, C::Node) => "AssocMaxNodePerJobLimit",
            (K::MaxPerJob, C::Billing) => "AssocMaxBillingPerJob",
            (K::MaxPerJob, C::Gres) => "AssocMaxGRESPerJob",
            (K::MaxPerJob, C::Unknown) => "AssocMaxUnknownPerJob",
            (K::MaxPerNode, C::Cpu) => "AssocMaxCpuPerNode",
            (K::MaxPerNode, C::Mem) => "AssocMaxMemPerNode",
            (K::MaxPerNode, C::Billing) => "AssocMaxBillingPerNode",
            (K::MaxPerNode, C::Gres) => "AssocMaxGRESPerNode",
            (K::MaxPerNode, _) => "AssocMaxUnknownPerNode",
            (K::MaxMinsPerJob, C::Cpu) => "AssocMaxCpuMinutesPerJobLimit",
            (K::MaxMinsPerJob, C::Mem) => "AssocMaxMemMinutesPerJob",
            (K::MaxMinsPerJob, C::Node) => "AssocMaxNodeMinutesPerJob",
            (K::MaxMinsPerJob, C::Billing) => "AssocMaxBillingMinutesPerJob",
            (K::MaxMinsPerJob, C::Gres) => "AssocMaxGRESMinutesPerJob",
            (K::MaxMinsPerJob, C::Unknown) => "AssocMaxUnknownMinutesPerJob",
            // Associations have no per-user, per-account or minimum TRES limits.
            (K::MaxPerUser | K::MaxPerAccount | K::MinPerJob, _) => "AssocMaxUnknownPerJob",
        };
    }
    match (k, c) {
        (K::Grp, C::Cpu) => "QOSGrpCpuLimit",
        (K::Grp, C::Mem) => "QOSGrpMemLimit",
        (K::Grp, C::Node) => "QOSGrpNodeLimit",
        (K::Grp, C::Billing) => "QOSGrpBilling",
        (K::Grp, C::Gres) => "QOSGrpGRES",
        (K::Grp, C::Unknown) => "QOSGrpUnknown",
        (K::GrpMins, C::Cpu) => "QOSGrpCPUMinutesLimit",
        (K::GrpMins, C::Mem) => "QOSGrpMemoryMinutes",
        (K::GrpMins, C::Node) => "QOSGrpNodeMinutes",
        (K::GrpMins, C::Billing) => "QOSGrpBillingMinutes",
        (K::GrpMins, C::Gres) => "QOSGrpGRESMinutes",
        (K::GrpMins, C::Unknown) => "QOSGrpUnknownMinutes",
        (K::GrpRunMins, C::Cpu) => "QOSGrpCPURunMinutesLimit",
        (K::GrpRunMins, C::Mem) => "QOSGrpMemoryRunMinutes",
        (K::GrpRunMins, C::Node) => "QOSGrpNodeRunMinutes",
        (K::GrpRunMins, C::Billing) => "QOSGrpBillingRunMinutes",
        (K::GrpRunMins, C::Gres) => "QOSGrpGRESRunMinutes",
        (K::GrpRunMins, C::Unknown) => "QOSGrpUnknownRunMinutes",
        (K::MaxPerJob, C::Cpu) => "QOSMaxCpuPerJobLimit",
        (K::MaxPerJob, C::Mem) => "QOSMaxMemoryPerJob",
        (K::MaxPerJob, C::Node) => "QOSMaxNodePerJobLimit",
        (K::MaxPerJob, C::Billing) => "QOSMaxBillingPerJob",
        (K::MaxPerJob, C::Gres) => "QOSMaxGRESPerJob",
        (K::MaxPerJob, C::Unknown) => "QOSMaxUnknownPerJob",
        (K::MaxPerNode, C::Cpu) => "QOSMaxCpuPerNode",
        (K::MaxPerNode, C::Mem) => "QOSMaxMemoryPerNode",
        (K::MaxPerNode, C::Billing) => "QOSMaxBillingPerNode",
        (K::MaxPerNode, C::Gres) => "QOSMaxGRESPerNode",
        (K::MaxPerNode, _) => "QOSMaxUnknownPerNode",
        (K::MaxMinsPerJob, C::Cpu) => "QOSMaxCpuMinutesPerJobLimit",
        (K::MaxMinsPerJob, C::Mem) => "QOSMaxMemoryMinutesPerJob",
        (K::MaxMinsPerJob, C::Node) => "QOSMaxNodeMinutesPerJob",
        (K::MaxMinsPerJob, C::Billing) => "QOSMaxBillingMinutesPerJob",
        (K::MaxMinsPerJob, C::Gres) => "QOSMaxGRESMinutesPerJob",
        (K::MaxMinsPerJob, C::Unknown) => "QOSMaxUnknownMinutesPerJob",
        (K::MaxPerUser, C::Cpu) => "QOSMaxCpuPerUserLimit",
        (K::MaxPerUser, C::Mem) => "QOSMaxMemoryPerUser",
        (K::MaxPerUser, C::Node) => "QOSMaxNodePerUserLimit",
        (K::MaxPerUser, C::Billing) => "QOSMaxBillingPerUser",
        (K::MaxPerUser, C::Gres) => "QOSMaxGRESPerUser",
        (K::MaxPerUser, C::Unknown) => "QOSMaxUnknownPerUser",
        (K::MaxPerAccount, C::Cpu) => "MaxCpuPerAccount",
        (K::MaxPerAccount, C::Mem) => "MaxMemoryPerAccount",
        (K::MaxPerAccount, C::Node) => "MaxNodePerAccount",
        (K::MaxPerAccount, C::Billing) => "MaxBillingPerAccount",
        (K::MaxPerAccount, C::Gres) => "MaxGRESPerAccount",
        (K::MaxPerAccount, C::Unknown) => "MaxUnknownPerAccount",
        (K::MinPerJob, C::Cpu) => "QOSMinCpuNotSatisfied",
        (K::MinPerJob, C::Mem) => "QOSMinMemory",
        (K::MinPerJob, C::Node) => "QOSMinNode",
        (K::MinPerJob, C::Billing) => "QOSMinBilling",
        (K::MinPerJob, C::Gres) => "QOSMinGRES",
        (K::MinPerJob, C::Unknown) => "QOSMinUnknown",
    }
}

impl Reason {
    /// Whether this is an accounting limit (Slurm's `acct_policy_job_runnable_state()` is false).
    pub fn is_acct_limit(self) -> bool {
        matches!(
            self,
            Reason::AssocLimit(..)
                | Reason::QosLimit(..)
                | Reason::AssocGrpJobs
                | Reason::AssocMaxJobs
                | Reason::AssocGrpWall
                | Reason::AssocMaxWall
                | Reason::AssocGrpSubmitJobs
                | Reason::AssocMaxSubmitJobs
                | Reason::QosGrpJobs
                | Reason::QosMaxJobsPerUser
                | Reason::QosMaxJobsPerAccount
                | Reason::QosGrpWall
                | Reason::QosMaxWall
                | Reason::QosGrpSubmitJobs
                | Reason::QosMaxSubmitJobsPerUser
                | Reason::QosMaxSubmitJobsPerAccount
        )
    }

    /// Whether the limit reads decayed usage (`GrpTRESMins`, `GrpWall`),
    /// which decay or a usage reset can lift with no job ending.
    pub fn reads_decayed_usage(self) -> bool {
        matches!(
            self,
            Reason::AssocLimit(LimitKind::GrpMins, _)
                | Reason::QosLimit(LimitKind::GrpMins, _)
                | Reason::AssocGrpWall
                | Reason::QosGrpWall
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::None => "None",
            Reason::Priority => "Priority",
            Reason::Resources => "Resources",
            Reason::ReqNodeNotAvail => "ReqNodeNotAvail",
            Reason::PartitionConfig => "PartitionConfig",
            Reason::PartitionDown => "PartitionDown",
            Reason::PartitionInactive => "PartitionInactive",
            Reason::PartitionNodeLimit => "PartitionNodeLimit",
            Reason::PartitionTimeLimit => "PartitionTimeLimit",
            Reason::JobArrayTaskLimit => "JobArrayTaskLimit",
            Reason::Dependency => "Dependency",
            Reason::DependencyNeverSatisfied => "DependencyNeverSatisfied",
            Reason::BeginTime => "BeginTime",
            Reason::JobHeldUser => "JobHeldUser",
            Reason::JobHeldAdmin => "JobHeldAdmin",
            Reason::BadConstraints => "BadConstraints",
            Reason::NodeDown => "NodeDown",
            Reason::TimeLimit => "TimeLimit",
            Reason::NonZeroExitCode => "NonZeroExitCode",
            Reason::AssocLimit(k, c) => limit_str(false, k, c),
            Reason::QosLimit(k, c) => limit_str(true, k, c),
            Reason::AssocGrpJobs => "AssocGrpJobsLimit",
            Reason::AssocMaxJobs => "AssocMaxJobsLimit",
            Reason::AssocGrpWall => "AssocGrpWallLimit",
            Reason::AssocMaxWall => "AssocMaxWallDurationPerJobLimit",
            Reason::AssocGrpSubmitJobs => "AssocGrpSubmitJobsLimit",
            Reason::AssocMaxSubmitJobs => "AssocMaxSubmitJobLimit",
            Reason::QosGrpJobs => "QOSGrpJobsLimit",
            Reason::QosMaxJobsPerUser => "QOSMaxJobsPerUserLimit",
            Reason::QosMaxJobsPerAccount => "MaxJobsPerAccount",
            Reason::QosGrpWall => "QOSGrpWallLimit",
            Reason::QosMaxWall => "QOSMaxWallDurationPerJobLimit",
            Reason::QosGrpSubmitJobs => "QOSGrpSubmitJobsLimit",
            Reason::QosMaxSubmitJobsPerUser => "QOSMaxSubmitJobPerUserLimit",
            Reason::QosMaxSubmitJobsPerAccount => "MaxSubmitJobsPerAccount",
            Reason::InvalidAccount => "InvalidAccount",
            Reason::InvalidQos => "InvalidQOS",
            Reason::Reservation => "Reservation",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Display for JobState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One run of a job: each requeue starts a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub start: Time,
    pub end: Option<Time>,
    /// How the run ended (RUNNING while it goes on).
    pub state: JobState,
    pub partition: PartId,
    pub alloc: crate::state::Allocation,
    /// The priority of the queue record the run started from: Slurm's
    /// `job_ptr->priority` then, which a running job keeps (priority/
    /// multifactor recomputes only pending jobs' priorities, without
    /// `PriorityFlags=CALCULATE_RUNNING`). Same-QOS preemption (`WITHIN`)
    /// compares it.
    pub priority: u32,
}

/// A job's runs, oldest first; reads like a slice (`runs.last()`,
/// `runs[0]`, `for r in &runs`). Most jobs run once, so the first run is
/// kept inline and a heap vector is made only when a requeue adds a second.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Runs(RunsRepr);

#[derive(Clone, PartialEq, Eq, Default)]
enum RunsRepr {
    #[default]
    None,
    One(Run),
    Many(Vec<Run>),
}

impl Runs {
    /// Adds a run after the others.
    pub fn push(&mut self, run: Run) {
        self.0 = match std::mem::take(&mut self.0) {
            RunsRepr::None => RunsRepr::One(run),
            RunsRepr::One(first) => RunsRepr::Many(vec![first, run]),
            RunsRepr::Many(mut v) => {
                v.push(run);
                RunsRepr::Many(v)
            }
        };
    }
}

impl From<Vec<Run>> for Runs {
    fn from(mut v: Vec<Run>) -> Runs {
        Runs(match v.len() {
            0 => RunsRepr::None,
            1 => RunsRepr::One(v.remove(0)),
            _ => RunsRepr::Many(v),
        })
    }
}

impl std::ops::Deref for Runs {
    type Target = [Run];
    fn deref(&self) -> &[Run] {
        match &self.0 {
            RunsRepr::None => &[],
            RunsRepr::One(r) => std::slice::from_ref(r),
            RunsRepr::Many(v) => v,
        }
    }
}

impl std::ops::DerefMut for Runs {
    fn deref_mut(&mut self) -> &mut [Run] {
        match &mut self.0 {
            RunsRepr::None => &mut [],
            RunsRepr::One(r) => std::slice::from_mut(r),
            RunsRepr::Many(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a Runs {
    type Item = &'a Run;
    type IntoIter = std::slice::Iter<'a, Run>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Runs {
    type Item = &'a mut Run;
    type IntoIter = std::slice::IterMut<'a, Run>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl std::fmt::Debug for Runs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The record of one job or array task while the simulation runs.
#[derive(Debug, Clone)]
pub struct Job {
    /// Index of the submission (in the workload) this job came from.
    pub sub: u32,
    /// Array task index, for array tasks.
    pub task: Option<u32>,
    pub request: Arc<JobRequest>,
    /// Slurm job id; array tasks get theirs when they start (see [`Job::array_job_id`]).
    pub job_id: Option<crate::ids::JobId>,
    /// For array tasks: the array's id (`%A`).
    pub array_job_id: Option<crate::ids::JobId>,
    /// When the job was (last) submitted: a requeue resets it, as in Slurm.
    pub submit: Time,
    /// When it was first submitted.
    pub first_submit: Time,
    /// When it last became eligible to run.
    pub eligible: Option<Time>,
    pub state: JobState,
    pub reason: Reason,
    /// Extra text Slurm prints after the reason (`UnavailableNodes:gpu02`).
    pub reason_desc: Option<String>,
    pub priority: u32,
    pub run_time: RunTime,
    pub exit_code: i32,
    /// Runs so far; the last one is the current or final run.
    pub runs: Runs,
    /// Held by the user (true) or an admin.
    pub held: Option<bool>,
    pub begin: Option<Time>,
    pub requeue: bool,
    /// While running: the end Slurm plans with (start + time limit).
    pub planned_end: Time,
    /// What only rejected jobs and jobs with failed runs carry: read it
    /// with [`Job::rejected`], [`Job::work_saved`], [`Job::lost_gpu_secs`]
    /// and [`Job::lost_secs`].
    pub outcome: JobOutcome,
    /// The current (or last) run ran out of GPU memory.
    pub oom: bool,
    /// While running: when the current run's program exits on its own.
    pub natural_end: Option<Time>,
}

/// The rarely set part of a [`Job`]: a rejection message and the work saved
/// and lost over failed runs. Empty (no heap block) while all of it is at
/// its default, which is the case for most jobs of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobOutcome(Option<Box<OutcomeData>>);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct OutcomeData {
    rejected: Option<String>,
    work_saved: u64,
    lost_gpu_secs: u64,
    lost_secs: u64,
}

impl JobOutcome {
    fn get(&self) -> Option<&OutcomeData> {
        self.0.as_deref()
    }
    /// Changes the data, keeping the block only while some of it is set.
    fn with(&mut self, f: impl FnOnce(&mut OutcomeData)) {
        let d = self.0.get_or_insert_with(Default::default);
        f(d);
        if **d == OutcomeData::default() {
            self.0 = None;
        }
    }
}

impl Job {
    /// Message of a rejected submission.
    pub fn rejected(&self) -> Option<&str> {
        self.outcome.get().and_then(|d| d.rejected.as_deref())
    }
    /// Seconds of work saved by the last checkpoint (see [`JobBehavior`]).
    pub fn work_saved(&self) -> u64 {
        self.outcome.get().map_or(0, |d| d.work_saved)
    }
    /// GPU-seconds of failed runs (node failure, requeue) that did not turn
    /// into saved work: the work since the last checkpoint plus the restart
    /// overhead, times the run's GPUs.
    pub fn lost_gpu_secs(&self) -> u64 {
        self.outcome.get().map_or(0, |d| d.lost_gpu_secs)
    }
    /// Wall seconds of failed runs that did not turn into saved work.
    pub fn lost_secs(&self) -> u64 {
        self.outcome.get().map_or(0, |d| d.lost_secs)
    }
    pub fn set_rejected(&mut self, msg: Option<String>) {
        self.outcome.with(|d| d.rejected = msg);
    }
    pub fn set_work_saved(&mut self, secs: u64) {
        self.outcome.with(|d| d.work_saved = secs);
    }
    /// Adds a failed run's lost wall seconds and GPU-seconds.
    pub fn add_lost(&mut self, secs: u64, gpu_secs: u64) {
        self.outcome.with(|d| {
            d.lost_secs += secs;
            d.lost_gpu_secs += gpu_secs;
        });
    }

    pub fn restarts(&self) -> u32 {
        (self.runs.len() as u32).saturating_sub(1)
    }
    pub fn current_run(&self) -> Option<&Run> {
        self.runs.last()
    }
    pub fn is_pending(&self) -> bool {
        self.state == JobState::Pending
    }
    /// The `%A_%a` or plain job id as sacct prints it.
    pub fn display_id(&self) -> String {
        match (self.array_job_id, self.task) {
            (Some(a), Some(t)) => format!("{a}_{t}"),
            _ => self
                .job_id
                .map_or_else(|| "?".to_string(), |j| j.to_string()),
        }
    }
}

#[cfg(test)]
mod tests;
