//! GPU utilization over time as an SVG chart.

use gresim_engine::{Sample, SimOutput};
use plotters::prelude::*;

/// Above this many samples the timeline is downsampled.
pub const MAX_PLOT_SAMPLES: usize = 4000;
/// The number of time buckets a long timeline is downsampled into.
pub const PLOT_BUCKETS: usize = 2000;

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 500;

/// One point of the plotted step functions.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    t: u64,
    alloc: f64,
    avail: f64,
    sm: f64,
}

impl From<&Sample> for Point {
    fn from(s: &Sample) -> Self {
        Point {
            t: s.t,
            alloc: f64::from(s.alloc_gpus),
            avail: f64::from(s.avail_gpus),
            sm: f64::from(s.alloc_gpu_sevenths) / 7.0,
        }
    }
}

/// The points to plot. Each sample holds until the next one. A timeline of
/// more than [`MAX_PLOT_SAMPLES`] samples is cut into [`PLOT_BUCKETS`] equal
/// time buckets; each bucket becomes one point at its start time carrying the
/// **maximum** allocated (and SM-weighted allocated) GPUs and the **minimum**
/// available GPUs over the bucket, counting the value carried into the
/// bucket from before, so short peaks and capacity dips stay visible.
fn points(timeline: &[Sample]) -> Vec<Point> {
    if timeline.len() <= MAX_PLOT_SAMPLES {
        return timeline.iter().map(Point::from).collect();
    }
    let t0 = timeline[0].t;
    let t1 = timeline[timeline.len() - 1].t;
    let span = u128::from(t1 - t0) + 1;
    let buckets = PLOT_BUCKETS as u128;
    let bucket_of = |t: u64| (u128::from(t - t0) * buckets / span) as usize;
    let bucket_start = |b: usize| t0 + (b as u128 * span).div_ceil(buckets) as u64;

    let mut out: Vec<Point> = Vec::with_capacity(PLOT_BUCKETS);
    let mut carry: Option<Point> = None;
    let mut i = 0;
    for b in 0..PLOT_BUCKETS {
        let start = bucket_start(b);
        let mut acc = carry.map(|c| Point { t: start, ..c });
        while i < timeline.len() && bucket_of(timeline[i].t) == b {
            let p = Point::from(&timeline[i]);
            acc = Some(match acc {
                None => Point { t: start, ..p },
                Some(a) => Point {
                    t: start,
                    alloc: a.alloc.max(p.alloc),
                    avail: a.avail.min(p.avail),
                    sm: a.sm.max(p.sm),
                },
            });
            carry = Some(p);
            i += 1;
        }
        if let Some(a) = acc {
            out.push(a);
        }
    }
    out
}

/// The step line of one series: each value holds until the next point, the
/// last one until `x_end`.
fn steps(pts: &[Point], x_end: f64, scale: f64, y: impl Fn(&Point) -> f64) -> Vec<(f64, f64)> {
    let mut v = Vec::with_capacity(pts.len() * 2);
    for (k, p) in pts.iter().enumerate() {
        let x = p.t as f64 / scale;
        let next = pts.get(k + 1).map_or(x_end.max(x), |n| n.t as f64 / scale);
        v.push((x, y(p)));
        v.push((next, y(p)));
    }
    v
}

/// An axis tick label: no decimals for whole numbers, else at most 2.
fn tick(v: &f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').to_string()
    }
}

/// A series to draw: legend label, step-line points, colour.
type Series<'a> = (&'a str, &'a [(f64, f64)], RGBColor);

/// Draws allocated GPUs, available GPUs and SM-weighted allocated GPUs over
/// time as an SVG document.
///
/// The x axis is in hours when the run lasts 2 h or more, else in seconds.
/// Never panics on an empty timeline or a zero-length run: the chart is then
/// drawn over a 1-unit range.
pub fn utilization_svg(out: &SimOutput, title: &str) -> Result<String, String> {
    let pts = points(&out.timeline);
    let t_start = pts.first().map_or(0, |p| p.t);
    let t_end = out.end_time.max(pts.last().map_or(0, |p| p.t));
    let (scale, unit) = if t_end >= 7200 {
        (3600.0, "h")
    } else {
        (1.0, "s")
    };
    let x0 = t_start as f64 / scale;
    let mut x1 = t_end as f64 / scale;
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let y_top = pts
        .iter()
        .map(|p| p.alloc.max(p.avail).max(p.sm))
        .fold(0.0, f64::max);
    let y1 = if y_top > 0.0 {
        (y_top * 1.08).ceil()
    } else {
        1.0
    };

    let alloc = steps(&pts, x1, scale, |p| p.alloc);
    let avail = steps(&pts, x1, scale, |p| p.avail);
    let sm = steps(&pts, x1, scale, |p| p.sm);

    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(format!("time ({unit})"))
            .y_desc("GPUs")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .draw()
            .map_err(|e| e.to_string())?;

        let series: [Series<'_>; 3] = [
            ("available GPUs", &avail, RGBColor(120, 120, 120)),
            ("allocated GPUs", &alloc, RGBColor(31, 119, 180)),
            (
                "SM-weighted allocated (sevenths/7)",
                &sm,
                RGBColor(214, 39, 40),
            ),
        ];
        for (label, data, color) in series {
            chart
                .draw_series(LineSeries::new(data.iter().copied(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests;
