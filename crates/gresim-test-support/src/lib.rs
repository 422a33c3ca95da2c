//! What the workspace's integration tests share (docs/architecture.md,
//! "Tests"): the repository's paths, the marker a test that cannot run
//! prints ([`skip!`]), a scenario text run with one of Slurm's policies
//! ([`run_text`]), a job found by its key ([`job`]), and golden files with a
//! bless switch ([`golden`]).
//!
//! Only tests depend on this crate (as a dev-dependency); the library crates
//! never do.

pub mod golden;
pub mod skip;

use std::path::{Path, PathBuf};

use gresim_engine::SimOutput;
use gresim_model::job::Job;
use gresim_sched::PolicyKind;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file or directory under the repository's root.
pub fn repo_path(rel: &str) -> PathBuf {
    repo().join(rel)
}

/// `../shared` beside the repository: the team's data and harness, absent on
/// a user's fresh clone. A test that needs it skips with [`skip!`] when it is
/// not there.
pub fn shared() -> PathBuf {
    repo().join("../shared")
}

/// Runs the scenario `text` (read as if from `name`) with `kind` and the
/// scenario's own seed, keeping every job's reason history. Panics, naming
/// `name`, when the text does not parse or the run fails: a test's setup
/// error.
pub fn run_text(name: &str, text: &str, kind: PolicyKind) -> SimOutput {
    let scenario = gresim_io::parse_scenario(Path::new(name), text)
        .unwrap_or_else(|e| panic!("{name}: the scenario does not parse: {e}"));
    let mut input = scenario.sim_input(scenario.seed);
    input.record_reasons = true;
    gresim_engine::run(input, kind.build())
        .unwrap_or_else(|e| panic!("{name}: the run failed: {e}"))
}

/// The job whose submission's key is `key`.
pub fn job<'a>(out: &'a SimOutput, key: &str) -> &'a Job {
    out.jobs
        .iter()
        .find(|j| out.specs[j.sub as usize].key == key)
        .unwrap_or_else(|| panic!("no job {key} in the run"))
}
