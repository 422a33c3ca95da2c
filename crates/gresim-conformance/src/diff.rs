//! Per-task differences between two recordings (`sim conformance` prints
//! them against the recording beside a case).

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// Per-task differences between a recording and a simulated recording:
/// final state, runs, nodes, GPU indices and start/end times (±1.5 s).
pub fn diff(recorded: &Value, simulated: &Value) -> Vec<String> {
    fn tasks(v: &Value) -> BTreeMap<(String, String), Value> {
        let mut m = BTreeMap::new();
        for j in v["jobs"].as_array().into_iter().flatten() {
            let id = j["id"].as_str().unwrap_or("?").to_string();
            if j["submit"]["rc"].as_i64().unwrap_or(0) != 0 {
                m.insert(
                    (id, String::new()),
                    json!({"final_state": "REJECTED", "runs": []}),
                );
                continue;
            }
            for t in j["tasks"].as_array().into_iter().flatten() {
                let k = match &t["array_task_id"] {
                    Value::Null => String::new(),
                    x => x.to_string(),
                };
                m.insert((id.clone(), k), t.clone());
            }
        }
        m
    }
    fn runs(t: &Value) -> Vec<String> {
        t["runs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["nodes"].as_array().is_some_and(|n| !n.is_empty()))
            .map(|r| {
                let gpus: BTreeMap<String, Value> = r["gpu_idx"]
                    .as_object()
                    .map(|o| {
                        o.iter()
                            .filter(|(_, v)| v.as_array().is_some_and(|a| !a.is_empty()))
                            .map(|(k, v)| (k.clone(), v.clone()))
                            .collect()
                    })
                    .unwrap_or_default();
                format!(
                    "{}@{}-{} {} {}",
                    r["state"].as_str().unwrap_or("?"),
                    r["start"]
                        .as_f64()
                        .map_or("?".into(), |x| format!("{x:.0}")),
                    r["end"].as_f64().map_or("?".into(), |x| format!("{x:.0}")),
                    r["nodes"],
                    serde_json::to_string(&gpus).unwrap_or_default()
                )
            })
            .collect()
    }
    let (a, b) = (tasks(recorded), tasks(simulated));
    let mut out = Vec::new();
    for (k, rt) in &a {
        let name = if k.1.is_empty() {
            k.0.clone()
        } else {
            format!("{}_{}", k.0, k.1)
        };
        let Some(st) = b.get(k) else {
            out.push(format!("{name}: missing in the simulation"));
            continue;
        };
        let (rs, ss) = (runs(rt), runs(st));
        let same_runs = rs.len() == ss.len()
            && rt["runs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| r["nodes"].as_array().is_some_and(|n| !n.is_empty()))
                .zip(
                    st["runs"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|r| r["nodes"].as_array().is_some_and(|n| !n.is_empty())),
                )
                .all(|(x, y)| {
                    let close = |f: &str| match (x[f].as_f64(), y[f].as_f64()) {
                        (Some(p), Some(q)) => (p - q).abs() <= 1.5,
                        _ => false,
                    };
                    close("start") && close("end") && x["gpu_idx"] == y["gpu_idx"] && {
                        let mut n1: Vec<String> = x["nodes"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|v| v.to_string())
                            .collect();
                        let mut n2: Vec<String> = y["nodes"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|v| v.to_string())
                            .collect();
                        n1.sort();
                        n2.sort();
                        n1 == n2
                    }
                });
        if rt["final_state"] != st["final_state"] || !same_runs {
            out.push(format!(
                "{name}: slurm {} {:?} | sim {} {:?}",
                rt["final_state"].as_str().unwrap_or("?"),
                rs,
                st["final_state"].as_str().unwrap_or("?"),
                ss
            ));
        }
    }
    out
}
