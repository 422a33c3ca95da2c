//! The engine is single-threaded; outputs must not depend on the thread
//! pool either. Two `sim run` processes with RAYON_NUM_THREADS=1 and =2 give
//! byte-identical outputs, on a synthetic workload and on the failure soak.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const OUTPUT_FILES: [&str; 5] = [
    "records.json",
    "records.csv",
    "summary.json",
    "utilization.svg",
    "run.json",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(scenario: &Path, out: &Path, threads: &str) -> Vec<(String, Vec<u8>)> {
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("run")
        .arg(scenario)
        .arg("--out")
        .arg(out)
        .arg("--quiet")
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("the sim binary runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "sim failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    OUTPUT_FILES
        .iter()
        .map(|f| {
            let p = out.join(f);
            let b = fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
            (f.to_string(), b)
        })
        .collect()
}

fn same_with_1_and_2_threads(scenario: &Path) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let a = run(scenario, &tmp.path().join("t1"), "1");
    let b = run(scenario, &tmp.path().join("t2"), "2");
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(!x.is_empty(), "{name} is empty");
        assert!(
            x == y,
            "{name} differs between 1 and 2 threads for {}",
            scenario.display()
        );
    }
}

#[test]
fn failure_soak_is_identical_with_1_and_2_threads() {
    same_with_1_and_2_threads(&repo().join("scenarios/soak_failures.json"));
}

#[test]
fn mixed_cluster_is_identical_with_1_and_2_threads() {
    same_with_1_and_2_threads(&repo().join("scenarios/mixed_a100_h100.json"));
}
