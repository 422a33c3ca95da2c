//! Whole passes decided outside gresim (`gresim_sched::external`) and runs
//! driven pass by pass (`SteppedRun`): a FIFO decider gives `fifo`'s starts
//! on a one-partition cluster, a stepped run is the run, and refused
//! decisions stop the run with the policy's message (or, lenient, are kept).

use std::path::Path;
use std::sync::{Arc, Mutex};

use gresim::{PolicyKind, Scenario, Simulation, SteppedRun};
use gresim_model::NodeId;
use gresim_sched::external::{
    ExternalPass, PassDecider, PassDecisions, PassView, Scripted, Shared, StartDecision,
};

fn scenario() -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/mig_packing.json");
    gresim::load_runnable_scenario(&path).expect("the shipped scenario loads")
}

/// A job's id, start, end, nodes and GPUs.
type Decided = (String, Option<u64>, Option<u64>, String, String);

/// What a run decided, job by job.
fn starts(o: &gresim::Outcome) -> Vec<Decided> {
    o.records()
        .into_iter()
        .map(|r| (r.job_id, r.start, r.end, r.nodes, r.gpus))
        .collect()
}

/// The queue in priority order, as `order`: Slurm's main pass on a
/// cluster of one partition.
struct FifoOrder;

impl PassDecider for FifoOrder {
    fn name(&self) -> &'static str {
        "fifo-order"
    }
    fn decide(&mut self, view: &PassView<'_, '_>) -> Result<PassDecisions, String> {
        Ok(PassDecisions {
            order: Some(view.queue.iter().map(|q| q.id).collect()),
            ..PassDecisions::default()
        })
    }
}

/// The same FIFO through `starts`: it asks cons_tres itself which head jobs
/// fit, on a copy of the state.
struct FifoStarts;

impl PassDecider for FifoStarts {
    fn name(&self) -> &'static str {
        "fifo-starts"
    }
    fn decide(&mut self, view: &PassView<'_, '_>) -> Result<PassDecisions, String> {
        let ctx = view.ctx;
        let mut state = ctx.state.clone();
        let mut cache = gresim_sched::select::SelectCache::default();
        let mut d = PassDecisions::default();
        for q in view.queue {
            let req = &ctx.jobs[q.job.idx()].request;
            match gresim_sched::select::select(
                &mut cache,
                ctx.cluster,
                ctx.params,
                &state,
                req,
                q.partitions[0],
                None,
            ) {
                Ok(a) => {
                    state.allocate(ctx.cluster, &a).map_err(|e| e.to_string())?;
                    d.starts.push(StartDecision {
                        id: q.id,
                        partition: None,
                        nodes: Some(a.nodes.iter().map(|n| (n.node, n.gpus)).collect()),
                    });
                }
                Err(_) => break,
            }
        }
        Ok(d)
    }
}

#[test]
fn a_fifo_decider_starts_what_slurms_main_pass_starts() {
    let sc = scenario();
    assert_eq!(
        sc.cluster.partitions.len(),
        1,
        "the comparison needs one partition"
    );
    let fifo = Simulation::new(&sc)
        .policy(PolicyKind::Fifo)
        .seed(5)
        .run()
        .expect("runs");
    let order = Simulation::new(&sc)
        .custom_policy(Box::new(ExternalPass::new(FifoOrder)))
        .seed(5)
        .run()
        .expect("runs");
    let by_starts = Simulation::new(&sc)
        .custom_policy(Box::new(ExternalPass::new(FifoStarts)))
        .seed(5)
        .run()
        .expect("runs");
    assert_eq!(order.policy(), "fifo-order");
    assert!(fifo.records().iter().all(|r| r.start.is_some()));
    assert_eq!(starts(&order), starts(&fifo));
    assert_eq!(starts(&by_starts), starts(&fifo));
}

#[test]
fn a_stepped_run_is_the_run() {
    let sc = scenario();
    let whole = Simulation::new(&sc)
        .custom_policy(Box::new(ExternalPass::new(FifoOrder)))
        .seed(9)
        .run()
        .expect("runs");
    let mut stepped =
        SteppedRun::new(&sc, Box::new(ExternalPass::new(FifoOrder)), 9, None).expect("made");
    let mut passes = 0;
    let mut last = 0;
    while let Some(t) = stepped.next_pass().expect("steps") {
        assert!(t >= last, "passes in time order");
        last = t;
        passes += 1;
        assert!(stepped.run_pass().expect("runs the pass"));
    }
    assert!(passes > 100, "{passes} passes");
    // Later calls stay at the end.
    assert_eq!(stepped.next_pass().expect("ended"), None);
    let o = stepped.finish();
    assert_eq!(starts(&o), starts(&whole));
    assert_eq!(o.summary().to_json(), whole.summary().to_json());
}

#[test]
fn decisions_handed_over_between_passes_start_jobs_one_by_one() {
    let sc = scenario();
    let shared = Arc::new(Mutex::new(ExternalPass::lenient(Scripted::default())));
    let mut run =
        SteppedRun::new(&sc, Box::new(Shared(Arc::clone(&shared))), 1, None).expect("made");
    let mut started = 0;
    let mut invalid = 0;
    let mut passes = 0;
    while let Some(_t) = run.next_pass().expect("steps") {
        passes += 1;
        let queue = {
            let p = shared.lock().unwrap();
            p.queue_view(run.engine().jobs())
        };
        assert!(!queue.is_empty(), "a pass is offered only with jobs queued");
        // Always the last queued job; an unknown id now and then.
        let id = if passes % 7 == 3 {
            u32::MAX - 1
        } else {
            queue[queue.len() - 1].id
        };
        shared.lock().unwrap().decider_mut().next = Some(PassDecisions {
            starts: vec![StartDecision {
                id,
                partition: None,
                nodes: None,
            }],
            ..PassDecisions::default()
        });
        run.run_pass().expect("runs");
        let (ok, rejected) = {
            let mut p = shared.lock().unwrap();
            (p.take_started(), p.take_rejected())
        };
        started += ok.len();
        invalid += rejected.len();
        if !ok.is_empty() {
            run.request_pass_now();
        }
    }
    let o = run.finish();
    assert!(invalid > 0);
    assert_eq!(
        started,
        o.records().iter().filter(|r| r.start.is_some()).count()
    );
    assert_eq!(started, o.records().len(), "every job ran");
}

/// Decides one refused thing, once jobs are queued.
struct Bad(&'static str);

impl PassDecider for Bad {
    fn name(&self) -> &'static str {
        "bad"
    }
    fn decide(&mut self, view: &PassView<'_, '_>) -> Result<PassDecisions, String> {
        let first = view.queue[0].id;
        let start = |id, nodes| StartDecision {
            id,
            partition: None,
            nodes,
        };
        Ok(match self.0 {
            "unknown" => PassDecisions {
                starts: vec![start(123_456, None)],
                ..Default::default()
            },
            "twice" => PassDecisions {
                starts: vec![start(first, None), start(first, None)],
                ..Default::default()
            },
            "busy gpu" => PassDecisions {
                // GPU 0 of node 0 twice: the second start finds it taken.
                starts: view
                    .queue
                    .iter()
                    .map(|q| start(q.id, Some(vec![(NodeId::from_idx(0), 1)])))
                    .collect(),
                ..Default::default()
            },
            "reason" => PassDecisions {
                reasons: vec![(99_999, gresim_model::Reason::Priority, None)],
                ..Default::default()
            },
            _ => return Err("the decider gave up".into()),
        })
    }
}

#[test]
fn refused_decisions_stop_the_run_with_the_reason() {
    let sc = scenario();
    for (what, msg) in [
        ("unknown", "start: job 123456 is not pending in the queue"),
        ("twice", "is started twice"),
        ("busy gpu", "does not fit: node gpu01"),
        ("reason", "reason: job 99999 is not pending in the queue"),
        ("raise", "the decider gave up"),
    ] {
        let e = Simulation::new(&sc)
            .custom_policy(Box::new(ExternalPass::new(Bad(what))))
            .run()
            .err()
            .unwrap_or_else(|| panic!("{what}: the run must stop"));
        assert!(
            matches!(e.source, gresim::EngineError::Policy { .. }),
            "{what}: {e}"
        );
        assert!(e.to_string().contains(msg), "{what}: {e}");
    }
}
