//! Input errors: each names the file, where in it, and what was expected.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with an input file. Exit code 2 in the CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    /// JSON path (`cluster.nodes[3].gpus[0].type`), when known.
    pub path: Option<String>,
    /// 1-based line (and column), when known.
    pub line: Option<(usize, usize)>,
    pub msg: String,
}

impl InputError {
    pub fn new(file: &Path, msg: impl Into<String>) -> Self {
        InputError {
            file: file.to_path_buf(),
            path: None,
            line: None,
            msg: msg.into(),
        }
    }
    pub fn at(file: &Path, path: impl Into<String>, msg: impl Into<String>) -> Self {
        InputError {
            file: file.to_path_buf(),
            path: Some(path.into()),
            line: None,
            msg: msg.into(),
        }
    }
    pub fn with_line(mut self, line: usize, col: usize) -> Self {
        self.line = Some((line, col));
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((l, c)) = self.line {
            if c > 0 {
                write!(f, ":{l}:{c}")?;
            } else {
                write!(f, ":{l}")?;
            }
        }
        if let Some(p) = &self.path {
            if !p.is_empty() && p != "." {
                write!(f, ": at {p}")?;
            }
        }
        write!(f, ": {}", self.msg)
    }
}

impl std::error::Error for InputError {}
