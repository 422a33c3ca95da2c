//! slurm.conf's `PartitionName=` lines: the fields as written, DEFAULT
//! merging, and the partitions of the model they are lowered into
//! ([`crate::partition::lower`]).

use gresim_model::cluster::PartitionState;
use gresim_model::slurm_time::Seconds;
use gresim_model::{Node, Partition};

use super::keys::{QUIET_PART_KEYS, UNMODELLED_PART_KEYS};
use super::{boolean, line_err, num, time_opt, PartitionConf, SlurmConf};
use crate::conf_lines::{ConfLine, Warning};
use crate::error::InputError;

#[derive(Debug, Clone, Default)]
pub(super) struct PartRaw {
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
    pub(super) fn or(self, d: &PartRaw) -> PartRaw {
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

pub(super) fn part_fields(
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
                crate::partition::oversubscribe_rows(v)
                    .map_err(|e| line_err(l, &format!("{k}={v}: {e}")))?;
                r.oversubscribe = Some(v.to_ascii_uppercase());
            }
            "preemptmode" => {
                let m: gresim_model::preempt::PreemptModeSpec = v
                    .parse()
                    .map_err(|e: String| line_err(l, &format!("PreemptMode={v}: {e}")))?;
                if m.mode == gresim_model::preempt::PreemptMode::Suspend {
                    w.push(Warning::new(
                        &l.file,
                        l.line,
                        format!("PreemptMode={v}: SUSPEND is modelled only under preempt/partition_prio"),
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

pub(super) fn resolve_partition(
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
    let rows = r
        .oversubscribe
        .as_deref()
        .and_then(|v| crate::partition::oversubscribe_rows(v).ok());
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
        oversubscribe_rows: rows.map_or(1, |(n, _)| n),
        oversubscribe_force: rows.is_some_and(|(_, f)| f),
        oversubscribe: r.oversubscribe.unwrap_or_else(|| "NO".into()),
        qos: r.qos,
        tres_billing_weights: r.tres_billing_weights,
        preempt_mode: r.preempt_mode,
        grace_time: r.grace_time.unwrap_or(0),
    })
}

pub(super) fn build_partitions(
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
            oversubscribe: Some(p.oversubscribe_rows),
            oversubscribe_force: p.oversubscribe_force,
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
