//! Unit tests of `failures` (failures.rs).

use super::*;

#[test]
fn gamma_matches_known_values() {
    assert!((gamma(1.0) - 1.0).abs() < 1e-12);
    assert!((gamma(5.0) - 24.0).abs() < 1e-9);
    assert!((gamma(0.5) - std::f64::consts::PI.sqrt()).abs() < 1e-12);
    assert!((gamma(1.5) - 0.886_226_925_452_758).abs() < 1e-12);
}

fn model(units: Vec<(Vec<u32>, Dist, Dist)>, nodes: usize) -> FailureModel {
    FailureModel {
        units: units
            .into_iter()
            .enumerate()
            .map(|(i, (n, m, r))| Unit {
                name: format!("u{i}"),
                nodes: n.into_iter().map(NodeId).collect(),
                mtbf: m,
                repair: r,
                stream: i as u64,
            })
            .collect::<Vec<_>>()
            .into(),
        seed: Some(3),
        start: 0,
        until: Some(10_000_000),
        nodes,
    }
}

#[test]
fn sample_means_follow_the_distributions() {
    let exp = Dist::Exponential(Exp::new(1.0 / 3600.0).unwrap());
    let k = 0.7;
    let wb = Dist::Weibull(Weibull::new(3600.0 / gamma(1.0 + 1.0 / k), k).unwrap());
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for d in [exp, wb] {
        let n = 20_000;
        let m: f64 = (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((m - 3600.0).abs() < 3600.0 * 0.05, "{d:?}: mean {m}");
    }
}

#[test]
fn stream_is_deterministic_sorted_and_balanced() {
    let exp = |h: f64| Dist::Exponential(Exp::new(1.0 / (h * 3600.0)).unwrap());
    let m = model(
        vec![
            (vec![0], exp(10.0), exp(1.0)),
            (vec![1], exp(10.0), exp(1.0)),
            (vec![0, 1, 2], exp(30.0), Dist::Fixed(7200.0)),
        ],
        3,
    );
    let a: Vec<TimedAction> = m.stream(0).collect();
    let b: Vec<TimedAction> = m.stream(99).collect();
    assert_eq!(a, b, "an explicit seed ignores the run's seed");
    assert!(a.len() > 100, "{} actions", a.len());
    let mut down = [false; 3];
    let mut prev = (0, 0u8);
    for x in &a {
        let (nodes, fail) = match &x.action {
            Action::NodeFail(n) => (n, true),
            Action::NodeRepair(n) => (n, false),
            other => panic!("{other:?}"),
        };
        let key = (x.at, u8::from(!fail));
        assert!(key >= prev, "out of order: {key:?} after {prev:?}");
        prev = key;
        for n in nodes {
            assert_ne!(down[n.idx()], fail, "node {n:?} at {}", x.at);
            down[n.idx()] = fail;
        }
    }
    assert_eq!(down, [false; 3], "every failure is repaired");
    // A node down with its rack only comes back when both are repaired:
    // there were overlaps, so some group repairs changed fewer nodes.
    assert!(a
        .iter()
        .any(|x| matches!(&x.action, Action::NodeFail(n) if n.len() == 3)));
}
