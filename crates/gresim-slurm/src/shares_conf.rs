//! Shared GRES (gres/shard, gres/mps) from slurm.conf `Gres=` + gres.conf,
//! resolved to per-GPU counts ([`gresim_model::shares::NodeShares`]); a
//! scenario's GPU groups are resolved by gresim-io with the same
//! [`one_sharing`] and [`apply`].
//!
//! slurm.conf and gres.conf follow Slurm 22.05 (gres_c_s.c): a gres.conf
//! `Name=shard Count=N` line without `File=` spreads N evenly over the
//! node's GPUs (remainder to the last GPUs); lines with `File=` give each
//! named GPU `Count / files`; with no gres.conf line, slurm.conf's
//! `Gres=shard:N` is spread evenly. `Flags=one_sharing|all_sharing` set the
//! sharing mode (mps defaults to one_sharing).

use std::collections::BTreeMap;
use std::path::Path;

use gresim_model::shares::{spread_evenly, NodeShares, ShareKind};
use gresim_model::Cluster;

use crate::conf_lines::Warning;
use crate::error::InputError;
use crate::gresconf::GresConf;
use crate::slurmconf::GresSpec;

/// `one_sharing` from a sharing flag word, or the kind's default.
pub fn one_sharing(kind: ShareKind, word: Option<&str>) -> Result<bool, String> {
    match word.map(str::to_ascii_lowercase).as_deref() {
        None => Ok(kind.default_one_sharing()),
        Some("one_sharing") => Ok(true),
        Some("all_sharing") => Ok(false),
        Some(o) => Err(format!(
            "unknown sharing '{o}'; expected one_sharing or all_sharing"
        )),
    }
}

/// The shared GRES of slurm.conf node `node` with `ngpus` GPU devices.
/// `node_gres` is its `Gres=`, (`file`, `line`) where it was written,
/// `gres_types` slurm.conf's GresTypes. slurmctld schedules what slurm.conf
/// configures: a shared GRES missing from the node's `Gres=` (or from a
/// given GresTypes) is ignored with a warning, whatever gres.conf says.
pub fn conf_node_shares(
    node: &str,
    node_gres: &[GresSpec],
    gres_types: &[String],
    gres: &GresConf,
    ngpus: usize,
    (file, line): (&Path, usize),
    w: &mut Vec<Warning>,
) -> Result<Option<NodeShares>, InputError> {
    let at = |msg: String| InputError::new(file, msg).with_line(line, 0);
    // Once per line: the first node's message stands for the others.
    let warn_once = |w: &mut Vec<Warning>, f: &Path, l: usize, msg: String| {
        let head = msg.split(" (").next().unwrap_or("");
        if !w
            .iter()
            .any(|x| x.file == f && x.line == l && x.msg.starts_with(head))
        {
            w.push(Warning::new(f, l, msg));
        }
    };
    let typed = |k: ShareKind| {
        gres_types.is_empty()
            || gres_types
                .iter()
                .any(|t| t.eq_ignore_ascii_case(k.as_str()))
    };
    let mut conf: Vec<(ShareKind, u64)> = Vec::new();
    for g in node_gres {
        let Some(k) = ShareKind::from_name(&g.name) else {
            continue;
        };
        if typed(k) {
            conf.push((k, g.count));
        } else if line > 0 {
            warn_once(
                w,
                file,
                line,
                format!("GRES '{k}' is not in GresTypes; gres/{k} is ignored"),
            );
        }
    }
    let mut lines: Vec<(ShareKind, &crate::gresconf::GresLine)> = Vec::new();
    for g in gres.lines.iter().filter(|g| g.applies_to(node)) {
        let Some(k) = ShareKind::from_name(&g.name) else {
            continue;
        };
        if conf.iter().any(|c| c.0 == k) {
            lines.push((k, g));
        } else if g.line > 0 {
            warn_once(
                w,
                &g.file,
                g.line,
                format!(
                    "GRES '{k}' is not configured in slurm.conf (Gres=, GresTypes) for the nodes of this line (first: {node}); ignored, as slurmctld schedules only what slurm.conf configures"
                ),
            );
        }
    }
    let mut kinds: Vec<ShareKind> = conf.iter().map(|c| c.0).collect();
    kinds.sort();
    kinds.dedup();
    let kind = match kinds.as_slice() {
        [] => return Ok(None),
        [k] => *k,
        _ => {
            return Err(at(format!(
                "node {node} configures both gres/shard and gres/mps; gresim models one shared GRES per node (Slurm 22.05 links only one to gres/gpu)"
            )))
        }
    };
    if ngpus == 0 {
        return Err(at(format!(
            "node {node}: gres/{kind} needs gres/gpu devices to share (Slurm: \"SHARED specified without any SHARING found\")"
        )));
    }
    // Device files of the node's GPUs, in GRES index order.
    let mut dev_files: Vec<Option<&str>> = Vec::new();
    for g in gres
        .lines
        .iter()
        .filter(|g| g.is_gpu() && g.applies_to(node))
    {
        if !g.files.is_empty() {
            dev_files.extend(g.files.iter().map(|f| Some(f.as_str())));
        } else if let Some(f) = g.multiple_files.first() {
            dev_files.push(Some(f.as_str()));
        } else {
            dev_files.extend((0..g.devices()).map(|_| None));
        }
    }
    dev_files.resize(ngpus, None);
    let mut flags: Option<bool> = None;
    let per_gpu: Vec<u32> = if lines.is_empty() {
        let n: u64 = conf.iter().map(|c| c.1).sum();
        spread_evenly(n, ngpus)
    } else {
        let mut per = vec![0u32; ngpus];
        let no_file: Vec<_> = lines.iter().filter(|(_, g)| g.files.is_empty()).collect();
        if no_file.len() > 1 || (!no_file.is_empty() && no_file.len() != lines.len()) {
            let g = no_file.get(1).map_or(no_file[0].1, |x| x.1);
            return Err(InputError::new(&g.file, format!(
                "node {node}: gres/{kind} lines mix configurations with and without File= (or give several without File=); Slurm refuses this"
            ))
            .with_line(g.line, 0));
        }
        for (_, g) in &lines {
            for f in &g.flags {
                let f = f.to_ascii_lowercase();
                if f == "one_sharing" || f == "all_sharing" {
                    flags = Some(f == "one_sharing");
                }
            }
            let count = g.count.unwrap_or(g.devices().max(1));
            if g.files.is_empty() {
                per = spread_evenly(count, ngpus);
                continue;
            }
            let each = count / g.files.len() as u64;
            for f in &g.files {
                match dev_files.iter().position(|d| *d == Some(f.as_str())) {
                    Some(i) => per[i] = u32::try_from(each).unwrap_or(u32::MAX),
                    None => w.push(Warning::new(
                        &g.file,
                        g.line,
                        format!(
                            "gres/{kind} File={f} matches no gres/gpu device of node {node}; discarded (as Slurm does)"
                        ),
                    )),
                }
            }
        }
        let total: u64 = per.iter().map(|&c| u64::from(c)).sum();
        if let Some(&(_, n)) = conf.iter().find(|c| c.0 == kind) {
            if n != total && line > 0 {
                w.push(Warning::new(
                    file,
                    line,
                    format!("node {node}: Gres= configures {kind}:{n} but gres.conf gives {total}; gresim uses gres.conf"),
                ));
            }
        }
        per
    };
    Ok(Some(NodeShares {
        kind,
        per_gpu,
        one_sharing: flags.unwrap_or(kind.default_one_sharing()),
    }))
}

/// Whether a `--gres` value asks for a shared GRES (`shard`, `mps`): such
/// a job uses a GPU although it requests no `gpu`.
pub fn gres_has_shares(gres: Option<&str>) -> bool {
    gres.is_some_and(|g| {
        g.split(',').any(|t| {
            let t = t.trim();
            let t = t.strip_prefix("gres/").unwrap_or(t);
            ShareKind::from_name(t.split(':').next().unwrap_or("")).is_some()
        })
    })
}

/// Gives each node of `cluster` its shared GRES from `by_name`.
pub fn apply(cluster: &mut Cluster, by_name: &BTreeMap<String, NodeShares>) {
    if by_name.is_empty() {
        return;
    }
    let per: Vec<Option<NodeShares>> = cluster
        .nodes
        .iter()
        .map(|n| by_name.get(&n.name).cloned())
        .collect();
    cluster.set_shares(per);
}
