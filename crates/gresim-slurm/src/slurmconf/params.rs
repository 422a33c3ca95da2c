//! slurm.conf's global keys: scheduler, priority, preemption, accounting
//! and topology settings, each read into [`SlurmConf`] with its checks.

use super::keys::{QUIET_KEYS, QUIET_SCHED_OPTS, SCHED_FLAGS, SCHED_OPTS, UNMODELLED_KEYS};
use super::{boolean, line_err, num, time_opt, SlurmConf};
use crate::conf_lines::{ConfLine, Warning};
use crate::error::InputError;

pub(super) fn global(
    l: &ConfLine,
    c: &mut SlurmConf,
    k: &str,
    v: &str,
    w: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let mut warn = |m: String| w.push(Warning::new(&l.file, l.line, m));
    match k.to_ascii_lowercase().as_str() {
        "selecttype" => c.select_type = Some(v.to_string()),
        "selecttypeparameters" => c.select_type_parameters = Some(v.to_string()),
        "schedulertype" => {
            if !["sched/backfill", "sched/builtin"].contains(&v) {
                warn(format!(
                    "SchedulerType={v} is not modelled; gresim simulates sched/backfill"
                ));
            }
            c.scheduler_type = Some(v.to_string());
        }
        "schedulerparameters" => {
            for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let (o, val) = item.split_once('=').unwrap_or((item, ""));
                let o = o.to_ascii_lowercase();
                if SCHED_OPTS.contains(&o.as_str()) {
                    if !SCHED_FLAGS.contains(&o.as_str()) && val.parse::<u64>().is_err() {
                        return Err(line_err(
                            l,
                            &format!("SchedulerParameters {item}: expected a number"),
                        ));
                    }
                } else if !QUIET_SCHED_OPTS.contains(&o.as_str()) {
                    warn(format!(
                        "SchedulerParameters option '{item}' is not modelled (ignored)"
                    ));
                }
                c.scheduler_parameters.push((o, val.to_string()));
            }
        }
        "prioritytype" => {
            if !["priority/basic", "priority/multifactor"].contains(&v) {
                return Err(line_err(
                    l,
                    &format!("PriorityType={v}: expected priority/basic or priority/multifactor"),
                ));
            }
            c.priority_type = Some(v.to_string());
        }
        "priorityweightage" => c.priority_weight_age = Some(num(l, k, v)?),
        "priorityweightjobsize" => c.priority_weight_job_size = Some(num(l, k, v)?),
        "priorityweightpartition" => c.priority_weight_partition = Some(num(l, k, v)?),
        "priorityweightfairshare" => c.priority_weight_fairshare = Some(num(l, k, v)?),
        "priorityweightqos" => c.priority_weight_qos = Some(num(l, k, v)?),
        "priorityweightassoc" => c.priority_weight_assoc = Some(num(l, k, v)?),
        "priorityweighttres" => {
            c.priority_weight_tres.clear();
            for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let Some((t, x)) = item.split_once('=') else {
                    return Err(line_err(
                        l,
                        &format!("PriorityWeightTRES {item}: expected TRES=weight"),
                    ));
                };
                let x: f64 = x
                    .trim()
                    .parse()
                    .ok()
                    .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| {
                        line_err(l, &format!("PriorityWeightTRES {item}: expected a number"))
                    })?;
                let t = t.trim().to_ascii_lowercase();
                if !["cpu", "mem", "gres/gpu"].contains(&t.as_str()) {
                    warn(format!(
                        "PriorityWeightTRES {item}: only CPU, Mem and GRES/gpu are modelled"
                    ));
                }
                c.priority_weight_tres.push((t, x));
            }
        }
        "priorityfavorsmall" => c.priority_favor_small = Some(boolean(l, k, v)?),
        "prioritydecayhalflife" => {
            c.priority_decay_half_life = Some(time_opt(l, k, v)?.unwrap_or(0));
            c.priority_decay_at = Some((l.file.clone(), l.line));
        }
        "prioritycalcperiod" => {
            c.priority_calc_period = Some(time_opt(l, k, v)?.filter(|s| *s > 0).unwrap_or(60))
        }
        "priorityflags" => c.priority_flags = Some(v.to_string()),
        "priorityusageresetperiod" => {
            c.priority_usage_reset = Some(
                v.parse::<gresim_model::accounting::UsageReset>()
                    .map_err(|m| line_err(l, &format!("{k}={v}: {m}")))?,
            )
        }
        "accountingstorageenforce" => c.accounting_storage_enforce = Some(v.to_string()),
        "accountingstoragetres" => c.accounting_storage_tres = Some(v.to_string()),
        "prioritymaxage" => {
            c.priority_max_age = Some(time_opt(l, k, v)?.unwrap_or(u64::from(u32::MAX)))
        }
        "defmempercpu" => c.def_mem_per_cpu = Some(num(l, k, v)?),
        "jobrequeue" => c.job_requeue = Some(num::<u64>(l, k, v)? != 0),
        "dependencyparameters" => {
            for o in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if o != "kill_invalid_depend" {
                    warn(format!(
                        "DependencyParameters option '{o}' is not modelled (ignored)"
                    ));
                }
                c.dependency_parameters.push(o.to_string());
            }
        }
        "authinfo" => {
            for o in v.split(',').map(str::trim) {
                if let Some(x) = o.strip_prefix("cred_expire=") {
                    c.cred_expire = Some(num(l, "cred_expire", x)?);
                }
            }
        }
        "grestypes" => {
            c.gres_types = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        }
        "accountingstoragetype" => c.accounting_storage_type = Some(v.to_string()),
        "killwait" => c.kill_wait = Some(num(l, k, v)?),
        "resvoverrun" => {
            c.resv_over_run = Some(match v.trim().to_ascii_uppercase().as_str() {
                "UNLIMITED" | "INFINITE" => 365 * 86_400,
                _ => {
                    // A uint16 of minutes (read_config.c).
                    let m: u16 = v.trim().parse().map_err(|_| {
                        line_err(
                            l,
                            &format!("{k}={v}: expected minutes (0 to 65534) or UNLIMITED"),
                        )
                    })?;
                    u64::from(m) * 60
                }
            })
        }
        "schedulertimeslice" => {
            // read_config.c: a uint16; below 5 it logs an error and takes
            // the default (30), which gresim refuses rather than guess.
            let t: u16 = num(l, k, v)?;
            if t < 5 {
                return Err(line_err(
                    l,
                    &format!("SchedulerTimeSlice={v}: expected 5 to 65535 seconds (Slurm: \"SchedulerTimeSlice must be at least 5 seconds\")"),
                ));
            }
            c.scheduler_time_slice = Some(u64::from(t));
        }
        "messagetimeout" => c.message_timeout = Some(num(l, k, v)?),
        "preempttype" => {
            c.preempt.ptype = v.parse().map_err(|e: String| line_err(l, &e))?;
            c.preempt_type_at = Some((l.file.clone(), l.line));
        }
        "preemptmode" => {
            let m: gresim_model::preempt::PreemptModeSpec = v
                .parse()
                .map_err(|e: String| line_err(l, &format!("PreemptMode={v}: {e}")))?;
            if m.mode == gresim_model::preempt::PreemptMode::Suspend && !m.gang {
                // read_config.c refuses it, and slurmctld does not start.
                return Err(line_err(l, "PreemptMode=SUSPEND requires GANG too"));
            }
            if m.mode == gresim_model::preempt::PreemptMode::Suspend {
                warn(format!(
                    "PreemptMode={v}: SUSPEND,GANG is modelled only under preempt/partition_prio (lower-tier jobs suspended while a higher-tier job runs on their cores, keeping their GPUs); with preempt/qos nothing is suspended"
                ));
            }
            c.preempt.mode = m;
        }
        "preemptexempttime" => {
            // time_str2secs(): INFINITE (or -1) is "not set".
            c.preempt.exempt_time = if v.trim() == "-1"
                || v.eq_ignore_ascii_case("INFINITE")
                || v.eq_ignore_ascii_case("UNLIMITED")
            {
                None
            } else {
                Some(
                    gresim_model::slurm_time::parse_duration_exact(v)
                        .map_err(|e| line_err(l, &format!("PreemptExemptTime={v}: {e}")))?,
                )
            }
        }
        "topologyplugin" => {
            c.topology_plugin = crate::topology_conf::plugin(v).map_err(|e| line_err(l, &e))?;
            c.topology_plugin_at = Some((l.file.clone(), l.line));
        }
        o if QUIET_KEYS.contains(&o) => {}
        o if UNMODELLED_KEYS.contains(&o) => {
            warn(format!("{k}={v} is not modelled (ignored)"));
        }
        _ => warn(format!("unknown key '{k}' (ignored)")),
    }
    Ok(())
}
