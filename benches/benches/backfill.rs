//! One backfill pass with 10,000 pending jobs on a busy 1,000-node cluster.
//!
//! 1,000 nodes × 8 GPUs are filled at t = 0 by 1,000 whole-node jobs with
//! time limits spread over a day; at t = 10, 10,000 jobs of 1–8 GPUs on 1–4
//! nodes are submitted. The main pass only runs hourly and not on
//! submission, so the backfill pass at t = 30 is the one that looks at the
//! 10,000 pending jobs (testing `bf_max_job_test` = 500 of them, Slurm's
//! default). Each iteration runs the scenario up to t = 31.
//!
//! Run with `cargo bench -p gresim-benches --bench backfill`.

use std::fmt::Write;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

/// The scenario as JSON (deterministic: sizes and limits cycle), with
/// `pending` jobs submitted at t = 10.
fn scenario_json(pending: usize) -> String {
    let mut jobs = String::new();
    for i in 0..1_000u32 {
        let limit = 60 + (i * 7) % 1_440;
        let _ = write!(
            jobs,
            r#"{{"id":"busy{i}","submit":0,"gres":"gpu:8","cpus_per_task":32,"mem":"200G","time":{limit},"run_time":86400}},"#
        );
    }
    let sizes = [(1, 1), (2, 1), (4, 1), (8, 1), (8, 2), (8, 4)];
    let limits = [30, 60, 120, 240, 600, 1_440];
    for i in 0..pending {
        let (g, n) = sizes[(i * 7 + i / 6) % sizes.len()];
        let limit = limits[(i * 5 + i / 36) % limits.len()];
        let _ = write!(
            jobs,
            r#"{{"id":"p{i}","submit":10,"nodes":{n},"gres":"gpu:{g}","cpus_per_task":4,"mem":"32G","time":{limit},"run_time":600}},"#
        );
    }
    jobs.pop();
    format!(
        r#"{{"schema_version":1,"name":"backfill_10k",
  "cluster":{{"nodes":[{{"names":"gpu[0001-1000]","sockets":2,"cores_per_socket":32,"memory":"1000G",
    "gpus":[{{"model":"A100-SXM4-80GB","count":4,"socket":0}},{{"model":"A100-SXM4-80GB","count":4,"socket":1}}]}}]}},
  "scheduler":{{"policy":"slurm","def_mem_per_cpu":"4G","sched_interval":3600,"pass_on_end":false}},
  "workload":{{"jobs":[{jobs}]}},
  "horizon":31}}"#
    )
}

fn backfill(c: &mut Criterion) {
    let mut g = c.benchmark_group("backfill");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(30));
    // The same run without the pending jobs: what the pass costs is the
    // difference between the two.
    for (name, pending) in [
        ("one_pass_10k_pending_1000x8gpu", 10_000),
        ("baseline_no_pending", 0),
    ] {
        let text = scenario_json(pending);
        let scen = gresim_io::parse_scenario(std::path::Path::new("backfill_10k.json"), &text)
            .expect("the bench scenario is valid");
        g.bench_function(name, |b| {
            b.iter(|| {
                let out = gresim::Simulation::new(&scen)
                    .policy(gresim::PolicyKind::Slurm)
                    .seed(1)
                    .run()
                    .expect("the run succeeds")
                    .output;
                // Every busy job runs.
                let running = out.jobs.iter().filter(|j| !j.runs.is_empty()).count();
                assert!(running >= 1_000);
                std::hint::black_box(running)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, backfill);
criterion_main!(benches);
