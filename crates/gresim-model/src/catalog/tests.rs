//! Unit tests of `catalog` (catalog.rs).

use super::*;

#[test]
fn catalog_holds_the_required_models() {
    for name in [
        "A100-SXM4-40GB",
        "A100-SXM4-80GB",
        "H100-SXM5-80GB",
        "H200-141GB",
        "V100-32GB",
        "L40S",
        "T4",
    ] {
        let id = model_by_name(name).unwrap_or_else(|| panic!("{name} missing"));
        let m = model(id);
        assert!(m.memory_mib > 0 && m.sm_count > 0, "{name}");
    }
    assert_eq!(model_by_name("h100"), model_by_name("H100-SXM5-80GB"));
    assert_eq!(model_by_name("B200"), None);
}

#[test]
fn mig_profiles_fit_the_slice_model() {
    for m in GPU_MODELS {
        for p in m.mig_profiles {
            assert!(
                p.compute_slices <= MIG_COMPUTE_SLICES,
                "{} {}",
                m.name,
                p.name
            );
            for &s in p.starts {
                assert!(
                    s + p.memory_slices <= MIG_MEMORY_SLICES,
                    "{} {}",
                    m.name,
                    p.name
                );
            }
            assert!(p.memory_mib < m.memory_mib);
        }
    }
    let a100 = model(model_by_name("A100-SXM4-40GB").unwrap());
    let p = a100.mig_profile("3g.20gb").unwrap();
    assert_eq!(
        (p.compute_slices, p.memory_slices, p.max_instances),
        (3, 4, 2)
    );
    assert_eq!(p.starts, &[0, 4]);
    assert!(model(model_by_name("T4").unwrap())
        .mig_profile("1g.5gb")
        .is_none());
}
