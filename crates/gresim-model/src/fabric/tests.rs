//! Unit tests of `fabric` (fabric.rs).

use super::*;

#[test]
fn nccl_interface_choice() {
    let f = Fabric::default();
    assert_eq!(f.transport(None, None), Transport::Verbs);
    // IB verbs on: the socket interface only carries the bootstrap.
    assert_eq!(f.transport(None, Some("eth0")), Transport::Verbs);
    let ib = f.transport(Some(true), None);
    assert_eq!(ib.label(), "socket:ib0");
    assert_eq!(f.transport(Some(true), Some("eth")).label(), "socket:eth0");
    assert_eq!(
        f.transport(Some(true), Some("=eth0")).label(),
        "socket:eth0"
    );
    assert_eq!(f.transport(Some(true), Some("^ib")).label(), "socket:eth0");
    assert_eq!(
        f.transport(Some(true), Some("ens")),
        Transport::NoInterface("ens".into())
    );
    let eth = Fabric {
        kind: FabricKind::Ethernet,
        ..Fabric::default()
    };
    assert_eq!(eth.transport(None, Some("eth0")).label(), "socket:eth0");
}

#[test]
fn leaves_and_oversubscription() {
    let f = Fabric {
        node_leaf: vec![0, 0, 1],
        oversubscription: 4.0,
        ..Fabric::default()
    };
    assert_eq!(f.leaf_factor(0, 1), 1.0);
    assert_eq!(f.leaf_factor(1, 2), 0.25);
}
