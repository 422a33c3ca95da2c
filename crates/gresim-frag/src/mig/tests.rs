//! Unit tests of `mig` (mig.rs).

use super::*;
use crate::sim::Slicing;
use gresim_model::catalog::{model, model_by_name};
use rand::SeedableRng;

fn a100_80(rule: LayoutRule) -> MigGeometry {
    MigGeometry::new(model(model_by_name("A100-80GB").unwrap()), rule).unwrap()
}

fn task(geo: &MigGeometry, name: &str, cpus: u64) -> MigTask {
    MigTask {
        cpu_milli: cpus * 1000,
        profile: geo.profile_slot(name).unwrap(),
        count: 1,
    }
}

/// A node with `gpus` GPUs and `cpus` CPUs, the instances `(gpu, profile, start)` placed by tasks of no CPU.
fn node(geo: &MigGeometry, cpus: u64, gpus: u8, placed: &[(usize, &str, u8)]) -> MigNodeState {
    let mut n = MigNodeState::new(&MigNodeSpec {
        name: "n".into(),
        cpu_milli: cpus * 1000,
        num_gpu: gpus,
    });
    for &(g, p, s) in placed {
        n.take(geo, &task(geo, p, 0), &[(g, s)]);
    }
    n
}

#[test]
fn every_reachable_layout_is_legal_and_published_is_a_subset() {
    let m = model(model_by_name("A100-80GB").unwrap());
    let published = a100_80(LayoutRule::Published);
    let legal = a100_80(LayoutRule::Legal);
    assert!(published.layout_count() < legal.layout_count());
    for (geo, rule) in [
        (&published, LayoutRule::Published),
        (&legal, LayoutRule::Legal),
    ] {
        for id in 0..geo.layout_count() as u16 {
            let insts = geo.instances(id);
            assert_eq!(check_placement(m, insts), Ok(()), "{insts:?}");
            if rule == LayoutRule::Published {
                assert!(is_published(m, insts.iter().map(|i| i.profile)));
            }
            let used: u8 = insts.iter().map(|i| i.profile.compute_slices).sum();
            assert_eq!(geo.free_slices(id), 7 - used);
            // Every move adds exactly one instance of its profile at a start it allows.
            for slot in 0..6u8 {
                for &(s, to) in geo.moves(id, slot) {
                    let p = &m.mig_profiles[usize::from(slot)];
                    assert!(p.starts.contains(&s));
                    let after = geo.instances(to);
                    assert_eq!(after.len(), insts.len() + 1);
                    assert!(after.iter().any(|i| i.profile == p && i.start == s));
                    assert!(insts.iter().all(|i| after.contains(i)));
                }
            }
        }
    }
    // 4g + 3g is legal by the slice model, not published.
    let g = |geo: &MigGeometry, p: &str, s: u8| {
        geo.place(EMPTY, geo.profile_slot(p).unwrap(), s).unwrap()
    };
    let four = g(&legal, "4g.40gb", 0);
    assert_eq!(
        legal.place(four, 3, 4).map(|l| legal.instances(l).len()),
        Some(2)
    );
    let four_p = g(&published, "4g.40gb", 0);
    assert!(!published.can_host(four_p, 3));
    // A 7g only goes on an empty GPU, at 0; a 3g at 0 or 4 only.
    assert_eq!(
        published
            .moves(EMPTY, 5)
            .iter()
            .map(|m| m.0)
            .collect::<Vec<_>>(),
        vec![0]
    );
    assert_eq!(
        published
            .moves(EMPTY, 3)
            .iter()
            .map(|m| m.0)
            .collect::<Vec<_>>(),
        vec![0, 4]
    );
    assert!(!published.can_host(g(&published, "1g.10gb", 0), 5));
    // A model without MIG is refused.
    assert!(MigGeometry::new(model(model_by_name("T4").unwrap()), LayoutRule::Legal).is_err());
}

#[test]
fn hand_computed_node_fragmentation() {
    // GPU 0: 4g.40gb at 0 (3 slices free, memory 4–7 free).
    // GPU 1: 3g.40gb at 0 and at 4 (1 slice free, memory full).
    // Distribution: 3g.40gb 0.5, 1g.10gb 0.25, 7g.80gb 0.25, 1 CPU each.
    let s = 1000.0 / 7.0;
    for (rule, want) in [
        // Legal: 3g fits GPU 0 (at 4): only GPU 1's slice is unusable → 0.5·s;
        // 1g fits GPU 0: 0.25·s; 7g fits nowhere: 0.25·4s. F = 1.75·s = 250.
        (LayoutRule::Legal, 1.75 * s),
        // Published: 4g + 3g is not published: 3g fits nowhere → 0.5·4s;
        // 1g on GPU 0 (4g + 1g is published): 0.25·s; 7g: 0.25·4s. F = 3.25·s.
        (LayoutRule::Published, 3.25 * s),
    ] {
        let geo = a100_80(rule);
        let n = node(
            &geo,
            8,
            2,
            &[(0, "4g.40gb", 0), (1, "3g.40gb", 0), (1, "3g.40gb", 4)],
        );
        let dist = [
            (task(&geo, "3g.40gb", 1), 0.5),
            (task(&geo, "1g.10gb", 1), 0.25),
            (task(&geo, "7g.80gb", 1), 0.25),
        ];
        assert!((n.view(&geo).idle() - 4.0 * s).abs() < 1e-9);
        let f = mig_node_frag(n.view(&geo), &dist);
        assert!((f - want).abs() < 1e-9, "{rule:?}: {f} vs {want}");
        // Without the CPUs every task sees all 4 idle slices.
        let mut poor = n.clone();
        poor.cpu_left = 0;
        assert!((mig_node_frag(poor.view(&geo), &dist) - 4.0 * s).abs() < 1e-9);
        // A CPU-only task sees all idle slices, a full node has none.
        let cpu_only = MigTask {
            cpu_milli: 1000,
            profile: 0,
            count: 0,
        };
        assert!((n.view(&geo).unusable_by(&cpu_only) - 4.0 * s).abs() < 1e-9);
        let full = node(&geo, 8, 1, &[(0, "7g.80gb", 0)]);
        assert_eq!(mig_node_frag(full.view(&geo), &dist), 0.0);
    }
    // Two whole GPUs need two free GPUs: on a node with one, all its idle is unusable.
    let geo = a100_80(LayoutRule::Published);
    let n = node(&geo, 8, 2, &[(1, "1g.10gb", 6)]);
    let two = MigTask {
        cpu_milli: 0,
        profile: geo.whole_slot(),
        count: 2,
    };
    assert!((n.view(&geo).unusable_by(&two) - 13.0 * s).abs() < 1e-9);
    let one = MigTask { count: 1, ..two };
    assert!((n.view(&geo).unusable_by(&one) - 6.0 * s).abs() < 1e-9);
}

/// Node X: 64 CPUs; GPU 0 2g.20gb@4 (5 free), GPU 1 empty, GPU 2 1g.10gb@3 + 3g.40gb@4 (3 free).
/// Node Y: 8 CPUs, one empty GPU. Task: 2g.20gb with 4 CPUs.
fn policy_case(geo: &MigGeometry) -> (MigNodeState, MigNodeState, MigTask) {
    let x = node(
        geo,
        64,
        3,
        &[(0, "2g.20gb", 4), (2, "1g.10gb", 3), (2, "3g.40gb", 4)],
    );
    let y = node(geo, 8, 1, &[]);
    (x, y, task(geo, "2g.20gb", 4))
}

#[test]
fn each_policy_by_hand() {
    let geo = a100_80(LayoutRule::Published);
    let (x, y, t) = policy_case(&geo);
    let dist = [(t, 0.5), (task(&geo, "4g.40gb", 4), 0.5)];
    let sl = MigSlicing {
        geo: &geo,
        dist: &dist,
        start: StartRule::Highest,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let fx = sl.frag(&x);
    let fy = sl.frag(&y);
    let mut choose = |p: PolicyKind| {
        let (sx, sy) = (sl.score(p, &x, &t, fx), sl.score(p, &y, &t, fy));
        let (n, f) = if sx >= sy { (&x, fx) } else { (&y, fy) };
        (sx, sy, sl.devices(p, n, &t, f, &mut rng).unwrap())
    };
    // DotProd: X: (64/128)(4/128) + (15/7/8)(2/7/8) = 0.015625 + 0.0095663 → 100·(1 − 0.0125957) = 98;
    // Y: (8/128)(4/128) + (1/8)(2/7/8) = 0.0019531 + 0.0044643 → 99. Y, its GPU at the highest 2g start, 4.
    assert_eq!(choose(PolicyKind::DotProd), (98, 99, vec![(0, 4)]));
    // BestFit: X: ½·60/128 + ½·(13/7)/8 = 0.234375 + 0.1160714 → 64; Y: ½·4/128 + ½·(5/7)/8 = 0.0602679 → 93.
    assert_eq!(choose(PolicyKind::BestFit), (64, 93, vec![(0, 4)]));
    // GpuPacking: X is in use; its least-free GPU that fits is GPU 2 (3 free, 42 %): 100 − 4 = 96;
    // Y is a free 1-GPU node: max(33 − 1, 1) = 32. X, GPU 2 (tightest), the only 2g start left there, 0.
    assert_eq!(choose(PolicyKind::GpuPacking), (96, 32, vec![(2, 0)]));
    // GpuClustering: X holds 2g among 3 kinds: band 2 (50) + 25·(8000 − 2142)/8000 = 18 → 68;
    // Y is empty: 25 + 25·7000/8000 = 21 → 46. X, and GPU 0 because it already hosts a 2g
    // (the tightest fit would be GPU 2), at its highest free 2g start, 2.
    assert_eq!(choose(PolicyKind::GpuClustering), (68, 46, vec![(0, 2)]));
    // FGD, distribution 2g 0.5, 4g 0.5 (4 CPUs each). F(X) = ½·3 slices (4g cannot use GPU 2) = 1500/7.
    // Placements on X: GPU 2 at 0 leaves GPU 2 one slice unusable by both: F = 1000/7, the least;
    // (GPU 0 at 2: 3000/7; GPU 0 at 0: 4500/7; GPU 1 at 4: 1500/7; GPU 1 at 2 or 0: 4000/7).
    // Score 100·σ(500/7/1000) = 51.8 → 51. Y: 2g at 4 keeps both usable, F stays 0 → 50.
    let s = 1000.0 / 7.0;
    assert!((fx - 1.5 * s).abs() < 1e-9 && fy == 0.0);
    assert_eq!(choose(PolicyKind::Fgd), (51, 50, vec![(2, 0)]));
    // Random: only legal placements, and all of them over many draws:
    // GPU 0 at 0 or 2, GPU 1 at 0, 2 or 4, GPU 2 at 0.
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..500 {
        let d = sl
            .devices(PolicyKind::Random, &x, &t, fx, &mut rng)
            .unwrap();
        seen.insert(d[0]);
    }
    let want: std::collections::BTreeSet<(usize, u8)> =
        [(0, 0), (0, 2), (1, 0), (1, 2), (1, 4), (2, 0)]
            .into_iter()
            .collect();
    assert_eq!(seen, want);
    // The lowest-start rule puts DotProd's instance at 0 instead.
    let low = MigSlicing {
        start: StartRule::Lowest,
        ..sl
    };
    assert_eq!(
        low.devices(PolicyKind::DotProd, &y, &t, fy, &mut rng),
        Some(vec![(0, 0)])
    );
    // A whole GPU goes on the lowest-indexed free GPU under every policy; two do not fit on X.
    let whole = task(&geo, "7g.80gb", 1);
    for p in PolicyKind::ALL {
        assert_eq!(
            sl.devices(p, &x, &whole, fx, &mut rng),
            Some(vec![(1, 0)]),
            "{p:?}"
        );
    }
    assert!(!x.fits(&geo, &MigTask { count: 2, ..whole }));
    // Not enough CPUs: Y cannot take a task of 9 CPUs.
    assert!(!y.fits(&geo, &task(&geo, "1g.10gb", 9)));
}

#[test]
fn task_checks_and_openb_style_names() {
    let geo = a100_80(LayoutRule::Published);
    let t = task(&geo, "3g.40gb", 1);
    assert_eq!(t.slices(&geo), 3);
    assert_eq!(t.describe(&geo), "3g.40gb");
    assert!(MigTask { count: 2, ..t }.check(&geo).is_err());
    let w = MigTask {
        count: 2,
        ..task(&geo, "7g.80gb", 1)
    };
    assert_eq!(
        (w.check(&geo), w.slices(&geo), w.describe(&geo).as_str()),
        (Ok(()), 14, "2x7g.80gb")
    );
    // The smallest profile with enough compute: 1 → 1g.10gb (not 1g.20gb), 5 → 7g.
    assert_eq!(geo.smallest_with(1), geo.profile_slot("1g.10gb").unwrap());
    assert_eq!(geo.smallest_with(4), geo.profile_slot("4g.40gb").unwrap());
    assert_eq!(geo.smallest_with(5), geo.whole_slot());
}
