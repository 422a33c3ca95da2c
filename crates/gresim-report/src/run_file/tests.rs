//! run.json: written, read back and checked; views' lookups.

use super::*;
use crate::test_support::sample_output;
use gresim_engine::{Action, TimedAction};
use gresim_model::job::JobState;
use gresim_model::NodeId;

fn meta() -> RunMeta {
    RunMeta {
        scenario: "tiny".into(),
        scenario_text: Some("{\"name\": \"tiny\"}".into()),
        actions: vec![
            TimedAction {
                at: 120,
                action: Action::NodeDrain(vec![NodeId(0)]),
            },
            TimedAction {
                at: 160,
                action: Action::NodeResume(vec![NodeId(0)]),
            },
        ],
        seed: Some(3),
    }
}

#[test]
fn round_trips_and_is_stable() {
    let out = sample_output();
    let rf = RunFile::from_output(&out, &meta());
    let text = rf.to_json();
    assert!(text.starts_with("{\"format\":\"gresim-run\",\"version\":1,\"scenario\":\"tiny\""));
    // One job per line after the header.
    assert_eq!(text.lines().count(), 1 + 3 + 1, "{text}");
    let back = RunFile::parse(&text).unwrap();
    assert_eq!(back, rf);
    assert_eq!(back.to_json(), text);
    assert_eq!(rf.node_states.len(), 2);
    assert_eq!(rf.node_states[0].state, "DRAIN");
    assert_eq!(rf.admin_at(119), ["UP"]);
    assert_eq!(rf.admin_at(120), ["DRAIN"]);
    assert_eq!(rf.admin_at(160), ["UP"]);
    let j1 = &rf.jobs[1];
    assert_eq!(j1.runs.len(), 2);
    assert_eq!(j1.runs[0].nodes[0].gpus, vec![0]);
    assert_eq!(j1.runs[1].nodes[0].gpus, vec![1]);
    assert_eq!(j1.runs[0].nodes[0].cores, "0");
    assert_eq!(j1.ended, Some(300));
    assert_eq!(j1.time_limit, Some(100));
    assert_eq!(rf.jobs[2].id, "3_4");
    assert_eq!(rf.jobs[2].ended, None);
}

/// run.json as it was built before streaming: the whole file cloned
/// without its jobs, serialised, and the jobs spliced in.
fn to_json_by_splicing(rf: &RunFile) -> String {
    let head = RunFile {
        jobs: Vec::new(),
        ..rf.clone()
    };
    let mut s = serde_json::to_string(&head).unwrap();
    s.truncate(s.len() - "[]}".len());
    s.push_str("[\n");
    for (i, j) in rf.jobs.iter().enumerate() {
        if i > 0 {
            s.push_str(",\n");
        }
        s.push_str(&serde_json::to_string(j).unwrap());
    }
    s.push_str("\n]}\n");
    s
}

#[test]
fn streamed_run_json_matches_the_run_file() {
    let mut out = sample_output();
    let mut m = meta();
    for round in 0..3 {
        let rf = RunFile::from_output(&out, &m);
        let text = rf.to_json();
        assert_eq!(text, to_json_by_splicing(&rf), "round {round}");
        let mut streamed = Vec::new();
        write_run_json(&out, &m, &mut streamed).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), text, "round {round}");
        if round == 0 {
            m.scenario_text = None;
            m.seed = None;
            out.timeline.clear();
        } else {
            out.jobs.clear();
        }
    }
}

#[test]
fn state_at_times() {
    let rf = RunFile::from_output(&sample_output(), &meta());
    let j1 = &rf.jobs[1];
    assert_eq!(j1.at(4), None);
    assert!(matches!(
        j1.at(5),
        Some(JobAt::Pending {
            requeued: false,
            ..
        })
    ));
    assert!(matches!(j1.at(110), Some(JobAt::Running(r)) if r.start == 110));
    assert!(matches!(
        j1.at(150),
        Some(JobAt::Pending { requeued: true, .. })
    ));
    assert!(matches!(j1.at(299), Some(JobAt::Running(r)) if r.start == 200));
    assert_eq!(
        j1.at(300),
        Some(JobAt::Done {
            state: JobState::Timeout,
            end: 300
        })
    );
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    assert!(RunFile::parse("").is_err());
    assert!(RunFile::parse("{}").is_err());
    assert!(RunFile::parse("[1,2]").is_err());
    let rf = RunFile::from_output(&sample_output(), &meta());
    let mut bad = rf.clone();
    bad.jobs[0].runs[0].nodes[0].node = "nope".into();
    assert!(RunFile::parse(&bad.to_json())
        .unwrap_err()
        .contains("unknown node 'nope'"));
    let mut bad = rf.clone();
    bad.jobs[0].runs[0].nodes[0].gpus = vec![9];
    assert!(RunFile::parse(&bad.to_json()).is_err());
    let mut bad = rf;
    bad.version = 99;
    assert!(RunFile::parse(&bad.to_json())
        .unwrap_err()
        .contains("version 99"));
}

#[test]
fn model_round_trip_allocates() {
    let rf = RunFile::from_output(&sample_output(), &meta());
    let c = rf.model_cluster().unwrap();
    assert_eq!(c.nodes.len(), 1);
    let (st, running) = rf.state_at(&c, 50).unwrap();
    assert_eq!(running, vec![(0, 0)]);
    assert_eq!(st.alloc_gpus(), 2);
    assert_eq!(parse_ranges("0-3,5"), Some(vec![0, 1, 2, 3, 5]));
    assert_eq!(parse_ranges("x"), None);
    assert_eq!(ranges([0, 1, 2, 5].into_iter()), "0-2,5");
}

#[test]
fn a_jobs_priority_at_a_time_follows_its_history() {
    let mut rf = RunFile::from_output(&sample_output(), &RunMeta::new("tiny"));
    let j = &mut rf.jobs[1];
    j.priority = 7;
    assert_eq!(j.priority_at(0), 7, "no history: the final priority");
    j.priorities = Some(vec![(5, 3), (10, 9), (20, 7)]);
    let at: Vec<u32> = [4, 5, 9, 10, 19, 20, 99]
        .iter()
        .map(|&t| j.priority_at(t))
        .collect();
    assert_eq!(at, vec![3, 3, 3, 9, 9, 7, 7]);
    // Out of time order, the file is refused.
    j.priorities = Some(vec![(10, 9), (5, 3)]);
    let text = serde_json::to_string(&rf).unwrap();
    let e = RunFile::parse(&text).unwrap_err();
    assert!(
        e.contains("priorities must be a non-empty list in time order"),
        "{e}"
    );
}
