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
mod tests {
    use super::*;

    fn cluster() -> Cluster {
        let (conf, _) = crate::slurmconf::parse_slurm_conf(
            Path::new("slurm.conf"),
            "NodeName=n[1-6] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n",
        )
        .unwrap();
        crate::slurmconf::build_cluster(&conf, &Default::default(), &mut Vec::new()).unwrap()
    }

    fn err(text: &str) -> String {
        parse(
            Path::new("topology.conf"),
            text,
            &cluster(),
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string()
    }

    #[test]
    fn a_two_level_tree() {
        let mut w = Vec::new();
        let t = parse(
            Path::new("topology.conf"),
            "# leaves\nSwitchName=s1 Nodes=n[1-3] LinkSpeed=100\nSwitchName=s2 Nodes=n[4-6]\nSwitchName=top Switches=s[1-2]\n",
            &cluster(),
            &mut w,
        )
        .unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(t.switches.len(), 3);
        assert_eq!(t.switches[2].level, 1);
        assert_eq!(t.switches[0].link_speed, 100);
        assert_eq!(t.leaf_of(4), Some(1));
    }

    #[test]
    fn bad_input_names_the_line() {
        let e = err("SwitchName=s1 Nodes=n[1-3]\nSwitchName=s2 Nodes=n[4-7]\n");
        assert!(
            e.starts_with("topology.conf:2: ") && e.contains("'n7' is not in the cluster"),
            "{e}"
        );
        let e =
            err("SwitchName=s1 Nodes=n[1-6]\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n");
        assert!(
            e.starts_with("topology.conf:2: ") && e.contains("not a tree"),
            "{e}"
        );
        let e = err("SwitchName=s1 Nodes=n[1-6]\nSwitchName=t Switches=s1,s9\n");
        assert!(
            e.starts_with("topology.conf:2: ") && e.contains("invalid child (s9)"),
            "{e}"
        );
        let e = err("SwitchName=s1 Nodes=n1 Switches=s2\n");
        assert!(e.contains("both child switches and nodes"), "{e}");
        let e = err("SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n");
        assert!(
            e.starts_with("topology.conf:2: ") && e.contains("already been defined"),
            "{e}"
        );
        let e = err("SwitchName=s1 Nodes=n1 Speed=3\n");
        assert!(e.contains("unknown key"), "{e}");
    }

    #[test]
    fn a_node_under_two_leaves_is_a_warning_as_in_slurm() {
        let mut w = Vec::new();
        let t = parse(
            Path::new("topology.conf"),
            "SwitchName=s1 Nodes=n[1-4]\nSwitchName=s2 Nodes=n[4-6]\n",
            &cluster(),
            &mut w,
        )
        .unwrap();
        assert_eq!(w.len(), 1);
        assert!(w[0].msg.contains("n4"), "{w:?}");
        assert!(t.holds(0, 3) && t.holds(1, 3));
    }

    fn blocks(text: &str) -> Result<SwitchTree, String> {
        parse(
            Path::new("topology.conf"),
            text,
            &cluster(),
            &mut Vec::new(),
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn blocks_and_block_sizes() {
        let t = blocks("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockName=b3 Nodes=n[5-6]\nBlockSizes=2,8\n")
            .unwrap();
        assert_eq!(
            t.blocks(),
            Some(BlockLevels {
                base_nodes: 2,
                levels: 0b101
            })
        );
        assert_eq!(t.leaves().count(), 3);
        assert_eq!(t.leaf_of(2), Some(1));
        // Without BlockSizes: the first block's size, levels of 1 to 16.
        let t = blocks("BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-6]\n").unwrap();
        assert_eq!(t.blocks(), Some(BlockLevels::default_for(3)));
        // BlockSizes may follow a block's keys on its line, as Slurm's
        // parser allows.
        let t = blocks("BlockName=b1 Nodes=n[1-3] BlockSizes=3,6\nBlockName=b2 Nodes=n[4-6]\n")
            .unwrap();
        assert_eq!(t.blocks().map(|b| b.levels), Some(0b11));
        assert!(check_plugin(&t, TopologyPlugin::Block).is_ok());
        assert!(check_plugin(&t, TopologyPlugin::Tree)
            .unwrap_err()
            .contains("BlockName"));
        // Nodes outside every block: a warning, as in Slurm.
        let mut w = Vec::new();
        parse(
            Path::new("topology.conf"),
            "BlockName=b1 Nodes=n[1-4]\n",
            &cluster(),
            &mut w,
        )
        .unwrap();
        assert!(w.len() == 1 && w[0].msg.contains("n[5-6]"), "{w:?}");
    }

    #[test]
    fn bad_blocks_name_the_line() {
        for (text, line, needle) in [
            (
                "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-7]\n",
                2,
                "'n7' is not in the cluster",
            ),
            (
                "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[3-5]\n",
                2,
                "'n3' is already in block b1",
            ),
            (
                "BlockName=b1 Nodes=n[1-3]\nBlockName=b1 Nodes=n[4-6]\n",
                2,
                "already been defined",
            ),
            (
                "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-5]\n",
                2,
                "fewer than the base block size 3",
            ),
            (
                "BlockName=b1 Nodes=n[1-3]\nBlockSizes=3,9\n",
                2,
                "power-of-two multiple",
            ),
            (
                "BlockSizes=2,x\nBlockName=b1 Nodes=n[1-3]\n",
                1,
                "whole numbers",
            ),
            (
                "BlockSizes=4,2\nBlockName=b1 Nodes=n[1-3]\n",
                1,
                "not larger",
            ),
            (
                "BlockSizes=2\nBlockSizes=2\nBlockName=b1 Nodes=n[1-3]\n",
                2,
                "given twice",
            ),
            ("BlockName=b1\n", 1, "has no nodes"),
            ("BlockName=b1 Nodes=n[1-3] Speed=2\n", 1, "unknown key"),
            (
                "BlockName=b1 Nodes=n[1-3]\nSwitchName=s Nodes=n[4-6]\n",
                2,
                "not both",
            ),
            (
                "SwitchName=s Nodes=n[4-6]\nBlockName=b1 Nodes=n[1-3]\n",
                2,
                "not both",
            ),
            (
                "BlockLevels=0-1\nBlockName=b1 Nodes=n[1-3]\n",
                1,
                "BlockSizes",
            ),
        ] {
            let e = blocks(text).unwrap_err();
            assert!(
                e.starts_with(&format!("topology.conf:{line}: ")) && e.contains(needle),
                "{text:?}: {e}"
            );
        }
        let e = blocks("BlockSizes=2\n").unwrap_err();
        assert!(e.contains("no blocks configured"), "{e}");
    }
}
