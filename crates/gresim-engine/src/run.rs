//! The event loop and the job lifecycle.

use std::collections::BTreeMap;
use std::sync::Arc;

use gresim_model::job::{DepKind, Job, JobSpec, Run, RunTime, Time};
use gresim_model::preempt::PreemptMode;
use gresim_model::{
    Allocation, ClusterState, JobId, JobIdx, JobState, NodeAdminState, NodeId, Reason,
};
use gresim_policy::priority::PriorityConfig;
use gresim_policy::{PassCtx, Policy, Start};

use crate::event::{EventKind, EventQueue, Phase};
use crate::{
    Action, EngineError, FailureSource, JobChange, JobSource, NodeChange, ReasonChange, Sample,
    SimInput, SimOutput, TimedAction, Usage,
};

/// When in its second an action takes effect: nodes coming back to service
/// (resume, up, repair) after the passes of that second, everything else
/// before them (docs/architecture.md, the event-ordering contract).
fn action_phase(a: &Action) -> Phase {
    match a {
        Action::NodeUp(_) | Action::NodeResume(_) | Action::NodeRepair(_) => Phase::NodeReturn,
        Action::Cancel { .. } => Phase::Cancel,
        _ => Phase::Admin,
    }
}

/// Slurm plans a job without a time limit as ending a year after its start.
const UNLIMITED_PLAN: u64 = 365 * 86400;

/// Priority/basic: the first job gets 0xFFFF0000 − 1, each later one one less.
const BASIC_PRIORITY_TOP: u32 = 0xFFFF_0000 - 1;

/// Seconds between the samples of [`SimOutput::fairshare_log`].
const FAIRSHARE_SAMPLE: Time = 3600;

/// Per-submission bookkeeping (a plain job or a whole array).
#[derive(Debug, Clone, Default)]
struct SubState {
    /// Index of the submission's first job record.
    first: u32,
    tasks: u32,
    /// Tasks that ended for good.
    done: u32,
    /// Tasks that ended in a state other than COMPLETED.
    not_ok: u32,
    /// Tasks not yet started (for array job ids).
    unstarted: u32,
    running: u32,
    started_any: bool,
    rejected: bool,
}

/// The live jobs of one (user, name) and who waits on them as a singleton.
#[derive(Debug, Clone, Default)]
struct SingletonGroup {
    live: std::collections::BTreeSet<JobIdx>,
    waiters: std::collections::BTreeSet<u32>,
}

/// Whether a dependency is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DepStatus {
    Waiting,
    Met,
    Never,
}

/// A running job's accounting: what it holds, its billable TRES, the
/// seconds of its time limit left, and when its use last counted.
struct AcctRun {
    tres: gresim_model::accounting::TresArray,
    billable: f64,
    left: u64,
    last: Time,
}

/// The simulator for one run. Build with [`Engine::new`], then [`Engine::run`].
pub struct Engine<'a> {
    input_jobs: JobSource<'a>,
    next_spec: Option<JobSpec>,
    cluster: gresim_model::Cluster,
    params: gresim_policy::SchedParams,
    policy: Box<dyn Policy + 'a>,
    actions: Vec<crate::TimedAction>,
    horizon: Option<Time>,
    /// [`SimInput::stall`], and the time of the last event that changed something.
    stall: Option<Time>,
    last_change: Time,

    now: Time,
    queue: EventQueue,
    state: ClusterState,
    jobs: Vec<Job>,
    specs: Vec<JobSpec>,
    subs: Vec<SubState>,
    array_running: Vec<u32>,
    /// Subs waiting on each submission (dependents index), for the
    /// submissions that have any (most have none: a map, not a vector).
    dependents: BTreeMap<u32, Vec<u32>>,
    /// (user, name) → group id, for singleton dependencies.
    group_ids: BTreeMap<(Arc<str>, Arc<str>), u32>,
    /// Per group: its jobs that have not ended, and the submissions waiting
    /// on a singleton dependency in it.
    groups: Vec<SingletonGroup>,
    /// Group id of each submission.
    sub_group: Vec<u32>,
    node_jobs: Vec<Vec<JobIdx>>,
    /// Jobs killed while running that are still COMPLETING, with what they
    /// hold beyond their own allocation (the rest of their nodes).
    completing: Vec<(JobIdx, Allocation)>,
    /// Preempted jobs in their grace time, with the run that was signalled.
    signalled: BTreeMap<JobIdx, u32>,
    /// Running jobs by planned end (start + time limit), for backfill.
    running_ends: std::collections::BTreeSet<(Time, JobIdx)>,
    next_job_id: u32,
    next_priority: u32,
    main_at: Option<Time>,
    bf_at: Option<Time>,
    /// Phase of the event being handled.
    cur_phase: Phase,
    /// Nodes that are DOWN or DRAIN.
    unavailable_nodes: u32,

    reasons: Option<Vec<Vec<ReasonChange>>>,
    timeline: Vec<Sample>,
    usage: Usage,
    up_gpus_by_type: Vec<u64>,
    up_gpu_sevenths: u64,
    up_cpus: u64,
    running: u32,
    pending: u32,
    last_t: Time,
    events: u64,
    prev_submit: Time,

    /// The failure model's stream and its action now in the queue.
    failure_src: Option<FailureSource<'a>>,
    next_failure: Option<TimedAction>,
    /// Per node: the admin state it returns to once repaired, while failed.
    failed: Vec<Option<NodeAdminState>>,
    failed_count: u32,
    node_failures: Vec<u32>,
    node_log: Vec<NodeChange>,
    /// The change being applied comes from the failure model.
    applying_failure: bool,
    /// Called every [`PROGRESS_EVERY`] events, for display only.
    progress: Option<ProgressFn<'a>>,
    /// The run stopped at the horizon.
    hit_horizon: bool,
    /// [`Engine::begin`] has run (stepped runs).
    begun: bool,
    /// `Policy::submission_rejection` by request shape (static configuration only).
    reject_memo: crate::memo::ShapeMemo<Option<String>>,
    /// Use of associations and QOS, when the cluster has accounting.
    acct: Option<gresim_model::accounting::AcctUsage>,
    /// Running jobs under accounting: TRES held, seconds of their time
    /// limit not yet run down, and when they were last run down.
    acct_running: BTreeMap<JobIdx, AcctRun>,
    /// PriorityUsageResetPeriod: the last reset (slurmctld's start at
    /// first) and the next, once computed (`Time::MAX` once `NOW` has reset:
    /// none comes again).
    usage_reset: (Time, Option<Time>),
    /// [`SimOutput::fairshare_log`].
    fairshare_log: Vec<(Time, Vec<f64>)>,
    /// The next accounting tick (the priority plugin's decay thread), if any.
    acct_tick_at: Option<Time>,
    /// Running jobs that were suspended in their current run (see
    /// [`Engine::suspend_job`]).
    suspended: BTreeMap<JobIdx, Suspension>,
    /// The time of the run-end event in force, for running jobs whose end
    /// moved (resume, a new time limit, a signal): the events queued before
    /// are stale.
    moved_ends: BTreeMap<JobIdx, Time>,
    /// Jobs killed by `requeuehold` that are COMPLETING: whether they go to
    /// SPECIAL_EXIT rather than a user hold once the kill is done.
    requeue_held: BTreeMap<JobIdx, bool>,
    /// Preempted jobs to requeue when their kill is done
    /// (`SchedParams::preempt_completing`).
    preempt_requeued: std::collections::BTreeSet<JobIdx>,
    /// Pending jobs held in SPECIAL_EXIT (held, no reason shown).
    special_exit: std::collections::BTreeSet<JobIdx>,
    /// The advance reservations (docs/reservations.md); empty in most runs,
    /// and then nothing below is touched.
    resv: gresim_model::reservation::Reservations,
    /// [`SimOutput::resv_history`].
    resv_history: Vec<(Time, gresim_model::reservation::Reservations)>,
    resv_refused: Vec<crate::ResvRefusal>,
    /// Reservation edges with an event queued.
    resv_edges: std::collections::BTreeSet<Time>,
}

/// A running job's suspensions in its current run.
#[derive(Debug, Clone, Copy, Default)]
struct Suspension {
    /// Suspended since, while it is.
    since: Option<Time>,
    /// Seconds suspended before `since`.
    total: u64,
}

/// Runs a simulation to its end.
pub fn run<'a>(
    input: SimInput<'a>,
    policy: Box<dyn Policy + 'a>,
) -> Result<SimOutput, EngineError> {
    Engine::new(input, policy).run()
}

/// A progress callback: (simulated time, jobs that have ended). For display
/// only: it sees the run, it cannot change it.
pub type ProgressFn<'a> = Box<dyn FnMut(Time, usize) + 'a>;

/// How many events pass between two calls of the progress callback (a power of two).
pub const PROGRESS_EVERY: u64 = 4096;

/// [`run`], calling `progress` every [`PROGRESS_EVERY`] events.
pub fn run_with_progress<'a>(
    input: SimInput<'a>,
    policy: Box<dyn Policy + 'a>,
    progress: ProgressFn<'a>,
) -> Result<SimOutput, EngineError> {
    let mut e = Engine::new(input, policy);
    e.progress = Some(progress);
    e.run()
}

impl<'a> Engine<'a> {
    pub fn new(input: SimInput<'a>, policy: Box<dyn Policy + 'a>) -> Self {
        let cluster = input.cluster;
        let state = ClusterState::new(&cluster);
        let ntypes = cluster.gpu_types.len();
        let mut e = Engine {
            input_jobs: input.jobs,
            next_spec: None,
            node_jobs: vec![Vec::new(); cluster.nodes.len()],
            completing: Vec::new(),
            signalled: BTreeMap::new(),
            running_ends: std::collections::BTreeSet::new(),
            state,
            params: input.params,
            policy,
            actions: input.actions,
            horizon: input.horizon,
            stall: input.stall,
            last_change: 0,
            now: 0,
            queue: EventQueue::default(),
            jobs: Vec::new(),
            specs: Vec::new(),
            subs: Vec::new(),
            array_running: Vec::new(),
            dependents: BTreeMap::new(),
            group_ids: BTreeMap::new(),
            groups: Vec::new(),
            sub_group: Vec::new(),
            next_job_id: 1,
            next_priority: BASIC_PRIORITY_TOP,
            main_at: None,
            bf_at: None,
            cur_phase: Phase::Admin,
            unavailable_nodes: 0,
            reasons: input.record_reasons.then(Vec::new),
            timeline: Vec::new(),
            usage: Usage {
                gpu_alloc_secs: vec![0; ntypes],
                gpu_avail_secs: vec![0; ntypes],
                ..Usage::default()
            },
            up_gpus_by_type: vec![0; ntypes],
            up_gpu_sevenths: 0,
            up_cpus: 0,
            running: 0,
            pending: 0,
            last_t: 0,
            events: 0,
            prev_submit: 0,
            failure_src: input.failures,
            next_failure: None,
            failed: vec![None; cluster.nodes.len()],
            failed_count: 0,
            node_failures: vec![0; cluster.nodes.len()],
            node_log: Vec::new(),
            applying_failure: false,
            progress: None,
            hit_horizon: false,
            begun: false,
            reject_memo: Default::default(),
            acct: cluster
                .accounting()
                .map(gresim_model::accounting::AcctUsage::new),
            acct_running: BTreeMap::new(),
            usage_reset: (0, None),
            fairshare_log: Vec::new(),
            acct_tick_at: None,
            suspended: BTreeMap::new(),
            moved_ends: BTreeMap::new(),
            requeue_held: BTreeMap::new(),
            preempt_requeued: std::collections::BTreeSet::new(),
            special_exit: Default::default(),
            resv: input.reservations,
            resv_history: Vec::new(),
            resv_refused: Vec::new(),
            resv_edges: Default::default(),
            cluster,
        };
        for i in 0..e.cluster.nodes.len() {
            if e.cluster.nodes[i].state != NodeAdminState::Down {
                e.count_node_up(NodeId::from_idx(i), true);
            }
            if e.cluster.nodes[i].state != NodeAdminState::Up {
                e.unavailable_nodes += 1;
            }
        }
        e
    }

    /// Keeps the count of nodes that are DOWN or DRAIN.
    fn set_admin(&mut self, id: NodeId, s: NodeAdminState) {
        let old = self.state.node(id).admin;
        let was = old != NodeAdminState::Up;
        let is = s != NodeAdminState::Up;
        self.state.set_admin(id, s);
        if old != s {
            self.node_log.push(NodeChange {
                t: self.now,
                node: id,
                state: s,
                failure: self.applying_failure,
            });
        }
        match (was, is) {
            (false, true) => self.unavailable_nodes += 1,
            (true, false) => self.unavailable_nodes -= 1,
            _ => {}
        }
    }

    fn count_node_up(&mut self, id: NodeId, up: bool) {
        let node = &self.cluster.nodes[id.idx()];
        // Dynamic MIG: slots without a device do not count, and each dynamic
        // GPU is 7 sevenths whatever its layout (docs/mig.md).
        let (slots, offline, dyn_gpus) = match self.cluster.dynamic_mig() {
            Some(d) => (d.slots(id), d.offline(id), d.gpus_on(id) as u64),
            None => (0, 0, 0),
        };
        if up {
            self.up_gpu_sevenths += 7 * dyn_gpus;
        } else {
            self.up_gpu_sevenths -= 7 * dyn_gpus;
        }
        for (i, d) in node.gpus.iter().enumerate() {
            if (offline >> i) & 1 == 1 {
                continue;
            }
            let sev = if (slots >> i) & 1 == 1 {
                0
            } else {
                u64::from(self.cluster.gpu_type(d.ty).compute_sevenths())
            };
            if up {
                self.up_gpus_by_type[d.ty.idx()] += 1;
                self.up_gpu_sevenths += sev;
            } else {
                self.up_gpus_by_type[d.ty.idx()] -= 1;
                self.up_gpu_sevenths -= sev;
            }
        }
        if up {
            self.up_cpus += u64::from(node.cpus());
        } else {
            self.up_cpus -= u64::from(node.cpus());
        }
    }

    /// Runs until the workload is done or the horizon is reached.
    pub fn run(mut self) -> Result<SimOutput, EngineError> {
        self.begin()?;
        while self.step()? {}
        Ok(self.finish())
    }

    /// Queues the timed actions and the first submission and failure, and
    /// sets the clock to the first event. [`Engine::run`] calls it; a
    /// stepped run ([`Engine::next_pass`]) calls it on its first step.
    fn begin(&mut self) -> Result<(), EngineError> {
        self.begun = true;
        for (i, a) in self.actions.iter().enumerate() {
            self.queue
                .push(a.at, action_phase(&a.action), EventKind::Action(i as u32));
        }
        if !self.resv.is_empty() {
            self.resv_history.push((0, self.resv.clone()));
            self.queue_resv_edges();
        }
        self.pull_next_submission()?;
        self.pull_next_failure();
        let first_t = self.queue.peek().map_or(0, |e| e.time);
        self.now = first_t;
        self.last_t = first_t;
        self.usage.from = first_t;
        Ok(())
    }

    /// Handles the next event; `false` once the run is over (no event
    /// left, the horizon reached, or the stall limit).
    #[inline]
    fn step(&mut self) -> Result<bool, EngineError> {
        let Some(ev) = self.queue.pop() else {
            return Ok(false);
        };
        // Events that no longer mean anything (the end of a run that was
        // requeued or cancelled, a superseded pass) must not move the clock.
        if self.is_stale(&ev.kind, ev.time) {
            return Ok(true);
        }
        if ev.kind == EventKind::Failure && self.failures_cannot_matter() {
            // Only the endless failure process is left: stop it.
            self.failure_src = None;
            self.next_failure = None;
            return Ok(true);
        }
        let periodic = matches!(
            ev.kind,
            EventKind::AcctTick | EventKind::MainPass | EventKind::BackfillPass
        );
        if let Some(s) = self.stall {
            if periodic
                && self.running == 0
                && self.next_spec.is_none()
                && ev.time > self.last_change.saturating_add(s)
            {
                return Ok(false);
            }
        }
        if !periodic {
            self.last_change = ev.time;
        }
        if let Some(h) = self.horizon {
            if ev.time > h {
                self.advance(h);
                self.hit_horizon = true;
                return Ok(false);
            }
        }
        if ev.time != self.now {
            self.advance(ev.time);
        }
        self.events += 1;
        if let Some(p) = self.progress.as_mut() {
            if self.events & (PROGRESS_EVERY - 1) == 0 {
                let live = (self.running + self.pending) as usize;
                p(self.now, self.jobs.len().saturating_sub(live));
            }
        }
        self.cur_phase = ev.phase;
        match ev.kind {
            EventKind::RunEnd { job, run } => self.on_run_end(job, run)?,
            EventKind::Action(i) => self.on_action(i as usize)?,
            EventKind::Submit => self.on_submit()?,
            EventKind::Begin { job } => self.on_begin(job),
            EventKind::Failure => self.on_failure()?,
            EventKind::MigReady { gpu } => self.on_mig_ready(gpu as usize)?,
            EventKind::Completed { job } => self.on_completed(job)?,
            EventKind::AcctTick => self.on_acct_tick(),
            EventKind::ResvEdge => {
                self.resv_edges.remove(&ev.time);
                self.queue_resv_edges();
                self.mark_dirty();
            }
            EventKind::SwitchWaitOver => self.mark_dirty(),
            EventKind::PreemptKill { job, run, mode } => {
                if self.signalled.get(&job) == Some(&run) {
                    self.preempt_now(job, mode)?;
                    self.request_main(self.now);
                }
            }
            EventKind::Requeue { job, run } => {
                let j = &self.jobs[job.idx()];
                if j.state == JobState::Running && j.runs.len() as u32 == run + 1 {
                    self.requeue(job, JobState::Requeued, self.params.requeue_completing)?;
                    self.mark_dirty();
                }
            }
            EventKind::MainPass => {
                if self.main_at == Some(ev.time) {
                    self.main_at = None;
                    self.pass(false)?;
                }
            }
            EventKind::BackfillPass => {
                if self.bf_at == Some(ev.time) {
                    self.bf_at = None;
                    self.pass(true)?;
                }
            }
        }
        Ok(true)
    }

    /// The run's output, once [`Engine::step`] has said it is over.
    fn finish(mut self) -> SimOutput {
        let end = self.now;
        self.sample();
        self.usage.to = end;
        SimOutput {
            policy: self.policy.name().to_string(),
            cluster: self.cluster,
            params: self.params,
            specs: self.specs,
            jobs: self.jobs,
            reasons: self.reasons,
            timeline: self.timeline,
            usage: self.usage,
            end_time: end,
            events: self.events,
            hit_horizon: self.hit_horizon,
            node_log: self.node_log,
            node_failures: self.node_failures,
            pass_stats: self.policy.stats(),
            acct: self.acct,
            fairshare_log: self.fairshare_log,
            resv_history: self.resv_history,
            resv_refused: self.resv_refused,
        }
    }

    // ---- stepped runs ------------------------------------------------------------
    //
    // A caller that decides between passes (the Python package's
    // `SchedulingEnv`) drives the run itself: `next_pass` handles events up
    // to the next main pass that will run with a non-empty queue and stops
    // before it; the caller reads the state, tells its policy what to do,
    // and `run_pass` runs that pass. The events and the order they are
    // handled in are exactly those of `run`.

    /// Handles events until a main pass is due with jobs queued, and stops
    /// before it: its time, or `None` when the run is over (call
    /// [`Engine::finish_stepped`] then).
    pub fn next_pass(&mut self) -> Result<Option<Time>, EngineError> {
        if !self.begun {
            self.begin()?;
        }
        loop {
            if let Some(ev) = self.queue.peek() {
                let t = ev.time;
                if ev.kind == EventKind::MainPass
                    && self.main_at == Some(t)
                    && self.policy.queued() > 0
                    && self.horizon.is_none_or(|h| t <= h)
                {
                    return Ok(Some(t));
                }
            }
            if !self.step()? {
                // Nothing is handled after the end: later calls stay here.
                self.queue = EventQueue::default();
                return Ok(None);
            }
        }
    }

    /// Runs the main pass [`Engine::next_pass`] stopped before (or, if
    /// none is due, handles the next event); `false` once the run is over.
    pub fn run_pass(&mut self) -> Result<bool, EngineError> {
        if !self.begun {
            self.begin()?;
        }
        let more = self.step()?;
        if !more {
            self.queue = EventQueue::default();
        }
        Ok(more)
    }

    /// Asks for one more main pass at the current time, after the one just
    /// run (a stepped caller that starts jobs one by one).
    pub fn request_pass_now(&mut self) {
        self.request_main(self.now);
    }

    /// The output of a stepped run (see [`Engine::next_pass`]).
    pub fn finish_stepped(self) -> SimOutput {
        self.finish()
    }

    /// The simulated time of the last event handled.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The cluster as configured.
    pub fn cluster(&self) -> &gresim_model::Cluster {
        &self.cluster
    }

    /// The scheduler's settings.
    pub fn params(&self) -> &gresim_policy::SchedParams {
        &self.params
    }

    /// What is allocated on each node now.
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// The job table so far (submitted jobs, in submission order).
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// The submissions so far.
    pub fn specs(&self) -> &[JobSpec] {
        &self.specs
    }

    // ---- dynamic MIG -------------------------------------------------------------

    /// Counts the devices `mask` of `node` in or out of the available GPUs.
    fn count_devices(&mut self, node: NodeId, mask: u64, up: bool) {
        for g in gresim_model::state::gpu_indices(mask) {
            let ty = self.cluster.nodes[node.idx()].gpus[usize::from(g)].ty;
            if up {
                self.up_gpus_by_type[ty.idx()] += 1;
            } else {
                self.up_gpus_by_type[ty.idx()] -= 1;
            }
        }
    }

    /// Applies the repartitionings the policy decided in its pass: each GPU
    /// must be idle and the layout legal, else the run stops with an
    /// internal error (a policy bug). The GPU's devices leave service until
    /// the cluster's reconfiguration delay has passed.
    fn apply_mig_reconfigs(&mut self) -> Result<(), EngineError> {
        let reqs = self.policy.take_mig_reconfigs();
        if reqs.is_empty() {
            return Ok(());
        }
        let policy = self.policy.name();
        for r in reqs {
            let Some(g) = self.cluster.dynamic_mig().and_then(|d| d.gpus.get(r.gpu)) else {
                return Err(EngineError::Internal(format!(
                    "policy {policy} asked to repartition GPU {}, which is not a dynamic MIG GPU",
                    r.gpu
                )));
            };
            let (node, online, phys) = (g.node, g.online_mask(), g.phys);
            if online & !self.state.node(node).free_gpus != 0 {
                return Err(EngineError::Internal(format!(
                    "policy {policy} asked to repartition GPU {phys} of {} while it is in use",
                    self.cluster.node(node).name
                )));
            }
            if self.state.node(node).admin != NodeAdminState::Down {
                self.count_devices(node, online, false);
            }
            let (was, ready) = self
                .cluster
                .begin_mig_reconfig(r.gpu, r.to, self.now)
                .map_err(|e| EngineError::Internal(format!("policy {policy}: {e}")))?;
            self.state
                .take_gpus_offline(&self.cluster, node, was)
                .map_err(|e| EngineError::Internal(e.to_string()))?;
            self.queue.push(
                ready,
                Phase::NodeReturn,
                EventKind::MigReady { gpu: r.gpu as u32 },
            );
        }
        // What the policy knows of nodes under the old GRES types must go.
        self.policy.cluster_changed();
        Ok(())
    }

    /// A repartitioned GPU's new devices come into service.
    fn on_mig_ready(&mut self, gpu: usize) -> Result<(), EngineError> {
        let mask = self
            .cluster
            .finish_mig_reconfig(gpu, self.now)
            .map_err(EngineError::Internal)?;
        let node = self
            .cluster
            .dynamic_mig()
            .map(|d| d.gpus[gpu].node)
            .ok_or_else(|| EngineError::Internal("no dynamic MIG GPUs".into()))?;
        self.state
            .put_gpus_online(&self.cluster, node, mask)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        if self.state.node(node).admin != NodeAdminState::Down {
            self.count_devices(node, mask, true);
        }
        self.policy.cluster_changed();
        // New devices are like freed ones: a pass may use them at once.
        self.mark_dirty();
        self.request_main(self.now);
        Ok(())
    }

    /// Whether an event has been overtaken by what happened since it was queued.
    fn is_stale(&self, kind: &EventKind, t: Time) -> bool {
        match *kind {
            EventKind::RunEnd { job, run } => {
                let j = &self.jobs[job.idx()];
                j.state != JobState::Running
                    || j.runs.len() as u32 != run + 1
                    || self.moved_ends.get(&job).is_some_and(|&at| at != t)
                    || self.is_suspended(job)
            }
            EventKind::Requeue { job, run } | EventKind::PreemptKill { job, run, .. } => {
                let j = &self.jobs[job.idx()];
                j.state != JobState::Running || j.runs.len() as u32 != run + 1
            }
            EventKind::MainPass => self.main_at != Some(t),
            EventKind::BackfillPass => self.bf_at != Some(t),
            EventKind::Begin { job } => {
                let j = &self.jobs[job.idx()];
                j.state != JobState::Pending || j.begin.is_none_or(|b| b > t)
            }
            EventKind::Action(_)
            | EventKind::Submit
            | EventKind::Failure
            | EventKind::MigReady { .. }
            | EventKind::AcctTick
            | EventKind::ResvEdge
            | EventKind::SwitchWaitOver
            | EventKind::Completed { .. } => false,
        }
    }

    /// Moves the clock to `t`, integrating usage over the elapsed interval.
    fn advance(&mut self, t: Time) {
        self.sample();
        let dt = u128::from(t.saturating_sub(self.last_t));
        if dt > 0 {
            let u = &mut self.usage;
            for (i, a) in self.state.alloc_gpus_by_type().iter().enumerate() {
                u.gpu_alloc_secs[i] += u128::from(*a) * dt;
                u.gpu_avail_secs[i] += u128::from(self.up_gpus_by_type[i]) * dt;
            }
            u.gpu_sevenths_alloc_secs += u128::from(self.state.alloc_gpu_sevenths()) * dt;
            u.gpu_sevenths_avail_secs += u128::from(self.up_gpu_sevenths) * dt;
            u.cpu_alloc_secs += u128::from(self.state.alloc_cpus()) * dt;
            u.cpu_avail_secs += u128::from(self.up_cpus) * dt;
        }
        self.last_t = t;
        self.now = t;
    }

    /// Records the load at the current instant if it changed.
    fn sample(&mut self) {
        let s = Sample {
            t: self.now,
            alloc_gpus: self.state.alloc_gpus() as u32,
            alloc_gpu_sevenths: self.state.alloc_gpu_sevenths() as u32,
            alloc_cpus: self.state.alloc_cpus() as u32,
            avail_gpus: self.up_gpus_by_type.iter().sum::<u64>() as u32,
            running: self.running,
            pending: self.pending,
        };
        match self.timeline.last_mut() {
            Some(last) if last.t == s.t => *last = s,
            Some(last) if Sample { t: s.t, ..*last } == s => {}
            _ => self.timeline.push(s),
        }
    }

    // ---- scheduling cadence ------------------------------------------------

    /// The first tick of a period-`iv` timer whose pass (in `phase`) has not
    /// yet run: at or after now, or after now once this second's pass is over.
    fn next_tick(&self, iv: u64, phase_of_pass: Phase) -> Time {
        let t = if self.cur_phase > phase_of_pass {
            self.now + 1
        } else {
            self.now
        };
        if iv <= 1 {
            return t;
        }
        let phase = self.params.ctld_phase % iv;
        if t <= phase {
            return phase;
        }
        phase + (t - phase).div_ceil(iv) * iv
    }

    fn request_main(&mut self, at: Time) {
        if self.main_at.is_none_or(|t| at < t) {
            self.main_at = Some(at);
            self.queue.push(at, Phase::MainPass, EventKind::MainPass);
        }
    }

    fn request_backfill(&mut self, at: Time) {
        if self.policy.has_backfill() && self.bf_at.is_none_or(|t| at < t) {
            self.bf_at = Some(at);
            self.queue
                .push(at, Phase::Backfill, EventKind::BackfillPass);
        }
    }

    /// Something changed that a pass could act on: run the periodic passes at their next ticks.
    fn mark_dirty(&mut self) {
        let m = self.next_tick(self.params.sched_interval, Phase::MainPass);
        self.request_main(m);
        let b = self.next_tick(self.params.bf_interval, Phase::Backfill);
        self.request_backfill(b);
    }

    fn pass(&mut self, backfill: bool) -> Result<(), EngineError> {
        if self.policy.queued() == 0 {
            return Ok(());
        }
        let mut ctx = PassCtx {
            now: self.now,
            cluster: &self.cluster,
            params: &self.params,
            state: &mut self.state,
            jobs: &self.jobs,
            specs: &self.specs,
            array_running: &self.array_running,
            running: &self.running_ends,
            started: Vec::new(),
            reasons: Vec::new(),
            preempted: Vec::new(),
            acct: self.acct.as_mut(),
            resv: (!self.resv.is_empty()).then_some(&self.resv),
        };
        if backfill {
            self.policy.backfill_pass(&mut ctx);
        } else {
            self.policy.main_pass(&mut ctx);
        }
        let PassCtx {
            started,
            reasons,
            preempted,
            ..
        } = ctx;
        if let Some(msg) = self.policy.take_failure() {
            return Err(EngineError::Policy {
                policy: self.policy.name().to_string(),
                msg,
            });
        }
        for (job, r, desc) in reasons {
            self.set_reason(job, r, desc);
        }
        let mut freed = false;
        for p in preempted {
            freed |= self.apply_preempt(p)?;
        }
        for s in started {
            self.start_job(s)?;
        }
        if freed {
            // The end of a preempted job sets off a pass (Slurm's schedule()
            // on the job's completion), which starts the preemptor.
            self.request_main(self.now);
        }
        if !backfill
            && self.params.preempt.enabled()
            && self.policy.queued() > 0
            && self.running > 0
        {
            // slurmctld's main loop runs every sched_interval whatever
            // changed: a job may become preemptable only by running past
            // its PreemptExemptTime, which no event marks. (Only while
            // something runs: nothing else can change then.)
            self.request_main(self.now + self.params.sched_interval.max(1));
        }
        self.apply_mig_reconfigs()?;
        if !backfill {
            // What the main pass left behind, backfill may still start.
            let b = self.next_tick(self.params.bf_interval, Phase::Backfill);
            self.request_backfill(b);
        }
        Ok(())
    }

    // ---- reasons -------------------------------------------------------------

    fn set_reason(&mut self, job: JobIdx, r: Reason, desc: Option<String>) {
        let j = &mut self.jobs[job.idx()];
        if j.reason == r && j.reason_desc == desc {
            return;
        }
        j.reason = r;
        j.reason_desc = desc.clone();
        if let Some(h) = self.reasons.as_mut() {
            h[job.idx()].push(ReasonChange {
                t: self.now,
                reason: r,
                desc,
            });
        }
    }

    // ---- submission ----------------------------------------------------------

    fn pull_next_submission(&mut self) -> Result<(), EngineError> {
        match self.input_jobs.next() {
            None => self.next_spec = None,
            Some(Err(e)) => return Err(EngineError::Source(e)),
            Some(Ok(spec)) => {
                let index = self.specs.len() as u32 + u32::from(self.next_spec.is_some());
                if spec.submit < self.prev_submit {
                    return Err(EngineError::Unsorted {
                        index,
                        key: spec.key.clone(),
                        at: spec.submit,
                        prev: self.prev_submit,
                    });
                }
                self.prev_submit = spec.submit;
                self.queue
                    .push(spec.submit, Phase::Submit, EventKind::Submit);
                self.next_spec = Some(spec);
            }
        }
        Ok(())
    }

    fn on_submit(&mut self) -> Result<(), EngineError> {
        let Some(spec) = self.next_spec.take() else {
            return Err(EngineError::Internal(
                "submit event without a submission".into(),
            ));
        };
        let sub = self.specs.len() as u32;
        let first = self.jobs.len() as u32;
        let base_id = JobId(self.next_job_id);
        self.next_job_id += 1;
        let indices: Vec<Option<u32>> = match spec.array() {
            Some(a) => a.indices.iter().map(|&i| Some(i)).collect(),
            None => vec![None],
        };
        let mut reject = spec
            .reject()
            .map(str::to_string)
            .or_else(|| self.resv_rejection(&spec))
            .or_else(|| self.reject_reason(&spec));
        let mut reject_reason = Reason::BadConstraints;
        if reject.is_none() {
            if let Some(usage) = self.acct.as_ref() {
                let n = spec.array().map_or(1, |a| a.indices.len() as u32);
                if let Some((r, msg)) =
                    self.policy
                        .accounting_rejection(&self.cluster, usage, &spec, n)
                {
                    reject = Some(msg);
                    reject_reason = r;
                }
            }
        }
        // priority/basic (`priority_p_set()`): one less than the last job,
        // minus the nice value; nice does not move the base for later jobs.
        let priority = {
            let base = self.next_priority;
            let nice = i64::from(spec.nice);
            let p = if nice <= 0 || i64::from(base) > nice + 1 {
                i64::from(base) - nice
            } else {
                i64::from(base)
            };
            p.clamp(1, i64::from(u32::MAX)) as u32
        };
        if reject.is_none() {
            self.next_priority = self.next_priority.saturating_sub(1).max(1);
        }
        let requeue = spec.requeue.unwrap_or(self.params.job_requeue);
        for task in &indices {
            let (job_id, array_job_id) = match task {
                Some(_) => (None, Some(base_id)),
                None => (Some(base_id), None),
            };
            let run_time = spec.run_time_of(*task);
            self.jobs.push(Job {
                sub,
                task: *task,
                request: Arc::clone(&spec.request),
                job_id,
                array_job_id,
                submit: spec.submit,
                first_submit: spec.submit,
                eligible: None,
                state: JobState::Pending,
                reason: Reason::None,
                reason_desc: None,
                priority: if spec.hold { 0 } else { priority },
                run_time,
                exit_code: spec.exit_code,
                runs: Default::default(),
                held: spec.hold.then_some(true),
                planned_end: 0,
                begin: spec.begin,
                requeue,
                outcome: Default::default(),
                oom: false,
                natural_end: None,
            });
            if let Some(h) = self.reasons.as_mut() {
                h.push(vec![ReasonChange {
                    t: self.now,
                    reason: Reason::None,
                    desc: None,
                }]);
            }
        }
        let n = indices.len() as u32;
        self.subs.push(SubState {
            first,
            tasks: n,
            unstarted: n,
            ..SubState::default()
        });
        self.array_running.push(0);
        if let Some(dep) = spec.dependency() {
            for t in &dep.terms {
                if let Some(target) = t.target {
                    // Only this or an earlier submission can be waited on.
                    if target <= sub {
                        self.dependents.entry(target).or_default().push(sub);
                    }
                }
            }
        }
        let key = (Arc::clone(&spec.user), Arc::clone(&spec.name));
        let next_group = self.groups.len() as u32;
        let group = *self.group_ids.entry(key).or_insert(next_group);
        if group == next_group {
            self.groups.push(SingletonGroup::default());
        }
        self.sub_group.push(group);
        let singleton = spec
            .dependency()
            .is_some_and(|d| d.terms.iter().any(|t| t.kind == DepKind::Singleton));
        if let Some(sw) = spec.request.switches {
            if self.cluster.select_tree().is_some() {
                // The policy drops the leaf limit then (the slurm policy: select.rs `switches_relaxed`).
                let wait = sw.wait.unwrap_or(u64::MAX).min(self.params.max_switch_wait);
                self.queue.push(
                    spec.submit.saturating_add(wait),
                    Phase::Eligible,
                    EventKind::SwitchWaitOver,
                );
            }
        }
        self.specs.push(spec);

        if let Some(msg) = reject {
            let s = &mut self.subs[sub as usize];
            s.rejected = true;
            s.done = n;
            s.not_ok = n;
            s.unstarted = 0;
            for j in first..first + n {
                let job = &mut self.jobs[j as usize];
                job.state = JobState::Rejected;
                job.reason = reject_reason;
                job.set_rejected(Some(msg.clone()));
            }
            self.notify_dependents(sub);
        } else {
            self.pending += n;
            self.ensure_acct_tick();
            if let (Some(a), Some(u)) = (self.cluster.accounting(), self.acct.as_mut()) {
                let spec = &self.specs[sub as usize];
                if let Some(ja) = spec.acct() {
                    for _ in 0..n {
                        u.add_submit(a, ja, &spec.user);
                    }
                }
            }
            let g = &mut self.groups[group as usize];
            g.live.extend((first..first + n).map(JobIdx));
            if singleton {
                g.waiters.insert(sub);
            }
            for j in first..first + n {
                self.try_eligible_at(JobIdx(j), true);
            }
            if self.params.pass_on_submit {
                self.request_main(self.now);
            }
        }
        self.pull_next_submission()
    }

    /// Slurm tests a new job against the nodes (`select_nodes` in test-only
    /// mode): if it could run only on nodes that are down or drained, its
    /// reason is ReqNodeNotAvail from the start.
    fn submit_test(&mut self, job: JobIdx) {
        let j = &self.jobs[job.idx()];
        let unavailable =
            self.policy
                .unavailable_at_submit(&self.cluster, &self.params, &self.state, j);
        if let Some(nodes) = unavailable {
            let names = gresim_model::hostlist::compress(&self.cluster.node_names(&nodes));
            self.set_reason(
                job,
                Reason::ReqNodeNotAvail,
                Some(format!("UnavailableNodes:{names}")),
            );
        }
    }

    /// Slurm refuses a submission that no node of its partitions could ever run.
    fn reject_reason(&mut self, spec: &JobSpec) -> Option<String> {
        // The answer depends on the request's shape and the configuration,
        // which only dynamic MIG changes during a run.
        if self.cluster.dynamic_mig().is_some() {
            return self
                .policy
                .submission_rejection(&self.cluster, &self.params, spec);
        }
        let (cluster, params, policy) = (&self.cluster, &self.params, &mut self.policy);
        self.reject_memo.get_or(&spec.request, || {
            policy.submission_rejection(cluster, params, spec)
        })
    }

    // ---- eligibility ---------------------------------------------------------

    fn dep_status(&self, sub: u32) -> DepStatus {
        let Some(dep) = self.specs[sub as usize].dependency() else {
            return DepStatus::Met;
        };
        let mut all_met = true;
        let mut any_met = false;
        let mut all_never = true;
        let mut any_never = false;
        for t in &dep.terms {
            let s = self.term_status(sub, t);
            all_met &= s == DepStatus::Met;
            any_met |= s == DepStatus::Met;
            all_never &= s == DepStatus::Never;
            any_never |= s == DepStatus::Never;
        }
        if dep.any {
            if any_met {
                DepStatus::Met
            } else if all_never {
                DepStatus::Never
            } else {
                DepStatus::Waiting
            }
        } else if any_never {
            DepStatus::Never
        } else if all_met {
            DepStatus::Met
        } else {
            DepStatus::Waiting
        }
    }

    fn term_status(&self, sub: u32, t: &gresim_model::job::DepTerm) -> DepStatus {
        if t.kind == DepKind::Singleton {
            let first = self.subs[sub as usize].first;
            let g = &self.groups[self.sub_group[sub as usize] as usize];
            let blocked = g.live.iter().any(|&j| {
                let job = &self.jobs[j.idx()];
                job.state == JobState::Running || (job.is_pending() && j.0 < first)
            });
            return if blocked {
                DepStatus::Waiting
            } else {
                DepStatus::Met
            };
        }
        let Some(target) = t.target else {
            return DepStatus::Met;
        };
        let Some(s) = self.subs.get(target as usize) else {
            return DepStatus::Met;
        };
        // The state of the dependee: one task, or the whole submission.
        let (done, not_ok, started, total) = match t.task {
            Some(task) => {
                let spec = &self.specs[target as usize];
                let pos = spec
                    .array()
                    .and_then(|a| a.indices.iter().position(|&i| i == task));
                let Some(pos) = pos else {
                    return DepStatus::Met;
                };
                let j = &self.jobs[s.first as usize + pos];
                let done = u32::from(j.state.is_terminal());
                let not_ok = u32::from(j.state.is_terminal() && j.state != JobState::Completed);
                (done, not_ok, !j.runs.is_empty() || j.state.is_terminal(), 1)
            }
            None => (s.done, s.not_ok, s.started_any || s.done > 0, s.tasks),
        };
        match t.kind {
            DepKind::After => {
                if started {
                    DepStatus::Met
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::AfterAny => {
                if done == total {
                    DepStatus::Met
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::AfterOk => {
                if not_ok > 0 {
                    DepStatus::Never
                } else if done == total {
                    DepStatus::Met
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::AfterNotOk => {
                if done == total {
                    if not_ok > 0 {
                        DepStatus::Met
                    } else {
                        DepStatus::Never
                    }
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::Singleton => DepStatus::Met,
        }
    }

    /// Puts a pending job in the queue if nothing holds it back; otherwise sets the reason.
    fn try_eligible(&mut self, job: JobIdx) {
        self.try_eligible_at(job, false);
    }

    fn try_eligible_at(&mut self, job: JobIdx, at_submit: bool) {
        let j = &self.jobs[job.idx()];
        if j.state != JobState::Pending || j.eligible.is_some() {
            return;
        }
        if let Some(user) = j.held {
            let r = if self.special_exit.contains(&job) {
                Reason::None
            } else if user {
                Reason::JobHeldUser
            } else {
                Reason::JobHeldAdmin
            };
            self.set_reason(job, r, None);
            return;
        }
        if let Some(b) = j.begin {
            if b > self.now {
                self.set_reason(job, Reason::BeginTime, None);
                self.queue
                    .push(b, Phase::Eligible, EventKind::Begin { job });
                return;
            }
        }
        match self.dep_status(j.sub) {
            DepStatus::Waiting => {
                self.set_reason(job, Reason::Dependency, None);
                return;
            }
            DepStatus::Never => {
                if self.params.kill_invalid_depend {
                    self.terminate(job, JobState::Cancelled, Reason::DependencyNeverSatisfied);
                } else {
                    self.set_reason(job, Reason::DependencyNeverSatisfied, None);
                }
                return;
            }
            DepStatus::Met => {}
        }
        self.jobs[job.idx()].eligible = Some(self.now);
        if matches!(
            self.jobs[job.idx()].reason,
            Reason::Dependency | Reason::BeginTime
        ) {
            self.set_reason(job, Reason::None, None);
        }
        let top = self.enqueue(job);
        if at_submit && !top {
            self.set_reason(job, Reason::Priority, None);
        }
        if at_submit {
            // Partition limits at submission show as PartitionConfig; the
            // scheduler's passes then name the limit.
            let j = &self.jobs[job.idx()];
            if self.policy.beyond_partition_limits(&self.cluster, j) {
                self.set_reason(job, Reason::PartitionConfig, None);
            }
        }
        if at_submit && self.unavailable_nodes > 0 {
            // sbatch's submission test: nodes it needs are DOWN or DRAINED.
            self.submit_test(job);
        }
        self.mark_dirty();
    }

    fn on_begin(&mut self, job: JobIdx) {
        let j = &self.jobs[job.idx()];
        if j.state == JobState::Pending && j.begin.is_some_and(|b| b <= self.now) {
            self.try_eligible(job);
        }
    }

    /// Re-checks the jobs that wait on submission `sub`.
    fn notify_dependents(&mut self, sub: u32) {
        let deps = self.dependents.get(&sub).cloned().unwrap_or_default();
        for d in deps {
            self.recheck_sub(d);
        }
    }

    fn recheck_sub(&mut self, sub: u32) {
        let s = &self.subs[sub as usize];
        let (first, n) = (s.first, s.tasks);
        for j in first..first + n {
            let job = &self.jobs[j as usize];
            if job.state == JobState::Pending
                && job.eligible.is_none()
                && matches!(job.reason, Reason::Dependency | Reason::None)
            {
                self.try_eligible(JobIdx(j));
            }
        }
    }

    /// Re-checks the submissions waiting as singletons on `job`'s group.
    fn notify_singletons(&mut self, job: JobIdx) {
        let g = self.sub_group[self.jobs[job.idx()].sub as usize] as usize;
        if self.groups[g].waiters.is_empty() {
            return;
        }
        let waiting: Vec<u32> = self.groups[g].waiters.iter().copied().collect();
        for s in waiting {
            self.recheck_sub(s);
            // A requeue can make it wait again: it stops waiting only
            // when every task of it has ended.
            let done = self
                .sub_jobs(s)
                .all(|j| self.jobs[j as usize].state.is_terminal());
            if done {
                self.groups[g].waiters.remove(&s);
            }
        }
    }

    // ---- start and end -------------------------------------------------------

    fn start_job(&mut self, s: Start) -> Result<(), EngineError> {
        let Start {
            job,
            partition,
            alloc,
            by_backfill,
        } = s;
        let sub = self.jobs[job.idx()].sub as usize;
        // Array tasks take a fresh job id when they start, except the last
        // unstarted one, which keeps the array's id.
        if self.jobs[job.idx()].job_id.is_none() {
            let ss = &self.subs[sub];
            let id = if ss.unstarted > 1 {
                let id = JobId(self.next_job_id);
                self.next_job_id += 1;
                id
            } else {
                self.jobs[job.idx()].array_job_id.unwrap_or(JobId(0))
            };
            self.jobs[job.idx()].job_id = Some(id);
        }
        if self.jobs[job.idx()].runs.is_empty() {
            self.subs[sub].unstarted -= 1;
        }
        self.subs[sub].started_any = true;
        self.subs[sub].running += 1;
        self.array_running[sub] += 1;
        self.running += 1;
        self.pending -= 1;
        for n in alloc.node_ids() {
            self.node_jobs[n.idx()].push(job);
        }
        let limit = {
            let j = &self.jobs[job.idx()];
            gresim_policy::time_limit_in(&self.cluster, j, partition)
        };
        let oom = self.runs_out_of_gpu_memory(job, &alloc);
        let work = self.run_secs(job);
        let work = crate::runtime::run_time_for(&self.cluster, &self.specs[sub], &alloc, work);
        let now = self.now;
        let j = &mut self.jobs[job.idx()];
        j.state = JobState::Running;
        j.reason = Reason::None;
        j.reason_desc = None;
        let run = j.runs.len() as u32;
        j.runs.push(Run {
            start: now,
            end: None,
            state: JobState::Running,
            partition,
            alloc,
        });
        // When does this run end on its own? (A program that runs out of
        // GPU memory fails shortly after it starts.)
        let natural = match (work, oom) {
            (Some(d), true) => Some(now + d.min(self.specs[sub].behavior().oom_after)),
            (None, true) => Some(now + self.specs[sub].behavior().oom_after),
            (Some(d), false) => Some(now + d),
            (None, false) => None,
        };
        j.oom = oom;
        j.natural_end = natural;
        let kill = limit.map(|l| self.limit_check_at(now + l));
        // The job exits on its own unless the time-limit check kills it first:
        // a job that ends after its limit but before the next check completes.
        let end_at = match (natural, kill) {
            (Some(n), Some(k)) => Some(n.min(k)),
            (Some(n), None) => Some(n),
            (None, Some(k)) => Some(k),
            // Runs to an unlimited limit: Slurm ends it after a year.
            (None, None) => Some(now + UNLIMITED_PLAN),
        };
        if let Some(t) = end_at {
            // A run the main pass started that ends on its own ends after
            // the main pass of its last second (`main_after_ends_from`).
            let own_end = natural.is_some_and(|n| kill.is_none_or(|k| n < k));
            let late = self.params.main_after_ends_from.is_some_and(|f| now >= f);
            let phase = if late && !by_backfill && own_end {
                Phase::MainStartedEnd
            } else {
                Phase::JobEnd
            };
            self.queue.push(t, phase, EventKind::RunEnd { job, run });
        }
        if let Some(a) = self.cluster.accounting() {
            if self.specs[sub].acct().is_some() {
                let j = &self.jobs[job.idx()];
                let alloc = &j.runs.last().map(|r| &r.alloc);
                if let Some(alloc) = alloc {
                    let tres = a.alloc_tres(&self.cluster, alloc, Some(partition));
                    let billable = a.billable(&tres, a.part_weights(Some(partition)));
                    let left = limit.unwrap_or(gresim_policy::ACCT_UNLIMITED);
                    self.acct_running.insert(
                        job,
                        AcctRun {
                            tres,
                            billable,
                            left,
                            last: now,
                        },
                    );
                }
            }
        }
        self.ensure_acct_tick();
        let planned_end = now.saturating_add(limit.unwrap_or(UNLIMITED_PLAN));
        self.jobs[job.idx()].planned_end = planned_end;
        self.running_ends.insert((planned_end, job));
        if run == 0 {
            if let Some(d) = self.specs[sub].requeue_after_start() {
                self.queue
                    .push(now + d, Phase::Admin, EventKind::Requeue { job, run });
            }
        }
        self.notify_dependents(sub as u32);
        Ok(())
    }

    /// The time-limit check that kills a job whose limit runs out at
    /// `deadline`: the first check (every `timelimit_check_interval` s from
    /// the controller's phase) at or after it.
    fn limit_check_at(&self, deadline: Time) -> Time {
        let iv = self.params.timelimit_check_interval;
        if iv == 0 {
            return deadline;
        }
        let phase = self.params.ctld_phase % iv;
        if deadline <= phase {
            phase
        } else {
            phase + (deadline - phase).div_ceil(iv) * iv
        }
    }

    /// Seconds the running `job` has been suspended in its current run.
    fn suspended_secs(&self, job: JobIdx) -> u64 {
        self.suspended.get(&job).map_or(0, |s| {
            s.total + s.since.map_or(0, |t| self.now.saturating_sub(t))
        })
    }

    fn is_suspended(&self, job: JobIdx) -> bool {
        self.suspended.get(&job).is_some_and(|s| s.since.is_some())
    }

    /// Queues the running `job`'s end again after what decides it changed
    /// (its time limit, its own end, time spent suspended): the earlier of
    /// its own end and the time-limit check past start + suspended + limit.
    /// The run-end event queued before becomes stale.
    fn reschedule_end(&mut self, job: JobIdx) {
        let j = &self.jobs[job.idx()];
        let Some(r) = j.runs.last() else {
            return;
        };
        let (start, part, run) = (r.start, r.partition, j.runs.len() as u32 - 1);
        let limit = gresim_policy::time_limit_in(&self.cluster, j, part);
        let base = start + self.suspended_secs(job);
        let kill = limit.map(|l| self.limit_check_at((base + l).max(self.now)));
        let end_at = match (j.natural_end, kill) {
            (Some(n), Some(k)) => n.min(k),
            (Some(n), None) => n,
            (None, Some(k)) => k,
            (None, None) => base + UNLIMITED_PLAN,
        }
        .max(self.now);
        let planned = base.saturating_add(limit.unwrap_or(UNLIMITED_PLAN));
        self.running_ends.remove(&(j.planned_end, job));
        self.jobs[job.idx()].planned_end = planned;
        self.running_ends.insert((planned, job));
        self.moved_ends.insert(job, end_at);
        self.queue
            .push(end_at, Phase::JobEnd, EventKind::RunEnd { job, run });
    }

    /// Stops a running job (`scontrol suspend`; a preemption that suspends
    /// would do the same): it keeps its resources, and neither its run
    /// time nor its time limit counts until [`Self::resume_job`]. Returns
    /// whether it was running and not already suspended.
    pub(crate) fn suspend_job(&mut self, job: JobIdx) -> bool {
        if self.jobs[job.idx()].state != JobState::Running || self.is_suspended(job) {
            return false;
        }
        self.suspended.entry(job).or_default().since = Some(self.now);
        true
    }

    /// Continues a suspended job: its own end and its time limit move by
    /// the time it was stopped.
    pub(crate) fn resume_job(&mut self, job: JobIdx) -> bool {
        let now = self.now;
        let Some(s) = self.suspended.get_mut(&job) else {
            return false;
        };
        let Some(since) = s.since.take() else {
            return false;
        };
        let d = now.saturating_sub(since);
        s.total += d;
        let j = &mut self.jobs[job.idx()];
        j.natural_end = j.natural_end.map(|n| n + d);
        self.reschedule_end(job);
        true
    }

    /// Frees the job's resources and closes its current run.
    fn finish_run(&mut self, job: JobIdx, run_state: JobState) -> Result<(), EngineError> {
        if matches!(
            run_state,
            JobState::NodeFail | JobState::Requeued | JobState::Preempted
        ) {
            self.account_failed_run(job);
        }
        self.signalled.remove(&job);
        let now = self.now;
        let j = &mut self.jobs[job.idx()];
        let Some(run) = j.runs.last_mut() else {
            return Err(EngineError::Internal(format!(
                "job {} ends without a run",
                j.display_id()
            )));
        };
        run.end = Some(now);
        run.state = run_state;
        let planned = (j.planned_end, job);
        let alloc: Allocation = run.alloc.clone();
        let sub = j.sub as usize;
        self.running_ends.remove(&planned);
        self.forget_run_state(job);
        self.state
            .release(&self.cluster, &alloc)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        for n in alloc.node_ids() {
            let v = &mut self.node_jobs[n.idx()];
            if let Some(p) = v.iter().position(|x| *x == job) {
                v.swap_remove(p);
            }
        }
        self.acct_fini(job);
        self.subs[sub].running -= 1;
        self.array_running[sub] -= 1;
        self.running -= 1;
        Ok(())
    }

    /// The accounting tick runs while anything is left to happen, under
    /// priority/multifactor (priority/basic has no decay thread).
    fn ensure_acct_tick(&mut self) {
        if self.acct.is_none()
            || self.acct_tick_at.is_some()
            || !matches!(self.params.priority, PriorityConfig::Multifactor(_))
        {
            return;
        }
        let iv = self.params.priority_calc_period.max(1);
        let phase = self.params.decay_phase % iv;
        let t = if self.now < phase {
            phase
        } else {
            phase + ((self.now - phase) / iv + 1) * iv
        };
        self.acct_tick_at = Some(t);
        self.queue.push(t, Phase::JobEnd, EventKind::AcctTick);
    }

    /// The decay factor per second, and Fair Tree or classic.
    fn fairshare_params(&self) -> (f64, bool) {
        match &self.params.priority {
            PriorityConfig::Multifactor(m) => (
                gresim_policy::fairshare::decay_factor(m.half_life),
                m.fair_tree,
            ),
            PriorityConfig::Basic => (1.0, true),
        }
    }

    /// A running job under accounting stops holding its TRES (`acct_policy_job_fini`),
    /// and its use since the last tick counts (`priority_p_job_end()`).
    fn acct_fini(&mut self, job: JobIdx) {
        let Some(AcctRun {
            tres,
            billable,
            left,
            last,
        }) = self.acct_running.remove(&job)
        else {
            return;
        };
        let (df, _) = self.fairshare_params();
        let multifactor = matches!(self.params.priority, PriorityConfig::Multifactor(_));
        let now = self.now;
        let (Some(a), Some(u)) = (self.cluster.accounting(), self.acct.as_mut()) else {
            return;
        };
        let spec = &self.specs[self.jobs[job.idx()].sub as usize];
        if let Some(ja) = spec.acct() {
            if multifactor {
                gresim_policy::fairshare::accrue(
                    a,
                    u,
                    ja,
                    &tres,
                    billable,
                    now.saturating_sub(last),
                    df,
                );
            }
            let mut run_left = [0u64; gresim_model::accounting::MAX_TRES];
            for (r, t) in run_left.iter_mut().zip(&tres) {
                *r = t.saturating_mul(left);
            }
            u.job_fini(a, ja, &spec.user, &tres, &run_left);
        }
    }

    /// The priority plugin's periodic work (`PriorityCalcPeriod`): running
    /// jobs' TRES-seconds still to run shrink by the time they ran.
    /// Also, under priority/multifactor (`_decay_thread()`, Fair Tree's
    /// `fair_tree_decay()`): usage decays, running jobs' use since the last
    /// tick is added, fair-share factors are recomputed, and so are the
    /// priorities of the queued jobs.
    fn on_acct_tick(&mut self) {
        self.acct_tick_at = None;
        let now = self.now;
        let (df, fair_tree) = self.fairshare_params();
        let (Some(a), Some(u)) = (self.cluster.accounting(), self.acct.as_mut()) else {
            return;
        };
        // PriorityUsageResetPeriod: checked first of all.
        if let PriorityConfig::Multifactor(m) = &self.params.priority {
            use gresim_policy::fairshare::{next_reset, reset_usage, UsageReset};
            match m.usage_reset {
                UsageReset::None => {}
                UsageReset::Now => {
                    if self.usage_reset.1.is_none() {
                        reset_usage(u);
                        self.usage_reset = (now, Some(Time::MAX));
                    }
                }
                p => {
                    let (last, next) = self.usage_reset;
                    if let Some(next) = next.or_else(|| next_reset(p, last, now)) {
                        if now >= next {
                            reset_usage(u);
                            self.usage_reset = (next, next_reset(p, next, now));
                        } else {
                            self.usage_reset.1 = Some(next);
                        }
                    }
                }
            }
        }
        // Classic fair-share: the accounts' effective usage as the thread
        // finds it when it starts, before decay and new usage.
        let before = (!fair_tree).then(|| {
            gresim_policy::fairshare::compute(a, u, false, None);
            u.shares.clone()
        });
        // The decay thread ran one period before its first tick here (it
        // starts with slurmctld), so the first decay spans one period.
        let since = if u.last_decay > 0 {
            now.saturating_sub(u.last_decay)
        } else {
            self.params.priority_calc_period.max(1)
        };
        gresim_policy::fairshare::apply_decay(a, u, df.powf(since as f64));
        for (job, r) in self.acct_running.iter_mut() {
            let ran = now.saturating_sub(r.last);
            let d = ran.min(r.left);
            r.left -= d;
            r.last = now;
            let spec = &self.specs[self.jobs[job.idx()].sub as usize];
            if let Some(ja) = spec.acct() {
                gresim_policy::fairshare::accrue(a, u, ja, &r.tres, r.billable, ran, df);
                u.run_down(a, ja, &spec.user, &r.tres, d);
            }
        }
        gresim_policy::fairshare::compute(a, u, fair_tree, before.as_deref());
        u.last_decay = now;
        if self
            .fairshare_log
            .last()
            .is_none_or(|&(t, _)| now >= t + FAIRSHARE_SAMPLE)
        {
            self.fairshare_log.push((now, u.fairshare.clone()));
        }
        let ectx = gresim_policy::EnqueueCtx {
            cluster: &self.cluster,
            params: &self.params,
            jobs: &self.jobs,
            specs: &self.specs,
            acct: self.acct.as_ref(),
            now: Some(now),
        };
        self.policy.reprioritize(&ectx);
        // Ticks go on while anything else is left to happen (not for jobs
        // that can never start: a reordered queue alone starts nothing new).
        let more = !self.acct_running.is_empty()
            || !self.queue.is_empty()
            || self.next_spec.is_some()
            || self.usage_may_free_jobs();
        if self.policy.queued() > 0 {
            self.mark_dirty();
        }
        if more {
            self.ensure_acct_tick();
        }
    }

    /// Whether decay or a coming usage reset may still let a job start that
    /// `GrpTRESMins` or `GrpWall` holds: some usage is at least a minute
    /// (the limits count whole minutes) and such a job is pending.
    fn usage_may_free_jobs(&self) -> bool {
        let (Some(u), PriorityConfig::Multifactor(m)) = (self.acct.as_ref(), &self.params.priority)
        else {
            return false;
        };
        let resets = match m.usage_reset {
            gresim_policy::fairshare::UsageReset::None => false,
            gresim_policy::fairshare::UsageReset::Now => self.usage_reset.1.is_none(),
            _ => true,
        };
        (m.half_life > 0 || resets)
            && u.assoc_decayed
                .iter()
                .chain(&u.qos_decayed)
                .any(|d| d.wall >= 60.0 || d.tres.iter().any(|t| *t >= 60.0))
            && self
                .jobs
                .iter()
                .any(|j| j.is_pending() && j.reason.reads_decayed_usage())
    }

    /// A running job is killed (`scancel`): its run ends now, but like
    /// Slurm's COMPLETING job it keeps its nodes (`cg_node_bitmap`: no new
    /// job goes there, busy or not) and its dependents keep waiting
    /// (`IS_JOB_COMPLETED`) until slurmd reports the kill done,
    /// `completing` seconds later ([`Self::on_completed`]).
    fn kill_running(
        &mut self,
        job: JobIdx,
        state: JobState,
        reason: Reason,
        completing: u64,
    ) -> Result<(), EngineError> {
        self.forget_run_state(job);
        let now = self.now;
        let done = now + completing;
        let j = &mut self.jobs[job.idx()];
        let Some(run) = j.runs.last_mut() else {
            return Err(EngineError::Internal(format!(
                "job {} ends without a run",
                j.display_id()
            )));
        };
        run.end = Some(now);
        run.state = state;
        j.state = state;
        j.reason = reason;
        let sub = j.sub as usize;
        // Backfill plans the nodes free when the completion is done.
        self.running_ends.remove(&(j.planned_end, job));
        j.planned_end = done;
        self.running_ends.insert((done, job));
        let mut hold = Allocation::default();
        for na in &run.alloc.nodes {
            let u = self.state.node(na.node);
            if let Some(p) = self.node_jobs[na.node.idx()].iter().position(|x| *x == job) {
                self.node_jobs[na.node.idx()].swap_remove(p);
            }
            if !u.schedulable() || u.exclusive {
                continue;
            }
            hold.nodes.push(gresim_model::NodeAlloc {
                node: na.node,
                cores: u.free_cores,
                cpus: 0,
                mem_mib: u.free_mem,
                gpus: u.free_gpus,
                tasks: 0,
                share: None,
            });
        }
        self.state
            .allocate(&self.cluster, &hold)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        self.completing.push((job, hold));
        self.acct_fini(job);
        self.subs[sub].running -= 1;
        self.array_running[sub] -= 1;
        self.running -= 1;
        self.queue
            .push(done, Phase::JobEnd, EventKind::Completed { job });
        Ok(())
    }

    /// The kill of `job` is done: its nodes are free, its dependents may go.
    fn on_completed(&mut self, job: JobIdx) -> Result<(), EngineError> {
        let Some(p) = self.completing.iter().position(|c| c.0 == job) else {
            return Ok(());
        };
        let (_, hold) = self.completing.swap_remove(p);
        let j = &self.jobs[job.idx()];
        self.running_ends.remove(&(j.planned_end, job));
        let (state, reason) = (j.state, j.reason);
        let alloc = j.runs.last().map(|r| r.alloc.clone()).unwrap_or_default();
        for a in [&alloc, &hold] {
            self.state
                .release(&self.cluster, a)
                .map_err(|e| EngineError::Internal(e.to_string()))?;
        }
        let preempted = state == JobState::Preempted;
        match self.requeue_held.remove(&job) {
            Some(special_exit) => self.back_to_queue(job, Some(special_exit)),
            None if preempted && self.preempt_requeued.remove(&job) => {
                self.back_to_queue(job, None)
            }
            None => self.terminate(job, state, reason),
        }
        self.mark_dirty();
        if preempted {
            // slurmd's MESSAGE_EPILOG_COMPLETE: `_slurm_rpc_epilog_complete()`
            // schedules at once, which starts the preemptor.
            self.request_main(self.now);
        }
        Ok(())
    }

    /// A requeued job's kill is done COMPLETING: it is pending again and
    /// eligible once `cred_expire + 1` s have passed (`batch_requeue_fini()`).
    /// After `requeuehold` (`held` is `Some(special_exit)`) it is also held
    /// by the user (Slurm sets JobHeldUser whoever asked) or in SPECIAL_EXIT,
    /// until released.
    fn back_to_queue(&mut self, job: JobIdx, held: Option<bool>) {
        let now = self.now;
        let delay = self.params.cred_expire + 1;
        let j = &mut self.jobs[job.idx()];
        j.state = JobState::Pending;
        j.submit = now;
        j.eligible = None;
        j.begin = Some(now + delay);
        if let Some(special_exit) = held {
            j.held = Some(true);
            j.priority = 0;
            if special_exit {
                self.special_exit.insert(job);
            }
        }
        self.pending += 1;
        self.try_eligible(job);
        self.notify_singletons(job);
    }

    /// Drops what the engine keeps about a job's current run beyond the
    /// job record (suspensions, a moved end), when the run ends.
    fn forget_run_state(&mut self, job: JobIdx) {
        if !self.suspended.is_empty() {
            self.suspended.remove(&job);
        }
        if !self.moved_ends.is_empty() {
            self.moved_ends.remove(&job);
        }
    }

    /// The job ended for good in `state`.
    fn terminate(&mut self, job: JobIdx, state: JobState, reason: Reason) {
        let j = &mut self.jobs[job.idx()];
        let was_pending = j.state == JobState::Pending;
        j.state = state;
        j.reason = reason;
        let sub = j.sub;
        if was_pending {
            self.pending -= 1;
            if j.runs.is_empty() {
                self.subs[sub as usize].unstarted -= 1;
            }
        }
        if let (Some(a), Some(u)) = (self.cluster.accounting(), self.acct.as_mut()) {
            let spec = &self.specs[sub as usize];
            if let Some(ja) = spec.acct() {
                u.remove_submit(a, ja, &spec.user);
            }
        }
        let s = &mut self.subs[sub as usize];
        s.done += 1;
        if state != JobState::Completed {
            s.not_ok += 1;
        }
        let g = self.sub_group[sub as usize] as usize;
        self.groups[g].live.remove(&job);
        self.notify_dependents(sub);
        self.notify_singletons(job);
    }

    fn on_run_end(&mut self, job: JobIdx, run: u32) -> Result<(), EngineError> {
        let j = &self.jobs[job.idx()];
        if j.state != JobState::Running || j.runs.len() as u32 != run + 1 {
            return Ok(()); // stale: the run was cancelled or requeued
        }
        let r = &j.runs[run as usize];
        let ran = (self.now - r.start).saturating_sub(self.suspended_secs(job));
        let limit = gresim_policy::time_limit_in(&self.cluster, j, r.partition);
        // Killed by the time-limit check, or ended on its own?
        let natural_end = j.natural_end;
        // A job that runs to its limit is killed by the check (an unlimited
        // one after Slurm's year); one with a run time ends on its own unless
        // the check came first.
        let timed_out = match natural_end {
            None => true,
            Some(n) => limit.is_some_and(|l| ran >= l) && n > self.now,
        };
        let (state, reason) = if timed_out {
            (JobState::Timeout, Reason::TimeLimit)
        } else if j.oom {
            // PyTorch's "RuntimeError: CUDA out of memory" exits 1.
            self.jobs[job.idx()].exit_code = 1;
            (JobState::Failed, Reason::NonZeroExitCode)
        } else if j.exit_code != 0 {
            (JobState::Failed, Reason::NonZeroExitCode)
        } else {
            (JobState::Completed, Reason::None)
        };
        self.finish_run(job, state)?;
        self.terminate(job, state, reason);
        self.mark_dirty();
        if self.params.pass_on_end {
            self.request_main(self.now);
        }
        Ok(())
    }

    /// A policy's preemption: at once, or after the grace time (Slurm's
    /// `slurm_job_preempt()`: the job gets SIGTERM and its end time becomes
    /// now + GraceTime; the batch script is not signalled, so it runs on
    /// until then). A job already in its grace time is left alone.
    /// Returns whether the job's resources are free now.
    fn apply_preempt(&mut self, p: gresim_policy::Preempt) -> Result<bool, EngineError> {
        let j = &self.jobs[p.job.idx()];
        if j.state != JobState::Running || j.runs.is_empty() {
            return Ok(false);
        }
        let run = j.runs.len() as u32 - 1;
        if self.signalled.get(&p.job) == Some(&run) {
            return Ok(false);
        }
        if p.grace == 0 {
            self.preempt_now(p.job, p.mode)?;
            return Ok(self.params.preempt_completing == 0);
        }
        self.signalled.insert(p.job, run);
        let end = self.now.saturating_add(p.grace);
        let planned = j.planned_end;
        if end < planned {
            // Backfill plans with the new end time.
            self.running_ends.remove(&(planned, p.job));
            self.running_ends.insert((end, p.job));
            self.jobs[p.job.idx()].planned_end = end;
        }
        self.queue.push(
            end,
            Phase::Admin,
            EventKind::PreemptKill {
                job: p.job,
                run,
                mode: p.mode,
            },
        );
        Ok(false)
    }

    /// Ends a preempted job's run: requeued (PreemptMode=REQUEUE and the job
    /// may be requeued) or killed, ending PREEMPTED. The work since its last
    /// checkpoint is lost either way. Its resources are free at once, and a
    /// requeued job's begin time is `cred_expire + 1` s later; with
    /// `preempt_completing` they stay taken that long, and the begin time
    /// counts from then (docs/preemption.md).
    fn preempt_now(&mut self, job: JobIdx, mode: PreemptMode) -> Result<(), EngineError> {
        self.signalled.remove(&job);
        if self.jobs[job.idx()].state != JobState::Running {
            return Ok(());
        }
        let requeue = mode == PreemptMode::Requeue && self.jobs[job.idx()].requeue;
        let completing = self.params.preempt_completing;
        if completing > 0 {
            // The kill takes `preempt_completing` s: the run ends now, its
            // resources stay taken until then (on_completed), when a
            // requeued job goes back to the queue.
            self.account_failed_run(job);
            self.kill_running(job, JobState::Preempted, Reason::None, completing)?;
            if requeue {
                self.preempt_requeued.insert(job);
            }
            return Ok(());
        }
        if requeue {
            self.requeue(job, JobState::Preempted, 0)?;
        } else {
            self.finish_run(job, JobState::Preempted)?;
            self.terminate(job, JobState::Preempted, Reason::None);
        }
        self.mark_dirty();
        Ok(())
    }

    /// Sends a running job back to the queue, as Slurm's requeue does. Its
    /// begin time counts from `completing` seconds later, when slurmd has
    /// reported the kill done (`batch_requeue_fini()`).
    fn requeue(
        &mut self,
        job: JobIdx,
        run_state: JobState,
        completing: u64,
    ) -> Result<(), EngineError> {
        self.finish_run(job, run_state)?;
        let now = self.now;
        let delay = completing + self.params.cred_expire + 1;
        let j = &mut self.jobs[job.idx()];
        j.state = JobState::Pending;
        j.submit = now;
        j.eligible = None;
        j.begin = Some(now + delay);
        self.pending += 1;
        self.try_eligible(job);
        // A singleton waiting on this job may go now that it is no longer running.
        self.notify_singletons(job);
        Ok(())
    }

    // ---- admin actions -------------------------------------------------------

    /// The job records of a submission; empty if it is not submitted yet
    /// (Slurm answers "Invalid job id specified" and nothing happens).
    fn sub_jobs(&self, sub: u32) -> std::ops::Range<u32> {
        match self.subs.get(sub as usize) {
            Some(s) => s.first..s.first + s.tasks,
            None => 0..0,
        }
    }

    /// `validate_job_resv()` at submission: sbatch fails for a reservation
    /// that does not exist, or that the job's user or account may not use.
    fn resv_rejection(&self, spec: &JobSpec) -> Option<String> {
        let name = spec.reservation()?;
        let Some(r) = self.resv.get(name) else {
            return Some("Requested reservation is invalid".into());
        };
        let account = gresim_policy::job_account(&self.cluster, spec);
        (!r.may_use(&spec.user, account)).then(|| "Access denied to requested reservation".into())
    }

    /// Queues a wake-up at each reservation edge to come (a week ahead for
    /// recurring ones; each wake-up queues the next).
    fn queue_resv_edges(&mut self) {
        for t in self.resv.edges_after(self.now, 7 * 86_400) {
            if self.resv_edges.insert(t) {
                self.queue.push(t, Phase::Cancel, EventKind::ResvEdge);
            }
        }
    }

    /// A reservation changed: keep the history, wake up at its edges, and
    /// let the passes look again.
    fn resv_changed(&mut self) {
        self.resv_history.push((self.now, self.resv.clone()));
        self.queue_resv_edges();
        self.mark_dirty();
    }

    fn resv_refuse(&mut self, name: &str, error: &str) {
        self.resv_refused.push(crate::ResvRefusal {
            t: self.now,
            name: name.to_string(),
            error: error.to_string(),
        });
    }

    /// Whether a running job holds `node` past `start` (`_job_overlap()`:
    /// its planned end, start + time limit, is after it), outside the
    /// reservation `name`.
    fn job_holds_past(&self, node: NodeId, start: Time, name: &str) -> bool {
        self.node_jobs[node.idx()].iter().any(|&j| {
            let job = &self.jobs[j.idx()];
            job.state == JobState::Running
                && job.planned_end > start
                && self.specs[job.sub as usize].reservation() != Some(name)
        })
    }

    /// Why `create_resv()`/`update_resv()` would refuse `r` (at index
    /// `skip` when it replaces an existing one).
    fn resv_refusal(
        &self,
        r: &gresim_model::reservation::Reservation,
        skip: Option<usize>,
    ) -> Option<String> {
        use gresim_model::reservation::ResvFlags;
        if r.nodes.is_empty() {
            return Some("Invalid node name specified".into());
        }
        if r.end <= r.start {
            return Some("Invalid time specification".into());
        }
        if let Some(other) = self.resv.conflict(r, skip, self.now) {
            return Some(format!(
                "Requested reservation overlaps with another reservation ({other})"
            ));
        }
        if !r.flags.has(ResvFlags::IGNORE_JOBS)
            && r.nodes
                .iter()
                .any(|&n| self.job_holds_past(n, r.start, &r.name))
        {
            return Some("Requested nodes are busy".into());
        }
        None
    }

    /// `NodeCnt=`: the first nodes (of `part`, when given) in no reservation
    /// that overlaps the new one and, without IGNORE_JOBS, held by no
    /// running job past its start.
    fn resv_pick_nodes(
        &self,
        r: &gresim_model::reservation::Reservation,
        cnt: u32,
        part: Option<gresim_model::PartId>,
    ) -> Vec<NodeId> {
        use gresim_model::reservation::ResvFlags;
        let ignore = r.flags.has(ResvFlags::IGNORE_JOBS);
        (0..self.cluster.nodes.len())
            .map(NodeId::from_idx)
            .filter(|&n| part.is_none_or(|p| self.cluster.in_partition(p, n)))
            .filter(|&n| self.state.node(n).schedulable())
            .filter(|&n| {
                !self.resv.list.iter().any(|x| {
                    x.holds(n) && !x.flags.has(ResvFlags::OVERLAP) && x.time_overlap(r, self.now)
                })
            })
            .filter(|&n| ignore || !self.job_holds_past(n, r.start, &r.name))
            .take(cnt as usize)
            .collect()
    }

    fn resv_create(&mut self, req: crate::ResvRequest) {
        let crate::ResvRequest {
            mut resv,
            node_cnt,
            partition,
        } = req;
        if self.resv.get(&resv.name).is_some() {
            return self.resv_refuse(&resv.name, "Duplicate reservation name");
        }
        if let Some(c) = node_cnt {
            resv.nodes = self.resv_pick_nodes(&resv, c, partition);
            if resv.nodes.len() < c as usize {
                return self.resv_refuse(&resv.name, "Requested nodes are busy");
            }
        }
        if let Some(e) = self.resv_refusal(&resv, None) {
            return self.resv_refuse(&resv.name, &e);
        }
        self.resv.list.push(resv);
        self.resv_changed();
    }

    fn resv_update(&mut self, c: crate::ResvChange) {
        let Some(i) = self.resv.index(&c.name) else {
            return self.resv_refuse(&c.name, "Reservation request invalid");
        };
        let mut r = self.resv.list[i].clone();
        if let Some(s) = c.start {
            r.start = s;
        }
        if let Some(e) = c.end {
            r.end = e;
        }
        if let Some(d) = c.duration {
            r.end = r.start.saturating_add(d);
        } else if c.start.is_some() && c.end.is_none() {
            // A new start keeps the duration (`update_resv()`).
            let old = &self.resv.list[i];
            r.end = r.start.saturating_add(old.end - old.start);
        }
        if let Some(n) = c.nodes {
            r.nodes = n;
        }
        if let Some(u) = c.users {
            r.users = u;
        }
        if let Some(a) = c.accounts {
            r.accounts = a;
        }
        if let Some(f) = c.flags {
            r.flags = f;
        }
        if let Some(e) = self.resv_refusal(&r, Some(i)) {
            return self.resv_refuse(&c.name, &e);
        }
        self.resv.list[i] = r;
        self.resv_changed();
    }

    fn resv_delete(&mut self, name: &str) {
        let Some(i) = self.resv.index(name) else {
            return self.resv_refuse(name, "Reservation request invalid");
        };
        let busy = self.jobs.iter().any(|j| {
            j.state == JobState::Running && self.specs[j.sub as usize].reservation() == Some(name)
        });
        if busy {
            return self.resv_refuse(name, "Reservation busy");
        }
        self.resv.list.remove(i);
        self.resv_changed();
    }

    fn on_action(&mut self, i: usize) -> Result<(), EngineError> {
        let action = self.actions[i].action.clone();
        self.apply(action)
    }

    fn apply(&mut self, action: Action) -> Result<(), EngineError> {
        match action {
            Action::ResvCreate(r) => self.resv_create(*r),
            Action::ResvUpdate(c) => self.resv_update(*c),
            Action::ResvDelete(name) => self.resv_delete(&name),
            Action::NodeDown(nodes) => {
                for n in nodes {
                    if let Some(after) = self.failed[n.idx()].as_mut() {
                        *after = NodeAdminState::Down;
                        continue;
                    }
                    self.take_node_down(n)?;
                }
            }
            Action::NodeFail(nodes) => {
                self.applying_failure = true;
                for n in nodes {
                    if self.failed[n.idx()].is_none() {
                        self.failed[n.idx()] = Some(self.state.node(n).admin);
                        self.failed_count += 1;
                        self.node_failures[n.idx()] += 1;
                        self.take_node_down(n)?;
                    }
                }
                self.applying_failure = false;
            }
            Action::NodeRepair(nodes) => {
                self.applying_failure = true;
                for n in nodes {
                    let Some(after) = self.failed[n.idx()].take() else {
                        continue;
                    };
                    self.failed_count -= 1;
                    if after != NodeAdminState::Down {
                        self.count_node_up(n, true);
                        self.set_admin(n, after);
                    }
                }
                self.applying_failure = false;
            }
            Action::NodeUp(nodes) | Action::NodeResume(nodes) => {
                for n in nodes {
                    if let Some(after) = self.failed[n.idx()].as_mut() {
                        *after = NodeAdminState::Up;
                        continue;
                    }
                    if self.state.node(n).admin == NodeAdminState::Down {
                        self.count_node_up(n, true);
                    }
                    self.set_admin(n, NodeAdminState::Up);
                }
            }
            Action::NodeDrain(nodes) => {
                for n in nodes {
                    if let Some(after) = self.failed[n.idx()].as_mut() {
                        *after = NodeAdminState::Drain;
                        continue;
                    }
                    if self.state.node(n).admin == NodeAdminState::Down {
                        self.count_node_up(n, true);
                    }
                    self.set_admin(n, NodeAdminState::Drain);
                }
            }
            Action::Hold { sub, admin } => {
                for j in self.sub_jobs(sub) {
                    self.hold_pending(JobIdx(j), admin);
                }
            }
            Action::Release { sub, owner } => {
                for j in self.sub_jobs(sub) {
                    let jr = &mut self.jobs[j as usize];
                    // The owner may not release an administrator's hold.
                    if owner && jr.held == Some(false) {
                        continue;
                    }
                    if jr.state == JobState::Pending && jr.held.take().is_some() {
                        self.special_exit.remove(&JobIdx(j));
                        let jr = &mut self.jobs[j as usize];
                        jr.priority = self.next_priority;
                        self.next_priority = self.next_priority.saturating_sub(1).max(1);
                        self.set_reason(JobIdx(j), Reason::None, None);
                        self.try_eligible(JobIdx(j));
                    }
                }
            }
            Action::Cancel { sub } => {
                for j in self.sub_jobs(sub) {
                    self.cancel_job(JobIdx(j))?;
                }
            }
            Action::Requeue { sub } => {
                for j in self.sub_jobs(sub) {
                    if self.jobs[j as usize].state == JobState::Running {
                        self.requeue(
                            JobIdx(j),
                            JobState::Requeued,
                            self.params.requeue_completing,
                        )?;
                    }
                }
            }
            Action::CancelWhere { subs, state, user } => {
                let jobs: Vec<u32> = match &subs {
                    Some(subs) => subs.iter().flat_map(|&s| self.sub_jobs(s)).collect(),
                    None => (0..self.jobs.len() as u32).collect(),
                };
                let mut by_sub: Vec<u32> = Vec::new();
                for j in jobs {
                    let jr = &self.jobs[j as usize];
                    let in_state = state.is_none_or(|s| s == jr.state);
                    let by_user = user
                        .as_deref()
                        .is_none_or(|u| *self.specs[jr.sub as usize].user == *u);
                    if in_state && by_user && !jr.state.is_terminal() {
                        by_sub.push(j);
                    }
                }
                for j in by_sub {
                    self.cancel_job(JobIdx(j))?;
                }
            }
            Action::Signal { sub, signal, batch } => {
                if batch {
                    for j in self.sub_jobs(sub) {
                        self.signal_batch(JobIdx(j), signal);
                    }
                }
            }
            Action::RequeueHold { sub, special_exit } => {
                for j in self.sub_jobs(sub) {
                    let job = JobIdx(j);
                    match self.jobs[j as usize].state {
                        JobState::Running => {
                            self.account_failed_run(job);
                            self.kill_running(
                                job,
                                JobState::Requeued,
                                Reason::None,
                                self.params.requeue_completing,
                            )?;
                            self.requeue_held.insert(job, special_exit);
                        }
                        // A pending job is held where it is.
                        JobState::Pending => {
                            if special_exit {
                                self.special_exit.insert(job);
                            }
                            self.hold_pending(job, false);
                        }
                        _ => {}
                    }
                }
            }
            Action::Suspend { sub } => {
                for j in self.sub_jobs(sub) {
                    self.suspend_job(JobIdx(j));
                }
            }
            Action::Resume { sub } => {
                for j in self.sub_jobs(sub) {
                    self.resume_job(JobIdx(j));
                }
            }
            Action::Top { subs, owner } => {
                if !owner || self.params.enable_user_top {
                    self.set_top(&subs);
                }
            }
            Action::Update { sub, change } => {
                for j in self.sub_jobs(sub) {
                    self.update_job(JobIdx(j), &change);
                }
            }
        }
        self.mark_dirty();
        Ok(())
    }

    /// Holds a pending job (priority 0, out of the queue): an administrator's
    /// hold (JobHeldAdmin) or a user's (JobHeldUser; no reason in SPECIAL_EXIT).
    fn hold_pending(&mut self, job: JobIdx, admin: bool) {
        if self.jobs[job.idx()].state != JobState::Pending {
            return;
        }
        if self.jobs[job.idx()].eligible.take().is_some() {
            self.policy.dequeue(job, &self.jobs, &self.cluster);
        }
        self.jobs[job.idx()].held = Some(!admin);
        self.jobs[job.idx()].priority = 0;
        let r = if admin {
            Reason::JobHeldAdmin
        } else if self.special_exit.contains(&job) {
            Reason::None
        } else {
            Reason::JobHeldUser
        };
        self.set_reason(job, r, None);
    }

    /// `scancel` of one job: pending, it ends at once; running, it is
    /// killed (COMPLETING for `kill_completing` seconds).
    fn cancel_job(&mut self, job: JobIdx) -> Result<(), EngineError> {
        match self.jobs[job.idx()].state {
            JobState::Pending => {
                if self.jobs[job.idx()].eligible.take().is_some() {
                    self.policy.dequeue(job, &self.jobs, &self.cluster);
                }
                self.special_exit.remove(&job);
                self.terminate(job, JobState::Cancelled, Reason::None);
            }
            JobState::Running if self.params.kill_completing > 0 => {
                self.kill_running(
                    job,
                    JobState::Cancelled,
                    Reason::None,
                    self.params.kill_completing,
                )?;
            }
            JobState::Running => {
                self.finish_run(job, JobState::Cancelled)?;
                self.terminate(job, JobState::Cancelled, Reason::None);
            }
            _ => {}
        }
        Ok(())
    }

    /// `scancel --batch --signal=SIG` of a running job: the batch shell
    /// dies of the signal, and the job ends FAILED with the signal as its
    /// exit code `signal_exit_delay` seconds later (unless it ends before).
    fn signal_batch(&mut self, job: JobIdx, signal: u8) {
        if self.jobs[job.idx()].state != JobState::Running {
            return;
        }
        let at = self.now + self.params.signal_exit_delay;
        let j = &mut self.jobs[job.idx()];
        if j.natural_end.is_some_and(|n| n <= at) {
            return;
        }
        j.natural_end = Some(at);
        j.exit_code = i32::from(signal);
        self.reschedule_end(job);
    }

    /// The job's partition for `scontrol top` (its only one, or the default).
    fn sole_partition(&self, job: JobIdx) -> Option<gresim_model::PartId> {
        let parts = &self.jobs[job.idx()].request.partitions;
        match parts.as_slice() {
            [] => self.cluster.default_partition(),
            [p] => Some(*p),
            _ => None,
        }
    }

    /// The priority the job's queue record has (Slurm's `job_ptr->priority`).
    fn current_priority(&self, job: JobIdx, part: gresim_model::PartId) -> u32 {
        gresim_policy::record_priority(
            &self.cluster,
            &self.params,
            &self.specs,
            &self.jobs[job.idx()],
            part,
            Some(self.now),
            self.acct.as_ref(),
        )
    }

    /// Changes a pending job that may be in the policy's queue: out of the
    /// queue, `f`, back in (keeping its eligible time), so the policy sees
    /// the new request and priority.
    fn requeue_in_policy(&mut self, job: JobIdx, f: impl FnOnce(&mut Self)) {
        let queued = self.jobs[job.idx()].eligible.is_some();
        if queued {
            self.policy.dequeue(job, &self.jobs, &self.cluster);
        }
        f(self);
        if queued {
            self.enqueue(job);
        }
    }

    /// Puts the job in the policy's queue; whether nothing queued is ahead of it.
    fn enqueue(&mut self, job: JobIdx) -> bool {
        let ectx = gresim_policy::EnqueueCtx {
            cluster: &self.cluster,
            params: &self.params,
            jobs: &self.jobs,
            specs: &self.specs,
            acct: self.acct.as_ref(),
            now: None,
        };
        self.policy.enqueue(job, &ectx)
    }

    /// Sets the job's priority: under priority/basic its own value; the nice
    /// value moves by the same amount the other way (as Slurm's
    /// `details->nice`), which is what moves it under multifactor.
    fn shift_priority(&mut self, job: JobIdx, to: u32, from: u32) {
        let delta = i64::from(to) - i64::from(from);
        self.requeue_in_policy(job, |e| {
            let j = &mut e.jobs[job.idx()];
            j.priority = to;
            let spec = &mut e.specs[j.sub as usize];
            spec.nice = (i64::from(spec.nice) - delta)
                .clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        });
    }

    /// `scontrol top`: Slurm's `_set_top()`. The named pending jobs take the
    /// highest priorities among themselves and the other pending jobs of
    /// the first one's user, partition and association (in the order
    /// named); those others go down by the sum of what the named ones
    /// gained, shared out among them, and stay below the last named one.
    /// A job in several partitions refuses the whole request.
    fn set_top(&mut self, subs: &[u32]) {
        let mut top: Vec<(JobIdx, u32)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut first: Option<(JobIdx, gresim_model::PartId)> = None;
        for &sub in subs {
            for j in self.sub_jobs(sub) {
                let job = JobIdx(j);
                let jr = &self.jobs[j as usize];
                if jr.state != JobState::Pending {
                    continue;
                }
                let Some(part) = self.sole_partition(job) else {
                    return;
                };
                if jr.held.is_some() || !seen.insert(job) {
                    continue;
                }
                first.get_or_insert((job, part));
                top.push((job, self.current_priority(job, part)));
            }
        }
        let Some((first, part)) = first else {
            return;
        };
        let fspec = &self.specs[self.jobs[first.idx()].sub as usize];
        let (user, acct) = (std::sync::Arc::clone(&fspec.user), fspec.acct());
        let mut others: Vec<(JobIdx, u32)> = Vec::new();
        for (i, jr) in self.jobs.iter().enumerate() {
            let job = JobIdx(i as u32);
            if jr.state != JobState::Pending || jr.held.is_some() || seen.contains(&job) {
                continue;
            }
            let spec = &self.specs[jr.sub as usize];
            if *spec.user != *user || spec.acct() != acct || self.sole_partition(job) != Some(part)
            {
                continue;
            }
            let p = self.current_priority(job, part);
            if p > 1 {
                others.push((job, p));
            }
        }
        let mut prios: Vec<u32> = top.iter().chain(&others).map(|&(_, p)| p).collect();
        prios.sort_unstable_by(|a, b| b.cmp(a));
        let mut prios = prios.into_iter();
        let mut last: Option<u32> = None;
        let mut total: i64 = 0;
        for (job, cur) in top {
            let Some(mut next) = prios.next() else {
                break;
            };
            if let Some(l) = last {
                if next == l && l > 2 {
                    next = l - 1;
                }
            }
            last = Some(next);
            total += i64::from(next) - i64::from(cur);
            self.shift_priority(job, next, cur);
        }
        let last = i64::from(last.unwrap_or(u32::MAX));
        let mut left = others.len() as i64;
        for (job, cur) in others {
            let mut delta = total / left;
            let mut next = i64::from(cur) - delta;
            if next >= last {
                next = last - 1;
                delta = i64::from(cur) - next;
            }
            total -= delta;
            left -= 1;
            self.shift_priority(job, next.clamp(1, i64::from(u32::MAX)) as u32, cur);
        }
    }

    /// `scontrol update JobId=`: see [`JobChange`]. Changes Slurm refuses
    /// (of a job that is not pending, but for a running job's time limit and
    /// nice value) change nothing.
    fn update_job(&mut self, job: JobIdx, change: &JobChange) {
        let state = self.jobs[job.idx()].state;
        match (change, state) {
            (JobChange::TimeLimit(l), JobState::Running) => {
                std::sync::Arc::make_mut(&mut self.jobs[job.idx()].request).time_limit = Some(*l);
                self.reschedule_end(job);
            }
            (JobChange::Nice(n), JobState::Pending | JobState::Running) => {
                let sub = self.jobs[job.idx()].sub as usize;
                let old = self.specs[sub].nice;
                self.requeue_in_policy(job, |e| {
                    if matches!(e.params.priority, PriorityConfig::Basic) {
                        let j = &mut e.jobs[job.idx()];
                        if j.priority != 0 {
                            let p = i64::from(j.priority) + i64::from(old) - i64::from(*n);
                            j.priority = p.clamp(2, i64::from(u32::MAX)) as u32;
                        }
                    }
                    e.specs[sub].nice = *n;
                });
            }
            (_, JobState::Pending) => {
                self.requeue_in_policy(job, |e| {
                    let sub = e.jobs[job.idx()].sub as usize;
                    let req = std::sync::Arc::make_mut(&mut e.jobs[job.idx()].request);
                    match change {
                        JobChange::TimeLimit(l) => req.time_limit = Some(*l),
                        JobChange::Partition(p) => req.partitions = vec![*p],
                        JobChange::NumNodes(lo, hi) => {
                            req.min_nodes = *lo;
                            req.max_nodes = *hi;
                        }
                        JobChange::Dependency(d) => {
                            e.specs[sub].set_dependency(d.clone());
                            for t in d.iter().flat_map(|d| &d.terms) {
                                if let Some(target) = t.target {
                                    let v = e.dependents.entry(target).or_default();
                                    if !v.contains(&(sub as u32)) {
                                        v.push(sub as u32);
                                    }
                                }
                            }
                        }
                        JobChange::Nice(_) => {}
                    }
                });
                // Slurm judges the changed job anew: a limit it was held by
                // may be gone (the passes name what still holds it).
                let j = &self.jobs[job.idx()];
                if j.eligible.is_some()
                    && !matches!(j.reason, Reason::Dependency | Reason::BeginTime)
                    && j.held.is_none()
                {
                    self.set_reason(job, Reason::None, None);
                }
                if let JobChange::Dependency(_) = change {
                    // Eligible again from now, or waiting on the new dependency.
                    if self.jobs[job.idx()].eligible.take().is_some() {
                        self.policy.dequeue(job, &self.jobs, &self.cluster);
                    }
                    if self.jobs[job.idx()].reason == Reason::Dependency {
                        self.set_reason(job, Reason::None, None);
                    }
                    self.try_eligible(job);
                }
            }
            _ => {}
        }
    }

    // ---- failures, checkpoints, GPU memory --------------------------------------

    /// A node goes DOWN: its running jobs are requeued or end NODE_FAIL (a
    /// multi-node job loses all its nodes).
    fn take_node_down(&mut self, n: NodeId) -> Result<(), EngineError> {
        if self.state.node(n).admin != NodeAdminState::Down {
            self.set_admin(n, NodeAdminState::Down);
            self.count_node_up(n, false);
        }
        let mut victims = self.node_jobs[n.idx()].clone();
        victims.sort();
        for job in victims {
            // Slurm's accounting record of the failed run is
            // NODE_FAIL whether or not the job is requeued.
            if self.jobs[job.idx()].requeue {
                self.requeue(job, JobState::NodeFail, 0)?;
            } else {
                self.finish_run(job, JobState::NodeFail)?;
                self.terminate(job, JobState::NodeFail, Reason::NodeDown);
            }
        }
        Ok(())
    }

    /// Queues the failure model's next action.
    fn pull_next_failure(&mut self) {
        let Some(src) = self.failure_src.as_mut() else {
            return;
        };
        match src.next() {
            Some(a) => {
                let phase = action_phase(&a.action);
                // A source that goes back in time is clamped, never obeyed.
                self.queue
                    .push(a.at.max(self.now), phase, EventKind::Failure);
                self.next_failure = Some(a);
            }
            None => {
                self.failure_src = None;
                self.next_failure = None;
            }
        }
    }

    fn on_failure(&mut self) -> Result<(), EngineError> {
        let Some(a) = self.next_failure.take() else {
            return Err(EngineError::Internal(
                "failure event without a failure".into(),
            ));
        };
        match a.action {
            Action::NodeFail(_) | Action::NodeRepair(_) => self.apply(a.action)?,
            other => {
                return Err(EngineError::Internal(format!(
                    "the failure model produced {other:?}"
                )))
            }
        }
        self.pull_next_failure();
        Ok(())
    }

    /// Whether the failure process (the only event left) can still change
    /// the outcome: not when nothing runs, no submission is to come, and
    /// either no job waits or no node is failed (failures only take capacity
    /// away, and repairs only return what failures took).
    fn failures_cannot_matter(&self) -> bool {
        self.queue.is_empty()
            && self.running == 0
            && self.next_spec.is_none()
            && (self.pending == 0 || self.failed_count == 0)
    }

    /// Seconds of run time the job's next run needs (`None`: it runs to its
    /// limit): the work left since the last checkpoint, slowed down on the CPU
    /// fallback, plus the restart overhead when it resumes from a checkpoint.
    fn run_secs(&self, job: JobIdx) -> Option<u64> {
        let j = &self.jobs[job.idx()];
        let b = self.specs[j.sub as usize].behavior();
        let RunTime::Secs(d) = j.run_time else {
            return None;
        };
        let total = b.scaled(d);
        let overhead = if b.checkpoint_interval.is_some() && !j.runs.is_empty() {
            b.restart_overhead
        } else {
            0
        };
        Some(
            total
                .saturating_sub(j.work_saved())
                .saturating_add(overhead),
        )
    }

    /// Slurm does not manage GPU memory: a program that needs more than a
    /// device it got has fails with "CUDA out of memory".
    fn runs_out_of_gpu_memory(&self, job: JobIdx, alloc: &Allocation) -> bool {
        let sub = self.jobs[job.idx()].sub as usize;
        let Some(need) = self.specs[sub].behavior().vram_mib else {
            return false;
        };
        alloc.nodes.iter().any(|na| {
            let node = &self.cluster.nodes[na.node.idx()];
            gresim_model::state::gpu_indices(na.gpus)
                .filter_map(|g| node.gpus.get(usize::from(g)))
                .any(|d| d.memory_mib() < need)
        })
    }

    /// The current run fails (node failure or requeue): the work since the
    /// last checkpoint is lost, and so is the restart overhead it spent.
    fn account_failed_run(&mut self, job: JobIdx) {
        let now = self.now;
        let j = &self.jobs[job.idx()];
        let Some(r) = j.runs.last() else {
            return;
        };
        let b = *self.specs[j.sub as usize].behavior();
        let elapsed = now.saturating_sub(r.start);
        let overhead = match b.checkpoint_interval {
            Some(_) if j.runs.len() > 1 => b.restart_overhead.min(elapsed),
            _ => 0,
        };
        let saved = match (b.checkpoint_interval, j.oom) {
            (Some(iv), false) if iv > 0 => {
                let done = j.work_saved() + (elapsed - overhead);
                let total = match j.run_time {
                    RunTime::Secs(d) => b.scaled(d),
                    RunTime::ToLimit => u64::MAX,
                };
                // The checkpoints are at multiples of the interval, short of the end.
                let last = (done / iv) * iv;
                last.min(total.saturating_sub(1) / iv * iv)
                    .max(j.work_saved())
            }
            _ => j.work_saved(),
        };
        let gained = saved - j.work_saved();
        let lost = elapsed - gained.min(elapsed);
        let gpus: u64 = r
            .alloc
            .nodes
            .iter()
            .map(|na| u64::from(na.gpu_count()))
            .sum();
        let j = &mut self.jobs[job.idx()];
        j.set_work_saved(saved);
        j.add_lost(lost, lost * gpus);
    }
}
