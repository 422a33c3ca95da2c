//! Unit tests of `job` (job.rs).

use super::*;

fn run(start: Time) -> Run {
    Run {
        start,
        end: None,
        state: JobState::Running,
        partition: PartId(0),
        alloc: Default::default(),
        priority: 0,
    }
}

#[test]
fn runs_read_like_the_vec_they_replace() {
    let mut runs = Runs::default();
    let mut v: Vec<Run> = Vec::new();
    assert!(runs.is_empty());
    for t in [5, 7, 11] {
        runs.push(run(t));
        v.push(run(t));
        assert_eq!(&runs[..], &v[..]);
        assert_eq!(runs.last().map(|r| r.start), Some(t));
        assert_eq!(Runs::from(v.clone()), runs);
    }
    runs[1].end = Some(9);
    v[1].end = Some(9);
    assert_eq!((&runs).into_iter().filter(|r| r.end.is_some()).count(), 1);
    // Debug prints the runs as the Vec did.
    assert_eq!(format!("{runs:?}"), format!("{v:?}"));
}

#[test]
fn rare_spec_fields_round_trip_and_vanish_at_their_defaults() {
    let req = Arc::new(JobRequest::default());
    let plain = JobSpec::new("k", "n", "u", Arc::clone(&req), 3, RunTime::Secs(10));
    let mut s = plain.clone();
    assert_eq!(s.array(), None);
    assert_eq!(*s.behavior(), JobBehavior::default());
    assert_eq!(s.task_count(), 1);
    let a = ArraySpec {
        indices: vec![0, 2, 4],
        throttle: Some(1),
        step: 2,
    };
    s.set_array(Some(a.clone()));
    s.set_reject(Some("no".into()));
    s.set_requeue_after_start(Some(60));
    s.set_task_run_times(vec![(2, RunTime::Secs(99))]);
    assert_eq!(s.array(), Some(&a));
    assert_eq!(s.task_count(), 3);
    assert_eq!(s.reject(), Some("no"));
    assert_eq!(s.requeue_after_start(), Some(60));
    assert_eq!(s.run_time_of(Some(2)), RunTime::Secs(99));
    assert_eq!(s.run_time_of(Some(4)), RunTime::Secs(10));
    assert_ne!(s, plain);
    s.set_array(None);
    s.set_reject(None);
    s.set_requeue_after_start(None);
    s.set_task_run_times(Vec::new());
    // Back at the defaults: equal to a spec that never set them.
    assert_eq!(s, plain);
    assert!(s.rare.is_none());
}

#[test]
fn outcome_fields_accumulate_and_vanish_at_their_defaults() {
    let req = Arc::new(JobRequest::default());
    let mut j = Job {
        sub: 0,
        task: None,
        request: req,
        job_id: None,
        array_job_id: None,
        submit: 0,
        first_submit: 0,
        eligible: None,
        state: JobState::Pending,
        reason: Reason::None,
        reason_desc: None,
        priority: 1,
        run_time: RunTime::ToLimit,
        exit_code: 0,
        runs: Runs::default(),
        held: None,
        begin: None,
        requeue: false,
        planned_end: 0,
        outcome: JobOutcome::default(),
        oom: false,
        natural_end: None,
    };
    j.set_rejected(Some("bad".into()));
    j.set_rejected(None);
    assert!(
        j.outcome.0.is_none(),
        "no block while everything is at its default"
    );
    j.add_lost(10, 80);
    j.add_lost(5, 0);
    j.set_work_saved(600);
    assert_eq!(
        (j.lost_secs(), j.lost_gpu_secs(), j.work_saved()),
        (15, 80, 600)
    );
    assert_eq!(j.rejected(), None);
    j.set_rejected(Some("bad".into()));
    assert_eq!(j.rejected(), Some("bad"));
    j.set_rejected(None);
    j.set_work_saved(0);
    assert!(j.outcome.0.is_some(), "lost work is still set");
    j.add_lost(0, 0);
    assert_eq!(j.lost_secs(), 15);
}

#[test]
fn names_share_one_string_per_value() {
    let mut names = Names::default();
    let a = names.get("alice");
    let b = names.get(&String::from("alice"));
    let c = names.get("bob");
    assert!(Arc::ptr_eq(&a, &b));
    assert!(!Arc::ptr_eq(&a, &c));
    let mut s = JobSpec::new(
        "k",
        "train",
        "alice",
        Arc::new(JobRequest::default()),
        0,
        RunTime::ToLimit,
    );
    s.intern_names(&mut names);
    assert!(Arc::ptr_eq(&s.user, &a));
    assert_eq!(&*s.name, "train");
}
