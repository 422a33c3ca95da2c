//! Unit tests of `progress` (progress.rs).

use super::*;

/// The engine's hook is called on a run of more than PROGRESS_EVERY
/// events, sees time and ended jobs go forward, and changes nothing.
#[test]
fn the_engine_hook_reports_and_changes_nothing() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/sweeps/backfill_cluster.json");
    let mut sc = gresim_io::load_scenario(&path).expect("the example scenario loads");
    if let gresim_io::Workload::Synthetic(s) = &mut sc.workload {
        s.jobs = 2000;
    }
    let policy = || gresim_sched::PolicyKind::Fifo.build();
    let plain = gresim_engine::run(sc.sim_input(3), policy()).expect("runs");
    let mut calls: Vec<(u64, usize)> = Vec::new();
    let hooked = gresim_engine::run_with_progress(
        sc.sim_input(3),
        policy(),
        Box::new(|t, done| calls.push((t, done))),
    )
    .expect("runs");
    assert!(
        plain.events > gresim_engine::PROGRESS_EVERY,
        "{} events",
        plain.events
    );
    assert_eq!(
        calls.len() as u64,
        plain.events / gresim_engine::PROGRESS_EVERY,
        "one call per PROGRESS_EVERY events"
    );
    assert!(calls
        .windows(2)
        .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    assert!(calls.iter().all(|c| c.1 <= plain.jobs.len()));
    assert!(calls.last().is_some_and(|c| c.1 > 0), "{calls:?}");
    let summary = |o| gresim_report::summary::Summary::compute(o, "x").to_json();
    assert_eq!(summary(&plain), summary(&hooked));
    assert_eq!(plain.events, hooked.events);
    assert_eq!(plain.timeline, hooked.timeline);
}

#[test]
fn quiet_means_no_bar() {
    let p = Progress::new(Some(10), "points", true);
    assert!(!p.is_on());
    assert!(!wanted(true));
}

#[test]
fn an_off_bar_ignores_updates() {
    let mut p = Progress::off();
    p.inc(3);
    p.set_position(7);
    p.set_message("x".into());
    p.finish();
    assert!(!p.is_on());
}
