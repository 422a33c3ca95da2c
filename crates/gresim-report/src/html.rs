//! `report.html`: one self-contained page (inline CSS and SVG, no script,
//! no external asset) with the summary, every chart, the jobs that waited
//! longest, placement and wait outliers, and the scenario text.

use std::fmt::Write as _;

use gresim_model::hostlist;
use gresim_model::slurm_time::format_duration;

use crate::charts;
use crate::fragmentation::{fragmentation, Fragmentation};
use crate::run_file::RunFile;

/// The report's file name.
pub const REPORT_FILE: &str = "report.html";

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

const CSS: &str = "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}\
th{background:#f0f0f0}td.n{text-align:right}table.summary{margin-bottom:12px}th.g{background:#dde6f0}pre{background:#f6f6f6;padding:8px;font-size:12px;\
overflow:auto;max-height:480px}.chart{margin:8px 0}.note{color:#666;font-size:12px}";

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, x, out);
            }
        }
        other => out.push((
            prefix.to_string(),
            other.to_string().trim_matches('"').to_string(),
        )),
    }
}

fn chart(out: &mut String, title: &str, svg: Result<String, String>) {
    match svg {
        Ok(s) => {
            let _ = writeln!(
                out,
                "<div class=\"chart\" title=\"{}\">{s}</div>",
                esc(title)
            );
        }
        Err(e) => {
            let _ = writeln!(
                out,
                "<p class=\"note\">{}: not drawn ({})</p>",
                esc(title),
                esc(&e)
            );
        }
    }
}

/// Seconds as h:mm:ss (hours not wrapped into days), rounded to the second.
fn hms(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
}

/// A share (0..1) as a percentage.
fn pct(share: f64) -> String {
    format!("{:.1} %", share * 100.0)
}

/// The summary as tables a reader can take in: waits and turnaround as
/// h:mm:ss by statistic, then the rest grouped by topic with units (jobs,
/// time, utilization, GPU hours, failures, fragmentation). Fields this
/// function does not know (a newer summary.json) are listed, raw, under
/// "Other", so nothing in summary.json is left out.
fn summary_tables(summary: Option<&serde_json::Value>, frag: &[(String, String)]) -> String {
    use serde_json::Value;
    let mut h = String::new();
    let empty = serde_json::Map::new();
    let m = summary.and_then(Value::as_object).unwrap_or(&empty);
    let mut used: Vec<&str> = vec!["scenario", "policy"];
    let f = |k: &str| m.get(k).and_then(Value::as_f64);
    let u = |k: &str| m.get(k).and_then(Value::as_u64);

    // Waits, turnaround and slowdown by statistic.
    let dists = [
        ("wait", "Wait (h:mm:ss)", true),
        ("jct", "Job completion time (h:mm:ss)", true),
        ("bounded_slowdown", "Bounded slowdown (τ = 10 s)", false),
    ];
    if dists.iter().any(|(k, _, _)| m.contains_key(*k)) {
        h.push_str("<table class=\"summary\">\n<tr><th></th><th>jobs</th><th>mean</th><th>median</th><th>p95</th><th>max</th></tr>\n");
        for (k, label, time) in dists {
            let Some(s) = m.get(k) else { continue };
            used.push(k);
            let cell = |x: &str| match s.get(x).and_then(Value::as_f64) {
                Some(v) if time => hms(v),
                Some(v) => format!("{v:.2}"),
                None => "–".into(),
            };
            let n = s.get("count").and_then(Value::as_u64).unwrap_or(0);
            let _ = writeln!(
                h,
                "<tr><th>{}</th><td class=\"n\">{n}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(label),
                cell("mean"),
                cell("median"),
                cell("p95"),
                cell("max")
            );
        }
        h.push_str("</table>\n");
    }

    let mut groups: Vec<(&str, Vec<(String, String)>)> = Vec::new();
    let mut rows = Vec::new();
    if let Some(n) = u("jobs") {
        used.push("jobs");
        rows.push(("jobs".to_string(), n.to_string()));
    }
    if let Some(Value::Object(states)) = m.get("by_state") {
        used.push("by_state");
        let list: Vec<String> = states.iter().map(|(s, n)| format!("{s} {n}")).collect();
        rows.push(("final states".into(), list.join(", ")));
    }
    for (k, label) in [
        ("restarts", "restarts (requeues)"),
        ("node_failures", "node failures"),
        ("oom_jobs", "jobs out of GPU memory"),
        ("cpu_fallback_jobs", "jobs that fell back to the CPU"),
    ] {
        if let Some(n) = u(k) {
            used.push(k);
            rows.push((label.into(), n.to_string()));
        }
    }
    groups.push(("Jobs", rows));
    let mut rows = Vec::new();
    for (k, label) in [("makespan", "makespan"), ("end_time", "simulated until")] {
        if let Some(v) = f(k) {
            used.push(k);
            rows.push((label.into(), hms(v)));
        }
    }
    if let Some(n) = u("events") {
        used.push("events");
        rows.push(("events".into(), n.to_string()));
    }
    groups.push(("Time", rows));
    let mut rows = Vec::new();
    for (k, label) in [
        ("gpu_utilization", "GPU (devices; a MIG slice is one)"),
        ("gpu_sm_weighted_utilization", "GPU, compute-weighted"),
        ("gpu_memory_weighted_utilization", "GPU, memory-weighted"),
        ("cpu_utilization", "CPU"),
    ] {
        if let Some(v) = f(k) {
            used.push(k);
            rows.push((label.into(), pct(v)));
        }
    }
    if let Some(Value::Object(types)) = m.get("gpu_utilization_by_type") {
        used.push("gpu_utilization_by_type");
        for (t, v) in types {
            rows.push((
                format!("GPU type {t}"),
                v.as_f64().map_or_else(|| v.to_string(), pct),
            ));
        }
    }
    groups.push(("Utilization", rows));
    let mut rows = Vec::new();
    for (k, label) in [
        ("gpu_hours_allocated", "allocated"),
        ("lost_gpu_hours", "lost to failures (not checkpointed)"),
    ] {
        if let Some(v) = f(k) {
            used.push(k);
            rows.push((label.into(), format!("{v:.2} h")));
        }
    }
    groups.push(("GPU hours", rows));
    groups.push(("Fragmentation", frag.to_vec()));
    // Optional sections, their fields named in words.
    for (k, g) in [("placement", "Placement"), ("mig_reconfig", "Dynamic MIG")] {
        if let Some(v) = m.get(k) {
            used.push(k);
            let mut rows = Vec::new();
            flatten("", v, &mut rows);
            for r in &mut rows {
                r.0 = r.0.replace(['_', '.'], " ");
            }
            groups.push((g, rows));
        }
    }
    let mut other = Vec::new();
    for (k, v) in m {
        if !used.contains(&k.as_str()) {
            flatten(k, v, &mut other);
        }
    }
    groups.push(("Other", other));

    h.push_str("<table class=\"summary\">\n");
    for (g, rows) in groups {
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(h, "<tr><th colspan=\"2\" class=\"g\">{}</th></tr>", esc(g));
        for (k, v) in rows {
            let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
        }
    }
    h.push_str("</table>\n");
    h
}

/// The summary rows of the GPU fragmentation measure.
pub fn fragmentation_rows(fr: &Fragmentation) -> Vec<(String, String)> {
    let typical = match &fr.typical {
        Some(t) => format!(
            "{} per node ({} of {} GPU jobs)",
            t.describe(),
            t.jobs,
            t.gpu_jobs
        ),
        None => "none (no job requests GPUs)".to_string(),
    };
    vec![
        ("typical request".into(), typical),
        (
            "fragmented, of GPU capacity".into(),
            pct(fr.fragmented_share()),
        ),
        (
            "fragmented, of idle GPU capacity".into(),
            pct(fr.fragmented_share_of_idle()),
        ),
    ]
}

/// The whole page. `summary` is summary.json's content, when available.
pub fn report_html(rf: &RunFile, summary: Option<&serde_json::Value>) -> String {
    let mut h = String::new();
    let title = format!("gresim report: {} ({})", rf.scenario, rf.policy);
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>",
        esc(&title),
        esc(&title)
    );
    let _ = writeln!(
        h,
        "<p>{} jobs, {} nodes, {} GPU devices; simulated until t={} ({}){}; {} events.</p>",
        rf.jobs.len(),
        rf.cluster.nodes.len(),
        rf.cluster.nodes.iter().map(|n| n.gpus.len()).sum::<usize>(),
        rf.end_time,
        format_duration(rf.end_time),
        if rf.hit_horizon {
            ", stopped at the horizon"
        } else {
            ""
        },
        rf.events
    );

    h.push_str("<h2>Summary</h2>\n");
    let fr = fragmentation(rf);
    if summary.is_none() {
        h.push_str("<p class=\"note\">summary.json not found.</p>\n");
    }
    h.push_str(&summary_tables(summary, &fragmentation_rows(&fr)));
    h.push_str("<p class=\"note\">fragmented: idle GPU capacity on up nodes where the workload's typical request (its most common per-node GPU request, with the CPUs and memory such jobs got) does not fit; shares are time-averaged, MIG instances weighted by their compute slices.</p>\n");

    h.push_str("<h2>Charts</h2>\n");
    let charts = charts::report_charts(rf, &fr);
    for c in charts {
        chart(&mut h, c.title, c.svg);
    }
    if rf.jobs.len() > charts::GANTT_MAX_JOBS {
        let _ = writeln!(
            h,
            "<p class=\"note\">No Gantt chart: it is drawn for runs of at most {} jobs.</p>",
            charts::GANTT_MAX_JOBS
        );
    }
    let (waits, _) = charts::waits_and_slowdowns(rf);

    // The longest waits.
    let mut waited: Vec<(u64, usize)> = rf
        .jobs
        .iter()
        .enumerate()
        .filter_map(|(i, j)| {
            let w = match j.runs.first() {
                Some(r) => r.start.saturating_sub(j.first_submit),
                None if j.state == "PENDING" => rf.end_time.saturating_sub(j.first_submit),
                None => return None,
            };
            Some((w, i))
        })
        .collect();
    waited.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    h.push_str("<h2>The 10 jobs that waited longest</h2>\n<table>\n<tr><th>job</th><th>name</th><th>user</th><th>state</th><th>wait</th><th>first start</th><th>nodes</th><th>last reason</th></tr>\n");
    for &(w, i) in waited.iter().take(10) {
        let j = &rf.jobs[i];
        let r = j.runs.first();
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&j.id),
            esc(&j.name),
            esc(&j.user),
            esc(&j.state),
            format_duration(w),
            r.map_or_else(|| "never".into(), |r| r.start.to_string()),
            esc(&r.map_or_else(String::new, |r| hostlist::compress(&r.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>()))),
            esc(&j.reasons.as_ref().and_then(|h| h.iter().rev().find(|x| x.1 != "None")).map_or_else(|| j.reason.clone(), |x| x.1.clone())),
        );
    }
    h.push_str("</table>\n");

    // Placement outliers: GPU runs spread over more nodes than the largest node needs.
    let max_gpus = rf
        .cluster
        .nodes
        .iter()
        .map(|n| n.gpus.len() as u32)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut spread: Vec<(u32, u32, usize)> = Vec::new();
    for (i, j) in rf.jobs.iter().enumerate() {
        if let Some(r) = j.runs.last() {
            let g = r.gpu_count();
            let need = g.div_ceil(max_gpus).max(j.request.min_nodes).max(1);
            let used = r.nodes.len() as u32;
            if g > 0 && used > need {
                spread.push((used - need, g, i));
            }
        }
    }
    spread.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
    h.push_str("<h2>Placement outliers</h2>\n<p class=\"note\">GPU jobs placed on more nodes than their GPU count needs (fragmented placement).</p>\n");
    if spread.is_empty() {
        h.push_str("<p>None.</p>\n");
    } else {
        h.push_str("<table>\n<tr><th>job</th><th>GPUs</th><th>nodes used</th><th>extra nodes</th><th>placement</th></tr>\n");
        for &(extra, g, i) in spread.iter().take(20) {
            let j = &rf.jobs[i];
            let r = j.runs.last().expect("chosen for its runs");
            let place: Vec<String> = r
                .nodes
                .iter()
                .map(|n| {
                    format!(
                        "{}:{}",
                        n.node,
                        crate::run_file::ranges(n.gpus.iter().map(|&x| u32::from(x)))
                    )
                })
                .collect();
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"n\">{g}</td><td class=\"n\">{}</td><td class=\"n\">{extra}</td><td>{}</td></tr>",
                esc(&j.id),
                r.nodes.len(),
                esc(&place.join(" "))
            );
        }
        h.push_str("</table>\n");
    }
    // Wait outliers: waits above the 95th percentile.
    if !waits.is_empty() {
        let p95 = waits[((95 * waits.len()).div_ceil(100)).clamp(1, waits.len()) - 1];
        let n = waited.iter().filter(|w| w.0 as f64 > p95).count();
        let _ = writeln!(
            h,
            "<p>Wait outliers: {n} job(s) waited longer than the 95th percentile wait ({}).</p>",
            format_duration(p95 as u64)
        );
    }

    h.push_str("<h2>Scenario</h2>\n");
    match &rf.scenario_text {
        Some(t) => {
            let _ = writeln!(h, "<pre>{}</pre>", esc(t));
        }
        None => h.push_str("<p class=\"note\">The run did not record the scenario text.</p>\n"),
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests;
