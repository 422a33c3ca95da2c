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
