//! Unit tests of `sacctmgr` (sacctmgr.rs).

use super::*;
use gresim_model::accounting::MAX_TRES;

fn pub_accounting() -> Accounting {
    let mut a = new_accounting(Enforce::ALL, "gres/gpu").unwrap();
    for c in [
        "add qos inter MaxTRESPerUser=gres/gpu=1 MaxWall=00:01:00",
        "add qos batch4 GrpTRES=gres/gpu=4",
        "add qos deny MaxTRESPerJob=gres/gpu=1 Flags=DenyOnLimit",
        "add account ml GrpJobs=2",
        "add account bio",
        "add user v1 Account=ml",
        "add user v3 Account=bio",
        "modify user where name=v1 set qos+=inter,batch4",
    ] {
        apply_command(&mut a, c).unwrap_or_else(|e| panic!("{c}: {e}"));
    }
    a.finish().unwrap();
    a
}

#[test]
fn commands_build_the_tree_and_the_qos() {
    let a = pub_accounting();
    let inter = a.qos_by_name("inter").unwrap();
    let q = &a.qos[inter as usize];
    assert_eq!(q.limits.max_tres_pu[4], 1);
    assert_eq!(q.limits.max_wall_pj, 1);
    assert!(
        a.qos[a.qos_by_name("deny").unwrap() as usize]
            .flags
            .deny_on_limit
    );
    let ml = a.account("ml").unwrap();
    assert_eq!(a.assocs[ml as usize].limits.grp_jobs, 2);
    let v1 = a.user_assoc("v1", "ml", None).unwrap();
    let names: Vec<&str> = a.assocs[v1 as usize]
        .qos
        .iter()
        .map(|&q| a.qos[q as usize].name.as_str())
        .collect();
    assert_eq!(names, ["normal", "inter", "batch4"]);
    let v3 = a.user_assoc("v3", "bio", None).unwrap();
    assert_eq!(a.assocs[v3 as usize].qos, vec![0]);
    assert_eq!(a.default_account["v3"], "bio");
}

#[test]
fn qos_preemption_fields_and_loops() {
    use gresim_model::preempt::PreemptMode;
    let mut a = new_accounting(Enforce::ALL, "gres/gpu").unwrap();
    for c in [
        "add qos low GraceTime=30 PreemptExemptTime=00:02:00",
        "add qos mid Preempt=low PreemptMode=cancel",
        "add qos high Preempt=low,mid PreemptMode=off",
    ] {
        apply_command(&mut a, c).unwrap_or_else(|e| panic!("{c}: {e}"));
    }
    let q = |n: &str| &a.qos[a.qos_by_name(n).unwrap() as usize];
    // sacctmgr reads GraceTime as seconds.
    assert_eq!(q("low").grace_time, 30);
    assert_eq!(q("low").preempt_exempt_time, Some(120));
    assert_eq!(
        q("mid").preempt_mode.map(|m| m.mode),
        Some(PreemptMode::Cancel)
    );
    // OFF is "not set": the global mode applies.
    assert_eq!(q("high").preempt_mode, None);
    assert_eq!(q("high").preempt.len(), 2);
    let e = apply_command(&mut a, "modify qos low set Preempt=high").unwrap_err();
    assert!(e.contains("preemption loop") && e.contains("low"), "{e}");
    let e = apply_command(&mut a, "modify qos low set Preempt=low").unwrap_err();
    assert!(e.contains("preemption loop"), "{e}");
    let e = apply_command(&mut a, "modify qos low set PreemptMode=sometimes").unwrap_err();
    assert!(e.contains("sometimes"), "{e}");
}

#[test]
fn bad_commands_say_what_was_expected() {
    let mut a = new_accounting(Enforce::ALL, "gres/gpu").unwrap();
    let e = apply_command(&mut a, "add qos x MaxTRESPerUser=gres/tpu=1").unwrap_err();
    assert!(e.contains("unknown TRES \"gres/tpu\""), "{e}");
    let e = apply_command(&mut a, "add account x GrpJobs=-3").unwrap_err();
    assert!(e.contains("expected a whole number"), "{e}");
    let e = apply_command(&mut a, "add user u Account=nope").unwrap_err();
    assert!(e.contains("unknown account \"nope\""), "{e}");
    let e = apply_command(&mut a, "add qos y Fairshare=2").unwrap_err();
    assert!(e.contains("unknown QOS field"), "{e}");
    assert!(apply_command(&mut a, "add account z Fairshare=-5").is_err());
}

#[test]
fn a_dump_file_reads_as_the_commands() {
    let mut a = new_accounting(Enforce::ALL, "gres/gpu").unwrap();
    apply_command(&mut a, "add qos inter MaxTRESPerUser=gres/gpu=1").unwrap();
    let dump = "# sacctmgr dump\nCluster - 'peer':Fairshare=1:QOS='normal'\nParent - 'root'\n\
                User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1\n\
                Account - 'ml':Description='ml':Organization='ml':Fairshare=3:GrpTRES='gres/gpu=8'\n\
                Parent - 'ml'\nUser - 'v1':DefaultAccount='ml':Fairshare=1:QOS='inter,normal':MaxJobs=2\n";
    apply_dump(&mut a, dump).unwrap();
    a.finish().unwrap();
    let ml = a.account("ml").unwrap();
    assert_eq!(a.assocs[ml as usize].shares, Shares::Raw(3));
    assert_eq!(a.assocs[ml as usize].limits.grp_tres[4], 8);
    let v1 = a.user_assoc("v1", "ml", None).unwrap();
    assert_eq!(a.assocs[v1 as usize].limits.max_jobs, 2);
    assert_eq!(a.assocs[v1 as usize].qos.len(), 2);
    let e = apply_dump(&mut a, "Account - 'x':GrpTRES='gres/gpu=-2x'").unwrap_err();
    assert_eq!(e.0, 1);
    assert_eq!(MAX_TRES, 16);
}
