//! Unit tests of `state` (state.rs).

use super::*;
use crate::catalog::model_by_name;
use crate::cluster::{GpuDevice, GpuType, Node};
use crate::ids::GpuTypeId;

fn one_node() -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").unwrap();
    let gpu = |i: u16| GpuDevice {
        ty: GpuTypeId(0),
        model,
        socket: Some(i / 2),
        phys: i as u8,
        mig: None,
    };
    Cluster::new(
        vec![Node {
            name: "gpu01".into(),
            sockets: 2,
            cores_per_socket: 4,
            threads_per_core: 2,
            memory_mib: 1000,
            features: vec![],
            weight: 1,
            gpus: (0..4).map(gpu).collect(),
            gpu_links: None,
            state: NodeAdminState::Up,
        }],
        vec![],
        vec![GpuType {
            name: "a100".into(),
            model,
            mig: None,
        }],
    )
}

fn alloc(cores: &[u32], mem: u64, gpus: u64) -> Allocation {
    let mut cs = CoreSet::default();
    for &c in cores {
        cs.insert(c);
    }
    Allocation {
        nodes: vec![NodeAlloc {
            node: NodeId(0),
            cores: cs,
            cpus: cores.len() as u32 * 2,
            mem_mib: mem,
            gpus,
            tasks: 1,
            share: None,
        }],
        exclusive: false,
        row_use: RowUse::NONE,
    }
}

#[test]
fn refuses_over_allocation_and_double_free() {
    let c = one_node();
    let mut s = ClusterState::new(&c);
    let a = alloc(&[0, 1], 600, 0b0011);
    s.allocate(&c, &a).unwrap();
    assert_eq!((s.alloc_gpus(), s.alloc_cpus()), (2, 4));
    // Same GPU, other cores.
    assert!(s.allocate(&c, &alloc(&[2], 10, 0b0010)).is_err());
    // Same core.
    assert!(s.allocate(&c, &alloc(&[1], 10, 0b0100)).is_err());
    // Too much memory.
    assert!(s.allocate(&c, &alloc(&[2], 401, 0b0100)).is_err());
    // A failed attempt changes nothing.
    assert_eq!(s.node(NodeId(0)).free_mem, 400);
    let b = alloc(&[2, 3], 400, 0b1100);
    s.allocate(&c, &b).unwrap();
    assert_eq!(s.node(NodeId(0)).free_gpus, 0);
    s.release(&c, &a).unwrap();
    assert!(s.release(&c, &a).is_err(), "double free must be refused");
    s.release(&c, &b).unwrap();
    assert_eq!(s.node(NodeId(0)).free_core_count(), 8);
    assert_eq!(
        (s.alloc_gpus(), s.alloc_cpus(), s.alloc_gpu_sevenths()),
        (0, 0, 0)
    );
}

#[test]
fn lent_cores_are_free_for_another_job_and_come_back_only_when_free() {
    let c = one_node();
    let mut s = ClusterState::new(&c);
    let a = alloc(&[0, 1, 2], 600, 0b0001);
    s.allocate(&c, &a).unwrap();
    let lend = alloc(&[1, 2], 0, 0).nodes[0].cores;
    // Only allocated cores can be lent: core 3 is free.
    let mut bad = lend;
    bad.insert(3);
    assert!(s.lend_cores(&c, NodeId(0), &bad).is_err());
    assert_eq!(
        s.node(NodeId(0)).free_core_count(),
        5,
        "a refusal changes nothing"
    );
    s.lend_cores(&c, NodeId(0), &lend).unwrap();
    assert_eq!(s.node(NodeId(0)).free_core_count(), 7);
    assert_eq!(
        s.alloc_cpus(),
        2,
        "two threads per core: cores 1 and 2 lent"
    );
    // Memory and GPUs stay with the lender.
    assert_eq!(s.node(NodeId(0)).free_mem, 400);
    assert_eq!(s.node(NodeId(0)).free_gpus, 0b1110);
    // The borrower takes them; they cannot come back while it holds them.
    let b = alloc(&[1, 2], 100, 0);
    s.allocate(&c, &b).unwrap();
    assert!(s.reclaim_cores(&c, NodeId(0), &lend).is_err());
    s.release(&c, &b).unwrap();
    s.reclaim_cores(&c, NodeId(0), &lend).unwrap();
    assert_eq!(s.alloc_cpus(), 6);
    // The lender's whole allocation is its own again.
    s.release(&c, &a).unwrap();
    assert_eq!(s.node(NodeId(0)).free_core_count(), 8);
    assert_eq!(s.alloc_cpus(), 0);
}

#[test]
fn exclusive_needs_an_empty_node() {
    let c = one_node();
    let mut s = ClusterState::new(&c);
    s.allocate(&c, &alloc(&[0], 1, 0)).unwrap();
    let mut ex = alloc(&[1], 1, 0b1);
    ex.exclusive = true;
    assert!(s.allocate(&c, &ex).is_err());
}

#[test]
fn coreset_iterates_in_order() {
    let mut s = CoreSet::default();
    for c in [200, 3, 64, 0] {
        s.insert(c);
    }
    assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 3, 64, 200]);
    assert_eq!(s.count_range(0, 64), 2);
    assert_eq!(s.count_range(3, 65), 2);
    assert_eq!(s.count_range(4, 200), 1);
    assert_eq!(s.count_range(0, 256), 4);
    assert_eq!(s.highest_in(0, 256), Some(200));
    assert_eq!(s.highest_in(0, 200), Some(64));
    assert_eq!(s.highest_in(1, 3), None);
    assert_eq!(s.highest_in(0, 64), Some(3));
    assert_eq!(CoreSet::first(70).count(), 70);
    assert!(CoreSet::first(70).contains(69) && !CoreSet::first(70).contains(70));
    assert_eq!(CoreSet::first(256).count(), 256);
    let mut t = CoreSet::first(130);
    assert_eq!(t.clear_range(60, 70), 10);
    assert_eq!(t.count(), 120);
    assert!(t.contains(59) && !t.contains(60) && !t.contains(69) && t.contains(70));
    assert_eq!(s.count(), 4);
    assert_eq!(gpu_indices(0b1010_0001).collect::<Vec<_>>(), vec![0, 5, 7]);
}

fn coreset_of(words: [u64; 4]) -> CoreSet {
    let mut s = CoreSet::default();
    for c in 0..256u32 {
        if words[c as usize / 64] >> (c % 64) & 1 == 1 {
            s.insert(c);
        }
    }
    s
}

proptest::proptest! {
    /// `next_from` and `add_lowest` answer as walking the cores one by one.
    #[test]
    fn coreset_bit_scans_agree_with_a_walk(
        a in proptest::array::uniform4(proptest::num::u64::ANY),
        b in proptest::array::uniform4(proptest::num::u64::ANY),
        sparse in 0u32..4,
        c in 0u32..300,
        n in 0u32..300,
    ) {
        // Sparse sets too: most random words are half full.
        let thin = |w: [u64; 4]| w.map(|x| (0..sparse).fold(x, |x, k| x & x.rotate_left(7 * k + 3)));
        let (s, src) = (coreset_of(thin(a)), coreset_of(thin(b)));
        let walked = (c..256).find(|&x| s.contains(x));
        proptest::prop_assert_eq!(s.next_from(c), walked);
        let mut naive = s;
        let mut added = 0;
        for x in src.iter() {
            if added == n {
                break;
            }
            if !naive.contains(x) {
                naive.insert(x);
                added += 1;
            }
        }
        let mut fast = s;
        proptest::prop_assert_eq!(fast.add_lowest(&src, n), added);
        proptest::prop_assert!(fast == naive);
    }
}

/// cons_common's node states: a ONE_ROW job's node keeps NODE_CR_AVAILABLE
/// jobs off; a node where a partition with rows has jobs keeps ONE_ROW jobs
/// of partitions without rows off; releasing gives both back; untracked
/// allocations count nowhere.
#[test]
fn node_states_count_one_row_and_sharing_jobs() {
    let c = one_node();
    let mut s = ClusterState::new(&c);
    let avail = RowUse::new(true, true);
    let one_row_sharing = RowUse::new(false, true);
    let one_row = RowUse::new(false, false);
    let mut a = alloc(&[0], 10, 0);
    a.row_use = one_row;
    s.allocate(&c, &a).unwrap();
    let u = *s.node(NodeId(0));
    assert_eq!((u.one_row, u.shared), (1, 0));
    assert!(avail.excluded_by(&u));
    assert!(!one_row.excluded_by(&u) && !one_row_sharing.excluded_by(&u));
    s.release(&c, &a).unwrap();
    let mut b = alloc(&[1], 10, 0);
    b.row_use = avail;
    s.allocate(&c, &b).unwrap();
    let u = *s.node(NodeId(0));
    assert_eq!((u.one_row, u.shared), (0, 1));
    assert!(
        one_row.excluded_by(&u),
        "a partition with rows holds the node"
    );
    assert!(!avail.excluded_by(&u) && !one_row_sharing.excluded_by(&u));
    s.release(&c, &b).unwrap();
    let u = *s.node(NodeId(0));
    assert_eq!((u.one_row, u.shared, u.jobs), (0, 0, 0));
    s.allocate(&c, &alloc(&[2], 10, 0)).unwrap();
    let u = *s.node(NodeId(0));
    assert_eq!((u.one_row, u.shared, u.jobs), (0, 0, 1));
    assert!(!RowUse::NONE.excluded_by(&u) && !avail.excluded_by(&u));
}

/// The node states fit in `NodeUsage`'s padding: the struct, copied on the
/// scheduler's hot path, stays 56 bytes.
#[test]
fn node_usage_stays_56_bytes() {
    assert_eq!(std::mem::size_of::<NodeUsage>(), 56);
}

/// A state's `Debug` without its change log's id (two clones of one state
/// differ only there).
fn without_log_id(s: &ClusterState) -> String {
    let d = format!("{s:?}");
    let Some(at) = d.find("uid: ") else {
        return d;
    };
    let rest = &d[at + 5..];
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    format!("{}{}", &d[..at], &rest[digits..])
}

#[test]
fn a_state_copied_into_another_is_its_clone() {
    let c = one_node();
    let a_job = alloc(&[0, 1], 600, 0b0011);
    let mut a = ClusterState::new(&c);
    a.allocate(&c, &a_job).unwrap();
    // Another state, with other usage, takes `a`'s.
    let mut b = ClusterState::new(&c);
    b.allocate(&c, &alloc(&[2], 100, 0b1100)).unwrap();
    b.clone_from(&a);
    let mut clone = a.clone();
    assert_eq!(without_log_id(&b), without_log_id(&clone));
    assert_ne!(without_log_id(&b), without_log_id(&ClusterState::new(&c)));
    // A copy, like a clone, keeps no change log.
    assert!(a.fit_index().tracked());
    assert!(!b.fit_index().tracked() && !clone.fit_index().tracked());
    // And both go on alike.
    b.release(&c, &a_job).unwrap();
    clone.release(&c, &a_job).unwrap();
    assert_eq!(without_log_id(&b), without_log_id(&clone));
    assert_eq!((b.alloc_gpus(), b.alloc_cpus()), (0, 0));
}
