//! The classic policies' earliest-fit search as it was before the
//! deep-queue rework (main at f8e5fed): per planned job a fresh copy of the
//! state released end by end, `node_may_fit` of every partition node, and
//! node selection wherever node and GPU counts allow. Kept, behind the
//! `reference` feature, as the plain path the fast [`super::Planner`] must
//! agree with: `fast_conservative_decides_as_the_plain_one` and
//! `fast_easy_decides_as_the_plain_one` in
//! `crates/gresim-engine/tests/properties.rs` run random clusters and queues
//! through both and compare every decision.

use std::collections::BTreeSet;

use gresim_model::job::Time;
use gresim_model::{Allocation, ClusterState, JobIdx, NodeId, PartId};

use super::{first_fit, start_planned, Classic, Search};
use crate::select::{node_may_fit, SelectCache};
use crate::PassCtx;

/// Planned ends of the jobs started in this pass, and scratch space for the
/// earliest-fit search.
pub(super) struct Planner {
    /// (planned end, index in `ctx.started`), sorted.
    started_ends: Vec<(Time, usize)>,
    blk: Vec<u32>,
    avoid: Vec<bool>,
    fits: Vec<Option<u32>>,
    active: BTreeSet<JobIdx>,
}

impl Planner {
    pub(super) fn new(ctx: &PassCtx<'_>) -> Self {
        let n = ctx.cluster.nodes.len();
        Planner {
            started_ends: Vec::new(),
            blk: vec![0; n],
            avoid: vec![false; n],
            fits: vec![None; n],
            active: BTreeSet::new(),
        }
    }
}

impl Search<'_> for Planner {
    fn start(
        &mut self,
        ctx: &mut PassCtx<'_>,
        job: JobIdx,
        part: PartId,
        alloc: Allocation,
        w: Time,
    ) -> bool {
        start_planned(ctx, &mut self.started_ends, job, part, alloc, w).is_some()
    }

    fn earliest(
        &mut self,
        ctx: &PassCtx<'_>,
        cache: &mut SelectCache,
        policy: &Classic,
        job: JobIdx,
        part: PartId,
        w: Time,
    ) -> Option<(Time, Allocation)> {
        let now = ctx.now;
        let cluster = ctx.cluster;
        let req = std::sync::Arc::clone(&ctx.jobs[job.idx()].request);
        let pnodes = &cluster.partition(part).nodes;
        let mut future: Option<ClusterState> = None;
        let fits_of = |st: &ClusterState, id: NodeId| {
            node_may_fit(cluster, ctx.params, st.node(id), id, &req)
        };
        for &id in pnodes {
            self.fits[id.idx()] = fits_of(ctx.state, id);
        }
        let (mut n_fit, mut g_fit) = (0u32, 0u32);
        for &id in pnodes {
            count(self.fits[id.idx()], &mut n_fit, &mut g_fit, true);
        }
        let need_nodes = req.min_nodes.max(1);
        let check = req.nodelist.is_empty();
        // Running jobs past their planned end are planned to end next tick.
        let mut running = ctx
            .running
            .iter()
            .map(|&(e, j)| (e.max(now + 1), j))
            .peekable();
        let mut si = 0usize;
        let mut enters = policy.by_start.iter().peekable();
        let mut leaves = policy.by_end.iter().peekable();
        let mut t = now;
        let found = loop {
            // Release the running jobs planned to end by t.
            loop {
                let next_run = running.peek().map(|x| x.0);
                let next_started = self.started_ends.get(si).map(|x| x.0);
                let alloc: &Allocation = match (next_run, next_started) {
                    (Some(a), b) if a <= t && b.is_none_or(|b| a <= b) => {
                        let (_, j) = running.next().expect("peeked");
                        match ctx.jobs[j.idx()].runs.last() {
                            Some(r) => &r.alloc,
                            None => continue,
                        }
                    }
                    (_, Some(b)) if b <= t => {
                        si += 1;
                        &ctx.started[self.started_ends[si - 1].1].alloc
                    }
                    _ => break,
                };
                let st = future.get_or_insert_with(|| ctx.state.clone());
                let _ = st.release(cluster, alloc);
                for na in &alloc.nodes {
                    if cluster.in_partition(part, na.node) {
                        let i = na.node.idx();
                        let old = self.fits[i];
                        self.fits[i] = fits_of(st, na.node);
                        if self.blk[i] == 0 {
                            count(old, &mut n_fit, &mut g_fit, false);
                            count(self.fits[i], &mut n_fit, &mut g_fit, true);
                        }
                    }
                }
            }
            // Reservations over by t leave the window [t, t + w) ...
            while let Some(&&(e, j)) = leaves.peek() {
                if e > t {
                    break;
                }
                leaves.next();
                if self.active.remove(&j) {
                    if let Some(r) = &policy.resv[j.idx()] {
                        for id in &r.nodes {
                            let i = id.idx();
                            self.blk[i] -= 1;
                            if self.blk[i] == 0 {
                                self.avoid[i] = false;
                                if cluster.in_partition(part, *id) {
                                    count(self.fits[i], &mut n_fit, &mut g_fit, true);
                                }
                            }
                        }
                    }
                }
            }
            // ... and those beginning before t + w enter it.
            let wend = t.saturating_add(w);
            while let Some(&&(s, j)) = enters.peek() {
                if s >= wend {
                    break;
                }
                enters.next();
                if let Some(r) = &policy.resv[j.idx()] {
                    if r.end > t {
                        self.active.insert(j);
                        for id in &r.nodes {
                            let i = id.idx();
                            if self.blk[i] == 0 {
                                self.avoid[i] = true;
                                if cluster.in_partition(part, *id) {
                                    count(self.fits[i], &mut n_fit, &mut g_fit, false);
                                }
                            }
                            self.blk[i] += 1;
                        }
                    }
                }
            }
            let may = !check
                || (n_fit >= need_nodes && req.gpus_per_job.is_none_or(|pj| g_fit >= pj.count));
            if may {
                let st = future.as_ref().unwrap_or(&*ctx.state);
                if let Some(a) = first_fit(
                    cache,
                    cluster,
                    ctx.params,
                    st,
                    &req,
                    part,
                    Some(&self.avoid),
                ) {
                    break Some((t, a));
                }
            }
            // The next time availability can grow.
            let next = [
                running.peek().map(|x| x.0),
                self.started_ends.get(si).map(|x| x.0),
                leaves.peek().map(|x| x.0),
            ]
            .into_iter()
            .flatten()
            .min();
            match next {
                Some(n) => t = n.max(t + 1),
                None => break None,
            }
        };
        // Leave the scratch space clean for the next search.
        for j in std::mem::take(&mut self.active) {
            if let Some(r) = &policy.resv[j.idx()] {
                for id in &r.nodes {
                    self.blk[id.idx()] = 0;
                    self.avoid[id.idx()] = false;
                }
            }
        }
        found
    }
}

fn count(f: Option<u32>, n: &mut u32, g: &mut u32, add: bool) {
    if let Some(x) = f {
        if add {
            *n += 1;
            *g = g.saturating_add(x);
        } else {
            *n -= 1;
            *g = g.saturating_sub(x);
        }
    }
}
