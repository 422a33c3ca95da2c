//! The six placement policies of the FGD paper, with the integer score
//! semantics of the authors' Kubernetes scheduler plugins.
//!
//! Every policy gives each feasible node an integer score in 0..=100; the
//! highest score wins and ties go to the node of lowest *rank* (the authors'
//! scheduler breaks ties by the smallest node name, and their node names carry
//! a random per-seed prefix, so the rank is a seeded random permutation).
//! The policy then picks the GPU devices on the chosen node.
//!
//! | policy | node score | GPU choice for a shared request |
//! |---|---|---|
//! | Random | one feasible node drawn uniformly | a fitting GPU drawn uniformly |
//! | DotProd | `100·(1 − ⟨free/max, req/max⟩/2)` over (CPU, total GPU) | tightest fit |
//! | GpuClustering | quarter bands by affinity, then by GPU use | tightest fit |
//! | GpuPacking | shared GPUs ≻ free GPUs on used nodes ≻ free nodes | tightest fit |
//! | BestFit | `100·(1 − Σ w·(free−req)/max)` over (CPU, total GPU) | tightest fit |
//! | FGD | `100·σ(−ΔF/1000)`, ΔF the increase of the node's fragmentation | the GPU with the best score |
//!
//! Whole-GPU requests always take the lowest-indexed fully free GPUs.

use serde::Serialize;

use crate::frag::{node_frag, GpuShareView, TypicalTask};
use crate::model::{NodeState, Shape, MAX_GPUS, MILLI};

/// CPU normaliser of DotProd and BestFit: 128 CPUs, in milli.
pub const MAX_SPEC_CPU: f64 = 128_000.0;
/// GPU normaliser of DotProd, BestFit and GPU Clustering: 8 GPUs, in milli.
pub const MAX_SPEC_GPU: i64 = 8_000;
/// Highest node score.
pub const MAX_SCORE: i64 = 100;

/// A placement policy.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum PolicyKind {
    Random,
    DotProd,
    GpuClustering,
    GpuPacking,
    BestFit,
    Fgd,
}

impl PolicyKind {
    /// All six, in the paper's order.
    pub const ALL: [PolicyKind; 6] = [
        PolicyKind::Random,
        PolicyKind::DotProd,
        PolicyKind::GpuClustering,
        PolicyKind::GpuPacking,
        PolicyKind::BestFit,
        PolicyKind::Fgd,
    ];

    /// Short name (`random`, `dotprod`, …).
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Random => "random",
            PolicyKind::DotProd => "dotprod",
            PolicyKind::GpuClustering => "clustering",
            PolicyKind::GpuPacking => "packing",
            PolicyKind::BestFit => "bestfit",
            PolicyKind::Fgd => "fgd",
        }
    }

    /// The authors' label in their result files (`01-Random`, …, `06-FGD`).
    pub fn upstream_label(self) -> &'static str {
        match self {
            PolicyKind::Random => "01-Random",
            PolicyKind::DotProd => "02-DotProd",
            PolicyKind::GpuClustering => "03-GpuClustering",
            PolicyKind::GpuPacking => "04-GpuPacking",
            PolicyKind::BestFit => "05-BestFit",
            PolicyKind::Fgd => "06-FGD",
        }
    }

    /// Parses a short name or an upstream label, case-insensitively.
    pub fn parse(s: &str) -> Option<PolicyKind> {
        let l = s.trim().to_ascii_lowercase();
        PolicyKind::ALL.into_iter().find(|p| {
            l == p.name()
                || l == p.upstream_label().to_ascii_lowercase()
                || l == p.upstream_label()[3..].to_ascii_lowercase()
        })
    }
}

/// `1 / (1 + e^-x)`.
#[inline]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// DotProd (Tetris): the node's free (CPU, total GPU) and the task's request,
/// both divided by (128 CPUs, 8 GPUs); the score falls as the dot product
/// grows, so nodes whose free resources are small where the task is large win.
pub fn dot_prod_score(n: &NodeState, s: &Shape) -> i64 {
    if n.cpu_left < s.cpu_milli {
        return 0;
    }
    dot_prod_raw(
        n.cpu_left as f64,
        s.cpu_milli as f64,
        n.gpu_left_total() as f64,
        s.total_gpu_milli() as f64,
    )
}

/// DotProd's score from free and requested (CPU milli, GPU milli), shared by
/// every way of slicing a GPU (the caller has checked the CPU fits).
pub fn dot_prod_raw(cpu_free: f64, cpu_req: f64, gpu_free: f64, gpu_req: f64) -> i64 {
    let gpu = MAX_SPEC_GPU as f64;
    let dot =
        (cpu_free / MAX_SPEC_CPU) * (cpu_req / MAX_SPEC_CPU) + (gpu_free / gpu) * (gpu_req / gpu);
    let score = 1.0 - dot / 2.0;
    (MAX_SCORE as f64 * score) as i64
}

/// GPU Clustering: keeps tasks of the same kind together. Bands of 25:
/// (75, 100] a node holding only tasks of this kind, (50, 75] a node holding
/// this kind among others, (25, 50] an empty node, [0, 25] a node holding only
/// other kinds; inside a band, the more GPU used the higher. A task without
/// GPUs scores 0 everywhere.
pub fn gpu_clustering_score(n: &NodeState, s: &Shape) -> i64 {
    let Some(kind) = s.affinity() else {
        return 0;
    };
    let kinds = n.affinity.iter().filter(|&&c| c > 0).count();
    gpu_clustering_raw(n.affinity[kind] > 0, kinds, n.gpu_left_total() as i64)
}

/// GPU Clustering's score from whether the node holds tasks of this kind, how
/// many kinds it holds, and its free GPU capacity in milli.
pub fn gpu_clustering_raw(same_kind: bool, kinds: usize, gpu_free_milli: i64) -> i64 {
    let used = (MAX_SCORE / 4) * (MAX_SPEC_GPU - gpu_free_milli) / MAX_SPEC_GPU;
    let band = if same_kind {
        if kinds == 1 {
            3
        } else {
            2
        }
    } else if kinds == 0 {
        1
    } else {
        0
    };
    used + MAX_SCORE * band / 4
}

/// GPU Packing: prefer (1) GPUs already shared, then (2) free GPUs on a node
/// already in use, then (3) a node with all GPUs free. A task without GPUs
/// scores 0 everywhere.
pub fn gpu_packing_score(n: &NodeState, s: &Shape) -> i64 {
    if !s.wants_gpu() {
        return 0;
    }
    let free = n.fully_free_gpus() as i64;
    if free == i64::from(n.num_gpu) {
        return packing_free_node(free);
    }
    let order = ascending_devices(n);
    let mut need = usize::from(s.num_gpu);
    let mut fully_free_used = 0i64;
    let mut shared_left_pct = 0i64;
    for &d in &order {
        if need == 0 {
            break;
        }
        let left = n.gpu_left[d];
        if s.gpu_milli <= left {
            need -= 1;
            if left == MILLI {
                fully_free_used += 1;
            }
            shared_left_pct += i64::from(left) * 100 / i64::from(MILLI);
        }
    }
    if need != 0 {
        return 0;
    }
    packing_used_node(fully_free_used, shared_left_pct)
}

/// GPU Packing's band (3), a node with all `free` GPUs free: fewer GPUs
/// better, within [free, 33].
pub fn packing_free_node(free: i64) -> i64 {
    (MAX_SCORE / 3 - free).max(free)
}

/// GPU Packing's bands (1) and (2) on a node already in use, from the GPUs
/// the task would take: how many of them are fully free, and the sum of
/// their free capacity in whole percent.
pub fn packing_used_node(fully_free_used: i64, shared_left_pct: i64) -> i64 {
    if fully_free_used > 0 {
        // (2): within [33, 50].
        return (MAX_SCORE / 2 - fully_free_used).max(MAX_SCORE / 3);
    }
    // (1): within [50, 100], the fuller the GPU the better.
    (MAX_SCORE - shared_left_pct / 10).max(MAX_SCORE / 2)
}

/// Best-fit: the weighted (½ CPU, ½ GPU) normalised free resources left after
/// placing, reversed so that the tightest node scores highest.
pub fn best_fit_score(n: &NodeState, s: &Shape) -> i64 {
    best_fit_raw(
        [n.cpu_left as f64, n.gpu_left_total() as f64],
        [s.cpu_milli as f64, s.total_gpu_milli() as f64],
    )
}

/// Best-fit's score from free and requested `[CPU milli, GPU milli]`; 0 when
/// either does not fit.
pub fn best_fit_raw(free: [f64; 2], req: [f64; 2]) -> i64 {
    let max = [MAX_SPEC_CPU, MAX_SPEC_GPU as f64];
    let mut score = 0.0;
    for i in 0..2 {
        if free[i] < req[i] {
            return 0;
        }
        score += (free[i] - req[i]) / max[i] * 0.5;
    }
    ((1.0 - score) * MAX_SCORE as f64) as i64
}

/// FGD's score of one outcome: `100·σ((F_before − F_after)/1000)`, truncated.
#[inline]
pub fn fgd_outcome_score(frag_before: f64, frag_after: f64) -> i64 {
    (sigmoid((frag_before - frag_after) / 1000.0) * MAX_SCORE as f64) as i64
}

/// FGD: the node score is the best outcome over the GPUs a shared task could
/// take (or the one outcome of a whole-GPU or CPU-only task), and the device is
/// the first GPU reaching it. `frag_before` is the node's current F.
pub fn fgd_score_and_device(
    n: &NodeState,
    s: &Shape,
    dist: &[TypicalTask],
    frag_before: f64,
) -> (i64, Option<usize>) {
    let mut after = n.clone();
    after.cpu_left = after.cpu_left.saturating_sub(s.cpu_milli);
    if s.is_share() && s.wants_gpu() {
        let mut best: Option<(i64, usize)> = None;
        // Devices with the same free capacity give the same outcome.
        let mut seen = [u32::MAX; MAX_GPUS];
        let mut seen_score = [0i64; MAX_GPUS];
        let mut nseen = 0;
        for (d, &left) in n.gpus().iter().enumerate() {
            if left < s.gpu_milli {
                continue;
            }
            let score = if let Some(k) = seen[..nseen].iter().position(|&v| v == left) {
                seen_score[k]
            } else {
                after.gpu_left[d] = left - s.gpu_milli;
                let f = node_frag(GpuShareView::from(&after), dist);
                after.gpu_left[d] = left;
                let sc = fgd_outcome_score(frag_before, f);
                seen[nseen] = left;
                seen_score[nseen] = sc;
                nseen += 1;
                sc
            };
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, d));
            }
        }
        match best {
            Some((sc, d)) => (sc, Some(d)),
            None => (0, None),
        }
    } else {
        if s.wants_gpu() {
            // Packing order: the least free GPU that is large enough first.
            let order = ascending_devices(n);
            let mut need = usize::from(s.num_gpu);
            for d in order {
                if need == 0 {
                    break;
                }
                if after.gpu_left[d] >= s.gpu_milli {
                    after.gpu_left[d] -= s.gpu_milli;
                    need -= 1;
                }
            }
        }
        let f = node_frag(GpuShareView::from(&after), dist);
        (fgd_outcome_score(frag_before, f), None)
    }
}

/// Device indices by free capacity, least first, stable.
fn ascending_devices(n: &NodeState) -> Vec<usize> {
    let mut order: Vec<usize> = (0..usize::from(n.num_gpu)).collect();
    order.sort_by_key(|&d| n.gpu_left[d]);
    order
}

/// The tightest-fitting GPU for a shared task: least free capacity that is
/// still enough, lowest index among equals.
pub fn tightest_fit_device(n: &NodeState, s: &Shape) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (d, &left) in n.gpus().iter().enumerate() {
        if left >= s.gpu_milli && best.is_none_or(|b| left < n.gpu_left[b]) {
            best = Some(d);
        }
    }
    best
}

/// The lowest-indexed GPUs that can take a whole-GPU task (for 1000-milli
/// requests: the lowest-indexed fully free GPUs).
pub fn exclusive_devices(n: &NodeState, s: &Shape) -> Option<Vec<usize>> {
    let want = usize::from(s.num_gpu);
    let devs: Vec<usize> = n
        .gpus()
        .iter()
        .enumerate()
        .filter(|(_, &g)| g >= s.gpu_milli)
        .map(|(d, _)| d)
        .take(want)
        .collect();
    (devs.len() == want).then_some(devs)
}

#[cfg(test)]
mod tests;
