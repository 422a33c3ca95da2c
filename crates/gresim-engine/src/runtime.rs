//! Placement-dependent run times: a job with a communication profile runs
//! longer on GPUs with less bandwidth between them (docs/topology.md).
//! Jobs without a profile keep their run time exactly.

use gresim_model::comm::{placement_cost, scale_work};
use gresim_model::job::JobSpec;
use gresim_model::{Allocation, Cluster};

/// The seconds a run of `spec` on `alloc` lasts, given `work`, the seconds
/// it would last regardless of placement (`None`: it runs to its limit).
pub(crate) fn run_time_for(
    cluster: &Cluster,
    spec: &JobSpec,
    alloc: &Allocation,
    work: Option<u64>,
) -> Option<u64> {
    let Some(profile) = spec.comm.as_deref() else {
        return work;
    };
    let cost = placement_cost(cluster, alloc, Some(profile));
    scale_work(profile, &cost, work, spec.run_time)
}
