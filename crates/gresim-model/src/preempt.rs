//! Preemption settings: slurm.conf's `PreemptType`, `PreemptMode` and
//! `PreemptExemptTime`, the `preempt_*` words of SchedulerParameters, and
//! the per-partition and per-QOS modes (docs/preemption.md).
//!
//! Slurm 22.05 has no `PreemptParameters` line yet: its options are
//! SchedulerParameters words (`preempt_youngest_first`,
//! `preempt_reorder_count=`, `preempt_strict_order`) and a
//! SlurmctldParameters word (`preempt_send_user_signal`).

use std::fmt;
use std::str::FromStr;

/// `PreemptType`: which plugin decides who may preempt whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreemptType {
    /// `preempt/none` (the default): no preemption.
    #[default]
    None,
    /// `preempt/partition_prio`: a job in a partition of higher
    /// PriorityTier preempts jobs of lower tiers on the same nodes.
    PartitionPrio,
    /// `preempt/qos`: a job preempts jobs whose QOS its QOS's `Preempt`
    /// list names.
    Qos,
}

impl PreemptType {
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptType::None => "preempt/none",
            PreemptType::PartitionPrio => "preempt/partition_prio",
            PreemptType::Qos => "preempt/qos",
        }
    }
}

impl FromStr for PreemptType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "preempt/none" | "none" => Ok(PreemptType::None),
            "preempt/partition_prio" => Ok(PreemptType::PartitionPrio),
            "preempt/qos" => Ok(PreemptType::Qos),
            _ => Err(format!(
                "unknown PreemptType {s:?} (expected preempt/none, preempt/partition_prio or preempt/qos)"
            )),
        }
    }
}

/// What happens to a preempted job (`PreemptMode` without its flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreemptMode {
    /// `OFF`: the job is never preempted.
    #[default]
    Off,
    /// `CANCEL`: the job is killed and ends PREEMPTED.
    Cancel,
    /// `REQUEUE`: the job is killed and queued again (a restart).
    Requeue,
    /// `SUSPEND` (with `GANG`): the job is stopped while the preemptor runs.
    Suspend,
}

impl PreemptMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PreemptMode::Off => "OFF",
            PreemptMode::Cancel => "CANCEL",
            PreemptMode::Requeue => "REQUEUE",
            PreemptMode::Suspend => "SUSPEND",
        }
    }
    /// Whether a preemptor may take the job's resources by ending it (the
    /// modes cons_tres's `_run_now()` removes from its trial).
    pub fn ends_job(self) -> bool {
        matches!(self, PreemptMode::Cancel | PreemptMode::Requeue)
    }
}

impl fmt::Display for PreemptMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `PreemptMode` value: a mode and the `GANG` and `WITHIN` flags, as
/// Slurm's `preempt_mode_num()` reads it (comma-separated, any case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PreemptModeSpec {
    pub mode: PreemptMode,
    pub gang: bool,
    /// `WITHIN` (preempt/qos): jobs of one QOS preempt each other by priority.
    pub within: bool,
}

impl FromStr for PreemptModeSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = PreemptModeSpec::default();
        let mut modes = 0;
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match w.to_ascii_lowercase().as_str() {
                "off" => modes += 1,
                "cancel" => {
                    out.mode = PreemptMode::Cancel;
                    modes += 1;
                }
                "requeue" => {
                    out.mode = PreemptMode::Requeue;
                    modes += 1;
                }
                "suspend" => {
                    out.mode = PreemptMode::Suspend;
                    modes += 1;
                }
                "gang" => out.gang = true,
                "within" => out.within = true,
                // Slurm 22.05 still reads CHECKPOINT, and treats it as CANCEL.
                "checkpoint" => {
                    out.mode = PreemptMode::Cancel;
                    modes += 1;
                }
                _ => {
                    return Err(format!(
                        "unknown PreemptMode word {w:?} (expected OFF, CANCEL, REQUEUE, SUSPEND, GANG or WITHIN)"
                    ))
                }
            }
        }
        if modes > 1 {
            return Err(format!("PreemptMode {s:?} names more than one mode"));
        }
        if modes == 0 && !out.gang && !out.within {
            return Err(format!("PreemptMode {s:?} is empty"));
        }
        Ok(out)
    }
}

impl fmt::Display for PreemptModeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mode.as_str())?;
        if self.gang {
            f.write_str(",GANG")?;
        }
        if self.within {
            f.write_str(",WITHIN")?;
        }
        Ok(())
    }
}

/// The cluster-wide preemption settings. The default (Slurm's) is no
/// preemption, and leaves every decision as it is without preemption.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptConfig {
    pub ptype: PreemptType,
    /// The global `PreemptMode` (OFF when absent).
    pub mode: PreemptModeSpec,
    /// `PreemptExemptTime` in seconds: a job runs at least this long before
    /// it may be preempted (`None`: not set, Slurm's INFINITE).
    pub exempt_time: Option<u64>,
    /// SchedulerParameters `preempt_youngest_first`: candidates are tried
    /// youngest first instead of by the plugin's priority.
    pub youngest_first: bool,
    /// SchedulerParameters `preempt_reorder_count=` (default 1): how many
    /// times cons_tres reorders the candidates to preempt fewer jobs.
    pub reorder_count: u32,
    /// SchedulerParameters `preempt_strict_order`.
    pub strict_order: bool,
    /// KillWait + MessageTimeout (30 + 10 s by default): for this long
    /// after a job preempted others it preempts no more (`kill_pending` in
    /// `select_nodes()`), since the first ones may still be going.
    pub kill_pending_wait: u64,
}

impl Default for PreemptConfig {
    fn default() -> Self {
        PreemptConfig::new()
    }
}

impl PreemptConfig {
    /// Slurm's defaults: `preempt/none`, mode OFF, reorder count 1,
    /// KillWait + MessageTimeout of 30 + 10 s.
    pub fn new() -> PreemptConfig {
        PreemptConfig {
            ptype: PreemptType::None,
            mode: PreemptModeSpec::default(),
            exempt_time: None,
            youngest_first: false,
            reorder_count: 1,
            strict_order: false,
            kill_pending_wait: 40,
        }
    }
    /// Whether any job can be preempted (the plugin's `PREEMPT_DATA_ENABLED`).
    pub fn enabled(&self) -> bool {
        self.ptype != PreemptType::None && self.mode.mode != PreemptMode::Off
    }

    /// Whether any PreemptMode is set (Slurm's `slurm_conf.preempt_mode`
    /// non-zero: a mode other than OFF, or GANG, or WITHIN), whatever the
    /// PreemptType.
    pub fn mode_set(&self) -> bool {
        self.mode != PreemptModeSpec::default()
    }

    /// Whether a job may preempt a job of its own QOS (preempt/qos with
    /// `WITHIN` in the global PreemptMode or some QOS's): the plugin's
    /// `preempt_p_preemptable()` then compares the two jobs' priorities.
    pub fn same_qos(&self, acct: Option<&crate::accounting::Accounting>) -> bool {
        self.enabled()
            && self.ptype == PreemptType::Qos
            && (self.mode.within
                || acct.is_some_and(|a| {
                    a.qos
                        .iter()
                        .any(|q| q.preempt_mode.is_some_and(|m| m.within))
                }))
    }
}

#[cfg(test)]
mod tests;
