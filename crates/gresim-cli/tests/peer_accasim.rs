//! gresim's strict FIFO on the peer benchmark's reference workload
//! (`../shared/bench/gen_swf.py -n 10000 --capacity 1024 --load 0.9 --seed 42`)
//! on AccaSim's 128 x 8 system, count-based admission: AccaSim, Alea and the
//! Tiresias simulator all give an average wait of 1666.9 s
//! (`../shared/bench/README.md`). `cargo xtask bench-peers` runs the same
//! comparison against AccaSim itself. Skips without `../shared/bench` or python3.

use std::path::{Path, PathBuf};
use std::process::Command;

use gresim_model::hostlist;

/// The same scenario `xtask/src/bench_peers.rs` writes.
fn scenario(trace: &str) -> String {
    serde_json::json!({
        "schema_version": 1,
        "name": "peer_128x8",
        "cluster": {"nodes": [{"names": "n[001-128]", "cores_per_socket": 8, "memory": "8G"}]},
        "scheduler": {"def_mem_per_cpu": "1G", "timelimit_check_interval": 0},
        "workload": {"trace": trace, "format": "swf"}
    })
    .to_string()
}

fn bench_kit() -> Option<PathBuf> {
    const TEST: &str = "strict_fifo_reproduces_the_peers_average_wait_on_w10000";
    let dir = gresim_test_support::shared().join("bench");
    if !dir.join("gen_swf.py").is_file() {
        gresim_test_support::skip!(TEST, "no ../shared/bench/gen_swf.py beside the repository");
        return None;
    }
    if Command::new("python3").arg("--version").output().is_err() {
        gresim_test_support::skip!(TEST, "no python3 on this machine to run gen_swf.py");
        return None;
    }
    Some(dir)
}

/// Runs `policy` on the workload and returns (summary.json, records.json).
fn run(dir: &Path, scen: &Path, policy: &str) -> (serde_json::Value, serde_json::Value) {
    let out = dir.join(format!("out-{policy}"));
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("run")
        .arg(scen)
        .args(["--policy", policy, "--quiet", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "sim run --policy {policy}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    let records = std::fs::read_to_string(out.join("records.json")).unwrap();
    (
        serde_json::from_str(&summary).unwrap(),
        serde_json::from_str(&records).unwrap(),
    )
}

#[test]
fn strict_fifo_reproduces_the_peers_average_wait_on_w10000() {
    let Some(kit) = bench_kit() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let swf = tmp.path().join("w10000.swf");
    let g = Command::new("python3")
        .arg(kit.join("gen_swf.py"))
        .args(["-n", "10000", "--capacity", "1024", "--load", "0.9"])
        .args(["--seed", "42", "-o"])
        .arg(&swf)
        .output()
        .unwrap();
    assert!(g.status.success(), "{}", String::from_utf8_lossy(&g.stderr));
    // SWF job number -> requested processors (field 8).
    let procs: std::collections::BTreeMap<String, u64> = std::fs::read_to_string(&swf)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(';'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[7].parse().unwrap())
        })
        .collect();
    assert_eq!(procs.len(), 10000);
    let scen = tmp.path().join("peer.json");
    std::fs::write(&scen, scenario("w10000.swf")).unwrap();

    // Slurm's main pass alone (strict per-partition blocking), and the
    // literature's strict FIFO where this gresim has it.
    let policies: Vec<&str> = ["fifo", "strict-fifo"]
        .into_iter()
        .filter(|p| p.parse::<gresim_sched::PolicyKind>().is_ok())
        .collect();
    for policy in policies {
        let (s, records) = run(tmp.path(), &scen, policy);
        assert_eq!(s["jobs"], 10000, "{policy}");
        assert_eq!(
            s["by_state"]["COMPLETED"], 10000,
            "{policy}: every job runs (a job of P processors takes any P cores): {}",
            s["by_state"]
        );
        let mean = s["wait"]["mean"].as_f64().unwrap();
        assert_eq!(
            format!("{mean:.1}"),
            "1666.9",
            "{policy}: the average wait AccaSim, Alea and Tiresias give"
        );
        // Count-based admission: every job holds exactly its P units, and
        // some hold them on more nodes than the ⌈P/8⌉ whole nodes they would
        // need otherwise.
        let mut spread = 0;
        for r in records.as_array().unwrap() {
            let cpus = r["cpus"].as_u64().unwrap();
            assert_eq!(Some(&cpus), procs.get(r["job_id"].as_str().unwrap()), "{r}");
            let nodes = hostlist::expand(r["nodes"].as_str().unwrap())
                .unwrap()
                .len() as u64;
            assert!(nodes >= cpus.div_ceil(8) && nodes <= cpus, "{policy}: {r}");
            spread += u64::from(nodes > cpus.div_ceil(8));
        }
        assert!(
            spread > 0,
            "{policy}: no job spread its units over extra nodes"
        );
    }
}
