//! Accounts, users, associations and QOS: the data slurmdbd holds and
//! slurmctld's `assoc_mgr` caches, and the usage counters `acct_policy.c`
//! keeps per association and per QOS.
//!
//! [`Accounting`] is the configuration (what `sacctmgr` sets); [`AcctUsage`]
//! is what running and pending jobs use of it, updated by the engine as jobs
//! are submitted, start and end, so that a limit check reads counters and
//! never scans the running jobs.
//!
//! TRES are kept in dense arrays of [`MAX_TRES`] counts, indexed as
//! [`Accounting::tres_names`] lists them: `cpu`, `mem` (MiB), `node`,
//! `billing`, then the configured GRES (`gres/gpu`, `gres/gpu:a100` …), as
//! `AccountingStorageTRES` orders them after Slurm's base TRES.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::job::Time;

/// The most TRES kinds a configuration may track.
pub const MAX_TRES: usize = 16;
pub const TRES_CPU: usize = 0;
pub const TRES_MEM: usize = 1;
pub const TRES_NODE: usize = 2;
pub const TRES_BILLING: usize = 3;

/// No limit (Slurm's INFINITE64).
pub const NO_LIMIT: u64 = u64::MAX;

/// A count per TRES kind.
pub type TresArray = [u64; MAX_TRES];

/// A limit per TRES kind: [`NO_LIMIT`] where none is set.
pub const NO_LIMITS: TresArray = [NO_LIMIT; MAX_TRES];

/// Index of an association in [`Accounting::assocs`].
pub type AssocId = u32;
/// Index of a QOS in [`Accounting::qos`].
pub type QosId = u16;

/// `AccountingStorageEnforce`'s flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Enforce {
    pub associations: bool,
    pub limits: bool,
    pub qos: bool,
    pub safe: bool,
}

impl Enforce {
    /// `associations,limits,qos,safe`: what Slurm's documentation recommends.
    pub const ALL: Enforce = Enforce {
        associations: true,
        limits: true,
        qos: true,
        safe: true,
    };
}

/// QOS flags that change scheduling (sacctmgr's `Flags=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QosFlags {
    /// Reject at submission a job beyond a limit, instead of leaving it pending.
    pub deny_on_limit: bool,
    /// The job's QOS limits take precedence over the partition QOS's.
    pub over_part_qos: bool,
    pub partition_max_nodes: bool,
    pub partition_min_nodes: bool,
    pub partition_time_limit: bool,
    /// Backfill does not reserve resources for its jobs.
    pub no_reserve: bool,
    /// UsageFactor also scales time limits in limit checks.
    pub usage_factor_safe: bool,
    /// Jobs need a reservation (`RequiresReservation`).
    pub requires_reservation: bool,
    pub no_decay: bool,
}

/// The limits a QOS sets (sacctmgr's QOS fields). Counts are `u32::MAX`
/// (jobs) or [`NO_LIMIT`] (TRES, wall minutes) when unset.
#[derive(Debug, Clone, PartialEq)]
pub struct QosLimits {
    pub grp_tres: TresArray,
    pub grp_tres_mins: TresArray,
    pub grp_tres_run_mins: TresArray,
    pub grp_jobs: u32,
    pub grp_submit_jobs: u32,
    /// GrpWall, minutes.
    pub grp_wall: u64,
    pub max_tres_pj: TresArray,
    pub max_tres_pn: TresArray,
    pub max_tres_pu: TresArray,
    pub max_tres_pa: TresArray,
    pub max_tres_mins_pj: TresArray,
    pub min_tres_pj: TresArray,
    pub max_jobs_pu: u32,
    pub max_jobs_pa: u32,
    pub max_submit_pu: u32,
    pub max_submit_pa: u32,
    /// MaxWall, minutes.
    pub max_wall_pj: u64,
}

impl Default for QosLimits {
    fn default() -> Self {
        QosLimits {
            grp_tres: NO_LIMITS,
            grp_tres_mins: NO_LIMITS,
            grp_tres_run_mins: NO_LIMITS,
            grp_jobs: u32::MAX,
            grp_submit_jobs: u32::MAX,
            grp_wall: NO_LIMIT,
            max_tres_pj: NO_LIMITS,
            max_tres_pn: NO_LIMITS,
            max_tres_pu: NO_LIMITS,
            max_tres_pa: NO_LIMITS,
            max_tres_mins_pj: NO_LIMITS,
            min_tres_pj: NO_LIMITS,
            max_jobs_pu: u32::MAX,
            max_jobs_pa: u32::MAX,
            max_submit_pu: u32::MAX,
            max_submit_pa: u32::MAX,
            max_wall_pj: NO_LIMIT,
        }
    }
}

/// A quality of service.
#[derive(Debug, Clone, PartialEq)]
pub struct Qos {
    pub name: String,
    pub priority: u32,
    pub usage_factor: f64,
    /// Seconds a preempted job of this QOS may run on (preemption).
    pub grace_time: u64,
    pub flags: QosFlags,
    pub limits: QosLimits,
    /// QOS this one may preempt (preempt/qos).
    pub preempt: Vec<QosId>,
    /// `PreemptMode` of jobs of this QOS (preempt/qos); `None` takes the
    /// global one. `within` is the QOS's `WITHIN` flag.
    pub preempt_mode: Option<crate::preempt::PreemptModeSpec>,
    /// `PreemptExemptTime` in seconds; `None` takes slurm.conf's.
    pub preempt_exempt_time: Option<u64>,
}

impl Qos {
    pub fn new(name: impl Into<String>) -> Qos {
        Qos {
            name: name.into(),
            priority: 0,
            usage_factor: 1.0,
            grace_time: 0,
            flags: QosFlags::default(),
            limits: QosLimits::default(),
            preempt: Vec::new(),
            preempt_mode: None,
            preempt_exempt_time: None,
        }
    }
}

/// The limits an association sets. As in slurmdbd, an unset `Max*` limit
/// is inherited from the parent account when the tree is finished
/// ([`Accounting::finish`]); `Grp*` limits apply to each association's
/// whole subtree and are checked on every ancestor.
#[derive(Debug, Clone, PartialEq)]
pub struct AssocLimits {
    pub grp_tres: TresArray,
    pub grp_tres_mins: TresArray,
    pub grp_tres_run_mins: TresArray,
    pub grp_jobs: u32,
    pub grp_submit_jobs: u32,
    pub grp_wall: u64,
    pub max_tres_pj: TresArray,
    pub max_tres_pn: TresArray,
    pub max_tres_mins_pj: TresArray,
    pub max_jobs: u32,
    pub max_submit_jobs: u32,
    pub max_wall_pj: u64,
}

impl Default for AssocLimits {
    fn default() -> Self {
        AssocLimits {
            grp_tres: NO_LIMITS,
            grp_tres_mins: NO_LIMITS,
            grp_tres_run_mins: NO_LIMITS,
            grp_jobs: u32::MAX,
            grp_submit_jobs: u32::MAX,
            grp_wall: NO_LIMIT,
            max_tres_pj: NO_LIMITS,
            max_tres_pn: NO_LIMITS,
            max_tres_mins_pj: NO_LIMITS,
            max_jobs: u32::MAX,
            max_submit_jobs: u32::MAX,
            max_wall_pj: NO_LIMIT,
        }
    }
}

/// `Fairshare=` of an association.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    Raw(u32),
    /// `Fairshare=parent`: the user competes as its account.
    Parent,
}

/// An association: an account (user `None`) or a user in an account,
/// optionally for one partition.
#[derive(Debug, Clone, PartialEq)]
pub struct Assoc {
    pub account: String,
    pub user: Option<String>,
    pub partition: Option<String>,
    /// `None` only for root.
    pub parent: Option<AssocId>,
    pub shares: Shares,
    pub limits: AssocLimits,
    /// QOS the association may use; empty inherits the parent's.
    pub qos: Vec<QosId>,
    pub default_qos: Option<QosId>,
    /// `Priority=`: the association factor of priority/multifactor (0 when
    /// unset; inherited like the `Max*` limits).
    pub priority: u32,
    /// Which limits were set on this association itself (before inheritance).
    pub set: LimitsSet,
}

/// Which inheritable `Max*` fields an association set itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitsSet {
    pub max_tres_pj: bool,
    pub max_tres_pn: bool,
    pub max_tres_mins_pj: bool,
    pub max_jobs: bool,
    pub max_submit_jobs: bool,
    pub max_wall_pj: bool,
    pub qos: bool,
    pub priority: bool,
}

/// The accounting configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Accounting {
    pub enforce: Enforce,
    /// TRES kinds in array order (`cpu`, `mem`, `node`, `billing`, then GRES).
    pub tres_names: Vec<String>,
    /// For each TRES, the GPU type it counts (`gres/gpu:a100`), or `None`
    /// for untyped `gres/gpu` and the base kinds.
    pub tres_gpu: Vec<TresGpu>,
    pub qos: Vec<Qos>,
    /// `assocs[0]` is root.
    pub assocs: Vec<Assoc>,
    /// Each user's default account.
    pub default_account: BTreeMap<String, String>,
    /// TRESBillingWeights, indexed by partition (weight per TRES); a
    /// partition without weights (empty, or past the end) bills its jobs' CPUs.
    pub billing_weights: Vec<Vec<(usize, f64)>>,
    /// `PriorityFlags=MAX_TRES`: the billing of node TRES (cpu, mem, node,
    /// GRES) is the largest weighted one, not their sum.
    pub billing_max_tres: bool,
    /// Partition QOS (`QOS=` on a partition): partition name, QOS.
    pub part_qos: Vec<(String, QosId)>,
}

/// What a TRES kind counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TresGpu {
    NotGpu,
    AnyGpu,
    Typed(String),
}

impl Default for Accounting {
    fn default() -> Self {
        Accounting::new(Enforce::ALL)
    }
}

impl Accounting {
    /// An empty configuration: the account root with the user root in it
    /// (as `sacctmgr add cluster` creates them), the QOS `normal`, base TRES only.
    pub fn new(enforce: Enforce) -> Accounting {
        let mut a = Accounting {
            enforce,
            tres_names: vec!["cpu".into(), "mem".into(), "node".into(), "billing".into()],
            tres_gpu: vec![TresGpu::NotGpu; 4],
            qos: vec![Qos::new("normal")],
            assocs: vec![Assoc {
                account: "root".into(),
                user: None,
                partition: None,
                parent: None,
                shares: Shares::Raw(1),
                limits: AssocLimits::default(),
                qos: vec![0],
                default_qos: None,
                priority: 0,
                set: LimitsSet {
                    qos: true,
                    ..LimitsSet::default()
                },
            }],
            default_account: BTreeMap::new(),
            billing_weights: Vec::new(),
            billing_max_tres: false,
            part_qos: Vec::new(),
        };
        a.add_user("root", 0, None);
        a
    }

    /// Adds a tracked TRES (`gres/gpu`, `gres/gpu:a100`); `Err` when it is
    /// not a GPU GRES or too many are configured.
    pub fn add_tres(&mut self, name: &str) -> Result<usize, String> {
        let lower = name.to_ascii_lowercase();
        if let Some(i) = self.tres_index(&lower) {
            return Ok(i);
        }
        let kind = match lower.strip_prefix("gres/gpu") {
            Some("") => TresGpu::AnyGpu,
            Some(t) if t.starts_with(':') && t.len() > 1 => TresGpu::Typed(t[1..].to_string()),
            _ => {
                return Err(format!(
                    "unsupported TRES \"{name}\": expected cpu, mem, node, billing, gres/gpu or gres/gpu:TYPE"
                ))
            }
        };
        if self.tres_names.len() >= MAX_TRES {
            return Err(format!("too many TRES: at most {MAX_TRES} are tracked"));
        }
        self.tres_names.push(lower);
        self.tres_gpu.push(kind);
        Ok(self.tres_names.len() - 1)
    }

    /// The index of a TRES name (`cpu`, `gres/gpu` …), case-insensitively.
    pub fn tres_index(&self, name: &str) -> Option<usize> {
        let lower = name.to_ascii_lowercase();
        let lower = match lower.as_str() {
            "cpus" => "cpu".to_string(),
            "nodes" => "node".to_string(),
            "memory" => "mem".to_string(),
            _ => lower,
        };
        self.tres_names.iter().position(|t| *t == lower)
    }

    pub fn qos_by_name(&self, name: &str) -> Option<QosId> {
        self.qos
            .iter()
            .position(|q| q.name.eq_ignore_ascii_case(name))
            .map(|i| i as QosId)
    }

    /// The account association named `account`.
    pub fn account(&self, account: &str) -> Option<AssocId> {
        self.assocs
            .iter()
            .position(|a| a.user.is_none() && a.account.eq_ignore_ascii_case(account))
            .map(|i| i as AssocId)
    }

    /// The user association of `user` in `account`, for `partition` when one
    /// exists for it, else the one for every partition.
    pub fn user_assoc(
        &self,
        user: &str,
        account: &str,
        partition: Option<&str>,
    ) -> Option<AssocId> {
        let mut any = None;
        for (i, a) in self.assocs.iter().enumerate() {
            if a.user.as_deref() != Some(user) || !a.account.eq_ignore_ascii_case(account) {
                continue;
            }
            match (&a.partition, partition) {
                (Some(p), Some(q)) if p == q => return Some(i as AssocId),
                (None, _) => any = Some(i as AssocId),
                _ => {}
            }
        }
        any
    }

    /// Adds an account under `parent` (root when `None`).
    pub fn add_account(&mut self, name: &str, parent: Option<AssocId>) -> AssocId {
        if let Some(a) = self.account(name) {
            return a;
        }
        self.assocs.push(Assoc {
            account: name.to_string(),
            user: None,
            partition: None,
            parent: Some(parent.unwrap_or(0)),
            shares: Shares::Raw(1),
            limits: AssocLimits::default(),
            qos: Vec::new(),
            default_qos: None,
            priority: 0,
            set: LimitsSet::default(),
        });
        (self.assocs.len() - 1) as AssocId
    }

    /// Adds `user` to the account association `account`.
    pub fn add_user(&mut self, user: &str, account: AssocId, partition: Option<&str>) -> AssocId {
        let acct = self.assocs[account as usize].account.clone();
        if let Some(a) = self.user_assoc(user, &acct, partition) {
            if self.assocs[a as usize].partition.as_deref() == partition {
                return a;
            }
        }
        self.default_account
            .entry(user.to_string())
            .or_insert_with(|| acct.clone());
        self.assocs.push(Assoc {
            account: acct,
            user: Some(user.to_string()),
            partition: partition.map(str::to_string),
            parent: Some(account),
            shares: Shares::Raw(1),
            limits: AssocLimits::default(),
            qos: Vec::new(),
            default_qos: None,
            priority: 0,
            set: LimitsSet::default(),
        });
        (self.assocs.len() - 1) as AssocId
    }

    /// The ancestors of `a`, itself first.
    pub fn lineage(&self, a: AssocId) -> impl Iterator<Item = AssocId> + '_ {
        std::iter::successors(Some(a), move |&x| self.assocs[x as usize].parent)
    }

    /// Inherits unset `Max*` limits and QOS lists from parents, as slurmdbd
    /// does when it sends associations to slurmctld. `Err` names an
    /// account whose parents loop.
    pub fn finish(&mut self) -> Result<(), String> {
        // Parents before children: order by depth, refusing loops.
        let n = self.assocs.len();
        let mut depth = vec![u32::MAX; n];
        for (i, depth_i) in depth.iter_mut().enumerate() {
            let mut d = 0u32;
            let mut x = i;
            while let Some(p) = self.assocs[x].parent {
                d += 1;
                if d as usize > n {
                    return Err(format!(
                        "account '{}': its parents form a loop",
                        self.assocs[i].account
                    ));
                }
                x = p as usize;
            }
            *depth_i = d;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| (depth[i], i));
        for i in order {
            let Some(p) = self.assocs[i].parent else {
                continue;
            };
            let parent = self.assocs[p as usize].clone();
            let a = &mut self.assocs[i];
            let s = a.set;
            if !s.max_tres_pj {
                a.limits.max_tres_pj = parent.limits.max_tres_pj;
            }
            if !s.max_tres_pn {
                a.limits.max_tres_pn = parent.limits.max_tres_pn;
            }
            if !s.max_tres_mins_pj {
                a.limits.max_tres_mins_pj = parent.limits.max_tres_mins_pj;
            }
            if !s.max_jobs {
                a.limits.max_jobs = parent.limits.max_jobs;
            }
            if !s.max_submit_jobs {
                a.limits.max_submit_jobs = parent.limits.max_submit_jobs;
            }
            if !s.max_wall_pj {
                a.limits.max_wall_pj = parent.limits.max_wall_pj;
            }
            if !s.qos {
                a.qos = parent.qos.clone();
            }
            if a.default_qos.is_none() {
                a.default_qos = parent.default_qos;
            }
            if !s.priority {
                a.priority = parent.priority;
            }
        }
        Ok(())
    }

    /// The job's association and QOS, or sbatch's refusal.
    ///
    /// `account`: `-A`, else the user's default account; `qos`: `--qos`,
    /// else the association's default QOS, else `normal` when allowed
    /// (slurmctld's `_get_qos_info`/`valid_qos`).
    pub fn resolve(
        &self,
        user: &str,
        account: Option<&str>,
        qos: Option<&str>,
        partition: Option<&str>,
    ) -> Result<JobAcct, &'static str> {
        const BAD_ACCOUNT: &str = "Invalid account or account/partition combination specified";
        const BAD_QOS: &str = "Invalid qos specification";
        let acct = match account {
            Some(a) => a.to_string(),
            None => match self.default_account.get(user) {
                Some(a) => a.clone(),
                None => {
                    if self.enforce.associations {
                        return Err(BAD_ACCOUNT);
                    }
                    return Ok(JobAcct {
                        assoc: 0,
                        qos: 0,
                        part_qos: None,
                    });
                }
            },
        };
        let assoc = match self.user_assoc(user, &acct, partition) {
            Some(a) => a,
            None if !self.enforce.associations => self.account(&acct).unwrap_or(0),
            None => return Err(BAD_ACCOUNT),
        };
        let a = &self.assocs[assoc as usize];
        let q = match qos {
            Some(name) => self.qos_by_name(name).ok_or(BAD_QOS)?,
            None => match a.default_qos {
                Some(q) => q,
                None if a.qos.len() == 1 => a.qos[0],
                None => self.qos_by_name("normal").unwrap_or(0),
            },
        };
        if self.enforce.qos && !a.qos.contains(&q) {
            return Err(BAD_QOS);
        }
        let part_qos = partition.and_then(|p| self.partition_qos(p));
        Ok(JobAcct {
            assoc,
            qos: q,
            part_qos,
        })
    }

    /// The QOS of partition `name`, if it has one.
    pub fn partition_qos(&self, name: &str) -> Option<QosId> {
        self.part_qos
            .iter()
            .find(|(p, _)| p == name)
            .map(|&(_, q)| q)
    }

    /// The largest association priority (association factor = priority /
    /// this; `g_assoc_max_priority`).
    pub fn max_assoc_priority(&self) -> u32 {
        self.assocs.iter().map(|a| a.priority).max().unwrap_or(0)
    }

    /// The largest QOS priority (QOS factor = priority / this).
    pub fn max_qos_priority(&self) -> u32 {
        self.qos.iter().map(|q| q.priority).max().unwrap_or(0)
    }

    /// Adds `n` GPUs of type `ty` (`None`: untyped request) to `tres`.
    fn add_gpus(
        &self,
        cluster: &crate::Cluster,
        tres: &mut TresArray,
        ty: Option<crate::GpuTypeId>,
        n: u64,
    ) {
        for (i, k) in self.tres_gpu.iter().enumerate() {
            match k {
                TresGpu::AnyGpu => tres[i] += n,
                TresGpu::Typed(t) => {
                    if ty.is_some_and(|ty| cluster.gpu_types[ty.idx()].name.eq_ignore_ascii_case(t))
                    {
                        tres[i] += n;
                    }
                }
                TresGpu::NotGpu => {}
            }
        }
    }

    /// What a pending job asks for, as limit checks count it before nodes
    /// are chosen: its minimum node count, the CPUs of its tasks, its
    /// memory and GPUs on that many nodes (`job_ptr->tres_req_cnt`).
    /// `part` is the partition whose TRESBillingWeights give the billing.
    pub fn request_tres(
        &self,
        cluster: &crate::Cluster,
        r: &crate::JobRequest,
        part: Option<crate::PartId>,
    ) -> TresArray {
        use crate::job::MemReq;
        let mut t = [0u64; MAX_TRES];
        let nodes = u64::from(r.min_nodes.max(1));
        let tasks = u64::from(r.total_tasks(r.min_nodes.max(1)));
        let mut gpus_total = 0u64;
        for g in &r.gpus_per_node {
            let n = u64::from(g.count) * nodes;
            gpus_total += n;
            self.add_gpus(cluster, &mut t, g.ty, n);
        }
        if let Some(g) = r.gpus_per_job {
            gpus_total += u64::from(g.count);
            self.add_gpus(cluster, &mut t, g.ty, u64::from(g.count));
        }
        if let Some(g) = r.gpus_per_task {
            let n = u64::from(g.count) * tasks;
            gpus_total += n;
            self.add_gpus(cluster, &mut t, g.ty, n);
        }
        let cpus = match r.cpus_per_gpu {
            Some(c) if gpus_total > 0 => (u64::from(c) * gpus_total).max(tasks),
            _ => tasks * u64::from(r.cpus_per_task.max(1)),
        };
        t[TRES_CPU] = cpus;
        t[TRES_NODE] = nodes;
        t[TRES_MEM] = match r.mem {
            MemReq::PerNode(m) => m * nodes,
            MemReq::PerCpu(m) => m * cpus,
            MemReq::PerGpu(m) => m * gpus_total,
            _ => 0,
        };
        t[TRES_BILLING] = self.billable(&t, self.part_weights(part)) as u64;
        t
    }

    /// What a running job holds (`job_set_alloc_tres()`), billed with the
    /// weights of partition `part`.
    pub fn alloc_tres(
        &self,
        cluster: &crate::Cluster,
        alloc: &crate::Allocation,
        part: Option<crate::PartId>,
    ) -> TresArray {
        let mut t = [0u64; MAX_TRES];
        for na in &alloc.nodes {
            t[TRES_CPU] += u64::from(na.cpus);
            t[TRES_MEM] += na.mem_mib;
            let node = cluster.node(na.node);
            let mut m = na.gpus;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let ty = node.gpus.get(i).map(|d| d.ty);
                self.add_gpus(cluster, &mut t, ty, 1);
            }
        }
        t[TRES_NODE] = alloc.nodes.len() as u64;
        t[TRES_BILLING] = self.billable(&t, self.part_weights(part)) as u64;
        t
    }

    /// The TRESBillingWeights of partition `part`, if it has any.
    pub fn part_weights(&self, part: Option<crate::PartId>) -> Option<&[(usize, f64)]> {
        self.billing_weights
            .get(part?.idx())
            .filter(|w| !w.is_empty())
            .map(Vec::as_slice)
    }

    /// The billable TRES of a count vector (`assoc_mgr_tres_weighted()`):
    /// its CPUs without weights, else the weighted sum, or with
    /// `PriorityFlags=MAX_TRES` the largest weighted node TRES (cpu, mem,
    /// node, GRES; every TRES gresim tracks is one).
    pub fn billable(&self, tres: &TresArray, weights: Option<&[(usize, f64)]>) -> f64 {
        let Some(w) = weights else {
            return tres[TRES_CPU] as f64;
        };
        let (mut node, mut global) = (0.0f64, 0.0f64);
        for &(i, wt) in w {
            if i == TRES_BILLING {
                continue;
            }
            let v = tres[i] as f64 * wt;
            if self.billing_max_tres {
                node = node.max(v);
            } else {
                global += v;
            }
        }
        node + global
    }

    /// Parses a TRESBillingWeights string (`CPU=1.0,Mem=0.25G,GRES/gpu=2.0`):
    /// a weight per configured TRES; a unit suffix divides the weight by
    /// the unit's size over the TRES's base unit (MiB for memory), as
    /// `slurm_get_tres_weight_array()` does.
    pub fn parse_billing_weights(&self, s: &str) -> Result<Vec<(usize, f64)>, String> {
        let mut out: Vec<(usize, f64)> = Vec::new();
        for item in s.split(',').filter(|x| !x.trim().is_empty()) {
            let (name, value) = item.split_once('=').ok_or_else(|| {
                format!("\"{item}\" is an invalid TRES weight entry: expected TRES=WEIGHT")
            })?;
            let name = name.trim();
            let i = self.tres_index(name).ok_or_else(|| {
                format!(
                    "TRES weight \"{name}\" is not a configured TRES: expected one of {}",
                    self.tres_names.join(", ")
                )
            })?;
            let value = value.trim();
            let split = value
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
                .unwrap_or(value.len());
            let (num, unit) = value.split_at(split);
            let mut w: f64 = num
                .parse()
                .map_err(|_| format!("\"{item}\": expected a number as the weight"))?;
            if !w.is_finite() || w < 0.0 {
                return Err(format!("\"{item}\": expected a weight of 0 or more"));
            }
            if !unit.is_empty() {
                let level = match unit.to_ascii_uppercase().as_str() {
                    "K" => 1,
                    "M" => 2,
                    "G" => 3,
                    "T" => 4,
                    "P" => 5,
                    _ => return Err(format!("\"{item}\": expected a unit of K, M, G, T or P")),
                };
                let base = if i == TRES_MEM { 2 } else { 0 };
                if level > base {
                    w /= 1024f64.powi(level - base);
                }
            }
            match out.iter_mut().find(|(j, _)| *j == i) {
                Some(e) => e.1 = w,
                None => out.push((i, w)),
            }
        }
        out.sort_by_key(|&(i, _)| i);
        Ok(out)
    }
}

/// A job's association and QOS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct JobAcct {
    pub assoc: AssocId,
    pub qos: QosId,
    /// The QOS of the job's (first) partition, when it has one.
    pub part_qos: Option<QosId>,
}

impl JobAcct {
    /// The QOS whose limits apply, in the order slurmctld checks them
    /// (`acct_policy_set_qos_order()`): the partition's QOS first, unless
    /// the job's QOS has `OverPartQOS`.
    pub fn qos_order(&self, acct: &Accounting) -> [Option<QosId>; 2] {
        match self.part_qos {
            Some(p) if p != self.qos => {
                if acct.qos[self.qos as usize].flags.over_part_qos {
                    [Some(self.qos), Some(p)]
                } else {
                    [Some(p), Some(self.qos)]
                }
            }
            _ => [Some(self.qos), None],
        }
    }
}

/// Use of one association or QOS (`assoc_mgr`'s `usage` records).
#[derive(Debug, Clone, PartialEq)]
pub struct Used {
    /// Running jobs.
    pub jobs: u32,
    /// Pending and running jobs.
    pub submit_jobs: u32,
    /// TRES held by running jobs.
    pub tres: TresArray,
    /// TRES-seconds still to run of running jobs, at their time limits
    /// (`grp_used_tres_run_secs`), decremented as they run.
    pub tres_run_secs: TresArray,
}

impl Default for Used {
    fn default() -> Self {
        Used {
            jobs: 0,
            submit_jobs: 0,
            tres: [0; MAX_TRES],
            tres_run_secs: [0; MAX_TRES],
        }
    }
}

/// Decayed usage of an association or QOS, for fair-share and TRES-minute limits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Decayed {
    /// Billing-seconds (sshare's RawUsage).
    pub raw: f64,
    /// Per TRES, TRES-seconds.
    pub tres: Vec<f64>,
    /// Decayed wall seconds of running jobs (`grp_used_wall`, for `GrpWall`).
    pub wall: f64,
}

impl Decayed {
    /// Forgets all usage (`_reset_usage()`, PriorityUsageResetPeriod).
    pub fn reset(&mut self) {
        self.raw = 0.0;
        self.tres.iter_mut().for_each(|t| *t = 0.0);
        self.wall = 0.0;
    }
}

/// One association's line of `sshare -l`: shares and usage as the last
/// fair-share computation saw them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ShareRow {
    /// RawUsage: decayed billing-seconds.
    pub raw_usage: f64,
    /// NormUsage: raw usage over root's.
    pub norm_usage: f64,
    /// EffectvUsage (Fair Tree: over the parent's usage).
    pub effective_usage: f64,
    /// NormShares.
    pub norm_shares: f64,
    /// LevelFS (Fair Tree only).
    pub level_fs: f64,
    /// FairShare: the factor priority/multifactor uses, in [0, 1].
    pub fairshare: f64,
}

/// Every counter the limits read, and the decayed usage fair-share reads.
#[derive(Debug, Clone, PartialEq)]
pub struct AcctUsage {
    pub assoc: Vec<Used>,
    pub qos: Vec<Used>,
    /// Per QOS: use by user, and by account (QOS MaxJobsPU, MaxTRESPA …).
    pub qos_user: Vec<BTreeMap<Arc<str>, Used>>,
    pub qos_account: Vec<BTreeMap<String, Used>>,
    pub assoc_decayed: Vec<Decayed>,
    pub qos_decayed: Vec<Decayed>,
    /// Fair-share factor per association (user associations), in [0, 1].
    pub fairshare: Vec<f64>,
    /// When usage was last accrued and decayed.
    pub last_decay: Time,
    /// `sshare`'s figures per association, from the last computation.
    pub shares: Vec<ShareRow>,
}

impl AcctUsage {
    pub fn new(acct: &Accounting) -> AcctUsage {
        let nt = acct.tres_names.len();
        AcctUsage {
            assoc: vec![Used::default(); acct.assocs.len()],
            qos: vec![Used::default(); acct.qos.len()],
            qos_user: vec![BTreeMap::new(); acct.qos.len()],
            qos_account: vec![BTreeMap::new(); acct.qos.len()],
            assoc_decayed: vec![
                Decayed {
                    raw: 0.0,
                    tres: vec![0.0; nt],
                    wall: 0.0,
                };
                acct.assocs.len()
            ],
            qos_decayed: vec![
                Decayed {
                    raw: 0.0,
                    tres: vec![0.0; nt],
                    wall: 0.0,
                };
                acct.qos.len()
            ],
            fairshare: vec![1.0; acct.assocs.len()],
            last_decay: 0,
            shares: vec![ShareRow::default(); acct.assocs.len()],
        }
    }

    /// The QOS's use by `user` (zero when none).
    pub fn qos_user(&self, qos: QosId, user: &str) -> Option<&Used> {
        self.qos_user[qos as usize].get(user)
    }

    pub fn qos_account(&self, qos: QosId, account: &str) -> Option<&Used> {
        self.qos_account[qos as usize].get(account)
    }

    /// Every record a job's use counts in: its association and ancestors,
    /// its QOS, and the QOS's per-user and per-account records.
    fn each(
        &mut self,
        acct: &Accounting,
        job: JobAcct,
        user: &Arc<str>,
        mut f: impl FnMut(&mut Used),
    ) {
        for a in acct.lineage(job.assoc) {
            f(&mut self.assoc[a as usize]);
        }
        let account = &acct.assocs[job.assoc as usize].account;
        for q in job.qos_order(acct).into_iter().flatten() {
            let q = q as usize;
            f(&mut self.qos[q]);
            f(self.qos_user[q].entry(user.clone()).or_default());
            if !self.qos_account[q].contains_key(account) {
                self.qos_account[q].insert(account.clone(), Used::default());
            }
            if let Some(u) = self.qos_account[q].get_mut(account) {
                f(u);
            }
        }
    }

    /// A job was submitted (`acct_policy_add_job_submit`).
    pub fn add_submit(&mut self, acct: &Accounting, job: JobAcct, user: &Arc<str>) {
        self.each(acct, job, user, |u| u.submit_jobs += 1);
    }

    /// A job left the system (`acct_policy_remove_job_submit`).
    pub fn remove_submit(&mut self, acct: &Accounting, job: JobAcct, user: &Arc<str>) {
        self.each(acct, job, user, |u| {
            u.submit_jobs = u.submit_jobs.saturating_sub(1)
        });
    }

    /// A job started holding `tres`, for at most `limit_secs`
    /// (`acct_policy_job_begin`).
    pub fn job_begin(
        &mut self,
        acct: &Accounting,
        job: JobAcct,
        user: &Arc<str>,
        tres: &TresArray,
        limit_secs: u64,
    ) {
        self.each(acct, job, user, |u| {
            u.jobs += 1;
            for ((held, run), &t) in u.tres.iter_mut().zip(u.tres_run_secs.iter_mut()).zip(tres) {
                *held = held.saturating_add(t);
                *run = run.saturating_add(t.saturating_mul(limit_secs));
            }
        });
    }

    /// A job ended; `run_secs_left` is what remained of its TRES-seconds
    /// (`acct_policy_job_fini`).
    pub fn job_fini(
        &mut self,
        acct: &Accounting,
        job: JobAcct,
        user: &Arc<str>,
        tres: &TresArray,
        run_secs_left: &TresArray,
    ) {
        self.each(acct, job, user, |u| {
            u.jobs = u.jobs.saturating_sub(1);
            for i in 0..MAX_TRES {
                u.tres[i] = u.tres[i].saturating_sub(tres[i]);
                u.tres_run_secs[i] = u.tres_run_secs[i].saturating_sub(run_secs_left[i]);
            }
        });
    }

    /// A running job ran `secs` more: its TRES-seconds still to run shrink
    /// (the priority plugin's `_handle_tres_run_secs`).
    pub fn run_down(
        &mut self,
        acct: &Accounting,
        job: JobAcct,
        user: &Arc<str>,
        tres: &TresArray,
        secs: u64,
    ) {
        self.each(acct, job, user, |u| {
            for (run, &t) in u.tres_run_secs.iter_mut().zip(tres) {
                *run = run.saturating_sub(t.saturating_mul(secs));
            }
        });
    }
}

/// `PriorityUsageResetPeriod`: when every usage is cleared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UsageReset {
    #[default]
    None,
    /// Once, at the decay thread's first run.
    Now,
    Daily,
    Weekly,
    Monthly,
    Quarterly,
    Yearly,
}

impl std::str::FromStr for UsageReset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s.to_ascii_uppercase().as_str() {
            "NONE" => UsageReset::None,
            "NOW" => UsageReset::Now,
            "DAILY" => UsageReset::Daily,
            "WEEKLY" => UsageReset::Weekly,
            "MONTHLY" => UsageReset::Monthly,
            "QUARTERLY" => UsageReset::Quarterly,
            "YEARLY" => UsageReset::Yearly,
            _ => {
                return Err(format!(
                    "unknown PriorityUsageResetPeriod \"{s}\": expected NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY"
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests;
