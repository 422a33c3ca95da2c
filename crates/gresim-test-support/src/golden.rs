//! Golden files: a test's output kept in the repository and compared byte
//! for byte. `GRESIM_BLESS=1 cargo test ...` rewrites them instead (then
//! review the diff with `git diff` before committing): a change of
//! behaviour shows as a change of a golden file in the commit that makes it.

use std::path::Path;

/// The environment variable that switches blessing on.
pub const BLESS: &str = "GRESIM_BLESS";

/// Whether this run rewrites golden files.
pub fn blessing() -> bool {
    std::env::var_os(BLESS).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compares `actual` with the golden file at `path`, or rewrites the file
/// when blessing. On a difference it panics naming the file, the first line
/// that differs (both versions) and the command that blesses.
pub fn check(path: &Path, actual: &str) {
    if blessing() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        std::fs::write(path, actual)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let expected = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => panic!(
            "no golden file {} ({e}); create it with {BLESS}=1 and review it",
            path.display()
        ),
    };
    if expected == actual {
        return;
    }
    let (line, want, got) = first_difference(&expected, actual);
    let (want, got) = if want == got {
        ("(the final newline differs)", "")
    } else {
        (want, got)
    };
    panic!(
        "{} differs at line {line}:\n  golden: {want}\n  now:    {got}\n\
         if the change is intended, rerun with {BLESS}=1 and review `git diff`",
        path.display()
    );
}

/// The first line (1-based) where `a` and `b` differ, and the two lines
/// (`<end of file>` past the end).
fn first_difference<'a>(a: &'a str, b: &'a str) -> (usize, &'a str, &'a str) {
    let mut la = a.lines();
    let mut lb = b.lines();
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            (x, y) => {
                return (
                    n,
                    x.unwrap_or("<end of file>"),
                    y.unwrap_or("<end of file>"),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests;
