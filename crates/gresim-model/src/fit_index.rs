//! An index of nodes by what they have free, kept by [`crate::ClusterState`]
//! so that a node selection can visit only the nodes that could hold a job
//! instead of every node of the partition (docs/performance.md).
//!
//! A node's *level* is the number of its free GPUs when it could hold any
//! job at all (schedulable, not held by an exclusive job, at least one free
//! core), and "none" otherwise. Level `k` is a bitset over node indices of
//! the nodes whose level is at least `k`. A job that needs at least `m` free
//! GPUs on a node cannot use any node outside level `m`; [`FitIndex::walk`]
//! visits the nodes of a partition in level `m` in index order and says,
//! for each, whether some other node the selection would have looked at lies
//! between it and the previous one (a node that cannot hold the job, which
//! ends a consecutive node set in Slurm's `_eval_nodes`).

use crate::cluster::Cluster;
use crate::ids::NodeId;
use crate::state::NodeUsage;

/// Levels and partition memberships as bitsets over node indices. A clone
/// keeps no change log ([`ChangeLog`]'s `Clone`); `clone_from` reuses the
/// target's memory.
#[derive(Debug)]
pub struct FitIndex {
    /// 64-bit words per bitset.
    words: usize,
    /// Highest level kept (the most GPUs of any node).
    top: u32,
    /// `levels[k * words ..][..words]`: nodes whose level is at least `k`.
    levels: Vec<u64>,
    /// Schedulable nodes.
    sched: Vec<u64>,
    /// Per node, its level plus one (0: none).
    level_of: Vec<u8>,
    /// Static: per partition, its members, and whether its node list is in
    /// strictly increasing index order (the walk visits nodes in that order).
    parts: std::sync::Arc<[PartBits]>,
    /// The nodes whose usage changed, in order.
    log: ChangeLog,
}

/// The indices of the nodes whose usage changed, in order of the changes,
/// for readers that keep their own summaries of a state up to date
/// ([`FitIndex::changes_since`]). Only the latest entries are kept. A clone
/// of the state is another state, usually a short-lived one (backfill's
/// future states): it gets a new id and keeps no log.
#[derive(Debug)]
struct ChangeLog {
    /// Unique among the states of the process.
    uid: u64,
    /// False for clones: nothing is recorded.
    active: bool,
    /// Changes dropped from the front of `entries`.
    base: u64,
    entries: Vec<u32>,
}

/// Most entries a change log keeps; half of them are dropped when it is full.
const LOG_CAP: usize = 1 << 15;

static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl ChangeLog {
    fn new() -> ChangeLog {
        ChangeLog {
            uid: NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            active: true,
            base: 0,
            entries: Vec::new(),
        }
    }
    #[inline]
    fn push(&mut self, i: usize) {
        if !self.active {
            return;
        }
        if self.entries.len() >= LOG_CAP {
            self.entries.drain(..LOG_CAP / 2);
            self.base += (LOG_CAP / 2) as u64;
        }
        self.entries.push(i as u32);
    }
}

impl Clone for ChangeLog {
    fn clone(&self) -> ChangeLog {
        ChangeLog {
            active: false,
            ..ChangeLog::new()
        }
    }
}

#[derive(Debug)]
struct PartBits {
    members: Vec<u64>,
    len: usize,
    ordered: bool,
}

/// Nodes a walk skips: a flag per node index, or a bitmap over node indices
/// (64 per word, as the index's own sets), which the walk applies a word at
/// a time.
#[derive(Debug, Clone, Copy)]
pub enum Skip<'a> {
    Flags(&'a [bool]),
    Bits(&'a [u64]),
}

impl Skip<'_> {
    /// Whether node index `i` is skipped.
    #[inline]
    pub fn has(self, i: usize) -> bool {
        match self {
            Skip::Flags(a) => a[i],
            Skip::Bits(b) => b[i / 64] & (1 << (i % 64)) != 0,
        }
    }
}

/// The level of a node in usage `u` plus one; 0 when it can hold no job.
#[inline]
fn level1(u: &NodeUsage) -> u8 {
    if !u.schedulable() || u.exclusive || u.free_cores.is_empty() {
        return 0;
    }
    // At most 64 GPUs per node (a `u64` mask).
    u.free_gpus.count_ones() as u8 + 1
}

impl Clone for FitIndex {
    fn clone(&self) -> Self {
        let FitIndex {
            words,
            top,
            levels,
            sched,
            level_of,
            parts,
            log,
        } = self;
        FitIndex {
            words: *words,
            top: *top,
            levels: levels.clone(),
            sched: sched.clone(),
            level_of: level_of.clone(),
            parts: std::sync::Arc::clone(parts),
            log: log.clone(),
        }
    }

    fn clone_from(&mut self, other: &Self) {
        let FitIndex {
            words,
            top,
            levels,
            sched,
            level_of,
            parts,
            log,
        } = other;
        self.words = *words;
        self.top = *top;
        self.levels.clone_from(levels);
        self.sched.clone_from(sched);
        self.level_of.clone_from(level_of);
        self.parts = std::sync::Arc::clone(parts);
        self.log = log.clone();
    }
}

impl FitIndex {
    pub(crate) fn new(cluster: &Cluster, nodes: &[NodeUsage]) -> FitIndex {
        let n = nodes.len();
        let words = n.div_ceil(64);
        let top = cluster
            .nodes
            .iter()
            .map(|x| x.gpus.len().min(64) as u32)
            .max()
            .unwrap_or(0);
        let parts = cluster
            .partitions
            .iter()
            .map(|p| {
                let mut members = vec![0u64; words];
                for id in &p.nodes {
                    if id.idx() < n {
                        members[id.idx() / 64] |= 1 << (id.idx() % 64);
                    }
                }
                PartBits {
                    members,
                    len: p.nodes.len(),
                    ordered: p.nodes.windows(2).all(|w| w[0] < w[1])
                        && p.nodes.iter().all(|id| id.idx() < n),
                }
            })
            .collect();
        let mut ix = FitIndex {
            words,
            top,
            levels: vec![0; words * (top as usize + 1)],
            sched: vec![0; words],
            level_of: vec![0; n],
            parts,
            log: ChangeLog::new(),
        };
        for (i, u) in nodes.iter().enumerate() {
            ix.update(i, u);
        }
        ix
    }

    /// Brings node `i`'s entries up to date with its usage `u`.
    #[inline]
    pub(crate) fn update(&mut self, i: usize, u: &NodeUsage) {
        self.log.push(i);
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if u.schedulable() {
            self.sched[w] |= bit;
        } else {
            self.sched[w] &= !bit;
        }
        let new = level1(u).min(self.top as u8 + 1);
        let old = self.level_of[i];
        if new == old {
            return;
        }
        self.level_of[i] = new;
        // Levels 0..new hold the node, levels new..old do not.
        let (lo, hi, set) = if new > old {
            (old, new, true)
        } else {
            (new, old, false)
        };
        for k in usize::from(lo)..usize::from(hi) {
            let word = &mut self.levels[k * self.words + w];
            if set {
                *word |= bit;
            } else {
                *word &= !bit;
            }
        }
    }

    /// This state's id and the number of node changes made to it so far.
    /// The pair names the current usage of every node: a reader that
    /// remembers it can ask [`FitIndex::changes_since`] what changed later.
    #[inline]
    pub fn position(&self) -> (u64, u64) {
        (self.log.uid, self.log.base + self.log.entries.len() as u64)
    }

    /// The indices of the nodes changed since `pos` (from
    /// [`FitIndex::position`] on this state), oldest first, repeats
    /// included; `None` when `pos` is from another state or so old that
    /// the log no longer holds it.
    pub fn changes_since(&self, pos: (u64, u64)) -> Option<&[u32]> {
        let (uid, at) = pos;
        if !self.log.active || uid != self.log.uid || at < self.log.base {
            return None;
        }
        self.log.entries.get((at - self.log.base) as usize..)
    }

    /// True when this state records its changes: one made by
    /// `ClusterState::new`, not a clone.
    #[inline]
    pub fn tracked(&self) -> bool {
        self.log.active
    }

    /// True when [`FitIndex::walk`] can stand for a scan of partition
    /// `part`'s node list: the list is in increasing index order, without
    /// repeats, and the same as when the index was built.
    pub fn walkable(&self, cluster: &Cluster, part: usize) -> bool {
        self.parts
            .get(part)
            .is_some_and(|p| p.ordered && p.len == cluster.partitions[part].nodes.len())
    }

    /// The nodes of partition `part` with at least `min_gpus` free GPUs (and
    /// a free core, schedulable, not held exclusively), in index order,
    /// skipping those `avoid` marks. With each, whether a schedulable node of
    /// the partition that `avoid` does not mark and that is not visited lies
    /// between it and the previously visited node (or the partition's start).
    /// Call only when [`FitIndex::walkable`] holds.
    pub fn walk<'a>(&'a self, part: usize, min_gpus: u32, avoid: Option<Skip<'a>>) -> Walk<'a> {
        let level = if min_gpus > self.top {
            None
        } else {
            let k = min_gpus as usize * self.words;
            Some(&self.levels[k..k + self.words])
        };
        Walk {
            ix: self,
            members: &self.parts[part].members,
            level,
            avoid,
            w: 0,
            cur: 0,
            started: false,
            next_from: 0,
        }
    }

    /// True when a schedulable member not marked by `avoid` lies in `lo..hi`.
    fn offered_in(&self, members: &[u64], avoid: Option<Skip<'_>>, lo: usize, hi: usize) -> bool {
        if lo >= hi {
            return false;
        }
        let (wlo, whi) = (lo / 64, (hi - 1) / 64);
        let words = members[wlo..=whi].iter().zip(&self.sched[wlo..=whi]);
        for (w, (mem, sch)) in (wlo..).zip(words) {
            let mut m = mem & sch;
            if w == wlo {
                m &= u64::MAX << (lo % 64);
            }
            if w == whi && !hi.is_multiple_of(64) {
                m &= (1u64 << (hi % 64)) - 1;
            }
            match avoid {
                None => {
                    if m != 0 {
                        return true;
                    }
                }
                Some(Skip::Bits(b)) => {
                    if m & !b[w] != 0 {
                        return true;
                    }
                }
                Some(Skip::Flags(a)) => {
                    while m != 0 {
                        let x = w * 64 + m.trailing_zeros() as usize;
                        if !a[x] {
                            return true;
                        }
                        m &= m - 1;
                    }
                }
            }
        }
        false
    }
}

/// Iterator of [`FitIndex::walk`]: `(node, gap_before)`.
pub struct Walk<'a> {
    ix: &'a FitIndex,
    members: &'a [u64],
    level: Option<&'a [u64]>,
    avoid: Option<Skip<'a>>,
    /// Current word and its bits not yet visited.
    w: usize,
    cur: u64,
    started: bool,
    /// Index after the previously visited node.
    next_from: usize,
}

impl Walk<'_> {
    /// Word `w` of the visited set: the level's members of the partition,
    /// less a bitmap of skipped nodes (flags are tested node by node).
    #[inline]
    fn word(&self, w: usize) -> u64 {
        let (Some(level), Some(&m)) = (self.level, self.members.get(w)) else {
            return 0;
        };
        let v = level.get(w).copied().unwrap_or(0) & m;
        match self.avoid {
            Some(Skip::Bits(b)) => v & !b[w],
            _ => v,
        }
    }
}

impl Iterator for Walk<'_> {
    type Item = (NodeId, bool);

    #[inline]
    fn next(&mut self) -> Option<(NodeId, bool)> {
        self.level?;
        loop {
            if !self.started {
                self.started = true;
                self.cur = self.word(0);
            }
            while self.cur == 0 {
                self.w += 1;
                if self.w >= self.ix.words {
                    return None;
                }
                self.cur = self.word(self.w);
            }
            let i = self.w * 64 + self.cur.trailing_zeros() as usize;
            self.cur &= self.cur - 1;
            if let Some(Skip::Flags(a)) = self.avoid {
                if a[i] {
                    continue;
                }
            }
            let gap = self
                .ix
                .offered_in(self.members, self.avoid, self.next_from, i);
            self.next_from = i + 1;
            return Some((NodeId::from_idx(i), gap));
        }
    }
}

#[cfg(test)]
mod tests;
