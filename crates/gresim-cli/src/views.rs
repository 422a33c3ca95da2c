//! The Slurm-style views of a finished run (`sim squeue`, `sacct`, `sinfo`,
//! `explain`), `sim report`, and the extra outputs of `sim run` (`--report`,
//! `--metrics`, the pending-reason history). The logic lives in
//! gresim-report; this is argument parsing and glue.
//!
//! Every function returns `Err((exit code, message))`: 2 for bad input (a
//! missing or garbled run directory, a bad format), 1 for internal errors.

use std::path::{Path, PathBuf};

use gresim_report::run_file::RunFile;
use gresim_report::slurmfmt::parse_at;

/// An exit code and a message.
pub type ViewError = (u8, String);

fn input(msg: impl std::fmt::Display) -> ViewError {
    (2, msg.to_string())
}

/// Extra `sim run` options, flattened into its arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RunViewArgs {
    /// Keep no pending-reason history (saves memory on very large runs; the
    /// views then show each job's last reason). The history is kept by
    /// default for inline and synthetic workloads of up to 200 000
    /// submissions, and not for streamed traces.
    #[arg(long)]
    pub no_reasons: bool,
    /// Keep the reason history for any workload (large ones, streamed traces).
    #[arg(long, conflicts_with = "no_reasons")]
    pub reasons: bool,
    /// Also write report.html (a self-contained HTML report) into the output directory.
    #[arg(long)]
    pub report: bool,
    /// Also write every chart as PNG: utilization.png beside utilization.svg,
    /// and the report's charts as charts/NAME.svg and charts/NAME.png.
    #[arg(long)]
    pub png: bool,
    /// Write monitoring series (metrics.om, OpenMetrics; metrics.csv) into DIR.
    #[arg(long, value_name = "DIR")]
    pub metrics: Option<PathBuf>,
    /// Seconds between metric snapshots.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub metrics_interval: u64,
}

impl RunViewArgs {
    /// Whether the run of `s` records the reason history: as
    /// [`gresim::reasons_by_default`] unless told.
    pub fn record_reasons(&self, s: &gresim_io::Scenario) -> bool {
        !self.no_reasons && (self.reasons || gresim::reasons_by_default(s))
    }
}

/// After `sim run` wrote its outputs into `dir`: the report and the metrics.
pub fn after_run(a: &RunViewArgs, dir: &Path) -> Result<(), ViewError> {
    if !a.report && !a.png && a.metrics.is_none() {
        return Ok(());
    }
    let rf = RunFile::load(dir).map_err(|e| (1, e))?;
    if a.report {
        write_report(&rf, dir)?;
    }
    if a.png {
        // The run just wrote utilization.svg: a failure here is internal.
        write_pngs(&rf, dir).map_err(|(_, e)| (1, e))?;
    }
    if let Some(m) = &a.metrics {
        let (om, csv) = gresim_report::metrics::metrics_files(&rf, a.metrics_interval);
        gresim_report::write_files_atomic(m, &[("metrics.om", om), ("metrics.csv", csv)])
            .map_err(|e| (1, format!("cannot write metrics to {}: {e}", m.display())))?;
    }
    Ok(())
}

fn write_report(rf: &RunFile, dir: &Path) -> Result<PathBuf, ViewError> {
    let summary: Option<serde_json::Value> = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let html = gresim_report::html::report_html(rf, summary.as_ref());
    gresim_report::write_files_atomic(dir, &[(gresim_report::html::REPORT_FILE, html)]).map_err(
        |e| {
            (
                1,
                format!("cannot write the report into {}: {e}", dir.display()),
            )
        },
    )?;
    Ok(dir.join(gresim_report::html::REPORT_FILE))
}

/// Writes `utilization.png` beside `utilization.svg` (when the run directory
/// has one) and every report chart as `charts/NAME.svg` and
/// `charts/NAME.png`. Returns the files written.
fn write_pngs(rf: &RunFile, dir: &Path) -> Result<Vec<PathBuf>, ViewError> {
    use gresim_report::charts::{chart_files, CHARTS_DIR};
    use gresim_report::raster::{png_name, svg_to_png};
    let mut written = Vec::new();
    let util = "utilization.svg";
    let util_path = dir.join(util);
    if util_path.exists() {
        let svg = std::fs::read_to_string(&util_path)
            .map_err(|e| input(format!("{}: cannot read ({e})", util_path.display())))?;
        let png = svg_to_png(&svg).map_err(|e| input(format!("{}: {e}", util_path.display())))?;
        let name = png_name(util).expect("an .svg name");
        gresim_report::write_files_atomic(dir, &[(name.as_str(), png)]).map_err(|e| {
            (
                1,
                format!("cannot write {name} into {}: {e}", dir.display()),
            )
        })?;
        written.push(dir.join(name));
    }
    let files = chart_files(rf).map_err(|e| (1, e))?;
    let charts = dir.join(CHARTS_DIR);
    let named: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    gresim_report::write_files_atomic(&charts, &named).map_err(|e| {
        (
            1,
            format!("cannot write charts into {}: {e}", charts.display()),
        )
    })?;
    written.extend(files.iter().map(|(n, _)| charts.join(n)));
    Ok(written)
}

/// Prints to stdout; a closed pipe is not an error.
fn print(text: &str) -> Result<(), ViewError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err((1, format!("cannot write to stdout: {e}"))),
    }
}

fn load(dir: &Path) -> Result<RunFile, ViewError> {
    RunFile::load(dir).map_err(input)
}

fn at(rf: &RunFile, s: Option<&str>) -> Result<u64, ViewError> {
    match s {
        Some(s) => parse_at(s).map_err(input),
        None => Ok(rf.end_time),
    }
}

#[derive(clap::Args, Debug)]
pub struct SqueueArgs {
    /// A run directory written by `sim run` (or its run.json).
    pub run_dir: PathBuf,
    /// Simulated time (seconds, or [D-]HH:MM:SS); default: the end of the run.
    #[arg(long)]
    pub at: Option<String>,
    /// Output format, squeue's `-o` codes: %i %P %j %u %T %t %M %l %D %R %b.
    #[arg(long, short = 'o')]
    pub format: Option<String>,
    /// Job states to list (PD,R,CD,… or all); default: pending and running.
    #[arg(long, short = 't')]
    pub states: Option<String>,
    /// No header line.
    #[arg(long)]
    pub noheader: bool,
}

pub fn cmd_squeue(a: &SqueueArgs) -> Result<(), ViewError> {
    let rf = load(&a.run_dir)?;
    let states = a
        .states
        .as_deref()
        .map(gresim_report::squeue::parse_states)
        .transpose()
        .map_err(input)?;
    let opts = gresim_report::squeue::SqueueOpts {
        at: at(&rf, a.at.as_deref())?,
        format: a.format.clone(),
        states,
        no_header: a.noheader,
    };
    print(&gresim_report::squeue::squeue(&rf, &opts).map_err(input)?)
}

#[derive(clap::Args, Debug)]
pub struct SacctArgs {
    pub run_dir: PathBuf,
    /// Fields, comma-separated, each optionally with a width (JobName%20).
    #[arg(long, short = 'o')]
    pub format: Option<String>,
    /// `|`-separated output (sacct -P).
    #[arg(long = "parsable2", short = 'P')]
    pub parsable: bool,
    /// One record per run, so requeued jobs show every run (sacct -D).
    #[arg(long, short = 'D')]
    pub duplicates: bool,
    /// No header lines.
    #[arg(long, short = 'n')]
    pub noheader: bool,
}

pub fn cmd_sacct(a: &SacctArgs) -> Result<(), ViewError> {
    let rf = load(&a.run_dir)?;
    let opts = gresim_report::sacct::SacctOpts {
        format: a.format.clone(),
        parsable: a.parsable,
        duplicates: a.duplicates,
        no_header: a.noheader,
    };
    print(&gresim_report::sacct::sacct(&rf, &opts).map_err(input)?)
}

#[derive(clap::Args, Debug)]
pub struct SinfoArgs {
    pub run_dir: PathBuf,
    /// Simulated time (seconds, or [D-]HH:MM:SS); default: the end of the run.
    #[arg(long)]
    pub at: Option<String>,
    /// No header line.
    #[arg(long)]
    pub noheader: bool,
}

pub fn cmd_sinfo(a: &SinfoArgs) -> Result<(), ViewError> {
    let rf = load(&a.run_dir)?;
    let t = at(&rf, a.at.as_deref())?;
    print(&gresim_report::sinfo::sinfo(&rf, t, a.noheader))
}

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {
    pub run_dir: PathBuf,
    /// The job: 123, 123_4, or its scenario key.
    pub job: String,
    /// Simulated time; default: the end of the run if the job is still
    /// pending then, else just before it first started.
    #[arg(long)]
    pub at: Option<String>,
}

pub fn cmd_explain(a: &ExplainArgs) -> Result<(), ViewError> {
    let rf = load(&a.run_dir)?;
    let t = a.at.as_deref().map(parse_at).transpose().map_err(input)?;
    print(&gresim_report::explain::explain(&rf, &a.job, t).map_err(input)?)
}

#[derive(clap::Args, Debug)]
pub struct SshareArgs {
    /// A run directory written by `sim run` (or its run.json).
    pub run_dir: PathBuf,
    /// Simulated time (seconds, or [D-]HH:MM:SS); default: the end of the run.
    #[arg(long)]
    pub at: Option<String>,
}

/// `sim sshare`: the run's scenario is run again, with its policy and seed,
/// up to time T, and the fair-share figures of the last computation before
/// T are printed as `sshare -a -l` does.
pub fn cmd_sshare(a: &SshareArgs) -> Result<(), ViewError> {
    let rf = load(&a.run_dir)?;
    let t = at(&rf, a.at.as_deref())?;
    let Some(text) = rf.scenario_text.as_deref() else {
        return Err(input(format!(
            "{}: the run file holds no scenario text to run again",
            a.run_dir.display()
        )));
    };
    let dir = if a.run_dir.is_file() {
        a.run_dir.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        a.run_dir.clone()
    };
    let mut sc = gresim_io::parse_scenario(&dir.join("run.json#scenario"), text).map_err(input)?;
    if sc.cluster.accounting().is_none() {
        return Err(input(format!(
            "{}: the scenario has no accounting section, so there are no shares",
            a.run_dir.display()
        )));
    }
    sc.impossible = None;
    sc.horizon = Some(sc.horizon.map_or(t, |h| h.min(t)));
    let kind: gresim::PolicyKind = rf.policy.parse().map_err(input)?;
    let mut sim = gresim::Simulation::new(&sc).policy(kind);
    if let Some(seed) = rf.seed {
        sim = sim.seed(seed);
    }
    let out = sim.run().map_err(|e| (1, e.to_string()))?;
    let (Some(acct), Some(usage)) = (out.output.cluster.accounting(), out.output.acct.as_ref())
    else {
        return Err((1, "the run kept no accounting usage".into()));
    };
    print(&gresim_report::sshare::sshare(acct, usage))
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    pub run_dir: PathBuf,
    /// Also write every chart as PNG: utilization.png beside utilization.svg,
    /// and the report's charts as charts/NAME.svg and charts/NAME.png.
    #[arg(long)]
    pub png: bool,
}

pub fn cmd_report(a: &ReportArgs) -> Result<(), ViewError> {
    let rf = load(&a.run_dir)?;
    let dir = if a.run_dir.is_file() {
        a.run_dir.parent().unwrap_or(Path::new(".")).to_path_buf()
    } else {
        a.run_dir.clone()
    };
    let mut written = vec![write_report(&rf, &dir)?];
    if a.png {
        written.extend(write_pngs(&rf, &dir)?);
    }
    let text: String = written
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    print(&text)
}

#[cfg(test)]
mod tests;
