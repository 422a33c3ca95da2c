//! FGD on MIG: only legal placements, the experiment's determinism across
//! thread counts, the mix syntax, and (when the data is present) OpenB mapped
//! to MIG.

use std::path::Path;

use gresim_frag::experiment::{stat, Metric};
use gresim_frag::mig::{
    LayoutRule, MigGeometry, MigNodeSpec, MigNodeState, MigSlicing, MigTask, StartRule, EMPTY,
};
use gresim_frag::mig_experiment::{
    default_mix, map_openb_task, parse_mix, uniform_nodes, MigExperiment,
};
use gresim_frag::model::{NodeSpec, TaskSpec, TypeMask};
use gresim_frag::openb::{read_nodes, read_tasks, Cluster};
use gresim_frag::sim::{run_sliced, Slicing};
use gresim_frag::PolicyKind;
use gresim_model::catalog::{model, model_by_name, MIG_MEMORY_SLICES};
use gresim_model::mig::is_published;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn geo(name: &str, rule: LayoutRule) -> MigGeometry {
    MigGeometry::new(model(model_by_name(name).unwrap()), rule).unwrap()
}

/// Checks a GPU's layout independently of `check_placement`: every instance
/// at one of its profile's starts, memory slices disjoint and within the GPU,
/// at most 7 compute slices and each profile's instance limit.
fn assert_legal(g: &MigGeometry, id: u16) {
    let insts = g.instances(id);
    let mut mem = 0u16;
    let mut compute = 0u8;
    for i in insts {
        let p = i.profile;
        assert!(p.starts.contains(&i.start), "{} at {}", p.name, i.start);
        assert!(i.start + p.memory_slices <= MIG_MEMORY_SLICES);
        let span = ((1u16 << p.memory_slices) - 1) << i.start;
        assert_eq!(mem & span, 0, "overlap in {insts:?}");
        mem |= span;
        compute += p.compute_slices;
        let same = insts.iter().filter(|j| j.profile == p).count();
        assert!(same <= usize::from(p.max_instances));
    }
    assert!(compute <= 7);
    assert_eq!(g.free_slices(id), 7 - compute);
    if g.rule == LayoutRule::Published {
        assert!(is_published(g.model, insts.iter().map(|i| i.profile)));
    }
}

/// Random tasks placed one at a time on the first node that fits, by every
/// policy's device choice: every GPU stays legal, instances are only ever
/// added, and a task that does not fit anywhere is never placed.
#[test]
fn placements_are_legal_and_never_overlap() {
    for model_name in ["A100-40GB", "A100-80GB", "H100", "H200"] {
        for rule in [LayoutRule::Published, LayoutRule::Legal] {
            let g = geo(model_name, rule);
            let nprof = g.profiles().len() as u8;
            for policy in PolicyKind::ALL {
                for start in [StartRule::Highest, StartRule::Lowest] {
                    let mut rng = ChaCha8Rng::seed_from_u64(7 + policy as u64);
                    let types: Vec<MigTask> = (0..nprof)
                        .map(|p| MigTask {
                            cpu_milli: 1000,
                            profile: p,
                            count: 1,
                        })
                        .collect();
                    let dist: Vec<(MigTask, f64)> =
                        types.iter().map(|&t| (t, 1.0 / f64::from(nprof))).collect();
                    let sl = MigSlicing {
                        geo: &g,
                        dist: &dist,
                        start,
                    };
                    let mut nodes: Vec<MigNodeState> = (0..3)
                        .map(|i| {
                            MigNodeState::new(&MigNodeSpec {
                                name: format!("n{i}"),
                                cpu_milli: 64_000,
                                num_gpu: 2 + i as u8,
                            })
                        })
                        .collect();
                    let mut placed = 0;
                    for _ in 0..120 {
                        let t = types[rng.random_range(0..types.len())];
                        let Some(i) = nodes.iter().position(|n| sl.fits(n, &t)) else {
                            // Nowhere to go: no GPU anywhere has a legal start.
                            assert!(nodes
                                .iter()
                                .all(|n| n.layouts().iter().all(|&l| !g.can_host(l, t.profile))));
                            continue;
                        };
                        let before = nodes[i].clone();
                        let frag = sl.frag(&nodes[i]);
                        let devs = sl
                            .devices(policy, &nodes[i], &t, frag, &mut rng)
                            .expect("a node that fits gets devices");
                        assert_eq!(devs.len(), 1);
                        sl.take(&mut nodes[i], &t, &devs);
                        placed += 1;
                        for (gpu, (&a, &b)) in
                            before.layouts().iter().zip(nodes[i].layouts()).enumerate()
                        {
                            assert_legal(&g, b);
                            let (old, new) = (g.instances(a), g.instances(b));
                            assert!(old.iter().all(|x| new.contains(x)), "an instance moved");
                            if gpu == devs[0].0 {
                                assert_eq!(new.len(), old.len() + 1);
                                assert!(new.iter().any(|x| x.start == devs[0].1
                                    && std::ptr::eq(
                                        x.profile,
                                        &g.profiles()[usize::from(t.profile)]
                                    )));
                            } else {
                                assert_eq!(a, b);
                            }
                        }
                        assert_eq!(nodes[i].cpu_left, before.cpu_left - 1000);
                    }
                    assert!(placed > 10, "{model_name} {rule:?} {policy:?}: {placed}");
                }
            }
        }
    }
}

fn small_experiment(rule: LayoutRule) -> MigExperiment {
    let g = geo("H100", rule);
    let mix = parse_mix(
        &g,
        "1g.10gb:30,1g.20gb:5,2g.20gb:20,3g.40gb:20:12,4g.40gb:10,7g.80gb:10,2x7g.80gb:3,cpu:2:4",
    )
    .unwrap();
    let mut nodes = uniform_nodes(12, 4, 48);
    nodes.push(MigNodeSpec {
        name: "big".into(),
        cpu_milli: 128_000,
        num_gpu: 8,
    });
    MigExperiment::synthetic(g, StartRule::Highest, nodes, &mix).unwrap()
}

#[test]
fn grid_is_independent_of_thread_count() {
    for rule in [LayoutRule::Published, LayoutRule::Legal] {
        let exp = small_experiment(rule);
        let seeds: Vec<u64> = (42..=45).collect();
        let (one, n1) = exp.run_grid_on(&seeds, &PolicyKind::ALL, 1).unwrap();
        let (three, n3) = exp.run_grid_on(&seeds, &PolicyKind::ALL, 3).unwrap();
        assert_eq!((n1, n3), (1, 3));
        assert_eq!(one.len(), seeds.len() * PolicyKind::ALL.len());
        assert_eq!(one, three);
        assert_eq!((one[7].seed, one[7].policy), (43, PolicyKind::DotProd));
        assert_eq!(exp.run_one(44, PolicyKind::Fgd), one[2 * 6 + 5]);
        assert_eq!(exp.run_one(45, PolicyKind::Random), one[3 * 6]);
        // Seeds matter, and every run fails some tasks (130 % is more than fits).
        assert_ne!(one[0].values, one[6].values);
        assert!(one.iter().all(|r| r.failed > 0 && r.placed > 0));
    }
}

#[test]
fn runs_account_every_slice_and_reach_130_percent() {
    let exp = small_experiment(LayoutRule::Published);
    let cap = exp.total_gpus() * 7;
    let (order, rank) = exp.arrivals(42);
    let requested: u64 = order
        .iter()
        .map(|&i| exp.types[i as usize].slices(&exp.geo))
        .sum();
    // Arrivals stop just below 1.3 × capacity (the next task would pass it).
    assert!(requested as f64 <= 1.3 * cap as f64);
    assert!(
        requested as f64 > 1.3 * cap as f64 - 14.0,
        "{requested} of {cap}"
    );
    for policy in PolicyKind::ALL {
        let sl = MigSlicing {
            geo: &exp.geo,
            dist: &exp.dist,
            start: exp.start,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let trace = run_sliced(
            &sl,
            exp.nodes.iter().map(MigNodeState::new).collect(),
            &exp.types,
            &order,
            &rank,
            policy,
            &mut rng,
        );
        assert_eq!(trace.placed + trace.failed, order.len());
        assert_eq!(trace.steps.last().unwrap().arrived, requested);
        for st in &trace.steps {
            assert_eq!(st.used + st.idle, cap, "{policy:?}");
            // The fragmented capacity is part of the idle capacity.
            assert!(st.frag_milli <= st.idle as f64 * 1000.0 / 7.0 + 1e-6);
        }
        let r = exp.run_one(42, policy);
        let a100 = r.get(Metric::Alloc, 100).unwrap();
        let a130 = r.get(Metric::Alloc, 130).unwrap();
        assert!(
            a100 > 50.0 && a100 <= a130 && a130 <= 100.0,
            "{a100} {a130}"
        );
    }
}

#[test]
fn mix_syntax_and_errors() {
    let g = geo("A100-80GB", LayoutRule::Published);
    let m = parse_mix(&g, "3g.40gb:5, 2x7g.80gb:1:40 ,cpu:2").unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(
        m[0],
        (
            MigTask {
                cpu_milli: 6000,
                profile: 3,
                count: 1
            },
            5
        )
    );
    assert_eq!((m[1].0.count, m[1].0.cpu_milli, m[1].1), (2, 40_000, 1));
    assert_eq!((m[2].0.count, m[2].0.cpu_milli), (0, 1000));
    for (bad, needle) in [
        (
            "3g.20gb:5",
            "unknown MIG profile '3g.20gb' for A100-SXM4-80GB",
        ),
        ("3g.40gb", "expected TASK:WEIGHT"),
        ("3g.40gb:0", "weight '0'"),
        ("3g.40gb:1:lots", "CPUs 'lots'"),
        ("2x3g.40gb:1", "only whole GPUs"),
        ("99x7g.80gb:1", "GPU count"),
        ("cpu:3", "no task asking for a GPU"),
    ] {
        let e = parse_mix(&g, bad).unwrap_err();
        assert!(e.contains(needle), "{bad}: {e}");
    }
    // The default mix names the model's own profiles and sums to 100.
    let d = default_mix(&geo("H200", LayoutRule::Legal));
    assert_eq!(d.iter().map(|x| x.1).sum::<u64>(), 100);
    assert_eq!(d[5].0.describe(&geo("H200", LayoutRule::Legal)), "7g.141gb");
}

fn openb_task(name: &str, num: u8, milli: u32) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        cpu_milli: 4000,
        memory_mib: 1024,
        num_gpu: num,
        gpu_milli: milli,
        gpu_spec: TypeMask::ANY,
    }
}

#[test]
fn openb_tasks_map_to_the_smallest_profile_with_enough_compute() {
    let g = geo("A100-40GB", LayoutRule::Published);
    let d = |num, milli| map_openb_task(&g, &openb_task("t", num, milli)).describe(&g);
    // ⌈gpu_milli · 7 / 1000⌉ slices, then the smallest profile with as many.
    assert_eq!(d(1, 100), "1g.5gb"); // ⌈0.7⌉ = 1 (1g.5gb, not the 2-memory-slice 1g.10gb)
    assert_eq!(d(1, 142), "1g.5gb"); // ⌈0.994⌉ = 1
    assert_eq!(d(1, 143), "2g.10gb"); // ⌈1.001⌉ = 2
    assert_eq!(d(1, 285), "2g.10gb"); // ⌈1.995⌉ = 2
    assert_eq!(d(1, 286), "3g.20gb"); // ⌈2.002⌉ = 3
    assert_eq!(d(1, 460), "4g.20gb"); // ⌈3.22⌉ = 4
    assert_eq!(d(1, 571), "4g.20gb"); // ⌈3.997⌉ = 4
    assert_eq!(d(1, 572), "7g.40gb"); // ⌈4.004⌉ = 5: no 5g or 6g profile
    assert_eq!(d(1, 1000), "7g.40gb");
    assert_eq!(d(4, 1000), "4x7g.40gb");
    assert_eq!(d(0, 0), "cpu-only");
}

/// A tiny OpenB-style workload: the paper's protocol (shuffled originals,
/// then resampled) gives the same grid on 1 and 2 threads.
#[test]
fn openb_style_grid_is_deterministic() {
    let cluster = Cluster {
        nodes: (0..12)
            .map(|i| NodeSpec {
                name: format!("node-{i}"),
                cpu_milli: 32_000,
                memory_mib: 1 << 20,
                num_gpu: 2 + (i % 3) as u8 * 2,
                gpu_model: 0,
            })
            .collect(),
        models: vec!["G2".into()],
    };
    let tasks: Vec<TaskSpec> = (0..40u32)
        .map(|i| match i % 5 {
            0 => openb_task(&format!("p{i:02}"), 0, 0),
            1 => openb_task(&format!("p{i:02}"), 1, 1000),
            2 => openb_task(&format!("p{i:02}"), 2, 1000),
            _ => openb_task(&format!("p{i:02}"), 1, 100 + 97 * i),
        })
        .collect();
    let g = geo("A100-80GB", LayoutRule::Published);
    let exp = MigExperiment::from_openb(g, StartRule::Highest, &cluster, &tasks).unwrap();
    assert_eq!(exp.original_tasks(), 40);
    let (order, _) = exp.arrivals(3);
    assert!(order.len() > 40, "the originals are resampled up to 130 %");
    let seeds = [1u64, 2, 3];
    let (a, _) = exp.run_grid_on(&seeds, &PolicyKind::ALL, 1).unwrap();
    let (b, _) = exp.run_grid_on(&seeds, &PolicyKind::ALL, 2).unwrap();
    assert_eq!(a, b);
}

#[test]
fn openb_default_mapped_to_mig_orders_fgd_first() {
    // The repository's copy (gzip-compressed; data/*/SOURCE.md).
    let trace = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/alibaba-openb-gpu-v2023"
    ));
    let cluster = read_nodes(&trace.join("openb_node_list_gpu_node.csv")).unwrap();
    let tasks = read_tasks(&trace.join("openb_pod_list_default.csv"), &cluster).unwrap();
    let g = geo("A100-80GB", LayoutRule::Published);
    let exp = MigExperiment::from_openb(g, StartRule::Highest, &cluster, &tasks).unwrap();
    let policies = [PolicyKind::Random, PolicyKind::BestFit, PolicyKind::Fgd];
    let results = exp.run_grid(&[42, 43], &policies);
    let alloc = |p| stat(&results, p, Metric::Alloc, 100).unwrap().mean;
    let (random, bestfit, fgd) = (
        alloc(PolicyKind::Random),
        alloc(PolicyKind::BestFit),
        alloc(PolicyKind::Fgd),
    );
    assert!(fgd > bestfit + 0.5, "FGD {fgd} vs BestFit {bestfit}");
    assert!(
        bestfit > random + 3.0,
        "BestFit {bestfit} vs Random {random}"
    );
    // The whole cluster is MIG GPUs of one model: 6212 GPUs of 7 slices.
    assert_eq!(exp.total_gpus(), 6212);
    assert_eq!(exp.geo.moves(EMPTY, exp.geo.whole_slot()).len(), 1);
}
