//! Typed ids and dense indices.
//!
//! Every entity the simulator tracks is addressed by a newtype over a small
//! integer, so a node index can never be used where a job index is meant.

use serde::{Deserialize, Serialize};

macro_rules! define_idx {
    ($(#[$m:meta])* $name:ident, $int:ty) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub $int);

        impl $name {
            #[inline]
            pub fn idx(self) -> usize {
                self.0 as usize
            }
            #[inline]
            pub fn from_idx(i: usize) -> Self {
                Self(i as $int)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

define_idx!(
    /// Index of a node in the cluster's node table (natural name order).
    NodeId, u32
);
define_idx!(
    /// Index of a partition in the cluster's partition table.
    PartId, u16
);
define_idx!(
    /// Index of a GRES type name (`a100`, `a100_1g.10gb`, …) in the cluster's type table.
    GpuTypeId, u16
);
define_idx!(
    /// Index of a GPU model in the built-in catalog.
    GpuModelId, u16
);
define_idx!(
    /// Dense index of a job (or array task) record in the job table. Not the
    /// Slurm job id: that is assigned when the job is submitted or started.
    JobIdx, u32
);
define_idx!(
    /// A Slurm job id, as squeue and sacct print it.
    JobId, u32
);

/// A GPU device's index on its node: the GRES bit position, as it appears in
/// `SLURM_JOB_GPUS` and in `scontrol show job -d` (`IDX:0-3`).
pub type GpuIndex = u8;
