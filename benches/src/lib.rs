//! Benchmarks live in benches/benches; this library holds the scenarios they
//! share with the profiling examples in benches/examples.

use std::path::Path;

use gresim_io::Scenario;

/// Nodes in the benchmark cluster.
pub const NODES: u32 = 1_000;
/// GPUs per node.
pub const GPUS_PER_NODE: u32 = 8;
/// Offered GPU load the arrival rate is tuned for.
pub const TARGET_LOAD: f64 = 0.85;
/// Median run time in seconds (lognormal).
pub const RUN_TIME_MEDIAN: f64 = 1_800.0;
/// Lognormal sigma of the run time.
pub const RUN_TIME_SIGMA: f64 = 1.0;
/// Run times are clipped to `[RUN_TIME_MIN, RUN_TIME_MAX]` seconds.
pub const RUN_TIME_MIN: u64 = 60;
pub const RUN_TIME_MAX: u64 = 172_800;
/// The seed of the benchmark runs.
pub const SEED: u64 = 1;

/// The job mix: (name, weight, GPUs per node, nodes). Sizes from 1 to 64
/// GPUs, as issue #7's target trace asks.
pub const MIX: &[(&str, f64, u32, u32)] = &[
    ("gpu1", 40.0, 1, 1),
    ("gpu2", 20.0, 2, 1),
    ("gpu4", 15.0, 4, 1),
    ("gpu8", 14.0, 8, 1),
    ("gpu16", 6.0, 8, 2),
    ("gpu32", 3.0, 8, 4),
    ("gpu64", 2.0, 8, 8),
];

/// Mean GPUs per job of [`MIX`].
pub fn mean_gpus_per_job() -> f64 {
    let w: f64 = MIX.iter().map(|m| m.1).sum();
    MIX.iter()
        .map(|&(_, wt, g, n)| wt * f64::from(g * n))
        .sum::<f64>()
        / w
}

/// Mean run time in seconds of the lognormal, `median · exp(σ²/2)` (clipping
/// at [`RUN_TIME_MIN`]/[`RUN_TIME_MAX`] changes it by well under 1 %).
pub fn mean_run_time() -> f64 {
    RUN_TIME_MEDIAN * (RUN_TIME_SIGMA * RUN_TIME_SIGMA / 2.0).exp()
}

/// Mean seconds between submissions for [`TARGET_LOAD`]: mean GPU-seconds
/// per job / (GPUs in the cluster × load).
pub fn mean_interarrival() -> f64 {
    mean_interarrival_at(TARGET_LOAD)
}

/// Mean seconds between submissions for an offered GPU load of `load`.
pub fn mean_interarrival_at(load: f64) -> f64 {
    mean_interarrival_for(load, NODES)
}

/// Mean seconds between submissions for an offered GPU load of `load` on `nodes` nodes.
pub fn mean_interarrival_for(load: f64, nodes: u32) -> f64 {
    let gpus = f64::from(nodes * GPUS_PER_NODE);
    mean_gpus_per_job() * mean_run_time() / (gpus * load)
}

/// The benchmark scenario as JSON: [`NODES`] nodes `gpu[0001-1000]` of
/// 2 sockets × 32 cores, 1000G and 8 × A100-SXM4-80GB (4 per socket), one
/// default partition, FIFO with DefMemPerCPU=4G, and `jobs` synthetic jobs
/// offered at [`TARGET_LOAD`].
pub fn scenario_json(jobs: u64) -> String {
    scenario_json_at(jobs, TARGET_LOAD)
}

/// [`scenario_json`] with an offered GPU load of `load` (1.0 = every GPU busy on average).
pub fn scenario_json_at(jobs: u64, load: f64) -> String {
    scenario_json_sized(jobs, load, NODES)
}

/// [`scenario_json_at`] on `nodes` nodes (the arrival rate scales with them).
pub fn scenario_json_sized(jobs: u64, load: f64, nodes: u32) -> String {
    let width = nodes.to_string().len().max(4);
    let names = format!("gpu[{:0width$}-{nodes:0width$}]", 1);
    let mix: Vec<String> = MIX
        .iter()
        .map(|&(name, weight, gpus, nodes)| {
            format!(
                r#"{{"name": "{name}", "weight": {weight}, "gpus": {gpus}, "nodes": {nodes}, "cpus_per_gpu": 8, "mem_per_gpu": "100G"}}"#
            )
        })
        .collect();
    format!(
        r#"{{
  "schema_version": 1,
  "name": "bench_{jobs}_jobs_{nodes}x8",
  "seed": {SEED},
  "cluster": {{
    "nodes": [
      {{"names": "{names}", "sockets": 2, "cores_per_socket": 32, "memory": "1000G",
        "gpus": [
          {{"model": "A100-SXM4-80GB", "count": 4, "socket": 0}},
          {{"model": "A100-SXM4-80GB", "count": 4, "socket": 1}}
        ]}}
    ]
  }},
  "partitions": [
    {{"name": "gpu", "nodes": "ALL", "default": true, "max_time": "7-00:00:00"}}
  ],
  "scheduler": {{"policy": "fifo", "def_mem_per_cpu": "4G"}},
  "workload": {{
    "synthetic": {{
      "jobs": {jobs},
      "mean_interarrival": {ia},
      "run_time_median": {RUN_TIME_MEDIAN},
      "run_time_sigma": {RUN_TIME_SIGMA},
      "run_time_min": {RUN_TIME_MIN},
      "run_time_max": {RUN_TIME_MAX},
      "time_limit_factor": 2.0,
      "users": 50,
      "mix": [
        {mix}
      ]
    }}
  }}
}}"#,
        ia = mean_interarrival_for(load, nodes),
        mix = mix.join(",\n        "),
    )
}

/// The benchmark scenario with `jobs` jobs, parsed by `gresim_io::parse_scenario`.
pub fn scenario(jobs: u64) -> Scenario {
    scenario_at(jobs, TARGET_LOAD)
}

/// [`scenario`] with an offered GPU load of `load`.
pub fn scenario_at(jobs: u64, load: f64) -> Scenario {
    scenario_sized(jobs, load, NODES)
}

/// [`scenario_at`] on `nodes` nodes.
pub fn scenario_sized(jobs: u64, load: f64, nodes: u32) -> Scenario {
    let text = scenario_json_sized(jobs, load, nodes);
    match gresim_io::parse_scenario(Path::new("bench.json"), &text) {
        Ok(s) => s,
        Err(e) => panic!("the benchmark scenario does not parse: {e}\n{text}"),
    }
}

/// Runs `scen` once with its policy and `seed`.
pub fn run_once(scen: &Scenario, seed: u64) -> gresim_engine::SimOutput {
    run_kind(scen, seed, scen.policy)
}

/// Runs `scen` once with the policy named `policy` and `seed`.
pub fn run_with(scen: &Scenario, seed: u64, policy: &str) -> gresim_engine::SimOutput {
    match policy.parse() {
        Ok(kind) => run_kind(scen, seed, kind),
        Err(e) => panic!("{e}"),
    }
}

/// Runs `scen` once with `policy` and `seed`, through the library's entry point.
pub fn run_kind(
    scen: &Scenario,
    seed: u64,
    policy: gresim::PolicyKind,
) -> gresim_engine::SimOutput {
    match gresim::Simulation::new(scen)
        .policy(policy)
        .seed(seed)
        .run()
    {
        Ok(outcome) => outcome.output,
        Err(e) => panic!("the benchmark run failed: {e}"),
    }
}

/// Nodes of the SWF system ([`swf_scenario`]): AccaSim's `accasim_sys_128x8.json`.
pub const SWF_NODES: u32 = 128;
/// Units (cores) per node of the SWF system.
pub const SWF_UNITS_PER_NODE: u32 = 8;
/// The deep-queue SWF workloads' run-time overestimate (issue #14).
pub const SWF_MAX_OVERESTIMATE: f64 = 3.0;
/// The SWF workloads' seed (bench-peers' default).
pub const SWF_SEED: u64 = 42;

/// The generator parameters of the SWF system's workload: `jobs` jobs of
/// `gresim_io::swf_gen` at offered load `load` on 1,024 units, requested
/// times up to `max_overestimate` × the run times.
pub fn swf_gen(
    jobs: u64,
    load: f64,
    max_overestimate: f64,
    seed: u64,
) -> gresim_io::swf_gen::SwfGen {
    gresim_io::swf_gen::SwfGen {
        jobs,
        seed,
        capacity: u64::from(SWF_NODES * SWF_UNITS_PER_NODE),
        load: Some(load),
        max_overestimate,
        ..Default::default()
    }
}

/// The bench-peers system (128 nodes × 8 cores, count-based admission;
/// `gresim_io::swf_gen::peer_128x8_scenario_json`) running the workload of
/// `gen`, written as an SWF file into `dir` (which must exist). Returns the
/// scenario and the generated workload; the error says what is wrong.
pub fn swf_scenario_in(
    dir: &Path,
    gen: &gresim_io::swf_gen::SwfGen,
) -> Result<(Scenario, gresim_io::swf_gen::SwfWorkload), String> {
    let w = gen.generate().map_err(|e| e.to_string())?;
    let name = swf_file_name(gen);
    let swf = dir.join(&name);
    w.write_file(&swf)
        .map_err(|e| format!("cannot write {}: {e}", swf.display()))?;
    let scen_path = dir.join("peer_128x8.json");
    let text = gresim_io::swf_gen::peer_128x8_scenario_json(&name);
    let scen = gresim_io::parse_scenario(&scen_path, &text).map_err(|e| e.to_string())?;
    Ok((scen, w))
}

/// The file name [`swf_scenario_in`] gives the workload of `gen`.
pub fn swf_file_name(gen: &gresim_io::swf_gen::SwfGen) -> String {
    format!(
        "swf_{}_l{}_o{}_s{}.swf",
        gen.jobs,
        gen.load.unwrap_or(0.0),
        gen.max_overestimate,
        gen.seed
    )
}

/// [`swf_scenario_in`] with the files in `<temp dir>/gresim-benches`.
pub fn swf_scenario(
    gen: &gresim_io::swf_gen::SwfGen,
) -> Result<(Scenario, gresim_io::swf_gen::SwfWorkload), String> {
    let dir = std::env::temp_dir().join("gresim-benches");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    swf_scenario_in(&dir, gen)
}

/// Pending jobs over a run, from its load timeline: the time-weighted mean
/// from the first sample to the last, and the maximum.
pub fn queue_depth(timeline: &[gresim_engine::Sample]) -> (f64, u32) {
    let mut area: u128 = 0;
    let mut max = 0;
    for w in timeline.windows(2) {
        area += u128::from(w[0].pending) * u128::from(w[1].t - w[0].t);
        max = max.max(w[0].pending);
    }
    max = max.max(timeline.last().map_or(0, |s| s.pending));
    let span = match (timeline.first(), timeline.last()) {
        (Some(a), Some(b)) if b.t > a.t => b.t - a.t,
        _ => return (f64::from(max), max),
    };
    (area as f64 / span as f64, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interarrival_matches_the_load() {
        // 5.72 GPUs/job × 1800·e^0.5 s / 6800 GPUs ≈ 2.4963 s.
        assert!((mean_gpus_per_job() - 5.72).abs() < 1e-9);
        assert!((mean_interarrival() - 2.4963).abs() < 1e-3);
    }

    #[test]
    fn swf_scenario_runs_and_counts_its_passes() {
        let dir = std::env::temp_dir().join(format!("gresim-benches-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (scen, w) = swf_scenario_in(&dir, &swf_gen(2_000, 1.1, 3.0, 1)).unwrap();
        assert_eq!(scen.cluster.nodes.len(), SWF_NODES as usize);
        let out = run_with(&scen, SEED, "slurm");
        assert_eq!(out.jobs.len(), w.jobs.len());
        let st = out.pass_stats;
        assert!(st.main_passes > 0 && st.backfill_passes > 0);
        assert!(st.tested_max <= u64::from(out.params.bf_max_job_test));
        assert!(st.tested <= st.backfill_passes * st.tested_max);
        assert!(st.queued_max > 0 && st.queued_max <= 2_000);
        // At load 1.1 a queue builds.
        let (mean, max) = queue_depth(&out.timeline);
        assert!(max > 10 && mean > 1.0, "mean {mean}, max {max}");
        let easy = run_with(&scen, SEED, "easy").pass_stats;
        assert!(easy.backfill_passes > 0 && easy.tested > 0);
        assert_eq!(run_with(&scen, SEED, "fifo").pass_stats.backfill_passes, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn queue_depth_is_time_weighted() {
        let s = |t: u64, pending: u32| gresim_engine::Sample {
            t,
            alloc_gpus: 0,
            alloc_gpu_sevenths: 0,
            alloc_cpus: 0,
            avail_gpus: 0,
            running: 0,
            pending,
        };
        // 4 pending for 10 s, then 1 for 30 s: (40 + 30) / 40.
        let (mean, max) = queue_depth(&[s(0, 4), s(10, 1), s(40, 0)]);
        assert!((mean - 1.75).abs() < 1e-12);
        assert_eq!(max, 4);
        assert_eq!(queue_depth(&[]), (0.0, 0));
    }

    #[test]
    fn small_scenario_runs() {
        let s = scenario(200);
        assert_eq!(s.cluster.nodes.len(), NODES as usize);
        let out = run_once(&s, SEED);
        assert_eq!(out.jobs.len(), 200);
    }
}
