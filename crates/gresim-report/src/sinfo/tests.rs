//! Unit tests of `sinfo` (sinfo.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;
use gresim_engine::{Action, TimedAction};
use gresim_model::NodeId;

fn rf() -> RunFile {
    let meta = RunMeta {
        actions: vec![
            TimedAction {
                at: 100,
                action: Action::NodeDrain(vec![NodeId(0)]),
            },
            TimedAction {
                at: 130,
                action: Action::NodeDown(vec![NodeId(0)]),
            },
            TimedAction {
                at: 140,
                action: Action::NodeUp(vec![NodeId(0)]),
            },
        ],
        ..RunMeta::new("tiny")
    };
    let mut o = sample_output();
    o.cluster.nodes[0].gpus[0].socket = Some(0);
    o.cluster.nodes[0].gpus[1].socket = Some(1);
    RunFile::from_output(&o, &meta)
}

#[test]
fn states_over_time() {
    let r = rf();
    let at = |t| sinfo(&r, t, true);
    assert_eq!(
        at(5),
        "gpu01 gpu* 0/16/0/16 gpu:a100:2(S:0-1) gpu:a100:0(IDX:N/A) idle\n"
    );
    assert_eq!(
        at(50),
        "gpu01 gpu* 4/12/0/16 gpu:a100:2(S:0-1) gpu:a100:2(IDX:0-1) mixed\n"
    );
    // Drained at 100 while job 1 runs: draining; job 2 runs from 110.
    assert_eq!(
        at(105),
        "gpu01 gpu* 4/0/12/16 gpu:a100:2(S:0-1) gpu:a100:2(IDX:0-1) draining\n"
    );
    assert_eq!(
        at(135),
        "gpu01 gpu* 2/0/14/16 gpu:a100:2(S:0-1) gpu:a100:1(IDX:0) down\n"
    );
    assert_eq!(
        at(150),
        "gpu01 gpu* 0/16/0/16 gpu:a100:2(S:0-1) gpu:a100:0(IDX:N/A) idle\n"
    );
    let full = sinfo(&r, 250, false);
    assert_eq!(
        full,
        "NODELIST PARTITION CPUS(A/I/O/T) GRES              GRES_USED         STATE\n\
         gpu01    gpu*      2/14/0/16     gpu:a100:2(S:0-1) gpu:a100:1(IDX:1) mixed\n"
    );
}

#[test]
fn allocated_and_drained() {
    let mut r = rf();
    r.jobs[0].runs[0].nodes[0].cpus = 16;
    assert!(sinfo(&r, 50, true).ends_with(" allocated\n"));
    r.node_states.clear();
    r.cluster.nodes[0].state = "DRAIN".into();
    assert!(sinfo(&r, 5, true).ends_with(" drained\n"));
    assert_eq!(state_counts(&r, 5).get("drained"), Some(&1));
}
