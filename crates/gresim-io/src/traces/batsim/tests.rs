//! Unit tests of `batsim` (batsim.rs).

use super::*;
use gresim_model::job::RunTime;

fn cluster(n: usize) -> Cluster {
    let text = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "host[0-{}]", "cores_per_socket": 4, "memory": "16G"}}]}},
            "workload": {{"jobs": []}}}}"#,
        n - 1
    );
    crate::parse_scenario(Path::new("c.json"), &text)
        .expect("test cluster")
        .cluster
}

const W: &str = r#"{
    "nb_res": 4,
    "jobs": [
        {"id": 9, "subtime": 10.25, "res": 2, "walltime": 100, "profile": "d"},
        {"id": "w!1", "subtime": 0, "res": 1, "walltime": -1, "profile": "c"},
        {"id": 3, "subtime": 10.25, "res": 4, "walltime": 7.5, "profile": "other"}
    ],
    "profiles": {
        "d": {"type": "delay", "delay": 88.51},
        "c": {"type": "composed", "repeat": 3, "seq": ["d", "d"]},
        "other": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}
    }
}"#;

#[test]
fn reads_jobs_in_submit_order_with_exact_walltimes() {
    let c = cluster(4);
    let p = Path::new("w.json");
    let v = parse(p, W, &c, 1).expect("valid workload");
    let keys: Vec<&str> = v.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        keys,
        ["w!1", "9", "3"],
        "by submit time, ties in file order"
    );
    assert_eq!(v[0].submit, 0);
    assert_eq!(v[0].run_time, RunTime::Secs(531), "3 × (88.51 + 88.51)");
    assert_eq!(v[0].request.time_limit, None, "walltime -1 is none");
    assert_eq!(v[1].submit, 10);
    assert_eq!(
        v[1].request.time_limit,
        Some(Some(100)),
        "not rounded to minutes"
    );
    assert_eq!((v[1].request.min_nodes, v[1].request.exclusive), (2, true));
    assert_eq!(v[2].run_time, RunTime::ToLimit);
    assert_eq!(v[2].request.time_limit, Some(Some(8)));
    // Microsecond ticks keep the fractions.
    let us = parse(p, W, &c, 1_000_000).expect("valid workload");
    assert_eq!(us[1].submit, 10_250_000);
    assert_eq!(us[1].run_time, RunTime::Secs(88_510_000));
    assert_eq!(us[2].request.time_limit, Some(Some(7_500_000)));
}

#[test]
fn errors_name_the_field() {
    let c = cluster(4);
    let p = Path::new("w.json");
    let cases = [
        (r#"{"jobs": 3}"#, "at jobs: expected an array"),
        (
            r#"{"jobs": [{"id": 1, "subtime": -1, "res": 1, "profile": "d"}]}"#,
            "jobs[0].subtime",
        ),
        (
            r#"{"jobs": [{"id": 1, "subtime": 0, "res": 0, "profile": "d"}]}"#,
            "jobs[0].res",
        ),
        (
            r#"{"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "nope"}], "profiles": {}}"#,
            "no profile named 'nope'",
        ),
        (
            r#"{"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "a"}],
                "profiles": {"a": {"type": "composed", "seq": ["a"]}}}"#,
            "nested too deeply",
        ),
        (
            r#"{"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"},
                         {"id": 1, "subtime": 1, "res": 1, "profile": "d"}],
                "profiles": {"d": {"type": "delay", "delay": 1}}}"#,
            "id '1' is used twice",
        ),
        ("{\"jobs\": [\n{]}", "w.json:2:"),
    ];
    for (text, want) in cases {
        let e = parse(p, text, &c, 1).expect_err(text).to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
    assert!(parse(p, W, &c, 0).is_err(), "zero ticks per second");
}
