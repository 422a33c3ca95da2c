//! The report's charts, drawn with plotters as SVG from a [`RunFile`], and
//! as PNG by rasterising that SVG with an embedded font ([`crate::raster`]).
//!
//! Every function returns the SVG text or an error message; none panics on
//! an empty run.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::fragmentation::{fragmentation, Fragmentation, Split, WHOLE_GPU};
use crate::run_file::{JobRec, RunFile};
use crate::summary::Summary;

const W: u32 = 1000;
const H: u32 = 420;
/// Step series longer than this are sampled at this many instants.
const MAX_POINTS: usize = 2000;
/// The most jobs a Gantt chart is drawn for.
pub const GANTT_MAX_JOBS: usize = 200;

/// A categorical palette (Tableau 10).
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn e<E: std::fmt::Display>(x: E) -> String {
    x.to_string()
}

/// Time axis scale: hours for runs of 2 h or more, else seconds.
fn scale(end: u64) -> (f64, &'static str) {
    if end >= 7200 {
        (3600.0, "h")
    } else {
        (1.0, "s")
    }
}

/// A step function from `(t, delta)` events: the value after each instant.
fn sweep(mut ev: Vec<(u64, i64)>) -> Vec<(u64, i64)> {
    ev.sort_unstable();
    let mut out: Vec<(u64, i64)> = Vec::new();
    let mut v = 0i64;
    for (t, d) in ev {
        v += d;
        match out.last_mut() {
            Some(last) if last.0 == t => last.1 = v,
            _ => out.push((t, v)),
        }
    }
    out
}

/// The instants to plot: every change, or a uniform sample of long series.
fn instants(all: &[u64], end: u64) -> Vec<u64> {
    let mut ts: Vec<u64> = all.to_vec();
    ts.push(0);
    ts.push(end);
    ts.sort_unstable();
    ts.dedup();
    if ts.len() <= MAX_POINTS {
        return ts;
    }
    (0..=MAX_POINTS as u64)
        .map(|k| end * k / MAX_POINTS as u64)
        .collect()
}

/// Points of a step line over `ts`.
fn step_line(ts: &[u64], end: u64, sc: f64, f: impl Fn(u64) -> f64) -> Vec<(f64, f64)> {
    let mut v = Vec::with_capacity(ts.len() * 2);
    for (k, &t) in ts.iter().enumerate() {
        let next = ts.get(k + 1).copied().unwrap_or(end.max(t));
        let y = f(t);
        v.push((t as f64 / sc, y));
        v.push((next as f64 / sc, y));
    }
    v
}

/// Draws step lines (or stacked areas when `stacked`), one per named series.
fn lines_svg(
    title: &str,
    y_desc: &str,
    end: u64,
    series: &[(String, Vec<(u64, f64)>)],
    stacked: bool,
    y_max: Option<f64>,
) -> Result<String, String> {
    let (sc, unit) = scale(end);
    let mut all_t: Vec<u64> = series
        .iter()
        .flat_map(|s| s.1.iter().map(|p| p.0))
        .collect();
    all_t.sort_unstable();
    all_t.dedup();
    let ts = instants(&all_t, end);
    let at = |pts: &[(u64, f64)], t: u64| -> f64 {
        match pts.partition_point(|p| p.0 <= t) {
            0 => 0.0,
            k => pts[k - 1].1,
        }
    };
    // Cumulative sums for stacking.
    let mut drawn: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut base = vec![0.0; ts.len()];
    for (name, pts) in series {
        let vals: Vec<f64> = ts
            .iter()
            .enumerate()
            .map(|(k, &t)| at(pts, t) + if stacked { base[k] } else { 0.0 })
            .collect();
        if stacked {
            base.clone_from(&vals);
        }
        let lookup: BTreeMap<u64, f64> = ts.iter().copied().zip(vals.iter().copied()).collect();
        drawn.push((name.clone(), step_line(&ts, end, sc, |t| lookup[&t])));
    }
    let top = drawn
        .iter()
        .flat_map(|d| d.1.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let y1 = y_max.unwrap_or(if top > 0.0 { (top * 1.1).ceil() } else { 1.0 });
    let x1 = (end as f64 / sc).max(1e-9);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..x1, 0.0..y1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({unit})"))
            .y_desc(y_desc)
            .draw()
            .map_err(e)?;
        // Stacked areas are drawn top first, opaque, so each band shows its own colour.
        let order: Vec<usize> = if stacked {
            (0..drawn.len()).rev().collect()
        } else {
            (0..drawn.len()).collect()
        };
        for k in order {
            let (name, pts) = &drawn[k];
            let color = PALETTE[k % PALETTE.len()];
            if stacked {
                chart
                    .draw_series(
                        AreaSeries::new(pts.iter().copied(), 0.0, color.filled())
                            .border_style(color),
                    )
                    .map_err(e)?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                    });
            } else {
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
                    .map_err(e)?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
                    });
            }
        }
        if !drawn.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(e)?;
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// GPU utilization over time (percent of devices allocated) per GRES type:
/// whole-GPU types and each MIG profile type get their own line.
pub fn gpu_util_by_type_svg(rf: &RunFile) -> Result<String, String> {
    let idx = rf.node_index();
    let mut totals: BTreeMap<&str, u64> = BTreeMap::new();
    for n in &rf.cluster.nodes {
        for g in &n.gpus {
            *totals.entry(g.ty.as_str()).or_default() += 1;
        }
    }
    let mut ev: BTreeMap<&str, Vec<(u64, i64)>> = BTreeMap::new();
    for j in &rf.jobs {
        for r in &j.runs {
            let end = r.end.unwrap_or(rf.end_time);
            for na in &r.nodes {
                let Some(&ni) = idx.get(na.node.as_str()) else {
                    continue;
                };
                for &g in &na.gpus {
                    if let Some(d) = rf.cluster.nodes[ni].gpus.get(usize::from(g)) {
                        let v = ev.entry(d.ty.as_str()).or_default();
                        v.push((r.start, 1));
                        v.push((end, -1));
                    }
                }
            }
        }
    }
    let series: Vec<(String, Vec<(u64, f64)>)> = totals
        .iter()
        .map(|(ty, &total)| {
            let steps = sweep(ev.remove(ty).unwrap_or_default());
            let pts = steps
                .iter()
                .map(|&(t, v)| (t, 100.0 * v as f64 / total.max(1) as f64))
                .collect();
            (format!("{ty} ({total})"), pts)
        })
        .collect();
    lines_svg(
        "GPU utilization by GRES type (devices allocated)",
        "% allocated",
        rf.end_time,
        &series,
        false,
        Some(105.0),
    )
}

/// GPUs held by each account over time (runs with accounting only; `None`
/// when no job has an account).
pub fn gpu_by_account_svg(rf: &RunFile) -> Option<Result<String, String>> {
    let mut ev: BTreeMap<&str, Vec<(u64, i64)>> = BTreeMap::new();
    for j in &rf.jobs {
        let Some(a) = j.account.as_deref() else {
            continue;
        };
        let v = ev.entry(a).or_default();
        for r in &j.runs {
            let g = i64::from(r.gpu_count());
            if g > 0 {
                v.push((r.start, g));
                v.push((r.end.unwrap_or(rf.end_time), -g));
            }
        }
    }
    if ev.is_empty() {
        return None;
    }
    let series: Vec<(String, Vec<(u64, f64)>)> = ev
        .into_iter()
        .map(|(a, e)| {
            let pts = sweep(e).iter().map(|&(t, v)| (t, v as f64)).collect();
            (a.to_string(), pts)
        })
        .collect();
    Some(lines_svg(
        "GPUs held per account",
        "GPUs",
        rf.end_time,
        &series,
        false,
        None,
    ))
}

/// The fair-share factor of each account's users over time (runs with
/// accounting under priority/multifactor; `None` otherwise).
pub fn fairshare_svg(rf: &RunFile) -> Option<Result<String, String>> {
    let fs = rf.fairshare.as_ref()?;
    if fs.accounts.is_empty() {
        return None;
    }
    let series: Vec<(String, Vec<(u64, f64)>)> = fs
        .accounts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let pts = fs
                .samples
                .iter()
                .filter_map(|(t, v)| Some((*t, *v.get(i)?)))
                .collect();
            (a.clone(), pts)
        })
        .collect();
    Some(lines_svg(
        "Fair-share factor per account (mean of its users)",
        "FairShare",
        rf.end_time,
        &series,
        false,
        Some(1.05),
    ))
}

/// GPUs allocated, idle and usable, idle and fragmented, and down or
/// drained over time, stacked (see [`crate::fragmentation`]); MIG instances
/// count as their fraction of a GPU.
pub fn gpu_states_svg(rf: &RunFile) -> Result<String, String> {
    gpu_states_svg_of(rf, &fragmentation(rf))
}

/// [`gpu_states_svg`] from an already computed split.
pub fn gpu_states_svg_of(rf: &RunFile, fr: &Fragmentation) -> Result<String, String> {
    let g = WHOLE_GPU as f64;
    let pick = |f: &dyn Fn(&Split) -> u64| -> Vec<(u64, f64)> {
        fr.points
            .iter()
            .map(|(t, s)| (*t, f(s) as f64 / g))
            .collect()
    };
    let frag_label = match &fr.typical {
        Some(t) => format!(
            "idle, fragmented (typical request {} does not fit)",
            t.describe()
        ),
        None => "idle, fragmented (no GPU jobs: none)".to_string(),
    };
    let series = vec![
        ("allocated".to_string(), pick(&|s| s.allocated)),
        ("idle, usable".to_string(), pick(&|s| s.usable)),
        (frag_label, pick(&|s| s.fragmented)),
        ("down or drained".to_string(), pick(&|s| s.unavailable)),
    ];
    let total = fr.total as f64 / g;
    lines_svg(
        &format!(
            "GPUs allocated, idle (usable / fragmented) and down; fragmented {:.1}% of capacity",
            100.0 * fr.fragmented_share()
        ),
        "GPUs (MIG: fraction of a GPU)",
        rf.end_time,
        &series,
        true,
        // Head room for the four-line legend.
        Some((total * 1.3).ceil().max(1.0)),
    )
}

/// Pending intervals of a job with their reasons: `(from, to, reason)`.
pub fn pending_spans(j: &JobRec, end_time: u64) -> Vec<(u64, u64, String)> {
    let mut gaps: Vec<(u64, u64)> = Vec::new();
    let mut from = j.first_submit;
    for r in &j.runs {
        if r.start > from {
            gaps.push((from, r.start));
        }
        from = r.end.unwrap_or(u64::MAX);
    }
    if from != u64::MAX {
        let stop = j.ended.unwrap_or(end_time);
        let closed = j.runs.last().is_some_and(|r| r.state == j.state);
        if stop > from && !closed {
            gaps.push((from, stop));
        }
    }
    let mut out = Vec::new();
    for (a, b) in gaps {
        let mut t = a;
        let changes: Vec<u64> = j
            .reasons
            .as_ref()
            .map(|h| h.iter().map(|r| r.0).filter(|&x| x > a && x < b).collect())
            .unwrap_or_default();
        for c in changes.into_iter().chain(std::iter::once(b)) {
            if c > t {
                out.push((t, c, j.reason_at(t).0));
                t = c;
            }
        }
    }
    out
}

/// Queue length over time: pending jobs stacked by reason, and running jobs.
pub fn queue_svg(rf: &RunFile) -> Result<String, String> {
    let mut ev: BTreeMap<String, Vec<(u64, i64)>> = BTreeMap::new();
    for j in &rf.jobs {
        if j.state == "REJECTED" {
            continue;
        }
        for (a, b, r) in pending_spans(j, rf.end_time) {
            let v = ev.entry(r).or_default();
            v.push((a, 1));
            v.push((b, -1));
        }
    }
    let mut series: Vec<(String, Vec<(u64, f64)>)> = ev
        .into_iter()
        .map(|(r, v)| {
            (
                format!("pending: {r}"),
                sweep(v).into_iter().map(|(t, x)| (t, x as f64)).collect(),
            )
        })
        .collect();
    series.push((
        "running".to_string(),
        rf.timeline.iter().map(|s| (s[0], s[5] as f64)).collect(),
    ));
    lines_svg(
        "Queue: pending jobs by reason, and running jobs (stacked)",
        "jobs",
        rf.end_time,
        &series,
        true,
        None,
    )
}

/// A Gantt chart: one row per GPU device (`node:gpuN`) and per node for
/// CPU-only runs; one bar per run. `None` for runs of more than
/// [`GANTT_MAX_JOBS`] jobs.
pub fn gantt_svg(rf: &RunFile) -> Option<Result<String, String>> {
    if rf.jobs.len() > GANTT_MAX_JOBS {
        return None;
    }
    let mut rows: Vec<String> = Vec::new();
    let mut row_of: BTreeMap<(String, Option<u8>), usize> = BTreeMap::new();
    for n in &rf.cluster.nodes {
        for k in 0..n.gpus.len() {
            row_of.insert((n.name.clone(), Some(k as u8)), rows.len());
            rows.push(format!("{}:gpu{k}", n.name));
        }
    }
    let mut bars: Vec<(usize, u64, u64, usize, String)> = Vec::new();
    for (ji, j) in rf.jobs.iter().enumerate() {
        for r in &j.runs {
            let end = r.end.unwrap_or(rf.end_time);
            for na in &r.nodes {
                let keys: Vec<(String, Option<u8>)> = if na.gpus.is_empty() {
                    vec![(na.node.clone(), None)]
                } else {
                    na.gpus
                        .iter()
                        .map(|&g| (na.node.clone(), Some(g)))
                        .collect()
                };
                for key in keys {
                    let row = *row_of.entry(key.clone()).or_insert_with(|| {
                        rows.push(format!("{}:cpu", key.0));
                        rows.len() - 1
                    });
                    bars.push((row, r.start, end, ji, j.id.clone()));
                }
            }
        }
    }
    let (sc, unit) = scale(rf.end_time);
    let x1 = (rf.end_time as f64 / sc).max(1e-9);
    let n = rows.len().max(1);
    let h = (60 + 18 * n as u32).clamp(200, 2400);
    let mut svg = String::new();
    let res = (|| -> Result<(), String> {
        let root = SVGBackend::with_string(&mut svg, (W, h)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let labels = rows.clone();
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Gantt: runs per GPU device (CPU-only runs per node)",
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(110)
            .build_cartesian_2d(0.0..x1, 0.0..n as f64)
            .map_err(e)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(format!("time ({unit})"))
            .y_labels(n.min(60))
            .y_label_formatter(&|y: &f64| {
                let k = y.floor() as usize;
                if (y - y.floor()).abs() < 1e-9 && k < labels.len() {
                    labels[n - 1 - k].clone()
                } else {
                    String::new()
                }
            })
            .draw()
            .map_err(e)?;
        for (row, a, b, ji, id) in &bars {
            let y = (n - 1 - row) as f64;
            let color = PALETTE[ji % PALETTE.len()];
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(*a as f64 / sc, y + 0.1), (*b as f64 / sc, y + 0.9)],
                    color.mix(0.8).filled(),
                )))
                .map_err(e)?;
            if n <= 60 {
                chart
                    .draw_series(std::iter::once(Text::new(
                        id.clone(),
                        (*a as f64 / sc, y + 0.75),
                        ("sans-serif", 11),
                    )))
                    .map_err(e)?;
            }
        }
        root.present().map_err(e)?;
        Ok(())
    })();
    Some(res.map(|()| svg))
}

/// The waits (first start − first submit) of jobs that started, and the
/// bounded slowdowns of jobs that ended (as in [`Summary`]).
pub fn waits_and_slowdowns(rf: &RunFile) -> (Vec<f64>, Vec<f64>) {
    let mut waits = Vec::new();
    let mut sds = Vec::new();
    for j in &rf.jobs {
        let (Some(first), Some(last)) = (j.runs.first(), j.runs.last()) else {
            continue;
        };
        waits.push(first.start.saturating_sub(j.first_submit) as f64);
        if let (Some(end), Some(_)) = (last.end, j.ended) {
            let run = end.saturating_sub(last.start);
            let wait = last.start.saturating_sub(j.first_submit);
            let sd = (wait + run) as f64 / run.max(crate::summary::SLOWDOWN_TAU) as f64;
            sds.push(sd.max(1.0));
        }
    }
    waits.sort_by(f64::total_cmp);
    sds.sort_by(f64::total_cmp);
    (waits, sds)
}

/// An empirical CDF chart of sorted `values`.
pub fn cdf_svg(title: &str, x_desc: &str, values: &[f64]) -> Result<String, String> {
    let n = values.len();
    let xmax = values.last().copied().unwrap_or(1.0).max(1.0) * 1.05;
    let mut pts: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    for (k, &v) in values.iter().enumerate() {
        pts.push((v, k as f64 / n as f64));
        pts.push((v, (k + 1) as f64 / n as f64));
    }
    pts.push((xmax, if n > 0 { 1.0 } else { 0.0 }));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W / 2, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("{title} (n = {n})"), ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(44)
            .build_cartesian_2d(0.0..xmax, 0.0..1.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("fraction of jobs")
            .draw()
            .map_err(e)?;
        chart
            .draw_series(LineSeries::new(pts, PALETTE[0].stroke_width(2)))
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// Policy comparison bars: GPU utilization, mean wait and p95 bounded
/// slowdown side by side, one bar per run (labelled by its policy or name).
pub fn compare_bars_svg(runs: &[(String, Summary)]) -> Result<String, String> {
    type Metric = (&'static str, fn(&Summary) -> f64);
    let metrics: [Metric; 3] = [
        ("GPU utilization (%)", |s| s.gpu_utilization * 100.0),
        ("mean wait (s)", |s| s.wait.mean),
        ("p95 bounded slowdown", |s| s.bounded_slowdown.p95),
    ];
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let panels = root.split_evenly((1, 3));
        for (panel, (name, f)) in panels.iter().zip(metrics) {
            let vals: Vec<f64> = runs.iter().map(|r| f(&r.1)).collect();
            let top = vals.iter().copied().fold(0.0, f64::max);
            let y1 = if top > 0.0 { top * 1.15 } else { 1.0 };
            let n = runs.len().max(1);
            let labels: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
            let mut chart = ChartBuilder::on(panel)
                .caption(name, ("sans-serif", 15))
                .margin(8)
                .x_label_area_size(30)
                .y_label_area_size(48)
                .build_cartesian_2d(0.0..n as f64, 0.0..y1)
                .map_err(e)?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(0)
                .draw()
                .map_err(e)?;
            for (k, v) in vals.iter().enumerate() {
                let c = PALETTE[k % PALETTE.len()];
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(k as f64 + 0.15, 0.0), (k as f64 + 0.85, *v)],
                        c.filled(),
                    )))
                    .map_err(e)?;
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{}: {:.1}", labels[k], v),
                        (k as f64 + 0.15, *v + y1 * 0.02),
                        ("sans-serif", 12),
                    )))
                    .map_err(e)?;
            }
        }
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// One chart of the report.
pub struct Chart {
    /// File stem: `charts/<stem>.svg`, `charts/<stem>.png`.
    pub stem: &'static str,
    pub title: &'static str,
    pub svg: Result<String, String>,
}

/// Every chart of the report, in the report's order; the Gantt chart only
/// for runs of at most [`GANTT_MAX_JOBS`] jobs. `fr` is the run's
/// [`fragmentation`].
pub fn report_charts(rf: &RunFile, fr: &Fragmentation) -> Vec<Chart> {
    let (waits, sds) = waits_and_slowdowns(rf);
    let mut v = vec![
        Chart {
            stem: "gpu_util_by_type",
            title: "GPU utilization by type",
            svg: gpu_util_by_type_svg(rf),
        },
        Chart {
            stem: "gpu_states",
            title: "GPUs allocated, idle (usable, fragmented), down",
            svg: gpu_states_svg_of(rf, fr),
        },
        Chart {
            stem: "queue",
            title: "queue",
            svg: queue_svg(rf),
        },
        Chart {
            stem: "wait_cdf",
            title: "wait CDF",
            svg: cdf_svg("Wait time CDF", "wait (s)", &waits),
        },
        Chart {
            stem: "slowdown_cdf",
            title: "slowdown CDF",
            svg: cdf_svg("Bounded slowdown CDF", "bounded slowdown", &sds),
        },
    ];
    if let Some(a) = gpu_by_account_svg(rf) {
        v.push(Chart {
            stem: "gpu_by_account",
            title: "GPUs per account",
            svg: a,
        });
    }
    if let Some(f) = fairshare_svg(rf) {
        v.push(Chart {
            stem: "fairshare",
            title: "fair-share per account",
            svg: f,
        });
    }
    if let Some(g) = gantt_svg(rf) {
        v.push(Chart {
            stem: "gantt",
            title: "Gantt",
            svg: g,
        });
    }
    v
}

/// The directory, inside a run directory, that chart files go to.
pub const CHARTS_DIR: &str = "charts";

/// Every report chart as files: `(<stem>.svg, SVG)` and `(<stem>.png, PNG)`
/// pairs, in the report's order. Fails on the first chart that cannot be
/// drawn or rasterised, naming it.
pub fn chart_files(rf: &RunFile) -> Result<Vec<(String, Vec<u8>)>, String> {
    let fr = fragmentation(rf);
    let mut out = Vec::new();
    for c in report_charts(rf, &fr) {
        let svg = c.svg.map_err(|e| format!("chart {}: {e}", c.stem))?;
        let png = crate::raster::svg_to_png(&svg).map_err(|e| format!("chart {}: {e}", c.stem))?;
        out.push((format!("{}.svg", c.stem), svg.into_bytes()));
        out.push((format!("{}.png", c.stem), png));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
