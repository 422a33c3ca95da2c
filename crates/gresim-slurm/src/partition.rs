//! Partitions lowered into the model's [`Partition`] by one function, for a
//! scenario's `partitions` (JSON, gresim-io's `build.rs`) and slurm.conf's
//! `PartitionName=` lines ([`crate::slurmconf`]) alike. Each format reads and
//! checks its own values first (and names its own JSON path or file:line in
//! an error); [`lower`] then resolves the member nodes and fills in Slurm's
//! defaults, and [`default_partition`] is the partition a cluster without
//! one gets.

use std::collections::BTreeMap;

use gresim_model::cluster::{Node, Partition, PartitionState};
use gresim_model::preempt::PreemptMode;
use gresim_model::slurm_time::Seconds;
use gresim_model::{hostlist, NodeId};

/// One partition as an input describes it, its values already read.
#[derive(Debug, Clone, Default)]
pub struct PartitionFields<'a> {
    pub name: &'a str,
    /// `Nodes=`: a hostlist or `ALL` (any case); `None` when the input does
    /// not say (see [`lower`]'s `absent_is_all`).
    pub nodes: Option<&'a str>,
    pub default: bool,
    pub max_time: Option<Seconds>,
    pub default_time: Option<Seconds>,
    /// `PriorityTier`, `PriorityJobFactor`, `MinNodes` (Slurm's defaults when `None`).
    pub priority_tier: Option<u16>,
    pub priority_job_factor: Option<u16>,
    pub min_nodes: Option<u32>,
    pub max_nodes: Option<u32>,
    pub state: PartitionState,
    pub preempt_mode: Option<PreemptMode>,
    pub grace_time: Option<u64>,
    /// `OverSubscribe=FORCE:N`'s or `YES:N`'s N ([`oversubscribe_rows`]);
    /// `None` is 1, 0 is `EXCLUSIVE` (Slurm's `max_share` 0).
    pub oversubscribe: Option<u16>,
    /// `OverSubscribe=FORCE[:N]` (every job may share), not `YES:N`.
    pub oversubscribe_force: bool,
}

/// Why a partition's nodes cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MembersError {
    /// `Nodes=` is not a hostlist (the hostlist parser's message).
    Hostlist(String),
    /// A node that no node definition names.
    UnknownNode(String),
}

/// The node table by name, for [`lower`].
pub struct NodeIndex<'a> {
    by_name: BTreeMap<&'a str, NodeId>,
    len: usize,
}

impl<'a> NodeIndex<'a> {
    pub fn new(nodes: &'a [Node]) -> Self {
        NodeIndex {
            by_name: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.as_str(), NodeId::from_idx(i)))
                .collect(),
            len: nodes.len(),
        }
    }

    fn all(&self) -> Vec<NodeId> {
        (0..self.len).map(NodeId::from_idx).collect()
    }
}

/// The partition `f` describes: its members in node-table order (no node
/// twice), and Slurm's defaults for what it leaves out. Without `Nodes=`
/// a partition has every node when `absent_is_all` (a scenario's
/// partition), none otherwise (slurm.conf).
pub fn lower(
    f: &PartitionFields<'_>,
    nodes: &NodeIndex<'_>,
    absent_is_all: bool,
) -> Result<Partition, MembersError> {
    let mut members = match f.nodes {
        None if absent_is_all => nodes.all(),
        None => Vec::new(),
        Some(h) if h.eq_ignore_ascii_case("ALL") => nodes.all(),
        Some(h) => hostlist::expand(h)
            .map_err(|e| MembersError::Hostlist(e.to_string()))?
            .iter()
            .map(|n| {
                nodes
                    .by_name
                    .get(n.as_str())
                    .copied()
                    .ok_or_else(|| MembersError::UnknownNode(n.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    members.sort();
    members.dedup();
    let mut p = Partition::new(f.name, members);
    p.default = f.default;
    p.max_time = f.max_time;
    p.default_time = f.default_time;
    p.priority_tier = f.priority_tier.unwrap_or(p.priority_tier);
    p.priority_job_factor = f.priority_job_factor.unwrap_or(p.priority_job_factor);
    p.min_nodes = f.min_nodes.unwrap_or(p.min_nodes);
    p.max_nodes = f.max_nodes;
    p.state = f.state;
    p.preempt_mode = f.preempt_mode;
    p.grace_time = f.grace_time.unwrap_or(p.grace_time);
    match f.oversubscribe {
        Some(0) => p.exclusive = true,
        Some(n) => {
            p.oversubscribe = n;
            p.force = f.oversubscribe_force;
        }
        None => {}
    }
    Ok(p)
}

/// The partition of a cluster that defines none: `main`, the default, with
/// every node.
pub fn default_partition(nodes: &NodeIndex<'_>) -> Partition {
    let mut p = Partition::new("main", nodes.all());
    p.default = true;
    p
}

/// The largest N of `OverSubscribe=FORCE:N` (read_config.c keeps N in the
/// low 15 bits of `max_share`, beside its `SHARED_FORCE` flag).
pub const MAX_OVERSUBSCRIBE: u16 = 0x7fff;

/// An `OverSubscribe=` value (case-insensitive): how many jobs may share a
/// core (Slurm's `num_rows`), and whether every job of the partition may
/// (`FORCE`) or only one that asks with `--oversubscribe` (`YES`).
/// `FORCE:N` and `YES:N` give N (`FORCE` and `YES` alone 4, as in
/// read_config.c): jobs that share cores run at once, or take turns with
/// PreemptMode GANG (docs/preemption.md, "Gang time-slicing"); `NO` gives 1,
/// `EXCLUSIVE` 0 (whole nodes per job, as Slurm's `max_share` 0). Refused as
/// read_config.c refuses or ignores them: a count below 1 (`FORCE:0`),
/// below 2 for `YES:N`, above [`MAX_OVERSUBSCRIBE`], not a number, or
/// another word.
pub fn oversubscribe_rows(v: &str) -> Result<(u16, bool), String> {
    let up = v.trim().to_ascii_uppercase();
    let count = |n: &str, min: u16| -> Result<u16, String> {
        match n.parse::<u16>() {
            Ok(k) if (min..=MAX_OVERSUBSCRIBE).contains(&k) => Ok(k),
            _ => Err(format!(
                "expected a job count from {min} to {MAX_OVERSUBSCRIBE} after the colon"
            )),
        }
    };
    match up.as_str() {
        "NO" => Ok((1, false)),
        "FORCE" => Ok((4, true)),
        "YES" => Ok((4, false)),
        "EXCLUSIVE" => Ok((0, false)),
        _ => {
            if let Some(n) = up.strip_prefix("FORCE:") {
                Ok((count(n, 1)?, true))
            } else if let Some(n) = up.strip_prefix("YES:") {
                Ok((count(n, 2)?, false))
            } else {
                Err("expected NO, EXCLUSIVE, YES, YES:N, FORCE or FORCE:N".into())
            }
        }
    }
}
