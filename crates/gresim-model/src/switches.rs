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
//!
//! topology/block (Slurm 23.11 and later; gresim follows slurm-24-05-8-1's
//! src/plugins/topology/block/block_record.c, a named option beyond 22.05)
//! describes the network as base blocks (`BlockName=… Nodes=…`) that
//! aggregate, by their order in the file, into higher-level blocks of 2, 4,
//! 8 … base blocks (`BlockSizes`). [`SwitchTree::from_blocks`] keeps them as
//! leaves without parents, so the fabric model and [`SwitchTree::leaf_count`]
//! read them as they read leaf switches; [`SwitchTree::blocks`] holds the
//! levels, which the node choice (`_eval_nodes_block`) reads.

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
    /// `topology/block` (Slurm 23.11+, beyond 22.05): `_eval_nodes_block`.
    Block,
}

/// Most block levels (Slurm's `block_levels` bitmap has 16 bits).
pub const MAX_BLOCK_LEVELS: u32 = 16;

/// topology/block's block sizes (block_record.c `_read_topo_file()`):
/// the base block's node count and which aggregation levels are enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLevels {
    /// Slurm's `bblock_node_cnt`: the first `BlockSizes` value, else the
    /// node count of the first block.
    pub base_nodes: u32,
    /// Bit k set: blocks of 2^k base blocks are an enforced level
    /// (`block_levels`; without `BlockSizes`, levels 0 to 4).
    pub levels: u16,
}

impl BlockLevels {
    /// The levels without `BlockSizes`: 1, 2, 4, 8 and 16 base blocks of
    /// `base_nodes` nodes.
    pub fn default_for(base_nodes: u32) -> BlockLevels {
        BlockLevels {
            base_nodes,
            levels: 0b1_1111,
        }
    }

    /// `BlockSizes=a,b,…`: the first value is the base block's node count,
    /// each other a power-of-two multiple of it (at most 2^15), larger than
    /// the one before (topology.conf(5); Slurm's parser does not check the
    /// order, gresim refuses a list out of order).
    pub fn from_sizes(sizes: &[u32]) -> Result<BlockLevels, String> {
        let Some(&base) = sizes.first() else {
            return Err("expected at least one size".into());
        };
        if base == 0 {
            return Err("a block size must be positive".into());
        }
        let mut levels = 0u16;
        let mut prev = 0u32;
        for &s in sizes {
            if s == 0 {
                return Err("a block size must be positive".into());
            }
            if s <= prev {
                return Err(format!(
                    "{s} is not larger than the size before it ({prev})"
                ));
            }
            let ratio = s / base;
            if s % base != 0 || !ratio.is_power_of_two() {
                return Err(format!(
                    "{s} is not a power-of-two multiple of the base block size {base}"
                ));
            }
            let level = ratio.trailing_zeros();
            if level >= MAX_BLOCK_LEVELS {
                return Err(format!(
                    "{s} is more than 2^{} base blocks of {base}",
                    MAX_BLOCK_LEVELS - 1
                ));
            }
            levels |= 1 << level;
            prev = s;
        }
        Ok(BlockLevels {
            base_nodes: base,
            levels,
        })
    }

    /// Whether blocks of 2^`level` base blocks are an enforced level.
    pub fn has(&self, level: u32) -> bool {
        level < MAX_BLOCK_LEVELS && self.levels & (1 << level) != 0
    }
}

/// A block as topology.conf gives it (`BlockName=NAME Nodes=HOSTLIST`).
#[derive(Debug, Clone, PartialEq)]
pub struct BlockDef {
    pub name: String,
    /// `Nodes=`, resolved to node ids.
    pub nodes: Vec<NodeId>,
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
    /// topology/block: the switches are the base blocks, in file order, and
    /// these their sizes (`None` for a switch tree).
    pub blocks: Option<BlockLevels>,
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
            blocks: None,
        })
    }

    /// topology/block's base blocks (block_record.c
    /// `block_record_validate()`), each a leaf without parent. Errors, with
    /// the index of the offending block: a name given twice, a block without
    /// nodes, fewer nodes than the base block size (Slurm: "children count
    /// lower than bblock_node_cnt"), and, stricter than Slurm, which does not
    /// check it, a node in two blocks. `levels` is `BlockSizes`; without it
    /// the first block's node count is the base size, with levels of 1 to 16
    /// base blocks.
    pub fn from_blocks(
        defs: &[BlockDef],
        levels: Option<BlockLevels>,
        node_count: usize,
    ) -> Result<SwitchTree, TreeError> {
        let mut owner: Vec<Option<usize>> = vec![None; node_count];
        let mut by_name: std::collections::BTreeMap<&str, usize> = Default::default();
        for (i, d) in defs.iter().enumerate() {
            if by_name.insert(d.name.as_str(), i).is_some() {
                return Err(TreeError {
                    index: i,
                    msg: format!("block {} has already been defined", d.name),
                });
            }
            if d.nodes.is_empty() {
                return Err(TreeError {
                    index: i,
                    msg: format!("block {} has no nodes", d.name),
                });
            }
            for id in &d.nodes {
                let Some(o) = owner.get_mut(id.idx()) else {
                    continue;
                };
                match *o {
                    Some(j) if j != i => {
                        return Err(TreeError {
                            index: i,
                            msg: format!(
                                "block {}: a node (index {}) is already in block {}; a node belongs to one block",
                                d.name,
                                id.idx(),
                                defs[j].name
                            ),
                        })
                    }
                    _ => *o = Some(i),
                }
            }
        }
        let Some(first) = defs.first() else {
            return Err(TreeError {
                index: 0,
                msg: "no blocks configured".into(),
            });
        };
        let count = |d: &BlockDef| {
            let mut v: Vec<usize> = d.nodes.iter().map(|n| n.idx()).collect();
            v.sort_unstable();
            v.dedup();
            v.len() as u32
        };
        let levels = levels.unwrap_or_else(|| BlockLevels::default_for(count(first)));
        for (i, d) in defs.iter().enumerate() {
            if count(d) < levels.base_nodes {
                return Err(TreeError {
                    index: i,
                    msg: format!(
                        "block {} has {} nodes, fewer than the base block size {}",
                        d.name,
                        count(d),
                        levels.base_nodes
                    ),
                });
            }
        }
        let sw: Vec<SwitchDef> = defs
            .iter()
            .map(|d| SwitchDef {
                name: d.name.clone(),
                nodes: Some(d.nodes.clone()),
                switches: None,
                link_speed: 1,
            })
            .collect();
        let mut t = SwitchTree::build(&sw, node_count)?;
        t.blocks = Some(levels);
        Ok(t)
    }

    /// topology/block's sizes, when the switches are base blocks.
    pub fn blocks(&self) -> Option<BlockLevels> {
        self.blocks
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
mod tests;
