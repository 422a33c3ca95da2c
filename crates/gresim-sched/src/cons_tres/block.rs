//! topology/block's node choice, `eval_nodes_block()`: a named option beyond
//! Slurm 22.05, written from the behaviour of slurm-24-05-8-1's
//! src/plugins/topology/block/eval_nodes_block.c (23.11 has the same
//! function as job_test.c `_eval_nodes_block()`, without segments; 25.05's
//! is unchanged in substance). Not recorded on real Slurm: Debian's Slurm
//! here is 22.05. docs/topology.md, "topology/block".
//!
//! Base blocks aggregate by their order in topology.conf: a block of level
//! k is 2^k consecutive base blocks. For a job of N nodes (its minimum):
//!
//! 1. Levels: the smallest enforced level (`BlockSizes`) of at least
//!    ⌈N / base size⌉ base blocks is the job's *block* (none: the whole
//!    system); the largest enforced level below the one needed is its
//!    *lower-level block* (`llblock`), and the job may span at most
//!    ⌈N / llblock size⌉ of those.
//! 2. The block: among blocks with enough nodes (counting only their
//!    fullest allowed llblocks) and CPUs, the one with the lowest-weight
//!    nodes, then the fewest usable nodes, the later of equals (with `-w`:
//!    the first block holding a required node).
//! 3. Inside it, whole groups of equal weight, lowest first, until they
//!    hold the job; all but the last group's nodes are taken outright.
//! 4. Base blocks one at a time by `_choose_best_bblock()`: within an
//!    llblock already used, else the llblock that holds the rest (the
//!    smallest such) or the fullest; then a base block that holds the rest
//!    (the smallest, the later of equals) or the fullest. Nodes in a base
//!    block in node-table order; no more llblocks than allowed.
//!
//! `--segment=S`: the job's N nodes come as N/S segments of S nodes, each
//! chosen as above on the nodes the earlier segments left (S may not exceed
//! the base block size, so each segment lies in one base block; N must be a
//! multiple of S, and `-w` goes with one segment only; otherwise the job
//! never fits). As in the source, a per-job GPU count (`--gpus`) is counted
//! from the first segment on, not per segment.
//!
//! The helpers are 22.05's, as in `_eval_nodes_topo` (cons_tres/topo.rs):
//! `_cpus_to_use` and the node evaluation stand in for 24.05's
//! `eval_nodes_cpus_to_use()` and `eval_nodes_select_cores()`.

use gresim_model::switches::{BlockLevels, SwitchTree, MAX_BLOCK_LEVELS};

use super::topo::{finish, Rem};
use super::{enough_nodes, Cand, JobCtx};

/// Whether some node of the node map is in a block (topology_block.c
/// `topology_p_eval_nodes()`: otherwise, say for a partition outside the
/// blocks, the ordinary node choice applies).
pub(super) fn applies(t: &SwitchTree, cands: &[Cand], usable: &[bool]) -> bool {
    cands.iter().enumerate().any(|(i, c)| {
        (c.required || (usable[i] && c.eval.is_some_and(|e| e.cpus > 0)))
            && t.leaf_of(c.id.idx()).is_some()
    })
}

/// What stays the same for every segment of one evaluation.
struct Plan {
    /// Base blocks.
    nb: usize,
    /// Base blocks per block of the job's level, blocks.
    bpb: usize,
    block_cnt: usize,
    /// The llblock level, base blocks per llblock, llblocks.
    ll_level: u32,
    bpl: usize,
    ll_cnt: usize,
    /// Whether llblocks are counted (`nodes_on_llblock` exists).
    ll_acct: bool,
    /// The most llblocks a segment may span (`max_llblock`).
    max_ll: i64,
    /// Nodes per segment (the job's minimum without `--segment`), segments.
    seg_nodes: i64,
    segments: i64,
    min_n: i64,
    req_n: i64,
    max_n: i64,
    min_cpus: i64,
    per_job: bool,
    gres_goal: i64,
}

/// `eval_nodes_block()` over the candidates (`usable[i]`: still in the
/// node map); `t` holds the base blocks. Returns the picked candidate
/// indices, sorted.
#[allow(clippy::too_many_arguments)]
pub(super) fn eval_nodes_block(
    j: &JobCtx<'_>,
    t: &SwitchTree,
    b: BlockLevels,
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
    let in_map: Vec<bool> = (0..n).map(|i| avail(i) > 0 || cands[i].required).collect();
    if (in_map.iter().filter(|x| **x).count() as u32) < min_nodes {
        return None;
    }
    let bb: Vec<Option<usize>> = cands.iter().map(|c| t.leaf_of(c.id.idx())).collect();
    let (min_n, req_n) = (i64::from(min_nodes), i64::from(req_nodes));
    let base = i64::from(b.base_nodes.max(1));
    // "Always use min_nodes".
    let job_nodes = min_n.min(req_n);
    let seg = i64::from(j.req.segment.unwrap_or(0));
    if seg > base || (seg > 0 && job_nodes % seg != 0) {
        return None;
    }
    let (segments, seg_nodes) = if seg > 0 {
        (job_nodes / seg, seg)
    } else {
        (1, job_nodes)
    };

    // The job's block level and its lower-level block.
    let needed = ((seg_nodes + base - 1) / base).max(1);
    let mut want = 0u32;
    while (1i64 << want) < needed {
        want += 1;
    }
    let ll_level = (0..want.min(MAX_BLOCK_LEVELS))
        .rev()
        .find(|&l| b.has(l))
        .unwrap_or(0);
    let block_level = (want..MAX_BLOCK_LEVELS).find(|&l| b.has(l));
    let nb = t.switches.len();
    let bpl = 1usize << ll_level;
    let ll_size = bpl as i64 * base;
    let max_ll = (seg_nodes + ll_size - 1) / ll_size;
    let (bpb, block_cnt) = match block_level {
        None => (nb, 1),
        Some(l) => (1usize << l, nb.div_ceil(1usize << l)),
    };
    let plan = Plan {
        nb,
        bpb,
        block_cnt,
        ll_level,
        bpl,
        ll_cnt: nb.div_ceil(bpl),
        ll_acct: bpb as i64 != bpl as i64 * max_ll,
        max_ll,
        seg_nodes,
        segments,
        min_n,
        req_n,
        max_n: i64::from(max_nodes),
        min_cpus: i64::from(j.req.total_tasks(min_nodes.max(1))) * i64::from(j.cpt),
        per_job: j.gres.per_job(),
        gres_goal: i64::from(j.gres.job_total()),
    };

    // Required nodes: one segment only, all in blocks, within max_nodes.
    let req_cnt = cands.iter().filter(|c| c.required).count() as i64;
    if req_cnt > 0
        && (segments > 1
            || (0..n).any(|i| cands[i].required && bb[i].is_none())
            || req_cnt > plan.max_n)
    {
        return None;
    }

    let mut alloc = vec![false; n];
    let mut gres = 0i64;
    for _ in 0..segments {
        let map: Vec<bool> = (0..n).map(|i| in_map[i] && !alloc[i]).collect();
        let (chosen, g) = segment(j, &plan, cands, &avail, &map, &bb, gres)?;
        gres = g;
        for (a, c) in alloc.iter_mut().zip(chosen) {
            *a |= c;
        }
    }
    finish(alloc, min_n)
}

/// Whether base blocks `a` (none: -1 in Slurm) and `k` share an llblock
/// (`_bblocks_in_same_block()`).
fn same_ll(a: Option<usize>, k: usize, level: u32) -> bool {
    a.is_some_and(|a| a >> level == k >> level)
}

/// One pass of `eval_nodes_block()` (one segment) over the node map `map`;
/// `gres` GPUs of a per-job count were found by earlier segments. Returns
/// the chosen candidates and the per-job GPUs found so far.
fn segment(
    j: &JobCtx<'_>,
    p: &Plan,
    cands: &[Cand],
    avail: &impl Fn(usize) -> u32,
    map: &[bool],
    bb: &[Option<usize>],
    gres: i64,
) -> Option<(Vec<bool>, i64)> {
    let n = cands.len();
    let gpus = |i: usize| cands[i].eval.map_or(0, |e| e.gpus);
    let mut rem = Rem {
        nodes: p.seg_nodes,
        min_nodes: p.min_n / p.segments,
        max_nodes: p.max_n / p.segments,
        cpus: p.min_cpus / p.segments,
        max_cpus: p.min_cpus / p.segments,
        gres,
    };
    let (per_job, goal) = (p.per_job, p.gres_goal);
    let done = |r: &Rem| r.nodes <= 0 && r.cpus <= 0 && (!per_job || r.gres >= goal);
    let mut max_ll = p.max_ll;
    if !map.iter().any(|x| *x) {
        return None;
    }
    let has_req = (0..n).any(|i| map[i] && cands[i].required);

    // Required nodes go in first; weight groups over the map.
    let mut chosen = vec![false; n];
    let mut avail_cpu = vec![0u32; n];
    let mut groups: Vec<(u64, Vec<usize>)> = Vec::new();
    let weight = |i: usize| cands[i].eval.map_or(u64::MAX, |e| e.weight);
    for i in 0..n {
        if !map[i] {
            continue;
        }
        if cands[i].required {
            let a = avail(i);
            if a == 0 {
                return None;
            }
            avail_cpu[i] = a;
            rem.take(j, a, gpus(i), per_job);
            chosen[i] = true;
        }
        let w = weight(i);
        match groups.iter_mut().find(|g| g.0 == w) {
            Some(g) => g.1.push(i),
            None => groups.push((w, vec![i])),
        }
    }
    groups.sort_by_key(|g| g.0);

    // Per block: usable nodes, their CPUs and lowest weight; per llblock
    // its usable nodes.
    let mut bnc = vec![0i64; p.block_cnt];
    let mut bcpus = vec![0i64; p.block_cnt];
    let mut bweight = vec![u64::MAX; p.block_cnt];
    let mut breq = vec![false; p.block_cnt];
    let mut nol = vec![0i64; if p.ll_acct { p.ll_cnt } else { 0 }];
    for i in 0..n {
        let Some(k) = bb[i].filter(|_| map[i]) else {
            continue;
        };
        let bi = k / p.bpb;
        bnc[bi] += 1;
        bcpus[bi] += i64::from(avail(i));
        bweight[bi] = bweight[bi].min(weight(i));
        breq[bi] |= cands[i].required;
        if p.ll_acct {
            nol[k / p.bpl] += 1;
        }
    }

    // The block.
    let mut block_inx: Option<usize> = None;
    let (mut low_weight, mut low_cnt) = (0u64, 0i64);
    for bi in 0..p.block_cnt {
        let avail_bnc = if p.ll_acct {
            // The fullest llblocks the job may span.
            let llpb = p.bpb / p.bpl;
            let off = bi * llpb;
            let cnt = llpb.min(p.ll_cnt - off);
            let mut c = nol[off..off + cnt].to_vec();
            c.sort_unstable_by(|a, b| b.cmp(a));
            c.iter().take(max_ll.clamp(0, cnt as i64) as usize).sum()
        } else {
            bnc[bi]
        };
        if has_req && breq[bi] {
            block_inx = Some(bi);
            break;
        }
        if !enough_nodes(avail_bnc, rem.nodes, p.min_n, p.req_n) || rem.cpus > bcpus[bi] {
            continue;
        }
        if !has_req && bnc[bi] > 0 {
            let w = bweight[bi];
            if block_inx.is_none() || w < low_weight || (w == low_weight && bnc[bi] <= low_cnt) {
                block_inx = Some(bi);
                low_weight = w;
                low_cnt = bnc[bi];
            }
        }
    }
    let bi = block_inx?;
    let first = bi * p.bpb;
    let last = ((bi + 1) * p.bpb).min(p.nb);
    // The block's nodes of the map, per base block, in node-table order.
    let mut bb_nodes: Vec<Vec<usize>> = vec![Vec::new(); last - first];
    let mut in_block = vec![false; n];
    for i in 0..n {
        if let Some(k) = bb[i].filter(|&k| map[i] && (first..last).contains(&k)) {
            bb_nodes[k - first].push(i);
            in_block[i] = true;
        }
    }
    let mut bb_req = vec![false; last - first];

    if has_req {
        if (0..n).any(|i| map[i] && cands[i].required && !in_block[i]) {
            return None;
        }
        if p.ll_acct {
            let mut prev = None;
            for k in first..last {
                if bb_nodes[k - first].iter().any(|&i| cands[i].required) {
                    bb_req[k - first] = true;
                    if !same_ll(prev, k, p.ll_level) {
                        max_ll -= 1;
                        prev = Some(k);
                    }
                }
            }
        }
        if max_ll < 0 {
            return None;
        }
        if done(&rem) {
            return Some((chosen, rem.gres));
        }
        if rem.max_nodes <= 0 {
            return None;
        }
    }

    // The best nodes: weight groups inside the block until they hold the job.
    let mut best = vec![false; n];
    let mut req2: Option<Vec<bool>> = None;
    let (mut best_cpus, mut best_cnt, mut best_gres) = (0i64, 0i64, 0i64);
    let (mut sufficient, mut requested) = (false, false);
    for g in &groups {
        if requested {
            break;
        }
        if best_cnt > 0 {
            let r = req2.get_or_insert_with(|| vec![false; n]);
            for i in 0..n {
                r[i] |= best[i];
            }
        }
        for &i in &g.1 {
            if cands[i].required || !in_block[i] {
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
        let gres_ok = !per_job || rem.gres + best_gres >= goal;
        if !sufficient {
            sufficient = best_cpus >= rem.cpus
                && enough_nodes(best_cnt, rem.nodes, p.min_n, p.req_n)
                && gres_ok;
        }
        requested = best_cnt >= rem.nodes && best_cpus >= rem.cpus && gres_ok;
    }
    if !sufficient {
        return None;
    }

    // All but the last weight group are taken like required nodes.
    if let Some(r2) = &req2 {
        for i in 0..n {
            if rem.max_nodes <= 0 {
                break;
            }
            if r2[i] {
                rem.take(j, avail_cpu[i], gpus(i), per_job);
            }
        }
        for i in 0..n {
            chosen[i] |= r2[i];
        }
        if done(&rem) {
            return Some((chosen, rem.gres));
        }
        if rem.max_nodes <= 0 {
            return None;
        }
        let mut prev = None;
        for k in first..last {
            if bb_req[k - first] {
                prev = Some(k);
                continue;
            }
            if bb_nodes[k - first].iter().any(|&i| r2[i]) {
                bb_req[k - first] = true;
                if !same_ll(prev, k, p.ll_level) {
                    max_ll -= 1;
                    prev = Some(k);
                }
            }
        }
    }
    if max_ll < 0 {
        return None;
    }

    // Base blocks already in use give their other best nodes first.
    if has_req || req2.is_some() {
        for k in first..last {
            if !bb_req[k - first] {
                continue;
            }
            for &i in &bb_nodes[k - first] {
                if !best[i] || chosen[i] || avail_cpu[i] == 0 {
                    continue;
                }
                rem.take(j, avail_cpu[i], gpus(i), per_job);
                chosen[i] = true;
                if done(&rem) {
                    return Some((chosen, rem.gres));
                }
            }
        }
    }

    // Best nodes per free base block and per llblock.
    let mut nob = vec![0i64; last - first];
    if p.ll_acct {
        nol.iter_mut().for_each(|c| *c = 0);
    }
    for k in first..last {
        if bb_req[k - first] {
            continue;
        }
        nob[k - first] = bb_nodes[k - first].iter().filter(|&&i| best[i]).count() as i64;
        if p.ll_acct {
            nol[k / p.bpl] += nob[k - first];
        }
    }

    // Then more base blocks, one at a time.
    let mut prev_rem = rem.nodes + 1;
    loop {
        if prev_rem == rem.nodes {
            break;
        }
        prev_rem = rem.nodes;
        let mut pick = Pick {
            inx: None,
            fit: false,
            same: true,
        };
        for k in first..last {
            if !bb_req[k - first] {
                choose(
                    p,
                    first,
                    &bb_req,
                    rem.nodes,
                    &nob,
                    p.ll_acct.then_some(&nol[..]),
                    k,
                    &mut pick,
                );
            }
        }
        let Some(k) = pick.inx else { break };
        if max_ll <= 0 && !pick.same {
            break;
        }
        bb_req[k - first] = true;
        for &i in &bb_nodes[k - first] {
            if rem.max_nodes <= 0 {
                break;
            }
            if !best[i] || chosen[i] || avail_cpu[i] == 0 {
                continue;
            }
            rem.take(j, avail_cpu[i], gpus(i), per_job);
            chosen[i] = true;
            if done(&rem) {
                return Some((chosen, rem.gres));
            }
        }
        if !pick.same {
            max_ll -= 1;
        }
    }
    (rem.min_nodes <= 0 && rem.cpus <= 0 && (!per_job || rem.gres >= goal))
        .then_some((chosen, rem.gres))
}

/// The base block `_choose_best_bblock()` holds so far.
struct Pick {
    inx: Option<usize>,
    fit: bool,
    /// Its llblock already holds a base block in use.
    same: bool,
}

/// `_choose_best_bblock()`: whether base block `k` replaces the pick. `nob`
/// (indexed from `first`) and `nol` count best nodes of free base blocks.
#[allow(clippy::too_many_arguments)]
fn choose(
    p: &Plan,
    first: usize,
    bb_req: &[bool],
    rem: i64,
    nob: &[i64],
    nol: Option<&[i64]>,
    k: usize,
    pick: &mut Pick,
) {
    let fit = nob[k - first] >= rem;
    if let Some(nol) = nol.filter(|_| !same_ll(pick.inx, k, p.ll_level)) {
        // Fewest llblocks: one already in use, else one that holds the
        // rest (the smallest), else the fullest.
        let lo = (k >> p.ll_level) << p.ll_level;
        let hi = (lo + p.bpl).min(p.nb);
        let same = (lo..hi).any(|x| x >= first && bb_req.get(x - first).copied().unwrap_or(false));
        let Some(b) = pick.inx else {
            *pick = Pick {
                inx: Some(k),
                fit,
                same,
            };
            return;
        };
        if same && !pick.same {
            *pick = Pick {
                inx: Some(k),
                fit,
                same,
            };
            return;
        }
        if !same && pick.same {
            return;
        }
        let ll = nol[k >> p.ll_level];
        let best_ll = nol[b >> p.ll_level];
        let (ll_fit, best_fit) = (ll >= rem, best_ll >= rem);
        let better = if ll_fit != best_fit {
            Some(ll_fit)
        } else if ll_fit {
            (ll != best_ll).then_some(ll < best_ll)
        } else {
            (ll != best_ll).then_some(ll > best_ll)
        };
        match better {
            Some(true) => {
                *pick = Pick {
                    inx: Some(k),
                    fit,
                    same,
                };
                return;
            }
            Some(false) => return,
            None => {}
        }
    }
    // Fewest base blocks: one that holds the rest (the smallest, the later
    // of equals), else the fullest (the later of equals).
    let take = match pick.inx {
        None => true,
        Some(b) => {
            let (cur, best) = (nob[k - first], nob[b - first]);
            (fit && !pick.fit) || (!fit && !pick.fit && cur >= best) || (fit && cur <= best)
        }
    };
    if take {
        pick.inx = Some(k);
        pick.fit = fit;
    }
}

#[cfg(test)]
mod tests;
