//! Unit tests of `fgd_cmd` (fgd_cmd.rs).

use super::*;

#[test]
fn seeds_and_policies_parse() {
    assert_eq!(parse_seeds("42..44").ok().unwrap(), vec![42, 43, 44]);
    assert_eq!(parse_seeds("1,5").ok().unwrap(), vec![1, 5]);
    assert!(parse_seeds("5..1").is_err());
    assert!(parse_seeds("x").is_err());
    assert_eq!(
        parse_policies("fgd,BestFit,06-FGD").ok().unwrap(),
        vec![PolicyKind::Fgd, PolicyKind::BestFit]
    );
    assert!(parse_policies("tetris").is_err());
}

fn args(data: &Path, out: Option<PathBuf>) -> FgdArgs {
    FgdArgs {
        data: Some(data.to_path_buf()),
        workload: "tiny".into(),
        seeds: "1..2".into(),
        policies: "random,fgd".into(),
        out,
        threads: Some(1),
        mig: false,
        mig_model: "A100-80GB".into(),
        mig_nodes: 100,
        mig_gpus: 8,
        mig_cpus: 128,
        mig_mix: None,
        mig_openb: false,
        mig_layouts: "published".into(),
        mig_start: "highest".into(),
    }
}

#[test]
fn mig_mode_runs_without_data_and_rejects_bad_options() {
    let dir = tempfile::tempdir().unwrap();
    let mig = |f: &dyn Fn(&mut FgdArgs)| {
        let mut a = args(&dir.path().join("no-data"), None);
        a.mig = true;
        a.mig_nodes = 6;
        a.mig_gpus = 4;
        a.policies = "packing,fgd".into();
        f(&mut a);
        cmd_fgd(&a)
    };
    for (set, needle) in [
        (
            &(|a: &mut FgdArgs| a.mig_model = "T4".into()) as &dyn Fn(&mut FgdArgs),
            "T4 does not support MIG",
        ),
        (
            &|a: &mut FgdArgs| a.mig_model = "B300".into(),
            "unknown GPU model 'B300'",
        ),
        (
            &|a: &mut FgdArgs| a.mig_layouts = "any".into(),
            "--mig-layouts",
        ),
        (
            &|a: &mut FgdArgs| a.mig_start = "middle".into(),
            "--mig-start",
        ),
        (&|a: &mut FgdArgs| a.mig_gpus = 0, "--mig-gpus"),
        (
            &|a: &mut FgdArgs| a.mig_mix = Some("3g.20gb:1".into()),
            "unknown MIG profile '3g.20gb'",
        ),
        // OpenB mode needs the data: the missing file is named.
        (
            &|a: &mut FgdArgs| a.mig_openb = true,
            "openb_node_list_gpu_node.csv",
        ),
    ] {
        let e = mig(set).err().unwrap();
        assert_eq!(e.code, 2);
        assert!(e.msg.contains(needle), "{}", e.msg);
    }
    // The synthetic default needs no data, and writes mig_*.csv.
    let out = dir.path().join("out");
    let outc = out.clone();
    assert!(mig(&move |a: &mut FgdArgs| a.out = Some(outc.clone())).is_ok());
    let runs = std::fs::read_to_string(out.join("mig_runs.csv")).unwrap();
    assert!(runs.contains("mig_synthetic,06-FGD,2,gpu_alloc_ratio_pct,130,"));
    assert!(out.join("mig_summary.csv").exists());
    assert!(!out.join("fgd_runs.csv").exists());
}

#[test]
fn bad_input_is_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("alibaba-openb-gpu-v2023");
    std::fs::create_dir_all(&trace).unwrap();
    // Missing files.
    let e = cmd_fgd(&args(dir.path(), None)).err().unwrap();
    assert_eq!(e.code, 2);
    std::fs::write(
        trace.join("openb_node_list_gpu_node.csv"),
        "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,1024,2,T4\nn1,8000,1024,2,T4\n",
    )
    .unwrap();
    std::fs::write(
        trace.join("openb_pod_list_tiny.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,1,500\np1,1000,10,one,500\n",
    )
    .unwrap();
    let e = cmd_fgd(&args(dir.path(), None)).err().unwrap();
    assert_eq!(e.code, 2);
    assert!(
        e.msg.contains("openb_pod_list_tiny.csv:3:") && e.msg.contains("num_gpu"),
        "{}",
        e.msg
    );
    // Fixed, it runs and writes its CSVs (no published figures for this workload).
    std::fs::write(
        trace.join("openb_pod_list_tiny.csv"),
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,1,500\np1,1000,10,1,300\np2,500,10,0,0\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    assert!(cmd_fgd(&args(dir.path(), Some(out.clone()))).is_ok());
    let runs = std::fs::read_to_string(out.join("fgd_runs.csv")).unwrap();
    assert!(runs.starts_with("workload,sc_policy,seed,metric"));
    assert!(runs.contains("openb_pod_list_tiny,06-FGD,2,gpu_alloc_ratio_pct,"));
}
