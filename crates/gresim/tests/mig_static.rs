//! Static MIG: layouts outside NVIDIA's published combinations ("verify on
//! hardware"), memory-weighted utilization worked by hand, and multi-GPU
//! jobs on MIG slices under each `scheduler.mig_multi_gpu` mode.

use std::path::Path;

use gresim_engine::SimOutput;
use gresim_io::Scenario;
use gresim_report::explain::explain;
use gresim_report::{job_records, JobRecord, RunFile, RunMeta, Summary};

fn load(name: &str, text: &str) -> Scenario {
    gresim_io::parse_scenario(Path::new(&format!("mig_static/{name}.json")), text)
        .unwrap_or_else(|e| panic!("{name}: the scenario does not parse: {e}"))
}

fn run(s: &Scenario) -> SimOutput {
    let mut input = s.sim_input(s.seed);
    input.record_reasons = true;
    gresim_engine::run(input, gresim_sched::PolicyKind::Fifo.build())
        .unwrap_or_else(|e| panic!("the run failed: {e}"))
}

fn record<'a>(recs: &'a [JobRecord], out: &SimOutput, key: &str) -> &'a JobRecord {
    let i = out
        .jobs
        .iter()
        .position(|j| out.specs[j.sub as usize].key == key)
        .unwrap_or_else(|| panic!("no job {key}"));
    &recs[i]
}

/// One node with one GPU of `model` split as `layout`.
fn one_gpu(model: &str, layout: &[&str]) -> String {
    let l: Vec<String> = layout.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        r#"{{
          "schema_version": 1,
          "cluster": {{"nodes": [
            {{"names": "m[1-2]", "sockets": 1, "cores_per_socket": 8, "memory": "64G",
             "gpus": [{{"model": "A100-SXM4-80GB", "count": 1}},
                      {{"model": "{model}", "count": 2, "mig": [{}]}}]}}
          ]}},
          "workload": {{"jobs": [{{"id": "a", "submit": 0, "gres": "gpu:1", "run_time": 10}}]}}
        }}"#,
        l.join(", ")
    )
}

const MODELS: [(&str, [&str; 6]); 4] = [
    (
        "A100-SXM4-40GB",
        [
            "1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
        ],
    ),
    (
        "A100-SXM4-80GB",
        [
            "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
        ],
    ),
    (
        "H100-SXM5-80GB",
        [
            "1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb",
        ],
    ),
    (
        "H200-141GB",
        [
            "1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb",
        ],
    ),
];

#[test]
fn layouts_are_published_unpublished_or_rejected_for_each_model() {
    for (model, [g1, _g1m, g2, g3, g4, g7]) in MODELS {
        // Published layouts load without a warning.
        for l in [
            vec![g7],
            vec![g3, g2, g1, g1],
            vec![g4, g1, g1, g1],
            vec![g1; 7],
        ] {
            let s = load("published", &one_gpu(model, &l));
            assert!(s.warnings.is_empty(), "{model} {l:?}: {:?}", s.warnings);
        }
        // Legal by the slice model, not published: one warning naming the
        // nodes, the GPU indices (1 and 2: GPU 0 is whole) and the layout.
        for l in [vec![g4, g3], vec![g3, g1, g1, g1, g1]] {
            let s = load("unpublished", &one_gpu(model, &l));
            assert_eq!(s.warnings.len(), 1, "{model} {l:?}: {:?}", s.warnings);
            let w = &s.warnings[0];
            let layout = l.join("+");
            assert!(
                w.starts_with("mig_static/unpublished.json: ")
                    && w.contains(&format!(
                        "MIG layout {layout} on {model} GPU 1,2 of node(s) m[1-2]"
                    ))
                    && w.contains("verify on hardware"),
                "{w}"
            );
            // It runs: the warning does not change the cluster.
            let out = run(&s);
            assert_eq!(out.jobs[0].state.as_str(), "COMPLETED");
        }
        // Illegal layouts are errors naming the GPU and the profile.
        for (l, want) in [
            (vec![g3, g3, g1], "overlap"),
            (vec![g4, g4], "at most 1 instance(s) of"),
            (vec![g7, g1], "more than 7 compute slices on one"),
        ] {
            let e = gresim_io::parse_scenario(Path::new("bad.json"), &one_gpu(model, &l))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("at cluster.nodes[0].gpus[1].mig: GPU 1 of m[1-2]: ")
                    && e.contains(want)
                    && e.contains(model),
                "{model} {l:?}: {e}"
            );
            assert!(e.contains(l.last().unwrap()), "{e}");
        }
    }
}

#[test]
fn memory_weighted_utilization_by_hand() {
    // n1: GPU 0 is a whole A100-80GB; GPU 1 is 3g.40gb + 2g.20gb + 1g.10gb + 1g.10gb.
    // GRES indices: 0 a100, 1 a100_3g.40gb, 2 a100_2g.20gb, 3 and 4 a100_1g.10gb.
    let s = load(
        "util",
        r#"{
          "schema_version": 1,
          "cluster": {"nodes": [
            {"names": "n1", "sockets": 1, "cores_per_socket": 16, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 1},
                      {"model": "A100-SXM4-80GB", "count": 1, "mig": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}]}
          ]},
          "scheduler": {"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024},
          "workload": {"jobs": [
            {"id": "whole", "submit": 0, "gres": "gpu:a100:1", "run_time": 100},
            {"id": "three", "submit": 0, "gres": "gpu:a100_3g.40gb:1", "run_time": 200},
            {"id": "one", "submit": 0, "gres": "gpu:a100_1g.10gb:1", "run_time": 200}
          ]}
        }"#,
    );
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let out = run(&s);
    assert_eq!((out.usage.from, out.usage.to), (0, 200));
    let sum = Summary::compute(&out, "util");
    // Devices over 200 s: whole 100 s, 3g 200 s, one 1g 200 s, of 5 devices:
    // 500 / 1000.
    assert_eq!(sum.gpu_utilization, 0.5);
    // Per type: a100 100/200, 3g 200/200, 2g 0, 1g 200/400.
    let by: Vec<(&str, f64)> = sum
        .gpu_utilization_by_type
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        by,
        vec![
            ("a100", 0.5),
            ("a100_1g.10gb", 0.5),
            ("a100_2g.20gb", 0.0),
            ("a100_3g.40gb", 1.0)
        ]
    );
    // SM-weighted (sevenths): (7·100 + 3·200 + 1·200) / ((7 + 3 + 2 + 1 + 1)·200) = 1500 / 2800.
    assert!((sum.gpu_sm_weighted_utilization - 1500.0 / 2800.0).abs() < 1e-12);
    // Memory-weighted (eighths): (8·100 + 4·200 + 1·200) / ((8 + 4 + 2 + 1 + 1)·200) = 1800 / 3200.
    assert_eq!(sum.gpu_memory_weighted_utilization, 0.5625);
    let json = sum.to_json();
    assert!(
        json.contains("\"gpu_memory_weighted_utilization\": 0.5625,"),
        "{json}"
    );
    assert!(
        sum.table()
            .contains("SM-weighted 53.6%   memory-weighted 56.2%\n"),
        "{}",
        sum.table()
    );
}

/// mig01 has only MIG slices (7 × 1g.10gb); big01 has whole GPUs.
fn multi(mode: Option<&str>) -> String {
    let sched = match mode {
        Some(m) => format!(r#", "mig_multi_gpu": "{m}""#),
        None => String::new(),
    };
    format!(
        r#"{{
          "schema_version": 1,
          "cluster": {{"nodes": [
            {{"names": "mig01", "sockets": 1, "cores_per_socket": 16, "memory": "256G",
             "gpus": [{{"model": "A100-SXM4-80GB", "count": 1, "mig": ["1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"]}}]}},
            {{"names": "big01", "sockets": 1, "cores_per_socket": 16, "memory": "256G",
             "gpus": [{{"model": "A100-SXM4-80GB", "count": 2}}]}}
          ]}},
          "partitions": [
            {{"name": "mig", "nodes": "mig01", "default": true}},
            {{"name": "big", "nodes": "big01"}}
          ],
          "scheduler": {{"sched_interval": 1, "timelimit_check_interval": 0, "def_mem_per_cpu": 1024{sched}}},
          "workload": {{"jobs": [
            {{"id": "typed2", "submit": 0, "gres": "gpu:a100_1g.10gb:2", "run_time": 100}},
            {{"id": "untyped2", "submit": 0, "gres": "gpu:2", "run_time": 100}},
            {{"id": "single", "submit": 0, "gres": "gpu:a100_1g.10gb:1", "run_time": 100}},
            {{"id": "pertask", "submit": 0, "ntasks": 2, "gpus_per_task": "a100_1g.10gb:1", "run_time": 100}},
            {{"id": "whole2", "submit": 0, "partition": "big", "gres": "gpu:a100:2", "run_time": 100}}
          ]}}
        }}"#
    )
}

#[test]
fn multi_gpu_on_mig_warn_is_the_default() {
    for mode in [None, Some("warn")] {
        let s = load("warn", &multi(mode));
        // Typed requests are known at load: typed2 and pertask, not the rest.
        assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
        assert!(
            s.warnings[0].contains(
                "job 'typed2' asks for 2 GPU devices including MIG instances (a100_1g.10gb)"
            ),
            "{}",
            s.warnings[0]
        );
        assert!(s.warnings[1].contains("job 'pertask'"), "{}", s.warnings[1]);
        let out = run(&s);
        let recs = job_records(&out);
        for k in ["typed2", "untyped2", "single", "pertask", "whole2"] {
            assert_eq!(record(&recs, &out, k).state, "COMPLETED", "{k}");
        }
        // untyped2 landed on two slices: flagged at start, as typed2 and pertask.
        for (k, flagged) in [
            ("typed2", true),
            ("untyped2", true),
            ("pertask", true),
            ("single", false),
            ("whole2", false),
        ] {
            let r = record(&recs, &out, k);
            assert_eq!(r.mig_multi_gpu, flagged, "{k}");
            assert_eq!(
                r.note.contains("multi-GPU job on MIG slices"),
                flagged,
                "{k}: {}",
                r.note
            );
        }
        let json = gresim_report::records_json(&recs);
        assert_eq!(json.matches("\"mig_multi_gpu\": true").count(), 3, "{json}");
        assert!(!json.contains("\"mig_multi_gpu\": false"));
        // sim explain says it.
        let rf = RunFile::from_output(&out, &RunMeta::new("warn"));
        let e = explain(&rf, "untyped2", Some(50)).unwrap();
        assert!(
            e.contains("warning multi-GPU job on MIG slices: the run from t=0")
                && e.contains("holds 2 GPU devices, 2 of them MIG instances (a100_1g.10gb)"),
            "{e}"
        );
        let e = explain(&rf, "single", Some(50)).unwrap();
        assert!(!e.contains("MIG"), "{e}");
    }
}

#[test]
fn multi_gpu_on_mig_reject_refuses_typed_requests_at_submit() {
    let s = load("reject", &multi(Some("reject")));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let out = run(&s);
    let recs = job_records(&out);
    for k in ["typed2", "pertask"] {
        let j = &out.jobs[out
            .jobs
            .iter()
            .position(|j| out.specs[j.sub as usize].key == k)
            .unwrap()];
        assert_eq!(j.state.as_str(), "REJECTED", "{k}");
        let msg = j.rejected().unwrap_or_default();
        assert!(
            msg.contains("multi-GPU job on MIG slices")
                && msg.contains("a100_1g.10gb")
                && msg.contains("mig_multi_gpu is \"reject\""),
            "{msg}"
        );
    }
    // The untyped request cannot be judged before it starts: it runs, flagged.
    let r = record(&recs, &out, "untyped2");
    assert_eq!((r.state.as_str(), r.mig_multi_gpu), ("COMPLETED", true));
    assert_eq!(record(&recs, &out, "single").state, "COMPLETED");
    assert_eq!(record(&recs, &out, "whole2").state, "COMPLETED");
    let rf = RunFile::from_output(&out, &RunMeta::new("reject"));
    let e = explain(&rf, "typed2", None).unwrap();
    assert!(
        e.contains("rejected at submission: multi-GPU job on MIG slices"),
        "{e}"
    );
}

#[test]
fn multi_gpu_on_mig_allow_and_bad_values() {
    let s = load("allow", &multi(Some("allow")));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let out = run(&s);
    assert!(out.jobs.iter().all(|j| j.state.as_str() == "COMPLETED"));
    // The records still state the fact.
    let recs = job_records(&out);
    assert!(record(&recs, &out, "typed2").mig_multi_gpu);

    let e = gresim_io::parse_scenario(Path::new("x.json"), &multi(Some("deny")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(
            "at scheduler.mig_multi_gpu: unknown value 'deny'; expected one of warn, reject, allow"
        ),
        "{e}"
    );
}

#[test]
fn multi_gpu_on_mig_reject_applies_to_synthetic_jobs() {
    let text = r#"{
      "schema_version": 1,
      "seed": 3,
      "cluster": {"nodes": [
        {"names": "mig01", "sockets": 1, "cores_per_socket": 16, "memory": "256G",
         "gpus": [{"model": "A100-SXM4-80GB", "count": 2, "mig": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}]}
      ]},
      "scheduler": {"def_mem_per_cpu": 1024, "mig_multi_gpu": "reject"},
      "workload": {"synthetic": {
        "jobs": 40, "mean_interarrival": 60, "run_time_median": 300, "run_time_sigma": 0.5,
        "run_time_max": 3600, "users": 3,
        "mix": [
          {"name": "one", "weight": 1, "gpus": 1, "type": "a100_1g.10gb"},
          {"name": "two", "weight": 1, "gpus": 2, "type": "a100_1g.10gb"}
        ]
      }}
    }"#;
    let s = load("synth", text);
    let out = run(&s);
    let (mut rejected, mut done) = (0, 0);
    for j in &out.jobs {
        let two = out.specs[j.sub as usize].name.starts_with("two");
        if two {
            assert_eq!(j.state.as_str(), "REJECTED");
            rejected += 1;
        } else {
            assert_eq!(j.state.as_str(), "COMPLETED");
            done += 1;
        }
    }
    assert!(rejected > 0 && done > 0, "{rejected} {done}");
}

#[test]
fn lint_warns_about_mig_for_distributed_scripts() {
    use gresim_slurm::lint::lint;
    use gresim_slurm::sbatch::parse_script;
    let rules =
        |text: &str, cluster: Option<&gresim_model::Cluster>| -> Vec<(&'static str, String)> {
            let s = parse_script(Path::new("job.sh"), text, &[]).unwrap();
            lint(&s, cluster)
                .into_iter()
                .map(|f| (f.rule, f.message))
                .collect()
        };
    // Two slices for one torchrun job, no cluster needed.
    let f = rules(
        "#!/bin/bash\n#SBATCH --gres=gpu:a100_1g.10gb:2\n#SBATCH --ntasks=2\nsrun torchrun --nproc_per_node=2 train.py\n",
        None,
    );
    assert!(
        f.iter()
            .any(|(r, m)| *r == "mig-distributed" && m.contains("a100_1g.10gb")),
        "{f:?}"
    );
    // One slice: fine.
    let f = rules(
        "#!/bin/bash\n#SBATCH --gres=gpu:a100_1g.10gb:1\npython infer.py\n",
        None,
    );
    assert!(f.is_empty(), "{f:?}");

    let s = load("lint", &multi(None));
    // Untyped multi-GPU in the MIG partition: may land on slices.
    let f = rules(
        "#!/bin/bash\n#SBATCH -p mig\n#SBATCH --gres=gpu:2\ntorchrun --nproc_per_node=2 train.py\n",
        Some(&s.cluster),
    );
    assert!(
        f.iter().any(|(r, m)| *r == "mig-distributed"
            && m.contains("partition 'mig', which has MIG slices (a100_1g.10gb)")),
        "{f:?}"
    );
    // The same in the partition of whole GPUs: no MIG finding.
    let f = rules(
        "#!/bin/bash\n#SBATCH -p big\n#SBATCH --gres=gpu:2\ntorchrun --nproc_per_node=2 train.py\n",
        Some(&s.cluster),
    );
    assert!(!f.iter().any(|(r, _)| r.starts_with("mig")), "{f:?}");

    // A slice type on GPUs with an unpublished layout.
    let s = load("unpub", &one_gpu("A100-SXM4-40GB", &["4g.20gb", "3g.20gb"]));
    let f = rules(
        "#!/bin/bash\n#SBATCH --gres=gpu:a100_3g.20gb:1\npython infer.py\n",
        Some(&s.cluster),
    );
    assert!(
        f.iter().any(|(r, m)| *r == "mig-layout-unverified"
            && m.contains("layout 4g.20gb+3g.20gb (A100-SXM4-40GB GPU 1 of m1)")),
        "{f:?}"
    );
    let s = load(
        "pub",
        &one_gpu("A100-SXM4-40GB", &["4g.20gb", "2g.10gb", "1g.5gb"]),
    );
    let f = rules(
        "#!/bin/bash\n#SBATCH --gres=gpu:a100_4g.20gb:1\npython infer.py\n",
        Some(&s.cluster),
    );
    assert!(f.is_empty(), "{f:?}");
}
