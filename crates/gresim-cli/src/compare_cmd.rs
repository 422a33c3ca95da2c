//! `sim compare SCENARIO --policies a,b,…`: the same seeded workload under
//! several placement policies, run in parallel; a side-by-side table, a bar
//! chart, and each run's full outputs in a subdirectory.

use std::fmt::Write as _;
use std::path::PathBuf;

use gresim_engine::SimOutput;
use gresim_report::fragmentation::fragmentation;
use gresim_report::run_file::RunFile;
use gresim_report::summary::{round6, Summary};
use rayon::prelude::*;

use crate::Failure;

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    input: crate::inputs::ScenarioInput,
    /// Policies to compare, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "slurm,first-fit,best-fit,spread,topology-aware"
    )]
    policies: Vec<String>,
    /// Seed for the synthetic workload (default: the scenario's seed).
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (default: out/<scenario name>-compare).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(long, short)]
    quiet: bool,
}

/// One policy's row of the comparison.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub policy: String,
    pub gpu_utilization: f64,
    pub wait_p50: f64,
    pub wait_p95: f64,
    pub jct_mean: f64,
    pub makespan: u64,
    /// Share of multi-GPU jobs placed as well as their shape allows.
    pub placed_ideally: f64,
    /// Mean all-reduce slowdown against the ideal placement.
    pub allreduce_slowdown: f64,
    /// GPU-hours jobs with a communication profile lost to placement.
    pub gpu_hours_lost: f64,
    /// Time-averaged share of idle GPUs the workload's typical request cannot use.
    pub fragmentation: f64,
}

/// Runs `scenario` once per policy, in parallel; each run is built exactly
/// as `sim run --policy P` builds it.
pub fn run_policies(
    scenario: &gresim::Scenario,
    policies: &[String],
    seed: u64,
) -> Result<Vec<gresim::Outcome>, Failure> {
    let kinds = policies
        .iter()
        .map(|p| p.parse::<gresim::PolicyKind>().map_err(Failure::input))
        .collect::<Result<Vec<_>, _>>()?;
    kinds
        .par_iter()
        .map(|&k| {
            let sim = gresim::Simulation::new(scenario).policy(k).seed(seed);
            Ok(sim.run()?)
        })
        .collect()
}

/// The comparison row of one run.
pub fn row(
    name: &str,
    out: &SimOutput,
    summary: &Summary,
    meta: &gresim_report::run_file::RunMeta,
) -> Row {
    let p = summary.placement.clone().unwrap_or_default();
    let frag = fragmentation(&RunFile::from_output(out, meta)).fragmented_share_of_idle();
    Row {
        policy: name.to_string(),
        gpu_utilization: round6(summary.gpu_utilization),
        wait_p50: round6(summary.wait.median),
        wait_p95: round6(summary.wait.p95),
        jct_mean: round6(summary.jct.mean),
        makespan: summary.makespan,
        placed_ideally: round6(if summary.placement.is_some() {
            p.share_placed_ideally
        } else {
            1.0
        }),
        allreduce_slowdown: round6(if summary.placement.is_some() {
            p.mean_allreduce_slowdown
        } else {
            1.0
        }),
        gpu_hours_lost: round6(p.gpu_hours_lost),
        fragmentation: round6(frag),
    }
}

/// The side-by-side table.
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
        let _ = writeln!(
            s,
            "{:<16} {:>6.1} {:>9.0} {:>9.0} {:>10.1} {:>9} {:>8.1} {:>8.2} {:>10.2} {:>6.1}",
            r.policy,
            r.gpu_utilization * 100.0,
            r.wait_p50,
            r.wait_p95,
            r.jct_mean,
            r.makespan,
            r.placed_ideally * 100.0,
            r.allreduce_slowdown,
            r.gpu_hours_lost,
            r.fragmentation * 100.0
        );
    }
    s
}

pub fn cmd_compare(args: &CompareArgs) -> Result<(), Failure> {
    let scenario = args.input.load_runnable()?;
    if args.policies.is_empty() {
        return Err(Failure::input("expected at least one policy"));
    }
    let seed = args.seed.unwrap_or(scenario.seed);
    let runs = run_policies(&scenario, &args.policies, seed)?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(format!("{}-compare", scenario.name)));
    let mut rows = Vec::new();
    let mut sums = Vec::new();
    for (name, run) in args.policies.iter().zip(&runs) {
        let sub = dir.join(name);
        let summary = run.write(&sub).map_err(|e| {
            Failure::internal(format!("cannot write outputs to {}: {e}", sub.display()))
        })?;
        rows.push(row(name, &run.output, &summary, &run.meta));
        sums.push((name.clone(), summary));
    }
    let svg = gresim_report::charts::compare_bars_svg(&sums).map_err(Failure::internal)?;
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "scenario": scenario.name,
        "seed": seed,
        "policies": rows,
    }))
    .map_err(Failure::internal)?
        + "\n";
    let text = table(&rows);
    gresim_report::write_files_atomic(
        &dir,
        &[
            ("compare.json", json),
            ("compare.svg", svg),
            ("compare.txt", text.clone()),
        ],
    )
    .map_err(|e| Failure::internal(format!("cannot write to {}: {e}", dir.display())))?;
    if !args.quiet {
        crate::print_stdout(&format!(
            "scenario {} (seed {seed})\n{text}outputs  {}\n",
            scenario.name,
            dir.display()
        ))?;
    }
    Ok(())
}
