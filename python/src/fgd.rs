//! `gresim.fgd`: the FGD reproduction on Alibaba's OpenB trace, the
//! computation `sim fgd` runs ([`gresim::fgd`], `gresim_frag`), in parallel
//! without the GIL.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::errors;
use gresim::fgd::{Experiment, PolicyKind};

/// Runs every (seed, policy) of the experiment on OpenB workload `workload`
/// from `data` (the repository's `data/` by default). Returns
/// `fgd_runs.csv` and `fgd_summary.csv` as `sim fgd --out` writes them, and
/// the cluster's size: (nodes, GPUs, tasks).
#[pyfunction]
#[pyo3(signature = (data=None, workload="default".to_string(), seeds=None, policies=None, threads=None))]
#[allow(clippy::type_complexity)]
pub fn fgd(
    py: Python<'_>,
    data: Option<PathBuf>,
    workload: String,
    seeds: Option<Vec<u64>>,
    policies: Option<Vec<String>>,
    threads: Option<usize>,
) -> PyResult<(String, String, (usize, u64, usize))> {
    let seeds = seeds.unwrap_or_else(|| (42..=51).collect());
    if seeds.is_empty() {
        return Err(errors::usage_error(
            py,
            "seeds",
            "expected at least one seed",
        ));
    }
    let kinds = match policies {
        None => PolicyKind::ALL.to_vec(),
        Some(names) => gresim::fgd::parse_policies(&names)
            .map_err(|m| errors::usage_error(py, "policies", &m))?,
    };
    let data = data.unwrap_or_else(gresim::fgd::repo_data);
    let (cluster, tasks) = gresim::fgd::read_openb(&data, &workload)
        .map_err(|m| errors::input_message(py, None, &m))?;
    let published = gresim::fgd::read_published_figures(&data)
        .map_err(|m| errors::input_message(py, None, &m))?;
    let name = format!("openb_pod_list_{workload}");
    py.detach(|| -> Result<_, String> {
        let exp = Experiment::new(cluster, tasks);
        let size = (
            exp.cluster.nodes.len(),
            exp.cluster.total_gpus(),
            exp.tasks.len(),
        );
        let (results, _) = exp
            .run_grid_on(&seeds, &kinds, threads.unwrap_or(0))
            .map_err(|e| format!("cannot start worker threads: {e}"))?;
        Ok((
            gresim::fgd::runs_csv(&results, &name),
            gresim::fgd::summary_csv(&results, &kinds, published.as_ref(), &name),
            size,
        ))
    })
    .map_err(pyo3::exceptions::PyRuntimeError::new_err)
}
