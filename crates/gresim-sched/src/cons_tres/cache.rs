//! What node selection keeps between calls ([`SelectCache`]): the buffers
//! of one selection, the node evaluations by job shape ([`EvalCache`],
//! keyed by [`ShapeKey`]) and the per-shape node-set trees (`fit_tree`).

use gresim_model::job::JobRequest;
use gresim_model::state::NodeUsage;
use gresim_model::NodeId;

use super::{fit_tree, Cand, Eval, EvalScratch, FitScratch, GresList, JobCtx};

/// Buffers [`super::job_test`] reuses across calls, so a selection over a large
/// partition allocates nothing in the common case.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) cands: Vec<Cand>,
    pub(super) usable: Vec<bool>,
    pub(super) orig: Vec<bool>,
    pub(super) ev: EvalScratch,
    pub(super) fit: FitScratch,
}

/// What node selection keeps between calls: the buffers of [`super::job_test`],
/// the node evaluations by job shape ([`EvalCache`]) and the per-shape node-set
/// trees (`fit_tree`). Each policy owns one, and its passes and its admission
/// checks share it; nothing lives in the thread. The caches are pure
/// shortcuts: a fresh one gives the same selections, only slower. They know
/// nodes by id and GRES type, not by cluster: one cache serves one cluster,
/// and must be [`SelectCache::clear`]ed when its GRES types change (a MIG
/// repartitioning).
#[derive(Default)]
pub struct SelectCache {
    pub(super) scratch: Scratch,
    pub(super) eval: EvalCache,
    pub(super) trees: fit_tree::Trees,
}

impl SelectCache {
    pub fn new() -> Self {
        SelectCache::default()
    }

    /// Forgets every cached node evaluation and node-set tree.
    pub fn clear(&mut self) {
        self.eval = EvalCache::default();
        self.trees.clear();
    }
}

impl std::fmt::Debug for SelectCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectCache")
            .field("shapes", &self.eval.shapes.len())
            .field("trees", &self.trees.len())
            .finish_non_exhaustive()
    }
}

/// Node evaluations keyed by the job's shape (its request without the
/// fields `eval_node` does not read) and the node's exact usage. A node whose
/// usage has not changed since it was last evaluated for the same shape gets
/// the same answer without the work: the result is a pure function of the
/// key, so caching changes no decision.
#[derive(Default)]
pub(super) struct EvalCache {
    pub(super) shapes: Vec<ShapeKey>,
    /// Per node, a few recent entries.
    pub(super) nodes: Vec<[Option<CacheEntry>; CACHE_WAYS]>,
    pub(super) next: Vec<u8>,
    /// The shape [`EvalCache::shape_id`] found last.
    last_shape: u32,
}

pub(super) const CACHE_WAYS: usize = 8;
pub(super) const CACHE_SHAPES: usize = 256;

/// What [`super::eval_node`] (and [`super::cannot_fit`], [`super::Quick`]) read of a job: the
/// request without the fields none of them reads (time limit, partitions,
/// `-w`/`-x`/`-C`, and the node counts, which they see only through the
/// values derived from them in [`super::JobCtx`], kept here instead), and
/// `DefMemPerCPU`. Jobs that differ only in their node count (the
/// benchmark's 8-GPU jobs on 1, 2, 4 or 8 nodes) share one shape, so they
/// share the evaluation cache and one node-set tree (`fit_tree`), whose
/// leaves are those evaluations.
pub(super) struct ShapeKey {
    pub(super) req: JobRequest,
    pub(super) def_mem_per_cpu: Option<u64>,
    pub(super) gres: GresList,
    pub(super) cpt: u32,
    pub(super) min_tasks: u32,
    pub(super) max_tasks: u32,
    pub(super) min_cpus_node: u32,
    pub(super) row_use: gresim_model::RowUse,
}

impl ShapeKey {
    pub(super) fn of(j: &JobCtx<'_>) -> ShapeKey {
        let mut req = j.req.clone();
        req.time_limit = None;
        req.partitions.clear();
        req.nodelist.clear();
        req.exclude.clear();
        req.features.clear();
        req.min_nodes = 0;
        req.max_nodes = 0;
        req.max_nodes_open = false;
        req.switches = None;
        req.segment = None;
        ShapeKey {
            req,
            def_mem_per_cpu: j.params.def_mem_per_cpu,
            gres: j.gres,
            cpt: j.cpt,
            min_tasks: j.min_tasks,
            max_tasks: j.max_tasks,
            min_cpus_node: j.min_cpus_node,
            row_use: j.row_use,
        }
    }

    /// `ShapeKey::of(j) == *self`, without building the key (no clone of
    /// the request on every selection).
    pub(super) fn matches(&self, j: &JobCtx<'_>) -> bool {
        // Every field is named, so a new field fails to compile here until
        // it is placed on one side or the other (and in `of`).
        let JobRequest {
            min_nodes: _,
            max_nodes: _,
            max_nodes_open: _,
            ntasks,
            ntasks_per_node,
            cpus_per_task,
            mem,
            gpus_per_node,
            gpus_per_job,
            gpus_per_task,
            cpus_per_gpu,
            time_limit: _,
            partitions: _,
            nodelist: _,
            exclude: _,
            features: _,
            exclusive,
            oversubscribe,
            shared,
            switches: _,
            segment: _,
        } = j.req;
        let k = &self.req;
        // The counts that tell most shapes apart come first (the GPUs per
        // node first of all: jobs that differ only in them, such as the
        // benchmark's, are told apart by it alone); the GRES list, compared
        // as a block of memory, last.
        *gpus_per_node == k.gpus_per_node
            && self.min_tasks == j.min_tasks
            && self.max_tasks == j.max_tasks
            && self.min_cpus_node == j.min_cpus_node
            && self.cpt == j.cpt
            && self.def_mem_per_cpu == j.params.def_mem_per_cpu
            && *ntasks == k.ntasks
            && *ntasks_per_node == k.ntasks_per_node
            && *cpus_per_task == k.cpus_per_task
            && *mem == k.mem
            && *gpus_per_job == k.gpus_per_job
            && *gpus_per_task == k.gpus_per_task
            && *cpus_per_gpu == k.cpus_per_gpu
            && *exclusive == k.exclusive
            && *oversubscribe == k.oversubscribe
            && self.row_use == j.row_use
            && *shared == k.shared
            && self.gres == j.gres
    }
}

#[derive(Clone, Copy)]
pub(super) struct CacheEntry {
    pub(super) shape: u32,
    pub(super) first_pass: bool,
    pub(super) usage: NodeUsage,
    pub(super) eval: Option<Eval>,
}

impl EvalCache {
    pub(super) fn shape_id(&mut self, j: &JobCtx<'_>) -> Option<u32> {
        // Keys are distinct, so the last one found, asked first, is the
        // only match if it matches.
        let last = self.last_shape as usize;
        if self.shapes.get(last).is_some_and(|k| k.matches(j)) {
            return Some(last as u32);
        }
        // The others (`last` did not match).
        if let Some(i) = (0..self.shapes.len()).find(|&i| i != last && self.shapes[i].matches(j)) {
            self.last_shape = i as u32;
            return Some(i as u32);
        }
        if self.shapes.len() >= CACHE_SHAPES {
            return None;
        }
        self.shapes.push(ShapeKey::of(j));
        Some(self.shapes.len() as u32 - 1)
    }

    #[inline]
    pub(super) fn get_or(
        &mut self,
        shape: u32,
        id: NodeId,
        usage: &NodeUsage,
        first_pass: bool,
        f: impl FnOnce() -> Option<Eval>,
    ) -> Option<Eval> {
        let i = id.idx();
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, [None; CACHE_WAYS]);
            self.next.resize(i + 1, 0);
        }
        for e in self.nodes[i].iter().flatten() {
            if e.shape == shape && e.first_pass == first_pass && e.usage == *usage {
                return e.eval;
            }
        }
        let eval = f();
        let w = usize::from(self.next[i]) % CACHE_WAYS;
        self.nodes[i][w] = Some(CacheEntry {
            shape,
            first_pass,
            usage: *usage,
            eval,
        });
        self.next[i] = self.next[i].wrapping_add(1);
        eval
    }
}
