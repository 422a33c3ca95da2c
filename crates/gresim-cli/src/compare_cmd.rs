//! `sim compare SCENARIO --policies a,b,…`: the same seeded workload under
//! several placement policies, run in parallel; a side-by-side table, a bar
//! chart, and each run's full outputs in a subdirectory. The runs, rows and
//! files are the library's ([`gresim::compare`]); this parses and prints.

use std::path::PathBuf;

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

/// Runs `scenario` once per named policy, in parallel
/// ([`gresim::compare::run_policies`]).
pub fn run_policies(
    scenario: &gresim::Scenario,
    policies: &[String],
    seed: u64,
) -> Result<Vec<gresim::Outcome>, Failure> {
    let kinds = policies
        .iter()
        .map(|p| p.parse::<gresim::PolicyKind>().map_err(Failure::input))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(gresim::compare::run_policies(scenario, &kinds, seed)?)
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
    let rows = gresim::compare::write_comparison(&dir, &scenario.name, seed, &args.policies, &runs)
        .map_err(Failure::internal)?;
    let text = gresim::compare::table(&rows);
    if !args.quiet {
        crate::print_stdout(&format!(
            "scenario {} (seed {seed})\n{text}outputs  {}\n",
            scenario.name,
            dir.display()
        ))?;
    }
    Ok(())
}
