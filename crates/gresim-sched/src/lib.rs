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

pub mod acct_policy;
pub mod admission;
pub mod backfill;
#[cfg(any(test, feature = "reference"))]
pub mod backfill_plain;
mod bf_map;
pub mod classic;
pub mod cons_tres;
pub mod dynamic_mig;
pub mod external;
pub mod fifo;
pub mod gang;
pub mod placement;
pub mod preempt;
pub mod queue;
mod resv;
pub mod select;
pub mod shares;
mod sweep;

pub use gresim_policy::{
    decision, fairshare, priority, record_priority, time_limit_in, EnqueueCtx, MigReconfig,
    PassCtx, PassStats, Policy, SchedParams, Start,
};

pub use fifo::Fifo;

/// The policies this crate provides, by the name `--policy`, scenario files
/// (`scheduler.policy`) and reports spell (kebab-case).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Slurm's main scheduler and backfill (sched/backfill, select/cons_tres).
    Slurm,
    /// Slurm's main scheduler alone (sched/builtin).
    Fifo,
    /// `slurm`'s passes, nodes chosen first fit.
    FirstFit,
    /// `slurm`'s passes, nodes chosen best fit (fewest free GPUs, then CPUs).
    BestFit,
    /// `slurm`'s passes, nodes chosen emptiest first.
    Spread,
    /// `slurm`'s passes, GPUs chosen by NVLink/PCIe/fabric topology.
    TopologyAware,
    /// `slurm`'s passes, then idle MIG GPUs repartitioned for the queue.
    DynamicMig,
    /// First come first served; the first job that does not fit stops the pass.
    StrictFifo,
    /// EASY backfilling: only the queue head holds a reservation.
    Easy,
    /// Conservative backfilling: every queued job holds a reservation.
    Conservative,
}

impl PolicyKind {
    /// Every policy, in the order help texts list them.
    pub const ALL: [PolicyKind; 10] = [
        PolicyKind::Slurm,
        PolicyKind::Fifo,
        PolicyKind::FirstFit,
        PolicyKind::BestFit,
        PolicyKind::Spread,
        PolicyKind::TopologyAware,
        PolicyKind::DynamicMig,
        PolicyKind::StrictFifo,
        PolicyKind::Easy,
        PolicyKind::Conservative,
    ];

    /// The policy's name, as [`Policy::name`] gives it.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Slurm => "slurm",
            PolicyKind::Fifo => "fifo",
            PolicyKind::FirstFit => "first-fit",
            PolicyKind::BestFit => "best-fit",
            PolicyKind::Spread => "spread",
            PolicyKind::TopologyAware => "topology-aware",
            PolicyKind::DynamicMig => "dynamic-mig",
            PolicyKind::StrictFifo => "strict-fifo",
            PolicyKind::Easy => "easy",
            PolicyKind::Conservative => "conservative",
        }
    }

    /// A fresh instance of the policy, for one run.
    pub fn build(self) -> Box<dyn Policy> {
        use placement::Placement;
        match self {
            PolicyKind::Slurm => Box::new(Fifo::with_backfill()),
            PolicyKind::Fifo => Box::new(Fifo::new()),
            PolicyKind::FirstFit => Box::new(Fifo::with_placement(Placement::FirstFit)),
            PolicyKind::BestFit => Box::new(Fifo::with_placement(Placement::BestFit)),
            PolicyKind::Spread => Box::new(Fifo::with_placement(Placement::Spread)),
            PolicyKind::TopologyAware => Box::new(Fifo::with_placement(Placement::TopologyAware)),
            PolicyKind::DynamicMig => Box::new(dynamic_mig::DynamicMigPolicy::new()),
            PolicyKind::StrictFifo => {
                Box::new(classic::Classic::new(classic::ClassicKind::StrictFifo))
            }
            PolicyKind::Easy => Box::new(classic::Classic::new(classic::ClassicKind::Easy)),
            PolicyKind::Conservative => {
                Box::new(classic::Classic::new(classic::ClassicKind::Conservative))
            }
        }
    }

    /// The names, comma-separated, for error messages.
    pub fn names() -> String {
        PolicyKind::ALL.map(PolicyKind::name).join(", ")
    }
}

impl std::fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy name no [`PolicyKind`] has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPolicy(pub String);

impl std::fmt::Display for UnknownPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown policy '{}'; expected one of {}",
            self.0,
            PolicyKind::names()
        )
    }
}

impl std::error::Error for UnknownPolicy {}

impl std::str::FromStr for PolicyKind {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownPolicy(s.to_string()))
    }
}

#[cfg(test)]
mod policy_kind_tests {
    use super::*;

    /// Every kind's name parses back to it, names its built policy, and is
    /// its serde spelling; other names are refused with the list.
    #[test]
    fn names_parse_build_and_serialize_alike() {
        for k in PolicyKind::ALL {
            assert_eq!(k.name().parse::<PolicyKind>(), Ok(k));
            assert_eq!(k.build().name(), k.name());
            assert_eq!(k.to_string(), k.name());
            let json = serde_json::to_string(&k).expect("serializes");
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<PolicyKind>(&json).ok(), Some(k));
        }
        let e = "slrum".parse::<PolicyKind>().unwrap_err();
        assert!(e
            .to_string()
            .starts_with("unknown policy 'slrum'; expected one of slurm, fifo"));
    }
}
