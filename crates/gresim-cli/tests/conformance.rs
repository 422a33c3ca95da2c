//! Every public conformance case, simulated with `sim conformance` and scored
//! with the suite's own `score.py` against all recordings of real Slurm 22.05.
//!
//! The cases and recordings in `tests/conformance/cases/` were recorded by
//! this project with the harness in the shared conformance kit. Each case must
//! keep at least its floor of matching decisions, so fidelity never regresses
//! silently; the floors move up as the scheduler improves (see
//! docs/slurm-fidelity.md for the cases still below 95%).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Decisions (tasks) that must match, per case: at least this many.
const FLOORS: &[(&str, u32)] = &[
    // Accounting (recorded with slurmdbd by xtask/harness after the limits
    // were written; acct_fairshare and acct_fairshare_classic led to two
    // fixes, the first decay spanning a period and classic's accounts
    // taking their effective usage before the decay: they are not held out).
    ("acct_deny", 17),
    ("acct_fairshare", 59),
    ("acct_fairshare_classic", 59),
    ("acct_limit_backfill", 7),
    ("acct_limits_grp", 15),
    ("acct_limits_user", 14),
    ("acct_maxtres_node", 6),
    ("acct_qos_priority", 15),
    // Scored 2/8 before partition QOS was modelled, 8/8 after.
    ("acct_partition_qos", 8),
    // Scored 10/12 first: the two jobs held for good started days later, as
    // decay lifted their limits, where the harness cancels them at its stall;
    // 12/12 once a case's `stall` stops the simulation the same way.
    ("acct_usage_limits", 12),
    // Admin actions (issue 18 item 5; recorded by xtask/harness, three
    // recordings each). Fitted on them: signal_exit_delay (admin_scancel).
    // admin_requeuehold's j2 and j3 differ in reasons only: j2 is submitted
    // at 0.5 s, after j1 started, which whole seconds cannot show.
    ("admin_node_state", 4),
    ("admin_requeuehold", 2),
    ("admin_scancel", 6),
    ("admin_suspend", 2),
    ("admin_top", 6),
    ("admin_uhold", 4),
    ("admin_update", 9),
    ("backfill", 12),
    ("backfill_phase0", 12),
    ("bf_will_run_group", 5),
    // Recorded for the fix (three recordings, 4/4 each; 3/4 before it):
    // `bf_max_job_test` counts `bf_last_depth_try`.
    ("bf_test_count", 4),
    ("cancel_cg", 7),
    // Held out (recorded after the conformance settings were frozen): the
    // floors are their first, unedited scores (docs/slurm-fidelity.md).
    // First scores 57 and 33; 59 and 35 since the main pass runs just after
    // backfill early in a case (2026-12-04).
    ("hold_b303", 59),
    ("hold_d404", 35),
    // Held out on a new preset (held_e), scored unedited: 20/59, while
    // Slurm's third recording scores 53/59 against its other two. 57/59
    // since the main pass runs just after backfill early in a case (a
    // fourth recording's controller log showed it; 2026-12-04): not held
    // out for that change.
    ("hold_e505", 57),
    // Held out for that change (committed before it, recorded after it was
    // designed, scored unedited): 36/57 and 27/50 before it, 41/57 and
    // 28/50 after; Slurm's recordings of them disagree with each other
    // about as much (docs/slurm-fidelity.md).
    ("hold_e606", 45),
    // 41/50 (and hold_e606 45/57) since `_set_task_bits` reads Slurm's
    // tasks per socket (one per core of the job, whatever
    // --cpus-per-task): found in hold_c707's j02, so that case is no longer
    // held out for it; hold_e606 was not looked at (2026-12-05). 48/50
    // since a socket with usable cores but no free GPU stays required in
    // the first pass (22.05's `req_sock`), found in gpus_per_task_sockets'
    // j06 (rnd_b202 54 -> 56 with it).
    ("hold_c707", 48),
    // Recorded for the tasks-per-socket change (three recordings), from
    // predictions made before recording: 5/6 in each; 6/6 with `req_sock`.
    ("gpus_per_task_sockets", 6),
    // Held out for `req_sock`: designed, committed with its prediction and
    // then recorded three times, scored unedited: 7/7 in each (3/7 before).
    ("gpu_socket_cores_heldout", 7),
    ("mixed_gpu", 33),
    ("node_sets", 7),
    // Accounting limits (recorded with slurmdbd); nothing was fitted on it.
    ("pub_accounting", 10),
    // Preemption (issue 17; recorded before it was modelled, nothing fitted
    // on them). Below 95%: Slurm's kill of a preempted job was done within
    // the second or about 4 s later, by chance (the recording VM's PID 1
    // reaps a killed job's orphans 1-2 s late; docs/preemption.md);
    // `sim conformance` models the fast kill, SLOW_KILL_FLOORS the slow one.
    // The `*_reaped` cases are the same recorded with orphans reaped at
    // once (held out): every kill fast, each recording reproduced in full
    // (also checked one recording at a time below).
    ("preempt_grace_reaped", 5),
    ("preempt_heldout_reaped", 8),
    ("preempt_part_cancel_reaped", 9),
    ("preempt_part_requeue_reaped", 9),
    ("preempt_qos_requeue_reaped", 9),
    // The same for scancel's kill: a reaper case's kill_completing is 0
    // (fitted after cancel_cg_reaped was seen; kill_wait_sigterm_reaped was
    // scored after, held out).
    ("cancel_cg_reaped", 12),
    ("kill_wait_sigterm_reaped", 8),
    // And for an admin requeue's: a reaper case's requeue_completing is 0
    // (fitted after admin_requeuehold_reaped was seen; admin_requeue_reaped
    // was recorded after, held out). admin_requeuehold_reaped's j3 differs
    // in reasons only, as admin_requeuehold's does.
    ("admin_requeuehold_reaped", 3),
    ("admin_requeue_reaped", 4),
    // preempt_part_requeue scored 5 before Priority at submission followed
    // `_top_priority()`'s real comparison.
    ("preempt_grace", 5),
    // Held out: recorded after preempt_completing was frozen, unedited.
    ("preempt_heldout", 8),
    // Recorded after slurmd's wait between SIGTERM and SIGKILL was read
    // from the source and before it was built (docs/preemption.md).
    ("kill_wait_sigterm", 8),
    ("preempt_part_cancel", 8),
    ("preempt_part_requeue", 6),
    ("preempt_qos_requeue", 9),
    ("preempt_suspend", 4),
    // Recorded after this branch's model changes, scored unedited.
    ("preempt_suspend_gang", 4),
    // SUSPEND,GANG with CPU-only jobs: recorded (three recordings) before
    // the model was written, then modelled from the source with the
    // recordings at hand (not held out); 5/5 in each recording.
    ("preempt_suspend_cpu", 5),
    // Held out: designed and recorded after the model was committed, unedited.
    ("preempt_suspend_heldout", 6),
    // SUSPEND,GANG over jobs that hold GPUs: designed from the source and
    // committed before the model suspended them, then recorded three
    // times and scored unedited: 5/5 matches in each (2/5 decisions
    // before).
    ("preempt_suspend_gpu_heldout", 5),
    // Same-QOS preemption (WITHIN) under priority/multifactor: designed
    // and recorded (three recordings) before the model compared multifactor
    // priorities, which scored 1/8 in each; not held out otherwise.
    // `ctld_start` (the decay thread's phase) is the first recording's.
    ("preempt_within_mf", 8),
    // Backfill reserving the nodes of a preemptor that waits for a grace
    // time: designed and recorded (three recordings) after the source was
    // read and before the model reserved them (2/4 decisions in each then).
    ("preempt_bf_grace", 4),
    // When a grace time's end kills the preemptee (a preemption attempt or
    // the time-limit check): designed and recorded (three recordings)
    // before the model, scored unedited: 5, 1 and 5 of 6 decisions in each
    // (the second placed every job on the other node), 6/6 over the three.
    ("preempt_grace_heldout", 6),
    // A time limit that ends within a grace time (the job is preempted,
    // not timed out): designed from the source and committed before the
    // model, then recorded three times and scored unedited: 6/6 decisions
    // in each (1, 1 and 3 before it).
    ("preempt_grace_limit", 6),
    // Gang time-slicing (OverSubscribe=FORCE:2, SchedulerTimeSlice):
    // recorded as data (2/4 then), then modelled from the source with the
    // recordings at hand (not held out): 4/4 decisions in each recording.
    ("gang_timeslice", 4),
    // Held out: designed and recorded after the time-slicing model was
    // committed, scored unedited (7/7 over the three recordings; 7, 5, 5
    // in each; docs/preemption.md).
    ("gang_timeslice_heldout", 7),
    // Jobs with GPUs time-sliced on their cores: designed from the source
    // and committed before the model placed them in rows, then recorded
    // three times and scored unedited: 6/6 decisions in each (2/6 before).
    ("gang_gpu_heldout", 6),
    // OverSubscribe=FORCE:2 without gang scheduling (jobs sharing cores
    // run at once): designed from the source and committed before the
    // model, then recorded three times and scored unedited: 7/7 matches in
    // each (2/7 decisions before).
    ("oversubscribe_force_heldout", 7),
    // OverSubscribe=EXCLUSIVE (whole nodes per job): designed from the
    // source and committed before the model, then recorded three times and
    // scored unedited: 4, 4 and 5 of 5 decisions (e showed Resources for
    // 1.03 s at submission in two, gresim Priority), 5/5 over the three;
    // 0/5 before.
    ("oversubscribe_exclusive_heldout", 5),
    // Recorded as data before gresim modelled _verify_node_state()'s
    // exclusion between partitions that share cores and partitions that do
    // not: 4/6 in each recording then, 6/6 with the node states (nothing
    // fitted: the model is the source's).
    ("oversubscribe_mixed", 6),
    // OverSubscribe=YES:2 (only jobs with --oversubscribe share; the node
    // states): designed from the source and committed before the model,
    // then recorded three times and scored unedited: 6/6 in each (3/6
    // before).
    ("oversubscribe_yes_heldout", 6),
    ("pub_arrays_deps", 32),
    ("pub_failures", 12),
    ("pub_fifo_backfill", 14),
    ("pub_gres_shapes", 21),
    ("pub_multifactor", 16),
    ("pub_partitions_weight", 18),
    ("pub_random_a", 59),
    ("pub_random_b", 35),
    ("reasons", 11),
    // Reservations (issue 17; recorded by xtask/harness for gresim, three
    // recordings each, while the model was written: not held out). Nothing
    // was fitted on them but the one-second-early `now` of
    // `StartTime=now+N`, read off the recordings' `scontrol show reservation`.
    ("resv_maint_backfill", 9),
    ("resv_user", 10),
    // Held out: designed from the source and committed before the end of a
    // reservation was modelled, recorded three times, scored unedited:
    // 3/4 decisions in each (2/4 before); 4/4 after the ReqNodeNotAvail
    // order found on it (in-sample; docs/reservations.md).
    ("resv_end_heldout", 4),
    // PURGE_COMP: designed from the source and committed before the model,
    // recorded three times, scored unedited: 4/4 in each (2/4 before).
    ("resv_purge_heldout", 4),
    // A DAILY PURGE_COMP reservation moved to its next occurrence: held
    // out, 4/4 in each (before: the run never ended).
    ("resv_purge_daily_heldout", 4),
    // TRES= as 22.05 reads it (GRES refused by scontrol): held out, 4/4 in
    // each (before: the case was refused as input).
    ("resv_tres_heldout", 4),
    // QOS NoReserve under preemption: held out, 5/5 in each (2/5 before).
    ("qos_noreserve_heldout", 5),
    // REPLACE: designed from the source and committed before the model,
    // recorded three times, scored unedited: 6/6 in each (before: the case
    // was refused as input).
    ("resv_replace_heldout", 6),
    ("rnd_a101", 70),
    ("rnd_b202", 56),
    ("rnd_c5", 61),
    ("rnd_d7", 62),
    ("throughput", 40),
    ("topology", 11),
    // topology/tree (issue 17; docs/topology.md): leaf choice and spans
    // (topo_tree scores 3/8 without the plugin), and --switches waiting
    // for one leaf, and starting over two once its wait is over.
    ("topo_switches", 5),
    ("topo_tree", 8),
];

/// The preemption cases under the slow kill (`--preempt-completing 4`,
/// slurmstepd's process-group wait): the value was read off
/// preempt_part_requeue's third recording (all its kills slow) and the
/// source; preempt_heldout was recorded after it was frozen.
const SLOW_KILL_FLOORS: &[(&str, u32)] = &[
    ("preempt_grace", 5),
    ("preempt_heldout", 8),
    ("kill_wait_sigterm", 8),
    ("preempt_part_cancel", 9),
    ("preempt_part_requeue", 8),
    // 5 before the preemption trial left out nodes with a COMPLETING job
    // (cg_node_bitmap), which raised preempt_grace's first recording to
    // 5/5 under the fast kill (docs/preemption.md).
    ("preempt_qos_requeue", 3),
    ("preempt_within_mf", 7),
    ("preempt_bf_grace", 4),
    ("preempt_grace_heldout", 6),
    ("preempt_grace_limit", 6),
    // No kill in it: the same under either kill.
    ("preempt_suspend_cpu", 5),
    ("preempt_suspend_heldout", 6),
    ("preempt_suspend_gpu_heldout", 5),
    ("gang_timeslice", 4),
    ("gang_timeslice_heldout", 7),
    ("gang_gpu_heldout", 6),
    ("oversubscribe_force_heldout", 7),
    ("oversubscribe_mixed", 6),
    ("oversubscribe_yes_heldout", 6),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance")
}

fn python() -> Option<&'static str> {
    ["python3", "python"].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn every_public_case_keeps_its_decision_floor() {
    let Some(py) = python() else {
        return gresim_test_support::skip!(
            "every_public_case_keeps_its_decision_floor",
            "no python3 on this machine to run score.py",
        );
    };
    check_floors(py, FLOORS, &[]);
}

#[test]
fn the_slow_preemption_kill_keeps_its_decision_floors() {
    let Some(py) = python() else {
        return gresim_test_support::skip!(
            "the_slow_preemption_kill_keeps_its_decision_floors",
            "no python3 on this machine to run score.py",
        );
    };
    check_floors(py, SLOW_KILL_FLOORS, &["--preempt-completing", "4"]);
}

/// `sim conformance` of case `name` (with `extra` arguments) into `tmp`;
/// the path of its output.
fn simulate(tmp: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let sim_out = tmp.join(format!("{name}.sim.json"));
    let run = Command::new(env!("CARGO_BIN_EXE_sim"))
        .arg("conformance")
        .arg(dir().join("cases").join(format!("{name}.json")))
        .args(extra)
        .arg("-o")
        .arg(&sim_out)
        .output()
        .expect("run sim");
    assert!(
        run.status.success(),
        "sim conformance {name} failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    sim_out
}

/// `score.py --json` of a simulation against recordings (the first, then
/// `--also` the others).
fn score(py: &str, recs: &[PathBuf], sim_out: &Path) -> serde_json::Value {
    let mut score = Command::new(py);
    score.arg(dir().join("score.py")).arg(&recs[0]).arg(sim_out);
    for also in &recs[1..] {
        score.arg("--also").arg(also);
    }
    let out = score.arg("--json").output().expect("run score.py");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "score.py output for {} is not JSON ({e}): {}",
            recs[0].display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Simulates each case (with `extra` arguments) and scores it against all its
/// recordings; fails if one scores below its floor.
fn check_floors(py: &str, floors: &[(&str, u32)], extra: &[&str]) {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let cases = dir().join("cases");
    let mut failures = Vec::new();
    let mut total = (0u32, 0u32, 0u32);
    for &(name, floor) in floors {
        let sim_out = simulate(tmp.path(), name, extra);
        // Every recording there is (a case may miss one whose replay failed).
        let recs: Vec<PathBuf> = ["", ".rerun", ".rerun2"]
            .iter()
            .map(|suffix| cases.join(format!("{name}{suffix}.result.json")))
            .filter(|p| p.exists())
            .collect();
        assert!(!recs.is_empty(), "{name}: no recording");
        let v = score(py, &recs, &sim_out);
        let tasks = v["tasks"].as_u64().unwrap_or(0) as u32;
        let matched = v["matched"].as_u64().unwrap_or(0) as u32;
        let decisions = v["decisions_matched"].as_u64().unwrap_or(0) as u32;
        println!(
            "{name:24} match: {matched}/{tasks}; decisions: {decisions}/{tasks} (floor {floor})"
        );
        total.0 += matched;
        total.1 += decisions;
        total.2 += tasks;
        if decisions < floor {
            failures.push(format!(
                "{name}: {decisions}/{tasks} decisions, below the floor {floor}"
            ));
        }
    }
    println!(
        "{:24} match: {}/{}; decisions: {}/{}",
        "all cases", total.0, total.2, total.1, total.2
    );
    assert!(
        failures.is_empty(),
        "fidelity regressed:\n{}",
        failures.join("\n")
    );
}

/// The cases recorded with the harness's `reaper.py` (`"reaper": true`: a
/// killed job's orphaned processes are reaped at once, as systemd does on a
/// real node, so slurmstepd's kill of a job is not held up by this VM's slow
/// PID 1; docs/preemption.md). There Slurm's kills agree with themselves,
/// and the default kill (done at once) must reproduce every recording on its
/// own, not only the best of three: at least 95% of the decisions of each,
/// but for the recordings below (decisions that must match).
const REAPER_RECORDINGS_BELOW_95: &[(&str, u64)] = &[
    // Not a kill: s1's begin time after its requeue and o3's submission
    // fell in the same second (20), and in this recording alone Slurm
    // started s1 before o3 came, which then preempted it again (as in
    // preempt_heldout's third recording). Whole seconds cannot order them.
    ("preempt_heldout_reaped.rerun2", 5),
    // Not a kill: j2, submitted at 0.5 s, started at 1 s in these
    // recordings, so j3 (submitted at 1 s) waited for Priority before
    // Resources; gresim starts j2 in second 0 (as in admin_requeuehold).
    ("admin_requeuehold_reaped", 3),
    ("admin_requeuehold_reaped.rerun", 3),
    ("admin_requeuehold_reaped.rerun2", 3),
    ("admin_requeue_reaped", 3),
];

#[test]
fn every_recording_made_with_the_reaper_is_reproduced_on_its_own() {
    let Some(py) = python() else {
        return gresim_test_support::skip!(
            "every_recording_made_with_the_reaper_is_reproduced_on_its_own",
            "no python3 on this machine to run score.py",
        );
    };
    let tmp = tempfile::tempdir().expect("temporary directory");
    let cases = dir().join("cases");
    let mut names: Vec<String> = std::fs::read_dir(&cases)
        .expect("cases directory")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.contains(".result."))
        .filter(|n| {
            let text = std::fs::read_to_string(cases.join(n)).expect("case");
            let v: serde_json::Value = serde_json::from_str(&text).expect("case JSON");
            v["reaper"] == serde_json::Value::Bool(true)
        })
        .map(|n| n.trim_end_matches(".json").to_string())
        .collect();
    names.sort();
    assert!(names.len() >= 7, "the reaper cases are missing: {names:?}");
    let mut failures = Vec::new();
    for name in &names {
        let sim_out = simulate(tmp.path(), name, &[]);
        for suffix in ["", ".rerun", ".rerun2"] {
            let rec = cases.join(format!("{name}{suffix}.result.json"));
            assert!(rec.exists(), "{name}: recording {suffix:?} is missing");
            let v = score(py, &[rec], &sim_out);
            let tasks = v["tasks"].as_u64().unwrap_or(0);
            let decisions = v["decisions_matched"].as_u64().unwrap_or(0);
            println!("{name}{suffix:8} decisions: {decisions}/{tasks}");
            let recording = format!("{name}{suffix}");
            let floor = REAPER_RECORDINGS_BELOW_95
                .iter()
                .find(|(r, _)| *r == recording)
                .map_or((tasks * 95).div_ceil(100), |&(_, f)| f);
            if tasks == 0 || decisions < floor {
                failures.push(format!("{recording}: {decisions}/{tasks} decisions"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "below its floor (95% unless listed) on its own:\n{}",
        failures.join("\n")
    );
}

#[test]
fn conformance_output_follows_the_recording_schema() {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let out = tmp.path().join("backfill.json");
    let run = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(["conformance"])
        .arg(dir().join("cases/backfill.json"))
        .arg("-o")
        .arg(&out)
        .output()
        .expect("run sim");
    assert!(run.status.success());
    // The diff against the recording beside the case goes to stderr.
    assert!(String::from_utf8_lossy(&run.stderr).contains("diff against"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("output")).expect("JSON");
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 12);
    for j in jobs {
        assert_eq!(j["submit"]["rc"], 0);
        for t in j["tasks"].as_array().expect("tasks") {
            assert!(t["final_state"].is_string());
            assert!(t["pending_reasons"].is_array());
            for r in t["runs"].as_array().expect("runs") {
                assert!(r["start"].is_u64() && r["end"].is_u64());
                assert!(r["nodes"].is_array() && r["gpu_idx"].is_object());
            }
        }
    }
    // b01 asks for gpu:4 on an idle 2 x 4 a100 cluster: all of gpu01 at t=0.
    let b01 = &jobs[0]["tasks"][0]["runs"][0];
    assert_eq!(b01["nodes"], serde_json::json!(["gpu01"]));
    assert_eq!(b01["gpu_idx"]["gpu01"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(b01["start"], 0);
}
