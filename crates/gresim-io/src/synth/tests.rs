//! The generator: `key_of` writes what `format!("syn{i}")` does, and the
//! stream's size hint counts the jobs still to come.

use super::key_of;

#[test]
fn keys_as_formatted() {
    for i in [0, 1, 9, 10, 99, 100, 12_345, 999_999, 1_000_000, u64::MAX] {
        assert_eq!(key_of(i), format!("syn{i}"));
    }
}

/// The stream's size hint is exact from start to end (the engine reserves
/// its tables by it), also through the scenario's wrapping adapters.
#[test]
fn size_hint_counts_the_jobs_still_to_come() {
    let text = r#"{
        "schema_version": 1,
        "cluster": {"nodes": [{"names": "n[1-2]", "sockets": 1, "cores_per_socket": 8,
            "memory": "64G", "gpus": [{"model": "A100-SXM4-80GB", "count": 2}]}]},
        "partitions": [{"name": "p", "nodes": "ALL", "default": true}],
        "workload": {"synthetic": {"jobs": 7, "mean_interarrival": 10, "run_time_median": 60,
            "run_time_sigma": 1, "mix": [{"name": "g", "weight": 1, "gpus": 1}]}}
    }"#;
    let scen = crate::parse_scenario(std::path::Path::new("t.json"), text).expect("parses");
    let mut jobs = scen.jobs(1);
    for left in (0..=7).rev() {
        assert_eq!(jobs.size_hint(), (left, Some(left)));
        assert_eq!(jobs.next().is_some(), left > 0);
    }
    assert!(jobs.next().is_none());
}
