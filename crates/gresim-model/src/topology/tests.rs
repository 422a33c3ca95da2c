//! Topologies: presets round-trip through `topo -m`, labels, bandwidths,
//! rings and bad input.

use super::*;

const SEED: &str = "        GPU0  GPU1  GPU2  GPU3
GPU0     X    NV12  NV12  NV12
GPU1    NV12   X    NV12  NV12
GPU2    NV12  NV12   X    NV12
GPU3    NV12  NV12  NV12   X
";

#[test]
fn seed_matrix_reads_as_nvlink_all_to_all() {
    let t = Topology::from_topo_m(SEED, 4).expect("parses");
    assert_eq!(t.gpu_count(), 4);
    for i in 0..4 {
        for j in 0..4 {
            if i != j {
                assert_eq!(t.classify(i, j), PathClass::Nv(12));
            }
        }
    }
    // Every pair has its own 600 GB/s link: a 4-ring runs at 600.
    assert_eq!(t.ring(&[0, 1, 2, 3], false).gbs, 600.0);
    // MIG instances cannot use NVLink: PCIe Gen4 through one switch, 32 GB/s.
    assert_eq!(t.ring(&[0, 1], true).gbs, 32.0);
}

#[test]
fn presets_round_trip_through_topo_m() {
    for name in PRESETS {
        let t = Topology::preset(name).expect("preset");
        let text = t.to_topo_m();
        let back = Topology::from_topo_m(&text, 4).expect("re-reads");
        assert_eq!(back.matrix(), t.matrix(), "{name}");
        assert_eq!(back.to_topo_m(), text, "{name}");
        assert_eq!(back.numa, t.numa, "{name}");
    }
}

#[test]
fn dgx_a100_labels_and_bandwidths() {
    let t = Topology::preset("dgx-a100").expect("preset");
    assert_eq!(t.gpu_count(), 8);
    assert_eq!(t.nic_count(), 8);
    assert_eq!(t.classify(0, 7), PathClass::Nv(12));
    // GPU0 and NIC0/NIC1 share a PCIe switch; NIC2 is under the other switch of socket 0.
    assert_eq!(t.classify(0, 8), PathClass::Pix);
    assert_eq!(t.classify(0, 10), PathClass::Phb);
    assert_eq!(t.classify(0, 12), PathClass::Sys);
    // NVSwitch: any set of GPUs rings at 600 GB/s.
    assert_eq!(t.ring(&[0, 5], false).gbs, 600.0);
    assert_eq!(t.best_ring(8).gbs, 600.0);
    // 8 GPUs reach 8 × 200 Gb/s.
    assert_eq!(t.best_nic_gbps(8), 1600.0);
    assert_eq!(t.nics_for(&[0, 1]), vec![0, 1]);
    let h = Topology::preset("dgx-h100").expect("preset");
    assert_eq!(h.classify(1, 2), PathClass::Nv(18));
    assert_eq!(h.best_ring(4).gbs, 900.0);
}

#[test]
fn pcie_server_rings_hit_switch_and_socket_bottlenecks() {
    let t = Topology::preset("pcie-8gpu").expect("preset");
    assert_eq!(t.classify(0, 1), PathClass::Pix);
    assert_eq!(t.classify(0, 2), PathClass::Phb);
    assert_eq!(t.classify(0, 4), PathClass::Sys);
    // Two GPUs under one Gen4 switch: 32 GB/s.
    assert_eq!(t.ring(&[0, 1], false).gbs, 32.0);
    // Four GPUs of one socket: each switch uplink carries one flow each way: 32.
    assert_eq!(t.ring(&[0, 1, 2, 3], false).gbs, 32.0);
    // Across sockets the UPI link (20.8 GB/s) is the bottleneck.
    assert_eq!(t.ring(&[0, 4], false).gbs, 20.8);
    assert_eq!(t.best_ring(4).gbs, 32.0);
}

#[test]
fn workstation_pairs_match_links() {
    let t = Topology::preset("workstation-4gpu-nvlink").expect("preset");
    assert_eq!(t.classify(0, 1), PathClass::Nv(12));
    assert_eq!(t.classify(1, 2), PathClass::Phb);
    assert_eq!(t.ring(&[0, 1], false).gbs, 600.0);
    assert_eq!(t.ring(&[1, 2], false).gbs, 32.0);
    let (c, m) = t.best_subset(0b1110, 2, false).expect("two of three");
    assert_eq!((c.gbs, m), (600.0, 0b1100));
    // The same node from gres.conf Links.
    let l = vec![
        vec![0, 12, 0, 0],
        vec![12, 0, 0, 0],
        vec![0, 0, 0, 12],
        vec![0, 0, 12, 0],
    ];
    let g = Topology::from_links(1, &[Some(0); 4], Some(&l), 4);
    assert_eq!(g.classify(0, 1), PathClass::Nv(12));
    assert_eq!(g.classify(0, 2), PathClass::Phb);
    assert_eq!(g.ring(&[2, 3], false).gbs, 600.0);
}

#[test]
fn topo_m_with_nics_affinity_and_legend() {
    let text = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV4\tPXB\tSYS\tPIX\tSYS\t0-15\t0\t\tN/A
GPU1\tNV4\t X \tPXB\tSYS\tPXB\tSYS\t0-15\t0\t\tN/A
GPU2\tPXB\tPXB\t X \tSYS\tPXB\tSYS\t0-15\t0\t\tN/A
GPU3\tSYS\tSYS\tSYS\t X \tSYS\tPIX\t16-31\t1\t\tN/A
NIC0\tPIX\tPXB\tPXB\tSYS\t X \tSYS
NIC1\tSYS\tSYS\tSYS\tPIX\tSYS\t X

Legend:

  X    = Self

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
";
    let t = Topology::from_topo_m(text, 4).expect("parses");
    assert_eq!(t.nic_count(), 2);
    assert_eq!(t.nic_name(1), "mlx5_1");
    assert_eq!(t.numa, vec![Some(0), Some(0), Some(0), Some(1)]);
    assert_eq!(t.cpu_affinity[3].as_deref(), Some("16-31"));
    assert_eq!(t.classify(0, 2), PathClass::Pxb);
    assert_eq!(t.classify(0, 4), PathClass::Pix);
    let again = Topology::from_topo_m(&t.to_topo_m(), 4).expect("re-reads");
    assert_eq!(again.matrix(), t.matrix());
    assert_eq!(again.to_topo_m(), t.to_topo_m());
}

#[test]
fn bad_topo_m_is_an_error_with_a_line() {
    for (text, line) in [
        ("", 0),
        ("\tGPU0\tGPU1\nGPU0\t X \tFOO\nGPU1\tFOO\t X\n", 2),
        ("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tSYS\t X\n", 2),
        ("\tGPU0\tGPU1\nGPU0\t X \tPIX\n", 0),
        ("\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X\n", 2),
        // PIX with GPU1 and GPU2 but SYS between them: no tree does that.
        (
            "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tPIX\tPIX\nGPU1\tPIX\t X \tSYS\nGPU2\tPIX\tSYS\t X\n",
            3,
        ),
    ] {
        let e = Topology::from_topo_m(text, 4).expect_err(text);
        assert_eq!(e.line, line, "{text}: {e}");
    }
}
