//! `sshare -a -l`: shares, usage and the fair-share factor per association,
//! as the last fair-share computation left them.

use std::fmt::Write;

use gresim_model::accounting::{Accounting, AcctUsage, Shares};

/// The table `sshare -a -l` prints (its first nine columns), accounts
/// indented by depth under root, each account's users before its
/// sub-accounts.
pub fn sshare(acct: &Accounting, usage: &AcctUsage) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<20} {:>10} {:>10} {:>11} {:>11} {:>11} {:>13} {:>10} {:>10}",
        "Account",
        "User",
        "RawShares",
        "NormShares",
        "RawUsage",
        "NormUsage",
        "EffectvUsage",
        "FairShare",
        "LevelFS"
    );
    let _ = writeln!(
        out,
        "{} {} {} {} {} {} {} {} {}",
        "-".repeat(20),
        "-".repeat(10),
        "-".repeat(10),
        "-".repeat(11),
        "-".repeat(11),
        "-".repeat(11),
        "-".repeat(13),
        "-".repeat(10),
        "-".repeat(10)
    );
    let n = acct.assocs.len();
    let mut ch = vec![Vec::new(); n];
    for (i, a) in acct.assocs.iter().enumerate() {
        if let Some(p) = a.parent {
            ch[p as usize].push(i);
        }
    }
    for c in &mut ch {
        // Users first, then accounts, each in configuration order.
        c.sort_by_key(|&i| (acct.assocs[i].user.is_none(), i));
    }
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, depth)) = stack.pop() {
        row(&mut out, acct, usage, i, depth);
        for &c in ch[i].iter().rev() {
            stack.push((c, depth + 1));
        }
    }
    out
}

fn num(x: f64) -> String {
    if x.is_infinite() {
        "inf".into()
    } else if x.is_nan() {
        String::new()
    } else {
        format!("{x:.6}")
    }
}

fn row(out: &mut String, acct: &Accounting, usage: &AcctUsage, i: usize, depth: usize) {
    let a = &acct.assocs[i];
    let r = usage.shares.get(i).copied().unwrap_or_default();
    let name = format!("{}{}", " ".repeat(depth), a.account);
    let user = a.user.as_deref().unwrap_or("");
    let raw = match (i, a.shares) {
        (0, _) => String::new(),
        (_, Shares::Raw(s)) => s.to_string(),
        (_, Shares::Parent) => "parent".into(),
    };
    let is_user = a.user.is_some();
    let _ = writeln!(
        out,
        "{:<20} {:>10} {:>10} {:>11} {:>11} {:>11} {:>13} {:>10} {:>10}",
        name,
        user,
        raw,
        num(r.norm_shares),
        format!("{:.0}", r.raw_usage),
        if i == 0 {
            String::new()
        } else {
            num(r.norm_usage)
        },
        num(r.effective_usage),
        if is_user {
            num(r.fairshare)
        } else {
            String::new()
        },
        if i == 0 {
            String::new()
        } else {
            num(r.level_fs)
        },
    );
}

#[cfg(test)]
mod tests;
