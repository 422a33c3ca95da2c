//! `cargo xtask hashes [--long] [--bench-run PATH]`: runs `bench_run` with
//! each line of `benches/reference-hashes.txt` and compares its result hash
//! with the line's (docs/performance.md: an optimisation must not change a
//! decision). Prints one line per row and exits with status 1 when a hash
//! differs.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// One reference row: the expected hash and `bench_run`'s arguments.
#[derive(Debug, PartialEq)]
pub struct Row {
    pub hash: String,
    pub args: Vec<String>,
    pub long: bool,
}

/// The rows of a reference file (`#` comments, blank lines, a `[long]`
/// marker before the rows that run only with `--long`), or the first bad
/// line with its number.
pub fn parse(text: &str) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut long = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line == "[long]" {
            long = true;
            continue;
        }
        let mut words = line.split_whitespace();
        let hash = words.next().unwrap_or_default();
        if hash.len() != 16 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!(
                "line {}: expected a 16-digit hex hash and bench_run's arguments, got {line:?}",
                i + 1
            );
        }
        let args: Vec<String> = words.map(str::to_string).collect();
        if args.is_empty() {
            bail!("line {}: no bench_run arguments after the hash", i + 1);
        }
        rows.push(Row {
            hash: hash.to_string(),
            args,
            long,
        });
    }
    Ok(rows)
}

/// The hash `bench_run` printed (`result hash  0123456789abcdef`).
fn result_hash(stdout: &str) -> Option<&str> {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("result hash"))
        .map(str::trim)
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let mut long = false;
    let mut bench: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--long" => long = true,
            "--bench-run" => {
                bench = Some(PathBuf::from(
                    it.next().context("--bench-run needs a path")?,
                ))
            }
            "-h" | "--help" => {
                println!("usage: cargo xtask hashes [--long] [--bench-run PATH]");
                return Ok(());
            }
            other => bail!("unknown argument {other:?} (usage: cargo xtask hashes [--long] [--bench-run PATH])"),
        }
    }
    let bench = match bench {
        Some(b) => b,
        None => {
            crate::cargo_build_release(root, &["-p", "gresim-benches", "--example", "bench_run"])?;
            crate::bench_peers::target_dir(root).join("release/examples/bench_run")
        }
    };
    let file = root.join("benches/reference-hashes.txt");
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let rows = parse(&text).with_context(|| file.display().to_string())?;
    let mut differ = 0;
    for r in rows.iter().filter(|r| long || !r.long) {
        let out = Command::new(&bench)
            .args(&r.args)
            .output()
            .with_context(|| format!("running {}", bench.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got = result_hash(&stdout).unwrap_or("none");
        if out.status.success() && got == r.hash {
            println!("ok   {}  {}", r.hash, r.args.join(" "));
        } else {
            differ += 1;
            println!("DIFF want {} got {got}  {}", r.hash, r.args.join(" "));
        }
    }
    if differ > 0 {
        println!("{differ} hash(es) differ");
        std::process::exit(1);
    }
    println!("all hashes as in benches/reference-hashes.txt");
    Ok(())
}

#[cfg(test)]
mod tests;
