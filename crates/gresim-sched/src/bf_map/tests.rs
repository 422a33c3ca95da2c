//! The slot map against the reservation-list definitions it replaced
//! (sched/backfill's `_attempt_backfill()` as backfill.rs first wrote it,
//! kept in `backfill_plain`).

use proptest::prelude::*;

use super::*;

use crate::backfill_plain::{self as old, Reservation};

/// The plain definitions, on a list of reservations, as the pass before the
/// slot map asked them ([`crate::backfill_plain`]).
mod plain {
    use super::*;

    pub fn blocked(res: &[Reservation], a: Time, b: Time, n: usize) -> Vec<bool> {
        let (mut m, mut list) = (vec![false; n], Vec::new());
        old::blocked_into(res, a, b, &mut m, &mut list);
        m
    }

    pub fn overlap(res: &[Reservation], on: &[bool], s: Time, e: Time) -> bool {
        old::resv_overlap(res, on, s, e)
    }

    pub fn later_start(
        res: &[Reservation],
        start_res: Time,
        end_time: Time,
        map_end: Time,
        in_part: &dyn Fn(NodeId) -> bool,
        n: usize,
    ) -> Option<Time> {
        let (mut rs, mut events) = (Vec::new(), Vec::new());
        for x in res {
            old::reserve(&mut rs, &mut events, x.clone());
        }
        let mut cover = vec![0u32; n];
        old::later_start(
            &rs, &events, start_res, end_time, map_end, in_part, &mut cover,
        )
    }
}

fn r(start: Time, end: Time, nodes: &[usize]) -> Reservation {
    Reservation {
        start,
        end,
        nodes: nodes.iter().map(|&i| NodeId::from_idx(i)).collect(),
    }
}

fn map_of(res: &[Reservation], n: usize) -> BfMap {
    let mut m = BfMap::new(n);
    for x in res {
        m.reserve(x.start, x.end, &x.nodes);
    }
    m
}

fn bools(m: &[u64], n: usize) -> Vec<bool> {
    (0..n).map(|i| has_bit(m, NodeId::from_idx(i))).collect()
}

fn bits(on: &[bool]) -> Vec<u64> {
    let mut m = bitmap(words_for(on.len()));
    for (i, _) in on.iter().enumerate().filter(|x| *x.1) {
        set_bit(&mut m, NodeId::from_idx(i));
    }
    m
}

fn later(res: &[Reservation], start_res: Time, end_time: Time, part: &[usize]) -> Option<Time> {
    let n = 4;
    let on: Vec<bool> = (0..n).map(|i| part.contains(&i)).collect();
    let fast = map_of(res, n).later_start(start_res, end_time, 10_000, &bits(&on));
    let in_part = |id: NodeId| part.contains(&id.idx());
    let slow = plain::later_start(res, start_res, end_time, 10_000, &in_part, n);
    assert_eq!(fast, slow, "slot map and reservation list disagree");
    fast
}

#[test]
fn a_reservation_beginning_at_the_window_end_blocks_its_nodes() {
    let res = [r(60, 120, &[0]), r(61, 120, &[1]), r(10, 20, &[2])];
    let m = map_of(&res, 4);
    let mut out = bitmap(1);
    m.blocked(0, 60, &mut out);
    assert_eq!(bools(&out, 4), [true, false, true, false]);
    assert_eq!(bools(&out, 4), plain::blocked(&res, 0, 60, 4));
    m.blocked(20, 61, &mut out);
    assert_eq!(bools(&out, 4), [true, true, false, false]);
    assert_eq!(bools(&out, 4), plain::blocked(&res, 20, 61, 4));
}

#[test]
fn the_overlap_test_is_strict_at_both_ends() {
    let res = [r(60, 120, &[0])];
    let m = map_of(&res, 2);
    let on = bits(&[true, false]);
    assert!(!m.overlaps(0, 60, &on));
    assert!(!m.overlaps(120, 180, &on));
    assert!(m.overlaps(119, 179, &on));
    assert!(!m.overlaps(0, 200, &bits(&[false, true])));
}

#[test]
fn later_start_is_the_first_end_freeing_a_partition_node() {
    let res = [r(60, 120, &[0]), r(60, 180, &[1])];
    assert_eq!(later(&res, 8, 68, &[0, 1]), Some(120));
    // Node 0 is not in the partition: the next slot, [120, 180), begins
    // after the window but is still looked at.
    assert_eq!(later(&res, 8, 68, &[1]), Some(180));
    // From 120 on, only node 1's end is ahead.
    assert_eq!(later(&res, 120, 180, &[0, 1]), Some(180));
    assert_eq!(later(&res, 180, 240, &[0, 1]), None);
}

#[test]
fn later_start_stops_after_the_first_slot_beyond_the_window() {
    let res = [r(60, 120, &[0]), r(60, 180, &[1]), r(200, 260, &[2])];
    // Slot [120, 180) is the first to begin after 68; slot [180, 200),
    // where node 2's reservation ends nothing, is not looked at.
    assert_eq!(later(&res, 8, 68, &[2]), None);
    assert_eq!(later(&res, 8, 190, &[2]), Some(260));
}

#[test]
fn a_node_handed_from_one_reservation_to_the_next_is_not_freed() {
    let res = [r(60, 120, &[0]), r(120, 180, &[0])];
    assert_eq!(later(&res, 8, 68, &[0]), Some(180));
}

#[test]
fn node_ids_come_back_in_order_across_words() {
    let mut m = bitmap(words_for(130));
    for i in [129, 0, 64, 63, 1] {
        set_bit(&mut m, NodeId::from_idx(i));
    }
    let got: Vec<usize> = ids_both(&m, &m).map(|id| id.idx()).collect();
    assert_eq!(got, [0, 1, 63, 64, 129]);
}

/// Random reservations over `n` nodes on a coarse time grid, so that starts
/// and ends often coincide (nodes handed from one reservation to the next).
fn reservations(n: usize) -> impl Strategy<Value = Vec<Reservation>> {
    prop::collection::vec(
        (
            0u64..40,
            1u64..12,
            prop::collection::btree_set(0..n, 1..n.min(6) + 1),
        )
            .prop_map(|(s, d, nodes)| Reservation {
                start: s * 30,
                end: (s + d) * 30,
                nodes: nodes.into_iter().map(NodeId::from_idx).collect(),
            }),
        0..25,
    )
}

/// The reservations' nodes below `n`, and the reservations left with any.
fn within(res: Vec<Reservation>, n: usize) -> Vec<Reservation> {
    res.into_iter()
        .map(|mut x| {
            x.nodes.retain(|id| id.idx() < n);
            x
        })
        .filter(|x| !x.nodes.is_empty())
        .collect()
}

proptest! {
    #[test]
    fn slot_map_answers_as_the_reservation_list(
        n in prop::sample::select(vec![3usize, 64, 70, 130]),
        seed in any::<u64>(),
        res in reservations(3),
        queries in prop::collection::vec((0u64..1500, 0u64..700, 0u64..1500), 1..20),
    ) {
        // Spread the small node sets over the cluster with the seed, so that
        // multi-word bitmaps are exercised.
        let res: Vec<Reservation> = res
            .into_iter()
            .map(|mut x| {
                for id in &mut x.nodes {
                    *id = NodeId::from_idx((id.idx() * 61 + seed as usize % 97) % n);
                }
                x.nodes.sort();
                x.nodes.dedup();
                x
            })
            .collect();
        let map = map_of(&res, n);
        let words = words_for(n);
        let part: Vec<bool> = (0..n).map(|i| !(i as u64 + seed).is_multiple_of(3)).collect();
        let part_bits = bits(&part);
        let mut out = bitmap(words);
        for (a, len, map_end) in queries {
            let b = a + len;
            map.blocked(a, b, &mut out);
            prop_assert_eq!(bools(&out, n), plain::blocked(&res, a, b, n));
            let on: Vec<bool> = (0..n).map(|i| (i as u64 * 7 + a).is_multiple_of(5)).collect();
            prop_assert_eq!(map.overlaps(a, b, &bits(&on)), plain::overlap(&res, &on, a, b));
            let in_part = |id: NodeId| part[id.idx()];
            prop_assert_eq!(
                map.later_start(a, b, map_end, &part_bits),
                plain::later_start(&res, a, b, map_end, &in_part, n)
            );
        }
    }
}

proptest! {
    /// One job's tries: windows whose starts and ends never move back get
    /// the blocked nodes and `later_start` the map gives each on its own.
    #[test]
    fn sliding_windows_answer_as_each_window(
        // One, two and three words per bitmap (`blocked_in` has its own
        // code for one and for two).
        n in prop::sample::select(vec![3usize, 64, 100, 130]),
        res in reservations(130),
        start in 0u64..600,
        len in 0u64..700,
        steps in prop::collection::vec((0u64..200, 0u64..200), 1..30),
    ) {
        let res = within(res, n);
        let map = map_of(&res, n);
        let part = bits(&(0..n).map(|i| i % 4 != 1).collect::<Vec<_>>());
        let mut w = Windows::default();
        w.restart();
        let (mut out, mut want) = (bitmap(words_for(n)), bitmap(words_for(n)));
        let (mut a, mut b) = (start, start + len);
        for (da, db) in steps {
            map.blocked_in(&mut w, a, b, &mut out);
            map.blocked(a, b, &mut want);
            prop_assert_eq!(&out, &want, "window [{}, {}]", a, b);
            prop_assert_eq!(
                map.later_start_from(w.first_after(), b, 1200, &part),
                map.later_start(a, b, 1200, &part)
            );
            a += da;
            b = (b + db).max(a);
        }
    }
}

proptest! {
    /// First tries from the map's start, asked between reservations as a
    /// pass asks them: the prefix ORs kept from one question to the next
    /// give the blocked nodes the map gives each window on its own, and a
    /// window beginning after the map's first slot is left to
    /// `blocked_in`.
    #[test]
    fn first_windows_answer_as_each_window(
        n in prop::sample::select(vec![3usize, 64, 130]),
        res in reservations(130),
        steps in prop::collection::vec((0u64..60, 0u64..700, any::<bool>()), 1..30),
    ) {
        let res = within(res, n);
        let mut map = BfMap::new(n);
        let mut left = res.iter();
        let (mut out, mut want) = (bitmap(words_for(n)), bitmap(words_for(n)));
        for (a, len, add) in steps {
            if add {
                if let Some(x) = left.next() {
                    map.reserve(x.start, x.end, &x.nodes);
                }
            }
            map.blocked(a, a + len, &mut want);
            out.fill(u64::MAX);
            let first = map.times.len() < 2 || map.times[1] > a;
            prop_assert_eq!(map.blocked_first(a, a + len, &mut out), first);
            if first {
                prop_assert_eq!(&out, &want, "window [{}, {}]", a, a + len);
            } else {
                prop_assert!(out.iter().all(|&x| x == u64::MAX));
            }
        }
    }
}
