//! Shared GPUs (gres/shard, gres/mps) in the utilization figures.
//!
//! The engine's usage integrals count whole GPUs (gres/gpu) only; a GPU
//! hosting shares is not allocated as a GPU. Here every run holding shares
//! adds its fraction of the GPU (`count / the GPU's count`: 50 of a GPU's
//! 100 mps is half a GPU) times the part of the run inside the usage
//! window. So a GPU at 50 % mps counts as half used, and two jobs at 50 %
//! each as one whole GPU. Runs without shares add nothing, and the
//! summary of a cluster without shared GRES is unchanged.

use gresim_engine::SimOutput;

use crate::summary::Summary;

/// Share-weighted GPU-seconds of the runs holding shares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SharedGpuSecs {
    /// Per GPU type (index: `GpuTypeId`).
    pub by_type: Vec<f64>,
    pub total: f64,
}

impl SharedGpuSecs {
    /// `None` when no node of the run's cluster has shared GRES.
    pub fn of(out: &SimOutput) -> Option<SharedGpuSecs> {
        let c = &out.cluster;
        if !c.any_shares() {
            return None;
        }
        let (from, to) = (out.usage.from, out.usage.to);
        let mut s = SharedGpuSecs {
            by_type: vec![0.0; c.gpu_types.len()],
            total: 0.0,
        };
        for job in &out.jobs {
            for run in &job.runs {
                let end = run.end.unwrap_or(out.end_time).min(to);
                let start = run.start.max(from);
                if end <= start {
                    continue;
                }
                let secs = (end - start) as f64;
                for na in &run.alloc.nodes {
                    let (Some(sa), Some(ns)) = (na.share, c.node_shares(na.node)) else {
                        continue;
                    };
                    let cap = ns.capacity(sa.gpu);
                    let Some(dev) = c.node(na.node).gpus.get(usize::from(sa.gpu)) else {
                        continue;
                    };
                    if cap == 0 {
                        continue;
                    }
                    let v = f64::from(sa.count.min(cap)) / f64::from(cap) * secs;
                    s.by_type[dev.ty.idx()] += v;
                    s.total += v;
                }
            }
        }
        Some(s)
    }
}

/// What a record's `gpus` column adds for shares on a node: `2(mps:25)`
/// (GPU 2, 25 mps) after the node's whole GPUs; empty without shares.
pub fn record_suffix(cluster: &gresim_model::Cluster, na: &gresim_model::NodeAlloc) -> String {
    match (na.share, cluster.node_shares(na.node)) {
        (Some(sa), Some(ns)) => format!(
            "{}{}({}:{})",
            if na.gpus != 0 { "," } else { "" },
            sa.gpu,
            ns.kind,
            sa.count
        ),
        _ => String::new(),
    }
}

fn ratio_f(num: f64, den: u128) -> f64 {
    if den == 0 {
        0.0
    } else {
        num / den as f64
    }
}

impl Summary {
    /// Adds the GPUs held as shares to the GPU utilizations and GPU-hours
    /// (see the module documentation). Unchanged without shared GRES.
    pub fn with_shared_gpus(mut self, out: &SimOutput) -> Summary {
        let Some(sh) = SharedGpuSecs::of(out) else {
            return self;
        };
        let u = &out.usage;
        let alloc: u128 = u.gpu_alloc_secs.iter().sum();
        let avail: u128 = u.gpu_avail_secs.iter().sum();
        self.gpu_utilization = ratio_f(alloc as f64 + sh.total, avail);
        for (i, t) in out.cluster.gpu_types.iter().enumerate() {
            let a = u.gpu_alloc_secs.get(i).copied().unwrap_or(0) as f64;
            let v = u.gpu_avail_secs.get(i).copied().unwrap_or(0);
            self.gpu_utilization_by_type
                .insert(t.name.clone(), ratio_f(a + sh.by_type[i], v));
        }
        // Shares are on whole GPUs (7 sevenths each).
        self.gpu_sm_weighted_utilization = ratio_f(
            u.gpu_sevenths_alloc_secs as f64 + 7.0 * sh.total,
            u.gpu_sevenths_avail_secs,
        );
        // Memory-weighted: each type weighs its memory slices (8 for a whole GPU).
        let (mut aw, mut vw) = (0.0f64, 0u128);
        for (i, t) in out.cluster.gpu_types.iter().enumerate() {
            let w = gresim_model::mig::memory_eighths(t);
            let a = u.gpu_alloc_secs.get(i).copied().unwrap_or(0) as f64;
            aw += f64::from(w) * (a + sh.by_type[i]);
            vw += u128::from(w) * u.gpu_avail_secs.get(i).copied().unwrap_or(0);
        }
        self.gpu_memory_weighted_utilization = ratio_f(aw, vw);
        self.gpu_hours_allocated = (alloc as f64 + sh.total) / 3600.0;
        self
    }
}
