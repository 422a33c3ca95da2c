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
th{background:#f0f0f0}td.n{text-align:right}pre{background:#f6f6f6;padding:8px;font-size:12px;\
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
        ("fragmentation.typical_request".into(), typical),
        (
            "fragmentation.fragmented_share".into(),
            crate::round6(fr.fragmented_share()).to_string(),
        ),
        (
            "fragmentation.fragmented_share_of_idle".into(),
            crate::round6(fr.fragmented_share_of_idle()).to_string(),
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
    let mut rows = Vec::new();
    if let Some(v) = summary {
        flatten("", v, &mut rows);
    }
    rows.extend(fragmentation_rows(&fr));
    if summary.is_none() {
        h.push_str("<p class=\"note\">summary.json not found.</p>\n");
    }
    h.push_str("<table>\n");
    for (k, v) in rows {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(&k), esc(&v));
    }
    h.push_str("</table>\n");
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
mod tests {
    use super::*;
    use crate::run_file::RunMeta;
    use crate::test_support::sample_output;

    #[test]
    fn page_is_self_contained() {
        let meta = RunMeta {
            scenario_text: Some("{\"name\": \"<tiny>\"}".into()),
            ..RunMeta::new("tiny")
        };
        let out = sample_output();
        let rf = RunFile::from_output(&out, &meta);
        let summary: serde_json::Value =
            serde_json::from_str(&crate::Summary::compute(&out, "tiny").to_json()).unwrap();
        let h = report_html(&rf, Some(&summary));
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.ends_with("</body></html>\n"));
        assert!(!h.contains("<script"));
        assert!(!h.contains(" src="), "no external assets");
        assert!(
            h.contains("<th>gpu_utilization</th><td>0.566667</td>"),
            "{h}"
        );
        assert!(h.contains("<th>wait.mean</th><td>57.5</td>"));
        assert_eq!(h.matches("<svg").count(), 6, "six charts inline");
        assert!(h.contains("{&quot;name&quot;: &quot;&lt;tiny&gt;&quot;}"));
        // Longest waits first: the pending array task (280 s), then job 2 (105 s).
        let longest = &h[h.find("waited longest").unwrap()..];
        let a = longest.find("<tr><td>3_4</td>").unwrap();
        let b = longest.find("<tr><td>2</td>").unwrap();
        assert!(a < b);
        assert!(h.contains("<td class=\"n\">1:45</td>"));
    }

    #[test]
    fn summary_has_the_fragmented_share() {
        let rf = RunFile::parse(crate::fragmentation::tests::HAND_MADE).unwrap();
        let h = report_html(&rf, None);
        assert!(h.contains("summary.json not found"));
        // 1640 / 6200 and 1640 / 3040 (see the fixture's known answer).
        for row in [
            "<tr><th>fragmentation.typical_request</th><td>gpu:a100:2, 2 CPUs, 16G per node (3 of 5 GPU jobs)</td></tr>",
            "<tr><th>fragmentation.fragmented_share</th><td>0.264516</td></tr>",
            "<tr><th>fragmentation.fragmented_share_of_idle</th><td>0.539474</td></tr>",
        ] {
            assert!(h.contains(row), "{row}");
        }
        assert!(h.contains("fragmented 26.5% of capacity"));
        assert_eq!(h.matches("<svg").count(), 6);
    }
}
