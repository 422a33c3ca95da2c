//! The decisions a policy hands to the engine. A pass decides through
//! [`crate::PassCtx`]: starts ([`Start`], by [`crate::PassCtx::start`]) and
//! pending reasons ([`crate::PassCtx::set_reason`]); between passes the
//! engine collects MIG repartitionings ([`MigReconfig`], by
//! [`crate::Policy::take_mig_reconfigs`]). Reservations stay inside the
//! policy (backfill plans them and nothing outside reads them). A new kind
//! of decision (preempting a running job, say) joins these as a new type
//! and a new output of the pass context, applied by the engine after the
//! reasons and before the starts or after them, as its contract says.

use gresim_model::{Allocation, JobIdx, PartId};

/// A job the policy started in this pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub job: JobIdx,
    pub partition: PartId,
    pub alloc: Allocation,
    /// Which pass started it.
    pub by_backfill: bool,
}

/// A policy's request to repartition a dynamic MIG GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigReconfig {
    /// Index into [`gresim_model::mig_dynamic::DynamicMig::gpus`].
    pub gpu: usize,
    /// The new layout; it must be legal for the GPU's model.
    pub to: gresim_model::mig_dynamic::MigLayout,
}
