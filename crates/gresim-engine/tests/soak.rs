//! The failure soak (docs/reliability.md): `scenarios/soak_failures.json`
//! runs 3000 jobs for a week of simulated time on 17 nodes while every node
//! fails on its own and with its rack. No job may be lost, every node must
//! fail at least once, and the failure figures must add up.

use std::path::Path;

use gresim_model::job::JobState;

#[test]
fn soak_every_node_fails_and_no_job_is_lost() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/soak_failures.json");
    let scenario = gresim_io::load_scenario(&path).expect("the soak scenario loads");
    let policy = scenario.policy.build();
    let out = gresim_engine::run(scenario.sim_input(scenario.seed), policy).expect("the soak runs");

    // Every submission has its job, and every job ended: none is left
    // RUNNING or PENDING, nothing hit a horizon.
    assert!(!out.hit_horizon);
    assert_eq!(out.specs.len(), 3000);
    assert_eq!(out.jobs.len(), 3000);
    for j in &out.jobs {
        assert!(
            j.state.is_terminal() && j.state != JobState::Rejected,
            "job {} is {:?} (reason {:?}) at the end",
            j.display_id(),
            j.state,
            j.reason
        );
        // A job whose node failed was requeued unless it asked not to be.
        if let Some(i) = j.runs.iter().position(|r| r.state == JobState::NodeFail) {
            if j.requeue {
                assert!(i + 1 < j.runs.len(), "job {} not requeued", j.display_id());
            } else {
                assert_eq!(j.state, JobState::NodeFail);
            }
        }
    }
    // Every node failed at least once.
    for (i, n) in out.node_failures.iter().enumerate() {
        assert!(*n >= 1, "node {} never failed", out.cluster.nodes[i].name);
    }
    let failures: u32 = out.node_failures.iter().sum();
    let requeued_runs = out
        .jobs
        .iter()
        .flat_map(|j| &j.runs)
        .filter(|r| r.state == JobState::NodeFail)
        .count();
    let resumed = out.jobs.iter().filter(|j| j.work_saved() > 0).count();
    let sum = gresim_report::summary::Summary::compute(&out, "soak_failures");
    eprintln!(
        "soak: {} jobs, {} node failures, {requeued_runs} runs hit, {resumed} jobs resumed \
         from a checkpoint, {:.1} GPU-hours lost, {} OOM, {} CPU fallbacks, {} events, \
         {:?}",
        out.jobs.len(),
        failures,
        sum.lost_gpu_hours,
        sum.oom_jobs,
        sum.cpu_fallback_jobs,
        out.events,
        sum.by_state
    );
    assert!(
        requeued_runs >= 50,
        "failures should hit running jobs: {requeued_runs}"
    );
    assert!(resumed >= 10, "checkpointed jobs should resume: {resumed}");
    assert!(sum.lost_gpu_hours > 0.0);
    assert!(sum.oom_jobs > 0 && sum.cpu_fallback_jobs > 0);
}
