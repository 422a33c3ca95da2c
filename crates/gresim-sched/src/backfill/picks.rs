//! Node selections a backfill pass has made on the states of its sweep.
//!
//! A plan's selection (`try_select_nodes` on the state after the first `at`
//! planned ends, skipping the blocked nodes) is a function of the request
//! (less its time limit, which selection does not read), the partition, that
//! state and the blocked nodes alone. In a deep queue many jobs ask the same
//! of the same state: on the SWF system a quarter to a half of a pass's
//! selections repeat one it made before. [`Picks`] reads those back.
//!
//! The states are named by `at`, which holds only while the order of ends
//! and the current state stand: a start changes both, so the pass empties
//! the record then ([`Picks::clear`]), and a lookup also checks the current
//! state's change position, so that no other change of it goes unnoticed.
//!
//! Where selections seldom repeat (the GPU cluster's deep queue: about one
//! in twenty) the record costs more than it saves, so it is kept only in
//! passes where the share of repeats seen lately is at least 1/16, and
//! sampled in every 16th pass otherwise. Either way the selections are the
//! same: only the work differs.

use gresim_model::job::{JobRequest, Time};
use gresim_model::{ClusterState, NodeId, PartId};

/// The record (see the module documentation).
#[derive(Default)]
pub(crate) struct Picks {
    /// The requests asked, their time limits cleared, with their hashes and
    /// the next request of their bucket.
    reqs: Vec<(JobRequest, u64, u32)>,
    req_buckets: Buckets,
    /// Node selections, by the number of ends released.
    sels: Table<Option<Vec<NodeId>>>,
    /// Whole `_will_run_test()` walks ([`Walked`]).
    walks: Table<Walked>,
    /// The current state's change position the entries hold for.
    at_state: Option<(u64, u64)>,
    /// Whether this pass keeps the record; lookups and repeats found
    /// lately (halved as they grow); passes begun.
    on: bool,
    lookups: u32,
    hits: u32,
    passes: u32,
}

/// No entry (the end of a chain).
const NONE: u32 = u32::MAX;

/// Most entries one table keeps; past it, it starts over.
const MAX_ENTRIES: usize = 1 << 16;

/// What a recorded result is a function of: the request, the partition, a
/// number (the ends released, or the cutoff) and the blocked nodes.
#[derive(Clone, Copy)]
pub(crate) struct Key<'a> {
    pub(crate) req: ReqId,
    pub(crate) part: PartId,
    pub(crate) n: u64,
    pub(crate) blocked: &'a [u64],
}

impl Key<'_> {
    fn hash(&self) -> u64 {
        let mut m = Mixed::default();
        m.write_u64(u64::from(self.req.0) | u64::from(self.part.0) << 32);
        m.write_u64(self.n);
        for &w in self.blocked {
            m.write_u64(w);
        }
        m.finish()
    }
}

/// Entries chained per bucket of their hashes: a power-of-two array of
/// each bucket's first entry (the newest).
#[derive(Default)]
struct Buckets(Vec<u32>);

impl Buckets {
    fn first(&self, h: u64) -> u32 {
        match self.0.len() {
            0 => NONE,
            n => self.0[h as usize & (n - 1)],
        }
    }

    /// Makes entry `i` of hash `h` its bucket's first; returns the entry it
    /// goes before.
    fn push(&mut self, h: u64, i: u32) -> u32 {
        let n = self.0.len();
        std::mem::replace(&mut self.0[h as usize & (n - 1)], i)
    }

    /// Room for one more entry beside `chains`, each entry's hash and link
    /// to the next of its bucket, in entry order: past half full, twice as
    /// many buckets, and the chains made again (the newest still first).
    fn make_room<'a>(&mut self, chains: impl ExactSizeIterator<Item = (u64, &'a mut u32)>) {
        let len = chains.len();
        if len + 1 < self.0.len() / 2 {
            return;
        }
        let n = (2 * len + 4).next_power_of_two().max(64);
        self.0.clear();
        self.0.resize(n, NONE);
        for (i, (h, next)) in chains.enumerate() {
            *next = self.push(h, i as u32);
        }
    }

    /// Empties the buckets, as many as before.
    fn empty(&mut self) {
        self.0.fill(NONE);
    }
}

/// Results by [`Key`], chained per bucket of their hashes.
struct Table<V> {
    entries: Vec<Entry<V>>,
    buckets: Buckets,
    /// The entries' blocked-node bitmaps, one after another.
    words: Vec<u64>,
}

impl<V> Default for Table<V> {
    fn default() -> Self {
        Table {
            entries: Vec::new(),
            buckets: Buckets::default(),
            words: Vec::new(),
        }
    }
}

struct Entry<V> {
    hash: u64,
    next: u32,
    req: u32,
    part: PartId,
    n: u64,
    /// Where its blocked nodes begin in [`Table::words`].
    blocked: u32,
    value: V,
}

impl<V> Table<V> {
    fn clear(&mut self) {
        if !self.entries.is_empty() {
            self.entries.clear();
            self.buckets.empty();
            self.words.clear();
        }
    }

    fn find(&self, key: &Key<'_>, h: u64) -> Option<&V> {
        let mut i = self.buckets.first(h);
        while i != NONE {
            let e = &self.entries[i as usize];
            let b = e.blocked as usize;
            if e.hash == h
                && e.req == key.req.0
                && e.part == key.part
                && e.n == key.n
                && self.words.get(b..b + key.blocked.len()) == Some(key.blocked)
            {
                return Some(&e.value);
            }
            i = e.next;
        }
        None
    }

    fn insert(&mut self, key: &Key<'_>, h: u64, value: V) {
        if self.entries.len() >= MAX_ENTRIES {
            self.clear();
        }
        let chains = self.entries.iter_mut().map(|e| (e.hash, &mut e.next));
        self.buckets.make_room(chains);
        let next = self.buckets.push(h, self.entries.len() as u32);
        self.entries.push(Entry {
            hash: h,
            next,
            req: key.req.0,
            part: key.part,
            n: key.n,
            blocked: self.words.len() as u32,
            value,
        });
        self.words.extend_from_slice(key.blocked);
    }
}

/// What a `_will_run_test()` walk found. A walk goes through the same
/// groups whatever its cutoff, each starting no earlier than the one
/// before, and stops at the first group that fits or starts after the
/// cutoff: one walk answers for every cutoff at or past the start it
/// found, and one that found none up to its cutoff for every cutoff up to
/// that.
#[derive(Clone)]
enum Walked {
    Found(Time, Vec<NodeId>),
    NoneUpTo(Time),
}

/// A request as the record knows it.
#[derive(Clone, Copy)]
pub(crate) struct ReqId(u32);

impl Picks {
    /// Forgets every result (the pass started a job).
    pub(crate) fn clear(&mut self) {
        self.sels.clear();
        self.walks.clear();
        self.at_state = None;
    }

    /// Forgets the requests too (a pass begins), and decides whether this
    /// pass keeps the record.
    pub(crate) fn restart(&mut self) {
        self.clear();
        if !self.reqs.is_empty() {
            self.reqs.clear();
            self.req_buckets.empty();
        }
        self.passes = self.passes.wrapping_add(1);
        if self.lookups >= 4096 {
            self.lookups /= 2;
            self.hits /= 2;
        }
        self.on = self.lookups < 256
            || u64::from(self.hits) * 16 >= u64::from(self.lookups)
            || self.passes.is_multiple_of(16);
    }

    /// The record's name for `req`.
    pub(crate) fn request(&mut self, req: &JobRequest) -> ReqId {
        if !self.on {
            return ReqId(NONE);
        }
        let h = req.shape_hash();
        let mut i = self.req_buckets.first(h);
        while i != NONE {
            let (r, rh, next) = &self.reqs[i as usize];
            if *rh == h && r.same_shape(req) {
                return ReqId(i);
            }
            i = *next;
        }
        let chains = self.reqs.iter_mut().map(|(_, rh, next)| (*rh, next));
        self.req_buckets.make_room(chains);
        let id = self.reqs.len() as u32;
        let next = self.req_buckets.push(h, id);
        let mut r = req.clone();
        r.time_limit = None;
        self.reqs.push((r, h, next));
        ReqId(id)
    }

    /// Whether this pass records, for a lookup on the current state `now`:
    /// a change of it since the record was filled empties the record.
    fn usable(&mut self, now: &ClusterState) -> bool {
        let ix = now.fit_index();
        if !self.on || !ix.tracked() {
            return false;
        }
        self.lookups += 1;
        let pos = ix.position();
        if self.at_state != Some(pos) {
            self.clear();
            self.at_state = Some(pos);
        }
        true
    }

    /// The selection for `key` (`n`: on the state after that many ends),
    /// made by `select` unless recorded. `now` is the current state.
    pub(crate) fn selection(
        &mut self,
        now: &ClusterState,
        key: Key<'_>,
        select: impl FnOnce() -> Option<Vec<NodeId>>,
    ) -> Option<Vec<NodeId>> {
        if !self.usable(now) {
            return select();
        }
        let h = key.hash();
        if let Some(v) = self.sels.find(&key, h) {
            self.hits += 1;
            return v.clone();
        }
        let v = select();
        self.sels.insert(&key, h, v.clone());
        v
    }

    /// What the walk for `key` (`n` unused) with `cutoff` finds, if the
    /// record tells ([`Walked`]). `now` is the current state.
    pub(crate) fn walk(
        &mut self,
        now: &ClusterState,
        key: Key<'_>,
        cutoff: Time,
    ) -> Option<Option<(Time, Vec<NodeId>)>> {
        if !self.usable(now) {
            return None;
        }
        let v = match self.walks.find(&key, key.hash())? {
            Walked::Found(t, nodes) => Some((*t <= cutoff).then(|| (*t, nodes.clone()))),
            Walked::NoneUpTo(c) => (cutoff <= *c).then_some(None),
        };
        self.hits += u32::from(v.is_some());
        v
    }

    /// Records what the walk for `key` with `cutoff` found (after
    /// [`Picks::walk`] could not tell); it takes the place of an entry
    /// that could not.
    pub(crate) fn walked(
        &mut self,
        key: Key<'_>,
        cutoff: Time,
        found: &Option<(Time, Vec<NodeId>)>,
    ) {
        if self.on && self.at_state.is_some() {
            let w = match found {
                Some((t, nodes)) => Walked::Found(*t, nodes.clone()),
                None => Walked::NoneUpTo(cutoff),
            };
            self.walks.insert(&key, key.hash(), w);
        }
    }
}

/// A multiply-and-rotate hash of integers and bitmaps (its high bits mixed
/// into the low ones, which pick the bucket).
#[derive(Default)]
struct Mixed(u64);

impl Mixed {
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ self.0 >> 29
    }
}

#[cfg(test)]
mod tests;
