//! Whole runs with a deep queue (issue #14): where backfill's cost shows.
//!
//! * `deep_queue_swf/POLICY/JOBS_loadL`: bench-peers' system (128 nodes × 8
//!   cores, count-based admission) on a `gresim_io::swf_gen` workload at
//!   offered load 0.95 or 1.1, requested times up to 3.0 × the run times,
//!   seed 42, with 20,000 and 100,000 jobs;
//! * `deep_queue_1000x8/POLICY/JOBS`: the 1,000 × 8-GPU benchmark cluster
//!   with its job mix (`gresim_benches::scenario_at`) at load 1.2, with
//!   100,000 and 1,000,000 jobs.
//!
//! Each iteration is one whole run (10 samples of one run). Today a whole
//! group takes hours (`slurm` on 100,000 SWF jobs alone takes far more than
//! a minute a run), so run one benchmark at a time with criterion's filter:
//! `cargo bench -p gresim-benches --bench deep_queue -- 'deep_queue_swf/slurm/20000_load0.95$'`.
//! `bench_run` runs the same scenarios once and prints the pass counters
//! (`bench_run swf 20000 --load 0.95 --policy slurm`, `bench_run 100000
//! --load 1.2 --policy slurm`). CI only compiles this file.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, SamplingMode};
use criterion::{measurement::WallTime, Throughput};
use gresim_benches::{scenario_at, swf_gen, swf_scenario, SEED, SWF_MAX_OVERESTIMATE, SWF_SEED};
use gresim_io::Scenario;

/// The policies benchmarked on each scenario.
const POLICIES: &[&str] = &["strict-fifo", "easy", "conservative", "slurm"];

fn setup<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    g.warm_up_time(Duration::from_secs(1));
    g
}

fn run_all(g: &mut BenchmarkGroup<'_, WallTime>, scen: &Scenario, jobs: u64, id: &str) {
    g.throughput(Throughput::Elements(jobs));
    for &policy in POLICIES {
        g.bench_function(format!("{policy}/{id}"), |b| {
            b.iter(|| {
                let out = gresim_benches::run_with(scen, SEED, policy);
                assert_eq!(out.jobs.len() as u64, jobs);
                std::hint::black_box(out.pass_stats.tested)
            })
        });
    }
}

fn swf(c: &mut Criterion) {
    let mut g = setup(c, "deep_queue_swf");
    for jobs in [20_000, 100_000] {
        for load in [0.95, 1.1] {
            let gen = swf_gen(jobs, load, SWF_MAX_OVERESTIMATE, SWF_SEED);
            let (scen, w) = swf_scenario(&gen).expect("the SWF workload is written");
            run_all(
                &mut g,
                &scen,
                w.jobs.len() as u64,
                &format!("{jobs}_load{load}"),
            );
        }
    }
    g.finish();
}

fn cluster_1000x8(c: &mut Criterion) {
    let mut g = setup(c, "deep_queue_1000x8");
    for jobs in [100_000, 1_000_000] {
        let scen = scenario_at(jobs, 1.2);
        run_all(&mut g, &scen, jobs, &jobs.to_string());
    }
    g.finish();
}

criterion_group!(benches, swf, cluster_1000x8);
criterion_main!(benches);
