//! One main scheduling pass that places about a thousand jobs on a half-busy
//! 1,000-node cluster and then blocks.
//!
//! 1,000 nodes × 8 GPUs; 600 whole-node jobs are submitted at t = 0 and
//! 5,000 jobs of 1–8 GPUs on 1–2 nodes at t = 10. Passes on submission are
//! off and `sched_interval` is 60 s, so the main pass at t = 60 is the only
//! one: it starts the 600 whole-node jobs, then pending jobs in queue order
//! until the first that does not fit, which blocks the partition (FIFO, no
//! backfill). Each iteration runs the scenario up to t = 61.
//! `baseline_600_busy` is the same run without the 5,000 jobs, so the pass
//! over them costs the difference.
//!
//! Run with `cargo bench -p gresim-benches --bench main_pass`.

use std::fmt::Write;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, SamplingMode};

/// The scenario as JSON (deterministic: sizes cycle), with `pending` jobs at t = 10.
fn scenario_json(pending: usize) -> String {
    let mut jobs = String::new();
    for i in 0..600u32 {
        let _ = write!(
            jobs,
            r#"{{"id":"busy{i}","submit":0,"gres":"gpu:8","cpus_per_task":32,"mem":"200G","time":1440,"run_time":86400}},"#
        );
    }
    let sizes = [(1, 1), (2, 1), (1, 1), (4, 1), (8, 1), (8, 2)];
    for i in 0..pending {
        let (g, n) = sizes[(i * 7 + i / 6) % sizes.len()];
        let _ = write!(
            jobs,
            r#"{{"id":"p{i}","submit":10,"nodes":{n},"gres":"gpu:{g}","cpus_per_task":4,"mem":"32G","time":600,"run_time":600}},"#
        );
    }
    jobs.pop();
    format!(
        r#"{{"schema_version":1,"name":"main_pass_5k",
  "cluster":{{"nodes":[{{"names":"gpu[0001-1000]","sockets":2,"cores_per_socket":32,"memory":"1000G",
    "gpus":[{{"model":"A100-SXM4-80GB","count":4,"socket":0}},{{"model":"A100-SXM4-80GB","count":4,"socket":1}}]}}]}},
  "scheduler":{{"policy":"fifo","def_mem_per_cpu":"4G","sched_interval":60,"pass_on_submit":false,"pass_on_end":false}},
  "workload":{{"jobs":[{jobs}]}},
  "horizon":61}}"#
    )
}

fn main_pass(c: &mut Criterion) {
    let mut g = c.benchmark_group("main_pass");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(20));
    for (name, pending) in [
        ("one_pass_5k_pending_1000x8gpu", 5_000),
        ("baseline_600_busy", 0),
    ] {
        let text = scenario_json(pending);
        let scen = gresim_io::parse_scenario(std::path::Path::new("main_pass_5k.json"), &text)
            .expect("the bench scenario is valid");
        g.bench_function(name, |b| {
            b.iter(|| {
                let out = gresim::Simulation::new(&scen)
                    .policy(gresim::PolicyKind::Fifo)
                    .seed(1)
                    .run()
                    .expect("the run succeeds")
                    .output;
                let started = out.jobs.iter().filter(|j| !j.runs.is_empty()).count();
                // The busy jobs, and with pending jobs some of those too, but not all.
                assert!(started >= 600 && started < 600 + pending.max(1));
                std::hint::black_box(started)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, main_pass);
criterion_main!(benches);
