//! `sim run` on a scenario with `variants`: after the base run, each variant
//! (the same workload and seed on a changed cluster or policy) runs in
//! parallel; a side-by-side table follows the summary, each variant's
//! outputs go to a subdirectory, and `variants.json`/`variants.txt` hold the
//! table (docs/scenario-format.md, "Variants").

use std::fmt::Write as _;
use std::path::Path;

use gresim_engine::SimOutput;
use gresim_io::variants::Variant;
use gresim_io::Scenario;
use gresim_model::JobState;
use gresim_report::summary::{round6, Summary};
use rayon::prelude::*;

use crate::Failure;

/// One row of the side-by-side table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub variant: String,
    pub policy: String,
    /// SM-weighted GPU utilization (a 1g slice is 1/7 of a GPU): what the
    /// scheduler allocated, over the GPUs' compute.
    pub gpu_util_sm: f64,
    /// The compute the jobs need (the slice each asks for in the base
    /// scenario, 7/7 for a whole GPU) × their run time, over the GPUs'
    /// compute: a 1g job on a whole GPU allocates 7/7 and needs 1/7.
    pub gpu_util_needed: f64,
    /// Mean and 95th-percentile wait, seconds, over all jobs that started.
    pub wait_mean: f64,
    pub wait_p95: f64,
    /// Mean wait of the jobs that ask for a MIG slice in the base scenario.
    pub slice_job_wait_mean: f64,
    pub jct_mean: f64,
    pub makespan: u64,
    /// Completed jobs per hour of makespan.
    pub jobs_per_hour: f64,
    pub completed: u64,
    /// Dynamic MIG: repartitionings, and GPU-seconds spent on them.
    pub repartitions: u64,
    pub reconfig_gpu_seconds: u64,
}

fn row(name: &str, out: &SimOutput, s: &Summary, need: &[(bool, u64)]) -> Row {
    let slice_jobs: Vec<bool> = need.iter().map(|n| n.0).collect();
    let needed: u128 = out
        .jobs
        .iter()
        .zip(need)
        .flat_map(|(j, n)| {
            j.runs.iter().map(move |r| {
                u128::from(n.1) * u128::from(r.end.unwrap_or(out.end_time).saturating_sub(r.start))
            })
        })
        .sum();
    let avail = out.usage.gpu_sevenths_avail_secs;
    let completed = s
        .by_state
        .get(JobState::Completed.as_str())
        .copied()
        .unwrap_or(0);
    let waits: Vec<u64> = out
        .jobs
        .iter()
        .enumerate()
        .filter(|(i, _)| slice_jobs.get(*i).copied().unwrap_or(false))
        .filter_map(|(_, j)| {
            j.runs
                .first()
                .map(|r| r.start.saturating_sub(j.first_submit))
        })
        .collect();
    let (repartitions, reconfig) = s
        .mig_reconfig
        .as_ref()
        .map_or((0, 0), |m| (m.reconfigurations, m.reconfig_gpu_seconds));
    Row {
        variant: name.to_string(),
        policy: out.policy.clone(),
        gpu_util_sm: round6(s.gpu_sm_weighted_utilization),
        gpu_util_needed: round6(if avail == 0 {
            0.0
        } else {
            needed as f64 / avail as f64
        }),
        wait_mean: round6(s.wait.mean),
        wait_p95: round6(s.wait.p95),
        slice_job_wait_mean: round6(if waits.is_empty() {
            0.0
        } else {
            waits.iter().sum::<u64>() as f64 / waits.len() as f64
        }),
        jct_mean: round6(s.jct.mean),
        makespan: s.makespan,
        jobs_per_hour: round6(if s.makespan == 0 {
            0.0
        } else {
            completed as f64 * 3600.0 / s.makespan as f64
        }),
        completed,
        repartitions,
        reconfig_gpu_seconds: reconfig,
    }
}

/// The side-by-side table.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<12} {:<12} {:>7} {:>7} {:>9} {:>9} {:>10} {:>9} {:>9} {:>7} {:>7} {:>12}",
        "variant",
        "policy",
        "alloc%",
        "need%",
        "wait mean",
        "wait p95",
        "slice wait",
        "JCT mean",
        "makespan",
        "jobs/h",
        "repart",
        "reconf GPU-s"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<12} {:<12} {:>7.1} {:>7.1} {:>9.0} {:>9.0} {:>10.0} {:>9.0} {:>9} {:>7.2} {:>7} {:>12}",
            r.variant,
            r.policy,
            r.gpu_util_sm * 100.0,
            r.gpu_util_needed * 100.0,
            r.wait_mean,
            r.wait_p95,
            r.slice_job_wait_mean,
            r.jct_mean,
            r.makespan,
            r.jobs_per_hour,
            r.repartitions,
            r.reconfig_gpu_seconds
        );
    }
    s
}

/// Per job of the base run (by index; the job streams of all variants are
/// the same): whether it asks for a MIG slice, and the compute it needs in
/// sevenths of a GPU (its slices' compute, 7 per whole or untyped GPU).
fn job_needs(out: &SimOutput) -> Vec<(bool, u64)> {
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

/// Runs the variants in parallel, writes their outputs under `dir` and the
/// table beside the base run's; returns the text to print after the summary.
pub fn run_variants(
    base: &Scenario,
    base_out: &SimOutput,
    base_summary: &Summary,
    variants: &[Variant],
    seed: u64,
    dir: &Path,
) -> Result<String, Failure> {
    let runs: Vec<gresim::Outcome> = variants
        .par_iter()
        .map(|v| {
            gresim::Simulation::new(&v.scenario)
                .seed(seed)
                .run()
                .map_err(|e| {
                    if e.is_internal() {
                        Failure::internal(format!("variant '{}': {}", v.name, e.source))
                    } else {
                        Failure::input(format!(
                            "{}: variant '{}': {}",
                            base.path.display(),
                            v.name,
                            e.source
                        ))
                    }
                })
        })
        .collect::<Result<_, _>>()?;
    let small = job_needs(base_out);
    let mut rows = vec![row("base", base_out, base_summary, &small)];
    let mut legend = format!(
        "  base: the scenario as written (policy {})\n",
        base_out.policy
    );
    for (v, run) in variants.iter().zip(&runs) {
        let sub = dir.join(&v.name);
        let summary = run.write(&sub).map_err(|e| {
            Failure::internal(format!("cannot write outputs to {}: {e}", sub.display()))
        })?;
        rows.push(row(&v.name, &run.output, &summary, &small));
        let _ = writeln!(
            legend,
            "  {}: {} (outputs in {})",
            v.name,
            v.description.as_deref().unwrap_or("-"),
            sub.display()
        );
    }
    let text = format!(
        "\nvariants: the same jobs (seed {seed}) under each variant\n{}{legend}  alloc%: GPU compute allocated (SM-weighted); need%: compute the jobs need (the slice each asks for in the base run) x run time;\n  both over the GPUs' compute. Waits and JCT in s; slice wait: jobs that ask for a MIG slice in the base run.\n  jobs/h: completed jobs per hour of makespan; repart: MIG repartitionings; reconf GPU-s: GPU-seconds they took out of service.\n",
        table(&rows)
    );
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "scenario": base.name,
        "seed": seed,
        "variants": rows,
    }))
    .map_err(Failure::internal)?
        + "\n";
    gresim_report::write_files_atomic(
        dir,
        &[("variants.json", json), ("variants.txt", text.clone())],
    )
    .map_err(|e| Failure::internal(format!("cannot write to {}: {e}", dir.display())))?;
    Ok(text)
}
