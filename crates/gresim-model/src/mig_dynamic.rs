//! Dynamic MIG: physical GPUs whose MIG layout may change during a run.
//!
//! Slurm's MIG is static: each instance is a typed GPU GRES that exists from
//! slurmd's start. To let a policy repartition a GPU while the scheduler
//! keeps seeing typed GRES, a dynamic GPU owns a fixed block of
//! [`SLOTS_PER_GPU`] GRES indices on its node (no layout has more instances
//! than there are compute slices). The instances of the current layout sit in
//! the first slots of the block, in start order, typed like static instances
//! (`a100_1g.10gb`); the remaining slots hold no device: they are *offline*,
//! never free and never allocated, and carry the type `<prefix>_unconfigured`.
//! A GPU with MIG off (the whole GPU) uses its first slot with the whole-GPU
//! type (`a100`).
//!
//! GRES indices never move, so allocations of running jobs stay valid while
//! other GPUs of the node are repartitioned. Only the engine changes a layout
//! ([`crate::Cluster::begin_mig_reconfig`], [`crate::Cluster::finish_mig_reconfig`]),
//! only for a GPU none of whose devices is allocated, and only to a layout
//! [`check_layout`] accepts.

use crate::catalog::{self, GpuModel, MigProfile, MIG_COMPUTE_SLICES, MIG_MEMORY_SLICES};
use crate::cluster::MigInstance;
use crate::ids::{GpuModelId, GpuTypeId, NodeId};
use crate::job::Time;

/// Seconds a GPU is out of service while it is repartitioned, unless the
/// scenario says otherwise. An assumption, not a measurement: destroying and
/// creating GPU instances takes seconds with `nvidia-smi mig`, switching MIG
/// mode needs a GPU reset with the GPU's services stopped (NVIDIA DGX A100
/// User Guide, "Multi-Instance GPU"), and Slurm must then learn the new GRES
/// (slurmd restart). See docs/mig.md.
pub const DEFAULT_RECONFIG_DELAY: u64 = 30;

/// GRES indices a dynamic GPU owns: the most instances one layout can hold.
pub const SLOTS_PER_GPU: usize = MIG_COMPUTE_SLICES as usize;

/// A MIG layout of one GPU: instances in increasing start order. Empty means
/// MIG is off and the GPU is one whole device.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MigLayout(pub Vec<MigInstance>);

impl MigLayout {
    /// MIG off: the whole GPU.
    pub fn whole() -> Self {
        MigLayout(Vec::new())
    }
    pub fn is_whole(&self) -> bool {
        self.0.is_empty()
    }
    /// Devices the layout gives (1 for the whole GPU).
    pub fn devices(&self) -> usize {
        self.0.len().max(1)
    }
    /// Compute slices the layout uses (7 for the whole GPU).
    pub fn compute_slices(&self) -> u32 {
        if self.is_whole() {
            u32::from(MIG_COMPUTE_SLICES)
        } else {
            self.0
                .iter()
                .map(|i| u32::from(i.profile.compute_slices))
                .sum()
        }
    }
    /// `whole`, or the profile names joined by `+`: `3g.40gb+2g.20gb+1g.10gb+1g.10gb`.
    pub fn describe(&self) -> String {
        if self.is_whole() {
            "whole".to_string()
        } else {
            self.0
                .iter()
                .map(|i| i.profile.name)
                .collect::<Vec<_>>()
                .join("+")
        }
    }
}

/// Checks that `layout` is a legal MIG layout of `model`: every profile is
/// the model's, starts at one of its valid positions, the instances' memory
/// slices do not overlap, no profile exceeds its instance count, and the
/// compute slices add up to at most 7 ([`crate::mig::check_placement`]), and
/// they are listed in increasing start order (their slot order). The message
/// names the profile at fault.
pub fn check_layout(model: &GpuModel, layout: &MigLayout) -> Result<(), String> {
    if layout.is_whole() {
        return Ok(());
    }
    crate::mig::check_placement(model, &layout.0)?;
    if let Some(w) = layout.0.windows(2).find(|w| w[0].start >= w[1].start) {
        return Err(format!(
            "instances of a layout must be in increasing start order (at {})",
            w[1].profile.name
        ));
    }
    let compute: u8 = layout.0.iter().map(|i| i.profile.compute_slices).sum();
    if compute > MIG_COMPUTE_SLICES {
        return Err(format!(
            "the layout needs more than {MIG_COMPUTE_SLICES} compute slices"
        ));
    }
    Ok(())
}

/// Whether NVIDIA publishes `layout` for `model` (or a part of a published
/// combination; see [`crate::mig::is_published`]). The whole GPU is.
pub fn is_published(model: &GpuModel, layout: &MigLayout) -> bool {
    crate::mig::is_published(model, layout.0.iter().map(|i| i.profile))
}

/// Every legal layout of `model`, one placement per multiset of profiles
/// (the first in a search by increasing start), in a fixed order: the whole
/// GPU first, then by the search order. Empty for models without MIG.
pub fn legal_layouts(model: &GpuModel) -> Vec<MigLayout> {
    if model.mig_profiles.is_empty() {
        return Vec::new();
    }
    fn search(
        model: &GpuModel,
        slice: u8,
        used: u16,
        cur: &mut Vec<MigInstance>,
        seen: &mut std::collections::BTreeSet<Vec<usize>>,
        out: &mut Vec<MigLayout>,
    ) {
        if slice >= MIG_MEMORY_SLICES {
            if cur.is_empty() {
                return;
            }
            let layout = MigLayout(cur.clone());
            if check_layout(model, &layout).is_err() {
                return;
            }
            let mut key: Vec<usize> = cur
                .iter()
                .map(|i| profile_index(model, i.profile))
                .collect();
            key.sort_unstable();
            if seen.insert(key) {
                out.push(layout);
            }
            return;
        }
        // Place an instance starting at this memory slice, or leave it empty.
        for p in model.mig_profiles {
            if !p.starts.contains(&slice) || slice + p.memory_slices > MIG_MEMORY_SLICES {
                continue;
            }
            let span = ((1u16 << p.memory_slices) - 1) << slice;
            if used & span != 0 {
                continue;
            }
            cur.push(MigInstance {
                profile: p,
                start: slice,
            });
            search(model, slice + p.memory_slices, used | span, cur, seen, out);
            cur.pop();
        }
        search(model, slice + 1, used, cur, seen, out);
    }
    let mut out = vec![MigLayout::whole()];
    let mut seen = std::collections::BTreeSet::new();
    search(model, 0, 0, &mut Vec::new(), &mut seen, &mut out);
    out
}

/// Index of `p` among `model`'s profiles.
pub fn profile_index(model: &GpuModel, p: &MigProfile) -> usize {
    model
        .mig_profiles
        .iter()
        .position(|q| q == p)
        .unwrap_or(usize::MAX)
}

/// One physical GPU whose layout may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynGpu {
    pub node: NodeId,
    /// Physical index on the node.
    pub phys: u8,
    pub model: GpuModelId,
    /// The first GRES index of its block of [`SLOTS_PER_GPU`].
    pub first_slot: u8,
    /// GRES type of the whole GPU (`a100`).
    pub whole_ty: GpuTypeId,
    /// GRES type of a slot without a device (`a100_unconfigured`).
    pub unconfigured_ty: GpuTypeId,
    /// GRES type of each of the model's MIG profiles, in catalog order.
    pub profile_ty: Vec<GpuTypeId>,
    /// The layout in effect (during a reconfiguration: the one being left).
    pub layout: MigLayout,
    /// A reconfiguration under way: when it completes, and to what.
    pub pending: Option<(Time, MigLayout)>,
}

impl DynGpu {
    /// The mask of the GPU's block of GRES indices.
    pub fn slot_mask(&self) -> u64 {
        ((1u64 << SLOTS_PER_GPU) - 1) << self.first_slot
    }
    /// The GRES indices holding a device now (none while reconfiguring).
    pub fn online_mask(&self) -> u64 {
        if self.pending.is_some() {
            0
        } else {
            ((1u64 << self.layout.devices()) - 1) << self.first_slot
        }
    }
    /// The type of each device `layout` gives, in slot order.
    pub fn device_types(&self, layout: &MigLayout) -> Vec<GpuTypeId> {
        if layout.is_whole() {
            return vec![self.whole_ty];
        }
        let m = catalog::model(self.model);
        layout
            .0
            .iter()
            .map(|i| self.profile_ty[profile_index(m, i.profile)])
            .collect()
    }
}

/// A reconfiguration the engine applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigChange {
    /// When the GPU was taken out of service.
    pub start: Time,
    /// When the new layout came into service.
    pub ready: Time,
    pub node: NodeId,
    pub phys: u8,
    pub from: MigLayout,
    pub to: MigLayout,
}

/// The dynamic-MIG GPUs of a cluster, their layouts, and the log of changes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DynamicMig {
    /// Seconds a GPU is out of service while its layout changes.
    pub reconfig_delay: u64,
    /// The GPUs, in node-table order, then physical index.
    pub gpus: Vec<DynGpu>,
    /// Reconfigurations completed so far, in completion order.
    pub log: Vec<MigChange>,
    /// Per node: GRES indices without a device now.
    offline: Vec<u64>,
}

impl DynamicMig {
    /// Builds the table for a cluster of `nodes` nodes; `gpus` must be sorted
    /// by (node, phys). Offline masks follow from the layouts.
    pub fn new(nodes: usize, reconfig_delay: u64, gpus: Vec<DynGpu>) -> Self {
        let mut d = DynamicMig {
            reconfig_delay,
            gpus,
            log: Vec::new(),
            offline: vec![0; nodes],
        };
        for g in &d.gpus {
            d.offline[g.node.idx()] |= g.slot_mask() & !g.online_mask();
        }
        d
    }

    /// GRES indices of `node` without a device now.
    #[inline]
    pub fn offline(&self, node: NodeId) -> u64 {
        self.offline.get(node.idx()).copied().unwrap_or(0)
    }

    /// GRES indices of `node` that belong to dynamic GPUs.
    pub fn slots(&self, node: NodeId) -> u64 {
        self.gpus
            .iter()
            .filter(|g| g.node == node)
            .fold(0, |m, g| m | g.slot_mask())
    }

    /// Dynamic GPUs on `node`.
    pub fn gpus_on(&self, node: NodeId) -> usize {
        self.gpus.iter().filter(|g| g.node == node).count()
    }

    /// Whether `ty` is a type some dynamic GPU can offer (a profile of its
    /// model, or the whole GPU).
    pub fn can_offer(&self, ty: GpuTypeId) -> bool {
        self.gpus
            .iter()
            .any(|g| g.whole_ty == ty || g.profile_ty.contains(&ty))
    }

    /// Repartitionings begun (completed or under way).
    pub fn reconfigurations(&self) -> usize {
        self.log.len() + self.gpus.iter().filter(|g| g.pending.is_some()).count()
    }

    /// GPU-seconds GPUs spent out of service for repartitioning, up to
    /// `end`: lost capacity, since no job can use a GPU being repartitioned.
    pub fn reconfig_gpu_secs(&self, end: Time) -> u64 {
        let done: u64 = self
            .log
            .iter()
            .map(|c| c.ready.min(end).saturating_sub(c.start))
            .sum();
        let under_way: u64 = self
            .gpus
            .iter()
            .filter_map(|g| g.pending.as_ref())
            .map(|(ready, _)| {
                let start = ready.saturating_sub(self.reconfig_delay);
                end.min(*ready).saturating_sub(start)
            })
            .sum();
        done + under_way
    }

    pub(crate) fn begin(&mut self, gpu: usize, to: MigLayout, ready: Time) -> Result<u64, String> {
        let g = self
            .gpus
            .get_mut(gpu)
            .ok_or_else(|| format!("no dynamic MIG GPU {gpu}"))?;
        if g.pending.is_some() {
            return Err(format!(
                "GPU {} of node {} is already being reconfigured",
                g.phys,
                g.node.idx()
            ));
        }
        check_layout(catalog::model(g.model), &to)?;
        let was_online = g.online_mask();
        g.pending = Some((ready, to));
        let node = g.node.idx();
        self.offline[node] |= was_online;
        Ok(was_online)
    }

    pub(crate) fn finish(&mut self, gpu: usize, start: Time, now: Time) -> Result<(), String> {
        let g = self
            .gpus
            .get_mut(gpu)
            .ok_or_else(|| format!("no dynamic MIG GPU {gpu}"))?;
        let Some((_, to)) = g.pending.take() else {
            return Err(format!("GPU {} is not being reconfigured", g.phys));
        };
        let from = std::mem::replace(&mut g.layout, to.clone());
        let online = g.online_mask();
        let node = g.node;
        self.offline[node.idx()] &= !online;
        self.log.push(MigChange {
            start,
            ready: now,
            node,
            phys: g.phys,
            from,
            to,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests;
