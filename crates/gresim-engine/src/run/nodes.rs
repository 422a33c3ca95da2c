//! Nodes: their admin states (UP, DRAIN, DOWN) as `scontrol update` and
//! the failure model change them, the count of nodes out of service, and
//! the failure model's stream of failures and repairs (`NodeHealth`). A
//! node that goes DOWN requeues or ends the jobs running on it.

use gresim_model::{JobState, NodeAdminState, NodeId, Reason};

use super::actions::action_phase;
use super::Engine;
use crate::event::EventKind;
use crate::{Action, EngineError, FailureSource, NodeChange, TimedAction};

/// Node availability and the failure model's state.
pub(super) struct NodeHealth<'a> {
    /// Nodes that are DOWN or DRAIN.
    pub(super) unavailable: u32,
    /// The failure model's stream and its action now in the queue.
    pub(super) failure_src: Option<FailureSource<'a>>,
    pub(super) next_failure: Option<TimedAction>,
    /// Per node: the admin state it returns to once repaired, while failed.
    pub(super) failed: Vec<Option<NodeAdminState>>,
    pub(super) failed_count: u32,
    /// Per node: how many times the failure model took it down.
    pub(super) failures: Vec<u32>,
    /// The change being applied comes from the failure model.
    pub(super) applying_failure: bool,
}

impl<'a> NodeHealth<'a> {
    pub(super) fn new(nodes: usize, failure_src: Option<FailureSource<'a>>) -> Self {
        NodeHealth {
            unavailable: 0,
            failure_src,
            next_failure: None,
            failed: vec![None; nodes],
            failed_count: 0,
            failures: vec![0; nodes],
            applying_failure: false,
        }
    }
}

impl Engine<'_> {
    /// Keeps the count of nodes that are DOWN or DRAIN.
    pub(super) fn set_admin(&mut self, id: NodeId, s: NodeAdminState) {
        let old = self.state.node(id).admin;
        let was = old != NodeAdminState::Up;
        let is = s != NodeAdminState::Up;
        self.state.set_admin(id, s);
        if old != s {
            self.rec.node_log.push(NodeChange {
                t: self.now,
                node: id,
                state: s,
                failure: self.nodes.applying_failure,
            });
        }
        match (was, is) {
            (false, true) => self.nodes.unavailable += 1,
            (true, false) => self.nodes.unavailable -= 1,
            _ => {}
        }
    }

    /// Counts node `id` in (`up`) or out of the capacity in service.
    pub(super) fn count_node_up(&mut self, id: NodeId, up: bool) {
        self.rec.count_node(&self.cluster, id, up);
    }

    /// A node goes DOWN: its running jobs are requeued or end NODE_FAIL (a
    /// multi-node job loses all its nodes).
    pub(super) fn take_node_down(&mut self, n: NodeId) -> Result<(), EngineError> {
        if self.state.node(n).admin != NodeAdminState::Down {
            self.set_admin(n, NodeAdminState::Down);
            self.count_node_up(n, false);
        }
        let mut victims = self.live.node_jobs[n.idx()].clone();
        victims.sort();
        for job in victims {
            // slurmctld kills the job on its other nodes (deallocate_nodes()
            // leaves DOWN ones out), where slurmd waits MAX(KillWait, 5) s
            // before SIGKILL for a program that ignores SIGTERM.
            let waits = self.jobs[job.idx()].runs.last().is_some_and(|r| {
                r.alloc
                    .node_ids()
                    .any(|m| m != n && self.state.node(m).admin != NodeAdminState::Down)
            });
            // Slurm's accounting record of the failed run is
            // NODE_FAIL whether or not the job is requeued.
            if self.jobs[job.idx()].requeue {
                self.requeue_killed(job, JobState::NodeFail, 0, waits)?;
                continue;
            }
            let completing = if waits { self.kill_time(job, 0) } else { 0 };
            if completing > 0 {
                self.account_failed_run(job);
                self.kill_running(job, JobState::NodeFail, Reason::NodeDown, completing)?;
            } else {
                self.finish_run(job, JobState::NodeFail)?;
                self.terminate(job, JobState::NodeFail, Reason::NodeDown);
            }
        }
        Ok(())
    }

    /// `State=DOWN`: the nodes go DOWN now, or, while failed, once repaired.
    pub(super) fn nodes_down(&mut self, nodes: Vec<NodeId>) -> Result<(), EngineError> {
        for n in nodes {
            if let Some(after) = self.nodes.failed[n.idx()].as_mut() {
                *after = NodeAdminState::Down;
                continue;
            }
            self.take_node_down(n)?;
        }
        Ok(())
    }

    /// A failure model's failure: the nodes go DOWN, remembering the state
    /// they return to.
    pub(super) fn nodes_fail(&mut self, nodes: Vec<NodeId>) -> Result<(), EngineError> {
        self.nodes.applying_failure = true;
        for n in nodes {
            if self.nodes.failed[n.idx()].is_none() {
                self.nodes.failed[n.idx()] = Some(self.state.node(n).admin);
                self.nodes.failed_count += 1;
                self.nodes.failures[n.idx()] += 1;
                self.take_node_down(n)?;
            }
        }
        self.nodes.applying_failure = false;
        Ok(())
    }

    /// A failure model's repair: the nodes return to the state they had
    /// (or an admin set while they were failed).
    pub(super) fn nodes_repair(&mut self, nodes: Vec<NodeId>) {
        self.nodes.applying_failure = true;
        for n in nodes {
            let Some(after) = self.nodes.failed[n.idx()].take() else {
                continue;
            };
            self.nodes.failed_count -= 1;
            if after != NodeAdminState::Down {
                self.count_node_up(n, true);
                self.set_admin(n, after);
            }
        }
        self.nodes.applying_failure = false;
    }

    /// `State=RESUME` (`to` UP) or `State=DRAIN`: now, or, while failed,
    /// once repaired.
    pub(super) fn nodes_to(&mut self, nodes: Vec<NodeId>, to: NodeAdminState) {
        for n in nodes {
            if let Some(after) = self.nodes.failed[n.idx()].as_mut() {
                *after = to;
                continue;
            }
            if self.state.node(n).admin == NodeAdminState::Down {
                self.count_node_up(n, true);
            }
            self.set_admin(n, to);
        }
    }

    /// Queues the failure model's next action.
    pub(super) fn pull_next_failure(&mut self) {
        let Some(src) = self.nodes.failure_src.as_mut() else {
            return;
        };
        match src.next() {
            Some(a) => {
                let phase = action_phase(&a.action);
                // A source that goes back in time is clamped, never obeyed.
                self.queue
                    .push(a.at.max(self.now), phase, EventKind::Failure);
                self.nodes.next_failure = Some(a);
            }
            None => {
                self.nodes.failure_src = None;
                self.nodes.next_failure = None;
            }
        }
    }

    pub(super) fn on_failure(&mut self) -> Result<(), EngineError> {
        let Some(a) = self.nodes.next_failure.take() else {
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
    pub(super) fn failures_cannot_matter(&self) -> bool {
        self.queue.is_empty()
            && self.running == 0
            && self.intake.next.is_none()
            && (self.pending == 0 || self.nodes.failed_count == 0)
    }
}
