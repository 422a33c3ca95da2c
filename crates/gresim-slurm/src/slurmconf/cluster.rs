//! The cluster slurm.conf + gres.conf describe: GPU models from GRES type
//! names, devices placed on sockets, MIG instances, shared GRES, partitions;
//! and [`read_cluster`], which reads the files beside slurm.conf as Slurm
//! does (gres.conf, topology.conf).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gresim_model::catalog::{self, MigProfile};
use gresim_model::cluster::MAX_GPUS_PER_NODE;
use gresim_model::hostlist;
use gresim_model::{Cluster, GpuDevice, GpuModelId, GpuType, GpuTypeId, MigInstance, Node};

use super::partitions::build_partitions;
use super::{read_slurm_conf, GresSpec, NodeConf, SlurmConf};
use crate::conf_lines::Warning;
use crate::error::InputError;
use crate::gresconf::{GresConf, GresLine};

/// The GPU model used for a GRES type gresim cannot identify.
pub const DEFAULT_GPU_MODEL: &str = "A100-SXM4-80GB";

/// The GPU model (and MIG profile) a GRES type name stands for, and whether
/// the name was recognised.
///
/// Names that are catalog names or aliases (`A100-SXM4-40GB`, `h100`) are
/// those models. Otherwise the first of `a100`, `h100`, `h200`, `v100`,
/// `l40s`, `t4` the name contains picks the model: `a100` is the 80 GB card
/// unless the name says `40gb` or names a MIG profile only the 40 GB card has
/// (`a100_3g.20gb`). A trailing `_<profile>` (`a100_1g.10gb`) or a bare
/// profile (`1g.10gb`, taken as an A100 slice) makes it a MIG instance type.
/// Anything else (including the untyped `gpu`) is [`DEFAULT_GPU_MODEL`], not
/// recognised.
pub fn model_for_type(ty: &str) -> (GpuModelId, Option<&'static MigProfile>, bool) {
    let id = |n: &str| catalog::model_by_name(n).unwrap_or(GpuModelId(0));
    let a100 = id(DEFAULT_GPU_MODEL);
    let a100_40 = id("A100-SXM4-40GB");
    let lower = ty.to_ascii_lowercase();
    // A canonical catalog name (the catalog's short aliases such as `A100`
    // mean the 40 GB card; a GRES type `a100` is taken as the 80 GB one).
    if let Some(i) = catalog::GPU_MODELS
        .iter()
        .position(|m| m.name.eq_ignore_ascii_case(&lower))
    {
        return (GpuModelId::from_idx(i), None, true);
    }
    let profile_of = |m: GpuModelId| -> Option<&'static MigProfile> {
        lower
            .rsplit('_')
            .next()
            .and_then(|p| catalog::model(m).mig_profile(p))
    };
    for (short, name) in [
        ("a100", DEFAULT_GPU_MODEL),
        ("h100", "H100-SXM5-80GB"),
        ("h200", "H200-141GB"),
        ("v100", "V100-32GB"),
        ("l40s", "L40S"),
        ("t4", "T4"),
    ] {
        if lower.contains(short) {
            let mut m = id(name);
            if short == "a100"
                && (lower.contains("40gb")
                    || (profile_of(m).is_none() && profile_of(a100_40).is_some()))
            {
                m = a100_40;
            }
            return (m, profile_of(m), true);
        }
    }
    // A bare MIG profile name (`1g.10gb`): an A100 slice.
    if let Some(p) = catalog::model(a100).mig_profile(&lower) {
        return (a100, Some(p), true);
    }
    if let Some(p) = catalog::model(a100_40).mig_profile(&lower) {
        return (a100_40, Some(p), true);
    }
    (a100, None, false)
}

/// The socket a `Cores=` list lies on: the lowest socket it touches, or
/// `None` when it touches every socket (close to all of them).
pub fn socket_of_cores(cores: &[(u32, u32)], cps: u16, sockets: u16) -> Option<u16> {
    let cps = u32::from(cps.max(1));
    let mut set = 0u64;
    for &(a, b) in cores {
        let (sa, sb) = ((a / cps).min(63), (b / cps).min(63));
        for s in sa..=sb {
            set |= 1 << s;
        }
    }
    let all = if sockets >= 64 {
        u64::MAX
    } else {
        (1u64 << sockets) - 1
    };
    if set & all == all {
        return None;
    }
    Some(set.trailing_zeros() as u16)
}

/// One GPU device of a node before it is placed in the model.
struct Dev<'a> {
    ty: String,
    cores: Option<&'a [(u32, u32)]>,
    links: Option<&'a [i32]>,
    phys: Option<u32>,
    src: Option<&'a GresLine>,
}

/// Builds the cluster from slurm.conf nodes and partitions and gres.conf.
///
/// A node's GPU devices are its gres.conf `Name=gpu` lines in file order, or,
/// when gres.conf has none for it, its slurm.conf `Gres=gpu…` entries in
/// order. Each device's socket comes from `Cores=` ([`socket_of_cores`]),
/// its GPU model from its type name ([`model_for_type`]); `Links=` rows make
/// the node's link matrix (`-1`, the device itself, becomes 0). A MIG device
/// given with `MultipleFiles=/dev/nvidiaN,…` belongs to physical GPU N; other
/// devices are physical GPUs of their own. Mismatches between gres.conf and
/// `Gres=` counts are warnings (Slurm would drain a node that reports fewer
/// devices than configured).
pub fn build_cluster(
    conf: &SlurmConf,
    gres: &GresConf,
    w: &mut Vec<Warning>,
) -> Result<Cluster, InputError> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut types: Vec<GpuType> = Vec::new();
    let mut type_ids: BTreeMap<String, GpuTypeId> = BTreeMap::new();
    let mut warned_types: BTreeSet<String> = BTreeSet::new();
    let mut node_shares: BTreeMap<String, gresim_model::shares::NodeShares> = BTreeMap::new();
    for nc in &conf.nodes {
        let mut warned_autodetect = false;
        for name in &nc.names {
            let lines: Vec<&GresLine> = gres
                .lines
                .iter()
                .filter(|g| g.is_gpu() && g.applies_to(name))
                .collect();
            let conf_gpus: Vec<&GresSpec> = nc
                .gres
                .iter()
                .filter(|g| g.name.eq_ignore_ascii_case("gpu"))
                .collect();
            let conf_total: u64 = conf_gpus.iter().map(|g| g.count).sum();
            let mut devs: Vec<Dev<'_>> = Vec::new();
            if lines.is_empty() {
                let auto = gres
                    .lines
                    .iter()
                    .rev()
                    .find(|g| g.applies_to(name) && g.autodetect.is_some())
                    .and_then(|g| g.autodetect.as_deref())
                    .or(gres.autodetect.as_deref());
                if conf_total > 0 && auto.is_some_and(|a| a != "off") && !warned_autodetect {
                    warned_autodetect = true;
                    w.push(Warning::new(
                        &nc.file,
                        nc.line,
                        format!(
                            "AutoDetect={} cannot probe hardware in a simulation: the GPUs of {} follow Gres= with no Cores or Links",
                            auto.unwrap_or(""),
                            hostlist::compress(&nc.names)
                        ),
                    ));
                }
                if conf_total > MAX_GPUS_PER_NODE as u64 {
                    return Err(InputError::new(
                        &nc.file,
                        format!(
                            "node {name}: {conf_total} GPU devices; at most {MAX_GPUS_PER_NODE} are supported"
                        ),
                    )
                    .with_line(nc.line, 0));
                }
                for g in &conf_gpus {
                    for _ in 0..g.count {
                        devs.push(Dev {
                            ty: g.ty.clone().unwrap_or_else(|| "gpu".into()),
                            cores: None,
                            links: None,
                            phys: None,
                            src: None,
                        });
                    }
                }
            } else {
                let total: u64 = lines.iter().map(|g| g.devices()).sum();
                if total > MAX_GPUS_PER_NODE as u64 {
                    return Err(InputError::new(
                        &lines[0].file,
                        format!(
                            "node {name}: {total} GPU devices; at most {MAX_GPUS_PER_NODE} are supported"
                        ),
                    )
                    .with_line(lines[0].line, 0));
                }
                for g in &lines {
                    for _ in 0..g.devices() {
                        devs.push(Dev {
                            ty: g.ty.clone().unwrap_or_else(|| "gpu".into()),
                            cores: g.cores.as_deref(),
                            links: g.links.as_deref(),
                            phys: g.parent_gpu(),
                            src: Some(g),
                        });
                    }
                }
                if nc.line > 0 && total != conf_total {
                    w.push(Warning::new(
                        &nc.file,
                        nc.line,
                        format!(
                            "node {name}: gres.conf describes {total} GPU device(s) but Gres= configures {conf_total} (Slurm drains a node reporting fewer than configured); gresim uses gres.conf's devices"
                        ),
                    ));
                }
                for g in conf_gpus.iter().filter(|g| g.ty.is_some()) {
                    let t = g.ty.as_deref().unwrap_or("");
                    let n = devs.iter().filter(|d| d.ty.eq_ignore_ascii_case(t)).count() as u64;
                    if nc.line > 0 && n != g.count && total == conf_total {
                        w.push(Warning::new(
                            &nc.file,
                            nc.line,
                            format!("node {name}: Gres= configures {} gpu:{t} but gres.conf describes {n}", g.count),
                        ));
                    }
                }
            }
            let n = devs.len();
            let mut gpus = Vec::with_capacity(n);
            let mut links: Option<Vec<Vec<u8>>> = None;
            if devs.iter().any(|d| d.links.is_some()) {
                let mut m = vec![vec![0u8; n]; n];
                for (i, d) in devs.iter().enumerate() {
                    if let Some(row) = d.links {
                        if row.len() != n {
                            let (f, l) = d.src.map_or((nc.file.as_path(), nc.line), |s| {
                                (s.file.as_path(), s.line)
                            });
                            return Err(InputError::new(
                                f,
                                format!(
                                    "Links= has {} entries but node {name} has {n} GPU devices",
                                    row.len()
                                ),
                            )
                            .with_line(l, 0));
                        }
                        m[i] = row.iter().map(|&v| v.clamp(0, 255) as u8).collect();
                    }
                }
                links = Some(m);
            }
            let node_cores = u32::from(nc.sockets) * u32::from(nc.cores_per_socket);
            for (i, d) in devs.iter().enumerate() {
                if let (Some(c), Some(src)) = (d.cores, d.src) {
                    if src.line > 0 && c.iter().any(|&(_, b)| b >= node_cores) {
                        w.push(Warning::new(
                            &src.file,
                            src.line,
                            format!("Cores= names a core beyond node {name}'s {node_cores} cores"),
                        ));
                    }
                }
                let (model, mig, known) = model_for_type(&d.ty);
                if !known && warned_types.insert(d.ty.clone()) && nc.line > 0 {
                    w.push(Warning::new(
                        &nc.file,
                        nc.line,
                        format!(
                            "GPU type '{}' names no GPU model gresim knows; modelled as {DEFAULT_GPU_MODEL}",
                            d.ty
                        ),
                    ));
                }
                let id = match type_ids.get(&d.ty) {
                    Some(&id) => id,
                    None => {
                        let id = GpuTypeId::from_idx(types.len());
                        types.push(GpuType {
                            name: d.ty.clone(),
                            model,
                            mig,
                        });
                        type_ids.insert(d.ty.clone(), id);
                        id
                    }
                };
                let phys = d.phys.unwrap_or(i as u32);
                gpus.push(GpuDevice {
                    ty: id,
                    model,
                    socket: d
                        .cores
                        .and_then(|c| socket_of_cores(c, nc.cores_per_socket, nc.sockets)),
                    phys: u8::try_from(phys).unwrap_or(u8::MAX),
                    mig: mig.map(|p| MigInstance {
                        profile: p,
                        start: 0,
                    }),
                });
            }
            if let Some(sh) = crate::shares_conf::conf_node_shares(
                name,
                &nc.gres,
                &conf.gres_types,
                gres,
                gpus.len(),
                (&nc.file, nc.line),
                w,
            )? {
                node_shares.insert(name.clone(), sh);
            }
            nodes.push(Node {
                name: name.clone(),
                sockets: nc.sockets,
                cores_per_socket: nc.cores_per_socket,
                threads_per_core: nc.threads_per_core,
                memory_mib: nc.memory_mib,
                features: nc.features.clone(),
                weight: nc.weight,
                gpus,
                gpu_links: links,
                state: nc.state,
            });
        }
    }
    for g in &gres.lines {
        let shared = gresim_model::shares::ShareKind::from_name(&g.name).is_some();
        if !g.name.is_empty() && !g.is_gpu() && !shared && g.line > 0 {
            w.push(Warning::new(
                &g.file,
                g.line,
                format!(
                    "GRES '{}' is not modelled (gpu, shard and mps are); ignored",
                    g.name
                ),
            ));
        }
        if g.is_gpu() && g.line > 0 && !nodes_exist(g, &conf.nodes) {
            w.push(Warning::new(
                &g.file,
                g.line,
                "this line names no node of slurm.conf",
            ));
        }
    }
    if nodes.is_empty() {
        return Err(InputError::new(
            &conf.file,
            "slurm.conf defines no node (NodeName=…)",
        ));
    }
    nodes.sort_by(|a, b| hostlist::natural_cmp(&a.name, &b.name));
    let partitions = build_partitions(conf, &nodes, w)?;
    let mut cluster = Cluster::new(nodes, partitions, types);
    crate::shares_conf::apply(&mut cluster, &node_shares);
    Ok(cluster)
}

fn nodes_exist(g: &GresLine, nodes: &[NodeConf]) -> bool {
    match &g.nodes {
        None => true,
        Some(v) => v
            .iter()
            .any(|n| nodes.iter().any(|c| c.names.iter().any(|m| m == n))),
    }
}

/// A cluster read from slurm.conf (+ gres.conf, + topology.conf).
#[derive(Debug, Clone)]
pub struct ConfCluster {
    pub conf: SlurmConf,
    pub gres: GresConf,
    pub cluster: Cluster,
    pub warnings: Vec<Warning>,
}

/// Reads slurm.conf and gres.conf (by default the `gres.conf` next to
/// slurm.conf, where Slurm looks for it, when it exists) and builds the
/// cluster, with topology.conf's switches or blocks when `TopologyPlugin`
/// asks for them.
pub fn read_cluster(
    slurm_conf: &Path,
    gres_conf: Option<&Path>,
) -> Result<ConfCluster, InputError> {
    let (conf, mut warnings) = read_slurm_conf(slurm_conf)?;
    let sibling = slurm_conf
        .parent()
        .unwrap_or(Path::new("."))
        .join("gres.conf");
    let gpath = match gres_conf {
        Some(p) => Some(p.to_path_buf()),
        None => sibling.is_file().then_some(sibling),
    };
    let gres = match &gpath {
        Some(p) => {
            let (g, w) = crate::gresconf::read_gres_conf(p)?;
            warnings.extend(w);
            g
        }
        None => GresConf::default(),
    };
    let mut cluster = build_cluster(&conf, &gres, &mut warnings)?;
    if conf.topology_plugin != gresim_model::switches::TopologyPlugin::None {
        // topology/tree and topology/block read topology.conf from
        // slurm.conf's directory.
        let tp = slurm_conf
            .parent()
            .unwrap_or(Path::new("."))
            .join("topology.conf");
        let tree = crate::topology_conf::read(&tp, &cluster, &mut warnings)?;
        crate::topology_conf::check_plugin(&tree, conf.topology_plugin).map_err(|m| match &conf
            .topology_plugin_at
        {
            Some((f, line)) => InputError::new(f, m).with_line(*line, 0),
            None => InputError::new(&tp, m),
        })?;
        cluster.set_switches(Some(tree), conf.topology_plugin);
    }
    Ok(ConfCluster {
        conf,
        gres,
        cluster,
        warnings,
    })
}
