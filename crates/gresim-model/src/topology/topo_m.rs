//! `nvidia-smi topo -m` text: written from a topology, and read back into
//! one (devices, the matrix, NUMA affinity, and the PCIe tree the classes
//! imply); gres.conf `Links=` as a topology.

/// NVLink bandwidth per link (both directions together): 600 GB/s over the
/// A100's 12 links, 900 GB/s over the H100's 18 (NVIDIA A100 and H100
/// datasheets). `topo -m`'s `NV12` is 12 links.
use super::*;

impl Topology {
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
}

fn is_device_name(t: &str) -> bool {
    let num = |p: &str| {
        t.strip_prefix(p)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|c| c.is_ascii_digit()))
    };
    num("GPU") || num("NIC") || num("mlx5_")
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
