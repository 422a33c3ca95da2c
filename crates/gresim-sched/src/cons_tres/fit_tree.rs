//! The first-pass choice of `_eval_nodes` without visiting every node: per
//! job shape and partition, a [`Tree`] over the partition's nodes (in index
//! order) keeps the consecutive node sets that [`super::eval_nodes`] would
//! build: where each begins and ends, its key (weight and CPU total), a
//! minimum tree over the sets' keys, and per block of 64 nodes the best fit
//! (fewest CPUs). It is brought up to date from the live state's change log
//! ([`gresim_model::fit_index::FitIndex::changes_since`]): only the nodes
//! that changed since the shape's last selection are evaluated again, and
//! each change costs O(log nodes) (plus, when it splits a set, the shorter
//! side's positions, and a block's 64 when a selection reads it again).
//! docs/performance.md ("What changed in round 2", "Round 16") describes it.
//!
//! One node wanted ([`applies`]): every set is sufficient (one node with a
//! CPU is enough), so `eval_nodes` chooses the first set with the lowest
//! (weight, CPU total), and in it the first node with the fewest available
//! CPUs: the root's answer ([`pick`]). Several nodes ([`applies_many`]):
//! [`pick_nodes`] first lists only the sets large enough to be sufficient
//! ([`Tree::sets_min`]) and takes the one `eval_nodes`' loop would choose
//! first when that is certain and the set completes the job; otherwise it
//! lists every set from the tree and runs `eval_nodes`' loop over them.
//! When either finds nothing, the caller does the full selection
//! (second pass, knapsack), which gives the same answer as without the tree.

use super::{cannot_fit, eval_node, EvalCache, JobCtx, Quick};
use gresim_model::{Cluster, ClusterState, NodeId, PartId};

/// Bits of a set's key that hold its CPU total. A partition with as many
/// CPUs or more gets no tree ([`Tree::fits`]), so the total never reaches
/// the weight's bits. Above them, 24 bits of weight: the node's weight as
/// its rank among the tree's nodes' weights (16 bits: positions are) and
/// the GPU co-location byte, in the order of `eval_node`'s weight; so a key
/// fits 48 bits, and a key with its set's start 64.
const CPU_BITS: u32 = 24;

/// The CPU total's bits of a key.
const CPU_MASK: u64 = (1 << CPU_BITS) - 1;

/// The key of no node or set ([`Tree::keys`]' mark of a node that cannot
/// hold the job): above every set's key.
const NONE: u64 = u64::MAX;

/// A consecutive node set as [`Tree::sets`] lists it: its order key
/// (`weight << CPU_BITS | cpus`, the order of `eval_nodes`' choice among
/// sufficient sets, with the weight ranked as [`CPU_BITS`] says), first and
/// last position. Every position from `start`
/// to `end` holds a usable node of that weight.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Run {
    key: u64,
    start: u16,
    end: u16,
}

impl Run {
    #[inline]
    fn weight(&self) -> u64 {
        self.key >> CPU_BITS
    }
    #[inline]
    fn cpus(&self) -> u64 {
        self.key & CPU_MASK
    }
    /// Its nodes in 16 bits (positions are).
    #[inline]
    fn len(&self) -> u16 {
        self.end - self.start + 1
    }
    #[inline]
    fn nodes(&self) -> u32 {
        u32::from(self.len())
    }
}

/// One shape's tree over one partition: the sets of consecutive usable
/// nodes of one weight, kept as
///
/// * `keys`: per position, its node's key alone (`weight << CPU_BITS |
///   cpus`), or [`NONE`] when the node cannot hold the job (it ends the
///   current set);
/// * `starts` and `gaps`: bitmaps of the positions where a set starts and
///   of those whose node cannot hold the job; a set ends before the next
///   position in either;
/// * `tops`: a minimum tree over positions whose leaf at a set's start is
///   `key << 16 | start` (the set's key with its CPU total), `u64::MAX`
///   elsewhere, so that the root is the first set of the lowest key;
/// * `blocks`: per block of 64 positions, the least `cpus << 16 |
///   position` of its usable nodes ([`fit_leaf`]), so that the minimum over
///   a set's positions is its first node with the fewest CPUs; a block
///   whose nodes changed is marked `stale` and computed again only when a
///   selection needs it ([`Tree::best_fit`]).
///
/// Changing a node changes at most three sets (the one it was in, split,
/// or the two it joins), each a leaf of `tops`, and marks its block stale;
/// the changed leaves' ancestors are then recomputed together, a level at a
/// time, up to those that keep their value ([`settle`]).
pub(super) struct Tree {
    shape: u32,
    part: PartId,
    /// The state position the leaves describe (`None`: not built).
    at: Option<(u64, u64)>,
    /// Where the leaves of `tops` start ([`leaf0`] of their number, a power
    /// of 4, at least the positions).
    leaf0: usize,
    keys: Vec<u64>,
    starts: Vec<u64>,
    gaps: Vec<u64>,
    tops: Vec<u64>,
    blocks: Vec<u32>,
    stale: Vec<u64>,
    /// Per node index, its position in the partition (`u32::MAX`: none).
    pos_of: Vec<u32>,
    /// Per position, the node: every node from the partition's first to
    /// its last, in index order.
    nodes: Vec<NodeId>,
    /// Per position, whether the node is the partition's.
    member: Vec<bool>,
    /// Per position, the rank of its node's weight among the positions'
    /// (the same order).
    rank: Vec<u16>,
    /// The most CPUs of a node at any position.
    max_cpus: u64,
    /// Scratch: positions to evaluate again.
    dirty: Vec<usize>,
    /// Positions whose leaf in `tops` changed since it was last
    /// [`settle`]d.
    tops_dirty: Vec<usize>,
    /// When it was last used (a counter over all trees).
    used: u64,
}

/// Entries of the minimum trees (`Tree::tops`) kept at most over all trees (each tree has
/// about 4/3 of its leaves, a power of 4, 8 bytes each: about 2 MB): one
/// tree per shape in use on 1,000 nodes fits 191 times, on 10,000 nodes 12
/// times.
/// Beyond that the least recently used trees are dropped.
/// (Tests use a small budget, so that dropping trees is exercised.)
const MAX_TOPS: usize = if cfg!(test) { 1 << 10 } else { 1 << 18 };

/// The trees kept, in a [`super::SelectCache`] beside the evaluation cache,
/// whose shape ids they use (both are cleared together).
pub(super) type Trees = Vec<Tree>;

/// True when `eval_nodes`' first call reduces to the tree's answer: no
/// per-job GPU count, one node wanted (`rem_nodes` = 1) and at most one CPU
/// in all (so every set with a usable node is sufficient). The caller checks
/// the rest: the live state without `avoid`, no `-w`/`-x`/`-C`, no shared
/// GRES, a static cluster, a walkable partition.
pub(super) fn applies(j: &JobCtx<'_>, min_nodes: u32, req_nodes: u32) -> bool {
    let min_cpus = u64::from(j.req.total_tasks(min_nodes.max(1))) * u64::from(j.cpt);
    !j.gres.per_job() && min_nodes == 1 && req_nodes <= 1 && min_cpus <= 1
}

/// `tops`' leaf for the set of key `key` starting at `start`.
#[inline]
fn top(key: u64, start: usize) -> u64 {
    key << 16 | start as u64
}

/// The best-fit order's value of a node of key `key` at position `k`
/// (`u32::MAX` for no node): the fewest CPUs first, then the first.
#[inline]
fn fit_leaf(key: u64, k: usize) -> u32 {
    if key == NONE {
        u32::MAX
    } else {
        // The CPUs fit in 16 bits ([`Tree::fits`]), as do positions.
        ((key & CPU_MASK) as u32) << 16 | k as u32
    }
}

/// The minimum trees are 4-ary, root at 1: node `x`'s children are
/// `4x - 2 ..= 4x + 1`, its parent `(x + 2) / 4`; with a power of 4 leaves
/// `size`, the leaves start at `(size + 2) / 3` ([`leaf0`]), all at one
/// depth.
#[inline]
fn leaf0(size: usize) -> usize {
    size.div_ceil(3)
}

/// The least of 4-ary node `x`'s children in `t`.
#[inline]
fn min4<T: Copy + Ord>(t: &[T], x: usize) -> T {
    let c = &t[4 * x - 2..4 * x + 2];
    c[0].min(c[1]).min(c[2].min(c[3]))
}

/// Brings the minimum tree `t` (its leaves from `off`, [`leaf0`]) up to
/// date after its leaves at the positions in `dirty` changed (in any order, repeated or
/// not): one level at a time, each parent once, kept for the next level
/// only if its value changed (the ones above it are then right as they
/// are). Leaves `dirty` empty.
fn settle<T: Copy + Ord>(t: &mut [T], off: usize, dirty: &mut Vec<usize>) {
    for d in dirty.iter_mut() {
        *d += off;
    }
    // In order, so that siblings' parents are next to each other.
    dirty.sort_unstable();
    while !dirty.is_empty() && dirty[0] > 1 {
        let (mut kept, mut last) = (0, 0);
        for r in 0..dirty.len() {
            let x = (dirty[r] + 2) / 4;
            if x == last {
                continue;
            }
            last = x;
            let m = min4(t, x);
            if t[x] != m {
                t[x] = m;
                dirty[kept] = x;
                kept += 1;
            }
        }
        dirty.truncate(kept);
    }
    dirty.clear();
}

impl Tree {
    fn new(cluster: &Cluster, part: PartId, shape: u32) -> Tree {
        // Positions span the node table from the partition's first node to
        // its last: a node in between that is not the partition's is a
        // position of its own that ends the set (`_eval_nodes` walks the
        // whole table, and any node outside the job's node map ends a set).
        let pn = &cluster.partition(part).nodes;
        let (lo, hi) = match (
            pn.iter().map(|n| n.idx()).min(),
            pn.iter().map(|n| n.idx()).max(),
        ) {
            (Some(lo), Some(hi)) => (lo, hi + 1),
            _ => (0, 0),
        };
        let nodes: Vec<NodeId> = (lo..hi).map(NodeId::from_idx).collect();
        let max_cpus = nodes
            .iter()
            .map(|&id| u64::from(cluster.node(id).cpus()))
            .max()
            .unwrap_or(0);
        let mut member = vec![false; nodes.len()];
        for id in pn {
            member[id.idx() - lo] = true;
        }
        // A power of 4 (the trees are 4-ary).
        let size = {
            let p = nodes.len().next_power_of_two().max(1);
            if p.trailing_zeros() % 2 == 1 {
                2 * p
            } else {
                p
            }
        };
        let mut pos_of = vec![u32::MAX; cluster.nodes.len()];
        for (k, id) in nodes.iter().enumerate() {
            pos_of[id.idx()] = k as u32;
        }
        let mut weights: Vec<u32> = nodes.iter().map(|&id| cluster.node(id).weight).collect();
        weights.sort_unstable();
        weights.dedup();
        let rank = nodes
            .iter()
            .map(|&id| {
                let r = weights.partition_point(|&w| w < cluster.node(id).weight);
                // At most one rank per position; `fits` refuses 65,535 or more.
                u16::try_from(r).unwrap_or(u16::MAX)
            })
            .collect();
        let words = nodes.len().div_ceil(64).max(1);
        Tree {
            shape,
            part,
            at: None,
            leaf0: leaf0(size),
            keys: vec![NONE; nodes.len()],
            starts: vec![0; words],
            gaps: vec![0; words],
            tops: vec![u64::MAX; leaf0(size) + size],
            blocks: vec![u32::MAX; words],
            stale: vec![u64::MAX; words.div_ceil(64)],
            pos_of,
            nodes,
            member,
            rank,
            max_cpus,
            dirty: Vec::new(),
            tops_dirty: Vec::new(),
            used: 0,
        }
    }

    /// Whether a set's key and positions can describe every set: the CPU
    /// total in [`CPU_BITS`] (the positions' CPUs together below
    /// `(1 << CPU_BITS) - 1`, so that no set's key reaches [`NONE`] and no
    /// `tops` leaf of a set `u64::MAX`), positions, weight ranks and a
    /// node's CPUs in 16 bits.
    fn fits(&self, cluster: &Cluster) -> bool {
        let total: u64 = self
            .nodes
            .iter()
            .map(|&id| u64::from(cluster.node(id).cpus()))
            .sum();
        total < CPU_MASK
            && self.nodes.len() < usize::from(u16::MAX)
            && self
                .nodes
                .iter()
                .all(|&id| u16::try_from(cluster.node(id).cpus()).is_ok())
    }

    /// The key of position `k`'s node alone (`weight << CPU_BITS | cpus`,
    /// the weight ranked),
    /// or [`NONE`] when the node cannot hold the job (it ends the current
    /// set).
    #[inline]
    fn leaf_key(
        &self,
        j: &JobCtx<'_>,
        q: &Quick,
        cache: &mut super::EvalCache,
        state: &ClusterState,
        k: usize,
    ) -> u64 {
        let id = self.nodes[k];
        if !self.member[k] {
            return NONE;
        }
        let u = state.node(id);
        if !u.schedulable() {
            // DOWN or DRAIN: outside the node map, so it ends the set too.
            return NONE;
        }
        if cannot_fit(j, q, id, u) {
            return NONE;
        }
        match cache.get_or(self.shape, id, u, true, || eval_node(j, id, u, true)) {
            None => NONE,
            // `eval_node`'s weight is the node's, then the co-location byte.
            Some(e) => {
                (u64::from(self.rank[k]) << 8 | e.weight & 0xff) << CPU_BITS | u64::from(e.cpus)
            }
        }
    }

    #[inline]
    fn put_bit(map: &mut [u64], p: usize, on: bool) {
        let m = 1u64 << (p % 64);
        if on {
            map[p / 64] |= m;
        } else {
            map[p / 64] &= !m;
        }
    }

    /// The start of the set holding usable position `k`: the last start at
    /// or before it.
    #[inline]
    fn start_of(&self, k: usize) -> usize {
        let mut w = k / 64;
        let mut bits = self.starts[w] & (u64::MAX >> (63 - k % 64));
        while bits == 0 {
            if w == 0 {
                // Not reached: a usable position has a start at or before it.
                return 0;
            }
            w -= 1;
            bits = self.starts[w];
        }
        w * 64 + 63 - bits.leading_zeros() as usize
    }

    /// The last position of the set starting at `s`: the one before the
    /// next start or gap, or the last position.
    #[inline]
    fn end_of(&self, s: usize) -> usize {
        let n = self.keys.len();
        let p = s + 1;
        if p >= n {
            return n - 1;
        }
        let mut w = p / 64;
        let mut bits = (self.starts[w] | self.gaps[w]) & (u64::MAX << (p % 64));
        loop {
            if bits != 0 {
                return (w * 64 + bits.trailing_zeros() as usize).min(n) - 1;
            }
            w += 1;
            if w == self.starts.len() {
                return n - 1;
            }
            bits = self.starts[w] | self.gaps[w];
        }
    }

    /// The key of the set starting at `s` (its leaf in `tops`).
    #[inline]
    fn set_key(&self, s: usize) -> u64 {
        self.tops[self.leaf0 + s] >> 16
    }

    /// Records the set of key `key` starting at `s`.
    #[inline]
    fn put_set(&mut self, s: usize, key: u64) {
        Tree::put_bit(&mut self.starts, s, true);
        self.put_top(s, top(key, s));
    }

    /// No set starts at `s` any more.
    #[inline]
    fn drop_set(&mut self, s: usize) {
        Tree::put_bit(&mut self.starts, s, false);
        self.put_top(s, u64::MAX);
    }

    /// `tops`' leaf `s` is `v` (its ancestors once [`settle`]d).
    #[inline]
    fn put_top(&mut self, s: usize, v: u64) {
        self.tops[self.leaf0 + s] = v;
        self.tops_dirty.push(s);
    }

    /// Position `k`'s block is to be computed again.
    #[inline]
    fn touch(&mut self, k: usize) {
        Tree::put_bit(&mut self.stale, k / 64, true);
    }

    /// The CPUs of the usable positions `from..to`, all of one set.
    #[inline]
    fn cpus_in(&self, from: usize, to: usize) -> u64 {
        self.keys[from..to].iter().map(|k| k & CPU_MASK).sum()
    }

    /// Position `k`'s node now has key `key` (not its current one): the
    /// sets around it, the bitmaps and the leaves of `tops` brought up to
    /// date (their ancestors by [`settle`]), its block marked stale.
    fn set_leaf(&mut self, k: usize, key: u64) {
        let old = self.keys[k];
        if old != NONE && key != NONE && old >> CPU_BITS == key >> CPU_BITS {
            // The same weight: only its set's CPU total changes.
            let s = self.start_of(k);
            self.keys[k] = key;
            let total = self.set_key(s) - (old & CPU_MASK) + (key & CPU_MASK);
            self.put_top(s, top(total, s));
            self.touch(k);
            return;
        }
        if old != NONE {
            self.remove(k);
        }
        if key != NONE {
            self.insert(k, key);
        }
    }

    /// Usable position `k` becomes a gap: its set is split around it.
    fn remove(&mut self, k: usize) {
        let old = self.keys[k];
        let s = self.start_of(k);
        let e = self.end_of(s);
        let set = self.set_key(s);
        let weight = set & !CPU_MASK;
        // The CPUs before `k` in the set, counted on the shorter side.
        let before = if k - s <= e - k {
            self.cpus_in(s, k)
        } else {
            (set & CPU_MASK) - (old & CPU_MASK) - self.cpus_in(k + 1, e + 1)
        };
        let after = (set & CPU_MASK) - (old & CPU_MASK) - before;
        self.keys[k] = NONE;
        Tree::put_bit(&mut self.gaps, k, true);
        self.touch(k);
        if k > s {
            self.put_top(s, top(weight | before, s));
        } else {
            self.drop_set(s);
        }
        if k < e {
            self.put_set(k + 1, weight | after);
        }
    }

    /// Gap `k` becomes usable with key `key`: it joins the set before it
    /// and the set after it when they are of its weight, or starts one.
    fn insert(&mut self, k: usize, key: u64) {
        let weight = key >> CPU_BITS;
        let n = self.keys.len();
        let joins_left =
            k > 0 && self.keys[k - 1] != NONE && self.keys[k - 1] >> CPU_BITS == weight;
        let joins_right =
            k + 1 < n && self.keys[k + 1] != NONE && self.keys[k + 1] >> CPU_BITS == weight;
        self.keys[k] = key;
        Tree::put_bit(&mut self.gaps, k, false);
        self.touch(k);
        let mut total = key;
        if joins_right {
            // A set starts after a gap.
            total += self.set_key(k + 1) & CPU_MASK;
            self.drop_set(k + 1);
        }
        if joins_left {
            let s = self.start_of(k - 1);
            total += self.set_key(s) & CPU_MASK;
            self.put_top(s, top(total, s));
        } else {
            self.put_set(k, total);
        }
    }

    /// Every position evaluated again, and the sets and the minimum tree
    /// built from them (every block stale).
    fn rebuild(
        &mut self,
        j: &JobCtx<'_>,
        q: &Quick,
        cache: &mut super::EvalCache,
        state: &ClusterState,
    ) {
        let n = self.keys.len();
        for k in 0..n {
            self.keys[k] = self.leaf_key(j, q, cache, state, k);
        }
        self.starts.fill(0);
        self.gaps.fill(0);
        self.tops.fill(u64::MAX);
        self.stale.fill(u64::MAX);
        self.tops_dirty.clear();
        let mut s = 0;
        for k in 0..n {
            let key = self.keys[k];
            if key == NONE {
                Tree::put_bit(&mut self.gaps, k, true);
                continue;
            }
            if k == 0 || self.keys[k - 1] == NONE || self.keys[k - 1] >> CPU_BITS != key >> CPU_BITS
            {
                Tree::put_bit(&mut self.starts, k, true);
                s = k;
                self.tops[self.leaf0 + k] = top(key, k);
            } else {
                self.tops[self.leaf0 + s] += (key & CPU_MASK) << 16;
            }
        }
        for x in (1..self.leaf0).rev() {
            self.tops[x] = min4(&self.tops, x);
        }
    }
}

/// Brings `j`'s shape's tree over `part` up to date with `state` (building
/// it when there is none, within [`MAX_TOPS`]) and returns the shape's id
/// (in the evaluation cache) with `f`'s answer; `None` without a tree (too
/// many shapes, or a partition [`Tree::fits`] refuses).
fn with_tree<R>(
    j: &JobCtx<'_>,
    state: &ClusterState,
    part: PartId,
    trees: &mut Trees,
    cache: &mut EvalCache,
    f: impl FnOnce(&mut Tree) -> Option<R>,
) -> Option<(u32, R)> {
    let shape = cache.shape_id(j)?;
    let ti = match trees
        .iter()
        .position(|t| t.shape == shape && t.part == part)
    {
        Some(ti) => ti,
        None => {
            let new = Tree::new(j.cluster, part, shape);
            if new.tops.len() > MAX_TOPS || !new.fits(j.cluster) {
                return None;
            }
            // Room for it: drop the least recently used trees.
            while trees.iter().map(|t| t.tops.len()).sum::<usize>() + new.tops.len() > MAX_TOPS {
                let lru = (0..trees.len()).min_by_key(|&i| trees[i].used)?;
                trees.swap_remove(lru);
            }
            trees.push(new);
            trees.len() - 1
        }
    };
    let clock = trees.iter().map(|t| t.used).max().unwrap_or(0) + 1;
    let tree = &mut trees[ti];
    tree.used = clock;
    let q = Quick::of(j);
    let ix = state.fit_index();
    match tree.at.and_then(|at| ix.changes_since(at)) {
        Some(ch) => {
            // Each changed node once, in position order.
            let mut dirty = std::mem::take(&mut tree.dirty);
            dirty.clear();
            dirty.extend(
                ch.iter()
                    .filter_map(|&i| tree.pos_of.get(i as usize).copied())
                    .filter(|&k| k != u32::MAX)
                    .map(|k| k as usize),
            );
            dirty.sort_unstable();
            dirty.dedup();
            for &k in &dirty {
                let key = tree.leaf_key(j, &q, cache, state, k);
                if tree.keys[k] != key {
                    tree.set_leaf(k, key);
                }
            }
            tree.dirty = dirty;
            settle(&mut tree.tops, tree.leaf0, &mut tree.tops_dirty);
        }
        None => {
            // Not built, or another state (perhaps of another cluster):
            // start afresh.
            tree.rebuild(j, &q, cache, state);
        }
    }
    tree.at = Some(ix.position());
    f(tree).map(|r| (shape, r))
}

/// The node `eval_nodes`' first call would pick for `j` in `part` on the
/// live `state` when [`applies`] holds (with `j`'s shape id), or `None` when
/// the tree cannot say (no set at all, or too many shapes): then the caller
/// selects as without the tree. That is the first set of the lowest (weight,
/// CPU total) and in it the first node with the fewest CPUs.
pub(super) fn pick(
    j: &JobCtx<'_>,
    state: &ClusterState,
    part: PartId,
    trees: &mut Trees,
    cache: &mut EvalCache,
) -> Option<(u32, NodeId)> {
    with_tree(j, state, part, trees, cache, |tree| {
        let (_, s) = tree.top()?;
        let e = tree.end_of(s);
        let pos = tree.best_fit(s, e);
        Some(tree.nodes[pos])
    })
}

/// True when [`pick_nodes`] can stand for `eval_nodes`' first call: no
/// per-job GPU count (the caller checks the rest, as for [`applies`]).
pub(super) fn applies_many(j: &JobCtx<'_>) -> bool {
    !j.gres.per_job()
}

impl Tree {
    /// The first set of the lowest key: its key and start (`None`: no set).
    #[inline]
    fn top(&self) -> Option<(u64, usize)> {
        let t = self.tops[1];
        (t != u64::MAX).then_some((t >> 16, (t & 0xffff) as usize))
    }

    /// The first position from `s` to `e` (usable ones) with the fewest
    /// CPUs: the whole blocks inside by their minimum (computed again if
    /// stale), the others position by position.
    fn best_fit(&mut self, s: usize, e: usize) -> usize {
        let mut m = u32::MAX;
        let mut k = s;
        while k <= e {
            if k % 64 == 0 && k + 63 <= e {
                let b = k / 64;
                if self.stale[b / 64] >> (b % 64) & 1 != 0 {
                    self.blocks[b] = (k..k + 64)
                        .map(|p| fit_leaf(self.keys[p], p))
                        .min()
                        .unwrap_or(u32::MAX);
                    Tree::put_bit(&mut self.stale, b, false);
                }
                m = m.min(self.blocks[b]);
                k += 64;
            } else {
                m = m.min(fit_leaf(self.keys[k], k));
                k += 1;
            }
        }
        (m & 0xffff) as usize
    }

    /// The node sets in position order, as `eval_nodes` builds them.
    fn sets(&self, out: &mut Vec<Run>) {
        self.sets_min(1, out);
    }

    /// The node sets of `min` nodes or more, in position order.
    fn sets_min(&self, min: u16, out: &mut Vec<Run>) {
        for (w, &word) in self.starts.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let s = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let e = self.end_of(s);
                let r = Run {
                    key: self.set_key(s),
                    start: s as u16,
                    end: e as u16,
                };
                if r.len() >= min {
                    out.push(r);
                }
            }
        }
    }

    /// CPUs node position `k` offers (0: not usable).
    #[inline]
    fn avail(&self, k: usize) -> u32 {
        let key = self.keys[k];
        if key == NONE {
            0
        } else {
            (key & CPU_MASK) as u32
        }
    }
}

/// The nodes `eval_nodes`' first call would pick for `j` in `part` on the
/// live `state` when [`applies_many`] holds, in node order (with `j`'s shape
/// id), or `None` when
/// the tree cannot say or that call finds nothing: then the caller selects
/// as without the tree. This is `eval_nodes` without required nodes and
/// per-job GPU counts, run over the tree's sets: only the chosen sets'
/// nodes are visited.
pub(super) fn pick_nodes(
    j: &JobCtx<'_>,
    state: &ClusterState,
    part: PartId,
    min_nodes: u32,
    max_nodes: u32,
    req_nodes: u32,
    trees: &mut Trees,
    cache: &mut EvalCache,
) -> Option<(u32, Vec<NodeId>)> {
    with_tree(j, state, part, trees, cache, |tree| {
        let tree = &*tree;
        let (min_n, req_n) = (i64::from(min_nodes), i64::from(req_nodes));
        let min_cpus = i64::from(j.req.total_tasks(min_nodes.max(1))) * i64::from(j.cpt);
        let start = Need {
            rem_nodes: min_n.max(req_n),
            max_nodes: i64::from(max_nodes),
            rem_cpus: min_cpus,
            rem_max_cpus: min_cpus,
            min_rem_nodes: min_n,
        };
        let mut runs = Vec::new();
        let mut picked: Vec<usize> = Vec::new();
        let answer = |mut picked: Vec<usize>| {
            if (picked.len() as i64) >= min_n {
                picked.sort_unstable();
                Some(picked.iter().map(|&k| tree.nodes[k]).collect())
            } else {
                None
            }
        };
        // The common case first: a set that is sufficient by itself. A
        // sufficient set has `min_nodes` nodes or more (`enough_nodes` with
        // `rem_nodes` = max(min, req) asks for `min`), so only those are
        // listed. The loop below first chooses among the sets of the lowest
        // weight (of all sets), in order: a sufficient set replaces an
        // insufficient choice or one with more CPUs, and an insufficient set
        // replaces any choice with fewer CPUs. So when no insufficient set
        // of that weight has more CPUs than the sufficient ones' fewest, it
        // chooses the first sufficient set with the fewest CPUs. The sets
        // not listed have fewer than `min` nodes, so at most `min - 1` times
        // a node's most CPUs. When that set completes the job, the loop
        // stops there with the same nodes; otherwise it is run.
        if let Some((top, _)) = tree.top().filter(|_| start.max_nodes > 0) {
            let min = u16::try_from(min_nodes.max(1)).unwrap_or(u16::MAX);
            tree.sets_min(min, &mut runs);
            let lowest = runs.iter().filter(|r| r.weight() == top >> CPU_BITS);
            let best = lowest.clone().filter(|r| r.cpus() as i64 >= min_cpus).fold(
                None,
                |b: Option<&Run>, r| match b {
                    Some(b) if b.cpus() <= r.cpus() => Some(b),
                    _ => Some(r),
                },
            );
            let short = lowest
                .filter(|r| (r.cpus() as i64) < min_cpus)
                .map(|r| r.cpus())
                .max()
                .unwrap_or(0)
                .max(u64::from(min - 1) * tree.max_cpus);
            if let Some(b) = best.filter(|b| short <= b.cpus()) {
                let mut need = start;
                take_set(
                    j,
                    tree,
                    b.start as usize,
                    b.end as usize,
                    &mut need,
                    &mut picked,
                );
                if need.done() {
                    return answer(picked);
                }
            }
            runs.clear();
            picked.clear();
        }
        tree.sets(&mut runs);
        let usable_cnt: u64 = runs.iter().map(|r| u64::from(r.nodes())).sum();
        if usable_cnt < u64::from(min_nodes) {
            return None;
        }
        let mut need = start;
        // (start, end, cpus, nodes, weight) per set.
        let mut sets: Vec<(usize, usize, i64, i64, u64)> = runs
            .iter()
            .map(|r| {
                (
                    r.start as usize,
                    r.end as usize,
                    r.cpus() as i64,
                    i64::from(r.nodes()),
                    r.weight(),
                )
            })
            .collect();
        let mut success = false;
        while !sets.is_empty() && need.max_nodes > 0 {
            let mut best: Option<usize> = None;
            let mut best_suff = false;
            for (k, &(_, _, cpus, nodes, weight)) in sets.iter().enumerate() {
                if nodes == 0 {
                    continue;
                }
                let sufficient = cpus >= need.rem_cpus
                    && super::enough_nodes(nodes, need.rem_nodes, min_n, req_n);
                let best_key = best.map(|b| (sets[b].4, sets[b].2, best_suff));
                if super::better_set((weight, cpus, sufficient), best_key) {
                    best = Some(k);
                    best_suff = sufficient;
                }
            }
            let Some(b) = best else { break };
            take_set(j, tree, sets[b].0, sets[b].1, &mut need, &mut picked);
            if need.done() {
                success = true;
                break;
            }
            sets[b].2 = 0;
            sets[b].3 = 0;
            if sets.iter().all(|s| s.3 == 0) {
                break;
            }
        }
        if !success && need.rem_cpus <= 0 && super::enough_nodes(0, need.rem_nodes, min_n, req_n) {
            success = true;
        }
        if success {
            answer(picked)
        } else {
            None
        }
    })
}

/// What [`pick_nodes`] still has to find.
#[derive(Clone, Copy)]
struct Need {
    rem_nodes: i64,
    max_nodes: i64,
    rem_cpus: i64,
    rem_max_cpus: i64,
    min_rem_nodes: i64,
}

impl Need {
    fn done(&self) -> bool {
        self.rem_nodes <= 0 && self.rem_cpus <= 0
    }
}

/// `eval_nodes`' take from the chosen set (positions `first` to `last`):
/// its nodes in order while more are wanted, or with one node left to
/// find only the set's best fit.
fn take_set(
    j: &JobCtx<'_>,
    tree: &Tree,
    first: usize,
    last: usize,
    need: &mut Need,
    picked: &mut Vec<usize>,
) {
    let mut only: Option<usize> = None;
    if need.rem_nodes <= 1 {
        let mut best_fit: Option<(usize, u32)> = None;
        for i in first..=last {
            let a = tree.avail(i);
            if a == 0 || i64::from(a) < need.rem_cpus {
                continue;
            }
            if best_fit.is_none_or(|(_, ba)| a < ba) {
                best_fit = Some((i, a));
                if i64::from(a) == need.rem_cpus {
                    break;
                }
            }
        }
        if let Some((bf, _)) = best_fit {
            only = Some(bf);
        }
    }
    for i in first..=last {
        if need.max_nodes == 0 || need.done() {
            break;
        }
        let a = tree.avail(i);
        if a == 0 || only.is_some_and(|o| o != i) {
            continue;
        }
        if need.max_nodes == 1 && i64::from(a) < need.rem_cpus {
            continue;
        }
        let c = super::cpus_to_use(j, a, need.rem_max_cpus, need.min_rem_nodes);
        picked.push(i);
        need.rem_cpus -= c;
        need.rem_max_cpus -= c;
        need.rem_nodes -= 1;
        need.min_rem_nodes -= 1;
        need.max_nodes -= 1;
    }
}

#[cfg(test)]
mod tests;
