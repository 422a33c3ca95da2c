//! Job priority: priority/basic and priority/multifactor.
//!
//! priority/basic gives jobs decreasing priorities in submission order (the
//! engine assigns those). priority/multifactor sums weighted factors in
//! [0, 1], as `_get_priority_internal()` and `set_priority_factors()` in
//! Slurm's plugin do:
//!
//! ```text
//! P = W_age·F_age + W_js·F_js + W_part·F_part + Σ W_tres·F_tres − nice   (at least 1)
//! ```
//!
//! - F_js ("favor large", the default): (min_nodes / nodes + cpus / cluster CPUs) / 2;
//!   with PriorityFavorSmall: ((nodes − min_nodes)/nodes + (CPUs − cpus)/CPUs) / 2.
//! - F_part: the partition's PriorityJobFactor over the largest one.
//! - F_tres: the job's CPUs (memory, GPUs) over the partition's total.
//! - F_age: time eligible over PriorityMaxAge (only with an accounting
//!   database in real Slurm; a weight of 0 switches it off, as in the
//!   conformance recordings, which ran without slurmdbd).
//!
//! With accounting, `W_assoc·F_assoc + W_fs·F_fs + W_qos·F_qos` join the
//! sum: the association's `Priority` over the largest association priority,
//! its fair-share factor ([`crate::fairshare`]) and the QOS's priority over
//! the largest QOS priority. The terms are added in Slurm's order (age,
//! association, fair-share, job size, partition, QOS, TRES).

use gresim_model::job::{Job, MemReq, Time};
use gresim_model::{Cluster, PartId};

/// Which priority plugin, and its weights.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PriorityConfig {
    /// priority/basic: FIFO by submission.
    #[default]
    Basic,
    Multifactor(Multifactor),
}

/// priority/multifactor's weights and flags.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Multifactor {
    pub weight_age: u32,
    pub weight_job_size: u32,
    pub weight_partition: u32,
    pub weight_fairshare: u32,
    pub weight_qos: u32,
    pub weight_assoc: u32,
    /// PriorityWeightTRES: CPU, memory (per MiB… normalised) and GPU weights.
    pub weight_tres_cpu: f64,
    pub weight_tres_mem: f64,
    pub weight_tres_gpu: f64,
    pub favor_small: bool,
    /// PriorityMaxAge in seconds (default 7 days).
    pub max_age: Time,
    /// PriorityDecayHalfLife in seconds (default 7 days; 0: no decay).
    pub half_life: Time,
    /// Fair Tree (the default) or, with `PriorityFlags=NO_FAIR_TREE`, classic fair-share.
    pub fair_tree: bool,
    /// PriorityUsageResetPeriod (default NONE).
    pub usage_reset: crate::fairshare::UsageReset,
}

/// The factors accounting adds to a job's priority, each in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AcctFactors {
    /// The association's `Priority` over the largest association priority.
    pub assoc: f64,
    pub fairshare: f64,
    pub qos: f64,
}

impl Multifactor {
    pub fn new() -> Self {
        Multifactor {
            max_age: 7 * 86400,
            half_life: 7 * 86400,
            fair_tree: true,
            ..Multifactor::default()
        }
    }

    /// The job's priority in `part` at time `now`.
    pub fn priority(
        &self,
        cluster: &Cluster,
        job: &Job,
        part: PartId,
        now: Time,
        nice: i32,
        acct: AcctFactors,
    ) -> u32 {
        let nodes = cluster.nodes.len().max(1) as f64;
        let cluster_cpus = cluster.total_cpus().max(1) as f64;
        let req = &job.request;
        let min_nodes = f64::from(req.min_nodes.max(1));
        let cpus = f64::from(req.total_tasks(req.min_nodes)) * f64::from(req.cpus_per_task);
        let js = if self.favor_small {
            ((nodes - min_nodes) / nodes + (cluster_cpus - cpus) / cluster_cpus) / 2.0
        } else {
            (min_nodes / nodes + cpus / cluster_cpus) / 2.0
        }
        .clamp(0.0, 1.0);
        let max_factor = cluster
            .partitions
            .iter()
            .map(|p| p.priority_job_factor)
            .max()
            .unwrap_or(1)
            .max(1);
        let p = cluster.partition(part);
        let part_f = f64::from(p.priority_job_factor) / f64::from(max_factor);
        let age = match job.eligible {
            Some(e) if self.weight_age > 0 && self.max_age > 0 => {
                ((now.saturating_sub(e)) as f64 / self.max_age as f64).min(1.0)
            }
            _ => 0.0,
        };
        let mut tres = 0.0;
        if self.weight_tres_cpu != 0.0 || self.weight_tres_mem != 0.0 || self.weight_tres_gpu != 0.0
        {
            let (mut pcpu, mut pmem, mut pgpu) = (0f64, 0f64, 0f64);
            for n in &p.nodes {
                let node = cluster.node(*n);
                pcpu += f64::from(node.cpus());
                pmem += node.memory_mib as f64;
                pgpu += node.gpus.len() as f64;
            }
            let mem = match req.mem {
                MemReq::PerNode(m) => m as f64 * min_nodes,
                MemReq::PerCpu(m) => m as f64 * cpus,
                _ => 0.0,
            };
            let gpus = req
                .gpus_per_node
                .iter()
                .map(|g| f64::from(g.count))
                .sum::<f64>()
                * min_nodes
                + req.gpus_per_job.map_or(0.0, |g| f64::from(g.count));
            if pcpu > 0.0 {
                tres += self.weight_tres_cpu * cpus / pcpu;
            }
            if pmem > 0.0 {
                tres += self.weight_tres_mem * mem / pmem;
            }
            if pgpu > 0.0 {
                tres += self.weight_tres_gpu * gpus / pgpu;
            }
        }
        // In `_get_priority_internal()`'s order of addition.
        let total = f64::from(self.weight_age) * age
            + f64::from(self.weight_assoc) * acct.assoc
            + f64::from(self.weight_fairshare) * acct.fairshare
            + f64::from(self.weight_job_size) * js
            + f64::from(self.weight_partition) * part_f
            + f64::from(self.weight_qos) * acct.qos
            + tres
            - f64::from(nice);
        if total < 1.0 {
            1
        } else if total > f64::from(u32::MAX) {
            u32::MAX
        } else {
            total as u32
        }
    }
}
