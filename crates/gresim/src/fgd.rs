//! The FGD reproduction (ATC'23) on Alibaba's OpenB trace, as `sim fgd`
//! and the Python package's `gresim.fgd` run it: the data, the grid of
//! seeds and policies, and the two result files.
//!
//! The experiment itself (arrivals, the policies, the fragmentation
//! measure) is `gresim_frag`; this module reads its inputs from a data
//! root laid out as the repository's `data/` and writes
//! `fgd_runs.csv`/`fgd_summary.csv` the same way for every caller.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use gresim_frag::experiment::{stat, Experiment, Metric, RunResult, MAX_PCT};
use gresim_frag::model::TaskSpec;
use gresim_frag::openb::{read_nodes, read_published, read_tasks, Cluster};
pub use gresim_frag::openb::{Published, PublishedKey};
pub use gresim_frag::PolicyKind;

/// The published figures, by (metric, workload, policy, arrival %).
pub type PublishedTable = BTreeMap<PublishedKey, Published>;

/// The repository's `data/` directory, where OpenB's CSVs and the published
/// figures ship compressed (data/*/SOURCE.md).
pub fn repo_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

/// OpenB's cluster and the tasks of workload `name` (the file
/// `openb_pod_list_<name>.csv`, or `.csv.gz`) under `data`.
pub fn read_openb(data: &Path, name: &str) -> Result<(Cluster, Vec<TaskSpec>), String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "bad workload name '{name}': expected letters, digits, '_' and '-'"
        ));
    }
    let dir = data.join("alibaba-openb-gpu-v2023");
    let cluster =
        read_nodes(&dir.join("openb_node_list_gpu_node.csv")).map_err(|e| e.to_string())?;
    let tasks = read_tasks(&dir.join(format!("openb_pod_list_{name}.csv")), &cluster)
        .map_err(|e| e.to_string())?;
    Ok((cluster, tasks))
}

/// The published summary under `data`, when it is there.
pub fn read_published_figures(data: &Path) -> Result<Option<PublishedTable>, String> {
    let path = data.join("fgd-expected-results/fgd_summary_by_arrival.csv");
    if path.exists() || path.with_extension("csv.gz").exists() {
        read_published(&path).map(Some).map_err(|e| e.to_string())
    } else {
        Ok(None)
    }
}

/// The policies named in `names` (as `sim fgd --policies` and `gresim.fgd`
/// spell them), each once, in order.
pub fn parse_policies<S: AsRef<str>>(names: &[S]) -> Result<Vec<PolicyKind>, String> {
    let mut out = Vec::new();
    for p in names
        .iter()
        .map(AsRef::as_ref)
        .filter(|p| !p.trim().is_empty())
    {
        let k = PolicyKind::parse(p).ok_or_else(|| {
            format!(
                "unknown policy '{p}'; expected some of {}",
                PolicyKind::ALL.map(PolicyKind::name).join(", ")
            )
        })?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err("no policy given".into());
    }
    Ok(out)
}

/// The published mean of `metric` for policy `p` at `pct` % arrived.
pub fn published_mean(
    published: Option<&PublishedTable>,
    metric: Metric,
    workload: &str,
    p: PolicyKind,
    pct: usize,
) -> Option<f64> {
    let key = (
        metric.upstream_name().to_string(),
        workload.to_string(),
        p.upstream_label().to_string(),
        pct as u32,
    );
    published?
        .get(&key)
        .map(|v| v.mean)
        .filter(|m| m.is_finite())
}

/// `fgd_runs.csv`: every run's figure per metric and arrival percentage.
pub fn runs_csv(results: &[RunResult], workload: &str) -> String {
    let mut runs = String::from("workload,sc_policy,seed,metric,arrived_gpu_request_pct,value\n");
    for r in results {
        for m in Metric::ALL {
            for pct in 0..=MAX_PCT {
                if let Some(v) = r.get(m, pct) {
                    let _ = writeln!(
                        runs,
                        "{workload},{},{},{},{pct},{v}",
                        r.policy.upstream_label(),
                        r.seed,
                        m.upstream_name()
                    );
                }
            }
        }
    }
    runs
}

/// `fgd_summary.csv`: per metric, policy and arrival percentage (every
/// 10 %), the mean over seeds beside the published mean.
pub fn summary_csv(
    results: &[RunResult],
    policies: &[PolicyKind],
    published: Option<&PublishedTable>,
    workload: &str,
) -> String {
    let mut summary = String::from(
        "metric,workload,sc_policy,arrived_gpu_request_pct,mean,std,n_seeds,published_mean,diff_pp\n",
    );
    for m in Metric::ALL {
        for &p in policies {
            for pct in (10..=MAX_PCT).step_by(10) {
                if let Some(st) = stat(results, p, m, pct) {
                    let theirs = published_mean(published, m, workload, p, pct);
                    let _ = writeln!(
                        summary,
                        "{},{workload},{},{pct},{:.3},{:.3},{},{},{}",
                        m.upstream_name(),
                        p.upstream_label(),
                        st.mean,
                        st.std,
                        st.n,
                        theirs.map(|t| format!("{t:.3}")).unwrap_or_default(),
                        theirs
                            .map(|t| format!("{:.3}", st.mean - t))
                            .unwrap_or_default(),
                    );
                }
            }
        }
    }
    summary
}
