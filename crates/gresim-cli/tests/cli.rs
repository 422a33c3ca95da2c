//! The `sim` binary, run as a user would: bad input gets a clear error
//! naming the file and the place in it, exit code 2, no panic and no output
//! files; good input gets exit code 0 and the five output files.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use tempfile::TempDir;

const OUTPUT_FILES: [&str; 5] = [
    "records.json",
    "records.csv",
    "summary.json",
    "utilization.svg",
    "run.json",
];

/// Runs `sim` with `args`, in `cwd` (so that a default output directory
/// would land in the temporary directory, never in the source tree).
fn sim_in(cwd: &Path, args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("the sim binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temporary directory with a scenario in it and an output directory
/// that does not exist yet.
struct Case {
    dir: TempDir,
    scenario: PathBuf,
    out: PathBuf,
}

impl Case {
    fn new(file_name: &str, contents: &str) -> Case {
        let dir = TempDir::new().expect("a temporary directory");
        let scenario = dir.path().join(file_name);
        fs::write(&scenario, contents).expect("write the scenario");
        let out = dir.path().join("out");
        Case { dir, scenario, out }
    }

    fn json(file_name: &str, v: &Value) -> Case {
        Case::new(
            file_name,
            &serde_json::to_string_pretty(v).expect("serialisable"),
        )
    }

    /// `sim run SCENARIO --out OUT` plus `extra`.
    fn run(&self, extra: &[&str]) -> Output {
        let mut args: Vec<&OsStr> = vec![
            OsStr::new("run"),
            self.scenario.as_os_str(),
            OsStr::new("--out"),
            self.out.as_os_str(),
        ];
        args.extend(extra.iter().map(OsStr::new));
        sim_in(self.dir.path(), &args)
    }

    /// The run failed on bad input: exit 2, an error on stderr that contains
    /// every one of `needles`, nothing on stdout and no output written.
    fn assert_bad_input(&self, out: &Output, needles: &[&str]) {
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "exit code for bad input; stderr:\n{stderr}"
        );
        assert!(
            !stderr.contains("panicked"),
            "bad input made sim panic:\n{stderr}"
        );
        assert!(
            stderr.starts_with("error: "),
            "the error should start with 'error: ':\n{stderr}"
        );
        for n in needles {
            assert!(
                stderr.contains(n),
                "the error should mention {n:?}:\n{stderr}"
            );
        }
        assert!(
            out.stdout.is_empty(),
            "nothing on stdout on bad input, got:\n{}",
            text(&out.stdout)
        );
        assert_no_output(&self.out);
        // Nor anywhere else: the temporary directory holds only the scenario.
        let left: Vec<_> = fs::read_dir(self.dir.path())
            .expect("read the temporary directory")
            .map(|e| e.expect("an entry").file_name())
            .filter(|n| n != self.scenario.file_name().expect("a file name"))
            .collect();
        assert!(left.is_empty(), "bad input left files behind: {left:?}");
    }

    fn scenario_str(&self) -> String {
        self.scenario.display().to_string()
    }
}

/// `dir` is absent or empty.
fn assert_no_output(dir: &Path) {
    if dir.exists() {
        let entries: Vec<_> = fs::read_dir(dir)
            .expect("read the output directory")
            .map(|e| e.expect("an entry").file_name())
            .collect();
        assert!(
            entries.is_empty(),
            "bad input wrote into {}: {entries:?}",
            dir.display()
        );
    }
}

/// A small valid scenario: two A100 nodes and three jobs.
fn valid() -> Value {
    json!({
        "schema_version": 1,
        "name": "cli-valid",
        "cluster": {
            "nodes": [{
                "names": "gpu[01-02]",
                "sockets": 2,
                "cores_per_socket": 8,
                "memory": "256G",
                "gpus": [{"model": "A100-SXM4-80GB", "count": 4, "socket": 0}]
            }]
        },
        "partitions": [{"name": "gpu", "default": true, "max_time": "1-00:00:00"}],
        "scheduler": {"def_mem_per_cpu": "4G"},
        "workload": {
            "jobs": [
                {"id": "a", "submit": 0, "run_time": 600, "time": "1:00:00", "gres": "gpu:a100:2"},
                {"id": "b", "submit": 10, "run_time": 300, "time": 30, "gres": "gpu:4", "nodes": 2},
                {"id": "c", "submit": 20, "run_time": 100, "time": 10, "cpus_per_task": 4}
            ]
        }
    })
}

/// A cluster without GPUs.
fn cpu_only() -> Value {
    let mut v = valid();
    v["cluster"]["nodes"][0] = json!({
        "names": "cpu[01-02]",
        "sockets": 2,
        "cores_per_socket": 8,
        "memory": "256G"
    });
    v["workload"]["jobs"] = json!([{"submit": 0, "run_time": 60, "time": 10}]);
    v
}

// ---- bad input ----------------------------------------------------------------

#[test]
fn malformed_json_names_the_file_and_line() {
    // Line 6 lacks the comma after "cores_per_socket": 8.
    let scenario = r#"{
  "schema_version": 1,
  "cluster": {
    "nodes": [
      {"names": "gpu[01-02]",
       "cores_per_socket": 8
       "memory": "64G"}
    ]
  },
  "workload": {"jobs": [{"submit": 0, "run_time": 10}]}
}
"#;
    let case = Case::new("broken.json", scenario);
    let out = case.run(&[]);
    let file_line = format!("{}:7:", case.scenario_str());
    case.assert_bad_input(&out, &[&file_line, "expected `,` or `}`"]);
}

#[test]
fn truncated_json_names_the_file_and_line() {
    let full = serde_json::to_string_pretty(&valid()).expect("serialisable");
    let cut = &full[..full.len() / 2];
    let case = Case::new("truncated.json", cut);
    let out = case.run(&[]);
    let last_line = cut.lines().count();
    let file_line = format!("{}:{last_line}:", case.scenario_str());
    case.assert_bad_input(&out, &[&file_line, "EOF"]);
}

#[test]
fn unknown_field_names_its_json_path() {
    let mut v = valid();
    v["cluster"]["nodes"][0]["gpus"][0]["colour"] = json!("green");
    let case = Case::json("colour.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(
        &out,
        &[
            &case.scenario_str(),
            "cluster.nodes[0].gpus[0].colour",
            "unknown field `colour`",
        ],
    );
}

#[test]
fn unknown_top_level_and_job_fields_name_their_json_paths() {
    let mut v = valid();
    v["workload"]["jobs"][1]["gpu"] = json!(2);
    let case = Case::json("jobfield.json", &v);
    case.assert_bad_input(&case.run(&[]), &["workload.jobs[1].gpu", "unknown field"]);

    let mut v = valid();
    v["horizn"] = json!(100);
    let case = Case::json("top.json", &v);
    case.assert_bad_input(&case.run(&[]), &["horizn", "unknown field"]);
}

#[test]
fn negative_gpu_count_is_refused() {
    let mut v = valid();
    v["cluster"]["nodes"][0]["gpus"][0]["count"] = json!(-1);
    let case = Case::json("neg_gpus.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(
        &out,
        &[&case.scenario_str(), "cluster.nodes[0].gpus[0].count", "-1"],
    );
}

#[test]
fn negative_ntasks_is_refused() {
    let mut v = valid();
    v["workload"]["jobs"][0]["ntasks"] = json!(-2);
    let case = Case::json("neg_ntasks.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(
        &out,
        &[&case.scenario_str(), "workload.jobs[0].ntasks", "-2"],
    );
}

#[test]
fn negative_count_in_a_string_is_refused() {
    let mut v = valid();
    v["workload"]["jobs"][0]["gres"] = json!("gpu:a100:-1");
    let case = Case::json("neg_gres.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(&out, &["workload.jobs[0].gres", "negative"]);
}

#[test]
fn unknown_gpu_type_in_a_request_is_refused() {
    let mut v = valid();
    v["workload"]["jobs"][0]["gres"] = json!("gpu:v100:1");
    let case = Case::json("v100.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(
        &out,
        &[
            &case.scenario_str(),
            "workload.jobs[0].gres",
            "unknown GPU type",
            "v100",
            // It says what the cluster does have.
            "a100",
        ],
    );
}

#[test]
fn unknown_gpu_type_in_gpus_is_refused() {
    let mut v = valid();
    v["workload"]["jobs"][2]["gpus"] = json!("h100:2");
    let case = Case::json("h100.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(&out, &["workload.jobs[2].gpus", "unknown GPU type"]);
}

#[test]
fn gpu_request_on_a_cluster_without_gpus_is_refused() {
    let mut v = cpu_only();
    v["workload"]["jobs"][0]["gres"] = json!("gpu:1");
    let case = Case::json("nogpu_gres.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(
        &out,
        &[&case.scenario_str(), "workload.jobs[0].gres", "no GPUs"],
    );

    let mut v = cpu_only();
    v["workload"]["jobs"][0]["gpus"] = json!(2);
    let case = Case::json("nogpu_gpus.json", &v);
    let out = case.run(&[]);
    case.assert_bad_input(&out, &["workload.jobs[0].gpus", "no GPUs"]);
}

#[test]
fn nonexistent_scenario_file_is_refused() {
    let dir = TempDir::new().expect("a temporary directory");
    let missing = dir.path().join("no_such_scenario.json");
    let out_dir = dir.path().join("out");
    let out = sim_in(
        dir.path(),
        &[
            OsStr::new("run"),
            missing.as_os_str(),
            OsStr::new("--out"),
            out_dir.as_os_str(),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("no_such_scenario.json"),
        "the error names the file:\n{stderr}"
    );
    assert_no_output(&out_dir);
    // The short form too.
    let out = sim_in(dir.path(), &[missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(fs::read_dir(dir.path()).expect("read").next().is_none());
}

#[test]
fn unknown_policy_is_refused() {
    let case = Case::json("policy.json", &valid());
    let out = case.run(&["--policy", "no-such-policy"]);
    case.assert_bad_input(&out, &["no-such-policy", "fifo"]);
}

/// `scontrol` on a job id that does not exist yet is an error in Slurm
/// ("Invalid job id specified"), not a crash: an event that names a job
/// before its submission must not make sim panic.
#[test]
fn an_event_before_the_jobs_submission_does_not_panic() {
    let mut v = valid();
    v["events"] = json!([{"at": 5, "action": "cancel", "job": "c"}]);
    let case = Case::json("early_event.json", &v);
    let out = case.run(&[]);
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "an event on a job not yet submitted made sim panic (exit {:?}):\n{stderr}",
        out.status.code()
    );
    match out.status.code() {
        Some(0) => {
            for f in OUTPUT_FILES {
                assert!(case.out.join(f).is_file(), "{f} missing");
            }
        }
        Some(2) => case.assert_bad_input(&out, &["events[0]"]),
        other => panic!("exit code {other:?}; stderr:\n{stderr}"),
    }
}

// ---- good input ---------------------------------------------------------------

fn read_outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    OUTPUT_FILES
        .iter()
        .map(|f| {
            let p = dir.join(f);
            let bytes = fs::read(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
            (f.to_string(), bytes)
        })
        .collect()
}

#[test]
fn a_valid_run_writes_every_output() {
    let case = Case::json("valid.json", &valid());
    let out = case.run(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let mut names: Vec<String> = fs::read_dir(&case.out)
        .expect("the output directory exists")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    let mut want: Vec<String> = OUTPUT_FILES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(
        names, want,
        "exactly the five outputs, no temporary leftovers"
    );
    for (name, bytes) in read_outputs(&case.out) {
        assert!(!bytes.is_empty(), "{name} is empty");
    }
    let records: Value = serde_json::from_slice(&fs::read(case.out.join("records.json")).unwrap())
        .expect("records.json is JSON");
    let n = records
        .as_array()
        .or_else(|| records.get("jobs").and_then(Value::as_array))
        .map(Vec::len);
    assert_eq!(n, Some(3), "three job records in {records}");
    let summary: Value = serde_json::from_slice(&fs::read(case.out.join("summary.json")).unwrap())
        .expect("summary.json is JSON");
    assert_eq!(summary["jobs"], json!(3), "{summary}");
    let csv = text(&fs::read(case.out.join("records.csv")).unwrap());
    assert_eq!(csv.lines().count(), 4, "a header and three rows:\n{csv}");
    let svg = text(&fs::read(case.out.join("utilization.svg")).unwrap());
    assert!(svg.contains("<svg"), "an SVG document");
    // The table names the output directory.
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&case.out.display().to_string()), "{stdout}");
}

#[test]
fn short_form_equals_run_subcommand() {
    let case = Case::json("same.json", &valid());
    let long_out = case.dir.path().join("long");
    let short_out = case.dir.path().join("short");
    let long = sim_in(
        case.dir.path(),
        &[
            OsStr::new("run"),
            case.scenario.as_os_str(),
            OsStr::new("--out"),
            long_out.as_os_str(),
            OsStr::new("--format"),
            OsStr::new("json"),
        ],
    );
    let short = sim_in(
        case.dir.path(),
        &[
            case.scenario.as_os_str(),
            OsStr::new("--out"),
            short_out.as_os_str(),
            OsStr::new("--format"),
            OsStr::new("json"),
        ],
    );
    assert_eq!(long.status.code(), Some(0), "{}", text(&long.stderr));
    assert_eq!(short.status.code(), Some(0), "{}", text(&short.stderr));
    assert_eq!(text(&long.stdout), text(&short.stdout), "same summary");
    assert_eq!(text(&long.stderr), text(&short.stderr));
    assert_eq!(
        read_outputs(&long_out),
        read_outputs(&short_out),
        "same output files"
    );
}

#[test]
fn help_shows_examples() {
    let dir = TempDir::new().expect("a temporary directory");
    for args in [&["--help"][..], &["run", "--help"][..], &["help"][..]] {
        let os: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = sim_in(dir.path(), &os);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "sim {args:?}: {}",
            text(&out.stderr)
        );
        assert!(stdout.contains("Examples"), "sim {args:?}:\n{stdout}");
    }
    // No arguments at all: usage on stderr, exit 2, no panic.
    let out = sim_in(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!text(&out.stderr).contains("panicked"));
}

#[test]
fn format_json_prints_valid_json() {
    let case = Case::json("fmt.json", &valid());
    let out = case.run(&["--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", text(&out.stdout)));
    assert_eq!(v["jobs"], json!(3), "{v}");
    assert_eq!(v["scenario"], json!("cli-valid"), "{v}");
    // Same as the summary written to disk.
    let on_disk: Value =
        serde_json::from_slice(&fs::read(case.out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(v, on_disk);
}

#[test]
fn quiet_prints_nothing() {
    let case = Case::json("quiet.json", &valid());
    let out = case.run(&["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert_eq!(read_outputs(&case.out).len(), OUTPUT_FILES.len());
}
