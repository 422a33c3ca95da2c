//! sbatch's reader: scripts, command lines and their refusals, by hand.

use super::*;

fn parse(text: &str, args: &[&str]) -> Result<SbatchScript, InputError> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    parse_script(Path::new("t.sbatch"), text, &args)
}

#[test]
fn directives_stop_at_the_first_command() {
    let s = parse(
        "#!/bin/bash\n#SBATCH -J a\n\n# a comment\n#SBATCH --nodes=2\nset -e\n#SBATCH --ntasks=9\necho hi\n",
        &[],
    )
    .unwrap();
    assert_eq!(s.job.name.as_deref(), Some("a"));
    assert_eq!(s.job.nodes, Some(NumOrStr::Str("2".into())));
    assert_eq!(
        s.job.ntasks, None,
        "directives after the first command are ignored"
    );
    assert_eq!(s.first_command, Some(6));
    assert_eq!(s.body().next(), Some((6, "set -e")));
    assert_eq!(s.option_line("nodes"), Some(5));
}

#[test]
fn segment_is_read_and_checked() {
    let s = parse("#SBATCH -N 4 --segment=2\n", &[]).unwrap();
    assert_eq!(s.job.segment, Some(NumOrStr::Str("2".into())));
    let e = parse("#SBATCH --segment=two\n", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("t.sbatch:1") && e.contains("Invalid --segment specification"),
        "{e}"
    );
}

#[test]
fn every_form_of_an_option() {
    for (text, args) in [
        ("#SBATCH --partition=gpu\n", vec![]),
        ("#SBATCH --partition gpu\n", vec![]),
        ("#SBATCH -p gpu\n", vec![]),
        ("#SBATCH -pgpu\n", vec![]),
        ("#SBATCH --partition\n#SBATCH gpu\n", vec![]),
        ("#SBATCH -p cpu\n", vec!["--partition=gpu"]),
        ("#SBATCH -p cpu\n", vec!["-p", "gpu"]),
        ("#SBATCH -p \"gpu\"   # a comment\n", vec![]),
    ] {
        let s = parse(text, &args).unwrap();
        assert_eq!(s.job.partition.as_deref(), Some("gpu"), "{text:?} {args:?}");
    }
}

#[test]
fn short_and_long_forms_map_to_the_same_fields() {
    let long = parse(
        "#SBATCH --job-name=x --nodes=2 --ntasks=8 --cpus-per-task=4 --gpus=a100:8 --time=1-00:00:00 --output=o --error=e --array=0-9:3%2 --dependency=afterok:a --constraint=nvlink --nodelist=n[1-2] --exclude=n3 --hold --begin=now+1hour\n",
        &[],
    )
    .unwrap()
    .job;
    let short = parse(
        "#SBATCH -J x -N 2 -n8 -c 4 -G a100:8 -t 1-00:00:00 -o o -e e -a 0-9:3%2 -d afterok:a -C nvlink -w n[1-2] -x n3 -H -b now+1hour\n",
        &[],
    )
    .unwrap()
    .job;
    assert_eq!(format!("{long:?}"), format!("{short:?}"));
    assert_eq!(long.begin, Some(3600));
    assert!(long.hold);
    assert_eq!(long.array.as_deref(), Some("0-9:3%2"));
}

#[test]
fn flags_and_optional_values() {
    let s = parse("#SBATCH --requeue --exclusive --nice\n", &["--no-requeue"]).unwrap();
    assert_eq!(s.job.requeue, Some(false));
    assert!(s.job.exclusive);
    assert_eq!(s.job.nice, Some(100));
    assert_eq!(
        parse("#SBATCH --nice=-5\n", &[]).unwrap().job.nice,
        Some(-5)
    );
    assert_eq!(
        parse("#SBATCH --nice 5\n", &[]).unwrap_err().line,
        Some((1, 16))
    );
}

#[test]
fn oversubscribe_and_exclusive_set_one_field_and_the_later_wins() {
    let s = parse("#SBATCH -s\n", &[]).unwrap().job;
    assert!(s.oversubscribe && !s.exclusive);
    let s = parse("#SBATCH --oversubscribe\n", &["--exclusive"])
        .unwrap()
        .job;
    assert!(
        s.exclusive && !s.oversubscribe,
        "the command line comes later"
    );
    let s = parse("#SBATCH --exclusive\n#SBATCH --oversubscribe\n", &[])
        .unwrap()
        .job;
    assert!(s.oversubscribe && !s.exclusive);
}

#[test]
fn gpu_options_and_mig_types() {
    let s = parse(
        "#SBATCH --gres=gpu:a100_1g.5gb:1 --gpus-per-task=1 --gpus-per-node=h100:4 --cpus-per-gpu=8 --mem-per-gpu=32G --gpu-bind=map_gpu:0,1,2,3\n",
        &[],
    )
    .unwrap();
    assert_eq!(s.job.gres.as_deref(), Some("gpu:a100_1g.5gb:1"));
    assert_eq!(s.job.gpus_per_task, Some(NumOrStr::Str("1".into())));
    assert_eq!(s.job.gpus_per_node, Some(NumOrStr::Str("h100:4".into())));
    assert_eq!(s.job.mem_per_gpu, Some(NumOrStr::Str("32G".into())));
    assert_eq!(s.gpu_bind(), Some(GpuBind::Map(vec![0, 1, 2, 3])));
}

#[test]
fn gpu_bind_values() {
    assert_eq!(parse_gpu_bind("closest"), Ok(GpuBind::Closest));
    assert_eq!(parse_gpu_bind("verbose,none"), Ok(GpuBind::None));
    assert_eq!(parse_gpu_bind("single:2"), Ok(GpuBind::Single(2)));
    assert_eq!(parse_gpu_bind("per_task:1"), Ok(GpuBind::PerTask(1)));
    assert_eq!(
        parse_gpu_bind("map_gpu:1*2,0"),
        Ok(GpuBind::Map(vec![1, 1, 0]))
    );
    assert_eq!(
        parse_gpu_bind("mask_gpu:0x3,c"),
        Ok(GpuBind::Mask(vec![3, 12]))
    );
    for bad in [
        "",
        "map_gpu:",
        "map_gpu:a",
        "single:0",
        "mask_gpu:0",
        "nearest",
        "map_gpu:1*0",
    ] {
        assert!(parse_gpu_bind(bad).is_err(), "{bad}");
    }
}

#[test]
fn time_formats() {
    for t in [
        "30",
        "30:00",
        "1:00:00",
        "1-0",
        "1-0:30",
        "1-00:30:00",
        "UNLIMITED",
        "infinite",
        "-1",
    ] {
        let s = parse(&format!("#SBATCH --time={t}\n"), &[]).unwrap();
        assert_eq!(s.job.time, Some(NumOrStr::Str(t.into())));
    }
}

#[test]
fn errors_name_file_line_and_column() {
    let e = parse("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=1:xx\n", &[]).unwrap_err();
    assert_eq!(e.line, Some((3, 9)));
    assert!(
        e.to_string()
            .starts_with("t.sbatch:3:9: Invalid --time specification"),
        "{e}"
    );
    let e = parse("#SBATCH --gpus-per-tsk=1\n", &[]).unwrap_err();
    assert!(
        e.msg.contains("unrecognized option '--gpus-per-tsk'"),
        "{e}"
    );
    let e = parse("#SBATCH -Z\n", &[]).unwrap_err();
    assert!(e.msg.contains("'-Z'"), "{e}");
    let e = parse("#SBATCH --gres=gpu:a100:x\n", &[]).unwrap_err();
    assert_eq!(e.line, Some((1, 9)));
    let e = parse("#SBATCH --gres=nic:10\n", &[]).unwrap_err();
    assert!(e.msg.contains("'nic'"), "{e}");
    // Shared GRES are valid syntax; the cluster decides (docs/scenario-format.md).
    assert!(parse("#SBATCH --gres=mps:10\n#SBATCH --gres=shard:2\n", &[]).is_ok());
    let e = parse("#SBATCH --array=5-1\n", &[]).unwrap_err();
    assert!(e.msg.contains("Invalid job array specification"), "{e}");
    let e = parse("#SBATCH --job-name \"ab\n", &[]).unwrap_err();
    assert_eq!(e.line, Some((1, 20)));
    let e = parse("#SBATCH gpu\n", &[]).unwrap_err();
    assert!(
        e.msg
            .contains("Invalid directive found in batch script: gpu"),
        "{e}"
    );
    let e = parse("#SBATCH --nodes\n", &[]).unwrap_err();
    assert!(e.msg.contains("requires an argument"), "{e}");
    let e = parse("#SBATCH --hold=yes\n", &[]).unwrap_err();
    assert!(e.msg.contains("doesn't allow an argument"), "{e}");
    let e = parse("", &["--mem=1.5G"]).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("command-line argument 1 (--mem)"));
    let e = parse("", &["train.py"]).unwrap_err();
    assert!(e.msg.contains("unexpected argument 'train.py'"), "{e}");
    let e = parse("#SBATCH --begin=16:00\n", &[]).unwrap_err();
    assert!(e.msg.contains("Invalid --begin"), "{e}");
    let e = parse("#GRESIM vrm=4G\n", &[]).unwrap_err();
    assert_eq!(e.line, Some((1, 0)));
    let e = parse("#SBATCH --ntasks=0\n", &[]).unwrap_err();
    assert!(e.msg.contains("Invalid numeric value"), "{e}");
}

#[test]
fn command_line_memory_replaces_the_script_memory() {
    let s = parse("#SBATCH --mem=128G\n", &["--mem-per-gpu=32G"]).unwrap();
    assert_eq!(s.job.mem, None);
    assert_eq!(s.job.mem_per_gpu, Some(NumOrStr::Str("32G".into())));
    assert_eq!(s.option_line("mem-per-gpu"), Some(0));
}

#[test]
fn gresim_vram_directive() {
    let s = parse(
        "#!/bin/bash\n#GRESIM vram=40G\n#SBATCH -N1\npython x\n#GRESIM vram=60G\n",
        &[],
    )
    .unwrap();
    assert_eq!(s.vram_mib, Some(60 * 1024));
    assert_eq!(s.gresim.len(), 2);
    assert_eq!(s.job.nodes, Some(NumOrStr::Str("1".into())));
}

#[test]
fn filenames() {
    let ctx = FilenameCtx {
        job_id: 1001,
        job_name: "ddp",
        user: "ana",
        node: "gpu01",
        array: Some((1000, 7)),
    };
    assert_eq!(expand_filename("logs/%x_%j.out", &ctx), "logs/ddp_1001.out");
    assert_eq!(
        expand_filename("%A_%3a-%N-%u-%%.log", &ctx),
        "1000_007-gpu01-ana-%.log"
    );
    assert_eq!(expand_filename("a\\%j", &ctx), "a%j");
    assert_eq!(expand_filename("x%", &ctx), "x%");
    let plain = FilenameCtx { array: None, ..ctx };
    assert_eq!(
        expand_filename("slurm-%A_%a.out", &plain),
        "slurm-1001_4294967294.out"
    );
}

#[test]
fn parser_is_total_on_odd_bytes() {
    for text in [
        "#SBATCH",
        "#SBATCH ",
        "#SBATCH \\",
        "#SBATCH '",
        "#SBATCH -",
        "#SBATCH --",
        "#SBATCH --=",
        "#SBATCH -p",
        "#SBATCH ::",
        "#SBATCHé",
        "#SBATCH --gres=gpu::",
        "#SBATCH --gres=gpu:a:b:c",
        "#SBATCH --gres=",
        "#SBATCH --nodes=ü",
        "\u{0}\u{ffff}",
        "#SBATCH --gpu-bind=map_gpu:9999999999999",
        "#SBATCH --begin=now+99999999999999999999weeks",
        "#GRESIM",
        "#GRESIM =",
        "#SBATCH --time=-",
        "#SBATCH -J\u{301}",
    ] {
        let _ = parse(text, &[]);
    }
}
