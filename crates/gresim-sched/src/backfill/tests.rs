//! The search structures of the backfill pass against plain scans.

use std::borrow::Cow;

use gresim_model::{Allocation, NodeAlloc, NodeId};
use proptest::prelude::*;

use super::{EndBlocks, Running};
use crate::bf_map;

fn alloc(nodes: &[usize]) -> Allocation {
    Allocation {
        nodes: nodes
            .iter()
            .map(|&n| NodeAlloc {
                node: NodeId::from_idx(n),
                cores: Default::default(),
                cpus: 1,
                mem_mib: 0,
                gpus: 0,
                tasks: 1,
                share: None,
            })
            .collect(),
        exclusive: false,
        row_use: gresim_model::RowUse::NONE,
    }
}

/// The nodes of an end drawn as `ix`: mostly one node, some several, a few
/// very many.
fn end_nodes(ix: &[prop::sample::Index], nnodes: usize) -> Vec<usize> {
    let k = match ix.len() {
        1..=30 => 1,
        31..=37 => 2 + ix.len() % 3,
        _ => ix.len(),
    };
    let mut ns: Vec<usize> = ix[..k.min(ix.len())]
        .iter()
        .map(|i| i.index(nnodes))
        .collect();
    ns.sort_unstable();
    ns.dedup();
    ns
}

/// A node mask of about `density` % of `nnodes` nodes, from `seed`.
fn random_mask(nnodes: usize, density: u32, seed: u64) -> Vec<u64> {
    let mut mask = bf_map::bitmap(bf_map::words_for(nnodes));
    let mut x = seed | 1;
    for n in 0..nnodes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if (x % 100) < u64::from(density) {
            bf_map::set_bit(&mut mask, NodeId::from_idx(n));
        }
    }
    mask
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `next_touching`, `prev_touching` and `touches` find what a scan
    /// end by end finds, on clusters small enough for the flat bitmaps and
    /// wider ones (node lists, one-node ends by their node, wide ends by
    /// their bitmap), with masks from empty to full.
    #[test]
    fn end_searches_find_what_a_scan_finds(
        nnodes in prop_oneof![1usize..=128, 129usize..=1100],
        ends in proptest::collection::vec(
            (0u64..500, proptest::collection::vec(any::<prop::sample::Index>(), 1..=40)),
            0..300,
        ),
        density in 0u32..=100,
        seed in any::<u64>(),
        from in any::<prop::sample::Index>(),
        to in any::<prop::sample::Index>(),
    ) {
        let words = bf_map::words_for(nnodes);
        let mut ends: Vec<(u64, Vec<usize>)> = ends
            .into_iter()
            .map(|(t, ix)| (t, end_nodes(&ix, nnodes)))
            .collect();
        ends.sort_by_key(|e| e.0);
        let allocs: Vec<Allocation> = ends.iter().map(|(_, ns)| alloc(ns)).collect();
        let running: Vec<Running<'_>> = ends
            .iter()
            .zip(&allocs)
            .map(|((t, _), a)| Running::new(*t, Cow::Borrowed(a), words))
            .collect();
        let blocks = EndBlocks::new(&running, words);
        let mask = random_mask(nnodes, density, seed);
        let touches = |k: usize| ends[k].1.iter().any(|&n| bf_map::has_bit(&mask, NodeId::from_idx(n)));
        let len = running.len();
        let (i, j) = if len == 0 { (0, 0) } else {
            let (a, b) = (from.index(len + 1), to.index(len + 1));
            (a.min(b), a.max(b))
        };
        prop_assert_eq!(blocks.next_touching(&running, &mask, i), (i..len).find(|&k| touches(k)));
        if i < j {
            let want = (i..j).rev().find(|&k| touches(k)).unwrap_or(i);
            prop_assert_eq!(blocks.prev_touching(&running, &mask, i, j), want);
        }
        for k in 0..len {
            prop_assert_eq!(blocks.touches(&running, k, &mask), touches(k));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Blocks made for some of the ends and then given the others one by
    /// one (`insert`, as a backfill start inserts its planned end) search
    /// as a scan end by end does, on flat and wide clusters.
    #[test]
    fn inserted_ends_are_found_as_by_a_scan(
        nnodes in prop_oneof![1usize..=128, 129usize..=1100],
        ends in proptest::collection::vec(
            (0u64..500, proptest::collection::vec(any::<prop::sample::Index>(), 1..=40), any::<bool>()),
            0..250,
        ),
        order in any::<u64>(),
        density in 0u32..=100,
        seed in any::<u64>(),
        from in any::<prop::sample::Index>(),
    ) {
        let words = bf_map::words_for(nnodes);
        let all: Vec<(u64, Vec<usize>, bool)> = ends
            .into_iter()
            .map(|(t, ix, later)| (t, end_nodes(&ix, nnodes), later))
            .collect();
        let allocs: Vec<Allocation> = all.iter().map(|(_, ns, _)| alloc(ns)).collect();
        // The ends present at first, in order of end (stable).
        let mut first: Vec<usize> = (0..all.len()).filter(|&k| !all[k].2).collect();
        first.sort_by_key(|&k| all[k].0);
        let mut later: Vec<usize> = (0..all.len()).filter(|&k| all[k].2).collect();
        let mut x = order | 1;
        for i in (1..later.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            later.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let mut ids: Vec<usize> = first.clone();
        let mut running: Vec<Running<'_>> = first
            .iter()
            .map(|&k| Running::new(all[k].0, Cow::Borrowed(&allocs[k]), words))
            .collect();
        let mut blocks = EndBlocks::new(&running, words);
        for &k in &later {
            let at = running.partition_point(|e| e.end <= all[k].0);
            running.insert(at, Running::new(all[k].0, Cow::Borrowed(&allocs[k]), words));
            ids.insert(at, k);
            blocks.insert(&running, at);
        }
        prop_assert_eq!(&blocks.times, &running.iter().map(|r| r.end).collect::<Vec<_>>());
        let mask = random_mask(nnodes, density, seed);
        let touches = |k: usize| all[ids[k]].1.iter().any(|&n| bf_map::has_bit(&mask, NodeId::from_idx(n)));
        let len = running.len();
        let i = from.index(len + 1);
        // From every end (an end moved into a block must be in its bitmap
        // even when it is the only one touching the mask after the start).
        for s in 0..=len {
            prop_assert_eq!(blocks.next_touching(&running, &mask, s), (s..len).find(|&k| touches(k)));
        }
        for to in (i + 1)..=len {
            let want = (i..to).rev().find(|&k| touches(k)).unwrap_or(i);
            prop_assert_eq!(blocks.prev_touching(&running, &mask, i, to), want);
        }
        for k in 0..len {
            prop_assert_eq!(blocks.touches(&running, k, &mask), touches(k));
        }
    }
}
