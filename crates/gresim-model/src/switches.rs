//! Slurm's network topology between nodes: the switch tree of
//! topology/tree (topology.conf `SwitchName` with `Nodes` or `Switches`,
//! `LinkSpeed`), as src/plugins/topology/tree/topology_tree.c
//! `_validate_switches()` builds its `switch_record_table`:
//!
//! * a switch with `Nodes` is a leaf (level 0); one with `Switches` sits one
//!   level above its highest child, and holds every node below it;
//! * a switch's `parent` is the last switch naming it among its `Switches`
//!   (`_find_child_switches()`); a switch no other one names keeps 0, the
//!   first switch of the file, as in Slurm's zero-filled table;
//! * `switches_dist` (here [`SwitchTree::dist`]) is the hop count between
//!   two switches through parent/child links (`_check_better_path()`),
//!   [`INFINITE`] between switches of disjoint trees.
//!
//! The same tree gives the fabric model its leaf switches
//! ([`SwitchTree::leaf_of`]) and, when slurm.conf names
//! `TopologyPlugin=topology/tree`, the node choice of select/cons_tres
//! (`gresim_sched::cons_tres`, `_eval_nodes_topo`). docs/topology.md.

use crate::NodeId;

/// Slurm's `INFINITE` distance (no path between two switches).
pub const INFINITE: u32 = u32::MAX;

/// Which topology plugin slurm.conf names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TopologyPlugin {
    /// `topology/none` (the default): node choice ignores the tree.
    #[default]
    None,
    /// `topology/tree` (Slurm 22.05): `_eval_nodes_topo`.
    Tree,
}

/// One switch of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    pub name: String,
    /// 0 for a leaf (a switch with `Nodes`).
    pub level: u16,
    /// Slurm's `parent` (see the module comment).
    pub parent: usize,
    /// `LinkSpeed` (default 1; Slurm only logs it).
    pub link_speed: u32,
    /// The nodes below it, in node-table order.
    pub nodes: Vec<NodeId>,
    /// Its child switches (for a non-leaf), in the order `Switches` names them.
    pub children: Vec<usize>,
}

/// A switch as topology.conf gives it, before the tree is resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchDef {
    pub name: String,
    /// `Nodes=`, resolved to node ids.
    pub nodes: Option<Vec<NodeId>>,
    /// `Switches=`, expanded to names.
    pub switches: Option<Vec<String>>,
    pub link_speed: u32,
}

/// Why a set of [`SwitchDef`]s is not a tree: the index of the offending
/// definition and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeError {
    pub index: usize,
    pub msg: String,
}

/// The resolved switch table.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchTree {
    pub switches: Vec<Switch>,
    /// `switches_dist[i][j]`.
    pub dist: Vec<Vec<u32>>,
    /// The highest level.
    pub levels: u16,
    /// Per switch, a membership bitmap over nodes (words of 64).
    member: Vec<Vec<u64>>,
    /// Per node, the first leaf holding it (`u32::MAX`: none).
    leaf: Vec<u32>,
    /// Nodes under more than one leaf (Slurm warns and keeps them on all).
    pub multi_homed: Vec<NodeId>,
    /// Nodes under no leaf (Slurm warns: "switches lack access").
    pub unreachable: Vec<NodeId>,
}

impl SwitchTree {
    /// Resolves `defs` over a cluster of `node_count` nodes, with Slurm's
    /// checks: a name defined twice, a child that is not a switch (or the
    /// switch itself), a switch without children, and a cycle ("Switch
    /// configuration is not a tree") are errors.
    pub fn build(defs: &[SwitchDef], node_count: usize) -> Result<SwitchTree, TreeError> {
        let n = defs.len();
        let words = node_count.div_ceil(64);
        let mut by_name: std::collections::BTreeMap<&str, usize> = Default::default();
        for (i, d) in defs.iter().enumerate() {
            if by_name.insert(d.name.as_str(), i).is_some() {
                return Err(TreeError {
                    index: i,
                    msg: format!("switch {} has already been defined", d.name),
                });
            }
        }
        let mut level: Vec<Option<u16>> = vec![None; n];
        let mut member: Vec<Vec<u64>> = vec![vec![0; words]; n];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, d) in defs.iter().enumerate() {
            match (&d.nodes, &d.switches) {
                (Some(_), Some(_)) => {
                    return Err(TreeError {
                        index: i,
                        msg: format!("switch {} has both child switches and nodes", d.name),
                    })
                }
                (None, None) => {
                    return Err(TreeError {
                        index: i,
                        msg: format!("switch {} has neither child switches nor nodes", d.name),
                    })
                }
                (Some(nodes), None) => {
                    level[i] = Some(0);
                    for id in nodes {
                        if id.idx() < node_count {
                            member[i][id.idx() / 64] |= 1 << (id.idx() % 64);
                        }
                    }
                }
                (None, Some(sw)) => {
                    for c in sw {
                        match by_name.get(c.as_str()) {
                            Some(&j) if j != i => children[i].push(j),
                            _ => {
                                return Err(TreeError {
                                    index: i,
                                    msg: format!(
                                    "switch {} has an invalid child ({c}): no switch of that name",
                                    d.name
                                ),
                                })
                            }
                        }
                    }
                }
            }
        }
        // Levels bottom-up, one round per depth; a round that resolves
        // nothing means a cycle (Slurm gives up after 20 rounds).
        loop {
            let mut progress = false;
            let mut pending = None;
            for i in 0..n {
                if level[i].is_some() {
                    continue;
                }
                if children[i].iter().all(|&c| level[c].is_some()) {
                    let l = children[i]
                        .iter()
                        .filter_map(|&c| level[c])
                        .max()
                        .unwrap_or(0)
                        + 1;
                    level[i] = Some(l);
                    for c in children[i].clone() {
                        let below = member[c].clone();
                        for (d, b) in member[i].iter_mut().zip(below) {
                            *d |= b;
                        }
                    }
                    progress = true;
                } else if pending.is_none() {
                    pending = Some(i);
                }
            }
            match pending {
                None => break,
                Some(i) if !progress => {
                    return Err(TreeError {
                        index: i,
                        msg: format!(
                            "switch configuration is not a tree: {} is in a loop of switches or above one",
                            defs[i].name
                        ),
                    })
                }
                Some(_) => {}
            }
        }
        let mut parent = vec![0usize; n];
        for (i, ch) in children.iter().enumerate() {
            for &c in ch {
                parent[c] = i;
            }
        }
        // switches_dist: 1 between a switch and each child, then shortest paths.
        let mut dist = vec![vec![INFINITE; n]; n];
        for (i, ch) in children.iter().enumerate() {
            dist[i][i] = 0;
            for &c in ch {
                dist[i][c] = 1;
                dist[c][i] = 1;
            }
        }
        for k in 0..n {
            for a in 0..n {
                for b in 0..n {
                    let t = if dist[a][k] == INFINITE || dist[k][b] == INFINITE {
                        INFINITE
                    } else {
                        dist[a][k] + dist[k][b]
                    };
                    if dist[a][b] > t {
                        dist[a][b] = t;
                    }
                }
            }
        }
        let mut leaf = vec![u32::MAX; node_count];
        let mut multi_homed = Vec::new();
        for i in 0..n {
            if level[i] != Some(0) {
                continue;
            }
            for v in 0..node_count {
                if member[i][v / 64] & (1 << (v % 64)) != 0 {
                    if leaf[v] == u32::MAX {
                        leaf[v] = i as u32;
                    } else {
                        multi_homed.push(NodeId::from_idx(v));
                    }
                }
            }
        }
        multi_homed.sort_unstable();
        multi_homed.dedup();
        let unreachable = (0..node_count)
            .filter(|&v| leaf[v] == u32::MAX)
            .map(NodeId::from_idx)
            .collect();
        let switches: Vec<Switch> = defs
            .iter()
            .enumerate()
            .map(|(i, d)| Switch {
                name: d.name.clone(),
                level: level[i].unwrap_or(0),
                parent: parent[i],
                link_speed: d.link_speed,
                nodes: (0..node_count)
                    .filter(|&v| member[i][v / 64] & (1 << (v % 64)) != 0)
                    .map(NodeId::from_idx)
                    .collect(),
                children: children[i].clone(),
            })
            .collect();
        let levels = switches.iter().map(|s| s.level).max().unwrap_or(0);
        Ok(SwitchTree {
            switches,
            dist,
            levels,
            member,
            leaf,
            multi_homed,
            unreachable,
        })
    }

    /// Whether switch `s` holds node `v` (a node-table index).
    #[inline]
    pub fn holds(&self, s: usize, v: usize) -> bool {
        self.member[s]
            .get(v / 64)
            .is_some_and(|w| w & (1 << (v % 64)) != 0)
    }

    /// The first leaf switch holding node `v`.
    pub fn leaf_of(&self, v: usize) -> Option<usize> {
        self.leaf
            .get(v)
            .copied()
            .filter(|&l| l != u32::MAX)
            .map(|l| l as usize)
    }

    /// The leaf switches, in table order.
    pub fn leaves(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.switches.len()).filter(|&i| self.switches[i].level == 0)
    }

    /// How many leaf switches hold at least one of `nodes` (Slurm's
    /// `leaf_switch_count` at the end of `_eval_nodes_topo`).
    pub fn leaf_count(&self, nodes: impl Iterator<Item = NodeId> + Clone) -> u32 {
        self.leaves()
            .filter(|&l| nodes.clone().any(|v| self.holds(l, v.idx())))
            .count() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, nodes: Option<&[usize]>, sw: Option<&[&str]>) -> SwitchDef {
        SwitchDef {
            name: name.into(),
            nodes: nodes.map(|v| v.iter().map(|&i| NodeId::from_idx(i)).collect()),
            switches: sw.map(|v| v.iter().map(|s| s.to_string()).collect()),
            link_speed: 1,
        }
    }

    #[test]
    fn two_levels_with_slurms_parent_and_distances() {
        let t = SwitchTree::build(
            &[
                def("s1", Some(&[0, 1, 2]), None),
                def("s2", Some(&[3, 4]), None),
                def("s3", Some(&[5, 6, 7]), None),
                def("s0", None, Some(&["s1", "s2", "s3"])),
            ],
            8,
        )
        .unwrap();
        assert_eq!(t.levels, 1);
        assert_eq!(t.switches[3].level, 1);
        assert_eq!(t.switches[3].nodes.len(), 8);
        assert_eq!(t.switches[1].parent, 3);
        // The root keeps Slurm's zero-filled parent: the first switch.
        assert_eq!(t.switches[3].parent, 0);
        assert_eq!(t.dist[0][1], 2);
        assert_eq!(t.dist[0][3], 1);
        assert_eq!(t.leaf_of(4), Some(1));
        let ids = [NodeId::from_idx(2), NodeId::from_idx(3)];
        assert_eq!(t.leaf_count(ids.iter().copied()), 2);
        assert!(t.multi_homed.is_empty() && t.unreachable.is_empty());
    }

    #[test]
    fn loops_unknown_children_and_duplicates_are_errors() {
        let e = SwitchTree::build(
            &[
                def("a", None, Some(&["b"])),
                def("b", None, Some(&["a"])),
                def("l", Some(&[0]), None),
            ],
            1,
        )
        .unwrap_err();
        assert!(e.msg.contains("not a tree"), "{e:?}");
        let e = SwitchTree::build(&[def("a", None, Some(&["zz"]))], 1).unwrap_err();
        assert!(e.msg.contains("invalid child (zz)"), "{e:?}");
        let e = SwitchTree::build(&[def("a", None, Some(&["a"]))], 1).unwrap_err();
        assert!(e.msg.contains("invalid child (a)"), "{e:?}");
        let e = SwitchTree::build(&[def("a", Some(&[0]), None), def("a", Some(&[0]), None)], 1)
            .unwrap_err();
        assert_eq!(e.index, 1);
    }

    #[test]
    fn multi_homed_and_unreachable_nodes_are_reported() {
        let t = SwitchTree::build(
            &[def("l1", Some(&[0, 1]), None), def("l2", Some(&[1]), None)],
            3,
        )
        .unwrap();
        assert_eq!(t.multi_homed, vec![NodeId::from_idx(1)]);
        assert_eq!(t.unreachable, vec![NodeId::from_idx(2)]);
        assert!(t.holds(1, 1) && t.holds(0, 1));
        assert_eq!(t.leaf_of(1), Some(0));
    }
}
