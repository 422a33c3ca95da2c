//! `_eval_nodes_topo()` of Slurm 22.05's select/cons_tres (job_test.c),
//! the node choice `_eval_nodes()` hands over to when topology/tree gave a
//! switch table (`switch_record_cnt`), written from its behaviour:
//!
//! 1. The top switch: among switches with enough usable nodes, the one of
//!    the highest level whose nodes include the lowest scheduling weight
//!    (with required nodes: the highest-level switch holding one of them).
//! 2. The best nodes: under the top switch, whole groups of equal weight,
//!    lowest first, until they hold the job; all but the last group's
//!    nodes are taken outright (`req2_nodes_bitmap`).
//! 3. Leaf switches already holding a taken node give their nodes first;
//!    then leaves one at a time by `_topo_choose_best_switch()`: nearest to
//!    the leaves in use (`switches_dist`), then by
//!    `_topo_compare_switches()`: a leaf that holds the rest alone before one
//!    that does not, the smallest such leaf, else the largest (comparing
//!    parents while those differ), then the lower level. Inside a leaf,
//!    nodes in node-table order.
//!
//! The caller ([`super::job_test`]) then applies `--switches`: a selection
//! over more leaves than the job asked for fails while the job still waits
//! (`best_switch = false` at `fini:`).

use gresim_model::switches::{SwitchTree, INFINITE};

use super::{cpus_to_use, enough_nodes, Cand, JobCtx};

/// What the selection has left to find (`rem_nodes`, `rem_cpus`, …).
/// Shared with topology/block's `_eval_nodes_block` (cons_tres/block.rs).
pub(super) struct Rem {
    pub(super) nodes: i64,
    pub(super) min_nodes: i64,
    pub(super) max_nodes: i64,
    pub(super) cpus: i64,
    pub(super) max_cpus: i64,
    pub(super) gres: i64,
}

impl Rem {
    /// Takes a node offering `avail` CPUs and `gpus` GPUs (`_cpus_to_use`
    /// and `gres_sched_add`, then the counters).
    pub(super) fn take(&mut self, j: &JobCtx<'_>, avail: u32, gpus: u32, per_job: bool) {
        let a = cpus_to_use(j, avail, self.max_cpus, self.min_nodes);
        if per_job {
            self.gres += i64::from(gpus);
        }
        self.nodes -= 1;
        self.min_nodes -= 1;
        self.max_nodes -= 1;
        self.cpus -= a;
        self.max_cpus -= a;
    }
}

/// `_topo_compare_switches()`: > 0 when leaf `i` is the better of `i` and `j`.
fn compare(t: &SwitchTree, mut i: usize, mut j: usize, rem: i64, cnt: &[i64]) -> i32 {
    // Slurm walks up while the parents differ; a root's parent is switch 0,
    // so a malformed walk could cycle: it stops after as many steps as
    // there are switches.
    for _ in 0..=t.switches.len() {
        let (i_fit, j_fit) = (cnt[i] >= rem, cnt[j] >= rem);
        if i_fit && j_fit {
            if cnt[i] < cnt[j] {
                return 1;
            }
            if cnt[i] > cnt[j] {
                return -1;
            }
            break;
        } else if i_fit {
            return 1;
        } else if j_fit {
            return -1;
        }
        let (pi, pj) = (t.switches[i].parent, t.switches[j].parent);
        if (pi != i || pj != j) && pi != pj {
            i = pi;
            j = pj;
            continue;
        }
        break;
    }
    if cnt[i] > cnt[j] {
        return 1;
    }
    if cnt[i] < cnt[j] {
        return -1;
    }
    match t.switches[i].level.cmp(&t.switches[j].level) {
        std::cmp::Ordering::Less => 1,
        std::cmp::Ordering::Greater => -1,
        std::cmp::Ordering::Equal => 0,
    }
}

/// `_topo_choose_best_switch()`.
fn choose(t: &SwitchTree, dist: &[u32], cnt: &[i64], rem: i64, i: usize, best: &mut Option<usize>) {
    let Some(b) = *best else {
        if cnt[i] > 0 && dist[i] < INFINITE {
            *best = Some(i);
        }
        return;
    };
    if dist[i] == INFINITE || cnt[i] == 0 {
        return;
    }
    let tcs = compare(t, i, b, rem, cnt);
    if (dist[i] < dist[b] && tcs >= 0) || (dist[i] == dist[b] && tcs > 0) {
        *best = Some(i);
    }
}

/// `_topo_add_dist()`.
fn add_dist(t: &SwitchTree, dist: &mut [u32], s: usize) {
    for (k, d) in dist.iter_mut().enumerate() {
        let x = t.dist[s][k];
        *d = if x == INFINITE || *d == INFINITE {
            INFINITE
        } else {
            d.saturating_add(x)
        };
    }
}

/// `_eval_nodes_topo()` over the candidates (`usable[i]`: still in the
/// node map). Returns the picked candidate indices, sorted.
pub(super) fn eval_nodes_topo(
    j: &JobCtx<'_>,
    t: &SwitchTree,
    cands: &[Cand],
    usable: &[bool],
    min_nodes: u32,
    max_nodes: u32,
    req_nodes: u32,
) -> Option<Vec<usize>> {
    let n = cands.len();
    let avail = |i: usize| -> u32 {
        if !usable[i] {
            return 0;
        }
        cands[i].eval.map_or(0, |e| e.cpus)
    };
    let gpus = |i: usize| cands[i].eval.map_or(0, |e| e.gpus);
    // The node map: usable candidates and the required nodes.
    let in_map: Vec<bool> = (0..n).map(|i| avail(i) > 0 || cands[i].required).collect();
    if (in_map.iter().filter(|x| **x).count() as u32) < min_nodes {
        return None;
    }
    let per_job = j.gres.per_job();
    let gres_goal = i64::from(j.gres.job_total());
    let (min_n, req_n) = (i64::from(min_nodes), i64::from(req_nodes));
    let min_cpus = i64::from(j.req.total_tasks(min_nodes.max(1))) * i64::from(j.cpt);
    let mut rem = Rem {
        nodes: if per_job {
            min_n.min(req_n)
        } else {
            min_n.max(req_n)
        },
        min_nodes: min_n,
        max_nodes: i64::from(max_nodes),
        cpus: min_cpus,
        max_cpus: min_cpus,
        gres: 0,
    };
    let done = |r: &Rem| r.nodes <= 0 && r.cpus <= 0 && (!per_job || r.gres >= gres_goal);

    // Required nodes go in first; every node of the map joins the group of
    // its scheduling weight.
    let has_req = cands.iter().any(|c| c.required);
    let mut avail_cpu = vec![0u32; n];
    let mut chosen = vec![false; n];
    let mut groups: Vec<(u64, Vec<usize>)> = Vec::new();
    for i in 0..n {
        if !in_map[i] {
            continue;
        }
        let weight = cands[i].eval.map_or(u64::MAX, |e| e.weight);
        if cands[i].required {
            let a = avail(i);
            if a == 0 {
                return None;
            }
            avail_cpu[i] = a;
            rem.take(j, a, gpus(i), per_job);
        }
        match groups.iter_mut().find(|g| g.0 == weight) {
            Some(g) => g.1.push(i),
            None => groups.push((weight, vec![i])),
        }
    }
    groups.sort_by_key(|g| g.0);

    // The top switch.
    let ns = t.switches.len();
    let mut sw_nodes: Vec<Vec<usize>> = (0..ns)
        .map(|s| {
            (0..n)
                .filter(|&i| in_map[i] && t.holds(s, cands[i].id.idx()))
                .collect()
        })
        .collect();
    let mut required = vec![false; ns];
    let mut top: Option<usize> = None;
    let mut top_weight = 0u64;
    for s in 0..ns {
        let level = t.switches[s].level;
        if has_req && sw_nodes[s].iter().any(|&i| cands[i].required) {
            required[s] = true;
            if top.is_none_or(|x| level > t.switches[x].level) {
                top = Some(s);
            }
        }
        if !enough_nodes(sw_nodes[s].len() as i64, rem.nodes, min_n, req_n) {
            continue;
        }
        if !has_req {
            let first = groups
                .iter()
                .find(|g| g.1.iter().any(|i| sw_nodes[s].contains(i)));
            if let Some(g) = first {
                if top.is_none_or(|x| level >= t.switches[x].level && g.0 <= top_weight) {
                    top = Some(s);
                    top_weight = g.0;
                }
            }
        }
    }
    let top = top?;
    let mut under_top = vec![false; n];
    for &i in &sw_nodes[top] {
        under_top[i] = true;
    }
    if has_req {
        if (0..n).any(|i| cands[i].required && !under_top[i]) {
            return None;
        }
        for i in 0..n {
            chosen[i] = cands[i].required;
        }
    }
    for (s, nodes) in sw_nodes.iter_mut().enumerate() {
        if s != top {
            nodes.retain(|&i| under_top[i]);
        }
    }
    if has_req {
        if done(&rem) {
            return finish(chosen, min_n);
        }
        if rem.max_nodes <= 0 {
            return None;
        }
    }

    // The best nodes: weight groups under the top switch until sufficient.
    let mut best = vec![false; n];
    let mut req2: Option<Vec<bool>> = None;
    let (mut best_cpus, mut best_cnt, mut best_gres) = (0i64, 0i64, 0i64);
    let mut sufficient = false;
    for g in &groups {
        if sufficient {
            break;
        }
        if best_cnt > 0 {
            let r = req2.get_or_insert_with(|| vec![false; n]);
            for i in 0..n {
                r[i] |= best[i];
            }
        }
        for &i in &g.1 {
            if avail_cpu[i] > 0 || !under_top[i] {
                continue;
            }
            let a = avail(i);
            if a == 0 {
                continue;
            }
            best[i] = true;
            avail_cpu[i] = a;
            best_cpus += i64::from(a);
            best_cnt += 1;
            if per_job {
                best_gres += i64::from(gpus(i));
            }
        }
        sufficient = best_cpus >= rem.cpus && enough_nodes(best_cnt, rem.nodes, min_n, req_n);
        if sufficient && per_job {
            sufficient = rem.gres + best_gres >= gres_goal;
        }
    }
    if !sufficient {
        return None;
    }
    if let Some(r2) = &req2 {
        for i in 0..n {
            if rem.max_nodes <= 0 {
                break;
            }
            if r2[i] {
                rem.take(j, avail_cpu[i], gpus(i), per_job);
            }
        }
        for s in 0..ns {
            if !required[s] && sw_nodes[s].iter().any(|&i| r2[i]) {
                required[s] = true;
            }
        }
        for i in 0..n {
            chosen[i] |= r2[i];
        }
        if done(&rem) {
            return finish(chosen, min_n);
        }
        if rem.max_nodes <= 0 {
            return None;
        }
    }

    // Switch node counts over the best nodes and those taken.
    for i in 0..n {
        best[i] |= chosen[i];
    }
    let mut cnt = vec![0i64; ns];
    for s in 0..ns {
        sw_nodes[s].retain(|&i| best[i]);
        cnt[s] = sw_nodes[s].len() as i64;
    }
    let leaf = |s: usize| t.switches[s].level == 0;

    // Leaves already in use give their other nodes first.
    if has_req || req2.is_some() {
        for s in 0..ns {
            if !required[s] || !leaf(s) {
                continue;
            }
            if take_nodes(
                j,
                &sw_nodes[s],
                &mut chosen,
                &avail_cpu,
                &gpus,
                &mut rem,
                false,
                &done,
            ) {
                return finish(chosen, min_n);
            }
        }
    }

    // Then more leaves, one at a time.
    let mut dist = vec![0u32; ns];
    for s in 0..ns {
        if required[s] {
            add_dist(t, &mut dist, s);
        }
    }
    let mut prev = rem.nodes + 1;
    while prev != rem.nodes {
        prev = rem.nodes;
        let mut pick = None;
        for s in 0..ns {
            if required[s] || !leaf(s) {
                continue;
            }
            choose(t, &dist, &cnt, rem.nodes, s, &mut pick);
        }
        let Some(s) = pick else { break };
        add_dist(t, &mut dist, s);
        if take_nodes(
            j,
            &sw_nodes[s],
            &mut chosen,
            &avail_cpu,
            &gpus,
            &mut rem,
            true,
            &done,
        ) {
            return finish(chosen, min_n);
        }
        cnt[s] = 0;
    }
    if rem.min_nodes <= 0 && rem.cpus <= 0 && (!per_job || rem.gres >= gres_goal) {
        return finish(chosen, min_n);
    }
    None
}

/// Takes the untaken nodes of a switch with CPUs to offer, in node-table
/// order (stopping at the job's node limit when `bounded`, as the loop over
/// new leaves does and the one over leaves in use does not). True once the
/// job has what it needs.
#[allow(clippy::too_many_arguments)]
fn take_nodes(
    j: &JobCtx<'_>,
    nodes: &[usize],
    chosen: &mut [bool],
    avail_cpu: &[u32],
    gpus: &impl Fn(usize) -> u32,
    rem: &mut Rem,
    bounded: bool,
    done: &impl Fn(&Rem) -> bool,
) -> bool {
    let per_job = j.gres.per_job();
    for &i in nodes {
        if bounded && rem.max_nodes <= 0 {
            break;
        }
        if chosen[i] || avail_cpu[i] == 0 {
            continue;
        }
        rem.take(j, avail_cpu[i], gpus(i), per_job);
        chosen[i] = true;
        if done(rem) {
            return true;
        }
    }
    false
}

/// The chosen candidates, in index order (at least `min_n` of them).
pub(super) fn finish(chosen: Vec<bool>, min_n: i64) -> Option<Vec<usize>> {
    let picked: Vec<usize> = (0..chosen.len()).filter(|&i| chosen[i]).collect();
    ((picked.len() as i64) >= min_n).then_some(picked)
}

#[cfg(test)]
mod tests;
