//! What a run keeps for its output: the load timeline, the usage integrals
//! and the capacity in service they integrate (`Records`), the node log
//! and the reason history, and [`Engine::finish`], which turns the engine
//! into its [`SimOutput`].

use gresim_model::job::Time;
use gresim_model::{Cluster, ClusterState, JobIdx, NodeId};

use super::Engine;
use crate::{NodeChange, PriorityChange, ReasonChange, Sample, SimOutput, Usage};

/// The run's records, and the capacity in service (nodes not DOWN, MIG
/// devices not being repartitioned) that the integrals and samples read.
pub(super) struct Records {
    /// Per job, its reason history (when recorded).
    pub(super) reasons: Option<Vec<Vec<ReasonChange>>>,
    /// Every change of a job's priority (when same-QOS preemption can
    /// compare priorities).
    pub(super) priorities: Option<Vec<PriorityChange>>,
    /// Under priority/multifactor, when priorities are recorded: each job's
    /// priority as last noted ([`Engine::note_queue_priority`]); the log
    /// then holds those values, not the engine's own job priority.
    pub(super) multifactor: Option<Vec<u32>>,
    pub(super) timeline: Vec<Sample>,
    pub(super) usage: Usage,
    /// Every change of a node's admin state, in the order applied.
    pub(super) node_log: Vec<NodeChange>,
    pub(super) up_gpus_by_type: Vec<u64>,
    pub(super) up_gpu_sevenths: u64,
    pub(super) up_cpus: u64,
    /// The time the integrals reach.
    pub(super) last_t: Time,
}

impl Records {
    /// `record_priorities`: `None`, or `Some(multifactor)` (whether they are
    /// priority/multifactor's).
    pub(super) fn new(
        cluster: &Cluster,
        record_reasons: bool,
        record_priorities: Option<bool>,
    ) -> Self {
        let ntypes = cluster.gpu_types.len();
        Records {
            reasons: record_reasons.then(Vec::new),
            priorities: record_priorities.map(|_| Vec::new()),
            multifactor: record_priorities.and_then(|m| m.then(Vec::new)),
            timeline: Vec::new(),
            usage: Usage {
                gpu_alloc_secs: vec![0; ntypes],
                gpu_avail_secs: vec![0; ntypes],
                ..Usage::default()
            },
            node_log: Vec::new(),
            up_gpus_by_type: vec![0; ntypes],
            up_gpu_sevenths: 0,
            up_cpus: 0,
            last_t: 0,
        }
    }

    /// Integrates the allocated and available resources from `last_t` to `t`.
    #[inline]
    pub(super) fn integrate(&mut self, state: &ClusterState, t: Time) {
        let dt = u128::from(t.saturating_sub(self.last_t));
        if dt > 0 {
            let u = &mut self.usage;
            for (i, a) in state.alloc_gpus_by_type().iter().enumerate() {
                u.gpu_alloc_secs[i] += u128::from(*a) * dt;
                u.gpu_avail_secs[i] += u128::from(self.up_gpus_by_type[i]) * dt;
            }
            u.gpu_sevenths_alloc_secs += u128::from(state.alloc_gpu_sevenths()) * dt;
            u.gpu_sevenths_avail_secs += u128::from(self.up_gpu_sevenths) * dt;
            u.cpu_alloc_secs += u128::from(state.alloc_cpus()) * dt;
            u.cpu_avail_secs += u128::from(self.up_cpus) * dt;
        }
        self.last_t = t;
    }

    /// Records the load at `now` if it changed.
    #[inline]
    pub(super) fn sample(&mut self, now: Time, state: &ClusterState, running: u32, pending: u32) {
        let s = Sample {
            t: now,
            alloc_gpus: state.alloc_gpus() as u32,
            alloc_gpu_sevenths: state.alloc_gpu_sevenths() as u32,
            alloc_cpus: state.alloc_cpus() as u32,
            avail_gpus: self.up_gpus_by_type.iter().sum::<u64>() as u32,
            running,
            pending,
        };
        match self.timeline.last_mut() {
            Some(last) if last.t == s.t => *last = s,
            Some(last) if Sample { t: s.t, ..*last } == s => {}
            _ => self.timeline.push(s),
        }
    }

    /// Counts node `id`'s GPUs and CPUs in (`up`) or out of service.
    pub(super) fn count_node(&mut self, cluster: &Cluster, id: NodeId, up: bool) {
        let node = &cluster.nodes[id.idx()];
        // Dynamic MIG: slots without a device do not count, and each dynamic
        // GPU is 7 sevenths whatever its layout (docs/mig.md).
        let (slots, offline, dyn_gpus) = match cluster.dynamic_mig() {
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
                u64::from(cluster.gpu_type(d.ty).compute_sevenths())
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

    /// Counts the devices `mask` of `node` in or out of the available GPUs.
    pub(super) fn count_devices(&mut self, cluster: &Cluster, node: NodeId, mask: u64, up: bool) {
        for g in gresim_model::state::gpu_indices(mask) {
            let ty = cluster.nodes[node.idx()].gpus[usize::from(g)].ty;
            if up {
                self.up_gpus_by_type[ty.idx()] += 1;
            } else {
                self.up_gpus_by_type[ty.idx()] -= 1;
            }
        }
    }
}

/// Notes a change of `job`'s priority at `t` (nothing when it stays).
fn log_change(log: &mut Vec<PriorityChange>, t: Time, job: JobIdx, from: u32, to: u32) {
    if from != to {
        log.push(PriorityChange { t, job, from, to });
    }
}

impl Engine<'_> {
    /// Sets `job`'s priority, noting the change when priorities are recorded.
    /// Under priority/multifactor only a hold is noted there (priority 0,
    /// as Slurm's); the queue priorities are noted as they are computed.
    pub(super) fn set_priority(&mut self, job: JobIdx, to: u32) {
        let j = &mut self.jobs[job.idx()];
        let from = std::mem::replace(&mut j.priority, to);
        if self.rec.multifactor.is_some() {
            if to == 0 {
                self.note_priority(job, 0);
            }
            return;
        }
        if let Some(log) = self.rec.priorities.as_mut() {
            log_change(log, self.now, job, from, to);
        }
    }

    /// Under priority/multifactor with priorities recorded: notes `job`'s
    /// priority as same-QOS preemption (`WITHIN`) compares it, when it
    /// changed. Nothing otherwise.
    pub(super) fn note_priority(&mut self, job: JobIdx, to: u32) {
        let (Some(last), Some(log)) = (self.rec.multifactor.as_mut(), self.rec.priorities.as_mut())
        else {
            return;
        };
        if last.len() <= job.idx() {
            last.resize(job.idx() + 1, 0);
        }
        let from = std::mem::replace(&mut last[job.idx()], to);
        log_change(log, self.now, job, from, to);
    }

    /// Under priority/multifactor with priorities recorded: notes the
    /// priority of `job`'s queue records as the policy computes them
    /// ([`gresim_policy::record_priority`], at `at`: `None` when it joins the
    /// queue, the decay pass's time after it), the highest of its partitions'.
    pub(super) fn note_queue_priority(&mut self, job: JobIdx, at: Option<Time>) {
        if self.rec.multifactor.is_none() {
            return;
        }
        let j = &self.jobs[job.idx()];
        let default = j
            .request
            .partitions
            .is_empty()
            .then(|| self.cluster.default_partition())
            .flatten();
        let p = j
            .request
            .partitions
            .iter()
            .copied()
            .chain(default)
            .map(|part| {
                gresim_policy::record_priority(
                    &self.cluster,
                    &self.params,
                    &self.specs,
                    j,
                    part,
                    at,
                    self.acct.usage.as_ref(),
                )
            })
            .max();
        if let Some(p) = p {
            self.note_priority(job, p);
        }
    }

    /// The run's output, once [`Engine::step`] has said it is over.
    pub(super) fn finish(mut self) -> SimOutput {
        let end = self.now;
        self.sample();
        self.rec.usage.to = end;
        SimOutput {
            policy: self.policy.name().to_string(),
            cluster: self.cluster,
            params: self.params,
            specs: self.specs,
            jobs: self.jobs,
            reasons: self.rec.reasons,
            timeline: self.rec.timeline,
            usage: self.rec.usage,
            end_time: end,
            events: self.events,
            hit_horizon: self.stop.hit_horizon,
            node_log: self.rec.node_log,
            node_failures: self.nodes.failures,
            pass_stats: self.policy.stats(),
            acct: self.acct.usage,
            fairshare_log: self.acct.fairshare_log,
            resv_history: self.resv.history,
            resv_refused: self.resv.refused,
            priority_log: self.rec.priorities,
        }
    }
}
