//! slurm.conf: nodes, partitions and scheduler settings, and the cluster
//! built from slurm.conf + gres.conf.
//!
//! The reader follows `man slurm.conf` and `src/common/read_config.c` of
//! Slurm 22.05:
//!
//! * keys are case-insensitive; `#` starts a comment (`\#` is a literal `#`);
//!   a line ending in `\` continues on the next; values may be quoted;
//!   `Include FILE` reads another file (relative to the including one);
//! * `NodeName=` lines take a hostlist; `NodeName=DEFAULT` sets defaults for
//!   the lines after it (a later DEFAULT adds to the earlier one), and so does
//!   `PartitionName=DEFAULT`;
//! * node resources follow Slurm's inference: `Boards` 1, `SocketsPerBoard`
//!   or `Sockets` (total sockets; `Sockets` given with `SocketsPerBoard` is
//!   overridden by it), `CoresPerSocket` 1, `ThreadsPerCore` 1; without
//!   `Sockets` the count is inferred from `CPUs`; without `CPUs` it is the
//!   product; `RealMemory` defaults to 1 MB, `Weight` to 1;
//! * absent settings take Slurm 22.05's defaults (see the spec's table):
//!   SelectType=select/linear (gresim models select/cons_tres and warns when
//!   another is configured or the default applies), SchedulerType=sched/backfill,
//!   PriorityType=priority/basic, JobRequeue=1, cred_expire=120 s, and the
//!   `SchedParams` defaults for SchedulerParameters (gresim-io turns a
//!   [`SlurmConf`] into scheduler settings).
//!
//! Keys gresim does not know are warnings with their line number; keys Slurm
//! knows that do not change the decisions gresim simulates (daemon paths,
//! logging, timeouts of real daemons) are accepted quietly; keys Slurm knows
//! that would change decisions but are not modelled (preemption, topology,
//! memory limits, …) are warnings too. Nothing unknown is fatal; malformed
//! values of modelled keys are errors naming the file and line.

mod cluster;
mod keys;
mod nodes;
mod params;
mod partitions;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gresim_model::cluster::{NodeAdminState, PartitionState};
use gresim_model::slurm_time::{parse_time_limit, Seconds};

use crate::conf_lines::{logical_lines, words, ConfLine, Warning};
use crate::error::InputError;
pub use cluster::{
    build_cluster, model_for_type, read_cluster, socket_of_cores, ConfCluster, DEFAULT_GPU_MODEL,
};
pub use nodes::parse_node_gres;
use nodes::{node_fields, resolve_node, NodeRaw};
use params::global;
use partitions::{part_fields, resolve_partition, PartRaw};

/// A `Gres=` entry of a node: `name[:type][:no_consume]:count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresSpec {
    pub name: String,
    pub ty: Option<String>,
    pub count: u64,
}

/// A node line, resolved (DEFAULT values applied, Slurm's inference done).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConf {
    pub file: PathBuf,
    pub line: usize,
    /// The hostlist, expanded.
    pub names: Vec<String>,
    pub boards: u16,
    /// Total sockets.
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    /// `CPUs=` as Slurm resolves it.
    pub cpus: u32,
    /// `RealMemory` in MB (MiB).
    pub memory_mib: u64,
    pub gres: Vec<GresSpec>,
    pub weight: u32,
    pub features: Vec<String>,
    pub state: NodeAdminState,
}

/// A `PartitionName=` line, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionConf {
    pub file: PathBuf,
    pub line: usize,
    pub name: String,
    /// `Nodes=` as written; `ALL` is every node; `None` is no node.
    pub nodes: Option<String>,
    pub default: bool,
    pub max_time: Option<Seconds>,
    pub default_time: Option<Seconds>,
    pub priority_tier: u16,
    pub priority_job_factor: u16,
    pub min_nodes: u32,
    pub max_nodes: Option<u32>,
    pub state: PartitionState,
    /// `OverSubscribe=` (upper case): `NO`, `EXCLUSIVE`, `YES:N` and
    /// `FORCE:N` (N > 1: jobs share cores, taking turns with PreemptMode
    /// GANG, at once without; docs/preemption.md).
    pub oversubscribe: String,
    /// `FORCE:N`'s or `YES:N`'s N (alone 4), 0 for `EXCLUSIVE`, 1 otherwise:
    /// how many jobs may share a core (`crate::partition::oversubscribe_rows`).
    pub oversubscribe_rows: u16,
    /// `FORCE[:N]`: every job may share cores, not only those that ask for
    /// it with `--oversubscribe`.
    pub oversubscribe_force: bool,
    /// `QOS=`: the partition QOS (applies with accounting).
    pub qos: Option<String>,
    /// `TRESBillingWeights=` as written (applies with accounting).
    pub tres_billing_weights: Option<String>,
    /// `PreemptMode=` (without GANG, which Slurm filters out of a partition's mode).
    pub preempt_mode: Option<gresim_model::preempt::PreemptMode>,
    /// `GraceTime=` in seconds.
    pub grace_time: u64,
}

/// A parsed slurm.conf.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SlurmConf {
    /// The main file.
    pub file: PathBuf,
    pub nodes: Vec<NodeConf>,
    pub partitions: Vec<PartitionConf>,
    pub select_type: Option<String>,
    pub select_type_parameters: Option<String>,
    pub scheduler_type: Option<String>,
    /// SchedulerParameters, as (option, value) in order.
    pub scheduler_parameters: Vec<(String, String)>,
    pub priority_type: Option<String>,
    pub priority_weight_age: Option<u32>,
    pub priority_weight_job_size: Option<u32>,
    pub priority_weight_partition: Option<u32>,
    pub priority_weight_fairshare: Option<u32>,
    pub priority_weight_qos: Option<u32>,
    pub priority_weight_assoc: Option<u32>,
    /// PriorityWeightTRES entries, lower-cased TRES names (`cpu`, `mem`, `gres/gpu`).
    pub priority_weight_tres: Vec<(String, f64)>,
    pub priority_favor_small: Option<bool>,
    /// PriorityMaxAge in seconds.
    pub priority_max_age: Option<Seconds>,
    /// PriorityDecayHalfLife in seconds (`Some(0)`: no decay).
    pub priority_decay_half_life: Option<Seconds>,
    /// Where PriorityDecayHalfLife was set (file, line), for the error below.
    pub priority_decay_at: Option<(PathBuf, usize)>,
    /// PriorityCalcPeriod in seconds.
    pub priority_calc_period: Option<Seconds>,
    /// PriorityFlags as written.
    pub priority_flags: Option<String>,
    pub priority_usage_reset: Option<gresim_model::accounting::UsageReset>,
    pub accounting_storage_enforce: Option<String>,
    pub accounting_storage_tres: Option<String>,
    /// DefMemPerCPU in MB; `Some(0)` is Slurm's "no default".
    pub def_mem_per_cpu: Option<u64>,
    pub job_requeue: Option<bool>,
    pub dependency_parameters: Vec<String>,
    /// AuthInfo `cred_expire` in seconds.
    pub cred_expire: Option<u64>,
    pub gres_types: Vec<String>,
    pub accounting_storage_type: Option<String>,
    /// `PreemptType`, `PreemptMode`, `PreemptExemptTime` and the
    /// `preempt_*` SchedulerParameters.
    pub preempt: gresim_model::preempt::PreemptConfig,
    /// Where `PreemptType` was set, for the checks made once every line is read.
    pub preempt_type_at: Option<(PathBuf, usize)>,
    /// `TopologyPlugin=` (topology/tree: topology.conf beside slurm.conf
    /// drives node selection), with where it was set.
    pub topology_plugin: gresim_model::switches::TopologyPlugin,
    pub topology_plugin_at: Option<(PathBuf, usize)>,
    /// `SchedulerTimeSlice` in seconds (5 to 65535; Slurm's default is 30).
    pub scheduler_time_slice: Option<u64>,
    /// `KillWait` and `MessageTimeout` in seconds.
    pub kill_wait: Option<u64>,
    /// `ResvOverRun` in seconds (the file gives minutes; `UNLIMITED` is
    /// taken as a year, as `job_time_limit()` does).
    pub resv_over_run: Option<u64>,
    pub message_timeout: Option<u64>,
}

/// Reads slurm.conf from a file.
pub fn read_slurm_conf(path: &Path) -> Result<(SlurmConf, Vec<Warning>), InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read slurm.conf: {e}")))?;
    parse_slurm_conf(path, &text)
}

/// Parses slurm.conf text; `path` names it in messages and anchors `Include`.
pub fn parse_slurm_conf(path: &Path, text: &str) -> Result<(SlurmConf, Vec<Warning>), InputError> {
    let mut w = Vec::new();
    let lines = logical_lines(path, text, &mut w)?;
    let mut conf = SlurmConf {
        file: path.to_path_buf(),
        ..SlurmConf::default()
    };
    let mut node_dflt = NodeRaw::default();
    let mut part_dflt = PartRaw::default();
    let mut seen_nodes: BTreeSet<String> = BTreeSet::new();
    for l in &lines {
        let ws = words(l, &mut w);
        let Some((k0, v0)) = ws.first() else { continue };
        match k0.to_ascii_lowercase().as_str() {
            "nodename" => {
                let raw = node_fields(l, &ws[1..], &mut w)?;
                if v0.eq_ignore_ascii_case("DEFAULT") {
                    node_dflt = raw.or(&node_dflt);
                    continue;
                }
                if v0.eq_ignore_ascii_case("ALL") {
                    return Err(line_err(l, "'ALL' is reserved and cannot be a NodeName"));
                }
                let mut n = resolve_node(l, v0, raw.or(&node_dflt), &mut w)?;
                n.names.retain(|name| {
                    let fresh = seen_nodes.insert(name.clone());
                    if !fresh {
                        w.push(Warning::new(
                            &l.file,
                            l.line,
                            format!("node {name} is defined again; this definition is ignored"),
                        ));
                    }
                    fresh
                });
                if !n.names.is_empty() {
                    conf.nodes.push(n);
                }
            }
            "partitionname" => {
                let raw = part_fields(l, &ws[1..], &mut w)?;
                if v0.eq_ignore_ascii_case("DEFAULT") {
                    part_dflt = raw.or(&part_dflt);
                    continue;
                }
                let p = resolve_partition(l, v0, raw.or(&part_dflt), &mut w)?;
                if conf.partitions.iter().any(|q| q.name == p.name) {
                    return Err(line_err(
                        l,
                        &format!("partition '{}' is defined twice", p.name),
                    ));
                }
                conf.partitions.push(p);
            }
            _ => {
                for (k, v) in &ws {
                    global(l, &mut conf, k, v, &mut w)?;
                }
            }
        }
    }
    // read_config.c: a preemption plugin with mode OFF, or preempt/none
    // with a mode, stops slurmctld.
    if let Some((file, line)) = &conf.preempt_type_at {
        use gresim_model::preempt::{PreemptMode, PreemptType};
        let off = conf.preempt.mode.mode == PreemptMode::Off;
        if (conf.preempt.ptype != PreemptType::None) == off {
            return Err(InputError::new(
                file,
                format!(
                    "PreemptType={} and PreemptMode={} are incompatible (Slurm refuses them)",
                    conf.preempt.ptype.as_str(),
                    conf.preempt.mode
                ),
            )
            .with_line(*line, 0));
        }
    }
    // read_config.c: no decay and no PriorityUsageResetPeriod line stops
    // slurmctld (usage would only grow).
    if let (Some(0), None, Some((file, line))) = (
        conf.priority_decay_half_life,
        conf.priority_usage_reset,
        &conf.priority_decay_at,
    ) {
        return Err(InputError::new(
            file,
            "PriorityDecayHalfLife=0 needs a PriorityUsageResetPeriod line (Slurm refuses it: \"the priority plugin will result in rolling over\")",
        )
        .with_line(*line, 0));
    }
    // Settings whose absence or value changes what Slurm does.
    let sel = conf.select_type.clone();
    match sel.as_deref() {
        Some("select/cons_tres") => {}
        None => w.push(Warning::new(
            path,
            0,
            "SelectType is not set: Slurm 22.05's default is select/linear (whole nodes); gresim models select/cons_tres",
        )),
        Some(o) => w.push(Warning::new(
            path,
            0,
            format!("SelectType={o} is not modelled; gresim simulates select/cons_tres"),
        )),
    }
    if let Some(p) = &conf.select_type_parameters {
        let up = p.to_ascii_uppercase();
        if !up.split(',').any(|x| x == "CR_CORE_MEMORY") {
            w.push(Warning::new(
                path,
                0,
                format!("SelectTypeParameters={p} is not modelled; gresim allocates cores and memory (CR_Core_Memory)"),
            ));
        }
    }
    if conf.priority_weight_age.is_some_and(|a| a > 0)
        && conf.accounting_storage_type.as_deref() != Some("accounting_storage/slurmdbd")
    {
        w.push(Warning::new(
            path,
            0,
            "PriorityWeightAge is ignored: slurmctld uses it only with AccountingStorageType=accounting_storage/slurmdbd",
        ));
    }
    let defaults = conf.partitions.iter().filter(|p| p.default).count();
    if defaults > 1 {
        w.push(Warning::new(
            path,
            0,
            "more than one partition has Default=YES; the last one is the default, as in Slurm",
        ));
        let last = conf.partitions.iter().rposition(|p| p.default);
        for (i, p) in conf.partitions.iter_mut().enumerate() {
            p.default = Some(i) == last;
        }
    }
    Ok((conf, w))
}

pub(super) fn line_err(l: &ConfLine, msg: &str) -> InputError {
    InputError::new(&l.file, msg.to_string()).with_line(l.line, 0)
}

pub(super) fn num<T: std::str::FromStr>(l: &ConfLine, k: &str, v: &str) -> Result<T, InputError> {
    v.trim()
        .parse::<T>()
        .map_err(|_| line_err(l, &format!("{k}={v}: expected a non-negative whole number")))
}

pub(super) fn boolean(l: &ConfLine, k: &str, v: &str) -> Result<bool, InputError> {
    match v.trim().to_ascii_uppercase().as_str() {
        "YES" | "TRUE" | "1" | "Y" => Ok(true),
        "NO" | "FALSE" | "0" | "N" => Ok(false),
        _ => Err(line_err(l, &format!("{k}={v}: expected YES or NO"))),
    }
}

pub(super) fn time_opt(l: &ConfLine, k: &str, v: &str) -> Result<Option<Seconds>, InputError> {
    parse_time_limit(v).map_err(|e| line_err(l, &format!("{k}={v}: {e}")))
}
