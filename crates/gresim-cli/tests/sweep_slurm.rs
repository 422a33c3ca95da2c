//! The sharded sweep on a real Slurm 22.05: the single-machine cluster of
//! the repository's harness, `xtask/harness/` (Debian's packages, slurmctld and four
//! slurmd on loopback) runs the job array `sim sweep --emit-sbatch` writes,
//! then its dependent merge job; the merged table must be byte for byte the
//! one an unsharded run writes.
//!
//! Needs root and the harness; installs Slurm through the harness's setup.sh
//! when it is missing (.ci/run installs it beforehand). Skips, printing the
//! `GRESIM-SKIP:` line `.ci/run` collects, without the harness, without root,
//! or when a slurm-peer cluster is already running (there can be one per
//! machine, and it may be someone's recording). A harness that is there but
//! fails to start Slurm is a failure, not a skip. Always tears down what it
//! started.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const TEST: &str = "sharded_sweep_on_real_slurm_matches_one_run";

fn skip_because(reason: &str) {
    gresim_test_support::skip!(TEST, reason);
}

fn sh(args: &[&str]) -> Option<Output> {
    Command::new(args[0]).args(&args[1..]).output().ok()
}

fn is_root() -> bool {
    sh(&["id", "-u"]).is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Whether a process from a slurm-peer PID file is alive.
fn peer_running() -> bool {
    let Ok(pid) = fs::read_to_string("/run/slurm-peer/slurmctld.pid") else {
        return false;
    };
    let pid = pid.trim();
    !pid.is_empty() && Path::new("/proc").join(pid).exists()
}

/// Stops what setup.sh started and releases the lock, however the test ends.
struct Teardown {
    harness: PathBuf,
    lock: PathBuf,
    started: bool,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        if self.started {
            let _ = Command::new("timeout")
                .arg("120")
                .arg("bash")
                .arg(self.harness.join("teardown.sh"))
                .output();
        }
        let _ = fs::remove_file(&self.lock);
    }
}

fn sim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sim"));
    for v in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_STEP",
    ] {
        c.env_remove(v);
    }
    c
}

fn ok(o: Output, what: &str) -> Output {
    assert!(
        o.status.success(),
        "{what} failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// What Slurm and the jobs said, for a failure message.
fn diagnostics(out: &Path) -> String {
    let mut s = String::new();
    if let Some(o) = sh(&["squeue", "-a"]) {
        s.push_str(&String::from_utf8_lossy(&o.stdout));
    }
    if let Ok(rd) = fs::read_dir(out.join("slurm")) {
        for e in rd.flatten() {
            s.push_str(&format!(
                "--- {}\n{}\n",
                e.path().display(),
                fs::read_to_string(e.path()).unwrap_or_default()
            ));
        }
    }
    if let Ok(log) = fs::read_to_string("/var/log/slurm-peer/slurmctld.log") {
        let lines: Vec<&str> = log.lines().collect();
        s.push_str("--- slurmctld.log (tail)\n");
        for l in &lines[lines.len().saturating_sub(30)..] {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

/// Creates `lock` holding this process's id; a lock whose process is gone is stale.
fn take_lock(lock: &Path) -> bool {
    use std::io::Write;
    for _ in 0..2 {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(mut f) => {
                let _ = write!(f, "{}", std::process::id());
                return true;
            }
            Err(_) => {
                let holder = fs::read_to_string(lock).unwrap_or_default();
                let holder = holder.trim();
                if !holder.is_empty() && Path::new("/proc").join(holder).exists() {
                    return false;
                }
                let _ = fs::remove_file(lock);
            }
        }
    }
    false
}

#[test]
fn sharded_sweep_on_real_slurm_matches_one_run() {
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../xtask/harness");
    assert!(
        harness.join("setup.sh").is_file(),
        "the repository's harness is missing: {}",
        harness.display()
    );
    if !is_root() {
        return skip_because("not root: the harness runs Slurm's daemons as root");
    }
    let installed = ["slurmctld-wlm", "slurmd-wlm", "slurmstepd-wlm", "munged"]
        .iter()
        .all(|b| Path::new("/usr/sbin").join(b).exists());
    if !installed && sh(&["apt-get", "--version"]).is_none() {
        return skip_because("Slurm is not installed and there is no apt-get to install it");
    }
    if peer_running() {
        return skip_because("a slurm-peer cluster is already running on this machine (one at a time); not disturbing it");
    }
    let lock = std::env::temp_dir().join("gresim-sweep-slurm.lock");
    if !take_lock(&lock) {
        return skip_because(&format!(
            "{} names a live process: another run of this test is using Slurm",
            lock.display()
        ));
    }
    let mut guard = Teardown {
        harness: harness.clone(),
        lock,
        started: false,
    };

    // Start the harness's demo cluster (4 nodes × 32 CPUs), installing Slurm if needed.
    guard.started = true;
    let setup = Command::new("timeout")
        .arg("600")
        .arg("bash")
        .arg(harness.join("setup.sh"))
        .arg("--conf")
        .arg(harness.join("conf"))
        .output()
        .expect("timeout runs");
    // The harness is there and we may use it: failing to start is a failure.
    assert!(
        setup.status.success(),
        "the harness's setup.sh could not start Slurm ({}):\n{}",
        setup.status,
        String::from_utf8_lossy(&setup.stderr)
    );

    let tmp = tempfile::tempdir().expect("a temporary directory");
    let sweep = tmp.path().join("slurm-sweep.json");
    let scenario = fs::canonicalize(repo().join("scenarios/sweeps/backfill_cluster.json"))
        .expect("the example scenario");
    fs::write(
        &sweep,
        format!(
            r#"{{"name": "on-slurm", "scenario": {}, "policies": ["slurm", "fifo"], "seeds": [1, 2],
                "parameters": {{"bf_max_job_test": [5, 500], "workload.synthetic.jobs": [80]}},
                "outputs": {{"per_point": "summary"}}}}"#,
            serde_json::to_string(&scenario.to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let reference = tmp.path().join("reference");
    ok(
        sim()
            .args(["sweep", "--quiet", "--out"])
            .arg(&reference)
            .arg(&sweep)
            .output()
            .unwrap(),
        "the unsharded sweep",
    );
    let out = tmp.path().join("array");
    let script = tmp.path().join("sweep.sbatch");
    ok(
        sim()
            .args([
                "sweep", "--quiet", "--tasks", "3", "--mem", "1G", "--time", "10:00",
            ])
            .arg("--out")
            .arg(&out)
            .arg("--emit-sbatch")
            .arg(&script)
            .arg(&sweep)
            .output()
            .unwrap(),
        "--emit-sbatch",
    );
    let submit = ok(
        Command::new("timeout")
            .arg("60")
            .arg("bash")
            .arg(&script)
            .current_dir(tmp.path())
            .output()
            .unwrap(),
        "submitting the script",
    );
    let said = String::from_utf8_lossy(&submit.stdout).into_owned();
    // "submitted array job A (3 tasks) and merge job M"
    let words: Vec<&str> = said.split_whitespace().collect();
    let array = words.get(3).copied().unwrap_or_default().to_string();
    let merge = words.last().copied().unwrap_or_default().to_string();
    assert!(
        !array.is_empty() && array.chars().all(|c| c.is_ascii_digit()),
        "array job id in {said:?}"
    );
    assert!(
        merge.chars().all(|c| c.is_ascii_digit()),
        "merge job id in {said:?}"
    );

    // Wait for the array and the merge job to leave the queue (3 minutes at most).
    let ids = format!("{array},{merge}");
    let mut left = String::from("?");
    for _ in 0..360 {
        let q = sh(&["squeue", "-h", "-j", &ids, "-o", "%i %T"]);
        left = q.map_or_else(String::new, |o| {
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        });
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        left.is_empty(),
        "jobs still queued after 3 minutes: {left}\n{}",
        diagnostics(&out)
    );
    let state = sh(&["scontrol", "show", "job", &merge])
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(
        state.contains("JobState=COMPLETED"),
        "the merge job did not complete:\n{state}\n{}",
        diagnostics(&out)
    );
    for k in 0..3 {
        assert!(
            out.join(format!("shards/shard-{k}-of-3.json")).is_file(),
            "array task {k} wrote its shard\n{}",
            diagnostics(&out)
        );
    }
    for f in ["results.json", "results.csv"] {
        let a = fs::read(reference.join(f)).expect("the unsharded results");
        let b = fs::read(out.join(f))
            .unwrap_or_else(|e| panic!("{f} after the merge job: {e}\n{}", diagnostics(&out)));
        assert!(a == b, "{f}: Slurm array + merge differs from one run");
    }
    for p in 0..8 {
        let f = format!("points/{p:04}/summary.json");
        assert_eq!(
            fs::read(reference.join(&f)).unwrap(),
            fs::read(out.join(&f)).unwrap(),
            "{f}"
        );
    }
    drop(guard);
    println!("sharded sweep on Slurm: array {array} (3 tasks) + merge {merge} == one run");
}
