//! Unit tests of `fairshare` (fairshare.rs).

use super::*;
use gresim_model::accounting::{Enforce, MAX_TRES};

fn three_accounts(shares: [u32; 3]) -> Accounting {
    let mut a = Accounting::new(Enforce::ALL);
    for (i, s) in shares.iter().enumerate() {
        let acc = a.add_account(&format!("a{i}"), None);
        a.assocs[acc as usize].shares = Shares::Raw(*s);
        a.add_user(&format!("u{i}"), acc, None);
    }
    a.finish().unwrap();
    a
}

fn used(a: &Accounting, u: &mut AcctUsage, i: usize, cpus: u64, secs: u64) {
    let ja = a.resolve(&format!("u{i}"), None, None, None).unwrap();
    let mut t = [0u64; MAX_TRES];
    t[0] = cpus;
    accrue(a, u, ja, &t, a.billable(&t, None), secs, 1.0);
}

#[test]
fn fair_tree_ranks_users_by_level_fairshare() {
    let a = three_accounts([1, 2, 4]);
    let mut u = AcctUsage::new(&a);
    // Equal use: the account with most shares has the highest level
    // fair-share, so its user ranks first.
    for i in 0..3 {
        used(&a, &mut u, i, 10, 100);
    }
    compute(&a, &mut u, true, None);
    let ids: Vec<usize> = (0..3)
        .map(|i| {
            a.user_assoc(&format!("u{i}"), &format!("a{i}"), None)
                .unwrap() as usize
        })
        .collect();
    let f = |u: &AcctUsage, i: usize| u.fairshare[ids[i]];
    assert!(f(&u, 2) > f(&u, 1) && f(&u, 1) > f(&u, 0));
    // Four users: root's user, with no usage, ranks first (its level
    // fair-share is infinite); the rest are rank / 4.
    assert_eq!(f(&u, 2), 0.75);
    assert_eq!(f(&u, 0), 0.25);
    // a2 uses much more: it drops below the others.
    used(&a, &mut u, 2, 1000, 1000);
    compute(&a, &mut u, true, None);
    assert!(f(&u, 2) < f(&u, 0) && f(&u, 2) < f(&u, 1));
}

#[test]
fn classic_is_two_to_the_minus_usage_over_shares() {
    let a = three_accounts([1, 1, 2]);
    let mut u = AcctUsage::new(&a);
    compute(&a, &mut u, false, None);
    // No usage anywhere: every factor is 1.
    let v0 = a.user_assoc("u0", "a0", None).unwrap() as usize;
    assert_eq!(u.fairshare[v0], 1.0);
    used(&a, &mut u, 0, 10, 100);
    compute(&a, &mut u, false, None);
    // u0 holds all the usage with a fifth of the shares (root's user
    // holds one share at the top level too): 2^-(1/0.2).
    assert!(
        (u.fairshare[v0] - 2f64.powf(-5.0)).abs() < 1e-9,
        "{}",
        u.fairshare[v0]
    );
}

#[test]
fn decay_halves_usage_over_the_half_life() {
    let a = three_accounts([1, 1, 1]);
    let mut u = AcctUsage::new(&a);
    used(&a, &mut u, 0, 1, 1000);
    let before = u.assoc_decayed[0].raw;
    let df = decay_factor(600);
    apply_decay(&a, &mut u, df.powf(600.0));
    let r = u.assoc_decayed[0].raw / before;
    assert!((r - 0.5).abs() < 0.01, "{r}");
}

#[test]
fn usage_reset_boundaries_follow_the_calendar() {
    const DAY: Time = 86_400;
    // 1970-01-01 was a Thursday: the first weekly reset is Sunday the 4th.
    assert_eq!(next_reset(UsageReset::Weekly, 0, 10), Some(3 * DAY));
    assert_eq!(
        next_reset(UsageReset::Weekly, 3 * DAY, 3 * DAY),
        Some(10 * DAY)
    );
    assert_eq!(
        next_reset(UsageReset::Daily, 5 * DAY + 7, 5 * DAY + 9),
        Some(6 * DAY)
    );
    // A missed daily reset is moved up to the last midnight before now.
    assert_eq!(
        next_reset(UsageReset::Daily, 0, 10 * DAY + 5),
        Some(10 * DAY)
    );
    assert_eq!(
        next_reset(UsageReset::Monthly, 40 * DAY, 40 * DAY),
        Some(59 * DAY)
    );
    assert_eq!(
        next_reset(UsageReset::Monthly, 340 * DAY, 0),
        Some(365 * DAY)
    );
    assert_eq!(
        next_reset(UsageReset::Quarterly, 100 * DAY, 0),
        Some(181 * DAY)
    );
    assert_eq!(
        next_reset(UsageReset::Yearly, 100 * DAY, 0),
        Some(365 * DAY)
    );
    assert_eq!(next_reset(UsageReset::None, 0, 0), None);
    assert_eq!("weekly".parse::<UsageReset>(), Ok(UsageReset::Weekly));
    assert!("fortnightly".parse::<UsageReset>().is_err());
}

#[test]
fn accrue_counts_wall_billing_and_the_partition_qos() {
    let mut a = three_accounts([1, 1, 1]);
    let part = a.qos.len() as gresim_model::accounting::QosId;
    a.qos.push(gresim_model::accounting::Qos::new("part"));
    let mut u = AcctUsage::new(&a);
    let mut ja = a.resolve("u0", None, None, None).unwrap();
    ja.part_qos = Some(part);
    let mut t = [0u64; MAX_TRES];
    t[0] = 4;
    accrue(&a, &mut u, ja, &t, 10.0, 60, 1.0);
    let q = &u.qos_decayed[ja.qos as usize];
    assert_eq!((q.wall, q.raw, q.tres[0]), (60.0, 600.0, 240.0));
    assert_eq!(u.qos_decayed[part as usize].raw, 600.0);
    assert_eq!(u.assoc_decayed[0].wall, 60.0);
    apply_decay(&a, &mut u, 0.5);
    assert_eq!(u.assoc_decayed[ja.assoc as usize].wall, 30.0);
    reset_usage(&mut u);
    assert!(u
        .assoc_decayed
        .iter()
        .chain(&u.qos_decayed)
        .all(|d| d.raw == 0.0 && d.wall == 0.0 && d.tres.iter().all(|t| *t == 0.0)));
}
