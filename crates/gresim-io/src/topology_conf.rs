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

use std::path::Path;

use gresim_model::hostlist;
use gresim_model::switches::{SwitchDef, SwitchTree, TopologyPlugin};
use gresim_model::Cluster;

use crate::error::InputError;
use crate::slurmconf::{logical_lines, words, ConfLine, Warning};

fn line_err(l: &ConfLine, msg: String) -> InputError {
    InputError::new(&l.file, msg).with_line(l.line, 0)
}

/// The value of slurm.conf's `TopologyPlugin` (Slurm 22.05 names
/// `topology/none`, `topology/tree`, `topology/3d_torus`; `topology/default`
/// is the later name of none).
pub fn plugin(v: &str) -> Result<TopologyPlugin, String> {
    match v.trim() {
        "" | "topology/none" | "topology/default" => Ok(TopologyPlugin::None),
        "topology/tree" => Ok(TopologyPlugin::Tree),
        o => Err(format!(
            "TopologyPlugin={o}: expected topology/tree or topology/none (gresim models those two)"
        )),
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
    let mut defs: Vec<SwitchDef> = Vec::new();
    let mut at: Vec<&ConfLine> = Vec::new();
    for l in &lines {
        let ws = words(l, warnings);
        let Some((k0, name)) = ws.first() else {
            continue;
        };
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
}
