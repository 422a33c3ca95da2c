//! `cargo xtask bench-peers`: gresim side by side with AccaSim (PyPI
//! `accasim` 1.1.3, an event-driven HPC workload simulator in Python) on one
//! SWF workload, using the peer kit in `../shared/bench/` (see its README.md).
//!
//! 1. builds `sim` in release mode;
//! 2. creates (or reuses) a venv with AccaSim through `setup_accasim.sh`;
//! 3. generates the workload with `gen_swf.py` (default: the reference
//!    `-n 10000 --capacity 1024 --load 0.9 --seed 42`);
//! 4. writes a gresim scenario for AccaSim's system file
//!    `accasim_sys_128x8.json`: 128 nodes × 8 cores, 1 GiB per core, so a job
//!    of P processors (`--ntasks=P` over 1 to P nodes, see
//!    `crates/gresim-io/src/traces/swf.rs`) takes any P cores of the cluster
//!    (count-based admission, as AccaSim's FirstFit);
//! 5. runs AccaSim FIFO and gresim strict FIFO, AccaSim EASY and gresim
//!    EASY, each once untimed and then `--runs` times (default 3) timed as
//!    whole processes, and prints the medians;
//! 6. checks that the FIFO average waits agree (and, on the reference
//!    workload, equal 1666.9 s, which AccaSim, Alea and Tiresias all give).
//!    EASY waits are reported, not compared: AccaSim 1.1.3's EASY does not
//!    protect the head job's reservation.
//!
//! Exit status 1 when the FIFO waits disagree.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use anyhow::{bail, Context, Result};

const USAGE: &str = "usage: cargo xtask bench-peers [OPTIONS]
gresim vs AccaSim on one gen_swf.py workload (128 x 8 units, count-based admission)
  -n, --jobs N          jobs in the workload [10000]
  --load L              gen_swf.py --load [0.9]
  --seed S              gen_swf.py --seed [42]
  --runs K              timed runs per peer and policy; the median is reported [3]
  --venv DIR            AccaSim venv, created with setup_accasim.sh if needed [WORK/venv]
  --bench DIR           the peer kit [../shared/bench beside the repository]
  --work DIR            workload, scenario and outputs [<target dir>/bench-peers]
  --fifo-policy NAME    gresim policy for FIFO [strict-fifo, else fifo]
  --easy-policy NAME    gresim policy for EASY [easy]";

/// The reference workload's FIFO average wait: AccaSim, Alea and Tiresias agree on it.
const REFERENCE_FIFO_WAIT: &str = "1666.9";

/// The throughput ratio gresim aims for (issue #7).
const TARGET_RATIO: f64 = 300.0;

struct Opts {
    jobs: u64,
    load: String,
    seed: u64,
    runs: usize,
    venv: Option<PathBuf>,
    bench: Option<PathBuf>,
    work: Option<PathBuf>,
    fifo_policy: Option<String>,
    easy_policy: Option<String>,
}

fn parse(args: &[String]) -> Result<Opts> {
    let mut o = Opts {
        jobs: 10_000,
        load: "0.9".into(),
        seed: 42,
        runs: 3,
        venv: None,
        bench: None,
        work: None,
        fifo_policy: None,
        easy_policy: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "-n" | "--jobs" => o.jobs = value()?.parse().context("-n: expected a job count")?,
            "--load" => {
                let v = value()?;
                v.parse::<f64>().context("--load: expected a number")?;
                o.load = v;
            }
            "--seed" => o.seed = value()?.parse().context("--seed: expected an integer")?,
            "--runs" => {
                o.runs = value()?.parse().context("--runs: expected a count")?;
                if o.runs == 0 {
                    bail!("--runs: expected at least 1");
                }
            }
            "--venv" => o.venv = Some(value()?.into()),
            "--bench" => o.bench = Some(value()?.into()),
            "--work" => o.work = Some(value()?.into()),
            "--fifo-policy" => o.fifo_policy = Some(value()?),
            "--easy-policy" => o.easy_policy = Some(value()?),
            "-h" | "--help" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            _ => bail!("unknown argument '{flag}'\n{USAGE}"),
        }
    }
    if o.jobs == 0 {
        bail!("-n: expected at least 1 job");
    }
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

/// The gresim scenario for AccaSim's `accasim_sys_128x8.json` reading `trace`
/// (a file name in the scenario's directory). Policies are given with `--policy`.
pub fn scenario_json(trace: &str) -> String {
    serde_json::json!({
        "schema_version": 1,
        "name": "peer_128x8",
        "description": "AccaSim's accasim_sys_128x8.json: 128 nodes x 8 units, count-based admission. \
A job of P SWF processors is --ntasks=P over 1-P nodes; 1 GiB per core and 8 GiB per node, \
so memory never limits. Time limits are the SWF requested times, enforced exactly.",
        "cluster": {"nodes": [{"names": "n[001-128]", "cores_per_socket": 8, "memory": "8G"}]},
        "scheduler": {"def_mem_per_cpu": "1G", "timelimit_check_interval": 0},
        "workload": {"trace": trace, "format": "swf"}
    })
    .to_string()
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

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let o = parse(args)?;
    let bench = match &o.bench {
        Some(b) => b.clone(),
        None => root
            .parent()
            .map_or_else(|| PathBuf::from("../shared"), |p| p.join("shared"))
            .join("bench"),
    };
    for f in [
        "setup_accasim.sh",
        "run_accasim.py",
        "gen_swf.py",
        "accasim_sys_128x8.json",
    ] {
        if !bench.join(f).is_file() {
            bail!(
                "the peer benchmark kit is not at {} ({f} is missing): it lives in ../shared/bench \
relative to the repository; pass --bench DIR",
                bench.display()
            );
        }
    }
    let target = target_dir(root);
    let work = o.work.clone().unwrap_or_else(|| target.join("bench-peers"));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let venv = o.venv.clone().unwrap_or_else(|| work.join("venv"));

    // 1. sim, release.
    eprintln!("== building sim (release)");
    let status = Command::new("cargo")
        .args(["build", "--release", "--bin", "sim"])
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release --bin sim failed");
    }
    let sim = target.join("release/sim");

    // 2. The AccaSim venv.
    let python = venv.join("bin/python");
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
            .arg(bench.join("setup_accasim.sh"))
            .arg(&venv)
            .status()
            .context("running setup_accasim.sh")?;
        if !status.success() {
            bail!(
                "setup_accasim.sh {} failed (it needs python3 with venv and pip access to PyPI)",
                venv.display()
            );
        }
    }

    // 3. The workload.
    let swf_name = format!("w{}_s{}_l{}.swf", o.jobs, o.seed, o.load);
    let swf = work.join(&swf_name);
    let gen_args = [
        "-n".to_string(),
        o.jobs.to_string(),
        "--capacity".into(),
        "1024".into(),
        "--load".into(),
        o.load.clone(),
        "--seed".into(),
        o.seed.to_string(),
    ];
    eprintln!("== workload: gen_swf.py {}", gen_args.join(" "));
    let out = Command::new("python3")
        .arg(bench.join("gen_swf.py"))
        .args(&gen_args)
        .arg("-o")
        .arg(&swf)
        .output()
        .context("running python3 gen_swf.py")?;
    check(&out, "gen_swf.py")?;

    // 4. The scenario.
    let scen = work.join(format!(
        "peer_128x8_{}.json",
        swf_name.trim_end_matches(".swf")
    ));
    std::fs::write(&scen, scenario_json(&swf_name))
        .with_context(|| format!("writing {}", scen.display()))?;

    let sys = bench.join("accasim_sys_128x8.json");
    let accasim = |disp: &str| {
        let mut c = Command::new(&python);
        c.arg(bench.join("run_accasim.py"))
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

    let load_before = loadavg();
    let mut rows: Vec<Row> = Vec::new();
    let mut fifo_waits: Vec<String> = Vec::new();
    let mut easy_waits: Vec<String> = Vec::new();
    for (kind, disp, candidates, chosen) in [
        ("FIFO", "fifo", ["strict-fifo", "fifo"], &o.fifo_policy),
        ("EASY", "easy", ["easy", ""], &o.easy_policy),
    ] {
        // AccaSim.
        eprintln!("== AccaSim {kind}: 1 untimed + {} timed runs", o.runs);
        check(&accasim(disp).output()?, "run_accasim.py")?;
        let (mut walls, mut cpus) = (Vec::new(), Vec::new());
        let mut stdout = String::new();
        for _ in 0..o.runs {
            let (out, d, cpu) = timed(&mut accasim(disp))?;
            check(&out, "run_accasim.py")?;
            walls.push(d.as_secs_f64());
            cpus.push(cpu);
            stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        }
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
            wait: wait.clone(),
            note: format!("{dispatched} dispatched"),
        });
        if kind == "FIFO" {
            fifo_waits.push(wait);
        } else {
            easy_waits.push(wait);
        }

        // gresim: the first policy name `sim` knows.
        let names: Vec<String> = match chosen {
            Some(p) => vec![p.clone()],
            None => candidates
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.to_string())
                .collect(),
        };
        let mut policy = None;
        for name in &names {
            let out = gresim(name).output()?;
            let err = String::from_utf8_lossy(&out.stderr);
            if !out.status.success() && err.contains("unknown policy") {
                eprintln!("   sim has no policy '{name}'");
                continue;
            }
            check(&out, &format!("sim run --policy {name}"))?;
            policy = Some(name.clone());
            break;
        }
        let Some(policy) = policy else {
            eprintln!("   gresim {kind}: no policy among {names:?}; skipped");
            continue;
        };
        eprintln!("== gresim {policy}: 1 untimed + {} timed runs", o.runs);
        let (mut walls, mut cpus) = (Vec::new(), Vec::new());
        for _ in 0..o.runs {
            let (out, d, cpu) = timed(&mut gresim(&policy))?;
            check(&out, &format!("sim run --policy {policy}"))?;
            walls.push(d.as_secs_f64());
            cpus.push(cpu);
        }
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
        rows.push(Row {
            peer: "gresim",
            kind,
            label: format!("gresim {policy}"),
            jobs,
            walls,
            cpus,
            wait: wait.clone(),
            note: states,
        });
        if kind == "FIFO" {
            fifo_waits.push(wait);
        } else {
            easy_waits.push(wait);
        }
    }

    let load_after = loadavg();

    // The table.
    println!();
    println!(
        "workload: gen_swf.py {} (128 x 8 = 1,024 units); {} timed runs each, whole process, median; \
load average {} before, {} after",
        gen_args.join(" "),
        o.runs,
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
    let mut ok = true;
    for kind in ["FIFO", "EASY"] {
        let find = |peer: &str| rows.iter().find(|r| r.peer == peer && r.kind == kind);
        if let (Some(a), Some(g)) = (find("AccaSim"), find("gresim")) {
            let ratio = g.rate() / a.rate();
            let cpu = match (a.cpu_median(), g.cpu_median()) {
                (Some(ca), Some(cg)) if cg > 0.0 => format!(" ({:.1}x in CPU time)", ca / cg),
                _ => String::new(),
            };
            println!(
                "{kind}: throughput gresim/AccaSim = {ratio:.1}x{cpu} (target >= {TARGET_RATIO:.0}x: {})",
                if ratio >= TARGET_RATIO { "met" } else { "NOT met" }
            );
        }
    }
    match fifo_waits.as_slice() {
        [a, g] if a == g => {
            println!("FIFO: average waits agree: AccaSim {a} s, gresim {g} s");
        }
        [a, g] => {
            println!("FIFO: average waits DISAGREE: AccaSim {a} s, gresim {g} s");
            ok = false;
        }
        _ => println!("FIFO: not compared (gresim has no strict FIFO policy)"),
    }
    let reference = o.jobs == 10_000 && o.seed == 42 && o.load == "0.9";
    if reference {
        for w in &fifo_waits {
            if w != REFERENCE_FIFO_WAIT {
                println!(
                    "FIFO: {w} s is not the reference {REFERENCE_FIFO_WAIT} s (AccaSim, Alea, Tiresias)"
                );
                ok = false;
            }
        }
        if ok && fifo_waits.len() == 2 {
            println!(
                "FIFO: both equal the reference {REFERENCE_FIFO_WAIT} s (AccaSim, Alea, Tiresias)"
            );
        }
    }
    if let [a, g] = easy_waits.as_slice() {
        println!(
            "EASY: average waits AccaSim {a} s, gresim {g} s; not compared: AccaSim 1.1.3's EASY \
does not protect the head job's reservation (it backfills anything that fits now){}",
            if reference {
                "; Alea 4.0's EASY gives 774.5 s on this workload"
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
