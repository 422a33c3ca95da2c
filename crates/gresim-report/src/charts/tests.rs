//! Unit tests of `charts` (charts.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;

fn rf() -> RunFile {
    RunFile::from_output(&sample_output(), &RunMeta::new("tiny"))
}

#[test]
fn steps_and_spans() {
    assert_eq!(
        sweep(vec![(10, 1), (0, 1), (10, -1), (20, -1)]),
        vec![(0, 1), (10, 1), (20, 0)]
    );
    let r = rf();
    // Job 2: pending 5–110, then after its requeue 150–200.
    let spans: Vec<(u64, u64)> = pending_spans(&r.jobs[1], 300)
        .iter()
        .map(|s| (s.0, s.1))
        .collect();
    assert_eq!(spans, vec![(5, 110), (150, 200)]);
    // The array task is pending from 20 to the end.
    assert_eq!(
        pending_spans(&r.jobs[2], 300),
        vec![(20, 300, "Priority".to_string())]
    );
    let (w, s) = waits_and_slowdowns(&r);
    assert_eq!(w, vec![10.0, 105.0]);
    assert_eq!(s.len(), 2);
}

#[test]
fn every_chart_draws() {
    let r = rf();
    for svg in [
        gpu_util_by_type_svg(&r).unwrap(),
        gpu_states_svg(&r).unwrap(),
        queue_svg(&r).unwrap(),
        gantt_svg(&r).unwrap().unwrap(),
        cdf_svg("wait", "s", &[1.0, 2.0]).unwrap(),
        cdf_svg("empty", "s", &[]).unwrap(),
    ] {
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"));
    }
    assert!(gpu_util_by_type_svg(&r).unwrap().contains("a100 (2)"));
    assert!(queue_svg(&r).unwrap().contains("pending: Priority"));
    let g = gantt_svg(&r).unwrap().unwrap();
    assert!(g.contains("gpu01:gpu1"), "{g}");
    let s = Summary::compute(&sample_output(), "tiny");
    let bars = compare_bars_svg(&[("fifo".into(), s.clone()), ("slurm".into(), s)]).unwrap();
    assert!(bars.contains("mean wait (s)") && bars.contains("slurm"));
    // Too many jobs: no Gantt.
    let mut big = r.clone();
    big.jobs = (0..=GANTT_MAX_JOBS).map(|_| r.jobs[0].clone()).collect();
    assert!(gantt_svg(&big).is_none());
    // An empty run draws.
    let mut empty = r;
    empty.jobs.clear();
    empty.timeline.clear();
    empty.end_time = 0;
    assert!(queue_svg(&empty).unwrap().contains("<svg"));
    assert!(gpu_states_svg(&empty).unwrap().contains("<svg"));
    assert_eq!(chart_files(&empty).unwrap().len(), 12);
}

fn without_text(svg: &str) -> String {
    let mut out = String::new();
    let mut rest = svg;
    while let Some(a) = rest.find("<text") {
        out.push_str(&rest[..a]);
        let b = rest[a..].find("</text>").expect("closed") + a + "</text>".len();
        rest = &rest[b..];
    }
    out.push_str(rest);
    out
}

#[test]
fn fragmented_capacity_is_charted() {
    let r = RunFile::parse(crate::fragmentation::tests::HAND_MADE).unwrap();
    let svg = gpu_states_svg(&r).unwrap();
    for label in [
        "allocated",
        "idle, usable",
        "idle, fragmented (typical request gpu:a100:2, 2 CPUs, 16G does not fit)",
        "down or drained",
        "fragmented 26.5% of capacity",
    ] {
        assert!(svg.contains(label), "{label} in {svg}");
    }
}

#[test]
fn png_charts_are_stable_and_show_text() {
    let r = RunFile::parse(crate::fragmentation::tests::HAND_MADE).unwrap();
    let files = chart_files(&r).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "gpu_util_by_type.svg",
            "gpu_util_by_type.png",
            "gpu_states.svg",
            "gpu_states.png",
            "queue.svg",
            "queue.png",
            "wait_cdf.svg",
            "wait_cdf.png",
            "slowdown_cdf.svg",
            "slowdown_cdf.png",
            "gantt.svg",
            "gantt.png"
        ]
    );
    // The same run gives the same bytes.
    assert_eq!(files, chart_files(&r.clone()).unwrap());
    for pair in files.chunks(2) {
        let svg = std::str::from_utf8(&pair[0].1).unwrap();
        let (w, h, px) = crate::raster::tests::decode(&pair[1].1);
        assert!(
            svg.contains(&format!("width=\"{w}\" height=\"{h}\"")),
            "{}",
            pair[0].0
        );
        let first = &px[..4];
        assert!(
            px.chunks_exact(4).any(|p| p != first),
            "{} is one colour",
            pair[1].0
        );
        // Text is drawn: the same chart without its text elements differs.
        let bare = crate::raster::svg_to_png(&without_text(svg)).unwrap();
        let (_, _, bare_px) = crate::raster::tests::decode(&bare);
        let differ = px
            .chunks_exact(4)
            .zip(bare_px.chunks_exact(4))
            .filter(|(a, b)| a != b)
            .count();
        assert!(differ > 500, "{}: only {differ} pixels of text", pair[1].0);
    }
}
