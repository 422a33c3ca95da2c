//! A simulation's outcome in the recording schema that the harness writes
//! for real Slurm and `score.py` reads: per job its final state, each run's
//! nodes, GPU indices, start and end, the pending reasons seen, and sbatch's
//! refusals.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use gresim_engine::SimOutput;
use gresim_model::state::gpu_indices;
use gresim_model::JobState;

use crate::case::Case;

/// The simulated outcome in the recording schema.
pub fn recording(case: &Case, out: &SimOutput) -> Value {
    let mut jobs = Vec::new();
    let mut by_sub: Vec<Vec<usize>> = vec![Vec::new(); out.specs.len()];
    for (i, j) in out.jobs.iter().enumerate() {
        by_sub[j.sub as usize].push(i);
    }
    for (sub, &ci) in case.order.iter().enumerate() {
        let cj = &case.def.jobs[ci];
        let Some(idxs) = by_sub.get(sub) else {
            continue;
        };
        let first = idxs.first().map(|&i| &out.jobs[i]);
        if let Some(msg) = first.and_then(|j| j.rejected().map(str::to_string)) {
            // sbatch prints the accounting limit's name first.
            let limit = first
                .filter(|j| j.reason.is_acct_limit())
                .map_or(String::new(), |j| {
                    format!("sbatch: error: {}\n", j.reason.as_str())
                });
            jobs.push(json!({
                "id": cj.id,
                "submit": {"rc": 1, "stderr": format!("{limit}sbatch: error: Batch job submission failed: {msg}")},
                "tasks": [],
            }));
            continue;
        }
        let mut tasks = Vec::new();
        // Slurm keeps an array's pending tasks in one record whose reasons the
        // harness records apart; a task has reasons of its own only once it is
        // the last one left (it keeps the array's id): from the start of the
        // task before it.
        let alone_since = |i: usize| -> Option<u64> {
            let j = &out.jobs[i];
            j.task?;
            let mine = j.runs.first().map_or(u64::MAX, |r| r.start);
            idxs.iter()
                .filter(|&&o| o != i)
                .filter_map(|&o| out.jobs[o].runs.first().map(|r| r.start))
                .filter(|&s| s <= mine)
                .max()
        };
        for &i in idxs {
            let j = &out.jobs[i];
            let is_array = j.task.is_some();
            let keeps_id = j.job_id.is_some() && j.job_id == j.array_job_id;
            let since = if is_array && !keeps_id {
                None
            } else {
                alone_since(i)
            };
            let reasons: Vec<Value> = match out.reasons.as_ref() {
                Some(_) if is_array && !keeps_id => Vec::new(),
                Some(h) if is_array => {
                    let t0 = since.unwrap_or(0);
                    let mut v: Vec<Value> = Vec::new();
                    let before = h[i].iter().rev().find(|r| r.t <= t0);
                    if let Some(r) = before {
                        v.push(json!({"t": t0, "reason": r.reason.as_str(), "desc": null}));
                    }
                    v.extend(
                        h[i].iter()
                            .filter(|r| r.t > t0)
                            .map(|r| json!({"t": r.t, "reason": r.reason.as_str(), "desc": null})),
                    );
                    v
                }
                Some(h) => h[i]
                    .iter()
                    .map(|r| {
                        let desc = r
                            .desc
                            .as_ref()
                            .map(|d| format!("{}, {d}", r.reason.as_str()));
                        json!({"t": r.t, "reason": r.reason.as_str(), "desc": desc})
                    })
                    .collect(),
                None => Vec::new(),
            };
            let nruns = j.runs.len();
            let mut runs: Vec<Value> = j
                .runs
                .iter()
                .enumerate()
                .map(|(k, r)| {
                    // The harness records a run that a requeue followed as REQUEUED.
                    let state = if k + 1 < nruns { "REQUEUED" } else { r.state.as_str() };
                    let nodes: Vec<&str> = r.alloc.nodes.iter().map(|n| out.cluster.node(n.node).name.as_str()).collect();
                    let gpu_idx: BTreeMap<&str, Vec<u8>> = r
                        .alloc
                        .nodes
                        .iter()
                        .filter(|n| n.gpus != 0)
                        .map(|n| (out.cluster.node(n.node).name.as_str(), gpu_indices(n.gpus).collect()))
                        .collect();
                    json!({"state": state, "start": r.start, "end": r.end, "nodes": nodes, "gpu_idx": gpu_idx})
                })
                .collect();
            if runs.is_empty() && j.state == JobState::Cancelled {
                runs.push(json!({"state": "CANCELLED", "start": null, "end": null, "nodes": [], "gpu_idx": {}}));
            }
            let mut final_state = j.state.as_str();
            if let (Some(stall), JobState::Pending) = (case.def.stall, j.state) {
                // The harness cancels what is left once the run has stalled.
                let t = out.end_time + stall.max(0.0).floor() as u64 + 1;
                final_state = "CANCELLED";
                runs.push(
                    json!({"state": "CANCELLED", "start": t, "end": t, "nodes": [], "gpu_idx": {}}),
                );
            }
            tasks.push(json!({
                "array_task_id": j.task,
                "slurm_job_id": j.job_id.map(|x| x.0),
                "final_state": final_state,
                "restarts": j.restarts(),
                "pending_reasons": reasons,
                "runs": runs,
            }));
        }
        jobs.push(json!({"id": cj.id, "submit": {"rc": 0, "stderr": null}, "tasks": tasks}));
    }
    json!({
        "scenario": case.scenario.name,
        "simulator": "gresim",
        "policy": out.policy,
        "jobs": jobs,
    })
}
