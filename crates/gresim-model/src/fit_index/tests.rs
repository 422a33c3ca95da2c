//! Unit tests of `fit_index` (fit_index.rs): the walk against a plain scan
//! of the partition's node list, with the skipped nodes given as flags or as
//! a bitmap.

use super::*;
use crate::catalog::model_by_name;
use crate::cluster::{GpuDevice, GpuType, Node, NodeAdminState, Partition};
use crate::ids::GpuTypeId;
use crate::state::CoreSet;

/// `n` nodes of 4 cores, node `i` with `gpus[i]` GPUs, and one partition of
/// the nodes `member` marks.
fn cluster(gpus: &[u8], member: &[bool]) -> Cluster {
    let model = model_by_name("A100-SXM4-80GB").unwrap();
    let nodes = gpus
        .iter()
        .enumerate()
        .map(|(i, &g)| Node {
            name: format!("n{i}"),
            sockets: 1,
            cores_per_socket: 4,
            threads_per_core: 1,
            memory_mib: 1000,
            features: vec![],
            weight: 1,
            gpus: (0..u16::from(g))
                .map(|k| GpuDevice {
                    ty: GpuTypeId(0),
                    model,
                    socket: Some(0),
                    phys: k as u8,
                    mig: None,
                })
                .collect(),
            gpu_links: None,
            state: NodeAdminState::Up,
        })
        .collect();
    let members = (0..gpus.len())
        .filter(|&i| member[i])
        .map(NodeId::from_idx)
        .collect();
    Cluster::new(
        nodes,
        vec![Partition::new("p", members)],
        vec![GpuType {
            name: "a100".into(),
            model,
            mig: None,
        }],
    )
}

/// What the walk stands for: the partition's nodes in order that are not
/// skipped and have a level of at least `min_gpus`, each with whether a
/// schedulable, not skipped node it did not visit lies before it (since the
/// previous visited one).
fn plain(cl: &Cluster, us: &[NodeUsage], min_gpus: u32, skip: &[bool]) -> Vec<(NodeId, bool)> {
    let mut out = Vec::new();
    let mut gap = false;
    for &id in &cl.partitions[0].nodes {
        let i = id.idx();
        if skip[i] {
            continue;
        }
        let l = level1(&us[i]);
        if l > 0 && u32::from(l - 1) >= min_gpus {
            out.push((id, gap));
            gap = false;
        } else if us[i].schedulable() {
            gap = true;
        }
    }
    out
}

proptest::proptest! {
    /// `walk` gives the plain scan's nodes and gaps, whether the skipped
    /// nodes come as flags or as a bitmap (a word at a time).
    #[test]
    fn walk_with_flags_or_bits_is_the_plain_scan(
        nodes in proptest::collection::vec(
            (0u8..5, 0u8..5, 0u8..5, proptest::bool::ANY, proptest::bool::ANY,
             proptest::bool::weighted(0.9), proptest::bool::weighted(0.8)),
            1..200,
        ),
        min_gpus in 0u32..6,
    ) {
        let gpus: Vec<u8> = nodes.iter().map(|x| x.0).collect();
        let member: Vec<bool> = nodes.iter().map(|x| x.6).collect();
        let cl = cluster(&gpus, &member);
        let us: Vec<NodeUsage> = nodes
            .iter()
            .map(|&(g, free_g, cores, skip, drained, up, _)| {
                let _ = skip;
                NodeUsage {
                    free_cores: CoreSet::first(u32::from(cores.min(4))),
                    free_mem: 1000,
                    free_gpus: crate::state::full_mask(usize::from(free_g.min(g))),
                    jobs: 0,
                    one_row: 0,
                    shared: 0,
                    exclusive: false,
                    admin: if up && !drained {
                        NodeAdminState::Up
                    } else {
                        NodeAdminState::Drain
                    },
                }
            })
            .collect();
        let ix = FitIndex::new(&cl, &us);
        let flags: Vec<bool> = nodes.iter().map(|x| x.3).collect();
        let mut bits = vec![0u64; nodes.len().div_ceil(64)];
        for (i, &f) in flags.iter().enumerate() {
            if f {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        let want = plain(&cl, &us, min_gpus, &flags);
        let by_flags: Vec<_> = ix.walk(0, min_gpus, Some(Skip::Flags(&flags))).collect();
        let by_bits: Vec<_> = ix.walk(0, min_gpus, Some(Skip::Bits(&bits))).collect();
        proptest::prop_assert_eq!(&by_flags, &want);
        proptest::prop_assert_eq!(&by_bits, &want);
        let none = vec![false; nodes.len()];
        let all: Vec<_> = ix.walk(0, min_gpus, None).collect();
        proptest::prop_assert_eq!(all, plain(&cl, &us, min_gpus, &none));
    }
}
