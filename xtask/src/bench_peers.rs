//! `cargo xtask bench-peers`: gresim side by side with AccaSim (PyPI
//! `accasim` 1.1.3, an event-driven HPC workload simulator in Python) on one
//! SWF workload, with the peer kit in `xtask/peers/` (see its README.md).
//!
//! 1. builds `sim` in release mode;
//! 2. creates (or reuses) a venv with AccaSim through `setup_accasim.sh`
//!    (pip, from PyPI), unless `--accasim none`;
//! 3. generates the workload in process with `gresim_io::swf_gen` (default:
//!    `-n 10000 --capacity 1024 --load 0.9 --seed 42`), or takes `--swf FILE`;
//! 4. writes a gresim scenario for AccaSim's system file
//!    `accasim_sys_128x8.json` (`gresim_io::swf_gen::peer_128x8_scenario_json`):
//!    128 nodes × 8 cores, 1 GiB per core, so a job of P processors
//!    (`--ntasks=P` over 1 to P nodes, see `crates/gresim-io/src/traces/swf.rs`)
//!    takes any P cores of the cluster (count-based admission, as AccaSim's
//!    FirstFit);
//! 5. runs AccaSim FIFO and EASY (`--accasim`) and every gresim policy of
//!    `--policies` (default `strict-fifo,easy,slurm,conservative`), each
//!    `--warmup` times untimed (default 1) and then `--runs` times (default
//!    3) timed as whole processes, and prints the medians with jobs/s and
//!    the average wait;
//! 6. checks that the FIFO average waits agree (AccaSim FIFO and gresim
//!    `strict-fifo`), and on the reference workload (`--swf` with
//!    `gen_swf.py -n 10000 --capacity 1024 --load 0.9 --seed 42`'s file,
//!    recognised by its hash) that they equal 1666.9 s, which AccaSim, Alea
//!    and Tiresias all give. EASY waits are reported, not compared:
//!    AccaSim 1.1.3's EASY does not protect the head job's reservation.
//!
//! Exit status 1 when the FIFO waits disagree, 2 on bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use gresim_io::swf_gen::{peer_128x8_scenario_json, SwfGen};

use crate::gen_swf::{gen_option, GEN_OPTIONS};

const USAGE: &str = "usage: cargo xtask bench-peers [OPTIONS]
gresim vs AccaSim on one synthetic SWF workload (128 x 8 units, count-based admission)
  --policies LIST       gresim policies, comma-separated [strict-fifo,easy,slurm,conservative]
  --accasim LIST        AccaSim dispatchers: fifo, easy, or none [fifo,easy]
  --swf FILE            run on this SWF file instead of generating one
  --runs K              timed runs per peer and policy; the median is reported [3]
  --warmup K            untimed runs before them [1]
  --venv DIR            AccaSim venv, created with xtask/peers/setup_accasim.sh if needed [WORK/venv]
  --work DIR            workload, scenario and outputs [<target dir>/bench-peers]
the workload (gresim_io::swf_gen, as gen_swf.py; --capacity is fixed at 1024):";

/// The reference workload's FIFO average wait: AccaSim, Alea and Tiresias agree on it.
const REFERENCE_FIFO_WAIT: &str = "1666.9";

/// FNV-1a (64 bits) of the reference workload's file,
/// `gen_swf.py -n 10000 --capacity 1024 --load 0.9 --seed 42 -o w10000.swf`.
const REFERENCE_SWF_FNV: u64 = 0x8afb_b974_4a3c_4389;

/// The throughput ratio gresim aims for against AccaSim's same policy (issue #7).
const TARGET_RATIO: f64 = 300.0;

struct Opts {
    gen: SwfGen,
    swf: Option<PathBuf>,
    policies: Vec<String>,
    accasim: Vec<String>,
    runs: usize,
    warmup: usize,
    venv: Option<PathBuf>,
    work: Option<PathBuf>,
}

fn list(flag: &str, v: &str) -> Result<Vec<String>> {
    let items: Vec<String> = v
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if items.is_empty() {
        bail!("{flag}: expected a comma-separated list, got '{v}'");
    }
    Ok(items)
}

fn parse(args: &[String]) -> Result<Opts> {
    let usage = format!(
        "{USAGE}
{GEN_OPTIONS}"
    );
    let mut o = Opts {
        gen: SwfGen {
            jobs: 10_000,
            load: Some(0.9),
            ..SwfGen::default()
        },
        swf: None,
        policies: ["strict-fifo", "easy", "slurm", "conservative"]
            .map(String::from)
            .to_vec(),
        accasim: vec!["fifo".into(), "easy".into()],
        runs: 3,
        warmup: 1,
        venv: None,
        work: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "-h" || flag == "--help" {
            println!("{usage}");
            std::process::exit(0);
        }
        let value = it
            .next()
            .with_context(|| format!("{flag} needs a value\n{usage}"))?;
        match flag.as_str() {
            "--policies" => {
                o.policies = list(flag, value)?;
                for p in &o.policies {
                    if p.parse::<gresim_sched::PolicyKind>().is_err() {
                        bail!(
                            "--policies: unknown policy '{p}'; expected some of {}",
                            gresim_sched::PolicyKind::names()
                        );
                    }
                }
            }
            "--accasim" => {
                o.accasim = list(flag, value)?;
                if o.accasim == ["none"] {
                    o.accasim.clear();
                }
                for d in &o.accasim {
                    if d != "fifo" && d != "easy" {
                        bail!("--accasim: expected fifo, easy or none, got '{d}'");
                    }
                }
            }
            "--swf" => o.swf = Some(value.into()),
            "--runs" | "--warmup" => {
                let n: usize = value
                    .parse()
                    .ok()
                    .with_context(|| format!("{flag}: expected a count, got '{value}'"))?;
                if flag == "--runs" {
                    if n == 0 {
                        bail!("--runs: expected at least 1");
                    }
                    o.runs = n;
                } else {
                    o.warmup = n;
                }
            }
            "--venv" => o.venv = Some(value.into()),
            "--work" => o.work = Some(value.into()),
            "--capacity" => bail!("--capacity: fixed at 1024 (the 128 x 8 system)"),
            _ => {
                if !gen_option(&mut o.gen, flag, value)? {
                    bail!("unknown argument '{flag}'\n{usage}");
                }
            }
        }
    }
    o.gen.validate()?;
    Ok(o)
}

/// The cargo target directory: `$CARGO_TARGET_DIR` (relative to the
/// repository) or `target/`.
pub fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) if !d.is_empty() => root.join(d),
        _ => root.join("target"),
    }
}

/// One timed row of the table.
struct Row {
    peer: &'static str,
    kind: &'static str,
    label: String,
    jobs: u64,
    walls: Vec<f64>,
    /// CPU seconds (user + system) of each timed run, when /proc tells.
    cpus: Vec<Option<f64>>,
    wait: String,
    note: String,
}

fn median(xs: &[f64]) -> f64 {
    let mut w = xs.to_vec();
    w.sort_by(f64::total_cmp);
    w[w.len() / 2]
}

impl Row {
    fn median(&self) -> f64 {
        median(&self.walls)
    }
    fn cpu_median(&self) -> Option<f64> {
        let c: Option<Vec<f64>> = self.cpus.iter().copied().collect();
        c.map(|c| median(&c))
    }
    fn rate(&self) -> f64 {
        self.jobs as f64 / self.median()
    }
}

/// CPU seconds (user + system) of this process's waited-for children, from
/// `/proc/self/stat` (cutime, cstime; USER_HZ = 100 on Linux).
fn children_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is f[0]; cutime and cstime are fields 16 and 17.
    let ticks: u64 = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// The 1-minute load average, from `/proc/loadavg`.
fn loadavg() -> Option<String> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()
        .map(str::to_string)
}

/// Runs `cmd` to completion and returns its output, whole-process wall time
/// and CPU time. Measuring wall time is this task's purpose; no simulation
/// result depends on it.
#[allow(clippy::disallowed_methods)]
fn timed(cmd: &mut Command) -> Result<(Output, Duration, Option<f64>)> {
    let c0 = children_cpu();
    let t0 = std::time::Instant::now();
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    let wall = t0.elapsed();
    let cpu = children_cpu().zip(c0).map(|(b, a)| b - a);
    Ok((out, wall, cpu))
}

fn check(out: &Output, what: &str) -> Result<()> {
    if !out.status.success() {
        bail!(
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// `key=value` from AccaSim's `RESULT ...` line.
fn result_field(stdout: &str, key: &str) -> Result<String> {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .context("run_accasim.py printed no RESULT line")?;
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')))
        .map(str::to_string)
        .with_context(|| format!("no {key}= in: {line}"))
}

fn fmt_int(x: f64) -> String {
    let s = format!("{:.0}", x.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// FNV-1a (64 bits) of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let o = parse(args)?;
    let kit = root.join("xtask/peers");
    for f in [
        "setup_accasim.sh",
        "run_accasim.py",
        "accasim_sys_128x8.json",
    ] {
        if !kit.join(f).is_file() {
            bail!(
                "the AccaSim kit is incomplete: {} is missing",
                kit.join(f).display()
            );
        }
    }
    let target = target_dir(root);
    let work = o.work.clone().unwrap_or_else(|| target.join("bench-peers"));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let work = work
        .canonicalize()
        .with_context(|| format!("resolving {}", work.display()))?;
    let venv = o.venv.clone().unwrap_or_else(|| work.join("venv"));

    // 1. The workload (first: bad input stops the run before any build).
    let g = &o.gen;
    let (swf, described) = match &o.swf {
        Some(f) => {
            let f = f
                .canonicalize()
                .with_context(|| format!("cannot read the SWF file {}", f.display()))?;
            (f.clone(), format!("{}", f.display()))
        }
        None => {
            let name = format!(
                "w{}_s{}_l{}_o{}.swf",
                g.jobs,
                g.seed,
                g.load.map_or("none".into(), |l| l.to_string()),
                g.max_overestimate
            );
            let f = work.join(name);
            let mut desc = format!(
                "swf_gen -n {} --capacity 1024 --seed {} --max-overestimate {}",
                g.jobs, g.seed, g.max_overestimate
            );
            if let Some(l) = g.load {
                desc.push_str(&format!(" --load {l}"));
            }
            if *g
                != (SwfGen {
                    jobs: g.jobs,
                    seed: g.seed,
                    load: g.load,
                    max_overestimate: g.max_overestimate,
                    ..SwfGen::default()
                })
            {
                desc.push_str(" (and other generator options)");
            }
            eprintln!("== workload: {desc}");
            g.generate()?
                .write_file(&f)
                .with_context(|| format!("writing {}", f.display()))?;
            (f, desc)
        }
    };
    let swf_bytes = std::fs::read(&swf).with_context(|| format!("reading {}", swf.display()))?;
    let reference = fnv1a(&swf_bytes) == REFERENCE_SWF_FNV;
    drop(swf_bytes);

    // 2. sim, release.
    eprintln!("== building sim (release)");
    crate::cargo_build_release(root, &["--bin", "sim"])?;
    let sim = target.join("release/sim");

    // 3. The AccaSim venv.
    let python = venv.join("bin/python");
    if !o.accasim.is_empty() {
        let ready = python.is_file()
            && Command::new(&python)
                .args(["-c", "from accasim.base.simulator_class import Simulator"])
                .output()
                .is_ok_and(|o| o.status.success());
        if ready {
            eprintln!("== AccaSim venv: reusing {}", venv.display());
        } else {
            eprintln!("== AccaSim venv: creating {}", venv.display());
            let status = Command::new("bash")
                .arg(kit.join("setup_accasim.sh"))
                .arg(&venv)
                .status()
                .context("running setup_accasim.sh")?;
            if !status.success() {
                bail!(
                    "setup_accasim.sh {} failed (it needs python3 with venv and pip access to \
PyPI); --accasim none runs gresim alone",
                    venv.display()
                );
            }
        }
    }

    // 4. The scenario, beside the outputs; the trace by absolute path.
    let stem = swf
        .file_stem()
        .map_or("workload".into(), |s| s.to_string_lossy().into_owned());
    let scen = work.join(format!("peer_128x8_{stem}.json"));
    let swf_str = swf
        .to_str()
        .with_context(|| format!("{} is not UTF-8", swf.display()))?;
    std::fs::write(&scen, peer_128x8_scenario_json(swf_str))
        .with_context(|| format!("writing {}", scen.display()))?;

    let sys = kit.join("accasim_sys_128x8.json");
    let accasim = |disp: &str| {
        let mut c = Command::new(&python);
        c.arg(kit.join("run_accasim.py"))
            .arg(&swf)
            .arg(&sys)
            .arg(disp)
            .arg("--results")
            .arg(work.join(format!("accasim-{disp}")));
        c
    };
    let gresim = |policy: &str| {
        let mut c = Command::new(&sim);
        c.arg("run")
            .arg(&scen)
            .arg("--policy")
            .arg(policy)
            .arg("--quiet")
            .arg("-o")
            .arg(work.join(format!("gresim-{policy}")));
        c
    };
    // Warm-up runs, then the timed ones: their walls, CPU times and the last stdout.
    let measure =
        |make: &dyn Fn() -> Command, what: &str| -> Result<(Vec<f64>, Vec<Option<f64>>, String)> {
            for _ in 0..o.warmup {
                check(
                    &make().output().with_context(|| format!("running {what}"))?,
                    what,
                )?;
            }
            let (mut walls, mut cpus) = (Vec::new(), Vec::new());
            let mut stdout = String::new();
            for _ in 0..o.runs {
                let (out, d, cpu) = timed(&mut make())?;
                check(&out, what)?;
                walls.push(d.as_secs_f64());
                cpus.push(cpu);
                stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            }
            Ok((walls, cpus, stdout))
        };

    let load_before = loadavg();
    let mut rows: Vec<Row> = Vec::new();
    for disp in &o.accasim {
        let kind = if disp == "fifo" { "FIFO" } else { "EASY" };
        eprintln!(
            "== AccaSim {kind}: {} untimed + {} timed runs",
            o.warmup, o.runs
        );
        let (walls, cpus, stdout) = measure(&|| accasim(disp), "run_accasim.py")?;
        let jobs: u64 = result_field(&stdout, "jobs")?.parse()?;
        let dispatched: u64 = result_field(&stdout, "dispatched")?.parse()?;
        let wait = result_field(&stdout, "avg_wait")?;
        rows.push(Row {
            peer: "AccaSim",
            kind,
            label: format!("AccaSim {kind}"),
            jobs,
            walls,
            cpus,
            wait,
            note: format!("{dispatched} dispatched"),
        });
    }
    for policy in &o.policies {
        eprintln!(
            "== gresim {policy}: {} untimed + {} timed runs",
            o.warmup, o.runs
        );
        let what = format!("sim run --policy {policy}");
        let (walls, cpus, _) = measure(&|| gresim(policy), &what)?;
        let summary_path = work.join(format!("gresim-{policy}/summary.json"));
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&summary_path)
                .with_context(|| format!("reading {}", summary_path.display()))?,
        )
        .with_context(|| format!("parsing {}", summary_path.display()))?;
        let jobs = summary["jobs"].as_u64().unwrap_or(0);
        let wait = format!(
            "{:.1}",
            summary["wait"]["mean"].as_f64().unwrap_or(f64::NAN)
        );
        let states = summary["by_state"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let kind = match policy.as_str() {
            "strict-fifo" => "FIFO",
            "easy" => "EASY",
            _ => "",
        };
        rows.push(Row {
            peer: "gresim",
            kind,
            label: format!("gresim {policy}"),
            jobs,
            walls,
            cpus,
            wait,
            note: states,
        });
    }
    let load_after = loadavg();

    // The table.
    println!();
    println!(
        "workload: {described} (128 x 8 = 1,024 units); {} timed runs each after {} untimed, \
whole process, median; load average {} before, {} after",
        o.runs,
        o.warmup,
        load_before.as_deref().unwrap_or("?"),
        load_after.as_deref().unwrap_or("?"),
    );
    println!();
    println!(
        "| peer / policy | jobs | wall s | jobs/s | avg wait s | cpu s | wall runs (s) | jobs' end |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let runs: Vec<String> = r.walls.iter().map(|w| format!("{w:.3}")).collect();
        println!(
            "| {} | {} | {:.3} | {} | {} | {} | {} | {} |",
            r.label,
            fmt_int(r.jobs as f64),
            r.median(),
            fmt_int(r.rate()),
            r.wait,
            r.cpu_median().map_or("?".into(), |c| format!("{c:.2}")),
            runs.join(" "),
            r.note
        );
    }
    println!();
    let find = |peer: &str, kind: &str| rows.iter().find(|r| r.peer == peer && r.kind == kind);
    for kind in ["FIFO", "EASY"] {
        if let (Some(a), Some(g)) = (find("AccaSim", kind), find("gresim", kind)) {
            let ratio = g.rate() / a.rate();
            let cpu = match (a.cpu_median(), g.cpu_median()) {
                (Some(ca), Some(cg)) if cg > 0.0 => format!(" ({:.1}x in CPU time)", ca / cg),
                _ => String::new(),
            };
            println!(
                "{kind}: throughput {} / AccaSim = {ratio:.1}x{cpu} (target >= {TARGET_RATIO:.0}x: {})",
                g.label,
                if ratio >= TARGET_RATIO { "met" } else { "NOT met" }
            );
        }
    }
    if let Some(a) = find("AccaSim", "EASY") {
        for g in rows.iter().filter(|r| r.peer == "gresim") {
            println!(
                "vs AccaSim EASY: {} runs at {:.2}x its jobs/s",
                g.label,
                g.rate() / a.rate()
            );
        }
    }
    let mut ok = true;
    match (find("AccaSim", "FIFO"), find("gresim", "FIFO")) {
        (Some(a), Some(g)) if a.wait == g.wait => {
            println!(
                "FIFO: average waits agree: AccaSim {} s, gresim {} s",
                a.wait, g.wait
            );
        }
        (Some(a), Some(g)) => {
            println!(
                "FIFO: average waits DISAGREE: AccaSim {} s, gresim {} s",
                a.wait, g.wait
            );
            ok = false;
        }
        _ => println!("FIFO: not compared (needs AccaSim fifo and gresim strict-fifo in one run)"),
    }
    if reference {
        let fifo: Vec<&Row> = rows.iter().filter(|r| r.kind == "FIFO").collect();
        for r in &fifo {
            if r.wait != REFERENCE_FIFO_WAIT {
                println!(
                    "FIFO: {} gives {} s, not the reference {REFERENCE_FIFO_WAIT} s (AccaSim, Alea, Tiresias)",
                    r.label, r.wait
                );
                ok = false;
            }
        }
        if ok && !fifo.is_empty() {
            println!(
                "FIFO: the reference workload's {REFERENCE_FIFO_WAIT} s (AccaSim, Alea, Tiresias) reproduced"
            );
        }
    }
    if let (Some(a), Some(g)) = (find("AccaSim", "EASY"), find("gresim", "EASY")) {
        println!(
            "EASY: average waits AccaSim {} s, gresim {} s; not compared: AccaSim 1.1.3's EASY \
does not protect the head job's reservation (it backfills anything that fits now){}",
            a.wait,
            g.wait,
            if reference {
                "; Alea 4.0's EASY gives 774.5 s on this workload (docs/reproductions.md)"
            } else {
                ""
            }
        );
    }
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
