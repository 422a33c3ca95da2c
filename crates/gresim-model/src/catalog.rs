//! The built-in catalog of GPU models and their MIG profiles.
//!
//! Figures are NVIDIA's published specifications (memory in MiB as the
//! driver reports the marketing size, SM counts of the full product). MIG
//! geometry follows NVIDIA's MIG User Guide, "Supported MIG Profiles": a GPU
//! has 7 compute slices and 8 memory slices; a GPU instance of a profile
//! occupies memory slices `[start, start + mem_slices)` for one of the
//! listed starts, and compute slices `start .. start + compute_slices`.
//!
//! The slice model admits a few layouts NVIDIA does not list as supported
//! (`4g.20gb + 3g.20gb` on an A100): each MIG model also carries NVIDIA's
//! published combinations ([`GpuModel::mig_published`]), against which
//! [`crate::mig`] classifies a configured layout.

use crate::ids::GpuModelId;

/// A MIG GPU-instance profile of one GPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigProfile {
    /// The profile name without the model, e.g. `1g.10gb`.
    pub name: &'static str,
    /// Compute slices (out of 7).
    pub compute_slices: u8,
    /// Memory slices (out of 8).
    pub memory_slices: u8,
    /// Memory of the instance in MiB.
    pub memory_mib: u64,
    /// The most instances of this profile one GPU can hold.
    pub max_instances: u8,
    /// Valid start positions, in memory slices.
    pub starts: &'static [u8],
}

/// A GPU model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuModel {
    /// Canonical name, e.g. `A100-SXM4-80GB`.
    pub name: &'static str,
    /// Short lower-case name used to build GRES and MIG type names, e.g. `a100`.
    pub short: &'static str,
    /// Device memory in MiB.
    pub memory_mib: u64,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// MIG profiles; empty for models without MIG.
    pub mig_profiles: &'static [MigProfile],
    /// NVIDIA's published MIG combinations (full GPUs): each entry counts the
    /// instances of `mig_profiles[i]` at index `i`. A layout is published when
    /// it is part of one of them (instances are created one at a time, so a
    /// subset of a supported combination is a supported state). Empty for
    /// models without MIG. See [`MIG_PUBLISHED_7SLICE`].
    pub mig_published: &'static [&'static [u8]],
}

const fn mig(
    name: &'static str,
    compute_slices: u8,
    memory_slices: u8,
    memory_mib: u64,
    max_instances: u8,
    starts: &'static [u8],
) -> MigProfile {
    MigProfile {
        name,
        compute_slices,
        memory_slices,
        memory_mib,
        max_instances,
        starts,
    }
}

const ALL7: &[u8] = &[0, 1, 2, 3, 4, 5, 6];
const EVEN4: &[u8] = &[0, 2, 4, 6];
const EVEN3: &[u8] = &[0, 2, 4];
const HALVES: &[u8] = &[0, 4];
const ZERO: &[u8] = &[0];

static MIG_A100_40: [MigProfile; 6] = [
    mig("1g.5gb", 1, 1, 4864, 7, ALL7),
    mig("1g.10gb", 1, 2, 9856, 4, EVEN4),
    mig("2g.10gb", 2, 2, 9856, 3, EVEN3),
    mig("3g.20gb", 3, 4, 19968, 2, HALVES),
    mig("4g.20gb", 4, 4, 19968, 1, ZERO),
    mig("7g.40gb", 7, 8, 40192, 1, ZERO),
];

static MIG_80: [MigProfile; 6] = [
    mig("1g.10gb", 1, 1, 9728, 7, ALL7),
    mig("1g.20gb", 1, 2, 19968, 4, EVEN4),
    mig("2g.20gb", 2, 2, 19968, 3, EVEN3),
    mig("3g.40gb", 3, 4, 40192, 2, HALVES),
    mig("4g.40gb", 4, 4, 40192, 1, ZERO),
    mig("7g.80gb", 7, 8, 80384, 1, ZERO),
];

static MIG_H200: [MigProfile; 6] = [
    mig("1g.18gb", 1, 1, 16384, 7, ALL7),
    mig("1g.35gb", 1, 2, 32768, 4, EVEN4),
    mig("2g.35gb", 2, 2, 32768, 3, EVEN3),
    mig("3g.71gb", 3, 4, 69632, 2, HALVES),
    mig("4g.71gb", 4, 4, 69632, 1, ZERO),
    mig("7g.141gb", 7, 8, 143360, 1, ZERO),
];

/// NVIDIA's supported combinations of GPU instances for the 7-compute-slice,
/// 8-memory-slice GPUs (A100-40GB, A100-80GB, H100-80GB, H200-141GB), over
/// their profiles in catalog order: `[1g (1 memory slice), 1g (2 memory
/// slices), 2g, 3g, 4g, 7g]`.
///
/// Source: the "A100 MIG profiles" / "H100 MIG profiles" combination figure
/// of NVIDIA's MIG User Guide ("Supported MIG Profiles"; the same shapes for
/// every model of this geometry, with its profile names), as transcribed in
/// ../shared/spec/slurm-semantics.md §9; the double-memory `1g` profile
/// (`1g.10gb` on A100-40GB, `1g.20gb` on 80 GB parts, `1g.35gb` on H200) as
/// NVIDIA's mig-parted default configuration creates it (`all-1g.10gb`,
/// `all-1g.20gb`, `all-1g.35gb`: four of them). `4g + 3g` and `3g + 4×1g`
/// fit the slice model but are not in the list (users report `3g.40gb +
/// 4g.40gb` failing with "Insufficient Resources", NVIDIA/mig-parted#29);
/// mixes of the double-memory `1g` with other profiles are not listed either.
pub static MIG_PUBLISHED_7SLICE: &[&[u8]] = &[
    &[0, 0, 0, 0, 0, 1], // 7g
    &[1, 0, 1, 0, 1, 0], // 4g + 2g + 1g
    &[3, 0, 0, 0, 1, 0], // 4g + 3 × 1g
    &[0, 0, 0, 2, 0, 0], // 3g + 3g
    &[1, 0, 1, 1, 0, 0], // 3g + 2g + 1g
    &[3, 0, 0, 1, 0, 0], // 3g + 3 × 1g
    &[0, 0, 2, 1, 0, 0], // 3g + 2 × 2g
    &[2, 0, 1, 1, 0, 0], // 3g + 2g + 2 × 1g
    &[1, 0, 3, 0, 0, 0], // 3 × 2g + 1g
    &[3, 0, 2, 0, 0, 0], // 2 × 2g + 3 × 1g
    &[5, 0, 1, 0, 0, 0], // 2g + 5 × 1g
    &[7, 0, 0, 0, 0, 0], // 7 × 1g
    &[0, 4, 0, 0, 0, 0], // 4 × 1g with 2 memory slices
];

/// Every GPU model gresim knows, in a fixed order (the index is its `GpuModelId`).
pub static GPU_MODELS: &[GpuModel] = &[
    GpuModel {
        name: "A100-SXM4-40GB",
        short: "a100",
        memory_mib: 40960,
        sm_count: 108,
        mig_profiles: &MIG_A100_40,
        mig_published: MIG_PUBLISHED_7SLICE,
    },
    GpuModel {
        name: "A100-SXM4-80GB",
        short: "a100",
        memory_mib: 81920,
        sm_count: 108,
        mig_profiles: &MIG_80,
        mig_published: MIG_PUBLISHED_7SLICE,
    },
    GpuModel {
        name: "H100-SXM5-80GB",
        short: "h100",
        memory_mib: 81920,
        sm_count: 132,
        mig_profiles: &MIG_80,
        mig_published: MIG_PUBLISHED_7SLICE,
    },
    GpuModel {
        name: "H200-141GB",
        short: "h200",
        memory_mib: 144384,
        sm_count: 132,
        mig_profiles: &MIG_H200,
        mig_published: MIG_PUBLISHED_7SLICE,
    },
    GpuModel {
        name: "V100-32GB",
        short: "v100",
        memory_mib: 32768,
        sm_count: 80,
        mig_profiles: &[],
        mig_published: &[],
    },
    GpuModel {
        name: "L40S",
        short: "l40s",
        memory_mib: 46068,
        sm_count: 142,
        mig_profiles: &[],
        mig_published: &[],
    },
    GpuModel {
        name: "T4",
        short: "t4",
        memory_mib: 15360,
        sm_count: 40,
        mig_profiles: &[],
        mig_published: &[],
    },
];

/// Compute slices of a full MIG-capable GPU.
pub const MIG_COMPUTE_SLICES: u8 = 7;
/// Memory slices of a full MIG-capable GPU.
pub const MIG_MEMORY_SLICES: u8 = 8;

/// Looks a model up by its canonical name, case-insensitively. A few common
/// aliases are accepted (`A100`, `A100-40GB`, `H100`, `H200`, `V100`).
pub fn model_by_name(name: &str) -> Option<GpuModelId> {
    let n = name.trim().to_ascii_uppercase();
    let canonical = match n.as_str() {
        "A100" | "A100-40GB" | "A100-SXM4-40GB" => "A100-SXM4-40GB",
        "A100-80GB" | "A100-SXM4-80GB" => "A100-SXM4-80GB",
        "H100" | "H100-80GB" | "H100-SXM5-80GB" => "H100-SXM5-80GB",
        "H200" | "H200-141GB" => "H200-141GB",
        "V100" | "V100-32GB" => "V100-32GB",
        other => other,
    };
    GPU_MODELS
        .iter()
        .position(|m| m.name.eq_ignore_ascii_case(canonical))
        .map(GpuModelId::from_idx)
}

/// The model with this id.
pub fn model(id: GpuModelId) -> &'static GpuModel {
    &GPU_MODELS[id.idx()]
}

/// Every model name, for error messages.
pub fn model_names() -> Vec<&'static str> {
    GPU_MODELS.iter().map(|m| m.name).collect()
}

impl GpuModel {
    /// The MIG profile with this name (`3g.40gb`), if the model has it.
    pub fn mig_profile(&self, name: &str) -> Option<&'static MigProfile> {
        self.mig_profiles
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests;
