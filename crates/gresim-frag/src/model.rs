//! Nodes, tasks and the per-node free-resource state used by the sharing
//! simulator.
//!
//! GPU capacity is counted in milli-GPUs: every GPU has [`MILLI`] = 1000 units,
//! and a task asks for `num_gpu` GPUs with `gpu_milli` units on each (OpenB's
//! `gpu_milli`). A task with `num_gpu == 1 && gpu_milli < 1000` shares a GPU
//! with others; every other GPU task needs whole, fully free GPUs.

use serde::Serialize;

/// Capacity of one GPU in milli-GPU units.
pub const MILLI: u32 = 1000;
/// Most GPUs a node may have (OpenB's largest nodes have 8).
pub const MAX_GPUS: usize = 16;
/// Most distinct GPU models a cluster may have (they are kept in a bitmask).
pub const MAX_GPU_TYPES: usize = 64;

/// A set of GPU models as a bitmask over the cluster's model table.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct TypeMask(pub u64);

impl TypeMask {
    /// Every model: a task with no `gpu_spec` constraint.
    pub const ANY: TypeMask = TypeMask(u64::MAX);

    /// Whether a node of model index `model` is allowed.
    #[inline]
    pub fn allows(self, model: u8) -> bool {
        self.0 & (1u64 << model) != 0
    }
}

/// A node as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NodeSpec {
    pub name: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub num_gpu: u8,
    /// Index into the cluster's GPU model table.
    pub gpu_model: u8,
}

/// A task (an OpenB pod) as requested.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskSpec {
    pub name: String,
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub num_gpu: u8,
    /// Milli-GPUs per GPU: 0 when `num_gpu == 0`, else 1..=1000.
    pub gpu_milli: u32,
    /// Allowed GPU models.
    pub gpu_spec: TypeMask,
}

impl TaskSpec {
    /// Total milli-GPUs requested.
    #[inline]
    pub fn total_gpu_milli(&self) -> u64 {
        u64::from(self.gpu_milli) * u64::from(self.num_gpu)
    }
    /// The resource shape that placement depends on.
    pub fn shape(&self) -> Shape {
        Shape {
            cpu_milli: self.cpu_milli,
            memory_mib: self.memory_mib,
            num_gpu: self.num_gpu,
            gpu_milli: self.gpu_milli,
            gpu_spec: self.gpu_spec,
        }
    }
}

/// Everything about a task that placement looks at (its name is not).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Shape {
    pub cpu_milli: u64,
    pub memory_mib: u64,
    pub num_gpu: u8,
    pub gpu_milli: u32,
    pub gpu_spec: TypeMask,
}

impl Shape {
    /// A GPU-sharing request: one GPU, less than all of it.
    #[inline]
    pub fn is_share(&self) -> bool {
        self.num_gpu == 1 && self.gpu_milli < MILLI
    }
    /// Requests any GPU at all.
    #[inline]
    pub fn wants_gpu(&self) -> bool {
        self.num_gpu > 0 && self.gpu_milli > 0
    }
    /// Total milli-GPUs requested.
    #[inline]
    pub fn total_gpu_milli(&self) -> u64 {
        u64::from(self.gpu_milli) * u64::from(self.num_gpu)
    }
    /// GPU Clustering's affinity class: `None` for no GPU, `Some(0)` for a
    /// shared GPU, `Some(n)` for n whole GPUs.
    #[inline]
    pub fn affinity(&self) -> Option<usize> {
        if self.num_gpu == 0 {
            None
        } else if self.is_share() {
            Some(0)
        } else {
            Some(usize::from(self.num_gpu))
        }
    }
}

/// The free resources of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeState {
    pub cpu_capacity: u64,
    pub cpu_left: u64,
    pub mem_left: u64,
    pub gpu_model: u8,
    pub num_gpu: u8,
    /// Milli-GPUs free on each GPU, by device index; entries past `num_gpu` are 0.
    pub gpu_left: [u32; MAX_GPUS],
    /// Tasks on this node per GPU-Clustering affinity class (0 = shared, n = n whole GPUs).
    pub affinity: [u32; MAX_GPUS + 1],
}

impl NodeState {
    /// A node with nothing placed on it.
    pub fn new(spec: &NodeSpec) -> Self {
        let mut gpu_left = [0u32; MAX_GPUS];
        for g in gpu_left.iter_mut().take(usize::from(spec.num_gpu)) {
            *g = MILLI;
        }
        NodeState {
            cpu_capacity: spec.cpu_milli,
            cpu_left: spec.cpu_milli,
            mem_left: spec.memory_mib,
            gpu_model: spec.gpu_model,
            num_gpu: spec.num_gpu,
            gpu_left,
            affinity: [0; MAX_GPUS + 1],
        }
    }

    /// Free milli-GPUs per device.
    #[inline]
    pub fn gpus(&self) -> &[u32] {
        &self.gpu_left[..usize::from(self.num_gpu)]
    }

    /// Total free milli-GPUs.
    #[inline]
    pub fn gpu_left_total(&self) -> u64 {
        self.gpus().iter().map(|&g| u64::from(g)).sum()
    }

    /// Number of GPUs with nothing on them.
    #[inline]
    pub fn fully_free_gpus(&self) -> usize {
        self.gpus().iter().filter(|&&g| g == MILLI).count()
    }

    /// Whether the task fits: CPU, memory, GPU model and GPU capacity
    /// (the Kubernetes NodeResourcesFit filter plus Open-Gpu-Share's filter).
    pub fn fits(&self, s: &Shape) -> bool {
        if self.cpu_left < s.cpu_milli || self.mem_left < s.memory_mib {
            return false;
        }
        if !s.wants_gpu() {
            return true;
        }
        if self.num_gpu == 0 || !s.gpu_spec.allows(self.gpu_model) {
            return false;
        }
        let able = self.gpus().iter().filter(|&&g| g >= s.gpu_milli).count();
        able >= usize::from(s.num_gpu)
    }

    /// Takes the task's resources, with its GPUs on the devices `devices`.
    /// The caller has checked [`NodeState::fits`] and chosen valid devices.
    pub fn take(&mut self, s: &Shape, devices: &[usize]) {
        self.cpu_left -= s.cpu_milli;
        self.mem_left -= s.memory_mib;
        if s.wants_gpu() {
            for &d in devices {
                self.gpu_left[d] -= s.gpu_milli;
            }
        }
        if let Some(a) = s.affinity() {
            self.affinity[a] += 1;
        }
    }
}
