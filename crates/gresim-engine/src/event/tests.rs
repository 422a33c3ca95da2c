//! The event queue's order: time, then phase, then insertion.

use super::*;

#[test]
fn orders_by_time_then_phase_then_insertion() {
    let mut q = EventQueue::default();
    q.push(5, Phase::MainPass, EventKind::MainPass);
    q.push(
        5,
        Phase::JobEnd,
        EventKind::RunEnd {
            job: JobIdx(1),
            run: 0,
        },
    );
    q.push(3, Phase::Backfill, EventKind::BackfillPass);
    q.push(
        5,
        Phase::JobEnd,
        EventKind::RunEnd {
            job: JobIdx(0),
            run: 0,
        },
    );
    q.push(5, Phase::Submit, EventKind::Submit);
    let got: Vec<_> = std::iter::from_fn(|| q.pop())
        .map(|e| (e.time, e.kind))
        .collect();
    let run = |j| EventKind::RunEnd {
        job: JobIdx(j),
        run: 0,
    };
    // Within second 5: the main pass, then submissions, then job ends
    // in the order they were queued.
    assert_eq!(
        got,
        vec![
            (3, EventKind::BackfillPass),
            (5, EventKind::MainPass),
            (5, EventKind::Submit),
            (5, run(1)),
            (5, run(0)),
        ]
    );
}

/// The phases in order, to draw from.
const PHASES: [Phase; 10] = [
    Phase::Cancel,
    Phase::MainPass,
    Phase::MainStartedEnd,
    Phase::Submit,
    Phase::Admin,
    Phase::Eligible,
    Phase::Backfill,
    Phase::MainAfterBackfill,
    Phase::JobEnd,
    Phase::NodeReturn,
];

proptest::proptest! {
    /// The two-heap queue gives exactly one binary heap's order on
    /// `Event`'s `Ord` (time, phase, insertion), whatever the mix of
    /// kinds, pushes, pops and peeks: pushes at or after the last event
    /// taken out (the engine's usual case), pushes before it in the same
    /// second or earlier (a pass asked for an earlier phase), far-apart and
    /// equal times.
    #[test]
    fn split_queue_pops_in_heap_order(
        ops in proptest::collection::vec((0u8..8, 0u64..400, 0usize..10, 0u32..6), 1..400),
        far in 0u64..(1 << 40),
    ) {
        let mut q = EventQueue::default();
        let mut reference: BinaryHeap<Event> = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        for (op, dt, ph, job) in ops {
            match op {
                0 | 1 => {
                    let e = q.pop();
                    proptest::prop_assert_eq!(e, reference.pop());
                    if let Some(e) = e {
                        now = e.time;
                    }
                }
                2 => {
                    let p = q.peek().copied();
                    proptest::prop_assert_eq!(p, reference.peek().copied());
                }
                _ => {
                    let time = match op {
                        3 => now.saturating_sub(dt % 3),
                        4 => now + far + dt,
                        _ => now + dt % 50,
                    };
                    // Kinds of both heaps, the same phase for either.
                    let kind = match job {
                        0 => EventKind::MainPass,
                        1 => EventKind::BackfillPass,
                        2 => EventKind::Submit,
                        3 => EventKind::AcctTick,
                        j => EventKind::RunEnd { job: JobIdx(j), run: 0 },
                    };
                    seq += 1;
                    q.push(time, PHASES[ph], kind);
                    reference.push(Event { time, phase: PHASES[ph], seq, kind });
                }
            }
            proptest::prop_assert_eq!(q.len(), reference.len());
            proptest::prop_assert_eq!(q.is_empty(), reference.is_empty());
        }
        while let Some(e) = reference.pop() {
            proptest::prop_assert_eq!(q.pop(), Some(e));
        }
        proptest::prop_assert_eq!(q.pop(), None);
    }
}
