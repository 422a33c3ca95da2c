//! A scenario's variants (docs/scenario-format.md, "Variants"): after the
//! base run, each variant (the same workload and seed on a changed cluster
//! or policy, built by `gresim_io::variants`) runs in parallel; each one's
//! outputs go to a subdirectory, and `variants.json`/`variants.txt` hold
//! the side-by-side table of their [`Metrics`]. `sim run` prints the text.

use std::fmt::Write as _;
use std::path::Path;

use gresim_io::variants::Variant;
use gresim_report::summary::Summary;
use rayon::prelude::*;

use crate::metrics::{job_needs, Metrics};
use crate::{Outcome, RunError, Scenario, Simulation};

/// One row of the side-by-side table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub variant: String,
    pub policy: String,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// Why the variants could not run or be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A variant's run failed.
    #[error("variant '{variant}': {source}")]
    Run {
        variant: String,
        #[source]
        source: RunError,
    },
    /// An output could not be written (the message names the file).
    #[error("{0}")]
    Write(String),
}

/// Runs every variant with `seed`, in parallel; the outcomes come in the
/// order of `variants`.
pub fn run(variants: &[Variant], seed: u64) -> Result<Vec<Outcome>, Error> {
    variants
        .par_iter()
        .map(|v| {
            Simulation::new(&v.scenario)
                .seed(seed)
                .run()
                .map_err(|source| Error::Run {
                    variant: v.name.clone(),
                    source,
                })
        })
        .collect()
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
        let m = &r.metrics;
        let _ = writeln!(
            s,
            "{:<12} {:<12} {:>7.1} {:>7.1} {:>9.0} {:>9.0} {:>10.0} {:>9.0} {:>9} {:>7.2} {:>7} {:>12}",
            r.variant,
            r.policy,
            m.gpu_util_sm * 100.0,
            m.gpu_util_needed * 100.0,
            m.wait_mean,
            m.wait_p95,
            m.slice_job_wait_mean,
            m.jct_mean,
            m.makespan,
            m.jobs_per_hour,
            m.repartitions,
            m.reconfig_gpu_seconds
        );
    }
    s
}

/// Writes each variant's outputs into `dir/<variant>/` and the table
/// (`variants.json`, `variants.txt`) into `dir`, beside the base run's
/// outputs; returns the text `sim run` prints after the summary. Every
/// variant's needs are the base run's (the job streams are the same).
pub fn write(
    base: &Scenario,
    base_run: &Outcome,
    base_summary: &Summary,
    variants: &[Variant],
    runs: &[Outcome],
    seed: u64,
    dir: &Path,
) -> Result<String, Error> {
    let needs = job_needs(&base_run.output);
    let mut rows = vec![Row {
        variant: "base".into(),
        policy: base_run.policy().to_string(),
        metrics: Metrics::of(&base_run.output, base_summary, &base_run.meta, &needs),
    }];
    let mut legend = format!(
        "  base: the scenario as written (policy {})\n",
        base_run.policy()
    );
    for (v, run) in variants.iter().zip(runs) {
        let sub = dir.join(&v.name);
        let summary = run
            .write(&sub)
            .map_err(|e| Error::Write(format!("cannot write outputs to {}: {e}", sub.display())))?;
        rows.push(Row {
            variant: v.name.clone(),
            policy: run.policy().to_string(),
            metrics: Metrics::of(&run.output, &summary, &run.meta, &needs),
        });
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
    .map_err(|e| Error::Write(e.to_string()))?
        + "\n";
    gresim_report::write_files_atomic(
        dir,
        &[("variants.json", json), ("variants.txt", text.clone())],
    )
    .map_err(|e| Error::Write(format!("cannot write to {}: {e}", dir.display())))?;
    Ok(text)
}
