//! Unit tests of `fit_tree` (fit_tree.rs).

use super::super::Quick;
use super::super::{job_test_with, JobCtx, SelectCache};
use super::{with_tree, Tree};
use crate::select::{Skip, View};
use crate::SchedParams;
use gresim_model::catalog::model_by_name;
use gresim_model::job::{GpuReq, JobRequest, MemReq};
use gresim_model::{
    Allocation, Cluster, ClusterState, GpuDevice, GpuType, GpuTypeId, Node, NodeAdminState, NodeId,
    PartId, Partition,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Node `i` of a mixed cluster: `shape` picks weight, sockets, cores,
/// memory and GPU count.
fn node(i: usize, shape: u8) -> Node {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    let ngpus = [0usize, 2, 4, 8][usize::from(shape % 4)];
    let sockets = 1 + u16::from(shape / 4 % 2);
    Node {
        name: format!("n{i:03}"),
        sockets,
        cores_per_socket: [4, 8][usize::from(shape / 8 % 2)],
        threads_per_core: 1,
        memory_mib: [32_000, 64_000][usize::from(shape / 16 % 2)],
        features: vec![],
        weight: 1 + u32::from(shape / 32 % 2),
        gpus: (0..ngpus)
            .map(|g| GpuDevice {
                ty: GpuTypeId(0),
                model,
                socket: Some((g * usize::from(sockets) / ngpus.max(1)) as u16),
                phys: g as u8,
                mig: None,
            })
            .collect(),
        gpu_links: None,
        state: NodeAdminState::Up,
    }
}

/// Two partitions: every node, and the nodes `members` marks.
fn cluster(shapes: &[u8], members: u64) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").expect("known model");
    let n = shapes.len();
    let nodes = shapes
        .iter()
        .enumerate()
        .map(|(i, &s)| node(i, s))
        .collect();
    let all = (0..n).map(NodeId::from_idx).collect();
    let some = (0..n)
        .filter(|i| members >> (i % 64) & 1 == 1)
        .map(NodeId::from_idx)
        .collect();
    Cluster::new(
        nodes,
        vec![
            Partition {
                default: true,
                ..Partition::new("all", all)
            },
            Partition::new("some", some),
        ],
        vec![GpuType {
            name: "a100".into(),
            model,
            mig: None,
        }],
    )
}

/// A request drawn from `x`: one node most of the time (the tree's
/// case), sometimes several, with the fields the selection reads.
fn request(x: u64) -> JobRequest {
    let nodes = [1, 1, 1, 1, 2, 3][(x % 6) as usize];
    let gpus = [0, 1, 1, 2, 3, 4, 8][((x / 6) % 7) as usize];
    JobRequest {
        min_nodes: nodes,
        max_nodes: if x / 42 % 5 == 0 { nodes + 1 } else { nodes },
        max_nodes_open: x / 210 % 7 == 0,
        ntasks: (x / 1470 % 4 == 0).then_some(nodes * 2),
        cpus_per_task: 1 + (x / 5880 % 3 == 0) as u32,
        cpus_per_gpu: (gpus > 0 && x / 17_640 % 3 == 0).then_some(2),
        mem: match x / 52_920 % 5 {
            0 => MemReq::PerNode(8_000),
            1 if gpus > 0 => MemReq::PerGpu(6_000),
            2 => MemReq::PerCpu(1_000),
            3 => MemReq::WholeNode,
            _ => MemReq::Default,
        },
        gpus_per_node: if gpus > 0 {
            vec![GpuReq {
                ty: None,
                count: gpus,
            }]
        } else {
            vec![]
        },
        exclusive: x / 264_600 % 13 == 0,
        ..JobRequest::default()
    }
}

fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// On random clusters, partitions and usages (nodes filled, drained,
    /// taken down and brought back), the selection with the state's
    /// index and the per-shape trees gives exactly the allocation of the
    /// full scan over every node, with and without nodes to avoid.
    #[test]
    fn indexed_selection_equals_full_scan(
        shapes in proptest::collection::vec(any::<u8>(), 1..48),
        members in any::<u64>(),
        seed in 1u64..u64::MAX,
    ) {
        // One cache for the whole case, as a policy keeps it: the trees
        // are brought up to date from the state's change log.
        let mut cache = SelectCache::default();
        let c = cluster(&shapes, members);
        let p = SchedParams {
            def_mem_per_cpu: Some(1_000),
            ..SchedParams::default()
        };
        let n = shapes.len();
        let mut s = ClusterState::new(&c);
        let mut running: Vec<Allocation> = Vec::new();
        let mut x = seed;
        let (mut tree_fits, mut fails) = (0, 0);
        for _ in 0..300 {
            let r = next(&mut x);
            if r % 4 == 0 && !running.is_empty() {
                let a = running.swap_remove((r as usize / 4) % running.len());
                s.release(&c, &a).expect("allocated");
                continue;
            }
            if r % 29 == 1 {
                let id = NodeId::from_idx((r as usize / 29) % n);
                let st = [NodeAdminState::Up, NodeAdminState::Down, NodeAdminState::Drain]
                    [(r / 7 % 3) as usize];
                s.set_admin(id, st);
                continue;
            }
            let req = request(next(&mut x));
            let part = PartId::from_idx((r % 3 == 2) as usize);
            let avoid: Option<Vec<bool>> = (r % 5 == 3)
                .then(|| (0..n).map(|i| (r >> (i % 60)) & 1 == 1 && i % 3 == 0).collect());
            // Sometimes on a clone (not tracked: no tree).
            let copy = (r % 7 == 4).then(|| s.clone());
            let avoid_bits = avoid.as_ref().map(|a: &Vec<bool>| {
                let mut b = vec![0u64; n.div_ceil(64)];
                for (i, _) in a.iter().enumerate().filter(|x| *x.1) {
                    b[i / 64] |= 1 << (i % 64);
                }
                b
            });
            let mut test = |fast: bool| {
                // The skipped nodes as flags or, on odd draws, as a bitmap.
                let skip = match (avoid.as_deref(), &avoid_bits) {
                    (Some(_), Some(b)) if r % 2 == 1 => Some(Skip::Bits(b)),
                    (a, _) => a.map(Skip::Flags),
                };
                let view = View::Now(copy.as_ref().unwrap_or(&s), skip);
                job_test_with(&c, &p, &req, part, view, &mut cache, fast)
            };
            let (fast, full) = (test(true), test(false));
            prop_assert_eq!(&fast, &full, "request {:?} in {:?}", req, part);
            match fast {
                Some(a) => {
                    if avoid.is_none() && req.min_nodes == 1 {
                        tree_fits += 1;
                    }
                    s.allocate(&c, &a).expect("free");
                    running.push(a);
                }
                None => fails += 1,
            }
        }
        // Both outcomes, and the tree's case, were exercised.
        prop_assert!(tree_fits > 0 || fails > 250, "tree fits {}, fails {}", tree_fits, fails);
    }
}

/// Runs random selections, releases and node state changes on the cluster
/// of `shapes` (partition "some" of `members`), and after each compares the
/// tree of a random shape, brought up to date from the change log, with one
/// built afresh from the same state.
fn check_kept_tree(shapes: &[u8], members: u64, seed: u64) -> Result<(), TestCaseError> {
    let mut cache = SelectCache::default();
    let c = cluster(shapes, members);
    let p = SchedParams::default();
    let n = shapes.len();
    let mut s = ClusterState::new(&c);
    let mut running: Vec<Allocation> = Vec::new();
    let mut x = seed;
    for _ in 0..120 {
        let r = next(&mut x);
        if r % 3 == 0 && !running.is_empty() {
            let a = running.swap_remove((r as usize / 3) % running.len());
            s.release(&c, &a).expect("allocated");
        } else if r % 17 == 1 {
            let id = NodeId::from_idx((r as usize / 17) % n);
            let st = [
                NodeAdminState::Up,
                NodeAdminState::Down,
                NodeAdminState::Drain,
            ][(r / 7 % 3) as usize];
            s.set_admin(id, st);
        } else {
            let req = request(next(&mut x));
            let part = PartId::from_idx((r % 5 == 2) as usize);
            if let Some(a) =
                job_test_with(&c, &p, &req, part, View::Now(&s, None), &mut cache, true)
            {
                s.allocate(&c, &a).expect("free");
                running.push(a);
            }
        }
        // The tree of a random shape, brought up to date, against one
        // built afresh.
        let req = request(next(&mut x));
        let j = JobCtx::new(&c, &p, &req);
        let part = PartId::from_idx((r % 4 == 3) as usize);
        let SelectCache { trees, eval, .. } = &mut cache;
        if with_tree(&j, &s, part, trees, eval, |_| Some(())).is_some() {
            let shape = eval.shape_id(&j).expect("a shape");
            let kept = trees
                .iter_mut()
                .find(|t| t.shape == shape && t.part == part)
                .expect("the tree just used");
            let mut fresh = Tree::new(&c, part, shape);
            fresh.rebuild(&j, &Quick::of(&j), eval, &s);
            prop_assert_eq!(&kept.keys, &fresh.keys);
            prop_assert_eq!(&kept.starts, &fresh.starts);
            prop_assert_eq!(&kept.gaps, &fresh.gaps);
            prop_assert_eq!(&kept.tops, &fresh.tops);
            // Each set's best fit, through the blocks kept (some
            // stale), the fresh ones, and position by position.
            let mut sets = Vec::new();
            fresh.sets(&mut sets);
            for r in sets {
                let (a, b) = (usize::from(r.start), usize::from(r.end));
                let scan = (a..=b)
                    .min_by_key(|&k| (kept.avail(k), k))
                    .expect("a set has a node");
                prop_assert_eq!(kept.best_fit(a, b), scan);
                prop_assert_eq!(fresh.best_fit(a, b), scan);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A tree brought up to date from the change log, node by node (sets
    /// split, joined, started and dropped), is exactly the tree built
    /// afresh from the same state: the same keys, set starts, gaps and
    /// minimum tree, and each set's best fit that of a scan of its nodes,
    /// on random clusters and usages (nodes filled, drained, taken down and
    /// brought back).
    #[test]
    fn kept_tree_equals_tree_built_afresh(
        shapes in proptest::collection::vec(any::<u8>(), 1..80),
        members in any::<u64>(),
        seed in 1u64..u64::MAX,
    ) {
        check_kept_tree(&shapes, members, seed)?;
    }

    /// The same on larger clusters of one node weight, whose sets are long
    /// (the best fit then read through whole blocks of 64 positions).
    #[test]
    fn kept_tree_equals_tree_built_afresh_long_sets(
        shapes in proptest::collection::vec(0u8..32, 64..300),
        seed in 1u64..u64::MAX,
    ) {
        check_kept_tree(&shapes, u64::MAX, seed)?;
    }
}
