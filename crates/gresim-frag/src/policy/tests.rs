//! Unit tests of `policy` (policy.rs).

use super::*;
use crate::model::{NodeSpec, TypeMask};

fn node(cpu: u64, gpus: &[u32]) -> NodeState {
    let mut n = NodeState::new(&NodeSpec {
        name: "n".into(),
        cpu_milli: cpu,
        memory_mib: 1 << 20,
        num_gpu: gpus.len() as u8,
        gpu_model: 0,
    });
    n.gpu_left[..gpus.len()].copy_from_slice(gpus);
    n
}

fn shape(cpu: u64, num: u8, milli: u32) -> Shape {
    Shape {
        cpu_milli: cpu,
        memory_mib: 0,
        num_gpu: num,
        gpu_milli: milli,
        gpu_spec: TypeMask::ANY,
    }
}

#[test]
fn dot_prod_by_hand() {
    // Free (64 CPU, 1300 milli), request (32 CPU, 500 milli):
    // dot = (64/128)(32/128) + (1300/8000)(500/8000) = 0.125 + 0.01015625
    // score = 100 · (1 − 0.13515625 / 2) = 93.24 → 93.
    assert_eq!(
        dot_prod_score(&node(64_000, &[1000, 300]), &shape(32_000, 1, 500)),
        93
    );
    // Not enough CPU: 0.
    assert_eq!(
        dot_prod_score(&node(1_000, &[1000]), &shape(2_000, 1, 500)),
        0
    );
}

#[test]
fn best_fit_by_hand() {
    // Left after placing: CPU (64−32)/128 · ½ = 0.125, GPU (1300−500)/8000 · ½ = 0.05;
    // score = (1 − 0.175) · 100 = 82.5 → 82.
    assert_eq!(
        best_fit_score(&node(64_000, &[1000, 300]), &shape(32_000, 1, 500)),
        82
    );
    // A perfect fit scores 100.
    assert_eq!(
        best_fit_score(&node(4_000, &[500]), &shape(4_000, 1, 500)),
        100
    );
}

#[test]
fn gpu_clustering_by_hand() {
    let mut n = node(96_000, &[1000, 1000, 1000, 1000, 1000, 1000, 0, 0]);
    n.affinity[0] = 2; // two shared-GPU tasks already there
                       // Only shared tasks here: band 3 (75) + 25 · (8000 − 6000) / 8000 = 6.25 → 6: 81.
    assert_eq!(gpu_clustering_score(&n, &shape(1000, 1, 300)), 81);
    // A 1-GPU task is a different kind: band 0 → 6.
    assert_eq!(gpu_clustering_score(&n, &shape(1000, 1, 1000)), 6);
    // Mixed kinds including this one: band 2 → 50 + 6 = 56.
    n.affinity[1] = 1;
    assert_eq!(gpu_clustering_score(&n, &shape(1000, 1, 1000)), 56);
    // An empty 8-GPU node: band 1 → 25 + 0.
    assert_eq!(
        gpu_clustering_score(&node(96_000, &[1000; 8]), &shape(1000, 1, 300)),
        25
    );
    // CPU-only tasks score 0.
    assert_eq!(gpu_clustering_score(&n, &shape(1000, 0, 0)), 0);
}

#[test]
fn gpu_packing_by_hand() {
    // Free nodes: max(33 − free GPUs, free GPUs).
    assert_eq!(
        gpu_packing_score(&node(8000, &[1000; 8]), &shape(1, 1, 300)),
        25
    );
    assert_eq!(
        gpu_packing_score(&node(8000, &[1000; 2]), &shape(1, 1, 300)),
        31
    );
    // Share 300 on [1000, 400]: the 400 GPU is used, 400·100/1000 = 40 → 100 − 4 = 96.
    assert_eq!(
        gpu_packing_score(&node(8000, &[1000, 400]), &shape(1, 1, 300)),
        96
    );
    // Share 500 must open the free GPU: 50 − 1 = 49.
    assert_eq!(
        gpu_packing_score(&node(8000, &[1000, 400]), &shape(1, 1, 500)),
        49
    );
    // Two whole GPUs on a used node with three free: 50 − 2 = 48.
    assert_eq!(
        gpu_packing_score(&node(8000, &[1000, 1000, 1000, 10]), &shape(1, 2, 1000)),
        48
    );
    // CPU-only tasks score 0.
    assert_eq!(
        gpu_packing_score(&node(8000, &[1000, 400]), &shape(1, 0, 0)),
        0
    );
}

#[test]
fn fgd_by_hand() {
    // Distribution: A (4 CPU, ½ GPU) 0.5, B (CPU only) 0.25, C (2 whole GPUs) 0.25.
    let t = |cpu, num, milli, freq| TypicalTask {
        cpu_milli: cpu,
        num_gpu: num,
        gpu_milli: milli,
        gpu_spec: TypeMask::ANY,
        freq,
    };
    let dist = [
        t(4000, 1, 500, 0.5),
        t(1000, 0, 0, 0.25),
        t(1000, 2, 1000, 0.25),
    ];
    let n = node(8000, &[1000, 300]);
    let before = node_frag(GpuShareView::from(&n), &dist); // 800, see frag.rs
                                                           // Share task (1 CPU, 500) can only go on GPU 0 → [500, 300], 7 CPUs:
                                                           // A still fits (500 ≥ 500): 0.5 · 300 = 150; B, C: 0.25 · 800 each = 400.
                                                           // F after = 550, F drops 250 → 100 · σ(0.25) = 56.2 → 56 on device 0.
    assert_eq!(
        fgd_score_and_device(&n, &shape(1000, 1, 500), &dist, before),
        (56, Some(0))
    );
    // Share task of 200: GPU 0 → [800, 300]: A fits, 0.5·300 + 0.5·1100 = 700, F drops 100 → σ(0.1) = 52;
    // GPU 1 → [1000, 100]: 0.5·100 + 0.5·1100 = 600, F drops 200 → σ(0.2) = 54. GPU 1 wins.
    assert_eq!(
        fgd_score_and_device(&n, &shape(1000, 1, 200), &dist, before),
        (54, Some(1))
    );
    // A whole GPU takes GPU 0 → [0, 300]: A cannot fit: 0.5·300 + 0.5·300 = 300,
    // F drops 500 → 100 · σ(0.5) = 62.2 → 62.
    assert_eq!(
        fgd_score_and_device(&n, &shape(1000, 1, 1000), &dist, before).0,
        62
    );
    // Equal before and after (a task on a GPU-less node) → σ(0) = 50.
    assert_eq!(fgd_outcome_score(10.0, 10.0), 50);
}

#[test]
fn device_choice() {
    let n = node(8000, &[1000, 400, 600, 400]);
    // Tightest fit for 300: the first 400 (index 1).
    assert_eq!(tightest_fit_device(&n, &shape(1, 1, 300)), Some(1));
    // For 500: 600 (index 2).
    assert_eq!(tightest_fit_device(&n, &shape(1, 1, 500)), Some(2));
    assert_eq!(tightest_fit_device(&n, &shape(1, 1, 1000)), Some(0));
    assert_eq!(exclusive_devices(&n, &shape(1, 1, 1000)), Some(vec![0]));
    assert_eq!(exclusive_devices(&n, &shape(1, 2, 1000)), None);
}

#[test]
fn policy_names_round_trip() {
    for p in PolicyKind::ALL {
        assert_eq!(PolicyKind::parse(p.name()), Some(p));
        assert_eq!(PolicyKind::parse(p.upstream_label()), Some(p));
    }
    assert_eq!(PolicyKind::parse("FGD"), Some(PolicyKind::Fgd));
    assert_eq!(PolicyKind::parse("tetris"), None);
}
