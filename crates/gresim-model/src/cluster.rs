//! The static description of a cluster: nodes, their GPUs, partitions.
//!
//! Built once from a scenario (or slurm.conf + gres.conf) and never changed
//! during a run; the dynamic side lives in [`crate::state::ClusterState`].
//! The one exception is dynamic MIG ([`crate::mig_dynamic`]): the engine
//! retypes the GRES slots of an idle GPU whose layout a policy changes.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::catalog::{self, GpuModel, MigProfile};
use crate::fabric::Fabric;
use crate::ids::{GpuModelId, GpuTypeId, NodeId, PartId};
use crate::job::Time;
use crate::mig_dynamic::{DynamicMig, MigLayout, SLOTS_PER_GPU};
use crate::slurm_time::Seconds;
use crate::state::RowUse;
use crate::topology::Topology;

/// One GPU device as Slurm's GRES sees it: a whole GPU or one MIG instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuDevice {
    /// The GRES type name's id (`a100`, `a100_3g.40gb`).
    pub ty: GpuTypeId,
    /// The physical GPU model.
    pub model: GpuModelId,
    /// The CPU socket the device is close to (gres.conf `Cores=`); `None`
    /// when unknown, which Slurm treats as close to every socket.
    pub socket: Option<u16>,
    /// Index of the physical GPU on the node. MIG instances of one GPU share it.
    pub phys: u8,
    /// The MIG instance, when this device is one.
    pub mig: Option<MigInstance>,
}

impl GpuDevice {
    /// The memory a program on this device sees, MiB: the MIG instance's
    /// memory, else the whole GPU's.
    pub fn memory_mib(&self) -> u64 {
        match self.mig {
            Some(m) => m.profile.memory_mib,
            None => crate::catalog::model(self.model).memory_mib,
        }
    }
}

/// A MIG GPU instance placed on a physical GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigInstance {
    pub profile: &'static MigProfile,
    /// Start position in memory slices.
    pub start: u8,
}

/// A GRES type name known to the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuType {
    /// The name as jobs request it: `a100`, `h100`, `a100_1g.10gb`.
    pub name: String,
    pub model: GpuModelId,
    /// Set for MIG instance types.
    pub mig: Option<&'static MigProfile>,
}

impl GpuType {
    /// Share of a full GPU's compute this device gives, in sevenths
    /// (7 for a whole GPU, 1 for a `1g` slice). Used for SM-weighted utilization.
    pub fn compute_sevenths(&self) -> u32 {
        self.mig.map_or(7, |p| u32::from(p.compute_slices))
    }

    /// Device memory in MiB.
    pub fn memory_mib(&self) -> u64 {
        self.mig
            .map_or(catalog::model(self.model).memory_mib, |p| p.memory_mib)
    }

    pub fn model(&self) -> &'static GpuModel {
        catalog::model(self.model)
    }
}

/// Administrative node state as configured or set by timed events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum NodeAdminState {
    #[default]
    Up,
    Down,
    Drain,
}

impl NodeAdminState {
    /// The state's word as Slurm and run.json write it: `UP`, `DOWN`, `DRAIN`.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeAdminState::Up => "UP",
            NodeAdminState::Down => "DOWN",
            NodeAdminState::Drain => "DRAIN",
        }
    }
}

/// The one reading of a node state word (any case): `UP` (and `IDLE`, what
/// a node that is up and runs nothing shows), `DOWN` or `DRAIN`. A format
/// with more words (slurm.conf's `FAIL`, `FUTURE`, …; `scontrol update`'s
/// `RESUME`) says what each means before asking this.
impl std::str::FromStr for NodeAdminState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "UP" | "IDLE" => Ok(NodeAdminState::Up),
            "DOWN" => Ok(NodeAdminState::Down),
            "DRAIN" => Ok(NodeAdminState::Drain),
            _ => Err(format!(
                "unknown node state '{s}'; expected UP, DOWN or DRAIN"
            )),
        }
    }
}

/// One node's hardware and configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    pub memory_mib: u64,
    pub features: Vec<String>,
    /// Slurm `Weight`: lower is preferred.
    pub weight: u32,
    /// GPU devices in GRES index order.
    pub gpus: Vec<GpuDevice>,
    /// gres.conf `Links=`: `links[i][j]` is the link count between devices i and j.
    pub gpu_links: Option<Vec<Vec<u8>>>,
    pub state: NodeAdminState,
}

/// The most cores one node may have (the width of [`crate::state::CoreSet`]).
pub const MAX_CORES_PER_NODE: usize = 256;
/// The most GPU devices (whole GPUs plus MIG instances) one node may have.
pub const MAX_GPUS_PER_NODE: usize = 64;

impl Node {
    pub fn cores(&self) -> u32 {
        u32::from(self.sockets) * u32::from(self.cores_per_socket)
    }
    pub fn cpus(&self) -> u32 {
        self.cores() * u32::from(self.threads_per_core)
    }
    /// Socket of core `c`.
    pub fn socket_of_core(&self, c: u32) -> u16 {
        (c / u32::from(self.cores_per_socket.max(1))) as u16
    }
    pub fn has_feature(&self, f: &str) -> bool {
        self.features.iter().any(|x| x == f)
    }
}

/// Partition `State=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionState {
    #[default]
    Up,
    Down,
    Drain,
    Inactive,
}

impl PartitionState {
    /// The state's word as slurm.conf and run.json write it.
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionState::Up => "UP",
            PartitionState::Down => "DOWN",
            PartitionState::Drain => "DRAIN",
            PartitionState::Inactive => "INACTIVE",
        }
    }
}

/// The one reading of a partition `State=` word (any case).
impl std::str::FromStr for PartitionState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_uppercase().as_str() {
            "UP" => Ok(PartitionState::Up),
            "DOWN" => Ok(PartitionState::Down),
            "DRAIN" => Ok(PartitionState::Drain),
            "INACTIVE" => Ok(PartitionState::Inactive),
            _ => Err(format!(
                "unknown partition state '{s}'; expected UP, DOWN, DRAIN or INACTIVE"
            )),
        }
    }
}

/// A Slurm partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    /// Member nodes in node-table order.
    pub nodes: Vec<NodeId>,
    pub default: bool,
    /// `MaxTime`; `None` is UNLIMITED.
    pub max_time: Option<Seconds>,
    /// `DefaultTime`; `None` falls back to MaxTime.
    pub default_time: Option<Seconds>,
    pub priority_tier: u16,
    pub priority_job_factor: u16,
    pub min_nodes: u32,
    /// `MaxNodes`; `None` is UNLIMITED.
    pub max_nodes: Option<u32>,
    pub state: PartitionState,
    /// `PreemptMode` of the partition (preempt/partition_prio); `None`
    /// takes the global one.
    pub preempt_mode: Option<crate::preempt::PreemptMode>,
    /// `GraceTime` in seconds: how long a preempted job of this partition
    /// may run on after SIGTERM (preempt/partition_prio).
    pub grace_time: u64,
    /// `OverSubscribe=FORCE:N`'s or `YES:N`'s N: how many of its jobs may
    /// share a core, taking turns under the gang scheduler (`num_rows` of
    /// cons_common/part_data.c; docs/preemption.md, "Gang time-slicing").
    /// 1 for `NO`, `FORCE:1` and `EXCLUSIVE`.
    pub oversubscribe: u16,
    /// `OverSubscribe=FORCE[:N]`: every job of the partition may share cores
    /// (`NODE_CR_AVAILABLE`), not only those that ask with `--oversubscribe`
    /// as under `YES:N`.
    pub force: bool,
    /// `OverSubscribe=EXCLUSIVE`: every job of the partition takes whole
    /// nodes, as with `--exclusive` (`_resolve_shared_status()` in
    /// node_scheduler.c sets its `whole_node`).
    pub exclusive: bool,
}

impl Partition {
    /// A partition of `nodes` with slurm.conf's defaults: not the default
    /// partition, no time or node limits, PriorityTier and
    /// PriorityJobFactor 1, state UP.
    pub fn new(name: impl Into<String>, nodes: Vec<NodeId>) -> Partition {
        Partition {
            name: name.into(),
            nodes,
            default: false,
            max_time: None,
            default_time: None,
            priority_tier: 1,
            priority_job_factor: 1,
            min_nodes: 0,
            max_nodes: None,
            state: PartitionState::default(),
            preempt_mode: None,
            grace_time: 0,
            oversubscribe: 1,
            force: false,
            exclusive: false,
        }
    }

    /// The time limit a job without `--time` gets.
    pub fn effective_default_time(&self) -> Option<Seconds> {
        self.default_time.or(self.max_time)
    }
}

/// The whole static cluster.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// Nodes sorted by natural name order: Slurm's node-table order.
    pub nodes: Vec<Node>,
    pub partitions: Vec<Partition>,
    pub gpu_types: Vec<GpuType>,
    node_by_name: BTreeMap<String, NodeId>,
    type_by_name: BTreeMap<String, GpuTypeId>,
    /// For each partition, a membership bitmap over nodes.
    part_members: Vec<Vec<bool>>,
    /// Topologies given by the scenario, per node (`None`: derived from the node).
    topologies: Vec<Option<Arc<Topology>>>,
    /// Topologies derived from the nodes' sockets and gres.conf Links, built on first use.
    derived: OnceLock<(Vec<Arc<Topology>>, Vec<u32>)>,
    fabric: Option<Arc<Fabric>>,
    /// The switch tree of topology.conf (crate::switches), and whether
    /// slurm.conf's TopologyPlugin makes node selection use it.
    switches: Option<Arc<crate::switches::SwitchTree>>,
    topology_plugin: crate::switches::TopologyPlugin,
    /// gres/shard or gres/mps per node (crate::shares); empty when no node has any.
    shares: Vec<Option<Arc<crate::shares::NodeShares>>>,
    /// GPUs whose MIG layout may change during a run (docs/mig.md).
    dynamic_mig: Option<Box<DynamicMig>>,
    /// Accounts, users, associations and QOS (`None`: no accounting database).
    accounting: Option<Arc<crate::accounting::Accounting>>,
}

impl Cluster {
    /// Builds the cluster. Nodes are sorted into natural name order; partition
    /// node lists must already use the sorted ids (see [`Cluster::sort_nodes`]).
    pub fn new(nodes: Vec<Node>, partitions: Vec<Partition>, gpu_types: Vec<GpuType>) -> Self {
        let node_by_name = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), NodeId::from_idx(i)))
            .collect();
        let type_by_name = gpu_types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), GpuTypeId::from_idx(i)))
            .collect();
        let part_members = partitions
            .iter()
            .map(|p| {
                let mut m = vec![false; nodes.len()];
                for n in &p.nodes {
                    m[n.idx()] = true;
                }
                m
            })
            .collect();
        Cluster {
            nodes,
            partitions,
            gpu_types,
            node_by_name,
            type_by_name,
            part_members,
            topologies: Vec::new(),
            derived: OnceLock::new(),
            fabric: None,
            switches: None,
            topology_plugin: crate::switches::TopologyPlugin::None,
            shares: Vec::new(),
            dynamic_mig: None,
            accounting: None,
        }
    }

    /// Sets the accounting configuration (slurmdbd's associations and QOS).
    pub fn set_accounting(&mut self, a: Option<crate::accounting::Accounting>) {
        self.accounting = a.map(Arc::new);
    }

    /// The accounting configuration, when the cluster has an accounting database.
    #[inline]
    pub fn accounting(&self) -> Option<&crate::accounting::Accounting> {
        self.accounting.as_deref()
    }

    /// Declares the GPUs whose MIG layout may change during a run. Their
    /// GRES slots must already be in the nodes (see [`crate::mig_dynamic`]).
    pub fn set_dynamic_mig(&mut self, d: DynamicMig) {
        self.dynamic_mig = Some(Box::new(d));
    }

    /// The dynamic-MIG GPUs, their layouts and the changes made so far.
    pub fn dynamic_mig(&self) -> Option<&DynamicMig> {
        self.dynamic_mig.as_deref()
    }

    /// GRES indices of `node` that hold no device now (dynamic MIG slots
    /// that are unconfigured or being reconfigured); 0 on static clusters.
    #[inline]
    pub fn offline_gpus(&self, node: NodeId) -> u64 {
        self.dynamic_mig.as_ref().map_or(0, |d| d.offline(node))
    }

    /// Takes dynamic GPU `gpu` out of service to change its layout to `to`,
    /// which must be legal for its model. Returns the GRES indices that held
    /// devices (the caller takes them out of [`crate::ClusterState`], which
    /// refuses if any is allocated) and when the new layout is ready. Until
    /// [`Cluster::finish_mig_reconfig`], every slot of the GPU is offline.
    pub fn begin_mig_reconfig(
        &mut self,
        gpu: usize,
        to: MigLayout,
        now: Time,
    ) -> Result<(u64, Time), String> {
        let d = self
            .dynamic_mig
            .as_mut()
            .ok_or("the cluster has no dynamic MIG GPUs")?;
        let ready = now + d.reconfig_delay;
        let was_online = d.begin(gpu, to, ready)?;
        let g = &d.gpus[gpu];
        let node = &mut self.nodes[g.node.idx()];
        for i in 0..SLOTS_PER_GPU {
            let dev = &mut node.gpus[usize::from(g.first_slot) + i];
            dev.ty = g.unconfigured_ty;
            dev.mig = None;
        }
        Ok((was_online, ready))
    }

    /// The reconfiguration of `gpu` completes: its slots take the new
    /// layout's devices. Returns the GRES indices now holding a device.
    pub fn finish_mig_reconfig(&mut self, gpu: usize, now: Time) -> Result<u64, String> {
        let d = self
            .dynamic_mig
            .as_mut()
            .ok_or("the cluster has no dynamic MIG GPUs")?;
        let start = now.saturating_sub(d.reconfig_delay);
        d.finish(gpu, start, now)?;
        let g = &d.gpus[gpu];
        let types = g.device_types(&g.layout);
        let node = &mut self.nodes[g.node.idx()];
        for i in 0..SLOTS_PER_GPU {
            let dev = &mut node.gpus[usize::from(g.first_slot) + i];
            match types.get(i) {
                Some(&ty) => {
                    dev.ty = ty;
                    dev.mig = g.layout.0.get(i).copied();
                }
                None => {
                    dev.ty = g.unconfigured_ty;
                    dev.mig = None;
                }
            }
        }
        Ok(g.online_mask())
    }

    /// Sets each node's shared GRES (in node-table order; `None`: none).
    pub fn set_shares(&mut self, per_node: Vec<Option<crate::shares::NodeShares>>) {
        self.shares = if per_node.iter().any(Option::is_some) {
            per_node.into_iter().map(|s| s.map(Arc::new)).collect()
        } else {
            Vec::new()
        };
    }

    /// Node `id`'s shared GRES (gres/shard or gres/mps), if it has one.
    #[inline]
    pub fn node_shares(&self, id: NodeId) -> Option<&crate::shares::NodeShares> {
        self.shares.get(id.idx()).and_then(|s| s.as_deref())
    }

    /// Whether any node configures shared GRES of `kind`.
    pub fn has_shares(&self, kind: crate::shares::ShareKind) -> bool {
        self.shares.iter().flatten().any(|s| s.kind == kind)
    }

    /// Whether any node configures shared GRES at all.
    #[inline]
    pub fn any_shares(&self) -> bool {
        !self.shares.is_empty()
    }

    /// Whether cons_common's node states matter: some partition shares
    /// cores (`OverSubscribe=FORCE` or `YES:N`), so that jobs that may share
    /// and jobs that may not keep off each other's nodes ([`RowUse`]).
    pub fn tracks_rows(&self) -> bool {
        self.partitions
            .iter()
            .any(|p| !p.exclusive && (p.force || p.oversubscribe > 1))
    }

    /// How a job of partition `part` that did (`oversubscribe`) or did not
    /// ask for `--oversubscribe` counts in the node states
    /// (`_get_job_node_req()`); [`RowUse::NONE`] when no partition shares
    /// cores.
    pub fn row_use(&self, part: PartId, oversubscribe: bool) -> RowUse {
        if !self.tracks_rows() {
            return RowUse::NONE;
        }
        let p = self.partition(part);
        if p.exclusive {
            return RowUse::new(false, false);
        }
        let sharing = p.oversubscribe > 1;
        RowUse::new(p.force || (sharing && oversubscribe), sharing)
    }

    /// Sets the topology of each node (in node-table order; `None` keeps the
    /// one derived from the node's sockets and Links).
    pub fn set_topologies(&mut self, per_node: Vec<Option<Arc<Topology>>>) {
        self.topologies = per_node;
    }

    /// Sets the network between nodes.
    pub fn set_fabric(&mut self, fabric: Fabric) {
        self.fabric = Some(Arc::new(fabric));
    }

    /// Sets the switch tree (topology.conf) and the TopologyPlugin.
    pub fn set_switches(
        &mut self,
        tree: Option<crate::switches::SwitchTree>,
        plugin: crate::switches::TopologyPlugin,
    ) {
        self.switches = tree.map(Arc::new);
        self.topology_plugin = plugin;
    }

    /// The switch tree, when topology.conf gave one.
    pub fn switches(&self) -> Option<&crate::switches::SwitchTree> {
        self.switches.as_deref()
    }

    /// The TopologyPlugin slurm.conf names.
    pub fn topology_plugin(&self) -> crate::switches::TopologyPlugin {
        self.topology_plugin
    }

    /// The tree node selection follows: the switch tree when the
    /// TopologyPlugin is topology/tree, else `None` (Slurm's
    /// `switch_record_cnt == 0`).
    #[inline]
    pub fn select_tree(&self) -> Option<&crate::switches::SwitchTree> {
        match self.topology_plugin {
            crate::switches::TopologyPlugin::Tree => {
                self.switches.as_deref().filter(|t| t.blocks.is_none())
            }
            _ => None,
        }
    }

    /// The base blocks node selection follows, with their sizes: when the
    /// TopologyPlugin is topology/block (beyond Slurm 22.05) and
    /// topology.conf gave blocks, else `None`.
    #[inline]
    pub fn select_blocks(
        &self,
    ) -> Option<(&crate::switches::SwitchTree, crate::switches::BlockLevels)> {
        match self.topology_plugin {
            crate::switches::TopologyPlugin::Block => {
                let t = self.switches.as_deref()?;
                Some((t, t.blocks?))
            }
            _ => None,
        }
    }

    /// Whether the scenario described topology or a fabric explicitly.
    pub fn has_explicit_topology(&self) -> bool {
        self.fabric.is_some() || self.topologies.iter().any(Option::is_some)
    }

    /// The network between nodes (the default one when none was given).
    pub fn fabric(&self) -> &Fabric {
        static DEFAULT: OnceLock<Fabric> = OnceLock::new();
        match &self.fabric {
            Some(f) => f,
            None => DEFAULT.get_or_init(Fabric::default),
        }
    }

    /// Node `id`'s topology.
    pub fn topology(&self, id: NodeId) -> &Topology {
        if let Some(Some(t)) = self.topologies.get(id.idx()) {
            return t;
        }
        let (topos, idx) = self.derived.get_or_init(|| self.derive_topologies());
        match idx.get(id.idx()).and_then(|&i| topos.get(i as usize)) {
            Some(t) => t,
            None => {
                static EMPTY: OnceLock<Topology> = OnceLock::new();
                EMPTY.get_or_init(Topology::empty)
            }
        }
    }

    /// The topology each node's own description implies: one host bridge
    /// per socket, each GPU on its own PCIe Gen4 link to its socket (gres.conf
    /// `Cores=`), NVLinks from `Links=`. Nodes that look alike share one.
    fn derive_topologies(&self) -> (Vec<Arc<Topology>>, Vec<u32>) {
        type Key = (u16, Vec<Option<u16>>, Option<Vec<Vec<u8>>>);
        let mut seen: BTreeMap<Key, u32> = BTreeMap::new();
        let mut topos = Vec::new();
        let mut idx = Vec::with_capacity(self.nodes.len());
        for n in &self.nodes {
            // One entry per physical GPU; Links only when there is no MIG.
            let mut socks: Vec<Option<u16>> = Vec::new();
            for d in &n.gpus {
                let p = usize::from(d.phys);
                if socks.len() <= p {
                    socks.resize(p + 1, None);
                }
                socks[p] = d.socket;
            }
            let mig = n.gpus.iter().any(|d| d.mig.is_some());
            let links = if mig { None } else { n.gpu_links.clone() };
            let key = (n.sockets, socks, links);
            let i = match seen.get(&key) {
                Some(&i) => i,
                None => {
                    let t = Topology::from_links(key.0, &key.1, key.2.as_deref(), 4);
                    topos.push(Arc::new(t));
                    let i = topos.len() as u32 - 1;
                    seen.insert(key, i);
                    i
                }
            };
            idx.push(i);
        }
        (topos, idx)
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.idx()]
    }
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_by_name.get(name).copied()
    }
    pub fn partition(&self, id: PartId) -> &Partition {
        &self.partitions[id.idx()]
    }
    pub fn partition_id(&self, name: &str) -> Option<PartId> {
        self.partitions
            .iter()
            .position(|p| p.name == name)
            .map(PartId::from_idx)
    }
    pub fn default_partition(&self) -> Option<PartId> {
        self.partitions
            .iter()
            .position(|p| p.default)
            .map(PartId::from_idx)
    }
    pub fn in_partition(&self, part: PartId, node: NodeId) -> bool {
        self.part_members[part.idx()][node.idx()]
    }
    pub fn gpu_type(&self, id: GpuTypeId) -> &GpuType {
        &self.gpu_types[id.idx()]
    }
    pub fn gpu_type_id(&self, name: &str) -> Option<GpuTypeId> {
        self.type_by_name.get(name).copied()
    }
    pub fn total_gpus(&self) -> u64 {
        self.nodes.iter().map(|n| n.gpus.len() as u64).sum()
    }
    pub fn total_cpus(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.cpus())).sum()
    }
    pub fn node_names<'a>(&'a self, ids: impl IntoIterator<Item = &'a NodeId>) -> Vec<&'a str> {
        ids.into_iter()
            .map(|id| self.nodes[id.idx()].name.as_str())
            .collect()
    }
}
