//! Communication cost of a placement: how long an all-reduce takes on the
//! GPUs a job got, and how much that stretches the job's run time.
//!
//! With `n` GPUs on `m` nodes (`k_i` on node i) and `B` bytes:
//!
//! * ring: `T = 2(n−1)/n · B / b + 2(n−1)·α`, where `b` is the smallest
//!   bandwidth along the ring — each node's intra-node ring
//!   ([`crate::topology::Topology::ring`]) and each hop between consecutive
//!   nodes — and `α` the slowest hop's latency;
//! * hierarchical: an intra-node stage `max_i 2(k_i−1)/k_i · B / b_i` plus
//!   an inter-node stage `2(m−1)/m · B / b_net` (each GPU all-reduces its
//!   `B/k` shard across nodes over its own rail, in parallel).
//!
//! A hop between nodes runs at `min(node a, node b) × leaf factor`: a
//! node's rate is the line rate of the NICs nearest the job's GPUs (IB
//! verbs) or of the one interface NCCL's socket transport uses; the leaf
//! factor is `1/oversubscription` across leaves (see [`crate::fabric`]).
//!
//! The ideal placement of the same shape (the same GPUs per node) puts
//! every node's GPUs on its widest ring and reaches the most NIC bandwidth,
//! all nodes under one leaf. docs/topology.md works examples.

use crate::cluster::Cluster;
use crate::fabric::{Fabric, Transport};
use crate::job::RunTime;
use crate::state::{gpu_indices, Allocation};

/// All-reduce algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    #[default]
    Ring,
    Hierarchical,
}

impl Algorithm {
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::Hierarchical => "hierarchical",
        }
    }
}

/// What a job's communication looks like.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CommWork {
    /// `steps` training steps, each `compute_s` seconds of computation
    /// followed by an all-reduce of `bytes`. The job's run time is
    /// `steps × (compute_s + all-reduce time)`.
    Steps {
        steps: u64,
        compute_s: f64,
        bytes: f64,
    },
    /// The job's run time was measured on the ideal placement, where
    /// communication took `fraction` of it; elsewhere that part scales with
    /// the all-reduce time of `bytes` (default 1 GB; only the ratio matters
    /// apart from latency).
    Fraction { fraction: f64, bytes: f64 },
}

/// A job's communication profile.
#[derive(Debug, Clone, PartialEq)]
pub struct CommProfile {
    pub work: CommWork,
    pub algorithm: Algorithm,
    /// `NCCL_IB_DISABLE` for this job (else the fabric's).
    pub nccl_ib_disable: Option<bool>,
    /// `NCCL_SOCKET_IFNAME` for this job (else the fabric's).
    pub nccl_socket_ifname: Option<String>,
}

impl CommProfile {
    pub fn bytes(&self) -> f64 {
        match self.work {
            CommWork::Steps { bytes, .. } | CommWork::Fraction { bytes, .. } => bytes,
        }
    }
    /// The run time a `steps` job has with no communication at all (its
    /// nominal run time, which placement stretches).
    pub fn compute_secs(&self) -> Option<u64> {
        match self.work {
            CommWork::Steps {
                steps, compute_s, ..
            } => Some(ceil_secs(steps as f64 * compute_s)),
            CommWork::Fraction { .. } => None,
        }
    }
}

/// Bytes all-reduced when a job declares no profile (for reports).
pub const NOMINAL_BYTES: f64 = 1e9;

/// The cost of one placement.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementCost {
    pub gpus: u32,
    pub nodes: u32,
    /// Distinct (node, CPU socket) pairs the job's GPUs hang off.
    pub sockets: u32,
    /// Distinct leaf switches.
    pub leaves: u32,
    /// The narrowest intra-node ring, GB/s (`None` with one GPU per node).
    pub intra_gbs: Option<f64>,
    /// The narrowest hop between nodes, GB/s (`None` on one node).
    pub inter_gbs: Option<f64>,
    /// The smallest bandwidth along the ring, GB/s (`None` for one GPU).
    pub bottleneck_gbs: Option<f64>,
    /// The same for the ideal placement of this shape.
    pub ideal_bottleneck_gbs: Option<f64>,
    /// Seconds one all-reduce of the profile's bytes takes here, and ideally.
    pub allreduce_s: f64,
    pub ideal_allreduce_s: f64,
    /// NCCL's transport between nodes (`ib`, `socket:eth0`), or the
    /// intra-node path (`nvlink`, `pcie`) on one node.
    pub transport: String,
}

impl PlacementCost {
    /// All-reduce time here over the ideal placement's (1 when nothing is communicated).
    pub fn allreduce_slowdown(&self) -> f64 {
        if self.ideal_allreduce_s > 0.0 {
            (self.allreduce_s / self.ideal_allreduce_s).max(1.0)
        } else {
            1.0
        }
    }
    /// Whether the placement is as good as the ideal one (within rounding).
    pub fn ideal(&self) -> bool {
        self.allreduce_s <= self.ideal_allreduce_s * (1.0 + 1e-9) + 1e-12
    }
}

/// One node's share of a job.
struct Part {
    node: usize,
    gpus: Vec<usize>,
    pcie_only: bool,
}

fn parts(cluster: &Cluster, alloc: &Allocation) -> Vec<Part> {
    alloc
        .nodes
        .iter()
        .filter(|na| na.gpus != 0)
        .map(|na| {
            let node = cluster.node(na.node);
            let mut gpus: Vec<usize> = Vec::new();
            let mut mig = false;
            for g in gpu_indices(na.gpus) {
                if let Some(d) = node.gpus.get(usize::from(g)) {
                    mig |= d.mig.is_some();
                    gpus.push(usize::from(d.phys));
                }
            }
            gpus.sort_unstable();
            gpus.dedup();
            Part {
                node: na.node.idx(),
                gpus,
                pcie_only: mig,
            }
        })
        .collect()
}

/// Per-node numbers the formulas need.
#[derive(Clone, Copy)]
struct NodeCost {
    k: usize,
    ring_gbs: f64,
    ring_lat: f64,
    /// Bandwidth this node gets onto the network, GB/s.
    net_gbs: f64,
}

fn net_gbs(_fabric: &Fabric, transport: &Transport, nic_gbps: f64) -> f64 {
    match transport {
        Transport::Verbs => nic_gbps / 8.0,
        Transport::Socket(i) => i.gbps / 8.0,
        Transport::NoInterface(_) => 0.0,
    }
    .max(0.0)
}

/// Seconds for an all-reduce over the nodes `costs` (in ring order) with
/// `hop(a, b)` the bandwidth factor between nodes a and b.
fn allreduce(
    costs: &[(usize, NodeCost)],
    bytes: f64,
    algorithm: Algorithm,
    hop: &dyn Fn(usize, usize) -> f64,
    net_lat_us: f64,
) -> (f64, Option<f64>, Option<f64>, Option<f64>) {
    let n: usize = costs.iter().map(|c| c.1.k).sum();
    let m = costs.len();
    if n < 2 {
        return (0.0, None, None, None);
    }
    let intra = costs
        .iter()
        .filter(|c| c.1.k >= 2)
        .map(|c| c.1.ring_gbs)
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.min(x))));
    let inter = if m >= 2 {
        let mut b = f64::INFINITY;
        for i in 0..m {
            let (a, c) = (costs[i], costs[(i + 1) % m]);
            b = b.min(a.1.net_gbs.min(c.1.net_gbs) * hop(a.0, c.0));
        }
        Some(b)
    } else {
        None
    };
    let bottleneck = match (intra, inter) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let lat_intra = costs
        .iter()
        .filter(|c| c.1.k >= 2)
        .map(|c| c.1.ring_lat)
        .fold(0.0, f64::max);
    let gb = |bw: f64| {
        if bw > 0.0 {
            bytes / (bw * 1e9)
        } else {
            f64::INFINITY
        }
    };
    let t = match algorithm {
        Algorithm::Ring => {
            let nf = n as f64;
            let lat = if m >= 2 {
                lat_intra.max(net_lat_us)
            } else {
                lat_intra
            };
            2.0 * (nf - 1.0) / nf * gb(bottleneck.unwrap_or(f64::INFINITY))
                + 2.0 * (nf - 1.0) * lat * 1e-6
        }
        Algorithm::Hierarchical => {
            let stage1 = costs
                .iter()
                .filter(|c| c.1.k >= 2)
                .map(|c| {
                    let k = c.1.k as f64;
                    2.0 * (k - 1.0) / k * gb(c.1.ring_gbs) + 2.0 * (k - 1.0) * c.1.ring_lat * 1e-6
                })
                .fold(0.0, f64::max);
            let stage2 = match inter {
                Some(b) => {
                    let mf = m as f64;
                    2.0 * (mf - 1.0) / mf * gb(b) + 2.0 * (mf - 1.0) * net_lat_us * 1e-6
                }
                None => 0.0,
            };
            stage1 + stage2
        }
    };
    (t, intra, inter, bottleneck)
}

/// The cost of `alloc` for a job with profile `profile` (`None`: a
/// nominal ring all-reduce of [`NOMINAL_BYTES`] with the fabric's NCCL settings).
pub fn placement_cost(
    cluster: &Cluster,
    alloc: &Allocation,
    profile: Option<&CommProfile>,
) -> PlacementCost {
    let fabric = cluster.fabric();
    let transport = fabric.transport(
        profile.and_then(|p| p.nccl_ib_disable),
        profile.and_then(|p| p.nccl_socket_ifname.as_deref()),
    );
    let bytes = profile.map_or(NOMINAL_BYTES, CommProfile::bytes);
    let algorithm = profile.map_or(Algorithm::Ring, |p| p.algorithm);
    let ps = parts(cluster, alloc);
    let net_lat = match transport {
        Transport::Verbs => fabric.latency_us,
        _ => fabric.socket_latency_us,
    };
    let on_fabric = match &transport {
        Transport::Verbs => true,
        Transport::Socket(i) => i.on_fabric,
        Transport::NoInterface(_) => true,
    };
    let nic_rate = |node: usize, gpus: &[usize], ideal: bool| -> f64 {
        let t = cluster.topology(crate::NodeId::from_idx(node));
        if t.nic_count() == 0 {
            return f64::from(fabric.rails) * fabric.rail_gbps;
        }
        if ideal {
            let best = t.best_nic_gbps(gpus.len());
            // NICs of unknown rate run at the fabric's rail rate.
            let unknown = (0..t.nic_count())
                .filter(|&i| t.nic_gbps(i).is_none())
                .count();
            if unknown > 0 {
                return (gpus.len().min(t.nic_count()) as f64) * fabric.rail_gbps;
            }
            return best;
        }
        t.nics_for(gpus)
            .iter()
            .map(|&i| t.nic_gbps(i).unwrap_or(fabric.rail_gbps))
            .sum()
    };
    let mut actual: Vec<(usize, NodeCost)> = Vec::new();
    let mut ideal: Vec<(usize, NodeCost)> = Vec::new();
    let mut sockets: Vec<(usize, Option<u16>)> = Vec::new();
    let mut leaves: Vec<u32> = Vec::new();
    let mut nvlink_only = true;
    for p in &ps {
        let t = cluster.topology(crate::NodeId::from_idx(p.node));
        let r = t.ring(&p.gpus, p.pcie_only);
        let best = if p.pcie_only {
            t.best_subset(crate::state::full_mask(t.gpu_count()), p.gpus.len(), true)
                .map_or(r, |b| b.0)
        } else {
            t.best_ring(p.gpus.len())
        };
        for &g in &p.gpus {
            let s = (p.node, t.gpu_socket(g));
            if !sockets.contains(&s) {
                sockets.push(s);
            }
        }
        if p.gpus.len() >= 2 {
            for (i, &a) in p.gpus.iter().enumerate() {
                for &b in &p.gpus[i + 1..] {
                    if !p.pcie_only
                        && !matches!(t.classify(a, b), crate::topology::PathClass::Nv(_))
                    {
                        nvlink_only = false;
                    }
                }
            }
            if p.pcie_only {
                nvlink_only = false;
            }
        }
        let leaf = fabric.leaf(p.node);
        if !leaves.contains(&leaf) {
            leaves.push(leaf);
        }
        let k = p.gpus.len();
        actual.push((
            p.node,
            NodeCost {
                k,
                ring_gbs: r.gbs,
                ring_lat: r.latency_us,
                net_gbs: net_gbs(fabric, &transport, nic_rate(p.node, &p.gpus, false)),
            },
        ));
        ideal.push((
            p.node,
            NodeCost {
                k,
                ring_gbs: best.gbs.max(r.gbs),
                ring_lat: best.latency_us.min(r.latency_us),
                net_gbs: net_gbs(fabric, &transport, nic_rate(p.node, &p.gpus, true)).max(net_gbs(
                    fabric,
                    &transport,
                    nic_rate(p.node, &p.gpus, false),
                )),
            },
        ));
    }
    let hop = |a: usize, b: usize| -> f64 {
        if on_fabric {
            fabric.leaf_factor(a, b)
        } else {
            1.0
        }
    };
    let (t, intra, inter, bottleneck) = allreduce(&actual, bytes, algorithm, &hop, net_lat);
    let (ti, _, _, ib) = allreduce(&ideal, bytes, algorithm, &|_, _| 1.0, net_lat);
    let gpus: u32 = ps.iter().map(|p| p.gpus.len() as u32).sum();
    let transport_label = if ps.len() >= 2 {
        transport.label()
    } else if gpus >= 2 && nvlink_only {
        "nvlink".into()
    } else if gpus >= 2 {
        "pcie".into()
    } else {
        "none".into()
    };
    PlacementCost {
        gpus,
        nodes: ps.len() as u32,
        sockets: sockets.len() as u32,
        leaves: leaves.len() as u32,
        intra_gbs: intra,
        inter_gbs: inter,
        bottleneck_gbs: bottleneck,
        ideal_bottleneck_gbs: ib,
        allreduce_s: t,
        ideal_allreduce_s: ti.min(t),
        transport: transport_label,
    }
}

fn ceil_secs(x: f64) -> u64 {
    if !x.is_finite() || x >= 1e15 {
        return u64::MAX / 4;
    }
    x.max(0.0).ceil() as u64
}

/// The run time of a job with `profile` on a placement of cost `cost`,
/// given `work`: the seconds the engine would otherwise run it (its run time
/// less saved work; `None` runs to the limit) and `nominal`, the job's
/// nominal run time (for a `steps` profile, its pure compute time).
pub fn scale_work(
    profile: &CommProfile,
    cost: &PlacementCost,
    work: Option<u64>,
    nominal: RunTime,
) -> Option<u64> {
    let w = work?;
    match profile.work {
        CommWork::Fraction { fraction, .. } => {
            if cost.ideal() || fraction <= 0.0 {
                return Some(w);
            }
            let f = fraction.min(1.0);
            Some(ceil_secs(
                w as f64 * ((1.0 - f) + f * cost.allreduce_slowdown()),
            ))
        }
        CommWork::Steps {
            steps, compute_s, ..
        } => {
            let total = steps as f64 * (compute_s + cost.allreduce_s);
            match nominal {
                RunTime::Secs(d) if d == w => Some(ceil_secs(total)),
                RunTime::Secs(d) if d > 0 => Some(ceil_secs(w as f64 * total / d as f64)),
                _ => Some(ceil_secs(total)),
            }
        }
    }
}

/// The run time a job with `profile` has on the ideal placement of `cost`'s shape.
pub fn ideal_work(profile: &CommProfile, cost: &PlacementCost, nominal: RunTime) -> Option<u64> {
    let ideal = PlacementCost {
        allreduce_s: cost.ideal_allreduce_s,
        ..cost.clone()
    };
    let w = match nominal {
        RunTime::Secs(d) => d,
        RunTime::ToLimit => return None,
    };
    scale_work(profile, &ideal, Some(w), nominal)
}
