//! One whole FIFO run of a synthetic 100,000-job trace on 1,000 nodes × 8 GPUs.
//!
//! The scenario (see `gresim_benches::scenario_json`) is parsed once, outside
//! the measurement; each iteration builds the engine input for the fixed seed
//! and runs the simulation to its end. Throughput is reported in jobs/s.
//!
//! Run with `cargo bench -p gresim-benches --bench engine`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use gresim_benches::{scenario, SEED};

const JOBS: u64 = 100_000;

fn engine(c: &mut Criterion) {
    let scen = scenario(JOBS);
    let mut g = c.benchmark_group("engine");
    // One run takes seconds: 10 samples of (usually) one iteration each.
    // Flat sampling, because criterion's default linear sampling would run
    // 1 + 2 + … + 10 = 55 iterations. While a run takes more than 6 s,
    // criterion warns that 10 samples do not fit in 60 s and simply takes
    // 10 × one run; once the engine is faster, the bench stays near 60 s.
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    g.warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(JOBS));
    g.bench_function("fifo_100k_jobs_1000x8gpu", |b| {
        b.iter(|| {
            let out = gresim::Simulation::new(&scen)
                .policy(scen.policy)
                .seed(SEED)
                .run()
                .expect("the run succeeds")
                .output;
            assert_eq!(out.jobs.len() as u64, JOBS);
            std::hint::black_box(out.events)
        })
    });
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
