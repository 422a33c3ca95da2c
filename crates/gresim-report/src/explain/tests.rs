//! Unit tests of `explain` (explain.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;

fn rf() -> RunFile {
    RunFile::from_output(&sample_output(), &RunMeta::new("tiny"))
}

#[test]
fn explains_a_resource_wait() {
    let mut r = rf();
    // Job 2 asks for 1 GPU with 2 CPUs and 500 MiB.
    r.jobs[1].request.gpus_per_node = vec![crate::run_file::GpuReqRec { ty: None, count: 1 }];
    r.jobs[1].request.mem = "per_node".into();
    r.jobs[1].request.mem_mib = 500;
    r.jobs[1].reasons = Some(vec![(5, "Resources".into(), None)]);
    let text = explain(&r, "2", Some(50)).unwrap();
    assert!(
        text.starts_with("job 2 \"eval, \"quick\"\" (user bob) at t=50 (0:50)\n"),
        "{text}"
    );
    assert!(
        text.contains("state   PENDING, reason Resources\n"),
        "{text}"
    );
    assert!(
        text.contains("asks    1 node(s), gpu:1 per node, --mem=500M\n"),
        "{text}"
    );
    assert!(text.contains("ever    yes"), "{text}");
    // Job 1 holds both GPUs; its planned end is 10 + 3600.
    assert!(
        text.contains("         1 train      alice    gpu01: 4 CPU 1000M GPU 0-1; started 10, planned end 3610, actual end 110\n"),
        "{text}"
    );
    assert!(
        text.contains("estimate  t=3610 (1:00:10) on gpu01 (ESTIMATE"),
        "{text}"
    );
    assert!(
        text.contains("actual    started at t=110 (1:50) on gpu01"),
        "{text}"
    );
}

#[test]
fn a_segment_is_explained() {
    let mut r = rf();
    r.jobs[1].reasons = Some(vec![(5, "Resources".into(), None)]);
    let text = explain(&r, "2", Some(50)).unwrap();
    assert!(!text.contains("segment"), "{text}");
    r.jobs[1].request.segment = Some(2);
    let text = explain(&r, "2", Some(50)).unwrap();
    assert!(
        text.contains("segment --segment=2: under topology/block"),
        "{text}"
    );
}

#[test]
fn never_held_and_unknown() {
    let mut r = rf();
    r.jobs[2].request.gpus_per_node = vec![crate::run_file::GpuReqRec { ty: None, count: 3 }];
    r.jobs[2].request.mem = "per_node".into();
    r.jobs[2].request.mem_mib = 10;
    let text = explain(&r, "3_4", Some(250)).unwrap();
    assert!(text.contains("ever    NO"), "{text}");
    assert!(text.contains("estimate  never"), "{text}");
    r.jobs[2].reasons = Some(vec![(20, "JobHeldUser".into(), None)]);
    let text = explain(&r, "3_4", Some(250)).unwrap();
    assert!(
        text.contains("held    the job is held by its user"),
        "{text}"
    );
    assert!(explain(&r, "99", None).unwrap_err().contains("no job '99'"));
    let text = explain(&r, "1", Some(50)).unwrap();
    assert!(text.contains("RUNNING since t=10"), "{text}");
    let text = explain(&r, "1", None).unwrap();
    assert!(text.contains("at t=9 (0:09)"), "{text}");
}
