//! Fair-share: decayed usage per association and QOS, and the fair-share
//! factor, as priority/multifactor's decay thread computes them every
//! `PriorityCalcPeriod` (`_decay_thread()`, `_apply_new_usage()` and
//! `_apply_decay()` in `priority_multifactor.c`; Fair Tree in
//! `fair_tree.c`, Slurm's default; the classic algorithm with
//! `PriorityFlags=NO_FAIR_TREE`).
//!
//! Usage is billing-seconds (CPU-seconds without `TRESBillingWeights`;
//! with them, the job's partition's weighted TRES), scaled by the QOS's
//! `UsageFactor`, decayed with the half-life
//! `PriorityDecayHalfLife`: every second multiplies it by
//! `1 - 0.693 / half_life`, Slurm's own linearised factor.

use gresim_model::accounting::{Accounting, AcctUsage, Decayed, JobAcct, Shares, TresArray};
use gresim_model::job::Time;

/// Slurm's per-second decay factor for a half-life in seconds (1: no decay).
pub fn decay_factor(half_life: u64) -> f64 {
    if half_life > 0 {
        1.0 - 0.693 / half_life as f64
    } else {
        1.0
    }
}

/// Multiplies every usage by `real_decay` (`_apply_decay()`); QOS with
/// `NoDecay` keep theirs.
pub fn apply_decay(acct: &Accounting, usage: &mut AcctUsage, real_decay: f64) {
    if real_decay == 1.0 {
        return;
    }
    let decay = |d: &mut Decayed| {
        d.raw *= real_decay;
        for t in &mut d.tres {
            *t *= real_decay;
        }
        d.wall *= real_decay;
    };
    usage.assoc_decayed.iter_mut().for_each(decay);
    for (q, d) in usage.qos_decayed.iter_mut().enumerate() {
        if !acct.qos[q].flags.no_decay {
            decay(d);
        }
    }
}

/// Forgets every association's and QOS's usage (`_reset_usage()`, every
/// `PriorityUsageResetPeriod`).
pub fn reset_usage(usage: &mut AcctUsage) {
    usage
        .assoc_decayed
        .iter_mut()
        .chain(usage.qos_decayed.iter_mut())
        .for_each(Decayed::reset);
}

/// A running job's use over `run_delta` seconds, added to its association
/// and every ancestor up to root, to its QOS and to its partition's QOS
/// when that is another (`_apply_new_usage()`). `billable` is the job's
/// billable TRES (`calc_job_billable_tres()`, its partition's
/// TRESBillingWeights); the job QOS's `UsageFactor` scales all of it.
pub fn accrue(
    acct: &Accounting,
    usage: &mut AcctUsage,
    job: JobAcct,
    tres: &TresArray,
    billable: f64,
    run_delta: u64,
    df: f64,
) {
    if run_delta == 0 {
        return;
    }
    let delta = run_delta as f64;
    let uf = acct.qos[job.qos as usize].usage_factor;
    let run_decay = delta * df.powf(delta) * uf;
    let run_nodecay = delta * uf;
    let nt = acct.tres_names.len();
    let add = |d: &mut Decayed, r: f64| {
        d.wall += r;
        d.raw += r * billable;
        for (i, t) in d.tres.iter_mut().enumerate().take(nt) {
            *t += r * tres[i] as f64;
        }
    };
    let part_qos = job.part_qos.filter(|&q| q != job.qos);
    for q in std::iter::once(job.qos).chain(part_qos) {
        let r = if acct.qos[q as usize].flags.no_decay {
            run_nodecay
        } else {
            run_decay
        };
        add(&mut usage.qos_decayed[q as usize], r);
    }
    for a in acct.lineage(job.assoc) {
        add(&mut usage.assoc_decayed[a as usize], run_decay);
    }
}

/// `PriorityUsageResetPeriod` (defined in the model, which slurm.conf is
/// read into).
pub use gresim_model::accounting::UsageReset;

/// The next reset after `last_reset` as the decay thread computes it at
/// `now` (`_next_reset()`, in UTC: simulated seconds are a Unix time). A
/// daily or weekly reset that was missed is moved up to the latest
/// boundary not more than one period before `now`. `None` for `None` and
/// `Now`, which the caller handles.
pub fn next_reset(period: UsageReset, last_reset: Time, now: Time) -> Option<Time> {
    use gresim_model::slurm_time::{civil_from_days, days_from_civil};
    const DAY: Time = 86_400;
    let days = (last_reset / DAY) as i64;
    let midnight = last_reset - last_reset % DAY;
    let (y, m, _) = civil_from_days(days);
    let first_of = |y: i64, m: u32| (days_from_civil(y, m, 1).max(0) as Time) * DAY;
    Some(match period {
        UsageReset::None | UsageReset::Now => return None,
        UsageReset::Daily => {
            let mut t = midnight + DAY;
            while t + DAY < now {
                t += DAY;
            }
            t
        }
        UsageReset::Weekly => {
            // 1970-01-01 was a Thursday (tm_wday 4).
            let wday = (days + 4).rem_euclid(7) as Time;
            let mut t = midnight + DAY * (7 - wday);
            while t + 7 * DAY < now {
                t += 7 * DAY;
            }
            t
        }
        UsageReset::Monthly if m < 12 => first_of(y, m + 1),
        UsageReset::Monthly => first_of(y + 1, 1),
        UsageReset::Quarterly => match m {
            1..=3 => first_of(y, 4),
            4..=6 => first_of(y, 7),
            7..=9 => first_of(y, 10),
            _ => first_of(y + 1, 1),
        },
        UsageReset::Yearly => first_of(y + 1, 1),
    })
}

/// Children of each association, in configuration order.
fn children(acct: &Accounting) -> Vec<Vec<usize>> {
    let mut ch = vec![Vec::new(); acct.assocs.len()];
    for (i, a) in acct.assocs.iter().enumerate() {
        if let Some(p) = a.parent {
            ch[p as usize].push(i);
        }
    }
    ch
}

fn raw_shares(acct: &Accounting, a: usize) -> Option<f64> {
    match acct.assocs[a].shares {
        Shares::Raw(n) => Some(f64::from(n)),
        Shares::Parent => None,
    }
}

/// Sum of the shares of `a`'s children, looking through `Fairshare=parent`
/// children (`_get_children_level_shares()`).
fn level_shares_of(acct: &Accounting, ch: &[Vec<usize>], a: usize) -> f64 {
    ch[a]
        .iter()
        .map(|&c| raw_shares(acct, c).unwrap_or_else(|| level_shares_of(acct, ch, c)))
        .sum()
}

/// Per association: the sum of its siblings' shares (its own included).
fn level_shares(acct: &Accounting, ch: &[Vec<usize>]) -> Vec<f64> {
    let mut ls = vec![0.0; acct.assocs.len()];
    for (p, kids) in ch.iter().enumerate() {
        let s = level_shares_of(acct, ch, p);
        for &c in kids {
            ls[c] = s;
        }
    }
    ls
}

/// Computes every association's fair-share factor into `usage.fairshare`
/// (and the figures `sshare` prints into `usage.shares`).
///
/// Classic fair-share takes the accounts' effective usage from
/// `accounts_before` when given: the decay thread computes it at the start
/// of its run, before it decays usage and adds the running jobs' use, and
/// the users' only when it reaches their jobs, after both
/// (`_set_children_usage_efctv()`, then `_get_fairshare_priority()`).
pub fn compute(
    acct: &Accounting,
    usage: &mut AcctUsage,
    fair_tree: bool,
    accounts_before: Option<&[gresim_model::accounting::ShareRow]>,
) {
    let ch = children(acct);
    let ls = level_shares(acct, &ch);
    let n = acct.assocs.len();
    let root_raw = usage.assoc_decayed[0].raw;
    let mut rows = vec![gresim_model::accounting::ShareRow::default(); n];
    rows[0].effective_usage = 1.0;
    for (i, row) in rows.iter_mut().enumerate() {
        row.raw_usage = usage.assoc_decayed[i].raw;
        row.norm_usage = if root_raw > 0.0 {
            (usage.assoc_decayed[i].raw / root_raw).min(1.0)
        } else {
            0.0
        };
    }
    if fair_tree {
        for i in 1..n {
            let s = raw_shares(acct, i).unwrap_or(0.0);
            rows[i].norm_shares = if ls[i] > 0.0 { s / ls[i] } else { 0.0 };
            let p = acct.assocs[i].parent.unwrap_or(0) as usize;
            let praw = usage.assoc_decayed[p].raw;
            rows[i].effective_usage = if praw > 0.0 {
                usage.assoc_decayed[i].raw / praw
            } else {
                0.0
            };
            rows[i].level_fs = match acct.assocs[i].shares {
                Shares::Parent if acct.assocs[i].user.is_some() => f64::INFINITY,
                Shares::Parent => f64::NAN,
                Shares::Raw(_) => {
                    let (s, u) = (rows[i].norm_shares, rows[i].effective_usage);
                    if s == 0.0 {
                        0.0
                    } else {
                        s / u
                    }
                }
            };
        }
        let users = acct.assocs.iter().filter(|a| a.user.is_some()).count() as u32;
        let mut rank = users;
        let mut rnt = users;
        let top: Vec<usize> = ch[0].clone();
        tree(
            acct,
            &ch,
            &mut rows,
            top,
            &mut rank,
            &mut rnt,
            false,
            users.max(1),
        );
    } else {
        // Classic: shares normalised down the tree, effective usage mixed
        // with the parent's (`_set_usage_efctv()`), 2^(-U/S).
        let mut order: Vec<usize> = (1..n).collect();
        let depth = |mut x: usize| {
            let mut d = 0;
            while let Some(p) = acct.assocs[x].parent {
                d += 1;
                x = p as usize;
            }
            d
        };
        order.sort_by_key(|&i| (depth(i), i));
        rows[0].norm_shares = 1.0;
        rows[0].effective_usage = 1.0;
        for i in order {
            let p = acct.assocs[i].parent.unwrap_or(0) as usize;
            if let (Some(before), None) = (accounts_before, &acct.assocs[i].user) {
                if let Some(b) = before.get(i) {
                    rows[i].norm_usage = b.norm_usage;
                    rows[i].effective_usage = b.effective_usage;
                    rows[i].norm_shares = b.norm_shares;
                    rows[i].fairshare = b.fairshare;
                    continue;
                }
            }
            match raw_shares(acct, i) {
                None => {
                    rows[i].norm_shares = rows[p].norm_shares;
                    rows[i].effective_usage = rows[p].effective_usage;
                }
                Some(s) => {
                    rows[i].norm_shares = if ls[i] > 0.0 {
                        rows[p].norm_shares * s / ls[i]
                    } else {
                        0.0
                    };
                    let ua = rows[i].norm_usage;
                    rows[i].effective_usage = if p == 0 {
                        ua
                    } else if ls[i] > 0.0 {
                        ua + (rows[p].effective_usage - ua) * (s / ls[i])
                    } else {
                        rows[p].effective_usage
                    };
                }
            }
            rows[i].fairshare = if rows[i].norm_shares > 0.0 {
                2f64.powf(-(rows[i].effective_usage / rows[i].norm_shares))
            } else {
                0.0
            };
        }
    }
    for (i, r) in rows.iter().enumerate() {
        usage.fairshare[i] = r.fairshare;
    }
    usage.shares = rows;
}

/// Fair Tree's depth-first ranking (`_calc_tree_fs()`): siblings by level
/// fair-share, users before accounts on ties, tied accounts' children merged.
#[allow(clippy::too_many_arguments)]
fn tree(
    acct: &Accounting,
    ch: &[Vec<usize>],
    rows: &mut [gresim_model::accounting::ShareRow],
    mut sibs: Vec<usize>,
    rank: &mut u32,
    rnt: &mut u32,
    account_tied: bool,
    users: u32,
) {
    // Descending level_fs; users first on ties; stable otherwise (qsort is
    // not stable, but equal keys only occur on exact ties).
    sibs.sort_by(|&a, &b| {
        let (x, y) = (rows[a].level_fs, rows[b].level_fs);
        y.partial_cmp(&x)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| {
                let (ua, ub) = (acct.assocs[a].user.is_some(), acct.assocs[b].user.is_some());
                ub.cmp(&ua)
            })
    });
    let mut prev = f64::NAN;
    let mut i = 0;
    while i < sibs.len() {
        let a = sibs[i];
        let tied = if i == 0 && account_tied {
            true
        } else {
            prev == rows[a].level_fs
        };
        if acct.assocs[a].user.is_some() {
            if !tied {
                *rank = *rnt;
            }
            rows[a].fairshare = f64::from(*rank) / f64::from(users);
            *rnt = rnt.saturating_sub(1);
            i += 1;
        } else {
            // Tied accounts that follow are merged with this one.
            let mut j = i + 1;
            while j < sibs.len()
                && acct.assocs[sibs[j]].user.is_none()
                && rows[sibs[j]].level_fs == rows[a].level_fs
            {
                j += 1;
            }
            let merged: Vec<usize> = sibs[i..j].iter().flat_map(|&x| ch[x].clone()).collect();
            if !merged.is_empty() {
                tree(acct, ch, rows, merged, rank, rnt, tied, users);
            }
            i = j;
        }
        prev = rows[a].level_fs;
    }
}

#[cfg(test)]
mod tests;
