//! Unit tests of `summary` (summary.rs).

use super::*;
use crate::test_support::sample_output;

#[test]
fn stats_nearest_rank() {
    let mut v: Vec<f64> = (1..=20).rev().map(f64::from).collect();
    let s = Stats::of(&mut v);
    assert_eq!(s.count, 20);
    assert_eq!(s.median, 10.0);
    assert_eq!(s.p95, 19.0);
    assert_eq!(s.max, 20.0);
    assert!((s.mean - 10.5).abs() < 1e-12);
    // Sorted in place.
    assert_eq!(v[0], 1.0);

    assert_eq!(Stats::of(&mut []), Stats::default());
    let one = Stats::of(&mut [7.0]);
    assert_eq!(
        (one.count, one.median, one.p95, one.max, one.mean),
        (1, 7.0, 7.0, 7.0, 7.0)
    );
    // n = 2: median is the lower value (rank 1), p95 the upper (rank 2).
    let two = Stats::of(&mut [105.0, 10.0]);
    assert_eq!((two.median, two.p95, two.mean), (10.0, 105.0, 57.5));
}

#[test]
fn rounding() {
    assert_eq!(round6(1.0 / 3.0), 0.333333);
    assert_eq!(round6(2.0 / 3.0), 0.666667);
    assert_eq!(round6(-1e-9), 0.0);
    assert!(round6(-1e-9).is_sign_positive());
    assert_eq!(round6(f64::NAN), 0.0);
    assert_eq!(round6(1e20), 1e20);
}

#[test]
fn summary_from_hand_made_output() {
    let out = sample_output();
    let s = Summary::compute(&out, "tiny");
    assert_eq!(s.scenario, "tiny");
    assert_eq!(s.policy, "fifo");
    assert_eq!(s.jobs, 3);
    let states: Vec<(&str, u64)> = s.by_state.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        states,
        vec![("COMPLETED", 1), ("PENDING", 1), ("TIMEOUT", 1)]
    );
    // Waits to first start: 10 and 105.
    assert_eq!(s.wait.count, 2);
    assert_eq!(
        (s.wait.mean, s.wait.median, s.wait.max),
        (57.5, 10.0, 105.0)
    );
    // JCTs: 110 - 0 and 300 - 5.
    assert_eq!((s.jct.count, s.jct.median, s.jct.max), (2, 110.0, 295.0));
    // Slowdowns: 110/100 and 295/100.
    assert_eq!(s.bounded_slowdown.count, 2);
    assert!((s.bounded_slowdown.median - 1.1).abs() < 1e-12);
    assert!((s.bounded_slowdown.max - 2.95).abs() < 1e-12);
    assert_eq!(s.makespan, 300);
    // Usage: 340 of 600 GPU-seconds.
    assert!((s.gpu_utilization - 340.0 / 600.0).abs() < 1e-12);
    assert_eq!(s.gpu_utilization_by_type.len(), 1);
    assert!((s.gpu_utilization_by_type["a100"] - 340.0 / 600.0).abs() < 1e-12);
    assert!((s.gpu_sm_weighted_utilization - 340.0 / 600.0).abs() < 1e-12);
    assert!((s.gpu_memory_weighted_utilization - 340.0 / 600.0).abs() < 1e-12);
    assert!((s.cpu_utilization - 0.2).abs() < 1e-12);
    assert!((s.gpu_hours_allocated - 340.0 / 3600.0).abs() < 1e-12);
    assert_eq!((s.end_time, s.events), (300, 42));

    let json = s.to_json();
    assert!(json.ends_with("}\n"));
    assert!(json.contains("\"gpu_utilization\": 0.566667,"), "{json}");
    assert!(json.contains("\"a100\": 0.566667"), "{json}");
    assert!(
        json.contains("\"gpu_hours_allocated\": 0.094444,"),
        "{json}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["bounded_slowdown"]["mean"], 2.025);
    assert_eq!(v["by_state"]["TIMEOUT"], 1);

    let t = s.table();
    assert!(
        t.starts_with("scenario   tiny          policy fifo\n"),
        "{t}"
    );
    assert!(
        t.contains("jobs       3             COMPLETED 1, PENDING 1, TIMEOUT 1\n"),
        "{t}"
    );
    assert!(
        t.contains("wait  (s)  n 2  mean 57.5  median 10  p95 105  max 105\n"),
        "{t}"
    );
    assert!(
        t.contains("GPU util   56.7%  (a100 56.7%)   SM-weighted 56.7%   memory-weighted 56.7%\n"),
        "{t}"
    );
    assert!(t.contains("CPU util   20.0%\n"), "{t}");
    assert!(t.contains("makespan   300 s\n"), "{t}");
}

#[test]
fn slowdown_is_bounded_for_short_jobs() {
    let mut out = sample_output();
    // Job 0 runs 2 s after waiting 10 s: (10 + 2) / max(2, 10) = 1.2.
    out.jobs[0].runs[0].end = Some(12);
    // Job 1's last run lasts 1 s, started at once: max(1, ...) keeps it at >= 1.
    out.jobs[1].first_submit = 200;
    out.jobs[1].runs[0].start = 200;
    out.jobs[1].runs[0].end = Some(200);
    out.jobs[1].runs = vec![out.jobs[1].runs[0].clone()].into();
    out.jobs[1].runs[0].state = gresim_model::JobState::Completed;
    out.jobs[1].state = gresim_model::JobState::Completed;
    let s = Summary::compute(&out, "x");
    assert_eq!(s.bounded_slowdown.count, 2);
    assert!((s.bounded_slowdown.max - 1.2).abs() < 1e-12);
    assert_eq!(s.bounded_slowdown.median, 1.0);
}

#[test]
fn empty_output_is_all_zeros() {
    let mut out = sample_output();
    out.jobs.clear();
    out.usage = gresim_engine::Usage::default();
    let s = Summary::compute(&out, "empty");
    assert_eq!(s.jobs, 0);
    assert_eq!(s.makespan, 0);
    assert_eq!(s.wait, Stats::default());
    assert_eq!(s.gpu_utilization, 0.0);
    assert_eq!(s.gpu_utilization_by_type["a100"], 0.0);
    assert!(s.table().contains("jobs       0             -\n"));
}
