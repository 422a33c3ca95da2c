//! Monitoring series computed from a finished run, named as the DCGM
//! exporter and the Slurm exporter name them.
//!
//! Two files are written (see [`metrics_files`]):
//!
//! * `metrics.om`: one OpenMetrics text file holding every snapshot, each
//!   sample with its timestamp (simulated seconds, read as a Unix time),
//!   grouped by metric family and series and ending in `# EOF`: the form
//!   `promtool tsdb create-blocks-from openmetrics` backfills into Prometheus.
//! * `metrics.csv`: `timestamp,metric,labels,value`, one line per sample.
//!
//! The model (gresim simulates allocations, not kernels):
//!
//! * `DCGM_FI_DEV_GPU_UTIL` is 100 while a GPU device (or MIG instance) is
//!   allocated to a job, else 0. Labels: `gpu` (GRES index), `Hostname`,
//!   `modelName`, `GPU_I_PROFILE` for MIG instances, `job` (empty when idle).
//! * `DCGM_FI_DEV_FB_USED` is 0: jobs declare no VRAM use in gresim's
//!   scenarios, and Slurm does not manage VRAM. Same labels.
//! * `DCGM_FI_DEV_GPU_TEMP` is not emitted: nothing in the model says it.
//! * `slurm_job_gpu_utilization{job,user}`: 100 for each running job holding GPUs.
//! * `slurm_nodes_alloc`, `_mix`, `_idle`, `_drain`, `_down`: node counts by
//!   state (as `sim sinfo`; draining and drained both count as drain).
//! * `slurm_queue_pending`, `slurm_queue_running`: job counts.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::run_file::{JobAt, RunFile};
use crate::sinfo::node_rows;

/// The snapshots: `t = 0, interval, 2·interval, …` up to the end of the run.
pub fn snapshot_times(end: u64, interval: u64) -> Vec<u64> {
    let iv = interval.max(1);
    (0..=end / iv).map(|k| k * iv).collect()
}

/// Series name and labels → samples `(t, value)`.
type Store = BTreeMap<(&'static str, String), Vec<(u64, f64)>>;

fn labels(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect::<Vec<_>>()
        .join(",")
}

const FAMILIES: [(&str, &str, &str); 11] = [
    (
        "DCGM_FI_DEV_GPU_UTIL",
        "gauge",
        "GPU utilization (in %): 100 while allocated, else 0 (gresim model).",
    ),
    (
        "DCGM_FI_DEV_FB_USED",
        "gauge",
        "Framebuffer memory used (in MiB): 0, jobs declare no VRAM (gresim model).",
    ),
    (
        "slurm_job_gpu_utilization",
        "gauge",
        "GPU utilization of a running job (in %), gresim model.",
    ),
    ("slurm_nodes_alloc", "gauge", "Allocated nodes."),
    ("slurm_nodes_mix", "gauge", "Mixed nodes."),
    ("slurm_nodes_idle", "gauge", "Idle nodes."),
    ("slurm_nodes_drain", "gauge", "Drained or draining nodes."),
    ("slurm_nodes_down", "gauge", "Down nodes."),
    ("slurm_queue_pending", "gauge", "Pending jobs."),
    ("slurm_queue_running", "gauge", "Running jobs."),
    ("slurm_queue_total", "gauge", "Pending and running jobs."),
];

fn collect(rf: &RunFile, interval: u64) -> Store {
    let mut st: Store = BTreeMap::new();
    let idx = rf.node_index();
    for t in snapshot_times(rf.end_time, interval) {
        // Which job holds each device.
        let mut holder: BTreeMap<(usize, u8), &str> = BTreeMap::new();
        // Shares (gres/shard, gres/mps) in use on each device.
        let mut shared: BTreeMap<(usize, u8), u32> = BTreeMap::new();
        let (mut pending, mut running) = (0u32, 0u32);
        for j in &rf.jobs {
            match j.at(t) {
                Some(JobAt::Running(r)) => {
                    running += 1;
                    for na in &r.nodes {
                        if let Some(&ni) = idx.get(na.node.as_str()) {
                            for &g in &na.gpus {
                                holder.insert((ni, g), j.id.as_str());
                            }
                            if let Some((g, c)) = na.share {
                                *shared.entry((ni, g)).or_default() += c;
                            }
                        }
                    }
                    if r.gpu_count() > 0 {
                        st.entry((
                            "slurm_job_gpu_utilization",
                            labels(&[("job", &j.id), ("user", &j.user)]),
                        ))
                        .or_default()
                        .push((t, 100.0));
                    }
                }
                Some(JobAt::Pending { .. }) => pending += 1,
                _ => {}
            }
        }
        for (ni, n) in rf.cluster.nodes.iter().enumerate() {
            for (k, g) in n.gpus.iter().enumerate() {
                let job = holder.get(&(ni, k as u8)).copied().unwrap_or("");
                let gpu = k.to_string();
                let model = format!("NVIDIA {}", g.model);
                let mut l: Vec<(&str, &str)> =
                    vec![("gpu", &gpu), ("Hostname", &n.name), ("modelName", &model)];
                if let Some((p, _)) = &g.mig {
                    l.push(("GPU_I_PROFILE", p));
                }
                l.push(("job", job));
                let lab = labels(&l);
                st.entry(("DCGM_FI_DEV_GPU_UTIL", lab.clone()))
                    .or_default()
                    .push((
                        t,
                        if job.is_empty() {
                            shared_pct(n, k, shared.get(&(ni, k as u8)))
                        } else {
                            100.0
                        },
                    ));
                st.entry(("DCGM_FI_DEV_FB_USED", lab))
                    .or_default()
                    .push((t, 0.0));
            }
        }
        let mut counts: BTreeMap<&str, u32> = BTreeMap::new();
        for r in node_rows(rf, t) {
            let fam = match r.state.as_str() {
                "allocated" => "slurm_nodes_alloc",
                "mixed" => "slurm_nodes_mix",
                "idle" => "slurm_nodes_idle",
                "down" => "slurm_nodes_down",
                _ => "slurm_nodes_drain",
            };
            *counts.entry(fam).or_default() += 1;
        }
        for fam in [
            "slurm_nodes_alloc",
            "slurm_nodes_mix",
            "slurm_nodes_idle",
            "slurm_nodes_drain",
            "slurm_nodes_down",
        ] {
            st.entry((fam, String::new()))
                .or_default()
                .push((t, f64::from(counts.get(fam).copied().unwrap_or(0))));
        }
        st.entry(("slurm_queue_pending", String::new()))
            .or_default()
            .push((t, f64::from(pending)));
        st.entry(("slurm_queue_running", String::new()))
            .or_default()
            .push((t, f64::from(running)));
        st.entry(("slurm_queue_total", String::new()))
            .or_default()
            .push((t, f64::from(pending + running)));
    }
    st
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// `metrics.om` and `metrics.csv` for snapshots every `interval` seconds.
pub fn metrics_files(rf: &RunFile, interval: u64) -> (String, String) {
    let st = collect(rf, interval);
    let mut om = String::new();
    let mut csv = String::from("timestamp,metric,labels,value\n");
    for (fam, ty, help) in FAMILIES {
        let _ = writeln!(om, "# TYPE {fam} {ty}");
        let _ = writeln!(om, "# HELP {fam} {help}");
        for ((_, lab), samples) in st
            .range((fam, String::new())..)
            .take_while(|((f, _), _)| *f == fam)
        {
            let series = if lab.is_empty() {
                fam.to_string()
            } else {
                format!("{fam}{{{lab}}}")
            };
            for &(t, v) in samples {
                let _ = writeln!(om, "{series} {} {t}", num(v));
                let q = if lab.contains([',', '"']) {
                    format!("\"{}\"", lab.replace('"', "\"\""))
                } else {
                    lab.clone()
                };
                let _ = writeln!(csv, "{t},{fam},{q},{}", num(v));
            }
        }
    }
    om.push_str("# EOF\n");
    (om, csv)
}

/// A device's utilization from the shares in use on it: used over its
/// count, in percent (0 without shares).
fn shared_pct(n: &crate::run_file::NodeRec, k: usize, used: Option<&u32>) -> f64 {
    match (used, n.shares.as_ref().and_then(|s| s.1.get(k))) {
        (Some(&u), Some(&cap)) if cap > 0 => 100.0 * f64::from(u.min(cap)) / f64::from(cap),
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests;
