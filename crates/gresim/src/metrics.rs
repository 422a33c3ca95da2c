//! The metrics of one run: the one row that `sim compare`, every sweep
//! point and a scenario's variants share (each view prints the columns it
//! needs, and writes them all).

use gresim_engine::SimOutput;
use gresim_model::JobState;
use gresim_report::fragmentation::fragmentation;
use gresim_report::summary::{round6, Summary};
use gresim_report::{RunFile, RunMeta};

/// A run's metrics. Times in seconds; shares in 0..1; rounded to six
/// decimals like the summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Metrics {
    /// Jobs (submissions and array tasks) in the run.
    pub jobs: u64,
    /// Jobs that ended COMPLETED.
    pub completed: u64,
    /// GPU-time allocated over GPU-time available.
    pub gpu_utilization: f64,
    /// SM-weighted GPU utilization (a 1g slice is 1/7 of a GPU): what the
    /// scheduler allocated, over the GPUs' compute.
    pub gpu_util_sm: f64,
    /// The compute the jobs need (the slice each asks for in the reference
    /// run, 7/7 for a whole GPU) × their run time, over the GPUs' compute:
    /// a 1g job on a whole GPU allocates 7/7 and needs 1/7.
    pub gpu_util_needed: f64,
    /// Wait from submission to first start, over the jobs that started.
    pub wait_mean: f64,
    pub wait_p50: f64,
    pub wait_p95: f64,
    /// Mean wait of the jobs that ask for a MIG slice in the reference run.
    pub slice_job_wait_mean: f64,
    pub jct_mean: f64,
    pub bounded_slowdown_mean: f64,
    pub makespan: u64,
    /// Completed jobs per hour of makespan.
    pub jobs_per_hour: f64,
    /// Share of multi-GPU jobs placed as well as their shape allows (1 when
    /// no job has a communication profile).
    pub placed_ideally: f64,
    /// Mean all-reduce slowdown against the ideal placement.
    pub allreduce_slowdown: f64,
    /// GPU-hours jobs with a communication profile lost to placement.
    pub gpu_hours_lost: f64,
    /// Time-averaged share of idle GPUs the workload's typical request cannot use.
    pub fragmentation: f64,
    /// Dynamic MIG: repartitionings, and GPU-seconds spent on them.
    pub repartitions: u64,
    pub reconfig_gpu_seconds: u64,
}

/// Per job of a reference run (by index): whether it asks for a MIG slice,
/// and the compute it needs in sevenths of a GPU (its slices' compute, 7
/// per whole or untyped GPU). A scenario's variants run the same job stream,
/// so the base run's needs serve them all.
pub fn job_needs(out: &SimOutput) -> Vec<(bool, u64)> {
    out.jobs
        .iter()
        .map(|j| {
            let r = &j.request;
            let nodes = u64::from(r.min_nodes.max(1));
            let tasks = u64::from(r.total_tasks(r.min_nodes.max(1)));
            let per = |g: &gresim_model::job::GpuReq, times: u64| {
                let sev =
                    g.ty.map_or(7, |t| u64::from(out.cluster.gpu_type(t).compute_sevenths()));
                u64::from(g.count) * times * sev
            };
            let need = r.gpus_per_node.iter().map(|g| per(g, nodes)).sum::<u64>()
                + r.gpus_per_job.iter().map(|g| per(g, 1)).sum::<u64>()
                + r.gpus_per_task.iter().map(|g| per(g, tasks)).sum::<u64>();
            let slice = r
                .gpus_per_node
                .iter()
                .chain(&r.gpus_per_job)
                .chain(&r.gpus_per_task)
                .filter_map(|g| g.ty)
                .any(|t| out.cluster.gpu_type(t).mig.is_some());
            (slice, need)
        })
        .collect()
}

impl Metrics {
    /// The metrics of `out` (its `summary` and run-file `meta`), with the
    /// needs of the reference run ([`job_needs`]; the run's own when it is
    /// not a variant).
    pub fn of(out: &SimOutput, summary: &Summary, meta: &RunMeta, needs: &[(bool, u64)]) -> Self {
        let s = summary;
        let needed: u128 = out
            .jobs
            .iter()
            .zip(needs)
            .flat_map(|(j, n)| {
                j.runs.iter().map(move |r| {
                    u128::from(n.1)
                        * u128::from(r.end.unwrap_or(out.end_time).saturating_sub(r.start))
                })
            })
            .sum();
        let avail = out.usage.gpu_sevenths_avail_secs;
        let completed = s
            .by_state
            .get(JobState::Completed.as_str())
            .copied()
            .unwrap_or(0);
        let slice_waits: Vec<u64> = out
            .jobs
            .iter()
            .zip(needs)
            .filter(|(_, n)| n.0)
            .filter_map(|(j, _)| {
                j.runs
                    .first()
                    .map(|r| r.start.saturating_sub(j.first_submit))
            })
            .collect();
        let (repartitions, reconfig_gpu_seconds) = s
            .mig_reconfig
            .as_ref()
            .map_or((0, 0), |m| (m.reconfigurations, m.reconfig_gpu_seconds));
        let p = s.placement.clone().unwrap_or_default();
        let placed = s.placement.is_some();
        let frag = fragmentation(&RunFile::from_output(out, meta)).fragmented_share_of_idle();
        Metrics {
            jobs: s.jobs,
            completed,
            gpu_utilization: round6(s.gpu_utilization),
            gpu_util_sm: round6(s.gpu_sm_weighted_utilization),
            gpu_util_needed: round6(if avail == 0 {
                0.0
            } else {
                needed as f64 / avail as f64
            }),
            wait_mean: round6(s.wait.mean),
            wait_p50: round6(s.wait.median),
            wait_p95: round6(s.wait.p95),
            slice_job_wait_mean: round6(if slice_waits.is_empty() {
                0.0
            } else {
                slice_waits.iter().sum::<u64>() as f64 / slice_waits.len() as f64
            }),
            jct_mean: round6(s.jct.mean),
            bounded_slowdown_mean: round6(s.bounded_slowdown.mean),
            makespan: s.makespan,
            jobs_per_hour: round6(if s.makespan == 0 {
                0.0
            } else {
                completed as f64 * 3600.0 / s.makespan as f64
            }),
            placed_ideally: round6(if placed { p.share_placed_ideally } else { 1.0 }),
            allreduce_slowdown: round6(if placed {
                p.mean_allreduce_slowdown
            } else {
                1.0
            }),
            gpu_hours_lost: round6(p.gpu_hours_lost),
            fragmentation: round6(frag),
            repartitions,
            reconfig_gpu_seconds,
        }
    }
}

/// The CSV columns of [`Metrics`], in field order.
pub const COLUMNS: &[&str] = &[
    "jobs",
    "completed",
    "gpu_utilization",
    "gpu_util_sm",
    "gpu_util_needed",
    "wait_mean",
    "wait_p50",
    "wait_p95",
    "slice_job_wait_mean",
    "jct_mean",
    "bounded_slowdown_mean",
    "makespan",
    "jobs_per_hour",
    "placed_ideally",
    "allreduce_slowdown",
    "gpu_hours_lost",
    "fragmentation",
    "repartitions",
    "reconfig_gpu_seconds",
];

impl Metrics {
    /// The values of [`COLUMNS`], each as JSON writes it.
    pub fn csv_values(&self) -> Vec<String> {
        let f = |x: f64| serde_json::to_string(&x).unwrap_or_else(|_| "null".into());
        vec![
            self.jobs.to_string(),
            self.completed.to_string(),
            f(self.gpu_utilization),
            f(self.gpu_util_sm),
            f(self.gpu_util_needed),
            f(self.wait_mean),
            f(self.wait_p50),
            f(self.wait_p95),
            f(self.slice_job_wait_mean),
            f(self.jct_mean),
            f(self.bounded_slowdown_mean),
            self.makespan.to_string(),
            f(self.jobs_per_hour),
            f(self.placed_ideally),
            f(self.allreduce_slowdown),
            f(self.gpu_hours_lost),
            f(self.fragmentation),
            self.repartitions.to_string(),
            self.reconfig_gpu_seconds.to_string(),
        ]
    }
}

#[cfg(test)]
mod tests;
