//! The seeds × policies grid gives the same results on one thread and on
//! several, and a run is a pure function of (seed, policy).

use gresim_frag::experiment::{Experiment, Metric};
use gresim_frag::model::{NodeSpec, TaskSpec, TypeMask};
use gresim_frag::openb::Cluster;
use gresim_frag::PolicyKind;

/// A small synthetic cluster and workload with sharing, whole-GPU, multi-GPU,
/// CPU-only and model-constrained tasks.
fn experiment() -> Experiment {
    let mut nodes = Vec::new();
    for i in 0..24u32 {
        let (gpus, model) = match i % 3 {
            0 => (8, 0),
            1 => (2, 1),
            _ => (4, 0),
        };
        nodes.push(NodeSpec {
            name: format!("node-{i:03}"),
            cpu_milli: 32_000 + 16_000 * u64::from(i % 2),
            memory_mib: 262_144,
            num_gpu: gpus,
            gpu_model: model,
        });
    }
    let cluster = Cluster {
        nodes,
        models: vec!["G2".into(), "T4".into()],
    };
    let mut tasks = Vec::new();
    for i in 0..260u64 {
        let (num, milli) = match i % 7 {
            0 => (0, 0),
            1..=3 => (1, [250, 470, 650, 810][(i % 4) as usize]),
            4..=5 => (1, 1000),
            _ => ([2u8, 4, 8][(i % 3) as usize], 1000),
        };
        tasks.push(TaskSpec {
            name: format!("task-{i:04}"),
            cpu_milli: 1000 + (i * 37 % 8) * 1000,
            memory_mib: 4096,
            num_gpu: num,
            gpu_milli: milli,
            gpu_spec: if i % 11 == 0 {
                TypeMask(0b10)
            } else {
                TypeMask::ANY
            },
        });
    }
    Experiment::new(cluster, tasks)
}

#[test]
fn grid_is_independent_of_thread_count() {
    let exp = experiment();
    let seeds: Vec<u64> = (42..=47).collect();
    let (one, n1) = exp.run_grid_on(&seeds, &PolicyKind::ALL, 1).unwrap();
    let (three, n3) = exp.run_grid_on(&seeds, &PolicyKind::ALL, 3).unwrap();
    assert_eq!((n1, n3), (1, 3));
    assert_eq!(one.len(), seeds.len() * PolicyKind::ALL.len());
    assert_eq!(one, three);
    // Ordered by seed, then policy.
    assert_eq!((one[0].seed, one[0].policy), (42, PolicyKind::Random));
    assert_eq!((one[7].seed, one[7].policy), (43, PolicyKind::DotProd));
    // And each cell equals a run on its own.
    assert_eq!(exp.run_one(44, PolicyKind::Fgd), one[2 * 6 + 5]);
    assert_eq!(exp.run_one(45, PolicyKind::Random), one[3 * 6]);
}

#[test]
fn runs_are_sane_and_seeds_matter() {
    let exp = experiment();
    let a = exp.run_one(42, PolicyKind::Random);
    let b = exp.run_one(43, PolicyKind::Random);
    // The synthetic workload oversubscribes the cluster: some tasks fail.
    assert!(
        a.failed > 0 && a.placed > 0,
        "{} placed, {} failed",
        a.placed,
        a.failed
    );
    assert_eq!(a.placed + a.failed, a.tasks);
    assert_ne!(a.values, b.values, "different seeds should differ");
    for r in [&a, &b] {
        for pct in 0..=130 {
            if let Some(v) = r.get(Metric::Alloc, pct) {
                assert!((0.0..=100.0).contains(&v));
                // Nothing is allocated beyond what has arrived (2-point slack for rounding).
                assert!(v <= pct as f64 + 2.0, "alloc {v} at {pct}");
            }
            if let Some(v) = r.get(Metric::FragRatio, pct) {
                assert!((0.0..=100.0).contains(&v), "frag ratio {v}");
            }
        }
    }
    // The workload reaches the tune target: a value at 120 % exists.
    assert!(a.get(Metric::Alloc, 120).is_some());
}
