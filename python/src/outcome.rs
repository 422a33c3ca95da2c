//! `gresim._gresim.Outcome`: one run's results, derived on request from the
//! library's [`gresim::Outcome`] by the functions that write `sim run`'s files.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What a run produced (the Python class `gresim.Outcome` wraps it).
#[pyclass(frozen, module = "gresim._gresim")]
pub struct Outcome {
    pub inner: gresim::Outcome,
    seed: u64,
}

impl Outcome {
    pub fn new(inner: gresim::Outcome, seed: u64) -> Self {
        Outcome { inner, seed }
    }
}

#[pymethods]
impl Outcome {
    /// The policy's name.
    #[getter]
    fn policy(&self) -> &str {
        self.inner.policy()
    }

    /// The scenario's name.
    #[getter]
    fn scenario(&self) -> &str {
        &self.inner.meta.scenario
    }

    /// The seed the run used.
    #[getter]
    fn seed(&self) -> u64 {
        self.seed
    }

    /// `summary.json`'s text.
    fn summary_json(&self) -> String {
        self.inner.summary().to_json()
    }

    /// `records.json`'s text.
    fn records_json(&self) -> String {
        gresim_report::records_json(&self.inner.records())
    }

    /// `records.csv`'s text.
    fn records_csv(&self) -> String {
        gresim_report::records_csv(&self.inner.records())
    }

    /// The summary as `sim run` prints it.
    fn table(&self) -> String {
        self.inner.summary().table()
    }

    /// The load timeline (a sample at every change), as columns.
    fn utilization<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tl = &self.inner.output.timeline;
        let d = PyDict::new(py);
        d.set_item("t", tl.iter().map(|s| s.t).collect::<Vec<_>>())?;
        d.set_item(
            "gpus_allocated",
            tl.iter().map(|s| s.alloc_gpus).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "gpus_available",
            tl.iter().map(|s| s.avail_gpus).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "gpu_sevenths_allocated",
            tl.iter().map(|s| s.alloc_gpu_sevenths).collect::<Vec<_>>(),
        )?;
        d.set_item(
            "cpus_allocated",
            tl.iter().map(|s| s.alloc_cpus).collect::<Vec<_>>(),
        )?;
        d.set_item("running", tl.iter().map(|s| s.running).collect::<Vec<_>>())?;
        d.set_item("pending", tl.iter().map(|s| s.pending).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// Writes records.json, records.csv, summary.json, utilization.svg and
    /// run.json into `dir`, atomically, as `sim run --out DIR` does.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        py.detach(|| self.inner.write(&dir))
            .map(|_| ())
            .map_err(|e| crate::errors::write_error(&dir, &e))
    }

    fn __repr__(&self) -> String {
        format!(
            "Outcome(scenario={:?}, policy={:?}, seed={}, jobs={})",
            self.inner.meta.scenario,
            self.inner.policy(),
            self.seed,
            self.inner.output.jobs.len()
        )
    }
}
