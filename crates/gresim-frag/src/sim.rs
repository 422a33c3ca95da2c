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

/// The cluster's state after one arrival.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Step {
    /// Sum of the GPU requests of all tasks arrived so far (placed or not), milli.
    pub arrived_milli: u64,
    /// Allocated GPU capacity, milli.
    pub used_milli: u64,
    /// Idle GPU capacity, milli.
    pub idle_milli: u64,
    /// Fragmented idle GPU capacity (Σ of node F), milli.
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
    let n = nodes.len();
    let mut state: Vec<NodeState> = nodes.iter().map(NodeState::new).collect();
    let mut frag: Vec<f64> = state
        .iter()
        .map(|s| node_frag(GpuShareView::from(s), dist))
        .collect();
    let mut frag_total: f64 = frag.iter().sum();
    let mut idle: u64 = state.iter().map(NodeState::gpu_left_total).sum();
    let mut used: u64 = 0;
    let mut arrived: u64 = 0;

    // cache[shape * n + node] = (node version it was computed at, score; -1 = infeasible).
    let mut cache: Vec<(u32, i32)> = vec![(0, 0); tasks.shapes.len() * n];
    let mut version: Vec<u32> = vec![1; n];
    let mut feasible: Vec<u32> = Vec::with_capacity(n);

    let mut steps = Vec::with_capacity(tasks.ids.len() + 1);
    let mut placement = Vec::with_capacity(tasks.ids.len());
    steps.push(Step {
        arrived_milli: 0,
        used_milli: 0,
        idle_milli: idle,
        frag_milli: frag_total,
    });
    let (mut placed, mut failed) = (0, 0);

    for &sid in &tasks.ids {
        let s = &tasks.shapes[sid as usize];
        arrived += s.total_gpu_milli();
        let row = &mut cache[sid as usize * n..(sid as usize + 1) * n];
        let chosen: Option<usize> = if policy == PolicyKind::Random {
            feasible.clear();
            for i in 0..n {
                if row[i].0 != version[i] {
                    row[i] = (version[i], if state[i].fits(s) { 0 } else { -1 });
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
                    let sc = if state[i].fits(s) {
                        score(policy, &state[i], s, dist, frag[i]) as i32
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

        let chosen = chosen
            .and_then(|i| devices_for(policy, &state[i], s, dist, frag[i], rng).map(|d| (i, d)));
        match chosen {
            None => {
                failed += 1;
                placement.push(None);
            }
            Some((i, devices)) => {
                let before = state[i].gpu_left_total();
                state[i].take(s, &devices);
                let after = state[i].gpu_left_total();
                used += before - after;
                idle -= before - after;
                version[i] += 1;
                let f = node_frag(GpuShareView::from(&state[i]), dist);
                frag_total += f - frag[i];
                frag[i] = f;
                placed += 1;
                placement.push(Some(i as u32));
            }
        }
        steps.push(Step {
            arrived_milli: arrived,
            used_milli: used,
            idle_milli: idle,
            frag_milli: frag_total.max(0.0),
        });
    }
    Trace {
        steps,
        placed,
        failed,
        placement,
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
