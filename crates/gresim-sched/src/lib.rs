//! Schedulers for gresim.
//!
//! The engine drives a scheduler only through the [`Policy`] trait, defined
//! with the pass context in `gresim-policy` and re-exported here: it tells
//! the policy which jobs are queued, asks it whether a submission is
//! admitted ([`admission`]: Slurm's checks, shared by every policy here),
//! and asks it to run its main and backfill passes. A pass reads the
//! cluster and the job table and starts jobs through [`PassCtx::start`],
//! which does the resource accounting.
//!
//! Node and GPU choice ([`select`]) and queue order ([`queue`]) are shared by
//! every policy.

pub mod admission;
pub mod backfill;
pub mod classic;
pub mod cons_tres;
pub mod dynamic_mig;
pub mod fifo;
pub mod placement;
pub mod queue;
pub mod select;
pub mod shares;

use gresim_model::job::{Job, JobSpec};
use gresim_model::{Cluster, PartId};

pub use gresim_policy::{
    decision, priority, time_limit_in, EnqueueCtx, MigReconfig, PassCtx, Policy, SchedParams, Start,
};

pub use fifo::Fifo;

/// The priority of `job`'s queue record in `part`: the engine's FIFO value
/// under priority/basic, the multifactor sum otherwise (0 while held).
pub fn record_priority(
    cluster: &Cluster,
    params: &SchedParams,
    specs: &[JobSpec],
    job: &Job,
    part: PartId,
) -> u32 {
    match &params.priority {
        priority::PriorityConfig::Basic => job.priority,
        priority::PriorityConfig::Multifactor(m) => {
            if job.priority == 0 {
                0
            } else {
                m.priority(
                    cluster,
                    job,
                    part,
                    job.eligible.unwrap_or(job.submit),
                    specs[job.sub as usize].nice,
                )
            }
        }
    }
}

/// The names [`policy_by_name`] knows.
pub const POLICY_NAMES: &[&str] = &[
    "slurm",
    "fifo",
    "first-fit",
    "best-fit",
    "spread",
    "topology-aware",
    "dynamic-mig",
    "strict-fifo",
    "easy",
    "conservative",
];

/// Builds a policy by name.
pub fn policy_by_name(name: &str) -> Option<Box<dyn Policy>> {
    match name {
        "slurm" => Some(Box::new(Fifo::with_backfill())),
        "fifo" => Some(Box::new(Fifo::new())),
        "first-fit" => Some(Box::new(Fifo::with_placement(
            placement::Placement::FirstFit,
        ))),
        "best-fit" => Some(Box::new(Fifo::with_placement(
            placement::Placement::BestFit,
        ))),
        "spread" => Some(Box::new(Fifo::with_placement(placement::Placement::Spread))),
        "topology-aware" => Some(Box::new(Fifo::with_placement(
            placement::Placement::TopologyAware,
        ))),
        "strict-fifo" => Some(Box::new(classic::Classic::new(
            classic::ClassicKind::StrictFifo,
        ))),
        "easy" => Some(Box::new(classic::Classic::new(classic::ClassicKind::Easy))),
        "conservative" => Some(Box::new(classic::Classic::new(
            classic::ClassicKind::Conservative,
        ))),
        "dynamic-mig" => Some(Box::new(dynamic_mig::DynamicMigPolicy::new())),
        _ => None,
    }
}
