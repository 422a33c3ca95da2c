//! Node sets: the candidates of one selection ([`Cand`], a run of hopeless
//! nodes kept as one gap) and `_eval_nodes` in its default consecutive-set
//! mode ([`eval_nodes`], with [`enough_nodes`], [`better_set`] and
//! `_cpus_to_use()`), which hands topology/tree and topology/block to
//! `topo.rs` and `block.rs`.

use gresim_model::state::{CoreSet, NodeUsage};
use gresim_model::NodeId;

use super::{block, topo, Eval, JobCtx};

/// The usage of a candidate that stands for a run of nodes unable to hold
/// the job: no free core, so it evaluates to `None` like the nodes it replaces.
pub(super) const GAP_USAGE: NodeUsage = NodeUsage {
    free_cores: CoreSet::EMPTY,
    free_mem: 0,
    free_gpus: 0,
    jobs: 0,
    one_row: 0,
    shared: 0,
    exclusive: false,
    admin: gresim_model::NodeAdminState::Up,
};

/// Scratch for one job test: candidate nodes and their evaluations.
pub(super) struct Cand {
    pub(super) id: NodeId,
    pub(super) required: bool,
    pub(super) usage: NodeUsage,
    pub(super) eval: Option<Eval>,
}

impl Cand {
    /// A node the selection may take, not required, not yet evaluated.
    pub(super) fn open(id: NodeId, usage: NodeUsage) -> Cand {
        Cand {
            id,
            required: false,
            usage,
            eval: None,
        }
    }
    /// Stands for a run of nodes the job cannot use: it ends a node set.
    pub(super) fn gap(id: NodeId) -> Cand {
        Cand::open(id, GAP_USAGE)
    }
}

/// Appends a walked node to the candidates: a usable one as itself, one that
/// certainly cannot hold the job (`hopeless`) as a gap, a run of those as a
/// single gap.
#[inline]
pub(super) fn push_walked(
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
pub(super) struct Set {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) cpus: i64,
    pub(super) nodes: i64,
    pub(super) gres: i64,
    pub(super) req: Option<usize>,
    pub(super) weight: u64,
}

/// Buffers [`eval_nodes`] reuses across calls.
#[derive(Default)]
pub(super) struct EvalScratch {
    pub(super) taken: Vec<bool>,
    pub(super) avail_now: Vec<u32>,
    pub(super) sets: Vec<Set>,
}

pub(super) fn enough_nodes(avail: i64, rem: i64, min: i64, req: i64) -> bool {
    let needed = if req > min { rem + min - req } else { rem };
    avail >= needed
}

/// `_eval_nodes`' choice between two node sets of no required node: the
/// lower weight; at equal weight the first sufficient one, then the
/// sufficient one with fewer CPUs, and while none is sufficient the one with
/// more CPUs. `(weight, cpus, sufficient)` of the candidate and of the best
/// so far (`None`: there is none yet).
pub(super) fn better_set(cand: (u64, i64, bool), best: Option<(u64, i64, bool)>) -> bool {
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
pub(super) fn cpus_to_use(j: &JobCtx<'_>, avail: u32, rem_max: i64, min_rem: i64) -> i64 {
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
pub(super) fn eval_nodes(
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
    // Room for the nodes still wanted, so that a wide job's list is not
    // grown node by node.
    let mut picked: Vec<usize> = Vec::with_capacity((rem_nodes.max(1) as usize).min(n));
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
