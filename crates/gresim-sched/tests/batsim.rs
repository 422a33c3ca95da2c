//! The classic policies against Batsim: the `medium_late` workload (801 jobs
//! on 32 hosts) run with `easy` and `conservative` must start every job when
//! Batsim's EASY and conservative backfilling (batsched) started it, and
//! give the same mean wait. Batsim's outputs and workload are shared data
//! (`../shared/data/batsim-medium-late-easy-vs-conservative/`, see its
//! SOURCE.md); without them the test skips, printing the `GRESIM-SKIP:` line
//! `.ci/run` collects.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gresim_model::JobState;

/// Batsim's times are real seconds; the run counts picoseconds, so sums of
/// times keep Batsim's precision (it prints microseconds).
const TICKS: u64 = 1_000_000_000_000;

fn data_dir() -> PathBuf {
    gresim_test_support::shared().join("data/batsim-medium-late-easy-vs-conservative")
}

/// A simple CSV (no quoted commas) as rows of header → value.
fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("readable CSV");
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .expect("a header")
        .split(',')
        .map(str::to_string)
        .collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

fn num(row: &BTreeMap<String, String>, k: &str) -> f64 {
    row[k]
        .parse()
        .unwrap_or_else(|_| panic!("{k} = {} is a number", row[k]))
}

/// Batsim's `allocated_resources` (`"0 4-6"`) as host numbers.
fn batsim_hosts(s: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in s.split_whitespace() {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.parse().expect("host id"), b.parse().expect("host id"));
        v.extend(a..=b);
    }
    v
}

/// Each job's start (s) and hosts, by Batsim id.
type Starts = BTreeMap<String, (f64, Vec<u32>)>;

/// Runs the workload with `policy`; returns each job's start and hosts,
/// and the number of jobs that ran to completion.
fn run(dir: &Path, policy: &str) -> (Starts, usize) {
    let tmp = std::env::temp_dir().join(format!("gresim-batsim-{}-{policy}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let scenario = format!(
        r#"{{"schema_version": 1,
            "cluster": {{"nodes": [{{"names": "host[0-31]", "cores_per_socket": 1, "memory": "1G"}}]}},
            "scheduler": {{"policy": "{policy}", "timelimit_check_interval": 0}},
            "workload": {{"trace": {trace:?}, "format": "batsim",
                          "trace_options": {{"batsim_ticks_per_second": {TICKS}}}}}}}"#,
        trace = dir.join("medium_late.json").display().to_string(),
    );
    let path = tmp.join("scenario.json");
    std::fs::write(&path, scenario).expect("scenario written");
    let sc = gresim_io::load_scenario(&path).expect("valid scenario");
    std::fs::remove_dir_all(&tmp).ok();
    let out = gresim_engine::run(
        sc.sim_input(1),
        policy
            .parse::<gresim_sched::PolicyKind>()
            .expect("known policy")
            .build(),
    )
    .expect("run");
    let mut starts = BTreeMap::new();
    let mut completed = 0;
    for j in &out.jobs {
        let key = out.specs[j.sub as usize].key.clone();
        let run = j
            .runs
            .first()
            .unwrap_or_else(|| panic!("job {key} never started"));
        let hosts = run
            .alloc
            .node_ids()
            .map(|n| {
                let name = &out.cluster.node(n).name;
                name.trim_start_matches("host").parse().expect("hostN")
            })
            .collect();
        starts.insert(key, (run.start as f64 / TICKS as f64, hosts));
        completed += usize::from(j.state == JobState::Completed);
    }
    (starts, completed)
}

fn check(test: &str, policy: &str, batsim_dir: &str) {
    let dir = data_dir();
    if !dir.join("medium_late.json").is_file() {
        return gresim_test_support::skip!(
            test,
            "no ../shared/data/batsim-medium-late-easy-vs-conservative/ beside the repository",
        );
    }
    let jobs = read_csv(&dir.join(batsim_dir).join("out_jobs.csv"));
    let sched = read_csv(&dir.join(batsim_dir).join("out_schedule.csv"));
    let (starts, completed) = run(&dir, policy);
    assert_eq!(starts.len(), jobs.len(), "same jobs as Batsim");
    assert_eq!(completed, jobs.len(), "every job completes, none is killed");
    // Batsim prints microseconds: a start matches when it rounds the same.
    let mut wrong = Vec::new();
    let mut wrong_hosts = Vec::new();
    let mut wait = 0.0;
    for r in &jobs {
        let id = &r["job_id"];
        let (ours, hosts) = starts.get(id).unwrap_or_else(|| panic!("job {id} ran"));
        let theirs = num(r, "starting_time");
        if (ours - theirs).abs() > 1e-6 {
            wrong.push(format!("{id}: {ours:.6} vs Batsim {theirs:.6}"));
        }
        if *hosts != batsim_hosts(&r["allocated_resources"]) {
            wrong_hosts.push(format!(
                "{id}: {hosts:?} vs Batsim {}",
                r["allocated_resources"]
            ));
        }
        wait += ours - num(r, "submission_time");
    }
    let mean = wait / jobs.len() as f64;
    println!(
        "{policy}: {}/{} start times and {}/{} host sets match Batsim's; \
         mean wait {mean:.6} s (Batsim {})",
        jobs.len() - wrong.len(),
        jobs.len(),
        jobs.len() - wrong_hosts.len(),
        jobs.len(),
        sched[0]["mean_waiting_time"]
    );
    assert!(
        wrong.is_empty(),
        "{policy}: {} of {} starts differ, first: {:?}",
        wrong.len(),
        jobs.len(),
        &wrong[..wrong.len().min(5)]
    );
    // Hosts are alike, so which ones a job gets matters to later decisions
    // only through reservations; batsched takes the lowest free ids.
    assert!(
        wrong_hosts.is_empty(),
        "{policy}: {} host sets differ, first: {:?}",
        wrong_hosts.len(),
        &wrong_hosts[..wrong_hosts.len().min(5)]
    );
    assert!(
        (mean - num(&sched[0], "mean_waiting_time")).abs() < 1e-5,
        "{policy}: mean wait {mean} vs Batsim {}",
        sched[0]["mean_waiting_time"]
    );
}

#[test]
fn easy_matches_batsim() {
    check("easy_matches_batsim", "easy", "easy");
}

#[test]
fn conservative_matches_batsim() {
    check(
        "conservative_matches_batsim",
        "conservative",
        "conservative",
    );
}
