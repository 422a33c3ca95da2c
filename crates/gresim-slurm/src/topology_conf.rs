//! topology.conf, as topology/tree reads it beside slurm.conf
//! (src/plugins/topology/tree/topology_tree.c `_read_topo_file()`,
//! `_parse_switches()`, `_validate_switches()`): one `SwitchName=` line per
//! switch with `Nodes=` (a leaf) or `Switches=` (hostlist expressions), and
//! an optional `LinkSpeed=`.
//!
//! Where Slurm stops (fatal) this is an error naming file:line: a switch
//! defined twice, one with both or neither of `Nodes` and `Switches`, a
//! child that is not a switch, a cycle. Where Slurm only logs an error,
//! gresim is stricter on one point: a node the cluster does not have is an
//! error (Slurm drops it with "Invalid hostnames in switch configuration"),
//! since in a simulation it is almost surely a typing mistake. A node under
//! two leaves is kept on both, with Slurm's warning ("Multiple leaf switches
//! contain nodes"); nodes under no leaf are a warning too.
//!
//! The same file may instead describe topology/block (Slurm 23.11+, beyond
//! 22.05; slurm-24-05-8-1's src/plugins/topology/block/block_record.c
//! `_read_topo_file()`, `block_record_validate()`): `BlockName=NAME
//! Nodes=HOSTLIST` lines, the base blocks in order, and an optional
//! `BlockSizes=a,b,…`. Errors, with file:line: a block defined twice or
//! without nodes, fewer nodes than the base block size, a bad `BlockSizes`,
//! and, stricter than Slurm (which warns, or does not check), unknown nodes
//! and a node in two blocks. A file mixing `SwitchName` and `BlockName`
//! lines is an error, and so is one that does not match the TopologyPlugin
//! ([`check_plugin`]).

use std::path::Path;

use gresim_model::hostlist;
use gresim_model::switches::{BlockDef, BlockLevels, SwitchDef, SwitchTree, TopologyPlugin};
use gresim_model::Cluster;

use crate::conf_lines::{logical_lines, words, ConfLine, Warning};
use crate::error::InputError;

fn line_err(l: &ConfLine, msg: String) -> InputError {
    InputError::new(&l.file, msg).with_line(l.line, 0)
}

/// The value of slurm.conf's `TopologyPlugin` (Slurm 22.05 names
/// `topology/none`, `topology/tree`, `topology/3d_torus`; `topology/default`
/// is the later name of none; `topology/block` is Slurm 23.11's, modelled
/// as an option beyond 22.05).
pub fn plugin(v: &str) -> Result<TopologyPlugin, String> {
    match v.trim() {
        "" | "topology/none" | "topology/default" => Ok(TopologyPlugin::None),
        "topology/tree" => Ok(TopologyPlugin::Tree),
        "topology/block" => Ok(TopologyPlugin::Block),
        o => Err(format!(
            "TopologyPlugin={o}: expected topology/tree, topology/block or topology/none (gresim models those three)"
        )),
    }
}

/// Whether topology.conf's kind suits the plugin: topology/tree reads
/// `SwitchName` lines, topology/block `BlockName` lines (each plugin's
/// parser stops at the other's keys).
pub fn check_plugin(tree: &SwitchTree, plugin: TopologyPlugin) -> Result<(), String> {
    match (plugin, tree.blocks().is_some()) {
        (TopologyPlugin::Tree, true) => Err(
            "topology/tree needs SwitchName= lines in topology.conf, which has BlockName= lines (those are topology/block's)"
                .into(),
        ),
        (TopologyPlugin::Block, false) => Err(
            "topology/block needs BlockName= lines in topology.conf, which has SwitchName= lines (those are topology/tree's)"
                .into(),
        ),
        _ => Ok(()),
    }
}

/// Parses topology.conf text (`path` names it in errors) against the
/// cluster's nodes.
pub fn parse(
    path: &Path,
    text: &str,
    cluster: &Cluster,
    warnings: &mut Vec<Warning>,
) -> Result<SwitchTree, InputError> {
    let lines = logical_lines(path, text, warnings)?;
    let first = lines.iter().find_map(|l| {
        let ws = words(l, &mut Vec::new());
        ws.first().map(|(k, _)| k.to_ascii_lowercase())
    });
    if matches!(
        first.as_deref(),
        Some("blockname" | "blocksizes" | "blocklevels")
    ) {
        return parse_blocks(path, &lines, cluster, warnings);
    }
    let mut defs: Vec<SwitchDef> = Vec::new();
    let mut at: Vec<&ConfLine> = Vec::new();
    for l in &lines {
        let ws = words(l, warnings);
        let Some((k0, name)) = ws.first() else {
            continue;
        };
        if k0.eq_ignore_ascii_case("blockname") || k0.eq_ignore_ascii_case("blocksizes") {
            return Err(line_err(
                l,
                format!("{k0}={name}: a topology.conf holds SwitchName= lines (topology/tree) or BlockName= lines (topology/block), not both"),
            ));
        }
        if !k0.eq_ignore_ascii_case("switchname") {
            return Err(line_err(
                l,
                format!("{k0}={name}: expected a SwitchName= line"),
            ));
        }
        let mut d = SwitchDef {
            name: name.clone(),
            nodes: None,
            switches: None,
            link_speed: 1,
        };
        for (k, v) in &ws[1..] {
            match k.to_ascii_lowercase().as_str() {
                "nodes" => {
                    let hosts = hostlist::expand(v)
                        .map_err(|e| line_err(l, format!("Nodes={v}: bad hostlist: {e}")))?;
                    let mut ids = Vec::with_capacity(hosts.len());
                    for h in hosts {
                        let id = cluster.node_id(&h).ok_or_else(|| {
                            line_err(
                                l,
                                format!(
                                    "switch {name}: node '{h}' is not in the cluster (expected a node of slurm.conf)"
                                ),
                            )
                        })?;
                        ids.push(id);
                    }
                    d.nodes = Some(ids);
                }
                "switches" => {
                    let names = hostlist::expand(v)
                        .map_err(|e| line_err(l, format!("Switches={v}: bad hostlist: {e}")))?;
                    d.switches = Some(names);
                }
                "linkspeed" => {
                    d.link_speed = v.trim().parse().map_err(|_| {
                        line_err(l, format!("LinkSpeed={v}: expected a whole number"))
                    })?;
                }
                _ => {
                    return Err(line_err(
                        l,
                        format!("{k}={v}: unknown key; expected Switches, Nodes or LinkSpeed"),
                    ))
                }
            }
        }
        defs.push(d);
        at.push(l);
    }
    if defs.is_empty() {
        return Err(InputError::new(
            path,
            "no switches configured (expected SwitchName= lines)",
        ));
    }
    let tree =
        SwitchTree::build(&defs, cluster.nodes.len()).map_err(|e| line_err(at[e.index], e.msg))?;
    if !tree.multi_homed.is_empty() {
        warnings.push(Warning::new(
            path,
            0,
            format!(
                "multiple leaf switches contain nodes: {} (kept under each, as Slurm does)",
                hostlist::compress(&cluster.node_names(&tree.multi_homed))
            ),
        ));
    }
    if !tree.unreachable.is_empty() {
        warnings.push(Warning::new(
            path,
            0,
            format!(
                "switches lack access to {} nodes: {}",
                tree.unreachable.len(),
                hostlist::compress(&cluster.node_names(&tree.unreachable))
            ),
        ));
    }
    Ok(tree)
}

/// topology/block's topology.conf: `BlockName=… Nodes=…` lines and
/// `BlockSizes=` (on a line of its own or after a block's keys).
fn parse_blocks(
    path: &Path,
    lines: &[ConfLine],
    cluster: &Cluster,
    warnings: &mut Vec<Warning>,
) -> Result<SwitchTree, InputError> {
    let mut defs: Vec<BlockDef> = Vec::new();
    let mut at: Vec<&ConfLine> = Vec::new();
    let mut sizes: Option<(BlockLevels, &ConfLine)> = None;
    let mut owner: std::collections::BTreeMap<usize, String> = Default::default();
    for l in lines {
        let ws = words(l, warnings);
        let Some((k0, _)) = ws.first() else {
            continue;
        };
        let mut block: Option<BlockDef> = None;
        for (idx, (k, v)) in ws.iter().enumerate() {
            match k.to_ascii_lowercase().as_str() {
                "blockname" if idx == 0 => {
                    block = Some(BlockDef {
                        name: v.trim().to_string(),
                        nodes: Vec::new(),
                    });
                }
                "nodes" if block.is_some() => {
                    let Some(b) = block.as_mut() else { continue };
                    let hosts = hostlist::expand(v)
                        .map_err(|e| line_err(l, format!("Nodes={v}: bad hostlist: {e}")))?;
                    for h in hosts {
                        let id = cluster.node_id(&h).ok_or_else(|| {
                            line_err(
                                l,
                                format!(
                                    "block {}: node '{h}' is not in the cluster (expected a node of slurm.conf)",
                                    b.name
                                ),
                            )
                        })?;
                        match owner.get(&id.idx()) {
                            Some(o) if *o != b.name => {
                                return Err(line_err(
                                    l,
                                    format!(
                                        "block {}: node '{h}' is already in block {o} (a node belongs to one block)",
                                        b.name
                                    ),
                                ))
                            }
                            _ => {
                                owner.insert(id.idx(), b.name.clone());
                            }
                        }
                        b.nodes.push(id);
                    }
                }
                "blocksizes" => {
                    if sizes.is_some() {
                        return Err(line_err(l, "BlockSizes is given twice".into()));
                    }
                    let vals: Vec<u32> = v
                        .split(',')
                        .map(|x| x.trim().parse::<u32>())
                        .collect::<Result<_, _>>()
                        .map_err(|_| {
                            line_err(
                                l,
                                format!("BlockSizes={v}: expected whole numbers separated by commas"),
                            )
                        })?;
                    let b = BlockLevels::from_sizes(&vals)
                        .map_err(|e| line_err(l, format!("BlockSizes={v}: {e}")))?;
                    sizes = Some((b, l));
                }
                "blocklevels" => {
                    return Err(line_err(
                        l,
                        format!("BlockLevels={v}: Slurm 23.11's form is not modelled; give BlockSizes= (24.05 and later)"),
                    ))
                }
                "switchname" => {
                    return Err(line_err(
                        l,
                        format!("SwitchName={v}: a topology.conf holds SwitchName= lines (topology/tree) or BlockName= lines (topology/block), not both"),
                    ))
                }
                _ => {
                    return Err(line_err(
                        l,
                        format!(
                            "{k}={v}: unknown key; expected BlockName with Nodes, or BlockSizes (the line starts with {k0})"
                        ),
                    ))
                }
            }
        }
        if let Some(b) = block {
            if b.nodes.is_empty() {
                return Err(line_err(
                    l,
                    format!("block {} has no nodes (expected Nodes=)", b.name),
                ));
            }
            defs.push(b);
            at.push(l);
        }
    }
    if defs.is_empty() {
        return Err(InputError::new(
            path,
            "no blocks configured (expected BlockName= lines)",
        ));
    }
    let tree = SwitchTree::from_blocks(&defs, sizes.map(|s| s.0), cluster.nodes.len())
        .map_err(|e| line_err(at[e.index.min(at.len() - 1)], e.msg))?;
    if !tree.unreachable.is_empty() {
        warnings.push(Warning::new(
            path,
            0,
            format!(
                "blocks lack access to {} nodes: {}",
                tree.unreachable.len(),
                hostlist::compress(&cluster.node_names(&tree.unreachable))
            ),
        ));
    }
    Ok(tree)
}

/// Reads the file at `path`.
pub fn read(
    path: &Path,
    cluster: &Cluster,
    warnings: &mut Vec<Warning>,
) -> Result<SwitchTree, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read topology.conf: {e}")))?;
    parse(path, &text, cluster, warnings)
}

#[cfg(test)]
mod tests;
