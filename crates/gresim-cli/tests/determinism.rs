//! The same scenario and seed give byte-identical outputs, run after run;
//! another seed gives another workload.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use tempfile::TempDir;

const OUTPUT_FILES: [&str; 5] = [
    "records.json",
    "records.csv",
    "summary.json",
    "utilization.svg",
    "run.json",
];

/// ~300 synthetic jobs on a small cluster with whole A100s, whole H100s and
/// A100s split into MIG instances (three GRES types, two GPU models).
fn scenario() -> Value {
    json!({
        "schema_version": 1,
        "name": "determinism",
        "seed": 11,
        "cluster": {
            "node_templates": {
                "a100": {
                    "sockets": 2, "cores_per_socket": 16, "threads_per_core": 2, "memory": "512G",
                    "gpus": [
                        {"model": "A100-SXM4-80GB", "count": 2, "socket": 0},
                        {"model": "A100-SXM4-80GB", "count": 2, "socket": 1}
                    ]
                }
            },
            "nodes": [
                {"names": "a100n[01-02]", "template": "a100"},
                {"names": "h100n01", "sockets": 2, "cores_per_socket": 16, "memory": "512G",
                 "gpus": [{"model": "H100-SXM5-80GB", "count": 4}]},
                {"names": "mig01", "template": "a100",
                 "gpus": [
                     {"model": "A100-SXM4-80GB", "count": 2, "socket": 0,
                      "mig": ["1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"]},
                     {"model": "A100-SXM4-80GB", "count": 2, "socket": 1,
                      "mig": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}
                 ]}
            ]
        },
        "partitions": [
            {"name": "gpu", "nodes": "ALL", "default": true, "max_time": "1-00:00:00"}
        ],
        "scheduler": {"policy": "fifo", "def_mem_per_cpu": "2G", "sched_interval": 30},
        "workload": {
            "synthetic": {
                "jobs": 300,
                "mean_interarrival": 40,
                "run_time_median": 900,
                "run_time_sigma": 1.0,
                "run_time_max": 14400,
                "time_limit_factor": 1.5,
                "runs_to_limit_share": 0.1,
                "users": 6,
                "mix": [
                    {"name": "infer-1g", "weight": 4, "gpus": 1, "type": "a100_1g.10gb", "cpus_per_gpu": 2, "mem_per_gpu": "16G"},
                    {"name": "infer-3g", "weight": 1, "gpus": 1, "type": "a100_3g.40gb", "cpus_per_gpu": 4, "mem_per_gpu": "32G"},
                    {"name": "a100-2", "weight": 2, "gpus": 2, "type": "a100", "cpus_per_gpu": 4, "mem_per_gpu": "32G"},
                    {"name": "h100-4", "weight": 1, "gpus": 4, "type": "h100", "cpus_per_gpu": 4},
                    {"name": "any-1", "weight": 2, "gpus": 1, "cpus_per_gpu": 2},
                    {"name": "ddp", "weight": 1, "gpus": 4, "type": "a100", "nodes": 2, "cpus_per_gpu": 2},
                    {"name": "cpu", "weight": 1, "cpus": 4, "mem": "8G"}
                ]
            }
        }
    })
}

fn run(dir: &Path, scenario: &Path, out: &Path, seed: Option<&str>) {
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("run"),
        scenario.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
        OsStr::new("--quiet"),
    ];
    if let Some(s) = seed {
        args.push(OsStr::new("--seed"));
        args.push(OsStr::new(s));
    }
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(&args)
        .current_dir(dir)
        .output()
        .expect("the sim binary runs");
    assert_eq!(
        o.status.code(),
        Some(0),
        "sim failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn outputs(dir: &Path) -> Vec<(&'static str, Vec<u8>)> {
    OUTPUT_FILES
        .iter()
        .map(|f| {
            let p = dir.join(f);
            (
                *f,
                fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display())),
            )
        })
        .collect()
}

/// Where two byte strings first differ, for a readable failure.
fn first_difference(a: &[u8], b: &[u8]) -> String {
    let i = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let around = |s: &[u8]| {
        String::from_utf8_lossy(&s[i.saturating_sub(60)..(i + 60).min(s.len())]).into_owned()
    };
    format!(
        "byte {i} (lengths {} and {}):\n  {}\n  {}",
        a.len(),
        b.len(),
        around(a),
        around(b)
    )
}

#[test]
fn same_scenario_and_seed_give_identical_outputs() {
    let tmp = TempDir::new().expect("a temporary directory");
    let path = tmp.path().join("determinism.json");
    fs::write(&path, serde_json::to_string_pretty(&scenario()).unwrap()).unwrap();
    let (a, b) = (tmp.path().join("out_a"), tmp.path().join("nested/out_b"));
    run(tmp.path(), &path, &a, Some("7"));
    run(tmp.path(), &path, &b, Some("7"));
    let (oa, ob) = (outputs(&a), outputs(&b));
    for ((name, x), (_, y)) in oa.iter().zip(&ob) {
        assert!(
            x == y,
            "{name} differs between two identical runs at {}",
            first_difference(x, y)
        );
    }

    // The workload is the one asked for: 300 jobs, and the MIG and H100
    // types were all used.
    let summary: Value = serde_json::from_slice(&oa[2].1).expect("summary.json is JSON");
    assert_eq!(summary["jobs"], json!(300), "{summary}");
    let by_type = &summary["gpu_utilization_by_type"];
    for ty in ["a100", "h100", "a100_1g.10gb", "a100_3g.40gb"] {
        let u = by_type[ty].as_f64();
        assert!(
            u.is_some_and(|u| u > 0.0),
            "GPU type {ty} unused: {by_type}"
        );
    }
}

#[test]
fn a_different_seed_gives_different_records() {
    let tmp = TempDir::new().expect("a temporary directory");
    let path = tmp.path().join("determinism.json");
    fs::write(&path, serde_json::to_string_pretty(&scenario()).unwrap()).unwrap();
    let (a, b, c) = (
        tmp.path().join("seed7"),
        tmp.path().join("seed8"),
        tmp.path().join("seed_default"),
    );
    run(tmp.path(), &path, &a, Some("7"));
    run(tmp.path(), &path, &b, Some("8"));
    run(tmp.path(), &path, &c, None);
    let (oa, ob, oc) = (outputs(&a), outputs(&b), outputs(&c));
    assert_ne!(
        oa[0].1, ob[0].1,
        "records.json is the same for seeds 7 and 8"
    );
    assert_ne!(
        oa[1].1, ob[1].1,
        "records.csv is the same for seeds 7 and 8"
    );
    // The scenario's own seed (11) is a third workload.
    assert_ne!(oa[0].1, oc[0].1, "seed 7 and the scenario's seed 11 agree");
    // And `--seed 11` is the scenario's seed.
    let d = tmp.path().join("seed11");
    run(tmp.path(), &path, &d, Some("11"));
    assert!(
        outputs(&c) == outputs(&d),
        "--seed 11 differs from the scenario's seed 11"
    );
}
