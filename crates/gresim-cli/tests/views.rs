//! The Slurm-style views through the `sim` binary, on a tiny hand-made
//! scenario whose outcome is worked out by hand:
//!
//! * gpu1, gpu2: 8 cores, 2 A100s each; partition gpu (MaxTime 1 h), policy slurm.
//! * job 1 train (alice): submit 0, gpu:a100:2, --time=10, runs 300 s → gpu1, 0–300.
//! * job 2 eval (bob): submit 0, gpu:a100:2, --time=20, runs 600 s → gpu2, 0–600.
//! * job 3 small (carol): submit 10, gpu:a100:1, --time=10, runs 100 s: no
//!   free GPU (Resources) until job 1 ends at 300 → gpu1, 300–400.
//! * gpu2 is drained at 50 while job 2 runs on it: DRAINING.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SCENARIO: &str = r#"{
  "schema_version": 1,
  "name": "tiny",
  "cluster": {"nodes": [
    {"names": "gpu[1-2]", "sockets": 1, "cores_per_socket": 8, "threads_per_core": 1, "memory": "64G",
     "gpus": [{"model": "A100-SXM4-80GB", "count": 2, "socket": 0}]}
  ]},
  "partitions": [{"name": "gpu", "default": true, "max_time": "1:00:00"}],
  "scheduler": {"policy": "slurm"},
  "workload": {"jobs": [
    {"id": "a", "name": "train", "user": "alice", "submit": 0, "gres": "gpu:a100:2", "mem": "1G", "time": 10, "run_time": 300},
    {"id": "b", "name": "eval", "user": "bob", "submit": 0, "gres": "gpu:a100:2", "mem": "1G", "time": 20, "run_time": 600},
    {"id": "c", "name": "small", "user": "carol", "submit": 10, "gres": "gpu:a100:1", "mem": "1G", "time": 10, "run_time": 100}
  ]},
  "events": [{"at": 50, "action": "node_drain", "nodes": "gpu2"}]
}"#;

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the sim binary runs")
}

fn stdout(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

/// Runs the scenario into a fresh directory.
fn run(extra: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let scen = tmp.path().join("tiny.json");
    std::fs::write(&scen, SCENARIO).unwrap();
    let out = tmp.path().join("out");
    let mut args = vec![
        "run",
        scen.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend_from_slice(extra);
    stdout(&sim(&args));
    (tmp, out)
}

fn p(d: &Path) -> &str {
    d.to_str().unwrap()
}

#[test]
fn squeue_at_100() {
    let (_t, d) = run(&[]);
    let got = stdout(&sim(&["squeue", p(&d), "--at", "100"]));
    let want = [
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)",
        "                 3       gpu    small    carol PD       0:00      1 (Resources)",
        "                 1       gpu    train    alice  R       1:40      1 gpu1",
        "                 2       gpu     eval      bob  R       1:40      1 gpu2",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
    let got = stdout(&sim(&[
        "squeue",
        p(&d),
        "--at",
        "5:00",
        "-o",
        "%i|%P|%j|%u|%T|%t|%M|%l|%D|%R|%b",
    ]));
    let want = [
        "JOBID|PARTITION|NAME|USER|STATE|ST|TIME|TIME_LIMIT|NODES|NODELIST(REASON)|TRES_PER_NODE",
        // Both running: by priority, and job 2 was submitted first.
        "2|gpu|eval|bob|RUNNING|R|5:00|20:00|1|gpu2|gres:gpu:a100:2",
        "3|gpu|small|carol|RUNNING|R|0:00|10:00|1|gpu1|gres:gpu:a100:1",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
    // Before any submission: only the header.
    let got = stdout(&sim(&["squeue", p(&d), "--at", "0", "-t", "CD"]));
    assert_eq!(got.lines().count(), 1);
}

#[test]
fn sinfo_and_sacct() {
    let (_t, d) = run(&[]);
    let got = stdout(&sim(&["sinfo", p(&d), "--at", "100"]));
    let want = [
        "NODELIST PARTITION CPUS(A/I/O/T) GRES            GRES_USED           STATE",
        "gpu1     gpu*      1/7/0/8       gpu:a100:2(S:0) gpu:a100:2(IDX:0-1) mixed",
        "gpu2     gpu*      1/0/7/8       gpu:a100:2(S:0) gpu:a100:2(IDX:0-1) draining",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
    let got = stdout(&sim(&["sinfo", p(&d), "--at", "700", "--noheader"]));
    assert_eq!(
        got,
        "gpu1 gpu* 0/8/0/8 gpu:a100:2(S:0) gpu:a100:0(IDX:N/A) idle\n\
         gpu2 gpu* 0/0/8/8 gpu:a100:2(S:0) gpu:a100:0(IDX:N/A) drained\n"
    );
    let got = stdout(&sim(&[
        "sacct",
        p(&d),
        "-P",
        "--format",
        "JobID,JobName,User,AllocCPUS,State,ExitCode,Elapsed,Start,End,NodeList,AllocTRES",
    ]));
    let want = [
        "JobID|JobName|User|AllocCPUS|State|ExitCode|Elapsed|Start|End|NodeList|AllocTRES",
        "1|train|alice|1|COMPLETED|0:0|00:05:00|1970-01-01T00:00:00|1970-01-01T00:05:00|gpu1|billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=1G,node=1",
        "2|eval|bob|1|COMPLETED|0:0|00:10:00|1970-01-01T00:00:00|1970-01-01T00:10:00|gpu2|billing=1,cpu=1,gres/gpu:a100=2,gres/gpu=2,mem=1G,node=1",
        "3|small|carol|1|COMPLETED|0:0|00:01:40|1970-01-01T00:05:00|1970-01-01T00:06:40|gpu1|billing=1,cpu=1,gres/gpu:a100=1,gres/gpu=1,mem=1G,node=1",
        "",
    ]
    .join("\n");
    assert_eq!(got, want);
    let got = stdout(&sim(&["sacct", p(&d)]));
    assert!(
        got.starts_with(
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n\
         ------------ ---------- ---------- ---------- ---------- ---------- -------- \n\
         1                 train        gpu                     1  COMPLETED      0:0 \n"
        ),
        "{got}"
    );
}

#[test]
fn explain_a_resource_wait() {
    let (_t, d) = run(&[]);
    let got = stdout(&sim(&["explain", p(&d), "3", "--at", "100"]));
    for line in [
        "job 3 \"small\" (user carol) at t=100 (1:40)\n",
        "state   PENDING, reason Resources\n",
        "asks    1 node(s), gpu:a100:1 per node, --mem=1G\n",
        "ever    yes",
        "nodes   2 node(s) it may use: gpu1 gpu2(drain)\n",
        "         1 train      alice    gpu1: 1 CPU 1G GPU 0-1; started 0, planned end 600, actual end 300\n",
        "         2 eval       bob      gpu2: 1 CPU 1G GPU 0-1; started 0, planned end 1200, actual end 600\n",
        "estimate  t=600 (10:00) on gpu1 (ESTIMATE",
        "actual    started at t=300 (5:00) on gpu1",
    ] {
        assert!(got.contains(line), "missing {line:?} in:\n{got}");
    }
    // By scenario key, default time: just before its start.
    let got = stdout(&sim(&["explain", p(&d), "c"]));
    assert!(got.contains("at t=299 (4:59)"), "{got}");
}

#[test]
fn bad_run_dirs_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    for view in ["squeue", "sacct", "sinfo", "report"] {
        let o = sim(&[view, p(tmp.path())]);
        assert_eq!(o.status.code(), Some(2), "{view}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("run.json") && !err.contains("panicked"),
            "{err}"
        );
    }
    std::fs::write(
        tmp.path().join("run.json"),
        "{\"format\": \"gresim-run\", garbage",
    )
    .unwrap();
    let o = sim(&["squeue", p(tmp.path()), "--at", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a gresim run file"));
    let (_t, d) = run(&[]);
    let o = sim(&["squeue", p(&d), "-o", "%i %Q"]);
    assert_eq!(o.status.code(), Some(2));
    let o = sim(&["squeue", p(&d), "--at", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    let o = sim(&["explain", p(&d), "42"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn run_writes_report_and_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("m");
    let (_t, d) = run(&["--report", "--metrics", p(&m), "--metrics-interval", "100"]);
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("&quot;name&quot;: &quot;tiny&quot;"));
    let om = std::fs::read_to_string(m.join("metrics.om")).unwrap();
    assert!(om.ends_with("# EOF\n"));
    // At t=100 GPU 0 of gpu1 belongs to job 1; at 500 it is idle; at 300 job 3 has it.
    let g =
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"gpu1\",modelName=\"NVIDIA A100-SXM4-80GB\",job=";
    assert!(om.contains(&format!("{g}\"1\"}} 100 100\n")), "{om}");
    assert!(om.contains(&format!("{g}\"3\"}} 100 300\n")), "{om}");
    assert!(om.contains(&format!("{g}\"\"}} 0 400\n")), "{om}");
    assert!(om.contains("slurm_queue_pending 1 100\n"));
    assert!(om.contains("slurm_nodes_drain 1 100\n"));
    let csv = std::fs::read_to_string(m.join("metrics.csv")).unwrap();
    assert!(csv.starts_with("timestamp,metric,labels,value\n"));
    // `sim report` rewrites the same page.
    let before = html;
    std::fs::remove_file(d.join("report.html")).unwrap();
    stdout(&sim(&["report", p(&d)]));
    assert_eq!(
        std::fs::read_to_string(d.join("report.html")).unwrap(),
        before
    );
}
