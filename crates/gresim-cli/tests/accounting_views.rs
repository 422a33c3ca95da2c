//! The views of a run with accounting: squeue's account and QOS codes,
//! sacct's Account and QOS fields, `explain` naming the limit and the jobs
//! that use it up, and `sim sshare`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sim(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("sim runs")
}

fn text(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn multi_tenant_views_name_accounts_qos_and_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = repo().join("scenarios/multi_tenant.json");
    let s = scenario.to_str().unwrap();
    text(&sim(
        tmp.path(),
        &["run", s, "--quiet", "--out", "run", "--report"],
    ));
    let html = std::fs::read_to_string(tmp.path().join("run/report.html")).unwrap();
    assert!(
        html.contains("GPUs held per account"),
        "the report charts GPUs per account"
    );
    assert!(
        html.contains("Fair-share factor per account"),
        "the report charts fair-share over time"
    );
    let rf = gresim_report::run_file::RunFile::load(&tmp.path().join("run")).unwrap();
    let fs = rf.fairshare.expect("run.json keeps the fair-share samples");
    assert_eq!(fs.accounts, ["team_a", "team_b", "team_c"]);
    assert!(fs.samples.len() > 10, "{}", fs.samples.len());
    assert!(fs.samples.windows(2).all(|w| w[1].0 >= w[0].0 + 3600));
    // The factors move: no account keeps one value all run long.
    for i in 0..3 {
        let first = fs.samples[0].1[i];
        assert!(fs.samples.iter().any(|(_, v)| v[i] != first), "account {i}");
        assert!(fs.samples.iter().all(|(_, v)| (0.0..=1.0).contains(&v[i])));
    }

    let q = text(&sim(
        tmp.path(),
        &["squeue", "run", "--at", "200000", "-o", "%i %u %a %q %t %R"],
    ));
    let held: Vec<&str> = q
        .lines()
        .filter(|l| l.contains("(QOSMaxGRESPerUser)"))
        .collect();
    assert!(!held.is_empty(), "{q}");
    // Only team_a runs in the capped QOS.
    assert!(held.iter().all(|l| l.contains(" team_a capped PD ")), "{q}");

    let id = held[0].split_whitespace().next().unwrap();
    let e = text(&sim(tmp.path(), &["explain", "run", id, "--at", "200000"]));
    assert!(e.contains("acct    account team_a, QOS capped"), "{e}");
    assert!(e.contains("usage   user user"), "{e}");

    let a = text(&sim(
        tmp.path(),
        &["sacct", "run", "--format", "JobID,Account,QOS"],
    ));
    for team in ["team_a", "team_b", "team_c"] {
        assert!(a.contains(team), "{a}");
    }
    assert!(
        a.contains(" low") && a.contains(" capped") && a.contains(" normal"),
        "{a}"
    );

    let sh = text(&sim(tmp.path(), &["sshare", "run", "--at", "1-00:00:00"]));
    let users: Vec<&str> = sh.lines().filter(|l| l.contains(" user")).collect();
    assert_eq!(users.len(), 9, "{sh}");
    // Fair Tree: ten user associations (root's included), factors rank/10,
    // all different.
    let mut f: Vec<String> = users
        .iter()
        .map(|l| l.split_whitespace().rev().nth(1).unwrap().to_string())
        .collect();
    f.sort();
    f.dedup();
    assert_eq!(f.len(), 9, "{sh}");
}

#[test]
fn sshare_without_accounting_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = repo().join("scenarios/mig_packing.json");
    let s = scenario.to_str().unwrap();
    text(&sim(
        tmp.path(),
        &["run", s, "--quiet", "--out", "run", "--report"],
    ));
    let html = std::fs::read_to_string(tmp.path().join("run/report.html")).unwrap();
    assert!(
        !html.contains("GPUs held per account"),
        "no accounts, no per-account chart"
    );
    assert!(!html.contains("Fair-share factor per account"));
    let o = sim(tmp.path(), &["sshare", "run"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("no accounting section"), "{e}");
}
