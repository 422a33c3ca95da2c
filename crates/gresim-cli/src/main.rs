//! `sim`: the gresim command-line tool.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod compare_cmd;
mod env_cmd;
mod fgd_cmd;
mod inputs;
mod lint_cmd;
mod progress;
mod sweep_cmd;
mod variants_cmd;
mod views;

const EXAMPLES: &str = "\
Examples:
  sim scenarios/mig_packing.json                 run a scenario (short for `sim run`)
  sim run scenarios/ddp_2x8.json --out out/ddp   write records, summary and plot to out/ddp
  sim run scenarios/sweep_array.json --seed 7 --format json
  sim run scenarios/mixed_a100_h100.json --quiet
  sim run --cluster /etc/slurm/slurm.conf --trace sacct.txt   a site's cluster and its sacct -P dump

Exit codes: 0 ok, 2 bad input, 1 internal error.";

#[derive(Parser, Debug)]
#[command(name = "sim", version, about = "gresim: a discrete-event simulator of Slurm GPU clusters", after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    cmd: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario and write per-job records, a summary and a utilization plot.
    #[command(after_help = EXAMPLES)]
    Run(RunArgs),
    /// Simulate a conformance case (the real-Slurm harness's format) and write the outcome
    /// in the recording schema; compare with CASE.result.json when it sits beside the case.
    Conformance(ConformanceArgs),
    /// Reproduce the FGD paper (ATC'23) on the OpenB trace: six policies × seeds,
    /// compared with the published figures; `--mig` runs the same experiment on
    /// MIG instances.
    Fgd(fgd_cmd::FgdArgs),
    /// Run a scenario under several placement policies in parallel and compare them.
    Compare(compare_cmd::CompareArgs),
    /// Run a grid of policies × parameters × seeds in parallel (or one shard of it); merge shards; emit a Slurm job-array script.
    Sweep(sweep_cmd::SweepArgs),
    /// Allocate a batch script on an idle cluster and print what each task sees (SLURM_*, CUDA_VISIBLE_DEVICES).
    Env(env_cmd::EnvArgs),
    /// Warn about GPU pitfalls in a batch script (exit 0; 1 with --deny-warnings and findings).
    Lint(lint_cmd::LintArgs),
    /// The simulated queue at time T, as squeue prints it.
    Squeue(views::SqueueArgs),
    /// Accounting records of a run, as sacct prints them.
    Sacct(views::SacctArgs),
    /// Per-node state and GRES use at time T, as sinfo -N prints them.
    Sinfo(views::SinfoArgs),
    /// Why a job is pending at time T.
    Explain(views::ExplainArgs),
    /// Shares, usage and fair-share factors per association at time T, as sshare -a -l prints them.
    Sshare(views::SshareArgs),
    /// Write a self-contained report.html for a run directory.
    Report(views::ReportArgs),
}

#[derive(clap::Args, Debug)]
struct ConformanceArgs {
    /// The case file (harness scenario format).
    case: PathBuf,
    /// Where to write the simulated recording (default: stdout).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Scheduling policy (default: slurm).
    #[arg(long, default_value = "slurm")]
    policy: String,
    /// Seconds a preempted job's kill stays COMPLETING (default 0: done at
    /// once). 4 is slurmstepd's slow path (docs/preemption.md).
    #[arg(long, value_name = "SECONDS")]
    preempt_completing: Option<u64>,
    /// What kills a preempted job whose grace time is over: `checked`
    /// (default, Slurm's: the first preemption attempt or 30-s time-limit
    /// check at or after its end) or `at-end` (exactly at its end).
    #[arg(long, value_name = "WHEN")]
    grace_kill: Option<gresim::policy::GraceKill>,
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    input: inputs::ScenarioInput,
    /// Output directory (default: the scenario's outputs.dir, else out/<scenario name>).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Seed for the synthetic workload (default: the scenario's seed).
    #[arg(long)]
    seed: Option<u64>,
    /// Scheduling policy, overriding the scenario's: slurm (Slurm's main
    /// scheduler and backfill), fifo, first-fit, best-fit, spread,
    /// topology-aware, dynamic-mig; or the classic policies, planned with
    /// time limits: strict-fifo (no job overtakes the queue head), easy
    /// (EASY backfilling: only the head holds a reservation), conservative
    /// (every queued job holds a reservation).
    #[arg(long)]
    policy: Option<String>,
    /// Print nothing on success.
    #[arg(long, short)]
    quiet: bool,
    /// How to print the summary on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(flatten)]
    views: views::RunViewArgs,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
}

/// An error and the exit code it deserves.
struct Failure {
    code: u8,
    msg: String,
}

/// A run that stopped: a bug (exit 1) or a problem of the input (exit 2).
impl From<gresim::RunError> for Failure {
    fn from(e: gresim::RunError) -> Self {
        if e.is_internal() {
            Failure::internal(e.source)
        } else {
            Failure::input(e)
        }
    }
}

/// A library error: bad input (exit 2), a run that stopped, or outputs
/// that could not be written (exit 1).
impl From<gresim::Error> for Failure {
    fn from(e: gresim::Error) -> Self {
        match e {
            gresim::Error::Input(e) => Failure::input(e),
            gresim::Error::Run(e) => Failure::from(e),
            gresim::Error::Write(msg) => Failure::internal(msg),
        }
    }
}

impl Failure {
    fn input(msg: impl std::fmt::Display) -> Self {
        Failure {
            code: 2,
            msg: msg.to_string(),
        }
    }
    fn internal(msg: impl std::fmt::Display) -> Self {
        Failure {
            code: 1,
            msg: msg.to_string(),
        }
    }
}

/// `sim FILE …` is short for `sim run FILE …`.
fn normalise_args(mut args: Vec<OsString>) -> Vec<OsString> {
    // The subcommands clap knows, so a new one needs no list of its own.
    let cmd = <Cli as clap::CommandFactory>::command();
    let known: Vec<&str> = cmd
        .get_subcommands()
        .map(clap::Command::get_name)
        .chain(["help"])
        .collect();
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        if !first.starts_with('-') && !known.contains(&first) {
            args.insert(1, OsString::from("run"));
        }
    }
    args
}

/// mimalloc: fewer instructions per allocation than glibc's malloc in the
/// engine's many small records (docs/performance.md, "2026-12-05 (tenth
/// session)"); no result depends on the allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(normalise_args(std::env::args_os().collect())) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.cmd {
        Command::Run(args) => cmd_run(&args),
        Command::Conformance(args) => cmd_conformance(&args),
        Command::Squeue(a) => views::cmd_squeue(&a).map_err(|(code, msg)| Failure { code, msg }),
        Command::Sacct(a) => views::cmd_sacct(&a).map_err(|(code, msg)| Failure { code, msg }),
        Command::Sinfo(a) => views::cmd_sinfo(&a).map_err(|(code, msg)| Failure { code, msg }),
        Command::Explain(a) => views::cmd_explain(&a).map_err(|(code, msg)| Failure { code, msg }),
        Command::Sshare(a) => views::cmd_sshare(&a).map_err(|(code, msg)| Failure { code, msg }),
        Command::Report(a) => views::cmd_report(&a).map_err(|(code, msg)| Failure { code, msg }),
        Command::Fgd(args) => fgd_cmd::cmd_fgd(&args),
        Command::Env(args) => env_cmd::cmd_env(&args),
        Command::Compare(args) => compare_cmd::cmd_compare(&args),
        Command::Sweep(args) => sweep_cmd::cmd_sweep(&args),
        Command::Lint(args) => lint_cmd::cmd_lint(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.msg);
            ExitCode::from(f.code)
        }
    }
}

fn cmd_run(args: &RunArgs) -> Result<(), Failure> {
    let scenario = args.input.load_runnable()?;
    let variants = gresim_io::variants::build_variants(&scenario).map_err(Failure::input)?;
    if !args.quiet {
        for w in &scenario.warnings {
            eprintln!("warning: {w}");
        }
    }
    let policy = match &args.policy {
        Some(p) => p.parse::<gresim::PolicyKind>().map_err(Failure::input)?,
        None => scenario.policy,
    };
    let seed = args.seed.unwrap_or(scenario.seed);
    let mut bar = progress::Progress::new(progress::job_total(&scenario), "jobs done", args.quiet);
    let mut sim = gresim::Simulation::new(&scenario)
        .policy(policy)
        .seed(seed)
        .record_reasons(args.views.record_reasons(&scenario));
    if let Some(hook) = progress::hook(&bar) {
        sim = sim.progress(hook);
    }
    // An input error is named after the file that names the run (a
    // scenario, or the slurm.conf a `--cluster` run was composed from).
    let outcome = sim.run().map_err(|e| {
        if e.is_internal() {
            Failure::from(e)
        } else {
            Failure::input(format!("{}: {}", args.input.label().display(), e.source))
        }
    })?;
    bar.finish();
    let dir = out_dir(args, &scenario);
    let summary = outcome.write(&dir).map_err(|e| {
        Failure::internal(format!("cannot write outputs to {}: {e}", dir.display()))
    })?;
    views::after_run(&args.views, &dir).map_err(|(code, msg)| Failure { code, msg })?;
    let side_by_side = if variants.is_empty() {
        String::new()
    } else {
        variants_cmd::run_variants(&scenario, &outcome, &summary, &variants, seed, &dir)?
    };
    if !args.quiet {
        let text = match args.format {
            Format::Table => format!(
                "{}outputs    {}\n{side_by_side}",
                summary.table(),
                dir.display()
            ),
            Format::Json => summary.to_json(),
        };
        print_stdout(&text)?;
    }
    Ok(())
}

/// Prints to stdout; a closed pipe (`sim … | head`) is not an error.
fn print_stdout(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::internal(format!("cannot write to stdout: {e}"))),
    }
}

fn out_dir(args: &RunArgs, scenario: &gresim_io::Scenario) -> PathBuf {
    if let Some(o) = &args.out {
        return o.clone();
    }
    if let Some(o) = &scenario.out_dir {
        return o.clone();
    }
    Path::new("out").join(&scenario.name)
}

fn cmd_conformance(args: &ConformanceArgs) -> Result<(), Failure> {
    let opts = gresim_conformance::CaseOptions {
        policy: args.policy.clone(),
        preempt_completing: args.preempt_completing,
        grace_kill: args.grace_kill,
    };
    let run = gresim_conformance::run_case(&args.case, &opts).map_err(|e| match e {
        gresim_conformance::CaseError::Input(m) => Failure::input(m),
        gresim_conformance::CaseError::Internal(m) => Failure::internal(m),
    })?;
    let text = serde_json::to_string_pretty(&run.recording).map_err(Failure::internal)? + "\n";
    match &args.output {
        Some(p) => write_atomic(p, &text)?,
        None => print_stdout(&text)?,
    }
    if let Some((recorded, lines)) = &run.against {
        let mut report = format!(
            "diff against {}: {} task(s) differ\n",
            recorded.display(),
            lines.len()
        );
        for l in lines {
            report.push_str("  ");
            report.push_str(l);
            report.push('\n');
        }
        eprint!("{report}");
    }
    Ok(())
}

/// Writes a file through a temporary name, so a failure leaves nothing half-written.
fn write_atomic(path: &Path, text: &str) -> Result<(), Failure> {
    let tmp = path.with_extension("tmp-gresim");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| Failure::internal(format!("cannot write {}: {e}", path.display())))
}
