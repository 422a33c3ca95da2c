//! Backfill's map of reserved nodes over time, as slots of node bitmaps.
//!
//! sched/backfill keeps a `node_space` list: time slots, each with the
//! bitmap of nodes free in it, split wherever a reservation begins or ends.
//! [`BfMap`] is the same map from the other side: for each boundary time,
//! the nodes reserved from it until the next boundary. Every question the
//! pass asks of its reservations is then a walk over a few slots with a
//! word-wide OR or AND, instead of a walk over every reserved node of every
//! reservation:
//!
//! * [`BfMap::blocked`]: the nodes reserved in any slot overlapping
//!   `[a, b]` (a reservation beginning exactly at `b` counts), asked as
//!   [`BfMap::blocked_in`] for one job's tries, whose windows only move
//!   later: a sliding OR over the slots;
//! * [`BfMap::overlaps`]: whether given nodes are reserved anywhere in
//!   `[s, e)` (`_test_resv_overlap()`);
//! * [`BfMap::later_start`]: Slurm's `later_start`, the end of the first
//!   slot after which a reserved node of the partition is free.
//!
//! A boundary is kept for every distinct time a reservation begins or ends,
//! even where the bitmap does not change (a node handed from one reservation
//! to the next), so the slots are exactly the ones Slurm's walk visits. The
//! reservation-list definitions these replace are kept in the tests, which
//! check the two agree on random maps.

use gresim_model::job::Time;
use gresim_model::NodeId;

/// Where [`BfMap::blocked_in`] left a series of windows.
#[derive(Debug, Default)]
pub(crate) struct Windows {
    /// The first boundaries after the last window's start and end.
    p: usize,
    q: usize,
    /// The last window's slots `[p - 1, hi)`: `[.., mid)` through `suf`,
    /// `[mid, hi)` ORed in `back`.
    mid: usize,
    hi: usize,
    /// `suf[(k - base) * words..][..words]`: the OR of slots `k..mid`.
    base: usize,
    suf: Vec<u64>,
    back: Vec<u64>,
}

impl Windows {
    /// A new series (the map changed, or another job's tries begin).
    pub(crate) fn restart(&mut self) {
        self.p = 0;
        self.q = 0;
        self.mid = 0;
        self.hi = 0;
        self.base = 0;
    }

    /// The first boundary after the last window's start.
    pub(crate) fn first_after(&self) -> usize {
        self.p
    }
}

/// Reserved nodes by time slot (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct BfMap {
    /// 64-bit words per bitmap.
    words: usize,
    /// Distinct boundary times, ascending.
    times: Vec<Time>,
    /// `masks[k * words..(k + 1) * words]`: the nodes reserved in
    /// `[times[k], times[k + 1])`. The last slot's is empty.
    masks: Vec<u64>,
    /// The reservations themselves, for the one question slots cannot
    /// answer (see [`BfMap::overlaps`]): start, end and their nodes,
    /// `list_nodes[from..to]`.
    list: Vec<(Time, Time, u32, u32)>,
    list_nodes: Vec<NodeId>,
    /// Per boundary `k > 0`: whether a node reserved in slot `k - 1` is
    /// free in slot `k` (of any partition), so that
    /// [`BfMap::later_start_from`] compares bitmaps only there.
    frees: Vec<bool>,
    /// `pre[k * words..(k + 1) * words]`: the OR of slots `0..=k`, for the
    /// first `pre_rows` slots (the rest are made when asked; a reservation
    /// or a new boundary at slot `k` leaves only the rows before it).
    pre: Vec<u64>,
    pre_rows: usize,
}

/// A node bitmap of `words` words.
pub(crate) fn bitmap(words: usize) -> Vec<u64> {
    vec![0; words]
}

/// Words for a bitmap of `nodes` nodes.
pub(crate) fn words_for(nodes: usize) -> usize {
    nodes.div_ceil(64).max(1)
}

#[inline]
pub(crate) fn set_bit(m: &mut [u64], id: NodeId) {
    m[id.idx() / 64] |= 1 << (id.idx() % 64);
}

#[inline]
pub(crate) fn clear_bit(m: &mut [u64], id: NodeId) {
    m[id.idx() / 64] &= !(1 << (id.idx() % 64));
}

#[inline]
pub(crate) fn has_bit(m: &[u64], id: NodeId) -> bool {
    m[id.idx() / 64] & (1 << (id.idx() % 64)) != 0
}

/// How many nodes of `m` are not in `blocked`.
pub(crate) fn count_unblocked(m: &[u64], blocked: &[u64]) -> u32 {
    m.iter()
        .zip(blocked)
        .map(|(a, b)| (a & !b).count_ones())
        .sum()
}

/// The nodes in both `a` and `b`, in index order.
pub(crate) fn ids_both<'a>(a: &'a [u64], b: &'a [u64]) -> impl Iterator<Item = NodeId> + 'a {
    a.iter()
        .zip(b)
        .enumerate()
        .flat_map(|(w, (&x, &y))| word_ids(w, x & y))
}

/// The nodes of word `w` of a bitmap, whose bits are `bits`.
pub(crate) fn word_ids(w: usize, bits: u64) -> impl Iterator<Item = NodeId> {
    let mut b = bits;
    std::iter::from_fn(move || {
        (b != 0).then(|| {
            let i = b.trailing_zeros() as usize;
            b &= b - 1;
            NodeId::from_idx(w * 64 + i)
        })
    })
}

impl BfMap {
    /// An empty map for a cluster of `nodes` nodes.
    pub(crate) fn new(nodes: usize) -> Self {
        BfMap {
            words: words_for(nodes),
            times: Vec::new(),
            masks: Vec::new(),
            list: Vec::new(),
            list_nodes: Vec::new(),
            frees: Vec::new(),
            pre: Vec::new(),
            pre_rows: 0,
        }
    }

    /// Empties the map for a cluster of `nodes` nodes, keeping its memory
    /// (backfill keeps one map from pass to pass).
    pub(crate) fn reset(&mut self, nodes: usize) {
        self.words = words_for(nodes);
        self.times.clear();
        self.masks.clear();
        self.list.clear();
        self.list_nodes.clear();
        self.frees.clear();
        self.pre_rows = 0;
    }

    /// Works out [`BfMap::frees`] of boundary `k` again.
    fn set_frees(&mut self, k: usize) {
        self.frees[k] = k > 0 && {
            let w = self.words;
            let (before, after) = self.masks[(k - 1) * w..(k + 1) * w].split_at(w);
            before.iter().zip(after).any(|(b, a)| b & !a != 0)
        };
    }

    fn mask(&self, k: usize) -> &[u64] {
        &self.masks[k * self.words..(k + 1) * self.words]
    }

    /// [`BfMap::mask`] with `W` words per bitmap (0: `self.words`, through
    /// `mask`).
    #[inline(always)]
    fn mask_w<const W: usize>(&self, k: usize) -> &[u64] {
        if W == 0 {
            self.mask(k)
        } else {
            &self.masks[k * W..(k + 1) * W]
        }
    }

    /// The index of the slot holding time `t`: the last boundary at or
    /// before it (0 when `t` is before the first).
    fn slot_of(&self, t: Time) -> usize {
        self.times.partition_point(|&x| x <= t).saturating_sub(1)
    }

    /// The index of boundary `t`, inserted (with the bitmap of the slot it
    /// splits) if absent.
    fn boundary(&mut self, t: Time) -> usize {
        let k = self.times.partition_point(|&x| x < t);
        if self.times.get(k) == Some(&t) {
            return k;
        }
        let w = self.words;
        self.pre_rows = self.pre_rows.min(k);
        self.times.insert(k, t);
        // A copy of slot `k - 1` (none before the first) inserted at `k`.
        let (at, len) = (k * w, self.masks.len());
        self.masks.resize(len + w, 0);
        self.masks.copy_within(at..len, at + w);
        if k == 0 {
            self.masks[..w].fill(0);
        } else {
            self.masks.copy_within(at - w..at, at);
        }
        // The new slot holds what the one it splits held: nothing is freed
        // at it, and the next boundary compares with the same bitmap.
        self.frees.insert(k, false);
        k
    }

    /// Reserves `nodes` over `[start, end)` (`start < end`).
    pub(crate) fn reserve(&mut self, start: Time, end: Time, nodes: &[NodeId]) {
        debug_assert!(start < end);
        let from = self.list_nodes.len() as u32;
        self.list_nodes.extend_from_slice(nodes);
        self.list
            .push((start, end, from, self.list_nodes.len() as u32));
        let a = self.boundary(start);
        let b = self.boundary(end);
        self.pre_rows = self.pre_rows.min(a);
        let w = self.words;
        for k in a..b {
            let m = &mut self.masks[k * w..(k + 1) * w];
            for &id in nodes {
                set_bit(m, id);
            }
        }
        for k in a..=b.min(self.times.len() - 1) {
            self.set_frees(k);
        }
    }

    /// Sets `out` to the nodes reserved in any slot that ends after `a` and
    /// begins no later than `b`. (The pass asks [`BfMap::blocked_in`]; this
    /// is what the tests check it against.)
    #[cfg(test)]
    pub(crate) fn blocked(&self, a: Time, b: Time, out: &mut [u64]) {
        out.fill(0);
        if self.times.is_empty() {
            return;
        }
        let mut k = self.slot_of(a);
        while k < self.times.len() && self.times[k] <= b {
            for (o, m) in out.iter_mut().zip(self.mask(k)) {
                *o |= m;
            }
            k += 1;
        }
    }

    /// Whether any node of `on` is reserved in a slot that ends after `s`
    /// and begins before `e`. For an empty interval (`s == e`, a start and
    /// end rounded down to the same multiple of `bf_resolution`) that is a
    /// reservation holding the node from before `s` to after it: the slot
    /// holding `s` tells unless a boundary lies exactly at `s`, where a node
    /// handed from one reservation to the next looks the same as one held
    /// across; then the reservations are asked.
    pub(crate) fn overlaps(&self, s: Time, e: Time, on: &[u64]) -> bool {
        if self.times.is_empty() {
            return false;
        }
        if s >= e && self.times.binary_search(&s).is_ok() {
            return self.list.iter().any(|&(rs, re, from, to)| {
                re > s
                    && rs < e
                    && self.list_nodes[from as usize..to as usize]
                        .iter()
                        .any(|&id| has_bit(on, id))
            });
        }
        let mut k = self.slot_of(s);
        while k < self.times.len() && self.times[k] < e {
            if self.mask(k).iter().zip(on).any(|(m, o)| m & o != 0) {
                return true;
            }
            k += 1;
        }
        false
    }

    /// [`BfMap::overlaps`] for nodes `on` of which the last window of `w`
    /// ([`BfMap::blocked_in`], on this map) blocks none, for an interval
    /// beginning in or after that window's first slot: the window's slots
    /// cannot hold them, so only the slots beginning after its end are
    /// walked.
    pub(crate) fn overlaps_past(&self, w: &Windows, s: Time, e: Time, on: &[u64]) -> bool {
        if self.times.is_empty() {
            return false;
        }
        if s >= e && self.times.binary_search(&s).is_ok() {
            return self.overlaps(s, e, on);
        }
        let mut k = self.slot_of(s).max(w.q);
        while k < self.times.len() && self.times[k] < e {
            if self.mask(k).iter().zip(on).any(|(m, o)| m & o != 0) {
                return true;
            }
            k += 1;
        }
        false
    }

    /// [`BfMap::blocked`] for one of a series of windows `[a, b]` whose
    /// starts and ends never move back, over a map that does not change
    /// meanwhile (one job's tries): `w` keeps the slot searches where the
    /// last window left them, and the OR of the window's slots as a sliding
    /// window (each slot is ORed in a few times over the whole series
    /// instead of once per window). Afterwards [`Windows::first_after`] is
    /// the index of the first boundary after `a`.
    #[inline]
    pub(crate) fn blocked_in(&self, w: &mut Windows, a: Time, b: Time, out: &mut [u64]) {
        // With one or two words (up to 128 nodes) the word loops are a
        // constant length the compiler unrolls: -3.9 % instructions on
        // `bench_run swf 5000 --load 1.1 --policy slurm` (docs/performance.md,
        // "2026-12-04 (sixth session)").
        match self.words {
            1 => self.blocked_in_w::<1>(w, a, b, out),
            2 => self.blocked_in_w::<2>(w, a, b, out),
            _ => self.blocked_in_w::<0>(w, a, b, out),
        }
    }

    /// [`BfMap::blocked_in`] with `W` words per bitmap (0: `self.words`).
    // Out of line, as the compiler had it until the node states grew
    // `eval_node`: inlined into `backfill_pass` it cost 1.6 % more
    // instructions on `bench_run 10000 --load 1.2 --policy slurm`
    // (docs/performance.md, "2026-12-03").
    #[inline(never)]
    fn blocked_in_w<const W: usize>(&self, w: &mut Windows, a: Time, b: Time, out: &mut [u64]) {
        let n = self.times.len();
        let words = if W == 0 { self.words } else { W };
        if w.back.len() != words {
            w.back = bitmap(words);
        }
        while w.p < n && self.times[w.p] <= a {
            w.p += 1;
        }
        w.q = w.q.max(w.p);
        while w.q < n && self.times[w.q] <= b {
            w.q += 1;
        }
        // The window's slots: from the one holding `a` to the last that
        // begins no later than `b`.
        let (lo, hi) = (w.p.saturating_sub(1), w.q);
        if lo >= w.mid {
            // What the suffix ORs held has left the window: they are made
            // again for the window's slots, and the back part starts empty.
            // (Row `hi - lo` stays empty, so every row has a next one.) The
            // rows above it are written whole below, so only it is cleared:
            // the buffer keeps its length across windows instead of being
            // emptied and filled with zeros each time.
            let rows = hi - lo + 1;
            if w.suf.len() < rows * words {
                w.suf.resize(rows * words, 0);
            }
            w.suf[(rows - 1) * words..rows * words].fill(0);
            for k in (lo..hi).rev() {
                // Row `k` is slot `k` ORed with row `k + 1`.
                let (head, next) = w.suf.split_at_mut((k - lo + 1) * words);
                let row = &mut head[(k - lo) * words..];
                for ((x, m), y) in row[..words]
                    .iter_mut()
                    .zip(self.mask_w::<W>(k))
                    .zip(&next[..words])
                {
                    *x = m | y;
                }
            }
            w.base = lo;
            w.mid = hi;
            w.back.fill(0);
        } else {
            for k in w.hi.max(w.mid)..hi {
                for (x, y) in w.back[..words].iter_mut().zip(self.mask_w::<W>(k)) {
                    *x |= y;
                }
            }
        }
        w.hi = hi;
        if lo < w.mid {
            let row = &w.suf[(lo - w.base) * words..(lo - w.base + 1) * words];
            for ((o, b), x) in out[..words].iter_mut().zip(&w.back[..words]).zip(row) {
                *o = b | x;
            }
        } else {
            for (o, b) in out[..words].iter_mut().zip(&w.back[..words]) {
                *o = *b;
            }
        }
    }

    /// [`BfMap::blocked`] for a window `[a, b]` that begins in the map's
    /// first slot (no boundary after the first lies at or before `a`), as
    /// each job's first try from now asks: the OR of the slots from the
    /// first to the last beginning no later than `b`, kept as prefix ORs
    /// while the map does not change before them. Returns false (and leaves
    /// `out` alone) for a window beginning later.
    pub(crate) fn blocked_first(&mut self, a: Time, b: Time, out: &mut [u64]) -> bool {
        let n = self.times.len();
        if n > 1 && self.times[1] <= a {
            return false;
        }
        let hi = self.times.partition_point(|&x| x <= b);
        if hi == 0 {
            out.fill(0);
            return true;
        }
        let w = self.words;
        if self.pre.len() < n * w {
            self.pre.resize(n * w, 0);
        }
        while self.pre_rows < hi {
            let k = self.pre_rows;
            let (before, row) = self.pre.split_at_mut(k * w);
            let row = &mut row[..w];
            let mask = &self.masks[k * w..(k + 1) * w];
            if k == 0 {
                row.copy_from_slice(mask);
            } else {
                let prev = &before[(k - 1) * w..];
                for ((r, m), p) in row.iter_mut().zip(mask).zip(prev) {
                    *r = m | p;
                }
            }
            self.pre_rows += 1;
        }
        out.copy_from_slice(&self.pre[(hi - 1) * w..hi * w]);
        true
    }

    /// Slurm's `later_start`: walking the slots from the one holding
    /// `start_res` to the first that begins after `end_time`, the end of the
    /// first slot after which a node of `part` reserved in it is free. The
    /// map ends at `map_end`; its last slot has no successor. (The pass asks
    /// [`BfMap::later_start_from`].)
    #[cfg(test)]
    pub(crate) fn later_start(
        &self,
        start_res: Time,
        end_time: Time,
        map_end: Time,
        part: &[u64],
    ) -> Option<Time> {
        let first = self.times.partition_point(|&x| x <= start_res);
        self.later_start_from(first, end_time, map_end, part)
    }

    /// [`BfMap::later_start`] with `first`, the index of the first boundary
    /// after `start_res`.
    pub(crate) fn later_start_from(
        &self,
        first: usize,
        end_time: Time,
        map_end: Time,
        part: &[u64],
    ) -> Option<Time> {
        // Boundaries at or before `start_res` are not checked; the walk
        // resumes at the first one after it, with the slot before it.
        let mut prev = first.checked_sub(1);
        for k in first..self.times.len() {
            let t = self.times[k];
            if t >= map_end {
                break;
            }
            if let Some(p) = prev {
                debug_assert_eq!(
                    self.frees[k],
                    self.mask(p)
                        .iter()
                        .zip(self.mask(k))
                        .any(|(before, after)| before & !after != 0)
                );
                let freed = self.frees[k]
                    && self
                        .mask(p)
                        .iter()
                        .zip(self.mask(k))
                        .zip(part)
                        .any(|((before, after), inp)| before & !after & inp != 0);
                if freed {
                    return Some(t);
                }
                if self.times[p] > end_time {
                    return None;
                }
            }
            prev = Some(k);
        }
        None
    }
}

#[cfg(test)]
mod tests;
