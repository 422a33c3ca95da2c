//! The README's example block is what `sim` prints: the command it shows,
//! run from a fresh directory (so the outputs go to `out/mig_packing` as
//! shown), must print the block byte for byte; and the prose's figures for
//! the base run and the dynamic-MIG variant are the table's.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README's example: the command line and the output after it.
fn example() -> (String, String) {
    block_under("## Example")
}

/// The first ``` block starting with `$ ` under `heading`: its command line and output.
fn block_under(heading: &str) -> (String, String) {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find(heading).expect("the section");
    let block = &readme[start..];
    let open = block
        .find("```\n$ ")
        .expect("a ``` block starting with `$ `")
        + 4;
    let len = block[open..].find("```").expect("the block's end");
    let text = &block[open..open + len];
    let (cmd, out) = text.split_once('\n').unwrap();
    (cmd.to_string(), out.to_string())
}

#[test]
fn readme_example_is_real_output() {
    let (cmd, shown) = example();
    assert_eq!(
        cmd,
        "$ cargo run --release --bin sim scenarios/mig_packing.json"
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg(repo().join("scenarios/mig_packing.json"))
        .current_dir(tmp.path())
        .output()
        .expect("sim runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        printed, shown,
        "README.md's example block differs from what sim prints"
    );
}

#[test]
fn readme_prose_quotes_the_table() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let prose: String = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let (_, shown) = example();
    // The base run's summary line: `wait  (s)  n 400  mean 144.7  median 0  p95 1521  max 2140`.
    let wait = shown.lines().find(|l| l.starts_with("wait")).unwrap();
    let w: Vec<&str> = wait.split_whitespace().collect();
    let at = |k: &str| w[w.iter().position(|x| *x == k).unwrap() + 1];
    let mean: f64 = at("mean").parse().unwrap();
    let base = format!("mean wait {} s, p95 {} s", mean.round(), at("p95"));
    assert!(prose.contains(&base), "README prose lacks '{base}'");
    // The dynamic-MIG row: `dynamic-mig  dynamic-mig  49.7  49.7  1  2  0 …`
    // (alloc%, need%, wait mean, wait p95, …).
    let row: Vec<&str> = shown
        .lines()
        .find(|l| l.starts_with("dynamic-mig "))
        .unwrap()
        .split_whitespace()
        .collect();
    let dynamic = format!("mean wait falls to {} s (p95 {} s)", row[4], row[5]);
    assert!(prose.contains(&dynamic), "README prose lacks '{dynamic}'");
}

#[test]
fn readme_shared_cluster_block_is_real_output() {
    let (cmd, shown) = block_under("## Shared clusters");
    assert_eq!(
        cmd,
        "$ cargo run --release --bin sim scenarios/multi_tenant.json"
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg(repo().join("scenarios/multi_tenant.json"))
        .current_dir(tmp.path())
        .output()
        .expect("sim runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        printed, shown,
        "README.md's shared-cluster block differs from what sim prints"
    );
    // The prose quotes the table: no_cap's and the base run's mean waits.
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mean = |name: &str| {
        let l = shown.lines().find(|l| l.starts_with(name)).unwrap();
        l.split_whitespace().nth(4).unwrap().to_string()
    };
    let prose = format!(
        "wait {} s on average instead of {} s",
        mean("no_cap "),
        mean("base ")
    );
    let flat: String = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&prose), "README prose lacks '{prose}'");
}
