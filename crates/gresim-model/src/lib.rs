//! The cluster model of gresim.
//!
//! Pure data and arithmetic: no I/O, no randomness, no clock. Everything the
//! scheduler and the engine need to describe a Slurm GPU cluster and to keep
//! exact account of what is allocated lives here.

pub mod accounting;
pub mod catalog;
pub mod cluster;
pub mod comm;
pub mod fabric;
pub mod fit_index;
pub mod hostlist;
pub mod ids;
pub mod job;
pub mod mig;
pub mod mig_dynamic;
pub mod preempt;
pub mod reservation;
pub mod shares;
pub mod slurm_time;
pub mod state;
pub mod switches;
pub mod topology;
pub mod units;

pub use cluster::{Cluster, GpuDevice, GpuType, MigInstance, Node, NodeAdminState, Partition};
pub use ids::{GpuIndex, GpuModelId, GpuTypeId, JobId, JobIdx, NodeId, PartId};
pub use job::{JobRequest, JobSpec, JobState, Names, Reason, Time};
pub use state::{Allocation, ClusterState, CoreSet, NodeAlloc, RowUse};
