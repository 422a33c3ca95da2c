//! Unit tests of `mig` (mig.rs).

use super::*;
use crate::catalog::{model, model_by_name, GPU_MODELS};

fn m(name: &str) -> &'static GpuModel {
    model(model_by_name(name).unwrap())
}

const MODELS: [&str; 4] = [
    "A100-SXM4-40GB",
    "A100-SXM4-80GB",
    "H100-SXM5-80GB",
    "H200-141GB",
];

/// Profile names of a model by slot: [1g, 1g double memory, 2g, 3g, 4g, 7g].
fn names(model: &GpuModel) -> [&'static str; 6] {
    let p = model.mig_profiles;
    [
        p[0].name, p[1].name, p[2].name, p[3].name, p[4].name, p[5].name,
    ]
}

#[test]
fn published_combinations_are_legal() {
    for name in MODELS {
        let model = m(name);
        assert_eq!(model.mig_published.len(), 13, "{name}");
        for combo in published_layouts(model) {
            let placed = place_layout(model, &combo)
                .unwrap_or_else(|e| panic!("{name}: published {combo:?} illegal: {e}"));
            check_placement(model, &placed).unwrap();
            assert!(is_published(model, combo.iter().copied()));
        }
    }
    for g in GPU_MODELS {
        if g.mig_profiles.is_empty() {
            assert!(g.mig_published.is_empty());
        } else {
            for c in g.mig_published {
                assert_eq!(c.len(), g.mig_profiles.len(), "{}", g.name);
            }
        }
    }
}

#[test]
fn profile_slots_have_the_same_shape_on_every_model() {
    // MIG_PUBLISHED_7SLICE counts by slot: the slots must mean the same
    // geometry on every model that uses it.
    let shape = |p: &MigProfile| (p.compute_slices, p.memory_slices, p.max_instances, p.starts);
    let a = m("A100-SXM4-40GB");
    for name in MODELS {
        let b = m(name);
        for (x, y) in a.mig_profiles.iter().zip(b.mig_profiles) {
            assert_eq!(shape(x), shape(y), "{name} {}", y.name);
        }
    }
}

/// Valid layouts, published and not, and invalid ones for each model.
#[test]
fn layouts_of_each_model() {
    for name in MODELS {
        let model = m(name);
        let [g1, g1m, g2, g3, g4, g7] = names(model);
        let class = |l: &[&str]| classify_layout(model, l).map(|(_, c)| c);
        // Published: full combinations and their parts.
        for l in [
            vec![g7],
            vec![g4, g2, g1],
            vec![g3, g3],
            vec![g3, g2, g1, g1],
            vec![g2, g2, g2, g1],
            vec![g1, g1, g1, g1, g1, g1, g1],
            vec![g1m, g1m, g1m, g1m],
            vec![g3],
            vec![g4, g1],
            vec![g2, g1, g1],
        ] {
            assert_eq!(class(&l), Ok(LayoutClass::Published), "{name} {l:?}");
        }
        // Legal by the slice model, not in NVIDIA's list.
        for l in [
            vec![g4, g3],
            vec![g3, g1, g1, g1, g1],
            vec![g1m, g3],
            vec![g1m, g1m, g2],
        ] {
            assert_eq!(class(&l), Ok(LayoutClass::Unpublished), "{name} {l:?}");
        }
        // Illegal: each message names the model, and the profile where one is at fault.
        let err = |l: &[&str]| classify_layout(model, l).unwrap_err();
        let e = err(&[g3, g3, g3]);
        assert!(e.contains(g3) && e.contains(model.name), "{e}");
        let e = err(&[g4, g4]);
        assert!(e.contains(&format!("at most 1 instance(s) of {g4}")), "{e}");
        let e = err(&[g7, g1]);
        assert!(
            e.contains("more than 7 compute slices") && e.contains(g1),
            "{e}"
        );
        let e = err(&[g3, g3, g1]);
        assert!(e.contains("overlap") && e.contains(model.name), "{e}");
        let e = err(&[g4, g1m, g1m, g1]);
        assert!(e.contains("overlap"), "{e}");
        let e = err(&["9g.1tb"]);
        assert!(
            e.contains("unknown MIG profile '9g.1tb'") && e.contains(model.name),
            "{e}"
        );
        // Placement where the starts are given.
        let p = |n: &str| model.mig_profile(n).unwrap();
        let at = |n: &str, s: u8| MigInstance {
            profile: p(n),
            start: s,
        };
        assert_eq!(check_placement(model, &[at(g3, 0), at(g3, 4)]), Ok(()));
        let e = check_placement(model, &[at(g3, 2)]).unwrap_err();
        assert!(
            e.contains(&format!("{g3} cannot start at memory slice 2")) && e.contains(model.name),
            "{e}"
        );
        let e = check_placement(model, &[at(g2, 0), at(g1, 1)]).unwrap_err();
        assert!(
            e.contains(&format!("{g1} at memory slice 1 overlaps")),
            "{e}"
        );
        let e = check_placement(model, &[at(g1m, 6), at(g1, 7)]).unwrap_err();
        assert!(e.contains("cannot start at memory slice 7"), "{e}");
    }
    let t4 = m("T4");
    assert_eq!(
        classify_layout(t4, &["1g.5gb"]).unwrap_err(),
        "T4 does not support MIG"
    );
    assert!(!is_published(t4, [&m("A100-SXM4-40GB").mig_profiles[0]]));
}

#[test]
fn published_check_takes_any_order_and_counts() {
    let a = m("A100-SXM4-40GB");
    let p = |n: &str| a.mig_profile(n).unwrap();
    assert!(is_published(
        a,
        [p("1g.5gb"), p("3g.20gb"), p("2g.10gb"), p("1g.5gb")]
    ));
    assert!(!is_published(
        a,
        [
            p("1g.5gb"),
            p("3g.20gb"),
            p("1g.5gb"),
            p("1g.5gb"),
            p("1g.5gb")
        ]
    ));
    // The 80 GB profiles are not the 40 GB model's.
    let h = m("H100-SXM5-80GB");
    assert!(!is_published(a, [&h.mig_profiles[3]]));
    assert!(is_published(a, std::iter::empty()));
    assert_eq!(describe([p("4g.20gb"), p("3g.20gb")]), "4g.20gb+3g.20gb");
}
