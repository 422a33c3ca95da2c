//! The stepped API and read access to a run in progress.
//!
//! A caller that decides between passes (the Python package's
//! `SchedulingEnv`) drives the run itself: `next_pass` handles events up
//! to the next main pass that will run with a non-empty queue and stops
//! before it; the caller reads the state, tells its policy what to do,
//! and `run_pass` runs that pass. The events and the order they are
//! handled in are exactly those of `run`.

use gresim_model::job::{Job, JobSpec, Time};
use gresim_model::ClusterState;

use super::Engine;
use crate::event::{EventKind, EventQueue};
use crate::{EngineError, SimOutput};

impl Engine<'_> {
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
                    && self.cadence.main_at == Some(t)
                    && self.policy.queued() > 0
                    && self.stop.horizon.is_none_or(|h| t <= h)
                {
                    return Ok(Some(t));
                }
            }
            if !self.step()? {
                // Nothing is handled after the end: later calls stay here.
                self.queue = EventQueue::default();
                self.cadence.main_queued.clear();
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
            self.cadence.main_queued.clear();
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
}
