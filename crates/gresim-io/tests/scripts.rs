//! The seed documents' batch scripts (scenarios/scripts/): each parses,
//! simulates, prints its environment and lints with the expected findings;
//! and one small bad script per lint rule.

use std::path::{Path, PathBuf};

use gresim_io::taskenv::job_env;
use gresim_io::Scenario;
use gresim_slurm::lint::{lint, Finding};
use gresim_slurm::sbatch::{load_script, parse_script, SbatchScript};
use gresim_slurm::taskenv::{EnvOptions, JobEnv, Launcher};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/scripts")
}

fn cluster() -> Scenario {
    gresim_io::load_scenario(&dir().join("cluster.json")).expect("the test cluster loads")
}

fn script(name: &str, args: &[&str]) -> SbatchScript {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    load_script(&dir().join(name), &args).expect("the seed script parses")
}

fn env(name: &str, opts: EnvOptions) -> JobEnv {
    let sc = cluster();
    job_env(&sc.cluster, &sc.params, &script(name, &[]), &opts)
        .expect("the job fits the idle cluster")
}

fn rules(f: &[Finding]) -> Vec<(&'static str, usize)> {
    f.iter().map(|x| (x.rule, x.line)).collect()
}

fn var<'a>(vars: &'a [(String, String)], k: &str) -> Option<&'a str> {
    vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
}

#[test]
fn pattern1_srun_one_task_per_gpu() {
    let e = env("ddp_srun.sbatch", EnvOptions::default());
    assert_eq!(e.launcher, Launcher::Srun);
    assert_eq!(e.tasks.len(), 8);
    assert_eq!(e.nodelist, "a100-[01-02]");
    assert_eq!(e.tasks_per_node, "4(x2)");
    assert_eq!(e.master_addr, "a100-01");
    assert_eq!(e.stdout, "logs/ddp-training_1000.out");
    assert_eq!(e.stderr, "logs/ddp-training_1000.err");
    for (i, t) in e.tasks.iter().enumerate() {
        let i = i as u32;
        assert_eq!(t.procid, i);
        assert_eq!(t.localid, i % 4);
        assert_eq!(t.nodeid, i / 4);
        assert_eq!(t.node, if i < 4 { "a100-01" } else { "a100-02" });
        assert_eq!(t.gpus, vec![i % 4], "one GPU per task");
        assert_eq!(t.cvd_global, (i % 4).to_string());
        assert_eq!(var(&t.vars, "SLURM_NTASKS"), Some("8"));
        assert_eq!(var(&t.vars, "SLURM_PROCID"), Some(i.to_string().as_str()));
        assert_eq!(var(&t.vars, "SLURM_GPUS_ON_NODE"), Some("4"));
        assert_eq!(var(&t.vars, "MASTER_ADDR"), Some("a100-01"));
        // SLURM_JOB_GPUS comes from the batch step (node 0) and is inherited.
        assert_eq!(var(&t.vars, "SLURM_JOB_GPUS"), Some("0,1,2,3"));
        assert_eq!(var(&t.vars, "SLURM_GPUS_PER_TASK"), Some("1"));
    }
    assert!(
        e.notes[0].contains("with and without type"),
        "{:?}",
        e.notes
    );
}

#[test]
fn pattern2_torchrun_one_launcher_per_node() {
    let e = env("fsdp_torchrun.sbatch", EnvOptions::default());
    assert_eq!(e.launcher, Launcher::Torchrun);
    assert_eq!(e.tasks.len(), 2);
    assert_eq!(e.ntasks, 2);
    for (i, t) in e.tasks.iter().enumerate() {
        assert_eq!(t.procid, i as u32);
        assert_eq!(t.nodeid, i as u32);
        assert_eq!(
            t.gpus,
            vec![0, 1, 2, 3],
            "the launcher sees all the node's GPUs"
        );
        assert_eq!(t.cvd_global, "0,1,2,3");
        assert_eq!(t.workers, Some((4, 4 * i as u32, 4 * i as u32 + 3)));
    }
    assert_eq!(e.master_addr, "a100-01");
}

#[test]
fn constrain_devices_renumbers_from_zero() {
    let sc = cluster();
    let s = parse_script(
        Path::new("x.sbatch"),
        "#SBATCH -p gpu -N1 -w a100-01 --gres=gpu:a100:4 --ntasks=1\n",
        &[],
    )
    .unwrap();
    let e = job_env(
        &sc.cluster,
        &sc.params,
        &s,
        &EnvOptions {
            constrain_devices: true,
            ..EnvOptions::default()
        },
    )
    .unwrap();
    assert_eq!(e.tasks[0].cvd_global, "0,1,2,3");
    assert_eq!(
        var(&e.tasks[0].vars, "CUDA_VISIBLE_DEVICES"),
        Some("0,1,2,3")
    );
    // Two jobs' worth: take a100-01's GPUs 2,3 by asking for the node's last two via map_gpu.
    let s = parse_script(
        Path::new("x.sbatch"),
        "#SBATCH -p gpu -N1 --ntasks=2 --gres=gpu:a100:4 --gpu-bind=map_gpu:2,3\n",
        &[],
    )
    .unwrap();
    let g = job_env(&sc.cluster, &sc.params, &s, &EnvOptions::default()).unwrap();
    assert_eq!(
        (
            g.tasks[0].cvd_global.as_str(),
            g.tasks[1].cvd_global.as_str()
        ),
        ("2", "3")
    );
    let c = job_env(
        &sc.cluster,
        &sc.params,
        &s,
        &EnvOptions {
            constrain_devices: true,
            ..EnvOptions::default()
        },
    )
    .unwrap();
    assert_eq!(var(&c.tasks[1].vars, "CUDA_VISIBLE_DEVICES"), Some("3"));
    assert_eq!(var(&c.tasks[1].vars, "SLURM_STEP_GPUS"), Some("3"));
}

#[test]
fn gpu_bind_closest_follows_sockets() {
    let sc = cluster();
    // 2 tasks x 32 cores (64 CPUs at 2 threads): task 0 on socket 0, task 1 on socket 1.
    let s = parse_script(
        Path::new("x.sbatch"),
        "#SBATCH -p gpu -N1 --ntasks=2 -c 64 --gres=gpu:a100:4 --gpu-bind=closest\n",
        &[],
    )
    .unwrap();
    let e = job_env(&sc.cluster, &sc.params, &s, &EnvOptions::default()).unwrap();
    assert_eq!(e.tasks[0].gpus, vec![0, 1]);
    assert_eq!(e.tasks[1].gpus, vec![2, 3]);
}

#[test]
fn array_task_environment() {
    let e = env(
        "sweep_array.sbatch",
        EnvOptions {
            array_task: Some(100),
            ..EnvOptions::default()
        },
    );
    assert_eq!(var(&e.array, "SLURM_ARRAY_TASK_ID"), Some("100"));
    assert_eq!(var(&e.array, "SLURM_ARRAY_TASK_COUNT"), Some("100"));
    assert_eq!(var(&e.array, "SLURM_ARRAY_TASK_MIN"), Some("1"));
    assert_eq!(
        e.job_id, 1000,
        "the last task runs under the array's own id"
    );
    assert_eq!(e.stdout, "slurm-1000_100.out");
    let first = env("sweep_array.sbatch", EnvOptions::default());
    assert_eq!(first.job_id, 1001);
    assert_eq!(first.tasks[0].gpus.len(), 1);
    assert!(first.tasks[0].node.starts_with("h100"));
}

#[test]
fn seed_findings() {
    let sc = cluster();
    let c = Some(&sc.cluster);
    let cases: [(&str, Vec<(&str, usize)>); 6] = [
        ("ddp_srun.sbatch", vec![("gpu-request-mixed", 7)]),
        ("fsdp_torchrun.sbatch", vec![("gpu-request-mixed", 7)]),
        ("fsdp_h100.sbatch", vec![]),
        (
            "deepspeed_zero3.sbatch",
            vec![("no-master-addr", 5), ("no-nccl-socket-ifname", 5)],
        ),
        ("sweep_array.sbatch", vec![]),
        ("requeue.sbatch", vec![("no-gpu-request", 2)]),
    ];
    for (name, want) in cases {
        assert_eq!(rules(&lint(&script(name, &[]), c)), want, "{name}");
    }
    // With the type on every option, the seed patterns are clean.
    assert!(lint(&script("ddp_srun.sbatch", &["--gpus-per-task=a100:1"]), c).is_empty());
    // A hard-coded count that disagrees once the request changes.
    assert_eq!(
        rules(&lint(
            &script("fsdp_h100.sbatch", &["--gres=gpu:h100:4"]),
            c
        )),
        vec![("hardcoded-gpu-count", 11)]
    );
    assert_eq!(
        rules(&lint(
            &script("deepspeed_zero3.sbatch", &["--gres=gpu:h100:4"]),
            None
        )),
        vec![
            ("hardcoded-gpu-count", 5),
            ("no-master-addr", 5),
            ("no-nccl-socket-ifname", 5)
        ]
    );
}

fn lint_text(text: &str, with_cluster: bool) -> Vec<(&'static str, usize)> {
    let s = parse_script(Path::new("bad.sbatch"), text, &[]).expect("parses");
    let sc = cluster();
    let f = lint(&s, with_cluster.then_some(&sc.cluster));
    for x in &f {
        assert!(!x.why.is_empty() && !x.fix.is_empty());
    }
    rules(&f)
}

#[test]
fn one_bad_script_per_rule() {
    assert_eq!(
        lint_text("#!/bin/bash\n#SBATCH -p gpu\npython x.py\n", false),
        vec![("no-gpu-request", 2)]
    );
    assert_eq!(
        lint_text(
            "#SBATCH --ntasks-per-node=8\n#SBATCH --gres=gpu:4\nsrun python x.py\n",
            false
        ),
        vec![("tasks-exceed-gpus", 1)]
    );
    assert_eq!(
        lint_text("#SBATCH --gres=gpu:2\nexport CUDA_VISIBLE_DEVICES=0,1\n# CUDA_VISIBLE_DEVICES=3 in a comment\nCUDA_VISIBLE_DEVICES=1 python x.py\n", false),
        vec![("cuda-visible-devices-set", 2), ("cuda-visible-devices-set", 4)]
    );
    assert_eq!(
        lint_text("#SBATCH -N 2 --gres=gpu:4\nexport NCCL_SOCKET_IFNAME=ib0\nsrun torchrun --nproc_per_node=4 t.py\n", false),
        vec![("no-master-addr", 3)]
    );
    assert_eq!(
        lint_text("#SBATCH -N 2 --gres=gpu:4\nexport MASTER_ADDR=$(hostname)\nsrun torchrun --nproc_per_node=4 t.py\n", false),
        vec![("no-nccl-socket-ifname", 3)]
    );
    assert_eq!(
        lint_text("#SBATCH --gres=gpu:a100:4\ntorchrun --nproc_per_node=8 t.py\ndeepspeed --num_gpus 8 t.py\npython -c 'assert torch.cuda.device_count() == 8'\n", false),
        vec![("hardcoded-gpu-count", 2), ("hardcoded-gpu-count", 3), ("hardcoded-gpu-count", 4)]
    );
    assert_eq!(
        lint_text("#SBATCH --gres=gpu:1\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512\nexport PYTORCH_CUDA_ALLOC_CONF=$PYTORCH_CUDA_ALLOC_CONF,x:1\npython t.py\n", false),
        vec![("alloc-conf-overwritten", 3)]
    );
    assert_eq!(
        lint_text(
            "#SBATCH --gres=gpu:a100_2g.10gb:2\nsrun python t.py\n",
            false
        ),
        vec![("mig-distributed", 1)]
    );
    assert_eq!(
        lint_text("#SBATCH --gres=gpu:a100_1g.5gb:1\npython t.py\n", false),
        vec![]
    );
    assert_eq!(
        lint_text(
            "#!/bin/bash\n#GRESIM vram=40G\n#SBATCH -p mig --gres=gpu:a100_1g.5gb:1\npython t.py\n",
            true
        ),
        vec![("vram-exceeds-gpu", 2)]
    );
    // An a100 may be a 40 GB card: a 40 GB need does not fit (no room for the context).
    assert_eq!(
        lint_text(
            "#GRESIM vram=40G\n#SBATCH --gres=gpu:a100:1\npython t.py\n",
            false
        ),
        vec![("vram-exceeds-gpu", 1)]
    );
    // The cluster's a100s have 80 GB.
    assert_eq!(
        lint_text(
            "#GRESIM vram=40G\n#SBATCH --gres=gpu:a100:1\npython t.py\n",
            true
        ),
        vec![]
    );
    assert_eq!(
        lint_text(
            "#SBATCH -p gpu\n#SBATCH --gres=gpu:v100:2\npython t.py\n",
            true
        ),
        vec![("unknown-gpu-type", 2)]
    );
    assert_eq!(
        lint_text(
            "#SBATCH -p mig\n#SBATCH --gres=gpu:h100:1\npython t.py\n",
            true
        ),
        vec![("unknown-gpu-type", 2)]
    );
    assert_eq!(
        lint_text(
            "#SBATCH --gres=gpu:a100:4\n#SBATCH --gpus-per-node=4\npython t.py\n",
            false
        ),
        vec![("gpu-request-mixed", 2)]
    );
}

#[test]
fn scripts_workload_runs_and_rejects_mixed_requests() {
    let sc = cluster();
    let out = gresim_engine::run(sc.sim_input(1), gresim_sched::PolicyKind::Slurm.build()).unwrap();
    let text = format!(
        "{:?}",
        out.jobs
            .iter()
            .map(|j| (out.specs[j.sub as usize].key.clone(), j.state))
            .collect::<Vec<_>>()
    );
    assert!(text.contains("(\"ddp_as_written\", Rejected)"), "{text}");
    assert!(text.contains("(\"ddp\", Completed)"), "{text}");
    assert!(text.contains("(\"fsdp\", Completed)"), "{text}");
    assert!(text.contains("(\"fsdp_h100\", Completed)"), "{text}");
    assert!(text.contains("(\"resumable\", Completed)"), "{text}");
}

#[test]
fn script_errors_name_the_script_line() {
    let d = tempdir();
    std::fs::write(
        d.join("x.sbatch"),
        "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:v100:2\npython t.py\n",
    )
    .unwrap();
    let scen = std::fs::read_to_string(dir().join("cluster.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&scen).unwrap();
    v["workload"] = serde_json::json!({"scripts": [{"path": "x.sbatch"}]});
    let p = d.join("s.json");
    std::fs::write(&p, v.to_string()).unwrap();
    let e = gresim_io::load_scenario(&p).unwrap_err();
    assert!(e.file.ends_with("x.sbatch"), "{e}");
    assert_eq!(e.line, Some((3, 9)), "{e}");
    assert!(e.msg.contains("unknown GPU type 'v100'"), "{e}");
    v["workload"] = serde_json::json!({"scripts": [{"path": "x.sbatch"}], "jobs": []});
    std::fs::write(&p, v.to_string()).unwrap();
    let e = gresim_io::load_scenario(&p).unwrap_err();
    assert!(
        e.msg
            .contains("exactly one of jobs, trace, synthetic or scripts"),
        "{e}"
    );
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("gresim-scripts-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}
