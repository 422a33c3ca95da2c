//! Node and partition state words: the one reading every input format and
//! run.json share (`FromStr`) and the words written (`as_str`).

use gresim_model::cluster::{NodeAdminState, PartitionState};

#[test]
fn node_states_read_back_what_is_written_in_any_case() {
    for s in [
        NodeAdminState::Up,
        NodeAdminState::Down,
        NodeAdminState::Drain,
    ] {
        assert_eq!(s.as_str().parse::<NodeAdminState>(), Ok(s));
        assert_eq!(s.as_str().to_lowercase().parse::<NodeAdminState>(), Ok(s));
    }
    assert_eq!("idle".parse::<NodeAdminState>(), Ok(NodeAdminState::Up));
    let e = "FAIL".parse::<NodeAdminState>().unwrap_err();
    assert!(
        e.contains("'FAIL'") && e.contains("expected UP, DOWN or DRAIN"),
        "{e}"
    );
}

#[test]
fn partition_states_read_back_what_is_written_in_any_case() {
    for s in [
        PartitionState::Up,
        PartitionState::Down,
        PartitionState::Drain,
        PartitionState::Inactive,
    ] {
        assert_eq!(s.as_str().parse::<PartitionState>(), Ok(s));
        assert_eq!(s.as_str().to_lowercase().parse::<PartitionState>(), Ok(s));
    }
    let e = "IDLE".parse::<PartitionState>().unwrap_err();
    assert!(e.contains("expected UP, DOWN, DRAIN or INACTIVE"), "{e}");
}
