//! Turns a parsed scenario into the model: nodes, GPUs, MIG instances,
//! partitions, job specs and timed actions, checking everything on the way.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use gresim_engine::{Action, JobChange, TimedAction};
use gresim_model::catalog;
use gresim_model::cluster::{
    NodeAdminState, PartitionState, MAX_CORES_PER_NODE, MAX_GPUS_PER_NODE,
};
use gresim_model::hostlist;
use gresim_model::job::{JobBehavior, JobRequest, JobSpec, MemReq, Names, RunTime};
use gresim_model::mig;
use gresim_model::mig_dynamic::{
    DynGpu, DynamicMig, MigLayout, DEFAULT_RECONFIG_DELAY, SLOTS_PER_GPU,
};
use gresim_model::slurm_time::{parse_time_limit, Seconds};
use gresim_model::units::parse_mem_mib;
use gresim_model::{Cluster, GpuDevice, GpuType, GpuTypeId, MigInstance, Node, NodeId, Partition};

use crate::error::InputError;
use crate::spec::{ClusterDef, EventDef, JobDef, NodeFields, NumOrStr, PartitionDef};
use gresim_slurm::slurm_opts;

/// Builds the cluster.
pub fn build_cluster(
    file: &Path,
    def: &ClusterDef,
    parts: &[PartitionDef],
) -> Result<Cluster, InputError> {
    let err = |path: String, msg: String| InputError::at(file, path, msg);
    let mut nodes: Vec<Node> = Vec::new();
    let mut types: Vec<GpuType> = Vec::new();
    let mut type_ids: BTreeMap<String, GpuTypeId> = BTreeMap::new();
    let mut node_topos: BTreeMap<String, Option<Arc<gresim_model::topology::Topology>>> =
        BTreeMap::new();
    let mut dyn_by_name: BTreeMap<String, Vec<DynGpu>> = BTreeMap::new();
    let mut node_shares: BTreeMap<String, gresim_model::shares::NodeShares> = BTreeMap::new();
    let groups = def.nodes.as_deref().unwrap_or_default();
    if groups.is_empty() {
        return Err(err(
            "cluster.nodes".into(),
            "expected at least one node group".into(),
        ));
    }
    for (gi, g) in groups.iter().enumerate() {
        let gp = format!("cluster.nodes[{gi}]");
        let names = hostlist::expand(&g.names).map_err(|e| {
            err(
                format!("{gp}.names"),
                format!("bad hostlist '{}': {e}", g.names),
            )
        })?;
        if names.is_empty() {
            return Err(err(
                format!("{gp}.names"),
                "expected at least one node name".into(),
            ));
        }
        let base = match &g.template {
            Some(t) => def.node_templates.get(t).cloned().ok_or_else(|| {
                let known: Vec<&String> = def.node_templates.keys().collect();
                err(
                    format!("{gp}.template"),
                    format!("unknown template '{t}'; known: {known:?}"),
                )
            })?,
            None => NodeFields::default(),
        };
        let over = g.fields();
        let f = NodeFields {
            sockets: over.sockets.or(base.sockets),
            cores_per_socket: over.cores_per_socket.or(base.cores_per_socket),
            threads_per_core: over.threads_per_core.or(base.threads_per_core),
            memory: over.memory.or(base.memory),
            features: over.features.or(base.features),
            weight: over.weight.or(base.weight),
            gpus: over.gpus.or(base.gpus),
            gpu_links: over.gpu_links.or(base.gpu_links),
            topology: over.topology.or(base.topology),
        };
        let sockets = f.sockets.unwrap_or(1);
        let Some(cps) = f.cores_per_socket else {
            return Err(err(
                format!("{gp}.cores_per_socket"),
                "expected cores_per_socket (here or in the template)".into(),
            ));
        };
        let tpc = f.threads_per_core.unwrap_or(1);
        if sockets == 0 || cps == 0 || tpc == 0 {
            return Err(err(
                gp.clone(),
                "sockets, cores_per_socket and threads_per_core must be at least 1".into(),
            ));
        }
        if usize::from(sockets) * usize::from(cps) > MAX_CORES_PER_NODE {
            return Err(err(
                gp.clone(),
                format!("at most {MAX_CORES_PER_NODE} cores per node are supported"),
            ));
        }
        let Some(mem) = &f.memory else {
            return Err(err(
                format!("{gp}.memory"),
                "expected memory, e.g. \"512G\" (here or in the template)".into(),
            ));
        };
        let memory_mib = mem_value(mem).map_err(|e| err(format!("{gp}.memory"), e))?;
        let state = match g.state.as_deref() {
            None => NodeAdminState::Up,
            Some(v) => v
                .parse::<NodeAdminState>()
                .map_err(|e| err(format!("{gp}.state"), e))?,
        };
        // GPU devices of one node of this group.
        let mut gpus: Vec<GpuDevice> = Vec::new();
        let mut phys = 0u8;
        // Dynamic MIG GPUs of one node of this group (node ids come later).
        let mut dyn_gpus: Vec<DynGpu> = Vec::new();
        for (ki, gg) in f.gpus.iter().flatten().enumerate() {
            let kp = format!("{gp}.gpus[{ki}]");
            let model = catalog::model_by_name(&gg.model).ok_or_else(|| {
                err(
                    format!("{kp}.model"),
                    format!(
                        "unknown GPU model '{}'; the catalog has: {}",
                        gg.model,
                        catalog::model_names().join(", ")
                    ),
                )
            })?;
            let m = catalog::model(model);
            let prefix = gg.ty.clone().unwrap_or_else(|| m.short.to_string());
            if prefix.is_empty() || prefix.contains([':', ',', ' ']) {
                return Err(err(
                    format!("{kp}.type"),
                    format!("'{prefix}' is not a valid GRES type name"),
                ));
            }
            if gg.count == 0 {
                return Err(err(format!("{kp}.count"), "expected at least 1 GPU".into()));
            }
            let mut intern = |name: String,
                              mig: Option<&'static catalog::MigProfile>|
             -> Result<GpuTypeId, InputError> {
                if let Some(&id) = type_ids.get(&name) {
                    let t = &types[id.idx()];
                    if t.model != model || t.mig != mig {
                        return Err(err(format!("{kp}.type"), format!("GRES type '{name}' is already used for {}; give this group another type", t.model().name)));
                    }
                    return Ok(id);
                }
                let id = GpuTypeId::from_idx(types.len());
                types.push(GpuType {
                    name: name.clone(),
                    model,
                    mig,
                });
                type_ids.insert(name, id);
                Ok(id)
            };
            if gg.mig_dynamic {
                if m.mig_profiles.is_empty() {
                    return Err(err(
                        format!("{kp}.mig_dynamic"),
                        format!("{} does not support MIG", m.name),
                    ));
                }
                let initial = match &gg.mig {
                    None => MigLayout::whole(),
                    Some(layout) => {
                        let mut v = place_mig(m, layout)
                            .map_err(|e| err(format!("{kp}.mig"), format!("{}: {e}", g.names)))?;
                        v.sort_by_key(|i| i.start);
                        MigLayout(v)
                    }
                };
                let whole_ty = intern(prefix.clone(), None)?;
                let unconfigured_ty = intern(format!("{prefix}_unconfigured"), None)?;
                let mut profile_ty = Vec::with_capacity(m.mig_profiles.len());
                for p in m.mig_profiles {
                    profile_ty.push(intern(format!("{prefix}_{}", p.name), Some(p))?);
                }
                for _ in 0..gg.count {
                    let first_slot = u8::try_from(gpus.len())
                        .map_err(|_| err(kp.clone(), "too many GPUs".into()))?;
                    let proto = DynGpu {
                        node: NodeId(0),
                        phys,
                        model,
                        first_slot,
                        whole_ty,
                        unconfigured_ty,
                        profile_ty: profile_ty.clone(),
                        layout: initial.clone(),
                        pending: None,
                    };
                    let types = proto.device_types(&initial);
                    for i in 0..SLOTS_PER_GPU {
                        gpus.push(GpuDevice {
                            ty: types.get(i).copied().unwrap_or(unconfigured_ty),
                            model,
                            socket: gg.socket,
                            phys,
                            mig: initial.0.get(i).copied(),
                        });
                    }
                    dyn_gpus.push(proto);
                    phys = phys
                        .checked_add(1)
                        .ok_or_else(|| err(kp.clone(), "too many GPUs".into()))?;
                }
            }
            for _ in 0..if gg.mig_dynamic { 0 } else { gg.count } {
                match &gg.mig {
                    None => {
                        let ty = intern(prefix.clone(), None)?;
                        gpus.push(GpuDevice {
                            ty,
                            model,
                            socket: gg.socket,
                            phys,
                            mig: None,
                        });
                    }
                    Some(layout) => {
                        for inst in place_mig(m, layout).map_err(|e| {
                            err(
                                format!("{kp}.mig"),
                                format!("GPU {phys} of {}: {e}", g.names),
                            )
                        })? {
                            let ty = intern(
                                format!("{prefix}_{}", inst.profile.name),
                                Some(inst.profile),
                            )?;
                            gpus.push(GpuDevice {
                                ty,
                                model,
                                socket: gg.socket,
                                phys,
                                mig: Some(inst),
                            });
                        }
                    }
                }
                phys = phys
                    .checked_add(1)
                    .ok_or_else(|| err(kp.clone(), "too many GPUs".into()))?;
            }
            if let Some(s) = gg.socket {
                if s >= sockets {
                    return Err(err(
                        format!("{kp}.socket"),
                        format!("socket {s} does not exist: the node has {sockets} socket(s)"),
                    ));
                }
            }
        }
        if gpus.len() > MAX_GPUS_PER_NODE {
            return Err(err(
                format!("{gp}.gpus"),
                format!(
                    "{} GPU devices on one node; at most {MAX_GPUS_PER_NODE} are supported",
                    gpus.len()
                ),
            ));
        }
        if !dyn_gpus.is_empty() && (f.gpu_links.is_some() || f.topology.is_some()) {
            return Err(err(
                gp.clone(),
                "gpu_links and topology cannot be combined with mig_dynamic GPUs".into(),
            ));
        }
        if let Some(l) = &f.gpu_links {
            if l.len() != gpus.len() || l.iter().any(|r| r.len() != gpus.len()) {
                return Err(err(
                    format!("{gp}.gpu_links"),
                    format!(
                        "expected a {0}x{0} matrix (one row and column per GPU device)",
                        gpus.len()
                    ),
                ));
            }
        }
        let topo = match &f.topology {
            Some(t) => Some(crate::topo_build::resolve_topology(
                file,
                &format!("{gp}.topology"),
                t,
                &gpus,
                def.fabric.as_ref().and_then(|x| x.rail_gbps),
            )?),
            None => None,
        };
        for name in &names {
            if !dyn_gpus.is_empty() {
                dyn_by_name.insert(name.clone(), dyn_gpus.clone());
            }
        }
        let shares = crate::shares_conf::group_shares(
            file,
            &gp,
            f.gpus.as_deref().unwrap_or_default(),
            &gpus,
        )?;
        for name in names {
            if topo.is_some() {
                node_topos.insert(name.clone(), topo.clone());
            }
            if let Some(sh) = &shares {
                node_shares.insert(name.clone(), sh.clone());
            }
            nodes.push(Node {
                name,
                sockets,
                cores_per_socket: cps,
                threads_per_core: tpc,
                memory_mib,
                features: f.features.clone().unwrap_or_default(),
                weight: f.weight.unwrap_or(1),
                gpus: gpus.clone(),
                gpu_links: f.gpu_links.clone(),
                state,
            });
        }
    }
    // Slurm's node table is in natural name order.
    nodes.sort_by(|a, b| hostlist::natural_cmp(&a.name, &b.name));
    for w in nodes.windows(2) {
        if w[0].name == w[1].name {
            return Err(err(
                "cluster.nodes".into(),
                format!("node '{}' is defined twice", w[0].name),
            ));
        }
    }
    let partitions = build_partitions(file, &nodes, parts)?;
    let per_node: Vec<_> = nodes
        .iter()
        .map(|n| node_topos.get(&n.name).cloned().flatten())
        .collect();
    let dyn_gpus: Vec<DynGpu> = nodes
        .iter()
        .enumerate()
        .flat_map(|(i, n)| {
            dyn_by_name
                .get(&n.name)
                .into_iter()
                .flatten()
                .map(move |g| DynGpu {
                    node: NodeId::from_idx(i),
                    ..g.clone()
                })
        })
        .collect();
    let nnodes = nodes.len();
    let mut cluster = Cluster::new(nodes, partitions, types);
    if per_node.iter().any(Option::is_some) {
        cluster.set_topologies(per_node);
    }
    if !dyn_gpus.is_empty() {
        let delay = def.mig_reconfig_delay.unwrap_or(DEFAULT_RECONFIG_DELAY);
        cluster.set_dynamic_mig(DynamicMig::new(nnodes, delay, dyn_gpus));
    } else if def.mig_reconfig_delay.is_some() {
        return Err(err(
            "cluster.mig_reconfig_delay".into(),
            "no GPU group has mig_dynamic: there is nothing to reconfigure".into(),
        ));
    }
    gresim_slurm::shares_conf::apply(&mut cluster, &node_shares);
    crate::topo_build::apply_fabric(file, def, &mut cluster)?;
    Ok(cluster)
}

/// Resolves the scenario's partitions against `nodes` (in node-table order);
/// without partitions, one default partition `main` holds every node.
pub fn build_partitions(
    file: &Path,
    nodes: &[Node],
    parts: &[PartitionDef],
) -> Result<Vec<Partition>, InputError> {
    let err = |path: String, msg: String| InputError::at(file, path, msg);
    let index = gresim_slurm::partition::NodeIndex::new(nodes);
    let mut partitions = Vec::new();
    if parts.is_empty() {
        partitions.push(gresim_slurm::partition::default_partition(&index));
    }
    for (pi, p) in parts.iter().enumerate() {
        let pp = format!("partitions[{pi}]");
        if partitions.iter().any(|q: &Partition| q.name == p.name) {
            return Err(err(
                format!("{pp}.name"),
                format!("partition '{}' is defined twice", p.name),
            ));
        }
        if p.name.is_empty() || p.name.contains([',', ' ']) {
            return Err(err(
                format!("{pp}.name"),
                format!("'{}' is not a valid partition name", p.name),
            ));
        }
        let max_time = p
            .max_time
            .as_ref()
            .map(|t| time_value(t).map_err(|e| err(format!("{pp}.max_time"), e)))
            .transpose()?
            .flatten();
        let default_time = p
            .default_time
            .as_ref()
            .map(|t| time_value(t).map_err(|e| err(format!("{pp}.default_time"), e)))
            .transpose()?
            .flatten();
        let state = match p.state.as_deref() {
            None => PartitionState::Up,
            Some(v) => v
                .parse::<PartitionState>()
                .map_err(|e| err(format!("{pp}.state"), e))?,
        };
        let preempt_mode = p
            .preempt_mode
            .as_deref()
            .map(|m| {
                m.parse::<gresim_model::preempt::PreemptModeSpec>()
                    .map(|s| s.mode)
                    .map_err(|e| err(format!("{pp}.preempt_mode"), e))
            })
            .transpose()?;
        let oversubscribe = p
            .oversubscribe
            .as_deref()
            .map(gresim_slurm::partition::oversubscribe_rows)
            .transpose()
            .map_err(|e| err(format!("{pp}.oversubscribe"), e))?;
        let fields = gresim_slurm::partition::PartitionFields {
            name: &p.name,
            nodes: p.nodes.as_deref(),
            default: p.default,
            max_time,
            default_time,
            priority_tier: p.priority_tier,
            priority_job_factor: p.priority_job_factor,
            min_nodes: p.min_nodes,
            max_nodes: p.max_nodes,
            state,
            preempt_mode,
            grace_time: p.grace_time,
            oversubscribe: oversubscribe.map(|(n, _)| n),
            oversubscribe_force: oversubscribe.is_some_and(|(_, f)| f),
        };
        let h = p.nodes.as_deref().unwrap_or("");
        partitions.push(
            gresim_slurm::partition::lower(&fields, &index, true).map_err(|e| match e {
                gresim_slurm::partition::MembersError::Hostlist(e) => {
                    err(format!("{pp}.nodes"), format!("bad hostlist '{h}': {e}"))
                }
                gresim_slurm::partition::MembersError::UnknownNode(n) => err(
                    format!("{pp}.nodes"),
                    format!("node '{n}' is not in the cluster"),
                ),
            })?,
        );
    }
    if partitions.iter().filter(|p| p.default).count() > 1 {
        return Err(err(
            "partitions".into(),
            "more than one partition has default: true".into(),
        ));
    }
    Ok(partitions)
}

/// Places MIG instances on one GPU (see [`gresim_model::mig::place_layout`]):
/// the instances keep the order given (their GRES index order); errors name
/// the model and the profile at fault.
fn place_mig(m: &'static catalog::GpuModel, layout: &[String]) -> Result<Vec<MigInstance>, String> {
    let profiles = mig::resolve_profiles(m, layout)?;
    mig::place_layout(m, &profiles)
}

/// Load warnings for MIG layouts that are legal by the slice model but not
/// among NVIDIA's published combinations ("verify on hardware"), or, for a
/// cluster read from gres.conf, not legal at all. GPUs with the same model,
/// physical index and layout are reported once, with their nodes as a hostlist.
pub fn mig_layout_warnings(file: &Path, cluster: &Cluster) -> Vec<String> {
    /// GPUs with one model and layout: their physical indices and nodes.
    struct Group<'a> {
        model: &'a str,
        layout: String,
        illegal: Option<String>,
        phys: Vec<u8>,
        nodes: Vec<&'a str>,
    }
    let mut groups: Vec<Group<'_>> = Vec::new();
    for f in mig::layout_findings(cluster) {
        let name = cluster.node(f.node).name.as_str();
        let same = |g: &&mut Group<'_>| {
            g.model == f.model && g.layout == f.layout && g.illegal == f.illegal
        };
        match groups.iter_mut().find(same) {
            Some(g) => {
                if !g.phys.contains(&f.phys) {
                    g.phys.push(f.phys);
                }
                if !g.nodes.contains(&name) {
                    g.nodes.push(name);
                }
            }
            None => groups.push(Group {
                model: f.model,
                layout: f.layout,
                illegal: f.illegal,
                phys: vec![f.phys],
                nodes: vec![name],
            }),
        }
    }
    groups
        .into_iter()
        .map(|mut g| {
            g.phys.sort_unstable();
            let gpus: Vec<String> = g.phys.iter().map(u8::to_string).collect();
            let what = format!(
                "MIG layout {} on {} GPU {} of node(s) {}",
                g.layout,
                g.model,
                gpus.join(","),
                hostlist::compress(&g.nodes)
            );
            match g.illegal {
                None => format!(
                    "{}: {what} is legal by the slice model but not one of NVIDIA's \
                     published combinations for this GPU: verify on hardware",
                    file.display()
                ),
                Some(e) => format!("{}: {what} is not a valid MIG layout: {e}", file.display()),
            }
        })
        .collect()
}

/// A memory value: MiB as a number, or a string with a K/M/G/T suffix.
pub fn mem_value(v: &NumOrStr) -> Result<u64, String> {
    match v {
        NumOrStr::Num(n) => Ok(*n),
        NumOrStr::Str(s) => parse_mem_mib(s).map_err(|e| e.to_string()),
    }
}

/// A time limit: minutes as a number (as sbatch reads `--time=N`), or any Slurm time string.
/// `None` is unlimited.
pub fn time_value(v: &NumOrStr) -> Result<Option<Seconds>, String> {
    parse_time_limit(&v.as_string()).map_err(|e| e.to_string())
}

/// Builds every job spec. Jobs are sorted by submit time (stably), then
/// dependencies are resolved against earlier submissions.
pub fn build_jobs(
    file: &Path,
    what: &str,
    defs: &[JobDef],
    cluster: &Cluster,
) -> Result<Vec<JobSpec>, InputError> {
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&i| defs[i].submit);
    let mut keys: BTreeMap<String, u32> = BTreeMap::new();
    let mut specs = Vec::with_capacity(defs.len());
    let mut names = Names::default();
    for (sub, &i) in order.iter().enumerate() {
        let path = format!("{what}[{i}]");
        let d = &defs[i];
        let key = d.id.clone().unwrap_or_else(|| format!("job{}", i + 1));
        let mut spec = build_job(file, &path, d, key.clone(), cluster, &keys, &specs)?;
        spec.intern_names(&mut names);
        if keys.insert(key.clone(), sub as u32).is_some() {
            return Err(InputError::at(
                file,
                format!("{path}.id"),
                format!("id '{key}' is used twice"),
            ));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// One job definition to a spec. `keys` holds the submissions before it.
pub fn build_job(
    file: &Path,
    path: &str,
    d: &JobDef,
    key: String,
    cluster: &Cluster,
    keys: &BTreeMap<String, u32>,
    earlier: &[JobSpec],
) -> Result<JobSpec, InputError> {
    let err = |field: &str, msg: String| InputError::at(file, format!("{path}.{field}"), msg);
    let mut r = JobRequest::default();
    let nodes_given = d.nodes.is_some();
    if let Some(n) = &d.nodes {
        let (a, b) = slurm_opts::parse_nodes(&n.as_string()).map_err(|e| err("nodes", e))?;
        r.min_nodes = a;
        r.max_nodes = b;
    }
    let nz = |v: Option<u64>, field: &str| -> Result<Option<u32>, InputError> {
        match v {
            None => Ok(None),
            Some(0) => Err(err(field, "expected a count of at least 1".into())),
            Some(n) => u32::try_from(n)
                .map(Some)
                .map_err(|_| err(field, format!("{n} is too large"))),
        }
    };
    r.ntasks = nz(d.ntasks, "ntasks")?;
    r.ntasks_per_node = nz(d.ntasks_per_node, "ntasks_per_node")?;
    r.cpus_per_task = nz(d.cpus_per_task, "cpus_per_task")?.unwrap_or(1);
    r.cpus_per_gpu = nz(d.cpus_per_gpu, "cpus_per_gpu")?;
    let mems = [
        d.mem.is_some(),
        d.mem_per_cpu.is_some(),
        d.mem_per_gpu.is_some(),
    ];
    if mems.iter().filter(|x| **x).count() > 1 {
        return Err(err(
            "mem",
            "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.".into(),
        ));
    }
    if d.cpus_per_task.is_some() && d.cpus_per_gpu.is_some() {
        return Err(err(
            "cpus_per_gpu",
            "--cpus-per-gpu is mutually exclusive with --cpus-per-task".into(),
        ));
    }
    if let Some(m) = &d.mem {
        let v = mem_value(m).map_err(|e| err("mem", e))?;
        r.mem = if v == 0 {
            MemReq::WholeNode
        } else {
            MemReq::PerNode(v)
        };
    }
    if let Some(m) = &d.mem_per_cpu {
        r.mem = MemReq::PerCpu(mem_value(m).map_err(|e| err("mem_per_cpu", e))?);
    }
    if let Some(m) = &d.mem_per_gpu {
        r.mem = MemReq::PerGpu(mem_value(m).map_err(|e| err("mem_per_gpu", e))?);
    }
    if let Some(g) = &d.gres {
        let (gpus, shared) =
            slurm_opts::parse_gres_shared(g, cluster).map_err(|e| err("gres", e))?;
        r.gpus_per_node = gpus;
        r.shared = shared;
    }
    if let Some(g) = &d.gpus_per_node {
        let g = slurm_opts::parse_gpu_count(&g.as_string(), cluster)
            .map_err(|e| err("gpus_per_node", e))?;
        r.gpus_per_node.retain(|x| x.ty != g.ty);
        r.gpus_per_node.push(g);
    }
    if let Some(g) = &d.gpus {
        r.gpus_per_job =
            Some(slurm_opts::parse_gpu_count(&g.as_string(), cluster).map_err(|e| err("gpus", e))?);
    }
    if let Some(g) = &d.gpus_per_task {
        r.gpus_per_task = Some(
            slurm_opts::parse_gpu_count(&g.as_string(), cluster)
                .map_err(|e| err("gpus_per_task", e))?,
        );
    }
    if let (Some(sr), true) = (r.shared, r.wants_gpus()) {
        return Err(err(
            "gres",
            format!(
                "Invalid generic resource (gres) specification: a job cannot request GPUs (--gpus…) and the shared gres/{} together",
                sr.kind
            ),
        ));
    }
    if !r.wants_gpus() && (r.cpus_per_gpu.is_some() || matches!(r.mem, MemReq::PerGpu(_))) {
        return Err(err(
            "cpus_per_gpu",
            "Requested cpus_per_tres / mem_per_tres but did not request any GPU.".into(),
        ));
    }
    if let Some(g) = r.gpus_per_job {
        if g.count < r.min_nodes {
            return Err(err(
                "gpus",
                "Failed to validate job spec, --gpus < -N".into(),
            ));
        }
        if !nodes_given {
            // --gpus without -N may spread over as many nodes as it has
            // GPUs; no maximum was given, so the selection aims at the
            // minimum (Slurm's req_nodes = min_nodes).
            r.max_nodes = g.count;
            r.max_nodes_open = true;
        } else {
            r.max_nodes = r.max_nodes.min(g.count);
        }
    }
    if let Some(g) = r.gpus_per_task {
        if r.ntasks.is_none() {
            if nodes_given && r.min_nodes == r.max_nodes {
                r.ntasks = Some(r.min_nodes * r.ntasks_per_node.unwrap_or(1));
            } else if let Some(pj) = r.gpus_per_job {
                if pj.count % g.count != 0 {
                    return Err(err(
                        "gpus_per_task",
                        "Failed to validate job spec, --gpus not multiple of --gpus-per-task"
                            .into(),
                    ));
                }
                r.ntasks = Some(pj.count / g.count);
            } else {
                return Err(err(
                    "gpus_per_task",
                    "--gpus-per-task used without either --gpus or -n/--ntasks is not allowed."
                        .into(),
                ));
            }
        }
    }
    if let (Some(n), Some(tpn)) = (r.ntasks, r.ntasks_per_node) {
        if !nodes_given && n > tpn {
            let need = n.div_ceil(tpn);
            r.min_nodes = need;
            r.max_nodes = need;
        }
    }
    if let (Some(n), None, None) = (r.ntasks, r.ntasks_per_node, r.gpus_per_job) {
        // `-n N` without `-N`: Slurm leaves the node count open (job
        // details max_nodes = 0, so req_nodes = min_nodes = 1): the tasks
        // pack onto as few nodes as fit them, up to one node per task.
        if !nodes_given {
            r.max_nodes = r.max_nodes.max(n);
            r.max_nodes_open = true;
        }
    }
    if let Some(t) = &d.time {
        let t =
            time_value(t).map_err(|e| err("time", format!("Invalid --time specification: {e}")))?;
        r.time_limit = Some(t);
    }
    if let Some(p) = &d.partition {
        for name in p.split(',') {
            let id = cluster.partition_id(name.trim()).ok_or_else(|| {
                let known: Vec<&str> = cluster.partitions.iter().map(|p| p.name.as_str()).collect();
                err(
                    "partition",
                    format!(
                        "Invalid partition name specified: '{name}'; the cluster has: {}",
                        known.join(", ")
                    ),
                )
            })?;
            if !r.partitions.contains(&id) {
                r.partitions.push(id);
            }
        }
    }
    let node_ids = |field: &str, h: &str| -> Result<Vec<NodeId>, InputError> {
        let names =
            hostlist::expand(h).map_err(|e| err(field, format!("bad hostlist '{h}': {e}")))?;
        let mut ids: Vec<NodeId> = names
            .iter()
            .map(|n| {
                cluster
                    .node_id(n)
                    .ok_or_else(|| err(field, format!("node '{n}' is not in the cluster")))
            })
            .collect::<Result<_, _>>()?;
        ids.sort();
        ids.dedup();
        Ok(ids)
    };
    if let Some(h) = &d.nodelist {
        r.nodelist = node_ids("nodelist", h)?;
        if r.nodelist.len() as u32 > r.max_nodes {
            if nodes_given {
                return Err(err(
                    "nodelist",
                    format!(
                        "{} nodes listed but --nodes allows at most {}",
                        r.nodelist.len(),
                        r.max_nodes
                    ),
                ));
            }
            r.max_nodes = r.nodelist.len() as u32;
        }
        r.min_nodes = r.min_nodes.max(r.nodelist.len() as u32);
    }
    if let Some(h) = &d.exclude {
        r.exclude = node_ids("exclude", h)?;
    }
    if let Some(c) = &d.constraint {
        r.features = c
            .split('&')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        for f in &r.features {
            if !cluster.nodes.iter().any(|n| n.has_feature(f)) {
                return Err(err(
                    "constraint",
                    format!("Invalid feature specification: no node has feature '{f}'"),
                ));
            }
        }
    }
    r.exclusive = d.exclusive;
    r.oversubscribe = d.oversubscribe;
    r.switches = d
        .switches
        .as_deref()
        .map(slurm_opts::parse_switches)
        .transpose()
        .map_err(|e| err("switches", e))?;
    r.segment = d
        .segment
        .as_ref()
        .map(|s| slurm_opts::parse_segment(&s.as_string()))
        .transpose()
        .map_err(|e| err("segment", e))?
        .flatten();
    let array = d
        .array
        .as_deref()
        .map(slurm_opts::parse_array)
        .transpose()
        .map_err(|e| err("array", e))?;
    let mut task_run_times = Vec::new();
    for (k, v) in d.task_run_times.iter().flatten() {
        let idx: u32 = k
            .parse()
            .map_err(|_| err("task_run_times", format!("key '{k}' is not an array index")))?;
        if !array.as_ref().is_some_and(|a| a.indices.contains(&idx)) {
            return Err(err(
                "task_run_times",
                format!("index {idx} is not in the job's array"),
            ));
        }
        task_run_times.push((idx, RunTime::Secs(*v)));
    }
    let dependency = match &d.dependency {
        None => None,
        Some(s) => Some(
            slurm_opts::parse_dependency(s, |id| {
                if let Some(&sub) = keys.get(id) {
                    return Some((sub, None));
                }
                let (base, task) = id.rsplit_once('_')?;
                let sub = *keys.get(base)?;
                let task: u32 = task.parse().ok()?;
                let a = earlier.get(sub as usize)?.array()?;
                a.indices.contains(&task).then_some((sub, Some(task)))
            })
            .map_err(|e| err("dependency", e))?,
        ),
    };
    let behavior = job_behavior(d, &r).map_err(|(f, m)| err(f, m))?;
    let comm = match &d.comm {
        Some(c) => Some(Arc::new(crate::topo_build::build_comm(
            file,
            &format!("{path}.comm"),
            c,
            cluster,
            d.run_time.is_some(),
        )?)),
        None => None,
    };
    let run_time = match (d.run_time, comm.as_ref().and_then(|c| c.compute_secs())) {
        (Some(t), _) => RunTime::Secs(t),
        (None, Some(c)) => RunTime::Secs(c),
        (None, None) => RunTime::ToLimit,
    };
    let name: Arc<str> = Arc::from(d.name.as_deref().unwrap_or(&key));
    let user = d.user.as_deref().unwrap_or("user");
    let mut spec = JobSpec::new(key, name, user, Arc::new(r), d.submit, run_time);
    spec.exit_code = d.exit_code.unwrap_or(0);
    spec.requeue = d.requeue;
    spec.begin = d.begin;
    spec.hold = d.hold;
    spec.nice = d.nice.unwrap_or(0);
    spec.comm = comm;
    spec.set_task_run_times(task_run_times);
    spec.set_array(array);
    spec.set_dependency(dependency);
    spec.set_behavior(behavior);
    apply_accounting(&mut spec, cluster, d.account.as_deref(), d.qos.as_deref());
    spec.set_reservation(d.reservation.as_deref().map(Arc::from));
    Ok(spec)
}

/// The job's association and QOS under the cluster's accounting (`-A`,
/// `--qos`). An unknown account or QOS, or one the user may not use, makes
/// it a submission slurmctld refuses, with sbatch's message. Without
/// accounting, `-A` and `--qos` change nothing, as in Slurm.
pub fn apply_accounting(
    spec: &mut JobSpec,
    cluster: &Cluster,
    account: Option<&str>,
    qos: Option<&str>,
) {
    let Some(acct) = cluster.accounting() else {
        return;
    };
    let part = spec
        .request
        .partitions
        .first()
        .copied()
        .or_else(|| cluster.default_partition())
        .map(|p| cluster.partition(p).name.clone());
    match acct.resolve(&spec.user, account, qos, part.as_deref()) {
        Ok(j) => {
            spec.set_acct(Some(j));
            // A job without --time in a partition without DefaultTime runs
            // with its QOS's (else its association's) MaxWall as its limit
            // (`_set_time_limit()` in acct_policy_validate()).
            let no_default = part
                .as_deref()
                .and_then(|p| cluster.partition_id(p))
                .is_some_and(|p| cluster.partition(p).default_time.is_none());
            if acct.enforce.limits && spec.request.time_limit.is_none() && no_default {
                let q = acct.qos[j.qos as usize].limits.max_wall_pj;
                let a = acct.assocs[j.assoc as usize].limits.max_wall_pj;
                let wall = if q != gresim_model::accounting::NO_LIMIT {
                    q
                } else {
                    a
                };
                if wall != gresim_model::accounting::NO_LIMIT {
                    let mut r = (*spec.request).clone();
                    r.time_limit = Some(Some(wall * 60).filter(|&s| s > 0));
                    spec.request = Arc::new(r);
                }
            }
        }
        Err(msg) => {
            if spec.reject().is_none() {
                spec.set_reject(Some(msg.to_string()));
            }
        }
    }
}

/// Default run-time factor of a job that expects a GPU but runs on the CPU.
pub const DEFAULT_CPU_FALLBACK_SLOWDOWN: f64 = 10.0;

/// The program's side of a job: checkpoints, GPU memory, CPU fallback.
fn job_behavior(d: &JobDef, r: &JobRequest) -> Result<JobBehavior, (&'static str, String)> {
    let mut b = JobBehavior::default();
    match (d.checkpoint_interval, d.restart_overhead) {
        (Some(0), _) => {
            return Err((
                "checkpoint_interval",
                "expected at least 1 second between checkpoints".into(),
            ))
        }
        (None, Some(_)) => {
            return Err((
                "restart_overhead",
                "a restart overhead needs checkpoint_interval".into(),
            ))
        }
        (iv, o) => {
            b.checkpoint_interval = iv;
            b.restart_overhead = o.unwrap_or(0);
        }
    }
    if let Some(v) = &d.vram {
        let mib = mem_value(v).map_err(|e| ("vram", e))?;
        if mib == 0 {
            return Err(("vram", "expected GPU memory above 0".into()));
        }
        if !r.wants_gpus() {
            return Err((
                "vram",
                "vram is GPU memory per GPU, but the job requests no GPU".into(),
            ));
        }
        b.vram_mib = Some(mib);
    }
    if d.expects_gpu && !r.wants_gpus() && r.shared.is_none() {
        b.cpu_fallback_slowdown = Some(DEFAULT_CPU_FALLBACK_SLOWDOWN);
    }
    b.ignores_sigterm = d.ignores_sigterm;
    Ok(b)
}

/// `scontrol update NodeName= State=X`: DOWN, DRAIN, FAIL (like DRAIN:
/// running jobs finish, no new job starts; sinfo shows it as FAIL), RESUME
/// or IDLE.
pub fn node_state_action(state: &str, nodes: Vec<NodeId>) -> Result<Action, String> {
    let word = state.to_ascii_uppercase();
    match word.as_str() {
        "FAIL" => Ok(Action::NodeDrain(nodes)),
        "RESUME" | "IDLE" => Ok(Action::NodeResume(nodes)),
        _ => match word.parse::<NodeAdminState>() {
            Ok(NodeAdminState::Down) => Ok(Action::NodeDown(nodes)),
            Ok(NodeAdminState::Drain) => Ok(Action::NodeDrain(nodes)),
            // `UP` is not a state `scontrol update` takes.
            _ => Err(format!(
                "unsupported node state '{word}'; expected DOWN, DRAIN, FAIL, RESUME or IDLE"
            )),
        },
    }
}

/// `scancel --state=`: PENDING (PD) or RUNNING (R).
pub fn cancel_state(s: &str) -> Result<gresim_model::JobState, String> {
    match s.to_ascii_uppercase().as_str() {
        "PENDING" | "PD" => Ok(gresim_model::JobState::Pending),
        "RUNNING" | "R" => Ok(gresim_model::JobState::Running),
        _ => Err(format!(
            "unsupported job state '{s}'; expected PENDING or RUNNING"
        )),
    }
}

/// A signal by name (`USR1`, `SIGUSR1`) or number, one whose default action
/// ends the process.
pub fn signal_number(s: &str) -> Result<u8, String> {
    const SIGNALS: &[(&str, u8)] = &[
        ("HUP", 1),
        ("INT", 2),
        ("QUIT", 3),
        ("ABRT", 6),
        ("KILL", 9),
        ("USR1", 10),
        ("SEGV", 11),
        ("USR2", 12),
        ("PIPE", 13),
        ("ALRM", 14),
        ("TERM", 15),
    ];
    let up = s.to_ascii_uppercase();
    let name = up.strip_prefix("SIG").unwrap_or(&up);
    SIGNALS
        .iter()
        .find(|(n, k)| *n == name || name.parse::<u8>().ok() == Some(*k))
        .map(|&(_, k)| k)
        .ok_or_else(|| {
            format!(
                "unsupported signal '{s}'; expected one of {}",
                SIGNALS
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

/// Resolves a job id of a dependency to (submission, array task).
pub type ResolveJob<'a> = &'a dyn Fn(&str) -> Option<(u32, Option<u32>)>;

/// One `scontrol update JobId=` change, `key` lower-case: timelimit,
/// partition, nice, dependency (`resolve` names the jobs; empty clears
/// it) or numnodes.
pub fn job_change(
    key: &str,
    value: &str,
    cluster: &Cluster,
    resolve: ResolveJob<'_>,
) -> Result<JobChange, String> {
    match key {
        "timelimit" => gresim_model::slurm_time::parse_time_limit(value)
            .map(JobChange::TimeLimit)
            .map_err(|e| format!("TimeLimit={value}: {e}")),
        "partition" => cluster
            .partition_id(value)
            .map(JobChange::Partition)
            .ok_or_else(|| format!("Partition={value}: no such partition")),
        "nice" => value
            .parse::<i32>()
            .ok()
            .filter(|n| n.abs() <= 2_147_483_645)
            .map(JobChange::Nice)
            .ok_or_else(|| format!("Nice={value}: expected an integer")),
        "dependency" if value.is_empty() => Ok(JobChange::Dependency(None)),
        "dependency" => slurm_opts::parse_dependency(value, resolve)
            .map(|d| JobChange::Dependency(Some(d)))
            .map_err(|e| format!("Dependency={value}: {e}")),
        "numnodes" => slurm_opts::parse_nodes(value)
            .map(|(a, b)| JobChange::NumNodes(a, b))
            .map_err(|e| format!("NumNodes={value}: {e}")),
        other => Err(format!(
            "unsupported job update key '{other}'; expected TimeLimit, Partition, Nice, Dependency or NumNodes"
        )),
    }
}

/// Timed events to engine actions.
pub fn build_actions(
    file: &Path,
    defs: &[EventDef],
    cluster: &Cluster,
    job_key: &dyn Fn(&str) -> Option<u32>,
) -> Result<Vec<TimedAction>, InputError> {
    let mut out = Vec::new();
    for (i, e) in defs.iter().enumerate() {
        let p = format!("events[{i}]");
        let nodes = || -> Result<Vec<NodeId>, InputError> {
            let h = e.nodes.as_deref().ok_or_else(|| {
                InputError::at(
                    file,
                    format!("{p}.nodes"),
                    format!("action '{}' needs nodes", e.action),
                )
            })?;
            let names = hostlist::expand(h).map_err(|x| {
                InputError::at(
                    file,
                    format!("{p}.nodes"),
                    format!("bad hostlist '{h}': {x}"),
                )
            })?;
            names
                .iter()
                .map(|n| {
                    cluster.node_id(n).ok_or_else(|| {
                        InputError::at(
                            file,
                            format!("{p}.nodes"),
                            format!("node '{n}' is not in the cluster"),
                        )
                    })
                })
                .collect()
        };
        let subs = || -> Result<Vec<u32>, InputError> {
            let k = e.job.as_deref().ok_or_else(|| {
                InputError::at(
                    file,
                    format!("{p}.job"),
                    format!("action '{}' needs job", e.action),
                )
            })?;
            k.split(',')
                .map(|k| {
                    job_key(k.trim()).ok_or_else(|| {
                        InputError::at(file, format!("{p}.job"), format!("no job has id '{k}'"))
                    })
                })
                .collect()
        };
        let sub = || -> Result<u32, InputError> {
            match subs()?.as_slice() {
                [s] => Ok(*s),
                _ => Err(InputError::at(
                    file,
                    format!("{p}.job"),
                    format!("action '{}' takes one job", e.action),
                )),
            }
        };
        let field = |f: &str, m: String| InputError::at(file, format!("{p}.{f}"), m);
        let action = match e.action.as_str() {
            "create_reservation" | "update_reservation" | "delete_reservation" => {
                crate::resv::event_action(file, &p, e, cluster)?
            }
            "node_down" => Action::NodeDown(nodes()?),
            "node_up" => Action::NodeUp(nodes()?),
            "node_drain" => Action::NodeDrain(nodes()?),
            "node_resume" => Action::NodeResume(nodes()?),
            "hold" => Action::Hold { sub: sub()?, admin: e.admin },
            "release" => Action::Release {
                sub: sub()?,
                owner: e.owner,
            },
            "cancel" if e.state.is_some() || e.user.is_some() => Action::CancelWhere {
                subs: if e.job.is_some() { Some(subs()?) } else { None },
                state: e
                    .state
                    .as_deref()
                    .map(cancel_state)
                    .transpose()
                    .map_err(|m| field("state", m))?,
                user: e.user.as_deref().map(Arc::from),
            },
            "cancel" => Action::Cancel { sub: sub()? },
            "requeue" => Action::Requeue { sub: sub()? },
            "requeue_hold" => Action::RequeueHold {
                sub: sub()?,
                special_exit: e.special_exit,
            },
            "suspend" => Action::Suspend { sub: sub()? },
            "resume" => Action::Resume { sub: sub()? },
            "top" => Action::Top {
                subs: subs()?,
                owner: e.owner,
            },
            "signal" => {
                let sig = e.signal.as_deref().ok_or_else(|| {
                    field("signal", "action 'signal' needs signal".to_string())
                })?;
                Action::Signal {
                    sub: sub()?,
                    signal: signal_number(sig).map_err(|m| field("signal", m))?,
                    batch: e.batch,
                }
            }
            "update" => {
                let sub = sub()?;
                let resolve = |k: &str| job_key(k).map(|s| (s, None));
                let changes = [
                    ("time_limit", "timelimit", e.time_limit.as_ref().map(NumOrStr::as_string)),
                    ("partition", "partition", e.partition.clone()),
                    ("nice", "nice", e.nice.map(|n| n.to_string())),
                    ("dependency", "dependency", e.dependency.clone()),
                    ("num_nodes", "numnodes", e.num_nodes.as_ref().map(NumOrStr::as_string)),
                ];
                let mut any = false;
                for (f, key, v) in changes {
                    let Some(v) = v else { continue };
                    let change =
                        job_change(key, &v, cluster, &resolve).map_err(|m| field(f, m))?;
                    out.push(TimedAction {
                        at: e.at,
                        action: Action::Update { sub, change },
                    });
                    any = true;
                }
                if !any {
                    return Err(field(
                        "action",
                        "action 'update' needs one of time_limit, partition, nice, dependency, num_nodes".into(),
                    ));
                }
                continue;
            }
            other => {
                return Err(InputError::at(file, format!("{p}.action"), format!("unknown action '{other}'; expected node_down, node_up, node_drain, node_resume, hold, release, cancel, requeue, requeue_hold, suspend, resume, top, signal, update, create_reservation, update_reservation or delete_reservation")))
            }
        };
        out.push(TimedAction { at: e.at, action });
    }
    Ok(out)
}
