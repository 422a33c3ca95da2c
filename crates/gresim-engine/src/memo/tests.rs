//! `ShapeMemo`: one answer per request shape.

use super::*;
use gresim_model::job::GpuReq;

fn req(gpus: u32, limit: u64) -> Arc<JobRequest> {
    Arc::new(JobRequest {
        gpus_per_node: vec![GpuReq {
            ty: None,
            count: gpus,
        }],
        time_limit: Some(Some(limit)),
        ..JobRequest::default()
    })
}

/// Requests differing only in their time limit share one answer; any
/// other difference computes a new one.
#[test]
fn one_answer_per_shape() {
    let mut m: ShapeMemo<u32> = ShapeMemo::default();
    let mut calls = 0;
    let mut ask = |m: &mut ShapeMemo<u32>, r: &Arc<JobRequest>| {
        m.get_or(r, || {
            calls += 1;
            r.gpus_per_node[0].count
        })
    };
    assert_eq!(ask(&mut m, &req(2, 60)), 2);
    assert_eq!(ask(&mut m, &req(2, 120)), 2);
    assert_eq!(ask(&mut m, &req(4, 60)), 4);
    assert_eq!(ask(&mut m, &req(2, 600)), 2);
    let mut other = (*req(2, 60)).clone();
    other.exclusive = true;
    assert_eq!(ask(&mut m, &Arc::new(other)), 2);
    assert_eq!(calls, 3);
}
