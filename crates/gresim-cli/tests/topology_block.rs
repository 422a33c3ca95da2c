//! topology/block end to end (docs/topology.md, "topology/block"), a named
//! option beyond Slurm 22.05, unrecorded: topology.conf's `BlockName` and
//! `BlockSizes` in a scenario and beside slurm.conf, the block choice of
//! `eval_nodes_block`, `--segment`, and bad input refused with exit 2 and
//! file:line or the field's path.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

/// 16 nodes in four base blocks of four.
const BLOCKS: [&str; 4] = [
    "BlockName=b1 Nodes=gpu[01-04]",
    "BlockName=b2 Nodes=gpu[05-08]",
    "BlockName=b3 Nodes=gpu[09-12]",
    "BlockName=b4 Nodes=gpu[13-16]",
];

fn scenario(conf: &[&str], plugin: Option<&str>, jobs: Value) -> Value {
    let mut cluster = json!({
        "nodes": [{"names": "gpu[01-16]", "sockets": 2, "cores_per_socket": 8,
                   "memory": "64G", "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}],
        "topology_conf": conf,
    });
    if let Some(p) = plugin {
        cluster["topology_plugin"] = json!(p);
    }
    json!({
        "schema_version": 1,
        "cluster": cluster,
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}],
        "scheduler": {"def_mem_per_cpu": 1000, "sched_interval": 1, "bf_interval": 1},
        "workload": {"jobs": jobs}
    })
}

fn run(dir: &Path, file: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["run", file, "--out", "out", "--quiet"])
        .current_dir(dir)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the sim binary runs")
}

/// Runs `v`; the records, as (name, start, nodes).
fn records(v: &Value) -> Vec<(String, u64, String)> {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("s.json"), v.to_string()).unwrap();
    let o = run(dir.path(), "s.json");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let recs: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(dir.path().join("out/records.json")).unwrap())
            .unwrap();
    recs.iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["start"].as_u64().unwrap(),
                r["nodes"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn job(name: &str, submit: u64, nodes: u32, extra: Value) -> Value {
    let mut j = json!({"name": name, "submit": submit, "nodes": nodes, "gres": "gpu:4",
                       "time": "5:00", "run_time": 100});
    for (k, v) in extra.as_object().unwrap() {
        j[k] = v.clone();
    }
    j
}

/// Blockers until 100 s: free are gpu[02-04] (b1), gpu[06-08] (b2),
/// gpu[09-12] (b3) and gpu16 (b4).
fn with_blockers(more: Value) -> Value {
    let mut jobs = vec![
        job("w1", 0, 1, json!({"nodelist": "gpu01"})),
        job("w2", 0, 1, json!({"nodelist": "gpu05"})),
        job("w3", 0, 3, json!({"nodelist": "gpu[13-15]"})),
    ];
    jobs.push(more);
    json!(jobs)
}

#[test]
fn jobs_go_to_the_smallest_block_that_holds_them_only_with_the_plugin() {
    // Two nodes: b1 and b2 tie at three free nodes, the later one wins.
    let jobs = with_blockers(job("x2", 5, 2, json!({"run_time": 10})));
    let r = records(&scenario(&BLOCKS, Some("topology/block"), jobs.clone()));
    assert_eq!(r[3], ("x2".into(), 5, "gpu[06-07]".into()), "{r:?}");
    // Without the plugin: consecutive node sets, best fit.
    let r = records(&scenario(&BLOCKS, None, jobs));
    assert_eq!(r[3], ("x2".into(), 5, "gpu[02-03]".into()), "{r:?}");

    // Seven nodes need a block of two base blocks, and no pair has seven
    // free: the job waits for the blockers although eleven nodes are free.
    // When w1 ends (the first end at 100 s), b1+b2 hold seven: b1 whole
    // (the fuller base block first), then b2's three.
    let jobs = with_blockers(job("x7", 5, 7, json!({"run_time": 10})));
    let r = records(&scenario(&BLOCKS, Some("topology/block"), jobs.clone()));
    assert_eq!(r[3], ("x7".into(), 100, "gpu[01-04,06-08]".into()), "{r:?}");
    let r = records(&scenario(&BLOCKS, None, jobs));
    assert_eq!(r[3].1, 5, "{r:?}");

    // BlockSizes=4,16: no level of two base blocks, so five nodes may come
    // from any two of the four: b3 (the fullest), then the one with the
    // fewest free nodes that holds the last node, b4.
    let mut sized = BLOCKS.to_vec();
    sized.push("BlockSizes=4,16");
    let jobs = with_blockers(job("x5", 5, 5, json!({"run_time": 10})));
    let r = records(&scenario(&sized, Some("topology/block"), jobs));
    assert_eq!(r[3], ("x5".into(), 5, "gpu[09-12,16]".into()), "{r:?}");
}

#[test]
fn segments_are_each_inside_one_base_block() {
    // Four nodes as two segments of two: b2, then b1.
    let jobs = with_blockers(job("s", 5, 4, json!({"segment": 2, "run_time": 10})));
    let r = records(&scenario(&BLOCKS, Some("topology/block"), jobs));
    assert_eq!(r[3], ("s".into(), 5, "gpu[02-03,06-07]".into()), "{r:?}");
    // Without segments the same job needs one base block: b3.
    let jobs = with_blockers(job("s", 5, 4, json!({"run_time": 10})));
    let r = records(&scenario(&BLOCKS, Some("topology/block"), jobs));
    assert_eq!(r[3], ("s".into(), 5, "gpu[09-12]".into()), "{r:?}");
    // Without the plugin --segment is ignored.
    let jobs = with_blockers(job("s", 5, 4, json!({"segment": 3, "run_time": 10})));
    let r = records(&scenario(&BLOCKS, None, jobs));
    assert_eq!(r[3].1, 5, "{r:?}");
}

/// Exit 2, `error: ` naming every needle, nothing on stdout.
fn assert_bad(dir: &Path, file: &str, needles: &[&str]) {
    let o = run(dir, file);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr:\n{err}");
    assert!(
        err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );
    for n in needles {
        assert!(err.contains(n), "the error should mention {n:?}:\n{err}");
    }
    assert!(o.stdout.is_empty());
    assert!(!dir.join("out").exists());
}

#[test]
fn impossible_segments_and_bad_values_are_refused() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    for (seg, needles) in [
        // Four nodes in segments of three; segments larger than a base
        // block: no node set can ever hold the job.
        (
            json!(3),
            &[
                "workload.jobs[0]",
                "Requested node configuration is not available",
            ][..],
        ),
        (
            json!(8),
            &[
                "workload.jobs[0]",
                "Requested node configuration is not available",
            ][..],
        ),
        (
            json!("two"),
            &[
                "workload.jobs[0].segment",
                "Invalid --segment specification",
            ][..],
        ),
    ] {
        let nodes = if seg == json!(8) { 8 } else { 4 };
        let v = scenario(
            &BLOCKS,
            Some("topology/block"),
            json!([job("s", 0, nodes, json!({"segment": seg}))]),
        );
        fs::write(d.join("s.json"), v.to_string()).unwrap();
        assert_bad(d, "s.json", needles);
    }
}

#[test]
fn topology_conf_beside_slurm_conf_is_read_and_checked() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let conf = |plugin: &str| {
        format!(
            "SelectType=select/cons_tres\nGresTypes=gpu\nTopologyPlugin={plugin}\n\
             NodeName=gpu[01-16] CPUs=16 Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:a100:4\n\
             PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE\n\
             SchedulerParameters=sched_interval=1,bf_interval=1\n"
        )
    };
    fs::write(d.join("slurm.conf"), conf("topology/block")).unwrap();
    let jobs = with_blockers(job("x2", 5, 2, json!({"run_time": 10})));
    let v = json!({"schema_version": 1, "cluster": {"slurm_conf": "slurm.conf"},
                   "workload": {"jobs": jobs}});
    fs::write(d.join("s.json"), v.to_string()).unwrap();
    assert_bad(d, "s.json", &["topology.conf", "cannot read"]);
    fs::write(d.join("topology.conf"), BLOCKS.join("\n")).unwrap();
    let o = run(d, "s.json");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let recs: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(d.join("out/records.json")).unwrap()).unwrap();
    assert_eq!(recs[3]["nodes"], json!("gpu[06-07]"), "{:?}", recs[3]);
    fs::remove_dir_all(d.join("out")).unwrap();
    for (text, needles) in [
        (
            "BlockName=b1 Nodes=gpu[01-08]\nBlockName=b2 Nodes=gpu[09-17]\n",
            &["topology.conf:2", "'gpu17' is not in the cluster"][..],
        ),
        (
            "BlockName=b1 Nodes=gpu[01-08]\nBlockName=b2 Nodes=gpu[08-16]\n",
            &["topology.conf:2", "'gpu08' is already in block b1"][..],
        ),
        (
            "BlockName=b1 Nodes=gpu[01-08]\nBlockName=b2 Nodes=gpu[09-16]\nBlockSizes=8,24\n",
            &[
                "topology.conf:3",
                "BlockSizes=8,24",
                "power-of-two multiple",
            ][..],
        ),
        (
            "BlockName=b1 Nodes=gpu[01-08]\nBlockName=b2 Nodes=gpu[09-12]\n",
            &["topology.conf:2", "fewer than the base block size 8"][..],
        ),
        (
            "SwitchName=s1 Nodes=gpu[01-16]\n",
            &["slurm.conf:3", "topology/block needs BlockName= lines"][..],
        ),
    ] {
        fs::write(d.join("topology.conf"), text).unwrap();
        assert_bad(d, "s.json", needles);
    }
    // topology/tree with a block file.
    fs::write(d.join("slurm.conf"), conf("topology/tree")).unwrap();
    fs::write(d.join("topology.conf"), BLOCKS.join("\n")).unwrap();
    assert_bad(
        d,
        "s.json",
        &["slurm.conf:3", "topology/tree needs SwitchName= lines"],
    );
}

#[test]
fn a_scenario_block_conf_names_its_line_and_its_plugin() {
    let dir = TempDir::new().unwrap();
    let mut conf = BLOCKS.to_vec();
    conf.push("BlockSizes=4,8,12");
    let v = scenario(
        &conf,
        Some("topology/block"),
        json!([job("x", 0, 1, json!({}))]),
    );
    fs::write(dir.path().join("s.json"), v.to_string()).unwrap();
    assert_bad(
        dir.path(),
        "s.json",
        &["s.json#cluster.topology_conf:5", "BlockSizes=4,8,12"],
    );
    let v = scenario(
        &BLOCKS,
        Some("topology/tree"),
        json!([job("x", 0, 1, json!({}))]),
    );
    fs::write(dir.path().join("s.json"), v.to_string()).unwrap();
    assert_bad(
        dir.path(),
        "s.json",
        &[
            "cluster.topology_plugin",
            "topology/tree needs SwitchName= lines",
        ],
    );
}
