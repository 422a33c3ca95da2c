//! The built-in topologies by name (DGX, HGX and PCIe servers,
//! workstations; docs/topology.md gives the source of every figure).

use petgraph::graph::{NodeIndex, UnGraph};

/// NVLink bandwidth per link (both directions together): 600 GB/s over the
/// A100's 12 links, 900 GB/s over the H100's 18 (NVIDIA A100 and H100
/// datasheets). `topo -m`'s `NV12` is 12 links.
use super::*;

impl Topology {
    /// A node without GPUs.
    pub fn empty() -> Topology {
        let mut t = Topology {
            name: "empty".into(),
            graph: UnGraph::default(),
            gpus: vec![],
            nics: vec![],
            cpu_affinity: vec![],
            numa: vec![],
            routes: vec![],
            pcie_routes: vec![],
            near_nics: vec![],
            best: vec![],
        };
        t.graph.add_node(Vertex::Cpu { socket: 0 });
        t.derive();
        t
    }

    /// A built-in preset by name (see [`PRESETS`]).
    pub fn preset(name: &str) -> Option<Topology> {
        let t = match name {
            // 8 A100 on 6 NVSwitches (12 NVLinks, 600 GB/s each); 4 PCIe Gen4
            // switches, two per EPYC socket, each with 2 GPUs and 2
            // ConnectX-6 HDR 200 Gb/s NICs.
            "dgx-a100" => dgx(name, 6, 12, 4, 200.0),
            // 8 H100 on 4 NVSwitches (18 NVLinks, 900 GB/s); PCIe Gen5; 8 ConnectX-7 NDR 400 Gb/s.
            "dgx-h100" => dgx(name, 4, 18, 5, 400.0),
            // The same baseboard with H200.
            "hgx-h200" => dgx(name, 4, 18, 5, 400.0),
            "pcie-8gpu" => {
                let mut b = Builder::new();
                let c0 = b.cpu(0);
                let c1 = b.cpu(1);
                b.smp(c0, c1);
                for (s, c) in [c0, c1].into_iter().enumerate() {
                    let hb = b.host_bridge(c);
                    for w in 0..2u8 {
                        let sw = b.switch(hb, 4);
                        for g in 0..2u8 {
                            b.gpu(sw, (s as u8) * 4 + w * 2 + g, 4);
                        }
                    }
                    b.nic(hb, s as u8, &format!("mlx5_{s}"), Some(100.0), 4);
                }
                b.finish(name)
            }
            "workstation-4gpu-nvlink" => {
                // One socket, each GPU on its own x16 link, NVLink bridges
                // joining GPUs 0-1 and 2-3 (gres.conf Links=-1,4,0,0 …; the A100
                // PCIe NVLink bridge carries 600 GB/s over 12 links).
                let mut b = Builder::new();
                let c = b.cpu(0);
                let hb = b.host_bridge(c);
                let g: Vec<NodeIndex> = (0..4u8).map(|i| b.gpu(hb, i, 4)).collect();
                b.nvlink(g[0], g[1], 12);
                b.nvlink(g[2], g[3], 12);
                b.nic(hb, 0, "mlx5_0", Some(100.0), 4);
                b.finish(name)
            }
            _ => return None,
        };
        let mut t = t.ok()?;
        for i in 0..t.gpus.len() {
            t.numa[i] = t.gpu_socket(i).map(u32::from);
        }
        Some(t)
    }
}

fn dgx(name: &str, chips: u8, links: u8, gen: u8, nic_gbps: f64) -> Result<Topology, String> {
    let mut b = Builder::new();
    let c0 = b.cpu(0);
    let c1 = b.cpu(1);
    b.smp(c0, c1);
    let mut gpus = Vec::new();
    for (s, c) in [c0, c1].into_iter().enumerate() {
        let hb = b.host_bridge(c);
        for w in 0..2u8 {
            let sw = b.switch(hb, gen);
            for k in 0..2u8 {
                let i = (s as u8) * 4 + w * 2 + k;
                gpus.push(b.gpu(sw, i, gen));
                b.nic(sw, i, &format!("mlx5_{i}"), Some(nic_gbps), gen);
            }
        }
    }
    b.nvswitch(&gpus, chips, links);
    b.finish(name)
}
