//! From picked nodes to an allocation: the tasks per node
//! ([`distribute_into`]), the cores (`_cyclic_sync_core_bitmap`,
//! [`cyclic_cores`]), the GPU indices ([`finish_node`], through
//! `gpu_bits`), the per-job GPUs still missing, the cores for
//! `--cpus-per-gpu` and the memory ([`mem_for`]).

use gresim_model::job::{JobRequest, MemReq};
use gresim_model::state::{CoreSet, NodeUsage};
use gresim_model::{Allocation, Node, NodeAlloc, NodeId};

use super::{job_bits1, job_bits2, n_sockets, node_bits, task_bits, type_mask};
use super::{Cand, Eval, JobCtx, MAX_SOCK};

/// Turns picked candidates into an allocation: tasks, cores, memory, GPUs
/// (the tasks per node in `s`'s buffers).
pub(super) fn finish(
    j: &JobCtx<'_>,
    cands: &[Cand],
    picked: &[usize],
    s: &mut FitScratch,
) -> Option<Allocation> {
    #[cfg(test)]
    let simple = !s.general_only && one_core_shape(j);
    #[cfg(not(test))]
    let simple = one_core_shape(j);
    if simple {
        return finish_one_core(j, cands, picked);
    }
    finish_general(j, cands, picked, s)
}

/// True when every picked node gets one task of one CPU, which takes one
/// core, and GPUs only by per-node counts ([`finish_one_core`]): no
/// `--exclusive`, no `-n` or `--ntasks-per-node` (so one task per node), one
/// CPU per task, each GPU request a per-node count without a per-job one.
/// The benchmark's jobs (and most GPU jobs written with `--gpus-per-node`).
fn one_core_shape(j: &JobCtx<'_>) -> bool {
    !j.req.exclusive
        && j.req.ntasks.is_none()
        && j.req.ntasks_per_node.is_none()
        && j.cpt == 1
        && j.gres.iter().all(|g| g.per_node > 0 && g.per_job == 0)
}

/// [`finish_general`] where [`one_core_shape`] holds, without its general
/// machinery: one task per node ([`tasks_on`] without `-n`), so one core,
/// which [`cyclic_cores`] takes as the lowest usable core on the node's
/// sockets (else the lowest free one); its socket alone for
/// [`node_bits`]; no per-job GPUs, so `_set_job_bits2` has nothing to do;
/// then the `--cpus-per-gpu` cores and the memory as there. The proptest
/// `one_core_finish_equals_general` (cons_tres/tests.rs) compares the two.
fn finish_one_core(j: &JobCtx<'_>, cands: &[Cand], picked: &[usize]) -> Option<Allocation> {
    let mut nodes: Vec<NodeAlloc> = Vec::with_capacity(picked.len());
    for &ci in picked {
        let c = &cands[ci];
        let e = c.eval?;
        let u = &c.usage;
        let node = j.cluster.node(c.id);
        let tpc = u32::from(node.threads_per_core.max(1));
        let nsock = n_sockets(node);
        let cps = u32::from(node.cores_per_socket.max(1));
        // `cyclic_cores` for one core: the first socket with a usable core
        // gives its lowest, i.e. the lowest usable core below the sockets'
        // end; then the lowest free one.
        let first = e
            .cores
            .next_from(0)
            .filter(|&x| x < nsock as u32 * cps)
            .or_else(|| u.free_cores.next_from(0))?;
        let sock = usize::from(node.socket_of_core(first)).min(MAX_SOCK - 1);
        let used_sock = 1u64 << sock;
        let mut gpus = 0u64;
        for g in j.gres.iter() {
            let free = u.free_gpus & !gpus & type_mask(node, g.ty);
            gpus |= node_bits(node, free, used_sock, nsock, g.per_node);
        }
        let mut cores = CoreSet::default();
        cores.insert(first);
        let mut have = 1u32;
        if let Some(cpg) = j.req.cpus_per_gpu {
            let want = cpg.saturating_mul(gpus.count_ones()).div_ceil(tpc);
            if want > 1 {
                for src in [e.cores, u.free_cores] {
                    if have < want {
                        have += cores.add_lowest(&src, want - have);
                    }
                }
                if have < want {
                    return None;
                }
            }
        }
        let cpus = have * tpc;
        let mem = mem_for(j, node, cpus, gpus.count_ones());
        if mem > u.free_mem {
            return None;
        }
        nodes.push(NodeAlloc {
            node: c.id,
            cores,
            cpus,
            mem_mib: mem,
            gpus,
            tasks: 1,
            share: None,
        });
    }
    Some(Allocation {
        nodes,
        exclusive: false,
        row_use: j.row_use,
    })
}

/// [`finish`] for any request.
fn finish_general(
    j: &JobCtx<'_>,
    cands: &[Cand],
    picked: &[usize],
    s: &mut FitScratch,
) -> Option<Allocation> {
    let n = picked.len() as u32;
    if !distribute_into(j, cands, picked, &mut s.tasks, &mut s.cap) {
        return None;
    }
    let tasks = &s.tasks;
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
                // The lowest cores not taken yet, from the evaluated ones
                // first, then from all free ones.
                let mut have = cs.count();
                for src in [pool, cands[ci].usage.free_cores] {
                    if have < want {
                        have += cs.add_lowest(&src, want - have);
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
        row_use: j.row_use,
    })
}

/// Tasks per picked node, into `tasks` (`cap` is scratch): an even split
/// (the first `ntasks % n` nodes get one more), then, where a node cannot
/// hold its share because each task needs GPUs it does not have
/// (`--gpus-per-task`) or CPUs, the excess moves to the nodes after it
/// with room, as Slurm's task distribution only gives a node the tasks its
/// resources allow. False where no split fits.
fn distribute_into(
    j: &JobCtx<'_>,
    cands: &[Cand],
    picked: &[usize],
    tasks: &mut Vec<u32>,
    cap: &mut Vec<u32>,
) -> bool {
    let n = picked.len() as u32;
    tasks.clear();
    tasks.extend((0..n).map(|p| tasks_on(j.req, n, p)));
    if j.req.ntasks.is_none() || j.req.ntasks_per_node.is_some() {
        return true;
    }
    cap.clear();
    cap.extend(picked.iter().map(|&ci| {
        let c = &cands[ci];
        let node = j.cluster.node(c.id);
        let tpc = node.threads_per_core.max(1) as u32;
        let mut cap = (c.usage.free_cores.count() * tpc) / j.cpt.max(1);
        for g in j.gres.iter().filter(|g| g.per_task > 0) {
            let free = (c.usage.free_gpus & type_mask(node, g.ty)).count_ones();
            cap = cap.min(free / g.per_task);
        }
        cap
    }));
    let mut excess = 0u32;
    for (t, c) in tasks.iter_mut().zip(cap.iter()) {
        if *t > *c {
            excess += *t - *c;
            *t = (*c).max(1);
        }
    }
    for (t, c) in tasks.iter_mut().zip(cap.iter()) {
        if excess == 0 {
            break;
        }
        let room = c.saturating_sub(*t);
        let give = room.min(excess);
        *t += give;
        excess -= give;
    }
    excess == 0 && tasks.iter().zip(cap.iter()).all(|(t, c)| t <= c)
}

/// Buffers [`fits`] reuses across calls.
#[derive(Default)]
pub(super) struct FitScratch {
    tasks: Vec<u32>,
    cap: Vec<u32>,
    /// Tests: [`finish`] always takes [`finish_general`].
    #[cfg(test)]
    pub(super) general_only: bool,
}

/// Whether [`finish`] turns `picked` into an allocation, without making it:
/// a plan on a future state (backfill's reservations) needs only the nodes.
/// The answer is [`finish`]'s own, not a guess: `finish` can fail after
/// `_eval_nodes()` succeeded (tasks that the nodes' free cores cannot hold
/// once spread, memory per CPU for more CPUs than the evaluation counted,
/// per-job GPUs, `--cpus-per-gpu` cores), so each of its checks that can
/// fail is made here on counts, and only the choices that cannot fail are
/// left out:
///
/// * the tasks per node are [`distribute_into`]'s own, and fail where it does;
/// * cores: [`finish_node`] takes `ncores` cores, first by
///   [`cyclic_cores`] from the evaluated cores (a subset of the node's free
///   cores: `eval_node` only removes cores from them) and then the lowest
///   free ones; it has them exactly when the node has `ncores` free cores,
///   whichever ones are chosen;
/// * GPUs, for the requests counted here (none; one per-node count alone; or
///   a whole node, which takes every free GPU): `_set_node_bits`
///   ([`node_bits`]) picks distinct free devices of the type until it has
///   the count, falling back to any free one, so it ends with
///   `min(count, free of the type)` and never fails; no per-job count, so
///   `_set_job_bits2` has nothing to do;
/// * `--cpus-per-gpu` grows the cores from the same free cores, so it fails
///   exactly when the node has fewer free cores than it wants;
/// * memory is [`mem_for`] of the CPUs and GPUs so counted, against the
///   node's free memory, as in `finish`.
///
/// Any other request (per-task or per-job GPUs, several GPU requests) is
/// answered by making the allocation. The property test
/// `nodes_only_selection_answers_as_the_full_one` (cons_tres/tests.rs)
/// compares the two on random clusters, states and requests.
pub(super) fn fits(j: &JobCtx<'_>, cands: &[Cand], picked: &[usize], s: &mut FitScratch) -> bool {
    let first = j.gres.iter().next();
    let counted = j.gres.iter().all(|g| g.per_job == 0)
        && (j.req.exclusive
            || j.gres.is_empty()
            || (j.gres.len == 1 && first.is_some_and(|g| g.per_task == 0 && g.per_node > 0)));
    if !counted {
        return finish(j, cands, picked, s).is_some();
    }
    if !distribute_into(j, cands, picked, &mut s.tasks, &mut s.cap) {
        return false;
    }
    for (&ci, &tasks) in picked.iter().zip(&s.tasks) {
        let c = &cands[ci];
        let Some(e) = c.eval else {
            return false;
        };
        let u = &c.usage;
        debug_assert!(e.cores.is_subset(&u.free_cores));
        let node = j.cluster.node(c.id);
        let tpc = u32::from(node.threads_per_core.max(1));
        let free = u.free_cores.count();
        let (cpus, gpus) = if j.req.exclusive {
            (free * tpc, u.free_gpus.count_ones())
        } else {
            let ncores = tasks.saturating_mul(j.cpt).div_ceil(tpc).max(1);
            if free < ncores {
                return false;
            }
            let gpus = first.map_or(0, |g| {
                g.per_node
                    .min((u.free_gpus & type_mask(node, g.ty)).count_ones())
            });
            let mut cores = ncores;
            if let Some(cpg) = j.req.cpus_per_gpu {
                let want = cpg.saturating_mul(gpus).div_ceil(tpc);
                if want > cores {
                    if free < want {
                        return false;
                    }
                    cores = want;
                }
            }
            (cores * tpc, gpus)
        };
        if mem_for(j, node, cpus, gpus) > u.free_mem {
            return false;
        }
    }
    true
}

/// Tasks on each of `n` nodes: the first `ntasks % n` nodes get one more.
pub(super) fn tasks_on(req: &JobRequest, n: u32, pos: u32) -> u32 {
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
pub(super) fn mem_for(j: &JobCtx<'_>, node: &Node, cpus: u32, gpus: u32) -> u64 {
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
pub(super) fn finish_node(
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
        // A whole node holds all its GPUs, which count towards a per-job
        // GPU request (`--gpus=N --exclusive`) like GPUs picked one by one.
        for (k, g) in j.gres.iter().enumerate() {
            if k < gres_done.len() {
                gres_done[k] += (u.free_gpus & type_mask(node, g.ty)).count_ones();
            }
        }
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
    left -= cores.add_lowest(&u.free_cores, left);
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
    if j.gres.iter().any(|g| g.per_task > 0) {
        // `_build_tasks_per_node_sock()` (22.05), which only
        // `_set_task_bits` reads: its `cpus_per_task` stays 1 outside an
        // error path, so each of the job's cores holds `threads_per_core`
        // tasks, counted socket by socket in core order (core ids are
        // socket-major, so in core order) until the node's tasks are all
        // placed, whatever `--cpus-per-task` says (`hold_c707` j02: 4 tasks
        // × 8 CPUs on cores 0-15 and 24-39 get GPUs 0-3, all on socket 0).
        let mut counted = 0u32;
        for c in cores.iter() {
            if counted >= tasks {
                break;
            }
            let s = usize::from(node.socket_of_core(c)).min(MAX_SOCK - 1);
            let add = tpc.min(tasks - counted);
            tasks_sock[s] += add;
            counted += add;
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
pub(super) fn cyclic_cores(
    node: &Node,
    avail: &CoreSet,
    ncores: u32,
    cpt: u32,
    tpc: u32,
) -> CoreSet {
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
            if next[s] < end(s) {
                next[s] = avail.next_from(next[s]).map_or(end(s), |c| c.min(end(s)));
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
