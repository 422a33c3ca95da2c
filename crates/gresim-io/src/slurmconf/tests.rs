//! Unit tests of `slurmconf` (slurmconf.rs).

use super::*;
use gresim_slurm::slurmconf::parse_slurm_conf;

fn parse(t: &str) -> (SlurmConf, Vec<Warning>) {
    parse_slurm_conf(Path::new("slurm.conf"), t).unwrap()
}

#[test]
fn preemption_settings_are_read_and_bad_ones_name_their_line() {
    use gresim_model::preempt::{PreemptMode, PreemptType};
    let (c, w) = parse(
        "SelectType=select/cons_tres\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n\
         PreemptExemptTime=00:05:00\nKillWait=1\n\
         SchedulerParameters=preempt_youngest_first,preempt_reorder_count=3\n\
         NodeName=n1 CPUs=4 RealMemory=100\n\
         PartitionName=scav Nodes=n1 PriorityTier=1 PreemptMode=CANCEL GraceTime=30\n",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.preempt.ptype, PreemptType::PartitionPrio);
    assert_eq!(c.preempt.mode.mode, PreemptMode::Requeue);
    assert_eq!(c.preempt.exempt_time, Some(300));
    let p = sched_params(&c, &SchedParams::default());
    assert!(p.preempt.enabled() && p.preempt.youngest_first);
    assert_eq!(p.preempt.reorder_count, 3);
    assert_eq!(p.preempt.kill_pending_wait, 11);
    assert_eq!(c.partitions[0].preempt_mode, Some(PreemptMode::Cancel));
    assert_eq!(c.partitions[0].grace_time, 30);

    let bad = |text: &str, needle: &str, line: &str| {
        let e = parse_slurm_conf(Path::new("slurm.conf"), text).expect_err("refused");
        let m = e.to_string();
        assert!(m.contains(needle) && m.contains(line), "{m}");
    };
    bad(
        "PreemptType=preempt/qos\nPreemptMode=PAUSE\n",
        "PAUSE",
        "slurm.conf:2",
    );
    bad(
        "PreemptType=preempt/fancy\n",
        "preempt/fancy",
        "slurm.conf:1",
    );
    bad("PreemptMode=SUSPEND\n", "GANG", "slurm.conf:1");
    bad(
        "NodeName=n1 CPUs=4\nPreemptType=preempt/qos\n",
        "incompatible",
        "slurm.conf:2",
    );
    bad(
        "NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 PreemptMode=often\n",
        "often",
        "slurm.conf:2",
    );
}

#[test]
fn oversubscribe_force_and_yes_are_read_quietly() {
    let (c, w) = parse(
        "SelectType=select/cons_tres\nNodeName=n1 CPUs=4 RealMemory=100\n\
         PartitionName=a Nodes=n1 OverSubscribe=FORCE:1\n\
         PartitionName=b Nodes=n1 OverSubscribe=FORCE:2\n\
         PartitionName=c Nodes=n1 OverSubscribe=YES\n\
         PartitionName=d Nodes=n1 OverSubscribe=yes:3\n\
         PartitionName=e Nodes=n1 OverSubscribe=NO\n",
    );
    assert_eq!(c.partitions[0].oversubscribe, "FORCE:1");
    let rows: Vec<(u16, bool)> = c
        .partitions
        .iter()
        .map(|p| (p.oversubscribe_rows, p.oversubscribe_force))
        .collect();
    // YES alone is YES:4, as FORCE alone is FORCE:4 (read_config.c); only
    // FORCE makes every job share.
    assert_eq!(
        rows,
        vec![(1, true), (2, true), (4, false), (3, false), (1, false)]
    );
    // FORCE:2 without PreemptMode GANG (jobs sharing cores run at once) and
    // YES:N (jobs that ask with --oversubscribe share) are modelled: no
    // warning.
    assert!(w.is_empty(), "{w:?}");
    let cl = gresim_slurm::slurmconf::build_cluster(&c, &Default::default(), &mut Vec::new())
        .expect("builds");
    let force: Vec<bool> = cl.partitions.iter().map(|p| p.force).collect();
    assert_eq!(force, vec![true, true, false, false, false]);
    assert_eq!(cl.partitions[3].oversubscribe, 3);
}

#[test]
fn gang_time_slicing_is_read_quietly_and_bad_values_name_their_line() {
    let (c, w) = parse(
        "SelectType=select/cons_tres\nPreemptMode=GANG\nSchedulerTimeSlice=10\n\
         NodeName=n1 CPUs=4 RealMemory=100\n\
         PartitionName=a Nodes=n1 OverSubscribe=FORCE:3\n\
         PartitionName=b Nodes=n1 OverSubscribe=force\n",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.partitions[0].oversubscribe_rows, 3);
    assert_eq!(
        c.partitions[1].oversubscribe_rows, 4,
        "FORCE alone is FORCE:4"
    );
    let p = sched_params(&c, &SchedParams::default());
    assert_eq!(p.time_slice, 10);
    assert!(p.preempt.mode.gang);
    assert_eq!(
        sched_params(&parse("PreemptMode=GANG\n").0, &SchedParams::default()).time_slice,
        30,
        "Slurm's default"
    );

    let bad = |text: &str, needle: &str, line: &str| {
        let e = parse_slurm_conf(Path::new("slurm.conf"), text).expect_err("refused");
        let m = e.to_string();
        assert!(m.contains(needle) && m.contains(line), "{m}");
    };
    bad(
        "NodeName=n1 CPUs=4\nSchedulerTimeSlice=4\n",
        "SchedulerTimeSlice=4",
        "slurm.conf:2",
    );
    bad(
        "SchedulerTimeSlice=70000\n",
        "SchedulerTimeSlice=70000",
        "slurm.conf:1",
    );
    bad(
        "SchedulerTimeSlice=ten\n",
        "SchedulerTimeSlice=ten",
        "slurm.conf:1",
    );
    for v in ["FORCE:0", "FORCE:x", "FORCE:40000", "YES:1", "SOMETIMES"] {
        bad(
            &format!("NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 OverSubscribe={v}\n"),
            &format!("OverSubscribe={v}"),
            "slurm.conf:2",
        );
    }
}

#[test]
fn params_from_conf() {
    let (c, _) = parse(
        "SchedulerParameters=sched_interval=10,bf_interval=20,bf_window=60,bf_resolution=30,bf_max_job_test=7\n\
         PriorityType=priority/multifactor\nPriorityWeightJobSize=100\nPriorityWeightAge=50\n\
         PriorityWeightTRES=CPU=2,GRES/gpu=3.5\nPriorityFavorSmall=YES\nPriorityMaxAge=1-0\n\
         DefMemPerCPU=2000\nJobRequeue=0\nAuthInfo=socket=/x,cred_expire=30\n\
         DependencyParameters=kill_invalid_depend\nSchedulerType=sched/builtin\n",
    );
    let p = sched_params(&c, &SchedParams::default());
    assert_eq!(
        (
            p.sched_interval,
            p.bf_interval,
            p.bf_window,
            p.bf_resolution,
            p.bf_max_job_test
        ),
        (10, 20, 3600, 30, 7)
    );
    assert_eq!(p.def_mem_per_cpu, Some(2000));
    assert!(!p.job_requeue && p.kill_invalid_depend);
    assert_eq!(p.cred_expire, 30);
    let PriorityConfig::Multifactor(m) = &p.priority else {
        panic!("multifactor expected")
    };
    assert_eq!(m.weight_job_size, 100);
    assert_eq!(m.weight_age, 0, "no slurmdbd: age ignored");
    assert_eq!((m.weight_tres_cpu, m.weight_tres_gpu), (2.0, 3.5));
    assert!(m.favor_small);
    assert_eq!(m.max_age, 86400);
    assert_eq!(policy_name(&c), "fifo");
    let d = sched_params(&SlurmConf::default(), &SchedParams::default());
    assert_eq!(d, SchedParams::default());
}

#[test]
fn partition_qos_billing_weights_and_usage_reset_are_read() {
    let (c, w) = parse(
        "SelectType=select/cons_tres\nPriorityType=priority/multifactor\n\
         PriorityUsageResetPeriod=WEEKLY\nNodeName=n1 CPUs=4 RealMemory=1000\n\
         PartitionName=DEFAULT TRESBillingWeights=CPU=1,GRES/gpu=8\n\
         PartitionName=p Nodes=n1 QOS=part_p\nPartitionName=q Nodes=n1\n",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.partitions[0].qos.as_deref(), Some("part_p"));
    assert_eq!(c.partitions[1].qos, None);
    for p in &c.partitions {
        assert_eq!(p.tres_billing_weights.as_deref(), Some("CPU=1,GRES/gpu=8"));
    }
    let PriorityConfig::Multifactor(m) = sched_params(&c, &SchedParams::default()).priority else {
        panic!("multifactor expected")
    };
    assert_eq!(m.usage_reset, gresim_sched::fairshare::UsageReset::Weekly);
}

#[test]
fn resv_over_run_is_read_in_minutes() {
    let over = |v: &str| {
        sched_params(
            &parse(&format!("ResvOverRun={v}\n")).0,
            &SchedParams::default(),
        )
        .resv_over_run
    };
    assert_eq!(over("2"), 120);
    assert_eq!(over("UNLIMITED"), 365 * 86_400);
    assert_eq!(SchedParams::default().resv_over_run, 0, "Slurm's default");
    let e = parse_slurm_conf(Path::new("slurm.conf"), "NodeName=n1\nResvOverRun=soon\n")
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("slurm.conf:2") && e.contains("ResvOverRun"),
        "{e}"
    );
}
