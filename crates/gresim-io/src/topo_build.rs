//! The scenario's `topology` (per node template), `fabric` (cluster) and
//! `comm` (per job) sections, resolved into the model (docs/topology.md).

use std::path::Path;
use std::sync::Arc;

use gresim_model::comm::{Algorithm, CommProfile, CommWork};
use gresim_model::fabric::{select_interface, Fabric, FabricKind, Interface};
use gresim_model::hostlist;
use gresim_model::topology::{Topology, PRESETS};
use gresim_model::{Cluster, GpuDevice};

use crate::error::InputError;
use crate::spec::{ClusterDef, CommDef, FabricDef, NumOrStr, TopologyConfDef, TopologyDef};

/// Resolves a node group's topology and checks it has the node's GPUs.
pub fn resolve_topology(
    file: &Path,
    path: &str,
    def: &TopologyDef,
    gpus: &[GpuDevice],
    rail_gbps: Option<f64>,
) -> Result<Arc<Topology>, InputError> {
    let err = |p: &str, m: String| InputError::at(file, format!("{path}{p}"), m);
    let (preset, topo_m, gen, nic) = match def {
        TopologyDef::Preset(p) => (Some(p.clone()), None, None, None),
        TopologyDef::Spec(s) => (s.preset.clone(), s.topo_m.clone(), s.pcie_gen, s.nic_gbps),
    };
    let mut t = match (preset, topo_m) {
        (Some(p), None) => Topology::preset(&p).ok_or_else(|| {
            err(
                "",
                format!(
                    "unknown topology preset '{p}'; expected one of {}",
                    PRESETS.join(", ")
                ),
            )
        })?,
        (None, Some(f)) => {
            let dir = file.parent().unwrap_or(Path::new("."));
            let full = dir.join(&f);
            let text = std::fs::read_to_string(&full)
                .map_err(|e| err(".topo_m", format!("cannot read {}: {e}", full.display())))?;
            let g = gen.unwrap_or(4);
            if !(1..=6).contains(&g) {
                return Err(err(
                    ".pcie_gen",
                    "expected a PCIe generation from 1 to 6".into(),
                ));
            }
            Topology::from_topo_m(&text, g)
                .map_err(|e| InputError::at(&full, format!("line {}", e.line), e.msg))?
        }
        _ => return Err(err("", "expected exactly one of preset and topo_m".into())),
    };
    if let Some(r) = nic.or(rail_gbps) {
        if !(r.is_finite() && r > 0.0) {
            return Err(err(".nic_gbps", "expected a positive rate".into()));
        }
        set_unknown_nic_rates(&mut t, r);
    }
    let phys = gpus
        .iter()
        .map(|d| usize::from(d.phys) + 1)
        .max()
        .unwrap_or(0);
    if t.gpu_count() != phys {
        return Err(err(
            "",
            format!(
                "the topology '{}' has {} GPUs but the node has {phys}",
                t.name,
                t.gpu_count()
            ),
        ));
    }
    Ok(Arc::new(t))
}

/// Gives NICs of unknown line rate the rate `gbps`.
fn set_unknown_nic_rates(t: &mut Topology, gbps: f64) {
    let mut changed = false;
    for w in t.graph.node_weights_mut() {
        if let gresim_model::topology::Vertex::Nic { gbps: g @ None, .. } = w {
            *g = Some(gbps);
            changed = true;
        }
    }
    if changed {
        // Rebuild the derived tables through a round trip of the builder.
        t.refresh();
    }
}

/// Applies the scenario's `topology_conf` and `topology_plugin` (over what
/// slurm.conf gave), and gives the fabric the tree's leaf switches (under
/// topology/block, its base blocks).
pub fn apply_topology(
    file: &Path,
    def: &ClusterDef,
    cluster: &mut Cluster,
    warnings: &mut Vec<String>,
) -> Result<(), InputError> {
    let mut w = Vec::new();
    let mut tree = cluster.switches().cloned();
    let mut plugin = cluster.topology_plugin();
    if let Some(p) = &def.topology_plugin {
        plugin = gresim_slurm::topology_conf::plugin(p)
            .map_err(|m| InputError::at(file, "cluster.topology_plugin", m))?;
    }
    match &def.topology_conf {
        Some(TopologyConfDef::File(f)) => {
            let full = file.parent().unwrap_or(Path::new(".")).join(f);
            tree = Some(gresim_slurm::topology_conf::read(&full, cluster, &mut w)?);
        }
        Some(TopologyConfDef::Lines(lines)) => {
            let name = file.with_file_name(format!(
                "{}#cluster.topology_conf",
                file.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            ));
            tree = Some(gresim_slurm::topology_conf::parse(
                &name,
                &lines.join("\n"),
                cluster,
                &mut w,
            )?);
        }
        None => {}
    }
    warnings.extend(w.iter().map(ToString::to_string));
    let Some(t) = tree else {
        if plugin != gresim_model::switches::TopologyPlugin::None {
            return Err(InputError::at(
                file,
                "cluster.topology_plugin",
                "topology/tree and topology/block need a topology.conf (cluster.topology_conf, or one beside slurm_conf)",
            ));
        }
        return Ok(());
    };
    gresim_slurm::topology_conf::check_plugin(&t, plugin).map_err(|m| {
        let at = if def.topology_plugin.is_some() {
            "cluster.topology_plugin"
        } else {
            "cluster.topology_conf"
        };
        InputError::at(file, at, m)
    })?;
    if let Some(fd) = &def.fabric {
        if fd.leaves.is_some() || fd.nodes_per_leaf.is_some() {
            return Err(InputError::at(
                file,
                "cluster.fabric.leaves",
                "the leaf switches come from topology_conf; give them there, not in fabric",
            ));
        }
    }
    let mut f = cluster.fabric().clone();
    let leaves: Vec<usize> = t.leaves().collect();
    f.leaves = leaves.iter().map(|&l| t.switches[l].name.clone()).collect();
    // A node under no leaf gets a leaf of its own past the named ones.
    f.node_leaf = (0..cluster.nodes.len())
        .map(|v| match t.leaf_of(v) {
            Some(l) => leaves.iter().position(|&x| x == l).unwrap_or(0) as u32,
            None => leaves.len() as u32,
        })
        .collect();
    if !t.unreachable.is_empty() {
        f.leaves.push("(no leaf)".into());
    }
    cluster.set_fabric(f);
    cluster.set_switches(Some(t), plugin);
    Ok(())
}

/// Applies the scenario's `fabric` section, if any.
pub fn apply_fabric(
    file: &Path,
    def: &ClusterDef,
    cluster: &mut Cluster,
) -> Result<(), InputError> {
    if let Some(fd) = &def.fabric {
        let f = build_fabric(file, fd, cluster)?;
        cluster.set_fabric(f);
    }
    Ok(())
}

/// The fabric from its definition.
pub fn build_fabric(file: &Path, d: &FabricDef, cluster: &Cluster) -> Result<Fabric, InputError> {
    let err = |p: &str, m: String| InputError::at(file, format!("cluster.fabric.{p}"), m);
    let kind = match d.kind.as_deref() {
        None | Some("infiniband") | Some("ib") => FabricKind::InfiniBand,
        Some("roce") => FabricKind::Roce,
        Some("ethernet") => FabricKind::Ethernet,
        Some(o) => {
            return Err(err(
                "kind",
                format!("unknown fabric kind '{o}'; expected infiniband, roce or ethernet"),
            ))
        }
    };
    let mut f = Fabric {
        kind,
        ..Fabric::default()
    };
    let pos = |v: Option<f64>, name: &str, min: f64| -> Result<Option<f64>, InputError> {
        match v {
            Some(x) if !(x.is_finite() && x >= min) => {
                Err(err(name, format!("expected a number of at least {min}")))
            }
            o => Ok(o),
        }
    };
    if let Some(o) = pos(d.oversubscription, "oversubscription", 1.0)? {
        f.oversubscription = o;
    }
    if let Some(r) = pos(d.rail_gbps, "rail_gbps", 1e-9)? {
        f.rail_gbps = r;
    }
    if let Some(r) = d.rails {
        if r == 0 {
            return Err(err("rails", "expected at least 1 rail".into()));
        }
        f.rails = r;
    }
    if let Some(l) = pos(d.latency_us, "latency_us", 0.0)? {
        f.latency_us = l;
    }
    if let Some(l) = pos(d.socket_latency_us, "socket_latency_us", 0.0)? {
        f.socket_latency_us = l;
    }
    f.interfaces = match &d.interfaces {
        Some(m) => {
            let mut v = Vec::new();
            for (name, g) in m {
                if !(g.is_finite() && *g > 0.0) {
                    return Err(err(
                        &format!("interfaces.{name}"),
                        "expected a positive Gb/s".into(),
                    ));
                }
                v.push(Interface {
                    name: name.clone(),
                    gbps: *g,
                    on_fabric: on_fabric(name),
                });
            }
            v
        }
        None => vec![
            Interface {
                name: "ib0".into(),
                gbps: f.rail_gbps,
                on_fabric: true,
            },
            Interface {
                name: "eth0".into(),
                gbps: 10.0,
                on_fabric: false,
            },
        ],
    };
    f.nccl_ib_disable = d.nccl_ib_disable.unwrap_or(false);
    if let Some(s) = &d.nccl_socket_ifname {
        if select_interface(&f.interfaces, Some(s)).is_none() {
            return Err(err(
                "nccl_socket_ifname",
                format!("'{s}' matches none of the interfaces {}", names(&f)),
            ));
        }
        f.nccl_socket_ifname = Some(s.clone());
    }
    let n = cluster.nodes.len();
    match (&d.leaves, d.nodes_per_leaf) {
        (Some(_), Some(_)) => {
            return Err(err(
                "leaves",
                "give leaves or nodes_per_leaf, not both".into(),
            ))
        }
        (Some(m), None) => {
            let mut leaf: Vec<Option<u32>> = vec![None; n];
            for (li, (name, h)) in m.iter().enumerate() {
                let hosts = hostlist::expand(h).map_err(|e| {
                    err(
                        &format!("leaves.{name}"),
                        format!("bad hostlist '{h}': {e}"),
                    )
                })?;
                for host in hosts {
                    let id = cluster.node_id(&host).ok_or_else(|| {
                        err(
                            &format!("leaves.{name}"),
                            format!("node '{host}' is not in the cluster"),
                        )
                    })?;
                    if leaf[id.idx()].is_some() {
                        return Err(err(
                            &format!("leaves.{name}"),
                            format!("node '{host}' is under two leaves"),
                        ));
                    }
                    leaf[id.idx()] = Some(li as u32);
                }
                f.leaves.push(name.clone());
            }
            f.leaves.remove(0);
            if let Some(i) = leaf.iter().position(Option::is_none) {
                return Err(err(
                    "leaves",
                    format!("node '{}' is under no leaf", cluster.nodes[i].name),
                ));
            }
            f.node_leaf = leaf.into_iter().map(|l| l.unwrap_or(0)).collect();
        }
        (None, Some(k)) => {
            if k == 0 {
                return Err(err("nodes_per_leaf", "expected at least 1".into()));
            }
            f.node_leaf = (0..n).map(|i| (i / k as usize) as u32).collect();
            let count = n.div_ceil(k as usize).max(1);
            f.leaves = (0..count).map(|i| format!("leaf{i}")).collect();
        }
        (None, None) => f.node_leaf = vec![0; n],
    }
    Ok(f)
}

/// Interfaces named `eth*`/`eno*` are taken to be the management network,
/// outside the leaf/spine fabric; all others (`ib0`, RoCE ports) ride on it.
fn on_fabric(name: &str) -> bool {
    !(name.starts_with("eth") || name.starts_with("eno"))
}

fn names(f: &Fabric) -> String {
    f.interfaces
        .iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A byte count: a number, or a string with B, KB, MB, GB, TB (powers of
/// 1000) or KiB, MiB, GiB, TiB (powers of 1024).
pub fn parse_bytes(v: &NumOrStr) -> Result<f64, String> {
    let s = match v {
        NumOrStr::Num(n) => return Ok(*n as f64),
        NumOrStr::Str(s) => s.trim(),
    };
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let x: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count like 1.5GB or 512MiB"))?;
    let mult = match unit.trim() {
        "" | "B" => 1.0,
        "KB" | "K" => 1e3,
        "MB" | "M" => 1e6,
        "GB" | "G" => 1e9,
        "TB" | "T" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        u => {
            return Err(format!(
                "unknown unit '{u}' in '{s}'; expected B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"
            ))
        }
    };
    let v = x * mult;
    if !v.is_finite() {
        return Err(format!("'{s}' is too large"));
    }
    Ok(v)
}

/// A job's `comm` section. `has_run_time`: the job also gives `run_time`
/// (not allowed with `steps`, which defines it).
pub fn build_comm(
    file: &Path,
    path: &str,
    d: &CommDef,
    cluster: &Cluster,
    has_run_time: bool,
) -> Result<CommProfile, InputError> {
    let err = |p: &str, m: String| InputError::at(file, format!("{path}.{p}"), m);
    let bytes = d
        .bytes_per_step
        .as_ref()
        .map(|b| parse_bytes(b).map_err(|e| err("bytes_per_step", e)))
        .transpose()?;
    let work = match (d.steps, d.compute_per_step, d.fraction) {
        (Some(steps), Some(c), None) => {
            if !(c.is_finite() && c > 0.0) {
                return Err(err(
                    "compute_per_step",
                    "expected a positive number of seconds".into(),
                ));
            }
            if steps == 0 {
                return Err(err("steps", "expected at least 1 step".into()));
            }
            let Some(bytes) = bytes else {
                return Err(err("bytes_per_step", "steps need bytes_per_step".into()));
            };
            if has_run_time {
                return Err(err(
                    "steps",
                    "steps × compute_per_step defines the run time; leave run_time out".into(),
                ));
            }
            CommWork::Steps {
                steps,
                compute_s: c,
                bytes,
            }
        }
        (None, None, Some(f)) => {
            if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
                return Err(err("fraction", "expected a share from 0 to 1".into()));
            }
            CommWork::Fraction {
                fraction: f,
                bytes: bytes.unwrap_or(gresim_model::comm::NOMINAL_BYTES),
            }
        }
        _ => {
            return Err(err(
                "fraction",
                "expected steps with compute_per_step and bytes_per_step, or fraction".into(),
            ))
        }
    };
    let algorithm = match d.algorithm.as_deref() {
        None | Some("ring") => Algorithm::Ring,
        Some("hierarchical") | Some("tree") => Algorithm::Hierarchical,
        Some(o) => {
            return Err(err(
                "algorithm",
                format!("unknown algorithm '{o}'; expected ring or hierarchical"),
            ))
        }
    };
    if let Some(s) = &d.nccl_socket_ifname {
        let f = cluster.fabric();
        if select_interface(&f.interfaces, Some(s)).is_none() {
            return Err(err(
                "nccl_socket_ifname",
                format!("'{s}' matches none of the interfaces {}", names(f)),
            ));
        }
    }
    Ok(CommProfile {
        work,
        algorithm,
        nccl_ib_disable: d.nccl_ib_disable,
        nccl_socket_ifname: d.nccl_socket_ifname.clone(),
    })
}
