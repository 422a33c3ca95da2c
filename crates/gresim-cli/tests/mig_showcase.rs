//! `sim run scenarios/mig_packing.json`, the showcase: the base run (static
//! MIG under `slurm`) is what it would be without variants, the variants run
//! the same jobs on whole GPUs and with dynamic MIG, the dynamic variant's
//! repartitionings honour the delay and count as lost capacity, the whole
//! thing is byte-identical run after run and at any thread count, and bad
//! variants are input errors.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use tempfile::TempDir;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn showcase() -> PathBuf {
    repo().join("scenarios/mig_packing.json")
}

fn sim(args: &[&Path], out: &Path, threads: &str) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sim"));
    c.arg("run");
    for a in args {
        c.arg(a);
    }
    c.arg("--out").arg(out).env("RAYON_NUM_THREADS", threads);
    c.output().expect("sim runs")
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (job id, name, submit, elapsed) of every record of a run directory.
fn stream(dir: &Path) -> Vec<(String, String, u64, u64)> {
    let v: Value = serde_json::from_str(&read(&dir.join("records.json"))).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["job_id"].as_str().unwrap().to_string(),
                r["name"].as_str().unwrap().to_string(),
                r["submit"].as_u64().unwrap(),
                r["elapsed"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn showcase_runs_three_ways_and_the_base_run_is_unchanged() {
    let tmp = TempDir::new().unwrap();
    let out = tmp.path().join("show");
    let o = sim(&[&showcase()], &out, "2");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8(o.stdout).unwrap();
    for row in ["base ", "whole-gpu ", "dynamic-mig "] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "no row {row}: {stdout}"
        );
    }

    // The same scenario without its variants: the base outputs are the same.
    let mut v: Value = serde_json::from_str(&read(&showcase())).unwrap();
    let variants = v.as_object_mut().unwrap().remove("variants").unwrap();
    assert_eq!(variants.as_array().unwrap().len(), 2);
    let plain = tmp.path().join("plain.json");
    fs::write(&plain, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let plain_out = tmp.path().join("plain");
    let o = sim(&[&plain], &plain_out, "2");
    assert!(o.status.success());
    for f in ["records.json", "records.csv", "summary.json"] {
        assert_eq!(read(&out.join(f)), read(&plain_out.join(f)), "{f}");
    }
    assert!(!plain_out.join("variants.json").exists());

    // Every variant ran the same job stream.
    let base = stream(&out);
    assert_eq!(base.len(), 400);
    for sub in ["whole-gpu", "dynamic-mig"] {
        assert_eq!(stream(&out.join(sub)), base, "{sub}");
    }

    // The side-by-side figures.
    let t: Value = serde_json::from_str(&read(&out.join("variants.json"))).unwrap();
    let rows = t["variants"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["base", "whole-gpu", "dynamic-mig"]);
    let base_sum: Value = serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(rows[0]["wait_mean"], base_sum["wait"]["mean"]);
    assert_eq!(rows[0]["repartitions"], 0);
    assert!(
        base_sum.get("mig_reconfig").is_none(),
        "static MIG has no repartitionings"
    );
    // On whole GPUs a slice job holds a whole GPU: more compute allocated
    // than needed; with MIG, what is allocated is what is needed.
    let alloc = |r: &Value| r["gpu_util_sm"].as_f64().unwrap();
    let need = |r: &Value| r["gpu_util_needed"].as_f64().unwrap();
    assert!(alloc(&rows[1]) > need(&rows[1]) + 0.1);
    assert!((alloc(&rows[0]) - need(&rows[0])).abs() < 1e-9);
    // The dynamic variant repartitioned; every change took the delay, all
    // of it lost capacity (none was under way at the end).
    let dy: Value = serde_json::from_str(&read(&out.join("dynamic-mig/summary.json"))).unwrap();
    let m = &dy["mig_reconfig"];
    let n = m["reconfigurations"].as_u64().unwrap();
    assert!(n > 0);
    assert_eq!(m["delay"], 30);
    assert_eq!(m["reconfig_gpu_seconds"].as_u64().unwrap(), 30 * n);
    assert_eq!(rows[2]["repartitions"].as_u64().unwrap(), n);
    assert!(stdout.contains("dynamic-mig"));
}

#[test]
fn showcase_is_byte_identical_across_runs_and_thread_counts() {
    let tmp = TempDir::new().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let oa = sim(&[&showcase()], &a, "1");
    let ob = sim(&[&showcase()], &b, "2");
    assert!(oa.status.success() && ob.status.success());
    let strip =
        |s: &[u8], dir: &Path| String::from_utf8_lossy(s).replace(&*dir.to_string_lossy(), "OUT");
    assert_eq!(strip(&oa.stdout, &a), strip(&ob.stdout, &b));
    for sub in ["", "whole-gpu", "dynamic-mig"] {
        for f in ["records.json", "records.csv", "summary.json", "run.json"] {
            let (x, y) = (a.join(sub).join(f), b.join(sub).join(f));
            assert_eq!(
                fs::read(&x).unwrap(),
                fs::read(&y).unwrap(),
                "{}",
                x.display()
            );
        }
    }
    assert_eq!(
        read(&a.join("variants.json")),
        read(&b.join("variants.json"))
    );
}

#[test]
fn bad_variants_are_input_errors_and_write_nothing() {
    let tmp = TempDir::new().unwrap();
    let base: Value = serde_json::from_str(&read(&showcase())).unwrap();
    let cases: [(&str, Value, &str); 4] = [
        (
            "gpus",
            serde_json::json!([{"name": "x", "gpus": "half"}]),
            "variants[0].gpus",
        ),
        (
            "name",
            serde_json::json!([{"name": "a/b"}]),
            "variants[0].name",
        ),
        (
            "policy",
            serde_json::json!([{"name": "x", "policy": "nope"}]),
            "variants[0]",
        ),
        (
            "field",
            serde_json::json!([{"name": "x", "colour": 1}]),
            "colour",
        ),
    ];
    for (what, variants, needle) in cases {
        let mut v = base.clone();
        v["variants"] = variants;
        let p = tmp.path().join(format!("{what}.json"));
        fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
        let out = tmp.path().join(format!("out-{what}"));
        let o = sim(&[&p], &out, "2");
        assert_eq!(o.status.code(), Some(2), "{what}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{what}: {err}");
        assert!(!out.exists(), "{what}: nothing may be written");
    }
}
