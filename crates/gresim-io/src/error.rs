//! Input errors: each names the file, where in it, and what was expected.

use std::path::Path;

/// The error type of every input reader, Slurm's formats' and the
/// scenario's alike (defined with them in `gresim-slurm`).
pub use gresim_slurm::InputError;

/// Converts a serde_json error reached through serde_path_to_error.
pub fn from_json(file: &Path, e: serde_path_to_error::Error<serde_json::Error>) -> InputError {
    let path = e.path().to_string();
    let inner = e.into_inner();
    let (line, col) = (inner.line(), inner.column());
    let mut msg = inner.to_string();
    // serde_json appends " at line L column C"; we print the position ourselves.
    if let Some(i) = msg.rfind(" at line ") {
        msg.truncate(i);
    }
    if msg.contains("untagged enum NumOrStr") {
        // `"gpus": -1`, `"nodes": 1.5`: say what fits.
        msg = "expected a whole number of at least 0 or a string (\"2\", \"a100:2\", \"1-2\")"
            .to_string();
    }
    let mut err = InputError::at(file, path, msg);
    if line > 0 {
        err = err.with_line(line, col);
    }
    err
}
