//! `dynamic-mig`: Slurm's scheduler plus demand-driven MIG repartitioning
//! of idle GPUs, a policy beyond Slurm in the spirit of MISO (Li et al.,
//! SoCC'22).
//!
//! MISO predicts each job's best slice from a short MPS profile and moves
//! running jobs between partitions with checkpoints. This policy keeps the
//! part that needs neither: the pending jobs name the slice type they want,
//! and a GPU is repartitioned only while no job runs on it.
//!
//! Jobs are scheduled exactly as by `slurm` (the same main and backfill
//! passes; the policy wraps [`Fifo::with_backfill`]). After each pass the
//! policy compares the pending demand for the types dynamic GPUs can offer
//! with the free supply; when the demand for some type exceeds it, it picks
//! idle dynamic GPUs (every configured device free, no reconfiguration under
//! way, node schedulable with a free core) whose current devices no pending
//! job needs, and gives each the layout of its model that covers the most unmet
//! demand, weighted by compute slices. Ties go to the layout whose other
//! instances best match the mix of types requested so far, then to the
//! earlier layout in the catalog's enumeration. Only layouts NVIDIA publishes
//! are chosen ([`gresim_model::mig_dynamic::legal_layouts`] filtered by
//! [`gresim_model::mig_dynamic::is_published`]; the whole GPU is one): a
//! combination the slice model admits but NVIDIA does not list, such as
//! 4g + 3g on an A100, is left alone. The engine applies each change: the
//! GPU is out of service for the cluster's reconfiguration delay.

use std::collections::BTreeSet;

use gresim_model::job::{Job, JobSpec};
use gresim_model::mig_dynamic::{is_published, legal_layouts, DynamicMig, MigLayout};
use gresim_model::state::gpu_indices;
use gresim_model::{Cluster, ClusterState, GpuModelId, GpuTypeId, JobIdx, NodeId};

use crate::{EnqueueCtx, Fifo, MigReconfig, PassCtx, Policy, SchedParams};

/// Slurm's scheduler plus repartitioning of idle MIG GPUs.
#[derive(Debug)]
pub struct DynamicMigPolicy {
    inner: Fifo,
    /// Jobs in the queue (eligible, pending).
    queued: BTreeSet<JobIdx>,
    /// Changes decided and not yet taken by the engine.
    requests: Vec<MigReconfig>,
    /// GPUs requested so far, per GRES type id: the workload's mix.
    history: Vec<u64>,
    /// Legal layouts NVIDIA publishes, per GPU model, enumerated once.
    layouts: Vec<(GpuModelId, Vec<MigLayout>)>,
}

impl Default for DynamicMigPolicy {
    fn default() -> Self {
        Self::new()
    }
}

impl DynamicMigPolicy {
    pub fn new() -> Self {
        DynamicMigPolicy {
            inner: Fifo::with_backfill(),
            queued: BTreeSet::new(),
            requests: Vec::new(),
            history: Vec::new(),
            layouts: Vec::new(),
        }
    }

    fn layouts_of(&mut self, model: GpuModelId) -> &[MigLayout] {
        let i = match self.layouts.iter().position(|(m, _)| *m == model) {
            Some(i) => i,
            None => {
                let m = gresim_model::catalog::model(model);
                let published = legal_layouts(m)
                    .into_iter()
                    .filter(|l| is_published(m, l))
                    .collect();
                self.layouts.push((model, published));
                self.layouts.len() - 1
            }
        };
        &self.layouts[i].1
    }

    fn after_pass(&mut self, ctx: &PassCtx<'_>) {
        for s in &ctx.started {
            self.queued.remove(&s.job);
        }
        if let Some(dm) = ctx.cluster.dynamic_mig() {
            self.plan(ctx, dm);
        }
    }

    /// Decides which idle GPUs to repartition, and to what.
    fn plan(&mut self, ctx: &PassCtx<'_>, dm: &DynamicMig) {
        let cluster = ctx.cluster;
        let ntypes = cluster.gpu_types.len();
        // Pending demand for the types dynamic GPUs can offer.
        let mut demand = vec![0u64; ntypes];
        let mut any = false;
        for &job in &self.queued {
            for (ty, n) in typed_gpus(&ctx.jobs[job.idx()]) {
                if dm.can_offer(ty) {
                    demand[ty.idx()] += n;
                    any = true;
                }
            }
        }
        if !any {
            return;
        }
        // Free devices now, plus those of layouts being applied (or decided
        // in this pass and not yet applied).
        let mut supply = vec![0u64; ntypes];
        for (i, u) in ctx.state.nodes().iter().enumerate() {
            if !u.schedulable() {
                continue;
            }
            let node = &cluster.nodes[i];
            for g in gpu_indices(u.free_gpus) {
                if let Some(d) = node.gpus.get(usize::from(g)) {
                    supply[d.ty.idx()] += 1;
                }
            }
        }
        for g in &dm.gpus {
            if let Some((_, to)) = &g.pending {
                for ty in g.device_types(to) {
                    supply[ty.idx()] += 1;
                }
            }
        }
        let mut unmet: Vec<u64> = demand
            .iter()
            .zip(&supply)
            .map(|(d, s)| d.saturating_sub(*s))
            .collect();
        if unmet.iter().all(|&u| u == 0) {
            return;
        }
        let mut surplus: Vec<u64> = supply
            .iter()
            .zip(&demand)
            .map(|(s, d)| s.saturating_sub(*d))
            .collect();
        let sevenths: Vec<u64> = cluster
            .gpu_types
            .iter()
            .map(|t| u64::from(t.compute_sevenths()))
            .collect();
        if self.history.len() < ntypes {
            self.history.resize(ntypes, 0);
        }
        for (gi, g) in dm.gpus.iter().enumerate() {
            if unmet.iter().all(|&u| u == 0) {
                break;
            }
            let u = ctx.state.node(g.node);
            if g.pending.is_some()
                || !u.schedulable()
                || g.online_mask() & !u.free_gpus != 0
                || u.free_core_count() == 0
                || self.requests.iter().any(|r| r.gpu == gi)
            {
                continue;
            }
            // Its devices must not be ones a pending job is waiting for.
            let current = g.device_types(&g.layout);
            let mut needed = false;
            for ty in &current {
                let n = current.iter().filter(|t| *t == ty).count() as u64;
                needed |= n > surplus[ty.idx()];
            }
            if needed {
                continue;
            }
            let history = self.history.clone();
            let mut best: Option<Candidate> = None;
            for (li, l) in self.layouts_of(g.model).iter().enumerate() {
                if *l == g.layout {
                    continue;
                }
                let mut left = unmet.clone();
                let (mut covered, mut count, mut spare) = (0u64, 0u64, 0u64);
                for ty in g.device_types(l) {
                    let i = ty.idx();
                    if left[i] > 0 {
                        left[i] -= 1;
                        covered += sevenths[i];
                        count += 1;
                    } else {
                        spare += history[i] * sevenths[i];
                    }
                }
                if covered == 0 {
                    continue;
                }
                let score = (covered, spare, count);
                if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                    best = Some((score, li, left));
                }
            }
            let Some((_, li, left)) = best else {
                continue;
            };
            for ty in &current {
                surplus[ty.idx()] -= 1;
            }
            unmet = left;
            let to = self.layouts_of(g.model)[li].clone();
            self.requests.push(MigReconfig { gpu: gi, to });
        }
    }
}

/// A layout considered for a GPU: its score (compute sevenths of unmet
/// demand covered, fit of its other instances to the mix, instances
/// covering), its index among the model's layouts, and the demand it leaves.
type Candidate = ((u64, u64, u64), usize, Vec<u64>);

/// The typed GPUs a job asks for, in total: `(type, count)`.
fn typed_gpus(j: &Job) -> impl Iterator<Item = (GpuTypeId, u64)> + '_ {
    let r = &j.request;
    let nodes = u64::from(r.min_nodes.max(1));
    let tasks = u64::from(r.total_tasks(r.min_nodes.max(1)));
    let per_node = r
        .gpus_per_node
        .iter()
        .filter_map(move |g| g.ty.map(|t| (t, u64::from(g.count) * nodes)));
    let per_job = r
        .gpus_per_job
        .iter()
        .filter_map(|g| g.ty.map(|t| (t, u64::from(g.count))));
    let per_task = r
        .gpus_per_task
        .iter()
        .filter_map(move |g| g.ty.map(|t| (t, u64::from(g.count) * tasks)));
    per_node.chain(per_job).chain(per_task)
}

impl Policy for DynamicMigPolicy {
    fn accounting_rejection(
        &mut self,
        cluster: &Cluster,
        usage: &gresim_model::accounting::AcctUsage,
        spec: &gresim_model::JobSpec,
        job_cnt: u32,
    ) -> Option<(gresim_model::Reason, String)> {
        crate::acct_policy::submit_rejection(cluster, usage, spec, job_cnt)
    }

    fn name(&self) -> &'static str {
        "dynamic-mig"
    }

    fn submission_rejection(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        spec: &JobSpec,
    ) -> Option<String> {
        self.inner.submission_rejection(cluster, params, spec)
    }

    fn beyond_partition_limits(&self, cluster: &Cluster, job: &Job) -> bool {
        self.inner.beyond_partition_limits(cluster, job)
    }

    fn unavailable_at_submit(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        state: &ClusterState,
        job: &Job,
    ) -> Option<Vec<NodeId>> {
        self.inner
            .unavailable_at_submit(cluster, params, state, job)
    }

    fn cluster_changed(&mut self) {
        self.inner.cluster_changed();
    }

    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool {
        let ntypes = ctx.cluster.gpu_types.len();
        if self.history.len() < ntypes {
            self.history.resize(ntypes, 0);
        }
        // The mix counts each submission once, not each requeue.
        if self.queued.insert(job) && ctx.jobs[job.idx()].runs.is_empty() {
            for (ty, n) in typed_gpus(&ctx.jobs[job.idx()]) {
                self.history[ty.idx()] += n;
            }
        }
        self.inner.enqueue(job, ctx)
    }

    fn reprioritize(&mut self, ctx: &EnqueueCtx<'_>) {
        self.inner.reprioritize(ctx);
    }

    fn dequeue(&mut self, job: JobIdx, jobs: &[Job], cluster: &Cluster) {
        self.queued.remove(&job);
        self.inner.dequeue(job, jobs, cluster);
    }

    fn main_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.inner.main_pass(ctx);
        self.after_pass(ctx);
    }

    fn backfill_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.inner.backfill_pass(ctx);
        self.after_pass(ctx);
    }

    fn has_backfill(&self) -> bool {
        self.inner.has_backfill()
    }

    fn queued(&self) -> usize {
        self.inner.queued()
    }

    fn stats(&self) -> crate::PassStats {
        self.inner.stats()
    }

    fn take_mig_reconfigs(&mut self) -> Vec<MigReconfig> {
        std::mem::take(&mut self.requests)
    }
}
