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

    /// Widest routes from device `src` to every vertex; `nv` allows NVLink.
    fn routes_from(&self, src: NodeIndex, nv: bool) -> Vec<Option<(f64, u32, Option<EdgeIndex>)>> {
        let n = self.graph.node_count();
        let mut best: Vec<Option<(f64, u32, Option<EdgeIndex>)>> = vec![None; n];
        let mut done = vec![false; n];
        best[src.index()] = Some((f64::INFINITY, 0, None));
        loop {
            // The unfinished vertex with the widest, then shortest, route.
            let mut pick: Option<usize> = None;
            for v in 0..n {
                if done[v] {
                    continue;
                }
                if let Some((bw, h, _)) = best[v] {
                    let better = match pick.and_then(|p| best[p]) {
                        None => true,
                        Some((pb, ph, _)) => bw > pb || (bw == pb && h < ph),
                    };
                    if better {
                        pick = Some(v);
                    }
                }
            }
            let Some(u) = pick else { break };
            done[u] = true;
            let ui = NodeIndex::new(u);
            // Routes do not pass through devices.
            if ui != src && matches!(self.graph[ui], Vertex::Gpu { .. } | Vertex::Nic { .. }) {
                continue;
            }
            let (bw, h, _) = best[u].unwrap_or((0.0, 0, None));
            for e in self.graph.edges(ui) {
                let l = e.weight();
                if !nv && matches!(l.kind, LinkKind::NvLink { .. }) {
                    continue;
                }
                let w = if e.source() == ui {
                    e.target()
                } else {
                    e.source()
                };
                if !nv && matches!(self.graph[w], Vertex::NvSwitch { .. }) {
                    continue;
                }
                let nb = bw.min(l.gbs);
                let nh = h + 1;
                let better = match best[w.index()] {
                    None => true,
                    Some((ob, oh, _)) => !done[w.index()] && (nb > ob || (nb == ob && nh < oh)),
                };
                if better {
                    best[w.index()] = Some((nb, nh, Some(e.id())));
                }
            }
        }
        best
    }

    fn route(
        &self,
        from: &[Option<(f64, u32, Option<EdgeIndex>)>],
        src: NodeIndex,
        dst: NodeIndex,
    ) -> Route {
        let mut edges = Vec::new();
        let mut latency_us = 0.0;
        let mut v = dst;
        let mut guard = 0;
        while v != src && guard <= self.graph.node_count() {
            guard += 1;
            let Some((_, _, Some(e))) = from[v.index()] else {
                return Route::default();
            };
            let (a, b) = self.graph.edge_endpoints(e).unwrap_or((v, v));
            let prev = if a == v { b } else { a };
            // Traversed prev → v: forward when prev is the edge's source.
            edges.push((e, a == prev));
            latency_us += self.graph[e].latency_us;
            v = prev;
        }
        edges.reverse();
        Route { edges, latency_us }
    }

    /// Recomputes the routes after the graph's weights changed.
    pub fn refresh(&mut self) {
        self.derive();
    }

    fn derive(&mut self) {
        let devs = self.devices();
        let mut routes = Vec::with_capacity(devs.len());
        let mut pcie = Vec::with_capacity(devs.len());
        for &s in &devs {
            let all = self.routes_from(s, true);
            let pc = self.routes_from(s, false);
            routes.push(devs.iter().map(|&d| self.route(&all, s, d)).collect());
            pcie.push(devs.iter().map(|&d| self.route(&pc, s, d)).collect());
        }
        self.routes = routes;
        self.pcie_routes = pcie;
        let ng = self.gpus.len();
        self.near_nics = (0..ng)
            .map(|g| {
                let hops: Vec<usize> = (0..self.nics.len())
                    .map(|k| self.pcie_routes[g][ng + k].edges.len())
                    .collect();
                let min = hops.iter().copied().filter(|&h| h > 0).min();
                (0..self.nics.len())
                    .filter(|&k| Some(hops[k]) == min)
                    .collect()
            })
            .collect();
        let full = crate::state::full_mask(ng);
        self.best = (0..=ng)
            .map(|k| {
                let ring = self.best_subset(full, k, false).map_or(
                    RingCost {
                        gbs: f64::INFINITY,
                        latency_us: 0.0,
                    },
                    |b| b.0,
                );
                let nic = self.best_nic_gbs(k);
                (ring, nic)
            })
            .collect();
    }

    /// The ring over GPUs in `order` (physical indices).
    fn ring_of(&self, order: &[usize], pcie_only: bool) -> RingCost {
        if order.len() < 2 {
            return RingCost {
                gbs: f64::INFINITY,
                latency_us: 0.0,
            };
        }
        let table = if pcie_only {
            &self.pcie_routes
        } else {
            &self.routes
        };
        let mut load: Vec<(EdgeIndex, bool, u32)> = Vec::new();
        let mut lat = 0.0f64;
        for i in 0..order.len() {
            let (a, b) = (order[i], order[(i + 1) % order.len()]);
            let r = &table[a][b];
            if r.edges.is_empty() {
                return RingCost {
                    gbs: 0.0,
                    latency_us: lat,
                };
            }
            lat = lat.max(r.latency_us);
            for &(e, f) in &r.edges {
                match load.iter_mut().find(|x| x.0 == e && x.1 == f) {
                    Some(x) => x.2 += 1,
                    None => load.push((e, f, 1)),
                }
            }
        }
        let gbs = load
            .iter()
            .map(|&(e, _, n)| self.graph[e].gbs / f64::from(n))
            .fold(f64::INFINITY, f64::min);
        RingCost {
            gbs,
            latency_us: lat,
        }
    }

    /// The best ring NCCL-like ordering finds over `gpus` (physical
    /// indices): index order, PCIe-tree order and a greedy nearest-neighbour
    /// order are tried, the widest wins.
    pub fn ring(&self, gpus: &[usize], pcie_only: bool) -> RingCost {
        let mut g: Vec<usize> = gpus
            .iter()
            .copied()
            .filter(|&i| i < self.gpus.len())
            .collect();
        g.sort_unstable();
        g.dedup();
        if g.len() < 2 {
            return self.ring_of(&g, pcie_only);
        }
        let mut best = self.ring_of(&g, pcie_only);
        let mut consider = |order: &[usize]| {
            let c = self.ring_of(order, pcie_only);
            if c.gbs > best.gbs || (c.gbs == best.gbs && c.latency_us < best.latency_us) {
                best = c;
            }
        };
        // PCIe-tree order: by socket, then by the first hop of the route to the CPU.
        let mut tree = g.clone();
        tree.sort_by_key(|&i| {
            let first = self.pcie_routes[i]
                .iter()
                .map(|r| r.edges.first().map_or(usize::MAX, |e| e.0.index()))
                .min()
                .unwrap_or(usize::MAX);
            (self.gpu_socket(i), self.pcie_parent(i), first, i)
        });
        consider(&tree);
        // Greedy: from the lowest index, always to the widest unvisited neighbour.
        let table = if pcie_only {
            &self.pcie_routes
        } else {
            &self.routes
        };
        let mut order = vec![g[0]];
        let mut left: Vec<usize> = g[1..].to_vec();
        while !left.is_empty() {
            let cur = order[order.len() - 1];
            let (k, _) = left
                .iter()
                .enumerate()
                .map(|(k, &j)| (k, self.route_gbs(&table[cur][j])))
                .fold(
                    (0, f64::NEG_INFINITY),
                    |acc, x| if x.1 > acc.1 { x } else { acc },
                );
            order.push(left.remove(k));
        }
        consider(&order);
        best
    }

    fn pcie_parent(&self, i: usize) -> usize {
        let v = self.gpus[i];
        self.graph
            .edges(v)
            .filter(|e| matches!(e.weight().kind, LinkKind::Pcie { .. }))
            .map(|e| {
                if e.source() == v {
                    e.target()
                } else {
                    e.source()
                }
                .index()
            })
            .min()
            .unwrap_or(usize::MAX)
    }

    fn route_gbs(&self, r: &Route) -> f64 {
        r.edges
            .iter()
            .map(|&(e, _)| self.graph[e].gbs)
            .fold(f64::INFINITY, f64::min)
    }

    /// The k GPUs among `candidates` (a mask over physical indices) whose
    /// ring is widest; ties go to the lexicographically first set. Exact up
    /// to 20 000 subsets, greedy beyond.
    pub fn best_subset(
        &self,
        candidates: u64,
        k: usize,
        pcie_only: bool,
    ) -> Option<(RingCost, u64)> {
        self.best_subset_with(candidates, k, pcie_only, &|_| 0.0)
    }

    /// [`Topology::best_subset`] with ties between equally wide sets broken
    /// by the larger `score(set)` (then the lexicographically first set).
    pub fn best_subset_with(
        &self,
        candidates: u64,
        k: usize,
        pcie_only: bool,
        score: &dyn Fn(u64) -> f64,
    ) -> Option<(RingCost, u64)> {
        let cand: Vec<usize> = (0..self.gpus.len())
            .filter(|&i| candidates & (1u64 << i) != 0)
            .collect();
        if k == 0 || cand.len() < k {
            return None;
        }
        let better = |a: &RingCost, sa: f64, b: &RingCost, sb: f64| {
            let (ag, bg) = (a.gbs.min(1e18), b.gbs.min(1e18));
            ag > bg + 1e-9
                || ((ag - bg).abs() <= 1e-9
                    && (sa > sb + 1e-9
                        || ((sa - sb).abs() <= 1e-9 && a.latency_us < b.latency_us - 1e-12)))
        };
        if binom(cand.len(), k) <= 20_000 {
            let mut idx: Vec<usize> = (0..k).collect();
            let mut best: Option<(RingCost, u64, f64)> = None;
            loop {
                let set: Vec<usize> = idx.iter().map(|&i| cand[i]).collect();
                let c = self.ring(&set, pcie_only);
                let m = set.iter().fold(0u64, |m, &i| m | (1 << i));
                let sc = score(m);
                if best.as_ref().is_none_or(|b| better(&c, sc, &b.0, b.2)) {
                    best = Some((c, m, sc));
                }
                // Next combination.
                let mut i = k;
                loop {
                    if i == 0 {
                        return best.map(|b| (b.0, b.1));
                    }
                    i -= 1;
                    if idx[i] != i + cand.len() - k {
                        break;
                    }
                    if i == 0 && idx[0] == cand.len() - k {
                        return best.map(|b| (b.0, b.1));
                    }
                }
                idx[i] += 1;
                for j in i + 1..k {
                    idx[j] = idx[j - 1] + 1;
                }
            }
        }
        // Greedy: grow from the first candidate by the widest addition.
        let mut set = vec![cand[0]];
        while set.len() < k {
            let mut pick: Option<(RingCost, usize)> = None;
            for &c in &cand {
                if set.contains(&c) {
                    continue;
                }
                let mut s = set.clone();
                s.push(c);
                let r = self.ring(&s, pcie_only);
                if pick.as_ref().is_none_or(|p| better(&r, 0.0, &p.0, 0.0)) {
                    pick = Some((r, c));
                }
            }
            set.push(pick?.1);
        }
        let c = self.ring(&set, pcie_only);
        Some((c, set.iter().fold(0u64, |m, &i| m | (1 << i))))
    }

    /// The NICs GPUs in `gpus` use for traffic between nodes: each GPU's
    /// nearest NICs, at most one per GPU.
    pub fn nics_for(&self, gpus: &[usize]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for &g in gpus {
            if let Some(near) = self.near_nics.get(g) {
                if let Some(&k) = near.iter().find(|k| !out.contains(k)) {
                    out.push(k);
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn best_nic_gbs(&self, k: usize) -> f64 {
        let mut rates: Vec<f64> = (0..self.nics.len())
            .map(|i| self.nic_gbps(i).unwrap_or(0.0))
            .collect();
        rates.sort_by(|a, b| b.total_cmp(a));
        rates.iter().take(k).sum()
    }

    /// The widest ring k GPUs of this node can form when it is idle.
    pub fn best_ring(&self, k: usize) -> RingCost {
        self.best.get(k).map_or(
            RingCost {
                gbs: f64::INFINITY,
                latency_us: 0.0,
            },
            |b| b.0,
        )
    }
    /// The most NIC line rate (Gb/s) k GPUs can reach.
    pub fn best_nic_gbps(&self, k: usize) -> f64 {
        self.best.get(k).map_or(0.0, |b| b.1)
    }

    /// The NVLink connection between two vertices: a direct link or a shared NVSwitch.
    fn nv_between(&self, a: NodeIndex, b: NodeIndex) -> Option<u8> {
        let mut best: Option<u8> = None;
        for e in self.graph.edges(a) {
            let LinkKind::NvLink { links } = e.weight().kind else {
                continue;
            };
            let w = if e.source() == a {
                e.target()
            } else {
                e.source()
            };
            if w == b {
                best = best.max(Some(links));
            } else if matches!(self.graph[w], Vertex::NvSwitch { .. }) {
                for f in self.graph.edges(w) {
                    let x = if f.source() == w {
                        f.target()
                    } else {
                        f.source()
                    };
                    if let (true, LinkKind::NvLink { links: l2 }) = (x == b, f.weight().kind) {
                        best = best.max(Some(links.min(l2)));
                    }
                }
            }
        }
        best
    }

    /// The `topo -m` relation of devices `i` and `j` (GPUs first, then NICs).
    pub fn classify(&self, i: usize, j: usize) -> PathClass {
        let devs = self.devices();
        if let Some(n) = self.nv_between(devs[i], devs[j]) {
            return PathClass::Nv(n);
        }
        let r = &self.pcie_routes[i][j];
        let mut hb = 0;
        let mut cpu = 0;
        let mut sw = 0;
        let mut sys = false;
        let mut v = devs[i];
        for (k, &(e, fwd)) in r.edges.iter().enumerate() {
            if self.graph[e].kind == LinkKind::Smp {
                sys = true;
            }
            let Some((a, b)) = self.graph.edge_endpoints(e) else {
                break;
            };
            v = if fwd { b } else { a };
            // Intermediate vertices only: the end of every edge but the last.
            if k + 1 < r.edges.len() {
                match self.graph[v] {
                    Vertex::HostBridge => hb += 1,
                    Vertex::Cpu { .. } => cpu += 1,
                    Vertex::PcieSwitch => sw += 1,
                    _ => {}
                }
            }
        }
        let _ = v;
        if sys || r.edges.is_empty() {
            PathClass::Sys
        } else if cpu > 0 || hb > 1 {
            PathClass::Node
        } else if hb == 1 {
            PathClass::Phb
        } else if sw >= 2 {
            PathClass::Pxb
        } else {
            PathClass::Pix
        }
    }

    /// Device names as `topo -m` prints them: `GPU0`…, `NIC0`….
    fn device_names(&self) -> Vec<String> {
        (0..self.gpus.len())
            .map(|i| format!("GPU{i}"))
            .chain((0..self.nics.len()).map(|i| format!("NIC{i}")))
            .collect()
    }

    /// Writes the matrix as `nvidia-smi topo -m` prints it (tab-separated),
    /// with the legend and, when there are NICs, the NIC legend.
    pub fn to_topo_m(&self) -> String {
        let names = self.device_names();
        let n = names.len();
        let ng = self.gpus.len();
        let affinity =
            self.cpu_affinity.iter().any(Option::is_some) || self.numa.iter().any(Option::is_some);
        let mut s = String::new();
        for name in &names {
            s.push('\t');
            s.push_str(name);
        }
        if affinity {
            s.push_str("\tCPU Affinity\tNUMA Affinity");
        }
        s.push('\n');
        for (i, name) in names.iter().enumerate() {
            s.push_str(name);
            for j in 0..n {
                s.push('\t');
                if i == j {
                    s.push_str(" X ");
                } else {
                    s.push_str(&self.classify(i, j).label());
                }
            }
            if affinity && i < ng {
                s.push('\t');
                s.push_str(self.cpu_affinity[i].as_deref().unwrap_or("N/A"));
                s.push('\t');
                match self.numa[i] {
                    Some(x) => s.push_str(&x.to_string()),
                    None => s.push_str("N/A"),
                }
            }
            s.push('\n');
        }
        s.push_str(
            "\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n",
        );
        if !self.nics.is_empty() {
            s.push_str("\nNIC Legend:\n\n");
            for k in 0..self.nics.len() {
                s.push_str(&format!("  NIC{k}: {}\n", self.nic_name(k)));
            }
        }
        s
    }

    /// The relation matrix over devices (GPUs then NICs), `None` on the diagonal.
    pub fn matrix(&self) -> Vec<Vec<Option<PathClass>>> {
        let n = self.gpus.len() + self.nics.len();
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (i != j).then(|| self.classify(i, j)))
                    .collect()
            })
            .collect()
    }

    /// Reads `nvidia-smi topo -m` output. NVLink pairs become direct links
    /// of `NV#` × 50 GB/s; the PCIe relations (PIX, PXB, PHB, NODE, SYS)
    /// become switches, host bridges and sockets that reproduce them; PCIe
    /// links are Gen `pcie_gen`. NICs (`NIC#` or `mlx5_#` columns) get their
    /// names from the NIC legend and an unknown line rate.
    pub fn from_topo_m(text: &str, pcie_gen: u8) -> Result<Topology, TopoError> {
        let lines: Vec<&str> = text.lines().collect();
        let (hl, header) = lines
            .iter()
            .enumerate()
            .find(|(_, l)| l.split_whitespace().any(|t| t == "GPU0"))
            .ok_or_else(|| terr(0, "no header line with GPU0"))?;
        let hl = hl + 1;
        let toks: Vec<&str> = header.split_whitespace().collect();
        let mut cols: Vec<String> = Vec::new();
        let mut extras: Vec<&str> = Vec::new();
        let mut k = 0;
        while k < toks.len() {
            let t = toks[k];
            let two = toks.get(k + 1).copied();
            let three = toks.get(k + 2).copied();
            if t == "CPU" && two == Some("Affinity") {
                extras.push("cpu");
                k += 2;
            } else if t == "NUMA" && two == Some("Affinity") {
                extras.push("numa");
                k += 2;
            } else if t == "GPU" && two == Some("NUMA") && three == Some("ID") {
                extras.push("gpunuma");
                k += 3;
            } else if is_device_name(t) {
                if !extras.is_empty() {
                    return Err(terr(
                        hl,
                        format!("device column {t} after the affinity columns"),
                    ));
                }
                if cols.iter().any(|c| c == t) {
                    return Err(terr(hl, format!("column {t} appears twice")));
                }
                cols.push(t.to_string());
                k += 1;
            } else {
                return Err(terr(hl, format!("unexpected column '{t}'")));
            }
        }
        let n = cols.len();
        if n > 128 {
            return Err(terr(hl, "too many devices"));
        }
        let mut rel: Vec<Vec<Option<PathClass>>> = vec![vec![None; n]; n];
        let mut seen = vec![false; n];
        let mut row_line = vec![0usize; n];
        let mut cpu_aff: Vec<Option<String>> = vec![None; n];
        let mut numa: Vec<Option<u32>> = vec![None; n];
        let mut nic_names: Vec<(String, String)> = Vec::new();
        let mut in_nic_legend = false;
        for (li, line) in lines.iter().enumerate().skip(hl) {
            let ln = li + 1;
            let t: Vec<&str> = line.split_whitespace().collect();
            let Some(&first) = t.first() else { continue };
            if first == "NIC" && t.get(1) == Some(&"Legend:") {
                in_nic_legend = true;
                continue;
            }
            if in_nic_legend {
                if let Some(k) = first.strip_suffix(':') {
                    if let Some(v) = t.get(1) {
                        nic_names.push((k.to_string(), v.to_string()));
                    }
                }
                continue;
            }
            let Some(r) = cols.iter().position(|c| c == first) else {
                continue;
            };
            if seen[r] {
                return Err(terr(ln, format!("row {first} appears twice")));
            }
            seen[r] = true;
            row_line[r] = ln;
            if t.len() < 1 + n {
                return Err(terr(
                    ln,
                    format!("row {first} has {} entries; expected {n}", t.len() - 1),
                ));
            }
            for c in 0..n {
                let v = t[1 + c];
                if c == r {
                    if v != "X" {
                        return Err(terr(ln, format!("expected X on the diagonal, found '{v}'")));
                    }
                    continue;
                }
                rel[r][c] = Some(PathClass::parse(v).ok_or_else(|| {
                    terr(
                        ln,
                        format!(
                            "unknown relation '{v}' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)"
                        ),
                    )
                })?);
            }
            let rest = &t[1 + n..];
            for (x, val) in extras.iter().zip(rest) {
                match *x {
                    "cpu" if *val != "N/A" => cpu_aff[r] = Some((*val).to_string()),
                    "numa" if *val != "N/A" => {
                        numa[r] = Some(val.parse().map_err(|_| {
                            terr(ln, format!("NUMA Affinity '{val}' is not a number"))
                        })?)
                    }
                    _ => {}
                }
            }
        }
        if let Some(m) = seen.iter().position(|s| !s) {
            return Err(terr(0, format!("no row for {}", cols[m])));
        }
        for i in 0..n {
            for j in 0..n {
                if i != j && rel[i][j] != rel[j][i] {
                    return Err(terr(
                        row_line[i],
                        format!(
                            "{} to {} is {} but {} to {} is {}",
                            cols[i],
                            cols[j],
                            rel[i][j].map_or("?".into(), |x| x.label()),
                            cols[j],
                            cols[i],
                            rel[j][i].map_or("?".into(), |x| x.label())
                        ),
                    ));
                }
            }
        }
        // Which columns are GPUs and NICs, in order.
        let gpu_cols: Vec<usize> = (0..n).filter(|&c| cols[c].starts_with("GPU")).collect();
        let nic_cols: Vec<usize> = (0..n).filter(|&c| !cols[c].starts_with("GPU")).collect();
        for (k, &c) in gpu_cols.iter().enumerate() {
            if cols[c] != format!("GPU{k}") {
                return Err(terr(hl, format!("expected GPU{k}, found {}", cols[c])));
            }
        }
        // Grouping, coarsest first: NUMA nodes (split by SYS), host bridges
        // (split by NODE), PXB groups (split by PHB), PIX groups (split by PXB).
        let all: Vec<usize> = (0..n).collect();
        let numa_groups = group(&all, &rel, 3, &numa);
        let mut b = Builder::new();
        let mut cpus = Vec::new();
        let none: Vec<Option<u32>> = vec![None; n];
        for (s, ng) in numa_groups.iter().enumerate() {
            let cpu = b.cpu(s as u16);
            if let Some(&prev) = cpus.last() {
                b.smp(prev, cpu);
            }
            cpus.push(cpu);
            for hg in group(ng, &rel, 2, &none) {
                let hbv = b.host_bridge(cpu);
                let pxbs = group(&hg, &rel, 1, &none);
                for pg in pxbs {
                    let pixes = group(&pg, &rel, 0, &none);
                    let multi = pixes.len() > 1;
                    let upper = if multi {
                        Some(b.switch(hbv, pcie_gen))
                    } else {
                        None
                    };
                    for px in pixes {
                        let parent = match (upper, px.len() > 1 || multi) {
                            (Some(u), _) => b.switch(u, pcie_gen),
                            (None, true) => b.switch(hbv, pcie_gen),
                            (None, false) => hbv,
                        };
                        for d in px {
                            if let Some(k) = gpu_cols.iter().position(|&c| c == d) {
                                b.gpu(parent, k as u8, pcie_gen);
                            } else if let Some(k) = nic_cols.iter().position(|&c| c == d) {
                                let name = nic_names
                                    .iter()
                                    .find(|(key, _)| *key == cols[d])
                                    .map_or(cols[d].clone(), |x| x.1.clone());
                                b.nic(parent, k as u8, &name, None, pcie_gen);
                            }
                        }
                    }
                }
            }
        }
        for (a, &ca) in gpu_cols.iter().enumerate() {
            for &cb in gpu_cols.iter().skip(a + 1) {
                if let Some(PathClass::Nv(l)) = rel[ca][cb] {
                    let (va, vb) = (
                        b.gpus[a],
                        b.gpus[gpu_cols.iter().position(|&x| x == cb).unwrap_or(0)],
                    );
                    if let (Some(va), Some(vb)) = (va, vb) {
                        b.nvlink(va, vb, l);
                    }
                }
            }
        }
        let mut t = b.finish("topo -m").map_err(|e| terr(0, e))?;
        for (k, &c) in gpu_cols.iter().enumerate() {
            t.cpu_affinity[k] = cpu_aff[c].clone();
            t.numa[k] = numa[c];
        }
        // Every relation must come back as read.
        let order: Vec<usize> = gpu_cols.iter().chain(&nic_cols).copied().collect();
        for (i, &ci) in order.iter().enumerate() {
            for (j, &cj) in order.iter().enumerate() {
                if i != j && Some(t.classify(i, j)) != rel[ci][cj] {
                    return Err(terr(
                        row_line[ci],
                        format!(
                            "the relations are inconsistent: no PCIe tree gives {} to {} = {}",
                            cols[ci],
                            cols[cj],
                            rel[ci][cj].map_or("?".into(), |x| x.label())
                        ),
                    ));
                }
            }
        }
        Ok(t)
    }

    /// From gres.conf: GPU `i` sits on socket `sockets[i]` (unknown: socket
    /// 0) and `links[i][j]` counts the NVLinks between GPUs i and j. Each
    /// GPU has its own PCIe Gen `pcie_gen` link to its socket's host bridge.
    pub fn from_links(
        nsockets: u16,
        sockets: &[Option<u16>],
        links: Option<&[Vec<u8>]>,
        pcie_gen: u8,
    ) -> Topology {
        let mut b = Builder::new();
        let ns = nsockets.max(1);
        let mut hbs = Vec::new();
        let mut prev = None;
        for s in 0..ns {
            let c = b.cpu(s);
            if let Some(p) = prev {
                b.smp(p, c);
            }
            prev = Some(c);
            hbs.push(b.host_bridge(c));
        }
        let mut v = Vec::new();
        for (i, s) in sockets.iter().enumerate() {
            let s = usize::from(s.unwrap_or(0).min(ns - 1));
            v.push(b.gpu(hbs[s], i as u8, pcie_gen));
        }
        if let Some(l) = links {
            for i in 0..v.len() {
                for j in i + 1..v.len() {
                    let c = l.get(i).and_then(|r| r.get(j)).copied().unwrap_or(0);
                    if c > 0 {
                        b.nvlink(v[i], v[j], c);
                    }
                }
            }
        }
        let mut t = b.finish("gres.conf").unwrap_or_else(|_| Topology::empty());
        for (i, s) in sockets.iter().enumerate() {
            t.numa[i] = s.map(u32::from);
        }
        if sockets.iter().all(Option::is_none) {
            t.numa.iter_mut().for_each(|x| *x = None);
        }
        t
    }

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

fn is_device_name(t: &str) -> bool {
    let num = |p: &str| {
        t.strip_prefix(p)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|c| c.is_ascii_digit()))
    };
    num("GPU") || num("NIC") || num("mlx5_")
}

fn binom(n: usize, k: usize) -> u64 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u64 = 1;
    for i in 0..k {
        r = r.saturating_mul((n - i) as u64) / (i as u64 + 1);
    }
    r
}

/// Splits `items` into groups at PCIe distance rank `level`: pairs with a
/// rank ≤ `level` are together, pairs with a larger rank apart; pairs with
/// no PCIe information (NVLink) join whatever group admits them. `key`
/// (NUMA ids) keeps different known keys apart and equal keys together.
fn group(
    items: &[usize],
    rel: &[Vec<Option<PathClass>>],
    level: u8,
    key: &[Option<u32>],
) -> Vec<Vec<usize>> {
    let mut comp: Vec<usize> = (0..items.len()).collect();
    fn find(c: &mut [usize], mut x: usize) -> usize {
        while c[x] != x {
            c[x] = c[c[x]];
            x = c[x];
        }
        x
    }
    for a in 0..items.len() {
        for b in a + 1..items.len() {
            let same_key = key[items[a]].is_some() && key[items[a]] == key[items[b]];
            let near = rel[items[a]][items[b]]
                .and_then(PathClass::pcie_rank)
                .is_some_and(|r| r <= level);
            if near || same_key {
                let (x, y) = (find(&mut comp, a), find(&mut comp, b));
                comp[y.max(x)] = y.min(x);
            }
        }
    }
    let apart = |ga: &[usize], gb: &[usize]| {
        ga.iter().any(|&a| {
            gb.iter().any(|&b| {
                let far = rel[items[a]][items[b]]
                    .and_then(PathClass::pcie_rank)
                    .is_some_and(|r| r > level);
                let keys = matches!((key[items[a]], key[items[b]]), (Some(x), Some(y)) if x != y);
                far || keys
            })
        })
    };
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for a in 0..items.len() {
        let r = find(&mut comp, a);
        if r == a {
            groups.push(
                (0..items.len())
                    .filter(|&x| find(&mut comp, x) == a)
                    .collect(),
            );
        }
    }
    // Merge groups nothing keeps apart, in order.
    let mut merged: Vec<Vec<usize>> = Vec::new();
    for g in groups {
        match merged.iter_mut().find(|m| !apart(m, &g)) {
            Some(m) => m.extend(g),
            None => merged.push(g),
        }
    }
    merged
        .into_iter()
        .map(|mut g| {
            g.sort_unstable();
            g.into_iter().map(|i| items[i]).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
            ("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tPIX\tPIX\nGPU1\tPIX\t X \tSYS\nGPU2\tPIX\tSYS\t X\n", 3),
        ] {
            let e = Topology::from_topo_m(text, 4).expect_err(text);
            assert_eq!(e.line, line, "{text}: {e}");
        }
    }
}
