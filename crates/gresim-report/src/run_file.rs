//! `run.json`: the persisted run. Everything the views (`sim squeue`,
//! `sacct`, `sinfo`, `explain`, `report`) need to reconstruct the cluster at
//! any time T: the cluster, every job with every run and its allocation, the
//! pending-reason history, the timed admin actions with the node-state
//! timeline they imply, the load timeline and the scenario text.
//!
//! The file is compact JSON (one job per line) with a fixed key order, so the
//! same run gives the same bytes. [`RunFile::load`] reads it back and checks
//! it; every view works on a [`RunFile`], never on a live engine.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use gresim_engine::{Action, SimOutput, TimedAction};
use gresim_model::catalog;
use gresim_model::job::{DepKind, GpuReq, Job, JobRequest, JobState, MemReq, Reason};
use gresim_model::state::gpu_indices;
use gresim_model::{
    Allocation, Cluster, ClusterState, CoreSet, GpuDevice, GpuType, GpuTypeId, MigInstance, Node,
    NodeAdminState, NodeAlloc, NodeId, PartId, Partition,
};
use gresim_sched::SchedParams;
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
}

fn is_zero(x: &u64) -> bool {
    *x == 0
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
    fn new(out: &SimOutput) -> Option<FairshareRec> {
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

/// Every version of every reservation, from the engine's history.
fn resv_recs(out: &SimOutput) -> Vec<ResvRec> {
    let c = &out.cluster;
    let h = &out.resv_history;
    let mut v = Vec::new();
    for (k, (from, all)) in h.iter().enumerate() {
        let until = h.get(k + 1).map(|x| x.0);
        for r in &all.list {
            v.push(ResvRec {
                name: r.name.to_string(),
                nodes: gresim_model::hostlist::compress(&c.node_names(&r.nodes)),
                users: r.users.iter().map(|u| u.to_string()).collect(),
                accounts: r.accounts.iter().map(|a| a.to_string()).collect(),
                start: r.start,
                end: r.end,
                flags: r.flags.names().iter().map(|f| f.to_string()).collect(),
                period: r.period(),
                from: *from,
                until,
            });
        }
    }
    v
}

/// The account and QOS names of a job under accounting.
fn acct_names(out: &SimOutput, spec: Option<&gresim_model::JobSpec>) -> Option<(String, String)> {
    let a = out.cluster.accounting()?;
    let ja = spec?.acct()?;
    Some((
        a.assocs[ja.assoc as usize].account.clone(),
        a.qos[ja.qos as usize].name.clone(),
    ))
}

/// run.json's own words only (upper case), read back.
fn admin_from(s: &str) -> Option<NodeAdminState> {
    match s {
        "UP" | "DOWN" | "DRAIN" => s.parse().ok(),
        _ => None,
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

fn gpu_req_rec(c: &Cluster, g: &GpuReq) -> GpuReqRec {
    GpuReqRec {
        ty: g.ty.map(|t| c.gpu_type(t).name.clone()),
        count: g.count,
    }
}

fn request_rec(c: &Cluster, r: &JobRequest) -> RequestRec {
    let (mem, mem_mib) = match r.mem {
        MemReq::Default => ("default", 0),
        MemReq::PerNode(m) => ("per_node", m),
        MemReq::PerCpu(m) => ("per_cpu", m),
        MemReq::PerGpu(m) => ("per_gpu", m),
        MemReq::WholeNode => ("whole_node", 0),
    };
    let names =
        |ids: &[NodeId]| -> Vec<String> { ids.iter().map(|n| c.node(*n).name.clone()).collect() };
    RequestRec {
        min_nodes: r.min_nodes,
        max_nodes: r.max_nodes,
        max_nodes_open: r.max_nodes_open,
        ntasks: r.ntasks,
        ntasks_per_node: r.ntasks_per_node,
        cpus_per_task: r.cpus_per_task,
        mem: mem.to_string(),
        mem_mib,
        gpus_per_node: r.gpus_per_node.iter().map(|g| gpu_req_rec(c, g)).collect(),
        gpus_per_job: r.gpus_per_job.as_ref().map(|g| gpu_req_rec(c, g)),
        gpus_per_task: r.gpus_per_task.as_ref().map(|g| gpu_req_rec(c, g)),
        cpus_per_gpu: r.cpus_per_gpu,
        time: r.time_limit.flatten(),
        time_unlimited: r.time_limit == Some(None),
        partitions: r
            .partitions
            .iter()
            .map(|p| c.partition(*p).name.clone())
            .collect(),
        nodelist: names(&r.nodelist),
        exclude: names(&r.exclude),
        features: r.features.clone(),
        exclusive: r.exclusive,
        shared: r.shared.map(|s| (s.kind.as_str().to_string(), s.per_node)),
        switches: r.switches.map(|s| (s.count, s.wait)),
        segment: r.segment,
    }
}

/// The job id a dependency on submission `sub` (task `task`) names.
fn dep_target(out: &SimOutput, first_job: &[usize], sub: u32, task: Option<u32>) -> String {
    let Some(&j) = first_job.get(sub as usize).filter(|&&j| j != usize::MAX) else {
        return format!("?{sub}");
    };
    let job = &out.jobs[j];
    let base = job
        .array_job_id
        .or(job.job_id)
        .map_or_else(|| "?".to_string(), |i| i.to_string());
    match task {
        Some(t) => format!("{base}_{t}"),
        None => base,
    }
}

fn action_rec(c: &Cluster, a: &TimedAction) -> ActionRec {
    let hl = |ns: &[NodeId]| Some(gresim_model::hostlist::compress(&c.node_names(ns)));
    let (action, nodes, sub) = match &a.action {
        Action::NodeDown(n) => ("node_down", hl(n), None),
        Action::NodeUp(n) => ("node_up", hl(n), None),
        Action::NodeDrain(n) => ("node_drain", hl(n), None),
        Action::NodeResume(n) => ("node_resume", hl(n), None),
        Action::Hold { sub, admin } => {
            (if *admin { "hold_admin" } else { "hold" }, None, Some(*sub))
        }
        Action::Release { sub, .. } => ("release", None, Some(*sub)),
        Action::Cancel { sub } => ("cancel", None, Some(*sub)),
        // The first job named (none: every job the filters select).
        Action::CancelWhere { subs, .. } => (
            "cancel_where",
            None,
            subs.as_ref().and_then(|s| s.first().copied()),
        ),
        Action::Signal { sub, .. } => ("signal", None, Some(*sub)),
        Action::Requeue { sub } => ("requeue", None, Some(*sub)),
        Action::RequeueHold { sub, .. } => ("requeue_hold", None, Some(*sub)),
        Action::Suspend { sub } => ("suspend", None, Some(*sub)),
        Action::Resume { sub } => ("resume", None, Some(*sub)),
        Action::Top { subs, .. } => ("top", None, subs.first().copied()),
        Action::Update { sub, .. } => ("update", None, Some(*sub)),
        Action::NodeFail(n) => ("node_fail", hl(n), None),
        Action::NodeRepair(n) => ("node_repair", hl(n), None),
        Action::ResvCreate(r) => ("create_reservation", hl(&r.resv.nodes), None),
        Action::ResvUpdate(c) => ("update_reservation", c.nodes.as_deref().and_then(hl), None),
        Action::ResvDelete(_) => ("delete_reservation", None, None),
    };
    ActionRec {
        at: a.at,
        action: action.to_string(),
        nodes,
        sub,
    }
}

/// The node-state timeline the actions imply, as the engine applies them.
fn node_states(c: &Cluster, actions: &[TimedAction]) -> Vec<NodeStateRec> {
    let mut cur: Vec<NodeAdminState> = c.nodes.iter().map(|n| n.state).collect();
    let mut sorted: Vec<&TimedAction> = actions.iter().collect();
    sorted.sort_by_key(|a| a.at); // stable: equal times keep their order
    let mut out = Vec::new();
    for a in sorted {
        let (nodes, to) = match &a.action {
            Action::NodeDown(n) | Action::NodeFail(n) => (n, NodeAdminState::Down),
            Action::NodeUp(n) | Action::NodeResume(n) | Action::NodeRepair(n) => {
                (n, NodeAdminState::Up)
            }
            Action::NodeDrain(n) => (n, NodeAdminState::Drain),
            _ => continue,
        };
        for n in nodes {
            let Some(s) = cur.get_mut(n.idx()) else {
                continue;
            };
            if *s != to {
                *s = to;
                out.push(NodeStateRec {
                    t: a.at,
                    node: c.node(*n).name.clone(),
                    state: to.as_str().to_string(),
                });
            }
        }
    }
    out
}

/// When a terminal job left the system (see [`JobRec::ended`]).
fn ended(
    job: &Job,
    sub_cancels: &[u64],
    reasons: Option<&Vec<gresim_engine::ReasonChange>>,
) -> Option<u64> {
    if !job.state.is_terminal() {
        return None;
    }
    if let Some(last) = job.runs.last() {
        if last.state == job.state {
            return last.end;
        }
    }
    if job.state == JobState::Rejected {
        return Some(job.first_submit);
    }
    let from = job
        .runs
        .last()
        .and_then(|r| r.end)
        .unwrap_or(job.first_submit);
    if job.state == JobState::Cancelled && job.reason != Reason::DependencyNeverSatisfied {
        if let Some(&t) = sub_cancels.iter().find(|&&t| t >= from) {
            return Some(t);
        }
    }
    let last_reason = reasons.and_then(|h| h.last()).map_or(from, |r| r.t);
    Some(from.max(last_reason))
}

/// The cluster as run.json records it.
fn cluster_rec(c: &Cluster) -> ClusterRec {
    ClusterRec {
        nodes: c
            .nodes
            .iter()
            .map(|n| NodeRec {
                name: n.name.clone(),
                sockets: n.sockets,
                cores_per_socket: n.cores_per_socket,
                threads_per_core: n.threads_per_core,
                memory_mib: n.memory_mib,
                features: n.features.clone(),
                weight: n.weight,
                state: n.state.as_str().to_string(),
                gpus: n
                    .gpus
                    .iter()
                    .map(|g| GpuRec {
                        ty: c.gpu_type(g.ty).name.clone(),
                        model: catalog::model(g.model).name.to_string(),
                        socket: g.socket,
                        phys: g.phys,
                        mig: g.mig.map(|m| (m.profile.name.to_string(), m.start)),
                    })
                    .collect(),
                gpu_links: n.gpu_links.clone(),
                shares: c
                    .node_id(&n.name)
                    .and_then(|id| c.node_shares(id))
                    .map(|s| {
                        (
                            s.kind.as_str().to_string(),
                            s.per_gpu.clone(),
                            s.one_sharing,
                        )
                    }),
            })
            .collect(),
        partitions: c
            .partitions
            .iter()
            .map(|p| PartRec {
                name: p.name.clone(),
                nodes: p.nodes.iter().map(|n| c.node(*n).name.clone()).collect(),
                default: p.default,
                max_time: p.max_time,
                default_time: p.default_time,
                priority_tier: p.priority_tier,
                priority_job_factor: p.priority_job_factor,
                min_nodes: p.min_nodes,
                max_nodes: p.max_nodes,
                state: p.state.as_str().to_string(),
                preempt_mode: p.preempt_mode.map(|m| m.as_str().to_string()),
                grace_time: p.grace_time,
            })
            .collect(),
        gpu_types: c
            .gpu_types
            .iter()
            .map(|t| GpuTypeRec {
                name: t.name.clone(),
                model: catalog::model(t.model).name.to_string(),
                mig: t.mig.map(|p| p.name.to_string()),
            })
            .collect(),
    }
}

/// What each job's record needs from the whole run.
struct JobCtx {
    /// `first_job[sub]`: the index in the job table of submission `sub`'s
    /// first job (`usize::MAX`: none), for dependencies.
    first_job: Vec<usize>,
    /// Cancel actions per submission, sorted by time.
    cancels: BTreeMap<u32, Vec<u64>>,
}

impl JobCtx {
    fn new(out: &SimOutput, meta: &RunMeta) -> JobCtx {
        let subs = out
            .jobs
            .iter()
            .map(|j| j.sub as usize + 1)
            .max()
            .unwrap_or(0);
        let mut first_job = vec![usize::MAX; subs];
        for (i, j) in out.jobs.iter().enumerate().rev() {
            first_job[j.sub as usize] = i;
        }
        let mut cancels: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for a in &meta.actions {
            if let Action::Cancel { sub } = a.action {
                cancels.entry(sub).or_default().push(a.at);
            }
        }
        for v in cancels.values_mut() {
            v.sort_unstable();
        }
        JobCtx { first_job, cancels }
    }
}

/// The record of job `i` of the job table.
fn job_rec(out: &SimOutput, ctx: &JobCtx, i: usize, j: &Job) -> JobRec {
    let c = &out.cluster;
    let spec = out.specs.get(j.sub as usize);
    let part = crate::records::job_partition(out, j).filter(|p| p.idx() < c.partitions.len());
    let time_limit = match part {
        Some(p) => gresim_sched::time_limit_in(c, j, p),
        None => j.request.time_limit.flatten(),
    };
    let dependency = spec.and_then(|s| s.dependency()).map(|d| {
        d.terms
            .iter()
            .map(|t| match (t.kind, t.target) {
                (DepKind::Singleton, _) | (_, None) => t.kind.as_str().to_string(),
                (k, Some(sub)) => {
                    format!(
                        "{}:{}",
                        k.as_str(),
                        dep_target(out, &ctx.first_job, sub, t.task)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(if d.any { "?" } else { "," })
    });
    let hist = out.reasons.as_ref().and_then(|r| r.get(i));
    JobRec {
        id: j.display_id(),
        job_id: j.job_id.map(|x| x.0),
        array_job_id: j.array_job_id.map(|x| x.0),
        task: j.task,
        throttle: spec.and_then(|s| s.array()).and_then(|a| a.throttle),
        sub: j.sub,
        key: spec.map_or_else(String::new, |s| s.key.clone()),
        name: spec.map_or_else(String::new, |s| s.name.to_string()),
        user: spec.map_or_else(String::new, |s| s.user.to_string()),
        account: acct_names(out, spec).map(|(a, _)| a),
        qos: acct_names(out, spec).map(|(_, q)| q),
        reservation: spec.and_then(|s| s.reservation()).map(str::to_string),
        first_submit: j.first_submit,
        submit: j.submit,
        eligible: j.eligible,
        state: j.state.as_str().to_string(),
        reason: j.reason.as_str().to_string(),
        reason_desc: j.reason_desc.clone(),
        priority: j.priority,
        exit_code: j.exit_code,
        time_limit,
        dependency,
        begin: j.begin,
        hold: spec.is_some_and(|s| s.hold),
        rejected: j.rejected().map(str::to_string),
        ended: ended(
            j,
            ctx.cancels.get(&j.sub).map_or(&[][..], |v| v.as_slice()),
            hist,
        ),
        request: request_rec(c, &j.request),
        runs: j
            .runs
            .iter()
            .map(|r| RunRec {
                start: r.start,
                end: r.end,
                state: r.state.as_str().to_string(),
                partition: c
                    .partitions
                    .get(r.partition.idx())
                    .map_or_else(String::new, |p| p.name.clone()),
                exclusive: r.alloc.exclusive,
                nodes: r
                    .alloc
                    .nodes
                    .iter()
                    .map(|na| NodeAllocRec {
                        node: c.node(na.node).name.clone(),
                        cpus: na.cpus,
                        cores: ranges(na.cores.iter()),
                        mem_mib: na.mem_mib,
                        gpus: gpu_indices(na.gpus).collect(),
                        tasks: na.tasks,
                        share: na.share.map(|s| (s.gpu, s.count)),
                    })
                    .collect(),
            })
            .collect(),
        reasons: hist.map(|h| {
            h.iter()
                .map(|r| (r.t, r.reason.as_str().to_string(), r.desc.clone()))
                .collect()
        }),
    }
}

/// The parts of run.json's header that are built, not borrowed, from an engine output.
struct HeadParts {
    cluster: ClusterRec,
    actions: Vec<ActionRec>,
    node_states: Vec<NodeStateRec>,
    usage: UsageRec,
    fairshare: Option<FairshareRec>,
    reservations: Vec<ResvRec>,
}

impl HeadParts {
    fn new(out: &SimOutput, meta: &RunMeta) -> HeadParts {
        let c = &out.cluster;
        let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
        HeadParts {
            cluster: cluster_rec(c),
            actions: meta.actions.iter().map(|a| action_rec(c, a)).collect(),
            node_states: if out.node_log.is_empty() {
                node_states(c, &meta.actions)
            } else {
                // What the engine applied: failures included, actions after
                // a horizon not.
                out.node_log
                    .iter()
                    .map(|ch| NodeStateRec {
                        t: ch.t,
                        node: c.node(ch.node).name.clone(),
                        state: ch.state.as_str().to_string(),
                    })
                    .collect()
            },
            usage: UsageRec {
                gpu_alloc_secs: out.usage.gpu_alloc_secs.iter().map(|&v| clamp(v)).collect(),
                gpu_avail_secs: out.usage.gpu_avail_secs.iter().map(|&v| clamp(v)).collect(),
                cpu_alloc_secs: clamp(out.usage.cpu_alloc_secs),
                cpu_avail_secs: clamp(out.usage.cpu_avail_secs),
                from: out.usage.from,
                to: out.usage.to,
            },
            fairshare: FairshareRec::new(out),
            reservations: resv_recs(out),
        }
    }
}

fn sample_rec(s: &gresim_engine::Sample) -> SampleRec {
    [
        s.t,
        u64::from(s.alloc_gpus),
        u64::from(s.alloc_gpu_sevenths),
        u64::from(s.alloc_cpus),
        u64::from(s.avail_gpus),
        u64::from(s.running),
        u64::from(s.pending),
    ]
}

/// The engine's load timeline, serialised as `Vec<SampleRec>` without building it.
struct TimelineSer<'a>(&'a [gresim_engine::Sample]);

impl Serialize for TimelineSer<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(sample_rec))
    }
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
    fn of(
        p: &gresim_model::preempt::PreemptConfig,
        cluster: &gresim_model::Cluster,
    ) -> Option<PreemptRec> {
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

#[derive(Serialize)]
struct Head<'a, T: Serialize> {
    format: &'a str,
    version: u32,
    scenario: &'a str,
    policy: &'a str,
    seed: Option<u64>,
    end_time: u64,
    hit_horizon: bool,
    events: u64,
    reasons_recorded: bool,
    def_mem_per_cpu: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preempt: Option<PreemptRec>,
    cluster: &'a ClusterRec,
    actions: &'a [ActionRec],
    node_states: &'a [NodeStateRec],
    timeline: T,
    usage: &'a UsageRec,
    #[serde(skip_serializing_if = "Option::is_none")]
    fairshare: Option<&'a FairshareRec>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    reservations: &'a [ResvRec],
    scenario_text: Option<&'a str>,
    jobs: &'a [JobRec],
}

/// A writer that passes everything on to `inner` but the last `keep` bytes
/// (and a block of up to 8 KiB before them, until the caller takes them).
struct HoldBack<'w, W: Write> {
    inner: &'w mut W,
    held: Vec<u8>,
    keep: usize,
}

impl<W: Write> Write for HoldBack<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(buf);
        // Pass bytes on in blocks: serde writes a token at a time.
        if self.held.len() >= self.keep + 8192 {
            let n = self.held.len() - self.keep;
            self.inner.write_all(&self.held[..n])?;
            self.held.drain(..n);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes run.json: the header (with an empty job list) on the first line,
/// then each job on its own line, the records coming from `jobs`.
fn write_run<W: Write, T: Serialize, R: std::borrow::Borrow<JobRec>>(
    w: &mut W,
    head: &Head<'_, T>,
    jobs: impl Iterator<Item = R>,
) -> io::Result<()> {
    // Serialise the header with `"jobs":[]}` and open the list instead.
    let mut hb = HoldBack {
        inner: &mut *w,
        held: Vec::with_capacity(3 + 8192 + 64),
        keep: 3,
    };
    serde_json::to_writer(&mut hb, head)?;
    let n = hb.held.len().saturating_sub(hb.keep);
    hb.inner.write_all(&hb.held[..n])?;
    if hb.held[n..] != *b"[]}" {
        return Err(io::Error::other(
            "run.json header does not end with its job list",
        ));
    }
    w.write_all(b"[\n")?;
    for (i, j) in jobs.enumerate() {
        if i > 0 {
            w.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut *w, j.borrow())?;
    }
    w.write_all(b"\n]}\n")
}

/// Writes run.json for an engine output, job by job: the same bytes as
/// `RunFile::from_output(out, meta).to_json()`, without holding the whole
/// run (or its text) in memory.
pub fn write_run_json<W: Write>(out: &SimOutput, meta: &RunMeta, w: &mut W) -> io::Result<()> {
    let parts = HeadParts::new(out, meta);
    let head = Head {
        format: RUN_FORMAT,
        version: RUN_VERSION,
        scenario: &meta.scenario,
        policy: &out.policy,
        seed: meta.seed,
        end_time: out.end_time,
        hit_horizon: out.hit_horizon,
        events: out.events,
        reasons_recorded: out.reasons.is_some(),
        def_mem_per_cpu: out.params.def_mem_per_cpu,
        preempt: PreemptRec::of(&out.params.preempt, &out.cluster),
        cluster: &parts.cluster,
        actions: &parts.actions,
        node_states: &parts.node_states,
        timeline: TimelineSer(&out.timeline),
        usage: &parts.usage,
        fairshare: parts.fairshare.as_ref(),
        reservations: &parts.reservations,
        scenario_text: meta.scenario_text.as_deref(),
        jobs: &[],
    };
    let ctx = JobCtx::new(out, meta);
    write_run(
        w,
        &head,
        out.jobs
            .iter()
            .enumerate()
            .map(|(i, j)| job_rec(out, &ctx, i, j)),
    )
}

impl RunFile {
    /// Builds the persisted run from an engine output.
    pub fn from_output(out: &SimOutput, meta: &RunMeta) -> RunFile {
        let HeadParts {
            cluster,
            actions,
            node_states,
            usage,
            fairshare,
            reservations,
        } = HeadParts::new(out, meta);
        let ctx = JobCtx::new(out, meta);
        let jobs = out
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| job_rec(out, &ctx, i, j))
            .collect();
        RunFile {
            format: RUN_FORMAT.to_string(),
            version: RUN_VERSION,
            scenario: meta.scenario.clone(),
            policy: out.policy.clone(),
            seed: meta.seed,
            end_time: out.end_time,
            hit_horizon: out.hit_horizon,
            events: out.events,
            reasons_recorded: out.reasons.is_some(),
            def_mem_per_cpu: out.params.def_mem_per_cpu,
            preempt: PreemptRec::of(&out.params.preempt, &out.cluster),
            cluster,
            actions,
            node_states,
            timeline: out.timeline.iter().map(sample_rec).collect(),
            usage,
            fairshare,
            reservations,
            scenario_text: meta.scenario_text.clone(),
            jobs,
        }
    }

    /// Compact JSON: the header and each job on its own line, keys in a fixed order.
    pub fn to_json(&self) -> String {
        let mut v = Vec::new();
        self.write_json(&mut v)
            .expect("a run file always serialises into memory");
        String::from_utf8(v).expect("serde_json writes UTF-8")
    }

    /// [`RunFile::to_json`] into a writer.
    pub fn write_json<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let head = Head {
            format: &self.format,
            version: self.version,
            scenario: &self.scenario,
            policy: &self.policy,
            seed: self.seed,
            end_time: self.end_time,
            hit_horizon: self.hit_horizon,
            events: self.events,
            reasons_recorded: self.reasons_recorded,
            def_mem_per_cpu: self.def_mem_per_cpu,
            preempt: self.preempt.clone(),
            cluster: &self.cluster,
            actions: &self.actions,
            node_states: &self.node_states,
            timeline: &self.timeline,
            usage: &self.usage,
            fairshare: self.fairshare.as_ref(),
            reservations: &self.reservations,
            scenario_text: self.scenario_text.as_deref(),
            jobs: &[],
        };
        write_run(w, &head, self.jobs.iter())
    }

    /// Parses and checks run.json text.
    pub fn parse(text: &str) -> Result<RunFile, String> {
        let rf: RunFile =
            serde_json::from_str(text).map_err(|e| format!("not a gresim run file: {e}"))?;
        if rf.format != RUN_FORMAT {
            return Err(format!("not a gresim run file (format '{}')", rf.format));
        }
        if rf.version != RUN_VERSION {
            return Err(format!(
                "run file version {} is not supported; this gresim reads version {RUN_VERSION}",
                rf.version
            ));
        }
        rf.check()?;
        Ok(rf)
    }

    /// Reads `DIR/run.json`; the error names the file and what is wrong.
    pub fn load(dir: &Path) -> Result<RunFile, String> {
        let p = if dir.is_file() {
            dir.to_path_buf()
        } else {
            dir.join(RUN_FILE)
        };
        let text = std::fs::read_to_string(&p).map_err(|e| {
            format!(
                "{}: cannot read the run ({e}); run `sim run SCENARIO --out DIR` first",
                p.display()
            )
        })?;
        RunFile::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
    }

    /// Cross-references: every node, partition and GPU index named exists.
    fn check(&self) -> Result<(), String> {
        let nodes: BTreeMap<&str, &NodeRec> = self
            .cluster
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n))
            .collect();
        let parts: Vec<&str> = self
            .cluster
            .partitions
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        let types: Vec<&str> = self
            .cluster
            .gpu_types
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        for n in &self.cluster.nodes {
            admin_from(&n.state)
                .ok_or_else(|| format!("node {}: bad state '{}'", n.name, n.state))?;
            if n.gpus.len() > gresim_model::cluster::MAX_GPUS_PER_NODE {
                return Err(format!("node {}: too many GPUs", n.name));
            }
            for g in &n.gpus {
                if !types.contains(&g.ty.as_str()) {
                    return Err(format!("node {}: unknown GPU type '{}'", n.name, g.ty));
                }
            }
            if n.cpus() as usize > gresim_model::cluster::MAX_CORES_PER_NODE * 8 {
                return Err(format!("node {}: too many CPUs", n.name));
            }
        }
        for p in &self.cluster.partitions {
            for n in &p.nodes {
                if !nodes.contains_key(n.as_str()) {
                    return Err(format!("partition {}: unknown node '{n}'", p.name));
                }
            }
        }
        for s in &self.node_states {
            if !nodes.contains_key(s.node.as_str()) || admin_from(&s.state).is_none() {
                return Err(format!(
                    "node_states: bad entry {} {} at {}",
                    s.node, s.state, s.t
                ));
            }
        }
        for j in &self.jobs {
            if parse_state(&j.state).is_none() {
                return Err(format!("job {}: unknown state '{}'", j.id, j.state));
            }
            for r in &j.runs {
                if !r.partition.is_empty() && !parts.contains(&r.partition.as_str()) {
                    return Err(format!("job {}: unknown partition '{}'", j.id, r.partition));
                }
                if parse_state(&r.state).is_none() {
                    return Err(format!("job {}: unknown run state '{}'", j.id, r.state));
                }
                for na in &r.nodes {
                    let Some(n) = nodes.get(na.node.as_str()) else {
                        return Err(format!("job {}: unknown node '{}'", j.id, na.node));
                    };
                    if na.gpus.iter().any(|&g| usize::from(g) >= n.gpus.len()) {
                        return Err(format!(
                            "job {}: GPU index out of range on {}",
                            j.id, na.node
                        ));
                    }
                    if parse_ranges(&na.cores).is_none() {
                        return Err(format!("job {}: bad core list '{}'", j.id, na.cores));
                    }
                }
            }
            for p in &j.request.partitions {
                if !parts.contains(&p.as_str()) {
                    return Err(format!("job {}: unknown partition '{p}'", j.id));
                }
            }
            for n in j.request.nodelist.iter().chain(&j.request.exclude) {
                if !nodes.contains_key(n.as_str()) {
                    return Err(format!("job {}: unknown node '{n}'", j.id));
                }
            }
        }
        Ok(())
    }

    pub fn node_index(&self) -> BTreeMap<&str, usize> {
        self.cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect()
    }

    /// Each node's admin state at `t` (`UP`/`DOWN`/`DRAIN`), in node order.
    pub fn admin_at(&self, t: u64) -> Vec<String> {
        let idx = self.node_index();
        let mut cur: Vec<String> = self.cluster.nodes.iter().map(|n| n.state.clone()).collect();
        for s in self.node_states.iter().filter(|s| s.t <= t) {
            if let Some(&i) = idx.get(s.node.as_str()) {
                cur[i] = s.state.clone();
            }
        }
        cur
    }

    /// The default partition's name, or the first partition's.
    pub fn default_partition(&self) -> Option<&str> {
        self.cluster
            .partitions
            .iter()
            .find(|p| p.default)
            .or(self.cluster.partitions.first())
            .map(|p| p.name.as_str())
    }

    /// Rebuilds the model's cluster (for node selection in `explain`).
    pub fn model_cluster(&self) -> Result<Cluster, String> {
        let types: Vec<GpuType> = self
            .cluster
            .gpu_types
            .iter()
            .map(|t| {
                let model = catalog::model_by_name(&t.model)
                    .ok_or_else(|| format!("unknown GPU model '{}'", t.model))?;
                let mig = match &t.mig {
                    Some(p) => Some(
                        catalog::model(model)
                            .mig_profile(p)
                            .ok_or_else(|| format!("unknown MIG profile '{p}'"))?,
                    ),
                    None => None,
                };
                Ok(GpuType {
                    name: t.name.clone(),
                    model,
                    mig,
                })
            })
            .collect::<Result<_, String>>()?;
        let type_id = |name: &str| {
            types
                .iter()
                .position(|t| t.name == name)
                .map(GpuTypeId::from_idx)
                .ok_or_else(|| format!("unknown GPU type '{name}'"))
        };
        let nodes: Vec<Node> = self
            .cluster
            .nodes
            .iter()
            .map(|n| {
                let gpus = n
                    .gpus
                    .iter()
                    .map(|g| {
                        let ty = type_id(&g.ty)?;
                        let model = types[ty.idx()].model;
                        let mig = match &g.mig {
                            Some((p, start)) => Some(MigInstance {
                                profile: catalog::model(model)
                                    .mig_profile(p)
                                    .ok_or_else(|| format!("unknown MIG profile '{p}'"))?,
                                start: *start,
                            }),
                            None => None,
                        };
                        Ok(GpuDevice {
                            ty,
                            model,
                            socket: g.socket,
                            phys: g.phys,
                            mig,
                        })
                    })
                    .collect::<Result<_, String>>()?;
                Ok(Node {
                    name: n.name.clone(),
                    sockets: n.sockets,
                    cores_per_socket: n.cores_per_socket,
                    threads_per_core: n.threads_per_core,
                    memory_mib: n.memory_mib,
                    features: n.features.clone(),
                    weight: n.weight,
                    gpus,
                    gpu_links: n.gpu_links.clone(),
                    state: admin_from(&n.state).unwrap_or_default(),
                })
            })
            .collect::<Result<_, String>>()?;
        let idx = self.node_index();
        let partitions = self
            .cluster
            .partitions
            .iter()
            .map(|p| Partition {
                name: p.name.clone(),
                nodes: p
                    .nodes
                    .iter()
                    .filter_map(|n| idx.get(n.as_str()).map(|&i| NodeId::from_idx(i)))
                    .collect(),
                default: p.default,
                max_time: p.max_time,
                default_time: p.default_time,
                priority_tier: p.priority_tier,
                priority_job_factor: p.priority_job_factor,
                min_nodes: p.min_nodes,
                max_nodes: p.max_nodes,
                state: p.state.parse().unwrap_or_default(),
                preempt_mode: p.preempt_mode.as_deref().and_then(|m| {
                    m.parse::<gresim_model::preempt::PreemptModeSpec>()
                        .ok()
                        .map(|s| s.mode)
                }),
                grace_time: p.grace_time,
            })
            .collect();
        let mut cluster = Cluster::new(nodes, partitions, types);
        if self.cluster.nodes.iter().any(|n| n.shares.is_some()) {
            let per = self
                .cluster
                .nodes
                .iter()
                .map(|n| {
                    let (k, per_gpu, one) = n.shares.as_ref()?;
                    Some(gresim_model::shares::NodeShares {
                        kind: gresim_model::shares::ShareKind::from_name(k)?,
                        per_gpu: per_gpu.clone(),
                        one_sharing: *one,
                    })
                })
                .collect();
            cluster.set_shares(per);
        }
        Ok(cluster)
    }

    /// Rebuilds a job's request against [`RunFile::model_cluster`].
    pub fn model_request(&self, c: &Cluster, r: &RequestRec) -> Result<JobRequest, String> {
        let g = |x: &GpuReqRec| -> Result<GpuReq, String> {
            Ok(GpuReq {
                ty: match &x.ty {
                    Some(t) => Some(
                        c.gpu_type_id(t)
                            .ok_or_else(|| format!("unknown GPU type '{t}'"))?,
                    ),
                    None => None,
                },
                count: x.count,
            })
        };
        let nodes = |v: &[String]| -> Result<Vec<NodeId>, String> {
            v.iter()
                .map(|n| c.node_id(n).ok_or_else(|| format!("unknown node '{n}'")))
                .collect()
        };
        Ok(JobRequest {
            min_nodes: r.min_nodes,
            max_nodes: r.max_nodes,
            max_nodes_open: r.max_nodes_open,
            ntasks: r.ntasks,
            ntasks_per_node: r.ntasks_per_node,
            cpus_per_task: r.cpus_per_task,
            mem: match r.mem.as_str() {
                "per_node" => MemReq::PerNode(r.mem_mib),
                "per_cpu" => MemReq::PerCpu(r.mem_mib),
                "per_gpu" => MemReq::PerGpu(r.mem_mib),
                "whole_node" => MemReq::WholeNode,
                _ => MemReq::Default,
            },
            gpus_per_node: r.gpus_per_node.iter().map(g).collect::<Result<_, _>>()?,
            gpus_per_job: r.gpus_per_job.as_ref().map(g).transpose()?,
            gpus_per_task: r.gpus_per_task.as_ref().map(g).transpose()?,
            cpus_per_gpu: r.cpus_per_gpu,
            time_limit: if r.time_unlimited {
                Some(None)
            } else {
                r.time.map(Some)
            },
            partitions: r
                .partitions
                .iter()
                .map(|p| {
                    c.partition_id(p)
                        .ok_or_else(|| format!("unknown partition '{p}'"))
                })
                .collect::<Result<_, _>>()?,
            nodelist: nodes(&r.nodelist)?,
            exclude: nodes(&r.exclude)?,
            features: r.features.clone(),
            exclusive: r.exclusive,
            shared: match &r.shared {
                Some((k, n)) => Some(gresim_model::shares::SharedReq {
                    kind: gresim_model::shares::ShareKind::from_name(k)
                        .ok_or_else(|| format!("unknown shared GRES '{k}'"))?,
                    per_node: *n,
                }),
                None => None,
            },
            switches: r
                .switches
                .map(|(count, wait)| gresim_model::job::SwitchReq { count, wait }),
            segment: r.segment,
        })
    }

    /// The model allocation of a run.
    pub fn model_alloc(&self, c: &Cluster, r: &RunRec) -> Result<Allocation, String> {
        let nodes = r
            .nodes
            .iter()
            .map(|na| {
                let node = c
                    .node_id(&na.node)
                    .ok_or_else(|| format!("unknown node '{}'", na.node))?;
                let mut cores = CoreSet::default();
                for k in parse_ranges(&na.cores).ok_or("bad core list")? {
                    cores.insert(k);
                }
                let mut gpus = 0u64;
                for &g in &na.gpus {
                    gpus |= 1u64.checked_shl(u32::from(g)).unwrap_or(0);
                }
                Ok(NodeAlloc {
                    node,
                    cores,
                    cpus: na.cpus,
                    mem_mib: na.mem_mib,
                    gpus,
                    tasks: na.tasks,
                    share: na
                        .share
                        .map(|(gpu, count)| gresim_model::shares::ShareAlloc { gpu, count }),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Allocation {
            nodes,
            exclusive: r.exclusive,
        })
    }

    /// Scheduler settings for re-running node selection.
    pub fn sched_params(&self) -> SchedParams {
        SchedParams {
            def_mem_per_cpu: self.def_mem_per_cpu,
            preempt: self
                .preempt
                .as_ref()
                .and_then(PreemptRec::config)
                .unwrap_or_default(),
            ..SchedParams::default()
        }
    }

    /// The cluster's usage at `t`: every run active at `t` allocated, node
    /// admin states as at `t`. Returns the state and the running (job, run)
    /// pairs, by job index.
    pub fn state_at(
        &self,
        c: &Cluster,
        t: u64,
    ) -> Result<(ClusterState, Vec<(usize, usize)>), String> {
        let mut st = ClusterState::new(c);
        for i in 0..c.nodes.len() {
            st.set_admin(NodeId::from_idx(i), NodeAdminState::Up);
        }
        let mut running = Vec::new();
        for (ji, j) in self.jobs.iter().enumerate() {
            for (ri, r) in j.runs.iter().enumerate() {
                if r.active_at(t) {
                    let a = self.model_alloc(c, r)?;
                    st.allocate(c, &a)
                        .map_err(|e| format!("job {} at {t}: {e}", j.id))?;
                    running.push((ji, ri));
                }
            }
        }
        for (i, s) in self.admin_at(t).iter().enumerate() {
            st.set_admin(NodeId::from_idx(i), admin_from(s).unwrap_or_default());
        }
        Ok((st, running))
    }

    /// A partition id by name in the model cluster.
    pub fn part_id(c: &Cluster, name: &str) -> Option<PartId> {
        c.partition_id(name)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::sample_output;

    fn meta() -> RunMeta {
        RunMeta {
            scenario: "tiny".into(),
            scenario_text: Some("{\"name\": \"tiny\"}".into()),
            actions: vec![
                TimedAction {
                    at: 120,
                    action: Action::NodeDrain(vec![NodeId(0)]),
                },
                TimedAction {
                    at: 160,
                    action: Action::NodeResume(vec![NodeId(0)]),
                },
            ],
            seed: Some(3),
        }
    }

    #[test]
    fn round_trips_and_is_stable() {
        let out = sample_output();
        let rf = RunFile::from_output(&out, &meta());
        let text = rf.to_json();
        assert!(text.starts_with("{\"format\":\"gresim-run\",\"version\":1,\"scenario\":\"tiny\""));
        // One job per line after the header.
        assert_eq!(text.lines().count(), 1 + 3 + 1, "{text}");
        let back = RunFile::parse(&text).unwrap();
        assert_eq!(back, rf);
        assert_eq!(back.to_json(), text);
        assert_eq!(rf.node_states.len(), 2);
        assert_eq!(rf.node_states[0].state, "DRAIN");
        assert_eq!(rf.admin_at(119), ["UP"]);
        assert_eq!(rf.admin_at(120), ["DRAIN"]);
        assert_eq!(rf.admin_at(160), ["UP"]);
        let j1 = &rf.jobs[1];
        assert_eq!(j1.runs.len(), 2);
        assert_eq!(j1.runs[0].nodes[0].gpus, vec![0]);
        assert_eq!(j1.runs[1].nodes[0].gpus, vec![1]);
        assert_eq!(j1.runs[0].nodes[0].cores, "0");
        assert_eq!(j1.ended, Some(300));
        assert_eq!(j1.time_limit, Some(100));
        assert_eq!(rf.jobs[2].id, "3_4");
        assert_eq!(rf.jobs[2].ended, None);
    }

    /// run.json as it was built before streaming: the whole file cloned
    /// without its jobs, serialised, and the jobs spliced in.
    fn to_json_by_splicing(rf: &RunFile) -> String {
        let head = RunFile {
            jobs: Vec::new(),
            ..rf.clone()
        };
        let mut s = serde_json::to_string(&head).unwrap();
        s.truncate(s.len() - "[]}".len());
        s.push_str("[\n");
        for (i, j) in rf.jobs.iter().enumerate() {
            if i > 0 {
                s.push_str(",\n");
            }
            s.push_str(&serde_json::to_string(j).unwrap());
        }
        s.push_str("\n]}\n");
        s
    }

    #[test]
    fn streamed_run_json_matches_the_run_file() {
        let mut out = sample_output();
        let mut m = meta();
        for round in 0..3 {
            let rf = RunFile::from_output(&out, &m);
            let text = rf.to_json();
            assert_eq!(text, to_json_by_splicing(&rf), "round {round}");
            let mut streamed = Vec::new();
            write_run_json(&out, &m, &mut streamed).unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), text, "round {round}");
            if round == 0 {
                m.scenario_text = None;
                m.seed = None;
                out.timeline.clear();
            } else {
                out.jobs.clear();
            }
        }
    }

    #[test]
    fn state_at_times() {
        let rf = RunFile::from_output(&sample_output(), &meta());
        let j1 = &rf.jobs[1];
        assert_eq!(j1.at(4), None);
        assert!(matches!(
            j1.at(5),
            Some(JobAt::Pending {
                requeued: false,
                ..
            })
        ));
        assert!(matches!(j1.at(110), Some(JobAt::Running(r)) if r.start == 110));
        assert!(matches!(
            j1.at(150),
            Some(JobAt::Pending { requeued: true, .. })
        ));
        assert!(matches!(j1.at(299), Some(JobAt::Running(r)) if r.start == 200));
        assert_eq!(
            j1.at(300),
            Some(JobAt::Done {
                state: JobState::Timeout,
                end: 300
            })
        );
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(RunFile::parse("").is_err());
        assert!(RunFile::parse("{}").is_err());
        assert!(RunFile::parse("[1,2]").is_err());
        let rf = RunFile::from_output(&sample_output(), &meta());
        let mut bad = rf.clone();
        bad.jobs[0].runs[0].nodes[0].node = "nope".into();
        assert!(RunFile::parse(&bad.to_json())
            .unwrap_err()
            .contains("unknown node 'nope'"));
        let mut bad = rf.clone();
        bad.jobs[0].runs[0].nodes[0].gpus = vec![9];
        assert!(RunFile::parse(&bad.to_json()).is_err());
        let mut bad = rf;
        bad.version = 99;
        assert!(RunFile::parse(&bad.to_json())
            .unwrap_err()
            .contains("version 99"));
    }

    #[test]
    fn model_round_trip_allocates() {
        let rf = RunFile::from_output(&sample_output(), &meta());
        let c = rf.model_cluster().unwrap();
        assert_eq!(c.nodes.len(), 1);
        let (st, running) = rf.state_at(&c, 50).unwrap();
        assert_eq!(running, vec![(0, 0)]);
        assert_eq!(st.alloc_gpus(), 2);
        assert_eq!(parse_ranges("0-3,5"), Some(vec![0, 1, 2, 3, 5]));
        assert_eq!(parse_ranges("x"), None);
        assert_eq!(ranges([0, 1, 2, 5].into_iter()), "0-2,5");
    }
}
