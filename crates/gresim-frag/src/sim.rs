//! One run: tasks arrive one at a time and never leave; each is placed by a
//! policy or fails. After every arrival the simulator records the arrived GPU
//! request, the allocated GPU capacity and the cluster's fragmentation, as the
//! authors' simulator logs them.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::frag::{node_frag, GpuShareView, TypicalTask};
use crate::model::{NodeSpec, NodeState, Shape, TaskSpec};
use crate::policy::{
    best_fit_score, dot_prod_score, exclusive_devices, fgd_score_and_device, gpu_clustering_score,
    gpu_packing_score, tightest_fit_device, PolicyKind,
};

/// The cluster's state after one arrival. Capacities are counted in the
/// run's unit ([`Trace::unit_milli`] milli-GPUs each: a milli-GPU for GPU
/// sharing, a compute slice for MIG).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Step {
    /// Sum of the GPU requests of all tasks arrived so far (placed or not).
    pub arrived: u64,
    /// Allocated GPU capacity.
    pub used: u64,
    /// Idle GPU capacity.
    pub idle: u64,
    /// Fragmented idle GPU capacity (Σ of node F), in milli-GPUs.
    pub frag_milli: f64,
}

/// The trace of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The empty cluster first, then one step per task.
    pub steps: Vec<Step>,
    pub placed: usize,
    pub failed: usize,
    /// Node index each task went to, `None` when it failed.
    pub placement: Vec<Option<u32>>,
    /// Milli-GPUs per unit of [`Step`]'s capacities (1 for GPU sharing,
    /// 1000/7 for MIG compute slices).
    pub unit_milli: f64,
}

/// A way of slicing GPUs, as the simulator and the six policies see it: the
/// per-node free state, the task shape, the devices a placement takes, and
/// each policy's node score and device choice. [`Sharing`] is OpenB's
/// fractional sharing; [`crate::mig::MigSlicing`] is MIG.
pub trait Slicing {
    /// A node's free resources.
    type Node: Clone;
    /// Everything about a task that placement looks at.
    type Shape;
    /// Where on a node a placed task goes.
    type Devices;
    /// Whether the task can go on the node at all.
    fn fits(&self, n: &Self::Node, s: &Self::Shape) -> bool;
    /// A deterministic policy's integer score (0..=100) of a node the task
    /// fits; `frag` is the node's current fragmentation.
    fn score(&self, policy: PolicyKind, n: &Self::Node, s: &Self::Shape, frag: f64) -> i64;
    /// The devices `policy` gives the task on a node it fits (`None` only if
    /// it does not fit after all).
    fn devices(
        &self,
        policy: PolicyKind,
        n: &Self::Node,
        s: &Self::Shape,
        frag: f64,
        rng: &mut ChaCha8Rng,
    ) -> Option<Self::Devices>;
    /// Takes the task's resources on those devices.
    fn take(&self, n: &mut Self::Node, s: &Self::Shape, d: &Self::Devices);
    /// The node's fragmentation F, milli-GPUs.
    fn frag(&self, n: &Self::Node) -> f64;
    /// The node's idle GPU capacity, in units.
    fn idle(&self, n: &Self::Node) -> u64;
    /// The task's GPU request, in units.
    fn request(&self, s: &Self::Shape) -> u64;
    /// Milli-GPUs per unit.
    fn unit_milli(&self) -> f64;
}

/// OpenB's fractional GPU sharing under a task-size distribution.
#[derive(Copy, Clone, Debug)]
pub struct Sharing<'a> {
    pub dist: &'a [TypicalTask],
}

impl Slicing for Sharing<'_> {
    type Node = NodeState;
    type Shape = Shape;
    type Devices = Vec<usize>;

    #[inline]
    fn fits(&self, n: &NodeState, s: &Shape) -> bool {
        n.fits(s)
    }
    #[inline]
    fn score(&self, policy: PolicyKind, n: &NodeState, s: &Shape, frag: f64) -> i64 {
        score(policy, n, s, self.dist, frag)
    }
    fn devices(
        &self,
        policy: PolicyKind,
        n: &NodeState,
        s: &Shape,
        frag: f64,
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<usize>> {
        devices_for(policy, n, s, self.dist, frag, rng)
    }
    #[inline]
    fn take(&self, n: &mut NodeState, s: &Shape, d: &Vec<usize>) {
        n.take(s, d);
    }
    #[inline]
    fn frag(&self, n: &NodeState) -> f64 {
        node_frag(GpuShareView::from(n), self.dist)
    }
    #[inline]
    fn idle(&self, n: &NodeState) -> u64 {
        n.gpu_left_total()
    }
    #[inline]
    fn request(&self, s: &Shape) -> u64 {
        s.total_gpu_milli()
    }
    fn unit_milli(&self) -> f64 {
        1.0
    }
}

/// A sequence of tasks reduced to indices into a table of distinct shapes.
#[derive(Clone, Debug)]
pub struct ShapedTasks {
    pub shapes: Vec<Shape>,
    pub ids: Vec<u32>,
}

impl ShapedTasks {
    /// Interns the shapes of `tasks`, in order of first appearance.
    pub fn new<'a>(tasks: impl IntoIterator<Item = &'a TaskSpec>) -> Self {
        let mut index: std::collections::BTreeMap<Shape, u32> = Default::default();
        let mut shapes = Vec::new();
        let mut ids = Vec::new();
        for t in tasks {
            let s = t.shape();
            let id = *index.entry(s).or_insert_with(|| {
                shapes.push(s);
                (shapes.len() - 1) as u32
            });
            ids.push(id);
        }
        ShapedTasks { shapes, ids }
    }
}

/// Runs one placement experiment.
///
/// - `rank[n]`: node `n`'s tie-break rank (lowest wins among equal scores);
/// - `dist`: the workload's task-size distribution, for the measure and FGD;
/// - `rng`: the policy's own randomness (only Random uses it).
pub fn run(
    nodes: &[NodeSpec],
    tasks: &ShapedTasks,
    rank: &[u32],
    dist: &[TypicalTask],
    policy: PolicyKind,
    rng: &mut ChaCha8Rng,
) -> Trace {
    run_sliced(
        &Sharing { dist },
        nodes.iter().map(NodeState::new).collect(),
        &tasks.shapes,
        &tasks.ids,
        rank,
        policy,
        rng,
    )
}

/// Runs one placement experiment for any [`Slicing`]: `state` is the empty
/// cluster, the tasks arrive in the order `ids` (indices into `shapes`).
///
/// Every node gets an integer score from the policy; the highest wins and ties
/// go to the lowest `rank`. Random instead draws a feasible node uniformly.
/// Scores are cached per (shape, node) and recomputed only for nodes changed
/// since, as a placement changes one node.
pub fn run_sliced<S: Slicing>(
    slicing: &S,
    mut state: Vec<S::Node>,
    shapes: &[S::Shape],
    ids: &[u32],
    rank: &[u32],
    policy: PolicyKind,
    rng: &mut ChaCha8Rng,
) -> Trace {
    let n = state.len();
    let mut frag: Vec<f64> = state.iter().map(|s| slicing.frag(s)).collect();
    let mut frag_total: f64 = frag.iter().sum();
    let mut idle: u64 = state.iter().map(|s| slicing.idle(s)).sum();
    let mut used: u64 = 0;
    let mut arrived: u64 = 0;

    // cache[shape * n + node] = (node version it was computed at, score; -1 = infeasible).
    let mut cache: Vec<(u32, i32)> = vec![(0, 0); shapes.len() * n];
    let mut version: Vec<u32> = vec![1; n];
    let mut feasible: Vec<u32> = Vec::with_capacity(n);

    let mut steps = Vec::with_capacity(ids.len() + 1);
    let mut placement = Vec::with_capacity(ids.len());
    steps.push(Step {
        arrived: 0,
        used: 0,
        idle,
        frag_milli: frag_total,
    });
    let (mut placed, mut failed) = (0, 0);

    for &sid in ids {
        let s = &shapes[sid as usize];
        arrived += slicing.request(s);
        let row = &mut cache[sid as usize * n..(sid as usize + 1) * n];
        let chosen: Option<usize> = if policy == PolicyKind::Random {
            feasible.clear();
            for i in 0..n {
                if row[i].0 != version[i] {
                    row[i] = (version[i], if slicing.fits(&state[i], s) { 0 } else { -1 });
                }
                if row[i].1 >= 0 {
                    feasible.push(i as u32);
                }
            }
            if feasible.is_empty() {
                None
            } else {
                Some(feasible[rng.random_range(0..feasible.len())] as usize)
            }
        } else {
            let mut best: Option<(i32, u32, usize)> = None;
            for i in 0..n {
                if row[i].0 != version[i] {
                    let sc = if slicing.fits(&state[i], s) {
                        slicing.score(policy, &state[i], s, frag[i]) as i32
                    } else {
                        -1
                    };
                    row[i] = (version[i], sc);
                }
                let sc = row[i].1;
                if sc < 0 {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some((bs, br, _)) => sc > bs || (sc == bs && rank[i] < br),
                };
                if better {
                    best = Some((sc, rank[i], i));
                }
            }
            best.map(|b| b.2)
        };

        let chosen = chosen.and_then(|i| {
            slicing
                .devices(policy, &state[i], s, frag[i], rng)
                .map(|d| (i, d))
        });
        match chosen {
            None => {
                failed += 1;
                placement.push(None);
            }
            Some((i, devices)) => {
                let before = slicing.idle(&state[i]);
                slicing.take(&mut state[i], s, &devices);
                let after = slicing.idle(&state[i]);
                used += before - after;
                idle -= before - after;
                version[i] += 1;
                let f = slicing.frag(&state[i]);
                frag_total += f - frag[i];
                frag[i] = f;
                placed += 1;
                placement.push(Some(i as u32));
            }
        }
        steps.push(Step {
            arrived,
            used,
            idle,
            frag_milli: frag_total.max(0.0),
        });
    }
    Trace {
        steps,
        placed,
        failed,
        placement,
        unit_milli: slicing.unit_milli(),
    }
}

/// The devices a policy gives a task on a node it fits (`None` only if it
/// does not fit after all).
fn devices_for(
    policy: PolicyKind,
    node: &NodeState,
    s: &Shape,
    dist: &[TypicalTask],
    frag: f64,
    rng: &mut ChaCha8Rng,
) -> Option<Vec<usize>> {
    if !s.wants_gpu() {
        return Some(Vec::new());
    }
    if !s.is_share() {
        return exclusive_devices(node, s);
    }
    let d = match policy {
        PolicyKind::Random => {
            let able: Vec<usize> = node
                .gpus()
                .iter()
                .enumerate()
                .filter(|(_, &g)| g >= s.gpu_milli)
                .map(|(d, _)| d)
                .collect();
            if able.is_empty() {
                return None;
            }
            able[rng.random_range(0..able.len())]
        }
        PolicyKind::Fgd => fgd_score_and_device(node, s, dist, frag).1?,
        _ => tightest_fit_device(node, s)?,
    };
    Some(vec![d])
}

/// A node's score under a deterministic policy (Random is handled by the caller).
pub fn score(policy: PolicyKind, n: &NodeState, s: &Shape, dist: &[TypicalTask], frag: f64) -> i64 {
    match policy {
        PolicyKind::Random => 0,
        PolicyKind::DotProd => dot_prod_score(n, s),
        PolicyKind::GpuClustering => gpu_clustering_score(n, s),
        PolicyKind::GpuPacking => gpu_packing_score(n, s),
        PolicyKind::BestFit => best_fit_score(n, s),
        PolicyKind::Fgd => fgd_score_and_device(n, s, dist, frag).0,
    }
}
