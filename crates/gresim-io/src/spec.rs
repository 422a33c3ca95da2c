//! The scenario file's JSON schema (version 1), as serde types.
//!
//! Every struct rejects unknown fields. Values that Slurm writes as strings
//! (`"128G"`, `"2:00:00"`, `"gpu:a100:4"`) are strings here too; plain
//! counts and seconds are numbers. docs/scenario-format.md documents each field.

use std::collections::BTreeMap;

use serde::Deserialize;

pub use gresim_slurm::NumOrStr;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioDef {
    pub schema_version: u32,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    pub cluster: ClusterDef,
    #[serde(default)]
    pub partitions: Vec<PartitionDef>,
    #[serde(default)]
    pub scheduler: SchedulerDef,
    pub workload: WorkloadDef,
    #[serde(default)]
    pub events: Vec<EventDef>,
    /// Advance reservations in force from the start (`scontrol create
    /// reservation`, docs/reservations.md).
    #[serde(default)]
    pub reservations: Vec<crate::resv::ResvDef>,
    /// Random node failures and repairs (docs/reliability.md).
    #[serde(default)]
    pub failures: Option<FailuresDef>,
    /// Stop the simulation at this time (seconds).
    #[serde(default)]
    pub horizon: Option<u64>,
    #[serde(default)]
    pub outputs: OutputsDef,
    /// Named variants of the scenario that `sim run` also runs, side by
    /// side (docs/scenario-format.md, "Variants").
    #[serde(default)]
    pub variants: Option<Vec<VariantDef>>,
    /// Accounts, users, QOS and limits (docs/accounting.md): slurmdbd's
    /// associations as `sacctmgr` sets them.
    #[serde(default)]
    pub accounting: Option<AccountingDef>,
}

/// The accounting section: `sacctmgr` commands, a `sacctmgr dump` file, and
/// objects with sacctmgr's field names, applied in that order (QOS, then
/// accounts, then users).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountingDef {
    /// `AccountingStorageEnforce` (default `associations,limits,qos,safe`).
    #[serde(default)]
    pub enforce: Option<String>,
    /// `AccountingStorageTRES` beyond cpu, mem, node and billing (default:
    /// `gres/gpu` and `gres/gpu:TYPE` for each GPU type of the cluster).
    #[serde(default)]
    pub tres: Option<String>,
    /// `sacctmgr` commands, applied in order.
    #[serde(default)]
    pub sacctmgr: Vec<String>,
    /// A file `sacctmgr dump CLUSTER` wrote, relative to the scenario.
    #[serde(default)]
    pub dump: Option<String>,
    /// `{"name": "high", "Priority": 100, "MaxTRESPerUser": "gres/gpu=8"}`.
    #[serde(default)]
    pub qos: Vec<BTreeMap<String, serde_json::Value>>,
    /// `{"name": "ml", "parent": "root", "Fairshare": 2, "GrpTRES": "gres/gpu=16"}`.
    #[serde(default)]
    pub accounts: Vec<BTreeMap<String, serde_json::Value>>,
    /// `{"name": "alice", "account": "ml", "QOS": "normal,high", "MaxJobs": 4}`.
    #[serde(default)]
    pub users: Vec<BTreeMap<String, serde_json::Value>>,
    /// Partition QOS (slurm.conf's `QOS=` on a partition): `{"gpu": "part_gpu"}`.
    #[serde(default)]
    pub partition_qos: BTreeMap<String, String>,
    /// TRESBillingWeights per partition (slurm.conf's partition key):
    /// `{"gpu": "CPU=1.0,Mem=0.25G,GRES/gpu=2.0"}`. Jobs in a partition
    /// without weights bill their CPUs.
    #[serde(default)]
    pub tres_billing_weights: BTreeMap<String, String>,
    /// `PriorityFlags=MAX_TRES`: a job's billing is its largest weighted
    /// TRES instead of the sum.
    #[serde(default)]
    pub max_tres: bool,
}

/// A named variant: the same workload and seed on a changed cluster or policy.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantDef {
    /// Letters, digits, `-` and `_`; names the variant's output subdirectory.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The policy of this variant (default: the scenario's).
    #[serde(default)]
    pub policy: Option<String>,
    /// What becomes of the GPU groups: `as_is` (default), `whole` (every
    /// `mig` layout is dropped: whole GPUs) or `dynamic` (every group of a
    /// MIG-capable model gets `mig_dynamic`, its `mig` being the initial layout).
    #[serde(default)]
    pub gpus: Option<String>,
    /// What becomes of requests for MIG slice types: `as_is` (default) or
    /// `whole_gpu` (a request for `<type>_<profile>` asks for `<type>`: one
    /// whole GPU per slice).
    #[serde(default)]
    pub slice_requests: Option<String>,
    /// Overrides `cluster.mig_reconfig_delay`.
    #[serde(default)]
    pub mig_reconfig_delay: Option<u64>,
    /// Replaces the scenario's `accounting` section; `null` removes it (no
    /// accounting: no limits, no fair-share).
    #[serde(default, deserialize_with = "some_value")]
    pub accounting: Option<serde_json::Value>,
    /// Replaces `scheduler.preempt`; `null` removes it (no preemption).
    #[serde(default, deserialize_with = "some_value")]
    pub preempt: Option<serde_json::Value>,
    /// Sets `checkpoint_interval` (seconds; `null` removes it) on every
    /// inline job.
    #[serde(default, deserialize_with = "some_value")]
    pub checkpoint_interval: Option<serde_json::Value>,
    /// Replaces the scenario's `reservations`; `null` removes them.
    #[serde(default, deserialize_with = "some_value")]
    pub reservations: Option<serde_json::Value>,
    /// Sets `cluster.topology_plugin` (`"topology/tree"`, `"topology/block"`,
    /// `"topology/none"`); `null` removes it.
    #[serde(default, deserialize_with = "some_value")]
    pub topology_plugin: Option<serde_json::Value>,
}

/// A present field, `null` included, as `Some` (absent stays `None`).
fn some_value<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    use serde::Deserialize;
    serde_json::Value::deserialize(d).map(Some)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterDef {
    #[serde(default)]
    pub node_templates: BTreeMap<String, NodeFields>,
    /// Node groups; exactly one of `nodes` and `slurm_conf` is given.
    #[serde(default)]
    pub nodes: Option<Vec<NodeGroupDef>>,
    /// A slurm.conf (relative to the scenario) whose nodes, partitions and
    /// scheduler settings are used; the scenario's `partitions` and
    /// `scheduler` fields override them.
    #[serde(default)]
    pub slurm_conf: Option<String>,
    /// The gres.conf (relative to the scenario); default: `gres.conf` next
    /// to slurm.conf when it exists, as Slurm reads it.
    #[serde(default)]
    pub gres_conf: Option<String>,
    /// The network between nodes (docs/topology.md).
    #[serde(default)]
    pub fabric: Option<FabricDef>,
    /// topology.conf (`SwitchName=… Nodes=…|Switches=…`, or topology/block's
    /// `BlockName=… Nodes=…` and `BlockSizes=`): a file relative to the
    /// scenario, or its lines. The switch tree (or the base blocks) gives
    /// the fabric its leaf switches and, with `topology_plugin`, drives node
    /// selection (docs/topology.md, "Slurm's topology/tree", "topology/block").
    #[serde(default)]
    pub topology_conf: Option<TopologyConfDef>,
    /// slurm.conf's `TopologyPlugin`: `topology/tree`, `topology/block`
    /// (beyond 22.05) or `topology/none` (default: what slurm_conf says,
    /// else none).
    #[serde(default)]
    pub topology_plugin: Option<String>,
    /// Seconds a dynamic MIG GPU is out of service while it is repartitioned
    /// (default 30; docs/mig.md).
    #[serde(default)]
    pub mig_reconfig_delay: Option<u64>,
}

/// topology.conf given by the scenario.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TopologyConfDef {
    /// A path relative to the scenario.
    File(String),
    /// The file's lines.
    Lines(Vec<String>),
}

/// Node hardware; every field optional so templates and groups can share it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeFields {
    #[serde(default)]
    pub sockets: Option<u16>,
    #[serde(default)]
    pub cores_per_socket: Option<u16>,
    #[serde(default)]
    pub threads_per_core: Option<u16>,
    /// `"512G"`, or a number of MiB.
    #[serde(default)]
    pub memory: Option<NumOrStr>,
    #[serde(default)]
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub weight: Option<u32>,
    #[serde(default)]
    pub gpus: Option<Vec<GpuGroupDef>>,
    /// gres.conf `Links=` as a matrix over the node's GPU devices.
    #[serde(default)]
    pub gpu_links: Option<Vec<Vec<u8>>>,
    /// The node's interconnect topology: a preset name or a `topo -m` file.
    #[serde(default)]
    pub topology: Option<TopologyDef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeGroupDef {
    /// A hostlist expression: `gpu[01-16]`.
    pub names: String,
    #[serde(default)]
    pub template: Option<String>,
    /// `UP` (default), `DOWN` or `DRAIN`.
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub sockets: Option<u16>,
    #[serde(default)]
    pub cores_per_socket: Option<u16>,
    #[serde(default)]
    pub threads_per_core: Option<u16>,
    #[serde(default)]
    pub memory: Option<NumOrStr>,
    #[serde(default)]
    pub features: Option<Vec<String>>,
    #[serde(default)]
    pub weight: Option<u32>,
    #[serde(default)]
    pub gpus: Option<Vec<GpuGroupDef>>,
    #[serde(default)]
    pub gpu_links: Option<Vec<Vec<u8>>>,
    #[serde(default)]
    pub topology: Option<TopologyDef>,
}

impl NodeGroupDef {
    pub fn fields(&self) -> NodeFields {
        NodeFields {
            sockets: self.sockets,
            cores_per_socket: self.cores_per_socket,
            threads_per_core: self.threads_per_core,
            memory: self.memory.clone(),
            features: self.features.clone(),
            weight: self.weight,
            gpus: self.gpus.clone(),
            gpu_links: self.gpu_links.clone(),
            topology: self.topology.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuGroupDef {
    /// A catalog model: `A100-SXM4-80GB`, `H100-SXM5-80GB`, `L40S` …
    pub model: String,
    /// The GRES type name; defaults to the model's short name (`a100`).
    #[serde(default, rename = "type")]
    pub ty: Option<String>,
    /// Physical GPUs in this group.
    pub count: u32,
    /// The CPU socket the GPUs are attached to (gres.conf `Cores=`).
    #[serde(default)]
    pub socket: Option<u16>,
    /// MIG layout applied to each GPU of the group: profile names, e.g. `["3g.40gb", "1g.10gb"]`.
    #[serde(default)]
    pub mig: Option<Vec<String>>,
    /// The GPUs' MIG layout may change during a run (the `dynamic-mig`
    /// policy; docs/mig.md); `mig` is then the initial layout, absent: whole GPUs.
    #[serde(default)]
    pub mig_dynamic: bool,
    /// gres/shard count on each GPU of the group (gres.conf `Name=shard
    /// Count=N File=…` per GPU). A node has one shared GRES: shards or mps.
    #[serde(default)]
    pub shards: Option<u32>,
    /// gres/mps count on each GPU of the group (usually 100: percent).
    #[serde(default)]
    pub mps: Option<u32>,
    /// gres.conf `Flags=one_sharing|all_sharing` for the shared GRES
    /// (default: `one_sharing` for mps, `all_sharing` for shards).
    #[serde(default)]
    pub sharing: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionDef {
    pub name: String,
    /// Hostlist, or `ALL`.
    #[serde(default)]
    pub nodes: Option<String>,
    #[serde(default)]
    pub default: bool,
    #[serde(default)]
    pub max_time: Option<NumOrStr>,
    #[serde(default)]
    pub default_time: Option<NumOrStr>,
    #[serde(default)]
    pub priority_tier: Option<u16>,
    #[serde(default)]
    pub priority_job_factor: Option<u16>,
    #[serde(default)]
    pub min_nodes: Option<u32>,
    #[serde(default)]
    pub max_nodes: Option<u32>,
    #[serde(default)]
    pub state: Option<String>,
    /// `PreemptMode` of the partition (`OFF`, `CANCEL`, `REQUEUE`, `SUSPEND`);
    /// unset takes `scheduler.preempt.mode`.
    #[serde(default)]
    pub preempt_mode: Option<String>,
    /// `GraceTime` in seconds.
    #[serde(default)]
    pub grace_time: Option<u64>,
    /// `OverSubscribe` (`NO`, `EXCLUSIVE`, `FORCE:N`, `YES:N`): with N > 1
    /// up to N jobs share each core (under `YES:N` only jobs with
    /// `--oversubscribe`), taking turns with a PreemptMode with GANG.
    #[serde(default)]
    pub oversubscribe: Option<String>,
}

/// slurm.conf's preemption settings (docs/preemption.md).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreemptDef {
    /// `preempt/partition_prio`, `preempt/qos` or `preempt/none`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The global `PreemptMode` (`CANCEL`, `REQUEUE`, `SUSPEND,GANG`, ...).
    pub mode: String,
    /// `PreemptExemptTime` in seconds.
    #[serde(default)]
    pub exempt_time: Option<u64>,
    /// SchedulerParameters `preempt_youngest_first`.
    #[serde(default)]
    pub youngest_first: bool,
    /// SchedulerParameters `preempt_reorder_count` (default 1).
    #[serde(default)]
    pub reorder_count: Option<u32>,
    /// SchedulerParameters `preempt_strict_order`.
    #[serde(default)]
    pub strict_order: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerDef {
    #[serde(default)]
    pub policy: Option<String>,
    #[serde(default)]
    pub sched_interval: Option<u64>,
    #[serde(default)]
    pub bf_interval: Option<u64>,
    #[serde(default)]
    pub pass_on_submit: Option<bool>,
    #[serde(default)]
    pub pass_on_end: Option<bool>,
    #[serde(default)]
    pub timelimit_check_interval: Option<u64>,
    #[serde(default)]
    pub def_mem_per_cpu: Option<NumOrStr>,
    #[serde(default)]
    pub job_requeue: Option<bool>,
    #[serde(default)]
    pub cred_expire: Option<u64>,
    /// slurm.conf `KillWait`, seconds (30 by default).
    #[serde(default)]
    pub kill_wait: Option<u64>,
    /// slurm.conf `ResvOverRun`, in seconds (0 by default): how long a job
    /// running in a reservation may go on after the reservation ends.
    #[serde(default)]
    pub resv_over_run: Option<u64>,
    /// Minutes, as Slurm's bf_window.
    #[serde(default)]
    pub bf_window: Option<u64>,
    #[serde(default)]
    pub bf_resolution: Option<u64>,
    #[serde(default)]
    pub bf_max_job_test: Option<u32>,
    /// `SchedulerParameters=max_switch_wait` (seconds, default 300): the
    /// longest `--switches=N@time` may wait.
    #[serde(default)]
    pub max_switch_wait: Option<u64>,
    /// DependencyParameters=kill_invalid_depend.
    #[serde(default)]
    pub kill_invalid_depend: Option<bool>,
    /// SchedulerParameters=enable_user_top: users may `scontrol top` their own jobs.
    #[serde(default)]
    pub enable_user_top: Option<bool>,
    /// `basic` (default) or `multifactor` (PriorityType).
    #[serde(default)]
    pub priority_type: Option<String>,
    /// priority/multifactor weights.
    #[serde(default)]
    pub priority_weights: Option<PriorityWeightsDef>,
    /// Multi-GPU jobs on MIG slices: `warn` (default), `reject` or `allow`
    /// (see `mig_policy`).
    #[serde(default)]
    pub mig_multi_gpu: Option<String>,
    /// Preemption (`PreemptType`, `PreemptMode`, ...); absent: none.
    #[serde(default)]
    pub preempt: Option<PreemptDef>,
    /// `SchedulerTimeSlice` in seconds (5 to 65535; 30 when absent): the
    /// gang scheduler's turn for partitions with `"oversubscribe":
    /// "FORCE:N"` under a PreemptMode with GANG (without GANG their jobs
    /// share cores and run at once).
    #[serde(default)]
    pub time_slice: Option<u64>,
    /// What kills a preempted job whose grace time is over: `checked`
    /// (default, Slurm's) or `at-end` (see `SchedParams::grace_kill`).
    #[serde(default)]
    pub grace_kill: Option<String>,
}

/// PriorityWeight* settings of priority/multifactor.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriorityWeightsDef {
    #[serde(default)]
    pub age: u32,
    #[serde(default)]
    pub job_size: u32,
    #[serde(default)]
    pub partition: u32,
    #[serde(default)]
    pub fairshare: u32,
    #[serde(default)]
    pub qos: u32,
    /// PriorityWeightAssoc: the association's `Priority` over the largest.
    #[serde(default)]
    pub assoc: u32,
    /// PriorityUsageResetPeriod: `NONE` (default), `NOW`, `DAILY`, `WEEKLY`,
    /// `MONTHLY`, `QUARTERLY` or `YEARLY` (simulated time is read as UTC
    /// Unix time).
    #[serde(default)]
    pub usage_reset_period: Option<String>,
    /// PriorityWeightTRES for CPUs.
    #[serde(default)]
    pub tres_cpu: f64,
    /// PriorityWeightTRES for memory.
    #[serde(default)]
    pub tres_mem: f64,
    /// PriorityWeightTRES for gres/gpu.
    #[serde(default)]
    pub tres_gpu: f64,
    /// PriorityFavorSmall.
    #[serde(default)]
    pub favor_small: bool,
    /// PriorityMaxAge in seconds (default 7 days).
    #[serde(default)]
    pub max_age: Option<u64>,
    /// PriorityDecayHalfLife in seconds (default 7 days; 0: no decay).
    #[serde(default)]
    pub decay_half_life: Option<u64>,
    /// PriorityCalcPeriod in seconds (default 300).
    #[serde(default)]
    pub calc_period: Option<u64>,
    /// `classic` for PriorityFlags=NO_FAIR_TREE; default `fair_tree`.
    #[serde(default)]
    pub fairshare_algorithm: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadDef {
    #[serde(default)]
    pub jobs: Option<Vec<JobDef>>,
    /// Path to a trace, relative to the scenario: a JSON array or JSON Lines
    /// file of jobs, or a trace in `format`.
    #[serde(default)]
    pub trace: Option<String>,
    /// The trace's format: `json` (default; a JSON array or JSON Lines),
    /// `sacct`, `swf`, `openb` or `helios`. Traces other than JSON are streamed.
    #[serde(default)]
    pub format: Option<String>,
    /// Options of the trace readers.
    #[serde(default)]
    pub trace_options: Option<TraceOptionsDef>,
    #[serde(default)]
    pub synthetic: Option<SyntheticDef>,
    /// `#SBATCH` scripts, each submitted once.
    #[serde(default)]
    pub scripts: Option<Vec<ScriptDef>>,
    /// Seconds a job that runs out of GPU memory lasts before it fails (default 30).
    #[serde(default)]
    pub oom_after: Option<u64>,
    /// Run-time factor of a job that expects a GPU but asked for none (default 10).
    #[serde(default)]
    pub cpu_fallback_slowdown: Option<f64>,
    /// What to do with a JSON or script job that slurmctld would refuse at
    /// submission (no node could ever run it): `error` (default: the scenario
    /// is rejected, exit 2) or `reject` (the job gets a REJECTED record with
    /// Slurm's message, as on a real cluster, and the rest runs).
    #[serde(default)]
    pub impossible: Option<String>,
}

/// Options of the streamed trace readers (see `traces`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceOptionsDef {
    /// SWF: read the processor count as GPUs, this many per node (default:
    /// processors are CPUs).
    #[serde(default)]
    pub swf_gpus_per_node: Option<u32>,
    /// OpenB: submit only pods that were scheduled (default true).
    #[serde(default)]
    pub openb_scheduled_only: Option<bool>,
    /// OpenB: what a pod with `gpu_milli` < 1000 asks for: `whole` (default:
    /// one GPU), `mps` or `shard` (its share of one GPU as gres/mps or
    /// gres/shard; docs/scenario-format.md).
    #[serde(default)]
    pub openb_gpu_milli: Option<String>,
    /// Batsim: gresim ticks per second of Batsim time (default 1: seconds).
    #[serde(default)]
    pub batsim_ticks_per_second: Option<u64>,
}

/// One batch script submission: `sbatch [args] path` at `submit`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptDef {
    /// The script, relative to the scenario file's directory.
    pub path: String,
    /// sbatch command-line options; they override the script's `#SBATCH` lines.
    #[serde(default)]
    pub args: Vec<String>,
    /// The scenario's name for the submission (default `job<N>`).
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub submit: u64,
    #[serde(default)]
    pub run_time: Option<u64>,
    #[serde(default)]
    pub task_run_times: Option<BTreeMap<String, u64>>,
    #[serde(default)]
    pub exit_code: Option<i32>,
}

/// One submission, in sbatch's vocabulary.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobDef {
    /// The scenario's name for the submission, used by dependencies and events.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub user: Option<String>,
    /// `-A`: the account (with accounting; default: the user's default account).
    #[serde(default)]
    pub account: Option<String>,
    /// `--qos` (with accounting; default: the association's default QOS).
    #[serde(default)]
    pub qos: Option<String>,
    /// `--reservation`: the job runs only inside this reservation
    /// (docs/reservations.md); sbatch refuses an unknown one.
    #[serde(default)]
    pub reservation: Option<String>,
    /// Submit time in seconds.
    #[serde(default)]
    pub submit: u64,
    /// Actual run time in seconds; absent means it runs until its time limit.
    #[serde(default)]
    pub run_time: Option<u64>,
    /// Per-array-task run times: `{"3": 20}`.
    #[serde(default)]
    pub task_run_times: Option<BTreeMap<String, u64>>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// `--time`, in any Slurm time format, or a number of minutes.
    #[serde(default)]
    pub time: Option<NumOrStr>,
    #[serde(default)]
    pub partition: Option<String>,
    /// `-N`: `2` or `"1-2"`.
    #[serde(default)]
    pub nodes: Option<NumOrStr>,
    #[serde(default)]
    pub ntasks: Option<u64>,
    #[serde(default)]
    pub ntasks_per_node: Option<u64>,
    #[serde(default)]
    pub cpus_per_task: Option<u64>,
    #[serde(default)]
    pub mem: Option<NumOrStr>,
    #[serde(default)]
    pub mem_per_cpu: Option<NumOrStr>,
    #[serde(default)]
    pub mem_per_gpu: Option<NumOrStr>,
    /// `--gres`: `gpu:a100:4`, `gpu:2`.
    #[serde(default)]
    pub gres: Option<String>,
    /// `--gpus`: `8` or `"a100:8"`.
    #[serde(default)]
    pub gpus: Option<NumOrStr>,
    #[serde(default)]
    pub gpus_per_node: Option<NumOrStr>,
    #[serde(default)]
    pub gpus_per_task: Option<NumOrStr>,
    #[serde(default)]
    pub cpus_per_gpu: Option<u64>,
    #[serde(default)]
    pub nodelist: Option<String>,
    #[serde(default)]
    pub exclude: Option<String>,
    /// `--constraint`: features joined by `&`.
    #[serde(default)]
    pub constraint: Option<String>,
    #[serde(default)]
    pub exclusive: bool,
    /// `--oversubscribe` (`-s`): share cores with other jobs where the
    /// partition allows it (`OverSubscribe=YES:N`).
    #[serde(default)]
    pub oversubscribe: bool,
    /// `--switches=count[@max-time]`: the most leaf switches, and how long
    /// to wait for them (topology/tree only).
    #[serde(default)]
    pub switches: Option<String>,
    /// `--segment=N` (Slurm 24.05+, beyond 22.05): the job's nodes in
    /// segments of N, each inside one base block (topology/block only).
    #[serde(default)]
    pub segment: Option<NumOrStr>,
    /// `--array`: `0-99%10`.
    #[serde(default)]
    pub array: Option<String>,
    #[serde(default)]
    pub requeue: Option<bool>,
    /// `--dependency`, naming other submissions by their `id`.
    #[serde(default)]
    pub dependency: Option<String>,
    /// `--begin`, in seconds.
    #[serde(default)]
    pub begin: Option<u64>,
    #[serde(default)]
    pub hold: bool,
    #[serde(default)]
    pub nice: Option<i32>,
    /// `--gpu-bind`: `closest`, `none`, `map_gpu:0,1`, `mask_gpu:0x3`,
    /// `single:N`, `per_task:N`. Used by `sim env`; no effect on scheduling.
    #[serde(default)]
    pub gpu_bind: Option<String>,
    /// `--output` pattern (`logs/%x_%j.out`). Used by `sim env`.
    #[serde(default)]
    pub output: Option<String>,
    /// `--error` pattern. Used by `sim env`.
    #[serde(default)]
    pub error: Option<String>,
    /// Communication profile: placement changes the run time (docs/topology.md).
    #[serde(default)]
    pub comm: Option<CommDef>,
    /// The program checkpoints every this many seconds of work; a requeued
    /// run resumes from the last checkpoint.
    #[serde(default)]
    pub checkpoint_interval: Option<u64>,
    /// Seconds a resumed run spends before useful work goes on.
    #[serde(default)]
    pub restart_overhead: Option<u64>,
    /// GPU memory the program needs per GPU (`"40G"`, or MiB).
    #[serde(default)]
    pub vram: Option<NumOrStr>,
    /// The program wants a GPU: without a GPU request it runs on the CPU,
    /// `workload.cpu_fallback_slowdown` times slower.
    #[serde(default)]
    pub expects_gpu: bool,
    /// The program ignores SIGTERM: ended by Slurm (time limit, `scancel`,
    /// preemption), it stays COMPLETING `MAX(KillWait, 5)` s longer.
    #[serde(default)]
    pub ignores_sigterm: bool,
}

impl From<gresim_slurm::sbatch::SbatchJob> for JobDef {
    /// The job an sbatch script asks for, as a scenario job (`submit` 0,
    /// `begin` relative to it; the scenario's own fields unset).
    fn from(j: gresim_slurm::sbatch::SbatchJob) -> Self {
        // Every field named, so a new sbatch option cannot be dropped here.
        let gresim_slurm::sbatch::SbatchJob {
            name,
            account,
            qos,
            reservation,
            time,
            partition,
            nodes,
            ntasks,
            ntasks_per_node,
            cpus_per_task,
            mem,
            mem_per_cpu,
            mem_per_gpu,
            gres,
            gpus,
            gpus_per_node,
            gpus_per_task,
            cpus_per_gpu,
            nodelist,
            exclude,
            constraint,
            exclusive,
            oversubscribe,
            switches,
            segment,
            array,
            requeue,
            dependency,
            begin,
            hold,
            nice,
            gpu_bind,
            output,
            error,
        } = j;
        JobDef {
            name,
            account,
            qos,
            reservation,
            time,
            partition,
            nodes,
            ntasks,
            ntasks_per_node,
            cpus_per_task,
            mem,
            mem_per_cpu,
            mem_per_gpu,
            gres,
            gpus,
            gpus_per_node,
            gpus_per_task,
            cpus_per_gpu,
            nodelist,
            exclude,
            constraint,
            exclusive,
            oversubscribe,
            switches,
            segment,
            array,
            requeue,
            dependency,
            begin,
            hold,
            nice,
            gpu_bind,
            output,
            error,
            ..JobDef::default()
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyntheticDef {
    /// Number of submissions.
    pub jobs: u64,
    /// Mean seconds between submissions (Poisson arrivals).
    pub mean_interarrival: f64,
    /// Run times: lognormal with this median (seconds) and sigma.
    pub run_time_median: f64,
    pub run_time_sigma: f64,
    /// Run times are clipped to [run_time_min, run_time_max].
    #[serde(default)]
    pub run_time_min: Option<u64>,
    #[serde(default)]
    pub run_time_max: Option<u64>,
    /// Time limit = run time × this factor, rounded up to minutes (default 2).
    #[serde(default)]
    pub time_limit_factor: Option<f64>,
    /// Share of jobs that run until their limit (default 0).
    #[serde(default)]
    pub runs_to_limit_share: Option<f64>,
    /// The discrete mix of job shapes.
    pub mix: Vec<MixEntryDef>,
    #[serde(default)]
    pub partition: Option<String>,
    /// Users are `user1` … `userN` (default 8).
    #[serde(default)]
    pub users: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MixEntryDef {
    /// Relative weight of this shape.
    pub weight: f64,
    #[serde(default)]
    pub name: Option<String>,
    /// GPUs per node.
    #[serde(default)]
    pub gpus: u32,
    /// GPU type; absent = any.
    #[serde(default, rename = "type")]
    pub ty: Option<String>,
    #[serde(default)]
    pub nodes: Option<u32>,
    #[serde(default)]
    pub cpus_per_gpu: Option<u32>,
    /// CPUs per task when the shape has no GPUs (default 1).
    #[serde(default)]
    pub cpus: Option<u32>,
    #[serde(default)]
    pub mem_per_gpu: Option<String>,
    #[serde(default)]
    pub mem: Option<String>,
    /// Multiplies this shape's run times (default 1).
    #[serde(default)]
    pub run_time_scale: Option<f64>,
    /// Communication profile of this shape's jobs (docs/topology.md).
    #[serde(default)]
    pub comm: Option<CommDef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventDef {
    /// Seconds.
    pub at: u64,
    /// `node_down`, `node_up`, `node_drain`, `node_resume`, `hold`, `release`,
    /// `cancel`, `requeue`, `requeue_hold`, `suspend`, `resume`, `top`, `signal`, `update`.
    pub action: String,
    /// For node actions: a hostlist.
    #[serde(default)]
    pub nodes: Option<String>,
    /// For job actions: the submission's `id`.
    #[serde(default)]
    pub job: Option<String>,
    /// For `hold`: an admin hold (JobHeldAdmin) rather than a user hold.
    #[serde(default)]
    pub admin: bool,
    /// For `release` and `top`: issued by the job's owner rather than an
    /// administrator.
    #[serde(default)]
    pub owner: bool,
    /// For `requeue_hold`: held in SPECIAL_EXIT.
    #[serde(default)]
    pub special_exit: bool,
    /// For `signal`: the signal (`USR1`, `TERM`, ...).
    #[serde(default)]
    pub signal: Option<String>,
    /// For `signal`: to the batch shell (`scancel --batch`).
    #[serde(default)]
    pub batch: bool,
    /// For `cancel`: only jobs in this state (`pending` or `running`).
    #[serde(default)]
    pub state: Option<String>,
    /// For `cancel`: only this user's jobs.
    #[serde(default)]
    pub user: Option<String>,
    /// For `update`: the new time limit (`--time` syntax).
    #[serde(default)]
    pub time_limit: Option<NumOrStr>,
    /// For `update`: the new partition.
    #[serde(default)]
    pub partition: Option<String>,
    /// For `update`: the new nice value.
    #[serde(default)]
    pub nice: Option<i32>,
    /// For `update`: the new dependency (`""` clears it).
    #[serde(default)]
    pub dependency: Option<String>,
    /// For `update`: the new node count (`N` or `MIN-MAX`).
    #[serde(default)]
    pub num_nodes: Option<NumOrStr>,
    /// For `create_reservation`, `update_reservation` and
    /// `delete_reservation`: the reservation (docs/reservations.md).
    #[serde(default)]
    pub reservation: Option<crate::resv::ResvDef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputsDef {
    /// Where outputs go (relative to the working directory); `--out` overrides.
    #[serde(default)]
    pub dir: Option<String>,
}

/// The failure model: independent per-node failures and correlated
/// failures of node groups (a rack, a leaf switch), each followed by a repair.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailuresDef {
    /// Seed of the failure process; default: derived from the run's seed.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Nodes that fail independently (hostlist or `ALL`, the default).
    #[serde(default)]
    pub nodes: Option<String>,
    /// Up time of a node between a repair and its next failure.
    #[serde(default)]
    pub mtbf: Option<DistDef>,
    /// Repair time (default for the correlated groups too).
    #[serde(default)]
    pub repair: Option<DistDef>,
    /// Groups that fail as a whole.
    #[serde(default)]
    pub correlated: Vec<CorrelatedDef>,
    /// No failure before this time (seconds; default 0).
    #[serde(default)]
    pub start: Option<u64>,
    /// No failure after this time (seconds; repairs still happen).
    #[serde(default)]
    pub until: Option<u64>,
}

/// A distribution of durations.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistDef {
    /// `exponential`, `weibull` or `fixed`.
    pub distribution: String,
    /// The mean, in hours (or `mean_seconds`).
    #[serde(default)]
    pub mean_hours: Option<f64>,
    #[serde(default)]
    pub mean_seconds: Option<f64>,
    /// Weibull shape k (k < 1: infant mortality, k > 1: wear-out).
    #[serde(default)]
    pub shape: Option<f64>,
    /// Weibull scale in hours, instead of a mean.
    #[serde(default)]
    pub scale_hours: Option<f64>,
}

/// A group of nodes that fails at once.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorrelatedDef {
    #[serde(default)]
    pub name: Option<String>,
    /// Hostlist of the group.
    pub nodes: String,
    /// Mean up time of the group, hours (an exponential distribution).
    #[serde(default)]
    pub mtbf_hours: Option<f64>,
    /// Or a full distribution.
    #[serde(default)]
    pub mtbf: Option<DistDef>,
    /// The group's repair time; default: `failures.repair`.
    #[serde(default)]
    pub repair: Option<DistDef>,
}

/// A node topology: a preset name (`"dgx-a100"`), or an object.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum TopologyDef {
    Preset(String),
    Spec(TopologySpecDef),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpecDef {
    /// A built-in preset: `dgx-a100`, `dgx-h100`, `hgx-h200`, `pcie-8gpu`, `workstation-4gpu-nvlink`.
    #[serde(default)]
    pub preset: Option<String>,
    /// `nvidia-smi topo -m` output, relative to the scenario.
    #[serde(default)]
    pub topo_m: Option<String>,
    /// PCIe generation of a `topo_m` node's links (default 4).
    #[serde(default)]
    pub pcie_gen: Option<u8>,
    /// Line rate of a `topo_m` node's NICs, Gb/s (default: the fabric's `rail_gbps`).
    #[serde(default)]
    pub nic_gbps: Option<f64>,
}

/// The network between nodes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricDef {
    /// `infiniband` (default), `roce` or `ethernet`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Leaf switches and their nodes: `{"leaf1": "dgx[01-04]"}`.
    #[serde(default)]
    pub leaves: Option<BTreeMap<String, String>>,
    /// Or: consecutive nodes (in node-table order) per leaf.
    #[serde(default)]
    pub nodes_per_leaf: Option<u32>,
    /// Leaf downlink : uplink bandwidth (default 1, non-blocking).
    #[serde(default)]
    pub oversubscription: Option<f64>,
    /// Rails per node without NICs in its topology (default 1).
    #[serde(default)]
    pub rails: Option<u32>,
    /// Line rate per rail, Gb/s (default 100).
    #[serde(default)]
    pub rail_gbps: Option<f64>,
    /// IP interfaces and their Gb/s, for NCCL's socket transport
    /// (default `{"ib0": rail_gbps, "eth0": 10}`).
    #[serde(default)]
    pub interfaces: Option<BTreeMap<String, f64>>,
    /// `NCCL_IB_DISABLE=1` for every job.
    #[serde(default)]
    pub nccl_ib_disable: Option<bool>,
    /// `NCCL_SOCKET_IFNAME` for every job.
    #[serde(default)]
    pub nccl_socket_ifname: Option<String>,
    /// One-way latency through the network, µs (default 5).
    #[serde(default)]
    pub latency_us: Option<f64>,
    /// Latency of NCCL's socket transport, µs (default 50).
    #[serde(default)]
    pub socket_latency_us: Option<f64>,
}

/// A job's communication profile: `steps` + `compute_per_step` +
/// `bytes_per_step`, or `fraction` (+ optional `bytes_per_step`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommDef {
    /// Bytes all-reduced per step: a number, or `"1.5GB"`, `"512MiB"`.
    #[serde(default)]
    pub bytes_per_step: Option<NumOrStr>,
    #[serde(default)]
    pub steps: Option<u64>,
    /// Seconds of computation per step.
    #[serde(default)]
    pub compute_per_step: Option<f64>,
    /// Share of the run time spent communicating on the ideal placement.
    #[serde(default)]
    pub fraction: Option<f64>,
    /// `ring` (default) or `hierarchical`.
    #[serde(default)]
    pub algorithm: Option<String>,
    /// `NCCL_IB_DISABLE=1` for this job.
    #[serde(default)]
    pub nccl_ib_disable: Option<bool>,
    /// `NCCL_SOCKET_IFNAME` for this job.
    #[serde(default)]
    pub nccl_socket_ifname: Option<String>,
}
