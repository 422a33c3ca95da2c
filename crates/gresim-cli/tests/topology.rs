//! Acceptance tests of the topology model: hand-computed bandwidths and
//! times (the arithmetic is in the comments), the scenarios in
//! scenarios/, and `sim compare` runs being identical to runs alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use gresim_engine::SimOutput;
use gresim_model::comm::placement_cost;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_text(text: &str, policy: &str) -> SimOutput {
    let sc = gresim_io::parse_scenario(&root().join("scenarios/inline.json"), text)
        .expect("valid scenario");
    let p = policy
        .parse::<gresim_sched::PolicyKind>()
        .expect("policy")
        .build();
    gresim_engine::run(sc.sim_input(sc.seed), p).expect("runs")
}

fn run_file(name: &str, policy: &str) -> SimOutput {
    let sc =
        gresim_io::load_scenario(&root().join("scenarios").join(name)).expect("valid scenario");
    let p = policy
        .parse::<gresim_sched::PolicyKind>()
        .expect("policy")
        .build();
    gresim_engine::run(sc.sim_input(sc.seed), p).expect("runs")
}

/// (name, run seconds, bottleneck GB/s) of every job's last run.
fn runs(out: &SimOutput) -> Vec<(String, u64, Option<f64>, Vec<usize>)> {
    out.jobs
        .iter()
        .map(|j| {
            let r = j.runs.last().expect("ran");
            let c = placement_cost(
                &out.cluster,
                &r.alloc,
                out.specs[j.sub as usize].comm.as_deref(),
            );
            (
                out.specs[j.sub as usize].key.clone(),
                r.end.expect("ended") - r.start,
                c.bottleneck_gbs,
                r.alloc.nodes.iter().map(|n| n.node.idx()).collect(),
            )
        })
        .collect()
}

/// The seed's "misconfigured networking can slow training by 10×".
/// Two DGX H100 nodes per job, 16 GPUs, ring all-reduce of B = 10 GB:
/// 2(n−1)/n = 2·15/16 = 1.875, latency term 2(n−1)·α = 30·α.
/// * IB verbs: 8 rails × 400 Gb/s = 3200 Gb/s = 400 GB/s per node (NVSwitch
///   900 GB/s inside): T = 1.875·10e9/400e9 + 30·5 µs = 0.046875 + 0.00015
///   = 0.047025 s; run = 2000·(0.115 + 0.047025) = 324.05 → 325 s.
/// * NCCL_IB_DISABLE=1, sockets over ib0 at 200 Gb/s = 25 GB/s:
///   T = 1.875·0.4 + 30·50 µs = 0.75 + 0.0015 = 0.7515 s; run = 2000·0.8665 = 1733 s.
/// * and NCCL_SOCKET_IFNAME=eth0 at 100 Gb/s = 12.5 GB/s: T = 1.5 + 0.0015
///   = 1.5015 s; run = 2000·1.6165 = 3233 s: 3233/325 = 9.9× slower.
#[test]
fn nccl_misconfig_slows_training_ten_times() {
    let out = run_file("nccl_misconfig.json", "slurm");
    let r = runs(&out);
    let get = |k: &str| r.iter().find(|x| x.0 == k).expect("job").clone();
    let (ib, ipoib, eth) = (get("ib"), get("ipoib"), get("eth0"));
    assert_eq!(ib.1, 325);
    assert!(ipoib.1.abs_diff(1733) <= 1, "{}", ipoib.1);
    assert!(eth.1.abs_diff(3233) <= 1, "{}", eth.1);
    assert_eq!(ib.2, Some(400.0));
    assert_eq!(ipoib.2, Some(25.0));
    assert_eq!(eth.2, Some(12.5));
    let ratio = eth.1 as f64 / ib.1 as f64;
    assert!((9.5..10.5).contains(&ratio), "{ratio}");
}

const WORKSTATION: &str = r#"{
  "schema_version": 1, "name": "ws",
  "cluster": {
    "node_templates": {"ws": {"sockets": 1, "cores_per_socket": 8, "memory": "64G",
      "gpus": [{"model": "A100-SXM4-80GB", "count": 4, "socket": 0}],
      "topology": "workstation-4gpu-nvlink"}},
    "nodes": [{"names": "ws1", "template": "ws"}]
  },
  "workload": {"jobs": [
    {"id": "single", "submit": 0, "gres": "gpu:1", "mem": "1G", "run_time": 5000},
    {"id": "pair", "submit": 10, "gres": "gpu:2", "mem": "1G", "run_time": 1000,
     "comm": {"fraction": 0.5}}
  ]}
}"#;

/// A workstation with NVLink pairs {0,1}, {2,3} (12 links × 50 = 600 GB/s)
/// and PCIe Gen4 x16 (32 GB/s) otherwise. A 1-GPU job holds GPU 0; then a
/// 2-GPU job that spends half its ideal run time in all-reduce (1 GB).
/// * slurm (lowest free indices) gives it GPUs 1, 2: a 2-ring over PCIe,
///   each direction one flow, 32 GB/s; T = 2·½·1e9/32e9 + 2·1 µs (two PCIe
///   hops of 0.5 µs) = 0.031252 s. Ideal: NVLink, 1e9/600e9 + 2·0.5 µs =
///   0.0016677 s. Ratio 18.740; run = ⌈1000·(0.5 + 0.5·18.740)⌉ = 9870 s.
/// * topology-aware gives it GPUs 2, 3 (NVLink): exactly 1000 s.
#[test]
fn nvlink_pair_versus_pcie_pair() {
    let s = runs(&run_text(WORKSTATION, "slurm"));
    let t = runs(&run_text(WORKSTATION, "topology-aware"));
    assert_eq!(s[1].2, Some(32.0));
    assert!(s[1].1.abs_diff(9870) <= 1, "{}", s[1].1);
    assert_eq!(t[1].2, Some(600.0));
    assert_eq!(t[1].1, 1000);
    // The job without a profile keeps its run time exactly.
    assert_eq!((s[0].1, t[0].1), (5000, 5000));
}

const POD: &str = r#"{
  "schema_version": 1, "name": "pod",
  "cluster": {
    "node_templates": {"dgx": {"sockets": 2, "cores_per_socket": 64, "memory": "1000G",
      "gpus": [{"model": "A100-SXM4-80GB", "count": 4, "socket": 0}, {"model": "A100-SXM4-80GB", "count": 4, "socket": 1}],
      "topology": "dgx-a100"}},
    "nodes": [{"names": "dgx[1-4]", "template": "dgx"}],
    "fabric": {"leaves": {"a": "dgx[1,3]", "b": "dgx[2,4]"}, "oversubscription": 2}
  },
  "workload": {"jobs": [
    {"id": "hog", "submit": 0, "nodes": 1, "gres": "gpu:8", "exclusive": true, "nodelist": "dgx2", "run_time": 5000},
    {"id": "train", "submit": 10, "nodes": 2, "gres": "gpu:8", "exclusive": true,
     "comm": {"steps": 1000, "compute_per_step": 0.05, "bytes_per_step": "2GB"}}
  ]}
}"#;

/// Four DGX A100 (8 × HDR 200 Gb/s = 200 GB/s per node), leaves {1,3} and
/// {2,4}, 2:1 oversubscribed. dgx2 is busy; a 2-node job, 16 GPUs, 2 GB per
/// step: 1.875·B/b + 30·5 µs.
/// * slurm takes dgx3 + dgx4 (cons_tres prefers consecutive nodes), across leaves: b = 200/2 =
///   100 GB/s; T = 0.0375 + 0.00015 = 0.03765; run = 1000·0.08765 = 87.65 → 88 s.
/// * topology-aware takes dgx1 + dgx3 under one leaf: b = 200 GB/s;
///   T = 0.01875 + 0.00015 = 0.0189; run = 1000·0.0689 = 68.9 → 69 s.
#[test]
fn multi_node_job_under_one_leaf() {
    let s = runs(&run_text(POD, "slurm"));
    let t = runs(&run_text(POD, "topology-aware"));
    assert_eq!(s[1].3, vec![2, 3]);
    assert_eq!(s[1].2, Some(100.0));
    assert_eq!(s[1].1, 88);
    assert_eq!(t[1].3, vec![0, 2]);
    assert_eq!(t[1].2, Some(200.0));
    assert_eq!(t[1].1, 69);
}

fn mean_jct(out: &SimOutput, comm_only: bool) -> f64 {
    let v: Vec<u64> = out
        .jobs
        .iter()
        .filter(|j| !comm_only || out.specs[j.sub as usize].comm.is_some())
        .filter_map(|j| Some(j.runs.last()?.end? - j.first_submit))
        .collect();
    v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
}

/// scenarios/topology_4node.json: topology-aware shortens the mean JCT of
/// the communication-heavy jobs by more than half, and places them all ideally.
#[test]
fn topology_aware_shortens_jct_on_four_workstations() {
    let s = run_file("topology_4node.json", "slurm");
    let t = run_file("topology_4node.json", "topology-aware");
    let (js, jt) = (mean_jct(&s, true), mean_jct(&t, true));
    assert!(jt < js / 2.0, "slurm {js} topology-aware {jt}");
    let p = gresim_report::placement::summary(&t).expect("topology model");
    assert_eq!(p.placed_ideally, p.multi_gpu_jobs);
    let ps = gresim_report::placement::summary(&s).expect("topology model");
    assert!(ps.placed_ideally < ps.multi_gpu_jobs);
    assert!(ps.gpu_hours_lost > 0.0 && p.gpu_hours_lost == 0.0);
}

/// scenarios/dgx_pod_fabric.json runs under every policy; topology-aware
/// spans fewer leaves with its multi-node jobs than first-fit.
#[test]
fn dgx_pod_runs_under_every_policy() {
    let leaves = |out: &SimOutput| -> u32 {
        out.jobs
            .iter()
            .filter_map(|j| {
                let r = j.runs.last()?;
                (r.alloc.nodes.len() >= 2)
                    .then(|| placement_cost(&out.cluster, &r.alloc, None).leaves - 1)
            })
            .sum()
    };
    let t = run_file("dgx_pod_fabric.json", "topology-aware");
    let f = run_file("dgx_pod_fabric.json", "first-fit");
    assert!(leaves(&t) < leaves(&f), "{} vs {}", leaves(&t), leaves(&f));
    for p in ["slurm", "best-fit", "spread"] {
        let o = run_file("dgx_pod_fabric.json", p);
        assert!(o.jobs.iter().all(|j| j.state.is_terminal()), "{p}");
    }
}

/// `sim compare` runs the policies in parallel; each one's records and
/// summary are byte-identical to `sim run --policy P` alone.
#[test]
fn compare_runs_match_runs_alone() {
    let dir = tempfile::tempdir().expect("tmp");
    let sim = env!("CARGO_BIN_EXE_sim");
    let scen = root().join("scenarios/topology_4node.json");
    let cmp = dir.path().join("cmp");
    let st = Command::new(sim)
        .args([
            "compare",
            scen.to_str().expect("utf8"),
            "--policies",
            "slurm,best-fit,topology-aware",
            "--quiet",
            "--out",
        ])
        .arg(&cmp)
        .status()
        .expect("runs");
    assert!(st.success());
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(cmp.join("compare.json")).expect("compare.json"),
    )
    .expect("json");
    assert_eq!(json["policies"].as_array().map(Vec::len), Some(3));
    assert!(std::fs::read_to_string(cmp.join("compare.svg"))
        .expect("svg")
        .starts_with("<svg"));
    for p in ["slurm", "best-fit", "topology-aware"] {
        let alone = dir.path().join(p);
        let st = Command::new(sim)
            .args([
                "run",
                scen.to_str().expect("utf8"),
                "--quiet",
                "--policy",
                p,
                "--out",
            ])
            .arg(&alone)
            .status()
            .expect("runs");
        assert!(st.success());
        for f in ["records.json", "summary.json"] {
            let a = std::fs::read(alone.join(f)).expect("alone");
            let b = std::fs::read(cmp.join(p).join(f)).expect("compare");
            assert!(a == b, "{p}/{f} differs");
        }
    }
}

/// Bad topology and fabric input are errors naming the field.
#[test]
fn bad_topology_input_is_rejected() {
    for (from, to, want) in [
        (
            "\"topology\": \"dgx-a100\"",
            "\"topology\": \"dgx-z\"",
            "unknown topology preset",
        ),
        (
            "\"oversubscription\": 2",
            "\"oversubscription\": 0.5",
            "cluster.fabric.oversubscription",
        ),
        (
            "\"bytes_per_step\": \"2GB\"",
            "\"bytes_per_step\": \"2XB\"",
            "bytes_per_step",
        ),
        (
            "\"names\": \"dgx[1-4]\"",
            "\"names\": \"dgx[1-5]\"",
            "under no leaf",
        ),
    ] {
        let text = POD.replace(from, to);
        assert_ne!(text, POD);
        let e = gresim_io::parse_scenario(Path::new("pod.json"), &text).expect_err(want);
        assert!(e.to_string().contains(want), "{e}");
    }
    // A preset with 8 GPUs on a 4-GPU node.
    let text = WORKSTATION.replace("workstation-4gpu-nvlink", "dgx-h100");
    let e = gresim_io::parse_scenario(Path::new("ws.json"), &text).expect_err("gpu count");
    assert!(
        e.to_string().contains("has 8 GPUs but the node has 4"),
        "{e}"
    );
}
