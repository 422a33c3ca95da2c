//! How a test that cannot run says so. Included by the test files that can
//! skip (`#[path = "…/tests/support/skip.rs"] mod skip;`), so every crate
//! prints the same marker:
//!
//! ```text
//! GRESIM-SKIP: <package>/<test file>::<test>: <reason>
//! ```
//!
//! The line is written to the process's stderr directly, not through
//! `eprintln!`, so libtest's output capture does not swallow it: it shows in
//! `cargo test`'s output whether the test passes or not, and `.ci/run`
//! collects it, lists every skip at the end, and in CI (`CI=true`) fails the
//! run unless the reason is on its allow-list.

#![allow(dead_code)]

use std::io::Write as _;

/// The marker `.ci/run` greps for.
pub const MARKER: &str = "GRESIM-SKIP:";

/// Prints the skip line for `test` (the test function's name) and `reason`.
pub fn skip(test: &str, reason: &str) {
    let line = format!(
        "{MARKER} {}/{}::{test}: {reason}\n",
        env!("CARGO_PKG_NAME"),
        env!("CARGO_CRATE_NAME")
    );
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}

/// `../shared` beside the repository: the team's data and harness, absent on
/// a user's fresh clone. The tests that need it skip with [`skip`] when it is
/// not there.
pub fn shared() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}
