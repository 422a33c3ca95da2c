//! report.html in headless Chromium (Debian's `chromium` package, which
//! `.ci/run` installs): the page loads without console errors and its
//! screenshot is not blank. Skipped, with a printed reason, where
//! /usr/bin/chromium is absent.

use std::path::Path;
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium(profile: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let mut args = vec![
        "--headless".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(url.to_string());
    Command::new(CHROMIUM)
        .args(&args)
        .output()
        .expect("chromium runs")
}

#[test]
fn report_renders_in_chromium() {
    if !Path::new(CHROMIUM).exists() {
        return gresim_test_support::skip!(
            "report_renders_in_chromium",
            &format!("{CHROMIUM} not found (apt-get install chromium)"),
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let scen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/admin_events.json");
    let out = tmp.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_sim"))
        .args([
            "run",
            scen.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
            "--report",
        ])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let report = out.join("report.html").canonicalize().unwrap();
    let url = format!("file://{}", report.display());

    // The DOM, with console messages logged to stderr.
    let dom = chromium(
        &tmp.path().join("p1"),
        &["--enable-logging=stderr", "--v=0", "--dump-dom"],
        &url,
    );
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(
        dom_text.contains("gresim report: admin_events"),
        "DOM:\n{dom_text}\nlog:\n{log}"
    );
    assert!(
        dom_text.matches("<svg").count() >= 5,
        "the charts are in the DOM"
    );
    let bad: Vec<&str> = log
        .lines()
        .filter(|l| {
            l.contains("Uncaught") || l.contains("ERROR:CONSOLE") || l.contains(":CONSOLE(")
        })
        .collect();
    assert!(bad.is_empty(), "console errors:\n{}", bad.join("\n"));

    // A screenshot that is not one colour.
    let shot = tmp.path().join("shot.png");
    let s = chromium(
        &tmp.path().join("p2"),
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,900",
        ],
        &url,
    );
    assert!(
        shot.is_file(),
        "no screenshot; stderr:\n{}",
        String::from_utf8_lossy(&s.stderr)
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1200, 900));
    let px = info.color_type.samples() * usize::from(info.bit_depth as u8).max(8) / 8;
    let data = &buf[..info.buffer_size()];
    let first = &data[..px];
    let differing = data.chunks(px).filter(|p| *p != first).count();
    assert!(
        differing > data.len() / px / 100,
        "the screenshot is (nearly) one colour: {differing} pixels differ"
    );
}
