//! The dynamic side of the cluster: what is free, what is allocated.
//!
//! [`ClusterState::allocate`] and [`ClusterState::release`] are the only ways
//! to change allocations, and they refuse anything that would over-allocate a
//! core, a MiB of memory or a GPU. Every scheduler goes through them.

use crate::cluster::{Cluster, NodeAdminState, MAX_CORES_PER_NODE};
use crate::fit_index::FitIndex;
use crate::ids::{GpuIndex, NodeId};
use crate::shares::ShareAlloc;

/// A set of core ids on one node (at most [`MAX_CORES_PER_NODE`]).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CoreSet([u64; MAX_CORES_PER_NODE / 64]);

impl CoreSet {
    /// No cores.
    pub const EMPTY: CoreSet = CoreSet([0; MAX_CORES_PER_NODE / 64]);

    /// Cores `0..n`.
    pub fn first(n: u32) -> Self {
        let n = (n as usize).min(MAX_CORES_PER_NODE);
        let mut s = CoreSet::default();
        for (w, word) in s.0.iter_mut().enumerate() {
            let lo = w * 64;
            if n >= lo + 64 {
                *word = u64::MAX;
            } else if n > lo {
                *word = (1u64 << (n - lo)) - 1;
            }
        }
        s
    }

    /// The highest member in `lo..hi`, if any.
    #[inline]
    pub fn highest_in(&self, lo: u32, hi: u32) -> Option<u32> {
        let (lo, hi) = (lo as usize, (hi as usize).min(MAX_CORES_PER_NODE));
        if lo >= hi {
            return None;
        }
        let mut w = (hi - 1) / 64;
        loop {
            let start = (w * 64).max(lo) - w * 64;
            let end = ((w + 1) * 64).min(hi) - w * 64;
            let mask = if end - start == 64 {
                u64::MAX
            } else {
                ((1u64 << (end - start)) - 1) << start
            };
            let bits = self.0[w] & mask;
            if bits != 0 {
                return Some((w * 64 + 63 - bits.leading_zeros() as usize) as u32);
            }
            if w == 0 || w * 64 <= lo {
                return None;
            }
            w -= 1;
        }
    }
    #[inline]
    pub fn contains(&self, c: u32) -> bool {
        let c = c as usize;
        c < MAX_CORES_PER_NODE && self.0[c / 64] & (1 << (c % 64)) != 0
    }
    #[inline]
    pub fn insert(&mut self, c: u32) {
        let c = c as usize;
        if c < MAX_CORES_PER_NODE {
            self.0[c / 64] |= 1 << (c % 64);
        }
    }
    /// The lowest core of the set at or above `c`.
    #[inline]
    pub fn next_from(&self, c: u32) -> Option<u32> {
        let mut w = c as usize / 64;
        let mut bits = *self.0.get(w)? & (!0u64 << (c % 64));
        loop {
            if bits != 0 {
                return Some((w * 64) as u32 + bits.trailing_zeros());
            }
            w += 1;
            bits = *self.0.get(w)?;
        }
    }
    /// Adds the lowest `n` cores of `src` that are not in the set yet (all
    /// of them when fewer), as inserting `src`'s cores in index order until
    /// `n` were new would. Returns how many it added.
    #[inline]
    pub fn add_lowest(&mut self, src: &CoreSet, n: u32) -> u32 {
        let mut left = n;
        for (w, s) in self.0.iter_mut().zip(src.0.iter()) {
            if left == 0 {
                break;
            }
            let mut new = *s & !*w;
            let c = new.count_ones();
            if c <= left {
                *w |= new;
                left -= c;
            } else {
                for _ in 0..left {
                    let low = new & new.wrapping_neg();
                    *w |= low;
                    new ^= low;
                }
                left = 0;
            }
        }
        n - left
    }
    #[inline]
    pub fn remove(&mut self, c: u32) {
        let c = c as usize;
        if c < MAX_CORES_PER_NODE {
            self.0[c / 64] &= !(1 << (c % 64));
        }
    }
    #[inline]
    pub fn count(&self) -> u32 {
        // Empty words skipped: a node's cores usually fill the first word
        // only, and `count_ones` is a dozen instructions without `popcnt`.
        let mut n = 0;
        for &w in &self.0 {
            if w != 0 {
                n += w.count_ones();
            }
        }
        n
    }
    /// Calls `f(word, mask)` for each word overlapping `lo..hi`, with the
    /// mask of the bits of that word inside the range.
    #[inline]
    fn range_words(lo: u32, hi: u32, mut f: impl FnMut(usize, u64)) {
        let (lo, hi) = (lo as usize, (hi as usize).min(MAX_CORES_PER_NODE));
        let mut w = lo / 64;
        while w * 64 < hi {
            let start = (w * 64).max(lo) - w * 64;
            let end = ((w + 1) * 64).min(hi) - w * 64;
            let mask = if end - start == 64 {
                u64::MAX
            } else {
                ((1u64 << (end - start)) - 1) << start
            };
            f(w, mask);
            w += 1;
        }
    }

    /// Members in `lo..hi`.
    #[inline]
    pub fn count_range(&self, lo: u32, hi: u32) -> u32 {
        let mut n = 0;
        Self::range_words(lo, hi, |w, m| n += (self.0[w] & m).count_ones());
        n
    }

    /// Removes every member in `lo..hi`; returns how many there were.
    #[inline]
    pub fn clear_range(&mut self, lo: u32, hi: u32) -> u32 {
        let mut n = 0;
        let words = &mut self.0;
        Self::range_words(lo, hi, |w, m| {
            n += (words[w] & m).count_ones();
            words[w] &= !m;
        });
        n
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
    /// True when the two sets share a core.
    pub fn intersects(&self, other: &CoreSet) -> bool {
        self.0.iter().zip(other.0.iter()).any(|(a, b)| a & b != 0)
    }
    pub fn is_subset(&self, other: &CoreSet) -> bool {
        self.0.iter().zip(other.0.iter()).all(|(a, b)| a & !b == 0)
    }
    pub fn union_with(&mut self, other: &CoreSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a |= b;
        }
    }
    pub fn difference_with(&mut self, other: &CoreSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a &= !b;
        }
    }
    pub fn intersect_with(&mut self, other: &CoreSet) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a &= b;
        }
    }
    /// Cores in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut b = bits;
            std::iter::from_fn(move || {
                if b == 0 {
                    return None;
                }
                let t = b.trailing_zeros();
                b &= b - 1;
                Some(w as u32 * 64 + t)
            })
        })
    }
}

impl std::fmt::Debug for CoreSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Iterates the set bits of a GPU mask, lowest index first.
pub fn gpu_indices(mask: u64) -> impl Iterator<Item = GpuIndex> {
    let mut b = mask;
    std::iter::from_fn(move || {
        if b == 0 {
            return None;
        }
        let t = b.trailing_zeros();
        b &= b - 1;
        Some(t as GpuIndex)
    })
}

/// What one job holds on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAlloc {
    pub node: NodeId,
    pub cores: CoreSet,
    /// CPUs (cores × threads per core) the job holds on the node.
    pub cpus: u32,
    pub mem_mib: u64,
    /// GPU devices, as a bitmask over the node's GRES indices.
    pub gpus: u64,
    /// Tasks placed on this node.
    pub tasks: u32,
    /// gres/shard or gres/mps shares of one GPU (crate::shares); that GPU
    /// is not in `gpus`.
    pub share: Option<ShareAlloc>,
}

impl NodeAlloc {
    pub fn gpu_count(&self) -> u32 {
        self.gpus.count_ones()
    }
}

/// Everything one job holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Allocation {
    /// Per node, in node-table order.
    pub nodes: Vec<NodeAlloc>,
    /// The job holds its nodes exclusively.
    pub exclusive: bool,
    /// How the job counts in the node states of cons_common, on a cluster
    /// where some partition shares cores ([`RowUse::NONE`] elsewhere).
    pub row_use: RowUse,
}

/// How a job's allocation counts in cons_common's node states, on a cluster
/// where some partition shares cores (`OverSubscribe=FORCE` or `YES`), and
/// which nodes those states keep it off. From the 22.05 source (SchedMD/slurm
/// `slurm-22-05-8-1`, src/plugins/select/cons_common/job_test.c, read, not
/// copied): `_get_job_node_req()` makes the job of a `FORCE` partition, or
/// of a `YES` partition that asked for `--oversubscribe`, `NODE_CR_AVAILABLE`,
/// and any other job `NODE_CR_ONE_ROW`; each node's `node_state` counts its
/// ONE_ROW jobs. `_verify_node_state()` keeps an AVAILABLE job off a node
/// with a ONE_ROW job, and a ONE_ROW job off a node where a partition with
/// rows (more than one job per core) other than its own has a job
/// (`_is_node_busy()` with `sharing_only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct RowUse(u8);

impl RowUse {
    /// Not counted: a cluster on which no partition shares cores (or a
    /// resource hold, not a job).
    pub const NONE: RowUse = RowUse(0);
    const TRACKED: u8 = 1;
    const AVAILABLE: u8 = 2;
    const SHARING: u8 = 4;

    /// A job that is `NODE_CR_AVAILABLE` (else `NODE_CR_ONE_ROW`), of a
    /// partition with `sharing` (more than one row) or not.
    pub fn new(available: bool, sharing: bool) -> RowUse {
        let mut b = Self::TRACKED;
        if available {
            b |= Self::AVAILABLE;
        }
        if sharing {
            b |= Self::SHARING;
        }
        RowUse(b)
    }

    #[inline]
    pub fn is_tracked(self) -> bool {
        self.0 & Self::TRACKED != 0
    }

    /// `NODE_CR_AVAILABLE`: the job may share cores in its partition's rows.
    #[inline]
    pub fn available(self) -> bool {
        self.0 & Self::AVAILABLE != 0
    }

    /// The job's partition has rows (more than one job per core).
    #[inline]
    pub fn sharing(self) -> bool {
        self.0 & Self::SHARING != 0
    }

    /// Whether `_verify_node_state()` keeps a job of this kind off a node
    /// in usage `u`. A ONE_ROW job of a partition with rows is kept off no
    /// node here: Slurm keeps it off nodes where *another* partition with
    /// rows has jobs, which gresim does not tell apart from its own
    /// (docs/preemption.md, "Not modelled").
    #[inline]
    pub fn excluded_by(self, u: &NodeUsage) -> bool {
        if !self.is_tracked() {
            return false;
        }
        if self.available() {
            u.one_row > 0
        } else {
            !self.sharing() && u.shared > 0
        }
    }
}

impl Allocation {
    pub fn gpu_count(&self) -> u32 {
        self.nodes.iter().map(NodeAlloc::gpu_count).sum()
    }
    pub fn cpu_count(&self) -> u32 {
        self.nodes.iter().map(|n| n.cpus).sum()
    }
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes.iter().map(|n| n.node)
    }
}

/// The dynamic state of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeUsage {
    pub free_cores: CoreSet,
    pub free_mem: u64,
    pub free_gpus: u64,
    /// Running jobs on the node (saturating).
    pub jobs: u16,
    /// Jobs on the node that are `NODE_CR_ONE_ROW` ([`RowUse`]; counted
    /// only on a cluster where some partition shares cores).
    pub one_row: u16,
    /// Jobs on the node of partitions with rows ([`RowUse::sharing`]).
    pub shared: u16,
    /// Held by an exclusive job.
    pub exclusive: bool,
    pub admin: NodeAdminState,
}

impl NodeUsage {
    #[inline]
    pub fn free_core_count(&self) -> u32 {
        self.free_cores.count()
    }
    #[inline]
    pub fn free_gpu_count(&self) -> u32 {
        self.free_gpus.count_ones()
    }
    /// Slurm's "avail": not DOWN, not DRAIN.
    #[inline]
    pub fn schedulable(&self) -> bool {
        self.admin == NodeAdminState::Up
    }

    /// [`ClusterState::allocate`]'s change to this node: `na`, this node's
    /// part of `alloc`, taken (checked by the caller).
    #[inline]
    pub fn take(&mut self, na: &NodeAlloc, alloc: &Allocation) {
        self.free_cores.difference_with(&na.cores);
        self.free_mem -= na.mem_mib;
        self.free_gpus &= !na.gpus;
        self.jobs = self.jobs.saturating_add(1);
        self.exclusive |= alloc.exclusive;
        let r = alloc.row_use;
        if r.is_tracked() {
            if !r.available() {
                self.one_row = self.one_row.saturating_add(1);
            }
            if r.sharing() {
                self.shared = self.shared.saturating_add(1);
            }
        }
    }

    /// [`ClusterState::release`]'s change to this node: `na`, this node's
    /// part of `alloc`, given back (checked by the caller).
    #[inline]
    pub fn give(&mut self, na: &NodeAlloc, alloc: &Allocation) {
        self.free_cores.union_with(&na.cores);
        self.free_mem += na.mem_mib;
        self.free_gpus |= na.gpus;
        self.jobs = self.jobs.saturating_sub(1);
        if alloc.exclusive {
            self.exclusive = false;
        }
        let r = alloc.row_use;
        if r.is_tracked() {
            if !r.available() {
                self.one_row = self.one_row.saturating_sub(1);
            }
            if r.sharing() {
                self.shared = self.shared.saturating_sub(1);
            }
        }
    }
}

/// Why an allocation was refused. Seeing one is a scheduler bug.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    #[error("node {node}: {what} already allocated or absent")]
    Conflict { node: String, what: &'static str },
    #[error("node {node} is not schedulable")]
    Unavailable { node: String },
    #[error("release of resources that were not allocated on node {node}: {what}")]
    DoubleFree { node: String, what: &'static str },
}

/// Free and allocated resources of every node, plus running totals.
#[derive(Debug)]
pub struct ClusterState {
    nodes: Vec<NodeUsage>,
    alloc_cpus: u64,
    alloc_gpus: u64,
    /// Allocated GPU devices by GRES type id.
    alloc_gpus_by_type: Vec<u64>,
    /// Allocated compute in sevenths of a GPU (SM-weighted).
    alloc_gpu_sevenths: u64,
    /// Shares used per GPU, when some node has gres/shard or gres/mps.
    shares: Option<Box<ShareUse>>,
    /// Nodes not schedulable (DOWN, DRAIN, …): 0 makes "all up" an O(1) question.
    unschedulable: u32,
    /// Nodes by free GPUs, kept up to date with `nodes` by every change below.
    index: FitIndex,
}

/// Shares in use on every GPU of the nodes that configure shared GRES.
#[derive(Debug, Clone)]
struct ShareUse {
    /// Per node, the start of its GPUs in `used` (`u32::MAX`: no shares).
    offset: std::sync::Arc<[u32]>,
    used: Vec<u32>,
}

impl ShareUse {
    fn new(cluster: &Cluster) -> Option<Box<ShareUse>> {
        if !cluster.any_shares() {
            return None;
        }
        let mut offset = Vec::with_capacity(cluster.nodes.len());
        let mut len = 0u32;
        for (i, n) in cluster.nodes.iter().enumerate() {
            if cluster.node_shares(NodeId::from_idx(i)).is_some() {
                offset.push(len);
                len += n.gpus.len() as u32;
            } else {
                offset.push(u32::MAX);
            }
        }
        Some(Box::new(ShareUse {
            offset: offset.into(),
            used: vec![0; len as usize],
        }))
    }

    /// The used-share counters of node `n`'s GPUs (`None` without shares).
    fn range(&self, cluster: &Cluster, n: NodeId) -> Option<std::ops::Range<usize>> {
        let o = *self.offset.get(n.idx())?;
        (o != u32::MAX).then(|| o as usize..o as usize + cluster.node(n).gpus.len())
    }
}

/// A clone is another state: its fit index keeps no change log
/// ([`FitIndex`]). `clone_from` reuses the target's memory (backfill's
/// sweep copies a state each pass).
impl Clone for ClusterState {
    fn clone(&self) -> Self {
        // Destructured here and in `clone_from`, so that a new field cannot
        // be forgotten.
        let ClusterState {
            nodes,
            alloc_cpus,
            alloc_gpus,
            alloc_gpus_by_type,
            alloc_gpu_sevenths,
            shares,
            unschedulable,
            index,
        } = self;
        ClusterState {
            nodes: nodes.clone(),
            alloc_cpus: *alloc_cpus,
            alloc_gpus: *alloc_gpus,
            alloc_gpus_by_type: alloc_gpus_by_type.clone(),
            alloc_gpu_sevenths: *alloc_gpu_sevenths,
            shares: shares.clone(),
            unschedulable: *unschedulable,
            index: index.clone(),
        }
    }

    fn clone_from(&mut self, other: &Self) {
        let ClusterState {
            nodes,
            alloc_cpus,
            alloc_gpus,
            alloc_gpus_by_type,
            alloc_gpu_sevenths,
            shares,
            unschedulable,
            index,
        } = other;
        self.nodes.clone_from(nodes);
        self.alloc_cpus = *alloc_cpus;
        self.alloc_gpus = *alloc_gpus;
        self.alloc_gpus_by_type.clone_from(alloc_gpus_by_type);
        self.alloc_gpu_sevenths = *alloc_gpu_sevenths;
        self.shares.clone_from(shares);
        self.unschedulable = *unschedulable;
        self.index.clone_from(index);
    }
}

impl ClusterState {
    pub fn new(cluster: &Cluster) -> Self {
        let mut nodes: Vec<NodeUsage> = cluster
            .nodes
            .iter()
            .map(|n| NodeUsage {
                free_cores: CoreSet::first(n.cores()),
                free_mem: n.memory_mib,
                free_gpus: full_mask(n.gpus.len()),
                jobs: 0,
                one_row: 0,
                shared: 0,
                exclusive: false,
                admin: n.state,
            })
            .collect();
        if cluster.dynamic_mig().is_some() {
            // Dynamic MIG slots without a device are never free.
            for (i, u) in nodes.iter_mut().enumerate() {
                u.free_gpus &= !cluster.offline_gpus(NodeId::from_idx(i));
            }
        }
        let unschedulable = nodes.iter().filter(|u| !u.schedulable()).count() as u32;
        ClusterState {
            index: FitIndex::new(cluster, &nodes),
            nodes,
            unschedulable,
            alloc_cpus: 0,
            alloc_gpus: 0,
            alloc_gpus_by_type: vec![0; cluster.gpu_types.len()],
            alloc_gpu_sevenths: 0,
            shares: ShareUse::new(cluster),
        }
    }

    /// Shares in use on each GPU of node `id` (empty when the node has no
    /// shared GRES). A GPU with shares in use is not in `free_gpus`.
    pub fn share_used(&self, cluster: &Cluster, id: NodeId) -> &[u32] {
        match &self.shares {
            Some(s) => match s.range(cluster, id) {
                Some(r) => &s.used[r],
                None => &[],
            },
            None => &[],
        }
    }

    /// Why `sa` cannot be taken on `na`'s node now, if it cannot.
    fn share_conflict(
        &self,
        cluster: &Cluster,
        na: &NodeAlloc,
        sa: ShareAlloc,
    ) -> Option<&'static str> {
        let Some(ns) = cluster.node_shares(na.node) else {
            return Some("GPU shares (the node has no gres/shard or gres/mps)");
        };
        let used = self.share_used(cluster, na.node);
        let g = usize::from(sa.gpu);
        let (Some(&u), cap) = (used.get(g), ns.capacity(sa.gpu)) else {
            return Some("GPU shares (no such GPU)");
        };
        let bit = 1u64 << g;
        if na.gpus & bit != 0 {
            return Some("a GPU both whole and as shares");
        }
        if u == 0 && self.nodes[na.node.idx()].free_gpus & bit == 0 {
            return Some("GPU shares on a GPU allocated as gres/gpu");
        }
        if sa.count == 0 || u64::from(u) + u64::from(sa.count) > u64::from(cap) {
            return Some("GPU shares beyond the GPU's count");
        }
        None
    }

    /// Adds (`take`) or removes `sa`'s shares on node `n`; a GPU hosts
    /// shares exactly while it is out of `free_gpus`.
    fn move_share(&mut self, cluster: &Cluster, n: NodeId, sa: ShareAlloc, take: bool) {
        let Some(s) = self.shares.as_mut() else {
            return;
        };
        let Some(r) = s.range(cluster, n) else {
            return;
        };
        let c = &mut s.used[r][usize::from(sa.gpu)];
        let bit = 1u64 << sa.gpu;
        let u = &mut self.nodes[n.idx()];
        if take {
            *c += sa.count;
            u.free_gpus &= !bit;
        } else {
            *c -= sa.count;
            if *c == 0 {
                u.free_gpus |= bit;
            }
        }
        self.index.update(n.idx(), u);
    }

    #[inline]
    pub fn node(&self, id: NodeId) -> &NodeUsage {
        &self.nodes[id.idx()]
    }
    pub fn nodes(&self) -> &[NodeUsage] {
        &self.nodes
    }
    /// The nodes by free GPUs (see [`FitIndex`]).
    #[inline]
    pub fn fit_index(&self) -> &FitIndex {
        &self.index
    }
    pub fn set_admin(&mut self, id: NodeId, s: NodeAdminState) {
        let u = &mut self.nodes[id.idx()];
        let was = u.schedulable();
        u.admin = s;
        match (was, u.schedulable()) {
            (true, false) => self.unschedulable += 1,
            (false, true) => self.unschedulable -= 1,
            _ => {}
        }
        self.index.update(id.idx(), &self.nodes[id.idx()]);
    }
    /// True when every node of the cluster is schedulable (Slurm's "avail").
    pub fn all_schedulable(&self) -> bool {
        self.unschedulable == 0
    }
    pub fn alloc_cpus(&self) -> u64 {
        self.alloc_cpus
    }
    pub fn alloc_gpus(&self) -> u64 {
        self.alloc_gpus
    }
    pub fn alloc_gpus_by_type(&self) -> &[u64] {
        &self.alloc_gpus_by_type
    }
    pub fn alloc_gpu_sevenths(&self) -> u64 {
        self.alloc_gpu_sevenths
    }

    /// Takes the resources of `alloc`, or changes nothing and says why not.
    pub fn allocate(&mut self, cluster: &Cluster, alloc: &Allocation) -> Result<(), AllocError> {
        for na in &alloc.nodes {
            let u = &self.nodes[na.node.idx()];
            let name = || cluster.node(na.node).name.clone();
            if !u.schedulable() {
                return Err(AllocError::Unavailable { node: name() });
            }
            if u.exclusive || (alloc.exclusive && u.jobs > 0) {
                return Err(AllocError::Conflict {
                    node: name(),
                    what: "the whole node",
                });
            }
            if !na.cores.is_subset(&u.free_cores) {
                return Err(AllocError::Conflict {
                    node: name(),
                    what: "a core",
                });
            }
            if na.mem_mib > u.free_mem {
                return Err(AllocError::Conflict {
                    node: name(),
                    what: "memory",
                });
            }
            if na.gpus & !u.free_gpus != 0 {
                return Err(AllocError::Conflict {
                    node: name(),
                    what: "a GPU",
                });
            }
            if let Some(sa) = na.share {
                if let Some(what) = self.share_conflict(cluster, na, sa) {
                    return Err(AllocError::Conflict { node: name(), what });
                }
            }
        }
        for na in &alloc.nodes {
            let node = cluster.node(na.node);
            let u = &mut self.nodes[na.node.idx()];
            u.take(na, alloc);
            self.index.update(na.node.idx(), u);
            self.alloc_cpus += u64::from(na.cpus);
            self.alloc_gpus += u64::from(na.gpu_count());
            for g in gpu_indices(na.gpus) {
                let ty = node.gpus[g as usize].ty;
                self.alloc_gpus_by_type[ty.idx()] += 1;
                self.alloc_gpu_sevenths += u64::from(cluster.gpu_type(ty).compute_sevenths());
            }
        }
        if self.shares.is_some() {
            for na in &alloc.nodes {
                if let Some(sa) = na.share {
                    self.move_share(cluster, na.node, sa, true);
                }
            }
        }
        Ok(())
    }

    /// Gives back the resources of `alloc`.
    pub fn release(&mut self, cluster: &Cluster, alloc: &Allocation) -> Result<(), AllocError> {
        for na in &alloc.nodes {
            let u = &self.nodes[na.node.idx()];
            let name = || cluster.node(na.node).name.clone();
            if na.cores.intersects(&u.free_cores) {
                return Err(AllocError::DoubleFree {
                    node: name(),
                    what: "a core",
                });
            }
            if na.gpus & u.free_gpus != 0 {
                return Err(AllocError::DoubleFree {
                    node: name(),
                    what: "a GPU",
                });
            }
            if u.jobs == 0 || u.free_mem + na.mem_mib > cluster.node(na.node).memory_mib {
                return Err(AllocError::DoubleFree {
                    node: name(),
                    what: "memory",
                });
            }
            if let Some(sa) = na.share {
                let held = self
                    .share_used(cluster, na.node)
                    .get(usize::from(sa.gpu))
                    .copied()
                    .unwrap_or(0);
                if held < sa.count {
                    return Err(AllocError::DoubleFree {
                        node: name(),
                        what: "GPU shares",
                    });
                }
            }
        }
        for na in &alloc.nodes {
            let node = cluster.node(na.node);
            let u = &mut self.nodes[na.node.idx()];
            u.give(na, alloc);
            self.index.update(na.node.idx(), u);
            self.alloc_cpus -= u64::from(na.cpus);
            self.alloc_gpus -= u64::from(na.gpu_count());
            for g in gpu_indices(na.gpus) {
                let ty = node.gpus[g as usize].ty;
                self.alloc_gpus_by_type[ty.idx()] -= 1;
                self.alloc_gpu_sevenths -= u64::from(cluster.gpu_type(ty).compute_sevenths());
            }
        }
        if self.shares.is_some() {
            for na in &alloc.nodes {
                if let Some(sa) = na.share {
                    self.move_share(cluster, na.node, sa, false);
                }
            }
        }
        Ok(())
    }
}

/// Dynamic MIG (crate::mig_dynamic): GPU devices going out of and into service.
impl ClusterState {
    /// Takes the devices `mask` of `node` out of service while their GPU is
    /// repartitioned: afterwards they are neither free nor allocated. Refuses,
    /// changing nothing, if any of them is not free (allocated, or shared).
    pub fn take_gpus_offline(
        &mut self,
        cluster: &Cluster,
        node: NodeId,
        mask: u64,
    ) -> Result<(), AllocError> {
        let u = &mut self.nodes[node.idx()];
        if mask & !u.free_gpus != 0 {
            return Err(AllocError::Conflict {
                node: cluster.node(node).name.clone(),
                what: "a GPU being repartitioned",
            });
        }
        u.free_gpus &= !mask;
        self.index.update(node.idx(), u);
        Ok(())
    }

    /// Puts the devices `mask` of `node` (a repartitioned GPU's new
    /// instances) into service, free. Refuses if any is free already.
    pub fn put_gpus_online(
        &mut self,
        cluster: &Cluster,
        node: NodeId,
        mask: u64,
    ) -> Result<(), AllocError> {
        let u = &mut self.nodes[node.idx()];
        if mask & u.free_gpus != 0 {
            return Err(AllocError::DoubleFree {
                node: cluster.node(node).name.clone(),
                what: "a repartitioned GPU",
            });
        }
        u.free_gpus |= mask;
        self.index.update(node.idx(), u);
        Ok(())
    }
}

/// Gang suspension (docs/preemption.md, "SUSPEND,GANG"): a suspended job
/// lends the cores a higher-tier job runs on, and takes them back when that
/// job ends. Its memory and GPUs stay allocated, as in Slurm's cons_tres.
impl ClusterState {
    /// Frees the allocated `cores` of `node` for another job (a job
    /// suspended by the gang scheduler lends them). Refuses, changing
    /// nothing, if any of them is free.
    pub fn lend_cores(
        &mut self,
        cluster: &Cluster,
        node: NodeId,
        cores: &CoreSet,
    ) -> Result<(), AllocError> {
        let u = &mut self.nodes[node.idx()];
        if cores.intersects(&u.free_cores) {
            return Err(AllocError::DoubleFree {
                node: cluster.node(node).name.clone(),
                what: "a lent core",
            });
        }
        u.free_cores.union_with(cores);
        self.index.update(node.idx(), u);
        let tpc = u64::from(cluster.node(node).threads_per_core.max(1));
        self.alloc_cpus -= u64::from(cores.count()) * tpc;
        Ok(())
    }

    /// Takes back the lent `cores` of `node` (the job that borrowed them
    /// ended). Refuses, changing nothing, if any of them is not free.
    pub fn reclaim_cores(
        &mut self,
        cluster: &Cluster,
        node: NodeId,
        cores: &CoreSet,
    ) -> Result<(), AllocError> {
        let u = &mut self.nodes[node.idx()];
        if !cores.is_subset(&u.free_cores) {
            return Err(AllocError::Conflict {
                node: cluster.node(node).name.clone(),
                what: "a lent core",
            });
        }
        u.free_cores.difference_with(cores);
        self.index.update(node.idx(), u);
        let tpc = u64::from(cluster.node(node).threads_per_core.max(1));
        self.alloc_cpus += u64::from(cores.count()) * tpc;
        Ok(())
    }
}

/// A mask with the lowest `n` bits set.
#[inline]
pub fn full_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

#[cfg(test)]
mod tests;
