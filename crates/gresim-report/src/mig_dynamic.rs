//! Dynamic MIG in the summary: how often GPUs were repartitioned and the
//! capacity that cost (docs/mig.md).

use gresim_engine::SimOutput;

use crate::summary::round6;

/// Repartitionings of a run on a cluster with dynamic MIG GPUs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MigReconfigSummary {
    /// GPUs whose layout may change.
    pub dynamic_gpus: u64,
    /// Repartitionings begun (completed or under way at the end).
    pub reconfigurations: u64,
    /// Seconds each one takes the GPU out of service.
    pub delay: u64,
    /// GPU-seconds spent out of service: lost capacity.
    pub reconfig_gpu_seconds: u64,
    /// That, over the dynamic GPUs' GPU-seconds of the run.
    #[serde(serialize_with = "ser6")]
    pub lost_share: f64,
}

fn ser6<S: serde::Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round6(*x))
}

impl MigReconfigSummary {
    /// `None` on clusters without dynamic MIG GPUs.
    pub fn of(out: &SimOutput) -> Option<Self> {
        let d = out.cluster.dynamic_mig()?;
        let secs = d.reconfig_gpu_secs(out.end_time);
        let span = out.usage.to.saturating_sub(out.usage.from);
        let cap = d.gpus.len() as u64 * span;
        Some(MigReconfigSummary {
            dynamic_gpus: d.gpus.len() as u64,
            reconfigurations: d.reconfigurations() as u64,
            delay: d.reconfig_delay,
            reconfig_gpu_seconds: secs,
            lost_share: if cap == 0 {
                0.0
            } else {
                secs as f64 / cap as f64
            },
        })
    }

    /// The summary table's line.
    pub fn line(&self) -> String {
        format!(
            "{:<10} {} repartitionings of {} dynamic GPUs, {} GPU-s out of service ({:.1}% of their capacity)",
            "MIG",
            self.reconfigurations,
            self.dynamic_gpus,
            self.reconfig_gpu_seconds,
            self.lost_share * 100.0
        )
    }
}
