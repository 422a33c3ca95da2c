//! GPU sharing with fractional requests, FGD's fragmentation measure and the
//! six placement policies of "Beware of Fragmentation: Scheduling
//! GPU-Sharing Workloads with Fragmentation Gradient Descent" (Weng et al.,
//! USENIX ATC'23), and the reproduction of its OpenB experiment.
//!
//! - [`model`]: nodes with CPUs, memory and GPUs of 1000 milli each, tasks
//!   asking for `num_gpu × gpu_milli` with a GPU-model constraint;
//! - [`frag`]: the fragmentation measure, generic over [`frag::Fragmentable`]
//!   so that MIG can reuse it;
//! - [`policy`]: Random, DotProd, GPU Clustering, GPU Packing, Best-fit, FGD;
//! - [`sim`]: one run (arrivals only, one at a time), generic over the way
//!   GPUs are sliced ([`sim::Slicing`]);
//! - [`experiment`]: the paper's protocol, the seeds × policies grid on rayon,
//!   and the authors' discretisation of the results;
//! - [`openb`]: readers for the trace and the published summary;
//! - [`mig`]: the same measure and policies on MIG-partitioned GPUs (instances
//!   created at placement, legal starts only), and [`mig_experiment`], the
//!   paper's protocol on MIG (`sim fgd --mig`).
//!
//! See docs/reproductions.md for the protocol and the numbers.

pub mod experiment;
pub mod frag;
pub mod mig;
pub mod mig_experiment;
pub mod model;
pub mod openb;
pub mod policy;
pub mod sim;

pub use experiment::{Experiment, Metric, RunResult, Stat};
pub use frag::{node_frag, typical_tasks, Fragmentable, GpuShareView, TypicalTask};
pub use model::{NodeSpec, NodeState, Shape, TaskSpec, TypeMask, MILLI};
pub use openb::{Cluster, InputError};
pub use policy::PolicyKind;
