//! Unit tests of `views` (views.rs).

use super::*;

/// The report crate's hand-made run (see its fragmentation tests).
const RUN: &str = include_str!("../../../gresim-report/testdata/frag_run.json");
const SVG: &str = r##"<svg width="120" height="40" xmlns="http://www.w3.org/2000/svg"><rect width="120" height="40" fill="#FFFFFF"/><text x="4" y="28" font-family="sans-serif" font-size="20">GPUs</text></svg>"##;

fn run_dir(svg: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("run.json"), RUN).unwrap();
    std::fs::write(d.path().join("utilization.svg"), svg).unwrap();
    d
}

fn report(dir: &Path, png: bool) -> Result<(), ViewError> {
    cmd_report(&ReportArgs {
        run_dir: dir.to_path_buf(),
        png,
    })
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = Vec::new();
    for sub in [dir.to_path_buf(), dir.join("charts")] {
        for e in std::fs::read_dir(&sub).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                let name = p.strip_prefix(dir).unwrap().display().to_string();
                v.push((name, std::fs::read(&p).unwrap()));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn report_png_writes_a_png_beside_every_svg_and_the_same_bytes_again() {
    let d = run_dir(SVG);
    report(d.path(), false).unwrap();
    assert!(!d.path().join("charts").exists(), "no charts without --png");
    assert!(!d.path().join("utilization.png").exists());
    report(d.path(), true).unwrap();
    let first = files(d.path());
    let names: Vec<&str> = first.iter().map(|f| f.0.as_str()).collect();
    for stem in [
        "utilization",
        "charts/gpu_states",
        "charts/gpu_util_by_type",
        "charts/queue",
        "charts/wait_cdf",
        "charts/slowdown_cdf",
        "charts/gantt",
    ] {
        for ext in ["svg", "png"] {
            assert!(
                names.contains(&format!("{stem}.{ext}").as_str()),
                "{stem}.{ext} in {names:?}"
            );
        }
    }
    for (name, bytes) in &first {
        if name.ends_with(".png") {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        }
    }
    let html = String::from_utf8(std::fs::read(d.path().join("report.html")).unwrap()).unwrap();
    assert!(html.contains("<th>fragmented, of GPU capacity</th><td>26.5 %</td>"));
    // Again, and into another directory: byte-identical files.
    report(d.path(), true).unwrap();
    assert_eq!(files(d.path()), first);
    let d2 = run_dir(SVG);
    report(d2.path(), true).unwrap();
    assert_eq!(files(d2.path()), first);
}

#[test]
fn bad_run_dirs_are_input_errors() {
    let d = run_dir("<svg oops");
    let (code, msg) = report(d.path(), true).unwrap_err();
    assert_eq!(code, 2);
    assert!(
        msg.contains("utilization.svg") && msg.contains("bad SVG"),
        "{msg}"
    );
    assert!(!d.path().join("utilization.png").exists());
    let missing = d.path().join("nothing-here");
    let (code, msg) = report(&missing, true).unwrap_err();
    assert_eq!(code, 2);
    assert!(msg.contains("cannot read the run"), "{msg}");
    std::fs::write(d.path().join("run.json"), "{\"format\": 1}").unwrap();
    assert_eq!(report(d.path(), true).unwrap_err().0, 2);
    // Without utilization.svg only the report's charts are written.
    let d = run_dir(SVG);
    std::fs::remove_file(d.path().join("utilization.svg")).unwrap();
    report(d.path(), true).unwrap();
    assert!(!d.path().join("utilization.png").exists());
    assert!(d.path().join("charts/gpu_states.png").exists());
}
