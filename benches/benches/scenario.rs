//! A small scenario end to end: the benchmark scenario of `gresim_benches`
//! with 5,000 jobs (1–64 GPUs, 85 % offered load, 1,000 nodes × 8 GPUs),
//! parsed from JSON, expanded and run with the Slurm-faithful default
//! scheduler (`slurm`: main pass plus backfill) to its end.
//!
//! Run with `cargo bench -p gresim-benches --bench scenario`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use gresim_benches::{scenario_json, SEED};

const JOBS: u64 = 5_000;

fn scenario(c: &mut Criterion) {
    let text = scenario_json(JOBS);
    let mut g = c.benchmark_group("scenario");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(JOBS));
    g.bench_function("slurm_5k_jobs_1000x8gpu_parse_and_run", |b| {
        b.iter(|| {
            let scen = gresim_io::parse_scenario(std::path::Path::new("bench.json"), &text)
                .expect("the bench scenario is valid");
            let out = gresim::Simulation::new(&scen)
                .policy(gresim::PolicyKind::Slurm)
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

criterion_group!(benches, scenario);
criterion_main!(benches);
