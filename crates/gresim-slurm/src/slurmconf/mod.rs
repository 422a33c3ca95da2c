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
//!   [`SchedParams`] defaults for SchedulerParameters.
//!
//! Keys gresim does not know are warnings with their line number; keys Slurm
//! knows that do not change the decisions gresim simulates (daemon paths,
//! logging, timeouts of real daemons) are accepted quietly; keys Slurm knows
//! that would change decisions but are not modelled (preemption, topology,
//! memory limits, …) are warnings too. Nothing unknown is fatal; malformed
//! values of modelled keys are errors naming the file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use gresim_model::catalog::{self, MigProfile};
use gresim_model::cluster::{
    NodeAdminState, PartitionState, MAX_CORES_PER_NODE, MAX_GPUS_PER_NODE,
};
use gresim_model::hostlist;
use gresim_model::slurm_time::{parse_time_limit, Seconds};
use gresim_model::units::parse_count;
use gresim_model::{
    Cluster, GpuDevice, GpuModelId, GpuType, GpuTypeId, MigInstance, Node, Partition,
};
use gresim_sched::priority::{Multifactor, PriorityConfig};
use gresim_sched::SchedParams;

use crate::error::InputError;
use crate::gresconf::{GresConf, GresLine};

/// A non-fatal remark about a configuration file: an unknown key, a setting
/// gresim does not model, a Slurm default that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: PathBuf,
    /// 1-based line; 0 when the remark concerns the whole file.
    pub line: usize,
    pub msg: String,
}

impl Warning {
    pub fn new(file: &Path, line: usize, msg: impl Into<String>) -> Self {
        Warning {
            file: file.to_path_buf(),
            line,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.msg)
        } else {
            write!(f, "{}: {}", self.file.display(), self.msg)
        }
    }
}

/// One logical line: comments removed, continuations joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfLine {
    pub file: PathBuf,
    /// The line it starts on.
    pub line: usize,
    pub text: String,
}

/// How deep `Include` may nest.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Splits a configuration file into logical lines, following `Include`.
pub fn logical_lines(
    path: &Path,
    text: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ConfLine>, InputError> {
    let mut out = Vec::new();
    lines_into(path, text, 0, &mut out, warnings)?;
    Ok(out)
}

fn lines_into(
    path: &Path,
    text: &str,
    depth: usize,
    out: &mut Vec<ConfLine>,
    warnings: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let stripped = strip_comment(raw);
        let (body, cont) = match stripped.trim_end().strip_suffix('\\') {
            Some(b) => (b.to_string(), true),
            None => (stripped.trim_end().to_string(), false),
        };
        let (start, mut acc) = pending.take().unwrap_or((lineno, String::new()));
        if !acc.is_empty() {
            acc.push(' ');
        }
        acc.push_str(body.trim());
        if cont {
            pending = Some((start, acc));
            continue;
        }
        emit(path, start, acc, depth, out, warnings)?;
    }
    if let Some((start, acc)) = pending {
        emit(path, start, acc, depth, out, warnings)?;
    }
    Ok(())
}

fn emit(
    path: &Path,
    line: usize,
    text: String,
    depth: usize,
    out: &mut Vec<ConfLine>,
    warnings: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(());
    }
    let mut it = t.splitn(2, char::is_whitespace);
    let first = it.next().unwrap_or("");
    if first.eq_ignore_ascii_case("include") && !first.contains('=') {
        let target = it.next().unwrap_or("").trim().trim_matches('"');
        let err = |m: String| InputError::new(path, m).with_line(line, 0);
        if target.is_empty() {
            return Err(err("Include needs a file name".into()));
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(err(format!(
                "Include nested more than {MAX_INCLUDE_DEPTH} deep (an include loop?)"
            )));
        }
        if target.contains(['*', '?']) {
            warnings.push(Warning::new(
                path,
                line,
                format!("Include {target}: glob patterns are not supported; skipped"),
            ));
            return Ok(());
        }
        let p = path.parent().unwrap_or(Path::new(".")).join(target);
        let inc = std::fs::read_to_string(&p)
            .map_err(|e| err(format!("cannot read included file {}: {e}", p.display())))?;
        return lines_into(&p, &inc, depth + 1, out, warnings);
    }
    out.push(ConfLine {
        file: path.to_path_buf(),
        line,
        text: t.to_string(),
    });
    Ok(())
}

/// Drops a `#` comment; `\#` stands for a literal `#`.
fn strip_comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'#') => {
                out.push('#');
                chars.next();
            }
            '#' => break,
            _ => out.push(c),
        }
    }
    out
}

/// The `Key=Value` words of a line (double quotes group spaces). A word
/// without `=` is a warning.
pub fn words(l: &ConfLine, warnings: &mut Vec<Warning>) -> Vec<(String, String)> {
    let mut toks: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in l.text.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    toks.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        toks.push(cur);
    }
    let mut out = Vec::new();
    for t in toks {
        match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => out.push((k.to_string(), v.to_string())),
            _ => warnings.push(Warning::new(
                &l.file,
                l.line,
                format!("'{t}' is not Key=Value (ignored)"),
            )),
        }
    }
    out
}

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
    /// `OverSubscribe=` (upper case); only `NO` is modelled.
    pub oversubscribe: String,
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
    pub priority_usage_reset: Option<gresim_sched::fairshare::UsageReset>,
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
    /// `KillWait` and `MessageTimeout` in seconds.
    pub kill_wait: Option<u64>,
    pub message_timeout: Option<u64>,
}

/// Node fields as written (before DEFAULT merging and inference).
#[derive(Debug, Clone, Default)]
struct NodeRaw {
    cpus: Option<u32>,
    boards: Option<u16>,
    sockets: Option<u16>,
    sockets_per_board: Option<u16>,
    cores_per_socket: Option<u16>,
    threads_per_core: Option<u16>,
    real_memory: Option<u64>,
    gres: Option<Vec<GresSpec>>,
    weight: Option<u32>,
    features: Option<Vec<String>>,
    state: Option<String>,
}

impl NodeRaw {
    fn or(self, d: &NodeRaw) -> NodeRaw {
        NodeRaw {
            cpus: self.cpus.or(d.cpus),
            boards: self.boards.or(d.boards),
            sockets: self.sockets.or(d.sockets),
            sockets_per_board: self.sockets_per_board.or(d.sockets_per_board),
            cores_per_socket: self.cores_per_socket.or(d.cores_per_socket),
            threads_per_core: self.threads_per_core.or(d.threads_per_core),
            real_memory: self.real_memory.or(d.real_memory),
            gres: self.gres.or_else(|| d.gres.clone()),
            weight: self.weight.or(d.weight),
            features: self.features.or_else(|| d.features.clone()),
            state: self.state.or_else(|| d.state.clone()),
        }
    }
}

#[derive(Debug, Clone, Default)]
struct PartRaw {
    nodes: Option<String>,
    default: Option<bool>,
    max_time: Option<Option<Seconds>>,
    default_time: Option<Option<Seconds>>,
    priority_tier: Option<u16>,
    priority_job_factor: Option<u16>,
    min_nodes: Option<u32>,
    max_nodes: Option<Option<u32>>,
    state: Option<PartitionState>,
    oversubscribe: Option<String>,
    qos: Option<String>,
    tres_billing_weights: Option<String>,
    preempt_mode: Option<gresim_model::preempt::PreemptMode>,
    grace_time: Option<u64>,
}

impl PartRaw {
    fn or(self, d: &PartRaw) -> PartRaw {
        PartRaw {
            nodes: self.nodes.or_else(|| d.nodes.clone()),
            default: self.default.or(d.default),
            max_time: self.max_time.or(d.max_time),
            default_time: self.default_time.or(d.default_time),
            priority_tier: self.priority_tier.or(d.priority_tier),
            priority_job_factor: self.priority_job_factor.or(d.priority_job_factor),
            min_nodes: self.min_nodes.or(d.min_nodes),
            max_nodes: self.max_nodes.or(d.max_nodes),
            state: self.state.or(d.state),
            oversubscribe: self.oversubscribe.or_else(|| d.oversubscribe.clone()),
            qos: self.qos.or_else(|| d.qos.clone()),
            tres_billing_weights: self
                .tres_billing_weights
                .or_else(|| d.tres_billing_weights.clone()),
            preempt_mode: self.preempt_mode.or(d.preempt_mode),
            grace_time: self.grace_time.or(d.grace_time),
        }
    }
}

/// Global keys Slurm 22.05 knows that do not change what gresim simulates
/// (lower case). They are accepted without a warning.
const QUIET_KEYS: &[&str] = &[
    "accountingstorageenforce",
    "accountingstorageexternalhost",
    "accountingstoragehost",
    "accountingstoragebackuphost",
    "accountingstorageloc",
    "accountingstorageparameters",
    "accountingstoragepass",
    "accountingstorageport",
    "accountingstoragetres",
    "accountingstorageuser",
    "accountingstoreflags",
    "accountingstorejobcomment",
    "acctgatherenergytype",
    "acctgathernodefreq",
    "acctgatherprofiletype",
    "acctgatherinterconnecttype",
    "acctgatherinfinibandtype",
    "acctgatherfilesystemtype",
    "allowspecresourcesusage",
    "authalttypes",
    "authaltparameters",
    "authtype",
    "backupaddr",
    "backupcontroller",
    "batchstarttimeout",
    "bcastexclude",
    "bcastparameters",
    "burstbufferparameters",
    "burstbuffertype",
    "corespecplugin",
    "clifilterplugins",
    "clustername",
    "communicationparameters",
    "completewait",
    "controladdr",
    "controlmachine",
    "cpufreqdef",
    "cpufreqgovernors",
    "credtype",
    "cryptotype",
    "debugflags",
    "disablerootjobs",
    "eiotimeout",
    "epilog",
    "epilogmsgtime",
    "epilogslurmctld",
    "extsensorstype",
    "extsensorsfreq",
    "fastschedule",
    "federationparameters",
    "getenvtimeout",
    "groupupdateforce",
    "groupupdatetime",
    "gpufreqdef",
    "healthcheckinterval",
    "healthchecknodestate",
    "healthcheckprogram",
    "interactivestepoptions",
    "inactivelimit",
    "jobacctgathertype",
    "jobacctgatherfrequency",
    "jobacctgatherparams",
    "jobcomphost",
    "jobcomploc",
    "jobcompparams",
    "jobcomppass",
    "jobcompport",
    "jobcomptype",
    "jobcontainertype",
    "jobcompuser",
    "jobcredentialprivatekey",
    "jobcredentialpubliccertificate",
    "jobfileappend",
    "jobsubmitplugins",
    "keepalivetime",
    "killonbadexit",
    "launchparameters",
    "launchtype",
    "logtimeformat",
    "maildomain",
    "mailprog",
    "maxdbdmsgs",
    "maxstepcount",
    "mcsparameters",
    "mcsplugin",
    "minjobage",
    "mpidefault",
    "mpiparams",
    "nodefeaturesplugins",
    "plugindir",
    "plugstackconfig",
    "powerparameters",
    "powerplugin",
    "prepparameters",
    "prepplugins",
    "privatedata",
    "proctracktype",
    "prolog",
    "prologslurmctld",
    "prologepilogtimeout",
    "prologflags",
    "propagatepriopprocess",
    "propagatepriorprocess",
    "propagateprioprocess",
    "propagateresourcelimitsexcept",
    "propagateresourcelimits",
    "rebootprogram",
    "reconfigflags",
    "resumefailprogram",
    "resumeprogram",
    "resumerate",
    "resumetimeout",
    "resvepilog",
    "resvoverrun",
    "resvprolog",
    "returntoservice",
    "routeplugin",
    "sallocdefaultcommand",
    "sbcastparameters",
    "scronparameters",
    "slurmuser",
    "slurmduser",
    "slurmctldaddr",
    "slurmctlddebug",
    "slurmctldhost",
    "slurmctldlogfile",
    "slurmctldpidfile",
    "slurmctldplugstack",
    "slurmctldport",
    "slurmctldprimaryoffprog",
    "slurmctldprimaryonprog",
    "slurmctldsyslogdebug",
    "slurmctldtimeout",
    "slurmctldparameters",
    "slurmddebug",
    "slurmdlogfile",
    "slurmdparameters",
    "slurmdpidfile",
    "slurmdport",
    "slurmdspooldir",
    "slurmdsyslogdebug",
    "slurmdtimeout",
    "slurmschedlogfile",
    "slurmschedloglevel",
    "srunepilog",
    "srunprolog",
    "srunportrange",
    "statesavelocation",
    "suspendexcnodes",
    "suspendexcparts",
    "suspendprogram",
    "suspendrate",
    "suspendtime",
    "suspendtimeout",
    "switchparameters",
    "switchtype",
    "taskepilog",
    "taskprolog",
    "taskplugin",
    "taskpluginparam",
    "tcptimeout",
    "tmpfs",
    "trackwckey",
    "treewidth",
    "unkillablestepprogram",
    "unkillablesteptimeout",
    "usepam",
    "vsizefactor",
    "waittime",
    "x11parameters",
    "frontendname",
];

/// Global keys Slurm knows that can change scheduling decisions but that
/// gresim does not model: each one present is a warning.
const UNMODELLED_KEYS: &[&str] = &[
    "defcpupergpu",
    "defmempergpu",
    "defmempernode",
    "enforcepartlimits",
    "fairsharedampeningfactor",
    "firstjobid",
    "licenses",
    "maxarraysize",
    "maxjobcount",
    "maxjobid",
    "maxmempercpu",
    "maxmempernode",
    "maxnodecount",
    "maxtaskspernode",
    "overtimelimit",
    "priorityparameters",
    "prioritysitefactorparameters",
    "prioritysitefactorplugin",
    "requeueexit",
    "requeueexithold",
    "schedulertimeslice",
    "topologyparam",
    "nodeset",
    "downnodes",
];

/// Node keys that do not change what gresim simulates.
const QUIET_NODE_KEYS: &[&str] = &[
    "nodehostname",
    "nodeaddr",
    "bcastaddr",
    "port",
    "tmpdisk",
    "reason",
    "cpubind",
    "tresweights",
];
/// Node keys that matter but are not modelled.
const UNMODELLED_NODE_KEYS: &[&str] = &["corespeccount", "cpuspeclist", "memspeclimit"];

/// Partition keys that do not change what gresim simulates.
const QUIET_PART_KEYS: &[&str] = &[
    "allocnodes",
    "allowaccounts",
    "allowgroups",
    "allowqos",
    "alternate",
    "cpubind",
    "denyaccounts",
    "denyqos",
    "disablerootjobs",
    "hidden",
    "rootonly",
    "reqresv",
    "resumetimeout",
    "suspendtime",
    "suspendtimeout",
];
/// Partition keys that matter but are not modelled.
const UNMODELLED_PART_KEYS: &[&str] = &[
    "defcpupergpu",
    "defmempercpu",
    "defmempergpu",
    "defmempernode",
    "exclusiveuser",
    "lln",
    "maxcpuspernode",
    "maxmempercpu",
    "maxmempernode",
    "overtimelimit",
    "selecttypeparameters",
];

/// SchedulerParameters options gresim models.
const SCHED_OPTS: &[&str] = &[
    "sched_interval",
    "bf_interval",
    "bf_window",
    "bf_resolution",
    "bf_max_job_test",
    "kill_invalid_depend",
    "enable_user_top",
    "preempt_youngest_first",
    "preempt_reorder_count",
    "preempt_strict_order",
    "max_switch_wait",
];
/// The SchedulerParameters options of [`SCHED_OPTS`] that take no value.
const SCHED_FLAGS: &[&str] = &[
    "kill_invalid_depend",
    "enable_user_top",
    "preempt_youngest_first",
    "preempt_strict_order",
];
/// SchedulerParameters options without an effect on gresim's decisions.
const QUIET_SCHED_OPTS: &[&str] = &["batch_sched_delay", "sched_min_interval", "bf_busy_nodes"];

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

fn line_err(l: &ConfLine, msg: &str) -> InputError {
    InputError::new(&l.file, msg.to_string()).with_line(l.line, 0)
}

fn num<T: std::str::FromStr>(l: &ConfLine, k: &str, v: &str) -> Result<T, InputError> {
    v.trim()
        .parse::<T>()
        .map_err(|_| line_err(l, &format!("{k}={v}: expected a non-negative whole number")))
}

fn boolean(l: &ConfLine, k: &str, v: &str) -> Result<bool, InputError> {
    match v.trim().to_ascii_uppercase().as_str() {
        "YES" | "TRUE" | "1" | "Y" => Ok(true),
        "NO" | "FALSE" | "0" | "N" => Ok(false),
        _ => Err(line_err(l, &format!("{k}={v}: expected YES or NO"))),
    }
}

fn time_opt(l: &ConfLine, k: &str, v: &str) -> Result<Option<Seconds>, InputError> {
    parse_time_limit(v).map_err(|e| line_err(l, &format!("{k}={v}: {e}")))
}

fn node_fields(
    l: &ConfLine,
    ws: &[(String, String)],
    w: &mut Vec<Warning>,
) -> Result<NodeRaw, InputError> {
    let mut r = NodeRaw::default();
    for (k, v) in ws {
        match k.to_ascii_lowercase().as_str() {
            "cpus" | "procs" => r.cpus = Some(num(l, k, v)?),
            "boards" => r.boards = Some(num(l, k, v)?),
            "sockets" => r.sockets = Some(num(l, k, v)?),
            "socketsperboard" => r.sockets_per_board = Some(num(l, k, v)?),
            "corespersocket" => r.cores_per_socket = Some(num(l, k, v)?),
            "threadspercore" => r.threads_per_core = Some(num(l, k, v)?),
            "realmemory" => r.real_memory = Some(num(l, k, v)?),
            "gres" => {
                r.gres =
                    Some(parse_node_gres(v).map_err(|e| line_err(l, &format!("Gres={v}: {e}")))?)
            }
            "weight" => {
                let x: u64 = if v.eq_ignore_ascii_case("INFINITE") {
                    u64::from(u32::MAX)
                } else {
                    num(l, k, v)?
                };
                // Slurm keeps INFINITE - 1 as the largest weight.
                r.weight = Some(u32::try_from(x).unwrap_or(u32::MAX).min(u32::MAX - 1));
            }
            "feature" | "features" => {
                r.features = Some(
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                )
            }
            "state" => r.state = Some(v.to_ascii_uppercase()),
            o if QUIET_NODE_KEYS.contains(&o) => {}
            o if UNMODELLED_NODE_KEYS.contains(&o) => w.push(Warning::new(
                &l.file,
                l.line,
                format!("node setting {k}={v} is not modelled (ignored)"),
            )),
            _ => w.push(Warning::new(
                &l.file,
                l.line,
                format!("unknown node key '{k}' (ignored)"),
            )),
        }
    }
    Ok(r)
}

/// Parses a node's `Gres=`: `gpu:a100:4,gpu:a100_1g.10gb:2`, `gpu:2`, `nic:1`.
pub fn parse_node_gres(v: &str) -> Result<Vec<GresSpec>, String> {
    let mut out = Vec::new();
    // Split at commas outside parentheses (`gpu:a100:4(S:0-1)`).
    let mut items = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for c in v.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c)
            }
            ')' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth <= 0 => items.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    items.push(cur);
    for item in items {
        let item = item.trim();
        if item.is_empty() || item.eq_ignore_ascii_case("(null)") {
            continue;
        }
        let item = item.split('(').next().unwrap_or(item);
        let mut parts: Vec<&str> = item
            .split(':')
            .filter(|p| !p.eq_ignore_ascii_case("no_consume"))
            .collect();
        let name = parts.remove(0).trim();
        if name.is_empty() {
            return Err(format!("'{item}' has no GRES name"));
        }
        let (ty, count) = match parts.as_slice() {
            [] => (None, 1),
            [c] if c.starts_with(|ch: char| ch.is_ascii_digit()) => {
                (None, parse_count(c).map_err(|e| e.to_string())?)
            }
            [t] => (Some(*t), 1),
            [t, c] => (Some(*t), parse_count(c).map_err(|e| e.to_string())?),
            _ => return Err(format!("'{item}': expected name[:type]:count")),
        };
        if ty.is_some_and(str::is_empty) {
            return Err(format!("'{item}' has an empty type"));
        }
        out.push(GresSpec {
            name: name.to_string(),
            ty: ty.map(str::to_string),
            count,
        });
    }
    Ok(out)
}

fn resolve_node(
    l: &ConfLine,
    expr: &str,
    r: NodeRaw,
    w: &mut Vec<Warning>,
) -> Result<NodeConf, InputError> {
    let names = hostlist::expand(expr)
        .map_err(|e| line_err(l, &format!("NodeName={expr}: bad hostlist: {e}")))?;
    if names.is_empty() {
        return Err(line_err(l, "NodeName= names no node"));
    }
    let mut warn = |m: String| w.push(Warning::new(&l.file, l.line, m));
    let fix = |x: Option<u16>, what: &str, warn: &mut dyn FnMut(String)| -> u16 {
        match x {
            Some(0) => {
                warn(format!("{what}=0 is invalid; reset to 1 as Slurm does"));
                1
            }
            Some(v) => v,
            None => 1,
        }
    };
    let cores = fix(r.cores_per_socket, "CoresPerSocket", &mut warn);
    let mut threads = fix(r.threads_per_core, "ThreadsPerCore", &mut warn);
    let mut boards = fix(r.boards, "Boards", &mut warn);
    let spb = r
        .sockets_per_board
        .map(|s| fix(Some(s), "SocketsPerBoard", &mut warn));
    let mut sockets = match (r.sockets, spb) {
        (Some(_), Some(s)) => {
            warn(
                "Sockets and SocketsPerBoard are mutually exclusive; using SocketsPerBoard".into(),
            );
            u32::from(boards) * u32::from(s)
        }
        (None, Some(s)) => u32::from(boards) * u32::from(s),
        (Some(s), None) => u32::from(fix(Some(s), "Sockets", &mut warn)),
        (None, None) => {
            let ct = u32::from(cores) * u32::from(threads);
            match r.cpus {
                Some(c) if c >= ct && c % ct == 0 => c / ct,
                _ => u32::from(boards),
            }
        }
    };
    if sockets == 0 {
        sockets = 1;
    }
    if sockets < u32::from(boards) {
        warn(format!(
            "Sockets ({sockets}) < Boards ({boards}); Boards reset to 1 as Slurm does"
        ));
        boards = 1;
    }
    let full = sockets * u32::from(cores) * u32::from(threads);
    let mut cpus = match r.cpus {
        Some(0) => {
            warn("CPUs=0 is invalid; reset as Slurm does".into());
            full
        }
        Some(c) => c,
        None => full,
    };
    if cpus != sockets && cpus != sockets * u32::from(cores) && cpus != full {
        warn(format!(
            "CPUs={cpus} matches neither Sockets, Sockets*CoresPerSocket nor Sockets*CoresPerSocket*ThreadsPerCore; reset to {full} as Slurm does"
        ));
        cpus = full;
    }
    if cpus != full && threads > 1 && cpus == sockets * u32::from(cores) {
        // Slurm then allocates whole cores as CPUs.
        warn(format!(
            "CPUs={cpus} counts cores, not hardware threads: gresim models {cpus} CPUs (ThreadsPerCore=1)"
        ));
        threads = 1;
    } else if cpus != full {
        warn(format!(
            "CPUs={cpus} is fewer than the node's {full} hardware threads; gresim models {full}"
        ));
        cpus = full;
    }
    let total_cores = sockets as usize * usize::from(cores);
    if total_cores > MAX_CORES_PER_NODE {
        return Err(line_err(
            l,
            &format!("{total_cores} cores per node; at most {MAX_CORES_PER_NODE} are supported"),
        ));
    }
    let memory_mib = match r.real_memory {
        Some(m) => m,
        None => {
            warn("RealMemory is not set: Slurm's default is 1 MB, so jobs asking for memory will not fit".into());
            1
        }
    };
    // slurm.conf's own words first, then the common ones (`NodeAdminState::from_str`).
    let state = match r.state.as_deref() {
        None | Some("UNKNOWN") => NodeAdminState::Up,
        Some("FAIL") => NodeAdminState::Down,
        Some("FAILING") => NodeAdminState::Drain,
        Some(w) => match (w.parse::<NodeAdminState>(), w) {
            (Ok(st), _) => st,
            (_, "CLOUD") => {
                warn("State=CLOUD: power saving is not modelled; the nodes are up".into());
                NodeAdminState::Up
            }
            (_, "FUTURE") => {
                warn("State=FUTURE: the nodes are modelled as DOWN".into());
                NodeAdminState::Down
            }
            (_, o) => {
                return Err(line_err(
                    l,
                    &format!(
                    "State={o}: expected UNKNOWN, IDLE, DOWN, DRAIN, FAIL, FAILING, FUTURE or CLOUD"
                ),
                ))
            }
        },
    };
    for g in r.gres.iter().flatten() {
        if !g.name.eq_ignore_ascii_case("gpu")
            && gresim_model::shares::ShareKind::from_name(&g.name).is_none()
        {
            warn(format!(
                "GRES '{}' is not modelled (gpu, shard and mps are); ignored",
                g.name
            ));
        }
    }
    Ok(NodeConf {
        file: l.file.clone(),
        line: l.line,
        names,
        boards,
        sockets: u16::try_from(sockets).unwrap_or(u16::MAX),
        cores_per_socket: cores,
        threads_per_core: threads,
        cpus,
        memory_mib,
        gres: r.gres.unwrap_or_default(),
        weight: r.weight.unwrap_or(1),
        features: r.features.unwrap_or_default(),
        state,
    })
}

fn part_fields(
    l: &ConfLine,
    ws: &[(String, String)],
    w: &mut Vec<Warning>,
) -> Result<PartRaw, InputError> {
    let mut r = PartRaw::default();
    for (k, v) in ws {
        let unlimited = v.eq_ignore_ascii_case("UNLIMITED") || v.eq_ignore_ascii_case("INFINITE");
        match k.to_ascii_lowercase().as_str() {
            "nodes" => r.nodes = Some(v.clone()),
            "default" => r.default = Some(boolean(l, k, v)?),
            "maxtime" => r.max_time = Some(time_opt(l, k, v)?),
            "defaulttime" => r.default_time = Some(time_opt(l, k, v)?),
            "prioritytier" => r.priority_tier = Some(num(l, k, v)?),
            "priorityjobfactor" => r.priority_job_factor = Some(num(l, k, v)?),
            "priority" => {
                // The pre-16.05 spelling sets both.
                let p: u16 = num(l, k, v)?;
                r.priority_tier = Some(p);
                r.priority_job_factor = Some(p);
            }
            "minnodes" => r.min_nodes = Some(num(l, k, v)?),
            "qos" => r.qos = Some(v.clone()),
            "tresbillingweights" => r.tres_billing_weights = Some(v.clone()),
            "maxnodes" => r.max_nodes = Some(if unlimited { None } else { Some(num(l, k, v)?) }),
            "state" => {
                r.state = Some(v.parse::<PartitionState>().map_err(|_| {
                    line_err(
                        l,
                        &format!("State={v}: expected UP, DOWN, DRAIN or INACTIVE"),
                    )
                })?)
            }
            "oversubscribe" | "shared" => {
                let up = v.to_ascii_uppercase();
                if up != "NO" {
                    w.push(Warning::new(
                        &l.file,
                        l.line,
                        format!(
                            "{k}={v} is not modelled; gresim never shares cores (OverSubscribe=NO)"
                        ),
                    ));
                }
                r.oversubscribe = Some(up);
            }
            "preemptmode" => {
                let m: gresim_model::preempt::PreemptModeSpec = v
                    .parse()
                    .map_err(|e: String| line_err(l, &format!("PreemptMode={v}: {e}")))?;
                if m.mode == gresim_model::preempt::PreemptMode::Suspend {
                    w.push(Warning::new(
                        &l.file,
                        l.line,
                        format!("PreemptMode={v}: SUSPEND (gang scheduling) is not modelled; jobs of this partition are never preempted"),
                    ));
                }
                r.preempt_mode = Some(m.mode);
            }
            "gracetime" => r.grace_time = Some(num(l, k, v)?),
            o if QUIET_PART_KEYS.contains(&o) => {}
            o if UNMODELLED_PART_KEYS.contains(&o) => w.push(Warning::new(
                &l.file,
                l.line,
                format!("partition setting {k}={v} is not modelled (ignored)"),
            )),
            _ => w.push(Warning::new(
                &l.file,
                l.line,
                format!("unknown partition key '{k}' (ignored)"),
            )),
        }
    }
    Ok(r)
}

fn resolve_partition(
    l: &ConfLine,
    name: &str,
    r: PartRaw,
    w: &mut Vec<Warning>,
) -> Result<PartitionConf, InputError> {
    if name.is_empty() || name.contains([',', ' ']) {
        return Err(line_err(
            l,
            &format!("'{name}' is not a valid partition name"),
        ));
    }
    if r.nodes.is_none() {
        w.push(Warning::new(
            &l.file,
            l.line,
            format!("partition {name} has no Nodes=; it has no nodes, as in Slurm"),
        ));
    }
    Ok(PartitionConf {
        file: l.file.clone(),
        line: l.line,
        name: name.to_string(),
        nodes: r.nodes,
        default: r.default.unwrap_or(false),
        max_time: r.max_time.flatten(),
        default_time: r.default_time.flatten(),
        priority_tier: r.priority_tier.unwrap_or(1),
        priority_job_factor: r.priority_job_factor.unwrap_or(1),
        min_nodes: r.min_nodes.unwrap_or(0),
        max_nodes: r.max_nodes.flatten(),
        state: r.state.unwrap_or_default(),
        oversubscribe: r.oversubscribe.unwrap_or_else(|| "NO".into()),
        qos: r.qos,
        tres_billing_weights: r.tres_billing_weights,
        preempt_mode: r.preempt_mode,
        grace_time: r.grace_time.unwrap_or(0),
    })
}

fn global(
    l: &ConfLine,
    c: &mut SlurmConf,
    k: &str,
    v: &str,
    w: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let mut warn = |m: String| w.push(Warning::new(&l.file, l.line, m));
    match k.to_ascii_lowercase().as_str() {
        "selecttype" => c.select_type = Some(v.to_string()),
        "selecttypeparameters" => c.select_type_parameters = Some(v.to_string()),
        "schedulertype" => {
            if !["sched/backfill", "sched/builtin"].contains(&v) {
                warn(format!(
                    "SchedulerType={v} is not modelled; gresim simulates sched/backfill"
                ));
            }
            c.scheduler_type = Some(v.to_string());
        }
        "schedulerparameters" => {
            for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (o, val) = item.split_once('=').unwrap_or((item, ""));
                let o = o.to_ascii_lowercase();
                if SCHED_OPTS.contains(&o.as_str()) {
                    if !SCHED_FLAGS.contains(&o.as_str()) && val.parse::<u64>().is_err() {
                        return Err(line_err(
                            l,
                            &format!("SchedulerParameters {item}: expected a number"),
                        ));
                    }
                } else if !QUIET_SCHED_OPTS.contains(&o.as_str()) {
                    warn(format!(
                        "SchedulerParameters option '{item}' is not modelled (ignored)"
                    ));
                }
                c.scheduler_parameters.push((o, val.to_string()));
            }
        }
        "prioritytype" => {
            if !["priority/basic", "priority/multifactor"].contains(&v) {
                return Err(line_err(
                    l,
                    &format!("PriorityType={v}: expected priority/basic or priority/multifactor"),
                ));
            }
            c.priority_type = Some(v.to_string());
        }
        "priorityweightage" => c.priority_weight_age = Some(num(l, k, v)?),
        "priorityweightjobsize" => c.priority_weight_job_size = Some(num(l, k, v)?),
        "priorityweightpartition" => c.priority_weight_partition = Some(num(l, k, v)?),
        "priorityweightfairshare" => c.priority_weight_fairshare = Some(num(l, k, v)?),
        "priorityweightqos" => c.priority_weight_qos = Some(num(l, k, v)?),
        "priorityweightassoc" => c.priority_weight_assoc = Some(num(l, k, v)?),
        "priorityweighttres" => {
            c.priority_weight_tres.clear();
            for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let Some((t, x)) = item.split_once('=') else {
                    return Err(line_err(
                        l,
                        &format!("PriorityWeightTRES {item}: expected TRES=weight"),
                    ));
                };
                let x: f64 = x
                    .trim()
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        line_err(l, &format!("PriorityWeightTRES {item}: expected a number"))
                    })?;
                let t = t.trim().to_ascii_lowercase();
                if !["cpu", "mem", "gres/gpu"].contains(&t.as_str()) {
                    warn(format!(
                        "PriorityWeightTRES {item}: only CPU, Mem and GRES/gpu are modelled"
                    ));
                }
                c.priority_weight_tres.push((t, x));
            }
        }
        "priorityfavorsmall" => c.priority_favor_small = Some(boolean(l, k, v)?),
        "prioritydecayhalflife" => {
            c.priority_decay_half_life = Some(time_opt(l, k, v)?.unwrap_or(0));
            c.priority_decay_at = Some((l.file.clone(), l.line));
        }
        "prioritycalcperiod" => {
            c.priority_calc_period = Some(time_opt(l, k, v)?.filter(|s| *s > 0).unwrap_or(60))
        }
        "priorityflags" => c.priority_flags = Some(v.to_string()),
        "priorityusageresetperiod" => {
            c.priority_usage_reset = Some(
                v.parse::<gresim_sched::fairshare::UsageReset>()
                    .map_err(|m| line_err(l, &format!("{k}={v}: {m}")))?,
            )
        }
        "accountingstorageenforce" => c.accounting_storage_enforce = Some(v.to_string()),
        "accountingstoragetres" => c.accounting_storage_tres = Some(v.to_string()),
        "prioritymaxage" => {
            c.priority_max_age = Some(time_opt(l, k, v)?.unwrap_or(u64::from(u32::MAX)))
        }
        "defmempercpu" => c.def_mem_per_cpu = Some(num(l, k, v)?),
        "jobrequeue" => c.job_requeue = Some(num::<u64>(l, k, v)? != 0),
        "dependencyparameters" => {
            for o in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if o != "kill_invalid_depend" {
                    warn(format!(
                        "DependencyParameters option '{o}' is not modelled (ignored)"
                    ));
                }
                c.dependency_parameters.push(o.to_string());
            }
        }
        "authinfo" => {
            for o in v.split(',').map(str::trim) {
                if let Some(x) = o.strip_prefix("cred_expire=") {
                    c.cred_expire = Some(num(l, "cred_expire", x)?);
                }
            }
        }
        "grestypes" => {
            c.gres_types = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        }
        "accountingstoragetype" => c.accounting_storage_type = Some(v.to_string()),
        "killwait" => c.kill_wait = Some(num(l, k, v)?),
        "messagetimeout" => c.message_timeout = Some(num(l, k, v)?),
        "preempttype" => {
            c.preempt.ptype = v.parse().map_err(|e: String| line_err(l, &e))?;
            c.preempt_type_at = Some((l.file.clone(), l.line));
        }
        "preemptmode" => {
            let m: gresim_model::preempt::PreemptModeSpec = v
                .parse()
                .map_err(|e: String| line_err(l, &format!("PreemptMode={v}: {e}")))?;
            if m.mode == gresim_model::preempt::PreemptMode::Suspend && !m.gang {
                // read_config.c refuses it, and slurmctld does not start.
                return Err(line_err(l, "PreemptMode=SUSPEND requires GANG too"));
            }
            if m.mode == gresim_model::preempt::PreemptMode::Suspend {
                warn(format!(
                    "PreemptMode={v}: SUSPEND with gang scheduling is not modelled; jobs that would be suspended are never preempted"
                ));
            }
            c.preempt.mode = m;
        }
        "preemptexempttime" => {
            // time_str2secs(): INFINITE (or -1) is "not set".
            c.preempt.exempt_time = if v.trim() == "-1"
                || v.eq_ignore_ascii_case("INFINITE")
                || v.eq_ignore_ascii_case("UNLIMITED")
            {
                None
            } else {
                Some(
                    gresim_model::slurm_time::parse_duration_exact(v)
                        .map_err(|e| line_err(l, &format!("PreemptExemptTime={v}: {e}")))?,
                )
            }
        }
        "topologyplugin" => {
            c.topology_plugin = crate::topology_conf::plugin(v).map_err(|e| line_err(l, &e))?;
            c.topology_plugin_at = Some((l.file.clone(), l.line));
        }
        o if QUIET_KEYS.contains(&o) => {}
        o if UNMODELLED_KEYS.contains(&o) => {
            warn(format!("{k}={v} is not modelled (ignored)"));
        }
        _ => warn(format!("unknown key '{k}' (ignored)")),
    }
    Ok(())
}

/// The scheduler settings of `conf` over `base` (whose fields slurm.conf does
/// not set are kept: the pass cadence, the controller phase).
pub fn sched_params(conf: &SlurmConf, base: &SchedParams) -> SchedParams {
    let mut p = base.clone();
    let n = |v: &str| v.parse::<u64>().unwrap_or(0);
    for (k, v) in &conf.scheduler_parameters {
        match k.as_str() {
            "sched_interval" => p.sched_interval = n(v).max(1),
            "bf_interval" => p.bf_interval = n(v).max(1),
            "bf_resolution" => p.bf_resolution = n(v).max(1),
            "bf_window" => p.bf_window = n(v).saturating_mul(60),
            "bf_max_job_test" => p.bf_max_job_test = u32::try_from(n(v)).unwrap_or(u32::MAX),
            "max_switch_wait" => p.max_switch_wait = n(v),
            "kill_invalid_depend" => p.kill_invalid_depend = true,
            "enable_user_top" => p.enable_user_top = true,
            "preempt_youngest_first" => p.preempt.youngest_first = true,
            "preempt_strict_order" => p.preempt.strict_order = true,
            "preempt_reorder_count" => {
                p.preempt.reorder_count = u32::try_from(n(v)).unwrap_or(u32::MAX)
            }
            _ => {}
        }
    }
    if conf
        .dependency_parameters
        .iter()
        .any(|o| o == "kill_invalid_depend")
    {
        p.kill_invalid_depend = true;
    }
    if let Some(d) = conf.def_mem_per_cpu {
        p.def_mem_per_cpu = (d > 0).then_some(d);
    }
    if let Some(r) = conf.job_requeue {
        p.job_requeue = r;
    }
    if let Some(c) = conf.cred_expire {
        p.cred_expire = c;
    }
    if let Some(c) = conf.priority_calc_period {
        p.priority_calc_period = c;
    }
    p.preempt.ptype = conf.preempt.ptype;
    p.preempt.mode = conf.preempt.mode;
    p.preempt.exempt_time = conf.preempt.exempt_time;
    p.preempt.kill_pending_wait = conf.kill_wait.unwrap_or(30) + conf.message_timeout.unwrap_or(10);
    match conf.priority_type.as_deref() {
        Some("priority/multifactor") => {
            let mut m = Multifactor::new();
            // Without slurmdbd slurmctld ignores the age weight.
            if conf.accounting_storage_type.as_deref() == Some("accounting_storage/slurmdbd") {
                m.weight_age = conf.priority_weight_age.unwrap_or(0);
            }
            m.weight_job_size = conf.priority_weight_job_size.unwrap_or(0);
            m.weight_partition = conf.priority_weight_partition.unwrap_or(0);
            m.weight_fairshare = conf.priority_weight_fairshare.unwrap_or(0);
            m.weight_qos = conf.priority_weight_qos.unwrap_or(0);
            m.weight_assoc = conf.priority_weight_assoc.unwrap_or(0);
            for (t, x) in &conf.priority_weight_tres {
                match t.as_str() {
                    "cpu" => m.weight_tres_cpu = *x,
                    "mem" => m.weight_tres_mem = *x,
                    "gres/gpu" => m.weight_tres_gpu = *x,
                    _ => {}
                }
            }
            m.favor_small = conf.priority_favor_small.unwrap_or(false);
            if let Some(a) = conf.priority_max_age {
                m.max_age = a;
            }
            if let Some(h) = conf.priority_decay_half_life {
                m.half_life = h;
            }
            if let Some(f) = &conf.priority_flags {
                let f = f.to_ascii_uppercase();
                // DEPTH_OBLIVIOUS is a variant of classic fair-share; gresim
                // computes it as classic.
                m.fair_tree = !(f.contains("NO_FAIR_TREE") || f.contains("DEPTH_OBLIVIOUS"));
            }
            if let Some(r) = conf.priority_usage_reset {
                m.usage_reset = r;
            }
            p.priority = PriorityConfig::Multifactor(m);
        }
        Some(_) => p.priority = PriorityConfig::Basic,
        None => {}
    }
    p
}

/// The gresim policy for `SchedulerType`: `slurm` (sched/backfill, the
/// default) or `fifo` (sched/builtin).
pub fn policy_name(conf: &SlurmConf) -> &'static str {
    match conf.scheduler_type.as_deref() {
        Some("sched/builtin") => "fifo",
        _ => "slurm",
    }
}

/// The GPU model used for a GRES type gresim cannot identify.
pub const DEFAULT_GPU_MODEL: &str = "A100-SXM4-80GB";

/// The GPU model (and MIG profile) a GRES type name stands for, and whether
/// the name was recognised.
///
/// Names that are catalog names or aliases (`A100-SXM4-40GB`, `h100`) are
/// those models. Otherwise the first of `a100`, `h100`, `h200`, `v100`,
/// `l40s`, `t4` the name contains picks the model: `a100` is the 80 GB card
/// unless the name says `40gb` or names a MIG profile only the 40 GB card has
/// (`a100_3g.20gb`). A trailing `_<profile>` (`a100_1g.10gb`) or a bare
/// profile (`1g.10gb`, taken as an A100 slice) makes it a MIG instance type.
/// Anything else (including the untyped `gpu`) is [`DEFAULT_GPU_MODEL`], not
/// recognised.
pub fn model_for_type(ty: &str) -> (GpuModelId, Option<&'static MigProfile>, bool) {
    let id = |n: &str| catalog::model_by_name(n).unwrap_or(GpuModelId(0));
    let a100 = id(DEFAULT_GPU_MODEL);
    let a100_40 = id("A100-SXM4-40GB");
    let lower = ty.to_ascii_lowercase();
    // A canonical catalog name (the catalog's short aliases such as `A100`
    // mean the 40 GB card; a GRES type `a100` is taken as the 80 GB one).
    if let Some(i) = catalog::GPU_MODELS
        .iter()
        .position(|m| m.name.eq_ignore_ascii_case(&lower))
    {
        return (GpuModelId::from_idx(i), None, true);
    }
    let profile_of = |m: GpuModelId| -> Option<&'static MigProfile> {
        lower
            .rsplit('_')
            .next()
            .and_then(|p| catalog::model(m).mig_profile(p))
    };
    for (short, name) in [
        ("a100", DEFAULT_GPU_MODEL),
        ("h100", "H100-SXM5-80GB"),
        ("h200", "H200-141GB"),
        ("v100", "V100-32GB"),
        ("l40s", "L40S"),
        ("t4", "T4"),
    ] {
        if lower.contains(short) {
            let mut m = id(name);
            if short == "a100"
                && (lower.contains("40gb")
                    || (profile_of(m).is_none() && profile_of(a100_40).is_some()))
            {
                m = a100_40;
            }
            return (m, profile_of(m), true);
        }
    }
    // A bare MIG profile name (`1g.10gb`): an A100 slice.
    if let Some(p) = catalog::model(a100).mig_profile(&lower) {
        return (a100, Some(p), true);
    }
    if let Some(p) = catalog::model(a100_40).mig_profile(&lower) {
        return (a100_40, Some(p), true);
    }
    (a100, None, false)
}

/// The socket a `Cores=` list lies on: the lowest socket it touches, or
/// `None` when it touches every socket (close to all of them).
pub fn socket_of_cores(cores: &[(u32, u32)], cps: u16, sockets: u16) -> Option<u16> {
    let cps = u32::from(cps.max(1));
    let mut set = 0u64;
    for &(a, b) in cores {
        let (sa, sb) = ((a / cps).min(63), (b / cps).min(63));
        for s in sa..=sb {
            set |= 1 << s;
        }
    }
    let all = if sockets >= 64 {
        u64::MAX
    } else {
        (1u64 << sockets) - 1
    };
    if set & all == all {
        return None;
    }
    Some(set.trailing_zeros() as u16)
}

/// One GPU device of a node before it is placed in the model.
struct Dev<'a> {
    ty: String,
    cores: Option<&'a [(u32, u32)]>,
    links: Option<&'a [i32]>,
    phys: Option<u32>,
    src: Option<&'a GresLine>,
}

/// Builds the cluster from slurm.conf nodes and partitions and gres.conf.
///
/// A node's GPU devices are its gres.conf `Name=gpu` lines in file order, or,
/// when gres.conf has none for it, its slurm.conf `Gres=gpu…` entries in
/// order. Each device's socket comes from `Cores=` ([`socket_of_cores`]),
/// its GPU model from its type name ([`model_for_type`]); `Links=` rows make
/// the node's link matrix (`-1`, the device itself, becomes 0). A MIG device
/// given with `MultipleFiles=/dev/nvidiaN,…` belongs to physical GPU N; other
/// devices are physical GPUs of their own. Mismatches between gres.conf and
/// `Gres=` counts are warnings (Slurm would drain a node that reports fewer
/// devices than configured).
pub fn build_cluster(
    conf: &SlurmConf,
    gres: &GresConf,
    w: &mut Vec<Warning>,
) -> Result<Cluster, InputError> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut types: Vec<GpuType> = Vec::new();
    let mut type_ids: BTreeMap<String, GpuTypeId> = BTreeMap::new();
    let mut warned_types: BTreeSet<String> = BTreeSet::new();
    let mut node_shares: BTreeMap<String, gresim_model::shares::NodeShares> = BTreeMap::new();
    for nc in &conf.nodes {
        let mut warned_autodetect = false;
        for name in &nc.names {
            let lines: Vec<&GresLine> = gres
                .lines
                .iter()
                .filter(|g| g.is_gpu() && g.applies_to(name))
                .collect();
            let conf_gpus: Vec<&GresSpec> = nc
                .gres
                .iter()
                .filter(|g| g.name.eq_ignore_ascii_case("gpu"))
                .collect();
            let conf_total: u64 = conf_gpus.iter().map(|g| g.count).sum();
            let mut devs: Vec<Dev<'_>> = Vec::new();
            if lines.is_empty() {
                let auto = gres
                    .lines
                    .iter()
                    .rev()
                    .find(|g| g.applies_to(name) && g.autodetect.is_some())
                    .and_then(|g| g.autodetect.as_deref())
                    .or(gres.autodetect.as_deref());
                if conf_total > 0 && auto.is_some_and(|a| a != "off") && !warned_autodetect {
                    warned_autodetect = true;
                    w.push(Warning::new(
                        &nc.file,
                        nc.line,
                        format!(
                            "AutoDetect={} cannot probe hardware in a simulation: the GPUs of {} follow Gres= with no Cores or Links",
                            auto.unwrap_or(""),
                            hostlist::compress(&nc.names)
                        ),
                    ));
                }
                if conf_total > MAX_GPUS_PER_NODE as u64 {
                    return Err(InputError::new(
                        &nc.file,
                        format!(
                            "node {name}: {conf_total} GPU devices; at most {MAX_GPUS_PER_NODE} are supported"
                        ),
                    )
                    .with_line(nc.line, 0));
                }
                for g in &conf_gpus {
                    for _ in 0..g.count {
                        devs.push(Dev {
                            ty: g.ty.clone().unwrap_or_else(|| "gpu".into()),
                            cores: None,
                            links: None,
                            phys: None,
                            src: None,
                        });
                    }
                }
            } else {
                let total: u64 = lines.iter().map(|g| g.devices()).sum();
                if total > MAX_GPUS_PER_NODE as u64 {
                    return Err(InputError::new(
                        &lines[0].file,
                        format!(
                            "node {name}: {total} GPU devices; at most {MAX_GPUS_PER_NODE} are supported"
                        ),
                    )
                    .with_line(lines[0].line, 0));
                }
                for g in &lines {
                    for _ in 0..g.devices() {
                        devs.push(Dev {
                            ty: g.ty.clone().unwrap_or_else(|| "gpu".into()),
                            cores: g.cores.as_deref(),
                            links: g.links.as_deref(),
                            phys: g.parent_gpu(),
                            src: Some(g),
                        });
                    }
                }
                if nc.line > 0 && total != conf_total {
                    w.push(Warning::new(
                        &nc.file,
                        nc.line,
                        format!(
                            "node {name}: gres.conf describes {total} GPU device(s) but Gres= configures {conf_total} (Slurm drains a node reporting fewer than configured); gresim uses gres.conf's devices"
                        ),
                    ));
                }
                for g in conf_gpus.iter().filter(|g| g.ty.is_some()) {
                    let t = g.ty.as_deref().unwrap_or("");
                    let n = devs.iter().filter(|d| d.ty.eq_ignore_ascii_case(t)).count() as u64;
                    if nc.line > 0 && n != g.count && total == conf_total {
                        w.push(Warning::new(
                            &nc.file,
                            nc.line,
                            format!("node {name}: Gres= configures {} gpu:{t} but gres.conf describes {n}", g.count),
                        ));
                    }
                }
            }
            let n = devs.len();
            let mut gpus = Vec::with_capacity(n);
            let mut links: Option<Vec<Vec<u8>>> = None;
            if devs.iter().any(|d| d.links.is_some()) {
                let mut m = vec![vec![0u8; n]; n];
                for (i, d) in devs.iter().enumerate() {
                    if let Some(row) = d.links {
                        if row.len() != n {
                            let (f, l) = d.src.map_or((nc.file.as_path(), nc.line), |s| {
                                (s.file.as_path(), s.line)
                            });
                            return Err(InputError::new(
                                f,
                                format!(
                                    "Links= has {} entries but node {name} has {n} GPU devices",
                                    row.len()
                                ),
                            )
                            .with_line(l, 0));
                        }
                        m[i] = row.iter().map(|&v| v.clamp(0, 255) as u8).collect();
                    }
                }
                links = Some(m);
            }
            let node_cores = u32::from(nc.sockets) * u32::from(nc.cores_per_socket);
            for (i, d) in devs.iter().enumerate() {
                if let (Some(c), Some(src)) = (d.cores, d.src) {
                    if src.line > 0 && c.iter().any(|&(_, b)| b >= node_cores) {
                        w.push(Warning::new(
                            &src.file,
                            src.line,
                            format!("Cores= names a core beyond node {name}'s {node_cores} cores"),
                        ));
                    }
                }
                let (model, mig, known) = model_for_type(&d.ty);
                if !known && warned_types.insert(d.ty.clone()) && nc.line > 0 {
                    w.push(Warning::new(
                        &nc.file,
                        nc.line,
                        format!(
                            "GPU type '{}' names no GPU model gresim knows; modelled as {DEFAULT_GPU_MODEL}",
                            d.ty
                        ),
                    ));
                }
                let id = match type_ids.get(&d.ty) {
                    Some(&id) => id,
                    None => {
                        let id = GpuTypeId::from_idx(types.len());
                        types.push(GpuType {
                            name: d.ty.clone(),
                            model,
                            mig,
                        });
                        type_ids.insert(d.ty.clone(), id);
                        id
                    }
                };
                let phys = d.phys.unwrap_or(i as u32);
                gpus.push(GpuDevice {
                    ty: id,
                    model,
                    socket: d
                        .cores
                        .and_then(|c| socket_of_cores(c, nc.cores_per_socket, nc.sockets)),
                    phys: u8::try_from(phys).unwrap_or(u8::MAX),
                    mig: mig.map(|p| MigInstance {
                        profile: p,
                        start: 0,
                    }),
                });
            }
            if let Some(sh) = crate::shares_conf::conf_node_shares(
                name,
                &nc.gres,
                &conf.gres_types,
                gres,
                gpus.len(),
                (&nc.file, nc.line),
                w,
            )? {
                node_shares.insert(name.clone(), sh);
            }
            nodes.push(Node {
                name: name.clone(),
                sockets: nc.sockets,
                cores_per_socket: nc.cores_per_socket,
                threads_per_core: nc.threads_per_core,
                memory_mib: nc.memory_mib,
                features: nc.features.clone(),
                weight: nc.weight,
                gpus,
                gpu_links: links,
                state: nc.state,
            });
        }
    }
    for g in &gres.lines {
        let shared = gresim_model::shares::ShareKind::from_name(&g.name).is_some();
        if !g.name.is_empty() && !g.is_gpu() && !shared && g.line > 0 {
            w.push(Warning::new(
                &g.file,
                g.line,
                format!(
                    "GRES '{}' is not modelled (gpu, shard and mps are); ignored",
                    g.name
                ),
            ));
        }
        if g.is_gpu() && g.line > 0 && !nodes_exist(g, &conf.nodes) {
            w.push(Warning::new(
                &g.file,
                g.line,
                "this line names no node of slurm.conf",
            ));
        }
    }
    if nodes.is_empty() {
        return Err(InputError::new(
            &conf.file,
            "slurm.conf defines no node (NodeName=…)",
        ));
    }
    nodes.sort_by(|a, b| hostlist::natural_cmp(&a.name, &b.name));
    let partitions = build_partitions(conf, &nodes, w)?;
    let mut cluster = Cluster::new(nodes, partitions, types);
    crate::shares_conf::apply(&mut cluster, &node_shares);
    Ok(cluster)
}

fn nodes_exist(g: &GresLine, nodes: &[NodeConf]) -> bool {
    match &g.nodes {
        None => true,
        Some(v) => v
            .iter()
            .any(|n| nodes.iter().any(|c| c.names.iter().any(|m| m == n))),
    }
}

fn build_partitions(
    conf: &SlurmConf,
    nodes: &[Node],
    w: &mut Vec<Warning>,
) -> Result<Vec<Partition>, InputError> {
    let index = crate::partition::NodeIndex::new(nodes);
    let mut out = Vec::new();
    if conf.partitions.is_empty() {
        w.push(Warning::new(
            &conf.file,
            0,
            "no PartitionName= line: gresim adds a default partition 'main' with every node",
        ));
        out.push(crate::partition::default_partition(&index));
    }
    for p in &conf.partitions {
        let fields = crate::partition::PartitionFields {
            name: &p.name,
            nodes: p.nodes.as_deref(),
            default: p.default,
            max_time: p.max_time,
            default_time: p.default_time,
            priority_tier: Some(p.priority_tier),
            priority_job_factor: Some(p.priority_job_factor),
            min_nodes: Some(p.min_nodes),
            max_nodes: p.max_nodes,
            state: p.state,
            preempt_mode: p.preempt_mode,
            grace_time: Some(p.grace_time),
        };
        let err = |m: String| InputError::new(&p.file, m).with_line(p.line, 0);
        let h = p.nodes.as_deref().unwrap_or("");
        out.push(
            crate::partition::lower(&fields, &index, false).map_err(|e| match e {
                crate::partition::MembersError::Hostlist(e) => {
                    err(format!("Nodes={h}: bad hostlist: {e}"))
                }
                crate::partition::MembersError::UnknownNode(n) => err(format!(
                    "partition {}: node '{n}' is not defined by a NodeName line",
                    p.name
                )),
            })?,
        );
    }
    Ok(out)
}

/// A cluster and scheduler settings read from slurm.conf (+ gres.conf).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub conf: SlurmConf,
    pub gres: GresConf,
    pub cluster: Cluster,
    pub params: SchedParams,
    /// The policy SchedulerType asks for.
    pub policy: &'static str,
    pub warnings: Vec<Warning>,
}

/// Reads slurm.conf and gres.conf (by default the `gres.conf` next to
/// slurm.conf, where Slurm looks for it, when it exists) and builds the
/// cluster and the scheduler settings over Slurm's defaults.
pub fn load(slurm_conf: &Path, gres_conf: Option<&Path>) -> Result<Loaded, InputError> {
    let (conf, mut warnings) = read_slurm_conf(slurm_conf)?;
    let sibling = slurm_conf
        .parent()
        .unwrap_or(Path::new("."))
        .join("gres.conf");
    let gpath = match gres_conf {
        Some(p) => Some(p.to_path_buf()),
        None => sibling.is_file().then_some(sibling),
    };
    let gres = match &gpath {
        Some(p) => {
            let (g, w) = crate::gresconf::read_gres_conf(p)?;
            warnings.extend(w);
            g
        }
        None => GresConf::default(),
    };
    let mut cluster = build_cluster(&conf, &gres, &mut warnings)?;
    if conf.topology_plugin != gresim_model::switches::TopologyPlugin::None {
        // topology/tree and topology/block read topology.conf from
        // slurm.conf's directory.
        let tp = slurm_conf
            .parent()
            .unwrap_or(Path::new("."))
            .join("topology.conf");
        let tree = crate::topology_conf::read(&tp, &cluster, &mut warnings)?;
        crate::topology_conf::check_plugin(&tree, conf.topology_plugin).map_err(|m| match &conf
            .topology_plugin_at
        {
            Some((f, line)) => InputError::new(f, m).with_line(*line, 0),
            None => InputError::new(&tp, m),
        })?;
        cluster.set_switches(Some(tree), conf.topology_plugin);
    }
    let params = sched_params(&conf, &SchedParams::default());
    let policy = policy_name(&conf);
    Ok(Loaded {
        conf,
        gres,
        cluster,
        params,
        policy,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> (SlurmConf, Vec<Warning>) {
        parse_slurm_conf(Path::new("slurm.conf"), t).unwrap()
    }

    #[test]
    fn defaults_continuations_comments_and_case() {
        let (c, w) = parse(
            "selecttype=select/cons_tres  # comment\n\
             NodeName=DEFAULT CPUs=64 CoresPerSocket=16 ThreadsPerCore=2 \\\n  RealMemory=512000 Gres=gpu:a100:4\n\
             NODENAME=gpu[01-03] weight=5 Features=a100,nvlink\n\
             NodeName=DEFAULT Weight=7\n\
             NodeName=gpu04\n\
             PartitionName=p Nodes=ALL Default=yes MaxTime=1-00:00:00 DefaultTime=30\n",
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.nodes.len(), 2);
        let n = &c.nodes[0];
        assert_eq!(n.line, 4);
        assert_eq!(n.names, ["gpu01", "gpu02", "gpu03"]);
        // CPUs=64 with 16 cores × 2 threads per socket: 2 sockets inferred.
        assert_eq!(
            (n.sockets, n.cores_per_socket, n.threads_per_core, n.cpus),
            (2, 16, 2, 64)
        );
        assert_eq!(n.memory_mib, 512000);
        assert_eq!(n.weight, 5);
        assert_eq!(n.features, ["a100", "nvlink"]);
        assert_eq!(
            n.gres,
            [GresSpec {
                name: "gpu".into(),
                ty: Some("a100".into()),
                count: 4
            }]
        );
        assert_eq!(c.nodes[1].weight, 7);
        assert_eq!(c.nodes[1].gres.len(), 1);
        let p = &c.partitions[0];
        assert!(p.default);
        assert_eq!(p.max_time, Some(86400));
        assert_eq!(p.default_time, Some(1800));
    }

    #[test]
    fn unknown_keys_warn_with_line_numbers_and_never_fail() {
        let (c, w) = parse(
            "SelectType=select/cons_tres\nClusterName=x\nFrobnicate=3\n\
             NodeName=n1 CPUs=4 RealMemory=100 Colour=blue\n\
             PartitionName=p Nodes=n1 Flavour=x\nSchedulerParameters=bf_interval=5,bf_continue\nTopologyParam=Dragonfly\n",
        );
        assert_eq!(c.nodes.len(), 1);
        let msgs: Vec<String> = w.iter().map(ToString::to_string).collect();
        assert_eq!(msgs.len(), 5, "{msgs:#?}");
        assert!(msgs[0].starts_with("slurm.conf:3: unknown key 'Frobnicate'"));
        assert!(msgs[1].starts_with("slurm.conf:4: unknown node key 'Colour'"));
        assert!(msgs[2].starts_with("slurm.conf:5: unknown partition key 'Flavour'"));
        assert!(msgs[3].starts_with("slurm.conf:6: ") && msgs[3].contains("bf_continue"));
        assert!(msgs[4].starts_with("slurm.conf:7: ") && msgs[4].contains("TopologyParam"));
    }

    #[test]
    fn preemption_settings_are_read_and_bad_ones_name_their_line() {
        use gresim_model::preempt::{PreemptMode, PreemptType};
        let (c, w) = parse(
            "SelectType=select/cons_tres\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n\
             PreemptExemptTime=00:05:00\nKillWait=1\n\
             SchedulerParameters=preempt_youngest_first,preempt_reorder_count=3\n\
             NodeName=n1 CPUs=4 RealMemory=100\n\
             PartitionName=scav Nodes=n1 PriorityTier=1 PreemptMode=CANCEL GraceTime=30\n",
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.preempt.ptype, PreemptType::PartitionPrio);
        assert_eq!(c.preempt.mode.mode, PreemptMode::Requeue);
        assert_eq!(c.preempt.exempt_time, Some(300));
        let p = sched_params(&c, &SchedParams::default());
        assert!(p.preempt.enabled() && p.preempt.youngest_first);
        assert_eq!(p.preempt.reorder_count, 3);
        assert_eq!(p.preempt.kill_pending_wait, 11);
        assert_eq!(c.partitions[0].preempt_mode, Some(PreemptMode::Cancel));
        assert_eq!(c.partitions[0].grace_time, 30);

        let bad = |text: &str, needle: &str, line: &str| {
            let e = parse_slurm_conf(Path::new("slurm.conf"), text).expect_err("refused");
            let m = e.to_string();
            assert!(m.contains(needle) && m.contains(line), "{m}");
        };
        bad(
            "PreemptType=preempt/qos\nPreemptMode=PAUSE\n",
            "PAUSE",
            "slurm.conf:2",
        );
        bad(
            "PreemptType=preempt/fancy\n",
            "preempt/fancy",
            "slurm.conf:1",
        );
        bad("PreemptMode=SUSPEND\n", "GANG", "slurm.conf:1");
        bad(
            "NodeName=n1 CPUs=4\nPreemptType=preempt/qos\n",
            "incompatible",
            "slurm.conf:2",
        );
        bad(
            "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 PreemptMode=often\n",
            "often",
            "slurm.conf:2",
        );
    }

    #[test]
    fn select_type_default_is_warned() {
        let (_, w) = parse("NodeName=n1 RealMemory=10\n");
        assert!(w.iter().any(|w| w.msg.contains("select/linear")), "{w:?}");
        let (_, w) = parse("SelectType=select/linear\nNodeName=n1 RealMemory=10\n");
        assert!(w
            .iter()
            .any(|w| w.msg.contains("select/linear is not modelled")));
    }

    #[test]
    fn sockets_boards_and_cpus_follow_slurm() {
        let (c, w) = parse(
            "SelectType=select/cons_tres\n\
             NodeName=a Boards=2 SocketsPerBoard=2 CoresPerSocket=8 RealMemory=1\n\
             NodeName=b CPUs=8 RealMemory=1\n\
             NodeName=c Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 CPUs=8 RealMemory=1\n",
        );
        assert_eq!((c.nodes[0].sockets, c.nodes[0].cpus), (4, 32));
        // CPUs alone: one core per socket, as Slurm infers.
        assert_eq!((c.nodes[1].sockets, c.nodes[1].cores_per_socket), (8, 1));
        // CPUs = cores with 2 threads: cores are the CPUs.
        assert_eq!((c.nodes[2].threads_per_core, c.nodes[2].cpus), (1, 8));
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn bad_values_are_errors_with_lines() {
        for (t, want, line) in [
            ("\nNodeName=n1 CPUs=x\n", "CPUs=x", 2),
            ("NodeName=n[1-\n", "hostlist", 1),
            ("\n\nPartitionName=p MaxTime=forever\n", "MaxTime", 3),
            ("PriorityType=priority/fancy\n", "PriorityType", 1),
            ("NodeName=n1 Gres=gpu:a100:x\n", "Gres", 1),
            ("NodeName=n1 State=WEIRD\n", "State", 1),
            ("PartitionName=p\nPartitionName=p\n", "twice", 2),
            (
                "\nPriorityUsageResetPeriod=HOURLY\n",
                "PriorityUsageResetPeriod",
                2,
            ),
            (
                "\n\nPriorityDecayHalfLife=0\n",
                "needs a PriorityUsageResetPeriod",
                3,
            ),
        ] {
            let e = parse_slurm_conf(Path::new("s.conf"), t).unwrap_err();
            assert!(e.to_string().contains(want), "{t:?}: {e}");
            assert_eq!(e.line, Some((line, 0)), "{t:?}: {e}");
        }
    }

    #[test]
    fn params_from_conf() {
        let (c, _) = parse(
            "SchedulerParameters=sched_interval=10,bf_interval=20,bf_window=60,bf_resolution=30,bf_max_job_test=7\n\
             PriorityType=priority/multifactor\nPriorityWeightJobSize=100\nPriorityWeightAge=50\n\
             PriorityWeightTRES=CPU=2,GRES/gpu=3.5\nPriorityFavorSmall=YES\nPriorityMaxAge=1-0\n\
             DefMemPerCPU=2000\nJobRequeue=0\nAuthInfo=socket=/x,cred_expire=30\n\
             DependencyParameters=kill_invalid_depend\nSchedulerType=sched/builtin\n",
        );
        let p = sched_params(&c, &SchedParams::default());
        assert_eq!(
            (
                p.sched_interval,
                p.bf_interval,
                p.bf_window,
                p.bf_resolution,
                p.bf_max_job_test
            ),
            (10, 20, 3600, 30, 7)
        );
        assert_eq!(p.def_mem_per_cpu, Some(2000));
        assert!(!p.job_requeue && p.kill_invalid_depend);
        assert_eq!(p.cred_expire, 30);
        let PriorityConfig::Multifactor(m) = &p.priority else {
            panic!("multifactor expected")
        };
        assert_eq!(m.weight_job_size, 100);
        assert_eq!(m.weight_age, 0, "no slurmdbd: age ignored");
        assert_eq!((m.weight_tres_cpu, m.weight_tres_gpu), (2.0, 3.5));
        assert!(m.favor_small);
        assert_eq!(m.max_age, 86400);
        assert_eq!(policy_name(&c), "fifo");
        let d = sched_params(&SlurmConf::default(), &SchedParams::default());
        assert_eq!(d, SchedParams::default());
    }

    #[test]
    fn partition_qos_billing_weights_and_usage_reset_are_read() {
        let (c, w) = parse(
            "SelectType=select/cons_tres\nPriorityType=priority/multifactor\n\
             PriorityUsageResetPeriod=WEEKLY\nNodeName=n1 CPUs=4 RealMemory=1000\n\
             PartitionName=DEFAULT TRESBillingWeights=CPU=1,GRES/gpu=8\n\
             PartitionName=p Nodes=n1 QOS=part_p\nPartitionName=q Nodes=n1\n",
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.partitions[0].qos.as_deref(), Some("part_p"));
        assert_eq!(c.partitions[1].qos, None);
        for p in &c.partitions {
            assert_eq!(p.tres_billing_weights.as_deref(), Some("CPU=1,GRES/gpu=8"));
        }
        let PriorityConfig::Multifactor(m) = sched_params(&c, &SchedParams::default()).priority
        else {
            panic!("multifactor expected")
        };
        assert_eq!(m.usage_reset, gresim_sched::fairshare::UsageReset::Weekly);
    }

    #[test]
    fn include_is_followed_relative_to_the_file() {
        let dir = std::env::temp_dir().join(format!("gresim-inc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("nodes.conf"),
            "NodeName=n[1-2] RealMemory=10 Bogus=1\n",
        )
        .unwrap();
        let main = dir.join("slurm.conf");
        let (c, w) =
            parse_slurm_conf(&main, "SelectType=select/cons_tres\ninclude nodes.conf\n").unwrap();
        assert_eq!(c.nodes[0].names, ["n1", "n2"]);
        assert_eq!(w.len(), 1);
        assert!(
            w[0].to_string()
                .ends_with("nodes.conf:1: unknown node key 'Bogus' (ignored)"),
            "{}",
            w[0]
        );
        let e = parse_slurm_conf(&main, "Include missing.conf\n").unwrap_err();
        assert_eq!(e.line, Some((1, 0)));
        // A file including itself stops at the depth limit.
        std::fs::write(dir.join("loop.conf"), "Include loop.conf\n").unwrap();
        let e = parse_slurm_conf(&main, "Include loop.conf\n").unwrap_err();
        assert!(e.msg.contains("nested"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn gpu_models_from_type_names() {
        let name = |t: &str| {
            let (m, p, k) = model_for_type(t);
            (catalog::model(m).name, p.map(|p| p.name), k)
        };
        assert_eq!(name("a100"), ("A100-SXM4-80GB", None, true));
        assert_eq!(name("a100_40gb"), ("A100-SXM4-40GB", None, true));
        assert_eq!(
            name("a100_3g.20gb"),
            ("A100-SXM4-40GB", Some("3g.20gb"), true)
        );
        assert_eq!(
            name("a100_1g.10gb"),
            ("A100-SXM4-80GB", Some("1g.10gb"), true)
        );
        assert_eq!(name("1g.10gb"), ("A100-SXM4-80GB", Some("1g.10gb"), true));
        assert_eq!(name("1g.5gb"), ("A100-SXM4-40GB", Some("1g.5gb"), true));
        assert_eq!(name("h100"), ("H100-SXM5-80GB", None, true));
        assert_eq!(
            name("nvidia_h100_80gb_hbm3"),
            ("H100-SXM5-80GB", None, true)
        );
        assert_eq!(name("h200"), ("H200-141GB", None, true));
        assert_eq!(name("v100"), ("V100-32GB", None, true));
        assert_eq!(name("l40s"), ("L40S", None, true));
        assert_eq!(name("t4"), ("T4", None, true));
        assert_eq!(name("mi250x"), ("A100-SXM4-80GB", None, false));
        assert_eq!(name("gpu"), ("A100-SXM4-80GB", None, false));
    }

    #[test]
    fn sockets_from_cores() {
        assert_eq!(socket_of_cores(&[(0, 15)], 16, 2), Some(0));
        assert_eq!(socket_of_cores(&[(16, 31)], 16, 2), Some(1));
        assert_eq!(socket_of_cores(&[(0, 31)], 16, 2), None);
        assert_eq!(socket_of_cores(&[(0, 3), (32, 32)], 16, 4), Some(0));
    }
}
