//! The record's names for requests.

use super::*;

#[test]
fn requests_differing_only_in_time_limit_are_one() {
    let mut p = Picks::default();
    p.restart();
    let a = JobRequest {
        time_limit: Some(Some(60)),
        ..JobRequest::default()
    };
    let b = JobRequest {
        time_limit: Some(Some(600)),
        ..JobRequest::default()
    };
    let c = JobRequest {
        cpus_per_task: 2,
        ..JobRequest::default()
    };
    let (ia, ib, ic) = (p.request(&a), p.request(&b), p.request(&c));
    assert_eq!(ia.0, ib.0);
    assert_ne!(ia.0, ic.0);
}
