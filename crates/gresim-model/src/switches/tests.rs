//! Unit tests of `switches` (switches.rs).

use super::*;

fn def(name: &str, nodes: Option<&[usize]>, sw: Option<&[&str]>) -> SwitchDef {
    SwitchDef {
        name: name.into(),
        nodes: nodes.map(|v| v.iter().map(|&i| NodeId::from_idx(i)).collect()),
        switches: sw.map(|v| v.iter().map(|s| s.to_string()).collect()),
        link_speed: 1,
    }
}

#[test]
fn two_levels_with_slurms_parent_and_distances() {
    let t = SwitchTree::build(
        &[
            def("s1", Some(&[0, 1, 2]), None),
            def("s2", Some(&[3, 4]), None),
            def("s3", Some(&[5, 6, 7]), None),
            def("s0", None, Some(&["s1", "s2", "s3"])),
        ],
        8,
    )
    .unwrap();
    assert_eq!(t.levels, 1);
    assert_eq!(t.switches[3].level, 1);
    assert_eq!(t.switches[3].nodes.len(), 8);
    assert_eq!(t.switches[1].parent, 3);
    // The root keeps Slurm's zero-filled parent: the first switch.
    assert_eq!(t.switches[3].parent, 0);
    assert_eq!(t.dist[0][1], 2);
    assert_eq!(t.dist[0][3], 1);
    assert_eq!(t.leaf_of(4), Some(1));
    let ids = [NodeId::from_idx(2), NodeId::from_idx(3)];
    assert_eq!(t.leaf_count(ids.iter().copied()), 2);
    assert!(t.multi_homed.is_empty() && t.unreachable.is_empty());
}

#[test]
fn loops_unknown_children_and_duplicates_are_errors() {
    let e = SwitchTree::build(
        &[
            def("a", None, Some(&["b"])),
            def("b", None, Some(&["a"])),
            def("l", Some(&[0]), None),
        ],
        1,
    )
    .unwrap_err();
    assert!(e.msg.contains("not a tree"), "{e:?}");
    let e = SwitchTree::build(&[def("a", None, Some(&["zz"]))], 1).unwrap_err();
    assert!(e.msg.contains("invalid child (zz)"), "{e:?}");
    let e = SwitchTree::build(&[def("a", None, Some(&["a"]))], 1).unwrap_err();
    assert!(e.msg.contains("invalid child (a)"), "{e:?}");
    let e = SwitchTree::build(&[def("a", Some(&[0]), None), def("a", Some(&[0]), None)], 1)
        .unwrap_err();
    assert_eq!(e.index, 1);
}

#[test]
fn multi_homed_and_unreachable_nodes_are_reported() {
    let t = SwitchTree::build(
        &[def("l1", Some(&[0, 1]), None), def("l2", Some(&[1]), None)],
        3,
    )
    .unwrap();
    assert_eq!(t.multi_homed, vec![NodeId::from_idx(1)]);
    assert_eq!(t.unreachable, vec![NodeId::from_idx(2)]);
    assert!(t.holds(1, 1) && t.holds(0, 1));
    assert_eq!(t.leaf_of(1), Some(0));
}

fn block(name: &str, nodes: std::ops::Range<usize>) -> BlockDef {
    BlockDef {
        name: name.into(),
        nodes: nodes.map(NodeId::from_idx).collect(),
    }
}

#[test]
fn block_sizes_give_the_base_size_and_levels() {
    let b = BlockLevels::from_sizes(&[30, 120]).unwrap();
    assert_eq!((b.base_nodes, b.levels), (30, 0b101));
    assert!(b.has(0) && !b.has(1) && b.has(2) && !b.has(16));
    assert_eq!(BlockLevels::default_for(4).levels, 0b1_1111);
    for (bad, why) in [
        (&[4, 12][..], "power-of-two multiple"),
        (&[4, 6], "power-of-two multiple"),
        (&[8, 4], "not larger"),
        (&[4, 4], "not larger"),
        (&[0], "positive"),
        (&[1, 1 << 16], "2^15"),
        (&[], "at least one"),
    ] {
        let e = BlockLevels::from_sizes(bad).unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

#[test]
fn blocks_are_leaves_without_parents() {
    let t = SwitchTree::from_blocks(
        &[block("b1", 0..4), block("b2", 4..8), block("b3", 8..14)],
        None,
        16,
    )
    .unwrap();
    assert_eq!(t.blocks(), Some(BlockLevels::default_for(4)));
    assert_eq!(t.leaves().count(), 3);
    assert_eq!(t.leaf_of(9), Some(2));
    assert_eq!(t.dist[0][1], INFINITE);
    assert_eq!(t.unreachable.len(), 2);
    let ids = [NodeId::from_idx(3), NodeId::from_idx(4)];
    assert_eq!(t.leaf_count(ids.iter().copied()), 2);
}

#[test]
fn bad_blocks_are_errors() {
    let e = SwitchTree::from_blocks(&[block("b1", 0..4), block("b1", 4..8)], None, 8).unwrap_err();
    assert_eq!(e.index, 1);
    assert!(e.msg.contains("already been defined"), "{e:?}");
    let e = SwitchTree::from_blocks(&[block("b1", 0..4), block("b2", 3..8)], None, 8).unwrap_err();
    assert_eq!(e.index, 1);
    assert!(e.msg.contains("already in block b1"), "{e:?}");
    // The first block sets the base size: a smaller one after it fails.
    let e = SwitchTree::from_blocks(&[block("b1", 0..4), block("b2", 4..7)], None, 8).unwrap_err();
    assert!(e.msg.contains("fewer than the base block size 4"), "{e:?}");
    let sizes = BlockLevels::from_sizes(&[5]).unwrap();
    let e = SwitchTree::from_blocks(&[block("b1", 0..4)], Some(sizes), 8).unwrap_err();
    assert_eq!(e.index, 0);
    let e = SwitchTree::from_blocks(&[block("b1", 0..0)], None, 8).unwrap_err();
    assert!(e.msg.contains("no nodes"), "{e:?}");
}
