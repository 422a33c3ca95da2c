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
fn sbatch_refusals_in_env_lint_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let no_shebang = script_file(d, "a.sh", b"#SBATCH -N1\nsrun hostname\n");
    let binary = script_file(d, "b.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00");
    let nul = script_file(d, "c.sh", b"#!/bin/bash\n#SBATCH -N1\nsrun x\x00y\n");
    let dos = script_file(d, "d.sh", b"#!/bin/bash\r\n#SBATCH -N1\r\n");
    let empty = script_file(d, "e.sh", b"");
    let negative = script_file(d, "f.sh", b"#!/bin/bash\n#SBATCH --gres=gpu:-4\nsrun x\n");
    for (file, loc, msg) in [
        (&no_shebang, ":1:1:", "This does not look like a batch script.  The first\nline must start with #! followed by the path to an interpreter.\nFor instance: #!/bin/sh"),
        (&binary, ":1:1:", "This does not look like a batch script."),
        (&nul, ":3:1:", "does not allow scripts that\ncontain a NULL character '\\0'."),
        (&dos, ":1:1:", "Batch script contains DOS line breaks"),
        (&empty, ":1:1:", "Batch script is empty!"),
        (&negative, ":2:", "Invalid generic resource (gres) specification 'gpu:-4': a negative count"),
    ] {
        for args in [
            vec!["lint", file.as_str()],
            vec!["env", file.as_str(), "--cluster", SITE],
        ] {
            let o = sim(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(&format!("{file}{loc}")), "{args:?}: {err}");
            assert!(err.contains(msg), "{args:?}: {err}");
        }
    }
    // In a scenario's workload, `sim run` refuses it the same way.
    let scen = d.join("s.json");
    std::fs::write(
        &scen,
        serde_json::json!({
            "schema_version": 1,
            "cluster": {"slurm_conf": root().join(SITE)},
            "workload": {"scripts": [{"path": no_shebang}]}
        })
        .to_string(),
    )
    .unwrap();
    let o = sim(&[
        "run",
        scen.to_str().unwrap(),
        "--quiet",
        "-o",
        d.join("out").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("This does not look like a batch script."),
        "{err}"
    );
    assert!(!d.join("out").exists());
}

#[test]
fn lint_finds_contradicting_counts_without_a_cluster_and_impossible_ones_with() {
    let tmp = tempfile::tempdir().unwrap();
    let f = script_file(
        tmp.path(),
        "x.sbatch",
        b"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=8 --gpus-per-task=2\n#SBATCH --gres=gpu:4\nsrun python train.py\n",
    );
    let o = sim(&["lint", &f, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let hit = v
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["rule"] == "gpu-counts-contradict")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(hit["line"], 3);
    assert!(
        hit["message"]
            .as_str()
            .unwrap()
            .contains("--ntasks-per-node=8 × --gpus-per-task=2 needs 16 GPUs per node, but --gres asks for 4 per node"),
        "{hit}"
    );
    // Consistent numbers: no such finding.
    let ok = script_file(
        tmp.path(),
        "y.sbatch",
        b"#!/bin/bash\n#SBATCH --ntasks-per-node=2 --gpus-per-task=2\n#SBATCH --gres=gpu:4\nsrun python train.py\n",
    );
    let o = sim(&["lint", &ok]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("gpu-counts-contradict"));
    // With the site's slurm.conf (4 GPUs per node at most), 8 per node fits nowhere.
    let big = script_file(
        tmp.path(),
        "z.sbatch",
        b"#!/bin/bash\n#SBATCH --gpus-per-node=8\nsrun python train.py\n",
    );
    let o = sim(&["lint", &big, "--cluster", SITE]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(
        t.contains("z.sbatch:2: warning[no-node-fits]: the job needs 8 GPUs on each node, but no node of partition 'gpu' has more than 4"),
        "{t}{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

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
