//! Unit tests of `metrics` (metrics.rs).

use super::*;

#[test]
fn the_columns_are_the_fields_in_order() {
    let m = Metrics {
        jobs: 1,
        completed: 2,
        gpu_utilization: 3.0,
        gpu_util_sm: 4.0,
        gpu_util_needed: 5.0,
        wait_mean: 6.0,
        wait_p50: 7.0,
        wait_p95: 8.0,
        slice_job_wait_mean: 9.0,
        jct_mean: 10.0,
        bounded_slowdown_mean: 11.0,
        makespan: 12,
        jobs_per_hour: 13.0,
        placed_ideally: 14.0,
        allreduce_slowdown: 15.0,
        gpu_hours_lost: 16.0,
        fragmentation: 17.0,
        repartitions: 18,
        reconfig_gpu_seconds: 19,
    };
    let v = serde_json::to_value(&m).expect("JSON");
    let vals = m.csv_values();
    assert_eq!(vals.len(), COLUMNS.len());
    for (i, c) in COLUMNS.iter().enumerate() {
        assert_eq!(
            v[c].as_f64(),
            Some((i + 1) as f64),
            "column {c} is field {}",
            i + 1
        );
        assert_eq!(vals[i].parse::<f64>().ok(), Some((i + 1) as f64), "{c}");
    }
    assert_eq!(v.as_object().map(|o| o.len()), Some(COLUMNS.len()));
}
