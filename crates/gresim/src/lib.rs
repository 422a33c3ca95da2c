//! gresim as a library: the one entry point for running a scenario.
//!
//! ```no_run
//! use gresim::{PolicyKind, Simulation};
//!
//! let scenario = gresim::load_runnable_scenario("scenarios/mig_packing.json".as_ref())?;
//! let outcome = Simulation::new(&scenario)
//!     .policy(PolicyKind::Slurm)
//!     .seed(7)
//!     .run()?;
//! println!("{}", outcome.summary().table());
//! outcome.write("out/mig_packing".as_ref())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `sim run`, `sim compare`, sweeps, a scenario's variants and the
//! benchmarks all run through [`Simulation`]; the `sim` binary only parses
//! arguments and prints. A policy of one's own (anything implementing
//! [`Policy`]) runs through [`Simulation::custom_policy`]; so does a
//! placement of one's own inside Slurm's passes
//! (`Fifo::with_placement(Placement::Custom(..))`, docs/extending.md).

use std::path::{Path, PathBuf};

pub mod compare;
pub mod fgd;
pub mod metrics;
pub mod sweep;
pub mod variants;

pub use gresim_engine::{EngineError, ProgressFn, SimOutput};
pub use gresim_io::{load_runnable_scenario, load_scenario, InputError, Scenario};
/// The interface between the engine and a policy: [`Policy`], the pass
/// context a pass reads and starts jobs through, and the decisions.
pub use gresim_policy as policy;
pub use gresim_policy::Policy;
pub use gresim_report::{JobRecord, RunFile, RunMeta, Summary};
pub use gresim_sched::{PolicyKind, UnknownPolicy};

/// The model a policy reads: clusters, nodes, GPUs, jobs and allocations.
pub use gresim_model as model;
/// Placement strategies, and the trait for a placement of one's own
/// ([`placement::CustomPlacement`], run with [`Fifo::with_placement`]).
pub use gresim_sched::placement;
/// Slurm's passes (main pass and backfill), with a placement of one's choice.
pub use gresim_sched::Fifo;

/// One run of a scenario, set up step by step: the policy and the seed
/// default to the scenario's own.
pub struct Simulation<'a> {
    scenario: &'a Scenario,
    policy: Choice<'a>,
    seed: u64,
    record_reasons: Option<bool>,
    progress: Option<ProgressFn<'a>>,
}

enum Choice<'a> {
    Kind(PolicyKind),
    Custom(Box<dyn Policy + 'a>),
}

impl<'a> Simulation<'a> {
    /// A run of `scenario` with its own policy and seed.
    pub fn new(scenario: &'a Scenario) -> Self {
        Simulation {
            scenario,
            policy: Choice::Kind(scenario.policy),
            seed: scenario.seed,
            record_reasons: None,
            progress: None,
        }
    }

    /// Runs with one of gresim's policies.
    pub fn policy(mut self, kind: PolicyKind) -> Self {
        self.policy = Choice::Kind(kind);
        self
    }

    /// Runs with a policy of one's own.
    pub fn custom_policy(mut self, policy: Box<dyn Policy + 'a>) -> Self {
        self.policy = Choice::Custom(policy);
        self
    }

    /// The seed of the synthetic workload and the failure model.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Whether every pending-reason change is kept for the views (the
    /// scenario input's default otherwise).
    pub fn record_reasons(mut self, on: bool) -> Self {
        self.record_reasons = Some(on);
        self
    }

    /// Calls `f` (simulated time, jobs ended) every
    /// [`gresim_engine::PROGRESS_EVERY`] events; for display only.
    pub fn progress(mut self, f: ProgressFn<'a>) -> Self {
        self.progress = Some(f);
        self
    }

    /// Runs the simulation to its end.
    pub fn run(self) -> Result<Outcome, RunError> {
        let scenario = self.scenario;
        let mut input = scenario.sim_input(self.seed);
        if let Some(on) = self.record_reasons {
            input.record_reasons = on;
        }
        let policy = match self.policy {
            Choice::Kind(k) => k.build(),
            Choice::Custom(p) => p,
        };
        let output = match self.progress {
            None => gresim_engine::run(input, policy),
            Some(f) => gresim_engine::run_with_progress(input, policy, f),
        }
        .map_err(|source| RunError {
            path: scenario.path.clone(),
            source,
        })?;
        Ok(Outcome {
            output,
            meta: RunMeta {
                scenario: scenario.name.clone(),
                scenario_text: Some(scenario.source.clone()),
                actions: scenario.actions.clone(),
                seed: Some(self.seed),
            },
        })
    }
}

/// Runs of more submissions than this keep no pending-reason history
/// unless asked ([`reasons_by_default`]).
pub const REASONS_AUTO_LIMIT: u64 = 200_000;

/// Submissions in a scenario's workload, when known before the run
/// (`None` for a streamed trace, read during the run).
pub fn submissions(s: &Scenario) -> Option<u64> {
    match &s.workload {
        gresim_io::Workload::Jobs(v) => Some(v.len() as u64),
        gresim_io::Workload::Synthetic(x) => Some(x.jobs),
        // Streamed traces are read during the run: their length is unknown.
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// Whether `sim run` keeps every pending-reason change (for the views) when
/// not told: for inline and synthetic workloads of up to
/// [`REASONS_AUTO_LIMIT`] submissions, not for streamed traces.
pub fn reasons_by_default(s: &Scenario) -> bool {
    submissions(s).is_some_and(|n| n <= REASONS_AUTO_LIMIT)
}

/// What stops a library function beyond one run: bad input (exit 2 in the
/// CLI), a run that stopped, or outputs that could not be written (an
/// internal error; the message says what).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("{0}")]
    Write(String),
}

/// A run that stopped: the scenario's path and the engine's error.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", path.display())]
pub struct RunError {
    pub path: PathBuf,
    #[source]
    pub source: EngineError,
}

impl RunError {
    /// A bug (a policy's or the engine's), not a problem of the input.
    pub fn is_internal(&self) -> bool {
        matches!(self.source, EngineError::Internal(_))
    }
}

/// What a run produced: the engine's output and what run.json records
/// beside it; the records, the summary and the run file are derived from
/// them on demand.
pub struct Outcome {
    pub output: SimOutput,
    pub meta: RunMeta,
}

impl Outcome {
    /// The policy's name.
    pub fn policy(&self) -> &str {
        &self.output.policy
    }

    /// The summary (`summary.json`).
    pub fn summary(&self) -> Summary {
        Summary::compute(&self.output, &self.meta.scenario)
    }

    /// Per-job records (`records.json`, `records.csv`).
    pub fn records(&self) -> Vec<JobRecord> {
        gresim_report::job_records(&self.output)
    }

    /// The run file (`run.json`) the views read.
    pub fn run_file(&self) -> RunFile {
        RunFile::from_output(&self.output, &self.meta)
    }

    /// Writes the outputs into `dir` atomically (see
    /// [`gresim_report::write_outputs_with`]) and returns the summary.
    pub fn write(&self, dir: &Path) -> std::io::Result<Summary> {
        gresim_report::write_outputs_with(&self.output, &self.meta, dir)
    }
}
