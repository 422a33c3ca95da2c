//! The event queue alone: push 1M events, then pop them all.
//!
//! Times are drawn from a fixed xorshift sequence over a ~1-day window, with
//! phases and kinds mixed as in a run (mostly job ends and submissions), so
//! that many events share a second and the `(time, phase, seq)` order is exercised.
//!
//! Run with `cargo bench -p gresim-benches --bench event_queue`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use gresim_engine::event::{EventKind, EventQueue, Phase};
use gresim_model::JobIdx;

const EVENTS: u64 = 1_000_000;

/// A deterministic event mix: (time, phase, kind).
fn events() -> Vec<(u64, Phase, EventKind)> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..EVENTS)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = x % 86_400;
            let job = JobIdx((i % 100_000) as u32);
            match x >> 60 {
                0..=6 => (t, Phase::JobEnd, EventKind::RunEnd { job, run: 0 }),
                7..=12 => (t, Phase::Submit, EventKind::Submit),
                13 => (t, Phase::Eligible, EventKind::Begin { job }),
                14 => (t, Phase::MainPass, EventKind::MainPass),
                _ => (t, Phase::Backfill, EventKind::BackfillPass),
            }
        })
        .collect()
}

fn event_queue(c: &mut Criterion) {
    let evs = events();
    let mut g = c.benchmark_group("event_queue");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(EVENTS));
    g.bench_function("push_then_pop_1M", |b| {
        b.iter_batched(
            || evs.clone(),
            |evs| {
                let mut q = EventQueue::default();
                for (t, p, k) in evs {
                    q.push(t, p, k);
                }
                let mut last = 0;
                while let Some(e) = q.pop() {
                    last = e.time;
                }
                std::hint::black_box(last)
            },
            BatchSize::LargeInput,
        )
    });
    // The engine's pattern: a bounded queue (10,000 events), each pop
    // followed by a push a little later (a job ends, its successor starts).
    g.throughput(Throughput::Elements(EVENTS - 10_000));
    g.bench_function("steady_state_990k", |b| {
        b.iter(|| {
            let mut q = EventQueue::default();
            for (t, p, k) in evs.iter().take(10_000) {
                q.push(*t, *p, *k);
            }
            let mut sum = 0u64;
            for (t, p, k) in evs.iter().skip(10_000) {
                let e = q.pop().expect("never empty");
                sum = sum.wrapping_add(e.time);
                q.push(e.time + t % 3_600, *p, *k);
            }
            std::hint::black_box(sum)
        })
    });
    g.finish();
}

criterion_group!(benches, event_queue);
criterion_main!(benches);
