//! Routes between devices (the widest path that never passes through a GPU
//! or a NIC), rings and their shared-link bandwidth, the best GPU subsets
//! and NICs for a job, and the `topo -m` class of a pair.

use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

/// NVLink bandwidth per link (both directions together): 600 GB/s over the
/// A100's 12 links, 900 GB/s over the H100's 18 (NVIDIA A100 and H100
/// datasheets). `topo -m`'s `NV12` is 12 links.
use super::*;

impl Topology {
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

    pub(super) fn derive(&mut self) {
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
