//! The line reader slurm.conf, gres.conf and topology.conf share
//! (`src/common/parse_config.c`): `#` comments (`\#` is a literal `#`), a
//! `\` at the end of a line continues it, `Include FILE` is read relative
//! to the including file; and the `Key=Value` words of a line. A
//! [`Warning`] is a remark about a line that is not fatal.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::InputError;

/// A non-fatal remark about a configuration file: an unknown key, a setting
/// gresim does not model, a Slurm default that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: PathBuf,
    /// 1-based line; 0 when the remark concerns the whole file.
    pub line: usize,
    pub msg: String,
}

impl Warning {
    pub fn new(file: &Path, line: usize, msg: impl Into<String>) -> Self {
        Warning {
            file: file.to_path_buf(),
            line,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.msg)
        } else {
            write!(f, "{}: {}", self.file.display(), self.msg)
        }
    }
}

/// One logical line: comments removed, continuations joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfLine {
    pub file: PathBuf,
    /// The line it starts on.
    pub line: usize,
    pub text: String,
}

/// How deep `Include` may nest.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Splits a configuration file into logical lines, following `Include`.
pub fn logical_lines(
    path: &Path,
    text: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<ConfLine>, InputError> {
    let mut out = Vec::new();
    lines_into(path, text, 0, &mut out, warnings)?;
    Ok(out)
}

fn lines_into(
    path: &Path,
    text: &str,
    depth: usize,
    out: &mut Vec<ConfLine>,
    warnings: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let lineno = i + 1;
        let stripped = strip_comment(raw);
        let (body, cont) = match stripped.trim_end().strip_suffix('\\') {
            Some(b) => (b.to_string(), true),
            None => (stripped.trim_end().to_string(), false),
        };
        let (start, mut acc) = pending.take().unwrap_or((lineno, String::new()));
        if !acc.is_empty() {
            acc.push(' ');
        }
        acc.push_str(body.trim());
        if cont {
            pending = Some((start, acc));
            continue;
        }
        emit(path, start, acc, depth, out, warnings)?;
    }
    if let Some((start, acc)) = pending {
        emit(path, start, acc, depth, out, warnings)?;
    }
    Ok(())
}

fn emit(
    path: &Path,
    line: usize,
    text: String,
    depth: usize,
    out: &mut Vec<ConfLine>,
    warnings: &mut Vec<Warning>,
) -> Result<(), InputError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(());
    }
    let mut it = t.splitn(2, char::is_whitespace);
    let first = it.next().unwrap_or("");
    if first.eq_ignore_ascii_case("include") && !first.contains('=') {
        let target = it.next().unwrap_or("").trim().trim_matches('"');
        let err = |m: String| InputError::new(path, m).with_line(line, 0);
        if target.is_empty() {
            return Err(err("Include needs a file name".into()));
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(err(format!(
                "Include nested more than {MAX_INCLUDE_DEPTH} deep (an include loop?)"
            )));
        }
        if target.contains(['*', '?']) {
            warnings.push(Warning::new(
                path,
                line,
                format!("Include {target}: glob patterns are not supported; skipped"),
            ));
            return Ok(());
        }
        let p = path.parent().unwrap_or(Path::new(".")).join(target);
        let inc = std::fs::read_to_string(&p)
            .map_err(|e| err(format!("cannot read included file {}: {e}", p.display())))?;
        return lines_into(&p, &inc, depth + 1, out, warnings);
    }
    out.push(ConfLine {
        file: path.to_path_buf(),
        line,
        text: t.to_string(),
    });
    Ok(())
}

/// Drops a `#` comment; `\#` stands for a literal `#`.
fn strip_comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'#') => {
                out.push('#');
                chars.next();
            }
            '#' => break,
            _ => out.push(c),
        }
    }
    out
}

/// The `Key=Value` words of a line (double quotes group spaces). A word
/// without `=` is a warning.
pub fn words(l: &ConfLine, warnings: &mut Vec<Warning>) -> Vec<(String, String)> {
    let mut toks: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in l.text.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !cur.is_empty() {
                    toks.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        toks.push(cur);
    }
    let mut out = Vec::new();
    for t in toks {
        match t.split_once('=') {
            Some((k, v)) if !k.is_empty() => out.push((k.to_string(), v.to_string())),
            _ => warnings.push(Warning::new(
                &l.file,
                l.line,
                format!("'{t}' is not Key=Value (ignored)"),
            )),
        }
    }
    out
}
