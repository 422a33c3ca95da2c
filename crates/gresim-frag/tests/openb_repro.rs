//! The FGD reproduction on the real OpenB trace, as the repository ships it
//! (`data/`, gzip-compressed; see data/*/SOURCE.md). Needs nothing beside the
//! repository.

use std::path::Path;

use gresim_frag::experiment::{stat, Experiment, Metric};
use gresim_frag::openb::{read_nodes, read_published, read_tasks};
use gresim_frag::PolicyKind;

/// The repository's `data/`.
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data");

#[test]
fn default_workload_orders_fgd_over_bestfit_over_random() {
    let root = Path::new(DATA);
    let trace = root.join("alibaba-openb-gpu-v2023");
    let cluster = read_nodes(&trace.join("openb_node_list_gpu_node.csv")).unwrap();
    assert_eq!(cluster.nodes.len(), 1213);
    assert_eq!(cluster.total_gpus(), 6212);
    let tasks = read_tasks(&trace.join("openb_pod_list_default.csv"), &cluster).unwrap();
    assert_eq!(tasks.len(), 8152);
    let exp = Experiment::new(cluster, tasks);

    let policies = [PolicyKind::Random, PolicyKind::BestFit, PolicyKind::Fgd];
    let seeds = [42u64, 43];
    let results = exp.run_grid(&seeds, &policies);
    let alloc = |p| stat(&results, p, Metric::Alloc, 100).unwrap().mean;
    let (random, bestfit, fgd) = (
        alloc(PolicyKind::Random),
        alloc(PolicyKind::BestFit),
        alloc(PolicyKind::Fgd),
    );
    assert!(fgd > bestfit + 1.0, "FGD {fgd} vs BestFit {bestfit}");
    assert!(
        bestfit > random + 3.0,
        "BestFit {bestfit} vs Random {random}"
    );

    let published = root.join("fgd-expected-results/fgd_summary_by_arrival.csv");
    let published = read_published(&published).unwrap();
    for p in policies {
        for (m, pct) in [
            (Metric::Alloc, 100),
            (Metric::Alloc, 130),
            (Metric::FragAmount, 130),
        ] {
            let ours = stat(&results, p, m, pct).unwrap().mean;
            let key = (
                m.upstream_name().to_string(),
                "openb_pod_list_default".to_string(),
                p.upstream_label().to_string(),
                pct as u32,
            );
            let theirs = published[&key].mean;
            println!(
                "{:<10} {:<32} @{pct:>3}%: ours {ours:6.2}  published {theirs:6.2}  Δ {:+.2} pp",
                p.upstream_label(),
                m.upstream_name(),
                ours - theirs
            );
            // Two seeds only: a loose bound that still catches a broken policy.
            assert!(
                (ours - theirs).abs() < 1.5,
                "{p:?} {m:?}@{pct}: {ours} vs {theirs}"
            );
        }
    }
}
