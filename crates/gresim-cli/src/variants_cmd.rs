//! `sim run` on a scenario with `variants`: after the base run the library
//! runs each variant and writes the side-by-side table
//! (`gresim::variants`); this maps its errors to exit codes.

use std::path::Path;

use gresim::variants::{self, Error};
use gresim::{Outcome, Scenario};
use gresim_io::variants::Variant;
use gresim_report::summary::Summary;

use crate::Failure;

/// Runs the variants, writes their outputs under `dir` and the table beside
/// the base run's; returns the text to print after the summary.
pub fn run_variants(
    base: &Scenario,
    base_run: &Outcome,
    base_summary: &Summary,
    list: &[Variant],
    seed: u64,
    dir: &Path,
) -> Result<String, Failure> {
    variants::run(list, seed)
        .and_then(|runs| variants::write(base, base_run, base_summary, list, &runs, seed, dir))
        .map_err(|e| match e {
            Error::Run { variant, source } if source.is_internal() => {
                Failure::internal(format!("variant '{variant}': {}", source.source))
            }
            Error::Run { variant, source } => Failure::input(format!(
                "{}: variant '{variant}': {}",
                base.path.display(),
                source.source
            )),
            Error::Write(msg) => Failure::internal(msg),
        })
}
