//! Unit tests of `html` (html.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;

#[test]
fn page_is_self_contained() {
    let meta = RunMeta {
        scenario_text: Some("{\"name\": \"<tiny>\"}".into()),
        ..RunMeta::new("tiny")
    };
    let out = sample_output();
    let rf = RunFile::from_output(&out, &meta);
    let summary: serde_json::Value =
        serde_json::from_str(&crate::Summary::compute(&out, "tiny").to_json()).unwrap();
    let h = report_html(&rf, Some(&summary));
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert!(h.ends_with("</body></html>\n"));
    assert!(!h.contains("<script"));
    assert!(!h.contains(" src="), "no external assets");
    // The summary in units, by topic: 0.566667 of the GPUs, a mean
    // wait of 57.5 s.
    assert!(h.contains("<tr><th colspan=\"2\" class=\"g\">Utilization</th></tr>\n<tr><th>GPU (devices; a MIG slice is one)</th><td>56.7 %</td></tr>"), "{h}");
    let wait = &h[h.find("<tr><th>Wait (h:mm:ss)</th>").expect("a wait row")..];
    let wait = &wait[..wait.find("</tr>").unwrap()];
    assert!(wait.contains("<td class=\"n\">0:00:58</td>"), "{wait}");
    assert!(!h.contains("wait.mean"), "no JSON keys");
    assert!(!h.contains("<th>Other</th>"), "every field has its place");
    assert_eq!(h.matches("<svg").count(), 6, "six charts inline");
    assert!(h.contains("{&quot;name&quot;: &quot;&lt;tiny&gt;&quot;}"));
    // Longest waits first: the pending array task (280 s), then job 2 (105 s).
    let longest = &h[h.find("waited longest").unwrap()..];
    let a = longest.find("<tr><td>3_4</td>").unwrap();
    let b = longest.find("<tr><td>2</td>").unwrap();
    assert!(a < b);
    assert!(h.contains("<td class=\"n\">1:45</td>"));
}

#[test]
fn summary_fields_it_does_not_know_are_listed_raw_under_other() {
    let v = serde_json::json!({"jobs": 3, "makespan": 3725, "future": {"x": 1.5}});
    let t = summary_tables(Some(&v), &[]);
    assert!(
        t.contains("<tr><th>makespan</th><td>1:02:05</td></tr>"),
        "{t}"
    );
    assert!(
        t.contains(
            "<th colspan=\"2\" class=\"g\">Other</th></tr>\n<tr><th>future.x</th><td>1.5</td></tr>"
        ),
        "{t}"
    );
    assert_eq!(
        (hms(59.5), pct(0.2445)),
        ("0:01:00".into(), "24.4 %".into())
    );
}

#[test]
fn summary_has_the_fragmented_share() {
    let rf = RunFile::parse(crate::fragmentation::tests::HAND_MADE).unwrap();
    let h = report_html(&rf, None);
    assert!(h.contains("summary.json not found"));
    // 1640 / 6200 and 1640 / 3040 (see the fixture's known answer).
    for row in [
        "<tr><th>typical request</th><td>gpu:a100:2, 2 CPUs, 16G per node (3 of 5 GPU jobs)</td></tr>",
        "<tr><th>fragmented, of GPU capacity</th><td>26.5 %</td></tr>",
        "<tr><th>fragmented, of idle GPU capacity</th><td>53.9 %</td></tr>",
    ] {
        assert!(h.contains(row), "{row}");
    }
    assert!(h.contains("fragmented 26.5% of capacity"));
    assert_eq!(h.matches("<svg").count(), 6);
}
