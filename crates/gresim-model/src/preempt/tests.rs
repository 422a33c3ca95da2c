//! Unit tests of `preempt` (preempt.rs).

use super::*;

#[test]
fn modes_parse_as_slurm_reads_them() {
    let m: PreemptModeSpec = "suspend,GANG".parse().unwrap();
    assert_eq!(m.mode, PreemptMode::Suspend);
    assert!(m.gang && !m.within);
    let m: PreemptModeSpec = "REQUEUE".parse().unwrap();
    assert_eq!(m.mode, PreemptMode::Requeue);
    assert_eq!(m.to_string(), "REQUEUE");
    assert!("requeue,cancel".parse::<PreemptModeSpec>().is_err());
    assert!("pause"
        .parse::<PreemptModeSpec>()
        .unwrap_err()
        .contains("pause"));
    assert_eq!(
        "preempt/qos".parse::<PreemptType>().unwrap(),
        PreemptType::Qos
    );
    assert!("preempt/fancy".parse::<PreemptType>().is_err());
}

#[test]
fn enabled_needs_a_plugin_and_a_mode() {
    let mut c = PreemptConfig::new();
    assert!(!c.enabled());
    c.ptype = PreemptType::PartitionPrio;
    assert!(!c.enabled());
    c.mode.mode = PreemptMode::Cancel;
    assert!(c.enabled());
}
