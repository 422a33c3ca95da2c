//! `sim explain RUN_DIR JOBID [--at T]`: why a job is pending at T.
//!
//! Prints the job's pending reason at T, what it asks for per node, which
//! running jobs hold resources on the nodes it could use and when they end
//! (actual end, and the end Slurm plans with: start + time limit), an
//! estimated start, and whether any node could ever satisfy the request.
//!
//! The estimated start is a simple model of backfill's planning: starting
//! from the cluster as it is at T, running jobs are released in order of
//! planned end and `gresim_sched::select::select` is retried after each; the
//! first planned end at which the job fits is the estimate. It ignores queued
//! jobs ahead of it, later submissions and future node events, so it is an
//! estimate, labelled as one; the actual start in the run is printed beside it.

use std::fmt::Write as _;

use gresim_model::hostlist;
use gresim_model::slurm_time::{format_duration, format_time_limit};
use gresim_sched::select::{runnable_ever, select, SelectCache};

use crate::run_file::{describe_request, JobAt, JobRec, RunFile, RunRec};

/// Finds a job by `123`, `123_4` or its scenario key.
pub fn find_job<'a>(rf: &'a RunFile, id: &str) -> Option<&'a JobRec> {
    let id = id.trim();
    rf.jobs
        .iter()
        .find(|j| j.id == id)
        .or_else(|| {
            let n: u32 = id.parse().ok()?;
            rf.jobs.iter().find(|j| j.job_id == Some(n))
        })
        .or_else(|| rf.jobs.iter().find(|j| j.key == id && j.task.is_none()))
}

/// The time explained by default: the end of the run if the job is still
/// pending then, else the last second before its first start, else its submit.
pub fn default_at(rf: &RunFile, j: &JobRec) -> u64 {
    if matches!(j.at(rf.end_time), Some(JobAt::Pending { .. })) {
        return rf.end_time;
    }
    match j.runs.first() {
        Some(r) if r.start > j.first_submit => r.start - 1,
        _ => j.first_submit,
    }
}

fn t_str(t: u64) -> String {
    format!("t={t} ({})", format_duration(t))
}

/// A warning line when the job's run at `t` (else its last run) holds a MIG
/// instance and other GPU devices: MIG instances cannot join NVLink/NCCL
/// collectives with each other (`scheduler.mig_multi_gpu`).
fn mig_multi_gpu_line(rf: &RunFile, j: &JobRec, t: u64) -> Option<String> {
    let r = j
        .runs
        .iter()
        .find(|r| r.active_at(t))
        .or_else(|| j.runs.last())?;
    let idx = rf.node_index();
    let (mut mig, mut total) = (0u32, 0u32);
    let mut types: Vec<&str> = Vec::new();
    for na in &r.nodes {
        let node = idx.get(na.node.as_str()).map(|&i| &rf.cluster.nodes[i]);
        for &g in &na.gpus {
            total += 1;
            if let Some(d) = node.and_then(|n| n.gpus.get(usize::from(g))) {
                if d.mig.is_some() {
                    mig += 1;
                    if !types.contains(&d.ty.as_str()) {
                        types.push(d.ty.as_str());
                    }
                }
            }
        }
    }
    (mig >= 1 && total >= 2).then(|| {
        format!(
            "warning multi-GPU job on MIG slices: the run from {} holds {total} GPU devices, {mig} of them MIG instances ({}); MIG instances cannot join NVLink/NCCL collectives with each other\n",
            t_str(r.start),
            types.join(", ")
        )
    })
}

/// The explanation text, or an error (unknown job, inconsistent run file).
/// The reservations that hold a pending job at `t` (docs/reservations.md):
/// its own (`--reservation`), or those whose window its time limit would
/// run into, whose nodes it may then not use.
fn resv_lines(rf: &RunFile, j: &JobRec, t: u64) -> String {
    let mut s = String::new();
    let current = |name: &str| {
        rf.reservations
            .iter()
            .find(|r| r.name == name && r.current_at(t))
    };
    if let Some(name) = &j.reservation {
        match current(name) {
            None => {
                let _ = writeln!(
                    s,
                    "resv    its reservation {name} does not exist at this time"
                );
            }
            Some(r) => {
                let (rs, re) = r.window(t);
                let when = if t < rs {
                    format!("; it begins at {}, and the job waits until then", t_str(rs))
                } else {
                    format!(", in force until {}", t_str(re))
                };
                let _ = writeln!(
                    s,
                    "resv    runs only in reservation {name} (nodes {}{when})",
                    r.nodes
                );
            }
        }
        return s;
    }
    let end = j.time_limit.map_or(u64::MAX, |l| t.saturating_add(l));
    for r in rf.reservations.iter().filter(|r| r.current_at(t)) {
        let (rs, re) = r.window(t);
        if rs < end && re > t {
            let flags = if r.flags.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.flags.join(","))
            };
            let _ = writeln!(
                s,
                "resv    reservation {}{flags} holds {} from {} to {}: a run from now to the end of its time limit meets it, so the job may not use those nodes",
                r.name,
                r.nodes,
                t_str(rs),
                t_str(re)
            );
        }
    }
    s
}

pub fn explain(rf: &RunFile, id: &str, at: Option<u64>) -> Result<String, String> {
    let j = find_job(rf, id).ok_or_else(|| format!("no job '{id}' in this run"))?;
    let t = at.unwrap_or_else(|| default_at(rf, j));
    // Node selection's caches, for this run file's cluster only.
    let mut cache = SelectCache::new();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "job {} \"{}\" (user {}) at {}",
        j.id,
        j.name,
        j.user,
        t_str(t)
    );
    if let Some(line) = mig_multi_gpu_line(rf, j, t) {
        s.push_str(&line);
    }
    let Some(state) = j.at(t) else {
        let _ = writeln!(
            s,
            "not submitted yet: it is submitted at {}",
            t_str(j.first_submit)
        );
        return Ok(s);
    };
    let (reason, desc) = match &state {
        JobAt::Pending { reason, desc, .. } => (reason.clone(), desc.clone()),
        JobAt::Running(r) => {
            let _ = writeln!(
                s,
                "RUNNING since {} on {}: it is not pending",
                t_str(r.start),
                hostlist::compress(&r.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>())
            );
            return Ok(s);
        }
        JobAt::Done { state, end } => {
            let _ = writeln!(
                s,
                "{} at {}: it is not pending",
                state.as_str(),
                t_str(*end)
            );
            if let Some(msg) = &j.rejected {
                let _ = writeln!(s, "rejected at submission: {msg}");
            }
            return Ok(s);
        }
    };
    let _ = writeln!(
        s,
        "state   PENDING, reason {}{}",
        reason,
        desc.as_deref()
            .map_or_else(String::new, |d| format!(" ({d})"))
    );
    if !rf.reasons_recorded {
        s.push_str("        (the run kept no reason history: this is the job's last reason)\n");
    }
    let _ = writeln!(s, "asks    {}", describe_request(&j.request));
    let _ = writeln!(s, "limit   {}", format_time_limit(j.time_limit));
    s.push_str(&resv_lines(rf, j, t));
    if let Some((count, wait)) = j.request.switches {
        // job_mgr.c `_max_switch_wait()`: no @time, or a longer one, waits
        // max_switch_wait (300 s unless SchedulerParameters says otherwise).
        let w = wait.unwrap_or(u64::MAX).min(300);
        let until = j.first_submit.saturating_add(w);
        let _ = writeln!(
            s,
            "switches at most {count} leaf switch(es) (--switches={count}{}): under topology/tree it pends (Resources) while only more leaves could hold it, {}",
            wait.map_or_else(String::new, |w| format!("@{}", format_duration(w))),
            if t < until {
                format!("until its wait ends at {} (capped by max_switch_wait, 300 s by default)", t_str(until))
            } else {
                format!("but its wait ended at {}: any leaves will do now", t_str(until))
            }
        );
    }
    if let Some(seg) = j.request.segment {
        let _ = writeln!(
            s,
            "segment --segment={seg}: under topology/block (beyond Slurm 22.05) its nodes come in segments of {seg}, each inside one base block"
        );
    }
    match reason.as_str() {
        "JobHeldUser" | "JobHeldAdmin" => {
            let _ = writeln!(
                s,
                "held    the job is held{}; it cannot start until it is released",
                if reason == "JobHeldAdmin" {
                    " by an administrator"
                } else {
                    " by its user"
                }
            );
        }
        "Dependency" | "DependencyNeverSatisfied" => {
            let _ = writeln!(
                s,
                "depends {}{}",
                j.dependency.as_deref().unwrap_or("(unknown)"),
                if reason == "DependencyNeverSatisfied" {
                    ": it can never be satisfied"
                } else {
                    ": it waits for those jobs"
                }
            );
        }
        "BeginTime" => {
            let _ = writeln!(
                s,
                "begin   not eligible before {}",
                j.begin.map_or_else(|| "its begin time".to_string(), t_str)
            );
        }
        r if is_acct_limit(r) => {
            s.push_str(&acct_limit_lines(rf, j, r, t));
            return Ok(s);
        }
        _ => {}
    }

    let c = rf.model_cluster()?;
    let req = rf.model_request(&c, &j.request)?;
    let params = rf.sched_params();
    let parts: Vec<String> = if j.request.partitions.is_empty() {
        rf.default_partition()
            .map(str::to_string)
            .into_iter()
            .collect()
    } else {
        j.request.partitions.clone()
    };
    let (mut st, running) = rf.state_at(&c, t)?;
    let admin = rf.admin_at(t);

    let mut candidates: Vec<usize> = Vec::new();
    let mut ever = false;
    for p in &parts {
        let Some(pid) = c.partition_id(p) else {
            continue;
        };
        ever |= runnable_ever(&mut cache, &c, &params, &req, pid);
        for n in &c.partition(pid).nodes {
            let name = &c.node(*n).name;
            let ok = (j.request.nodelist.is_empty() || j.request.nodelist.contains(name))
                && !j.request.exclude.contains(name);
            if ok && !candidates.contains(&n.idx()) {
                candidates.push(n.idx());
            }
        }
    }
    candidates.sort_unstable();
    let _ = writeln!(
        s,
        "ever    {}",
        if ever {
            format!(
                "yes: the request fits partition {} when its nodes are idle and up",
                parts.join(",")
            )
        } else {
            format!(
                "NO: no node of partition {} can satisfy the request even when idle; it will pend forever",
                parts.join(",")
            )
        }
    );
    let _ = writeln!(
        s,
        "nodes   {} node(s) it may use: {}",
        candidates.len(),
        candidates
            .iter()
            .map(|&i| {
                let st = admin[i].as_str();
                if st == "UP" {
                    c.nodes[i].name.clone()
                } else {
                    format!("{}({})", c.nodes[i].name, st.to_ascii_lowercase())
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    );

    // Who holds resources on those nodes.
    let mut holders: Vec<(u64, usize, usize)> = Vec::new();
    for &(ji, ri) in &running {
        let jr = &rf.jobs[ji];
        let r = &jr.runs[ri];
        let on: Vec<&crate::run_file::NodeAllocRec> = r
            .nodes
            .iter()
            .filter(|na| {
                c.node_id(&na.node)
                    .is_some_and(|id| candidates.contains(&id.idx()))
            })
            .collect();
        if on.is_empty() {
            continue;
        }
        let planned = jr
            .time_limit
            .map_or(u64::MAX, |l| r.start.saturating_add(l));
        holders.push((planned, ji, ri));
    }
    holders.sort_unstable();
    if holders.is_empty() {
        s.push_str("held by no running job on those nodes\n");
    } else {
        let _ = writeln!(
            s,
            "held by {} running job(s) on those nodes, by planned end:",
            holders.len()
        );
        for &(planned, ji, ri) in &holders {
            let jr = &rf.jobs[ji];
            let r = &jr.runs[ri];
            let what: Vec<String> = r
                .nodes
                .iter()
                .map(|na| {
                    let g = if na.gpus.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " GPU {}",
                            crate::run_file::ranges(na.gpus.iter().map(|&x| u32::from(x)))
                        )
                    };
                    format!(
                        "{}: {} CPU {}{g}",
                        na.node,
                        na.cpus,
                        gresim_model::units::format_mem_mib(na.mem_mib)
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "  {:>8} {:<10} {:<8} {}; started {}, planned end {}, actual end {}",
                jr.id,
                jr.name,
                jr.user,
                what.join("; "),
                r.start,
                if planned == u64::MAX {
                    "never (UNLIMITED)".to_string()
                } else {
                    planned.to_string()
                },
                r.end.map_or_else(
                    || "still running at the end of the run".to_string(),
                    |e| e.to_string()
                )
            );
        }
    }

    if let Some(text) = preempt_lines(rf, &c, &params, j, &req, &parts, &st, &running, t)? {
        s.push_str(&text);
    }

    // Estimated start.
    let blocked = matches!(
        reason.as_str(),
        "JobHeldUser" | "JobHeldAdmin" | "Dependency" | "DependencyNeverSatisfied" | "BeginTime"
    );
    let mut fits = |st: &gresim_model::ClusterState| -> Option<String> {
        for p in &parts {
            let pid = c.partition_id(p)?;
            if let Ok(a) = select(&mut cache, &c, &params, st, &req, pid, None) {
                return Some(hostlist::compress(
                    &c.node_names(a.nodes.iter().map(|n| &n.node)),
                ));
            }
        }
        None
    };
    let mut estimate: Option<(u64, String)> = None;
    if ever {
        if let Some(nodes) = fits(&st) {
            estimate = Some((t, nodes));
        } else {
            // Release every running job (on any node) in order of planned end.
            let mut all: Vec<(u64, usize, usize)> = running
                .iter()
                .map(|&(ji, ri)| {
                    let r = &rf.jobs[ji].runs[ri];
                    (
                        rf.jobs[ji]
                            .time_limit
                            .map_or(u64::MAX, |l| r.start.saturating_add(l)),
                        ji,
                        ri,
                    )
                })
                .filter(|x| x.0 != u64::MAX)
                .collect();
            all.sort_unstable();
            for (planned, ji, ri) in all {
                let a = rf.model_alloc(&c, &rf.jobs[ji].runs[ri])?;
                st.release(&c, &a).map_err(|e| e.to_string())?;
                if let Some(nodes) = fits(&st) {
                    estimate = Some((planned.max(t), nodes));
                    break;
                }
            }
        }
    }
    match &estimate {
        Some((e, nodes)) if *e == t => {
            let _ = writeln!(
                s,
                "estimate  fits now on {nodes}{}",
                if blocked {
                    ", but it is not eligible (see above)"
                } else {
                    "; it waits for a scheduling pass or for jobs ahead of it"
                }
            );
        }
        Some((e, nodes)) => {
            let _ = writeln!(
                s,
                "estimate  {} on {nodes} (ESTIMATE: running jobs end at their planned ends; queued jobs ahead, later submissions and node events are ignored){}",
                t_str(*e),
                if blocked { "; and only once it is eligible" } else { "" }
            );
        }
        None if ever => {
            let why = if admin.iter().any(|a| a != "UP") {
                "not while the down or drained nodes stay out"
            } else {
                "not while the running jobs without a time limit hold their resources"
            };
            let _ = writeln!(s, "estimate  none: {why}");
        }
        None => s.push_str("estimate  never\n"),
    }
    match j.runs.iter().find(|r| r.start > t) {
        Some(r) => {
            let _ = writeln!(
                s,
                "actual    started at {} on {} in this run (waited {} from t)",
                t_str(r.start),
                hostlist::compress(&r.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>()),
                format_duration(r.start - t)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "actual    did not start after t in this run (run ends at {})",
                t_str(rf.end_time)
            );
        }
    }
    Ok(s)
}

/// Whether a reason string is one of `acct_policy.c`'s limits.
fn is_acct_limit(r: &str) -> bool {
    (r.starts_with("QOS") && r != "QOSNotAllowed")
        || r.starts_with("Assoc")
        || r.starts_with("Max") && r.ends_with("PerAccount")
}

/// Which limit holds the job and which running jobs use it up: those of the
/// same user (per-user limits), account (association and per-account
/// limits) or QOS (QOS group limits), with the GPUs and CPUs they hold.
fn acct_limit_lines(rf: &RunFile, j: &JobRec, reason: &str, t: u64) -> String {
    let mut s = String::new();
    let account = j.account.as_deref().unwrap_or("?");
    let qos = j.qos.as_deref().unwrap_or("?");
    // Whose running jobs count against the limit.
    let (scope, same_user, same_account, same_qos) = if reason.contains("PerUser") {
        (format!("user {} in QOS {qos}", j.user), true, false, true)
    } else if reason.ends_with("PerAccount") {
        (format!("account {account} in QOS {qos}"), false, true, true)
    } else if reason.starts_with("QOS") {
        (format!("QOS {qos}"), false, false, true)
    } else if reason.starts_with("AssocMax") {
        (
            format!("user {} in account {account}", j.user),
            true,
            true,
            false,
        )
    } else {
        (
            format!("account {account} (and its parents)"),
            false,
            true,
            false,
        )
    };
    let same = |o: &JobRec| {
        (!same_user || o.user == j.user)
            && (!same_account || o.account == j.account)
            && (!same_qos || o.qos == j.qos)
    };
    let _ = writeln!(
        s,
        "acct    account {account}, QOS {qos}: an accounting limit holds the job ({reason}), not the nodes"
    );
    let users: Vec<(&JobRec, &RunRec)> = rf
        .jobs
        .iter()
        .filter(|o| o.id != j.id && same(o))
        .filter_map(|o| match o.at(t) {
            Some(JobAt::Running(r)) => Some((o, r)),
            _ => None,
        })
        .collect();
    let gpus: u32 = users.iter().map(|(_, r)| r.gpu_count()).sum();
    let cpus: u32 = users.iter().map(|(_, r)| r.cpu_count()).sum();
    let _ = writeln!(
        s,
        "usage   {scope} runs {} job(s) holding {gpus} GPU(s) and {cpus} CPU(s):",
        users.len()
    );
    for (o, r) in users.iter().take(10) {
        let _ = writeln!(
            s,
            "        {} ({}) since {}: {} GPU(s), {} CPU(s)",
            o.id,
            o.user,
            t_str(r.start),
            r.gpu_count(),
            r.cpu_count()
        );
    }
    if users.len() > 10 {
        let _ = writeln!(s, "        … and {} more", users.len() - 10);
    }
    let _ = writeln!(
        s,
        "start   when enough of those end for the job to fit the limit; the nodes are not what it waits for"
    );
    s
}

/// The running jobs the pending job would preempt at `t` if it does not
/// fit on free resources (cons_tres's `_run_now()` trial,
/// `gresim_sched::preempt::Trial`), under preempt/partition_prio or
/// preempt/qos (with the run file's QOS `Preempt` lists, and same-QOS
/// preemption with `WITHIN` by the jobs' priorities at `t`). `None`
/// without preemption.
#[allow(clippy::too_many_arguments)]
fn preempt_lines(
    rf: &RunFile,
    c: &gresim_model::Cluster,
    params: &gresim_sched::SchedParams,
    j: &crate::run_file::JobRec,
    req: &gresim_model::JobRequest,
    parts: &[String],
    st: &gresim_model::ClusterState,
    running: &[(usize, usize)],
    t: u64,
) -> Result<Option<String>, String> {
    use gresim_model::preempt::{PreemptMode, PreemptType};
    let p = &params.preempt;
    if !p.enabled() {
        return Ok(None);
    }
    let qos_recs = rf.preempt.as_ref().map_or(&[][..], |r| &r.qos[..]);
    let qos_of = |name: Option<&String>| name.and_then(|n| qos_recs.iter().find(|q| q.name == *n));
    let my_qos = qos_of(j.qos.as_ref());
    if p.ptype == PreemptType::Qos && my_qos.is_none() {
        return Ok(Some(
            "preempt preempt/qos: the run file has no QOS Preempt list for this job's QOS; not worked out here\n"
                .to_string(),
        ));
    }
    let within = |q: &crate::run_file::QosPreemptRec| {
        p.mode.within
            || q.mode
                .as_deref()
                .and_then(|m| m.parse::<gresim_model::preempt::PreemptModeSpec>().ok())
                .is_some_and(|m| m.within)
    };
    // A run file from before priorities were recorded cannot tell.
    let mut no_prio = false;
    let no_prio_line = "preempt same-QOS preemption (WITHIN) not worked out: the run file keeps no job priorities (written by an older gresim)\n";
    let mut cache = SelectCache::new();
    for name in parts {
        let Some(pid) = c.partition_id(name) else {
            continue;
        };
        if select(&mut cache, c, params, st, req, pid, None).is_ok() {
            return Ok(Some(format!(
                "preempt nothing: it fits on free resources of partition {name}\n"
            )));
        }
        let tier = c.partition(pid).priority_tier;
        // Candidates: running jobs it may preempt (a lower tier whose mode
        // is not OFF; or a QOS in its QOS's Preempt list), past the exempt
        // time, on a node of the partition; by (tier or QOS priority,
        // nodes), then job order.
        let mut cands: Vec<(u32, usize, gresim_model::Allocation, PreemptMode)> = Vec::new();
        for &(ji, ri) in running {
            let r = &rf.jobs[ji].runs[ri];
            let Some(rp) = c.partition_id(&r.partition) else {
                continue;
            };
            let part = c.partition(rp);
            let (high, mode, exempt) = match (p.ptype, my_qos) {
                (PreemptType::Qos, Some(mine)) => {
                    let Some(q) = qos_of(rf.jobs[ji].qos.as_ref()) else {
                        continue;
                    };
                    if q.name == mine.name {
                        // Same-QOS preemption (`WITHIN`, the QOS's or the
                        // global mode): a strictly higher job priority,
                        // each job's at `t`, as the scheduler compares them.
                        if !within(mine) {
                            continue;
                        }
                        if !rf.preempt.as_ref().is_some_and(|r| r.priorities) {
                            no_prio = true;
                            continue;
                        }
                        if j.priority_at(t) <= rf.jobs[ji].priority_at(t) {
                            continue;
                        }
                    } else if !mine.preempt.contains(&q.name) {
                        continue;
                    }
                    let mode = q
                        .mode
                        .as_deref()
                        .and_then(|m| m.parse::<gresim_model::preempt::PreemptModeSpec>().ok())
                        .map_or(p.mode.mode, |m| m.mode);
                    (
                        q.priority.min(0xffff),
                        mode,
                        q.exempt_time.or(p.exempt_time),
                    )
                }
                _ => {
                    let mode = part.preempt_mode.unwrap_or(p.mode.mode);
                    if part.priority_tier >= tier {
                        continue;
                    }
                    (u32::from(part.priority_tier), mode, p.exempt_time)
                }
            };
            if mode == PreemptMode::Off {
                continue;
            }
            if exempt.is_some_and(|e| t < r.start.saturating_add(e)) {
                continue;
            }
            let a = rf.model_alloc(c, r)?;
            if !a.node_ids().any(|n| c.in_partition(pid, n)) {
                continue;
            }
            let prio = (high << 16) + (a.nodes.len() as u32).min(0xffff);
            cands.push((prio, ji, a, mode));
        }
        cands.sort_by_key(|x| (x.0, x.1));
        if p.youngest_first {
            cands.sort_by_key(|x| {
                std::cmp::Reverse(rf.jobs[x.1].runs.last().map_or(0, |r| r.start))
            });
        }
        let order: Vec<usize> = (0..cands.len()).collect();
        let trial = gresim_sched::preempt::Trial {
            cluster: c,
            params,
            state: st,
            req,
            part: pid,
            avoid: None,
        };
        let found = trial.run(order, &|k: usize| Some(&cands[k].2), &|k: usize| {
            cands[k].3.ends_job()
        });
        let Some((list, alloc)) = found else {
            continue;
        };
        let names: Vec<String> = list
            .iter()
            .map(|&k| {
                let jr = &rf.jobs[cands[k].1];
                format!(
                    "{} \"{}\" ({}, {})",
                    jr.id,
                    jr.name,
                    jr.runs.last().map_or("", |r| r.partition.as_str()),
                    cands[k].3
                )
            })
            .collect();
        return Ok(Some(format!(
            "preempt {} in partition {name}: it would preempt {} and run on {}\n{}",
            p.ptype.as_str(),
            names.join(", "),
            hostlist::compress(&c.node_names(alloc.nodes.iter().map(|n| &n.node))),
            if no_prio { no_prio_line } else { "" }
        )));
    }
    Ok(Some(format!(
        "preempt {}: no running job it may preempt would make room\n{}",
        p.ptype.as_str(),
        if no_prio { no_prio_line } else { "" }
    )))
}

#[cfg(test)]
mod tests;
