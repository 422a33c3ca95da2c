//! Unit tests of `reservation` (reservation.rs).

use super::*;

fn resv(name: &str, nodes: &[u32], start: Time, end: Time, flags: u16) -> Reservation {
    Reservation {
        name: name.into(),
        nodes: nodes.iter().map(|&n| NodeId(n)).collect(),
        users: vec!["u1".into()],
        accounts: vec!["team".into()],
        start,
        end,
        flags: ResvFlags(flags),
        purge_after: None,
        by_count: false,
        partition: None,
    }
}

#[test]
fn overlap_is_half_open() {
    let r = resv("m", &[0], 100, 200, ResvFlags::MAINT);
    assert!(
        !r.overlaps(0, 0, 100),
        "a job ending at the start does not meet it"
    );
    assert!(r.overlaps(0, 0, 101));
    assert!(
        !r.overlaps(0, 200, 300),
        "a job starting at its end does not meet it"
    );
    assert!(r.overlaps(0, 199, 300));
}

#[test]
fn daily_moves_on_after_its_end() {
    let r = resv("d", &[0], 100, 200, ResvFlags::DAILY);
    assert_eq!(r.window(150), (100, 200));
    assert_eq!(r.window(200), (100 + DAY, 200 + DAY));
    assert!(r.overlaps(500, 500, 100 + DAY + 1));
    assert!(!r.overlaps(500, 500, 100 + DAY));
}

#[test]
fn access_by_user_and_account() {
    // Users=u1 Accounts=team: both must match.
    let r = resv("t", &[0], 0, 10, 0);
    assert!(r.may_use("u1", Some("team")));
    assert!(!r.may_use("u1", None));
    assert!(!r.may_use("u9", Some("team")));
    // Users only, or accounts only.
    let mut u = r.clone();
    u.accounts.clear();
    assert!(u.may_use("u1", None) && !u.may_use("u9", Some("team")));
    let mut a = r;
    a.users.clear();
    assert!(a.may_use("u9", Some("team")) && !a.may_use("u9", Some("other")));
    assert!(!a.may_use("u9", None));
}

#[test]
fn conflict_needs_nodes_and_time_and_no_exemption() {
    let mut all = Reservations::default();
    all.list.push(resv("a", &[0, 1], 0, 100, 0));
    assert_eq!(
        all.conflict(&resv("b", &[1], 50, 150, 0), None, 0),
        Some("a")
    );
    assert_eq!(all.conflict(&resv("b", &[2], 50, 150, 0), None, 0), None);
    assert_eq!(all.conflict(&resv("b", &[1], 100, 150, 0), None, 0), None);
    assert_eq!(
        all.conflict(&resv("b", &[1], 50, 150, ResvFlags::MAINT), None, 0),
        None
    );
    assert_eq!(
        all.conflict(&resv("b", &[1], 50, 150, ResvFlags::OVERLAP), None, 0),
        None
    );
    assert_eq!(all.conflict(&resv("b", &[1], 50, 150, 0), Some(0), 0), None);
}

#[test]
fn flags_parse() {
    let (f, p) = ResvFlags::parse("maint,IGNORE_JOBS,purge_comp=2").unwrap();
    assert!(f.has(ResvFlags::MAINT) && f.has(ResvFlags::IGNORE_JOBS));
    assert_eq!(p, Some(120));
    assert!(ResvFlags::parse("STATIC_ALLOC").is_err());
    assert!(ResvFlags::parse("DAILY,WEEKLY").is_err());
}

#[test]
fn edges_of_a_recurring_window() {
    let mut all = Reservations::default();
    all.list.push(resv("d", &[0], 100, 200, ResvFlags::DAILY));
    let e = all.edges_after(0, 2 * DAY);
    assert_eq!(&e[..4], &[100, 200, 100 + DAY, 200 + DAY]);
}

#[test]
fn purge_comp_times_are_seconds() {
    let purge = |f: &str| ResvFlags::parse(f).map(|x| x.1);
    assert_eq!(purge("PURGE_COMP"), Ok(Some(DEFAULT_PURGE_COMP)));
    assert_eq!(
        purge("PURGE_COMP=0:30"),
        Ok(Some(30)),
        "MM:SS, as time_str2secs"
    );
    assert_eq!(
        purge("PURGE_COMP=2"),
        Ok(Some(120)),
        "a bare number is minutes"
    );
    assert_eq!(purge("MAINT,PURGE_COMP=UNLIMITED"), Ok(Some(u64::MAX)));
    assert!(purge("PURGE_COMP=soon")
        .unwrap_err()
        .starts_with("PURGE_COMP=soon: "));
}
