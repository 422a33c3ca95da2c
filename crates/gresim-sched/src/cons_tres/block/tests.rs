//! A hand-worked cluster: 16 nodes of 4 GPUs in four base blocks of
//! four, b1 = n0-n3, b2 = n4-n7, b3 = n8-n11, b4 = n12-n15, all of one
//! weight. Jobs take whole nodes' GPUs.

use super::super::tests::a100_cluster;
use super::super::{job_test, SelectCache};
use crate::select::View;
use crate::SchedParams;
use gresim_model::job::{GpuReq, JobRequest};
use gresim_model::switches::{BlockDef, BlockLevels, SwitchTree, TopologyPlugin};
use gresim_model::{Cluster, ClusterState, NodeId, PartId};

fn cluster(plugin: TopologyPlugin, sizes: Option<&[u32]>) -> Cluster {
    let mut c = a100_cluster(16, 4, |_| 1);
    let defs: Vec<BlockDef> = (0..4)
        .map(|b| BlockDef {
            name: format!("b{}", b + 1),
            nodes: (4 * b..4 * b + 4).map(NodeId::from_idx).collect(),
        })
        .collect();
    let levels = sizes.map(|s| BlockLevels::from_sizes(s).unwrap());
    let t = SwitchTree::from_blocks(&defs, levels, 16).unwrap();
    c.set_switches(Some(t), plugin);
    c
}

fn req(nodes: u32) -> JobRequest {
    JobRequest {
        min_nodes: nodes,
        max_nodes: nodes,
        gpus_per_node: vec![GpuReq { ty: None, count: 4 }],
        ..JobRequest::default()
    }
}

/// The state with `busy` nodes taken whole.
fn busy(c: &Cluster, busy: &[usize]) -> ClusterState {
    let mut s = ClusterState::new(c);
    for &v in busy {
        let r = JobRequest {
            nodelist: vec![NodeId::from_idx(v)],
            ..req(1)
        };
        let a = job_test(
            &mut SelectCache::new(),
            c,
            &SchedParams::default(),
            &r,
            PartId::from_idx(0),
            View::Now(&s, None),
        )
        .expect("blocker fits");
        s.allocate(c, &a).unwrap();
    }
    s
}

fn pick(c: &Cluster, s: &ClusterState, r: &JobRequest) -> Option<Vec<usize>> {
    job_test(
        &mut SelectCache::new(),
        c,
        &SchedParams::default(),
        r,
        PartId::from_idx(0),
        View::Now(s, None),
    )
    .map(|a| a.node_ids().map(|n| n.idx()).collect())
}

/// Free: b1 n1-n3 (3), b2 n5-n7 (3), b3 n8-n11 (4), b4 n15 (1).
const BUSY: [usize; 5] = [0, 4, 12, 13, 14];

#[test]
fn a_job_goes_to_the_smallest_base_block_that_holds_it() {
    let c = cluster(TopologyPlugin::Block, None);
    let s = busy(&c, &BUSY);
    // One node: b4 has the fewest usable nodes.
    assert_eq!(pick(&c, &s, &req(1)), Some(vec![15]));
    // Two: b1 and b2 tie at three, the later one wins.
    assert_eq!(pick(&c, &s, &req(2)), Some(vec![5, 6]));
    // Four: only b3 holds them.
    assert_eq!(pick(&c, &s, &req(4)), Some(vec![8, 9, 10, 11]));
    // Without the plugin: consecutive node sets, whose set n5-n11
    // crosses b2 and b3.
    let plain = cluster(TopologyPlugin::None, None);
    let s = busy(&plain, &BUSY);
    assert_eq!(pick(&plain, &s, &req(4)), Some(vec![5, 6, 7, 8]));
}

#[test]
fn a_larger_job_takes_the_smallest_aggregated_block_that_holds_it() {
    let c = cluster(TopologyPlugin::Block, None);
    let s = busy(&c, &BUSY);
    // Five nodes need two base blocks: level 1, blocks b1+b2 (6 usable)
    // and b3+b4 (5): the smaller. Inside, the fullest base block, then
    // the one that holds the rest.
    assert_eq!(pick(&c, &s, &req(5)), Some(vec![8, 9, 10, 11, 15]));
    // Seven need two base blocks too, and no pair holds seven: the job
    // does not fit although eleven nodes are free.
    assert_eq!(pick(&c, &s, &req(7)), None);
    // Nine need three, so level 2 (all four): the fullest base blocks
    // first (b3, then b2, the later of equals), then b1 holds the rest.
    assert_eq!(
        pick(&c, &s, &req(9)),
        Some(vec![1, 2, 5, 6, 7, 8, 9, 10, 11])
    );
    let plain = cluster(TopologyPlugin::None, None);
    let s = busy(&plain, &BUSY);
    assert_eq!(pick(&plain, &s, &req(7)), Some(vec![5, 6, 7, 8, 9, 10, 11]));
}

#[test]
fn block_sizes_bound_the_base_blocks_a_job_spans() {
    // BlockSizes=4,16: no level of two; a five-node job may span the
    // whole system but at most ⌈5/4⌉ = 2 base blocks.
    let c = cluster(TopologyPlugin::Block, Some(&[4, 16]));
    // Free: b1 n3 (1), b2 n4-n7 (4), b3 n11 (1), b4 n13-n15 (3).
    let s = busy(&c, &[0, 1, 2, 8, 9, 10, 12]);
    // b2 (the fullest), then the smallest holding the last node, the
    // later of b1 and b3.
    assert_eq!(pick(&c, &s, &req(5)), Some(vec![4, 5, 6, 7, 11]));
    // With the default sizes (a level of two), b1+b2 is the only pair
    // of five.
    let d = cluster(TopologyPlugin::Block, None);
    let s = busy(&d, &[0, 1, 2, 8, 9, 10, 12]);
    assert_eq!(pick(&d, &s, &req(5)), Some(vec![3, 4, 5, 6, 7]));
    // Two free nodes per base block: eight free, but two base blocks
    // hold only four, and a job of four must fit in one.
    let s = busy(&c, &[0, 1, 4, 5, 8, 9, 12, 13]);
    assert_eq!(pick(&c, &s, &req(5)), None);
    assert_eq!(pick(&c, &s, &req(4)), None);
    assert_eq!(pick(&c, &s, &req(2)), Some(vec![14, 15]));
}

#[test]
fn segments_stay_within_one_base_block_each() {
    let c = cluster(TopologyPlugin::Block, None);
    let s = busy(&c, &BUSY);
    let seg = |nodes, size| JobRequest {
        segment: Some(size),
        ..req(nodes)
    };
    // Four nodes as two segments of two: b2 (three, the later of
    // equals), then b1 (three left against b3's four).
    assert_eq!(pick(&c, &s, &seg(4, 2)), Some(vec![1, 2, 5, 6]));
    // One segment of four is the job itself.
    assert_eq!(pick(&c, &s, &seg(4, 4)), Some(vec![8, 9, 10, 11]));
    // Six as two of three: b1 and b2 (three each) before b3.
    assert_eq!(pick(&c, &s, &seg(6, 3)), Some(vec![1, 2, 3, 5, 6, 7]));
    // A size that does not divide the job, or exceeds the base block.
    assert_eq!(pick(&c, &s, &seg(4, 3)), None);
    assert_eq!(pick(&c, &s, &seg(5, 5)), None);
    // Without the plugin --segment changes nothing.
    let plain = cluster(TopologyPlugin::None, None);
    let s = busy(&plain, &BUSY);
    assert_eq!(pick(&plain, &s, &seg(4, 3)), pick(&plain, &s, &req(4)));
}

#[test]
fn nodes_outside_every_block_are_chosen_the_ordinary_way() {
    // Blocks over n0-n7 only; n8-n15 in none.
    let mut c = a100_cluster(16, 4, |_| 1);
    let defs: Vec<BlockDef> = (0..2)
        .map(|b| BlockDef {
            name: format!("b{}", b + 1),
            nodes: (4 * b..4 * b + 4).map(NodeId::from_idx).collect(),
        })
        .collect();
    let t = SwitchTree::from_blocks(&defs, None, 16).unwrap();
    c.set_switches(Some(t), TopologyPlugin::Block);
    // While a block node is usable the block choice applies, and it
    // never takes a node outside the blocks: n0-n2 busy, b1's n3 and b2
    // remain, and a 5-node job needs a pair of base blocks.
    let s = busy(&c, &[0, 1, 2]);
    assert_eq!(pick(&c, &s, &req(4)), Some(vec![4, 5, 6, 7]));
    assert_eq!(pick(&c, &s, &req(6)), None);
    // With every block node busy the ordinary choice runs (Slurm's
    // topology_p_eval_nodes()): n8 onwards.
    let s = busy(&c, &[0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(pick(&c, &s, &req(2)), Some(vec![8, 9]));
}

#[test]
fn a_required_node_pins_the_block() {
    let c = cluster(TopologyPlugin::Block, None);
    let s = busy(&c, &BUSY);
    let with = |nodes, w: usize| JobRequest {
        nodelist: vec![NodeId::from_idx(w)],
        ..req(nodes)
    };
    // n15 is b4's only free node: a second node cannot come from b4.
    assert_eq!(pick(&c, &s, &with(2, 15)), None);
    assert_eq!(pick(&c, &s, &with(2, 9)), Some(vec![8, 9]));
}
