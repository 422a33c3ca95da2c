//! Unit tests of `frag` (frag.rs).

use super::*;
use crate::model::{NodeSpec, NodeState};

fn tt(cpu: u64, num: u8, milli: u32, freq: f64) -> TypicalTask {
    TypicalTask {
        cpu_milli: cpu,
        num_gpu: num,
        gpu_milli: milli,
        gpu_spec: TypeMask::ANY,
        freq,
    }
}

/// Two GPUs with 1000 and 300 milli free, 8 CPUs free.
fn node() -> NodeState {
    let mut n = NodeState::new(&NodeSpec {
        name: "n".into(),
        cpu_milli: 8000,
        memory_mib: 1024,
        num_gpu: 2,
        gpu_model: 0,
    });
    n.gpu_left[1] = 300;
    n
}

fn dist() -> Vec<TypicalTask> {
    vec![
        tt(4000, 1, 500, 0.5),   // A: a half-GPU share task
        tt(1000, 0, 0, 0.25),    // B: CPU only
        tt(1000, 2, 1000, 0.25), // C: two whole GPUs
    ]
}

#[test]
fn hand_computed_node_fragmentation() {
    let n = node();
    // A fits (GPU 0 has 1000 ≥ 500, CPU 8000 ≥ 4000): only GPU 1's 300 is
    //   unusable → 0.5 · 300 = 150.
    // B needs no GPU: all 1300 idle count → 0.25 · 1300 = 325.
    // C needs two free GPUs, only one has ≥ 1000: all 1300 → 325.
    // F = 150 + 325 + 325 = 800.
    let f = node_frag(GpuShareView::from(&n), &dist());
    assert!((f - 800.0).abs() < 1e-9, "{f}");

    // With 3 CPUs free A no longer fits: it sees all 1300 → F = 1300.
    let mut m = n.clone();
    m.cpu_left = 3000;
    assert!((node_frag(GpuShareView::from(&m), &dist()) - 1300.0).abs() < 1e-9);

    // A node with no idle GPU has no fragment, whatever the distribution.
    let mut full = n.clone();
    full.gpu_left[0] = 0;
    full.gpu_left[1] = 0;
    assert_eq!(node_frag(GpuShareView::from(&full), &dist()), 0.0);

    // A task whose model constraint excludes the node sees all idle capacity.
    let mut d = dist();
    d[0].gpu_spec = TypeMask(0b10); // only model 1; the node is model 0
                                    // 0.5 · 1300 + 325 + 325 = 1300.
    assert!((node_frag(GpuShareView::from(&n), &d) - 1300.0).abs() < 1e-9);
}

#[test]
fn typical_tasks_keep_the_most_frequent_until_coverage() {
    let mk = |name: &str, cpu: u64, num: u8, milli: u32| TaskSpec {
        name: name.into(),
        cpu_milli: cpu,
        memory_mib: 1,
        num_gpu: num,
        gpu_milli: milli,
        gpu_spec: TypeMask::ANY,
    };
    // 6 × (1000, 1×500), 3 × (2000, 1×1000), 1 × (500, CPU only).
    let mut tasks = Vec::new();
    for i in 0..6 {
        tasks.push(mk(&format!("a{i}"), 1000, 1, 500));
    }
    for i in 0..3 {
        tasks.push(mk(&format!("b{i}"), 2000, 1, 1000));
    }
    tasks.push(mk("c", 500, 0, 0));
    // Coverage 0.8: 6 (60 %) < 8, 6 + 3 = 9 ≥ 8 → keep two, renormalised to 6/9 and 3/9.
    let d = typical_tasks(&tasks, 0.8);
    assert_eq!(d.len(), 2);
    assert_eq!((d[0].cpu_milli, d[0].gpu_milli), (1000, 500));
    assert!((d[0].freq - 6.0 / 9.0).abs() < 1e-12);
    assert!((d[1].freq - 3.0 / 9.0).abs() < 1e-12);
    // Coverage 1: all three, frequencies as counted.
    let all = typical_tasks(&tasks, 1.0);
    assert_eq!(all.len(), 3);
    assert!((all.iter().map(|t| t.freq).sum::<f64>() - 1.0).abs() < 1e-12);
}
