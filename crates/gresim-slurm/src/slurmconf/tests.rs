//! slurm.conf's reader: the hand-worked cases.

use gresim_model::catalog;

use super::*;

fn parse(t: &str) -> (SlurmConf, Vec<Warning>) {
    parse_slurm_conf(Path::new("slurm.conf"), t).unwrap()
}

#[test]
fn defaults_continuations_comments_and_case() {
    let (c, w) = parse(
        "selecttype=select/cons_tres  # comment\n\
         NodeName=DEFAULT CPUs=64 CoresPerSocket=16 ThreadsPerCore=2 \\\n  RealMemory=512000 Gres=gpu:a100:4\n\
         NODENAME=gpu[01-03] weight=5 Features=a100,nvlink\n\
         NodeName=DEFAULT Weight=7\n\
         NodeName=gpu04\n\
         PartitionName=p Nodes=ALL Default=yes MaxTime=1-00:00:00 DefaultTime=30\n",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(c.nodes.len(), 2);
    let n = &c.nodes[0];
    assert_eq!(n.line, 4);
    assert_eq!(n.names, ["gpu01", "gpu02", "gpu03"]);
    // CPUs=64 with 16 cores × 2 threads per socket: 2 sockets inferred.
    assert_eq!(
        (n.sockets, n.cores_per_socket, n.threads_per_core, n.cpus),
        (2, 16, 2, 64)
    );
    assert_eq!(n.memory_mib, 512000);
    assert_eq!(n.weight, 5);
    assert_eq!(n.features, ["a100", "nvlink"]);
    assert_eq!(
        n.gres,
        [GresSpec {
            name: "gpu".into(),
            ty: Some("a100".into()),
            count: 4
        }]
    );
    assert_eq!(c.nodes[1].weight, 7);
    assert_eq!(c.nodes[1].gres.len(), 1);
    let p = &c.partitions[0];
    assert!(p.default);
    assert_eq!(p.max_time, Some(86400));
    assert_eq!(p.default_time, Some(1800));
}

#[test]
fn unknown_keys_warn_with_line_numbers_and_never_fail() {
    let (c, w) = parse(
        "SelectType=select/cons_tres\nClusterName=x\nFrobnicate=3\n\
         NodeName=n1 CPUs=4 RealMemory=100 Colour=blue\n\
         PartitionName=p Nodes=n1 Flavour=x\nSchedulerParameters=bf_interval=5,bf_continue\nTopologyParam=Dragonfly\n",
    );
    assert_eq!(c.nodes.len(), 1);
    let msgs: Vec<String> = w.iter().map(ToString::to_string).collect();
    assert_eq!(msgs.len(), 5, "{msgs:#?}");
    assert!(msgs[0].starts_with("slurm.conf:3: unknown key 'Frobnicate'"));
    assert!(msgs[1].starts_with("slurm.conf:4: unknown node key 'Colour'"));
    assert!(msgs[2].starts_with("slurm.conf:5: unknown partition key 'Flavour'"));
    assert!(msgs[3].starts_with("slurm.conf:6: ") && msgs[3].contains("bf_continue"));
    assert!(msgs[4].starts_with("slurm.conf:7: ") && msgs[4].contains("TopologyParam"));
}

#[test]
fn select_type_default_is_warned() {
    let (_, w) = parse("NodeName=n1 RealMemory=10\n");
    assert!(w.iter().any(|w| w.msg.contains("select/linear")), "{w:?}");
    let (_, w) = parse("SelectType=select/linear\nNodeName=n1 RealMemory=10\n");
    assert!(w
        .iter()
        .any(|w| w.msg.contains("select/linear is not modelled")));
}

#[test]
fn sockets_boards_and_cpus_follow_slurm() {
    let (c, w) = parse(
        "SelectType=select/cons_tres\n\
         NodeName=a Boards=2 SocketsPerBoard=2 CoresPerSocket=8 RealMemory=1\n\
         NodeName=b CPUs=8 RealMemory=1\n\
         NodeName=c Sockets=2 CoresPerSocket=4 ThreadsPerCore=2 CPUs=8 RealMemory=1\n",
    );
    assert_eq!((c.nodes[0].sockets, c.nodes[0].cpus), (4, 32));
    // CPUs alone: one core per socket, as Slurm infers.
    assert_eq!((c.nodes[1].sockets, c.nodes[1].cores_per_socket), (8, 1));
    // CPUs = cores with 2 threads: cores are the CPUs.
    assert_eq!((c.nodes[2].threads_per_core, c.nodes[2].cpus), (1, 8));
    assert_eq!(w.len(), 1, "{w:?}");
}

#[test]
fn bad_values_are_errors_with_lines() {
    for (t, want, line) in [
        ("\nNodeName=n1 CPUs=x\n", "CPUs=x", 2),
        ("NodeName=n[1-\n", "hostlist", 1),
        ("\n\nPartitionName=p MaxTime=forever\n", "MaxTime", 3),
        ("PriorityType=priority/fancy\n", "PriorityType", 1),
        ("NodeName=n1 Gres=gpu:a100:x\n", "Gres", 1),
        ("NodeName=n1 State=WEIRD\n", "State", 1),
        ("PartitionName=p\nPartitionName=p\n", "twice", 2),
        (
            "\nPriorityUsageResetPeriod=HOURLY\n",
            "PriorityUsageResetPeriod",
            2,
        ),
        (
            "\n\nPriorityDecayHalfLife=0\n",
            "needs a PriorityUsageResetPeriod",
            3,
        ),
    ] {
        let e = parse_slurm_conf(Path::new("s.conf"), t).unwrap_err();
        assert!(e.to_string().contains(want), "{t:?}: {e}");
        assert_eq!(e.line, Some((line, 0)), "{t:?}: {e}");
    }
}

#[test]
fn include_is_followed_relative_to_the_file() {
    let dir = std::env::temp_dir().join(format!("gresim-inc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("nodes.conf"),
        "NodeName=n[1-2] RealMemory=10 Bogus=1\n",
    )
    .unwrap();
    let main = dir.join("slurm.conf");
    let (c, w) =
        parse_slurm_conf(&main, "SelectType=select/cons_tres\ninclude nodes.conf\n").unwrap();
    assert_eq!(c.nodes[0].names, ["n1", "n2"]);
    assert_eq!(w.len(), 1);
    assert!(
        w[0].to_string()
            .ends_with("nodes.conf:1: unknown node key 'Bogus' (ignored)"),
        "{}",
        w[0]
    );
    let e = parse_slurm_conf(&main, "Include missing.conf\n").unwrap_err();
    assert_eq!(e.line, Some((1, 0)));
    // A file including itself stops at the depth limit.
    std::fs::write(dir.join("loop.conf"), "Include loop.conf\n").unwrap();
    let e = parse_slurm_conf(&main, "Include loop.conf\n").unwrap_err();
    assert!(e.msg.contains("nested"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gpu_models_from_type_names() {
    let name = |t: &str| {
        let (m, p, k) = model_for_type(t);
        (catalog::model(m).name, p.map(|p| p.name), k)
    };
    assert_eq!(name("a100"), ("A100-SXM4-80GB", None, true));
    assert_eq!(name("a100_40gb"), ("A100-SXM4-40GB", None, true));
    assert_eq!(
        name("a100_3g.20gb"),
        ("A100-SXM4-40GB", Some("3g.20gb"), true)
    );
    assert_eq!(
        name("a100_1g.10gb"),
        ("A100-SXM4-80GB", Some("1g.10gb"), true)
    );
    assert_eq!(name("1g.10gb"), ("A100-SXM4-80GB", Some("1g.10gb"), true));
    assert_eq!(name("1g.5gb"), ("A100-SXM4-40GB", Some("1g.5gb"), true));
    assert_eq!(name("h100"), ("H100-SXM5-80GB", None, true));
    assert_eq!(
        name("nvidia_h100_80gb_hbm3"),
        ("H100-SXM5-80GB", None, true)
    );
    assert_eq!(name("h200"), ("H200-141GB", None, true));
    assert_eq!(name("v100"), ("V100-32GB", None, true));
    assert_eq!(name("l40s"), ("L40S", None, true));
    assert_eq!(name("t4"), ("T4", None, true));
    assert_eq!(name("mi250x"), ("A100-SXM4-80GB", None, false));
    assert_eq!(name("gpu"), ("A100-SXM4-80GB", None, false));
}

#[test]
fn sockets_from_cores() {
    assert_eq!(socket_of_cores(&[(0, 15)], 16, 2), Some(0));
    assert_eq!(socket_of_cores(&[(16, 31)], 16, 2), Some(1));
    assert_eq!(socket_of_cores(&[(0, 31)], 16, 2), None);
    assert_eq!(socket_of_cores(&[(0, 3), (32, 32)], 16, 4), Some(0));
}
