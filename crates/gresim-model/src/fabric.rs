//! The network between nodes: InfiniBand or RoCE rails (one per NIC), or
//! plain Ethernet; leaf switches with oversubscribed uplinks to the spine;
//! and the NCCL settings that decide whether jobs use it.
//!
//! NCCL's transport ([`Fabric::transport`]) follows NCCL's documentation:
//! with `NCCL_IB_DISABLE=1` (or no verbs-capable fabric) NCCL falls back to
//! IP sockets over the interface `NCCL_SOCKET_IFNAME` selects (by prefix,
//! `=name` exact, `^` to exclude; by default `ib*` interfaces first). With
//! IB verbs in use, `NCCL_SOCKET_IFNAME` only carries the bootstrap, so it
//! does not change bandwidth.

/// The kind of network between nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FabricKind {
    #[default]
    InfiniBand,
    Roce,
    Ethernet,
}

impl FabricKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FabricKind::InfiniBand => "infiniband",
            FabricKind::Roce => "roce",
            FabricKind::Ethernet => "ethernet",
        }
    }
    /// Whether NCCL's IB transport (verbs) can run over it.
    pub fn verbs(self) -> bool {
        matches!(self, FabricKind::InfiniBand | FabricKind::Roce)
    }
}

/// An IP interface on every node, for NCCL's socket transport.
#[derive(Debug, Clone, PartialEq)]
pub struct Interface {
    pub name: String,
    /// Line rate, Gb/s.
    pub gbps: f64,
    /// Whether it runs over the fabric (IPoIB `ib0`, a RoCE port) and so
    /// shares the leaf uplinks; a separate management Ethernet does not.
    pub on_fabric: bool,
}

/// The inter-node network.
#[derive(Debug, Clone, PartialEq)]
pub struct Fabric {
    pub kind: FabricKind,
    /// Leaf switch names.
    pub leaves: Vec<String>,
    /// Each node's leaf (index into `leaves`), in node-table order.
    pub node_leaf: Vec<u32>,
    /// Leaf downlink : uplink bandwidth ratio (1 = non-blocking).
    pub oversubscription: f64,
    /// Rails per node for nodes whose topology lists no NICs.
    pub rails: u32,
    /// Line rate of those rails (and of NICs of unknown rate), Gb/s.
    pub rail_gbps: f64,
    /// IP interfaces, in the order NCCL would consider them.
    pub interfaces: Vec<Interface>,
    /// `NCCL_IB_DISABLE=1` for every job (a job's `comm` may override).
    pub nccl_ib_disable: bool,
    /// `NCCL_SOCKET_IFNAME` for every job (a job's `comm` may override).
    pub nccl_socket_ifname: Option<String>,
    /// Latency of one trip through the network, µs.
    pub latency_us: f64,
    /// Latency of NCCL's socket transport, µs.
    pub socket_latency_us: f64,
}

impl Default for Fabric {
    /// One non-blocking InfiniBand leaf, one EDR 100 Gb/s rail per node
    /// without NICs of its own, `ib0` (IPoIB over that rail) and a 10 Gb/s
    /// management `eth0`.
    fn default() -> Self {
        Fabric {
            kind: FabricKind::InfiniBand,
            leaves: vec!["leaf0".into()],
            node_leaf: Vec::new(),
            oversubscription: 1.0,
            rails: 1,
            rail_gbps: 100.0,
            interfaces: vec![
                Interface {
                    name: "ib0".into(),
                    gbps: 100.0,
                    on_fabric: true,
                },
                Interface {
                    name: "eth0".into(),
                    gbps: 10.0,
                    on_fabric: false,
                },
            ],
            nccl_ib_disable: false,
            nccl_socket_ifname: None,
            latency_us: 5.0,
            socket_latency_us: 50.0,
        }
    }
}

/// How NCCL moves data between nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// IB verbs (InfiniBand or RoCE) over the NICs near the job's GPUs.
    Verbs,
    /// IP sockets over one interface.
    Socket(Interface),
    /// `NCCL_SOCKET_IFNAME` matches no interface: NCCL cannot connect.
    NoInterface(String),
}

impl Transport {
    pub fn label(&self) -> String {
        match self {
            Transport::Verbs => "ib".into(),
            Transport::Socket(i) => format!("socket:{}", i.name),
            Transport::NoInterface(s) => format!("no-interface:{s}"),
        }
    }
}

impl Fabric {
    /// The leaf of node `idx`.
    pub fn leaf(&self, idx: usize) -> u32 {
        self.node_leaf.get(idx).copied().unwrap_or(0)
    }

    /// The bandwidth factor between two nodes: 1 under one leaf, 1/oversubscription across.
    pub fn leaf_factor(&self, a: usize, b: usize) -> f64 {
        if self.leaf(a) == self.leaf(b) || self.oversubscription <= 1.0 {
            1.0
        } else {
            1.0 / self.oversubscription
        }
    }

    /// NCCL's transport given the job's `NCCL_IB_DISABLE` and `NCCL_SOCKET_IFNAME`.
    pub fn transport(&self, ib_disable: Option<bool>, ifname: Option<&str>) -> Transport {
        let disable = ib_disable.unwrap_or(self.nccl_ib_disable);
        if self.kind.verbs() && !disable {
            return Transport::Verbs;
        }
        let spec = ifname.or(self.nccl_socket_ifname.as_deref());
        match select_interface(&self.interfaces, spec) {
            Some(i) => Transport::Socket(i.clone()),
            None => Transport::NoInterface(spec.unwrap_or("").to_string()),
        }
    }
}

/// NCCL's interface choice: `spec` is a comma list of prefixes, `=` for
/// exact names, a leading `^` to exclude; without a spec, `ib*` first, then
/// anything but `lo` and `docker*`.
pub fn select_interface<'a>(ifs: &'a [Interface], spec: Option<&str>) -> Option<&'a Interface> {
    let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty()) else {
        return ifs.iter().find(|i| i.name.starts_with("ib")).or_else(|| {
            ifs.iter()
                .find(|i| i.name != "lo" && !i.name.starts_with("docker"))
        });
    };
    let (exclude, list) = match spec.strip_prefix('^') {
        Some(r) => (true, r),
        None => (false, spec),
    };
    let (exact, list) = match list.strip_prefix('=') {
        Some(r) => (true, r),
        None => (false, list),
    };
    let matches = |name: &str| {
        list.split(',').map(str::trim).any(|p| {
            let p = p.strip_prefix('=').unwrap_or(p);
            if exact {
                name == p
            } else {
                name.starts_with(p)
            }
        })
    };
    ifs.iter().find(|i| matches(&i.name) != exclude)
}

#[cfg(test)]
mod tests;
