//! MIG-partitioned GPUs under the FGD measure and the six placement policies.
//!
//! A node has CPUs and `num_gpu` MIG-capable GPUs of one model (A100-40GB,
//! A100-80GB, H100-80GB, H200). Each GPU holds a set of placed MIG instances
//! (a profile at a start position, in memory slices). A task asks for CPUs
//! and one MIG profile (`1g.10gb`, `3g.40gb`, …), or for `count` whole GPUs
//! (the 7-slice profile, `7g.80gb`), or for no GPU at all.
//!
//! **Assumption: dynamic placement.** An instance is created when its task is
//! placed, at a start position chosen by the policy, as MIG-capable
//! schedulers that repartition on demand do; nothing is partitioned ahead of
//! time, and instances already placed never move. A placement is legal when
//! the GPU's instances plus the new one pass
//! [`gresim_model::mig::check_placement`] (a start the profile allows, no
//! overlapping memory slices, instance counts and the 7 compute slices
//! respected) and, under [`LayoutRule::Published`] (the default, as the
//! `dynamic-mig` scheduling policy), form one of NVIDIA's published
//! combinations or part of one ([`gresim_model::mig::is_published`]). All the
//! geometry comes from `gresim_model::catalog`; this module only enumerates,
//! once per (model, rule), every layout reachable by adding instances one at
//! a time, so that the hot path is table look-ups.
//!
//! **Measure.** A GPU's idle capacity is its free compute slices, counted in
//! milli-GPU (one slice of 7 is 1000/7 milli). A task can use an idle slice
//! only on a GPU where its profile has a free legal start: on other GPUs the
//! slices are unusable by it, and all the node's idle slices are when the
//! node lacks the CPUs or enough GPUs for it, or when it asks for no GPU
//! ([`MigNodeView`]'s [`Fragmentable`] implementation; the expected value over
//! the task distribution is [`crate::frag::expected_fragmentation`]).
//!
//! **Policies** (same node scores as [`crate::policy`], on the vectors (CPU,
//! GPU compute in milli)): a node is scored, the highest wins, ties to the
//! lowest rank; then the GPU and start are chosen.
//!
//! | policy | GPU | start |
//! |---|---|---|
//! | Random | drawn among the GPUs with a legal start | drawn among the legal starts |
//! | DotProd, GpuPacking, BestFit | tightest fit: fewest free slices, lowest index on ties | [`StartRule`] |
//! | GpuClustering | tightest fit among GPUs already hosting the profile, else tightest fit | [`StartRule`] |
//! | FGD | the (GPU, start) with the least fragmentation after placing; ties to the lowest GPU, then in [`StartRule`] order | |
//!
//! Whole-GPU tasks take the lowest-indexed free GPUs under every policy, as
//! in the sharing model. GPU Clustering's kinds are the profiles (one kind
//! per profile, one per count of whole GPUs); GPU Packing's "shared GPU" is a
//! GPU with instances on it and a legal start for the profile.

use std::collections::BTreeMap;

use gresim_model::catalog::{GpuModel, MigProfile, MIG_COMPUTE_SLICES};
use gresim_model::mig::{check_placement, is_published};
use gresim_model::MigInstance;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::frag::{expected_fragmentation, Fragmentable};
use crate::model::{MAX_GPUS, MILLI};
use crate::policy::{
    best_fit_raw, dot_prod_raw, fgd_outcome_score, gpu_clustering_raw, packing_free_node,
    packing_used_node, PolicyKind,
};
use crate::sim::Slicing;

/// Milli-GPUs in one compute slice.
pub const SLICE_MILLI: f64 = MILLI as f64 / MIG_COMPUTE_SLICES as f64;
/// Most MIG profiles a model may have.
pub const MAX_PROFILES: usize = 8;
/// GPU Clustering's kinds: one per profile, one per count of whole GPUs.
const KINDS: usize = MAX_PROFILES + MAX_GPUS + 1;

/// Which layouts a GPU may reach.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum LayoutRule {
    /// NVIDIA's published combinations and their parts (the default).
    Published,
    /// Everything the slice model admits, such as `4g + 3g` on an A100.
    Legal,
}

/// Where the deterministic policies put an instance on the GPU they chose.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum StartRule {
    /// The highest legal start (the default): small instances fill a GPU from
    /// the top, keeping the low starts that 3g, 4g and 7g need free. Our
    /// choice, not NVIDIA's documented behaviour.
    Highest,
    /// The lowest legal start.
    Lowest,
}

/// One layout a GPU can reach.
#[derive(Clone, Debug)]
struct Layout {
    /// Instances in increasing start order.
    instances: Vec<MigInstance>,
    free_slices: u8,
    /// Instances per profile slot.
    counts: [u8; MAX_PROFILES],
    /// Per profile slot: the legal starts for one more instance and the layout
    /// each leads to, in increasing start order.
    moves: Vec<Vec<(u8, u16)>>,
}

/// Every layout one GPU of a model can reach from empty by adding instances,
/// with the moves between them.
#[derive(Clone, Debug)]
pub struct MigGeometry {
    pub model: &'static GpuModel,
    pub rule: LayoutRule,
    layouts: Vec<Layout>,
    /// The profile slot of the whole GPU (7 compute slices).
    whole: u8,
}

/// The empty GPU's layout id.
pub const EMPTY: u16 = 0;

impl MigGeometry {
    /// Enumerates the layouts of `model` under `rule`. Errors for a model
    /// without MIG.
    pub fn new(model: &'static GpuModel, rule: LayoutRule) -> Result<Self, String> {
        let profiles = model.mig_profiles;
        if profiles.is_empty() {
            return Err(format!("{} does not support MIG", model.name));
        }
        if profiles.len() > MAX_PROFILES {
            return Err(format!(
                "{} has {} MIG profiles; at most {MAX_PROFILES} are supported",
                model.name,
                profiles.len()
            ));
        }
        let whole = profiles
            .iter()
            .position(|p| p.compute_slices == MIG_COMPUTE_SLICES)
            .ok_or_else(|| format!("{} has no whole-GPU MIG profile", model.name))?
            as u8;
        type Key = Vec<(u8, u8)>; // (start, slot) in start order
        let key_of = |insts: &[MigInstance]| -> Key {
            insts
                .iter()
                .map(|i| (i.start, slot_of(model, i.profile)))
                .collect()
        };
        let mut layouts: Vec<Layout> = vec![Layout {
            instances: Vec::new(),
            free_slices: MIG_COMPUTE_SLICES,
            counts: [0; MAX_PROFILES],
            moves: Vec::new(),
        }];
        let mut index: BTreeMap<Key, u16> = BTreeMap::new();
        index.insert(Vec::new(), EMPTY);
        let mut next = 0usize;
        while next < layouts.len() {
            let cur = layouts[next].instances.clone();
            let mut moves = vec![Vec::new(); profiles.len()];
            for (slot, p) in profiles.iter().enumerate() {
                for &start in p.starts {
                    let mut cand = cur.clone();
                    cand.push(MigInstance { profile: p, start });
                    cand.sort_by_key(|i| i.start);
                    if check_placement(model, &cand).is_err() {
                        continue;
                    }
                    if rule == LayoutRule::Published
                        && !is_published(model, cand.iter().map(|i| i.profile))
                    {
                        continue;
                    }
                    let key = key_of(&cand);
                    let id = match index.get(&key) {
                        Some(&id) => id,
                        None => {
                            let id = u16::try_from(layouts.len())
                                .map_err(|_| "too many MIG layouts".to_string())?;
                            let mut counts = [0u8; MAX_PROFILES];
                            for i in &cand {
                                counts[usize::from(slot_of(model, i.profile))] += 1;
                            }
                            let used: u8 = cand.iter().map(|i| i.profile.compute_slices).sum();
                            layouts.push(Layout {
                                instances: cand,
                                free_slices: MIG_COMPUTE_SLICES - used,
                                counts,
                                moves: Vec::new(),
                            });
                            index.insert(key, id);
                            id
                        }
                    };
                    moves[slot].push((start, id));
                }
            }
            layouts[next].moves = moves;
            next += 1;
        }
        Ok(MigGeometry {
            model,
            rule,
            layouts,
            whole,
        })
    }

    /// Number of reachable layouts (the empty GPU included).
    pub fn layout_count(&self) -> usize {
        self.layouts.len()
    }

    /// The model's profiles, by slot.
    pub fn profiles(&self) -> &'static [MigProfile] {
        self.model.mig_profiles
    }

    /// The profile slot of `name` (case-insensitive), if the model has it.
    pub fn profile_slot(&self, name: &str) -> Option<u8> {
        self.model
            .mig_profiles
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(name))
            .map(|i| i as u8)
    }

    /// The slot of the whole-GPU profile.
    pub fn whole_slot(&self) -> u8 {
        self.whole
    }

    /// The smallest profile with at least `slices` compute slices (fewest
    /// compute slices, then fewest memory slices).
    pub fn smallest_with(&self, slices: u8) -> u8 {
        let ps = self.model.mig_profiles;
        (0..ps.len())
            .filter(|&i| ps[i].compute_slices >= slices)
            .min_by_key(|&i| (ps[i].compute_slices, ps[i].memory_slices))
            .map_or(self.whole, |i| i as u8)
    }

    /// The instances of layout `id`, in start order.
    pub fn instances(&self, id: u16) -> &[MigInstance] {
        &self.layouts[usize::from(id)].instances
    }

    /// Free compute slices of layout `id`.
    #[inline]
    pub fn free_slices(&self, id: u16) -> u8 {
        self.layouts[usize::from(id)].free_slices
    }

    /// Instances of profile `slot` in layout `id`.
    #[inline]
    pub fn hosts(&self, id: u16, slot: u8) -> u8 {
        self.layouts[usize::from(id)].counts[usize::from(slot)]
    }

    /// The legal starts of one more instance of `slot` on layout `id`, with
    /// the layouts they lead to, in increasing start order.
    #[inline]
    pub fn moves(&self, id: u16, slot: u8) -> &[(u8, u16)] {
        &self.layouts[usize::from(id)].moves[usize::from(slot)]
    }

    /// Whether layout `id` has a legal start for `slot`.
    #[inline]
    pub fn can_host(&self, id: u16, slot: u8) -> bool {
        !self.moves(id, slot).is_empty()
    }

    /// The layout after placing `slot` at `start` on layout `id`, if legal.
    pub fn place(&self, id: u16, slot: u8, start: u8) -> Option<u16> {
        self.moves(id, slot)
            .iter()
            .find(|m| m.0 == start)
            .map(|m| m.1)
    }

    /// The move the start rule picks for `slot` on layout `id`.
    #[inline]
    fn pick_start(&self, id: u16, slot: u8, rule: StartRule) -> Option<(u8, u16)> {
        let m = self.moves(id, slot);
        match rule {
            StartRule::Highest => m.last().copied(),
            StartRule::Lowest => m.first().copied(),
        }
    }
}

fn slot_of(model: &GpuModel, p: &MigProfile) -> u8 {
    model
        .mig_profiles
        .iter()
        .position(|q| q == p)
        .expect("instances are built from the model's own profiles") as u8
}

/// A task of the MIG workload.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct MigTask {
    pub cpu_milli: u64,
    /// Profile slot in the model's profile table (ignored when `count == 0`).
    pub profile: u8,
    /// Instances: 0 for a CPU-only task, 1 for one MIG instance, more only
    /// for whole GPUs (MIG instances cannot join a multi-GPU job).
    pub count: u8,
}

impl MigTask {
    /// Compute slices requested.
    #[inline]
    pub fn slices(&self, geo: &MigGeometry) -> u64 {
        if self.count == 0 {
            0
        } else {
            u64::from(self.count)
                * u64::from(geo.profiles()[usize::from(self.profile)].compute_slices)
        }
    }

    /// Checks the task against the model: a known profile, and more than one
    /// instance only of the whole GPU.
    pub fn check(&self, geo: &MigGeometry) -> Result<(), String> {
        if self.count == 0 {
            return Ok(());
        }
        if usize::from(self.profile) >= geo.profiles().len() {
            return Err(format!(
                "profile slot {} is not one of {}'s",
                self.profile, geo.model.name
            ));
        }
        if usize::from(self.count) > MAX_GPUS {
            return Err(format!("at most {MAX_GPUS} GPUs per task"));
        }
        if self.count > 1 && self.profile != geo.whole {
            return Err(format!(
                "{} × {}: only whole GPUs ({}) can be asked for more than once",
                self.count,
                geo.profiles()[usize::from(self.profile)].name,
                geo.profiles()[usize::from(geo.whole)].name
            ));
        }
        Ok(())
    }

    /// `2×7g.80gb`, `3g.40gb`, `cpu-only`.
    pub fn describe(&self, geo: &MigGeometry) -> String {
        let name = geo.profiles()[usize::from(self.profile)].name;
        match self.count {
            0 => "cpu-only".to_string(),
            1 => name.to_string(),
            n => format!("{n}x{name}"),
        }
    }

    /// GPU Clustering's kind: `None` for no GPU.
    #[inline]
    fn kind(&self) -> Option<usize> {
        match self.count {
            0 => None,
            1 => Some(usize::from(self.profile)),
            n => Some(MAX_PROFILES + usize::from(n)),
        }
    }
}

/// A node as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MigNodeSpec {
    pub name: String,
    pub cpu_milli: u64,
    pub num_gpu: u8,
}

/// The free resources of one node: its CPUs and each GPU's layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MigNodeState {
    pub cpu_left: u64,
    pub num_gpu: u8,
    /// Layout id of each GPU ([`MigGeometry`]); entries past `num_gpu` unused.
    pub gpus: [u16; MAX_GPUS],
    /// Tasks on this node per GPU Clustering kind.
    kinds: [u32; KINDS],
}

impl MigNodeState {
    /// A node with nothing placed on it. `num_gpu` is capped at
    /// [`MAX_GPUS`] by the caller.
    pub fn new(spec: &MigNodeSpec) -> Self {
        MigNodeState {
            cpu_left: spec.cpu_milli,
            num_gpu: spec.num_gpu,
            gpus: [EMPTY; MAX_GPUS],
            kinds: [0; KINDS],
        }
    }

    /// Layout ids of the node's GPUs.
    #[inline]
    pub fn layouts(&self) -> &[u16] {
        &self.gpus[..usize::from(self.num_gpu)]
    }

    /// Free compute slices of the node.
    #[inline]
    pub fn free_slices(&self, geo: &MigGeometry) -> u64 {
        self.layouts()
            .iter()
            .map(|&l| u64::from(geo.free_slices(l)))
            .sum()
    }

    /// The view the measure takes.
    #[inline]
    pub fn view<'a>(&'a self, geo: &'a MigGeometry) -> MigNodeView<'a> {
        MigNodeView {
            geo,
            cpu_left: self.cpu_left,
            gpus: self.layouts(),
        }
    }

    /// GPUs with a legal start for the task's profile.
    fn able(&self, geo: &MigGeometry, t: &MigTask) -> usize {
        self.layouts()
            .iter()
            .filter(|&&l| geo.can_host(l, t.profile))
            .count()
    }

    /// Whether the task fits: CPUs, and enough GPUs with a legal start.
    pub fn fits(&self, geo: &MigGeometry, t: &MigTask) -> bool {
        self.cpu_left >= t.cpu_milli && (t.count == 0 || self.able(geo, t) >= usize::from(t.count))
    }

    /// Places the task: its CPUs, and one instance at each `(gpu, start)`.
    /// Panics on an illegal move: the policies only give legal ones.
    pub fn take(&mut self, geo: &MigGeometry, t: &MigTask, devices: &[(usize, u8)]) {
        self.cpu_left -= t.cpu_milli;
        for &(g, start) in devices {
            self.gpus[g] = geo
                .place(self.gpus[g], t.profile, start)
                .expect("a policy chose an illegal MIG placement");
        }
        if let Some(k) = t.kind() {
            self.kinds[k] += 1;
        }
    }
}

/// A node's free resources as the measure sees them.
#[derive(Copy, Clone, Debug)]
pub struct MigNodeView<'a> {
    pub geo: &'a MigGeometry,
    pub cpu_left: u64,
    pub gpus: &'a [u16],
}

impl Fragmentable<MigTask> for MigNodeView<'_> {
    fn idle(&self) -> f64 {
        let s: u32 = self
            .gpus
            .iter()
            .map(|&l| u32::from(self.geo.free_slices(l)))
            .sum();
        f64::from(s) * SLICE_MILLI
    }

    fn unusable_by(&self, t: &MigTask) -> f64 {
        let (mut idle, mut blocked, mut able) = (0u32, 0u32, 0usize);
        for &l in self.gpus {
            let f = u32::from(self.geo.free_slices(l));
            idle += f;
            if t.count > 0 && self.geo.can_host(l, t.profile) {
                able += 1;
            } else {
                blocked += f;
            }
        }
        let unusable = if t.count == 0 || self.cpu_left < t.cpu_milli || able < usize::from(t.count)
        {
            idle
        } else {
            blocked
        };
        f64::from(unusable) * SLICE_MILLI
    }
}

/// The fragmentation of a MIG node under a task distribution `(task, p)`.
#[inline]
pub fn mig_node_frag(view: MigNodeView<'_>, dist: &[(MigTask, f64)]) -> f64 {
    expected_fragmentation(&view, dist.iter().copied())
}

/// MIG as a [`Slicing`] for the simulator: the geometry, the task
/// distribution the measure and FGD use, and the start rule.
#[derive(Copy, Clone, Debug)]
pub struct MigSlicing<'a> {
    pub geo: &'a MigGeometry,
    pub dist: &'a [(MigTask, f64)],
    pub start: StartRule,
}

impl MigSlicing<'_> {
    /// Whether the task takes whole GPUs (or none): then every policy takes
    /// the lowest-indexed GPUs that can host it.
    #[inline]
    fn exclusive(&self, t: &MigTask) -> bool {
        t.count != 1 || t.profile == self.geo.whole
    }

    /// The lowest-indexed GPUs with a legal start for the task, each at the
    /// start rule's start.
    fn lowest_devices(&self, n: &MigNodeState, t: &MigTask) -> Option<Vec<(usize, u8)>> {
        let want = usize::from(t.count);
        let devs: Vec<(usize, u8)> = n
            .layouts()
            .iter()
            .enumerate()
            .filter_map(|(g, &l)| {
                self.geo
                    .pick_start(l, t.profile, self.start)
                    .map(|(s, _)| (g, s))
            })
            .take(want)
            .collect();
        (devs.len() == want).then_some(devs)
    }

    /// The tightest-fitting GPU for one instance (fewest free slices, lowest
    /// index on ties); with `same_first`, among the GPUs already hosting the
    /// profile if there are any.
    fn tightest(&self, n: &MigNodeState, t: &MigTask, same_first: bool) -> Option<usize> {
        let mut best: Option<(bool, u8, usize)> = None;
        for (g, &l) in n.layouts().iter().enumerate() {
            if !self.geo.can_host(l, t.profile) {
                continue;
            }
            let other = same_first && self.geo.hosts(l, t.profile) == 0;
            let key = (other, self.geo.free_slices(l), g);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        best.map(|b| b.2)
    }

    /// FGD: the node's score is that of its best placement, `100·σ((F_before
    /// − F_after)/1000)` truncated as in the sharing model; the placement of
    /// one instance is the (GPU, start) with the least `F_after` (exact, not
    /// truncated: within a node, an integer score would tie most starts and
    /// leave the choice to the start rule), the first in GPU order then start
    /// rule order among equals. Whole-GPU and CPU-only tasks have one outcome.
    pub fn fgd_score_and_device(
        &self,
        n: &MigNodeState,
        t: &MigTask,
        frag_before: f64,
    ) -> (i64, Option<Vec<(usize, u8)>>) {
        let mut gpus = n.gpus;
        let cpu_left = n.cpu_left.saturating_sub(t.cpu_milli);
        let ng = usize::from(n.num_gpu);
        let frag_of = |gpus: &[u16]| {
            mig_node_frag(
                MigNodeView {
                    geo: self.geo,
                    cpu_left,
                    gpus,
                },
                self.dist,
            )
        };
        if self.exclusive(t) {
            let Some(devs) = self.lowest_devices(n, t) else {
                return (0, None);
            };
            for &(g, s) in &devs {
                gpus[g] = self.geo.place(gpus[g], t.profile, s).unwrap_or(gpus[g]);
            }
            let f = frag_of(&gpus[..ng]);
            return (fgd_outcome_score(frag_before, f), Some(devs));
        }
        let mut best: Option<(f64, usize, u8)> = None;
        // Candidates turning the same layout into the same layout give the same outcome.
        let mut seen: Vec<(u16, u16, f64)> = Vec::new();
        for g in 0..ng {
            let from = n.gpus[g];
            let moves = self.geo.moves(from, t.profile);
            for k in 0..moves.len() {
                let (s, to) = match self.start {
                    StartRule::Highest => moves[moves.len() - 1 - k],
                    StartRule::Lowest => moves[k],
                };
                let f = if let Some(k) = seen.iter().find(|k| k.0 == from && k.1 == to) {
                    k.2
                } else {
                    gpus[g] = to;
                    let f = frag_of(&gpus[..ng]);
                    gpus[g] = from;
                    seen.push((from, to, f));
                    f
                };
                if best.is_none_or(|b| f < b.0) {
                    best = Some((f, g, s));
                }
            }
        }
        match best {
            Some((f, g, s)) => (fgd_outcome_score(frag_before, f), Some(vec![(g, s)])),
            None => (0, None),
        }
    }
}

impl Slicing for MigSlicing<'_> {
    type Node = MigNodeState;
    type Shape = MigTask;
    type Devices = Vec<(usize, u8)>;

    #[inline]
    fn fits(&self, n: &MigNodeState, t: &MigTask) -> bool {
        n.fits(self.geo, t)
    }

    fn score(&self, policy: PolicyKind, n: &MigNodeState, t: &MigTask, frag: f64) -> i64 {
        let free = n.free_slices(self.geo);
        let req = t.slices(self.geo);
        match policy {
            PolicyKind::Random => 0,
            PolicyKind::DotProd => {
                if n.cpu_left < t.cpu_milli {
                    return 0;
                }
                dot_prod_raw(
                    n.cpu_left as f64,
                    t.cpu_milli as f64,
                    free as f64 * SLICE_MILLI,
                    req as f64 * SLICE_MILLI,
                )
            }
            PolicyKind::BestFit => best_fit_raw(
                [n.cpu_left as f64, free as f64 * SLICE_MILLI],
                [t.cpu_milli as f64, req as f64 * SLICE_MILLI],
            ),
            PolicyKind::GpuClustering => {
                let Some(kind) = t.kind() else {
                    return 0;
                };
                let kinds = n.kinds.iter().filter(|&&c| c > 0).count();
                let free_milli = (free * u64::from(MILLI) / u64::from(MIG_COMPUTE_SLICES)) as i64;
                gpu_clustering_raw(n.kinds[kind] > 0, kinds, free_milli)
            }
            PolicyKind::GpuPacking => {
                if t.count == 0 {
                    return 0;
                }
                let full = MIG_COMPUTE_SLICES;
                let layouts = n.layouts();
                let fully_free = layouts
                    .iter()
                    .filter(|&&l| self.geo.free_slices(l) == full)
                    .count() as i64;
                if fully_free == i64::from(n.num_gpu) {
                    return packing_free_node(fully_free);
                }
                // The GPUs the task would take: least free first, among those it fits.
                let mut order: Vec<usize> = (0..layouts.len()).collect();
                order.sort_by_key(|&g| self.geo.free_slices(layouts[g]));
                let mut need = usize::from(t.count);
                let (mut fully_free_used, mut left_pct) = (0i64, 0i64);
                for g in order {
                    if need == 0 {
                        break;
                    }
                    let l = layouts[g];
                    if self.geo.can_host(l, t.profile) {
                        need -= 1;
                        let f = self.geo.free_slices(l);
                        if f == full {
                            fully_free_used += 1;
                        }
                        left_pct += i64::from(f) * 100 / i64::from(full);
                    }
                }
                if need != 0 {
                    return 0;
                }
                packing_used_node(fully_free_used, left_pct)
            }
            PolicyKind::Fgd => self.fgd_score_and_device(n, t, frag).0,
        }
    }

    fn devices(
        &self,
        policy: PolicyKind,
        n: &MigNodeState,
        t: &MigTask,
        frag: f64,
        rng: &mut ChaCha8Rng,
    ) -> Option<Vec<(usize, u8)>> {
        if t.count == 0 {
            return Some(Vec::new());
        }
        if self.exclusive(t) {
            return self.lowest_devices(n, t);
        }
        let g = match policy {
            PolicyKind::Random => {
                let able: Vec<usize> = (0..usize::from(n.num_gpu))
                    .filter(|&g| self.geo.can_host(n.gpus[g], t.profile))
                    .collect();
                if able.is_empty() {
                    return None;
                }
                let g = able[rng.random_range(0..able.len())];
                let m = self.geo.moves(n.gpus[g], t.profile);
                return Some(vec![(g, m[rng.random_range(0..m.len())].0)]);
            }
            PolicyKind::Fgd => return self.fgd_score_and_device(n, t, frag).1,
            PolicyKind::GpuClustering => self.tightest(n, t, true)?,
            _ => self.tightest(n, t, false)?,
        };
        let (s, _) = self.geo.pick_start(n.gpus[g], t.profile, self.start)?;
        Some(vec![(g, s)])
    }

    #[inline]
    fn take(&self, n: &mut MigNodeState, t: &MigTask, d: &Vec<(usize, u8)>) {
        n.take(self.geo, t, d);
    }

    #[inline]
    fn frag(&self, n: &MigNodeState) -> f64 {
        mig_node_frag(n.view(self.geo), self.dist)
    }

    #[inline]
    fn idle(&self, n: &MigNodeState) -> u64 {
        n.free_slices(self.geo)
    }

    #[inline]
    fn request(&self, t: &MigTask) -> u64 {
        t.slices(self.geo)
    }

    fn unit_milli(&self) -> f64 {
        SLICE_MILLI
    }
}

#[cfg(test)]
mod tests;
