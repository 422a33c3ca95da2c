//! `gresim._gresim`: the native half of the Python package `gresim`.
//!
//! Everything here goes through the library's entry point
//! ([`gresim::Simulation`]) and its functions; nothing is simulated, written
//! or computed twice. The Python half (`python/gresim/`) turns what this
//! module returns (JSON text, plain lists) into dicts and DataFrames, and
//! defines the exceptions this module raises ([`errors`]).

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

mod batch;
mod env;
mod errors;
mod fgd;
mod outcome;
mod pass_policy;
mod placement;

use outcome::Outcome;

/// A loaded, checked scenario (`gresim.load`): run it many times without
/// reading it again.
#[pyclass(frozen, module = "gresim._gresim")]
pub struct Scenario {
    pub inner: Arc<gresim::Scenario>,
}

#[pymethods]
impl Scenario {
    /// The scenario's name.
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    /// The file it was read from (`<dict>` for a dict).
    #[getter]
    fn path(&self) -> String {
        self.inner.path.display().to_string()
    }

    /// The scenario's own seed.
    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed
    }

    /// The scenario's own policy.
    #[getter]
    fn policy(&self) -> String {
        self.inner.policy.to_string()
    }

    /// Warnings about the inputs (as `sim run` prints them, without `warning: `).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "Scenario(name={:?}, path={:?})",
            self.inner.name,
            self.inner.path.display().to_string()
        )
    }
}

/// The name a scenario given as a dict goes by in errors; relative paths in
/// it are taken from the working directory.
pub const DICT_SCENARIO: &str = "<dict>";

/// A scenario from what Python gave: a `Scenario`, a path, or a dict.
pub fn scenario_arg(py: Python<'_>, arg: &Bound<'_, PyAny>) -> PyResult<Arc<gresim::Scenario>> {
    if let Ok(s) = arg.cast::<Scenario>() {
        return Ok(Arc::clone(&s.get().inner));
    }
    let loaded = if arg.is_instance_of::<PyDict>() {
        let json = py.import("json")?;
        let text: String = json.call_method1("dumps", (arg,))?.extract()?;
        // Lines of the dumped text are no lines of anything the user wrote:
        // a dict's errors name the JSON path only.
        gresim_io::parse_scenario(std::path::Path::new(DICT_SCENARIO), &text)
            .and_then(|s| match &s.impossible {
                Some(e) => Err(e.clone()),
                None => Ok(s),
            })
            .map_err(|mut e| {
                e.line = None;
                e
            })
    } else if arg.is_instance_of::<PyString>() || arg.hasattr("__fspath__")? {
        let path: PathBuf = arg.extract()?;
        gresim::load_runnable_scenario(&path)
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "scenario: expected a path, a dict or a gresim.Scenario, got {}",
            arg.get_type().name()?
        )));
    };
    loaded
        .map(Arc::new)
        .map_err(|e| errors::input_error(py, &e))
}

/// Reads and checks a scenario (a path or a dict), as `sim run` does
/// before it runs one.
#[pyfunction]
fn load(py: Python<'_>, scenario: &Bound<'_, PyAny>) -> PyResult<Scenario> {
    Ok(Scenario {
        inner: scenario_arg(py, scenario)?,
    })
}

/// A policy name, as `--policy` takes it.
pub fn policy_kind(py: Python<'_>, name: &str) -> PyResult<gresim::PolicyKind> {
    name.parse::<gresim::PolicyKind>()
        .map_err(|e| errors::usage_error(py, "policy", &e.to_string()))
}

/// One run of `scenario` with one of gresim's policies (`None`: the
/// scenario's own) and `seed` (`None`: the scenario's own), keeping the
/// pending-reason history as `sim run` does unless `reasons` says: exactly
/// what `sim run --policy P --seed S` runs. The simulation runs without the GIL.
#[pyfunction]
#[pyo3(signature = (scenario, policy=None, seed=None, reasons=None))]
fn run_builtin(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    policy: Option<&str>,
    seed: Option<u64>,
    reasons: Option<bool>,
) -> PyResult<Outcome> {
    let scenario = scenario_arg(py, scenario)?;
    let kind = match policy {
        Some(p) => policy_kind(py, p)?,
        None => scenario.policy,
    };
    let seed = seed.unwrap_or(scenario.seed);
    let reasons = reasons.unwrap_or_else(|| gresim::reasons_by_default(&scenario));
    let result = py.detach(|| {
        gresim::Simulation::new(&scenario)
            .policy(kind)
            .seed(seed)
            .record_reasons(reasons)
            .run()
    });
    let outcome = result.map_err(|e| errors::run_error(py, &e))?;
    Ok(Outcome::new(outcome, seed))
}

/// A policy's name, kept for the rest of the process (reports and
/// `Policy::name` want a `&'static str`); each distinct name is kept once.
pub fn static_name(name: &str) -> &'static str {
    static NAMES: std::sync::Mutex<std::collections::BTreeMap<String, &'static str>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    let mut m = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(s) = m.get(name) {
        return s;
    }
    let s: &'static str = Box::leak(name.to_string().into_boxed_str());
    m.insert(name.to_string(), s);
    s
}

/// The result of a run with a Python policy: a `PolicyError` chained to the
/// policy's own exception when the policy failed.
fn policy_run_result(
    py: Python<'_>,
    result: Result<gresim::Outcome, gresim::RunError>,
    failure: &placement::FailureSlot,
    seed: u64,
) -> PyResult<Outcome> {
    match result {
        Ok(o) => Ok(Outcome::new(o, seed)),
        Err(e) => match (&e.source, failure.take()) {
            // A decision the engine refused leaves no Python exception.
            (gresim::EngineError::Policy { .. }, f) => {
                let cause = f.and_then(|f| f.err);
                let tb = cause.as_ref().and_then(|c| errors::traceback_text(py, c));
                let err = errors::policy_error_with(py, &e.to_string(), tb.as_deref());
                if let Some(cause) = cause {
                    err.set_cause(py, Some(cause));
                }
                Err(err)
            }
            _ => Err(errors::run_error(py, &e)),
        },
    }
}

/// One run of `scenario` with a policy that calls Python (made by `make`
/// from the run's failure slot), `seed` and `reasons` as `run_builtin`
/// takes them. The run holds the GIL: the policy is called in this thread.
fn run_python_policy(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    seed: Option<u64>,
    reasons: Option<bool>,
    make: impl FnOnce(Arc<placement::FailureSlot>) -> Box<dyn gresim::Policy>,
) -> PyResult<Outcome> {
    let scenario = scenario_arg(py, scenario)?;
    let seed = seed.unwrap_or(scenario.seed);
    let reasons = reasons.unwrap_or_else(|| gresim::reasons_by_default(&scenario));
    let failure = Arc::new(placement::FailureSlot::default());
    let result = gresim::Simulation::new(&scenario)
        .custom_policy(make(Arc::clone(&failure)))
        .seed(seed)
        .record_reasons(reasons)
        .run();
    policy_run_result(py, result, &failure, seed)
}

/// One run of `scenario` with Slurm's queue, main pass and backfill, the
/// nodes and GPUs of each job that fits chosen by the Python callable
/// `place` (see `gresim.run`).
#[pyfunction]
#[pyo3(signature = (scenario, place, name, seed=None, reasons=None))]
fn run_placement(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    place: Py<PyAny>,
    name: &str,
    seed: Option<u64>,
    reasons: Option<bool>,
) -> PyResult<Outcome> {
    run_python_policy(py, scenario, seed, reasons, |failure| {
        let custom = Arc::new(placement::PyPlacement::new(
            place,
            static_name(name),
            failure,
        ));
        Box::new(gresim_sched::Fifo::with_placement(
            gresim_sched::placement::Placement::Custom(custom),
        ))
    })
}

/// One run of `scenario` whose main passes the Python callable `decide`
/// makes whole (see `gresim.run` and docs/python.md): Slurm's admission
/// and queue order, no backfill, every decision checked by the engine's
/// `ExternalPass`.
#[pyfunction]
#[pyo3(signature = (scenario, decide, name, seed=None, reasons=None))]
fn run_pass_policy(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    decide: Py<PyAny>,
    name: &str,
    seed: Option<u64>,
    reasons: Option<bool>,
) -> PyResult<Outcome> {
    run_python_policy(py, scenario, seed, reasons, |failure| {
        let decider = pass_policy::PyPass::new(decide, static_name(name), failure);
        Box::new(gresim_sched::external::ExternalPass::new(decider))
    })
}

/// The names of gresim's policies, in the order `sim --help` lists them.
#[pyfunction]
fn policies() -> Vec<&'static str> {
    gresim::PolicyKind::ALL
        .map(gresim::PolicyKind::name)
        .to_vec()
}

/// The native half of the `gresim` package.
#[pymodule]
mod _gresim {
    #[pymodule_export]
    use super::batch::{compare, sweep};
    #[pymodule_export]
    use super::env::EnvCore;
    #[pymodule_export]
    use super::fgd::fgd;
    #[pymodule_export]
    use super::pass_policy::{PassView, QueuedJob};
    #[pymodule_export]
    use super::placement::PlacementQuery;
    #[pymodule_export]
    use super::{load, policies, run_builtin, run_pass_policy, run_placement, Outcome, Scenario};
}
