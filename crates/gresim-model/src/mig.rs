//! Static MIG layouts: placement by the slice model, NVIDIA's published
//! combinations, and jobs that would need several MIG instances to talk.
//!
//! A layout (the MIG instances of one physical GPU) is
//!
//! * **illegal** when the slice model cannot hold it: an unknown profile,
//!   more instances of a profile than the GPU holds, more than 7 compute
//!   slices, an instance at a start the profile does not allow, or instances
//!   whose memory slices overlap. [`place_layout`] and [`check_placement`]
//!   return a message naming the GPU model and the profile at fault;
//! * **published** when it is one of NVIDIA's supported combinations of the
//!   model, or part of one ([`is_published`], data in
//!   [`crate::catalog::GpuModel::mig_published`]);
//! * **unpublished** otherwise: legal by the slice model but not in NVIDIA's
//!   list, to be verified on hardware (`4g.20gb + 3g.20gb` on an A100).
//!
//! MIG instances cannot join NVLink collectives: there is no peer-to-peer
//! between MIG instances, and a CUDA process sees one MIG device. A job that
//! holds a MIG instance and any other GPU device is therefore a multi-GPU job
//! that cannot run as one NCCL group ([`multi_gpu_on_mig`]).

use crate::catalog::{GpuModel, MigProfile, MIG_COMPUTE_SLICES, MIG_MEMORY_SLICES};
use crate::cluster::{Cluster, GpuType, MigInstance, Node};
use crate::ids::NodeId;
use crate::job::JobRequest;
use crate::state::{gpu_indices, Allocation};

/// Where a legal layout stands against NVIDIA's published combinations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutClass {
    /// One of NVIDIA's supported combinations, or part of one.
    Published,
    /// Legal by the slice model, not in NVIDIA's list: verify on hardware.
    Unpublished,
}

/// `4g.20gb+2g.10gb+1g.5gb`: profile names joined by `+`, in the order given.
pub fn describe<'a>(profiles: impl IntoIterator<Item = &'a MigProfile>) -> String {
    profiles
        .into_iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join("+")
}

/// The model's profiles for `names` (case-insensitive), in order.
pub fn resolve_profiles<S: AsRef<str>>(
    model: &GpuModel,
    names: &[S],
) -> Result<Vec<&'static MigProfile>, String> {
    if model.mig_profiles.is_empty() {
        return Err(format!("{} does not support MIG", model.name));
    }
    names
        .iter()
        .map(|n| {
            let name = n.as_ref();
            model.mig_profile(name).ok_or_else(|| {
                let known: Vec<&str> = model.mig_profiles.iter().map(|p| p.name).collect();
                format!(
                    "unknown MIG profile '{name}' for {}; expected one of {}",
                    model.name,
                    known.join(", ")
                )
            })
        })
        .collect()
}

/// Index of `p` among the model's profiles (profiles are compared by value:
/// the 80 GB parts share one table).
fn slot(model: &GpuModel, p: &MigProfile) -> Option<usize> {
    model.mig_profiles.iter().position(|q| q == p)
}

/// Instance counts per profile slot; `None` if a profile is not the model's.
fn counts<'a>(
    model: &GpuModel,
    profiles: impl IntoIterator<Item = &'a MigProfile>,
) -> Option<Vec<u8>> {
    let mut c = vec![0u8; model.mig_profiles.len()];
    for p in profiles {
        let i = slot(model, p)?;
        c[i] = c[i].saturating_add(1);
    }
    Some(c)
}

/// The instance-count and compute checks shared by both entry points.
fn check_counts(model: &GpuModel, profiles: &[&MigProfile]) -> Result<(), String> {
    let mut compute = 0u8;
    for (k, p) in profiles.iter().enumerate() {
        if slot(model, p).is_none() {
            return Err(format!("{} has no MIG profile {}", model.name, p.name));
        }
        let same = profiles[..=k].iter().filter(|q| **q == *p).count();
        if same > usize::from(p.max_instances) {
            return Err(format!(
                "at most {} instance(s) of {} fit on one {}",
                p.max_instances, p.name, model.name
            ));
        }
        compute = compute.saturating_add(p.compute_slices);
        if compute > MIG_COMPUTE_SLICES {
            return Err(format!(
                "the layout needs more than {MIG_COMPUTE_SLICES} compute slices on one {} (at profile {})",
                model.name, p.name
            ));
        }
    }
    Ok(())
}

/// Places `profiles` on one GPU of `model` by the slice model. The instances
/// keep the order given (their GRES index order); their starts are found by
/// a small search, the largest memory footprint first, so any layout the
/// slice model admits is placed. Errors name the model and the profile.
pub fn place_layout(
    model: &GpuModel,
    profiles: &[&'static MigProfile],
) -> Result<Vec<MigInstance>, String> {
    if model.mig_profiles.is_empty() {
        return Err(format!("{} does not support MIG", model.name));
    }
    check_counts(model, profiles)?;
    let mut order: Vec<usize> = (0..profiles.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(profiles[i].memory_slices));
    let mut starts = vec![0u8; profiles.len()];
    fn search(
        profiles: &[&'static MigProfile],
        order: &[usize],
        k: usize,
        used: u16,
        starts: &mut [u8],
    ) -> bool {
        let Some(&i) = order.get(k) else { return true };
        let p = profiles[i];
        let span = (1u16 << p.memory_slices) - 1;
        for &s in p.starts {
            if s + p.memory_slices <= MIG_MEMORY_SLICES && used & (span << s) == 0 {
                starts[i] = s;
                if search(profiles, order, k + 1, used | (span << s), starts) {
                    return true;
                }
            }
        }
        false
    }
    if !search(profiles, &order, 0, 0, &mut starts) {
        let names: Vec<&str> = profiles.iter().map(|p| p.name).collect();
        return Err(format!(
            "the instances {names:?} overlap: no placement of them fits the \
             {MIG_MEMORY_SLICES} memory slices of a {}",
            model.name
        ));
    }
    Ok(profiles
        .iter()
        .zip(starts)
        .map(|(p, start)| MigInstance { profile: p, start })
        .collect())
}

/// Checks instances placed at given starts (in any order): each profile is
/// the model's and starts at one of its allowed positions, memory slices do
/// not overlap, counts and compute slices are within the GPU's.
pub fn check_placement(model: &GpuModel, instances: &[MigInstance]) -> Result<(), String> {
    if instances.is_empty() {
        return Ok(());
    }
    if model.mig_profiles.is_empty() {
        return Err(format!("{} does not support MIG", model.name));
    }
    let profiles: Vec<&MigProfile> = instances.iter().map(|i| i.profile).collect();
    check_counts(model, &profiles)?;
    let mut used = 0u16;
    for inst in instances {
        let p = inst.profile;
        if !p.starts.contains(&inst.start) || inst.start + p.memory_slices > MIG_MEMORY_SLICES {
            let starts: Vec<String> = p.starts.iter().map(u8::to_string).collect();
            return Err(format!(
                "{} cannot start at memory slice {} on a {}; it starts at {}",
                p.name,
                inst.start,
                model.name,
                starts.join(", ")
            ));
        }
        let span = ((1u16 << p.memory_slices) - 1) << inst.start;
        if used & span != 0 {
            return Err(format!(
                "{} at memory slice {} overlaps another instance on a {}",
                p.name, inst.start, model.name
            ));
        }
        used |= span;
    }
    Ok(())
}

/// Whether a layout (instances in any order) is one of NVIDIA's published
/// combinations for `model`, or part of one. False for a model without MIG
/// or a profile that is not the model's; true for the empty layout.
pub fn is_published<'a>(
    model: &GpuModel,
    profiles: impl IntoIterator<Item = &'a MigProfile>,
) -> bool {
    let Some(c) = counts(model, profiles) else {
        return false;
    };
    if c.iter().all(|&n| n == 0) {
        return true;
    }
    model
        .mig_published
        .iter()
        .any(|combo| combo.len() == c.len() && c.iter().zip(combo.iter()).all(|(a, b)| a <= b))
}

/// NVIDIA's published full combinations of `model`, each as profiles (largest
/// first), in the catalog's order. Empty for models without MIG.
pub fn published_layouts(model: &GpuModel) -> Vec<Vec<&'static MigProfile>> {
    model
        .mig_published
        .iter()
        .map(|combo| {
            let mut v: Vec<&'static MigProfile> = Vec::new();
            for (i, &n) in combo.iter().enumerate().rev() {
                if let Some(p) = model.mig_profiles.get(i) {
                    v.extend(std::iter::repeat_n(p, usize::from(n)));
                }
            }
            v
        })
        .collect()
}

/// Places a layout given by profile names and classifies it: an error for an
/// illegal layout (see [`place_layout`]), else the placed instances and
/// whether NVIDIA publishes the combination.
pub fn classify_layout<S: AsRef<str>>(
    model: &GpuModel,
    names: &[S],
) -> Result<(Vec<MigInstance>, LayoutClass), String> {
    let profiles = resolve_profiles(model, names)?;
    let placed = place_layout(model, &profiles)?;
    let class = if is_published(model, profiles.iter().copied()) {
        LayoutClass::Published
    } else {
        LayoutClass::Unpublished
    };
    Ok((placed, class))
}

/// The MIG instances of each physical GPU of `node` that has any, by
/// physical index, in GRES order.
pub fn node_layouts(node: &Node) -> Vec<(u8, Vec<MigInstance>)> {
    let mut out: Vec<(u8, Vec<MigInstance>)> = Vec::new();
    for d in &node.gpus {
        let Some(m) = d.mig else { continue };
        match out.iter_mut().find(|(p, _)| *p == d.phys) {
            Some((_, v)) => v.push(m),
            None => out.push((d.phys, vec![m])),
        }
    }
    out
}

/// A physical GPU whose configured layout is not a published one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutFinding {
    pub node: NodeId,
    /// Physical GPU index on the node.
    pub phys: u8,
    pub model: &'static str,
    /// `4g.20gb+3g.20gb`, in GRES order.
    pub layout: String,
    /// `None`: legal but unpublished (verify on hardware); `Some(msg)`: not
    /// even legal by the slice model (possible for clusters read from
    /// gres.conf, whose instance starts are not known).
    pub illegal: Option<String>,
}

/// Every physical GPU of `cluster` whose MIG layout is unpublished or
/// illegal, in node order then physical index. Placement is checked on the
/// profiles only (starts are searched), so a cluster read from gres.conf,
/// whose instances all say start 0, is judged by its profiles.
pub fn layout_findings(cluster: &Cluster) -> Vec<LayoutFinding> {
    let mut out = Vec::new();
    for (ni, node) in cluster.nodes.iter().enumerate() {
        for (phys, insts) in node_layouts(node) {
            let Some(d) = node.gpus.iter().find(|d| d.phys == phys && d.mig.is_some()) else {
                continue;
            };
            let model = crate::catalog::model(d.model);
            let profiles: Vec<&'static MigProfile> = insts.iter().map(|i| i.profile).collect();
            let illegal = place_layout(model, &profiles).err();
            if illegal.is_none() && is_published(model, profiles.iter().copied()) {
                continue;
            }
            out.push(LayoutFinding {
                node: NodeId::from_idx(ni),
                phys,
                model: model.name,
                layout: describe(profiles.iter().copied()),
                illegal,
            });
        }
    }
    out
}

/// A device type's share of a whole GPU's memory, in eighths (8 for a whole
/// GPU, the memory slices of a MIG instance): the weight of memory-weighted
/// utilization.
pub fn memory_eighths(t: &GpuType) -> u32 {
    t.mig
        .map_or(u32::from(MIG_MEMORY_SLICES), |p| u32::from(p.memory_slices))
}

/// MIG instances and GPU devices in total that `alloc` holds.
pub fn mig_devices(cluster: &Cluster, alloc: &Allocation) -> (u32, u32) {
    let (mut mig, mut total) = (0u32, 0u32);
    for na in &alloc.nodes {
        let node = cluster.node(na.node);
        for g in gpu_indices(na.gpus) {
            total += 1;
            if node
                .gpus
                .get(usize::from(g))
                .is_some_and(|d| d.mig.is_some())
            {
                mig += 1;
            }
        }
    }
    (mig, total)
}

/// Whether an allocation makes a multi-GPU job on MIG: it holds a MIG
/// instance and more than one GPU device (on one node or several).
pub fn multi_gpu_on_mig(cluster: &Cluster, alloc: &Allocation) -> bool {
    let (mig, total) = mig_devices(cluster, alloc);
    mig >= 1 && total >= 2
}

/// What a request that is certain to be a multi-GPU job on MIG asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigMultiRequest {
    /// GPU devices the request needs at least (over its minimum node count).
    pub devices: u64,
    /// The MIG GRES types it names, in request order.
    pub mig_types: Vec<String>,
}

/// Detects at submission a request that names a MIG type and needs more
/// than one GPU device in all: `--gres=gpu:a100_1g.10gb:2`, one slice per
/// node on two nodes, `--gpus-per-task` over several tasks. Requests that
/// name no MIG type are judged when they start ([`multi_gpu_on_mig`]).
pub fn multi_gpu_mig_request(cluster: &Cluster, req: &JobRequest) -> Option<MigMultiRequest> {
    let nodes = u64::from(req.min_nodes.max(1));
    let mut devices = 0u64;
    let mut mig_types: Vec<String> = Vec::new();
    let mut note = |ty: Option<crate::ids::GpuTypeId>| {
        if let Some(t) = ty.filter(|t| t.idx() < cluster.gpu_types.len()) {
            let gt = cluster.gpu_type(t);
            if gt.mig.is_some() && !mig_types.contains(&gt.name) {
                mig_types.push(gt.name.clone());
            }
        }
    };
    for g in &req.gpus_per_node {
        devices += u64::from(g.count) * nodes;
        note(g.ty);
    }
    if let Some(g) = req.gpus_per_job {
        devices = devices.max(u64::from(g.count));
        note(g.ty);
    }
    if let Some(g) = req.gpus_per_task {
        let tasks = u64::from(req.total_tasks(req.min_nodes.max(1)).max(1));
        devices = devices.max(u64::from(g.count) * tasks);
        note(g.ty);
    }
    (!mig_types.is_empty() && devices >= 2).then_some(MigMultiRequest { devices, mig_types })
}

#[cfg(test)]
mod tests;
