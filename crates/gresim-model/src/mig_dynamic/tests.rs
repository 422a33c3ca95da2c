//! Unit tests of `mig_dynamic` (mig_dynamic.rs).

use super::*;
use crate::catalog::{model, model_by_name};

fn inst(m: &'static GpuModel, name: &str, start: u8) -> MigInstance {
    MigInstance {
        profile: m.mig_profile(name).unwrap(),
        start,
    }
}

#[test]
fn layouts_are_checked() {
    let m = model(model_by_name("A100-SXM4-80GB").unwrap());
    let ok = MigLayout(vec![
        inst(m, "3g.40gb", 0),
        inst(m, "2g.20gb", 4),
        inst(m, "1g.10gb", 6),
    ]);
    assert_eq!(check_layout(m, &ok), Ok(()));
    // 3g.40gb cannot start at slice 2.
    let bad_start = MigLayout(vec![inst(m, "3g.40gb", 2)]);
    assert!(check_layout(m, &bad_start).unwrap_err().contains("3g.40gb"));
    // Overlapping memory slices.
    let overlap = MigLayout(vec![inst(m, "3g.40gb", 0), inst(m, "2g.20gb", 2)]);
    assert!(check_layout(m, &overlap).unwrap_err().contains("overlaps"));
    // Out of start order.
    let order = MigLayout(vec![inst(m, "2g.20gb", 4), inst(m, "3g.40gb", 0)]);
    assert!(check_layout(m, &order).unwrap_err().contains("order"));
    // Four 1g.20gb fill the memory slices.
    let many = MigLayout((0..4).map(|s| inst(m, "1g.20gb", 2 * s)).collect());
    assert_eq!(check_layout(m, &many), Ok(()));
    assert!(is_published(m, &ok) && is_published(m, &many));
    // 4g + 3g fits the slice model but is not published.
    let four_three = MigLayout(vec![inst(m, "4g.40gb", 0), inst(m, "3g.40gb", 4)]);
    assert_eq!(check_layout(m, &four_three), Ok(()));
    assert!(!is_published(m, &four_three));
    // A profile of another model.
    let a40 = model(model_by_name("A100-SXM4-40GB").unwrap());
    let foreign = MigLayout(vec![inst(a40, "1g.5gb", 0)]);
    assert!(check_layout(m, &foreign).is_err());
    // No MIG on a T4.
    let t4 = model(model_by_name("T4").unwrap());
    assert!(check_layout(t4, &ok).is_err());
    assert!(check_layout(t4, &MigLayout::whole()).is_ok());
}

#[test]
fn every_enumerated_layout_is_legal_and_distinct() {
    for name in [
        "A100-SXM4-40GB",
        "A100-SXM4-80GB",
        "H100-SXM5-80GB",
        "H200-141GB",
    ] {
        let m = model(model_by_name(name).unwrap());
        let all = legal_layouts(m);
        assert!(all[0].is_whole());
        let mut keys = std::collections::BTreeSet::new();
        for l in &all {
            assert_eq!(check_layout(m, l), Ok(()), "{name} {}", l.describe());
            assert!(l.devices() <= SLOTS_PER_GPU);
            assert!(keys.insert(l.describe()), "{name}: {} twice", l.describe());
        }
        // Seven 1g slices, 3g+3g and 4g+3g are all there.
        let small = &m.mig_profiles[0];
        let seven = [small.name; 7].join("+");
        assert!(keys.contains(&seven), "{name}: {seven}");
        let g3 = m
            .mig_profiles
            .iter()
            .find(|p| p.name.starts_with("3g"))
            .unwrap();
        assert!(keys.contains(&format!("{0}+{0}", g3.name)), "{name}");
        let g4 = m
            .mig_profiles
            .iter()
            .find(|p| p.name.starts_with("4g"))
            .unwrap();
        assert!(keys.contains(&format!("{}+{}", g4.name, g3.name)), "{name}");
    }
    assert!(legal_layouts(model(model_by_name("T4").unwrap())).is_empty());
}

#[test]
fn offline_masks_follow_layouts_and_reconfigurations() {
    let mid = model_by_name("A100-SXM4-80GB").unwrap();
    let m = model(mid);
    let g = DynGpu {
        node: NodeId(0),
        phys: 1,
        model: mid,
        first_slot: 7,
        whole_ty: GpuTypeId(0),
        unconfigured_ty: GpuTypeId(1),
        profile_ty: (0..m.mig_profiles.len() as u16)
            .map(|i| GpuTypeId(2 + i))
            .collect(),
        layout: MigLayout::whole(),
        pending: None,
    };
    let mut d = DynamicMig::new(1, 30, vec![g]);
    // Slot 7 holds the whole GPU; 8..=13 are offline.
    assert_eq!(d.offline(NodeId(0)), 0b11_1111 << 8);
    let to = MigLayout(vec![inst(m, "4g.40gb", 0), inst(m, "3g.40gb", 4)]);
    assert_eq!(d.begin(0, to.clone(), 30), Ok(1 << 7));
    assert_eq!(d.offline(NodeId(0)), 0b111_1111 << 7);
    assert!(d.begin(0, to.clone(), 30).is_err(), "one change at a time");
    d.finish(0, 0, 30).unwrap();
    assert_eq!(d.offline(NodeId(0)), 0b1_1111 << 9);
    assert_eq!(d.gpus[0].layout, to);
    assert_eq!(d.log.len(), 1);
    assert_eq!((d.log[0].start, d.log[0].ready), (0, 30));
    // An illegal layout is refused and changes nothing.
    let bad = MigLayout(vec![inst(m, "4g.40gb", 4)]);
    assert!(d.begin(0, bad, 60).is_err());
    assert!(d.gpus[0].pending.is_none());
}
