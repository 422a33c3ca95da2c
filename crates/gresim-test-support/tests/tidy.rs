//! Tidy: the house rules docs/architecture.md states, checked on the tree.
//!
//! * every Rust source of the repository starts with module docs (`//!`);
//! * each crate's `[dependencies]` on gresim crates are exactly the arrows
//!   of architecture.md's `arrows` block, and every crate is listed there;
//! * every test that reads `../shared` (absent on a user's clone) can say it
//!   skipped: it calls `skip!` (Rust) or lives where pytest's skips print
//!   the marker (Python).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gresim_test_support::repo;

/// Directories whose Rust sources the rules cover.
const ROOTS: [&str; 5] = ["crates", "examples", "xtask", "benches", "python"];

/// Every file under `dir` (recursively) whose name ends with `ext`, skipping
/// build output and virtual environments.
fn files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.expect("a directory entry").path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !matches!(
                name,
                "target" | ".venv" | "venv" | "__pycache__" | "node_modules"
            ) {
                files(&p, ext, out);
            }
        } else if name.ends_with(ext) {
            out.push(p);
        }
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(repo()).unwrap_or(p).display().to_string()
}

#[test]
fn every_rust_source_starts_with_module_docs() {
    let mut all = Vec::new();
    for r in ROOTS {
        files(&repo().join(r), ".rs", &mut all);
    }
    assert!(all.len() > 100, "found only {} sources", all.len());
    let missing: Vec<String> = all
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|p| rel(p))
        .collect();
    assert!(
        missing.is_empty(),
        "these sources do not start with `//!` module docs: {missing:?}"
    );
}

/// The `arrows` block of docs/architecture.md: crate -> its gresim deps.
fn documented_arrows() -> BTreeMap<String, Vec<String>> {
    let doc = std::fs::read_to_string(repo().join("docs/architecture.md"))
        .expect("docs/architecture.md reads");
    let block = doc
        .split("```arrows\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("docs/architecture.md has an ```arrows block");
    let mut m = BTreeMap::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (name, deps) = line
            .split_once("->")
            .unwrap_or_else(|| panic!("arrows line without `->`: {line}"));
        let mut deps: Vec<String> = deps.split_whitespace().map(str::to_string).collect();
        deps.sort();
        assert!(
            m.insert(name.trim().to_string(), deps).is_none(),
            "{} is listed twice",
            name.trim()
        );
    }
    m
}

/// A manifest's package name and its `[dependencies]` on gresim crates.
fn manifest_arrows(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).expect("a Cargo.toml reads");
    let mut section = String::new();
    let mut name = None;
    let mut deps = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if section == "[package]" && line.starts_with("name") {
            name = line.split('"').nth(1).map(str::to_string);
        } else if section == "[dependencies]" && line.starts_with("gresim") {
            let dep = line.split(['.', ' ', '=']).next().unwrap_or("");
            deps.push(dep.to_string());
        }
    }
    deps.sort();
    let name = name.unwrap_or_else(|| panic!("{} has no package name", path.display()));
    (name, deps)
}

#[test]
fn crate_dependencies_are_the_documented_arrows() {
    let documented = documented_arrows();
    let mut manifests = Vec::new();
    for r in ROOTS {
        files(&repo().join(r), "Cargo.toml", &mut manifests);
    }
    // Package manifests only (not a workspace's).
    manifests.retain(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("[package]")));
    assert!(manifests.len() >= 12, "found {} manifests", manifests.len());
    let mut seen = Vec::new();
    for m in &manifests {
        let (name, deps) = manifest_arrows(m);
        let want = documented.get(&name).unwrap_or_else(|| {
            panic!(
                "{} (crate {name}) is not in docs/architecture.md's arrows block",
                rel(m)
            )
        });
        assert_eq!(
            &deps,
            want,
            "{}: its gresim dependencies differ from docs/architecture.md's arrows",
            rel(m)
        );
        seen.push(name);
    }
    for name in documented.keys() {
        assert!(
            seen.contains(name),
            "docs/architecture.md lists {name}, which no Cargo.toml defines"
        );
    }
}

#[test]
fn every_test_that_reads_shared_can_skip_visibly() {
    let mut rust = Vec::new();
    for r in ROOTS {
        files(&repo().join(r), ".rs", &mut rust);
    }
    let mut checked = 0;
    let mut silent = Vec::new();
    for p in &rust {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let reads_shared = text.contains("\"../shared")
            || text.contains("../../../shared")
            || text.contains("shared()");
        let is_support = p.starts_with(repo().join("crates/gresim-test-support/src"));
        if reads_shared && !is_support {
            checked += 1;
            if !text.contains("skip!(") {
                silent.push(rel(p));
            }
        }
    }
    assert!(
        silent.is_empty(),
        "these files read ../shared without a visible skip (gresim_test_support::skip!): {silent:?}"
    );
    // Python: every test module that names ../shared runs under the
    // conftest.py that prints the skip marker.
    let mut py = Vec::new();
    files(&repo().join("python/tests"), ".py", &mut py);
    let conftest =
        std::fs::read_to_string(repo().join("python/tests/conftest.py")).unwrap_or_default();
    for p in &py {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        if text.contains("../shared") {
            checked += 1;
            assert!(
                conftest.contains("GRESIM-SKIP"),
                "{} reads ../shared but python/tests/conftest.py prints no GRESIM-SKIP marker",
                rel(p)
            );
        }
    }
    // The rule has something to check today (peer_accasim, batsim).
    assert!(checked >= 2, "only {checked} files read ../shared");
}

/// Unit tests live in files of their own (`foo.rs` → `foo/tests.rs`), not in
/// an inline `mod tests { … }` at the end of a library source, and no
/// source of the crates grows far past the size of one concern.
#[test]
fn unit_tests_have_their_own_files_and_sources_stay_small() {
    let mut all = Vec::new();
    for r in ["crates", "python/src", "xtask/src"] {
        files(&repo().join(r), ".rs", &mut all);
    }
    let mut inline = Vec::new();
    let mut large = Vec::new();
    for p in &all {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let in_src = p.components().any(|c| c.as_os_str() == "src");
        if in_src && text.lines().any(|l| l.trim_end() == "mod tests {") {
            inline.push(rel(p));
        }
        // Library and binary sources, not integration tests or test files.
        let is_test = !in_src || p.file_name().is_some_and(|n| n == "tests.rs");
        let lines = text.lines().count();
        if !is_test && lines > LARGEST_SOURCE {
            large.push(format!("{} ({lines} lines)", rel(p)));
        }
    }
    assert!(
        inline.is_empty(),
        "these sources keep an inline `mod tests {{`; move it to its own file: {inline:?}"
    );
    assert!(
        large.is_empty(),
        "these sources are over {LARGEST_SOURCE} lines; split them along their seams: {large:?}"
    );
}

/// The most lines a library or binary source may have (issue 15: "no
/// library source file exceeds about 1,500 lines").
const LARGEST_SOURCE: usize = 1_500;
