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
//!
//! `bench_run swf [JOBS] [--load L] [--max-overestimate X] [--seed S] [--policy P] [--json]`
//! runs bench-peers' system instead (128 nodes × 8 cores, count-based
//! admission; `gresim_io::swf_gen::peer_128x8_scenario_json`) on a workload
//! of `gresim_io::swf_gen` (default 20,000 jobs at load 0.95 with requested
//! times up to 3.0 × the run times, seed 42, policy `slurm`), written to
//! `<temp dir>/gresim-benches/`; `--json` prints that scenario. `--file F`
//! runs an existing SWF file instead (e.g. one of the peer kit's
//! `gen_swf.py`); the generator options are then ignored.
//!
//! Both print the policy's pass counters too (`gresim_sched::PassStats`):
//! backfill passes, jobs tested per pass, queue depth (time-weighted over
//! the run, and at backfill passes) and wall microseconds per tested job.

use gresim_benches::{
    mean_interarrival_for, queue_depth, run_with, scenario_json_sized, scenario_sized, SEED,
};
use gresim_model::JobState;

fn usage() -> ! {
    eprintln!(
        "usage: bench_run [JOBS] [--load L] [--nodes N] [--policy P] [--json]\n       \
bench_run swf [JOBS] [--load L] [--max-overestimate X] [--seed S] [--file F] [--policy P] [--json]"
    );
    std::process::exit(2);
}

/// The value after `flag`, parsed, or the usage and exit status 2.
fn value<T: std::str::FromStr>(args: &mut impl Iterator<Item = String>, flag: &str) -> T {
    match args.next().map(|v| (v.parse().ok(), v)) {
        Some((Some(x), _)) => x,
        Some((None, v)) => {
            eprintln!("bench_run: {flag}: cannot read '{v}'");
            usage()
        }
        None => {
            eprintln!("bench_run: {flag} needs a value");
            usage()
        }
    }
}

/// The same allocator as `sim` (docs/performance.md, "2026-12-05 (tenth
/// session)").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let swf = args.peek().is_some_and(|a| a == "swf");
    if swf {
        args.next();
    }
    let mut jobs: Option<u64> = None;
    let mut load: Option<f64> = None;
    let mut json = false;
    let mut policy: Option<String> = None;
    let mut nodes = gresim_benches::NODES;
    let mut over = gresim_benches::SWF_MAX_OVERESTIMATE;
    let mut seed = gresim_benches::SWF_SEED;
    let mut file: Option<std::path::PathBuf> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => json = true,
            "--policy" => policy = Some(value(&mut args, "--policy")),
            "--nodes" if !swf => match value(&mut args, "--nodes") {
                n if n > 0 => nodes = n,
                _ => usage(),
            },
            "--load" => match value(&mut args, "--load") {
                l if l > 0.0 => load = Some(l),
                _ => usage(),
            },
            "--max-overestimate" if swf => over = value(&mut args, "--max-overestimate"),
            "--seed" if swf => seed = value(&mut args, "--seed"),
            "--file" if swf => file = Some(value::<String>(&mut args, "--file").into()),
            _ => jobs = Some(a.parse().unwrap_or_else(|_| usage())),
        }
    }
    if let Some(p) = &policy {
        if let Err(e) = p.parse::<gresim::PolicyKind>() {
            eprintln!("bench_run: --policy: {e}");
            std::process::exit(2);
        }
    }
    if swf {
        let gen = gresim_benches::swf_gen(jobs.unwrap_or(20_000), load.unwrap_or(0.95), over, seed);
        return run_swf(
            &gen,
            file.as_deref(),
            policy.as_deref().unwrap_or("slurm"),
            json,
        );
    }
    let jobs = jobs.unwrap_or(100_000);
    let load = load.unwrap_or(gresim_benches::TARGET_LOAD);
    if json {
        println!("{}", scenario_json_sized(jobs, load, nodes));
        return;
    }
    let scen = scenario_sized(jobs, load, nodes);
    let policy = policy.unwrap_or_else(|| scen.policy.to_string());
    // Wall time of the benchmark itself: it never reaches simulation results.
    let (out, wall) = timed_run(&scen, &policy);
    let gpu_alloc: u128 = out.usage.gpu_alloc_secs.iter().sum();
    let gpu_avail: u128 = out.usage.gpu_avail_secs.iter().sum();
    let (waits, mean_wait, completed) = wait_stats(&out);
    let p = |q: f64| {
        waits
            .get(((waits.len() as f64 - 1.0) * q) as usize)
            .copied()
    };
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
    print_pass_stats(&out, wall);
    println!("result hash         {:016x}", result_hash(&out));
}

/// The `swf` mode: the bench-peers system on a generated SWF workload, or on `file`.
fn run_swf(
    gen: &gresim_io::swf_gen::SwfGen,
    file: Option<&std::path::Path>,
    policy: &str,
    json: bool,
) {
    let fail = |e: String| -> ! {
        eprintln!("bench_run: {e}");
        std::process::exit(2);
    };
    let (scen, mean_ia, trace) = match file {
        Some(f) => {
            let f = f
                .canonicalize()
                .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", f.display())));
            let trace = f.to_string_lossy().into_owned();
            let text = gresim_io::swf_gen::peer_128x8_scenario_json(&trace);
            let scen = gresim_io::parse_scenario(std::path::Path::new("peer_128x8.json"), &text)
                .unwrap_or_else(|e| fail(e.to_string()));
            (scen, None, trace)
        }
        None => {
            let (scen, w) = gresim_benches::swf_scenario(gen).unwrap_or_else(|e| fail(e));
            let trace = std::env::temp_dir()
                .join("gresim-benches")
                .join(gresim_benches::swf_file_name(gen))
                .to_string_lossy()
                .into_owned();
            (scen, Some(w.mean_interarrival), trace)
        }
    };
    if json {
        println!("{}", gresim_io::swf_gen::peer_128x8_scenario_json(&trace));
        return;
    }
    // Wall time of the benchmark itself: it never reaches simulation results.
    let (out, wall) = timed_run(&scen, policy);
    let jobs = out.jobs.len() as u64;
    let (waits, mean_wait, completed) = wait_stats(&out);
    let p = |q: f64| {
        waits
            .get(((waits.len() as f64 - 1.0) * q) as usize)
            .copied()
    };
    println!("jobs                {jobs}");
    println!("policy              {policy}");
    match file {
        Some(_) => println!("workload            {trace}"),
        None => println!(
            "workload            swf_gen -n {jobs} --capacity {} --load {} --max-overestimate {} --seed {}",
            gen.capacity,
            gen.load.unwrap_or(0.0),
            gen.max_overestimate,
            gen.seed
        ),
    }
    println!(
        "system              {} nodes x {} cores (bench-peers' 128x8, count-based)",
        gresim_benches::SWF_NODES,
        gresim_benches::SWF_UNITS_PER_NODE
    );
    match mean_ia {
        Some(m) => println!("mean interarrival   {m:.4} s"),
        None => println!("mean interarrival   - (from the file)"),
    }
    println!("wall time           {wall:.3} s");
    println!("jobs/s              {:.0}", jobs as f64 / wall);
    println!("events              {}", out.events);
    println!("events/s            {:.0}", out.events as f64 / wall);
    println!("completed           {completed}");
    println!(
        "last submit         {} s",
        out.jobs.last().map_or(0, |j| j.first_submit)
    );
    println!("end time            {} s", out.end_time);
    println!(
        "core utilization    {:.1} % (allocated / available core-seconds, first submit to last end)",
        100.0 * out.usage.cpu_alloc_secs as f64 / out.usage.cpu_avail_secs.max(1) as f64
    );
    println!(
        "wait (s)            mean {mean_wait:.1}, median {:?}, p95 {:?}, max {:?}",
        p(0.5),
        p(0.95),
        waits.last()
    );
    println!("timeline samples    {}", out.timeline.len());
    print_pass_stats(&out, wall);
    println!("result hash         {:016x}", result_hash(&out));
}

/// The policy's pass counters and the queue depth over the run.
/// One run of `scen` with `policy`, and its wall time. Measuring wall time
/// is this program's purpose; no simulation result depends on it.
fn timed_run(scen: &gresim_io::Scenario, policy: &str) -> (gresim_engine::SimOutput, f64) {
    #[allow(clippy::disallowed_methods)]
    let t0 = std::time::Instant::now();
    let out = run_with(scen, SEED, policy);
    (out, t0.elapsed().as_secs_f64())
}

/// Every started job's first wait, sorted; their mean; the jobs completed.
fn wait_stats(out: &gresim_engine::SimOutput) -> (Vec<u64>, f64, usize) {
    let mut waits: Vec<u64> = out
        .jobs
        .iter()
        .filter_map(|j| j.runs.first().map(|r| r.start - j.first_submit))
        .collect();
    waits.sort_unstable();
    let mean = waits.iter().sum::<u64>() as f64 / waits.len().max(1) as f64;
    let completed = out
        .jobs
        .iter()
        .filter(|j| j.state == JobState::Completed)
        .count();
    (waits, mean, completed)
}

fn print_pass_stats(out: &gresim_engine::SimOutput, wall: f64) {
    let st = out.pass_stats;
    let (depth_mean, depth_max) = queue_depth(&out.timeline);
    println!("main passes         {}", st.main_passes);
    println!("backfill passes     {}", st.backfill_passes);
    println!(
        "tested per pass     mean {:.1}, max {} ({} tested in all)",
        st.tested as f64 / st.backfill_passes.max(1) as f64,
        st.tested_max,
        st.tested
    );
    if st.tentative > 0 {
        println!(
            "tentative per pass  mean {:.1} ({} in all: records looked at past a point where bf_max_job_test \
may have stopped the pass, never settled as nothing after them needed it; not in tested)",
            st.tentative as f64 / st.backfill_passes.max(1) as f64,
            st.tentative
        );
    }
    println!(
        "queue depth         mean {depth_mean:.1}, max {depth_max} (pending jobs, time-weighted over the run); \
at backfill passes mean {:.1}, max {}",
        st.queued_sum as f64 / st.backfill_passes.max(1) as f64,
        st.queued_max
    );
    if st.tested > 0 {
        println!(
            "us per tested job   {:.2} (whole run's wall time / jobs tested)",
            wall * 1e6 / st.tested as f64
        );
    } else {
        println!("us per tested job   - (no job tested by a backfill pass)");
    }
}

/// FNV-1a over every run: equal hashes mean the same decisions.
fn result_hash(out: &gresim_engine::SimOutput) -> u64 {
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
    h
}
