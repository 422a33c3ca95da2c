//! Contradictory or malformed requests, failure models and job behaviors
//! (issue 9): each gets Slurm's error or a clear simulator error naming the
//! JSON path, exit code 2, nothing on stdout and nothing written. Requests
//! that are well-formed but that no node can ever satisfy are what slurmctld
//! refuses at submission ("Requested node configuration is not available"):
//! by default the scenario fails with that message and the job's JSON path;
//! `workload.impossible: "reject"` keeps Slurm's per-submission refusal, a
//! REJECTED record, while the rest runs (docs/reliability.md).

use std::ffi::OsStr;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

struct Case {
    dir: TempDir,
    scenario: PathBuf,
    out: PathBuf,
}

impl Case {
    fn new(v: &Value) -> Case {
        let dir = TempDir::new().expect("a temporary directory");
        let scenario = dir.path().join("bad.json");
        fs::write(&scenario, serde_json::to_string_pretty(v).unwrap()).unwrap();
        let out = dir.path().join("out");
        Case { dir, scenario, out }
    }

    fn run(&self) -> Output {
        Command::new(env!("CARGO_BIN_EXE_sim"))
            .args([
                OsStr::new("run"),
                self.scenario.as_os_str(),
                OsStr::new("--out"),
                self.out.as_os_str(),
            ])
            .current_dir(self.dir.path())
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("the sim binary runs")
    }

    /// Exit 2, `error: ` with every needle, nothing on stdout, nothing written.
    fn assert_bad(&self, needles: &[&str]) {
        let o = self.run();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "exit code; stderr:\n{err}");
        assert!(!err.contains("panicked"), "panic:\n{err}");
        assert!(err.starts_with("error: "), "{err}");
        for n in needles {
            assert!(err.contains(n), "the error should mention {n:?}:\n{err}");
        }
        assert!(
            o.stdout.is_empty(),
            "stdout: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(!self.out.exists(), "bad input created the output directory");
        let left: Vec<_> = fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "bad.json")
            .collect();
        assert!(left.is_empty(), "bad input left files behind: {left:?}");
    }

    /// Exit 0; the records as JSON.
    fn records(&self) -> Vec<Value> {
        let o = self.run();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = fs::read_to_string(self.out.join("records.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

/// Two nodes of 4 A100s, one partition `gpu`, and `job` as the only job.
fn with_job(job: Value) -> Value {
    json!({
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "gpu[01-02]", "sockets": 2, "cores_per_socket": 8,
                               "memory": "64G",
                               "gpus": [{"model": "A100-SXM4-80GB", "count": 4}]}]},
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}],
        "workload": {"jobs": [job]}
    })
}

fn with_failures(f: Value) -> Value {
    let mut v = with_job(json!({"gres": "gpu:1", "run_time": 60}));
    v["failures"] = f;
    v
}

#[test]
fn zero_and_negative_counts_are_refused() {
    for (job, path, what) in [
        (
            json!({"ntasks": 0}),
            "workload.jobs[0].ntasks",
            "at least 1",
        ),
        (
            json!({"ntasks_per_node": 0}),
            "workload.jobs[0].ntasks_per_node",
            "at least 1",
        ),
        (
            json!({"cpus_per_task": 0}),
            "workload.jobs[0].cpus_per_task",
            "at least 1",
        ),
        (json!({"nodes": 0}), "workload.jobs[0].nodes", "N >= 1"),
        (json!({"nodes": "2-1"}), "workload.jobs[0].nodes", "nodes"),
        (
            json!({"gpus_per_task": "0", "ntasks": 1}),
            "workload.jobs[0].gpus_per_task",
            "at least 1",
        ),
        (
            json!({"gpus": -1}),
            "workload.jobs[0].gpus",
            "a whole number",
        ),
        (
            json!({"ntasks": -4}),
            "workload.jobs[0].ntasks",
            "invalid value",
        ),
        (
            json!({"gpus_per_node": "gpu:-2"}),
            "workload.jobs[0].gpus_per_node",
            "gpus_per_node",
        ),
        (
            json!({"gres": "gpu:a100:-1"}),
            "workload.jobs[0].gres",
            "gres",
        ),
        (
            json!({"run_time": -5}),
            "workload.jobs[0].run_time",
            "invalid value",
        ),
    ] {
        Case::new(&with_job(job.clone())).assert_bad(&[path, what]);
    }
}

#[test]
fn an_unknown_partition_is_refused_with_slurms_message() {
    Case::new(&with_job(json!({"partition": "debug", "run_time": 10}))).assert_bad(&[
        "workload.jobs[0].partition",
        "Invalid partition name specified: 'debug'",
        "gpu",
    ]);
}

#[test]
fn gpus_per_task_without_tasks_is_refused_as_sbatch_does() {
    Case::new(&with_job(json!({"gpus_per_task": 2, "run_time": 10}))).assert_bad(&[
        "workload.jobs[0].gpus_per_task",
        "--gpus-per-task used without either --gpus or -n/--ntasks is not allowed.",
    ]);
}

#[test]
fn time_zero_means_unlimited_as_in_sbatch() {
    // sbatch(1): "A time limit of zero requests that no time limit be imposed."
    for t in [json!(0), json!("0"), json!("0:00")] {
        let c = Case::new(&with_job(
            json!({"time": t, "run_time": 10, "gres": "gpu:1"}),
        ));
        let r = c.records();
        assert_eq!(r[0]["state"], "COMPLETED", "time {t}");
        assert_eq!(r[0]["time_limit"], Value::Null, "time {t} is UNLIMITED");
    }
    // "-1" is INFINITE in Slurm's time_str2mins, like "UNLIMITED"; "-5" is invalid.
    Case::new(&with_job(json!({"time": "-5"}))).assert_bad(&["workload.jobs[0].time", "--time"]);
}

#[test]
fn requests_no_node_can_hold_exit_2_with_slurms_message_unless_kept_as_rejected() {
    // 8 GPUs for one task; 4 tasks x 2 GPUs on one node; 5 A100s; 100 GB of
    // memory: the nodes have 4 GPUs and 64 GB.
    for (job, msg) in [
        (
            json!({"gpus_per_task": 8, "ntasks": 1, "run_time": 10}),
            "Requested node configuration is not available",
        ),
        (
            json!({"gpus_per_task": 2, "ntasks_per_node": 4, "nodes": 1, "run_time": 10}),
            "Requested node configuration is not available",
        ),
        (
            json!({"gres": "gpu:a100:5", "run_time": 10}),
            "Requested node configuration is not available",
        ),
        (
            json!({"gres": "gpu:1", "mem": "100G", "run_time": 10}),
            "Memory specification can not be satisfied",
        ),
    ] {
        // A good job first, so the bad one is jobs[1]: the error names it.
        let mut v = with_job(json!({"gres": "gpu:1", "run_time": 10}));
        v["workload"]["jobs"]
            .as_array_mut()
            .unwrap()
            .push(job.clone());
        Case::new(&v).assert_bad(&["workload.jobs[1]", msg, "workload.impossible"]);

        // workload.impossible = "reject": slurmctld's per-submission refusal.
        v["workload"]["impossible"] = json!("reject");
        let r = Case::new(&v).records();
        assert_eq!(r[0]["state"], "COMPLETED", "{job}");
        assert_eq!(r[1]["state"], "REJECTED", "{job}");
        assert_eq!(r[1]["start"], Value::Null);

        let dir = TempDir::new().unwrap();
        let p = dir.path().join("s.json");
        fs::write(&p, v.to_string()).unwrap();
        let s = gresim_io::load_scenario(&p).unwrap();
        let out =
            gresim_engine::run(s.sim_input(1), gresim_sched::PolicyKind::Slurm.build()).unwrap();
        assert_eq!(out.jobs[1].rejected(), Some(msg), "{job}");
    }
    let mut v = with_job(json!({"gres": "gpu:1"}));
    v["workload"]["impossible"] = json!("skip");
    Case::new(&v).assert_bad(&["workload.impossible", "\"error\" or \"reject\""]);
}

#[test]
fn bad_checkpoint_vram_and_fallback_settings_are_refused() {
    for (job, path, what) in [
        (
            json!({"gres": "gpu:1", "checkpoint_interval": 0}),
            "workload.jobs[0].checkpoint_interval",
            "at least 1 second",
        ),
        (
            json!({"gres": "gpu:1", "restart_overhead": 60}),
            "workload.jobs[0].restart_overhead",
            "needs checkpoint_interval",
        ),
        (
            json!({"vram": "40G"}),
            "workload.jobs[0].vram",
            "requests no GPU",
        ),
        (
            json!({"gres": "gpu:1", "vram": "0"}),
            "workload.jobs[0].vram",
            "above 0",
        ),
        (
            json!({"gres": "gpu:1", "vram": "40Q"}),
            "workload.jobs[0].vram",
            "40Q",
        ),
    ] {
        Case::new(&with_job(job)).assert_bad(&[path, what]);
    }
    let mut v = with_job(json!({"run_time": 10, "expects_gpu": true}));
    v["workload"]["cpu_fallback_slowdown"] = json!(0.5);
    Case::new(&v).assert_bad(&["workload.cpu_fallback_slowdown", "between 1 and 1e6"]);
}

#[test]
fn bad_failure_models_are_refused() {
    let exp = json!({"distribution": "exponential", "mean_hours": 10});
    for (f, path, what) in [
        (
            json!({"mtbf": exp}),
            "failures.repair",
            "repair-time distribution",
        ),
        (json!({}), "failures", "expected mtbf"),
        (
            json!({"mtbf": {"distribution": "gamma", "mean_hours": 1}, "repair": exp}),
            "failures.mtbf.distribution",
            "unknown distribution 'gamma'",
        ),
        (
            json!({"mtbf": {"distribution": "weibull", "mean_hours": 1}, "repair": exp}),
            "failures.mtbf.shape",
            "needs a shape",
        ),
        (
            json!({"mtbf": {"distribution": "exponential", "mean_hours": -3}, "repair": exp}),
            "failures.mtbf.mean_hours",
            "positive",
        ),
        (
            json!({"mtbf": {"distribution": "exponential"}, "repair": exp}),
            "failures.mtbf.mean_hours",
            "needs mean_hours",
        ),
        (
            json!({"correlated": [{"nodes": "gpu[01-09]", "mtbf_hours": 5}], "repair": exp}),
            "failures.correlated[0].nodes",
            "'gpu03' is not in the cluster",
        ),
        (
            json!({"correlated": [{"nodes": "gpu[01-02]"}], "repair": exp}),
            "failures.correlated[0].mtbf_hours",
            "exactly one",
        ),
        (
            json!({"correlated": [{"nodes": "gpu[01-02]", "mtbf_hours": 0}], "repair": exp}),
            "failures.correlated[0].mtbf_hours",
            "positive",
        ),
        (
            json!({"mtbf": exp, "repair": exp, "start": 100, "until": 50}),
            "failures.until",
            "before start",
        ),
        (
            json!({"mtbf": exp, "repair": exp, "rack": "r1"}),
            "failures",
            "unknown field `rack`",
        ),
    ] {
        Case::new(&with_failures(f.clone())).assert_bad(&[path, what]);
    }
}

#[test]
fn a_valid_failure_model_runs_and_reports_its_cost() {
    let mut v = with_job(json!({"gres": "gpu:4", "run_time": 40000, "requeue": true,
                                "checkpoint_interval": 1800, "restart_overhead": 120}));
    v["failures"] = json!({
        "seed": 3,
        "mtbf": {"distribution": "exponential", "mean_hours": 3},
        "repair": {"distribution": "fixed", "mean_seconds": 900}
    });
    let c = Case::new(&v);
    let r = c.records();
    assert_eq!(r[0]["state"], "COMPLETED");
    assert!(r[0]["restarts"].as_u64().unwrap() >= 1, "{}", r[0]);
    assert!(r[0]["lost_gpu_seconds"].as_u64().unwrap() > 0, "{}", r[0]);
    let sum: Value =
        serde_json::from_str(&fs::read_to_string(c.out.join("summary.json")).unwrap()).unwrap();
    assert!(sum["node_failures"].as_u64().unwrap() >= 1, "{sum}");
    assert!(sum["lost_gpu_hours"].as_f64().unwrap() > 0.0, "{sum}");
}
