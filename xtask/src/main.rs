//! Project automation: `cargo xtask <task>`.
//!
//! - `conformance`: build `sim`, simulate every conformance case in
//!   `crates/gresim-cli/tests/conformance/cases/` and score it with the
//!   suite's `score.py` against all recordings; prints one line per case and
//!   the totals. `--case NAME` runs one case and prints its mismatches;
//!   `--sim PATH` scores that binary instead of building one, and
//!   arguments after `--` go to each `sim conformance`.
//! - `bench-peers`: gresim side by side with AccaSim on one SWF workload
//!   (`bench_peers.rs`; `cargo xtask bench-peers --help`).
//! - `gen-swf`: writes a synthetic SWF workload (`gen_swf.rs`;
//!   `cargo xtask gen-swf --help`).
//! - `hashes`: `bench_run`'s result hashes against
//!   `benches/reference-hashes.txt` (`hashes.rs`; `--long` adds the long
//!   rows), the check that an optimisation changed no decision.
//!
//! Errors print one line (with its causes) and exit with status 2.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

mod bench_peers;
mod gen_swf;
mod hashes;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let res = match args.first().map(String::as_str) {
        Some("conformance") => conformance(&args[1..]),
        Some("bench-peers") => bench_peers::run(&root(), &args[1..]),
        Some("gen-swf") => gen_swf::run(&args[1..]),
        Some("hashes") => hashes::run(&root(), &args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask conformance [--case NAME] [--sim PATH] [-- SIM_ARGS...] | bench-peers [--help] | gen-swf [--help] | hashes [--long] [--bench-run PATH]"
            );
            std::process::exit(2);
        }
    };
    if let Err(e) = res {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}

/// `cargo build --release ARGS` in the workspace `root`; an error naming the
/// arguments when it fails.
pub(crate) fn cargo_build_release(root: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new("cargo")
        .args(["build", "--release"])
        .args(args)
        .current_dir(root)
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release {} failed", args.join(" "));
    }
    Ok(())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

const CONFORMANCE_USAGE: &str =
    "usage: cargo xtask conformance [--case NAME] [--sim PATH] [-- SIM_ARGS...]";

fn conformance(args: &[String]) -> Result<()> {
    // `--sim PATH` scores another build (say, the one before a change)
    // without building; arguments after `--` go to each `sim conformance`
    // (e.g. `--preempt-completing 4`).
    let (ours, sim_args) = match args.iter().position(|a| a == "--") {
        Some(k) => (&args[..k], &args[k + 1..]),
        None => (args, &[][..]),
    };
    let (mut only, mut sim_path) = (None, None);
    let mut it = ours.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--case" => only = Some(it.next().context(CONFORMANCE_USAGE)?.clone()),
            "--sim" => sim_path = Some(PathBuf::from(it.next().context(CONFORMANCE_USAGE)?)),
            _ => bail!(CONFORMANCE_USAGE),
        }
    }
    let root = root();
    let sim = match sim_path {
        Some(p) => p,
        None => {
            cargo_build_release(&root, &["--bin", "sim"])?;
            bench_peers::target_dir(&root).join("release/sim")
        }
    };
    let dir = root.join("crates/gresim-cli/tests/conformance");
    let cases = dir.join("cases");
    let out_dir = std::env::temp_dir().join("gresim-conformance");
    std::fs::create_dir_all(&out_dir)?;
    let mut names: Vec<String> = std::fs::read_dir(&cases)?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.contains(".result."))
        .map(|n| n.trim_end_matches(".json").to_string())
        .filter(|n| only.as_ref().is_none_or(|o| o == n))
        .collect();
    names.sort();
    let (mut m, mut d, mut t) = (0u64, 0u64, 0u64);
    for name in &names {
        let sim_out = out_dir.join(format!("{name}.json"));
        let run = Command::new(&sim)
            .arg("conformance")
            .arg(cases.join(format!("{name}.json")))
            .args(sim_args)
            .arg("-o")
            .arg(&sim_out)
            .output()?;
        if !run.status.success() {
            bail!(
                "sim conformance {name}: {}",
                String::from_utf8_lossy(&run.stderr)
            );
        }
        // Every recording there is (a case may miss one whose replay failed).
        let recs: Vec<PathBuf> = ["", ".rerun", ".rerun2"]
            .iter()
            .map(|suffix| cases.join(format!("{name}{suffix}.result.json")))
            .filter(|p| p.exists())
            .collect();
        let Some((first, more)) = recs.split_first() else {
            bail!("{name}: no recording");
        };
        let mut score = Command::new("python3");
        score.arg(dir.join("score.py")).arg(first).arg(&sim_out);
        for extra in more {
            score.arg("--also").arg(extra);
        }
        if only.is_some() {
            let out = score.output().context("running python3 score.py")?;
            print!("{}", String::from_utf8_lossy(&out.stdout));
            continue;
        }
        let out = score
            .arg("--json")
            .output()
            .context("running python3 score.py")?;
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)
            .with_context(|| format!("score.py output for {name}"))?;
        let get = |k: &str| v[k].as_u64().unwrap_or(0);
        let (tasks, matched, decisions) = (get("tasks"), get("matched"), get("decisions_matched"));
        println!("{name:24} match {matched:>3}/{tasks:<3}  decisions {decisions:>3}/{tasks:<3}");
        m += matched;
        d += decisions;
        t += tasks;
    }
    if only.is_none() {
        println!("{:24} match {m:>3}/{t:<3}  decisions {d:>3}/{t:<3}", "all");
    }
    Ok(())
}
