//! Unit tests of `sshare` (sshare.rs).

use super::*;
use gresim_model::accounting::Enforce;

#[test]
fn prints_the_tree_with_users_under_their_accounts() {
    let mut a = Accounting::new(Enforce::ALL);
    let ml = a.add_account("ml", None);
    a.add_user("v1", ml, None);
    a.finish().unwrap();
    let mut u = AcctUsage::new(&a);
    u.shares[3].fairshare = 0.5;
    u.shares[3].raw_usage = 1234.4;
    let t = sshare(&a, &u);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines[0].starts_with("Account"));
    assert!(lines[2].starts_with("root "));
    assert!(lines[3].starts_with(" root ") && lines[3].contains("root"));
    assert!(lines[4].starts_with(" ml "));
    assert!(lines[5].starts_with("  ml ") && lines[5].contains(" v1 "));
    assert!(
        lines[5].contains(" 1234 ") && lines[5].contains("0.500000"),
        "{}",
        lines[5]
    );
}
