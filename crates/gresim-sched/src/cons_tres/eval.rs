//! One node for one job: the job-level facts ([`JobCtx`], its GPU requests
//! as `gres_job_state`s), [`eval_node`] (`can_job_run_on_node` +
//! `_select_cores` + `gres_select_filter_remove_unusable` +
//! `gres_select_filter_sock_core`), the quick exits before it
//! ([`cannot_fit`], [`Quick`]) and [`eval_all`] over the candidates.

use gresim_model::job::{GpuReq, JobRequest, MemReq};
use gresim_model::state::{CoreSet, NodeUsage, RowUse};
use gresim_model::{Cluster, GpuTypeId, Node, NodeId};

use super::{Cand, EvalCache, MAX_SOCK, NO_VAL};
use crate::SchedParams;

/// One GPU request as a `gres_job_state`: per node, per task, per job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct GresReq {
    pub(super) ty: Option<GpuTypeId>,
    pub(super) per_node: u32,
    pub(super) per_task: u32,
    pub(super) per_job: u32,
}

/// The GPU requests of a job, at most a few entries.
#[derive(Clone, Copy, Default, PartialEq)]
pub(super) struct GresList {
    pub(super) items: [Option<GresReq>; 4],
    pub(super) len: usize,
}

impl GresList {
    pub(super) fn of(req: &JobRequest) -> GresList {
        let mut l = GresList::default();
        // Typed requests first (they are the more specific ones).
        let mut pn: [Option<GpuReq>; 4] = [None; 4];
        let mut k = 0;
        for g in req.gpus_per_node.iter().filter(|g| g.ty.is_some()) {
            if k < 4 {
                pn[k] = Some(*g);
                k += 1;
            }
        }
        for g in req.gpus_per_node.iter().filter(|g| g.ty.is_none()) {
            if k < 4 {
                pn[k] = Some(*g);
                k += 1;
            }
        }
        for g in pn.iter().flatten().filter(|g| g.count > 0) {
            l.push(GresReq {
                ty: g.ty,
                per_node: g.count,
                per_task: 0,
                per_job: 0,
            });
        }
        if let Some(t) = req.gpus_per_task.filter(|g| g.count > 0) {
            let ntasks = req.ntasks.unwrap_or(req.min_nodes.max(1));
            let per_job = match req.gpus_per_job {
                Some(j) if j.ty == t.ty => j.count,
                _ => ntasks.saturating_mul(t.count),
            };
            // Same name and type as a per-node request: one GRES record.
            if let Some(e) = l.items[..l.len]
                .iter_mut()
                .flatten()
                .find(|e| e.ty == t.ty && e.per_node > 0)
            {
                e.per_task = t.count;
                e.per_job = per_job;
                return l;
            }
            l.push(GresReq {
                ty: t.ty,
                per_node: 0,
                per_task: t.count,
                per_job,
            });
        } else if let Some(j) = req.gpus_per_job.filter(|g| g.count > 0) {
            l.push(GresReq {
                ty: j.ty,
                per_node: 0,
                per_task: 0,
                per_job: j.count,
            });
        }
        l
    }
    pub(super) fn push(&mut self, g: GresReq) {
        if self.len < self.items.len() {
            self.items[self.len] = Some(g);
            self.len += 1;
        }
    }
    pub(super) fn iter(&self) -> impl Iterator<Item = &GresReq> {
        self.items[..self.len].iter().flatten()
    }
    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// True when some request counts GPUs over the whole job.
    pub(super) fn per_job(&self) -> bool {
        self.iter().any(|g| g.per_job > 0)
    }
    pub(super) fn job_total(&self) -> u32 {
        self.iter().map(|g| g.per_job).sum()
    }
}

/// Fixed job-level facts.
pub(super) struct JobCtx<'a> {
    pub(super) cluster: &'a Cluster,
    pub(super) params: &'a SchedParams,
    pub(super) req: &'a JobRequest,
    pub(super) gres: GresList,
    pub(super) cpt: u32,
    /// `_select_cores` task bounds per node (max may be [`NO_VAL`]).
    pub(super) min_tasks: u32,
    pub(super) max_tasks: u32,
    /// CPUs a node must offer at least (`ntasks_per_node × cpus_per_task`).
    pub(super) min_cpus_node: u32,
    /// How the job counts in the node states, in the partition tried
    /// (`_verify_node_state()`; [`RowUse::NONE`] unless some partition
    /// shares cores).
    pub(super) row_use: RowUse,
}

impl<'a> JobCtx<'a> {
    pub(super) fn new(cluster: &'a Cluster, params: &'a SchedParams, req: &'a JobRequest) -> Self {
        let cpt = req.cpus_per_task.max(1);
        let (min_tasks, max_tasks) = match (req.ntasks_per_node, req.ntasks) {
            (Some(t), _) => (t, t),
            (None, n) if req.max_nodes <= 1 => match n {
                Some(n) if n > 0 => (n, n),
                _ => (1, NO_VAL),
            },
            (None, Some(n)) if n == 1 || (n == req.min_nodes && n == req.max_nodes) => (1, 1),
            _ => (1, NO_VAL),
        };
        let tpn = match (req.ntasks_per_node, req.ntasks) {
            (Some(t), _) => t,
            (None, Some(n)) if req.max_nodes <= 1 => n,
            _ => 1,
        };
        JobCtx {
            cluster,
            params,
            req,
            gres: GresList::of(req),
            cpt,
            min_tasks,
            max_tasks,
            min_cpus_node: tpn.saturating_mul(cpt),
            row_use: RowUse::NONE,
        }
    }
    pub(super) fn whole_mem(&self) -> bool {
        match self.req.mem {
            MemReq::WholeNode => true,
            MemReq::Default => self.params.def_mem_per_cpu.is_none(),
            _ => false,
        }
    }
    pub(super) fn mem_per_cpu(&self) -> Option<u64> {
        match self.req.mem {
            MemReq::PerCpu(m) => Some(m),
            MemReq::Default => self.params.def_mem_per_cpu,
            _ => None,
        }
    }
}

/// What a node offers the job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Eval {
    /// Cores the job may use (after the GPU/socket filter).
    pub(super) cores: CoreSet,
    /// CPUs `_eval_nodes` counts for this node (0 = unusable).
    pub(super) cpus: u32,
    /// GPUs the node adds to per-job counts.
    pub(super) gpus: u32,
    /// `avail_res_cnt`: CPUs plus usable GPUs (knapsack pass).
    pub(super) res: u32,
    /// Scheduling weight with the GPU co-location byte.
    pub(super) weight: u64,
}

/// Devices of type `ty` (any type for `None`).
pub(super) fn type_mask(node: &Node, ty: Option<GpuTypeId>) -> u64 {
    let Some(t) = ty else {
        // Every device (at most 64).
        return match node.gpus.len() {
            n @ 0..64 => (1u64 << n) - 1,
            _ => u64::MAX,
        };
    };
    let mut m = 0u64;
    for (i, d) in node.gpus.iter().enumerate().take(64) {
        if t == d.ty {
            m |= 1 << i;
        }
    }
    m
}

pub(super) fn n_sockets(node: &Node) -> usize {
    usize::from(node.sockets.max(1)).min(MAX_SOCK)
}

pub(super) fn cores_per_sock(node: &Node, cores: &CoreSet, out: &mut [u32; MAX_SOCK]) {
    *out = [0; MAX_SOCK];
    let cps = u32::from(node.cores_per_socket.max(1));
    for (s, o) in out.iter_mut().enumerate().take(n_sockets(node)) {
        let lo = s as u32 * cps;
        *o = cores.count_range(lo, lo + cps);
    }
}

/// Removes the highest free core of socket `s`; false when it has none.
pub(super) fn drop_top_core(node: &Node, cores: &mut CoreSet, s: usize) -> bool {
    let cps = u32::from(node.cores_per_socket.max(1));
    let lo = s as u32 * cps;
    match cores.highest_in(lo, lo + cps) {
        Some(c) => {
            cores.remove(c);
            true
        }
        None => false,
    }
}

/// `can_job_run_on_node` and `_select_cores` for one node.
pub(super) fn eval_node(
    j: &JobCtx<'_>,
    id: NodeId,
    u: &NodeUsage,
    first_pass: bool,
) -> Option<Eval> {
    let req = j.req;
    let node = j.cluster.node(id);
    if u.exclusive || (req.exclusive && u.jobs > 0) || j.row_use.excluded_by(u) {
        return None;
    }
    let tpc = u32::from(node.threads_per_core.max(1));
    let mut cores = u.free_cores;
    if cores.is_empty() {
        return None;
    }
    // pn_min_memory = 0: a node with any memory allocated is excluded.
    if j.whole_mem() && u.free_mem < node.memory_mib {
        return None;
    }
    if let MemReq::PerNode(m) = req.mem {
        if m > u.free_mem {
            return None;
        }
    }
    let mut avail_cpus = cores.count() * tpc;
    if avail_cpus < j.min_cpus_node {
        return None;
    }
    let mut min_t = j.min_tasks;
    let mut max_t = j.max_tasks;
    let alloc_tasks = avail_cpus / j.cpt;
    if alloc_tasks < min_t {
        return None;
    }
    if max_t == NO_VAL || alloc_tasks < max_t {
        max_t = alloc_tasks;
    }
    let mut near_sum = 0u32;
    let mut gpus_job = 0u32;
    let mut gpus_all = 0u32;
    let whole = req.exclusive;
    let free_gpus = u.free_gpus;
    let cpg = req.cpus_per_gpu.unwrap_or(0);
    let mpg = match req.mem {
        MemReq::PerGpu(m) if m > 0 => Some(m),
        _ => None,
    };
    let nsock = n_sockets(node);
    // Device masks, once per node: no socket, and each socket.
    let super::gpu_bits::Masks {
        any: any_m,
        sock: smask,
    } = super::gpu_bits::Masks::of(node);
    let mut per_sock = [0u32; MAX_SOCK];
    for g in j.gres.iter() {
        let all_of_type = type_mask(node, g.ty);
        let m = all_of_type & free_gpus;
        let mut total = m.count_ones();
        // gres_select_filter_remove_unusable
        // A whole-node job gets every device of the type, but still needs
        // at least what it asked for.
        let mut min_gres = if g.per_node > 0 { g.per_node } else { 1 };
        if whole {
            min_gres = min_gres.max(all_of_type.count_ones());
        }
        if g.per_task > 0 {
            let tpn = req.ntasks_per_node.unwrap_or(1);
            min_gres = min_gres.max(g.per_task.saturating_mul(tpn));
        }
        // A node without any device of the type has no such GRES at all.
        if all_of_type == 0 || (whole && total < all_of_type.count_ones()) {
            return None;
        }
        if cpg > 0 {
            let mg = avail_cpus / cpg;
            if mg == 0 || g.per_node > mg || g.per_task > mg {
                return None;
            }
        }
        let mut max_node_gres = 0u32;
        if let Some(mpg) = mpg {
            if mpg > u.free_mem {
                return None;
            }
            let mg = u32::try_from(u.free_mem / mpg).unwrap_or(u32::MAX);
            max_node_gres = mg;
            total = total.min(mg);
        }
        cores_per_sock(node, &cores, &mut per_sock);
        let mut near = m.count_ones();
        for (s, &n) in per_sock.iter().enumerate().take(nsock) {
            if n == 0 {
                near -= (m & smask[s]).count_ones().min(near);
            }
        }
        if !whole {
            let v = if g.per_node > 0 {
                g.per_node
            } else {
                g.per_job
            };
            if v > 0 && (max_node_gres == 0 || max_node_gres > v) {
                max_node_gres = v;
            }
        }
        if cpg > 0 {
            let mg = cores.count() * tpc / cpg;
            if mg == 0 {
                return None;
            }
            if max_node_gres == 0 || max_node_gres > mg {
                max_node_gres = mg;
            }
        }
        if total < min_gres || (max_node_gres != 0 && max_node_gres < min_gres) {
            return None;
        }
        if max_node_gres != 0 {
            near = near.min(max_node_gres);
        }
        near_sum = near_sum.saturating_add(near);
        gpus_all += total;
        if g.per_job > 0 {
            gpus_job += if cpg > 0 {
                total.min(avail_cpus / cpg)
            } else {
                total
            };
        }
        if whole {
            continue;
        }

        // gres_select_filter_sock_core
        cores_per_sock(node, &cores, &mut per_sock);
        let mut tot_core_cnt: u32 = per_sock.iter().take(nsock).sum();
        let task_incr = min_t.max(1);
        let mut max_gres = if max_node_gres > 0 {
            if g.per_job > 0 && g.per_job < max_node_gres {
                g.per_job
            } else {
                max_node_gres
            }
        } else {
            0
        };
        if max_gres > 0 && g.per_node > max_gres {
            return None;
        }
        if g.per_node > 0 && g.per_task > 0 {
            let mt = g.per_node / g.per_task;
            if mt == 0 || mt > max_t || mt < min_t {
                return None;
            }
            if max_t > mt {
                // Slurm sets the task limit to max_gres here (sic).
                max_t = max_gres;
            }
        }
        let min_core_cnt = min_t.max(1).saturating_mul(j.cpt).div_ceil(tpc);
        let cnt_any = (m & any_m).count_ones();
        let mut order = [0usize; MAX_SOCK];
        for (i, o) in order.iter_mut().enumerate().take(nsock) {
            *o = i;
        }
        // Sockets with most available cores first (stable on ties).
        order[..nsock].sort_by(|a, b| per_sock[*b].cmp(&per_sock[*a]));
        let mut sufficient = false;
        let mut cnt_total = cnt_any;
        let mut req_sock = 0u64;
        let mut avail_cores_tot = 0u32;
        for &s in order.iter().take(nsock) {
            let mut cnt_s = (m & smask[s]).count_ones();
            if first_pass && cpg > 0 {
                cnt_s = cnt_s.min(per_sock[s] * tpc / cpg);
            }
            if cnt_any + cnt_s == 0 && first_pass && tot_core_cnt > min_core_cnt {
                // Drop this socket's top cores, down to what the job needs.
                let k = per_sock[s].min(tot_core_cnt - min_core_cnt);
                if k == per_sock[s] {
                    let cps = u32::from(node.cores_per_socket.max(1));
                    cores.clear_range(s as u32 * cps, (s as u32 + 1) * cps);
                    per_sock[s] = 0;
                    tot_core_cnt -= k;
                } else {
                    while per_sock[s] > 0 && drop_top_core(node, &mut cores, s) {
                        per_sock[s] -= 1;
                        tot_core_cnt -= 1;
                        if tot_core_cnt <= min_core_cnt {
                            break;
                        }
                    }
                }
                avail_cpus = avail_cpus.min(cores.count() * tpc);
            }
            avail_cores_tot += per_sock[s];
            if first_pass && per_sock[s] == 0 {
                continue;
            }
            cnt_total += cnt_s;
            // Every socket with usable cores reached before the GPUs
            // suffice is required, whether or not it has GPUs of its own
            // (22.05's `req_sock[s] = true` under `!sufficient_gres`); with
            // GPUs near no socket, sufficiency is never reached there.
            if !sufficient || cnt_any > 0 {
                req_sock |= 1 << s;
            }
            if (max_gres > 0 && cnt_total >= max_gres)
                || (g.per_node > 0 && cnt_total >= g.per_node)
            {
                sufficient = true;
            }
        }
        if cpg > 0 {
            max_gres = if max_gres > 0 {
                (avail_cpus / cpg).min(max_gres)
            } else {
                avail_cpus / cpg
            };
            cnt_total = cnt_total.min(max_gres);
        }
        if cnt_total == 0 || g.per_node > cnt_total || g.per_task > cnt_total {
            return None;
        }
        if g.per_task > 0 {
            max_t = max_t.min(cnt_total / g.per_task);
        }
        min_t = (min_t / task_incr) * task_incr;
        max_t = (max_t / task_incr) * task_incr;
        if max_t == 0 {
            return None;
        }
        if first_pass {
            for s in 0..nsock {
                if req_sock & (1 << s) != 0 {
                    continue;
                }
                let cps = u32::from(node.cores_per_socket.max(1));
                avail_cores_tot -= cores.clear_range(s as u32 * cps, (s as u32 + 1) * cps);
                per_sock[s] = 0;
            }
            avail_cpus = avail_cpus.min(cores.count() * tpc);
        }
        // Cores needed for the most tasks that fit.
        // (The largest task count whose cores fit, in closed form.)
        let mut req_cores = 0u32;
        if max_t >= min_t {
            let fit = (u64::from(avail_cores_tot) * u64::from(tpc) / u64::from(j.cpt.max(1)))
                .min(u64::from(u32::MAX)) as u32;
            if fit >= min_t {
                max_t = max_t.min(fit);
                req_cores = max_t.saturating_mul(j.cpt).div_ceil(tpc);
            } else {
                req_cores = min_t.saturating_mul(j.cpt).div_ceil(tpc);
                max_t = min_t.saturating_sub(1);
            }
        }
        if cpg > 0 {
            let i = if g.per_node > 0 {
                g.per_node
            } else if g.per_task > 0 {
                g.per_task.saturating_mul(max_t)
            } else if cnt_total > 0 {
                cnt_total
            } else {
                1
            };
            req_cores = req_cores.max(i.saturating_mul(cpg).div_ceil(tpc));
        }
        if req_cores > avail_cores_tot {
            return None;
        }
        if avail_cores_tot > req_cores && !first_pass {
            'outer: for s in 0..nsock {
                if req_sock & (1 << s) != 0 {
                    continue;
                }
                while per_sock[s] > 0 {
                    if avail_cores_tot == req_cores {
                        break 'outer;
                    }
                    if !drop_top_core(node, &mut cores, s) {
                        break;
                    }
                    per_sock[s] -= 1;
                    avail_cores_tot -= 1;
                }
            }
        }
        // Spread the remaining cores over the needed sockets.
        while avail_cores_tot > req_cores {
            let mut full: Option<usize> = None;
            for s in 0..nsock {
                if req_sock & (1 << s) == 0 || per_sock[s] == 0 {
                    continue;
                }
                if full.is_none_or(|f| per_sock[f] < per_sock[s]) {
                    full = Some(s);
                }
            }
            let Some(f) = full else { break };
            if !drop_top_core(node, &mut cores, f) {
                break;
            }
            per_sock[f] -= 1;
            avail_cores_tot -= 1;
        }
        avail_cpus = avail_cpus.min(cores.count() * tpc);
        if cpg > 0 {
            let t = (avail_cpus / cpg).min(total);
            if g.per_node > t || g.per_task > t {
                return None;
            }
        }
    }
    if !j.gres.is_empty() && !whole && cpg == 0 {
        avail_cpus = avail_cpus.min(max_t.saturating_mul(j.cpt));
    }
    if let Some(mpc) = j.mem_per_cpu().filter(|m| *m > 0) {
        let fit = u.free_mem / mpc;
        let mut cpus = u64::from(avail_cpus).min(fit - fit % u64::from(tpc)) as u32;
        if whole && u64::from(avail_cpus) > fit {
            cpus = 0;
        }
        if j.cpt > 1 {
            cpus -= cpus % j.cpt;
        }
        if cpus < req.ntasks_per_node.unwrap_or(0) {
            cpus = 0;
        }
        avail_cpus = cpus;
    }
    if avail_cpus == 0 || cores.is_empty() {
        return None;
    }
    let low = if j.gres.is_empty() {
        0xff
    } else {
        0xff - u64::from(near_sum.min(0xff))
    };
    Some(Eval {
        cores,
        cpus: avail_cpus,
        gpus: gpus_job,
        res: avail_cpus + gpus_all,
        weight: (u64::from(node.weight) << 8) | low,
    })
}

/// True when [`eval_node`] certainly returns `None` for node `id` in usage
/// `u`: each test here is one of its own early exits (an exclusive holder,
/// the node states, no free core, memory, too few free GPUs of a requested type), made on
/// counts alone. On a busy cluster most nodes fail one of them, which is
/// cheaper than even a cache lookup.
#[inline(always)]
pub(super) fn cannot_fit(j: &JobCtx<'_>, q: &Quick, id: NodeId, u: &NodeUsage) -> bool {
    if u.exclusive
        || (q.exclusive && u.jobs > 0)
        || u.free_cores.is_empty()
        || j.row_use.excluded_by(u)
    {
        return true;
    }
    if q.whole_mem && u.free_mem < j.cluster.node(id).memory_mib {
        return true;
    }
    if u.free_mem < q.node_mem {
        return true;
    }
    if !q.typed {
        // Untyped requests only: every device counts.
        return u.free_gpus.count_ones() < q.min_gpus;
    }
    let tpn = j.req.ntasks_per_node.unwrap_or(1);
    for g in j.gres.iter() {
        // `total < min_gres` in eval_node, before any other outcome.
        let min_gres =
            if g.per_node > 0 { g.per_node } else { 1 }.max(g.per_task.saturating_mul(tpn));
        // Every device is of type `None`.
        let free = match g.ty {
            None => u.free_gpus,
            Some(_) => u.free_gpus & type_mask(j.cluster.node(id), g.ty),
        };
        if free.count_ones() < min_gres {
            return true;
        }
    }
    false
}

/// What [`cannot_fit`] tests, worked out once per job.
pub(super) struct Quick {
    pub(super) exclusive: bool,
    pub(super) whole_mem: bool,
    /// `--mem` per node (0 when not given).
    pub(super) node_mem: u64,
    /// Some GPU request names a type.
    pub(super) typed: bool,
    /// Without types: the most any one request needs on a node.
    pub(super) min_gpus: u32,
}

impl Quick {
    pub(super) fn of(j: &JobCtx<'_>) -> Quick {
        let tpn = j.req.ntasks_per_node.unwrap_or(1);
        let mut min_gpus = 0u32;
        let mut typed = false;
        for g in j.gres.iter() {
            typed |= g.ty.is_some();
            let min_gres =
                if g.per_node > 0 { g.per_node } else { 1 }.max(g.per_task.saturating_mul(tpn));
            min_gpus = min_gpus.max(min_gres);
        }
        Quick {
            exclusive: j.req.exclusive,
            whole_mem: j.whole_mem(),
            node_mem: match j.req.mem {
                MemReq::PerNode(m) => m,
                _ => 0,
            },
            typed,
            min_gpus,
        }
    }
}

/// Evaluates every candidate for one pass.
pub(super) fn eval_all(
    j: &JobCtx<'_>,
    cands: &mut [Cand],
    first_pass: bool,
    cache: &mut EvalCache,
) {
    let shape = cache.shape_id(j);
    let q = Quick::of(j);
    for c in cands.iter_mut() {
        if cannot_fit(j, &q, c.id, &c.usage) {
            c.eval = None;
            continue;
        }
        c.eval = match shape {
            Some(sh) => cache.get_or(sh, c.id, &c.usage, first_pass, || {
                eval_node(j, c.id, &c.usage, first_pass)
            }),
            None => eval_node(j, c.id, &c.usage, first_pass),
        };
    }
}
