//! Golden summaries: every shipped scenario (`scenarios/*.json`), and each
//! of its variants, run with its own policy and seed, gives the summary kept
//! in `tests/golden/<scenario>.json`. A change of any decision on a shipped
//! scenario shows here; when it is intended, bless the new summaries with
//! `GRESIM_BLESS=1 cargo test --release -p gresim --test golden` and review
//! `git diff` (docs/architecture.md, "Tests").

use std::path::{Path, PathBuf};

use gresim::{Scenario, Simulation};
use gresim_test_support::{golden, repo_path};

fn shipped() -> Vec<PathBuf> {
    let dir = repo_path("scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

fn summary(sc: &Scenario) -> serde_json::Value {
    let o = Simulation::new(sc)
        .run()
        .unwrap_or_else(|e| panic!("{}: the run failed: {e}", sc.path.display()));
    serde_json::from_str(&o.summary().to_json()).expect("the summary is JSON")
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .and_then(|s| s.to_str())
        .expect("a UTF-8 file name")
        .to_string()
}

#[test]
fn every_shipped_scenario_keeps_its_golden_summary() {
    let files = shipped();
    assert!(files.len() >= 10, "found {} scenarios", files.len());
    let mut names = Vec::new();
    for path in &files {
        let sc = gresim::load_runnable_scenario(path)
            .unwrap_or_else(|e| panic!("{}: does not load: {e}", path.display()));
        let mut doc = serde_json::Map::new();
        doc.insert("base".into(), summary(&sc));
        let variants = gresim_io::variants::build_variants(&sc)
            .unwrap_or_else(|e| panic!("{}: variants: {e}", path.display()));
        if !variants.is_empty() {
            let mut vs = serde_json::Map::new();
            for v in &variants {
                vs.insert(v.name.clone(), summary(&v.scenario));
            }
            doc.insert("variants".into(), vs.into());
        }
        let text =
            serde_json::to_string_pretty(&serde_json::Value::Object(doc)).expect("JSON") + "\n";
        let name = stem(path);
        golden::check(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{name}.json")),
            &text,
        );
        names.push(name);
    }
    // No golden file outlives its scenario.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for e in std::fs::read_dir(&dir).expect("tests/golden lists") {
        let p = e.expect("an entry").path();
        let n = stem(&p);
        assert!(
            names.contains(&n),
            "{} has no scenario scenarios/{n}.json: remove it",
            p.display()
        );
    }
}
