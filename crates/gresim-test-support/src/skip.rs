//! How a test that cannot run says so. Every crate's tests print the same
//! marker through [`skip!`](crate::skip!):
//!
//! ```text
//! GRESIM-SKIP: <package>/<test crate>::<test>: <reason>
//! ```
//!
//! The line is written to the process's stderr directly, not through
//! `eprintln!`, so libtest's output capture does not swallow it: it shows in
//! `cargo test`'s output whether the test passes or not, and `.ci/run`
//! collects it, lists every skip at the end, and in CI (`CI=true`) fails the
//! run unless the reason is on its allow-list. The tidy test
//! (`crates/gresim-test-support/tests/tidy.rs`) checks that every test
//! reading `../shared` can say so.

use std::io::Write as _;

/// The marker `.ci/run` greps for.
pub const MARKER: &str = "GRESIM-SKIP:";

/// Prints the skip line of `test` (the test function's name) in the calling
/// test crate, with `reason`. Expands `env!` at the call, so the line names
/// the package and test crate that skipped.
#[macro_export]
macro_rules! skip {
    ($test:expr, $reason:expr $(,)?) => {
        $crate::skip::write(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_CRATE_NAME"),
            $test,
            $reason,
        )
    };
}

/// Writes the skip line; use [`skip!`](crate::skip!), which fills in the
/// package and the test crate.
pub fn write(package: &str, test_crate: &str, test: &str, reason: &str) {
    let line = format!("{MARKER} {package}/{test_crate}::{test}: {reason}\n");
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
}
