//! The running jobs released one by one in planned-end order, shared by
//! every job a planning pass looks at: backfill's `_will_run_test()`
//! (`backfill.rs`), which brings the sweep to the new state and order when
//! the pass starts a job ([`Sweep::started`]), and the classic policies'
//! earliest-fit search (`classic.rs`), which starts it over then.
//!
//! [`Sweep`] logs each freed node's usage after each release and keeps a
//! few states after the first `k` ends for node selection; [`FitChanges`]
//! turns the log into the changes of one request shape's per-node fit, once
//! per shape, so that a job's planning reads a list of changes instead of
//! releasing jobs on its own copy of the state.

use gresim_model::state::NodeUsage;
use gresim_model::{Allocation, Cluster, ClusterState, NodeId, PartId};

/// The planned ends a sweep releases, in order.
pub(crate) trait Ends {
    fn count(&self) -> usize;
    fn alloc(&self, k: usize) -> &Allocation;
}

/// The sweep over one order of ends (see the module documentation).
#[derive(Default)]
pub(crate) struct Sweep {
    /// Per end index, in order: the nodes it frees, with their usage after.
    log: Vec<(usize, NodeId, NodeUsage)>,
    /// The state after the first `done` ends.
    state: Option<ClusterState>,
    done: usize,
    /// States after the first `k` ends, for node selection, the most
    /// recently used last.
    mats: Vec<(usize, ClusterState)>,
    /// States no longer needed, whose memory a new copy takes.
    spare: Vec<ClusterState>,
}

/// A copy of `from`, in the memory of a spare state if there is one.
fn copy_of(spare: &mut Vec<ClusterState>, from: &ClusterState) -> ClusterState {
    match spare.pop() {
        Some(mut st) => {
            st.clone_from(from);
            st
        }
        None => from.clone(),
    }
}

/// States [`Sweep`] keeps for node selection, and how far one is moved
/// rather than copied.
const MATS: usize = 6;
const MAT_MOVE: usize = 4;

impl Sweep {
    /// Starts over (the state or the order of ends changed), keeping the
    /// log's memory.
    pub(crate) fn reset(&mut self) {
        self.log.clear();
        self.spare.extend(self.state.take());
        self.done = 0;
        self.spare.extend(self.mats.drain(..).map(|(_, st)| st));
        self.spare.truncate(MATS + 1);
    }

    /// Releases the ends up to index `upto` (exclusive) from `now` (the
    /// current state), logging the usage of each node they free.
    #[inline]
    pub(crate) fn extend_to(
        &mut self,
        cluster: &Cluster,
        now: &ClusterState,
        ends: &(impl Ends + ?Sized),
        upto: usize,
    ) {
        while self.done < upto.min(ends.count()) {
            let spare = &mut self.spare;
            let st = self.state.get_or_insert_with(|| copy_of(spare, now));
            let alloc = ends.alloc(self.done);
            let _ = st.release(cluster, alloc);
            for na in &alloc.nodes {
                self.log.push((self.done, na.node, *st.node(na.node)));
            }
            self.done += 1;
        }
    }

    /// A job was started on `alloc` (`now` is the state with it) and its
    /// planned end inserted into the order of ends at index `at`: the sweep
    /// is brought to the new state and order instead of starting over.
    /// Its resources were free now, so no end released holds them, and in
    /// every state of the sweep they are taken out where the job has not
    /// ended yet: the kept states before `at` and the log's usages before
    /// `at` lose them; the states after `at` are unchanged (the job taken
    /// and given back); an end at `at` frees its nodes to their usage after
    /// the ends before it, as the job had never run, and every later end
    /// index moves up by one. GPU shares are not in the log's usages: an
    /// allocation holding some starts the sweep over.
    pub(crate) fn started(
        &mut self,
        cluster: &Cluster,
        now: &ClusterState,
        alloc: &Allocation,
        at: usize,
    ) {
        if self.done == 0 && self.mats.is_empty() {
            self.reset();
            return;
        }
        if alloc.nodes.iter().any(|na| na.share.is_some()) {
            self.reset();
            return;
        }
        let on = |id: NodeId| alloc.nodes.iter().find(|na| na.node == id);
        let pos = self.log.partition_point(|e| e.0 < at);
        let freed: Vec<(usize, NodeId, NodeUsage)> = if at < self.done {
            alloc
                .nodes
                .iter()
                .map(|na| {
                    let before = self.log[..pos].iter().rev().find(|e| e.1 == na.node);
                    let u = match before {
                        Some(e) => e.2,
                        None => {
                            let mut u = *now.node(na.node);
                            u.give(na, alloc);
                            u
                        }
                    };
                    (at, na.node, u)
                })
                .collect()
        } else {
            Vec::new()
        };
        for e in &mut self.log[..pos] {
            if let Some(na) = on(e.1) {
                e.2.take(na, alloc);
            }
        }
        for e in &mut self.log[pos..] {
            e.0 += 1;
        }
        self.log.splice(pos..pos, freed);
        if at < self.done {
            self.done += 1;
        } else if let Some(st) = &mut self.state {
            if st.allocate(cluster, alloc).is_err() {
                self.reset();
                return;
            }
        }
        self.mats.retain_mut(|(k, st)| {
            if *k > at {
                *k += 1;
                true
            } else {
                st.allocate(cluster, alloc).is_ok()
            }
        });
    }

    /// The state after the first `at` ends (at most the ends released): the
    /// sweep's own state, or a kept copy moved there (jobs ending given back
    /// or released), or a new copy of the nearest kept state.
    #[inline]
    pub(crate) fn state_at(
        &mut self,
        cluster: &Cluster,
        now: &ClusterState,
        ends: &(impl Ends + ?Sized),
        at: usize,
    ) -> &ClusterState {
        if at == self.done {
            let spare = &mut self.spare;
            return self.state.get_or_insert_with(|| copy_of(spare, now));
        }
        if let Some(i) = self.mats.iter().position(|(k, _)| *k == at) {
            let m = self.mats.remove(i);
            self.mats.push(m);
            return &self.mats.last().expect("just pushed").1;
        }
        let dist = |k: usize| k.abs_diff(at);
        let near = (0..self.mats.len()).min_by_key(|&i| dist(self.mats[i].0));
        let (mut k, mut st) = match near {
            // A kept state close by is moved, not copied.
            Some(i) if dist(self.mats[i].0) <= MAT_MOVE || self.mats.len() >= MATS => {
                self.mats.remove(i)
            }
            // Otherwise a copy of the nearest: a kept state, the sweep's, or
            // the current one.
            _ => match near {
                Some(i) if self.state.is_none() || dist(self.done) > dist(self.mats[i].0) => {
                    (self.mats[i].0, copy_of(&mut self.spare, &self.mats[i].1))
                }
                _ => match &self.state {
                    Some(sw) => (self.done, copy_of(&mut self.spare, sw)),
                    None => (0, copy_of(&mut self.spare, now)),
                },
            },
        };
        while k > at {
            if st.allocate(cluster, ends.alloc(k - 1)).is_err() {
                // Replay from the current state instead.
                st.clone_from(now);
                k = 0;
                break;
            }
            k -= 1;
        }
        while k < at {
            let _ = st.release(cluster, ends.alloc(k));
            k += 1;
        }
        self.mats.push((k, st));
        &self.mats.last().expect("just pushed").1
    }
}

/// How the ends change one request shape's fit `F` on a partition's nodes:
/// per end index, in order, the nodes whose fit it changes, with the fit
/// before and after. A node's fit depends only on the jobs on it, so
/// releasing also the jobs on nodes a planning may not use changes nothing
/// on the nodes it may: one order serves every node mask and every job of
/// the shape.
pub(crate) struct FitChanges<F> {
    pub(crate) changes: Vec<(usize, NodeId, Option<F>, Option<F>)>,
    /// `bounds[k]`: how many of `changes` come from ends before index `k`,
    /// for every `k` the log has been read up to (so that a reader finds
    /// the changes of the ends it released without searching).
    bounds: Vec<u32>,
    /// The fits after the log's first `seen` entries.
    fits: Vec<Option<F>>,
    seen: usize,
}

impl<F> Default for FitChanges<F> {
    fn default() -> Self {
        FitChanges {
            changes: Vec::new(),
            bounds: Vec::new(),
            fits: Vec::new(),
            seen: 0,
        }
    }
}

impl<F: Copy + PartialEq> FitChanges<F> {
    /// Starts over (the sweep did), keeping the memory.
    pub(crate) fn reset(&mut self) {
        self.changes.clear();
        self.bounds.clear();
        self.fits.clear();
        self.seen = 0;
    }

    /// How many of `changes` come from ends before index `k`, where
    /// [`FitChanges::extend_to`] has read that far (`k` at most its `upto`
    /// and the sweep's released ends); the count is a search otherwise.
    #[inline]
    pub(crate) fn before(&self, k: usize) -> usize {
        match self.bounds.get(k) {
            Some(&b) => b as usize,
            None => self.changes.partition_point(|c| c.0 < k),
        }
    }

    /// Records the changes of the sweep's log up to end index `upto`
    /// (exclusive), the sweep having released that far. `fits0` are the
    /// fits in the current state, `fit` a node's fit in a usage.
    #[inline]
    pub(crate) fn extend_to(
        &mut self,
        cluster: &Cluster,
        part: PartId,
        fits0: &[Option<F>],
        sweep: &Sweep,
        upto: usize,
        fit: impl Fn(&NodeUsage, NodeId) -> Option<F>,
    ) {
        if self.fits.is_empty() {
            self.fits.extend_from_slice(fits0);
        }
        while let Some(&(k, id, u)) = sweep.log.get(self.seen) {
            if k >= upto {
                break;
            }
            // Every change of the ends before `k` is in.
            while self.bounds.len() <= k {
                self.bounds.push(self.changes.len() as u32);
            }
            if cluster.in_partition(part, id) {
                let n = id.idx();
                let old = self.fits[n];
                let new = fit(&u, id);
                if old != new {
                    self.fits[n] = new;
                    self.changes.push((k, id, old, new));
                }
            }
            self.seen += 1;
        }
        // The log holds the ends the sweep released, in order: those before
        // both `upto` and the sweep's count are all in.
        while self.bounds.len() <= upto.min(sweep.done) {
            self.bounds.push(self.changes.len() as u32);
        }
    }
}
