//! Unit tests of `topology_conf` (topology_conf.rs).

use super::*;

fn cluster() -> Cluster {
    let (conf, _) = crate::slurmconf::parse_slurm_conf(
        Path::new("slurm.conf"),
        "NodeName=n[1-6] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n",
    )
    .unwrap();
    crate::slurmconf::build_cluster(&conf, &Default::default(), &mut Vec::new()).unwrap()
}

fn err(text: &str) -> String {
    parse(
        Path::new("topology.conf"),
        text,
        &cluster(),
        &mut Vec::new(),
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn a_two_level_tree() {
    let mut w = Vec::new();
    let t = parse(
        Path::new("topology.conf"),
        "# leaves\nSwitchName=s1 Nodes=n[1-3] LinkSpeed=100\nSwitchName=s2 Nodes=n[4-6]\nSwitchName=top Switches=s[1-2]\n",
        &cluster(),
        &mut w,
    )
    .unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(t.switches.len(), 3);
    assert_eq!(t.switches[2].level, 1);
    assert_eq!(t.switches[0].link_speed, 100);
    assert_eq!(t.leaf_of(4), Some(1));
}

#[test]
fn bad_input_names_the_line() {
    let e = err("SwitchName=s1 Nodes=n[1-3]\nSwitchName=s2 Nodes=n[4-7]\n");
    assert!(
        e.starts_with("topology.conf:2: ") && e.contains("'n7' is not in the cluster"),
        "{e}"
    );
    let e = err("SwitchName=s1 Nodes=n[1-6]\nSwitchName=a Switches=b\nSwitchName=b Switches=a\n");
    assert!(
        e.starts_with("topology.conf:2: ") && e.contains("not a tree"),
        "{e}"
    );
    let e = err("SwitchName=s1 Nodes=n[1-6]\nSwitchName=t Switches=s1,s9\n");
    assert!(
        e.starts_with("topology.conf:2: ") && e.contains("invalid child (s9)"),
        "{e}"
    );
    let e = err("SwitchName=s1 Nodes=n1 Switches=s2\n");
    assert!(e.contains("both child switches and nodes"), "{e}");
    let e = err("SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n");
    assert!(
        e.starts_with("topology.conf:2: ") && e.contains("already been defined"),
        "{e}"
    );
    let e = err("SwitchName=s1 Nodes=n1 Speed=3\n");
    assert!(e.contains("unknown key"), "{e}");
}

#[test]
fn a_node_under_two_leaves_is_a_warning_as_in_slurm() {
    let mut w = Vec::new();
    let t = parse(
        Path::new("topology.conf"),
        "SwitchName=s1 Nodes=n[1-4]\nSwitchName=s2 Nodes=n[4-6]\n",
        &cluster(),
        &mut w,
    )
    .unwrap();
    assert_eq!(w.len(), 1);
    assert!(w[0].msg.contains("n4"), "{w:?}");
    assert!(t.holds(0, 3) && t.holds(1, 3));
}

fn blocks(text: &str) -> Result<SwitchTree, String> {
    parse(
        Path::new("topology.conf"),
        text,
        &cluster(),
        &mut Vec::new(),
    )
    .map_err(|e| e.to_string())
}

#[test]
fn blocks_and_block_sizes() {
    let t = blocks("BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockName=b3 Nodes=n[5-6]\nBlockSizes=2,8\n")
        .unwrap();
    assert_eq!(
        t.blocks(),
        Some(BlockLevels {
            base_nodes: 2,
            levels: 0b101
        })
    );
    assert_eq!(t.leaves().count(), 3);
    assert_eq!(t.leaf_of(2), Some(1));
    // Without BlockSizes: the first block's size, levels of 1 to 16.
    let t = blocks("BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-6]\n").unwrap();
    assert_eq!(t.blocks(), Some(BlockLevels::default_for(3)));
    // BlockSizes may follow a block's keys on its line, as Slurm's
    // parser allows.
    let t =
        blocks("BlockName=b1 Nodes=n[1-3] BlockSizes=3,6\nBlockName=b2 Nodes=n[4-6]\n").unwrap();
    assert_eq!(t.blocks().map(|b| b.levels), Some(0b11));
    assert!(check_plugin(&t, TopologyPlugin::Block).is_ok());
    assert!(check_plugin(&t, TopologyPlugin::Tree)
        .unwrap_err()
        .contains("BlockName"));
    // Nodes outside every block: a warning, as in Slurm.
    let mut w = Vec::new();
    parse(
        Path::new("topology.conf"),
        "BlockName=b1 Nodes=n[1-4]\n",
        &cluster(),
        &mut w,
    )
    .unwrap();
    assert!(w.len() == 1 && w[0].msg.contains("n[5-6]"), "{w:?}");
}

#[test]
fn bad_blocks_name_the_line() {
    for (text, line, needle) in [
        (
            "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-7]\n",
            2,
            "'n7' is not in the cluster",
        ),
        (
            "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[3-5]\n",
            2,
            "'n3' is already in block b1",
        ),
        (
            "BlockName=b1 Nodes=n[1-3]\nBlockName=b1 Nodes=n[4-6]\n",
            2,
            "already been defined",
        ),
        (
            "BlockName=b1 Nodes=n[1-3]\nBlockName=b2 Nodes=n[4-5]\n",
            2,
            "fewer than the base block size 3",
        ),
        (
            "BlockName=b1 Nodes=n[1-3]\nBlockSizes=3,9\n",
            2,
            "power-of-two multiple",
        ),
        (
            "BlockSizes=2,x\nBlockName=b1 Nodes=n[1-3]\n",
            1,
            "whole numbers",
        ),
        (
            "BlockSizes=4,2\nBlockName=b1 Nodes=n[1-3]\n",
            1,
            "not larger",
        ),
        (
            "BlockSizes=2\nBlockSizes=2\nBlockName=b1 Nodes=n[1-3]\n",
            2,
            "given twice",
        ),
        ("BlockName=b1\n", 1, "has no nodes"),
        ("BlockName=b1 Nodes=n[1-3] Speed=2\n", 1, "unknown key"),
        (
            "BlockName=b1 Nodes=n[1-3]\nSwitchName=s Nodes=n[4-6]\n",
            2,
            "not both",
        ),
        (
            "SwitchName=s Nodes=n[4-6]\nBlockName=b1 Nodes=n[1-3]\n",
            2,
            "not both",
        ),
        (
            "BlockLevels=0-1\nBlockName=b1 Nodes=n[1-3]\n",
            1,
            "BlockSizes",
        ),
    ] {
        let e = blocks(text).unwrap_err();
        assert!(
            e.starts_with(&format!("topology.conf:{line}: ")) && e.contains(needle),
            "{text:?}: {e}"
        );
    }
    let e = blocks("BlockSizes=2\n").unwrap_err();
    assert!(e.contains("no blocks configured"), "{e}");
}
