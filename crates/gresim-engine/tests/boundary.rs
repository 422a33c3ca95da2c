//! The engine knows schedulers only through `gresim-policy`
//! (docs/architecture.md): its library depends on no other gresim crate
//! than the model and the policy interface, and its sources name no
//! scheduler module.

use std::path::Path;

#[test]
fn the_engine_depends_on_the_model_and_the_policy_interface_only() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml reads");
    let mut section = String::new();
    let mut gresim_deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if section == "[dependencies]" && line.starts_with("gresim") {
            gresim_deps.push(line.split(['.', ' ', '=']).next().unwrap_or("").to_string());
        }
    }
    assert_eq!(gresim_deps, ["gresim-model", "gresim-policy"]);

    let mut read = 0;
    for entry in std::fs::read_dir(dir.join("src")).expect("src lists") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("a source reads");
            assert!(
                !text.contains("gresim_sched"),
                "{} names gresim_sched",
                path.display()
            );
            read += 1;
        }
    }
    assert!(read >= 4, "read {read} source files");
}
