//! Placement cost per job and for the cluster (docs/topology.md).
//!
//! Reported when the run has a topology model: the scenario gave a
//! topology or a fabric, or some job declares a communication profile.

use gresim_engine::SimOutput;
use gresim_model::comm::{ideal_work, placement_cost};
use gresim_model::job::Job;

use crate::summary::round6;

fn ser_f64<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round6(*x))
}

fn ser_opt<S: serde::Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) if v.is_finite() => s.serialize_some(&round6(*v)),
        _ => s.serialize_none(),
    }
}

/// The placement cost of a job's last run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlacementRecord {
    pub gpus: u32,
    pub nodes: u32,
    /// Distinct (node, CPU socket) pairs its GPUs hang off.
    pub sockets: u32,
    /// Distinct leaf switches.
    pub leaves: u32,
    /// `nvlink`, `pcie`, `ib`, `socket:eth0`, `none`.
    pub transport: String,
    /// Bottleneck bandwidth along the all-reduce ring, GB/s (`null` for one GPU).
    #[serde(serialize_with = "ser_opt")]
    pub bottleneck_gbs: Option<f64>,
    /// The same on the ideal placement of this shape.
    #[serde(serialize_with = "ser_opt")]
    pub ideal_bottleneck_gbs: Option<f64>,
    /// One all-reduce of the job's bytes (1 GB without a profile), seconds.
    #[serde(serialize_with = "ser_f64")]
    pub allreduce_s: f64,
    #[serde(serialize_with = "ser_f64")]
    pub ideal_allreduce_s: f64,
    /// Run time here over run time on the ideal placement (jobs with a
    /// profile), else all-reduce time over the ideal one.
    #[serde(serialize_with = "ser_f64")]
    pub slowdown: f64,
    /// Seconds the run would have taken ideally (jobs with a profile and a run time).
    pub ideal_run_s: Option<u64>,
    /// The placement is as good as the ideal one.
    pub ideal: bool,
    /// The job has a communication profile (its run time depends on placement).
    pub comm: bool,
}

/// The cluster-wide summary of placement quality.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Default)]
pub struct PlacementSummary {
    /// Jobs that ran with at least two GPUs.
    pub multi_gpu_jobs: u64,
    /// Of those, placed as well as the ideal placement of their shape.
    pub placed_ideally: u64,
    #[serde(serialize_with = "ser_f64")]
    pub share_placed_ideally: f64,
    /// Mean all-reduce slowdown over multi-GPU jobs.
    #[serde(serialize_with = "ser_f64")]
    pub mean_allreduce_slowdown: f64,
    /// GPU-hours jobs with a communication profile ran beyond their ideal run time.
    #[serde(serialize_with = "ser_f64")]
    pub gpu_hours_lost: f64,
}

/// Whether the run has a topology model worth reporting.
pub fn active(out: &SimOutput) -> bool {
    out.cluster.has_explicit_topology() || out.specs.iter().any(|s| s.comm.is_some())
}

/// The placement record of `job`'s last run (`None` when it never ran, or the run has no topology model).
pub fn job_placement(out: &SimOutput, job: &Job) -> Option<PlacementRecord> {
    if !active(out) {
        return None;
    }
    placement_of(out, job)
}

/// [`job_placement`] for callers that checked [`active`] once for all jobs
/// ([`active`] looks at every submission, so checking it per job is quadratic).
pub fn placement_of(out: &SimOutput, job: &Job) -> Option<PlacementRecord> {
    let run = job.runs.last()?;
    if run.alloc.gpu_count() == 0 {
        return None;
    }
    let spec = out.specs.get(job.sub as usize)?;
    let profile = spec.comm.as_deref();
    let cost = placement_cost(&out.cluster, &run.alloc, profile);
    let ran = run.end.map(|e| e.saturating_sub(run.start));
    let ideal_run_s = match (profile, ran) {
        (Some(p), Some(_)) => ideal_work(p, &cost, job.run_time),
        _ => None,
    };
    let slowdown = match (ideal_run_s, ran, profile) {
        (Some(i), Some(r), Some(_)) if i > 0 && run.state == gresim_model::JobState::Completed => {
            (r as f64 / i as f64).max(1.0)
        }
        _ => cost.allreduce_slowdown(),
    };
    Some(PlacementRecord {
        gpus: cost.gpus,
        nodes: cost.nodes,
        sockets: cost.sockets,
        leaves: cost.leaves,
        transport: cost.transport.clone(),
        bottleneck_gbs: cost.bottleneck_gbs,
        ideal_bottleneck_gbs: cost.ideal_bottleneck_gbs,
        allreduce_s: cost.allreduce_s,
        ideal_allreduce_s: cost.ideal_allreduce_s,
        slowdown,
        ideal_run_s,
        ideal: cost.ideal(),
        comm: profile.is_some(),
    })
}

/// The placement summary, when the run has a topology model.
pub fn summary(out: &SimOutput) -> Option<PlacementSummary> {
    if !active(out) {
        return None;
    }
    let mut s = PlacementSummary::default();
    let mut sum_sd = 0.0;
    let mut lost = 0.0;
    for job in &out.jobs {
        let Some(p) = placement_of(out, job) else {
            continue;
        };
        if p.gpus >= 2 {
            s.multi_gpu_jobs += 1;
            s.placed_ideally += u64::from(p.ideal);
            sum_sd += (p.allreduce_s / p.ideal_allreduce_s.max(1e-300)).max(1.0);
        }
        if let (true, Some(i), Some(r)) = (p.comm, p.ideal_run_s, job.runs.last()) {
            if let Some(e) = r.end {
                let ran = e.saturating_sub(r.start);
                if r.state == gresim_model::JobState::Completed {
                    lost += ran.saturating_sub(i) as f64 * f64::from(p.gpus);
                }
            }
        }
    }
    if s.multi_gpu_jobs > 0 {
        s.share_placed_ideally = s.placed_ideally as f64 / s.multi_gpu_jobs as f64;
        s.mean_allreduce_slowdown = sum_sd / s.multi_gpu_jobs as f64;
    } else {
        s.share_placed_ideally = 1.0;
        s.mean_allreduce_slowdown = 1.0;
    }
    s.gpu_hours_lost = lost / 3600.0;
    Some(s)
}
