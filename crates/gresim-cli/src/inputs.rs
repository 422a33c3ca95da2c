//! The scenario a run starts from, as users give it: a scenario file, a
//! site's slurm.conf as the cluster, a trace as the workload, or a mix
//! (`sim run|compare [SCENARIO] [--cluster FILE] [--trace FILE]`).

use std::path::{Path, PathBuf};

use gresim_io::compose::{compose, TraceArg};
use gresim_io::traces::TraceFormat;

use crate::Failure;

#[derive(clap::Args, Debug)]
pub struct ScenarioInput {
    /// The scenario file (JSON, see docs/scenario-format.md); optional with --cluster.
    pub scenario: Option<PathBuf>,
    /// The cluster: a scenario file, or a site's slurm.conf (gres.conf
    /// beside it is read too). Replaces the scenario's cluster and partitions.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// A trace as the workload, replacing the scenario's.
    #[arg(long)]
    pub trace: Option<PathBuf>,
    /// The trace's format: json, sacct, swf, openb, helios, batsim
    /// (default: told from its first line).
    #[arg(long, requires = "trace")]
    pub trace_format: Option<String>,
}

impl ScenarioInput {
    /// The file that names the run in errors.
    pub fn label(&self) -> &Path {
        self.scenario
            .as_deref()
            .or(self.cluster.as_deref())
            .unwrap_or(Path::new("<command line>"))
    }

    /// The scenario, refused when a job in it could never run.
    pub fn load_runnable(&self) -> Result<gresim_io::Scenario, Failure> {
        let s = match (&self.scenario, &self.cluster, &self.trace) {
            (Some(s), None, None) => {
                return gresim_io::load_runnable_scenario(s).map_err(Failure::input)
            }
            (None, None, _) => {
                return Err(Failure::input(
                    "expected a scenario file, or --cluster (a scenario or a slurm.conf)",
                ))
            }
            (None, Some(c), None) => {
                if gresim_io::compose::classify(c).map_err(Failure::input)?
                    == gresim_io::compose::ClusterFile::SlurmConf
                {
                    return Err(Failure::input(format!(
                        "{}: a slurm.conf has no jobs: give --trace FILE, or a scenario file",
                        c.display()
                    )));
                }
                compose(None, Some(c), None)
            }
            (scenario, cluster, trace) => {
                let format = match &self.trace_format {
                    None => None,
                    Some(f) => Some(TraceFormat::from_name(f).ok_or_else(|| {
                        Failure::input(format!(
                            "--trace-format: unknown format '{f}'; expected one of {}",
                            TraceFormat::NAMES.join(", ")
                        ))
                    })?),
                };
                let t = trace.as_deref().map(|path| TraceArg { path, format });
                compose(scenario.as_deref(), cluster.as_deref(), t.as_ref())
            }
        }
        .map_err(Failure::input)?;
        match s.impossible {
            Some(e) => Err(Failure::input(e)),
            None => Ok(s),
        }
    }
}
