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
