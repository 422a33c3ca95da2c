//! The native half of `gresim.env.SchedulingEnv`: a run driven pass by pass
//! ([`gresim::SteppedRun`]) whose main passes start what the agent chose.
//!
//! Control is inverted without threads: the engine stops before each main
//! pass that has jobs queued; [`EnvCore::step`] hands the action to the
//! run's policy (`ExternalPass` over a `Scripted` decider, lenient: a start
//! that does not fit is skipped and reported), runs that pass, and steps to
//! the next one. A job started is followed by one more pass at the same
//! time, so the agent may start several jobs in one instant; "none" lets
//! time go on to the next pass the engine would run (a submission, an end,
//! the periodic pass). The events are the engine's own, in its order: the
//! same seed and the same actions give the same episode.
//!
//! The observation's layout, the rewards and the action are documented in
//! docs/python.md ("Reinforcement learning") and in `gresim/env.py`.

use std::sync::{Arc, Mutex};

use gresim::SteppedRun;
use gresim_model::ids::JobIdx;
use gresim_model::job::{Job, JobState, Time};
use gresim_sched::external::{ExternalPass, PassDecisions, Scripted, Shared, StartDecision};
use gresim_sched::select::SelectCache;
use pyo3::prelude::*;

use crate::errors;
use crate::pass_policy::NodeColumns;

/// Features per queue slot (the columns of `obs["queue"]`).
pub const QUEUE_FEATURES: usize = 9;
/// Features per node (the columns of `obs["nodes"]`).
pub const NODE_FEATURES: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Reward {
    Wait,
    Slowdown,
    Utilization,
}

/// A stepped episode and what the observation and reward need.
#[pyclass(unsendable, module = "gresim._gresim")]
pub struct EnvCore {
    scenario: Arc<gresim::Scenario>,
    window: usize,
    reward: Reward,
    policy: Arc<Mutex<ExternalPass<Scripted>>>,
    run: Option<SteppedRun>,
    cache: SelectCache,
    /// The time of the pass the run stopped before; `None` once it is over.
    pass_at: Option<Time>,
    /// The jobs in the window: (job id, job, fits now).
    slots: Vec<(u32, JobIdx, bool)>,
    /// Jobs the agent started that may still run (pruned at each
    /// observation): only the agent starts jobs in an episode, so the
    /// running jobs are among these, without a scan of the job table.
    live: Vec<JobIdx>,
    /// Jobs queued (in and beyond the window).
    queued: usize,
    /// The time of the last observation, and the integrals then.
    last_t: Time,
    last_wait: u128,
    last_busy: u128,
    total_gpus: u64,
    names: Arc<[String]>,
}

fn wait_at(jobs: &[Job], t: Time) -> u128 {
    jobs.iter()
        .map(|j| {
            let until = match j.runs.first() {
                Some(r) => r.start.min(t),
                None if j.state == JobState::Pending => t,
                // Never started and no longer pending (refused, cancelled).
                None => return 0,
            };
            u128::from(until.saturating_sub(j.first_submit))
        })
        .sum()
}

fn busy_at(jobs: &[Job], t: Time) -> u128 {
    let mut s = 0u128;
    for j in jobs {
        for r in &j.runs {
            let end = r.end.unwrap_or(t).min(t);
            let gpus: u32 = r.alloc.nodes.iter().map(|n| n.gpus.count_ones()).sum();
            s += u128::from(end.saturating_sub(r.start)) * u128::from(gpus);
        }
    }
    s
}

/// The jobs running on one node, and when they end as Slurm plans them.
#[derive(Clone, Copy, Default)]
struct RunningOn {
    jobs: u32,
    /// Seconds from now to the earliest planned end (start + time limit).
    first_end: Option<Time>,
    /// Seconds from now to the latest planned end.
    last_end: Option<Time>,
}

/// Per node: the running jobs and the seconds until their planned ends (the
/// ends backfill plans with: start plus time limit, a year for a job
/// without one; the simulator's true run times stay hidden, as from Slurm).
fn running_on_nodes(jobs: &[Job], live: &[JobIdx], nodes: usize, now: Time) -> Vec<RunningOn> {
    let mut out = vec![RunningOn::default(); nodes];
    let running = live.iter().filter_map(|&i| jobs.get(i.idx()));
    for j in running.filter(|j| j.state == JobState::Running) {
        let Some(r) = j.runs.last() else { continue };
        let left = j.planned_end.saturating_sub(now);
        for na in &r.alloc.nodes {
            let Some(o) = out.get_mut(na.node.idx()) else {
                continue;
            };
            o.jobs += 1;
            o.first_end = Some(o.first_end.map_or(left, |t| t.min(left)));
            o.last_end = Some(o.last_end.map_or(left, |t| t.max(left)));
        }
    }
    out
}

/// The queue's `gpu_type` column: 1 + the index (in the cluster's GPU type
/// list) of the first typed GPU request, 0 when no request names a type.
fn gpu_type_code(req: &gresim_model::job::JobRequest) -> f32 {
    req.gpus_per_node
        .iter()
        .chain(req.gpus_per_job.iter())
        .find_map(|g| g.ty)
        .map_or(0.0, |t| (t.idx() + 1) as f32)
}

/// Bounded slowdowns (10 s bound) of the jobs that ended in `(t0, t1]`.
fn slowdowns(jobs: &[Job], t0: Time, t1: Time) -> f64 {
    jobs.iter()
        .filter(|j| !matches!(j.state, JobState::Pending | JobState::Running))
        .filter_map(|j| {
            let r = j.runs.last()?;
            let end = r.end?;
            (end > t0 && end <= t1).then(|| {
                let run = end.saturating_sub(r.start).max(10) as f64;
                (end.saturating_sub(j.first_submit) as f64 / run).max(1.0)
            })
        })
        .sum()
}

impl EnvCore {
    fn run(&self) -> PyResult<&SteppedRun> {
        self.run.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("no episode: call reset() first")
        })
    }

    /// Steps to the next pass; refreshes the window.
    fn advance(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(run) = self.run.as_mut() else {
            return Ok(());
        };
        self.pass_at = run.next_pass().map_err(|e| errors::run_error(py, &e))?;
        self.refresh();
        Ok(())
    }

    fn refresh(&mut self) {
        self.slots.clear();
        self.queued = 0;
        let (Some(run), Some(_)) = (self.run.as_ref(), self.pass_at) else {
            return;
        };
        let e = run.engine();
        let jobs = e.jobs();
        self.live.retain(|j| {
            jobs.get(j.idx())
                .is_some_and(|j| j.state == JobState::Running)
        });
        let queue = self
            .policy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .queue_view(e.jobs());
        self.queued = queue.len();
        for q in queue.iter().take(self.window) {
            let req = &e.jobs()[q.job.idx()].request;
            let fits = q.partitions.iter().any(|&p| {
                gresim_sched::select::try_select(
                    &mut self.cache,
                    e.cluster(),
                    e.params(),
                    e.state(),
                    req,
                    p,
                    None,
                )
                .is_some()
            });
            self.slots.push((q.id, q.job, fits));
        }
    }

    /// (queue features, node features, action mask), flat.
    fn observation(&self) -> PyResult<Obs> {
        let run = self.run()?;
        let e = run.engine();
        let cluster = e.cluster();
        let now = self.pass_at.unwrap_or_else(|| e.now());
        let mut q = vec![0f32; self.window * QUEUE_FEATURES];
        let mut mask = vec![0u8; self.window + 1];
        mask[self.window] = 1;
        if self.pass_at.is_some() {
            let queue = self
                .policy
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .queue_view(e.jobs());
            for (i, (qj, &(_, _, fits))) in queue.iter().zip(&self.slots).enumerate() {
                let j = &e.jobs()[qj.job.idx()];
                let req = &j.request;
                let part = qj.partitions[0];
                let gpus = req.gpus_per_node.iter().map(|g| g.count).sum::<u32>()
                    * req.min_nodes.max(1)
                    + req.gpus_per_job.map_or(0, |g| g.count);
                let tasks = req.ntasks.unwrap_or(req.min_nodes.max(1));
                let row = &mut q[i * QUEUE_FEATURES..(i + 1) * QUEUE_FEATURES];
                row[0] = 1.0;
                row[1] = now.saturating_sub(j.submit) as f32;
                row[2] = req.min_nodes as f32;
                row[3] = gpus as f32;
                row[4] = (req.cpus_per_task * tasks) as f32;
                row[5] = gresim_policy::time_limit_in(cluster, j, part).map_or(-1.0, |l| l as f32);
                row[6] = qj.priority as f32;
                row[7] = if fits { 1.0 } else { 0.0 };
                row[8] = gpu_type_code(req);
                mask[i] = u8::from(fits);
            }
        }
        let cols = NodeColumns::of(cluster, e.state(), Arc::clone(&self.names));
        let running = running_on_nodes(e.jobs(), &self.live, cluster.nodes.len(), now);
        let mut n = Vec::with_capacity(cluster.nodes.len() * NODE_FEATURES);
        for (i, r) in running.iter().enumerate() {
            let secs = |t: Option<Time>| t.map_or(-1.0, |t| t as f32);
            n.extend_from_slice(&[
                cols.free_gpus[i] as f32,
                cols.total_gpus[i] as f32,
                cols.free_cpus[i] as f32,
                cols.total_cpus[i] as f32,
                if cols.available[i] { 1.0 } else { 0.0 },
                r.jobs as f32,
                secs(r.first_end),
                secs(r.last_end),
            ]);
        }
        Ok((f32_bytes(&q), f32_bytes(&n), mask))
    }
}

/// (queue features, node features, action mask) as bytes: the floats
/// little-endian `f32`, read by `numpy.frombuffer` without a Python float
/// per value (which cost more than the rest of a step on 1,000 nodes).
type Obs = (Vec<u8>, Vec<u8>, Vec<u8>);

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[pymethods]
impl EnvCore {
    #[new]
    fn new(
        py: Python<'_>,
        scenario: &Bound<'_, PyAny>,
        window: usize,
        reward: &str,
    ) -> PyResult<Self> {
        let scenario = crate::scenario_arg(py, scenario)?;
        let reward = match reward {
            "wait" => Reward::Wait,
            "slowdown" => Reward::Slowdown,
            "utilization" => Reward::Utilization,
            other => {
                return Err(errors::usage_error(
                    py,
                    "reward",
                    &format!(
                        "unknown reward '{other}'; expected one of wait, slowdown, utilization"
                    ),
                ))
            }
        };
        if window == 0 {
            return Err(errors::usage_error(
                py,
                "window",
                "the window must hold at least one job",
            ));
        }
        let names: Arc<[String]> = scenario
            .cluster
            .nodes
            .iter()
            .map(|n| n.name.clone())
            .collect();
        let total_gpus = scenario
            .cluster
            .nodes
            .iter()
            .map(|n| n.gpus.len() as u64)
            .sum();
        Ok(EnvCore {
            scenario,
            window,
            reward,
            policy: Arc::new(Mutex::new(ExternalPass::lenient(Scripted::default()))),
            run: None,
            cache: SelectCache::default(),
            pass_at: None,
            slots: Vec::new(),
            live: Vec::new(),
            queued: 0,
            last_t: 0,
            last_wait: 0,
            last_busy: 0,
            total_gpus,
            names,
        })
    }

    /// Nodes in the cluster (the rows of `obs["nodes"]`).
    #[getter]
    fn nodes(&self) -> usize {
        self.names.len()
    }

    #[getter]
    fn node_names(&self) -> Vec<String> {
        self.names.to_vec()
    }

    /// The cluster's GPU type names; the queue's `gpu_type` column `k > 0`
    /// is `gpu_types[k - 1]`.
    #[getter]
    fn gpu_types(&self) -> Vec<String> {
        self.scenario
            .cluster
            .gpu_types
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    #[getter]
    fn window(&self) -> usize {
        self.window
    }

    /// The scenario's own seed.
    #[getter]
    fn scenario_seed(&self) -> u64 {
        self.scenario.seed
    }

    /// The time of the current observation.
    #[getter]
    fn time(&self) -> Option<Time> {
        self.run
            .as_ref()
            .map(|r| self.pass_at.unwrap_or_else(|| r.engine().now()))
    }

    /// Jobs queued now (in and beyond the window).
    #[getter]
    fn queued(&self) -> usize {
        self.queued
    }

    /// Job ids in the window, slot by slot.
    #[getter]
    fn window_jobs(&self) -> Vec<u32> {
        self.slots.iter().map(|s| s.0).collect()
    }

    /// Whether the episode is over.
    #[getter]
    fn done(&self) -> bool {
        self.run.is_none() || self.pass_at.is_none()
    }

    /// A new episode with the workload of `seed`: its first observation.
    fn reset(&mut self, py: Python<'_>, seed: u64) -> PyResult<Obs> {
        let policy = Arc::new(Mutex::new(ExternalPass::lenient(Scripted::default())));
        let run = SteppedRun::new(
            &self.scenario,
            Box::new(Shared(Arc::clone(&policy))),
            seed,
            Some(false),
        )
        .map_err(|e| errors::run_error(py, &e))?;
        self.policy = policy;
        self.run = Some(run);
        self.cache = SelectCache::default();
        self.live.clear();
        self.advance(py)?;
        let e = self.run()?.engine();
        let t = self.pass_at.unwrap_or_else(|| e.now());
        let (w, b) = (wait_at(e.jobs(), t), busy_at(e.jobs(), t));
        (self.last_t, self.last_wait, self.last_busy) = (t, w, b);
        self.observation()
    }

    /// Starts the job in window slot `action` (None: none), runs the pass,
    /// and steps to the next one: (observation, reward, done, job started
    /// or None, whether the action was invalid).
    fn step(
        &mut self,
        py: Python<'_>,
        action: Option<usize>,
    ) -> PyResult<(Obs, f64, bool, Option<u32>, bool)> {
        if self.run.is_none() || self.pass_at.is_none() {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "the episode is over: call reset()",
            ));
        }
        let mut invalid = false;
        let chosen = match action {
            Some(i) if i < self.window => match self.slots.get(i) {
                Some(&(id, _, _)) => Some(id),
                None => {
                    invalid = true;
                    None
                }
            },
            Some(i) if i == self.window => None,
            Some(i) => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "action {i}: expected a window slot 0..{} or {} (none)",
                    self.window - 1,
                    self.window
                )))
            }
            None => None,
        };
        {
            let mut p = self.policy.lock().unwrap_or_else(|p| p.into_inner());
            p.decider_mut().next = chosen.map(|id| PassDecisions {
                starts: vec![StartDecision {
                    id,
                    partition: None,
                    nodes: None,
                }],
                ..PassDecisions::default()
            });
        }
        let run = self.run.as_mut().expect("checked above");
        run.run_pass().map_err(|e| errors::run_error(py, &e))?;
        let (started, rejected) = {
            let mut p = self.policy.lock().unwrap_or_else(|p| p.into_inner());
            (p.take_started(), p.take_rejected())
        };
        invalid |= !rejected.is_empty();
        let started = started.first().copied();
        if let Some(id) = started {
            if let Some(&(_, job, _)) = self.slots.iter().find(|s| s.0 == id) {
                self.live.push(job);
            }
        }
        if started.is_some() {
            run.request_pass_now();
        }
        self.advance(py)?;
        let run = self.run.as_ref().expect("checked above");
        let jobs = run.engine().jobs();
        let t1 = self.pass_at.unwrap_or_else(|| run.engine().now());
        let reward = match self.reward {
            Reward::Wait => {
                let w = wait_at(jobs, t1);
                let r = -((w.saturating_sub(self.last_wait)) as f64) / 3600.0;
                self.last_wait = w;
                r
            }
            Reward::Utilization => {
                let b = busy_at(jobs, t1);
                let r = b.saturating_sub(self.last_busy) as f64
                    / (self.total_gpus.max(1) as f64 * 3600.0);
                self.last_busy = b;
                r
            }
            Reward::Slowdown => -slowdowns(jobs, self.last_t, t1),
        };
        self.last_t = t1;
        let done = self.pass_at.is_none();
        Ok((self.observation()?, reward, done, started, invalid))
    }

    /// The episode's outcome (records, summary) as `gresim.run` returns it;
    /// the episode ends here (call reset() for another).
    fn outcome(&mut self) -> PyResult<crate::outcome::Outcome> {
        let run = self.run.take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("no episode: call reset() first")
        })?;
        self.pass_at = None;
        self.slots.clear();
        let seed = run.seed();
        Ok(crate::outcome::Outcome::new(run.finish(), seed))
    }
}
