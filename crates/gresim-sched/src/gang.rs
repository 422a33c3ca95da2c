//! Gang time-slicing's node selection (docs/preemption.md, "Gang
//! time-slicing"): a partition with `OverSubscribe=FORCE:N` (N > 1) under a
//! PreemptMode with GANG has N rows of cores, and a job that finds no idle
//! cores starts in a row where its cores are free, on cores other jobs of
//! the partition hold. Which of the jobs sharing a core runs when is the
//! engine's gang scheduler (`gresim-engine/src/run/gang.rs`); this module
//! only places the job, as cons_tres does.
//!
//! From the 22.05 source (SchedMD/slurm `slurm-22-05-8-1`, read, not
//! copied): `_job_test()` in src/plugins/select/cons_common/job_test.c
//! tries the idle cores first (step 1: every row of every partition taken
//! away; the ordinary selection), then, in gang mode, step 4: it sorts the
//! partition's rows (`part_data_sort_res()`: the fullest first) and tries
//! each, the free cores being the node's cores less that row's, and then an
//! empty row while the partition has fewer rows in use than `num_rows`.
//! The rows are rebuilt from the partition's jobs as
//! `part_data_build_row_bitmaps()` does: by first core, then size, each
//! into the first row it does not overlap. Memory and GRES are counted once
//! per job throughout (`select_node_usage`), suspended jobs included.
//!
//! A job with GPUs is placed the same way: a row frees only cores, and its
//! GPUs (like its memory) must be free on the live state, where every job
//! of the node holds its own, suspended ones too; gang.c never looks at
//! GRES, so two jobs on different GPUs of a node that share cores take
//! turns all the same.
//!
//! Beyond the source, gresim keeps the cores of other partitions' jobs out
//! of every row (Slurm's step 4 ignores them; docs/preemption.md, "Not
//! modelled").

use gresim_model::{Allocation, CoreSet, JobIdx, NodeId, PartId};

use crate::select::SelectCache;
use crate::PassCtx;

/// A job of the partition as the rows see it: its cores per node.
struct RowJob {
    key: (usize, u32, u32),
    cores: Vec<(NodeId, CoreSet)>,
}

/// One row: the cores its jobs hold, per node (sparse).
#[derive(Default, Clone)]
struct Row {
    cores: Vec<(NodeId, CoreSet)>,
    count: u32,
}

impl Row {
    fn on(&self, n: NodeId) -> CoreSet {
        self.cores
            .iter()
            .find(|(m, _)| *m == n)
            .map_or(CoreSet::EMPTY, |(_, c)| *c)
    }

    fn fits(&self, job: &RowJob) -> bool {
        job.cores.iter().all(|(n, c)| !self.on(*n).intersects(c))
    }

    fn add(&mut self, job: &RowJob) {
        for (n, c) in &job.cores {
            match self.cores.iter_mut().find(|(m, _)| m == n) {
                Some((_, x)) => x.union_with(c),
                None => self.cores.push((*n, *c)),
            }
            self.count += c.count();
        }
    }
}

fn row_job(alloc: &Allocation) -> RowJob {
    let first = alloc
        .nodes
        .iter()
        .find(|na| !na.cores.is_empty())
        .map_or((usize::MAX, 0), |na| {
            (na.node.idx(), na.cores.iter().next().unwrap_or(0))
        });
    let cpus: u32 = alloc.nodes.iter().map(|na| na.cpus).sum();
    RowJob {
        key: (first.0, first.1, cpus),
        cores: alloc.nodes.iter().map(|na| (na.node, na.cores)).collect(),
    }
}

/// The partition's rows, as `part_data_build_row_bitmaps()` builds them:
/// jobs by first core then size, each into the first row it fits in, the
/// rows sorted fullest first after each. A job that fits in no row (which
/// the gang scheduler's own placement never makes) joins the last one.
fn rows(jobs: &mut [RowJob], num_rows: usize) -> Vec<Row> {
    jobs.sort_by_key(|j| j.key);
    let mut rows: Vec<Row> = Vec::new();
    for j in jobs.iter() {
        let n = rows.len();
        match rows.iter().position(|r| r.fits(j)) {
            Some(k) => rows[k].add(j),
            None if n < num_rows => {
                let mut r = Row::default();
                r.add(j);
                rows.push(r);
            }
            None => {
                if let Some(r) = rows.last_mut() {
                    r.add(j);
                }
            }
        }
        rows.sort_by_key(|r| std::cmp::Reverse(r.count));
    }
    rows
}

/// A pending job of a time-sliced partition that does not fit on idle
/// cores: whether it fits in one of the partition's rows (step 4 of
/// `_job_test()`); if so it starts there now, on cores other jobs of the
/// partition hold (the engine's gang scheduler then decides whether it
/// runs or waits its turn); `prio` is its queue record's priority, as for
/// [`PassCtx::start`]. Returns whether it started.
pub fn row_start(
    ctx: &mut PassCtx<'_>,
    job: JobIdx,
    part: PartId,
    prio: u32,
    avoid: Option<&[bool]>,
    by_backfill: bool,
) -> bool {
    let (cluster, params) = (ctx.cluster, ctx.params);
    let p = cluster.partition(part);
    if !params.row_sharing(p, &ctx.jobs[job.idx()].request)
        || ctx.started.iter().any(|s| s.job == job)
    {
        return false;
    }
    // The partition's jobs (running, suspended, or started in this pass)
    // make its rows; every other allocation blocks its cores.
    let n_nodes = cluster.nodes.len();
    let mut members: Vec<RowJob> = Vec::new();
    let mut blocked = vec![CoreSet::EMPTY; n_nodes];
    let mut block = |a: &Allocation| {
        for na in &a.nodes {
            blocked[na.node.idx()].union_with(&na.cores);
        }
    };
    for &(_, j) in ctx.running {
        let ee = &ctx.jobs[j.idx()];
        let Some(run) = ee.runs.last() else {
            continue;
        };
        if ee.state == gresim_model::JobState::Running && run.partition == part {
            members.push(row_job(&run.alloc));
        } else {
            block(&run.alloc);
        }
    }
    for s in &ctx.started {
        if s.partition == part {
            members.push(row_job(&s.alloc));
        } else {
            block(&s.alloc);
        }
    }
    for (_, h) in ctx.completing {
        block(h);
    }
    if members.is_empty() {
        return false;
    }
    let num_rows = usize::from(p.oversubscribe);
    let rows = rows(&mut members, num_rows);
    let held = crate::preempt::with_completing(ctx, avoid);
    let avoid = held.as_deref().or(avoid);
    let req = &ctx.jobs[job.idx()].request;
    let mut cache = SelectCache::new();
    // Each row in turn, then an empty one while there is room for it.
    let empty = Row::default();
    let tries = rows.iter().chain((rows.len() < num_rows).then_some(&empty));
    let mut chosen = None;
    for row in tries {
        let mut trial = ctx.state.clone();
        let mut ok = true;
        for m in &members {
            for (n, c) in &m.cores {
                let mut lend = *c;
                lend.difference_with(&row.on(*n));
                lend.difference_with(&blocked[n.idx()]);
                lend.difference_with(&trial.node(*n).free_cores);
                if !lend.is_empty() && trial.lend_cores(cluster, *n, &lend).is_err() {
                    ok = false;
                }
            }
        }
        if !ok {
            continue;
        }
        if let Ok(a) = crate::select::select(&mut cache, cluster, params, &trial, req, part, avoid)
        {
            chosen = Some(a);
            break;
        }
    }
    let Some(alloc) = chosen else {
        return false;
    };
    // The cores other jobs hold are lent to this one on the live state, so
    // that it can be allocated; the engine counts each core once, and frees
    // it when its last holder ends.
    let mut lent: Vec<(NodeId, CoreSet)> = Vec::new();
    for na in &alloc.nodes {
        let mut c = na.cores;
        c.difference_with(&ctx.state.node(na.node).free_cores);
        if c.is_empty() {
            continue;
        }
        if ctx.state.lend_cores(cluster, na.node, &c).is_err() {
            for (n, c) in &lent {
                let _ = ctx.state.reclaim_cores(cluster, *n, c);
            }
            return false;
        }
        lent.push((na.node, c));
    }
    if ctx.start(job, part, alloc, by_backfill, prio).is_err() {
        for (n, c) in &lent {
            let _ = ctx.state.reclaim_cores(cluster, *n, c);
        }
        return false;
    }
    true
}
