//! The engine: the [`Engine`] struct, its construction and the event loop.
//!
//! `Engine::run` is [`Engine::begin`], [`Engine::step`] per event and
//! [`Engine::finish`]. `step` pops an event, drops it when it is stale,
//! moves the clock (integrating the load, [`records`]) and hands it to the
//! concern that owns it. Each concern is one `impl Engine` block in its own
//! module, with the state only it touches in a sub-struct of its own:
//!
//! - [`admission`]: submissions, rejection at submission, eligibility,
//!   holds and the policy's queue (`Intake`, `SubState`);
//! - [`deps`]: dependencies and singleton groups (`Deps`);
//! - [`pass`]: the scheduling cadence and running a pass through the
//!   `Policy` (`Cadence`);
//! - [`lifecycle`]: start, end, time-limit kills, COMPLETING kills,
//!   requeue, suspend and resume (`Live`, what running jobs carry);
//! - [`work`]: a run's length, checkpoints and lost work, GPU memory;
//! - [`preempt`]: applying the policy's `Preempt` decisions;
//! - [`actions`]: timed admin actions (`scancel`, `scontrol hold`, `top`,
//!   `update`, ...);
//! - [`resv`]: advance reservations and their admin actions (`ResvState`);
//! - [`nodes`]: node admin states, failures and repairs (`NodeHealth`);
//! - [`mig`]: dynamic MIG repartitioning;
//! - [`accounting`]: association and QOS usage, the decay thread,
//!   `GrpTRESMins` run-down (`Accounting`);
//! - [`records`]: the load timeline, usage integrals, reason history and
//!   the run's [`SimOutput`] (`Records`);
//! - [`step`]: the stepped API (`next_pass`, `run_pass`) and read access.

mod accounting;
mod actions;
mod admission;
mod deps;
mod gang;
mod lifecycle;
mod mig;
mod nodes;
mod pass;
mod preempt;
mod records;
mod resv;
mod step;
mod work;

use gresim_model::job::{Job, JobSpec, Time};
use gresim_model::{ClusterState, JobIdx, JobState, NodeAdminState, NodeId, Reason};
use gresim_policy::Policy;

use crate::event::{EventKind, EventQueue};
use crate::{EngineError, ReasonChange, SimInput, SimOutput};

use accounting::Accounting;
use actions::action_phase;
use admission::{Intake, SubState};
use deps::Deps;
use lifecycle::Live;
use nodes::NodeHealth;
use pass::Cadence;
use records::Records;
use resv::ResvState;

/// Slurm plans a job without a time limit as ending a year after its start.
const UNLIMITED_PLAN: u64 = 365 * 86400;

/// Priority/basic: the first job gets 0xFFFF0000 − 1, each later one one less.
const BASIC_PRIORITY_TOP: u32 = 0xFFFF_0000 - 1;

/// The simulator for one run. Build with [`Engine::new`], then [`Engine::run`].
pub struct Engine<'a> {
    cluster: gresim_model::Cluster,
    params: gresim_policy::SchedParams,
    policy: Box<dyn Policy + 'a>,
    actions: Vec<crate::TimedAction>,
    /// The workload still to be submitted.
    intake: Intake<'a>,
    /// When the run stops short of its end.
    stop: Stop,

    now: Time,
    queue: EventQueue,
    state: ClusterState,
    jobs: Vec<Job>,
    specs: Vec<JobSpec>,
    subs: Vec<SubState>,
    array_running: Vec<u32>,
    deps: Deps,
    /// What the engine keeps about running and COMPLETING jobs beyond
    /// their job records.
    live: Live,
    next_job_id: u32,
    next_priority: u32,
    cadence: Cadence,
    running: u32,
    pending: u32,
    events: u64,
    /// Pending jobs held in SPECIAL_EXIT (held, no reason shown).
    special_exit: std::collections::BTreeSet<JobIdx>,
    /// `Policy::submission_rejection` by request shape (static configuration only).
    reject_memo: crate::memo::ShapeMemo<Option<String>>,

    /// Node availability and the failure model.
    nodes: NodeHealth<'a>,
    /// Use of associations and QOS, when the cluster has accounting.
    acct: Accounting,
    /// The advance reservations (docs/reservations.md).
    resv: ResvState,
    /// What the run keeps for its output.
    rec: Records,
    /// The gang scheduler's time-slicing (`gang`), `None` without a
    /// partition whose jobs share cores (`OverSubscribe=FORCE:N`).
    gang: Option<Box<gang::Gang>>,

    /// Called every [`PROGRESS_EVERY`] events, for display only.
    progress: Option<ProgressFn<'a>>,
    /// [`Engine::begin`] has run (stepped runs).
    begun: bool,
}

/// When the run stops short of its end.
struct Stop {
    horizon: Option<Time>,
    /// [`SimInput::stall`], and the time of the last event that changed something.
    stall: Option<Time>,
    last_change: Time,
    /// The time of the last event other than a periodic pass or a
    /// reservation's wake-up ([`Engine::resv_wake_cannot_matter`]).
    last_work: Time,
    /// The run stopped at the horizon.
    hit_horizon: bool,
}

/// Runs a simulation to its end.
pub fn run<'a>(
    input: SimInput<'a>,
    policy: Box<dyn Policy + 'a>,
) -> Result<SimOutput, EngineError> {
    Engine::new(input, policy).run()
}

/// At most this many submissions' table entries are reserved up front
/// from the job source's size hint ([`Engine::new`]).
const MAX_RESERVE: usize = 1 << 24;

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
        let record_priorities = input
            .params
            .preempt
            .same_qos(cluster.accounting())
            .then_some(matches!(
                input.params.priority,
                gresim_policy::priority::PriorityConfig::Multifactor(_)
            ));
        let gang = gang::Gang::new(&cluster, &input.params);
        // The source's lower bound of submissions to come (exact for
        // generated workloads, 0 for a trace read as it goes), so that the
        // per-submission tables do not grow by copying. Capped, so that a
        // wrong hint costs at most this much memory.
        let hint = input.jobs.size_hint().0.min(MAX_RESERVE);
        let mut e = Engine {
            intake: Intake::new(input.jobs),
            live: Live::new(cluster.nodes.len()),
            state,
            params: input.params,
            policy,
            actions: input.actions,
            stop: Stop {
                horizon: input.horizon,
                stall: input.stall,
                last_change: 0,
                last_work: 0,
                hit_horizon: false,
            },
            now: 0,
            queue: EventQueue::default(),
            jobs: Vec::with_capacity(hint),
            specs: Vec::with_capacity(hint),
            subs: Vec::with_capacity(hint),
            array_running: Vec::with_capacity(hint),
            deps: Deps::default(),
            next_job_id: 1,
            next_priority: BASIC_PRIORITY_TOP,
            cadence: Cadence::default(),
            rec: Records::new(&cluster, input.record_reasons, record_priorities),
            running: 0,
            pending: 0,
            events: 0,
            nodes: NodeHealth::new(cluster.nodes.len(), input.failures),
            progress: None,
            begun: false,
            reject_memo: Default::default(),
            acct: Accounting::new(&cluster),
            special_exit: Default::default(),
            resv: ResvState::new(input.reservations),
            gang,
            cluster,
        };
        for i in 0..e.cluster.nodes.len() {
            if e.cluster.nodes[i].state != NodeAdminState::Down {
                e.count_node_up(NodeId::from_idx(i), true);
            }
            if e.cluster.nodes[i].state != NodeAdminState::Up {
                e.nodes.unavailable += 1;
            }
        }
        e
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
        if !self.resv.live.is_empty() {
            self.resv.history.push((0, self.resv.live.clone()));
            self.queue_resv_edges();
            self.queue_purge_check();
        }
        self.pull_next_submission()?;
        self.pull_next_failure();
        let first_t = self.queue.peek().map_or(0, |e| e.time);
        self.now = first_t;
        self.rec.last_t = first_t;
        self.rec.usage.from = first_t;
        Ok(())
    }

    /// Handles the next event; `false` once the run is over (no event
    /// left, the horizon reached, or the stall limit).
    #[inline]
    fn step(&mut self) -> Result<bool, EngineError> {
        let Some(ev) = self.queue.pop() else {
            return Ok(false);
        };
        if ev.kind == EventKind::MainPass {
            self.cadence.main_dequeued(ev.time);
        }
        // Events that no longer mean anything (the end of a run that was
        // requeued or cancelled, a superseded pass) must not move the clock.
        if self.is_stale(&ev.kind, ev.time) {
            return Ok(true);
        }
        if ev.kind == EventKind::Failure && self.failures_cannot_matter() {
            // Only the endless failure process is left: stop it.
            self.nodes.failure_src = None;
            self.nodes.next_failure = None;
            return Ok(true);
        }
        let resv_wake = matches!(ev.kind, EventKind::ResvEdge | EventKind::ResvPurgeCheck);
        if resv_wake && self.resv_wake_cannot_matter(ev.time) {
            // A recurring reservation's wake-ups would go on for ever.
            self.resv.edges.remove(&ev.time);
            if ev.kind == EventKind::ResvPurgeCheck {
                self.resv.purge_at = None;
            }
            self.resv.dormant = true;
            return Ok(true);
        }
        let periodic = matches!(
            ev.kind,
            EventKind::AcctTick | EventKind::MainPass | EventKind::BackfillPass
        );
        if !periodic && !resv_wake {
            self.stop.last_work = ev.time;
        }
        if let Some(s) = self.stop.stall {
            if periodic
                && self.running == 0
                && self.intake.next.is_none()
                && ev.time > self.stop.last_change.saturating_add(s)
            {
                return Ok(false);
            }
        }
        if !periodic {
            self.stop.last_change = ev.time;
        }
        if let Some(h) = self.stop.horizon {
            if ev.time > h {
                self.advance(h);
                self.stop.hit_horizon = true;
                return Ok(false);
            }
        }
        if ev.time != self.now {
            self.advance(ev.time);
        }
        if self.resv.dormant && !periodic && !resv_wake {
            self.resv.dormant = false;
            self.queue_resv_edges();
            self.queue_purge_check();
        }
        self.events += 1;
        if let Some(p) = self.progress.as_mut() {
            if self.events & (PROGRESS_EVERY - 1) == 0 {
                let live = (self.running + self.pending) as usize;
                p(self.now, self.jobs.len().saturating_sub(live));
            }
        }
        self.cadence.phase = ev.phase;
        match ev.kind {
            EventKind::RunEnd { job, run } => self.on_run_end(job, run)?,
            EventKind::Action(i) => self.on_action(i as usize)?,
            EventKind::Submit => self.on_submit()?,
            EventKind::Begin { job } => self.on_begin(job),
            EventKind::Failure => self.on_failure()?,
            EventKind::MigReady { gpu } => self.on_mig_ready(gpu as usize)?,
            EventKind::Completed { job } => self.on_completed(job)?,
            EventKind::AcctTick => self.on_acct_tick(),
            EventKind::ResvEdge => self.on_resv_edge(ev.time),
            EventKind::ResvPurgeCheck => self.on_resv_purge_check(ev.time),
            EventKind::SwitchWaitOver => self.mark_dirty(),
            EventKind::GangTick => self.on_gang_tick(),
            EventKind::PreemptKill { job, run, mode } => {
                if self.live.signalled.get(&job).is_some_and(|s| s.run == run) {
                    self.preempt_now(job, mode)?;
                    self.request_main(self.now);
                }
            }
            EventKind::Requeue { job, run } => {
                let j = &self.jobs[job.idx()];
                if j.state == JobState::Running && j.runs.len() as u32 == run + 1 {
                    let base = self.params.requeue_completing;
                    self.requeue_killed(job, JobState::Requeued, base, true)?;
                    self.mark_dirty();
                }
            }
            EventKind::MainPass => {
                if self.cadence.main_at == Some(ev.time) {
                    self.cadence.main_at = None;
                    self.pass(false)?;
                }
            }
            EventKind::BackfillPass => {
                if self.cadence.bf_at == Some(ev.time) {
                    self.cadence.bf_at = None;
                    self.pass(true)?;
                }
            }
        }
        Ok(true)
    }

    /// Whether an event has been overtaken by what happened since it was queued.
    fn is_stale(&self, kind: &EventKind, t: Time) -> bool {
        match *kind {
            EventKind::RunEnd { job, run } => {
                let j = &self.jobs[job.idx()];
                j.state != JobState::Running
                    || j.runs.len() as u32 != run + 1
                    || self.live.moved_ends.get(&job).is_some_and(|&at| at != t)
                    || self.is_suspended(job)
            }
            EventKind::Requeue { job, run } | EventKind::PreemptKill { job, run, .. } => {
                let j = &self.jobs[job.idx()];
                j.state != JobState::Running || j.runs.len() as u32 != run + 1
            }
            EventKind::MainPass => self.cadence.main_at != Some(t),
            EventKind::GangTick => !self.gang.as_deref().is_some_and(|g| g.is_tick(t)),
            EventKind::BackfillPass => self.cadence.bf_at != Some(t),
            EventKind::ResvPurgeCheck => self.resv.purge_at != Some(t),
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
    #[inline]
    fn advance(&mut self, t: Time) {
        self.sample();
        self.rec.integrate(&self.state, t);
        self.now = t;
    }

    /// Records the load at the current instant if it changed.
    #[inline]
    fn sample(&mut self) {
        self.rec
            .sample(self.now, &self.state, self.running, self.pending);
    }

    /// Sets a pending job's reason, keeping its history when asked.
    fn set_reason(&mut self, job: JobIdx, r: Reason, desc: Option<String>) {
        let j = &mut self.jobs[job.idx()];
        if j.reason == r && j.reason_desc == desc {
            return;
        }
        j.reason = r;
        j.reason_desc = desc.clone();
        if let Some(h) = self.rec.reasons.as_mut() {
            h[job.idx()].push(ReasonChange {
                t: self.now,
                reason: r,
                desc,
            });
        }
    }
}
