//! Unit tests of `gresconf` (gresconf.rs).

use super::*;

fn parse(t: &str) -> (GresConf, Vec<Warning>) {
    parse_gres_conf(Path::new("gres.conf"), t).unwrap()
}

#[test]
fn file_ranges_count_cores_links() {
    let (g, w) = parse(
        "AutoDetect=off\n\
         NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-15,32\n\
         NodeName=n3 name=gpu type=h100 file=/dev/nvidia0 links=-1,2  # NVLink\n\
         Name=gpu Count=2\n",
    );
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(g.autodetect.as_deref(), Some("off"));
    assert_eq!(g.lines.len(), 3);
    let l = &g.lines[0];
    assert_eq!(l.line, 2);
    assert_eq!(
        l.nodes.as_deref(),
        Some(&["n1".to_string(), "n2".to_string()][..])
    );
    assert_eq!(
        l.files,
        [
            "/dev/nvidia0",
            "/dev/nvidia1",
            "/dev/nvidia2",
            "/dev/nvidia3"
        ]
    );
    assert_eq!(l.devices(), 4);
    assert_eq!(l.cores, Some(vec![(0, 15), (32, 32)]));
    assert_eq!(g.lines[1].links, Some(vec![-1, 2]));
    assert_eq!(g.lines[1].ty.as_deref(), Some("h100"));
    assert_eq!(g.lines[2].devices(), 2);
    assert!(g.lines[2].applies_to("anything"));
    assert!(!g.lines[1].applies_to("n1"));
}

#[test]
fn multiple_files_are_one_device_with_a_parent() {
    let (g, _) = parse(
        "NodeName=m1 Name=gpu Type=a100_3g.20gb MultipleFiles=/dev/nvidia1,/dev/nvidia-caps/nvidia-cap[21-22]\n",
    );
    assert_eq!(g.lines[0].devices(), 1);
    assert_eq!(g.lines[0].multiple_files.len(), 3);
    assert_eq!(g.lines[0].parent_gpu(), Some(1));
}

#[test]
fn bad_lines_are_errors_with_line_numbers() {
    for (t, want) in [
        (
            "\nName=gpu File=/dev/nvidia[0-1] Links=-1,1\n",
            "exactly one device",
        ),
        (
            "Name=gpu File=/dev/a MultipleFiles=/dev/b\n",
            "mutually exclusive",
        ),
        ("\n\nName=gpu File=/dev/nvidia[0-1] Count=3\n", "Count=3"),
        ("Name=gpu Cores=3-1\n", "backwards"),
        ("Name=gpu Links=x\n", "link count"),
        ("Type=a100 File=/dev/x\n", "Name="),
        ("Name=gpu File=/dev/nvidia[0-\n", "File="),
    ] {
        let e = parse_gres_conf(Path::new("g.conf"), t).unwrap_err();
        assert!(e.to_string().contains(want), "{t:?}: {e}");
        assert!(e.line.is_some(), "{t:?}: {e}");
    }
    let e = parse_gres_conf(
        Path::new("g.conf"),
        "\n\nName=gpu Count=3 File=/dev/a,/dev/b\n",
    )
    .unwrap_err();
    assert_eq!(e.line, Some((3, 0)));
}

#[test]
fn unknown_keys_and_flags_warn_with_line() {
    let (g, w) =
        parse("# c\nName=gpu Type=t4 File=/dev/nvidia0 Colour=red Flags=nvidia_gpu_env,bogus\n");
    assert_eq!(g.lines.len(), 1);
    let msgs: Vec<String> = w.iter().map(|w| w.to_string()).collect();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert!(msgs[0].starts_with("gres.conf:2: ") && msgs[0].contains("Colour"));
    assert!(msgs[1].contains("bogus"));
}
