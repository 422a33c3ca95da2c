//! slurm.conf's scheduler settings and the loaded cluster.
//!
//! The format itself is read by [`gresim_slurm::slurmconf`] into a
//! [`SlurmConf`] and a [`gresim_model::Cluster`]; here it becomes the
//! scheduler settings ([`sched_params`], over [`SchedParams`]' defaults)
//! and the policy `SchedulerType` asks for ([`policy_name`]), which need
//! the scheduler's types. [`load`] does both for a scenario's or the CLI's
//! slurm.conf.

use std::path::Path;

use gresim_model::Cluster;
use gresim_sched::priority::{Multifactor, PriorityConfig};
use gresim_sched::SchedParams;
use gresim_slurm::conf_lines::Warning;
use gresim_slurm::gresconf::GresConf;
use gresim_slurm::slurmconf::{read_cluster, ConfCluster, SlurmConf};

use crate::error::InputError;

/// The scheduler settings of `conf` over `base` (whose fields slurm.conf does
/// not set are kept: the pass cadence, the controller phase).
pub fn sched_params(conf: &SlurmConf, base: &SchedParams) -> SchedParams {
    let mut p = base.clone();
    let n = |v: &str| v.parse::<u64>().unwrap_or(0);
    for (k, v) in &conf.scheduler_parameters {
        match k.as_str() {
            "sched_interval" => p.sched_interval = n(v).max(1),
            "bf_interval" => p.bf_interval = n(v).max(1),
            "bf_resolution" => p.bf_resolution = n(v).max(1),
            "bf_window" => p.bf_window = n(v).saturating_mul(60),
            "bf_max_job_test" => p.bf_max_job_test = u32::try_from(n(v)).unwrap_or(u32::MAX),
            "max_switch_wait" => p.max_switch_wait = n(v),
            "kill_invalid_depend" => p.kill_invalid_depend = true,
            "enable_user_top" => p.enable_user_top = true,
            "preempt_youngest_first" => p.preempt.youngest_first = true,
            "preempt_strict_order" => p.preempt.strict_order = true,
            "preempt_reorder_count" => {
                p.preempt.reorder_count = u32::try_from(n(v)).unwrap_or(u32::MAX)
            }
            _ => {}
        }
    }
    if conf
        .dependency_parameters
        .iter()
        .any(|o| o == "kill_invalid_depend")
    {
        p.kill_invalid_depend = true;
    }
    if let Some(d) = conf.def_mem_per_cpu {
        p.def_mem_per_cpu = (d > 0).then_some(d);
    }
    if let Some(r) = conf.job_requeue {
        p.job_requeue = r;
    }
    if let Some(c) = conf.cred_expire {
        p.cred_expire = c;
    }
    if let Some(c) = conf.priority_calc_period {
        p.priority_calc_period = c;
    }
    p.preempt.ptype = conf.preempt.ptype;
    p.preempt.mode = conf.preempt.mode;
    p.preempt.exempt_time = conf.preempt.exempt_time;
    if let Some(t) = conf.scheduler_time_slice {
        p.time_slice = t;
    }
    if let Some(r) = conf.resv_over_run {
        p.resv_over_run = r;
    }
    p.set_kill_wait(
        conf.kill_wait.unwrap_or(SchedParams::DEFAULT_KILL_WAIT),
        conf.message_timeout
            .unwrap_or(SchedParams::DEFAULT_MESSAGE_TIMEOUT),
    );
    match conf.priority_type.as_deref() {
        Some("priority/multifactor") => {
            let mut m = Multifactor::new();
            // Without slurmdbd slurmctld ignores the age weight.
            if conf.accounting_storage_type.as_deref() == Some("accounting_storage/slurmdbd") {
                m.weight_age = conf.priority_weight_age.unwrap_or(0);
            }
            m.weight_job_size = conf.priority_weight_job_size.unwrap_or(0);
            m.weight_partition = conf.priority_weight_partition.unwrap_or(0);
            m.weight_fairshare = conf.priority_weight_fairshare.unwrap_or(0);
            m.weight_qos = conf.priority_weight_qos.unwrap_or(0);
            m.weight_assoc = conf.priority_weight_assoc.unwrap_or(0);
            for (t, x) in &conf.priority_weight_tres {
                match t.as_str() {
                    "cpu" => m.weight_tres_cpu = *x,
                    "mem" => m.weight_tres_mem = *x,
                    "gres/gpu" => m.weight_tres_gpu = *x,
                    _ => {}
                }
            }
            m.favor_small = conf.priority_favor_small.unwrap_or(false);
            if let Some(a) = conf.priority_max_age {
                m.max_age = a;
            }
            if let Some(h) = conf.priority_decay_half_life {
                m.half_life = h;
            }
            if let Some(f) = &conf.priority_flags {
                let f = f.to_ascii_uppercase();
                // DEPTH_OBLIVIOUS is a variant of classic fair-share; gresim
                // computes it as classic.
                m.fair_tree = !(f.contains("NO_FAIR_TREE") || f.contains("DEPTH_OBLIVIOUS"));
            }
            if let Some(r) = conf.priority_usage_reset {
                m.usage_reset = r;
            }
            p.priority = PriorityConfig::Multifactor(m);
        }
        Some(_) => p.priority = PriorityConfig::Basic,
        None => {}
    }
    p
}

/// The gresim policy for `SchedulerType`: `slurm` (sched/backfill, the
/// default) or `fifo` (sched/builtin).
pub fn policy_name(conf: &SlurmConf) -> &'static str {
    match conf.scheduler_type.as_deref() {
        Some("sched/builtin") => "fifo",
        _ => "slurm",
    }
}

/// A cluster and scheduler settings read from slurm.conf (+ gres.conf).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub conf: SlurmConf,
    pub gres: GresConf,
    pub cluster: Cluster,
    pub params: SchedParams,
    /// The policy SchedulerType asks for.
    pub policy: &'static str,
    pub warnings: Vec<Warning>,
}

/// Reads slurm.conf and gres.conf (by default the `gres.conf` next to
/// slurm.conf, where Slurm looks for it, when it exists) and builds the
/// cluster ([`read_cluster`]) and the scheduler settings over Slurm's
/// defaults.
pub fn load(slurm_conf: &Path, gres_conf: Option<&Path>) -> Result<Loaded, InputError> {
    let ConfCluster {
        conf,
        gres,
        cluster,
        warnings,
    } = read_cluster(slurm_conf, gres_conf)?;
    let params = sched_params(&conf, &SchedParams::default());
    let policy = policy_name(&conf);
    Ok(Loaded {
        conf,
        gres,
        cluster,
        params,
        policy,
        warnings,
    })
}

#[cfg(test)]
mod tests;
