//! `Simulation` is the engine run with the chosen policy and seed, nothing
//! more: same outputs as calling the engine directly, the scenario's own
//! policy and seed by default, a policy of one's own, and the output files.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use gresim::{Policy, PolicyKind, Scenario, Simulation, Summary};
use gresim_model::job::{Job, JobSpec};
use gresim_model::{Cluster, ClusterState, JobIdx, NodeId};
use gresim_policy::{EnqueueCtx, PassCtx, SchedParams};

fn scenario() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/mig_packing.json");
    gresim::load_runnable_scenario(&path).expect("the shipped scenario loads")
}

#[test]
fn a_simulation_is_the_engine_run_with_its_policy_and_seed() {
    let sc = scenario();
    for kind in [PolicyKind::Slurm, PolicyKind::Fifo, PolicyKind::Easy] {
        let o = Simulation::new(&sc)
            .policy(kind)
            .seed(3)
            .run()
            .expect("runs");
        let direct = gresim_engine::run(sc.sim_input(3), kind.build()).expect("runs");
        assert_eq!(o.policy(), kind.name());
        assert_eq!(o.meta.seed, Some(3));
        assert_eq!(
            o.summary().to_json(),
            Summary::compute(&direct, &sc.name).to_json(),
            "{kind}"
        );
        assert_eq!(o.records().len(), direct.jobs.len());
    }
}

#[test]
fn the_scenario_gives_the_defaults() {
    let sc = scenario();
    let o = Simulation::new(&sc).run().expect("runs");
    assert_eq!(o.policy(), sc.policy.name());
    assert_eq!(o.meta.seed, Some(sc.seed));
    assert_eq!(o.meta.scenario, sc.name);
    let explicit = Simulation::new(&sc)
        .policy(sc.policy)
        .seed(sc.seed)
        .run()
        .expect("runs");
    assert_eq!(o.summary().to_json(), explicit.summary().to_json());
}

/// A policy of one's own: `slurm` behind a wrapper that counts main passes.
struct Counting {
    inner: Box<dyn Policy>,
    passes: Arc<AtomicU32>,
}

impl Policy for Counting {
    fn name(&self) -> &'static str {
        "counting-slurm"
    }
    fn submission_rejection(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        spec: &JobSpec,
    ) -> Option<String> {
        self.inner.submission_rejection(cluster, params, spec)
    }
    fn beyond_partition_limits(&self, cluster: &Cluster, job: &Job) -> bool {
        self.inner.beyond_partition_limits(cluster, job)
    }
    fn unavailable_at_submit(
        &mut self,
        cluster: &Cluster,
        params: &SchedParams,
        state: &ClusterState,
        job: &Job,
    ) -> Option<Vec<NodeId>> {
        self.inner
            .unavailable_at_submit(cluster, params, state, job)
    }
    fn cluster_changed(&mut self) {
        self.inner.cluster_changed();
    }
    fn enqueue(&mut self, job: JobIdx, ctx: &EnqueueCtx<'_>) -> bool {
        self.inner.enqueue(job, ctx)
    }
    fn dequeue(&mut self, job: JobIdx, jobs: &[Job], cluster: &Cluster) {
        self.inner.dequeue(job, jobs, cluster);
    }
    fn main_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.passes.fetch_add(1, Ordering::Relaxed);
        self.inner.main_pass(ctx);
    }
    fn backfill_pass(&mut self, ctx: &mut PassCtx<'_>) {
        self.inner.backfill_pass(ctx);
    }
    fn has_backfill(&self) -> bool {
        self.inner.has_backfill()
    }
    fn queued(&self) -> usize {
        self.inner.queued()
    }
}

#[test]
fn a_custom_policy_runs_through_the_same_entry_point() {
    let sc = scenario();
    let passes = Arc::new(AtomicU32::new(0));
    let custom = Counting {
        inner: PolicyKind::Slurm.build(),
        passes: Arc::clone(&passes),
    };
    let o = Simulation::new(&sc)
        .custom_policy(Box::new(custom))
        .seed(5)
        .run()
        .expect("runs");
    assert_eq!(o.policy(), "counting-slurm");
    assert!(passes.load(Ordering::Relaxed) > 0, "the engine called it");
    let slurm = Simulation::new(&sc)
        .policy(PolicyKind::Slurm)
        .seed(5)
        .run()
        .expect("runs");
    let strip = |s: Summary| {
        let mut v: serde_json::Value = serde_json::from_str(&s.to_json()).expect("json");
        v["policy"] = serde_json::Value::Null;
        v
    };
    assert_eq!(
        strip(o.summary()),
        strip(slurm.summary()),
        "same decisions as slurm"
    );
}

#[test]
fn an_outcome_writes_the_output_files() {
    let sc = scenario();
    let o = Simulation::new(&sc).run().expect("runs");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let summary = o.write(dir.path()).expect("writes");
    assert_eq!(summary.to_json(), o.summary().to_json());
    for f in gresim_report::OUTPUT_FILES {
        assert!(dir.path().join(f).is_file(), "{f} written");
    }
    let rf = gresim_report::RunFile::load(dir.path()).expect("run.json reads back");
    assert_eq!(rf.jobs.len(), o.run_file().jobs.len());
}
