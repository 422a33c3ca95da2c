//! One run of the benchmark scenario, for profilers and quick checks.
//!
//! `cargo run --release -p gresim-benches --example bench_run -- [JOBS] [--load L] [--nodes N] [--policy P] [--json]`
//! runs the 1,000 × 8-GPU FIFO scenario of `cargo bench --bench engine` with
//! JOBS jobs (default 100,000) at offered GPU load L (default 0.85) and
//! prints the wall time of the run and what the simulation did: events,
//! simulated span, achieved GPU utilization and waits, and a hash of every
//! job's runs (start, end, nodes, GPUs) to compare builds by. `--nodes`
//! changes the cluster size (the arrival rate scales with it); `--policy`
//! overrides the scenario's `fifo` (e.g. `slurm`, FIFO plus backfill);
//! `--json` prints the scenario instead.

use gresim_benches::{mean_interarrival_for, run_with, scenario_json_sized, scenario_sized, SEED};
use gresim_model::JobState;

fn usage() -> ! {
    eprintln!("usage: bench_run [JOBS] [--load L] [--nodes N] [--policy P] [--json]");
    std::process::exit(2);
}

fn main() {
    let mut jobs: u64 = 100_000;
    let mut load = gresim_benches::TARGET_LOAD;
    let mut json = false;
    let mut policy: Option<String> = None;
    let mut nodes = gresim_benches::NODES;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = true,
            "--policy" => policy = Some(args.next().unwrap_or_else(|| usage())),
            "--nodes" => match args.next().and_then(|v| v.parse().ok()) {
                Some(n) if n > 0 => nodes = n,
                _ => usage(),
            },
            "--load" => match args.next().and_then(|v| v.parse().ok()) {
                Some(l) if l > 0.0 => load = l,
                _ => usage(),
            },
            _ => jobs = a.parse().unwrap_or_else(|_| usage()),
        }
    }
    if json {
        println!("{}", scenario_json_sized(jobs, load, nodes));
        return;
    }
    let scen = scenario_sized(jobs, load, nodes);
    let policy = policy.unwrap_or_else(|| scen.policy.to_string());
    // Wall time of the benchmark itself: it never reaches simulation results.
    #[allow(clippy::disallowed_methods)]
    let t0 = std::time::Instant::now();
    let out = run_with(&scen, SEED, &policy);
    let wall = t0.elapsed().as_secs_f64();

    let gpu_alloc: u128 = out.usage.gpu_alloc_secs.iter().sum();
    let gpu_avail: u128 = out.usage.gpu_avail_secs.iter().sum();
    let mut waits: Vec<u64> = out
        .jobs
        .iter()
        .filter_map(|j| j.runs.first().map(|r| r.start - j.first_submit))
        .collect();
    waits.sort_unstable();
    let mean_wait = waits.iter().sum::<u64>() as f64 / waits.len().max(1) as f64;
    let p = |q: f64| {
        waits
            .get(((waits.len() as f64 - 1.0) * q) as usize)
            .copied()
    };
    let completed = out
        .jobs
        .iter()
        .filter(|j| j.state == JobState::Completed)
        .count();
    let last_submit = out.jobs.last().map_or(0, |j| j.first_submit);
    println!("jobs                {jobs}");
    println!("policy              {policy}");
    println!("offered GPU load    {load}");
    println!("nodes               {nodes}");
    println!(
        "mean interarrival   {:.4} s",
        mean_interarrival_for(load, nodes)
    );
    println!("wall time           {wall:.3} s");
    println!("jobs/s              {:.0}", jobs as f64 / wall);
    println!("events              {}", out.events);
    println!("events/s            {:.0}", out.events as f64 / wall);
    println!("completed           {completed}");
    println!("last submit         {last_submit} s");
    println!("end time            {} s", out.end_time);
    println!(
        "GPU utilization     {:.1} % (allocated / available GPU-seconds, first submit to last end)",
        100.0 * gpu_alloc as f64 / gpu_avail.max(1) as f64
    );
    println!(
        "wait (s)            mean {mean_wait:.0}, median {:?}, p95 {:?}, max {:?}",
        p(0.5),
        p(0.95),
        waits.last()
    );
    // Utilization over the arrival window, from the load timeline.
    let mut busy: u128 = 0;
    let mut peak = 0;
    let mut pending_peak = 0;
    for w in out.timeline.windows(2) {
        let (a, b) = (w[0], w[1]);
        peak = peak.max(a.alloc_gpus);
        pending_peak = pending_peak.max(a.pending);
        let (t0, t1) = (a.t.min(last_submit), b.t.min(last_submit));
        busy += u128::from(a.alloc_gpus) * u128::from(t1 - t0);
    }
    let avail = out.timeline.first().map_or(0, |s| s.avail_gpus);
    println!(
        "GPU util. 0..last submit {:.1} %, peak {peak} of {avail} GPUs allocated, peak pending {pending_peak}",
        100.0 * busy as f64 / (u128::from(avail) * u128::from(last_submit.max(1))) as f64
    );
    println!("timeline samples    {}", out.timeline.len());
    // FNV-1a over every run: equal hashes mean the same decisions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |v: u64| {
        h ^= v;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    };
    for j in &out.jobs {
        mix(j.runs.len() as u64);
        for r in &j.runs {
            mix(r.start);
            mix(r.end.unwrap_or(u64::MAX));
            for na in &r.alloc.nodes {
                mix(na.node.idx() as u64);
                mix(na.gpus);
                mix(u64::from(na.cpus));
                mix(na.mem_mib);
            }
        }
    }
    println!("result hash         {h:016x}");
}
