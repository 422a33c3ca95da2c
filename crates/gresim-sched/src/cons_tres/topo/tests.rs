//! Unit tests of `topo` (topo.rs).

use super::super::tests::a100_cluster;
use super::super::{job_test, SelectCache};
use crate::select::View;
use crate::SchedParams;
use gresim_model::job::{GpuReq, JobRequest, SwitchReq};
use gresim_model::switches::{SwitchDef, SwitchTree, TopologyPlugin};
use gresim_model::{Cluster, ClusterState, NodeId, PartId};

/// 8 nodes of 4 GPUs under leaves s1 = n0-n2, s2 = n3-n4, s3 = n5-n7 and
/// a spine: the conformance case topo_tree's cluster.
fn cluster(plugin: TopologyPlugin) -> Cluster {
    let mut c = a100_cluster(8, 4, |_| 1);
    let leaf = |name: &str, v: &[usize]| SwitchDef {
        name: name.into(),
        nodes: Some(v.iter().map(|&i| NodeId::from_idx(i)).collect()),
        switches: None,
        link_speed: 1,
    };
    let tree = SwitchTree::build(
        &[
            leaf("s1", &[0, 1, 2]),
            leaf("s2", &[3, 4]),
            leaf("s3", &[5, 6, 7]),
            SwitchDef {
                name: "s0".into(),
                nodes: None,
                switches: Some(vec!["s1".into(), "s2".into(), "s3".into()]),
                link_speed: 1,
            },
        ],
        8,
    )
    .unwrap();
    c.set_switches(Some(tree), plugin);
    c
}

fn req(nodes: u32, gpus: u32) -> JobRequest {
    JobRequest {
        min_nodes: nodes,
        max_nodes: nodes,
        gpus_per_node: vec![GpuReq {
            ty: None,
            count: gpus,
        }],
        ..JobRequest::default()
    }
}

/// The state with n0, n1 and n5 taken whole: free are n2 (s1), n3-n4
/// (s2) and n6-n7 (s3).
fn busy(c: &Cluster) -> ClusterState {
    let mut s = ClusterState::new(c);
    let params = SchedParams::default();
    for v in [0, 1, 5] {
        let r = JobRequest {
            nodelist: vec![NodeId::from_idx(v)],
            ..req(1, 4)
        };
        let a = job_test(
            &mut SelectCache::new(),
            c,
            &params,
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

#[test]
fn a_job_goes_under_one_leaf_the_smallest_that_holds_it() {
    let c = cluster(TopologyPlugin::Tree);
    let s = busy(&c);
    // s2 and s3 both hold two nodes: the first of the equals.
    assert_eq!(pick(&c, &s, &req(2, 4)), Some(vec![3, 4]));
    // One node: every leaf holds it, s1 has the fewest free.
    assert_eq!(pick(&c, &s, &req(1, 4)), Some(vec![2]));
    // Without the plugin the same cluster takes consecutive node sets:
    // the set of fewest CPUs, n6-n7, and best fit inside the other.
    let plain = cluster(TopologyPlugin::None);
    let s = busy(&plain);
    assert_eq!(pick(&plain, &s, &req(2, 4)), Some(vec![6, 7]));
    assert_eq!(pick(&plain, &s, &req(1, 4)), Some(vec![6]));
}

#[test]
fn a_job_no_leaf_holds_spans_the_largest_leaf_then_the_best_fitting() {
    let c = cluster(TopologyPlugin::Tree);
    let s = busy(&c);
    // Three nodes: s2 (2, the larger of the non-fitting leaves, first of
    // equals), then s1 (fits the last node with the fewest).
    assert_eq!(pick(&c, &s, &req(3, 4)), Some(vec![2, 3, 4]));
    // Four: s2, then s3, which now holds the remaining two.
    assert_eq!(pick(&c, &s, &req(4, 4)), Some(vec![3, 4, 6, 7]));
    let plain = cluster(TopologyPlugin::None);
    let s = busy(&plain);
    assert_eq!(pick(&plain, &s, &req(4, 4)), Some(vec![2, 3, 4, 6]));
}

#[test]
fn switches_limit_the_leaves_while_it_applies() {
    let c = cluster(TopologyPlugin::Tree);
    let s = busy(&c);
    let within = |count, nodes| JobRequest {
        switches: Some(SwitchReq { count, wait: None }),
        ..req(nodes, 4)
    };
    // Two nodes fit under one leaf; three need two leaves.
    assert_eq!(pick(&c, &s, &within(1, 2)), Some(vec![3, 4]));
    assert_eq!(pick(&c, &s, &within(1, 3)), None);
    assert_eq!(pick(&c, &s, &within(2, 3)), Some(vec![2, 3, 4]));
    // Without topology/tree, --switches changes nothing (Slurm has no
    // switch table then).
    let plain = cluster(TopologyPlugin::None);
    let s = busy(&plain);
    assert!(pick(&plain, &s, &within(1, 3)).is_some());
}
