//! Slurm's topology/tree end to end (docs/topology.md, "Slurm's
//! topology/tree"): topology.conf beside slurm.conf and in a scenario, the
//! leaf choice of `_eval_nodes_topo`, `--switches` waiting and then giving
//! up, and bad topology.conf files refused with exit 2 and file:line.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

/// The conformance cases' tree: 8 nodes under leaves of 3, 2 and 3 nodes.
const TREE: [&str; 4] = [
    "SwitchName=s1 Nodes=gpu[01-03]",
    "SwitchName=s2 Nodes=gpu[04-05]",
    "SwitchName=s3 Nodes=gpu[06-08]",
    "SwitchName=s0 Switches=s[1-3]",
];

fn scenario(tree: &[&str], plugin: Option<&str>, jobs: Value) -> Value {
    let mut cluster = json!({
        "nodes": [{"names": "gpu[01-08]", "sockets": 2, "cores_per_socket": 8,
                   "memory": "64G", "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}],
        "topology_conf": tree,
    });
    if let Some(p) = plugin {
        cluster["topology_plugin"] = json!(p);
    }
    json!({
        "schema_version": 1,
        "cluster": cluster,
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}],
        // Passes every second, as in the recorded cases.
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

/// Runs `file` in `dir`, which must succeed; its records as JSON.
fn run_ok(dir: &Path, file: &str) -> Vec<Value> {
    let o = run(dir, file);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&fs::read_to_string(dir.join("out/records.json")).unwrap()).unwrap()
}

/// Runs `v`; the records, as (name, start, nodes).
fn records(v: &Value) -> Vec<(String, u64, String)> {
    let dir = TempDir::new().unwrap();
    fs::write(dir.path().join("s.json"), v.to_string()).unwrap();
    run_ok(dir.path(), "s.json")
        .iter()
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
                       "time": "1:00", "run_time": 30});
    for (k, v) in extra.as_object().unwrap() {
        j[k] = v.clone();
    }
    j
}

/// Blockers leave one free node under each leaf (gpu03, gpu05, gpu08).
fn blockers() -> Vec<Value> {
    vec![
        job("w1", 0, 2, json!({"nodelist": "gpu[01-02]"})),
        job("w2", 0, 1, json!({"nodelist": "gpu04"})),
        job("w3", 0, 2, json!({"nodelist": "gpu[06-07]"})),
    ]
}

#[test]
fn a_two_node_job_goes_under_one_leaf_only_with_the_plugin() {
    // gpu01-02 and gpu06 busy: free gpu03 | gpu04-05 | gpu07-08.
    let jobs = json!([
        job(
            "w1",
            0,
            2,
            json!({"nodelist": "gpu[01-02]", "run_time": 100})
        ),
        job("w2", 0, 1, json!({"nodelist": "gpu06", "run_time": 100})),
        job("x1", 5, 2, json!({}))
    ]);
    let tree = records(&scenario(&TREE, Some("topology/tree"), jobs.clone()));
    assert_eq!(tree[2], ("x1".into(), 5, "gpu[04-05]".into()), "{tree:?}");
    let plain = records(&scenario(&TREE, None, jobs));
    assert_eq!(plain[2], ("x1".into(), 5, "gpu[07-08]".into()), "{plain:?}");
}

#[test]
fn switches_wait_for_one_leaf_then_give_up() {
    let mut jobs = blockers();
    // Fits now only across two leaves: waits 12 s, then takes two.
    jobs.push(job(
        "e1",
        2,
        2,
        json!({"switches": "1@0:12", "run_time": 10}),
    ));
    // Waits longer than the blockers run: starts under one leaf at 30.
    jobs.push(job(
        "s1",
        4,
        2,
        json!({"switches": "1@1:00", "run_time": 10}),
    ));
    let r = records(&scenario(&TREE, Some("topology/tree"), json!(jobs)));
    assert_eq!(r[3], ("e1".into(), 14, "gpu[03,05]".into()), "{r:?}");
    assert_eq!(r[4].1, 30, "{r:?}");
    assert!(r[4].2 == "gpu[04-05]" || r[4].2 == "gpu[01-02]", "{r:?}");
    // max_switch_wait caps the wait: 5 s instead of 12.
    let mut v = scenario(&TREE, Some("topology/tree"), json!(jobs));
    v["scheduler"]["max_switch_wait"] = json!(5);
    let r = records(&v);
    assert_eq!(r[3].1, 7, "{r:?}");
    // Without the plugin --switches is ignored: e1 starts at once.
    let r = records(&scenario(&TREE, None, json!(jobs)));
    assert_eq!(r[3].1, 2, "{r:?}");
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
fn topology_conf_beside_slurm_conf_is_read_and_checked() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    fs::write(
        d.join("slurm.conf"),
        "SelectType=select/cons_tres\nGresTypes=gpu\nTopologyPlugin=topology/tree\n\
         NodeName=gpu[01-08] CPUs=16 Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:a100:4\n\
         PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE\n\
         SchedulerParameters=sched_interval=1,bf_interval=1\n",
    )
    .unwrap();
    let mut jobs = blockers();
    jobs.push(job(
        "e1",
        2,
        2,
        json!({"switches": "1@0:12", "run_time": 10}),
    ));
    let v = json!({"schema_version": 1, "cluster": {"slurm_conf": "slurm.conf"},
                   "workload": {"jobs": jobs}});
    fs::write(d.join("s.json"), v.to_string()).unwrap();
    // No topology.conf: topology/tree cannot start.
    assert_bad(d, "s.json", &["topology.conf", "cannot read"]);
    fs::write(d.join("topology.conf"), TREE.join("\n")).unwrap();
    let recs = run_ok(d, "s.json");
    assert_eq!(recs[3]["start"], json!(14), "{:?}", recs[3]);
    fs::remove_dir_all(d.join("out")).unwrap();
    // An unknown node, a loop, an unknown child: file:line.
    for (text, needles) in [
        (
            "SwitchName=s1 Nodes=gpu[01-04]\nSwitchName=s2 Nodes=gpu[05-09]\n",
            &["topology.conf:2", "'gpu09' is not in the cluster"][..],
        ),
        (
            "SwitchName=s1 Nodes=gpu[01-08]\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n",
            &["topology.conf:2", "not a tree"][..],
        ),
        (
            "SwitchName=s1 Nodes=gpu[01-08]\nSwitchName=t Switches=s1,s7\n",
            &["topology.conf:2", "invalid child (s7)"][..],
        ),
    ] {
        fs::write(d.join("topology.conf"), text).unwrap();
        assert_bad(d, "s.json", needles);
    }
}

#[test]
fn a_scenario_topology_conf_with_a_loop_names_its_line() {
    let dir = TempDir::new().unwrap();
    let v = scenario(
        &[
            "SwitchName=s1 Nodes=gpu[01-08]",
            "SwitchName=a Switches=b",
            "SwitchName=b Switches=a",
        ],
        Some("topology/tree"),
        json!([job("x", 0, 1, json!({}))]),
    );
    fs::write(dir.path().join("s.json"), v.to_string()).unwrap();
    assert_bad(
        dir.path(),
        "s.json",
        &["s.json#cluster.topology_conf:2", "not a tree"],
    );
    // fabric.leaves beside topology_conf: one source of leaves only.
    let mut v = scenario(&TREE, None, json!([job("x", 0, 1, json!({}))]));
    v["cluster"]["fabric"] = json!({"leaves": {"l": "gpu[01-08]"}});
    fs::write(dir.path().join("s.json"), v.to_string()).unwrap();
    assert_bad(
        dir.path(),
        "s.json",
        &["cluster.fabric.leaves", "topology_conf"],
    );
}
