//! `gresim.compare` and `gresim.sweep`: the computations of `sim compare`
//! and `sim sweep`, through the library's [`gresim::compare`] and
//! [`gresim::sweep`], runs in parallel (rayon) without the GIL.

use std::path::PathBuf;

use pyo3::prelude::*;
use rayon::prelude::*;

use crate::errors;
use crate::outcome::Outcome;

/// The library error as the Python exception `sim` would have exited with.
pub fn lib_error(py: Python<'_>, e: gresim::Error) -> PyErr {
    match e {
        gresim::Error::Input(e) => errors::input_error(py, &e),
        gresim::Error::Run(e) => errors::run_error(py, &e),
        gresim::Error::Write(msg) => pyo3::exceptions::PyOSError::new_err(msg),
    }
}

/// Runs `scenario` under each named policy with `seed` (the scenario's own
/// when `None`), in parallel; with `out`, writes what `sim compare --out`
/// writes. Returns the outcomes, in the order of `policies`, the rows as
/// JSON, and the table `sim compare` prints.
#[pyfunction]
#[pyo3(signature = (scenario, policies, seed=None, out=None))]
pub fn compare(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    policies: Vec<String>,
    seed: Option<u64>,
    out: Option<PathBuf>,
) -> PyResult<(Vec<Outcome>, String, String)> {
    let scenario = crate::scenario_arg(py, scenario)?;
    if policies.is_empty() {
        return Err(errors::usage_error(
            py,
            "policies",
            "expected at least one policy",
        ));
    }
    let kinds = policies
        .iter()
        .map(|p| crate::policy_kind(py, p))
        .collect::<PyResult<Vec<_>>>()?;
    let seed = seed.unwrap_or(scenario.seed);
    let runs = py
        .detach(|| gresim::compare::run_policies(&scenario, &kinds, seed))
        .map_err(|e| errors::run_error(py, &e))?;
    let rows = match &out {
        Some(dir) => py
            .detach(|| {
                gresim::compare::write_comparison(dir, &scenario.name, seed, &policies, &runs)
            })
            .map_err(pyo3::exceptions::PyOSError::new_err)?,
        None => policies
            .iter()
            .zip(&runs)
            .map(|(name, run)| gresim::compare::row(name, &run.output, &run.summary(), &run.meta))
            .collect(),
    };
    let json = serde_json::to_string(&rows)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok((
        runs.into_iter().map(|r| Outcome::new(r, seed)).collect(),
        json,
        gresim::compare::table(&rows),
    ))
}

/// Runs every point of the sweep file `path` in parallel (on `threads`
/// workers; every core when `None`); with `out`, writes what `sim sweep
/// --out` writes (each point's outputs as the sweep asks, results.json and
/// results.csv). Returns the results file's head and rows as JSON, and the
/// table `sim sweep` prints.
#[pyfunction]
#[pyo3(signature = (path, out=None, threads=None))]
pub fn sweep(
    py: Python<'_>,
    path: PathBuf,
    out: Option<PathBuf>,
    threads: Option<usize>,
) -> PyResult<(String, String, String)> {
    let sw = gresim::sweep::load(&path).map_err(|e| errors::input_error(py, &e))?;
    if threads == Some(0) {
        return Err(errors::usage_error(
            py,
            "threads",
            "--threads: expected at least 1",
        ));
    }
    let run_all = || -> Result<Vec<gresim::sweep::Row>, gresim::Error> {
        let run = || {
            sw.points
                .par_iter()
                .map(|p| gresim::sweep::run_point(&sw, p, out.as_deref()))
                .collect::<Result<Vec<_>, _>>()
        };
        let rows = match threads {
            Some(t) => rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .map_err(|e| gresim::Error::Write(format!("cannot start {t} threads: {e}")))?
                .install(run)?,
            None => run()?,
        };
        if let Some(dir) = &out {
            gresim::sweep::write_results(&sw.head, &rows, dir)?;
        }
        Ok(rows)
    };
    let rows = py.detach(run_all).map_err(|e| lib_error(py, e))?;
    let text = |v: serde_json::Result<String>| {
        v.map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))
    };
    Ok((
        text(serde_json::to_string(&sw.head))?,
        text(serde_json::to_string(&rows))?,
        gresim::sweep::table(&sw.names, &rows),
    ))
}
