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
mod tests {
    use super::*;
    use crate::test_support::sample_output;

    fn sample(t: u64, alloc: u32) -> Sample {
        Sample {
            t,
            alloc_gpus: alloc,
            alloc_gpu_sevenths: alloc * 7,
            alloc_cpus: 0,
            avail_gpus: 8,
            running: 0,
            pending: 0,
        }
    }

    #[test]
    fn svg_of_a_small_run() {
        let out = sample_output();
        let svg = utilization_svg(&out, "tiny & <small>").unwrap();
        assert!(svg.contains("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("allocated GPUs"));
        assert!(svg.contains("available GPUs"));
        assert!(svg.contains("time (s)"));
        // The title is escaped.
        assert!(svg.contains("tiny &amp; &lt;small&gt;"));
        // Three series drawn as thick polylines (plus their legend marks); the
        // allocated series is a step line: 6 samples, 2 points each.
        let series = |color: &str| -> Vec<&str> {
            svg.lines()
                .filter(|l| l.contains(&format!("stroke=\"{color}\" stroke-width=\"2\"")))
                .collect()
        };
        for color in ["#787878", "#1F77B4", "#D62728"] {
            assert_eq!(series(color).len(), 2, "{color}: {svg}");
        }
        let alloc = series("#1F77B4")[0];
        let points = alloc
            .split("points=\"")
            .nth(1)
            .unwrap()
            .trim_end_matches(" \"/>");
        assert_eq!(points.split(' ').count(), 12, "{alloc}");
        // Whole tick labels print without decimals.
        assert!(svg.contains("\n150\n"), "{svg}");
    }

    #[test]
    fn hours_axis_for_long_runs() {
        let mut out = sample_output();
        out.end_time = 10 * 3600;
        let svg = utilization_svg(&out, "long").unwrap();
        assert!(svg.contains("time (h)"));
    }

    #[test]
    fn empty_and_zero_length_runs_do_not_panic() {
        let mut out = sample_output();
        out.timeline.clear();
        out.end_time = 0;
        assert!(utilization_svg(&out, "empty").unwrap().contains("<svg"));
        out.timeline = vec![sample(0, 0)];
        assert!(utilization_svg(&out, "zero").unwrap().contains("<svg"));
        out.timeline = vec![sample(50, 3)];
        out.end_time = 50;
        assert!(utilization_svg(&out, "instant").unwrap().contains("<svg"));
    }

    #[test]
    fn steps_hold_until_next_sample() {
        let pts: Vec<Point> = [sample(0, 1), sample(10, 3)]
            .iter()
            .map(Point::from)
            .collect();
        let s = steps(&pts, 20.0, 1.0, |p| p.alloc);
        assert_eq!(s, vec![(0.0, 1.0), (10.0, 1.0), (10.0, 3.0), (20.0, 3.0)]);
    }

    #[test]
    fn short_timelines_are_kept_whole() {
        let tl: Vec<Sample> = (0..MAX_PLOT_SAMPLES as u64)
            .map(|i| sample(i, (i % 5) as u32))
            .collect();
        assert_eq!(points(&tl).len(), MAX_PLOT_SAMPLES);
    }

    #[test]
    fn long_timelines_keep_peaks() {
        // 10_000 samples at t = 0..10_000, alloc 1 except one 1-second spike of 7.
        let mut tl: Vec<Sample> = (0..10_000u64).map(|i| sample(i, 1)).collect();
        tl[4321].alloc_gpus = 7;
        tl[4321].alloc_gpu_sevenths = 49;
        tl[9000].avail_gpus = 2;
        let pts = points(&tl);
        assert_eq!(pts.len(), PLOT_BUCKETS);
        assert!(
            pts.windows(2).all(|w| w[0].t < w[1].t),
            "bucket starts increase"
        );
        assert_eq!(pts[0].t, 0);
        let peaks: Vec<&Point> = pts.iter().filter(|p| p.alloc == 7.0).collect();
        assert_eq!(peaks.len(), 1, "the spike survives in exactly one bucket");
        assert_eq!(peaks[0].sm, 7.0);
        assert!(peaks[0].t <= 4321 && 4321 < peaks[0].t + 5);
        assert_eq!(
            pts.iter().filter(|p| p.avail == 2.0).count(),
            1,
            "the dip survives"
        );
        // Deterministic.
        assert_eq!(points(&tl), pts);
    }

    #[test]
    fn long_sparse_timelines_carry_values_across_buckets() {
        // Samples clustered at both ends; the middle buckets are empty and
        // hold the last value.
        let mut tl: Vec<Sample> = (0..2500u64).map(|i| sample(i, 2)).collect();
        tl.extend((0..2500u64).map(|i| sample(1_000_000 + i, 4)));
        let pts = points(&tl);
        assert!(pts.len() <= PLOT_BUCKETS);
        let mid = pts.iter().find(|p| p.t > 500_000).unwrap();
        assert_eq!(mid.alloc, 2.0);
        assert_eq!(pts.last().unwrap().alloc, 4.0);
        assert!(
            utilization_svg(&crate::test_support::with_timeline(tl, 1_002_499), "sparse")
                .unwrap()
                .contains("<svg")
        );
    }
}
