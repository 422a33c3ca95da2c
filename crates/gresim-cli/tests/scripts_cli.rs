//! `sim env` and `sim lint` on the seed scripts, as a user runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("the sim binary runs")
}

const CLUSTER: &str = "scenarios/scripts/cluster.json";

#[test]
fn env_table_pattern1() {
    let o = sim(&[
        "env",
        "scenarios/scripts/ddp_srun.sbatch",
        "--cluster",
        CLUSTER,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("SLURM_JOB_NODELIST=a100-[01-02]  SLURM_JOB_NUM_NODES=2  SLURM_NTASKS=8  SLURM_TASKS_PER_NODE=4(x2)"), "{t}");
    assert!(t.contains("MASTER_ADDR=a100-01"), "{t}");
    let rows: Vec<&str> = t.lines().filter(|l| l.starts_with("a100-0")).collect();
    assert_eq!(rows.len(), 8, "{t}");
    assert!(
        rows[7]
            .split_whitespace()
            .eq(["a100-02", "7", "3", "1", "4", "3", "3", "3"]),
        "{}",
        rows[7]
    );
}

#[test]
fn env_json_pattern2_constrained() {
    let o = sim(&[
        "env",
        "scenarios/scripts/fsdp_torchrun.sbatch",
        "--cluster",
        CLUSTER,
        "--constrain-devices",
        "--format",
        "json",
        "--",
        "--gpus-per-node=a100:4",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["launcher"], "torchrun");
    assert_eq!(v["SLURM_NTASKS"], 2);
    assert_eq!(
        v["notes"].as_array().map(Vec::len),
        Some(0),
        "typed on every option: no note"
    );
    let t1 = &v["tasks"][1];
    assert_eq!(t1["node"], "a100-02");
    assert_eq!(t1["nproc_per_node"], 4);
    assert_eq!(t1["worker_ranks"], serde_json::json!([4, 5, 6, 7]));
    assert_eq!(t1["env"]["CUDA_VISIBLE_DEVICES"], "0,1,2,3");
    assert_eq!(t1["env"]["SLURM_NODEID"], "1");
}

#[test]
fn lint_exit_codes() {
    let o = sim(&["lint", "scenarios/scripts/deepspeed_zero3.sbatch"]);
    assert_eq!(o.status.code(), Some(0));
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("deepspeed_zero3.sbatch:5: warning[no-master-addr]"),
        "{t}"
    );
    assert!(
        t.contains("fix: before the launch: export MASTER_ADDR="),
        "{t}"
    );
    let o = sim(&[
        "lint",
        "scenarios/scripts/deepspeed_zero3.sbatch",
        "--deny-warnings",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let o = sim(&[
        "lint",
        "scenarios/scripts/fsdp_h100.sbatch",
        "--cluster",
        CLUSTER,
        "--deny-warnings",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = sim(&[
        "lint",
        "scenarios/scripts/ddp_srun.sbatch",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v[0]["rule"], "gpu-request-mixed");
    assert_eq!(v[0]["line"], 7);
}

#[test]
fn bad_input_exits_2() {
    let o = sim(&["lint", "scenarios/scripts/nope.sbatch"]);
    assert_eq!(o.status.code(), Some(2));
    let o = sim(&[
        "env",
        "scenarios/scripts/ddp_srun.sbatch",
        "--cluster",
        CLUSTER,
        "--",
        "--time=1:xx",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Invalid --time specification"));
    // Too big for the cluster: sbatch would refuse it.
    let o = sim(&[
        "env",
        "scenarios/scripts/ddp_srun.sbatch",
        "--cluster",
        CLUSTER,
        "--",
        "--nodes=9",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("does not fit"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A script written to a temporary file.
fn script_file(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

const SITE: &str = "crates/gresim-io/tests/data/site/slurm.conf";

#[test]
fn a_sites_slurm_conf_is_a_cluster_for_env_lint_run_and_compare() {
    // env: the site's nodes, GPUs from gres.conf beside slurm.conf.
    let o = sim(&[
        "env",
        "scenarios/scripts/ddp_srun.sbatch",
        "--cluster",
        SITE,
    ]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(t.contains("SLURM_JOB_NODELIST=a[1-2]"), "{t}");
    // lint: the partition and types are checked against it.
    let o = sim(&[
        "lint",
        "scenarios/scripts/ddp_srun.sbatch",
        "--cluster",
        SITE,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // run: slurm.conf plus a sacct dump, no scenario file; the format is
    // told from the trace's first line.
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let o = sim(&[
        "run",
        "--cluster",
        SITE,
        "--trace",
        "crates/gresim-io/tests/data/traces/small.sacct",
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON summary");
    assert_eq!(s["scenario"], "small", "{s}");
    assert!(s["jobs"].as_u64().unwrap() > 0, "{s}");
    // The same as the one-line wrapper scenario in gresim-io's test data
    // (whose scheduler block sets bf_interval; without it, the same jobs).
    let o2 = sim(&[
        "run",
        "crates/gresim-io/tests/data/scenario_slurmconf.json",
        "--format",
        "json",
        "-o",
        tmp.path().join("wrapped").to_str().unwrap(),
    ]);
    let s2: serde_json::Value = serde_json::from_slice(&o2.stdout).expect("JSON summary");
    assert_eq!(s["jobs"], s2["jobs"]);
    // compare: the same inputs, two policies.
    let o = sim(&[
        "compare",
        "--cluster",
        SITE,
        "--trace",
        "crates/gresim-io/tests/data/traces/small.sacct",
        "--policies",
        "slurm,fifo",
        "--quiet",
        "-o",
        tmp.path().join("cmp").to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(tmp.path().join("cmp/fifo").is_dir());
    // A scenario's cluster replaced by the slurm.conf, its workload by the trace.
    let o = sim(&[
        "run",
        "scenarios/mixed_a100_h100.json",
        "--cluster",
        SITE,
        "--trace",
        "crates/gresim-io/tests/data/traces/small.sacct",
        "--quiet",
        "-o",
        tmp.path().join("mixed").to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A scenario whose cluster is a slurm.conf, on another scenario's cluster.
    let o = sim(&[
        "run",
        "crates/gresim-io/tests/data/scenario_slurmconf.json",
        "--cluster",
        CLUSTER,
        "--quiet",
        "-o",
        tmp.path().join("json-cluster").to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A replaced cluster that the scenario's jobs do not fit: file and field are named.
    let o = sim(&[
        "run",
        "scenarios/admin_events.json",
        "--cluster",
        SITE,
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("admin_events.jsonl: at jobs[0].gres: unknown GPU type 'v100'"),
        "{err}"
    );
    // Errors name the file and line: a broken slurm.conf.
    let bad = tmp.path().join("slurm.conf");
    std::fs::write(&bad, "ClusterName=x\nNodeName=n1 CPUs=lots\n").unwrap();
    let o = sim(&[
        "env",
        "scenarios/scripts/ddp_srun.sbatch",
        "--cluster",
        bad.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(&format!("{}:2", bad.display())), "{err}");
    // A slurm.conf alone has no jobs to run.
    let o = sim(&["run", "--cluster", SITE]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --trace"));
    // An unknown trace format is named.
    let o = sim(&["run", "--cluster", SITE, "--trace", SITE]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--trace-format"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
