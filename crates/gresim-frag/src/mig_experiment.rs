//! The FGD paper's experiment on MIG-partitioned GPUs ([`crate::mig`]).
//!
//! The protocol is the sharing experiment's ([`crate::experiment`]), with
//! GPU capacity counted in compute slices (7 per GPU):
//!
//! 1. the workload per seed: with a synthetic **mix** ([`MigSource::Mix`]),
//!    tasks are drawn independently by weight; with **OpenB** tasks mapped to
//!    MIG ([`MigSource::Originals`], [`map_openb_task`]), the original tasks
//!    are shuffled and then drawn uniformly with replacement, as the paper
//!    does. Either way tasks are appended until the next one's per-GPU
//!    compute would take the total requested compute past `tune` (1.3) ×
//!    the cluster's compute slices;
//! 2. the nodes get a seeded random tie-break rank;
//! 3. each policy places the tasks one at a time, never removing any;
//! 4. allocation and fragmentation are read off at each whole percent of
//!    arrived compute, as in the sharing experiment.
//!
//! The task distribution of the measure and of FGD is the mix's weights, or
//! for OpenB the most frequent task types covering 95 % of the original
//! tasks (as the sharing experiment's "typical pods").
//!
//! Every run is a pure function of (seed, policy); the grid runs on rayon
//! and gives the same results on any number of threads.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::experiment::{grid, node_ranks, on_pool, tune_up, RunResult};
use crate::frag::most_frequent;
use crate::mig::{MigGeometry, MigNodeSpec, MigNodeState, MigSlicing, MigTask, StartRule};
use crate::model::{TaskSpec, MAX_GPUS, MILLI};
use crate::openb::Cluster;
use crate::policy::PolicyKind;
use crate::sim::run_sliced;

/// Where the tasks come from.
#[derive(Clone, Debug, PartialEq)]
pub enum MigSource {
    /// Independent draws, `weights[i]` for `types[i]`.
    Mix { weights: Vec<u64> },
    /// An original workload (indices into `types`, in task-name order),
    /// shuffled, then resampled as the paper does.
    Originals { tasks: Vec<u32> },
}

/// A MIG workload ready to run.
#[derive(Clone, Debug)]
pub struct MigExperiment {
    pub geo: MigGeometry,
    pub start: StartRule,
    pub nodes: Vec<MigNodeSpec>,
    /// Distinct task types.
    pub types: Vec<MigTask>,
    pub source: MigSource,
    /// The task distribution of the measure and of FGD.
    pub dist: Vec<(MigTask, f64)>,
    /// Target arrived compute as a multiple of capacity (1.3).
    pub tune: f64,
}

/// Default synthetic mix, by profile slot of the 7-slice models
/// (`[1g, 1g with 2 memory slices, 2g, 3g, 4g, 7g]`): weights in percent of
/// tasks. CPUs: 2 per compute slice. A made-up inference-and-training mix,
/// not a measured one: small slices are the most frequent tasks, a tenth ask
/// for a whole GPU.
pub const DEFAULT_MIX_WEIGHTS: [u64; 6] = [30, 10, 20, 20, 10, 10];
/// CPUs (in milli) per compute slice in the default mix.
pub const DEFAULT_CPU_PER_SLICE: u64 = 2_000;

/// The default mix for `geo`'s model.
pub fn default_mix(geo: &MigGeometry) -> Vec<(MigTask, u64)> {
    geo.profiles()
        .iter()
        .enumerate()
        .zip(DEFAULT_MIX_WEIGHTS)
        .map(|((slot, p), w)| {
            (
                MigTask {
                    cpu_milli: DEFAULT_CPU_PER_SLICE * u64::from(p.compute_slices),
                    profile: slot as u8,
                    count: 1,
                },
                w,
            )
        })
        .collect()
}

/// Parses a mix: comma-separated `TASK:WEIGHT[:CPUS]`, where TASK is one of
/// the model's profile names (`3g.40gb`), `Nx` + the whole-GPU profile for
/// several whole GPUs (`2x7g.80gb`), or `cpu` for a CPU-only task; WEIGHT a
/// positive integer; CPUS a number of CPUs (default: 2 per compute slice,
/// 1 for `cpu`). At least one entry must ask for a GPU.
pub fn parse_mix(geo: &MigGeometry, s: &str) -> Result<Vec<(MigTask, u64)>, String> {
    let names = || {
        geo.profiles()
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut out: Vec<(MigTask, u64)> = Vec::new();
    for (k, entry) in s.split(',').map(str::trim).enumerate() {
        let at = |msg: String| format!("mix entry {} '{entry}': {msg}", k + 1);
        let parts: Vec<&str> = entry.split(':').map(str::trim).collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(at("expected TASK:WEIGHT or TASK:WEIGHT:CPUS".into()));
        }
        let (count, name) = match parts[0].split_once(['x', 'X']) {
            Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                let n: u8 = n
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1 && usize::from(n) <= MAX_GPUS)
                    .ok_or_else(|| at(format!("GPU count must be 1..={MAX_GPUS}")))?;
                (n, rest)
            }
            _ => (1, parts[0]),
        };
        let (profile, count) = if name.eq_ignore_ascii_case("cpu") {
            (0, 0)
        } else {
            let slot = geo.profile_slot(name).ok_or_else(|| {
                at(format!(
                    "unknown MIG profile '{name}' for {}; expected one of {}, or cpu",
                    geo.model.name,
                    names()
                ))
            })?;
            (slot, count)
        };
        let weight: u64 = parts[1]
            .parse()
            .ok()
            .filter(|&w| w > 0 && w <= 1_000_000_000)
            .ok_or_else(|| at(format!("weight '{}' is not a positive integer", parts[1])))?;
        let mut task = MigTask {
            cpu_milli: 0,
            profile,
            count,
        };
        task.cpu_milli = match parts.get(2) {
            Some(c) => {
                let v: f64 = c
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && *v >= 0.0 && *v <= 1e6)
                    .ok_or_else(|| at(format!("CPUs '{c}' is not a number in 0..=1000000")))?;
                (v * f64::from(MILLI)).round() as u64
            }
            None if count == 0 => u64::from(MILLI),
            None => DEFAULT_CPU_PER_SLICE * task.slices(geo),
        };
        task.check(geo).map_err(at)?;
        out.push((task, weight));
    }
    if !out.iter().any(|(t, _)| t.count > 0) {
        return Err("the mix has no task asking for a GPU".into());
    }
    Ok(out)
}

/// `n` identical nodes `mig-node-000`, … with `gpus` GPUs and `cpus` CPUs each.
pub fn uniform_nodes(n: usize, gpus: u8, cpus: u64) -> Vec<MigNodeSpec> {
    (0..n)
        .map(|i| MigNodeSpec {
            name: format!("mig-node-{i:04}"),
            cpu_milli: cpus * u64::from(MILLI),
            num_gpu: gpus,
        })
        .collect()
}

/// An OpenB task as a MIG task: no GPU stays CPU-only; a shared GPU
/// (`gpu_milli` < 1000) becomes the smallest profile with at least
/// `⌈gpu_milli · 7 / 1000⌉` compute slices (5 and 6 slices become the whole
/// GPU); whole GPUs stay whole GPUs. CPUs are kept; memory and the GPU-model
/// constraint are dropped (the cluster has one GPU model).
pub fn map_openb_task(geo: &MigGeometry, t: &TaskSpec) -> MigTask {
    let s = t.shape();
    if !s.wants_gpu() {
        return MigTask {
            cpu_milli: t.cpu_milli,
            profile: 0,
            count: 0,
        };
    }
    if s.is_share() {
        let slices = (u64::from(s.gpu_milli) * 7).div_ceil(u64::from(MILLI)) as u8;
        MigTask {
            cpu_milli: t.cpu_milli,
            profile: geo.smallest_with(slices),
            count: 1,
        }
    } else {
        MigTask {
            cpu_milli: t.cpu_milli,
            profile: geo.whole_slot(),
            count: s.num_gpu,
        }
    }
}

/// Interns task types; returns the index of each.
fn intern(types: &mut Vec<MigTask>, index: &mut BTreeMap<MigTask, u32>, t: MigTask) -> u32 {
    *index.entry(t).or_insert_with(|| {
        types.push(t);
        (types.len() - 1) as u32
    })
}

impl MigExperiment {
    /// A synthetic workload: `mix` of (task, weight), on `nodes`.
    pub fn synthetic(
        geo: MigGeometry,
        start: StartRule,
        nodes: Vec<MigNodeSpec>,
        mix: &[(MigTask, u64)],
    ) -> Result<Self, String> {
        check_nodes(&nodes)?;
        let mut types = Vec::new();
        let mut index = BTreeMap::new();
        let mut weights: Vec<u64> = Vec::new();
        for &(t, w) in mix {
            t.check(&geo)?;
            let i = intern(&mut types, &mut index, t) as usize;
            if i == weights.len() {
                weights.push(0);
            }
            weights[i] += w;
        }
        if !types.iter().any(|t| t.count > 0) {
            return Err("the mix has no task asking for a GPU".into());
        }
        let sum: u64 = weights.iter().sum();
        let dist = types
            .iter()
            .zip(&weights)
            .map(|(t, &w)| (*t, w as f64 / sum as f64))
            .collect();
        Ok(MigExperiment {
            geo,
            start,
            nodes,
            types,
            source: MigSource::Mix { weights },
            dist,
            tune: 1.3,
        })
    }

    /// OpenB's cluster (node CPUs and GPU counts; every GPU becomes `geo`'s
    /// model) and tasks mapped by [`map_openb_task`].
    pub fn from_openb(
        geo: MigGeometry,
        start: StartRule,
        cluster: &Cluster,
        tasks: &[TaskSpec],
    ) -> Result<Self, String> {
        let nodes: Vec<MigNodeSpec> = cluster
            .nodes
            .iter()
            .map(|n| MigNodeSpec {
                name: n.name.clone(),
                cpu_milli: n.cpu_milli,
                num_gpu: n.num_gpu,
            })
            .collect();
        check_nodes(&nodes)?;
        let mut sorted: Vec<&TaskSpec> = tasks.iter().collect();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let mut types = Vec::new();
        let mut index = BTreeMap::new();
        let mut originals = Vec::with_capacity(sorted.len());
        let mut counts: BTreeMap<MigTask, u64> = BTreeMap::new();
        for t in sorted {
            let m = map_openb_task(&geo, t);
            originals.push(intern(&mut types, &mut index, m));
            *counts.entry(m).or_insert(0) += 1;
        }
        let dist = most_frequent(counts, originals.len(), 0.95);
        Ok(MigExperiment {
            geo,
            start,
            nodes,
            types,
            source: MigSource::Originals { tasks: originals },
            dist,
            tune: 1.3,
        })
    }

    /// Total number of GPUs.
    pub fn total_gpus(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.num_gpu)).sum()
    }

    /// Tasks in the original workload (0 for a mix).
    pub fn original_tasks(&self) -> usize {
        match &self.source {
            MigSource::Mix { .. } => 0,
            MigSource::Originals { tasks } => tasks.len(),
        }
    }

    /// The seed's arrivals (indices into `types`) and node ranks.
    pub fn arrivals(&self, seed: u64) -> (Vec<u32>, Vec<u32>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let cap = self.total_gpus() * 7;
        let target = self.tune * cap as f64;
        let types = &self.types;
        let per_gpu = |t: &MigTask| {
            if t.count == 0 {
                0
            } else {
                u64::from(self.geo.profiles()[usize::from(t.profile)].compute_slices)
            }
        };
        let order = match &self.source {
            MigSource::Mix { weights } => {
                let cum: Vec<u64> = weights
                    .iter()
                    .scan(0u64, |c, &w| {
                        *c += w;
                        Some(*c)
                    })
                    .collect();
                let sum = cum.last().copied().unwrap_or(0);
                tune_up(
                    &mut rng,
                    0,
                    |i| types[i].slices(&self.geo),
                    |i| per_gpu(&types[i]),
                    target,
                    (sum > 0).then_some(|r: &mut ChaCha8Rng| {
                        let x = r.random_range(0..sum);
                        cum.partition_point(|&c| c <= x)
                    }),
                    50 * (cap as usize + 1),
                )
            }
            MigSource::Originals { tasks } => tune_up(
                &mut rng,
                tasks.len(),
                |i| types[tasks[i] as usize].slices(&self.geo),
                |i| per_gpu(&types[tasks[i] as usize]),
                target,
                (!tasks.is_empty()).then_some(|r: &mut ChaCha8Rng| r.random_range(0..tasks.len())),
                50 * tasks.len(),
            )
            .into_iter()
            .map(|i| tasks[i as usize])
            .collect(),
        };
        let names: Vec<&str> = self.nodes.iter().map(|n| n.name.as_str()).collect();
        let rank = node_ranks(&mut rng, &names);
        (order, rank)
    }

    /// Runs one (seed, policy).
    pub fn run_one(&self, seed: u64, policy: PolicyKind) -> RunResult {
        let (order, rank) = self.arrivals(seed);
        self.run_prepared(seed, policy, &order, &rank)
    }

    fn run_prepared(
        &self,
        seed: u64,
        policy: PolicyKind,
        order: &[u32],
        rank: &[u32],
    ) -> RunResult {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(1 + policy as u64);
        let slicing = MigSlicing {
            geo: &self.geo,
            dist: &self.dist,
            start: self.start,
        };
        let trace = run_sliced(
            &slicing,
            self.nodes.iter().map(MigNodeState::new).collect(),
            &self.types,
            order,
            rank,
            policy,
            &mut rng,
        );
        RunResult::new(seed, policy, &trace, self.total_gpus())
    }

    /// Runs every (seed, policy) pair in parallel on the current rayon pool,
    /// ordered by seed, then policy.
    pub fn run_grid(&self, seeds: &[u64], policies: &[PolicyKind]) -> Vec<RunResult> {
        grid(
            seeds,
            policies,
            |s| self.arrivals(s),
            |seed, p, (order, rank)| self.run_prepared(seed, p, order, rank),
        )
    }

    /// [`MigExperiment::run_grid`] on `threads` workers (0 = one per core).
    pub fn run_grid_on(
        &self,
        seeds: &[u64],
        policies: &[PolicyKind],
        threads: usize,
    ) -> Result<(Vec<RunResult>, usize), rayon::ThreadPoolBuildError> {
        on_pool(threads, || self.run_grid(seeds, policies))
    }
}

fn check_nodes(nodes: &[MigNodeSpec]) -> Result<(), String> {
    if nodes.is_empty() {
        return Err("the cluster has no node".into());
    }
    if let Some(n) = nodes.iter().find(|n| usize::from(n.num_gpu) > MAX_GPUS) {
        return Err(format!(
            "node {} has {} GPUs; at most {MAX_GPUS} are supported",
            n.name, n.num_gpu
        ));
    }
    if nodes.iter().all(|n| n.num_gpu == 0) {
        return Err("the cluster has no GPU".into());
    }
    Ok(())
}
