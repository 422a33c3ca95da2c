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
            .map(|(t, ix)| {
                // Mostly one node, some several, a few very many.
                let k = match ix.len() { 1..=30 => 1, 31..=37 => 2 + ix.len() % 3, _ => ix.len() };
                let mut ns: Vec<usize> = ix[..k.min(ix.len())].iter().map(|i| i.index(nnodes)).collect();
                ns.sort_unstable();
                ns.dedup();
                (t, ns)
            })
            .collect();
        ends.sort_by_key(|e| e.0);
        let allocs: Vec<Allocation> = ends.iter().map(|(_, ns)| alloc(ns)).collect();
        let running: Vec<Running<'_>> = ends
            .iter()
            .zip(&allocs)
            .map(|((t, _), a)| Running::new(*t, Cow::Borrowed(a), words))
            .collect();
        let blocks = EndBlocks::new(&running, words);
        let mut mask = bf_map::bitmap(words);
        let mut x = seed | 1;
        for n in 0..nnodes {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (x % 100) < u64::from(density) {
                bf_map::set_bit(&mut mask, NodeId::from_idx(n));
            }
        }
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
