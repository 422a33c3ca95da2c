//! Unit tests of `records` (records.rs).

use super::*;
use crate::test_support::sample_output;

#[test]
fn records_have_exact_fields() {
    let out = sample_output();
    let r = job_records(&out);
    assert_eq!(r.len(), 3);

    let a = &r[0];
    assert_eq!(a.job_id, "1");
    assert_eq!(a.name, "train");
    assert_eq!(a.user, "alice");
    assert_eq!(a.partition, "gpu");
    assert_eq!(a.state, "COMPLETED");
    assert_eq!(a.reason, "None");
    assert_eq!((a.submit, a.eligible), (0, Some(0)));
    assert_eq!((a.start, a.end), (Some(10), Some(110)));
    assert_eq!(a.wait, Some(10));
    assert_eq!(a.elapsed, Some(100));
    // No --time: the partition's DefaultTime falls back to MaxTime.
    assert_eq!(a.time_limit, Some(3600));
    assert_eq!(a.nodes, "gpu01");
    assert_eq!(a.gpus, "gpu01:0-1");
    assert_eq!((a.gpu_count, a.cpus, a.mem_mib), (2, 4, 1000));
    assert_eq!((a.restarts, a.exit_code, a.gpu_seconds), (0, 0, 200));

    let b = &r[1];
    assert_eq!(b.job_id, "2");
    assert_eq!(b.state, "TIMEOUT");
    assert_eq!((b.start, b.end), (Some(200), Some(300)));
    // Wait counts to the FIRST run, elapsed is the LAST run.
    assert_eq!(b.wait, Some(105));
    assert_eq!(b.elapsed, Some(100));
    assert_eq!(b.time_limit, Some(100));
    assert_eq!(b.gpus, "gpu01:1");
    assert_eq!(b.gpu_count, 1);
    assert_eq!(b.restarts, 1);
    assert_eq!(b.exit_code, 1);
    // 1 GPU × 40 s (first run) + 1 GPU × 100 s (second run).
    assert_eq!(b.gpu_seconds, 140);

    let c = &r[2];
    assert_eq!(c.job_id, "3_4");
    assert_eq!(c.state, "PENDING");
    assert_eq!(c.reason, "Priority");
    assert_eq!(c.partition, "gpu");
    assert_eq!(
        (c.start, c.end, c.wait, c.elapsed),
        (None, None, None, None)
    );
    assert_eq!((c.nodes.as_str(), c.gpus.as_str()), ("", ""));
    assert_eq!(c.time_limit, None, "--time=UNLIMITED");
    assert_eq!(c.gpu_seconds, 0);
}

#[test]
fn running_job_elapsed_runs_to_end_time() {
    let mut out = sample_output();
    out.jobs[1].runs[1].end = None;
    out.jobs[1].runs[1].state = JobState::Running;
    out.jobs[1].state = JobState::Running;
    out.end_time = 250;
    let r = &job_records(&out)[1];
    assert_eq!(r.state, "RUNNING");
    assert_eq!((r.end, r.elapsed), (None, Some(50)));
    assert_eq!(r.gpu_seconds, 40 + 50);
}

#[test]
fn gpu_index_ranges() {
    assert_eq!(compress_indices([0u8, 1, 2, 3, 5].into_iter()), "0-3,5");
    assert_eq!(compress_indices([0u8, 2].into_iter()), "0,2");
    assert_eq!(compress_indices([7u8].into_iter()), "7");
    assert_eq!(compress_indices(std::iter::empty()), "");
    assert_eq!(compress_indices([254u8, 255].into_iter()), "254-255");
}

#[test]
fn csv_quotes_and_empties() {
    let out = sample_output();
    let csv = records_csv(&job_records(&out));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(
        lines[0],
        "job_id,name,user,partition,state,reason,submit,eligible,start,end,wait,elapsed,\
         time_limit,nodes,gpus,gpu_count,cpus,mem_mib,restarts,exit_code,gpu_seconds,\
         lost_gpu_seconds,oom,cpu_fallback,note"
    );
    assert_eq!(
        lines[1],
        "1,train,alice,gpu,COMPLETED,None,0,0,10,110,10,100,3600,gpu01,gpu01:0-1,2,4,1000,0,0,200,\
         0,false,false,"
    );
    // The name holds a comma and quotes: quoted, inner quotes doubled.
    assert!(
        lines[2].starts_with("2,\"eval, \"\"quick\"\"\",bob,gpu,TIMEOUT,None,5,"),
        "{}",
        lines[2]
    );
    // A pending job: empty Option fields.
    assert_eq!(
        lines[3],
        "3_4,sweep,carol,gpu,PENDING,Priority,20,,,,,,,,,0,0,0,0,0,0,0,false,false,"
    );
    assert!(csv.ends_with('\n'));
    assert_eq!(csv_field("a\nb"), "\"a\nb\"");
    assert_eq!(csv_field("plain"), "plain");
}

/// The one-pass writer gives the bytes of the record-table functions.
#[test]
fn streamed_records_match_the_tables() {
    let mut out = sample_output();
    for round in 0..3 {
        let recs = job_records(&out);
        let (mut json, mut csv) = (Vec::new(), Vec::new());
        write_records(&out, &mut json, &mut csv).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            records_json(&recs),
            "round {round}"
        );
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            records_csv(&recs),
            "round {round}"
        );
        if round == 0 {
            // A note (nested quoting in both formats) and a lost-work count.
            out.jobs[1].add_lost(40, 0);
        } else {
            out.jobs.clear();
        }
    }
    let (mut json, mut csv) = (Vec::new(), Vec::new());
    write_records(&out, &mut json, &mut csv).unwrap();
    assert_eq!(json, b"[]\n");
    assert_eq!(csv.iter().filter(|&&b| b == b'\n').count(), 1);
}

#[test]
fn json_is_an_array_with_nulls() {
    let out = sample_output();
    let json = records_json(&job_records(&out));
    assert!(json.ends_with("]\n"));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 3);
    assert_eq!(arr[0]["gpus"], "gpu01:0-1");
    assert_eq!(arr[0]["wait"], 10);
    assert!(arr[2]["time_limit"].is_null());
    assert!(arr[2]["start"].is_null());
    assert_eq!(arr[1]["name"], "eval, \"quick\"");
}
