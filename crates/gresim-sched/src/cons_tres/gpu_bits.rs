//! The GPU indices on one node: `_set_node_bits` ([`node_bits`], per node),
//! `_set_task_bits` ([`task_bits`], per task), `_set_job_bits1` and
//! `_set_job_bits2` ([`job_bits1`], [`job_bits2`], per job, with NVLink
//! trimming), the link levels they share ([`link_levels`]) and the device
//! masks by socket.

use gresim_model::Node;

use super::{n_sockets, MAX_SOCK};

/// The device masks of a node: devices close to no particular socket (no
/// `Cores=`), and per socket, from one walk over the node's devices.
pub(super) struct Masks {
    pub(super) any: u64,
    pub(super) sock: [u64; MAX_SOCK],
}

impl Masks {
    pub(super) fn of(node: &Node) -> Masks {
        let mut mk = Masks {
            any: 0,
            sock: [0; MAX_SOCK],
        };
        for (i, d) in node.gpus.iter().enumerate().take(64) {
            match d.socket {
                None => mk.any |= 1 << i,
                Some(x) if usize::from(x) < MAX_SOCK => mk.sock[usize::from(x)] |= 1 << i,
                Some(_) => {}
            }
        }
        mk
    }
}

/// Links count between devices `a` and `b` (0 when unknown).
pub(super) fn link(node: &Node, a: usize, b: usize) -> u32 {
    node.gpu_links
        .as_ref()
        .and_then(|l| l.get(a))
        .and_then(|r| r.get(b))
        .map_or(0, |&v| u32::from(v))
}

pub(super) fn links_known(node: &Node) -> bool {
    node.gpu_links
        .as_ref()
        .is_some_and(|l| l.len() == node.gpus.len())
}

/// Iterates set bits of `m` in index order.
pub(super) fn bits(m: u64) -> impl Iterator<Item = usize> {
    gresim_model::state::gpu_indices(m).map(usize::from)
}

/// Link counts from each device to the `chosen` ones, scaled to ≤ 4 levels
/// (`links_cnt` in `_set_node_bits`/`_set_task_bits`). Returns the best level.
pub(super) fn link_levels(node: &Node, chosen: u64, free: u64, out: &mut [u32; 64]) -> u32 {
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
pub(super) fn node_bits(node: &Node, free: u64, used_sock: u64, nsock: usize, want: u32) -> u64 {
    let mk = Masks::of(node);
    let any_m = mk.any;
    let mut sel = 0u64;
    let mut cnt = 0u32;
    // Step 1: s = -1 (any socket), then each used socket: one GPU each.
    for s in std::iter::once(None).chain((0..nsock).map(Some)) {
        if cnt >= want {
            break;
        }
        let m = match s {
            None => any_m,
            Some(s) if used_sock & (1 << s) != 0 => mk.sock[s],
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
                Some(s) if used_sock & (1 << s) != 0 => mk.sock[s],
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
            for g in bits(free & mk.sock[s] & !sel) {
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
pub(super) fn task_bits(
    node: &Node,
    free: u64,
    tasks_sock: &[u32; MAX_SOCK],
    nsock: usize,
    per_task: u32,
) -> u64 {
    let mk = Masks::of(node);
    let any_m = mk.any;
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
        for g in bits(free & mk.sock[s] & !sel) {
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
                Some(s) => mk.sock[s],
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
pub(super) fn job_bits1(
    node: &Node,
    free: u64,
    used_sock: u64,
    nsock: usize,
    max_gres: u32,
) -> u64 {
    let mk = Masks::of(node);
    let any_m = mk.any;
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
            Some(s) if used_sock & (1 << s) != 0 => mk.sock[s],
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
            if let Some(g) = bits(free & mk.sock[s]).next() {
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
pub(super) fn job_bits2(node: &Node, free: u64, chosen: u64, want: u32) -> u64 {
    let known = links_known(node);
    let anchor = bits(chosen).next();
    let mut best = 0u32;
    if let (true, Some(a)) = (known, anchor) {
        for s in 0..node.gpus.len().min(64) {
            best = best.max(link(node, s, a));
        }
    }
    let mk = Masks::of(node);
    let any_m = mk.any;
    let nsock = n_sockets(node);
    let mut sel = 0u64;
    let mut cnt = 0u32;
    for l in (0..=best).rev() {
        for s in std::iter::once(None).chain((0..nsock).map(Some)) {
            let m = match s {
                None => any_m,
                Some(s) => mk.sock[s],
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
