//! Dynamic MIG (docs/mig.md): the `dynamic-mig` policy repartitions only
//! idle GPUs, honours the reconfiguration delay and counts it as lost
//! capacity, applies only legal layouts, leaves the `slurm` policy's
//! decisions as they were, and is deterministic.

use std::path::Path;

use gresim_engine::SimOutput;
use gresim_model::catalog;
use gresim_model::mig_dynamic::{check_layout, is_published, SLOTS_PER_GPU};
use gresim_model::state::gpu_indices;
use gresim_model::JobState;

fn run(text: &str, policy: &str) -> SimOutput {
    let sc = gresim_io::parse_scenario(Path::new("test.json"), text).expect("scenario parses");
    let p = policy
        .parse::<gresim_sched::PolicyKind>()
        .expect("known policy")
        .build();
    gresim_engine::run(sc.sim_input(sc.seed), p).expect("run succeeds")
}

/// Two A100s that start whole; a whole-GPU job, then three slice jobs, at once.
const TINY: &str = r#"{
  "schema_version": 1,
  "cluster": {
    "mig_reconfig_delay": 40,
    "nodes": [{"names": "n1", "cores_per_socket": 16, "memory": "256G",
               "gpus": [{"model": "A100-SXM4-80GB", "count": 2, "mig_dynamic": true}]}]
  },
  "scheduler": {"def_mem_per_cpu": "1G"},
  "workload": {"jobs": [
    {"id": "d", "submit": 0, "run_time": 100, "gres": "gpu:a100:1"},
    {"id": "a", "submit": 0, "run_time": 100, "gres": "gpu:a100_1g.10gb:1"},
    {"id": "b", "submit": 0, "run_time": 100, "gres": "gpu:a100_1g.10gb:1"},
    {"id": "c", "submit": 0, "run_time": 100, "gres": "gpu:a100_3g.40gb:1"}
  ]}
}"#;

/// One node of four dynamic A100s, half of them split, under a mixed stream.
fn busy(delay: u64) -> String {
    busy_with(Some(delay))
}

/// [`busy`], with static MIG GPUs when `delay` is `None`.
fn busy_with(delay: Option<u64>) -> String {
    let (dynamic, delay_field) = match delay {
        Some(d) => (
            r#", "mig_dynamic": true"#,
            format!(r#""mig_reconfig_delay": {d},"#),
        ),
        None => ("", String::new()),
    };
    format!(
        r#"{{
  "schema_version": 1,
  "seed": 7,
  "cluster": {{
    {delay_field}
    "nodes": [{{"names": "n[1-2]", "cores_per_socket": 32, "memory": "512G",
               "gpus": [{{"model": "A100-SXM4-80GB", "count": 2{dynamic},
                          "mig": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}},
                        {{"model": "A100-SXM4-80GB", "count": 2{dynamic}}}]}}]
  }},
  "scheduler": {{"def_mem_per_cpu": "1G"}},
  "workload": {{"synthetic": {{
    "jobs": 150, "mean_interarrival": 40, "run_time_median": 300, "run_time_sigma": 0.7,
    "mix": [
      {{"weight": 4, "gpus": 1, "type": "a100_1g.10gb", "cpus_per_gpu": 2}},
      {{"weight": 1, "gpus": 1, "type": "a100_2g.20gb", "cpus_per_gpu": 2}},
      {{"weight": 1, "gpus": 1, "type": "a100_3g.40gb", "cpus_per_gpu": 4}},
      {{"weight": 1, "gpus": 1, "type": "a100_4g.40gb", "cpus_per_gpu": 4}},
      {{"weight": 1, "gpus": 1, "type": "a100", "cpus_per_gpu": 8}}
    ]
  }}}}
}}"#
    )
}

/// No run of any job holds a device of a GPU while it is being repartitioned.
fn assert_only_idle_gpus_repartitioned(out: &SimOutput) {
    let dm = out.cluster.dynamic_mig().expect("dynamic MIG cluster");
    for c in &dm.log {
        let g = dm
            .gpus
            .iter()
            .find(|g| g.node == c.node && g.phys == c.phys)
            .unwrap();
        for j in &out.jobs {
            for r in &j.runs {
                let end = r.end.unwrap_or(out.end_time);
                let on_gpu = r
                    .alloc
                    .nodes
                    .iter()
                    .any(|na| na.node == c.node && na.gpus & g.slot_mask() != 0);
                assert!(
                    !(on_gpu && r.start < c.ready && end > c.start),
                    "job {} ran [{}, {end}) on GPU {} while it was repartitioned [{}, {})",
                    j.display_id(),
                    r.start,
                    c.phys,
                    c.start,
                    c.ready
                );
            }
        }
    }
}

#[test]
fn tiny_scenario_repartitions_an_idle_gpu_after_the_delay() {
    let out = run(TINY, "dynamic-mig");
    let dm = out.cluster.dynamic_mig().unwrap();
    let delay = dm.reconfig_delay;
    assert_eq!(delay, 40);
    assert!(!dm.log.is_empty(), "the slice jobs need a repartitioning");
    for c in &dm.log {
        assert_eq!(c.ready - c.start, delay, "the delay is honoured");
    }
    // The whole-GPU job starts at once on GPU 0. GPU 1, idle, is
    // repartitioned for the 1g jobs, which start when it is ready; the 3g
    // job waits for GPU 0 to be idle and repartitioned in turn.
    for j in &out.jobs {
        assert_eq!(j.state, JobState::Completed, "{}", j.display_id());
    }
    let (d, a, b, c) = (&out.jobs[0], &out.jobs[1], &out.jobs[2], &out.jobs[3]);
    assert_eq!(d.runs[0].start, 0);
    assert_eq!(d.runs[0].alloc.nodes[0].gpus, 1 << dm.gpus[0].first_slot);
    let first = &dm.log[0];
    assert_eq!((first.start, first.phys), (0, 1), "the idle GPU goes first");
    assert!(first.from.is_whole());
    for j in [a, b] {
        assert_eq!(j.runs[0].start, first.ready, "{}", j.display_id());
        assert_eq!(j.runs[0].alloc.nodes[0].gpus & !dm.gpus[1].slot_mask(), 0);
    }
    let on_gpu0 = dm
        .log
        .iter()
        .find(|c| c.phys == 0)
        .expect("GPU 0 is repartitioned");
    assert!(
        on_gpu0.start >= d.runs[0].end.unwrap(),
        "not while d runs on it"
    );
    assert_eq!(c.runs[0].start, on_gpu0.ready);
    assert_eq!(c.runs[0].alloc.nodes[0].gpus & !dm.gpus[0].slot_mask(), 0);
    assert_only_idle_gpus_repartitioned(&out);
    // Under `slurm` the slice jobs can never start: no GPU has slices.
    let st = run(TINY, "slurm");
    assert!(st.cluster.dynamic_mig().unwrap().log.is_empty());
    assert_eq!(st.jobs[0].state, JobState::Completed);
    assert!(st.jobs[1..].iter().all(|j| j.state == JobState::Pending));
}

#[test]
fn busy_run_repartitions_only_idle_gpus_to_legal_layouts() {
    let out = run(&busy(45), "dynamic-mig");
    let dm = out.cluster.dynamic_mig().unwrap();
    assert!(dm.log.len() >= 5, "only {} repartitionings", dm.log.len());
    assert_only_idle_gpus_repartitioned(&out);
    for c in &dm.log {
        let g = dm
            .gpus
            .iter()
            .find(|g| g.node == c.node && g.phys == c.phys)
            .unwrap();
        let m = catalog::model(g.model);
        assert_eq!(check_layout(m, &c.to), Ok(()), "{}", c.to.describe());
        assert!(
            is_published(m, &c.to),
            "the policy keeps to published layouts: {}",
            c.to.describe()
        );
        assert_ne!(c.from, c.to);
        assert_eq!(c.ready - c.start, 45);
    }
    // Consecutive changes of one GPU chain: each starts from the last one's layout.
    for g in &dm.gpus {
        let mut cur = None;
        for c in dm
            .log
            .iter()
            .filter(|c| c.node == g.node && c.phys == g.phys)
        {
            if let Some(prev) = &cur {
                assert_eq!(&c.from, prev);
            }
            cur = Some(c.to.clone());
        }
    }
    // Every job ran on devices of the type it asked for (checked against
    // the layout in effect when it started).
    for j in &out.jobs {
        let Some(r) = j.runs.first() else { continue };
        let want = j.request.gpus_per_node[0].ty.unwrap();
        for na in &r.alloc.nodes {
            for idx in gpu_indices(na.gpus) {
                let g = dm
                    .gpus
                    .iter()
                    .find(|g| g.node == na.node && g.slot_mask() & (1 << idx) != 0)
                    .unwrap();
                let layout = dm
                    .log
                    .iter()
                    .rfind(|c| c.node == g.node && c.phys == g.phys && c.ready <= r.start)
                    .map_or_else(
                        || {
                            dm.log
                                .iter()
                                .find(|c| c.node == g.node && c.phys == g.phys)
                                .map_or(g.layout.clone(), |c| c.from.clone())
                        },
                        |c| c.to.clone(),
                    );
                let slot = usize::from(idx - g.first_slot);
                assert!(slot < SLOTS_PER_GPU);
                assert_eq!(
                    g.device_types(&layout).get(slot),
                    Some(&want),
                    "{}",
                    j.display_id()
                );
            }
        }
    }
    // Lost capacity: the compute available is that of the four GPUs all
    // along (a GPU being repartitioned still counts, and nothing runs on it).
    let u = &out.usage;
    let gpus = dm.gpus.len() as u128;
    assert_eq!(
        u.gpu_sevenths_avail_secs,
        7 * gpus * u128::from(u.to - u.from)
    );
    assert_eq!(
        dm.reconfig_gpu_secs(out.end_time),
        45 * dm.reconfigurations() as u64
            - dm.gpus
                .iter()
                .filter_map(|g| g.pending.as_ref())
                .map(|(ready, _)| ready.saturating_sub(out.end_time))
                .sum::<u64>()
    );
    // The delay matters: a longer one changes the outcome.
    let slow = run(&busy(600), "dynamic-mig");
    let mean_start = |o: &SimOutput| -> u64 {
        o.jobs
            .iter()
            .filter_map(|j| j.runs.first())
            .map(|r| r.start)
            .sum()
    };
    assert!(mean_start(&slow) > mean_start(&out));
}

/// Where one GPU device of a run was: (start, node, physical GPU, MIG
/// profile and start if a slice).
type Placed = (u64, u32, u8, Option<(String, u8)>);

#[test]
fn slurm_policy_decides_the_same_with_dynamic_slots() {
    // The `slurm` policy on GPUs declared mig_dynamic (never repartitioned)
    // must start the same jobs at the same times on the same instances as
    // on static MIG GPUs with the same layouts.
    // Static MIG has no 4g.40gb instance: that shape is left out of both.
    let four_g = r#"{"weight": 1, "gpus": 1, "type": "a100_4g.40gb", "cpus_per_gpu": 4},"#;
    let dynamic = busy(30).replace(four_g, "");
    let static_ = busy_with(None).replace(four_g, "");
    assert!(!dynamic.contains("4g.40gb"));
    assert!(!static_.contains("mig_dynamic"));
    let a = run(&static_, "slurm");
    let b = run(&dynamic, "slurm");
    assert!(b.cluster.dynamic_mig().unwrap().log.is_empty());
    assert_eq!(a.jobs.len(), b.jobs.len());
    let placed = |o: &SimOutput, j: usize| -> Vec<Placed> {
        let job = &o.jobs[j];
        job.runs
            .iter()
            .flat_map(|r| {
                r.alloc.nodes.iter().flat_map(move |na| {
                    let node = o.cluster.node(na.node);
                    gpu_indices(na.gpus).map(move |g| {
                        let d = &node.gpus[usize::from(g)];
                        (
                            r.start,
                            na.node.0,
                            d.phys,
                            d.mig.map(|m| (m.profile.name.to_string(), m.start)),
                        )
                    })
                })
            })
            .collect()
    };
    let mut started = 0;
    for j in 0..a.jobs.len() {
        assert_eq!(a.jobs[j].state, b.jobs[j].state, "job {j}");
        assert_eq!(placed(&a, j), placed(&b, j), "job {j}");
        started += usize::from(!a.jobs[j].runs.is_empty());
    }
    assert!(started > 50);
    assert_eq!(
        a.usage.gpu_alloc_secs.iter().sum::<u128>(),
        b.usage.gpu_alloc_secs.iter().sum::<u128>()
    );
}

#[test]
fn dynamic_runs_are_deterministic() {
    let a = run(&busy(45), "dynamic-mig");
    let b = run(&busy(45), "dynamic-mig");
    assert_eq!(format!("{:?}", a.jobs), format!("{:?}", b.jobs));
    assert_eq!(
        a.cluster.dynamic_mig().unwrap().log,
        b.cluster.dynamic_mig().unwrap().log
    );
    assert_eq!(a.usage, b.usage);
}

#[test]
fn bad_dynamic_settings_are_input_errors() {
    let t4 = TINY.replace("A100-SXM4-80GB", "T4");
    let e = gresim_io::parse_scenario(Path::new("t.json"), &t4)
        .err()
        .unwrap();
    assert!(e.to_string().contains("mig_dynamic"), "{e}");
    assert!(e.to_string().contains("does not support MIG"), "{e}");
    let no_dyn = TINY.replace(r#", "mig_dynamic": true"#, "");
    let e = gresim_io::parse_scenario(Path::new("t.json"), &no_dyn)
        .err()
        .unwrap();
    assert!(e.to_string().contains("mig_reconfig_delay"), "{e}");
}
