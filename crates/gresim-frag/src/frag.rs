//! FGD's fragmentation measure (Weng et al., ATC'23, §3).
//!
//! The fragmentation of a node is the *expected* amount of its idle GPU
//! capacity that a task drawn from the workload's distribution of task sizes
//! could not use:
//!
//! ```text
//! F(n) = Σ_m p_m · unusable(n, m)
//! ```
//!
//! where for a task `m`
//! - that cannot run on `n` at all (no GPU wanted, wrong GPU model, not enough
//!   CPU, or too few GPUs with enough free capacity), every idle milli-GPU of
//!   `n` is unusable;
//! - that can run on `n`, the unusable part is the idle capacity on GPUs whose
//!   free capacity is smaller than the task's per-GPU request.
//!
//! A task that needs no GPU therefore counts the node's whole idle GPU
//! capacity as fragment, as in the authors' simulator (their "XL"/"XR"
//! quadrants are summed with the others). The cluster's fragmentation is the
//! sum over nodes, and its fragmentation *ratio* is that sum over the total
//! idle GPU capacity.
//!
//! The measure is written against the [`Fragmentable`] trait so that other
//! ways of slicing a GPU reuse it unchanged: [`crate::mig`] implements
//! `Fragmentable` for a node of MIG-partitioned GPUs (idle = free compute
//! slices in milli-GPU units, unusable = slices on GPUs where no legal start
//! position of the task's profile is free) and gets the measure, the cluster
//! sums and the FGD policy's "minimise the increase of F" for free.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::{NodeState, Shape, TaskSpec, TypeMask, MILLI};

/// One entry of the workload's task-size distribution.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct TypicalTask {
    pub cpu_milli: u64,
    pub num_gpu: u8,
    pub gpu_milli: u32,
    pub gpu_spec: TypeMask,
    /// Probability of this size; the list sums to 1.
    pub freq: f64,
}

/// Something whose idle accelerator capacity can be split into the part a
/// task could use and the part it could not.
pub trait Fragmentable<T> {
    /// Idle capacity, in the measure's unit (milli-GPUs).
    fn idle(&self) -> f64;
    /// The part of [`Fragmentable::idle`] that task `t` cannot use.
    fn unusable_by(&self, t: &T) -> f64;
}

/// `F(n) = Σ p_t · unusable(n, t)` over a distribution of `(task, p)`.
pub fn expected_fragmentation<T, N: Fragmentable<T>>(
    node: &N,
    dist: impl IntoIterator<Item = (T, f64)>,
) -> f64 {
    if node.idle() <= 0.0 {
        return 0.0;
    }
    dist.into_iter()
        .map(|(t, p)| p * node.unusable_by(&t))
        .sum()
}

/// A view of a node's free resources for the measure: the per-GPU free
/// capacity, the free CPU and the GPU model.
#[derive(Copy, Clone, Debug)]
pub struct GpuShareView<'a> {
    pub cpu_left: u64,
    pub gpu_model: u8,
    pub gpu_left: &'a [u32],
}

impl<'a> From<&'a NodeState> for GpuShareView<'a> {
    fn from(n: &'a NodeState) -> Self {
        GpuShareView {
            cpu_left: n.cpu_left,
            gpu_model: n.gpu_model,
            gpu_left: n.gpus(),
        }
    }
}

impl Fragmentable<TypicalTask> for GpuShareView<'_> {
    fn idle(&self) -> f64 {
        self.gpu_left.iter().map(|&g| f64::from(g)).sum()
    }

    fn unusable_by(&self, t: &TypicalTask) -> f64 {
        let idle: u64 = self.gpu_left.iter().map(|&g| u64::from(g)).sum();
        if t.gpu_milli == 0 || !t.gpu_spec.allows(self.gpu_model) {
            return idle as f64;
        }
        let mut able = 0usize;
        let mut too_small = 0u64;
        for &g in self.gpu_left {
            if g >= t.gpu_milli {
                able += 1;
            } else {
                too_small += u64::from(g);
            }
        }
        if able >= usize::from(t.num_gpu) && self.cpu_left >= t.cpu_milli {
            too_small as f64
        } else {
            idle as f64
        }
    }
}

/// The fragmentation of a node in the GPU-sharing model.
#[inline]
pub fn node_frag(view: GpuShareView<'_>, dist: &[TypicalTask]) -> f64 {
    expected_fragmentation(&view, dist.iter().map(|t| (*t, t.freq)))
}

/// The workload's distribution of task sizes, as the authors' simulator
/// builds it ("typical pods"): count tasks by (CPU, per-GPU milli, GPU count,
/// GPU model constraint), most frequent first, keep the most frequent sizes
/// until they cover `coverage` (0.95) of all tasks, and renormalise.
///
/// Ties in count are ordered by the larger size first (CPU, then milli, then
/// GPU count, then constraint), which is the authors' order.
pub fn typical_tasks(tasks: &[TaskSpec], coverage: f64) -> Vec<TypicalTask> {
    type Key = (u64, u32, u8, TypeMask);
    let mut counts: BTreeMap<Key, u64> = BTreeMap::new();
    for t in tasks {
        let s: Shape = t.shape();
        *counts
            .entry((s.cpu_milli, s.gpu_milli, s.num_gpu, s.gpu_spec))
            .or_insert(0) += 1;
    }
    most_frequent(counts, tasks.len(), coverage)
        .into_iter()
        .map(|((cpu, milli, num, spec), freq)| TypicalTask {
            cpu_milli: cpu,
            num_gpu: num,
            gpu_milli: milli,
            gpu_spec: spec,
            freq,
        })
        .collect()
}

/// The "typical pods" cut over any task key: `counts` of `total` tasks, most
/// frequent first (the larger key first among equals), kept until they cover
/// `coverage` of all tasks, with frequencies renormalised over those kept.
pub fn most_frequent<K: Ord + Copy>(
    counts: BTreeMap<K, u64>,
    total: usize,
    coverage: f64,
) -> Vec<(K, f64)> {
    let total = total as f64;
    if counts.is_empty() {
        return Vec::new();
    }
    let mut list: Vec<(K, u64)> = counts.into_iter().collect();
    // Most frequent first; among equals the larger key first.
    list.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let target = coverage * total;
    let mut kept = Vec::new();
    let mut cum = 0.0;
    for (key, n) in list {
        if cum >= target {
            break;
        }
        cum += n as f64;
        kept.push((key, n));
    }
    kept.into_iter()
        .map(|(key, n)| (key, n as f64 / cum))
        .collect()
}

/// Milli-GPU capacity of a whole cluster of `gpus` GPUs.
#[inline]
pub fn cluster_milli(gpus: u64) -> u64 {
    gpus * u64::from(MILLI)
}

#[cfg(test)]
mod tests;
