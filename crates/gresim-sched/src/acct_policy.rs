//! Accounting limits, as slurmctld's `acct_policy.c` enforces them with
//! `AccountingStorageEnforce=limits` (and `safe`).
//!
//! - [`validate`]: at submission (`acct_policy_validate()`): QOS with
//!   `DenyOnLimit` refuse a job beyond a per-job, per-user or per-account
//!   size or time limit; submit-count limits refuse always.
//! - [`runnable`]: in the main pass and in backfill, before nodes are chosen
//!   (`acct_policy_job_runnable_pre_select()`, then `_post_select()` with the
//!   job's requested counts): the first limit that holds the job, as its
//!   pending reason. A held job does not block its partition and gets no
//!   backfill reservation, as in Slurm.
//!
//! Every check reads the counters of [`AcctUsage`], which the engine keeps
//! per association and per QOS: no running job is visited.
//!
//! `GrpTRESMins` and `GrpWall` read the decayed usage the priority plugin
//! keeps ([`gresim_policy::fairshare`]), as Slurm's do.
//!
//! Not modelled yet: the node-count
//! adjustment for nodes a QOS or user already uses
//! (`_get_unique_job_node_cnt`), and admin-set limits.

use gresim_model::accounting::{
    Accounting, AcctUsage, Decayed, JobAcct, QosId, QosLimits, TresArray, TresGpu, Used, MAX_TRES,
    NO_LIMIT, TRES_BILLING, TRES_CPU, TRES_MEM, TRES_NODE,
};
use gresim_model::job::Job;
use gresim_model::job::{LimitKind, TresClass};
use gresim_model::{Cluster, JobSpec, PartId, Reason};

use crate::PassCtx;

/// How Slurm's reason strings name TRES `i`.
fn class(acct: &Accounting, i: usize) -> TresClass {
    match i {
        TRES_CPU => TresClass::Cpu,
        TRES_MEM => TresClass::Mem,
        TRES_NODE => TresClass::Node,
        TRES_BILLING => TresClass::Billing,
        _ => match acct.tres_gpu.get(i) {
            Some(TresGpu::AnyGpu | TresGpu::Typed(_)) => TresClass::Gres,
            _ => TresClass::Unknown,
        },
    }
}

fn set(v: u64) -> bool {
    v != NO_LIMIT
}

// `any_set` reads "no limit" as all bits set.
const _: () = assert!(NO_LIMIT == u64::MAX);

/// True when `t` sets any limit. Most limit arrays set none, and a check
/// of one that sets none finds nothing: the checks below return at once
/// then, and read no usage counter.
#[inline(always)]
fn any_set(t: &TresArray) -> bool {
    // Four lanes, so that the AND runs as a few vector operations.
    let mut a = [NO_LIMIT; 4];
    for c in t.chunks_exact(4) {
        for (x, &y) in a.iter_mut().zip(c) {
            *x &= y;
        }
    }
    (a[0] & a[1] & a[2] & a[3]) != NO_LIMIT
}

/// `_validate_tres_usage_limits()` with `safe`: the first TRES whose limit
/// the request alone, or the request on top of `used`, exceeds. TRES the
/// QOS already limits (`skip`) are left to it. `used` is read only when
/// `limit` sets something.
#[inline(always)]
fn over_usage(
    nt: usize,
    limit: &TresArray,
    skip: Option<&TresArray>,
    req: &TresArray,
    used: impl FnOnce() -> TresArray,
) -> Option<usize> {
    if !any_set(limit) {
        return None;
    }
    first_over_usage(nt, limit, skip, req, &used())
}

/// [`over_usage`] without the shortcut: every TRES is looked at.
fn first_over_usage(
    nt: usize,
    limit: &TresArray,
    skip: Option<&TresArray>,
    req: &TresArray,
    used: &TresArray,
) -> Option<usize> {
    (0..nt).find(|&i| {
        set(limit[i])
            && !skip.is_some_and(|s| set(s[i]))
            && (req[i] > limit[i] || (req[i] > 0 && req[i].saturating_add(used[i]) > limit[i]))
    })
}

/// `_validate_tres_limits_for_*()`: the first TRES whose per-job (or, with
/// `per_node`, per-node) request is beyond `limit` (below it for minimums).
#[inline(always)]
fn over_max(
    nt: usize,
    limit: &TresArray,
    skip: Option<&TresArray>,
    req: &TresArray,
    per_node: bool,
    minimum: bool,
) -> Option<usize> {
    if !any_set(limit) {
        return None;
    }
    first_over_max(nt, limit, skip, req, per_node, minimum)
}

/// [`over_max`] without the shortcut: every TRES is looked at.
fn first_over_max(
    nt: usize,
    limit: &TresArray,
    skip: Option<&TresArray>,
    req: &TresArray,
    per_node: bool,
    minimum: bool,
) -> Option<usize> {
    let nodes = req[TRES_NODE].max(1);
    (0..nt).find(|&i| {
        if !set(limit[i]) || skip.is_some_and(|s| set(s[i])) || (!minimum && req[i] == 0) {
            return false;
        }
        let r = if per_node { req[i] / nodes } else { req[i] };
        if minimum {
            r < limit[i]
        } else {
            r > limit[i]
        }
    })
}

/// `_validate_tres_usage_limits()` for `GrpTRESMins`: the first TRES the
/// job asks for whose decayed usage (`used`) is already at the limit, or,
/// with `safe`, whose request on top of the running jobs' remaining
/// minutes (`run`) does not fit in what the usage leaves.
fn over_mins(
    nt: usize,
    limit: &TresArray,
    skip: Option<&TresArray>,
    req: &TresArray,
    run: &TresArray,
    used: &TresArray,
    safe: bool,
) -> Option<usize> {
    (0..nt).find(|&i| {
        if !set(limit[i]) || skip.is_some_and(|s| set(s[i])) {
            return false;
        }
        if req[i] > 0 && used[i] >= limit[i] {
            return true;
        }
        safe && (req[i] > limit[i]
            || (req[i] > 0 && req[i].saturating_add(run[i]) > limit[i] - used[i]))
    })
}

fn mins(t: &TresArray, minutes: u64) -> TresArray {
    t.map(|x| x.saturating_mul(minutes))
}

fn run_mins(u: &Used) -> TresArray {
    u.tres_run_secs.map(|s| s / 60)
}

static ZERO: std::sync::OnceLock<Used> = std::sync::OnceLock::new();
fn zero() -> &'static Used {
    ZERO.get_or_init(Used::default)
}

/// The job's limits to check: its association, QOS and user.
pub struct JobLimits<'a> {
    pub acct: &'a Accounting,
    pub usage: &'a AcctUsage,
    pub ja: JobAcct,
    pub user: &'a str,
}

impl<'a> JobLimits<'a> {
    fn user_used(&self, q: QosId) -> &'a Used {
        self.usage.qos_user(q, self.user).unwrap_or(zero())
    }
    fn account_used(&self, q: QosId) -> &'a Used {
        let account = &self.acct.assocs[self.ja.assoc as usize].account;
        self.usage.qos_account(q, account).unwrap_or(zero())
    }
    /// `GrpWall`: the decayed wall time of running jobs (whole minutes) is
    /// at the limit, or with `safe` the job's time limit would pass it.
    fn over_wall(&self, used_secs: f64, limit: u64, time_min: u64) -> bool {
        let wall_mins = (used_secs / 60.0) as u64;
        wall_mins >= limit || (self.acct.enforce.safe && wall_mins.saturating_add(time_min) > limit)
    }

    /// The group TRES limits of one QOS or association, in Slurm's order
    /// (`GrpTRESMins`, `GrpTRES`, `GrpTRESRunMins`): the first that holds
    /// the job, and the TRES. A TRES a QOS already limits (in `out`) is
    /// left to it; nothing is read for a limit that sets nothing.
    #[allow(clippy::too_many_arguments)]
    fn over_group(
        &self,
        [grp_mins, grp, grp_run_mins]: [&TresArray; 3],
        out: &QosLimits,
        req: &TresArray,
        req_mins: &TresArray,
        used: &Used,
        decayed: &Decayed,
    ) -> Option<(LimitKind, usize)> {
        let nt = self.acct.tres_names.len();
        if any_set(grp_mins) {
            if let Some(i) = over_mins(
                nt,
                grp_mins,
                Some(&out.grp_tres_mins),
                req_mins,
                &run_mins(used),
                &self.used_mins(decayed),
                self.acct.enforce.safe,
            ) {
                return Some((LimitKind::GrpMins, i));
            }
        }
        if let Some(i) = over_usage(nt, grp, Some(&out.grp_tres), req, || used.tres) {
            return Some((LimitKind::Grp, i));
        }
        over_usage(
            nt,
            grp_run_mins,
            Some(&out.grp_tres_run_mins),
            req_mins,
            || run_mins(used),
        )
        .map(|i| (LimitKind::GrpRunMins, i))
    }

    /// The decayed TRES-minutes of a usage record (`usage_tres_raw / 60`),
    /// cleared when the job's QOS has a `UsageFactor` of 0.
    fn used_mins(&self, d: &Decayed) -> TresArray {
        let mut t = [0u64; MAX_TRES];
        if self.acct.qos[self.ja.qos as usize].usage_factor != 0.0 {
            for (x, u) in t.iter_mut().zip(&d.tres) {
                *x = (u / 60.0) as u64;
            }
        }
        t
    }

    /// The job's QOS and its partition's, in checking order.
    fn qos(&self) -> impl Iterator<Item = QosId> {
        self.ja.qos_order(self.acct).into_iter().flatten()
    }

    /// `pre_select`, then `post_select` with the TRES of `request` (billed
    /// as partition `part` bills).
    fn check(
        &self,
        cluster: &Cluster,
        request: &gresim_model::JobRequest,
        part: PartId,
        tm: u64,
    ) -> Option<Reason> {
        self.pre_select(tm).or_else(|| {
            let req = self.acct.request_tres(cluster, request, Some(part));
            self.post_select(&req, tm)
        })
    }

    /// True when a limit of the job's QOS or associations reads its time
    /// limit: `MaxWall`, `GrpWall`, `GrpTRESRunMins`, `GrpTRESMins`,
    /// `MaxTRESMinsPerJob`. When none does, [`Self::pre_select`] and
    /// [`Self::post_select`] answer the same whatever the time limit.
    pub fn time_matters(&self) -> bool {
        let reads = |walls: [u64; 2], mins: [&TresArray; 3]| {
            walls.into_iter().any(set) || mins.into_iter().any(any_set)
        };
        self.qos().any(|q| {
            let l = &self.acct.qos[q as usize].limits;
            reads(
                [l.max_wall_pj, l.grp_wall],
                [&l.grp_tres_run_mins, &l.max_tres_mins_pj, &l.grp_tres_mins],
            )
        }) || self.acct.lineage(self.ja.assoc).any(|a| {
            let l = &self.acct.assocs[a as usize].limits;
            reads(
                [l.max_wall_pj, l.grp_wall],
                [&l.grp_tres_run_mins, &l.max_tres_mins_pj, &l.grp_tres_mins],
            )
        })
    }

    /// `acct_policy_job_runnable_pre_select()`: job counts and wall time.
    /// `time_min`: the job's time limit in minutes. A limit the first QOS
    /// sets is not looked at in the second, nor in the associations.
    pub fn pre_select(&self, time_min: u64) -> Option<Reason> {
        let mut out = QosLimits::default();
        for q in self.qos() {
            let ql = &self.acct.qos[q as usize].limits;
            let qu = &self.usage.qos[q as usize];
            if out.grp_jobs == u32::MAX && ql.grp_jobs != u32::MAX {
                out.grp_jobs = ql.grp_jobs;
                if qu.jobs >= ql.grp_jobs {
                    return Some(Reason::QosGrpJobs);
                }
            }
            if !set(out.grp_wall) && set(ql.grp_wall) {
                out.grp_wall = ql.grp_wall;
                if self.over_wall(
                    self.usage.qos_decayed[q as usize].wall,
                    ql.grp_wall,
                    time_min,
                ) {
                    return Some(Reason::QosGrpWall);
                }
            }
            if out.max_jobs_pa == u32::MAX && ql.max_jobs_pa != u32::MAX {
                out.max_jobs_pa = ql.max_jobs_pa;
                if self.account_used(q).jobs >= ql.max_jobs_pa {
                    return Some(Reason::QosMaxJobsPerAccount);
                }
            }
            if out.max_jobs_pu == u32::MAX && ql.max_jobs_pu != u32::MAX {
                out.max_jobs_pu = ql.max_jobs_pu;
                if self.user_used(q).jobs >= ql.max_jobs_pu {
                    return Some(Reason::QosMaxJobsPerUser);
                }
            }
            if !set(out.max_wall_pj) && set(ql.max_wall_pj) {
                out.max_wall_pj = ql.max_wall_pj;
                if time_min > ql.max_wall_pj {
                    return Some(Reason::QosMaxWall);
                }
            }
        }
        for (depth, a) in self.acct.lineage(self.ja.assoc).enumerate() {
            let l = &self.acct.assocs[a as usize].limits;
            let u = &self.usage.assoc[a as usize];
            if out.grp_jobs == u32::MAX && l.grp_jobs != u32::MAX && u.jobs >= l.grp_jobs {
                return Some(Reason::AssocGrpJobs);
            }
            if !set(out.grp_wall)
                && set(l.grp_wall)
                && self.over_wall(
                    self.usage.assoc_decayed[a as usize].wall,
                    l.grp_wall,
                    time_min,
                )
            {
                return Some(Reason::AssocGrpWall);
            }
            // Max limits were propagated to the job's own association.
            if depth > 0 {
                continue;
            }
            if out.max_jobs_pa == u32::MAX
                && out.max_jobs_pu == u32::MAX
                && l.max_jobs != u32::MAX
                && u.jobs >= l.max_jobs
            {
                return Some(Reason::AssocMaxJobs);
            }
            if !set(out.max_wall_pj) && set(l.max_wall_pj) && time_min > l.max_wall_pj {
                return Some(Reason::AssocMaxWall);
            }
        }
        None
    }

    /// `acct_policy_job_runnable_post_select()` with the job's TRES `req`.
    pub fn post_select(&self, req: &TresArray, time_min: u64) -> Option<Reason> {
        let nt = self.acct.tres_names.len();
        let req_mins = mins(req, time_min);
        let ql_ = |k, i| Some(Reason::QosLimit(k, class(self.acct, i)));
        let mut out = QosLimits::default();
        for q in self.qos() {
            let ql = &self.acct.qos[q as usize].limits;
            let qu = &self.usage.qos[q as usize];
            let grp = [&ql.grp_tres_mins, &ql.grp_tres, &ql.grp_tres_run_mins];
            let decayed = &self.usage.qos_decayed[q as usize];
            if let Some((k, i)) = self.over_group(grp, &out, req, &req_mins, qu, decayed) {
                return ql_(k, i);
            }
            if let Some(i) = over_max(
                nt,
                &ql.max_tres_mins_pj,
                Some(&out.max_tres_mins_pj),
                &req_mins,
                false,
                false,
            ) {
                return ql_(LimitKind::MaxMinsPerJob, i);
            }
            if let Some(i) = over_max(
                nt,
                &ql.max_tres_pj,
                Some(&out.max_tres_pj),
                req,
                false,
                false,
            ) {
                return ql_(LimitKind::MaxPerJob, i);
            }
            if let Some(i) = over_max(
                nt,
                &ql.max_tres_pn,
                Some(&out.max_tres_pn),
                req,
                true,
                false,
            ) {
                return ql_(LimitKind::MaxPerNode, i);
            }
            if let Some(i) = over_max(
                nt,
                &ql.min_tres_pj,
                Some(&out.min_tres_pj),
                req,
                false,
                true,
            ) {
                return ql_(LimitKind::MinPerJob, i);
            }
            if let Some(i) = over_usage(nt, &ql.max_tres_pa, Some(&out.max_tres_pa), req, || {
                self.account_used(q).tres
            }) {
                return ql_(LimitKind::MaxPerAccount, i);
            }
            if let Some(i) = over_usage(nt, &ql.max_tres_pu, Some(&out.max_tres_pu), req, || {
                self.user_used(q).tres
            }) {
                return ql_(LimitKind::MaxPerUser, i);
            }
            merge(&mut out.grp_tres_mins, &ql.grp_tres_mins);
            merge(&mut out.grp_tres, &ql.grp_tres);
            merge(&mut out.grp_tres_run_mins, &ql.grp_tres_run_mins);
            merge(&mut out.max_tres_mins_pj, &ql.max_tres_mins_pj);
            merge(&mut out.max_tres_pj, &ql.max_tres_pj);
            merge(&mut out.max_tres_pn, &ql.max_tres_pn);
            merge(&mut out.min_tres_pj, &ql.min_tres_pj);
            merge(&mut out.max_tres_pa, &ql.max_tres_pa);
            merge(&mut out.max_tres_pu, &ql.max_tres_pu);
        }
        let al = |k, i| Some(Reason::AssocLimit(k, class(self.acct, i)));
        for (depth, a) in self.acct.lineage(self.ja.assoc).enumerate() {
            let l = &self.acct.assocs[a as usize].limits;
            let u = &self.usage.assoc[a as usize];
            let grp = [&l.grp_tres_mins, &l.grp_tres, &l.grp_tres_run_mins];
            let decayed = &self.usage.assoc_decayed[a as usize];
            if let Some((k, i)) = self.over_group(grp, &out, req, &req_mins, u, decayed) {
                return al(k, i);
            }
            if depth > 0 {
                continue;
            }
            if let Some(i) = over_max(
                nt,
                &l.max_tres_mins_pj,
                Some(&out.max_tres_mins_pj),
                &req_mins,
                false,
                false,
            ) {
                return al(LimitKind::MaxMinsPerJob, i);
            }
            if let Some(i) = over_max(
                nt,
                &l.max_tres_pj,
                Some(&out.max_tres_pj),
                req,
                false,
                false,
            ) {
                return al(LimitKind::MaxPerJob, i);
            }
            if let Some(i) = over_max(nt, &l.max_tres_pn, Some(&out.max_tres_pn), req, true, false)
            {
                return al(LimitKind::MaxPerNode, i);
            }
        }
        None
    }

    /// `acct_policy_validate()` at submission for `job_cnt` jobs: the limit
    /// that refuses the job, if any. Strict checking (`DenyOnLimit`) holds
    /// when either QOS has the flag.
    pub fn validate(&self, req: &TresArray, time_min: u64, job_cnt: u32) -> Option<Reason> {
        let nt = self.acct.tres_names.len();
        let strict = self
            .qos()
            .any(|q| self.acct.qos[q as usize].flags.deny_on_limit);
        let ql_ = |k, i| Some(Reason::QosLimit(k, class(self.acct, i)));
        let mut out = QosLimits::default();
        for q in self.qos() {
            let ql = &self.acct.qos[q as usize].limits;
            let qu = &self.usage.qos[q as usize];
            if strict {
                if let Some(i) = over_max(
                    nt,
                    &ql.max_tres_pa,
                    Some(&out.max_tres_pa),
                    req,
                    false,
                    false,
                ) {
                    return ql_(LimitKind::MaxPerAccount, i);
                }
                if let Some(i) = over_max(
                    nt,
                    &ql.max_tres_pu,
                    Some(&out.max_tres_pu),
                    req,
                    false,
                    false,
                ) {
                    return ql_(LimitKind::MaxPerUser, i);
                }
                if let Some(i) = over_max(nt, &ql.grp_tres, Some(&out.grp_tres), req, false, false)
                {
                    return ql_(LimitKind::Grp, i);
                }
            }
            if out.grp_submit_jobs == u32::MAX && ql.grp_submit_jobs != u32::MAX {
                out.grp_submit_jobs = ql.grp_submit_jobs;
                if qu.submit_jobs + job_cnt > ql.grp_submit_jobs {
                    return Some(Reason::QosGrpSubmitJobs);
                }
            }
            if !set(out.max_wall_pj) && set(ql.max_wall_pj) {
                out.max_wall_pj = ql.max_wall_pj;
                if strict && time_min > ql.max_wall_pj {
                    return Some(Reason::QosMaxWall);
                }
            }
            if strict {
                if let Some(i) = over_max(
                    nt,
                    &ql.max_tres_pj,
                    Some(&out.max_tres_pj),
                    req,
                    false,
                    false,
                ) {
                    return ql_(LimitKind::MaxPerJob, i);
                }
                if let Some(i) = over_max(
                    nt,
                    &ql.max_tres_pn,
                    Some(&out.max_tres_pn),
                    req,
                    true,
                    false,
                ) {
                    return ql_(LimitKind::MaxPerNode, i);
                }
            }
            if out.max_submit_pa == u32::MAX && ql.max_submit_pa != u32::MAX {
                out.max_submit_pa = ql.max_submit_pa;
                if self.account_used(q).submit_jobs + job_cnt > ql.max_submit_pa {
                    return Some(Reason::QosMaxSubmitJobsPerAccount);
                }
            }
            if out.max_submit_pu == u32::MAX && ql.max_submit_pu != u32::MAX {
                out.max_submit_pu = ql.max_submit_pu;
                if self.user_used(q).submit_jobs + job_cnt > ql.max_submit_pu {
                    return Some(Reason::QosMaxSubmitJobsPerUser);
                }
            }
            if strict {
                if let Some(i) = over_max(
                    nt,
                    &ql.min_tres_pj,
                    Some(&out.min_tres_pj),
                    req,
                    false,
                    true,
                ) {
                    return ql_(LimitKind::MinPerJob, i);
                }
            }
            merge(&mut out.grp_tres, &ql.grp_tres);
            merge(&mut out.max_tres_pj, &ql.max_tres_pj);
            merge(&mut out.max_tres_pn, &ql.max_tres_pn);
            merge(&mut out.max_tres_pa, &ql.max_tres_pa);
            merge(&mut out.max_tres_pu, &ql.max_tres_pu);
            merge(&mut out.min_tres_pj, &ql.min_tres_pj);
        }
        let al = |k, i| Some(Reason::AssocLimit(k, class(self.acct, i)));
        for (depth, a) in self.acct.lineage(self.ja.assoc).enumerate() {
            let l = &self.acct.assocs[a as usize].limits;
            let u = &self.usage.assoc[a as usize];
            if strict {
                if let Some(i) = over_max(nt, &l.grp_tres, Some(&out.grp_tres), req, false, false) {
                    return al(LimitKind::Grp, i);
                }
            }
            if out.grp_submit_jobs == u32::MAX
                && l.grp_submit_jobs != u32::MAX
                && u.submit_jobs + job_cnt > l.grp_submit_jobs
            {
                return Some(Reason::AssocGrpSubmitJobs);
            }
            if depth > 0 {
                continue;
            }
            if strict {
                if let Some(i) = over_max(
                    nt,
                    &l.max_tres_pj,
                    Some(&out.max_tres_pj),
                    req,
                    false,
                    false,
                ) {
                    return al(LimitKind::MaxPerJob, i);
                }
                if let Some(i) =
                    over_max(nt, &l.max_tres_pn, Some(&out.max_tres_pn), req, true, false)
                {
                    return al(LimitKind::MaxPerNode, i);
                }
            }
            if out.max_submit_pa == u32::MAX
                && out.max_submit_pu == u32::MAX
                && l.max_submit_jobs != u32::MAX
                && u.submit_jobs + job_cnt > l.max_submit_jobs
            {
                return Some(Reason::AssocMaxSubmitJobs);
            }
            if strict && !set(out.max_wall_pj) && set(l.max_wall_pj) && time_min > l.max_wall_pj {
                return Some(Reason::AssocMaxWall);
            }
        }
        None
    }
}

/// Limits the first QOS set are taken: the second QOS and the associations skip them.
#[inline(always)]
fn merge(out: &mut TresArray, ql: &TresArray) {
    if any_set(ql) {
        merge_all(out, ql);
    }
}

/// [`merge`] without the shortcut.
fn merge_all(out: &mut TresArray, ql: &TresArray) {
    for (o, &l) in out.iter_mut().zip(ql) {
        if !set(*o) && set(l) {
            *o = l;
        }
    }
}

/// A time limit in whole minutes (a year when unlimited).
fn minutes(limit: Option<u64>) -> u64 {
    limit.map_or(365 * 24 * 60, |s| s.div_ceil(60))
}

/// The job's time limit in `part`, in whole minutes.
fn time_min(cluster: &Cluster, job: &Job, part: PartId) -> u64 {
    minutes(gresim_policy::time_limit_in(cluster, job, part))
}

/// [`runnable`]'s answers within one pass, kept by what they depend on:
/// the job's association and QOS, its user and its TRES request. A deep
/// queue holds many jobs of one user and shape that the same limit keeps
/// pending, and every pass (main and backfill) asks again for each of them.
///
/// Only jobs whose limits do not read the time limit are kept
/// ([`JobLimits::time_matters`]): the time limits of a synthetic or traced
/// workload differ from job to job. The counters the checks read change
/// within a pass only when it starts a job ([`PassCtx::start`], which grows
/// `ctx.started`): the memo is emptied then.
#[derive(Default)]
pub struct RunnableMemo {
    /// `ctx.started.len()` when the entries were made.
    starts: usize,
    entries: Vec<MemoEntry>,
    /// [`JobLimits::time_matters`] by association and QOS (it reads only
    /// the configuration, which a run does not change).
    times: Vec<(JobAcct, bool)>,
}

struct MemoEntry {
    ja: JobAcct,
    user: std::sync::Arc<str>,
    req: TresArray,
    reason: Option<Reason>,
}

/// Entries a memo keeps (of each kind): users × shapes of the jobs that
/// are held; past that, jobs are checked as without a memo.
const MEMO_ENTRIES: usize = 64;

impl RunnableMemo {
    /// [`runnable`], answered from the memo when it can be.
    pub fn runnable(
        &mut self,
        ctx: &PassCtx<'_>,
        job: gresim_model::JobIdx,
        part: PartId,
    ) -> Option<Reason> {
        let (lim, j, tm) = pass_limits(ctx, job, part)?;
        let (acct, ja, user) = (lim.acct, lim.ja, &ctx.specs[j.sub as usize].user);
        let time_matters = match self.times.iter().find(|t| t.0 == ja) {
            Some(&(_, m)) => m,
            None => {
                let m = lim.time_matters();
                if self.times.len() < MEMO_ENTRIES {
                    self.times.push((ja, m));
                }
                m
            }
        };
        if time_matters {
            return lim.check(ctx.cluster, &j.request, part, tm);
        }
        if ctx.started.len() != self.starts {
            self.entries.clear();
            self.starts = ctx.started.len();
        }
        let req = acct.request_tres(ctx.cluster, &j.request, Some(part));
        if let Some(e) = self
            .entries
            .iter()
            .find(|e| e.ja == ja && e.req == req && *e.user == **user)
        {
            return e.reason;
        }
        let reason = lim.pre_select(tm).or_else(|| lim.post_select(&req, tm));
        if self.entries.len() < MEMO_ENTRIES {
            self.entries.push(MemoEntry {
                ja,
                user: user.clone(),
                req,
                reason,
            });
        }
        reason
    }
}

/// The accounting limit that keeps `job` from starting in `part` now, if
/// any (none without accounting or `AccountingStorageEnforce=limits`).
pub fn runnable(ctx: &PassCtx<'_>, job: gresim_model::JobIdx, part: PartId) -> Option<Reason> {
    let (lim, j, tm) = pass_limits(ctx, job, part)?;
    lim.check(ctx.cluster, &j.request, part, tm)
}

/// The limits a pass checks `job` against, the job, and its time limit in
/// `part` in minutes; `None` when no limit applies (no accounting, no
/// `AccountingStorageEnforce=limits`, or a job without an association).
fn pass_limits<'c>(
    ctx: &'c PassCtx<'_>,
    job: gresim_model::JobIdx,
    part: PartId,
) -> Option<(JobLimits<'c>, &'c Job, u64)> {
    let acct = ctx.cluster.accounting()?;
    let usage = ctx.acct.as_deref()?;
    if !acct.enforce.limits {
        return None;
    }
    let j = &ctx.jobs[job.idx()];
    let spec = &ctx.specs[j.sub as usize];
    let lim = JobLimits {
        acct,
        usage,
        ja: spec.acct()?,
        user: &spec.user,
    };
    Some((lim, j, time_min(ctx.cluster, j, part)))
}

/// What slurmctld answers a submission beyond an accounting limit:
/// the limit (sbatch prints its name first) and the error.
pub fn submit_rejection(
    cluster: &Cluster,
    usage: &AcctUsage,
    spec: &JobSpec,
    job_cnt: u32,
) -> Option<(Reason, String)> {
    let acct = cluster.accounting()?;
    if !acct.enforce.limits {
        return None;
    }
    let ja = spec.acct()?;
    let lim = JobLimits {
        acct,
        usage,
        ja,
        user: &spec.user,
    };
    let r = &spec.request;
    let part = r
        .partitions
        .first()
        .copied()
        .or_else(|| cluster.default_partition())?;
    let limit = match r.time_limit {
        Some(l) => l,
        None => cluster.partition(part).effective_default_time(),
    };
    let req = acct.request_tres(cluster, r, Some(part));
    let r = lim.validate(&req, minutes(limit), job_cnt)?;
    Some((
        r,
        "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
            .to_string(),
    ))
}

#[cfg(test)]
mod tests;
