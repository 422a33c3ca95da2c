//! The node, core and GPU choice of Slurm 22.05's select/cons_tres, written
//! from its behaviour (src/plugins/select/cons_tres/job_test.c,
//! cons_common/gres_select_filter.c, cons_tres/gres_sched.c):
//!
//! 1. [`eval_node`] — `can_job_run_on_node` + `_select_cores` +
//!    `gres_select_filter_remove_unusable` + `gres_select_filter_sock_core`:
//!    the cores the job may use on a node (on the first pass only sockets
//!    holding usable GPUs keep their cores), the CPUs `_eval_nodes` counts,
//!    and the number of GPUs close to free cores (lowers the node's
//!    scheduling weight: `(Weight << 8) | (0xff - near_gpus)`).
//! 2. [`eval_nodes`] — `_eval_nodes`: consecutive sets of usable nodes in
//!    node-index order, cut where the scheduling weight changes; lowest weight
//!    set, then a sufficient one, then the one with the fewest CPUs (an
//!    insufficient bigger one replaces an insufficient smaller one); inside a
//!    set one remaining node is chosen by best fit, several in index order.
//!    Under topology/tree, `_eval_nodes_topo` instead (cons_tres/topo.rs);
//!    under topology/block, beyond 22.05, `eval_nodes_block`
//!    (cons_tres/block.rs).
//! 3. [`job_test`] — `choose_nodes`: first pass with GPU/socket affinity,
//!    then without it, then dropping nodes with few resources (knapsack).
//! 4. [`finish_node`] — the cores (lowest ids of the usable ones) and the GPU
//!    indices: `_set_node_bits` (per node), `_set_task_bits` (per task),
//!    `_set_job_bits1`/`_set_job_bits2` (per job, NVLink trimming).

// The code mirrors Slurm's loops closely on purpose (index loops over
// sockets, explicit zero checks before divisions), which keeps it reviewable
// against job_test.c and gres_select_filter.c.
#![allow(
    clippy::manual_checked_ops,
    clippy::needless_range_loop,
    clippy::nonminimal_bool,
    clippy::question_mark,
    clippy::manual_is_multiple_of,
    clippy::too_many_arguments
)]

use gresim_model::job::{GpuReq, JobRequest, MemReq};
use gresim_model::state::{CoreSet, NodeUsage};
use gresim_model::{Allocation, Cluster, GpuTypeId, Node, NodeAlloc, NodeId, PartId};

use crate::select::View;
use crate::SchedParams;

mod block;
mod fit_tree;
mod topo;

/// Slurm's NO_VAL for task counts.
const NO_VAL: u32 = u32::MAX;
/// Most sockets we track per node (socket masks are `u64`).
/// Sockets per node the selector tracks (nodes with more are treated as having this many).
const MAX_SOCK: usize = 16;

/// One GPU request as a `gres_job_state`: per node, per task, per job.
#[derive(Clone, Copy, Debug, PartialEq)]
struct GresReq {
    ty: Option<GpuTypeId>,
    per_node: u32,
    per_task: u32,
    per_job: u32,
}

/// The GPU requests of a job, at most a few entries.
#[derive(Clone, Copy, Default, PartialEq)]
struct GresList {
    items: [Option<GresReq>; 4],
    len: usize,
}

impl GresList {
    fn of(req: &JobRequest) -> GresList {
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
    fn push(&mut self, g: GresReq) {
        if self.len < self.items.len() {
            self.items[self.len] = Some(g);
            self.len += 1;
        }
    }
    fn iter(&self) -> impl Iterator<Item = &GresReq> {
        self.items[..self.len].iter().flatten()
    }
    fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// True when some request counts GPUs over the whole job.
    fn per_job(&self) -> bool {
        self.iter().any(|g| g.per_job > 0)
    }
    fn job_total(&self) -> u32 {
        self.iter().map(|g| g.per_job).sum()
    }
}

/// Fixed job-level facts.
struct JobCtx<'a> {
    cluster: &'a Cluster,
    params: &'a SchedParams,
    req: &'a JobRequest,
    gres: GresList,
    cpt: u32,
    /// `_select_cores` task bounds per node (max may be [`NO_VAL`]).
    min_tasks: u32,
    max_tasks: u32,
    /// CPUs a node must offer at least (`ntasks_per_node × cpus_per_task`).
    min_cpus_node: u32,
}

impl<'a> JobCtx<'a> {
    fn new(cluster: &'a Cluster, params: &'a SchedParams, req: &'a JobRequest) -> Self {
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
        }
    }
    fn whole_mem(&self) -> bool {
        match self.req.mem {
            MemReq::WholeNode => true,
            MemReq::Default => self.params.def_mem_per_cpu.is_none(),
            _ => false,
        }
    }
    fn mem_per_cpu(&self) -> Option<u64> {
        match self.req.mem {
            MemReq::PerCpu(m) => Some(m),
            MemReq::Default => self.params.def_mem_per_cpu,
            _ => None,
        }
    }
}

/// What a node offers the job.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Eval {
    /// Cores the job may use (after the GPU/socket filter).
    cores: CoreSet,
    /// CPUs `_eval_nodes` counts for this node (0 = unusable).
    cpus: u32,
    /// GPUs the node adds to per-job counts.
    gpus: u32,
    /// `avail_res_cnt`: CPUs plus usable GPUs (knapsack pass).
    res: u32,
    /// Scheduling weight with the GPU co-location byte.
    weight: u64,
}

/// Devices of type `ty` (any type for `None`).
fn type_mask(node: &Node, ty: Option<GpuTypeId>) -> u64 {
    let mut m = 0u64;
    for (i, d) in node.gpus.iter().enumerate().take(64) {
        if ty.is_none_or(|t| t == d.ty) {
            m |= 1 << i;
        }
    }
    m
}

/// Devices close to no particular socket (no `Cores=`), and per socket.
fn any_sock_mask(node: &Node) -> u64 {
    let mut m = 0u64;
    for (i, d) in node.gpus.iter().enumerate().take(64) {
        if d.socket.is_none() {
            m |= 1 << i;
        }
    }
    m
}

fn sock_mask(node: &Node, s: usize) -> u64 {
    let mut m = 0u64;
    for (i, d) in node.gpus.iter().enumerate().take(64) {
        if d.socket.is_some_and(|x| usize::from(x) == s) {
            m |= 1 << i;
        }
    }
    m
}

fn n_sockets(node: &Node) -> usize {
    usize::from(node.sockets.max(1)).min(MAX_SOCK)
}

fn cores_per_sock(node: &Node, cores: &CoreSet, out: &mut [u32; MAX_SOCK]) {
    *out = [0; MAX_SOCK];
    let cps = u32::from(node.cores_per_socket.max(1));
    for (s, o) in out.iter_mut().enumerate().take(n_sockets(node)) {
        let lo = s as u32 * cps;
        *o = cores.count_range(lo, lo + cps);
    }
}

/// Removes the highest free core of socket `s`; false when it has none.
fn drop_top_core(node: &Node, cores: &mut CoreSet, s: usize) -> bool {
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

/// Links count between devices `a` and `b` (0 when unknown).
fn link(node: &Node, a: usize, b: usize) -> u32 {
    node.gpu_links
        .as_ref()
        .and_then(|l| l.get(a))
        .and_then(|r| r.get(b))
        .map_or(0, |&v| u32::from(v))
}

fn links_known(node: &Node) -> bool {
    node.gpu_links
        .as_ref()
        .is_some_and(|l| l.len() == node.gpus.len())
}

/// `can_job_run_on_node` and `_select_cores` for one node.
fn eval_node(j: &JobCtx<'_>, id: NodeId, u: &NodeUsage, first_pass: bool) -> Option<Eval> {
    let req = j.req;
    let node = j.cluster.node(id);
    if u.exclusive || (req.exclusive && u.jobs > 0) {
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
    let mut any_m = 0u64;
    let mut smask = [0u64; MAX_SOCK];
    for (i, d) in node.gpus.iter().enumerate().take(64) {
        match d.socket {
            None => any_m |= 1 << i,
            Some(x) if usize::from(x) < MAX_SOCK => smask[usize::from(x)] |= 1 << i,
            Some(_) => {}
        }
    }
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
            if (!sufficient && cnt_s > 0) || cnt_any > 0 {
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

/// The usage of a candidate that stands for a run of nodes unable to hold
/// the job: no free core, so it evaluates to `None` like the nodes it replaces.
const GAP_USAGE: NodeUsage = NodeUsage {
    free_cores: CoreSet::EMPTY,
    free_mem: 0,
    free_gpus: 0,
    jobs: 0,
    exclusive: false,
    admin: gresim_model::NodeAdminState::Up,
};

/// Scratch for one job test: candidate nodes and their evaluations.
struct Cand {
    id: NodeId,
    required: bool,
    usage: NodeUsage,
    eval: Option<Eval>,
}

impl Cand {
    /// A node the selection may take, not required, not yet evaluated.
    fn open(id: NodeId, usage: NodeUsage) -> Cand {
        Cand {
            id,
            required: false,
            usage,
            eval: None,
        }
    }
    /// Stands for a run of nodes the job cannot use: it ends a node set.
    fn gap(id: NodeId) -> Cand {
        Cand::open(id, GAP_USAGE)
    }
}

/// Appends a walked node to the candidates: a usable one as itself, one that
/// certainly cannot hold the job (`hopeless`) as a gap, a run of those as a
/// single gap.
#[inline]
fn push_walked(
    cands: &mut Vec<Cand>,
    in_gap: &mut bool,
    id: NodeId,
    u: &NodeUsage,
    hopeless: bool,
) {
    if hopeless {
        if !*in_gap {
            *in_gap = true;
            cands.push(Cand::gap(id));
        }
    } else {
        *in_gap = false;
        cands.push(Cand::open(id, *u));
    }
}

/// One consecutive node set of `_eval_nodes`.
struct Set {
    start: usize,
    end: usize,
    cpus: i64,
    nodes: i64,
    gres: i64,
    req: Option<usize>,
    weight: u64,
}

/// Buffers [`eval_nodes`] reuses across calls.
#[derive(Default)]
struct EvalScratch {
    taken: Vec<bool>,
    avail_now: Vec<u32>,
    sets: Vec<Set>,
}

/// Buffers [`job_test`] reuses across calls, so a selection over a large
/// partition allocates nothing in the common case.
#[derive(Default)]
struct Scratch {
    cands: Vec<Cand>,
    usable: Vec<bool>,
    orig: Vec<bool>,
    ev: EvalScratch,
}

/// What node selection keeps between calls: the buffers of [`job_test`],
/// the node evaluations by job shape ([`EvalCache`]) and the per-shape node-set
/// trees (`fit_tree`). Each policy owns one, and its passes and its admission
/// checks share it; nothing lives in the thread. The caches are pure
/// shortcuts: a fresh one gives the same selections, only slower. They know
/// nodes by id and GRES type, not by cluster: one cache serves one cluster,
/// and must be [`SelectCache::clear`]ed when its GRES types change (a MIG
/// repartitioning).
#[derive(Default)]
pub struct SelectCache {
    scratch: Scratch,
    eval: EvalCache,
    trees: fit_tree::Trees,
}

impl SelectCache {
    pub fn new() -> Self {
        SelectCache::default()
    }

    /// Forgets every cached node evaluation and node-set tree.
    pub fn clear(&mut self) {
        self.eval = EvalCache::default();
        self.trees.clear();
    }
}

impl std::fmt::Debug for SelectCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectCache")
            .field("shapes", &self.eval.shapes.len())
            .field("trees", &self.trees.len())
            .finish_non_exhaustive()
    }
}

fn enough_nodes(avail: i64, rem: i64, min: i64, req: i64) -> bool {
    let needed = if req > min { rem + min - req } else { rem };
    avail >= needed
}

/// `_eval_nodes`' choice between two node sets of no required node: the
/// lower weight; at equal weight the first sufficient one, then the
/// sufficient one with fewer CPUs, and while none is sufficient the one with
/// more CPUs. `(weight, cpus, sufficient)` of the candidate and of the best
/// so far (`None`: there is none yet).
fn better_set(cand: (u64, i64, bool), best: Option<(u64, i64, bool)>) -> bool {
    let (weight, cpus, sufficient) = cand;
    let Some((bweight, bcpus, bsuff)) = best else {
        return true;
    };
    weight < bweight
        || (weight == bweight
            && ((sufficient && !bsuff)
                || (sufficient && cpus < bcpus)
                || (!sufficient && cpus > bcpus)))
}

/// `_cpus_to_use()`: the CPUs a node with `avail` usable CPUs gives the job,
/// leaving at least one CPU's worth for each of the `min_rem` nodes still to
/// find (all of them for an exclusive job).
fn cpus_to_use(j: &JobCtx<'_>, avail: u32, rem_max: i64, min_rem: i64) -> i64 {
    if j.req.exclusive {
        return i64::from(avail);
    }
    let rm = rem_max - (min_rem - 1).max(0);
    if i64::from(avail) > rm {
        rm.max(i64::from(j.min_cpus_node))
    } else {
        i64::from(avail)
    }
}

/// `_eval_nodes` (default consecutive-set mode; under topology/tree,
/// `_eval_nodes_topo` in cons_tres/topo.rs; under topology/block, when a
/// node of the map is in a block, `eval_nodes_block` in cons_tres/block.rs). `usable[i]` marks the
/// candidates still in the node map; returns the picked candidate indices.
fn eval_nodes(
    j: &JobCtx<'_>,
    cands: &[Cand],
    usable: &[bool],
    min_nodes: u32,
    max_nodes: u32,
    req_nodes: u32,
    ev: &mut EvalScratch,
) -> Option<Vec<usize>> {
    if let Some(t) = j.cluster.select_tree() {
        return topo::eval_nodes_topo(j, t, cands, usable, min_nodes, max_nodes, req_nodes);
    }
    if let Some((t, b)) = j.cluster.select_blocks() {
        if block::applies(t, cands, usable) {
            return block::eval_nodes_block(
                j, t, b, cands, usable, min_nodes, max_nodes, req_nodes,
            );
        }
    }
    let n = cands.len();
    let avail = |i: usize| -> u32 {
        if !usable[i] {
            return 0;
        }
        cands[i].eval.map_or(0, |e| e.cpus)
    };
    let usable_cnt = (0..n)
        .filter(|&i| avail(i) > 0 || cands[i].required)
        .count();
    if (usable_cnt as u32) < min_nodes {
        return None;
    }
    let per_job = j.gres.per_job();
    let gres_goal = i64::from(j.gres.job_total());
    let (min_n, max_n0, req_n) = (
        i64::from(min_nodes),
        i64::from(max_nodes),
        i64::from(req_nodes),
    );
    let mut rem_nodes = if per_job {
        min_n.min(req_n)
    } else {
        min_n.max(req_n)
    };
    let mut max_nodes = max_n0;
    let min_cpus = i64::from(j.req.total_tasks(min_nodes.max(1))) * i64::from(j.cpt);
    let mut rem_cpus = min_cpus;
    let mut rem_max_cpus = min_cpus;
    let mut min_rem_nodes = min_n;
    let mut gres_total = 0i64;
    let taken = &mut ev.taken;
    taken.clear();
    taken.resize(n, false);
    let mut picked: Vec<usize> = Vec::new();
    let add_gres = |i: usize| -> i64 { cands[i].eval.map_or(0, |e| i64::from(e.gpus)) };
    let done = |rem_nodes: i64, rem_cpus: i64, gres_total: i64| {
        rem_nodes <= 0 && rem_cpus <= 0 && (!per_job || gres_total >= gres_goal)
    };

    // Required nodes first.
    let any_required = cands.iter().any(|c| c.required);
    if any_required {
        for i in 0..n {
            if !cands[i].required {
                continue;
            }
            let Some(e) = cands[i].eval.filter(|_| usable[i]) else {
                return None;
            };
            let a = cpus_to_use(j, e.cpus, rem_max_cpus, min_rem_nodes);
            gres_total += add_gres(i);
            taken[i] = true;
            picked.push(i);
            rem_cpus -= a;
            rem_max_cpus -= a;
            rem_nodes -= 1;
            min_rem_nodes -= 1;
            max_nodes -= 1;
        }
        if done(rem_nodes, rem_cpus, gres_total) {
            return Some(picked);
        }
        if max_nodes <= 0 {
            return None;
        }
    }

    // Consecutive sets. Slurm walks the whole node table, and every node
    // not in the job's node map (another partition, excluded, DOWN, reserved
    // by backfill for a higher-priority job, without resources) ends the
    // current set; so does any gap in node indices between two candidates.
    let sets = &mut ev.sets;
    sets.clear();
    let mut cur: Option<Set> = None;
    for i in 0..n {
        let a = avail(i);
        let is_req = cands[i].required;
        let w = cands[i].eval.map_or(u64::MAX, |e| e.weight);
        let ok = is_req || a > 0;
        let gap_before = i > 0 && cands[i].id.idx() != cands[i - 1].id.idx() + 1;
        if !ok || gap_before {
            if let Some(s) = cur.take() {
                if s.nodes > 0 {
                    sets.push(s);
                }
            }
        }
        if !ok {
            continue;
        }
        if cur.as_ref().is_some_and(|s| s.nodes > 0 && s.weight != w) {
            if let Some(s) = cur.take() {
                sets.push(s);
            }
        }
        let s = cur.get_or_insert(Set {
            start: i,
            end: i,
            cpus: 0,
            nodes: 0,
            gres: 0,
            req: None,
            weight: w,
        });
        s.end = i;
        if is_req {
            if s.req.is_none() {
                s.req = Some(i);
            }
            continue;
        }
        if s.nodes == 0 {
            s.start = s.start.min(i);
        }
        s.cpus += i64::from(a);
        s.nodes += 1;
        s.gres += add_gres(i);
        s.weight = w;
    }
    if let Some(s) = cur.take() {
        if s.nodes > 0 {
            sets.push(s);
        }
    }

    let avail_now = &mut ev.avail_now;
    avail_now.clear();
    avail_now.extend((0..n).map(avail));
    let mut success = false;
    while !sets.is_empty() && max_nodes > 0 {
        let mut best: Option<usize> = None;
        let mut best_suff = false;
        for (k, s) in sets.iter().enumerate() {
            if s.nodes == 0 {
                continue;
            }
            let mut sufficient =
                s.cpus >= rem_cpus && enough_nodes(s.nodes, rem_nodes, min_n, req_n);
            if sufficient && per_job {
                sufficient = gres_total + s.gres >= gres_goal;
            }
            let new_best = match best {
                None => true,
                Some(b) => {
                    let bs = &sets[b];
                    (bs.req.is_none() && s.req.is_some())
                        || better_set(
                            (s.weight, s.cpus, sufficient),
                            Some((bs.weight, bs.cpus, best_suff)),
                        )
                }
            };
            if new_best {
                best = Some(k);
                best_suff = sufficient;
            }
        }
        let Some(b) = best else { break };
        let (first, last) = (sets[b].start, sets[b].end);
        let take = |i: usize,
                    taken: &mut Vec<bool>,
                    picked: &mut Vec<usize>,
                    rem_nodes: &mut i64,
                    rem_cpus: &mut i64,
                    rem_max_cpus: &mut i64,
                    min_rem_nodes: &mut i64,
                    max_nodes: &mut i64,
                    gres_total: &mut i64,
                    a: u32| {
            let c = cpus_to_use(j, a, *rem_max_cpus, *min_rem_nodes);
            *gres_total += add_gres(i);
            taken[i] = true;
            picked.push(i);
            *rem_cpus -= c;
            *rem_max_cpus -= c;
            *rem_nodes -= 1;
            *min_rem_nodes -= 1;
            *max_nodes -= 1;
        };
        if let Some(r) = sets[b].req {
            let order = (r..=last).chain((first..r).rev());
            for i in order {
                if max_nodes == 0 || done(rem_nodes, rem_cpus, gres_total) {
                    break;
                }
                if taken[i] || avail_now[i] == 0 {
                    continue;
                }
                take(
                    i,
                    taken,
                    &mut picked,
                    &mut rem_nodes,
                    &mut rem_cpus,
                    &mut rem_max_cpus,
                    &mut min_rem_nodes,
                    &mut max_nodes,
                    &mut gres_total,
                    avail_now[i],
                );
            }
        } else {
            if rem_nodes <= 1 {
                let mut best_fit: Option<usize> = None;
                for i in first..=last {
                    if taken[i] || cands[i].eval.is_none() || avail_now[i] == 0 {
                        continue;
                    }
                    if i64::from(avail_now[i]) < rem_cpus {
                        continue;
                    }
                    if per_job && gres_total + add_gres(i) < gres_goal {
                        continue;
                    }
                    if best_fit.is_none_or(|bf| avail_now[i] < avail_now[bf]) {
                        best_fit = Some(i);
                        if i64::from(avail_now[i]) == rem_cpus {
                            break;
                        }
                    }
                }
                if let Some(bf) = best_fit {
                    for (i, a) in avail_now.iter_mut().enumerate().take(last + 1).skip(first) {
                        if i != bf {
                            *a = 0;
                        }
                    }
                }
            }
            for i in first..=last {
                if max_nodes == 0 || done(rem_nodes, rem_cpus, gres_total) {
                    break;
                }
                if taken[i] || avail_now[i] == 0 {
                    continue;
                }
                if max_nodes == 1 && i64::from(avail_now[i]) < rem_cpus {
                    continue;
                }
                take(
                    i,
                    taken,
                    &mut picked,
                    &mut rem_nodes,
                    &mut rem_cpus,
                    &mut rem_max_cpus,
                    &mut min_rem_nodes,
                    &mut max_nodes,
                    &mut gres_total,
                    avail_now[i],
                );
            }
        }
        if done(rem_nodes, rem_cpus, gres_total) {
            success = true;
            break;
        }
        sets[b].cpus = 0;
        sets[b].nodes = 0;
        if sets.iter().all(|s| s.nodes == 0) {
            break;
        }
    }
    if !success
        && rem_cpus <= 0
        && (!per_job || gres_total >= gres_goal)
        && enough_nodes(0, rem_nodes, min_n, req_n)
    {
        success = true;
    }
    if success && (picked.len() as i64) >= min_n {
        picked.sort_unstable();
        Some(picked)
    } else {
        None
    }
}

/// True when [`eval_node`] certainly returns `None` for node `id` in usage
/// `u`: each test here is one of its own early exits (an exclusive holder,
/// no free core, memory, too few free GPUs of a requested type), made on
/// counts alone. On a busy cluster most nodes fail one of them, which is
/// cheaper than even a cache lookup.
#[inline(always)]
fn cannot_fit(j: &JobCtx<'_>, q: &Quick, id: NodeId, u: &NodeUsage) -> bool {
    if u.exclusive || (q.exclusive && u.jobs > 0) || u.free_cores.is_empty() {
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
struct Quick {
    exclusive: bool,
    whole_mem: bool,
    /// `--mem` per node (0 when not given).
    node_mem: u64,
    /// Some GPU request names a type.
    typed: bool,
    /// Without types: the most any one request needs on a node.
    min_gpus: u32,
}

impl Quick {
    fn of(j: &JobCtx<'_>) -> Quick {
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
fn eval_all(j: &JobCtx<'_>, cands: &mut [Cand], first_pass: bool, cache: &mut EvalCache) {
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

/// Node evaluations keyed by the job's shape (its request without the
/// fields `eval_node` does not read) and the node's exact usage. A node whose
/// usage has not changed since it was last evaluated for the same shape gets
/// the same answer without the work: the result is a pure function of the
/// key, so caching changes no decision.
#[derive(Default)]
struct EvalCache {
    shapes: Vec<ShapeKey>,
    /// Per node, a few recent entries.
    nodes: Vec<[Option<CacheEntry>; CACHE_WAYS]>,
    next: Vec<u8>,
}

const CACHE_WAYS: usize = 8;
const CACHE_SHAPES: usize = 256;

/// What [`eval_node`] (and [`cannot_fit`], [`Quick`]) read of a job: the
/// request without the fields none of them reads (time limit, partitions,
/// `-w`/`-x`/`-C`, and the node counts, which they see only through the
/// values derived from them in [`JobCtx`], kept here instead), and
/// `DefMemPerCPU`. Jobs that differ only in their node count (the
/// benchmark's 8-GPU jobs on 1, 2, 4 or 8 nodes) share one shape, so they
/// share the evaluation cache and one node-set tree (`fit_tree`), whose
/// leaves are those evaluations.
struct ShapeKey {
    req: JobRequest,
    def_mem_per_cpu: Option<u64>,
    gres: GresList,
    cpt: u32,
    min_tasks: u32,
    max_tasks: u32,
    min_cpus_node: u32,
}

impl ShapeKey {
    fn of(j: &JobCtx<'_>) -> ShapeKey {
        let mut req = j.req.clone();
        req.time_limit = None;
        req.partitions.clear();
        req.nodelist.clear();
        req.exclude.clear();
        req.features.clear();
        req.min_nodes = 0;
        req.max_nodes = 0;
        req.max_nodes_open = false;
        req.switches = None;
        req.segment = None;
        ShapeKey {
            req,
            def_mem_per_cpu: j.params.def_mem_per_cpu,
            gres: j.gres,
            cpt: j.cpt,
            min_tasks: j.min_tasks,
            max_tasks: j.max_tasks,
            min_cpus_node: j.min_cpus_node,
        }
    }

    /// `ShapeKey::of(j) == *self`, without building the key (no clone of
    /// the request on every selection).
    fn matches(&self, j: &JobCtx<'_>) -> bool {
        // Every field is named, so a new field fails to compile here until
        // it is placed on one side or the other (and in `of`).
        let JobRequest {
            min_nodes: _,
            max_nodes: _,
            max_nodes_open: _,
            ntasks,
            ntasks_per_node,
            cpus_per_task,
            mem,
            gpus_per_node,
            gpus_per_job,
            gpus_per_task,
            cpus_per_gpu,
            time_limit: _,
            partitions: _,
            nodelist: _,
            exclude: _,
            features: _,
            exclusive,
            shared,
            switches: _,
            segment: _,
        } = j.req;
        let k = &self.req;
        self.def_mem_per_cpu == j.params.def_mem_per_cpu
            && self.gres == j.gres
            && self.cpt == j.cpt
            && self.min_tasks == j.min_tasks
            && self.max_tasks == j.max_tasks
            && self.min_cpus_node == j.min_cpus_node
            && *ntasks == k.ntasks
            && *ntasks_per_node == k.ntasks_per_node
            && *cpus_per_task == k.cpus_per_task
            && *mem == k.mem
            && *gpus_per_node == k.gpus_per_node
            && *gpus_per_job == k.gpus_per_job
            && *gpus_per_task == k.gpus_per_task
            && *cpus_per_gpu == k.cpus_per_gpu
            && *exclusive == k.exclusive
            && *shared == k.shared
    }
}

#[derive(Clone, Copy)]
struct CacheEntry {
    shape: u32,
    first_pass: bool,
    usage: NodeUsage,
    eval: Option<Eval>,
}

impl EvalCache {
    fn shape_id(&mut self, j: &JobCtx<'_>) -> Option<u32> {
        if let Some(i) = self.shapes.iter().position(|k| k.matches(j)) {
            return Some(i as u32);
        }
        if self.shapes.len() >= CACHE_SHAPES {
            return None;
        }
        self.shapes.push(ShapeKey::of(j));
        Some(self.shapes.len() as u32 - 1)
    }

    fn get_or(
        &mut self,
        shape: u32,
        id: NodeId,
        usage: &NodeUsage,
        first_pass: bool,
        f: impl FnOnce() -> Option<Eval>,
    ) -> Option<Eval> {
        let i = id.idx();
        if self.nodes.len() <= i {
            self.nodes.resize(i + 1, [None; CACHE_WAYS]);
            self.next.resize(i + 1, 0);
        }
        for e in self.nodes[i].iter().flatten() {
            if e.shape == shape && e.first_pass == first_pass && e.usage == *usage {
                return e.eval;
            }
        }
        let eval = f();
        let w = usize::from(self.next[i]) % CACHE_WAYS;
        self.nodes[i][w] = Some(CacheEntry {
            shape,
            first_pass,
            usage: *usage,
            eval,
        });
        self.next[i] = self.next[i].wrapping_add(1);
        eval
    }
}

/// `choose_nodes` + the final resource pick. The engine entry point.
pub(crate) fn job_test(
    cache: &mut SelectCache,
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
) -> Option<Allocation> {
    job_test_with(cluster, params, req, part, view, cache, true)
}

fn job_test_with(
    cluster: &Cluster,
    params: &SchedParams,
    req: &JobRequest,
    part: PartId,
    view: View<'_>,
    cache: &mut SelectCache,
    fast: bool,
) -> Option<Allocation> {
    let SelectCache {
        scratch:
            Scratch {
                cands,
                usable,
                orig,
                ev,
            },
        eval: eval_cache,
        trees,
    } = cache;
    let p = cluster.partition(part);
    let min_nodes = req.min_nodes.max(1);
    let mut max_nodes = req.max_nodes.max(min_nodes);
    if min_nodes as usize > p.nodes.len() {
        return None;
    }
    let j = JobCtx::new(cluster, params, req);
    // Candidates in node-index order.
    cands.clear();
    for &id in req.nodelist.iter() {
        if !cluster.in_partition(part, id) || req.exclude.contains(&id) {
            return None;
        }
        if !req.features.iter().all(|f| cluster.node(id).has_feature(f)) {
            return None;
        }
    }
    if let Some(n) = req.ntasks {
        if req.ntasks_per_node.is_none() && max_nodes > n {
            max_nodes = n.max(min_nodes);
        }
    }
    // node_scheduler.c: req_nodes is the maximum the job gave, else its minimum.
    let req_nodes = if req.max_nodes_open {
        min_nodes
    } else {
        max_nodes
    };
    // Nodes the view offers (before any is found unable to hold the job).
    let mut offered = 0usize;
    let plain = req.nodelist.is_empty() && req.exclude.is_empty() && req.features.is_empty();
    // topology/tree: `_eval_nodes_topo` instead of the consecutive node sets
    // (and so not their per-shape trees); topology/block likewise.
    let tree = cluster.select_tree();
    let by_topology = tree.is_some() || cluster.select_blocks().is_some();
    if let (View::Now(state, None), false) = (view, by_topology) {
        // On the live state (not a clone, such as backfill's future states):
        // the first pass's choice comes from the per-shape tree of node
        // sets, without visiting every node (see fit_tree). When it finds
        // nothing, the full selection below.
        if fast
            && plain
            && req.shared.is_none()
            && cluster.dynamic_mig().is_none()
            && state.fit_index().walkable(cluster, part.idx())
            && state.fit_index().tracked()
        {
            let cand = |id: NodeId| {
                let usage = *state.node(id);
                Cand {
                    id,
                    required: false,
                    usage,
                    eval: eval_node(&j, id, &usage, true),
                }
            };
            if fit_tree::applies(&j, min_nodes, req_nodes) {
                if let Some(id) = fit_tree::pick(&j, state, part, trees, eval_cache) {
                    return finish(&j, &[cand(id)], &[0]);
                }
            } else if fit_tree::applies_many(&j) {
                // Several nodes: the tree's sets, and only the chosen
                // sets' nodes visited.
                if let Some(ids) = fit_tree::pick_nodes(
                    &j, state, part, min_nodes, max_nodes, req_nodes, trees, eval_cache,
                ) {
                    let picked: Vec<Cand> = ids.into_iter().map(cand).collect();
                    let all: Vec<usize> = (0..picked.len()).collect();
                    return finish(&j, &picked, &all);
                }
            }
        }
    }
    match view {
        View::Now(state, avoid)
            if fast && plain && state.fit_index().walkable(cluster, part.idx()) =>
        {
            // The common case, over the live usage: a node that certainly
            // cannot hold the job (`cannot_fit`) is unusable, and in
            // `_eval_nodes` a run of unusable nodes does nothing but end the
            // current node set. So each such run is kept as a single unusable
            // candidate, without copying any usage. The state's index visits
            // only the nodes with enough free GPUs (the others fail
            // `cannot_fit`) and says where skipped nodes lie between them.
            // `offered` is not counted: with fewer offered nodes than
            // `min_nodes`, `eval_nodes` finds too few usable ones anyway.
            let q = Quick::of(&j);
            let mut in_gap = false;
            offered = usize::MAX;
            for (id, gap_before) in state.fit_index().walk(part.idx(), q.min_gpus, avoid) {
                if gap_before && !in_gap {
                    in_gap = true;
                    cands.push(Cand::gap(id));
                }
                let u = state.node(id);
                push_walked(cands, &mut in_gap, id, u, cannot_fit(&j, &q, id, u));
            }
        }
        View::Now(state, avoid) if fast && plain && p.nodes.is_sorted() => {
            // As above, for a partition the index cannot walk: one pass over
            // its node list.
            let mut in_gap = false;
            let q = Quick::of(&j);
            for &id in &p.nodes {
                if avoid.is_some_and(|a| a[id.idx()]) {
                    continue;
                }
                let u = state.node(id);
                if !u.schedulable() {
                    continue;
                }
                offered += 1;
                push_walked(cands, &mut in_gap, id, u, cannot_fit(&j, &q, id, u));
            }
        }
        _ => {
            for &id in &p.nodes {
                if req.exclude.contains(&id) {
                    continue;
                }
                let node = cluster.node(id);
                if !req.features.iter().all(|f| node.has_feature(f)) {
                    continue;
                }
                let required = req.nodelist.contains(&id);
                match view.usage(cluster, id) {
                    Some(usage) => cands.push(Cand {
                        id,
                        required,
                        usage,
                        eval: None,
                    }),
                    None if required => return None,
                    None => {}
                }
            }
            offered = cands.len();
            // Partition node lists are normally in index order already.
            if !cands.is_sorted_by_key(|c| c.id) {
                cands.sort_by_key(|c| c.id);
            }
        }
    }
    if offered < min_nodes as usize {
        return None;
    }
    usable.clear();
    usable.resize(cands.len(), true);

    eval_all(&j, cands, true, eval_cache);
    if let Some(sr) = req.shared {
        // gres/shard, gres/mps: nodes without a GPU that can host them.
        for c in cands.iter_mut().filter(|c| c.eval.is_some()) {
            if !crate::shares::node_fits(cluster, &view, c.id, sr) {
                c.eval = None;
            }
        }
    }
    for (i, c) in cands.iter().enumerate() {
        if c.eval.is_none() && !c.required {
            usable[i] = false;
        }
    }
    let mut picked = eval_nodes(&j, cands, usable, min_nodes, max_nodes, req_nodes, ev);
    if picked.is_none() {
        if !j.gres.is_empty() {
            eval_all(&j, cands, false, eval_cache);
        }
        orig.clear();
        orig.extend(cands.iter().map(|c| c.eval.is_some()));
        usable.copy_from_slice(orig);
        let mut rem = orig.iter().filter(|x| **x).count() as u32;
        if rem <= min_nodes {
            picked = eval_nodes(&j, cands, usable, min_nodes, max_nodes, req_nodes, ev);
        } else {
            let most = cands
                .iter()
                .filter_map(|c| c.eval.map(|e| e.res))
                .max()
                .unwrap_or(0);
            let mut count = 1;
            while count < most.max(2) {
                usable.copy_from_slice(orig);
                let mut nochange = true;
                for i in 0..cands.len() {
                    if !usable[i] {
                        continue;
                    }
                    let r = cands[i].eval.map_or(0, |e| e.res);
                    if r > 0 && r <= count && !cands[i].required {
                        nochange = false;
                        usable[i] = false;
                        orig[i] = false;
                        rem -= 1;
                        if rem <= min_nodes {
                            break;
                        }
                    }
                }
                if !(nochange && count != 1) {
                    picked = eval_nodes(&j, cands, usable, min_nodes, max_nodes, req_nodes, ev);
                    if picked.is_some() || rem <= min_nodes {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    let picked = picked?;
    if let (Some(t), Some(sw)) = (tree, req.switches) {
        // `--switches`: while the job still waits (the policy drops the
        // request once its wait is over), more leaves than asked fail
        // (`best_switch = false`).
        if t.leaf_count(picked.iter().map(|&i| cands[i].id)) > sw.count {
            return None;
        }
    }
    let mut alloc = finish(&j, cands, &picked)?;
    if let Some(sr) = req.shared {
        crate::shares::assign(cluster, &view, &mut alloc, sr)?;
    }
    Some(alloc)
}

/// Turns picked candidates into an allocation: tasks, cores, memory, GPUs.
fn finish(j: &JobCtx<'_>, cands: &[Cand], picked: &[usize]) -> Option<Allocation> {
    let n = picked.len() as u32;
    let tasks = distribute_tasks(j, cands, picked)?;
    let mut nodes: Vec<NodeAlloc> = Vec::with_capacity(picked.len());
    let mut gres_done = [0u32; 4];
    for (pos, &ci) in picked.iter().enumerate() {
        let c = &cands[ci];
        let e = c.eval?;
        let tasks = tasks[pos];
        let rem_nodes = n - pos as u32;
        let na = finish_node(j, c.id, &c.usage, &e, tasks, rem_nodes, &mut gres_done)?;
        nodes.push(na);
    }
    // `_set_job_bits2`: per-job GPUs still missing, from any socket.
    for (k, g) in j.gres.iter().enumerate() {
        if g.per_job == 0 || g.per_task > 0 || gres_done[k] >= g.per_job {
            continue;
        }
        for (na, &ci) in nodes.iter_mut().zip(picked) {
            if gres_done[k] >= g.per_job {
                break;
            }
            let node = j.cluster.node(na.node);
            let free = cands[ci].usage.free_gpus & !na.gpus & type_mask(node, g.ty);
            let extra = job_bits2(node, free, na.gpus, g.per_job - gres_done[k]);
            gres_done[k] += extra.count_ones();
            na.gpus |= extra;
        }
        if gres_done[k] < g.per_job {
            return None;
        }
    }
    for (na, &ci) in nodes.iter_mut().zip(picked) {
        let node = j.cluster.node(na.node);
        // Cores for cpus-per-gpu now that the GPU count is known.
        if let Some(cpg) = j.req.cpus_per_gpu.filter(|_| !j.req.exclusive) {
            let tpc = u32::from(node.threads_per_core.max(1));
            let want = cpg.saturating_mul(na.gpus.count_ones()).div_ceil(tpc);
            if want > na.cores.count() {
                let pool = cands[ci]
                    .eval
                    .map_or(cands[ci].usage.free_cores, |e| e.cores);
                let mut cs = na.cores;
                // `have` counts `cs` as it grows (a core already in it
                // adds nothing), instead of a popcount per core tried.
                let mut have = cs.count();
                'fill: for src in [pool, cands[ci].usage.free_cores] {
                    for core in src.iter() {
                        if have >= want {
                            break 'fill;
                        }
                        if !cs.contains(core) {
                            cs.insert(core);
                            have += 1;
                        }
                    }
                }
                if have < want {
                    return None;
                }
                na.cores = cs;
                na.cpus = have * tpc;
            }
        }
        let mem = mem_for(j, node, na.cpus, na.gpus.count_ones());
        let u = &cands[ci].usage;
        if mem > u.free_mem {
            return None;
        }
        na.mem_mib = mem;
    }
    Some(Allocation {
        nodes,
        exclusive: j.req.exclusive,
    })
}

/// Tasks per picked node: an even split (the first `ntasks % n` nodes get
/// one more), then, where a node cannot hold its share because each task
/// needs GPUs it does not have (`--gpus-per-task`) or CPUs, the excess moves
/// to the nodes after it with room, as Slurm's task distribution only gives a
/// node the tasks its resources allow.
fn distribute_tasks(j: &JobCtx<'_>, cands: &[Cand], picked: &[usize]) -> Option<Vec<u32>> {
    let n = picked.len() as u32;
    let mut tasks: Vec<u32> = (0..n).map(|p| tasks_on(j.req, n, p)).collect();
    if j.req.ntasks.is_none() || j.req.ntasks_per_node.is_some() {
        return Some(tasks);
    }
    let cap: Vec<u32> = picked
        .iter()
        .map(|&ci| {
            let c = &cands[ci];
            let node = j.cluster.node(c.id);
            let tpc = node.threads_per_core.max(1) as u32;
            let mut cap = (c.usage.free_cores.count() * tpc) / j.cpt.max(1);
            for g in j.gres.iter().filter(|g| g.per_task > 0) {
                let free = (c.usage.free_gpus & type_mask(node, g.ty)).count_ones();
                cap = cap.min(free / g.per_task);
            }
            cap
        })
        .collect();
    let mut excess = 0u32;
    for (t, c) in tasks.iter_mut().zip(&cap) {
        if *t > *c {
            excess += *t - *c;
            *t = (*c).max(1);
        }
    }
    for (t, c) in tasks.iter_mut().zip(&cap) {
        if excess == 0 {
            break;
        }
        let room = c.saturating_sub(*t);
        let give = room.min(excess);
        *t += give;
        excess -= give;
    }
    (excess == 0 && tasks.iter().zip(&cap).all(|(t, c)| t <= c)).then_some(tasks)
}

/// Tasks on each of `n` nodes: the first `ntasks % n` nodes get one more.
fn tasks_on(req: &JobRequest, n: u32, pos: u32) -> u32 {
    let n = n.max(1);
    match (req.ntasks, req.ntasks_per_node) {
        (None, Some(tpn)) => tpn,
        (Some(t), Some(tpn)) => {
            let base = (t / n).min(tpn);
            let extra = u32::from(pos < t % n);
            (base + extra).min(tpn).max(1)
        }
        (Some(t), None) => (t / n + u32::from(pos < t % n)).max(1),
        (None, None) => 1,
    }
}

/// Memory per node for a job holding `cpus` CPUs and `gpus` GPUs there.
fn mem_for(j: &JobCtx<'_>, node: &Node, cpus: u32, gpus: u32) -> u64 {
    match j.req.mem {
        MemReq::PerNode(m) => m,
        MemReq::PerCpu(m) => m.saturating_mul(u64::from(cpus)),
        MemReq::PerGpu(m) => m.saturating_mul(u64::from(gpus)),
        MemReq::WholeNode => node.memory_mib,
        MemReq::Default => match j.params.def_mem_per_cpu {
            Some(d) => d.saturating_mul(u64::from(cpus)),
            None => node.memory_mib,
        },
    }
}

/// Cores, CPUs and GPU indices on one picked node.
fn finish_node(
    j: &JobCtx<'_>,
    id: NodeId,
    u: &NodeUsage,
    e: &Eval,
    tasks: u32,
    rem_nodes: u32,
    gres_done: &mut [u32; 4],
) -> Option<NodeAlloc> {
    let node = j.cluster.node(id);
    let tpc = u32::from(node.threads_per_core.max(1));
    if j.req.exclusive {
        return Some(NodeAlloc {
            node: id,
            cores: u.free_cores,
            cpus: u.free_cores.count() * tpc,
            mem_mib: 0,
            gpus: u.free_gpus,
            tasks,
            share: None,
        });
    }
    // Cores first: `_cyclic_sync_core_bitmap` over the usable ones, then
    // the lowest free ids if those fall short.
    let cpus = tasks.saturating_mul(j.cpt);
    let ncores = cpus.div_ceil(tpc).max(1);
    let mut cores = cyclic_cores(node, &e.cores, ncores, j.cpt, tpc);
    let mut left = ncores - cores.count().min(ncores);
    for c in u.free_cores.iter() {
        if left == 0 {
            break;
        }
        if !cores.contains(c) {
            cores.insert(c);
            left -= 1;
        }
    }
    if left > 0 {
        return None;
    }
    // Sockets of the job's cores, and tasks per socket.
    let nsock = n_sockets(node);
    let mut used_sock = 0u64;
    let mut tasks_sock = [0u32; MAX_SOCK];
    for c in cores.iter() {
        let s = usize::from(node.socket_of_core(c)).min(MAX_SOCK - 1);
        used_sock |= 1 << s;
    }
    {
        // Task t starts at its first CPU; CPUs are taken in core order.
        let mut idx = 0u32;
        for c in cores.iter() {
            for _ in 0..tpc {
                if idx % j.cpt == 0 && idx / j.cpt < tasks {
                    let s = usize::from(node.socket_of_core(c)).min(MAX_SOCK - 1);
                    tasks_sock[s] += 1;
                }
                idx += 1;
            }
        }
    }
    let mut gpus = 0u64;
    for (k, g) in j.gres.iter().enumerate() {
        let free = u.free_gpus & !gpus & type_mask(node, g.ty);
        let pick = if g.per_node > 0 {
            node_bits(node, free, used_sock, nsock, g.per_node)
        } else if g.per_task > 0 {
            task_bits(node, free, &tasks_sock, nsock, g.per_task)
        } else {
            let max_gres = g
                .per_job
                .saturating_sub(gres_done[k])
                .saturating_sub(rem_nodes.saturating_sub(1));
            job_bits1(node, free, used_sock, nsock, max_gres)
        };
        if k < gres_done.len() {
            gres_done[k] += pick.count_ones();
        }
        gpus |= pick;
    }
    Some(NodeAlloc {
        node: id,
        cores,
        cpus: cores.count() * tpc,
        mem_mib: 0,
        gpus,
        tasks,
        share: None,
    })
}

/// `_cyclic_sync_core_bitmap` (dist_tasks.c, the default cyclic core
/// distribution under CR_Core): with `--cpus-per-task` > 1, first whole
/// tasks are packed into each socket in turn, a socket giving only as many
/// cores as hold a multiple of `cpt` CPUs (so a 16-CPU task skips a socket
/// with 15 usable cores); the remaining cores are taken one per socket per
/// round, lowest index first within a socket. Picks at most `ncores`.
fn cyclic_cores(node: &Node, avail: &CoreSet, ncores: u32, cpt: u32, tpc: u32) -> CoreSet {
    let nsock = n_sockets(node);
    let cps = u32::from(node.cores_per_socket.max(1));
    let mut next = [0u32; MAX_SOCK];
    for (s, n) in next.iter_mut().enumerate().take(nsock) {
        *n = s as u32 * cps;
    }
    let end = |s: usize| (s as u32 + 1) * cps;
    let mut out = CoreSet::default();
    let mut left = ncores;
    if cpt > 1 {
        for s in 0..nsock {
            let free = avail.count_range(s as u32 * cps, end(s)) * tpc;
            let mut room = free - free % cpt;
            while next[s] < end(s) && room > 0 && left > 0 {
                if avail.contains(next[s]) {
                    out.insert(next[s]);
                    room = room.saturating_sub(tpc);
                    left -= 1;
                }
                next[s] += 1;
            }
        }
    }
    while left > 0 {
        let before = left;
        for s in 0..nsock {
            if left == 0 {
                break;
            }
            while next[s] < end(s) && !avail.contains(next[s]) {
                next[s] += 1;
            }
            if next[s] < end(s) {
                out.insert(next[s]);
                next[s] += 1;
                left -= 1;
            }
        }
        if left == before {
            break;
        }
    }
    out
}

/// Iterates set bits of `m` in index order.
fn bits(m: u64) -> impl Iterator<Item = usize> {
    gresim_model::state::gpu_indices(m).map(usize::from)
}

/// Link counts from each device to the `chosen` ones, scaled to ≤ 4 levels
/// (`links_cnt` in `_set_node_bits`/`_set_task_bits`). Returns the best level.
fn link_levels(node: &Node, chosen: u64, free: u64, out: &mut [u32; 64]) -> u32 {
    *out = [0; 64];
    let n = node.gpus.len().min(64);
    for g in bits(chosen) {
        for (l, o) in out.iter_mut().enumerate().take(n) {
            // Slurm skips only devices allocated to other jobs.
            if l == g || (free | chosen) & (1 << l) == 0 {
                continue;
            }
            *o += link(node, g, l);
        }
    }
    let mut best = out.iter().take(n).copied().max().unwrap_or(0);
    if best > 4 {
        let div = best.div_ceil(4);
        best = 0;
        for o in out.iter_mut().take(n) {
            *o /= div;
            best = best.max(*o);
        }
    }
    best
}

/// `_set_node_bits`: one GPU usable from any socket, then one per socket of
/// the job's cores, then more on those sockets preferring those best linked
/// to the chosen ones, then GPUs on other sockets. Lowest index first.
fn node_bits(node: &Node, free: u64, used_sock: u64, nsock: usize, want: u32) -> u64 {
    let any_m = any_sock_mask(node);
    let mut sel = 0u64;
    let mut cnt = 0u32;
    // Step 1: s = -1 (any socket), then each used socket: one GPU each.
    for s in std::iter::once(None).chain((0..nsock).map(Some)) {
        if cnt >= want {
            break;
        }
        let m = match s {
            None => any_m,
            Some(s) if used_sock & (1 << s) != 0 => sock_mask(node, s),
            Some(_) => continue,
        };
        if let Some(g) = bits(free & m & !sel).next() {
            sel |= 1 << g;
            cnt += 1;
        }
    }
    let known = links_known(node);
    let mut lv = [0u32; 64];
    let best = if known {
        link_levels(node, sel, free, &mut lv)
    } else {
        0
    };
    // Step 2: more on used sockets (and any-socket ones), best linked first.
    for l in (0..=best).rev() {
        if cnt >= want {
            break;
        }
        for s in std::iter::once(None).chain((0..nsock).map(Some)) {
            if cnt >= want {
                break;
            }
            let m = match s {
                None => any_m,
                Some(s) if used_sock & (1 << s) != 0 => sock_mask(node, s),
                Some(_) => continue,
            };
            for g in bits(free & m & !sel) {
                if known && lv[g] < l {
                    continue;
                }
                sel |= 1 << g;
                cnt += 1;
                if cnt >= want {
                    break;
                }
            }
        }
    }
    // Step 3: other sockets.
    for l in (0..=best).rev() {
        if cnt >= want {
            break;
        }
        for s in 0..nsock {
            if cnt >= want {
                break;
            }
            if used_sock & (1 << s) != 0 {
                continue;
            }
            for g in bits(free & sock_mask(node, s) & !sel) {
                if known && lv[g] < l {
                    continue;
                }
                sel |= 1 << g;
                cnt += 1;
                if cnt >= want {
                    break;
                }
            }
        }
    }
    // Devices whose socket lies beyond the node's sockets: last resort.
    if cnt < want {
        for g in bits(free & !sel) {
            if cnt >= want {
                break;
            }
            sel |= 1 << g;
            cnt += 1;
        }
    }
    sel
}

/// `_set_task_bits`: GPUs on the sockets holding the node's tasks, then
/// any others best linked to them.
fn task_bits(
    node: &Node,
    free: u64,
    tasks_sock: &[u32; MAX_SOCK],
    nsock: usize,
    per_task: u32,
) -> u64 {
    let any_m = any_sock_mask(node);
    let mut sel = 0u64;
    let mut cnt = 0u32;
    let mut total_tasks = 0u32;
    // Socket -1 counts no tasks; socket 0 is always visited (as Slurm does).
    for s in 0..nsock {
        if s > 0 && tasks_sock[s] == 0 {
            continue;
        }
        total_tasks += tasks_sock[s];
        let goal = total_tasks.saturating_mul(per_task);
        for g in bits(free & sock_mask(node, s) & !sel) {
            if cnt >= goal {
                break;
            }
            sel |= 1 << g;
            cnt += 1;
        }
    }
    let known = links_known(node);
    let mut lv = [0u32; 64];
    let best = if known {
        link_levels(node, sel, free, &mut lv)
    } else {
        0
    };
    let goal = total_tasks.saturating_mul(per_task);
    for l in (0..=best).rev() {
        if cnt >= goal {
            break;
        }
        for s in std::iter::once(None).chain((0..nsock).map(Some)) {
            if cnt >= goal {
                break;
            }
            let m = match s {
                None => any_m,
                Some(s) => sock_mask(node, s),
            };
            for g in bits(free & m & !sel) {
                if cnt >= goal {
                    break;
                }
                if known && lv[g] < l {
                    continue;
                }
                sel |= 1 << g;
                cnt += 1;
            }
        }
    }
    if cnt < goal {
        for g in bits(free & !sel) {
            if cnt >= goal {
                break;
            }
            sel |= 1 << g;
            cnt += 1;
        }
    }
    sel
}

/// `_set_job_bits1`: up to `max_gres` GPUs from any socket and the sockets of
/// the job's cores, lowest index first; with Links known, all candidates are
/// taken and the worst linked to the best-linked pair dropped.
fn job_bits1(node: &Node, free: u64, used_sock: u64, nsock: usize, max_gres: u32) -> u64 {
    let any_m = any_sock_mask(node);
    let trim = max_gres > 1 && links_known(node);
    let pick = if trim { u32::MAX } else { max_gres };
    let mut sel = 0u64;
    let mut cnt = 0u32;
    for s in std::iter::once(None).chain((0..nsock).map(Some)) {
        if cnt >= pick {
            break;
        }
        let m = match s {
            None => any_m,
            Some(s) if used_sock & (1 << s) != 0 => sock_mask(node, s),
            Some(_) => continue,
        };
        for g in bits(free & m & !sel) {
            if cnt >= pick {
                break;
            }
            sel |= 1 << g;
            cnt += 1;
        }
    }
    if cnt == 0 {
        for s in 0..nsock {
            if used_sock & (1 << s) != 0 {
                continue;
            }
            if let Some(g) = bits(free & sock_mask(node, s)).next() {
                sel |= 1 << g;
                cnt += 1;
                break;
            }
        }
    }
    if cnt > max_gres {
        // The first pair with the highest link count names the anchor.
        let mut best_link: i64 = -1;
        let mut anchor: Option<usize> = None;
        for a in bits(sel) {
            for b in bits(sel & !((2u64 << a) - 1)) {
                let l = i64::from(link(node, a, b));
                if l > best_link {
                    best_link = l;
                    anchor = Some(a);
                }
            }
        }
        if let Some(a) = anchor {
            while cnt > max_gres {
                let mut worst: Option<(usize, u32)> = None;
                for g in bits(sel) {
                    if g == a {
                        continue;
                    }
                    let l = link(node, a, g);
                    if worst.is_none_or(|(_, w)| l < w) {
                        worst = Some((g, l));
                    }
                }
                let Some((g, _)) = worst else { break };
                sel &= !(1 << g);
                cnt -= 1;
            }
        }
    }
    sel
}

/// `_set_job_bits2`: more GPUs for a per-job count, from any socket, best
/// linked to the node's first chosen GPU first.
fn job_bits2(node: &Node, free: u64, chosen: u64, want: u32) -> u64 {
    let known = links_known(node);
    let anchor = bits(chosen).next();
    let mut best = 0u32;
    if let (true, Some(a)) = (known, anchor) {
        for s in 0..node.gpus.len().min(64) {
            best = best.max(link(node, s, a));
        }
    }
    let any_m = any_sock_mask(node);
    let nsock = n_sockets(node);
    let mut sel = 0u64;
    let mut cnt = 0u32;
    for l in (0..=best).rev() {
        for s in std::iter::once(None).chain((0..nsock).map(Some)) {
            let m = match s {
                None => any_m,
                Some(s) => sock_mask(node, s),
            };
            for g in bits(free & m & !sel) {
                if cnt >= want {
                    return sel;
                }
                if l > 0 && anchor.is_some_and(|a| link(node, a, g) < l) {
                    continue;
                }
                sel |= 1 << g;
                cnt += 1;
            }
        }
    }
    sel
}

#[cfg(test)]
mod tests {
    use super::*;
    use gresim_model::catalog::model_by_name;
    use gresim_model::job::GpuReq;
    use gresim_model::{ClusterState, GpuDevice, GpuType, GpuTypeId, NodeAdminState, Partition};

    fn cluster(n: usize) -> Cluster {
        // Two weights, so node sets are cut at weight changes too.
        a100_cluster(n, 8, |i| 1 + u32::from(i % 7 == 3))
    }

    /// `n` nodes `n0`… of 2 sockets × 8 cores and `gpus` A100s (half on
    /// each socket), weights from `weight`, in one default partition `p`.
    pub(super) fn a100_cluster(n: usize, gpus: usize, weight: impl Fn(usize) -> u32) -> Cluster {
        let model = model_by_name("A100-SXM4-80GB").expect("known model");
        let nodes = (0..n)
            .map(|i| Node {
                name: format!("n{i}"),
                sockets: 2,
                cores_per_socket: 8,
                threads_per_core: 1,
                memory_mib: 64_000,
                features: vec![],
                weight: weight(i),
                gpus: (0..gpus)
                    .map(|g| GpuDevice {
                        ty: GpuTypeId(0),
                        model,
                        socket: Some((g / (gpus / 2).max(1)) as u16),
                        phys: g as u8,
                        mig: None,
                    })
                    .collect(),
                gpu_links: None,
                state: NodeAdminState::Up,
            })
            .collect();
        Cluster::new(
            nodes,
            vec![Partition {
                default: true,
                ..Partition::new("p", (0..n).map(NodeId::from_idx).collect())
            }],
            vec![GpuType {
                name: "a100".into(),
                model,
                mig: None,
            }],
        )
    }

    fn req(x: u64) -> JobRequest {
        let nodes = [1, 1, 1, 2, 3][(x % 5) as usize];
        let gpus = [1, 2, 3, 4, 8][((x / 5) % 5) as usize];
        JobRequest {
            min_nodes: nodes,
            max_nodes: nodes,
            cpus_per_gpu: (x % 3 == 0).then_some(2),
            mem: match x % 4 {
                0 => MemReq::PerNode(8_000),
                1 => MemReq::PerGpu(6_000),
                2 => MemReq::PerCpu(1_000),
                _ => MemReq::Default,
            },
            gpus_per_node: vec![GpuReq {
                ty: None,
                count: gpus,
            }],
            exclusive: x % 23 == 0,
            ..JobRequest::default()
        }
    }

    /// The one-pass candidate scan with runs of hopeless nodes folded into
    /// one gap gives exactly the allocations of the full scan, on a cluster
    /// filled and drained by a pseudo-random job stream.
    /// A pseudo-random stream of `steps` requests on `c` (partition 0, from
    /// `seed`): about a third of the steps release a running job, the others
    /// hand `step` the state and a request from [`req`], and an allocation it
    /// returns is made and kept running.
    fn churn(
        c: &Cluster,
        seed: u64,
        steps: usize,
        mut step: impl FnMut(&ClusterState, &JobRequest) -> Option<Allocation>,
    ) {
        let mut s = ClusterState::new(c);
        let mut running: Vec<Allocation> = Vec::new();
        let mut x = seed;
        for _ in 0..steps {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 == 0 && !running.is_empty() {
                let a = running.swap_remove((x as usize / 3) % running.len());
                s.release(c, &a).expect("allocated");
                continue;
            }
            if let Some(a) = step(&s, &req(x >> 8)) {
                s.allocate(c, &a).expect("free");
                running.push(a);
            }
        }
    }

    fn test_params() -> SchedParams {
        SchedParams {
            def_mem_per_cpu: Some(1_000),
            ..SchedParams::default()
        }
    }

    #[test]
    fn gap_scan_equals_full_scan() {
        let c = cluster(40);
        let p = test_params();
        let part = PartId::from_idx(0);
        let (mut fits, mut fails) = (0, 0);
        // One cache for the whole churn, as a policy keeps it.
        let mut sc = SelectCache::default();
        churn(&c, 0x2545_F491_4F6C_DD1D, 3_000, |s, r| {
            let mut test =
                |fast: bool| job_test_with(&c, &p, r, part, View::Now(s, None), &mut sc, fast);
            let (fast, full) = (test(true), test(false));
            assert_eq!(fast, full, "request {r:?}");
            if fast.is_some() {
                fits += 1;
            } else {
                fails += 1;
            }
            fast
        });
        // Both outcomes were exercised, many times.
        assert!(fits > 300 && fails > 300, "fits {fits}, fails {fails}");
    }

    /// `_cyclic_sync_core_bitmap`: a task's CPUs are packed into one socket
    /// when one has room for whole tasks, other cores go one per socket per
    /// round. With core 0 busy, an 8-CPU task skips socket 0 (7 free cores)
    /// for socket 1, so the next 1-GPU job gets core 1 and a socket-0 GPU;
    /// two 1-CPU tasks take a core on each socket. Recorded on Slurm 22.05:
    /// conformance case `rnd_b202` (j23 on cores 16-31 of l2, then j26 on
    /// CPU 1 with GPU 1 and j20 with GPUs 2,3).
    #[test]
    fn tasks_are_packed_per_socket_then_cores_go_round_robin() {
        let c = cluster(1);
        let p = test_params();
        let part = PartId::from_idx(0);
        let mut s = ClusterState::new(&c);
        let node = NodeId::from_idx(0);
        let place = |s: &mut ClusterState, r: &JobRequest| {
            let a = job_test(
                &mut SelectCache::default(),
                &c,
                &p,
                r,
                part,
                View::Now(s, None),
            )
            .expect("fits");
            s.allocate(&c, &a).expect("free");
            let na = &a.nodes[0];
            (
                na.cores.iter().collect::<Vec<_>>(),
                bits(na.gpus).collect::<Vec<_>>(),
            )
        };
        let gpu1 = JobRequest {
            min_nodes: 1,
            max_nodes: 1,
            gpus_per_node: vec![GpuReq { ty: None, count: 1 }],
            ..JobRequest::default()
        };
        assert_eq!(place(&mut s, &gpu1), (vec![0], vec![0]));
        let cpu8 = JobRequest {
            min_nodes: 1,
            max_nodes: 1,
            cpus_per_task: 8,
            ..JobRequest::default()
        };
        assert_eq!(place(&mut s, &cpu8), ((8..16).collect(), vec![]));
        assert_eq!(place(&mut s, &gpu1), (vec![1], vec![1]));
        // A fresh node: two 1-CPU tasks go to cores 0 and 8.
        let mut fresh = ClusterState::new(&c);
        let two = JobRequest {
            min_nodes: 1,
            max_nodes: 1,
            ntasks: Some(2),
            ..JobRequest::default()
        };
        assert_eq!(place(&mut fresh, &two), (vec![0, 8], vec![]));
        assert_eq!(fresh.node(node).free_cores.count(), 14);
    }

    /// Requests whose `ShapeKey` matches (they share cache entries and a
    /// `fit_tree`) get the same `eval_node` answer on every node, in both
    /// passes, on a filling and draining cluster: the node counts the key
    /// leaves out are read only through what `JobCtx` derives from them.
    #[test]
    fn shared_shapes_evaluate_alike() {
        let c = cluster(24);
        let p = test_params();
        let part = PartId::from_idx(0);
        let (mut shared, mut apart) = (0, 0);
        let mut sc = SelectCache::default();
        churn(&c, 0x9E37_79B9_7F4A_7C15, 400, |s, base| {
            let mut variants = Vec::new();
            for nodes in [1, 2, 3] {
                for ntasks in [None, Some(2), Some(3)] {
                    // A field the key must keep: pairs differing in it may
                    // not share a shape.
                    for cpus_per_gpu in [base.cpus_per_gpu, Some(4)] {
                        variants.push(JobRequest {
                            min_nodes: nodes,
                            max_nodes: nodes,
                            ntasks,
                            cpus_per_gpu,
                            ..base.clone()
                        });
                    }
                }
            }
            let ctxs: Vec<JobCtx<'_>> = variants.iter().map(|r| JobCtx::new(&c, &p, r)).collect();
            for a in &ctxs {
                let key = ShapeKey::of(a);
                assert!(key.matches(a));
                for b in &ctxs {
                    if !key.matches(b) {
                        apart += 1;
                        continue;
                    }
                    shared += 1;
                    for id in (0..c.nodes.len()).map(NodeId::from_idx) {
                        let u = s.node(id);
                        for first in [true, false] {
                            assert_eq!(
                                eval_node(a, id, u, first),
                                eval_node(b, id, u, first),
                                "{:?} / {:?} on {id:?}",
                                a.req,
                                b.req
                            );
                        }
                    }
                }
            }
            job_test_with(&c, &p, base, part, View::Now(s, None), &mut sc, true)
        });
        // Both kinds of pairs occur: node counts alone share a shape,
        // while task counts that change the per-node bounds do not.
        assert!(
            shared > 1_000 && apart > 1_000,
            "shared {shared}, apart {apart}"
        );
    }

    /// Four CPU-only nodes of 16 cores; `part` lists the partition's nodes.
    fn cpu_cluster(part: &[usize]) -> Cluster {
        let nodes = (0..4)
            .map(|i| Node {
                name: format!("n{}", i + 1),
                sockets: 1,
                cores_per_socket: 16,
                threads_per_core: 1,
                memory_mib: 64_000,
                features: vec![],
                weight: 1,
                gpus: vec![],
                gpu_links: None,
                state: NodeAdminState::Up,
            })
            .collect();
        Cluster::new(
            nodes,
            vec![Partition {
                default: true,
                ..Partition::new("p", part.iter().map(|&i| NodeId::from_idx(i)).collect())
            }],
            vec![],
        )
    }

    /// Where a 2-CPU job goes when n1 has 4 cores busy, with `avoid` and a
    /// drained n3 as given.
    fn two_cpu_job_on(c: &Cluster, drain_n3: bool, avoid: Option<&[bool]>) -> String {
        let p = test_params();
        let mut s = ClusterState::new(c);
        let n1 = NodeId::from_idx(0);
        s.allocate(
            c,
            &Allocation {
                nodes: vec![NodeAlloc {
                    node: n1,
                    cores: CoreSet::first(4),
                    cpus: 4,
                    mem_mib: 4_000,
                    gpus: 0,
                    tasks: 1,
                    share: None,
                }],
                exclusive: false,
            },
        )
        .expect("free");
        if drain_n3 {
            s.set_admin(NodeId::from_idx(2), NodeAdminState::Drain);
        }
        let r = JobRequest {
            min_nodes: 1,
            max_nodes: 1,
            cpus_per_task: 2,
            ..JobRequest::default()
        };
        let a = job_test(
            &mut SelectCache::default(),
            c,
            &p,
            &r,
            PartId::from_idx(0),
            View::Now(&s, avoid),
        )
        .expect("fits");
        c.node(a.nodes[0].node).name.clone()
    }

    /// `_eval_nodes` walks the whole node table: a node outside the job's
    /// node map (another partition, drained, reserved by backfill) ends the
    /// current set, and the sufficient set with the fewest CPUs wins before
    /// best fit looks inside it. With n1-n4 in one set, best fit takes n1
    /// (12 free CPUs); cut before n4, the sets {n1, n2} (28) and {n4} (16)
    /// give n4 (recorded on Slurm 22.05: conformance case `node_sets`).
    #[test]
    fn nodes_outside_the_node_map_end_node_sets() {
        let all = cpu_cluster(&[0, 1, 2, 3]);
        assert_eq!(two_cpu_job_on(&all, false, None), "n1");
        // n3 in another partition.
        let gap = cpu_cluster(&[0, 1, 3]);
        assert_eq!(two_cpu_job_on(&gap, false, None), "n4");
        // n3 drained.
        assert_eq!(two_cpu_job_on(&all, true, None), "n4");
        // n3 kept for a higher-priority job's backfill reservation.
        let avoid = [false, false, true, false];
        assert_eq!(two_cpu_job_on(&all, false, Some(&avoid)), "n4");
    }
}
