//! The first-pass choice of `_eval_nodes` without visiting every node: per
//! job shape and partition, a segment tree over the partition's nodes (in
//! index order) keeps the consecutive node sets that [`super::eval_nodes`]
//! would build, with each set's CPU total and best-fit node. It is brought
//! up to date from the live state's change log
//! ([`gresim_model::fit_index::FitIndex::changes_since`]): only the nodes
//! that changed since the shape's last selection are evaluated again, and
//! each change costs O(log nodes). docs/performance.md ("What changed in
//! round 2") describes it.
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

/// Bits of [`Run::key`] that hold a set's CPU total. A partition with as
/// many CPUs or more gets no tree ([`Tree::new`]), so the total never
/// reaches the weight's bits.
const CPU_BITS: u32 = 24;

/// A consecutive node set: its order key (weight, then CPU total), first
/// and last position, and its best-fit node (the first with the fewest
/// CPUs). Every position from `start` to `end` holds a usable node.
/// [`Run::NONE`] (no nodes) stands for no set, which keeps [`Sum`] plain
/// integers, cheap to compare and to copy (16 bytes: positions and a
/// node's CPUs in 16 bits; a partition beyond that gets no tree,
/// [`Tree::fits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Run {
    /// `weight << CPU_BITS | cpus`: the order of `eval_nodes`' choice among
    /// sufficient sets, compared as one integer. The first set wins ties,
    /// which [`min_best`] keeps by taking its operands in position order.
    key: u64,
    start: u16,
    end: u16,
    min_avail: u16,
    min_pos: u16,
}

impl Run {
    /// No set. Its key is above every set's ([`Tree::fits`] keeps the CPU
    /// total below `(1 << CPU_BITS) - 1`), so [`min_best`] is one comparison.
    /// `end` one below `start`, so that its [`Run::len`] is 0.
    const NONE: Run = Run {
        key: u64::MAX,
        start: u16::MAX,
        end: u16::MAX - 1,
        min_avail: 0,
        min_pos: 0,
    };
    #[inline]
    fn is_some(&self) -> bool {
        self.start != u16::MAX
    }
    #[inline]
    fn get(self) -> Option<Run> {
        self.is_some().then_some(self)
    }
    #[inline]
    fn weight(&self) -> u64 {
        self.key >> CPU_BITS
    }
    #[inline]
    fn cpus(&self) -> u64 {
        self.key & ((1 << CPU_BITS) - 1)
    }
    /// [`Run::nodes`] in 16 bits (positions are), without a test for no set
    /// ([`Run::NONE`]'s `end` is below its `start`: 0).
    #[inline]
    fn len(&self) -> u16 {
        (self.end.wrapping_sub(self.start)).wrapping_add(1)
    }
    #[inline]
    fn nodes(&self) -> u32 {
        if self.is_some() {
            u32::from(self.end - self.start) + 1
        } else {
            0
        }
    }
    /// `self` followed directly by `b`, of the same weight.
    #[inline]
    fn join(self, b: Run) -> Run {
        let (min_avail, min_pos) = if b.min_avail < self.min_avail {
            (b.min_avail, b.min_pos)
        } else {
            (self.min_avail, self.min_pos)
        };
        Run {
            // Same weight: the CPU totals add up below it.
            key: self.key + b.cpus(),
            start: self.start,
            end: b.end,
            min_avail,
            min_pos,
        }
    }
}

/// What a range of positions holds, as far as the sets go.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sum {
    /// Every position is a usable node of the same weight: one set, `pre`
    /// = `suf`.
    solid: bool,
    /// The set touching the range's start / end (open on that side).
    pre: Run,
    suf: Run,
    /// The most nodes of a set closed on both sides inside the range (the
    /// sets `best` is chosen from; 0: none), so that a listing of the large
    /// sets only ([`Tree::sets_min`]) skips the ranges without one.
    inner: u16,
    /// The best set closed on both sides inside the range: its key
    /// ([`Run::NONE`]'s when there is none) and best-fit node's position;
    /// no more of it is read (8 bytes less to compare and copy than a
    /// [`Run`]).
    best_key: u64,
    best_pos: u16,
}

impl Sum {
    /// The best set of all (key, best-fit position): the first with the
    /// lowest key, of `pre`, the closed ones and `suf`.
    #[inline]
    fn top(&self) -> (u64, u16) {
        min_best(
            first_best((self.pre.key, self.pre.min_pos), self.best()),
            self.suf,
        )
    }

    /// The best closed set's (key, best-fit position).
    #[inline]
    fn best(&self) -> (u64, u16) {
        (self.best_key, self.best_pos)
    }

    /// Whether the range holds a set closed on both sides.
    #[inline]
    fn has_best(&self) -> bool {
        self.best_key != u64::MAX
    }
}

/// Of two sets as (key, best-fit position), `a` lying before `b`, the
/// better: the lower key, `a` on a tie; a set before no set ([`Run::NONE`]'s
/// key is above all).
#[inline]
fn first_best(a: (u64, u16), b: (u64, u16)) -> (u64, u16) {
    if b.0 < a.0 {
        b
    } else {
        a
    }
}

/// [`first_best`] of a best set and the set `b` lying after it.
#[inline]
fn min_best(a: (u64, u16), b: Run) -> (u64, u16) {
    first_best(a, (b.key, b.min_pos))
}

/// A node that cannot hold the job: it ends the current set. The positions
/// past the last node (up to a power of two) are gaps too: a set ending at
/// the last node is then closed rather than open at the end, which changes
/// neither the sets listed nor the first best one.
const GAP: Sum = Sum {
    solid: false,
    pre: Run::NONE,
    suf: Run::NONE,
    inner: 0,
    best_key: u64::MAX,
    best_pos: 0,
};

/// `INNER`: whether to keep [`Sum::inner`] (0 otherwise), which only the
/// trees [`pick_nodes`] uses need ([`Tree::inner`]).
#[inline]
fn merge<const INNER: bool>(l: &Sum, r: &Sum) -> Sum {
    // Sets in position order: l.pre, l.best, l.suf, r.pre, r.best, r.suf.
    if l.suf.is_some() && r.pre.is_some() && l.suf.weight() == r.pre.weight() {
        let j = l.suf.join(r.pre);
        let closed = if !l.solid && !r.solid { j } else { Run::NONE };
        let (best_key, best_pos) = first_best(min_best(l.best(), closed), r.best());
        Sum {
            solid: l.solid && r.solid,
            pre: if l.solid { j } else { l.pre },
            suf: if r.solid { j } else { r.suf },
            inner: if INNER {
                l.inner.max(r.inner).max(closed.len())
            } else {
                0
            },
            best_key,
            best_pos,
        }
    } else {
        let ls = if l.solid { Run::NONE } else { l.suf };
        let rp = if r.solid { Run::NONE } else { r.pre };
        let (best_key, best_pos) = first_best(min_best(min_best(l.best(), ls), rp), r.best());
        Sum {
            solid: false,
            pre: l.pre,
            suf: r.suf,
            inner: if INNER {
                l.inner.max(r.inner).max(ls.len()).max(rp.len())
            } else {
                0
            },
            best_key,
            best_pos,
        }
    }
}

/// One shape's tree over one partition.
pub(super) struct Tree {
    shape: u32,
    part: PartId,
    /// The state position the leaves describe (`None`: not built).
    at: Option<(u64, u64)>,
    /// Leaves (a power of two).
    size: usize,
    sums: Vec<Sum>,
    /// Per node index, its position in the partition (`u32::MAX`: none).
    pos_of: Vec<u32>,
    /// Per position, the node: every node from the partition's first to
    /// its last, in index order.
    nodes: Vec<NodeId>,
    /// Per position, whether the node is the partition's.
    member: Vec<bool>,
    /// The most CPUs of a node at any position.
    max_cpus: u64,
    /// Scratch: summaries to recompute.
    dirty: Vec<usize>,
    /// Whether the summaries keep [`Sum::inner`] ([`pick_nodes`] has used
    /// the tree).
    inner: bool,
    /// When it was last used (a counter over all trees).
    used: u64,
}

/// Summaries kept at most over all trees (56 bytes each: 14 MB): one tree
/// per shape in use on 1,000 nodes fits 128 times, on 10,000 nodes 8 times.
/// Beyond that the least recently used trees are dropped.
/// (Tests use a small budget, so that dropping trees is exercised.)
const MAX_SUMS: usize = if cfg!(test) { 1 << 10 } else { 1 << 18 };

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
        let size = nodes.len().next_power_of_two().max(1);
        let mut pos_of = vec![u32::MAX; cluster.nodes.len()];
        for (k, id) in nodes.iter().enumerate() {
            pos_of[id.idx()] = k as u32;
        }
        Tree {
            shape,
            part,
            at: None,
            size,
            sums: vec![GAP; 2 * size],
            pos_of,
            nodes,
            member,
            max_cpus,
            dirty: Vec::new(),
            inner: false,
            used: 0,
        }
    }

    /// Whether [`Run`]'s fields can describe every set: the CPU total in
    /// [`CPU_BITS`] (the positions' CPUs together below `(1 << CPU_BITS) - 1`,
    /// so that no set's key reaches [`Run::NONE`]'s),
    /// positions and a node's CPUs in 16 bits (`u16::MAX` marks no set).
    fn fits(&self, cluster: &Cluster) -> bool {
        let total: u64 = self
            .nodes
            .iter()
            .map(|&id| u64::from(cluster.node(id).cpus()))
            .sum();
        total < (1 << CPU_BITS) - 1
            && self.nodes.len() < usize::from(u16::MAX)
            && self
                .nodes
                .iter()
                .all(|&id| u16::try_from(cluster.node(id).cpus()).is_ok())
    }

    /// The summary of position `k`: [`GAP`], or one set of that node
    /// alone ([`Tree::leaf_run`]).
    fn leaf(
        &self,
        j: &JobCtx<'_>,
        q: &Quick,
        cache: &mut super::EvalCache,
        state: &ClusterState,
        k: usize,
    ) -> Sum {
        leaf_sum(self.leaf_run(j, q, cache, state, k))
    }

    /// The set of position `k`'s node alone, or [`Run::NONE`] when the node
    /// cannot hold the job (it ends the current set).
    #[inline]
    fn leaf_run(
        &self,
        j: &JobCtx<'_>,
        q: &Quick,
        cache: &mut super::EvalCache,
        state: &ClusterState,
        k: usize,
    ) -> Run {
        let id = self.nodes[k];
        if !self.member[k] {
            return Run::NONE;
        }
        let u = state.node(id);
        if !u.schedulable() {
            // DOWN or DRAIN: outside the node map, so it ends the set too.
            return Run::NONE;
        }
        if cannot_fit(j, q, id, u) {
            return Run::NONE;
        }
        match cache.get_or(self.shape, id, u, true, || eval_node(j, id, u, true)) {
            None => Run::NONE,
            Some(e) => Run {
                key: e.weight << CPU_BITS | u64::from(e.cpus),
                start: k as u16,
                end: k as u16,
                // At most the node's CPUs, which `fits` bounds.
                min_avail: u16::try_from(e.cpus).expect("a node's CPUs fit in 16 bits"),
                min_pos: k as u16,
            },
        }
    }
}

/// A leaf's summary: [`GAP`] for no set, else the one set `r`. A leaf's
/// summary is thus equal to another leaf's when their `pre` are.
#[inline]
fn leaf_sum(r: Run) -> Sum {
    if r.is_some() {
        Sum {
            solid: true,
            pre: r,
            suf: r,
            inner: 0,
            best_key: u64::MAX,
            best_pos: 0,
        }
    } else {
        GAP
    }
}

impl Tree {
    /// One level at a time (the dirty summaries are all at one depth, in
    /// order): each parent once, kept for the next level if its summary
    /// changed; in one pass over the list.
    fn merge_up<const INNER: bool>(&mut self, dirty: &mut Vec<usize>) {
        while !dirty.is_empty() && dirty[0] > 1 {
            let (mut kept, mut last) = (0, 0);
            for r in 0..dirty.len() {
                let x = dirty[r] / 2;
                if x == last {
                    continue;
                }
                last = x;
                // One bounds check for the summary and both children: from
                // `x` to `2x + 1`, they are at 0, `x` and `x + 1`.
                let sums = &mut self.sums[x..=2 * x + 1];
                let m = merge::<INNER>(&sums[x], &sums[x + 1]);
                if sums[0] != m {
                    sums[0] = m;
                    dirty[kept] = x;
                    kept += 1;
                }
            }
            dirty.truncate(kept);
        }
    }
}

/// Runs `f` on the tree of `j`'s shape over `part`, brought up to date with
/// the live `state`, and returns the shape's id (in the evaluation cache)
/// with `f`'s answer; `None` without a tree (too many shapes). `inner`: the
/// summaries must keep [`Sum::inner`] (for [`Tree::sets_min`]).
fn with_tree<R>(
    j: &JobCtx<'_>,
    state: &ClusterState,
    part: PartId,
    trees: &mut Trees,
    cache: &mut EvalCache,
    inner: bool,
    f: impl FnOnce(&Tree) -> Option<R>,
) -> Option<(u32, R)> {
    let shape = cache.shape_id(j)?;
    let ti = match trees
        .iter()
        .position(|t| t.shape == shape && t.part == part)
    {
        Some(ti) => ti,
        None => {
            let new = Tree::new(j.cluster, part, shape);
            if new.sums.len() > MAX_SUMS || !new.fits(j.cluster) {
                return None;
            }
            // Room for it: drop the least recently used trees.
            while trees.iter().map(|t| t.sums.len()).sum::<usize>() + new.sums.len() > MAX_SUMS {
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
    // `inner` asked of a tree without it: built again, with it.
    let fresh = inner && !tree.inner;
    let changes = tree
        .at
        .filter(|_| !fresh)
        .and_then(|at| ix.changes_since(at));
    if changes.is_none() {
        // Another state (perhaps of another cluster): start afresh.
        let inner = inner || tree.inner;
        *tree = Tree::new(j.cluster, part, shape);
        tree.inner = inner;
    }
    match changes {
        Some(ch) => {
            // Each changed node once, then each summary above the
            // changed ones once per level, up to the root or to the
            // summaries that stay the same (then so do all above).
            let mut dirty = std::mem::take(&mut tree.dirty);
            dirty.clear();
            dirty.extend(
                ch.iter()
                    .filter_map(|&i| tree.pos_of.get(i as usize).copied())
                    .filter(|&k| k != u32::MAX)
                    .map(|k| tree.size + k as usize),
            );
            dirty.sort_unstable();
            dirty.dedup();
            // Leaves are all built (and so [`leaf_sum`]s): compared by their
            // one set.
            dirty.retain(|&x| {
                let r = tree.leaf_run(j, &q, cache, state, x - tree.size);
                let changed = tree.sums[x].pre != r;
                if changed {
                    tree.sums[x] = leaf_sum(r);
                }
                changed
            });
            if tree.inner {
                tree.merge_up::<true>(&mut dirty);
            } else {
                tree.merge_up::<false>(&mut dirty);
            }
            tree.dirty = dirty;
        }
        None => {
            for k in 0..tree.nodes.len() {
                tree.sums[tree.size + k] = tree.leaf(j, &q, cache, state, k);
            }
            for x in (1..tree.size).rev() {
                tree.sums[x] = if tree.inner {
                    merge::<true>(&tree.sums[2 * x], &tree.sums[2 * x + 1])
                } else {
                    merge::<false>(&tree.sums[2 * x], &tree.sums[2 * x + 1])
                };
            }
        }
    }
    tree.at = Some(ix.position());
    f(tree).map(|r| (shape, r))
}

/// The node `eval_nodes`' first call would pick for `j` in `part` on the
/// live `state` when [`applies`] holds (with `j`'s shape id), or `None` when
/// the tree cannot say (no set at all, or too many shapes): then the caller
/// selects as without the tree.
pub(super) fn pick(
    j: &JobCtx<'_>,
    state: &ClusterState,
    part: PartId,
    trees: &mut Trees,
    cache: &mut EvalCache,
) -> Option<(u32, NodeId)> {
    with_tree(j, state, part, trees, cache, false, |tree| {
        let root = &tree.sums[1];
        let (key, pos) = root.top();
        (key != u64::MAX).then(|| tree.nodes[pos as usize])
    })
}

/// True when [`pick_nodes`] can stand for `eval_nodes`' first call: no
/// per-job GPU count (the caller checks the rest, as for [`applies`]).
pub(super) fn applies_many(j: &JobCtx<'_>) -> bool {
    !j.gres.per_job()
}

impl Tree {
    /// The node sets in position order, as `eval_nodes` builds them: the
    /// tree is walked down only where sets begin or end.
    fn sets(&self, out: &mut Vec<Run>) {
        let mut cur: Option<Run> = None;
        self.sets_in(1, &mut cur, out);
        out.extend(cur);
    }

    fn sets_in(&self, x: usize, cur: &mut Option<Run>, out: &mut Vec<Run>) {
        let s = &self.sums[x];
        if s.solid {
            let Some(r) = s.pre.get() else { return };
            match cur {
                Some(c) if c.weight() == r.weight() => *c = c.join(r),
                _ => {
                    out.extend(cur.take());
                    *cur = Some(r);
                }
            }
            return;
        }
        if !s.pre.is_some() && !s.suf.is_some() && !s.has_best() {
            // Only nodes that cannot hold the job: the current set ends.
            out.extend(cur.take());
            return;
        }
        self.sets_in(2 * x, cur, out);
        self.sets_in(2 * x + 1, cur, out);
    }

    /// The node sets of `min` nodes or more, in position order, exactly as
    /// [`Tree::sets`] lists them (the others left out): a range whose
    /// inside holds no set that large (`inner`) is not walked down, its
    /// first and last sets are taken from its summary.
    fn sets_min(&self, min: u16, out: &mut Vec<Run>) {
        let mut cur: Option<Run> = None;
        self.sets_min_in(1, min, &mut cur, out);
        out.extend(cur.filter(|c| c.len() >= min));
    }

    fn sets_min_in(&self, x: usize, min: u16, cur: &mut Option<Run>, out: &mut Vec<Run>) {
        let s = &self.sums[x];
        // A set that has ended: kept if large enough.
        let close = |c: Option<Run>, out: &mut Vec<Run>| {
            out.extend(c.filter(|c| c.len() >= min));
        };
        // `r` goes on from the current set (same weight) or starts one.
        let cont = |cur: &mut Option<Run>, r: Run, out: &mut Vec<Run>| match cur {
            Some(c) if c.weight() == r.weight() => *c = c.join(r),
            _ => {
                out.extend(cur.take().filter(|c| c.len() >= min));
                *cur = Some(r);
            }
        };
        if s.solid {
            let Some(r) = s.pre.get() else { return };
            cont(cur, r, out);
            return;
        }
        if !s.pre.is_some() && !s.suf.is_some() && !s.has_best() {
            close(cur.take(), out);
            return;
        }
        if s.inner < min {
            // Not solid: the first set ends inside the range, and the last
            // one begins there; the sets between are too small.
            if let Some(r) = s.pre.get() {
                cont(cur, r, out);
            }
            close(cur.take(), out);
            *cur = s.suf.get();
            return;
        }
        self.sets_min_in(2 * x, min, cur, out);
        self.sets_min_in(2 * x + 1, min, cur, out);
    }

    /// CPUs node position `k` offers (0: not usable).
    #[inline]
    fn avail(&self, k: usize) -> u32 {
        // 0 for Run::NONE.
        u32::from(self.sums[self.size + k].pre.min_avail)
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
    with_tree(j, state, part, trees, cache, true, |tree| {
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
        let root = &tree.sums[1];
        let (top, _) = root.top();
        if top != u64::MAX && start.max_nodes > 0 {
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
