//! A node's interconnect topology as a graph: GPUs, NVSwitches, PCIe
//! switches, PCIe host bridges, CPU sockets (NUMA nodes) and NICs, joined by
//! links that carry a bandwidth (GB/s) and a latency (µs).
//!
//! Built from a preset ([`Topology::preset`]), from `nvidia-smi topo -m`
//! text ([`Topology::from_topo_m`]), or from gres.conf `Links=` and the GPUs'
//! sockets ([`Topology::from_links`]); written back as `topo -m` text with
//! [`Topology::to_topo_m`]. docs/topology.md gives the source of every
//! bandwidth figure.
//!
//! Traffic between two devices follows one route: the widest path (largest
//! bottleneck bandwidth, then fewest hops) that never passes *through* a GPU
//! or a NIC. A ring of GPUs ([`Topology::ring`]) sends one flow per hop; the
//! flows that share a link in the same direction share its bandwidth, so
//! the ring's bandwidth is `min over links (bandwidth / flows)`.

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};
use petgraph::visit::EdgeRef;

/// NVLink bandwidth per link (both directions together): 600 GB/s over the
/// A100's 12 links, 900 GB/s over the H100's 18 (NVIDIA A100 and H100
/// datasheets). `topo -m`'s `NV12` is 12 links.
pub const NVLINK_GBS_PER_LINK: f64 = 50.0;
/// One Intel UPI link at 10.4 GT/s: 20.8 GB/s per direction.
pub const SMP_GBS: f64 = 20.8;
/// A PCIe host bridge sits on the CPU die: not a bottleneck.
pub const ON_DIE_GBS: f64 = 1000.0;

/// Latency assumptions per hop, in µs (order of magnitude, not datasheet figures).
pub const NVLINK_LAT_US: f64 = 0.5;
pub const PCIE_LAT_US: f64 = 0.5;
pub const SMP_LAT_US: f64 = 1.0;

/// PCIe x16 bandwidth per direction in GB/s by generation (PCI-SIG: Gen3
/// 8 GT/s, Gen4 16 GT/s, Gen5 32 GT/s, 128b/130b encoding; rounded).
pub fn pcie_gbs(gen: u8, lanes: u8) -> f64 {
    let x16 = match gen {
        0..=1 => 4.0,
        2 => 8.0,
        3 => 16.0,
        4 => 32.0,
        5 => 64.0,
        _ => 128.0,
    };
    x16 * f64::from(lanes) / 16.0
}

/// A vertex of the topology graph.
#[derive(Debug, Clone, PartialEq)]
pub enum Vertex {
    /// A physical GPU, by its index on the node (GRES order).
    Gpu {
        index: u8,
    },
    /// The NVSwitch fabric of a baseboard (its chips act as one crossbar).
    NvSwitch {
        chips: u8,
    },
    PcieSwitch,
    /// A PCIe root complex (host bridge) of a CPU.
    HostBridge,
    /// A CPU socket, which is also one NUMA node here.
    Cpu {
        socket: u16,
    },
    /// A network adapter; `gbps` is its line rate when known.
    Nic {
        index: u8,
        name: String,
        gbps: Option<f64>,
    },
}

/// What a link is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    NvLink {
        links: u8,
    },
    Pcie {
        gen: u8,
        lanes: u8,
    },
    /// Between CPU sockets (UPI, xGMI).
    Smp,
    /// Host bridge to its CPU.
    OnDie,
}

/// An edge: kind, bandwidth per direction (GB/s) and latency (µs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub kind: LinkKind,
    pub gbs: f64,
    pub latency_us: f64,
}

impl Link {
    pub fn nvlink(links: u8) -> Link {
        Link {
            kind: LinkKind::NvLink { links },
            gbs: f64::from(links) * NVLINK_GBS_PER_LINK,
            latency_us: NVLINK_LAT_US,
        }
    }
    pub fn pcie(gen: u8) -> Link {
        Link {
            kind: LinkKind::Pcie { gen, lanes: 16 },
            gbs: pcie_gbs(gen, 16),
            latency_us: PCIE_LAT_US,
        }
    }
}

/// One device-to-device route: the directed edges it uses.
#[derive(Debug, Clone, Default, PartialEq)]
struct Route {
    /// (edge, traversed from its source to its target).
    edges: Vec<(EdgeIndex, bool)>,
    latency_us: f64,
}

/// The bandwidth and latency of a set of GPUs communicating as a ring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RingCost {
    /// GB/s each ring step achieves (the contended bottleneck).
    pub gbs: f64,
    /// The slowest hop's latency, µs.
    pub latency_us: f64,
}

/// A `topo -m` relation between two devices, nearest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathClass {
    /// NVLink with this many links.
    Nv(u8),
    Pix,
    Pxb,
    Phb,
    Node,
    Sys,
}

impl PathClass {
    pub fn label(self) -> String {
        match self {
            PathClass::Nv(n) => format!("NV{n}"),
            PathClass::Pix => "PIX".into(),
            PathClass::Pxb => "PXB".into(),
            PathClass::Phb => "PHB".into(),
            PathClass::Node => "NODE".into(),
            PathClass::Sys => "SYS".into(),
        }
    }
    fn parse(s: &str) -> Option<PathClass> {
        Some(match s {
            "PIX" => PathClass::Pix,
            "PXB" => PathClass::Pxb,
            "PHB" => PathClass::Phb,
            "NODE" => PathClass::Node,
            "SYS" | "SOC" => PathClass::Sys,
            _ => {
                let n = s.strip_prefix("NV")?.parse::<u8>().ok()?;
                if n == 0 {
                    return None;
                }
                PathClass::Nv(n)
            }
        })
    }
    /// PCIe distance rank (NVLink pairs carry no PCIe information).
    fn pcie_rank(self) -> Option<u8> {
        match self {
            PathClass::Nv(_) => None,
            PathClass::Pix => Some(0),
            PathClass::Pxb => Some(1),
            PathClass::Phb => Some(2),
            PathClass::Node => Some(3),
            PathClass::Sys => Some(4),
        }
    }
}

/// An error reading `topo -m` text: the line (1-based, 0 for the whole text) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {msg}")]
pub struct TopoError {
    pub line: usize,
    pub msg: String,
}

fn terr(line: usize, msg: impl Into<String>) -> TopoError {
    TopoError {
        line,
        msg: msg.into(),
    }
}

/// The names of the built-in presets.
pub const PRESETS: &[&str] = &[
    "dgx-a100",
    "dgx-h100",
    "hgx-h200",
    "pcie-8gpu",
    "workstation-4gpu-nvlink",
];

/// A node's topology and the routes derived from it.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Preset name or where it came from.
    pub name: String,
    pub graph: UnGraph<Vertex, Link>,
    gpus: Vec<NodeIndex>,
    nics: Vec<NodeIndex>,
    /// `topo -m` CPU Affinity per GPU, when known.
    pub cpu_affinity: Vec<Option<String>>,
    /// NUMA node per GPU, when known.
    pub numa: Vec<Option<u32>>,
    /// Routes between devices (GPUs then NICs), any link.
    routes: Vec<Vec<Route>>,
    /// Routes between devices without NVLink (MIG instances cannot use it).
    pcie_routes: Vec<Vec<Route>>,
    /// Per GPU, the NICs nearest to it (fewest PCIe hops).
    near_nics: Vec<Vec<usize>>,
    /// Per GPU count k: the best ring over k GPUs of an idle node, and the most NIC bandwidth k GPUs reach.
    best: Vec<(RingCost, f64)>,
}

/// Builds topologies.
#[derive(Debug, Default)]
pub struct Builder {
    g: UnGraph<Vertex, Link>,
    gpus: Vec<Option<NodeIndex>>,
    nics: Vec<Option<NodeIndex>>,
}

impl Builder {
    pub fn new() -> Builder {
        Builder::default()
    }
    pub fn cpu(&mut self, socket: u16) -> NodeIndex {
        self.g.add_node(Vertex::Cpu { socket })
    }
    /// Joins two CPU sockets.
    pub fn smp(&mut self, a: NodeIndex, b: NodeIndex) {
        self.g.add_edge(
            a,
            b,
            Link {
                kind: LinkKind::Smp,
                gbs: SMP_GBS,
                latency_us: SMP_LAT_US,
            },
        );
    }
    pub fn host_bridge(&mut self, cpu: NodeIndex) -> NodeIndex {
        let h = self.g.add_node(Vertex::HostBridge);
        self.g.add_edge(
            h,
            cpu,
            Link {
                kind: LinkKind::OnDie,
                gbs: ON_DIE_GBS,
                latency_us: 0.0,
            },
        );
        h
    }
    pub fn switch(&mut self, parent: NodeIndex, gen: u8) -> NodeIndex {
        let s = self.g.add_node(Vertex::PcieSwitch);
        self.g.add_edge(s, parent, Link::pcie(gen));
        s
    }
    pub fn gpu(&mut self, parent: NodeIndex, index: u8, gen: u8) -> NodeIndex {
        let v = self.g.add_node(Vertex::Gpu { index });
        self.g.add_edge(v, parent, Link::pcie(gen));
        let i = usize::from(index);
        if self.gpus.len() <= i {
            self.gpus.resize(i + 1, None);
        }
        self.gpus[i] = Some(v);
        v
    }
    pub fn nic(
        &mut self,
        parent: NodeIndex,
        index: u8,
        name: &str,
        gbps: Option<f64>,
        gen: u8,
    ) -> NodeIndex {
        let v = self.g.add_node(Vertex::Nic {
            index,
            name: name.to_string(),
            gbps,
        });
        self.g.add_edge(v, parent, Link::pcie(gen));
        let i = usize::from(index);
        if self.nics.len() <= i {
            self.nics.resize(i + 1, None);
        }
        self.nics[i] = Some(v);
        v
    }
    /// A direct NVLink connection of `links` links.
    pub fn nvlink(&mut self, a: NodeIndex, b: NodeIndex, links: u8) {
        self.g.add_edge(a, b, Link::nvlink(links));
    }
    /// An NVSwitch baseboard joining `gpus`, each with `links` NVLinks.
    pub fn nvswitch(&mut self, gpus: &[NodeIndex], chips: u8, links: u8) {
        let s = self.g.add_node(Vertex::NvSwitch { chips });
        for &v in gpus {
            self.g.add_edge(v, s, Link::nvlink(links));
        }
    }
    /// Finishes the topology. Fails when GPU or NIC indices have gaps.
    pub fn finish(self, name: &str) -> Result<Topology, String> {
        let gpus: Vec<NodeIndex> = self
            .gpus
            .iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| format!("GPU{i} is missing")))
            .collect::<Result<_, _>>()?;
        let nics: Vec<NodeIndex> = self
            .nics
            .iter()
            .enumerate()
            .map(|(i, v)| v.ok_or_else(|| format!("NIC{i} is missing")))
            .collect::<Result<_, _>>()?;
        if gpus.len() > 64 {
            return Err("at most 64 GPUs per node".into());
        }
        let n = gpus.len();
        let mut t = Topology {
            name: name.to_string(),
            graph: self.g,
            gpus,
            nics,
            cpu_affinity: vec![None; n],
            numa: vec![None; n],
            routes: Vec::new(),
            pcie_routes: Vec::new(),
            near_nics: Vec::new(),
            best: Vec::new(),
        };
        t.derive();
        Ok(t)
    }
}

impl Topology {
    /// Number of physical GPUs.
    pub fn gpu_count(&self) -> usize {
        self.gpus.len()
    }
    /// Number of NICs.
    pub fn nic_count(&self) -> usize {
        self.nics.len()
    }
    fn devices(&self) -> Vec<NodeIndex> {
        self.gpus.iter().chain(&self.nics).copied().collect()
    }

    /// The line rate (Gb/s) of NIC `i`, if known.
    pub fn nic_gbps(&self, i: usize) -> Option<f64> {
        match self.nics.get(i).map(|&v| &self.graph[v]) {
            Some(Vertex::Nic { gbps, .. }) => *gbps,
            _ => None,
        }
    }
    /// The name of NIC `i` (`mlx5_0`).
    pub fn nic_name(&self, i: usize) -> String {
        match self.nics.get(i).map(|&v| &self.graph[v]) {
            Some(Vertex::Nic { name, .. }) => name.clone(),
            _ => format!("NIC{i}"),
        }
    }

    /// The CPU socket GPU `i` hangs off (by its PCIe route).
    pub fn gpu_socket(&self, i: usize) -> Option<u16> {
        let v = *self.gpus.get(i)?;
        let mut seen = vec![false; self.graph.node_count()];
        let mut stack = vec![v];
        while let Some(u) = stack.pop() {
            if seen[u.index()] {
                continue;
            }
            seen[u.index()] = true;
            if let Vertex::Cpu { socket } = self.graph[u] {
                return Some(socket);
            }
            for e in self.graph.edges(u) {
                if matches!(e.weight().kind, LinkKind::Pcie { .. } | LinkKind::OnDie) {
                    let w = if e.source() == u {
                        e.target()
                    } else {
                        e.source()
                    };
                    if !matches!(self.graph[w], Vertex::Gpu { .. } | Vertex::Nic { .. }) {
                        stack.push(w);
                    }
                }
            }
        }
        None
    }
}

mod presets;
mod routes;
mod topo_m;

#[cfg(test)]
mod tests;
