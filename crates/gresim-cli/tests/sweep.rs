//! `sim sweep`: the grid's results do not depend on the thread count or on
//! sharding, each point is the run `sim run` gives, `merge` checks what it
//! joins, bad sweep files are refused with the file and field, and the
//! emitted job-array script runs the shards and the merge.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example_scenario() -> PathBuf {
    fs::canonicalize(repo().join("scenarios/sweeps/backfill_cluster.json"))
        .expect("the example sweep scenario exists")
}

/// A sim command without Slurm's array variables from the environment.
fn sim() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sim"));
    for v in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_COUNT",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_MAX",
        "SLURM_ARRAY_TASK_STEP",
        "RAYON_NUM_THREADS",
    ] {
        c.env_remove(v);
    }
    c
}

fn ok(o: Output) -> Output {
    assert_eq!(
        o.status.code(),
        Some(0),
        "sim failed:\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn run(c: &mut Command) -> Output {
    c.output().expect("the sim binary runs")
}

/// A small sweep (16 points of 60 jobs) over the example scenario.
fn write_sweep(dir: &Path, name: &str, seeds: &str, per_point: &str) -> PathBuf {
    let p = dir.join(format!("{name}.json"));
    let text = format!(
        r#"{{
  "schema_version": 1,
  "name": "{name}",
  "scenario": {scen},
  "policies": ["slurm", "fifo"],
  "parameters": {{
    "workload.synthetic.jobs": [60],
    "bf_max_job_test": [5, 500],
    "load_scale": [0.8, 1.25]
  }},
  "seeds": {seeds},
  "outputs": {{"per_point": "{per_point}"}}
}}
"#,
        scen = serde_json::to_string(&example_scenario().to_string_lossy()).unwrap()
    );
    fs::write(&p, text).expect("write the sweep");
    p
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, fs::read(&p).expect("read"));
            }
        }
    }
    let mut m = BTreeMap::new();
    walk(dir, dir, &mut m);
    m
}

fn assert_same_trees(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>, what: &str) {
    let ka: Vec<&String> = a.keys().collect();
    let kb: Vec<&String> = b.keys().collect();
    assert_eq!(ka, kb, "{what}: different files");
    for (k, v) in a {
        assert!(!v.is_empty(), "{what}: {k} is empty");
        assert!(v == &b[k], "{what}: {k} differs");
    }
}

#[test]
fn results_do_not_depend_on_threads_or_shards() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = write_sweep(tmp.path(), "grid", "[1, 2]", "summary");
    let one = tmp.path().join("t1");
    let two = tmp.path().join("t2");
    let env2 = tmp.path().join("env2");
    ok(run(sim()
        .args(["sweep", "--quiet", "--threads", "1", "--out"])
        .arg(&one)
        .arg(&sweep)));
    ok(run(sim()
        .args(["sweep", "--quiet", "--threads", "2", "--out"])
        .arg(&two)
        .arg(&sweep)));
    ok(run(sim()
        .args(["sweep", "--quiet", "--out"])
        .arg(&env2)
        .arg(&sweep)
        .env("RAYON_NUM_THREADS", "2")));
    let t1 = tree(&one);
    assert_eq!(
        t1.keys().filter(|k| k.starts_with("points/")).count(),
        16,
        "one summary per point: {:?}",
        t1.keys().collect::<Vec<_>>()
    );
    assert!(t1.contains_key("results.json") && t1.contains_key("results.csv"));
    assert_same_trees(&t1, &tree(&two), "--threads 1 vs --threads 2");
    assert_same_trees(&t1, &tree(&env2), "--threads 1 vs RAYON_NUM_THREADS=2");

    // The table has one row per point, in point order, and the grid really varies.
    let res: serde_json::Value =
        serde_json::from_slice(&t1["results.json"]).expect("results.json is JSON");
    let rows = res["rows"].as_array().expect("rows");
    assert_eq!(res["points"], 16);
    assert_eq!(rows.len(), 16);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["point"], i);
        assert_eq!(r["jobs"], 60);
    }
    // policy slowest, then parameters (alphabetical, first slowest), seed fastest.
    assert_eq!(rows[0]["policy"], "slurm");
    assert_eq!(rows[8]["policy"], "fifo");
    assert_eq!(rows[0]["parameters"]["bf_max_job_test"], 5);
    assert_eq!(rows[4]["parameters"]["bf_max_job_test"], 500);
    assert_eq!(rows[0]["parameters"]["load_scale"], 0.8);
    assert_eq!(rows[2]["parameters"]["load_scale"], 1.25);
    assert_eq!(rows[0]["seed"], 1);
    assert_eq!(rows[1]["seed"], 2);
    let waits: std::collections::BTreeSet<String> =
        rows.iter().map(|r| r["wait_mean"].to_string()).collect();
    assert!(waits.len() > 4, "points should differ: {waits:?}");
    let csv = String::from_utf8(t1["results.csv"].clone()).unwrap();
    assert_eq!(csv.lines().count(), 17);
    assert!(csv.starts_with(
        "point,policy,bf_max_job_test,load_scale,workload.synthetic.jobs,seed,jobs,completed,gpu_utilization,"
    ));

    // Three shards into one directory, merged: the same bytes.
    let sh = tmp.path().join("sharded");
    for k in 0..3 {
        ok(run(sim()
            .args(["sweep", "--quiet", "--shard", &format!("{k}/3"), "--out"])
            .arg(&sh)
            .arg(&sweep)));
    }
    assert!(
        !sh.join("results.json").exists(),
        "a shard writes no results table"
    );
    ok(run(sim().args(["sweep", "merge", "--quiet"]).arg(&sh)));
    let mut merged = tree(&sh);
    merged.retain(|k, _| !k.starts_with("shards/"));
    assert_same_trees(&t1, &merged, "unsharded vs 3 shards + merge");

    // Shards in separate directories, one of them from Slurm's variables
    // (--array=1-3: ids start at 1), merged elsewhere.
    let dirs: Vec<PathBuf> = (0..3).map(|k| tmp.path().join(format!("s{k}"))).collect();
    for (k, d) in dirs.iter().enumerate() {
        let mut c = sim();
        c.args(["sweep", "--quiet", "--out"]).arg(d).arg(&sweep);
        if k == 2 {
            c.env("SLURM_ARRAY_TASK_ID", "3")
                .env("SLURM_ARRAY_TASK_MIN", "1")
                .env("SLURM_ARRAY_TASK_COUNT", "3");
        } else {
            c.args(["--shard", &format!("{k}/3")]);
        }
        ok(run(&mut c));
    }
    assert!(
        dirs[2].join("shards/shard-2-of-3.json").is_file(),
        "SLURM_ARRAY_TASK_ID 3 of 1-3 is shard 2/3"
    );
    let m = tmp.path().join("merged");
    ok(run(sim()
        .args(["sweep", "merge", "--quiet", "--out"])
        .arg(&m)
        .args(&dirs)));
    assert_eq!(
        fs::read(m.join("results.json")).unwrap(),
        t1["results.json"]
    );
    assert_eq!(fs::read(m.join("results.csv")).unwrap(), t1["results.csv"]);

    // A missing shard is an error naming the missing points; nothing is written.
    let partial = tmp.path().join("partial");
    let o = run(sim()
        .args(["sweep", "merge", "--out"])
        .arg(&partial)
        .arg(&dirs[0])
        .arg(&dirs[2]));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("5 of 16 points are missing"), "{err}");
    assert!(err.contains("1, 4, 7"), "{err}");
    assert!(!partial.exists());

    // A shard of another sweep (other seeds) does not merge.
    let other = write_sweep(tmp.path(), "grid", "[1, 3]", "summary");
    let od = tmp.path().join("other");
    ok(run(sim()
        .args(["sweep", "--quiet", "--shard", "1/3", "--out"])
        .arg(&od)
        .arg(&other)));
    let o = run(sim()
        .args(["sweep", "merge", "--out"])
        .arg(tmp.path().join("mixed"))
        .arg(&dirs[0])
        .arg(&od)
        .arg(&dirs[2]));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("a shard of another sweep"), "{err}");
}

/// Sets `path` (dotted) in a JSON document.
fn set(v: &mut serde_json::Value, path: &str, x: serde_json::Value) {
    let mut cur = v;
    let parts: Vec<&str> = path.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        cur = cur.get_mut(*p).expect("path exists");
    }
    cur[parts[parts.len() - 1]] = x;
}

#[test]
fn each_point_is_the_run_sim_run_gives() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = tmp.path().join("one.json");
    fs::write(
        &sweep,
        format!(
            r#"{{"scenario": {}, "policies": ["fifo", "slurm"], "seeds": [4, 9],
                "parameters": {{"bf_max_job_test": [7], "load_scale": [1.25], "workload.synthetic.jobs": [50]}}}}"#,
            serde_json::to_string(&example_scenario().to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    ok(run(sim()
        .args(["sweep", "--quiet", "--out"])
        .arg(&out)
        .arg(&sweep)));

    // The same variant written by hand: bf_max_job_test set, arrivals 1.25 times as fast.
    let mut doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(example_scenario()).unwrap()).unwrap();
    set(&mut doc, "scheduler.bf_max_job_test", 7.into());
    set(&mut doc, "workload.synthetic.jobs", 50.into());
    let ia = doc["workload"]["synthetic"]["mean_interarrival"]
        .as_f64()
        .unwrap();
    set(
        &mut doc,
        "workload.synthetic.mean_interarrival",
        (ia / 1.25).into(),
    );
    let variant = tmp.path().join("variant.json");
    fs::write(&variant, serde_json::to_string_pretty(&doc).unwrap()).unwrap();

    let mut point = 0;
    for policy in ["fifo", "slurm"] {
        for seed in ["4", "9"] {
            let single = tmp.path().join(format!("run-{policy}-{seed}"));
            ok(run(sim()
                .args([
                    "run", "--quiet", "--policy", policy, "--seed", seed, "--out",
                ])
                .arg(&single)
                .arg(&variant)));
            let pdir = out.join("points").join(format!("{point:04}"));
            for f in ["records.csv", "records.json", "summary.json"] {
                let a = fs::read(single.join(f)).unwrap();
                let b = fs::read(pdir.join(f))
                    .unwrap_or_else(|e| panic!("{}: {e}", pdir.join(f).display()));
                assert!(
                    a == b,
                    "point {point} ({policy}, seed {seed}): {f} differs from sim run"
                );
            }
            point += 1;
        }
    }
}

fn sweep_error(text: &str) -> (String, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = tmp.path().join("bad.sweep.json");
    fs::write(&sweep, text).unwrap();
    let out = tmp.path().join("out");
    let o = run(sim().args(["sweep", "--out"]).arg(&out).arg(&sweep));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "expected exit 2: {err}");
    assert!(!out.exists(), "no output on bad input: {err}");
    assert!(
        err.contains("bad.sweep.json"),
        "the error names the file: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    (err, tmp.keep())
}

#[test]
fn bad_sweep_files_name_the_field() {
    let scen = serde_json::to_string(&example_scenario().to_string_lossy()).unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            format!(r#"{{"scenario": {scen}, "policies": ["slurm", "nope"]}}"#),
            "at policies[1]: unknown policy 'nope'",
        ),
        (
            format!(r#"{{"scenario": {scen}, "parameters": {{"bf_max_job_test": [5, "x"]}}}}"#),
            "at parameters.bf_max_job_test[1]",
        ),
        (
            format!(r#"{{"scenario": {scen}, "parameters": {{"bf_windw": [5]}}}}"#),
            "at parameters.bf_windw[0]",
        ),
        (
            format!(r#"{{"scenario": {scen}, "parameters": {{"load_scale": [1, 0]}}}}"#),
            "at parameters.load_scale[1]: expected a factor above 0",
        ),
        (
            format!(r#"{{"scenario": {scen}, "parameters": {{"cluster.nodes[3].names": ["x"]}}}}"#),
            "cluster.nodes has 1 entries, no index 3",
        ),
        (
            format!(r#"{{"scenario": {scen}, "parameters": {{"sched_interval": []}}}}"#),
            "at parameters.sched_interval: expected a list of at least one value",
        ),
        (
            format!(r#"{{"scenario": {scen}, "parameters": {{"policy": ["fifo"]}}}}"#),
            "at parameters.policy: the policy is not a parameter",
        ),
        (
            format!(r#"{{"scenario": {scen}, "seeds": [1, 2, 1]}}"#),
            "at seeds[2]: seed 1 is listed twice",
        ),
        (
            format!(r#"{{"scenario": {scen}, "seeds": []}}"#),
            "at seeds: expected at least one seed",
        ),
        (
            format!(r#"{{"scenario": {scen}, "outputs": {{"per_point": "some"}}}}"#),
            "at outputs.per_point",
        ),
        (
            format!(r#"{{"scenario": {scen}, "polices": ["fifo"]}}"#),
            "unknown field `polices`",
        ),
        (
            r#"{"scenario": "no-such-scenario.json"}"#.to_string(),
            "no-such-scenario.json",
        ),
        (
            format!(r#"{{"schema_version": 2, "scenario": {scen}}}"#),
            "at schema_version: unsupported schema_version 2",
        ),
        ("{\"scenario\": ".to_string(), "bad.sweep.json:1:"),
    ];
    for (text, want) in cases {
        let (err, dir) = sweep_error(&text);
        assert!(err.contains(want), "for {text}\nwanted: {want}\ngot: {err}");
        let _ = fs::remove_dir_all(dir);
    }
    // Bad flags.
    let tmp = tempfile::tempdir().unwrap();
    let sweep = write_sweep(tmp.path(), "g", "[1]", "none");
    for (args, want) in [
        (vec!["--shard", "3/3"], "--shard: expected K/N"),
        (vec!["--threads", "0"], "--threads: expected at least 1"),
    ] {
        let o = run(sim().arg("sweep").args(&args).arg(&sweep));
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains(want));
    }
    let o = run(sim()
        .arg("sweep")
        .arg(&sweep)
        .env("SLURM_ARRAY_TASK_ID", "7")
        .env("SLURM_ARRAY_TASK_COUNT", "3"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a shard"));
}

#[test]
fn list_shows_the_points_of_a_shard() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = write_sweep(tmp.path(), "g", "[1, 2]", "none");
    let o = ok(run(sim()
        .args(["sweep", "--list", "--shard", "1/5"])
        .arg(&sweep)));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "points 1, 6, 11: {text}");
    assert_eq!(
        lines[0],
        "0001 policy=slurm bf_max_job_test=5 load_scale=0.8 workload.synthetic.jobs=60 seed=2"
    );
    assert!(lines[1].starts_with("0006 "));
    assert!(lines[2].starts_with("0011 policy=fifo"));
}

/// Runs the emitted script as Slurm would (SLURM_ARRAY_TASK_ID per task),
/// then the merge job's command; and its submit branch against a fake sbatch.
#[test]
fn the_emitted_script_runs_shards_and_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let sweep = write_sweep(tmp.path(), "emit", "[1]", "summary");
    let reference = tmp.path().join("ref");
    ok(run(sim()
        .args(["sweep", "--quiet", "--out"])
        .arg(&reference)
        .arg(&sweep)));
    let out = tmp.path().join("my out");
    let script = tmp.path().join("sweep.sbatch");
    let o = ok(run(sim()
        .args([
            "sweep",
            "--tasks",
            "3",
            "--cpus-per-task",
            "2",
            "--mem",
            "2G",
        ])
        .args(["--time", "0:30:00", "--sbatch-arg=--account=proj", "--out"])
        .arg(&out)
        .arg("--emit-sbatch")
        .arg(&script)
        .arg(&sweep)));
    assert!(String::from_utf8_lossy(&o.stdout).contains("8 points in 3 array tasks"));
    let text = fs::read_to_string(&script).unwrap();
    for want in [
        "#!/bin/bash\n",
        "#SBATCH --array=0-2\n",
        "#SBATCH --cpus-per-task=2\n",
        "#SBATCH --mem=2G\n",
        "#SBATCH --time=0:30:00\n",
        "#SBATCH --account=proj\n",
        "--dependency=afterok:",
        "--shard \"$SLURM_ARRAY_TASK_ID/3\"",
        "sweep merge --quiet",
    ] {
        assert!(text.contains(want), "the script lacks {want:?}:\n{text}");
    }
    assert!(
        out.join("slurm").is_dir(),
        "the log directory exists before submission"
    );
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&syntax.stderr)
    );

    // The array tasks, as Slurm starts them.
    for k in 0..3 {
        let o = Command::new("bash")
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .env("SLURM_CPUS_PER_TASK", "2")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "task {k}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The submit branch, against a fake sbatch that records its arguments
    // and runs the merge job's --wrap command.
    let bin = tmp.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let log = tmp.path().join("sbatch.log");
    let fake = format!(
        r#"#!/bin/bash
echo "$@" >> '{log}'
for a in "$@"; do case "$a" in --wrap=*) bash -c "${{a#--wrap=}}" || exit 1;; esac; done
echo "4242;cluster"
"#,
        log = log.display()
    );
    fs::write(bin.join("sbatch"), fake).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(bin.join("sbatch"))
        .status()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = Command::new("bash")
        .arg(&script)
        .env("PATH", path)
        .env_remove("SLURM_ARRAY_TASK_ID")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "submit: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout)
        .contains("submitted array job 4242 (3 tasks) and merge job 4242"));
    let calls = fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[0].starts_with("--parsable "), "{}", calls[0]);
    assert!(
        calls[1].contains("--dependency=afterok:4242"),
        "{}",
        calls[1]
    );
    assert!(calls[1].contains("--account=proj"), "{}", calls[1]);
    for f in ["results.json", "results.csv"] {
        assert_eq!(
            fs::read(out.join(f)).unwrap(),
            fs::read(reference.join(f)).unwrap(),
            "{f}: emitted array + merge vs one run"
        );
    }
}

/// The bar is drawn on a terminal (under `script`, which gives the command a
/// pseudo-terminal), not before the work has taken a second, never with
/// --quiet or without a terminal, and it changes no result.
#[test]
fn progress_bar_only_on_a_terminal_and_not_quiet() {
    if Command::new("script").arg("--version").output().is_err() {
        return gresim_test_support::skip!(
            "progress_bar_only_on_a_terminal_and_not_quiet",
            "no `script` (bsdutils/util-linux) to give sim a terminal",
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let sweep = tmp.path().join("bar.json");
    fs::write(
        &sweep,
        format!(
            r#"{{"scenario": {}, "policies": ["slurm", "fifo"], "seeds": [1, 2, 3, 4],
                "parameters": {{"bf_max_job_test": [5, 500]}}, "outputs": {{"per_point": "none"}}}}"#,
            serde_json::to_string(&example_scenario().to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let sim_path = env!("CARGO_BIN_EXE_sim");
    // On a terminal; `after` overrides the one-second delay (milliseconds).
    let on_tty = |extra: &str, out: &str, after: Option<&str>| -> String {
        let cmd = format!(
            "'{sim_path}' sweep --threads 2 {extra} --out '{}' '{}' >/dev/null",
            tmp.path().join(out).display(),
            sweep.display()
        );
        let mut c = Command::new("script");
        c.args(["-qec", &cmd, "/dev/null"]).env("TERM", "xterm");
        match after {
            Some(ms) => c.env("GRESIM_PROGRESS_AFTER_MS", ms),
            None => c.env_remove("GRESIM_PROGRESS_AFTER_MS"),
        };
        let o = c.output().expect("script runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let shown = on_tty("", "a", Some("0"));
    assert!(
        shown.contains("/16 points"),
        "a bar over 16 points on the terminal: {shown:?}"
    );
    let quiet = on_tty("--quiet", "b", Some("0"));
    assert!(
        !quiet.contains("points"),
        "--quiet draws nothing: {quiet:?}"
    );
    // With the real delay, a sweep of a fraction of a second shows no bar.
    let tiny = tmp.path().join("tiny.json");
    fs::write(
        &tiny,
        format!(
            r#"{{"scenario": {}, "policies": ["fifo"], "parameters": {{"workload.synthetic.jobs": [5]}},
                "outputs": {{"per_point": "none"}}}}"#,
            serde_json::to_string(&example_scenario().to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let cmd = format!(
        "'{sim_path}' sweep --out '{}' '{}' >/dev/null",
        tmp.path().join("d").display(),
        tiny.display()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("TERM", "xterm")
        .env_remove("GRESIM_PROGRESS_AFTER_MS")
        .output()
        .expect("script runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("points"),
        "no bar in the first second: {out:?}"
    );
    // Not a terminal: nothing on stderr.
    let o = ok(run(sim()
        .args(["sweep", "--threads", "2", "--out"])
        .arg(tmp.path().join("c"))
        .arg(&sweep)
        .env("GRESIM_PROGRESS_AFTER_MS", "0")));
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("points"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        fs::read(tmp.path().join("a/results.json")).unwrap(),
        fs::read(tmp.path().join("c/results.json")).unwrap(),
        "the bar changes no result"
    );
}

/// `load_scale` on jobs given as JSON divides their submit times.
#[test]
fn load_scale_divides_submit_times_of_listed_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let scen = fs::canonicalize(repo().join("scenarios/ddp_2x8.json")).unwrap();
    let sweep = tmp.path().join("inline.json");
    fs::write(
        &sweep,
        format!(
            r#"{{"scenario": {}, "policies": ["fifo"], "parameters": {{"load_scale": [1, 3]}}}}"#,
            serde_json::to_string(&scen.to_string_lossy()).unwrap()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    ok(run(sim()
        .args(["sweep", "--quiet", "--out"])
        .arg(&out)
        .arg(&sweep)));
    let submits = |p: &str| -> BTreeMap<String, u64> {
        let text = fs::read_to_string(out.join("points").join(p).join("records.csv")).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let id = head.iter().position(|h| *h == "job_id").unwrap();
        let sub = head.iter().position(|h| *h == "submit").unwrap();
        lines
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[id].to_string(), f[sub].parse().unwrap())
            })
            .collect()
    };
    let base = submits("0000");
    let fast = submits("0001");
    assert_eq!(
        base.keys().collect::<Vec<_>>(),
        fast.keys().collect::<Vec<_>>()
    );
    assert!(base.values().any(|s| *s >= 3), "{base:?}");
    for (j, s) in &base {
        assert_eq!(fast[j], s / 3, "job {j}");
    }
}
