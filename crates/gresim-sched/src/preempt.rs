//! Preemption as Slurm 22.05 decides it (docs/preemption.md).
//!
//! When a pending job does not fit on free resources, slurmctld asks which
//! running jobs it may preempt (`slurm_find_preemptable_jobs()`,
//! src/slurmctld/preempt.c), sorts them by the plugin's preemption
//! priority (lowest first; `preempt_youngest_first` sorts by start time
//! instead), and lets select/cons_tres find out how many of them must go
//! (`_run_now()` in cons_common/job_test.c): it removes the candidates one
//! by one from a copy of the node usage until the job fits, reorders them
//! up to `preempt_reorder_count` times so that the candidates on the nodes
//! it chose come first, and preempts the candidates it removed that overlap
//! the chosen nodes. The preemptor does not start in that pass; it starts
//! once their resources are free.
//!
//! Which jobs may preempt which is the plugin's:
//! - `preempt/partition_prio`: a job of a partition with a higher
//!   PriorityTier preempts jobs of lower tiers, unless their partition's
//!   PreemptMode is OFF; the mode and GraceTime are the preemptee's
//!   partition's, else the global ones. Its preemption priority is the
//!   tier, then the node count.
//! - `preempt/qos`: a job whose QOS lists the preemptee's QOS in `Preempt`
//!   (or the same QOS with `WITHIN`, by job priority); the mode and
//!   GraceTime are the preemptee's QOS's. Its preemption priority is the
//!   QOS priority, then the node count.
//!
//! A job runs at least `PreemptExemptTime` (its QOS's, else slurm.conf's)
//! before it may be preempted. Only CANCEL and REQUEUE take resources back
//! through that trial. SUSPEND,GANG under `preempt/partition_prio` is
//! [`suspend_start`]: a higher-tier job starts at once on the cores of
//! lower-tier jobs, which the gang scheduler suspends (they keep their
//! memory and GPUs: a preemptor that needs their GPUs never fits, one that
//! needs only their cores, or other GPUs of the node, does).

use gresim_model::job::{Job, JobSpec, Time};
use gresim_model::preempt::{PreemptMode, PreemptType};
use gresim_model::{Allocation, Cluster, JobIdx, PartId};

use crate::select::SelectCache;
use crate::{PassCtx, SchedParams};

/// The QOS record of `spec`, when the cluster has accounting.
fn qos_of<'c>(cluster: &'c Cluster, spec: &JobSpec) -> Option<&'c gresim_model::accounting::Qos> {
    let a = cluster.accounting()?;
    let ja = spec.acct()?;
    a.qos.get(ja.qos as usize)
}

/// Whether backfill plans `spec` as its QOS's `NoReserve` flag says
/// (`_attempt_backfill()`): with any PreemptMode set
/// (`slurm_conf.preempt_mode`), for one minute instead of its time limit;
/// and, whether or not one is set, without a reservation.
pub fn no_reserve(cluster: &Cluster, spec: &JobSpec) -> bool {
    qos_of(cluster, spec).is_some_and(|q| q.flags.no_reserve)
}

/// The PreemptMode that applies to stop `job` running in `part`
/// (`slurm_job_preempt_mode()`; GANG and WITHIN filtered out).
pub fn job_mode(
    cluster: &Cluster,
    params: &SchedParams,
    spec: &JobSpec,
    part: PartId,
) -> PreemptMode {
    let global = params.preempt.mode.mode;
    match params.preempt.ptype {
        PreemptType::None => PreemptMode::Off,
        PreemptType::PartitionPrio => cluster.partition(part).preempt_mode.unwrap_or(global),
        PreemptType::Qos => qos_of(cluster, spec)
            .and_then(|q| q.preempt_mode)
            .map_or(global, |m| m.mode),
    }
}

/// The GraceTime of `job` running in `part`: its partition's
/// (partition_prio) or its QOS's (qos).
pub fn grace_time(cluster: &Cluster, params: &SchedParams, spec: &JobSpec, part: PartId) -> u64 {
    match params.preempt.ptype {
        PreemptType::None => 0,
        PreemptType::PartitionPrio => cluster.partition(part).grace_time,
        PreemptType::Qos => qos_of(cluster, spec).map_or(0, |q| q.grace_time),
    }
}

/// The plugin's preemption priority (`PREEMPT_DATA_PRIO`): candidates are
/// tried lowest first.
fn preempt_prio(cluster: &Cluster, params: &SchedParams, spec: &JobSpec, job: &Job) -> u32 {
    let Some(run) = job.runs.last() else {
        return 0;
    };
    let high = match params.preempt.ptype {
        PreemptType::None => 0,
        PreemptType::PartitionPrio => u32::from(cluster.partition(run.partition).priority_tier),
        PreemptType::Qos => qos_of(cluster, spec).map_or(0, |q| q.priority.min(0xffff)),
    };
    let nodes = (run.alloc.nodes.len() as u32).min(0xffff);
    (high << 16) + nodes
}

/// Whether `or` (pending, in `or_part`, whose record there has priority
/// `or_prio`) may preempt the running `ee` (`preempt_p_preemptable()`).
fn may_preempt(
    cluster: &Cluster,
    params: &SchedParams,
    specs: &[JobSpec],
    (or, or_part, or_prio): (&Job, PartId, u32),
    ee: &Job,
) -> bool {
    let Some(run) = ee.runs.last() else {
        return false;
    };
    match params.preempt.ptype {
        PreemptType::None => false,
        PreemptType::PartitionPrio => {
            let ee_part = cluster.partition(run.partition);
            ee_part.priority_tier < cluster.partition(or_part).priority_tier
                && ee_part.preempt_mode != Some(PreemptMode::Off)
        }
        PreemptType::Qos => {
            let Some(q_or) = qos_of(cluster, &specs[or.sub as usize]) else {
                return false;
            };
            let (Some(a_or), Some(a_ee)) =
                (specs[or.sub as usize].acct(), specs[ee.sub as usize].acct())
            else {
                return false;
            };
            if a_or.qos == a_ee.qos {
                let within =
                    q_or.preempt_mode.is_some_and(|m| m.within) || params.preempt.mode.within;
                within && or_prio > run_priority(params, ee, run)
            } else {
                q_or.preempt.contains(&a_ee.qos)
            }
        }
    }
}

/// A running job's priority as same-QOS preemption (`WITHIN`) compares it:
/// `job_ptr->priority`, which `preempt_p_preemptable()` (preempt_qos.c)
/// reads. Under priority/multifactor it is what the job's queue record had
/// when it started ([`gresim_model::job::Run::priority`]): the decay thread
/// (`decay_apply_weighted_factors()`) recomputes pending jobs only, without
/// `PriorityFlags=CALCULATE_RUNNING`. Under priority/basic it is the job's
/// own value.
pub fn run_priority(params: &SchedParams, job: &Job, run: &gresim_model::job::Run) -> u32 {
    match params.priority {
        crate::priority::PriorityConfig::Basic => job.priority,
        crate::priority::PriorityConfig::Multifactor(_) => run.priority,
    }
}

/// Whether `job` has run its PreemptExemptTime (`acct_policy_is_job_preempt_exempt()`).
fn exempt(cluster: &Cluster, params: &SchedParams, spec: &JobSpec, job: &Job, now: Time) -> bool {
    let Some(run) = job.runs.last() else {
        return true;
    };
    let from_qos = match (cluster.accounting(), spec.acct()) {
        (Some(a), Some(ja)) => ja
            .qos_order(a)
            .into_iter()
            .flatten()
            .find_map(|q| a.qos[q as usize].preempt_exempt_time),
        _ => None,
    };
    match from_qos.or(params.preempt.exempt_time) {
        Some(t) => now < run.start.saturating_add(t),
        None => false,
    }
}

/// The running jobs `job` (pending, in `part`, whose record there has
/// priority `prio`) may preempt, in the order Slurm tries them
/// (`slurm_find_preemptable_jobs()`). `prio` is what `_schedule()` and
/// `_attempt_backfill()` set `job_ptr->priority` to before they try the
/// record (its queue record's priority), so what same-QOS preemption
/// compares for the preemptor.
pub fn candidates(ctx: &PassCtx<'_>, job: JobIdx, part: PartId, prio: u32) -> Vec<JobIdx> {
    let (cluster, params) = (ctx.cluster, ctx.params);
    if !params.preempt.enabled() {
        return Vec::new();
    }
    let or = &ctx.jobs[job.idx()];
    let mut out: Vec<JobIdx> = ctx
        .running
        .iter()
        .map(|&(_, j)| j)
        .filter(|&j| j != job)
        // A job preempted at once earlier in this pass is gone already.
        .filter(|&j| !ctx.preempted.iter().any(|p| p.job == j && p.grace == 0))
        .filter(|&j| {
            let ee = &ctx.jobs[j.idx()];
            let spec = &ctx.specs[ee.sub as usize];
            ee.state == gresim_model::JobState::Running
                && may_preempt(cluster, params, ctx.specs, (or, part, prio), ee)
                && !exempt(cluster, params, spec, ee, ctx.now)
                && ee
                    .runs
                    .last()
                    .is_some_and(|r| r.alloc.node_ids().any(|n| cluster.in_partition(part, n)))
        })
        .collect();
    // Slurm's job list is in creation order: the job table's.
    out.sort_unstable();
    if params.preempt.youngest_first {
        out.sort_by_key(|j| {
            std::cmp::Reverse(ctx.jobs[j.idx()].runs.last().map_or(0, |r| r.start))
        });
    } else {
        out.sort_by_key(|j| {
            let ee = &ctx.jobs[j.idx()];
            preempt_prio(cluster, params, &ctx.specs[ee.sub as usize], ee)
        });
    }
    out
}

/// `avoid` with the nodes of COMPLETING jobs added, when there are any:
/// such a node takes no job, whatever is preempted or suspended
/// (`cg_node_bitmap` in `_pick_best_nodes()`).
pub(crate) fn with_completing(ctx: &PassCtx<'_>, avoid: Option<&[bool]>) -> Option<Vec<bool>> {
    if ctx.completing.is_empty() {
        return None;
    }
    let mut v = avoid.map_or_else(|| vec![false; ctx.cluster.nodes.len()], <[bool]>::to_vec);
    for na in ctx.completing.iter().flat_map(|(_, h)| &h.nodes) {
        if let Some(x) = v.get_mut(na.node.idx()) {
            *x = true;
        }
    }
    Some(v)
}

/// What `_run_now()` decides for a job that does not fit on free
/// resources: the candidates to preempt, with where the job would run
/// once they are gone, or `None` when preempting does not make room.
pub fn preemptees(
    ctx: &PassCtx<'_>,
    job: JobIdx,
    part: PartId,
    prio: u32,
    avoid: Option<&[bool]>,
) -> Option<(Vec<JobIdx>, Allocation)> {
    let order = candidates(ctx, job, part, prio);
    if order.is_empty() {
        return None;
    }
    let (cluster, params) = (ctx.cluster, ctx.params);
    let held = with_completing(ctx, avoid);
    let avoid = held.as_deref().or(avoid);
    let req = &ctx.jobs[job.idx()].request;
    let ends_job = |j: JobIdx| {
        let ee = &ctx.jobs[j.idx()];
        let part = ee.runs.last().map_or(part, |r| r.partition);
        job_mode(cluster, params, &ctx.specs[ee.sub as usize], part).ends_job()
    };
    let alloc_of = |j: JobIdx| ctx.jobs[j.idx()].runs.last().map(|r| &r.alloc);
    let trial = Trial {
        cluster,
        params,
        state: ctx.state,
        req,
        part,
        avoid,
    };
    trial.run(order, &alloc_of, &ends_job)
}

/// cons_tres's `_run_now()` trial for one pending job on a given node usage.
pub struct Trial<'a> {
    pub cluster: &'a Cluster,
    pub params: &'a SchedParams,
    /// The usage now, with every candidate still running.
    pub state: &'a gresim_model::ClusterState,
    pub req: &'a gresim_model::JobRequest,
    pub part: PartId,
    pub avoid: Option<&'a [bool]>,
}

impl Trial<'_> {
    /// Removes the candidates of `order` (preemption order; `ends_job`
    /// says whether a candidate's mode lets it be removed) one at a time
    /// until the job fits, reordering as `_run_now()` does. Returns the
    /// preemptees, in order, and the nodes the job would get.
    pub fn run<'j, K: Copy + PartialEq>(
        &self,
        mut order: Vec<K>,
        alloc_of: &dyn Fn(K) -> Option<&'j Allocation>,
        ends_job: &dyn Fn(K) -> bool,
    ) -> Option<(Vec<K>, Allocation)> {
        let (cluster, params) = (self.cluster, self.params);
        let mut cache = SelectCache::new();
        let mut pass_count: u32 = 0;
        let cand_cnt = order.len() as u32;
        loop {
            // Remove candidates one by one until the job fits.
            let mut trial = self.state.clone();
            let mut fit: Option<(usize, Allocation)> = None;
            for (i, &c) in order.iter().enumerate() {
                if !ends_job(c) {
                    continue;
                }
                let Some(a) = alloc_of(c) else { continue };
                if trial.release(cluster, a).is_err() {
                    continue;
                }
                if let Ok(alloc) = crate::select::select(
                    &mut cache, cluster, params, &trial, self.req, self.part, self.avoid,
                ) {
                    fit = Some((i, alloc));
                    break;
                }
            }
            let (i, alloc) = fit?;
            let stop = pass_count > params.preempt.reorder_count;
            pass_count += 1;
            if stop || cand_cnt <= pass_count {
                let mut chosen = vec![false; cluster.nodes.len()];
                for n in alloc.node_ids() {
                    chosen[n.idx()] = true;
                }
                let list: Vec<K> = order[..=i]
                    .iter()
                    .copied()
                    .filter(|&c| ends_job(c))
                    .filter(|&c| alloc_of(c).is_some_and(|a| a.node_ids().any(|n| chosen[n.idx()])))
                    .collect();
                return (!list.is_empty()).then_some((list, alloc));
            }
            if params.preempt.strict_order {
                // The last candidate removed goes first; the others keep their order.
                let c = order.remove(i);
                order.insert(0, c);
            } else {
                // The candidates removed before it, by how many of the chosen
                // nodes they hold; it goes first, the rest after.
                let usable = |c: K| -> usize {
                    alloc_of(c).map_or(0, |a| {
                        a.node_ids()
                            .filter(|n| alloc.node_ids().any(|m| m == *n))
                            .count()
                    })
                };
                let mut keyed: Vec<(usize, K)> = order
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| {
                        let u = match k.cmp(&i) {
                            std::cmp::Ordering::Less => usable(c),
                            std::cmp::Ordering::Equal => 99_999,
                            std::cmp::Ordering::Greater => 0,
                        };
                        (u, c)
                    })
                    .collect();
                keyed.sort_by_key(|&(u, _)| std::cmp::Reverse(u));
                order = keyed.into_iter().map(|(_, c)| c).collect();
            }
        }
    }
}

/// Preempts for `job` what [`preemptees`] names, as `_preempt_jobs()` does:
/// nothing more while an earlier preemption for it may still be under way
/// (`kill_pending`: within KillWait + MessageTimeout of it). Returns,
/// when jobs are being preempted for it (the job then waits, reason
/// Resources: `select_nodes()` answers ESLURM_NODES_BUSY), the nodes it
/// would run on once they are gone.
pub fn preempt_for(
    ctx: &mut PassCtx<'_>,
    job: JobIdx,
    part: PartId,
    prio: u32,
    avoid: Option<&[bool]>,
    last_preempt: &mut Option<Time>,
) -> Option<Allocation> {
    let (list, alloc) = preemptees(ctx, job, part, prio, avoid)?;
    let kill_pending = last_preempt
        .is_none_or(|t| t.saturating_add(ctx.params.preempt.kill_pending_wait) <= ctx.now);
    if !kill_pending {
        return Some(alloc);
    }
    for &ee in &list {
        let j = &ctx.jobs[ee.idx()];
        let Some(run) = j.runs.last() else { continue };
        let spec = &ctx.specs[j.sub as usize];
        let mode = job_mode(ctx.cluster, ctx.params, spec, run.partition);
        let grace = grace_time(ctx.cluster, ctx.params, spec, run.partition);
        ctx.preempt(gresim_policy::Preempt {
            job: ee,
            mode,
            grace,
            by: job,
        });
    }
    *last_preempt = Some(ctx.now);
    Some(alloc)
}

/// SUSPEND,GANG under `preempt/partition_prio` for a job that does not fit
/// on free resources: whether it fits on the cores of running (or already
/// suspended) jobs of lower-tier partitions whose mode is SUSPEND; if so,
/// it starts there now, and those it overlaps are suspended. Returns
/// whether it started.
///
/// From the 22.05 source: cons_tres's `_job_test()` (cons_common/job_test.c)
/// in gang mode, when idle resources do not suffice (step 1), drops from
/// the free cores only the partition rows of higher tiers (step 2) and of
/// the same tier (step 3): the rows of lower tiers stay usable, while the
/// node usage (memory, GRES) still counts every job, suspended ones too
/// (`select_p_job_suspend()` releases nothing for the gang scheduler). So
/// `_run_now()` succeeds without a preemptee list and the job starts; then
/// `gs_job_start()` (src/slurmctld/gang.c) casts its shadow over the lower
/// tiers, and `_update_active_row()` suspends each of their jobs whose cores
/// conflict with it. The exempt time is not consulted on that path. A job
/// with GPUs is suspended the same way (gang.c compares cores only): it
/// keeps its GPUs, so a preemptor that needs them never fits, while one
/// that needs only its cores, or other GPUs of the node, does
/// (`preempt_suspend_gpu_heldout`). Jobs holding GPU shares (gres/shard,
/// gres/mps) are left out.
pub fn suspend_start(
    ctx: &mut PassCtx<'_>,
    job: JobIdx,
    part: PartId,
    prio: u32,
    avoid: Option<&[bool]>,
    by_backfill: bool,
) -> bool {
    let (cluster, params) = (ctx.cluster, ctx.params);
    if params.preempt.ptype != PreemptType::PartitionPrio
        || (params.preempt.mode.mode != PreemptMode::Suspend
            && !cluster
                .partitions
                .iter()
                .any(|p| p.preempt_mode == Some(PreemptMode::Suspend)))
        || ctx.started.iter().any(|s| s.job == job)
    {
        return false;
    }
    let tier = cluster.partition(part).priority_tier;
    let n_nodes = cluster.nodes.len();
    // The candidates' cores, and the cores of everything else allocated
    // (running jobs of other tiers or modes, what this pass started,
    // COMPLETING holds), per node.
    let suspendable = |j: JobIdx| {
        let ee = &ctx.jobs[j.idx()];
        let Some(run) = ee.runs.last() else {
            return false;
        };
        let ee_part = cluster.partition(run.partition);
        ee.state == gresim_model::JobState::Running
            && j != job
            && ee_part.priority_tier < tier
            && ee_part.preempt_mode != Some(PreemptMode::Off)
            && job_mode(cluster, params, &ctx.specs[ee.sub as usize], run.partition)
                == PreemptMode::Suspend
            && run.alloc.nodes.iter().all(|na| na.share.is_none())
            && run.alloc.node_ids().any(|n| cluster.in_partition(part, n))
    };
    let mut cand: Vec<JobIdx> = ctx
        .running
        .iter()
        .map(|&(_, j)| j)
        .filter(|&j| suspendable(j))
        .collect();
    if cand.is_empty() {
        return false;
    }
    let mut lendable = vec![gresim_model::CoreSet::EMPTY; n_nodes];
    let mut blocked = vec![gresim_model::CoreSet::EMPTY; n_nodes];
    // `cand` is in the order of `running`: a cursor tells its jobs.
    let mut next = 0;
    for &(_, j) in ctx.running {
        let is_cand = cand.get(next) == Some(&j);
        next += usize::from(is_cand);
        let Some(run) = ctx.jobs[j.idx()].runs.last() else {
            continue;
        };
        let into = if is_cand { &mut lendable } else { &mut blocked };
        for na in &run.alloc.nodes {
            into[na.node.idx()].union_with(&na.cores);
        }
    }
    for na in ctx
        .started
        .iter()
        .flat_map(|s| &s.alloc.nodes)
        .chain(ctx.completing.iter().flat_map(|(_, h)| &h.nodes))
    {
        blocked[na.node.idx()].union_with(&na.cores);
    }
    let held = with_completing(ctx, avoid);
    let avoid = held.as_deref().or(avoid);
    let mut trial = ctx.state.clone();
    for (i, c) in lendable.iter_mut().enumerate() {
        if c.is_empty() {
            continue;
        }
        let n = gresim_model::NodeId::from_idx(i);
        c.difference_with(&blocked[i]);
        c.difference_with(&trial.node(n).free_cores);
        if trial.lend_cores(cluster, n, c).is_err() {
            return false;
        }
    }
    let req = &ctx.jobs[job.idx()].request;
    let mut cache = SelectCache::new();
    let Ok(alloc) = crate::select::select(&mut cache, cluster, params, &trial, req, part, avoid)
    else {
        return false;
    };
    // Each overlapped job lends what it holds of the chosen cores; higher
    // tiers first, so that a core one suspended job lent to another is
    // lent on by the one holding it.
    cand.sort_by_key(|&j| {
        let ee = &ctx.jobs[j.idx()];
        let t = ee
            .runs
            .last()
            .map_or(0, |r| cluster.partition(r.partition).priority_tier);
        (std::cmp::Reverse(t), j)
    });
    let mut taken = vec![gresim_model::CoreSet::EMPTY; n_nodes];
    let mut decisions = Vec::new();
    for &j in &cand {
        let Some(run) = ctx.jobs[j.idx()].runs.last() else {
            continue;
        };
        let mut cores = Vec::new();
        for na in &run.alloc.nodes {
            let Some(a) = alloc.nodes.iter().find(|a| a.node == na.node) else {
                continue;
            };
            let mut c = na.cores;
            c.intersect_with(&a.cores);
            c.difference_with(&taken[na.node.idx()]);
            c.difference_with(&ctx.state.node(na.node).free_cores);
            if !c.is_empty() {
                taken[na.node.idx()].union_with(&c);
                cores.push((na.node, c));
            }
        }
        if !cores.is_empty() {
            decisions.push(gresim_policy::Suspend {
                job: j,
                by: job,
                cores,
            });
        }
    }
    let n_dec = decisions.len();
    for d in decisions {
        if ctx.suspend(d).is_err() {
            return false;
        }
    }
    if ctx.start(job, part, alloc, by_backfill, prio).is_err() {
        // A policy bug: give the cores back and leave the job waiting.
        let k = ctx.suspended.len() - n_dec;
        for d in ctx.suspended.drain(k..) {
            for (n, c) in &d.cores {
                let _ = ctx.state.reclaim_cores(cluster, *n, c);
            }
        }
        return false;
    }
    true
}

/// What backfill's preemption did for a job ([`backfill_preempt`]).
#[derive(Debug)]
pub enum BfPreempt {
    /// Nothing: it fits on free resources, or preempting makes no room.
    No,
    /// It started over suspended jobs (SUSPEND,GANG).
    Started,
    /// It preempts (or waits for its earlier preemptions, or for a
    /// preemptee's grace time): it would run on these nodes once they are
    /// gone.
    Waits(Allocation),
}

/// Backfill's preemption: a job that does not fit on free resources now
/// starts over suspended jobs ([`suspend_start`]) or preempts what
/// [`preemptees`] names. `prio` is the priority of the job's record in
/// `part`.
///
/// In Slurm (`_attempt_backfill()` in src/plugins/sched/backfill/
/// backfill.c, 22.05) `_try_sched()` tests the job with every preemption
/// candidate gone (`_will_run_test()`); it would start now, so
/// `_start_job()` calls `select_nodes()`, which preempts (or, within
/// KillWait + MessageTimeout of its last preemption or while a preemptee
/// runs its grace time, preempts nothing more) and answers
/// ESLURM_NODES_BUSY; backfill then "drops through and reserves these
/// resources": the nodes it tested are reserved for the job from now for
/// its time limit (`_add_reservation()`), so no later job of the pass
/// starts on them. [`BfPreempt::Waits`] names those nodes.
pub fn backfill_preempt(
    ctx: &mut PassCtx<'_>,
    cache: &mut SelectCache,
    job: JobIdx,
    part: PartId,
    prio: u32,
    preempt_start: &mut [Option<Time>],
) -> BfPreempt {
    let req = &ctx.jobs[job.idx()].request;
    if crate::select::select(cache, ctx.cluster, ctx.params, ctx.state, req, part, None).is_ok() {
        return BfPreempt::No;
    }
    if suspend_start(ctx, job, part, prio, None, true) {
        return BfPreempt::Started;
    }
    match preempt_start
        .get_mut(job.idx())
        .and_then(|last| preempt_for(ctx, job, part, prio, None, last))
    {
        Some(alloc) => BfPreempt::Waits(alloc),
        None => BfPreempt::No,
    }
}
