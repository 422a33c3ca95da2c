//! One scenario under several policies, side by side (`sim compare`): the
//! runs, their rows (a policy's [`Metrics`]), the table and the files. The
//! CLI parses arguments and prints.

use std::fmt::Write as _;
use std::path::Path;

use gresim_engine::SimOutput;
use gresim_report::summary::Summary;
use gresim_report::RunMeta;
use rayon::prelude::*;

use crate::metrics::{job_needs, Metrics};
use crate::{Outcome, PolicyKind, RunError, Scenario, Simulation};

/// One policy's row of the comparison.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub policy: String,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// Runs `scenario` once per policy, in parallel; each run is built exactly
/// as `sim run --policy P --seed S` builds it. The outcomes come in the
/// order of `kinds`.
pub fn run_policies(
    scenario: &Scenario,
    kinds: &[PolicyKind],
    seed: u64,
) -> Result<Vec<Outcome>, RunError> {
    kinds
        .par_iter()
        .map(|&k| Simulation::new(scenario).policy(k).seed(seed).run())
        .collect()
}

/// The comparison row of one run.
pub fn row(name: &str, out: &SimOutput, summary: &Summary, meta: &RunMeta) -> Row {
    Row {
        policy: name.to_string(),
        metrics: Metrics::of(out, summary, meta, &job_needs(out)),
    }
}

/// The side-by-side table (`compare.txt`, and what `sim compare` prints).
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<16} {:>6} {:>9} {:>9} {:>10} {:>9} {:>8} {:>8} {:>8} {:>6}",
        "policy",
        "util%",
        "wait p50",
        "wait p95",
        "JCT mean",
        "makespan",
        "ideal%",
        "AR slow",
        "GPU-h lost",
        "frag%"
    );
    for r in rows {
        let m = &r.metrics;
        let _ = writeln!(
            s,
            "{:<16} {:>6.1} {:>9.0} {:>9.0} {:>10.1} {:>9} {:>8.1} {:>8.2} {:>10.2} {:>6.1}",
            r.policy,
            m.gpu_utilization * 100.0,
            m.wait_p50,
            m.wait_p95,
            m.jct_mean,
            m.makespan,
            m.placed_ideally * 100.0,
            m.allreduce_slowdown,
            m.gpu_hours_lost,
            m.fragmentation * 100.0
        );
    }
    s
}

/// Writes what `sim compare` writes into `dir`: each run's outputs in
/// `dir/<name>/`, then `compare.json`, `compare.svg` and `compare.txt`, and
/// returns the rows. `names[i]` names `runs[i]`. An error is internal and
/// says what could not be written.
pub fn write_comparison(
    dir: &Path,
    scenario: &str,
    seed: u64,
    names: &[String],
    runs: &[Outcome],
) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let mut sums = Vec::new();
    for (name, run) in names.iter().zip(runs) {
        let sub = dir.join(name);
        let summary = run
            .write(&sub)
            .map_err(|e| format!("cannot write outputs to {}: {e}", sub.display()))?;
        rows.push(row(name, &run.output, &summary, &run.meta));
        sums.push((name.clone(), summary));
    }
    let svg = gresim_report::charts::compare_bars_svg(&sums).map_err(|e| e.to_string())?;
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "scenario": scenario,
        "seed": seed,
        "policies": rows,
    }))
    .map_err(|e| e.to_string())?
        + "\n";
    gresim_report::write_files_atomic(
        dir,
        &[
            ("compare.json", json),
            ("compare.svg", svg),
            ("compare.txt", table(&rows)),
        ],
    )
    .map_err(|e| format!("cannot write to {}: {e}", dir.display()))?;
    Ok(rows)
}
