//! Measures the output phase of `sim run` on its own: the wall time and the
//! memory of `gresim_report::write_outputs_with` after the engine has run.
//!
//! `cargo run --release -p gresim-cli --example output_phase -- SCENARIO OUTDIR [--policy P] [--repeat N] [--in-memory]`
//!
//! Runs SCENARIO as `sim run SCENARIO -o OUTDIR --policy P -q` does (the
//! pending-reason history kept for workloads of up to 200 000 submissions),
//! then resets the process's peak RSS (`/proc/self/clear_refs`, Linux) and
//! writes the outputs N times (default 1), printing for each write its wall
//! time, its CPU time (user + system, all threads), the RSS before it and
//! the peak RSS during it. The engine's own time
//! and peak are printed too. Linux only for the memory and CPU figures
//! (they are printed as 0 elsewhere).
//!
//! `--in-memory` writes the same files the way `write_outputs_with` did
//! before it streamed them: every record built into a vector, each file
//! rendered into one string (run.json by cloning the run file without its
//! jobs and splicing them in), then all written at once. It is the baseline
//! of docs/performance.md, "Output phase".

use std::path::PathBuf;

/// A `/proc/self/status` field in kB (0 when unreadable).
fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU seconds (user + system, all threads) the process has used so far,
/// from `/proc/self/stat` in clock ticks of 1/100 s (0 when unreadable).
fn cpu_secs() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name, which ends with ')'.
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = f.get(11)?.parse().ok()?;
            let stime: f64 = f.get(12)?.parse().ok()?;
            Some((utime + stime) / 100.0)
        })
        .unwrap_or(0.0)
}

/// Resets the peak RSS to the current RSS (Linux `clear_refs` value 5).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// The output phase as it was before streaming (see the module docs).
fn write_in_memory(
    out: &gresim_engine::SimOutput,
    meta: &gresim_report::RunMeta,
    dir: &std::path::Path,
) -> std::io::Result<gresim_report::Summary> {
    use gresim_report::{job_records, records_csv, records_json, RunFile, Summary};
    let name = meta.scenario.as_str();
    let records = job_records(out);
    let summary = Summary::compute(out, name);
    let title = format!("{name} ({}): GPUs over time", out.policy);
    let svg = gresim_report::utilization_svg(out, &title).map_err(std::io::Error::other)?;
    let rf = RunFile::from_output(out, meta);
    let head = RunFile {
        jobs: Vec::new(),
        ..rf.clone()
    };
    let mut run = serde_json::to_string(&head).map_err(std::io::Error::other)?;
    run.truncate(run.len() - "[]}".len());
    run.push_str("[\n");
    for (i, j) in rf.jobs.iter().enumerate() {
        if i > 0 {
            run.push_str(",\n");
        }
        run.push_str(&serde_json::to_string(j).map_err(std::io::Error::other)?);
    }
    run.push_str("\n]}\n");
    let contents: [(&str, String); 5] = [
        ("records.json", records_json(&records)),
        ("records.csv", records_csv(&records)),
        ("summary.json", summary.to_json()),
        ("utilization.svg", svg),
        ("run.json", run),
    ];
    gresim_report::write_files_atomic(dir, &contents)?;
    Ok(summary)
}

fn usage() -> ! {
    eprintln!("usage: output_phase SCENARIO OUTDIR [--policy P] [--repeat N] [--in-memory]");
    std::process::exit(2);
}

#[allow(clippy::disallowed_methods)] // wall time of the measurement only
fn main() {
    let mut pos: Vec<String> = Vec::new();
    let mut policy: Option<String> = None;
    let mut repeat = 1u32;
    let mut in_memory = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--in-memory" => in_memory = true,
            "--policy" => policy = Some(args.next().unwrap_or_else(|| usage())),
            "--repeat" => {
                repeat = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| usage())
            }
            _ => pos.push(a),
        }
    }
    let [scen_path, dir] = <[String; 2]>::try_from(pos).unwrap_or_else(|_| usage());
    let scenario = gresim_io::load_runnable_scenario(std::path::Path::new(&scen_path))
        .unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(2)
        });
    let pol = match policy {
        Some(p) => p
            .parse::<gresim_sched::PolicyKind>()
            .unwrap_or_else(|_| usage()),
        None => scenario.policy,
    }
    .build();
    let seed = scenario.seed;
    let mut input = scenario.sim_input(seed);
    let submissions = match &scenario.workload {
        gresim_io::Workload::Jobs(v) => Some(v.len() as u64),
        gresim_io::Workload::Synthetic(x) => Some(x.jobs),
        #[allow(unreachable_patterns)]
        _ => None,
    };
    input.record_reasons = submissions.is_some_and(|n| n <= 200_000);
    let t0 = std::time::Instant::now();
    let cpu0 = cpu_secs();
    let out = gresim_engine::run(input, pol).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1)
    });
    let engine = t0.elapsed().as_secs_f64();
    let cpu0 = cpu_secs() - cpu0;
    println!(
        "engine         {engine:.3} s  cpu {cpu0:.2} s  peak RSS {} MB  ({} jobs, reasons {})",
        status_kb("VmHWM:") / 1024,
        out.jobs.len(),
        out.reasons.is_some()
    );
    let meta = gresim_report::RunMeta {
        scenario: scenario.name.clone(),
        scenario_text: Some(scenario.source.clone()),
        actions: scenario.actions.clone(),
        seed: Some(seed),
    };
    let dir = PathBuf::from(dir);
    for i in 0..repeat {
        reset_peak();
        let before = status_kb("VmRSS:");
        let cpu = cpu_secs();
        let t = std::time::Instant::now();
        let written = if in_memory {
            write_in_memory(&out, &meta, &dir)
        } else {
            gresim_report::write_outputs_with(&out, &meta, &dir)
        };
        written.unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        });
        let wall = t.elapsed().as_secs_f64();
        let cpu = cpu_secs() - cpu;
        let peak = status_kb("VmHWM:");
        println!(
            "outputs #{i}     {wall:.3} s  cpu {cpu:.2} s  RSS before {} MB  peak {} MB  (+{} MB)",
            before / 1024,
            peak / 1024,
            peak.saturating_sub(before) / 1024
        );
    }
}
