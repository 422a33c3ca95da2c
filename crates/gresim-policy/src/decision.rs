//! The decisions a policy hands to the engine. A pass decides through
//! [`crate::PassCtx`]: starts ([`Start`], by [`crate::PassCtx::start`]),
//! preemptions ([`Preempt`], by [`crate::PassCtx::preempt`]), gang
//! suspensions ([`Suspend`], by [`crate::PassCtx::suspend`]) and pending
//! reasons ([`crate::PassCtx::set_reason`]); between passes the engine
//! collects MIG repartitionings ([`MigReconfig`], by
//! [`crate::Policy::take_mig_reconfigs`]). Reservations stay inside the
//! policy (backfill plans them and nothing outside reads them). The engine
//! applies a pass's reasons, then its preemptions, then its suspensions,
//! then its starts.

use gresim_model::preempt::PreemptMode;
use gresim_model::state::CoreSet;
use gresim_model::{Allocation, JobIdx, NodeId, PartId};

/// A running job the policy preempts for a pending one (Slurm's
/// `_preempt_jobs()` after `select_nodes()` found the preemptor would fit
/// without it). The preemptor does not start in this pass: it starts in a
/// later one, once the preemptee's resources are free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preempt {
    /// The running job to preempt.
    pub job: JobIdx,
    /// [`PreemptMode::Cancel`] or [`PreemptMode::Requeue`]; a job that
    /// cannot be requeued (`--no-requeue`) is cancelled instead.
    pub mode: PreemptMode,
    /// Seconds the job runs on after SIGTERM before it is killed
    /// (GraceTime of its partition or QOS).
    pub grace: u64,
    /// The pending job it is preempted for.
    pub by: JobIdx,
}

/// A running (or already suspended) job whose cores a higher-tier job
/// starts on (PreemptMode=SUSPEND,GANG: the gang scheduler's shadow, which
/// suspends every lower-tier job it overlaps, `_update_active_row()` in
/// src/slurmctld/gang.c). The job lends those cores and keeps its memory
/// and GPUs; it takes them back, and runs on, when `by` ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspend {
    /// The job suspended.
    pub job: JobIdx,
    /// The job that starts on its cores.
    pub by: JobIdx,
    /// The cores lent to `by`, per node.
    pub cores: Vec<(NodeId, CoreSet)>,
}

/// A job the policy started in this pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub job: JobIdx,
    pub partition: PartId,
    pub alloc: Allocation,
    /// Which pass started it.
    pub by_backfill: bool,
    /// The priority of the queue record it started from (Slurm's
    /// `job_ptr->priority`, which the running job keeps:
    /// [`gresim_model::job::Run::priority`]).
    pub priority: u32,
}

/// A policy's request to repartition a dynamic MIG GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigReconfig {
    /// Index into [`gresim_model::mig_dynamic::DynamicMig::gpus`].
    pub gpu: usize,
    /// The new layout; it must be legal for the GPU's model.
    pub to: gresim_model::mig_dynamic::MigLayout,
}
