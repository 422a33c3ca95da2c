//! The FGD paper's experiment (ATC'23 §6, the authors' `tune=1.3` runs):
//!
//! 1. the original tasks are sorted by name and shuffled with the seed;
//! 2. tasks drawn uniformly with replacement from the original workload are
//!    appended until the next one would take the total GPU request past
//!    `tune` × the cluster's GPU capacity (the authors compare the running
//!    total plus the drawn task's *per-GPU* milli with the target; we keep
//!    that);
//! 3. the nodes get a seeded random tie-break rank (the authors' random node
//!    name prefix);
//! 4. each policy places the tasks one at a time, with no departures;
//! 5. after every arrival the arrived request, the allocation and the
//!    fragmentation are recorded, and read off at each whole percent of
//!    arrived request as the authors' analysis scripts do.
//!
//! Steps 1–3 depend on the seed only, so all policies see the same workload
//! for a seed. Every run is a pure function of (seed, policy): the grid runs
//! them in parallel with rayon and gives the same results on any number of
//! threads.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

use crate::frag::{cluster_milli, typical_tasks, TypicalTask};
use crate::model::TaskSpec;
use crate::openb::Cluster;
use crate::policy::PolicyKind;
use crate::sim::{run, ShapedTasks, Trace};

/// Highest arrival percentage reported.
pub const MAX_PCT: usize = 130;

/// The metrics the authors report.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Metric {
    /// Allocated GPU capacity, % of cluster capacity (Fig. 9a).
    Alloc,
    /// Fragmented idle GPU capacity, % of idle GPU capacity (Fig. 7).
    FragRatio,
    /// Fragmented idle GPU capacity, % of cluster capacity (Fig. 7).
    FragAmount,
}

impl Metric {
    pub const ALL: [Metric; 3] = [Metric::Alloc, Metric::FragRatio, Metric::FragAmount];

    /// The metric's name in `fgd_summary_by_arrival.csv`.
    pub fn upstream_name(self) -> &'static str {
        match self {
            Metric::Alloc => "gpu_alloc_ratio_pct",
            Metric::FragRatio => "frag_ratio_pct",
            Metric::FragAmount => "frag_amount_pct_of_cluster_gpus",
        }
    }
}

/// A workload ready to run: cluster, original tasks and their size distribution.
#[derive(Clone, Debug)]
pub struct Experiment {
    pub cluster: Cluster,
    pub tasks: Vec<TaskSpec>,
    pub dist: Vec<TypicalTask>,
    /// Target arrived GPU request as a multiple of capacity (1.3).
    pub tune: f64,
}

impl Experiment {
    /// The authors' settings: distribution coverage 95 %, `tune = 1.3`.
    pub fn new(cluster: Cluster, mut tasks: Vec<TaskSpec>) -> Self {
        tasks.sort_by(|a, b| a.name.cmp(&b.name));
        let dist = typical_tasks(&tasks, 0.95);
        Experiment {
            cluster,
            tasks,
            dist,
            tune: 1.3,
        }
    }

    /// The seed's task order (indices into `tasks`) and node ranks.
    pub fn arrivals(&self, seed: u64) -> (Vec<u32>, Vec<u32>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let target = self.tune * cluster_milli(self.cluster.total_gpus()) as f64;
        let tasks = &self.tasks;
        let order = tune_up(
            &mut rng,
            tasks.len(),
            |i| tasks[i].total_gpu_milli(),
            |i| u64::from(tasks[i].gpu_milli),
            target,
            (!tasks.is_empty()).then_some(|r: &mut ChaCha8Rng| r.random_range(0..tasks.len())),
            50 * tasks.len(),
        );
        let names: Vec<&str> = self.cluster.nodes.iter().map(|n| n.name.as_str()).collect();
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
        let shaped = ShapedTasks::new(order.iter().map(|&i| &self.tasks[i as usize]));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(1 + policy as u64);
        let trace = run(
            &self.cluster.nodes,
            &shaped,
            rank,
            &self.dist,
            policy,
            &mut rng,
        );
        RunResult::new(seed, policy, &trace, self.cluster.total_gpus())
    }

    /// Runs every (seed, policy) pair, in parallel on the current rayon pool.
    /// The result is ordered by seed, then policy, whatever the thread count.
    pub fn run_grid(&self, seeds: &[u64], policies: &[PolicyKind]) -> Vec<RunResult> {
        grid(
            seeds,
            policies,
            |s| self.arrivals(s),
            |seed, p, (order, rank)| self.run_prepared(seed, p, order, rank),
        )
    }
}

/// Runs every (seed, policy) pair in parallel on the current rayon pool:
/// `prepare` once per seed (in parallel too), then `run` per pair. The result
/// is ordered by seed, then policy, whatever the thread count.
pub(crate) fn grid<P: Send + Sync>(
    seeds: &[u64],
    policies: &[PolicyKind],
    prepare: impl Fn(u64) -> P + Sync + Send,
    run: impl Fn(u64, PolicyKind, &P) -> RunResult + Sync + Send,
) -> Vec<RunResult> {
    let prepared: Vec<(u64, P)> = seeds.par_iter().map(|&s| (s, prepare(s))).collect();
    let jobs: Vec<(usize, PolicyKind)> = (0..prepared.len())
        .flat_map(|i| policies.iter().map(move |&p| (i, p)))
        .collect();
    jobs.par_iter()
        .map(|&(i, p)| {
            let (seed, prep) = &prepared[i];
            run(*seed, p, prep)
        })
        .collect()
}

/// Runs `f` on a rayon pool of `threads` workers (0 = one per core); returns
/// its result and the number of workers.
pub(crate) fn on_pool<R: Send>(
    threads: usize,
    f: impl FnOnce() -> R + Send,
) -> Result<(R, usize), rayon::ThreadPoolBuildError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let r = pool.install(f);
    Ok((r, pool.current_num_threads()))
}

/// The paper's per-seed arrival order over `originals` tasks (step 1–2 of the
/// protocol): the originals shuffled, then tasks from `draw` appended until
/// the next one's `stop_of` would take the running total of `total_of` past
/// `target`; if the originals alone exceed it, random ones are dropped instead.
/// `draw` is `None` when there is nothing to draw from. A drawn task with no
/// GPU request stops the loop once the order is longer than `max_len` (a
/// workload without GPU tasks never reaches the target).
pub(crate) fn tune_up<D: FnMut(&mut ChaCha8Rng) -> usize>(
    rng: &mut ChaCha8Rng,
    originals: usize,
    total_of: impl Fn(usize) -> u64,
    stop_of: impl Fn(usize) -> u64,
    target: f64,
    draw: Option<D>,
    max_len: usize,
) -> Vec<u32> {
    let mut order: Vec<u32> = (0..originals as u32).collect();
    order.shuffle(rng);
    let mut total: u64 = (0..originals).map(&total_of).sum();
    match draw {
        Some(mut draw) if (total as f64) < target => loop {
            let i = draw(rng);
            if (total + stop_of(i)) as f64 > target {
                break;
            }
            if total_of(i) == 0 && order.len() > max_len {
                break;
            }
            total += total_of(i);
            order.push(i as u32);
        },
        _ => {
            // More than the target: drop random tasks until it is met.
            while total as f64 > target && !order.is_empty() {
                let idx = rng.random_range(0..order.len());
                let t = order.remove(idx);
                total -= total_of(t as usize);
            }
        }
    }
    order
}

/// Node tie-break ranks (step 3): the authors sort nodes by name and prefix
/// them with a random permutation; ties go to the smallest name.
pub(crate) fn node_ranks(rng: &mut ChaCha8Rng, names: &[&str]) -> Vec<u32> {
    let mut by_name: Vec<usize> = (0..names.len()).collect();
    by_name.sort_by(|&a, &b| names[a].cmp(names[b]));
    let mut perm: Vec<u32> = (0..by_name.len() as u32).collect();
    perm.shuffle(rng);
    let mut rank = vec![0u32; by_name.len()];
    for (pos, &node) in by_name.iter().enumerate() {
        rank[node] = perm[pos];
    }
    rank
}

impl Experiment {
    /// [`Experiment::run_grid`] on a pool of `threads` workers (0 = one per
    /// core). Returns the results and the number of workers used.
    pub fn run_grid_on(
        &self,
        seeds: &[u64],
        policies: &[PolicyKind],
        threads: usize,
    ) -> Result<(Vec<RunResult>, usize), rayon::ThreadPoolBuildError> {
        on_pool(threads, || self.run_grid(seeds, policies))
    }
}

/// One run's figures at each whole percent 0..=130 of arrived GPU request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResult {
    pub seed: u64,
    pub policy: PolicyKind,
    pub tasks: usize,
    pub placed: usize,
    pub failed: usize,
    /// `[metric][pct]`, `None` where no arrival fell near that percentage.
    pub values: Vec<Vec<Option<f64>>>,
}

impl RunResult {
    pub(crate) fn new(seed: u64, policy: PolicyKind, trace: &Trace, total_gpus: u64) -> Self {
        RunResult {
            seed,
            policy,
            tasks: trace.placement.len(),
            placed: trace.placed,
            failed: trace.failed,
            values: discretize(trace, total_gpus),
        }
    }

    /// The figure of `metric` at `pct` % arrived.
    pub fn get(&self, metric: Metric, pct: usize) -> Option<f64> {
        self.values[metric as usize].get(pct).copied().flatten()
    }
}

/// Rounds half to even at `digits` decimals, as numpy does.
fn round_to(x: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x * m).round_ties_even() / m
}

/// The authors' discretisation (`merge_*_discrete.py`): each step's arrived
/// request is rounded to a whole percent of capacity; the figure at `k` % is
/// the mean over the steps at `k`, or, if there are none, over the steps at
/// `k−1..=k+1`. Allocation is rounded to 0.01 % per step and per column, the
/// fragmentation amount and ratio are rounded as the authors' log prints them.
pub fn discretize(trace: &Trace, total_gpus: u64) -> Vec<Vec<Option<f64>>> {
    let total = total_gpus as f64;
    // Milli-GPUs per unit of the trace (1 for sharing: exact, so the sharing
    // figures are the same as with the milli counts themselves).
    let unit = trace.unit_milli;
    let mut per_pct: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); MAX_PCT + 2];
    for st in &trace.steps {
        let arr = round_to(st.arrived as f64 * unit / total / 10.0, 0);
        if arr < 0.0 || arr > (MAX_PCT + 1) as f64 {
            continue;
        }
        let alloc = round_to(st.used as f64 * unit / total / 10.0, 2);
        let frag_milli = round_to(st.frag_milli, 2);
        let ratio = if st.idle == 0 {
            0.0
        } else {
            round_to(100.0 * st.frag_milli / (st.idle as f64 * unit), 2)
        };
        per_pct[arr as usize].push((alloc, ratio, frag_milli));
    }
    let mut out = vec![vec![None; MAX_PCT + 1]; 3];
    for k in 0..=MAX_PCT {
        let pick: Vec<(f64, f64, f64)> = if !per_pct[k].is_empty() {
            per_pct[k].clone()
        } else {
            let lo = k.saturating_sub(1);
            (lo..=k + 1)
                .flat_map(|j| per_pct[j].iter().copied())
                .collect()
        };
        if pick.is_empty() {
            continue;
        }
        let n = pick.len() as f64;
        let alloc = pick.iter().map(|v| v.0).sum::<f64>() / n;
        let ratio = pick.iter().map(|v| v.1).sum::<f64>() / n;
        let milli = pick.iter().map(|v| v.2).sum::<f64>() / n;
        out[Metric::Alloc as usize][k] = Some(round_to(alloc, 2));
        out[Metric::FragRatio as usize][k] = Some(ratio);
        out[Metric::FragAmount as usize][k] = Some(round_to(100.0 * milli / 1000.0 / total, 2));
    }
    out
}

/// Mean and sample standard deviation over seeds.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct Stat {
    pub mean: f64,
    pub std: f64,
    pub n: usize,
}

/// Mean and sample standard deviation of `metric` at `pct` over the runs of
/// `policy` (runs without a value there are left out).
pub fn stat(results: &[RunResult], policy: PolicyKind, metric: Metric, pct: usize) -> Option<Stat> {
    let v: Vec<f64> = results
        .iter()
        .filter(|r| r.policy == policy)
        .filter_map(|r| r.get(metric, pct))
        .collect();
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    Some(Stat {
        mean,
        std,
        n: v.len(),
    })
}
