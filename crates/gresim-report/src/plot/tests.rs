//! Unit tests of `plot` (plot.rs).

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
