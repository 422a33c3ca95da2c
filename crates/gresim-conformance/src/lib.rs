//! The conformance harness's side in gresim: what `sim conformance` and
//! `cargo xtask conformance` use to compare gresim with recordings of real
//! Slurm 22.05 (docs/slurm-fidelity.md).
//!
//! - [`case`]: the harness's case format (`cases/NAME.json`), read into a
//!   [`gresim_io::Scenario`] configured as the harness configures Slurm;
//! - [`recording`]: a simulation's outcome in the recording schema that the
//!   harness writes for real Slurm and `score.py` reads;
//! - [`diff`]: per-task differences between two recordings;
//! - [`run_case`]: one case simulated through [`gresim::Simulation`], its
//!   recording and, when a recording lies beside the case, the differences.

pub mod case;
pub mod diff;
pub mod recording;

use std::path::{Path, PathBuf};

pub use case::{load_case, Case};
pub use diff::diff;
pub use recording::recording;

/// Why a case could not be simulated.
#[derive(Debug)]
pub enum CaseError {
    /// The case, the recording beside it or the policy name is wrong: the
    /// message names the file (and line or path) and what was expected.
    Input(String),
    /// gresim itself failed (a bug).
    Internal(String),
}

impl std::fmt::Display for CaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseError::Input(m) | CaseError::Internal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for CaseError {}

/// What [`run_case`] gives back.
#[derive(Debug)]
pub struct CaseRun {
    /// The simulated outcome in the recording schema.
    pub recording: serde_json::Value,
    /// The recording beside the case (`NAME.result.json`) and the
    /// differences from it, when there is one.
    pub against: Option<(PathBuf, Vec<String>)>,
}

/// How [`run_case`] simulates a case.
#[derive(Debug, Clone)]
pub struct CaseOptions {
    /// The policy by name (`slurm` for the harness's configuration).
    pub policy: String,
    /// Overrides `SchedParams::preempt_completing` (docs/preemption.md).
    pub preempt_completing: Option<u64>,
    /// Overrides `SchedParams::grace_kill` (docs/preemption.md).
    pub grace_kill: Option<gresim::policy::GraceKill>,
}

impl Default for CaseOptions {
    fn default() -> Self {
        CaseOptions {
            policy: "slurm".into(),
            preempt_completing: None,
            grace_kill: None,
        }
    }
}

/// Simulates the case at `path` with pending reasons recorded, writes its
/// outcome in the recording schema and compares it with the recording
/// beside the case, if there is one.
pub fn run_case(path: &Path, opts: &CaseOptions) -> Result<CaseRun, CaseError> {
    let mut case = load_case(path).map_err(|e| CaseError::Input(e.to_string()))?;
    if let Some(c) = opts.preempt_completing {
        case.scenario.params.preempt_completing = c;
    }
    if let Some(g) = opts.grace_kill {
        case.scenario.params.grace_kill = g;
    }
    let policy = opts
        .policy
        .parse::<gresim::PolicyKind>()
        .map_err(|e| CaseError::Input(e.to_string()))?;
    let out = gresim::Simulation::new(&case.scenario)
        .policy(policy)
        .record_reasons(true)
        .run()
        .map_err(|e| {
            if e.is_internal() {
                CaseError::Internal(e.source.to_string())
            } else {
                CaseError::Input(format!("{}: {}", path.display(), e.source))
            }
        })?
        .output;
    let rec = recording(&case, &out);
    let stem = path.to_string_lossy().trim_end_matches(".json").to_string();
    let recorded = PathBuf::from(format!("{stem}.result.json"));
    let against = if recorded.exists() {
        let bad =
            |e: &dyn std::fmt::Display| CaseError::Input(format!("{}: {e}", recorded.display()));
        let text = std::fs::read_to_string(&recorded).map_err(|e| bad(&e))?;
        let rec_json: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(&e))?;
        let lines = diff(&rec_json, &rec);
        Some((recorded, lines))
    } else {
        None
    };
    Ok(CaseRun {
        recording: rec,
        against,
    })
}
