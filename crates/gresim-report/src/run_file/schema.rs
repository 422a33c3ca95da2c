//! run.json's schema: the records the file holds, in their key order,
//! and the small readers of its values (GPU index ranges, state names, a
//! job's state at a time).

use std::fmt::Write as _;

use gresim_engine::{SimOutput, TimedAction};
use gresim_model::job::JobState;
use serde::{Deserialize, Serialize};

/// The `format` tag of run.json.
pub const RUN_FORMAT: &str = "gresim-run";
/// The version of run.json this build writes and reads.
pub const RUN_VERSION: u32 = 1;
/// The file name.
pub const RUN_FILE: &str = "run.json";

/// What the engine output does not hold but run.json records.
#[derive(Debug, Clone, Default)]
pub struct RunMeta {
    pub scenario: String,
    /// The scenario file's text, echoed in the HTML report.
    pub scenario_text: Option<String>,
    /// The timed admin actions of the run (node and job events).
    pub actions: Vec<TimedAction>,
    pub seed: Option<u64>,
}

impl RunMeta {
    pub fn new(scenario: &str) -> Self {
        RunMeta {
            scenario: scenario.to_string(),
            ..RunMeta::default()
        }
    }
}

/// One GPU device (a whole GPU or a MIG instance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuRec {
    /// GRES type name (`a100`, `a100_3g.40gb`).
    #[serde(rename = "type")]
    pub ty: String,
    /// Catalog model name (`A100-SXM4-80GB`).
    pub model: String,
    pub socket: Option<u16>,
    pub phys: u8,
    /// MIG profile name (`3g.40gb`) and start slice, for MIG instances.
    pub mig: Option<(String, u8)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRec {
    pub name: String,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    pub memory_mib: u64,
    pub features: Vec<String>,
    pub weight: u32,
    /// Initial admin state: `UP`, `DOWN` or `DRAIN`.
    pub state: String,
    pub gpus: Vec<GpuRec>,
    pub gpu_links: Option<Vec<Vec<u8>>>,
    /// gres/shard or gres/mps: the kind, the count per GPU device and
    /// whether it is one_sharing (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<(String, Vec<u32>, bool)>,
}

impl NodeRec {
    pub fn cpus(&self) -> u32 {
        u32::from(self.sockets)
            * u32::from(self.cores_per_socket)
            * u32::from(self.threads_per_core)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartRec {
    pub name: String,
    /// Member node names in node-table order.
    pub nodes: Vec<String>,
    pub default: bool,
    pub max_time: Option<u64>,
    pub default_time: Option<u64>,
    pub priority_tier: u16,
    pub priority_job_factor: u16,
    pub min_nodes: u32,
    pub max_nodes: Option<u32>,
    /// `UP`, `DOWN`, `DRAIN`, `INACTIVE`.
    pub state: String,
    /// `PreemptMode` when the partition sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_mode: Option<String>,
    /// `GraceTime` in seconds, when not 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub grace_time: u64,
    /// `OverSubscribe=FORCE:N`'s or `YES:N`'s N, when above 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub oversubscribe: u16,
    /// `OverSubscribe=FORCE` (every job shares) or not (`YES:N`: only jobs
    /// with `--oversubscribe`), when it is not what `oversubscribe` above 1
    /// says alone (files before `YES:N` was modelled have only FORCE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// `OverSubscribe=EXCLUSIVE`, when set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

fn one() -> u16 {
    1
}

fn is_one(x: &u16) -> bool {
    *x == 1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuTypeRec {
    pub name: String,
    pub model: String,
    pub mig: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRec {
    pub nodes: Vec<NodeRec>,
    pub partitions: Vec<PartRec>,
    pub gpu_types: Vec<GpuTypeRec>,
}

/// A GPU request: count and optional type name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuReqRec {
    #[serde(rename = "type")]
    pub ty: Option<String>,
    pub count: u32,
}

/// The job's request, as resolved against the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRec {
    pub min_nodes: u32,
    pub max_nodes: u32,
    /// No maximum was given (`-n N` without `-N`): the selection aims at `min_nodes`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub max_nodes_open: bool,
    pub ntasks: Option<u32>,
    pub ntasks_per_node: Option<u32>,
    pub cpus_per_task: u32,
    /// `default`, `per_node`, `per_cpu`, `per_gpu`, `whole_node`.
    pub mem: String,
    pub mem_mib: u64,
    pub gpus_per_node: Vec<GpuReqRec>,
    pub gpus_per_job: Option<GpuReqRec>,
    pub gpus_per_task: Option<GpuReqRec>,
    pub cpus_per_gpu: Option<u32>,
    /// `--time` in seconds; `None` with `time_unlimited` false: not given.
    pub time: Option<u64>,
    pub time_unlimited: bool,
    pub partitions: Vec<String>,
    pub nodelist: Vec<String>,
    pub exclude: Vec<String>,
    pub features: Vec<String>,
    pub exclusive: bool,
    /// `--oversubscribe`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub oversubscribe: bool,
    /// `--gres=shard:N` / `--gres=mps:N`: the kind and the count per node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared: Option<(String, u32)>,
    /// `--switches=count[@max-time]`: the count and the wait in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub switches: Option<(u32, Option<u64>)>,
    /// `--segment=N` (topology/block, beyond Slurm 22.05).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment: Option<u32>,
}

/// What one run holds on one node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeAllocRec {
    pub node: String,
    pub cpus: u32,
    /// Core ids, as ranges (`0-3,8`).
    pub cores: String,
    pub mem_mib: u64,
    /// GRES indices of the GPU devices.
    pub gpus: Vec<u8>,
    pub tasks: u32,
    /// gres/shard or gres/mps: the GPU's GRES index and the share count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<(u8, u32)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRec {
    pub start: u64,
    /// `None` while the run went on when the simulation stopped.
    pub end: Option<u64>,
    /// How the run ended (`RUNNING` while it goes on).
    pub state: String,
    pub partition: String,
    pub exclusive: bool,
    /// The run was `NODE_CR_AVAILABLE` (it could share cores in its
    /// partition's rows; `gresim_model::RowUse`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub node_cr_available: bool,
    pub nodes: Vec<NodeAllocRec>,
}

impl RunRec {
    pub fn gpu_count(&self) -> u32 {
        self.nodes.iter().map(|n| n.gpus.len() as u32).sum()
    }
    pub fn cpu_count(&self) -> u32 {
        self.nodes.iter().map(|n| n.cpus).sum()
    }
    /// Whether the run holds its resources at `t` (start ≤ t < end).
    pub fn active_at(&self, t: u64) -> bool {
        self.start <= t && self.end.is_none_or(|e| t < e)
    }
}

/// One pending-reason change: time, reason, description.
pub type ReasonRec = (u64, String, Option<String>);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRec {
    /// `%A_%a` for array tasks, else the job id (`?` for a task never started).
    pub id: String,
    pub job_id: Option<u32>,
    pub array_job_id: Option<u32>,
    pub task: Option<u32>,
    /// Array throttle (`%N`).
    pub throttle: Option<u32>,
    /// Index of the submission in the workload.
    pub sub: u32,
    pub key: String,
    pub name: String,
    pub user: String,
    /// The job's account and QOS, with accounting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// `--reservation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<String>,
    pub first_submit: u64,
    /// The last submit time (a requeue resets it, as in Slurm).
    pub submit: u64,
    pub eligible: Option<u64>,
    /// Final state ([`JobState::as_str`]).
    pub state: String,
    /// Final reason and description.
    pub reason: String,
    pub reason_desc: Option<String>,
    pub priority: u32,
    pub exit_code: i32,
    /// The time limit of the job in its partition, seconds; `None` is UNLIMITED.
    pub time_limit: Option<u64>,
    /// `--dependency` as sbatch would print it, with job ids.
    pub dependency: Option<String>,
    pub begin: Option<u64>,
    /// Submitted with `--hold`.
    pub hold: bool,
    /// Message of a rejected submission.
    pub rejected: Option<String>,
    /// When a terminal job left the system: the end of its last run, or, for
    /// a job that ended while pending (cancelled, rejected, dependency never
    /// satisfied), the time of that event as far as the run data tells.
    pub ended: Option<u64>,
    pub request: RequestRec,
    pub runs: Vec<RunRec>,
    /// The pending-reason history (when the run recorded it).
    pub reasons: Option<Vec<ReasonRec>>,
    /// Its priority over time, `[t, priority]` from `t` on, the first at
    /// `first_submit`: only where same-QOS preemption (`WITHIN`) compares
    /// priorities (`PreemptRec::priorities`), and only for a job whose
    /// priority changed after submission (else it is `priority` throughout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priorities: Option<Vec<(u64, u32)>>,
}

/// A timed admin action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionRec {
    pub at: u64,
    /// `node_down`, `node_up`, `node_drain`, `node_resume`, `hold`,
    /// `hold_admin`, `release`, `cancel`, `requeue`.
    pub action: String,
    /// Hostlist of the nodes, for node actions.
    pub nodes: Option<String>,
    /// Submission index, for job actions.
    pub sub: Option<u32>,
}

/// A node's admin state from time `t` on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeStateRec {
    pub t: u64,
    pub node: String,
    /// `UP`, `DOWN`, `DRAIN`.
    pub state: String,
}

/// The load timeline: `[t, alloc_gpus, alloc_gpu_sevenths, alloc_cpus, avail_gpus, running, pending]`.
pub type SampleRec = [u64; 7];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageRec {
    pub gpu_alloc_secs: Vec<u64>,
    pub gpu_avail_secs: Vec<u64>,
    pub cpu_alloc_secs: u64,
    pub cpu_avail_secs: u64,
    pub from: u64,
    pub to: u64,
}

/// The fair-share factor of each account's users over time (runs with
/// accounting under priority/multifactor): per sample, the mean FairShare
/// of the user associations directly under each account, to 4 decimals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FairshareRec {
    pub accounts: Vec<String>,
    pub samples: Vec<(u64, Vec<f64>)>,
}

impl FairshareRec {
    pub(super) fn new(out: &SimOutput) -> Option<FairshareRec> {
        let acct = out.cluster.accounting()?;
        if out.fairshare_log.is_empty() {
            return None;
        }
        // Accounts with users directly under them, in configuration order.
        let mut users: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, a) in acct.assocs.iter().enumerate() {
            // The user root that `sacctmgr add cluster` puts under root
            // runs nothing.
            let (Some(u), Some(p)) = (&a.user, a.parent) else {
                continue;
            };
            if u == "root" {
                continue;
            }
            let name = &acct.assocs[p as usize].account;
            match users.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.push(i),
                None => users.push((name.clone(), vec![i])),
            }
        }
        let samples = out
            .fairshare_log
            .iter()
            .map(|(t, f)| {
                let means = users
                    .iter()
                    .map(|(_, us)| {
                        let m = us.iter().map(|&i| f[i]).sum::<f64>() / us.len() as f64;
                        (m * 1e4).round() / 1e4
                    })
                    .collect();
                (*t, means)
            })
            .collect();
        Some(FairshareRec {
            accounts: users.into_iter().map(|(n, _)| n).collect(),
            samples,
        })
    }
}

/// The whole persisted run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    pub format: String,
    pub version: u32,
    pub scenario: String,
    pub policy: String,
    pub seed: Option<u64>,
    pub end_time: u64,
    pub hit_horizon: bool,
    pub events: u64,
    /// Whether the pending-reason history was recorded.
    pub reasons_recorded: bool,
    pub def_mem_per_cpu: Option<u64>,
    /// The preemption settings, when the run had a PreemptType.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<PreemptRec>,
    pub cluster: ClusterRec,
    pub actions: Vec<ActionRec>,
    /// Every change of a node's admin state, in time order.
    pub node_states: Vec<NodeStateRec>,
    pub timeline: Vec<SampleRec>,
    pub usage: UsageRec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairshare: Option<FairshareRec>,
    /// The advance reservations, each version with the time it held from
    /// (absent when the run had none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reservations: Vec<ResvRec>,
    pub scenario_text: Option<String>,
    pub jobs: Vec<JobRec>,
}

/// One version of a reservation: what it was from `from` until `until`
/// (the next change; `None`: to the end of the run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResvRec {
    pub name: String,
    pub nodes: String,
    pub users: Vec<String>,
    pub accounts: Vec<String>,
    pub start: u64,
    pub end: u64,
    pub flags: Vec<String>,
    /// `DAILY` or `WEEKLY`: the period, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<u64>,
    pub from: u64,
    pub until: Option<u64>,
}

impl ResvRec {
    /// The window in force at `t` (a recurring reservation moves on after each end).
    pub fn window(&self, t: u64) -> (u64, u64) {
        match self.period {
            Some(p) if p > 0 && self.end <= t && self.end > self.start => {
                let k = (t - self.end) / p + 1;
                (self.start + k * p, self.end + k * p)
            }
            _ => (self.start, self.end),
        }
    }

    /// Whether this version is the one at `t` and its window is in force then.
    pub fn active_at(&self, t: u64) -> bool {
        let (s, e) = self.window(t);
        self.from <= t && self.until.is_none_or(|u| t < u) && s <= t && t < e
    }

    /// Whether this version is the one in force at `t`.
    pub fn current_at(&self, t: u64) -> bool {
        self.from <= t && self.until.is_none_or(|u| t < u)
    }
}

/// Writes sorted small integers as ranges: `0-3,5`.
pub fn ranges(idx: impl Iterator<Item = u32>) -> String {
    let mut rs: Vec<(u32, u32)> = Vec::new();
    for i in idx {
        match rs.last_mut() {
            Some((_, hi)) if *hi + 1 == i => *hi = i,
            _ => rs.push((i, i)),
        }
    }
    rs.iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads `0-3,5` back; `None` on bad text.
pub fn parse_ranges(s: &str) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 100_000 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.parse().ok()?),
        }
    }
    Some(v)
}

/// run.json's header, borrowed: serialises exactly as a [`RunFile`] (same
/// fields in the same order) whose job list is empty. `T` is the timeline.
/// A run's preemption settings (docs/preemption.md), for `explain`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreemptRec {
    /// `preempt/partition_prio` or `preempt/qos`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The global PreemptMode.
    pub mode: String,
    /// PreemptExemptTime in seconds.
    pub exempt_time: Option<u64>,
    pub youngest_first: bool,
    pub reorder_count: u32,
    pub strict_order: bool,
    /// Under preempt/qos: each QOS's preemption settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qos: Vec<QosPreemptRec>,
    /// Whether the jobs' priority changes are recorded (their
    /// `priorities`): under preempt/qos with `WITHIN`, whose same-QOS
    /// preemption compares job priorities (absent in older run files).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub priorities: bool,
    /// Whether those are priority/multifactor's: each job's queue priority
    /// as computed when it joined the queue and at each decay pass (the
    /// highest of its partitions'), and, from each start, the one it
    /// started with, which a running job keeps (absent in older run files
    /// and under priority/basic, whose `priorities` are the job's own).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multifactor: bool,
}

/// One QOS's preemption settings (sacctmgr's `Preempt`, `PreemptMode`,
/// `GraceTime`, `PreemptExemptTime`, and its priority).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QosPreemptRec {
    pub name: String,
    pub priority: u32,
    /// The QOS this one may preempt.
    pub preempt: Vec<String>,
    /// Its PreemptMode; `None` takes the global one.
    pub mode: Option<String>,
    pub grace_time: u64,
    /// Its PreemptExemptTime; `None` takes the global one.
    pub exempt_time: Option<u64>,
}

impl PreemptRec {
    /// The run's preemption settings (`None` without preemption), and
    /// whether its jobs' priority histories are kept, and are multifactor's.
    pub(super) fn of(out: &SimOutput) -> Option<PreemptRec> {
        let (p, cluster) = (&out.params.preempt, &out.cluster);
        let priorities = out.priority_log.is_some();
        let multifactor = matches!(
            out.params.priority,
            gresim_sched::priority::PriorityConfig::Multifactor(_)
        );
        let qos = match (p.ptype, cluster.accounting()) {
            (gresim_model::preempt::PreemptType::Qos, Some(a)) => a
                .qos
                .iter()
                .map(|q| QosPreemptRec {
                    name: q.name.clone(),
                    priority: q.priority,
                    preempt: q
                        .preempt
                        .iter()
                        .filter_map(|id| a.qos.get(*id as usize).map(|x| x.name.clone()))
                        .collect(),
                    mode: q.preempt_mode.map(|m| m.to_string()),
                    grace_time: q.grace_time,
                    exempt_time: q.preempt_exempt_time,
                })
                .collect(),
            _ => Vec::new(),
        };
        p.enabled().then(|| PreemptRec {
            ty: p.ptype.as_str().to_string(),
            mode: p.mode.to_string(),
            exempt_time: p.exempt_time,
            youngest_first: p.youngest_first,
            reorder_count: p.reorder_count,
            strict_order: p.strict_order,
            qos,
            priorities,
            multifactor: priorities && multifactor,
        })
    }

    /// The settings back, as the scheduler reads them.
    pub fn config(&self) -> Option<gresim_model::preempt::PreemptConfig> {
        Some(gresim_model::preempt::PreemptConfig {
            ptype: self.ty.parse().ok()?,
            mode: self.mode.parse().ok()?,
            exempt_time: self.exempt_time,
            youngest_first: self.youngest_first,
            reorder_count: self.reorder_count,
            strict_order: self.strict_order,
            ..gresim_model::preempt::PreemptConfig::new()
        })
    }
}

/// Reads a state name ([`JobState::as_str`]).
pub fn parse_state(s: &str) -> Option<JobState> {
    JobState::ALL.iter().copied().find(|x| x.as_str() == s)
}

/// What a job is doing at one instant.
#[derive(Debug, Clone, PartialEq)]
pub enum JobAt<'a> {
    /// Submitted and waiting; `reason` and `desc` as squeue prints them.
    Pending {
        reason: String,
        desc: Option<String>,
        /// Whether the job ran before (it was requeued).
        requeued: bool,
    },
    Running(&'a RunRec),
    /// Ended (`state`), at `end`.
    Done {
        state: JobState,
        end: u64,
    },
}

impl JobRec {
    /// The job's priority at `t` (after the changes of that second), as far
    /// as the run file tells: its `priorities` when recorded, else its
    /// final priority.
    pub fn priority_at(&self, t: u64) -> u32 {
        let Some(h) = self.priorities.as_deref() else {
            return self.priority;
        };
        let i = h.partition_point(|&(at, _)| at <= t);
        h.get(i.saturating_sub(1))
            .map_or(self.priority, |&(_, p)| p)
    }

    /// The job's state at `t`, or `None` before its submission.
    pub fn at(&self, t: u64) -> Option<JobAt<'_>> {
        if t < self.first_submit {
            return None;
        }
        let state = parse_state(&self.state).unwrap_or(JobState::Pending);
        if state == JobState::Rejected {
            return Some(JobAt::Done {
                state,
                end: self.first_submit,
            });
        }
        if let Some(r) = self.runs.iter().find(|r| r.active_at(t)) {
            return Some(JobAt::Running(r));
        }
        let started = self.runs.iter().filter(|r| r.start <= t).count();
        if let Some(e) = self.ended {
            if t >= e {
                // The last run ended with the job, or it ended while pending.
                let after_last = self.runs.len() == started;
                if after_last {
                    return Some(JobAt::Done { state, end: e });
                }
            }
        }
        let (reason, desc) = self.reason_at(t);
        Some(JobAt::Pending {
            reason,
            desc,
            requeued: started > 0,
        })
    }

    /// The pending reason at `t`: the last recorded change at or before `t`;
    /// without a history, the final reason.
    pub fn reason_at(&self, t: u64) -> (String, Option<String>) {
        match &self.reasons {
            Some(h) => h
                .iter()
                .rev()
                .find(|r| r.0 <= t)
                .map_or(("None".to_string(), None), |r| (r.1.clone(), r.2.clone())),
            None => (self.reason.clone(), self.reason_desc.clone()),
        }
    }

    /// The job's partition for display: its run's, else the requested ones, else `default`.
    pub fn partition_for(&self, run: Option<&RunRec>, default: Option<&str>) -> String {
        if let Some(r) = run {
            return r.partition.clone();
        }
        if !self.request.partitions.is_empty() {
            return self.request.partitions.join(",");
        }
        default.unwrap_or("").to_string()
    }

    /// `gres:gpu[:type]:N` per node, as squeue's `%b` (TRES_PER_NODE) prints it; `N/A` without GPUs per node.
    pub fn tres_per_node(&self) -> String {
        if self.request.gpus_per_node.is_empty() {
            return "N/A".to_string();
        }
        self.request
            .gpus_per_node
            .iter()
            .map(|g| match &g.ty {
                Some(t) => format!("gres:gpu:{t}:{}", g.count),
                None => format!("gres:gpu:{}", g.count),
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Writes the request's resources per node in words (for `explain`).
pub fn describe_request(r: &RequestRec) -> String {
    let mut s = String::new();
    if r.min_nodes == r.max_nodes {
        let _ = write!(s, "{} node(s)", r.min_nodes);
    } else {
        let _ = write!(s, "{}-{} nodes", r.min_nodes, r.max_nodes);
    }
    if let Some(n) = r.ntasks {
        let _ = write!(s, ", {n} task(s)");
    }
    if let Some(n) = r.ntasks_per_node {
        let _ = write!(s, ", {n} task(s) per node");
    }
    if r.cpus_per_task != 1 {
        let _ = write!(s, ", {} CPU(s) per task", r.cpus_per_task);
    }
    if let Some(c) = r.cpus_per_gpu {
        let _ = write!(s, ", {c} CPU(s) per GPU");
    }
    let gpu = |g: &GpuReqRec| match &g.ty {
        Some(t) => format!("gpu:{t}:{}", g.count),
        None => format!("gpu:{}", g.count),
    };
    for g in &r.gpus_per_node {
        let _ = write!(s, ", {} per node", gpu(g));
    }
    if let Some(g) = &r.gpus_per_job {
        let _ = write!(s, ", {} for the job (--gpus)", gpu(g));
    }
    if let Some(g) = &r.gpus_per_task {
        let _ = write!(s, ", {} per task", gpu(g));
    }
    let mem = gresim_model::units::format_mem_mib(r.mem_mib);
    match r.mem.as_str() {
        "per_node" => {
            let _ = write!(s, ", --mem={mem}");
        }
        "per_cpu" => {
            let _ = write!(s, ", --mem-per-cpu={mem}");
        }
        "per_gpu" => {
            let _ = write!(s, ", --mem-per-gpu={mem}");
        }
        "whole_node" => s.push_str(", --mem=0 (whole node)"),
        _ => s.push_str(", no memory option (DefMemPerCPU, else the whole node)"),
    }
    if !r.features.is_empty() {
        let _ = write!(s, ", -C {}", r.features.join("&"));
    }
    if !r.nodelist.is_empty() {
        let _ = write!(s, ", -w {}", gresim_model::hostlist::compress(&r.nodelist));
    }
    if !r.exclude.is_empty() {
        let _ = write!(s, ", -x {}", gresim_model::hostlist::compress(&r.exclude));
    }
    if r.exclusive {
        s.push_str(", --exclusive");
    }
    s
}
