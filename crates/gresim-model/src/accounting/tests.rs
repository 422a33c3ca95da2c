//! Unit tests of `accounting` (accounting.rs).

use super::*;

fn sample() -> Accounting {
    let mut a = Accounting::new(Enforce::ALL);
    a.add_tres("gres/gpu").unwrap();
    let ml = a.add_account("ml", None);
    a.assocs[ml as usize].limits.max_jobs = 3;
    a.assocs[ml as usize].set.max_jobs = true;
    a.add_user("v1", ml, None);
    a.finish().unwrap();
    a
}

#[test]
fn max_limits_are_inherited_and_grp_limits_are_not() {
    let mut a = sample();
    let ml = a.account("ml").unwrap();
    a.assocs[ml as usize].limits.grp_jobs = 2;
    a.finish().unwrap();
    let v1 = a.user_assoc("v1", "ml", None).unwrap();
    assert_eq!(a.assocs[v1 as usize].limits.max_jobs, 3);
    assert_eq!(a.assocs[v1 as usize].limits.grp_jobs, u32::MAX);
    assert_eq!(a.assocs[v1 as usize].qos, vec![0]);
}

#[test]
fn resolve_names_sbatch_refusals() {
    let a = sample();
    assert_eq!(
        a.resolve("v1", None, None, None),
        Ok(JobAcct {
            assoc: a.user_assoc("v1", "ml", None).unwrap(),
            qos: 0,
            part_qos: None,
        })
    );
    assert_eq!(
        a.resolve("v1", Some("bio"), None, None),
        Err("Invalid account or account/partition combination specified")
    );
    assert_eq!(
        a.resolve("v1", None, Some("high"), None),
        Err("Invalid qos specification")
    );
    assert!(a.resolve("nobody", None, None, None).is_err());
}

#[test]
fn a_parent_loop_is_refused() {
    let mut a = sample();
    let ml = a.account("ml").unwrap();
    let bio = a.add_account("bio", Some(ml));
    a.assocs[ml as usize].parent = Some(bio);
    assert!(a.finish().unwrap_err().contains("loop"));
}

#[test]
fn counters_follow_begin_and_end_up_the_tree() {
    let a = sample();
    let mut u = AcctUsage::new(&a);
    let j = a.resolve("v1", None, None, None).unwrap();
    let user: Arc<str> = "v1".into();
    let mut tres = [0; MAX_TRES];
    tres[4] = 2;
    u.add_submit(&a, j, &user);
    u.job_begin(&a, j, &user, &tres, 60);
    let ml = a.account("ml").unwrap() as usize;
    assert_eq!(u.assoc[ml].jobs, 1);
    assert_eq!(u.assoc[0].tres[4], 2);
    assert_eq!(u.qos_user(0, "v1").unwrap().tres_run_secs[4], 120);
    u.run_down(&a, j, &user, &tres, 10);
    assert_eq!(u.assoc[ml].tres_run_secs[4], 100);
    let mut left = [0; MAX_TRES];
    left[4] = 100;
    u.job_fini(&a, j, &user, &tres, &left);
    u.remove_submit(&a, j, &user);
    assert_eq!(u.assoc[ml], Used::default());
    assert_eq!(u.qos_account(0, "ml").unwrap(), &Used::default());
}

#[test]
fn billing_weights_as_slurm_parses_and_sums_them() {
    let mut a = sample();
    let w = a
        .parse_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0")
        .unwrap();
    assert_eq!(
        w,
        vec![(TRES_CPU, 1.0), (TRES_MEM, 0.25 / 1024.0), (4, 2.0)]
    );
    let mut t = [0u64; MAX_TRES];
    t[TRES_CPU] = 8;
    t[TRES_MEM] = 64 * 1024; // 64 GiB
    t[4] = 2;
    assert_eq!(a.billable(&t, None), 8.0);
    assert_eq!(a.billable(&t, Some(&w)), 8.0 + 16.0 + 4.0);
    a.billing_max_tres = true;
    assert_eq!(a.billable(&t, Some(&w)), 16.0);
    for bad in ["CPU", "cpu=x", "licence/x=1", "cpu=1Q", "cpu=-1"] {
        assert!(a.parse_billing_weights(bad).is_err(), "{bad}");
    }
}

#[test]
fn association_priority_is_inherited_unless_set() {
    let mut a = sample();
    let ml = a.account("ml").unwrap();
    a.assocs[ml as usize].priority = 50;
    a.assocs[ml as usize].set.priority = true;
    let v2 = a.add_user("v2", ml, None);
    a.assocs[v2 as usize].priority = 10;
    a.assocs[v2 as usize].set.priority = true;
    a.finish().unwrap();
    let v1 = a.user_assoc("v1", "ml", None).unwrap();
    assert_eq!(a.assocs[v1 as usize].priority, 50);
    assert_eq!(a.assocs[v2 as usize].priority, 10);
    assert_eq!(a.max_assoc_priority(), 50);
}
