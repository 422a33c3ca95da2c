//! `aligned` runs beside `slurm` on scenarios/topology_4node.json through
//! the library: every job ends as under Slurm, the placement is asked and
//! answers, and on NVLink pairs it places more 2- and 4-GPU jobs ideally and
//! finishes them sooner than Slurm's lowest-index choice.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use gresim::{PolicyKind, Simulation};
use gresim_example_placement::Aligned;

#[test]
fn aligned_beats_lowest_index_on_nvlink_pairs() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/topology_4node.json");
    let scenario = gresim::load_runnable_scenario(&path).unwrap();
    let slurm = Simulation::new(&scenario)
        .policy(PolicyKind::Slurm)
        .run()
        .unwrap()
        .summary();
    let a = Arc::new(Aligned::default());
    let out = Simulation::new(&scenario)
        .custom_policy(Aligned::policy(a.clone()))
        .run()
        .unwrap();
    let aligned = out.summary();
    assert_eq!(aligned.policy, "aligned");
    assert_eq!(aligned.by_state, slurm.by_state);
    let (asked, placed) = (
        a.asked.load(Ordering::Relaxed),
        a.aligned.load(Ordering::Relaxed),
    );
    assert!(placed > 0 && placed <= asked, "{placed} of {asked}");
    let ideal = |s: &gresim::Summary| s.placement.as_ref().unwrap().share_placed_ideally;
    assert!(
        ideal(&aligned) > ideal(&slurm),
        "{} vs {}",
        ideal(&aligned),
        ideal(&slurm)
    );
    assert!(
        aligned.jct.mean < slurm.jct.mean,
        "{} vs {}",
        aligned.jct.mean,
        slurm.jct.mean
    );
    // Every 2-GPU job on one node that aligned placed sits on GPUs 0-1 or 2-3.
    let pairs = out
        .records()
        .into_iter()
        .filter(|r| r.gpu_count == 2 && !r.gpus.contains(';'))
        .filter(|r| r.gpus.ends_with(":0-1") || r.gpus.ends_with(":2-3"))
        .count() as u64;
    assert!(pairs > 0);
}
