//! `#SBATCH` scripts and sbatch command lines.
//!
//! [`parse_script`] reads a batch script the way sbatch does
//! (src/sbatch/opt.c `_opt_batch_script`, `get_argument`): lines beginning
//! with `#SBATCH` (or the old `#SLURM`) carry options, split into arguments
//! on whitespace with `"…"`/`'…'` quoting and `\` escapes, and an unquoted
//! `#` ends the line; the first line that is neither blank nor a comment is
//! the first command and ends the directives. The arguments of all directive
//! lines form one argument vector (an option's value may even sit on the next
//! `#SBATCH` line), then the command-line options are applied on top, so
//! they override the script's.
//!
//! Every option value is checked here, with sbatch-like messages and the
//! file, line and column of the option; what needs the cluster (GPU type
//! names, partitions, features) is checked when the job is built
//! (gresim-io builds the job), and [`relocate`] maps those errors back to
//! the option's line.
//!
//! The result is an [`SbatchJob`] (the options as written, which gresim-io
//! turns into the scenario's job type) plus what the linter and `sim env`
//! need: where each option came from, the script body, and the
//! `#GRESIM key=value` directive comments (`#GRESIM vram=40G` declares the
//! job's GPU memory need per GPU).

use std::path::{Path, PathBuf};

use gresim_model::hostlist;
use gresim_model::slurm_time::parse_time_limit;
use gresim_model::units::{parse_count, parse_mem_mib};

use crate::error::InputError;
use crate::slurm_opts;
use crate::NumOrStr;

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arg {
    None,
    Required,
    /// Only as `--opt=value` (getopt's optional_argument).
    Optional,
}

/// One sbatch option gresim knows.
struct OptDef {
    long: &'static str,
    short: Option<char>,
    arg: Arg,
    /// Accepted and recorded, but it has no effect on the simulation.
    inert: bool,
}

const fn opt(long: &'static str, short: Option<char>, arg: Arg) -> OptDef {
    OptDef {
        long,
        short,
        arg,
        inert: false,
    }
}

const fn inert(long: &'static str, short: Option<char>, arg: Arg) -> OptDef {
    OptDef {
        long,
        short,
        arg,
        inert: true,
    }
}

/// Every option gresim reads. The inert ones are common in real scripts and
/// change nothing gresim models (accounts, mail, working directory …).
const OPTIONS: &[OptDef] = &[
    opt("job-name", Some('J'), Arg::Required),
    opt("partition", Some('p'), Arg::Required),
    opt("nodes", Some('N'), Arg::Required),
    opt("ntasks", Some('n'), Arg::Required),
    opt("ntasks-per-node", None, Arg::Required),
    opt("cpus-per-task", Some('c'), Arg::Required),
    opt("gres", None, Arg::Required),
    opt("gpus-per-task", None, Arg::Required),
    opt("gpus-per-node", None, Arg::Required),
    opt("gpus", Some('G'), Arg::Required),
    opt("cpus-per-gpu", None, Arg::Required),
    opt("mem-per-gpu", None, Arg::Required),
    opt("mem", None, Arg::Required),
    opt("mem-per-cpu", None, Arg::Required),
    opt("time", Some('t'), Arg::Required),
    opt("output", Some('o'), Arg::Required),
    opt("error", Some('e'), Arg::Required),
    opt("array", Some('a'), Arg::Required),
    opt("requeue", None, Arg::None),
    opt("no-requeue", None, Arg::None),
    opt("dependency", Some('d'), Arg::Required),
    opt("begin", Some('b'), Arg::Required),
    opt("gpu-bind", None, Arg::Required),
    opt("exclusive", None, Arg::Optional),
    opt("oversubscribe", Some('s'), Arg::None),
    opt("switches", None, Arg::Required),
    opt("segment", None, Arg::Required),
    opt("constraint", Some('C'), Arg::Required),
    opt("nodelist", Some('w'), Arg::Required),
    opt("exclude", Some('x'), Arg::Required),
    opt("nice", None, Arg::Optional),
    opt("hold", Some('H'), Arg::None),
    opt("account", Some('A'), Arg::Required),
    opt("qos", Some('q'), Arg::Required),
    opt("reservation", None, Arg::Required),
    inert("mail-type", None, Arg::Required),
    inert("mail-user", None, Arg::Required),
    inert("chdir", Some('D'), Arg::Required),
    inert("export", None, Arg::Required),
    inert("comment", None, Arg::Required),
    inert("signal", None, Arg::Required),
    inert("open-mode", None, Arg::Required),
    inert("wckey", None, Arg::Required),
    inert("verbose", Some('v'), Arg::None),
    inert("quiet", Some('Q'), Arg::None),
];

fn by_long(name: &str) -> Option<&'static OptDef> {
    OPTIONS.iter().find(|o| o.long == name)
}

fn by_short(c: char) -> Option<&'static OptDef> {
    OPTIONS.iter().find(|o| o.short == Some(c))
}

/// The job an sbatch command line and script ask for: each option's value
/// as written (checked, not resolved against a cluster), under the names
/// the scenario's jobs use (docs/scenario-format.md), which gresim-io's
/// `JobDef` takes over field by field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SbatchJob {
    /// `--job-name`.
    pub name: Option<String>,
    /// `-A`.
    pub account: Option<String>,
    /// `--qos`.
    pub qos: Option<String>,
    /// `--reservation`.
    pub reservation: Option<String>,
    /// `--time`.
    pub time: Option<NumOrStr>,
    pub partition: Option<String>,
    /// `-N`.
    pub nodes: Option<NumOrStr>,
    pub ntasks: Option<u64>,
    pub ntasks_per_node: Option<u64>,
    pub cpus_per_task: Option<u64>,
    pub mem: Option<NumOrStr>,
    pub mem_per_cpu: Option<NumOrStr>,
    pub mem_per_gpu: Option<NumOrStr>,
    pub gres: Option<String>,
    pub gpus: Option<NumOrStr>,
    pub gpus_per_node: Option<NumOrStr>,
    pub gpus_per_task: Option<NumOrStr>,
    pub cpus_per_gpu: Option<u64>,
    pub nodelist: Option<String>,
    pub exclude: Option<String>,
    /// `--constraint`.
    pub constraint: Option<String>,
    pub exclusive: bool,
    /// `--oversubscribe` (`-s`). It and `--exclusive` set the same job
    /// field (`shared`), so the later of the two wins.
    pub oversubscribe: bool,
    /// `--switches=count[@max-time]`.
    pub switches: Option<String>,
    /// `--segment=N`.
    pub segment: Option<NumOrStr>,
    /// `--array`.
    pub array: Option<String>,
    pub requeue: Option<bool>,
    /// `--dependency`.
    pub dependency: Option<String>,
    /// `--begin`, in seconds after submission.
    pub begin: Option<u64>,
    pub hold: bool,
    pub nice: Option<i32>,
    /// `--gpu-bind`.
    pub gpu_bind: Option<String>,
    /// `--output` pattern.
    pub output: Option<String>,
    /// `--error` pattern.
    pub error: Option<String>,
}

/// One option as given, after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOption {
    /// The long name (`gres`, `nodes`), whatever form was written.
    pub name: &'static str,
    pub value: Option<String>,
    /// 1-based line in the script; 0 for the command line.
    pub line: usize,
    /// 1-based column in the script; for the command line, the 1-based argument number.
    pub col: usize,
    /// It changes nothing gresim models (`--account`, `--mail-type` …).
    pub inert: bool,
}

/// A `#GRESIM key=value` directive comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GresimDirective {
    pub key: String,
    pub value: String,
    pub line: usize,
}

/// A parsed batch script.
#[derive(Debug, Clone)]
pub struct SbatchScript {
    pub path: PathBuf,
    /// The job as sbatch would submit it (`submit` 0; `begin` relative to submit).
    pub job: SbatchJob,
    /// Every option in the order applied: the script's, then the command line's.
    pub options: Vec<ScriptOption>,
    /// The whole script, line by line (line `i + 1` is `lines[i]`).
    pub lines: Vec<String>,
    /// 1-based line of the first command (where the directives stop), if any.
    pub first_command: Option<usize>,
    pub gresim: Vec<GresimDirective>,
    /// `#GRESIM vram=…`: the job's VRAM need per GPU, MiB.
    pub vram_mib: Option<u64>,
    /// `--begin` as seconds after submission.
    pub begin_offset: Option<u64>,
}

impl SbatchScript {
    /// The option that took effect for `name` (the last one given), if any.
    pub fn option(&self, name: &str) -> Option<&ScriptOption> {
        self.options.iter().rev().find(|o| o.name == name)
    }

    /// The 1-based script line `name` took effect from (0: the command line).
    pub fn option_line(&self, name: &str) -> Option<usize> {
        self.option(name).map(|o| o.line)
    }

    /// The body: `(line, text)` from the first command on.
    pub fn body(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        let start = self.first_command.unwrap_or(self.lines.len() + 1);
        self.lines
            .iter()
            .enumerate()
            .skip(start.saturating_sub(1))
            .map(|(i, l)| (i + 1, l.as_str()))
    }

    /// The GPU binding, parsed.
    pub fn gpu_bind(&self) -> Option<GpuBind> {
        self.job
            .gpu_bind
            .as_deref()
            .and_then(|s| parse_gpu_bind(s).ok())
    }
}

/// `--gpu-bind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuBind {
    Closest,
    None,
    /// `map_gpu:` IDs, one per local task id, reused cyclically.
    Map(Vec<u32>),
    /// `mask_gpu:` bit masks, one per local task id, reused cyclically.
    Mask(Vec<u64>),
    /// `single:N`: N tasks share each GPU.
    Single(u32),
    /// `per_task:N`: N GPUs per task.
    PerTask(u32),
}

/// Parses a `--gpu-bind` value (an optional `verbose,` prefix is accepted).
pub fn parse_gpu_bind(s: &str) -> Result<GpuBind, String> {
    let body = s.trim();
    let body = body.strip_prefix("verbose,").unwrap_or(body);
    let bad = || {
        format!(
            "invalid --gpu-bind argument '{s}'; expected closest, none, map_gpu:<list>, mask_gpu:<list>, single:<N> or per_task:<N>"
        )
    };
    let num = |x: &str| -> Result<u32, String> {
        let n: u32 = x.trim().parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(bad());
        }
        Ok(n)
    };
    if body == "closest" {
        return Ok(GpuBind::Closest);
    }
    if body == "none" {
        return Ok(GpuBind::None);
    }
    if let Some(n) = body.strip_prefix("single:") {
        return Ok(GpuBind::Single(num(n)?));
    }
    if let Some(n) = body.strip_prefix("per_task:") {
        return Ok(GpuBind::PerTask(num(n)?));
    }
    if let Some(list) = body
        .strip_prefix("map_gpu:")
        .or_else(|| body.strip_prefix("map:"))
    {
        let ids = expand_bind_list(list, |x| x.trim().parse::<u32>().ok()).ok_or_else(bad)?;
        return Ok(GpuBind::Map(ids));
    }
    if let Some(list) = body
        .strip_prefix("mask_gpu:")
        .or_else(|| body.strip_prefix("mask:"))
    {
        let masks = expand_bind_list(list, |x| {
            let x = x.trim();
            let hex = x
                .strip_prefix("0x")
                .or_else(|| x.strip_prefix("0X"))
                .unwrap_or(x);
            u64::from_str_radix(hex, 16).ok().filter(|m| *m != 0)
        })
        .ok_or_else(bad)?;
        return Ok(GpuBind::Mask(masks));
    }
    Err(bad())
}

/// `a,b*3,c` lists of `map_gpu:`/`mask_gpu:` (a `*N` repeat count is allowed).
fn expand_bind_list<T: Clone>(list: &str, one: impl Fn(&str) -> Option<T>) -> Option<Vec<T>> {
    let mut out = Vec::new();
    for tok in list.split(',') {
        let (v, rep) = match tok.split_once('*') {
            Some((v, r)) => (
                v,
                r.trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|r| *r >= 1 && *r <= 1024)?,
            ),
            None => (tok, 1),
        };
        let v = one(v)?;
        for _ in 0..rep {
            out.push(v.clone());
        }
    }
    (!out.is_empty()).then_some(out)
}

/// One argument of the argument vector, with where it came from.
#[derive(Debug, Clone)]
struct Token {
    text: String,
    line: usize,
    col: usize,
}

/// Splits the arguments of one directive line (the text after `#SBATCH`),
/// as sbatch's `get_argument` does. `offset` is the 0-based char column of
/// `text` in its line.
fn split_directive(text: &str, offset: usize) -> Result<Vec<(String, usize)>, (usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i >= chars.len() || chars[i] == '#' {
            return Ok(out);
        }
        if chars[i] == ':' {
            return Err((
                offset + i + 1,
                "unexpected ':' (heterogeneous job components are not supported)".into(),
            ));
        }
        let start = i;
        let mut arg = String::new();
        let mut quote: Option<char> = None;
        let mut escape = false;
        while i < chars.len() && (quote.is_some() || !chars[i].is_whitespace()) {
            let c = chars[i];
            if escape {
                escape = false;
            } else if c == '\\' {
                escape = true;
                i += 1;
                continue;
            } else if let Some(q) = quote {
                if c == q {
                    quote = None;
                    i += 1;
                    continue;
                }
            } else if c == '"' || c == '\'' {
                quote = Some(c);
                i += 1;
                continue;
            } else if c == '#' {
                break;
            }
            arg.push(c);
            i += 1;
        }
        if let Some(q) = quote {
            return Err((
                offset + start + 1,
                format!("unmatched {q} in the directive"),
            ));
        }
        if arg.is_empty() {
            // sbatch stops reading the line at an empty argument.
            return Ok(out);
        }
        out.push((arg, offset + start + 1));
    }
}

/// Reads a script file; `args` are sbatch command-line options that override it.
/// The file must pass sbatch's own checks first ([`check_script_file`]).
pub fn load_script(path: &Path, args: &[String]) -> Result<SbatchScript, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(path, format!("cannot read the script: {e}")))?;
    check_script_file(path, &bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    parse_script(path, &text, args)
}

/// sbatch's checks on a script file before it reads any option, in its
/// order and with its messages (src/sbatch/sbatch.c, `get_script_buffer`):
/// empty, only whitespace, a first line not starting with `#!` (a binary
/// file fails here too), a NUL byte, DOS line breaks.
pub fn check_script_file(path: &Path, bytes: &[u8]) -> Result<(), InputError> {
    let refuse = |line: usize, msg: &str| Err(InputError::new(path, msg).with_line(line, 1));
    if bytes.is_empty() {
        return refuse(1, "Batch script is empty!");
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return refuse(1, "Batch script contains only whitespace!");
    }
    if !bytes.starts_with(b"#!") {
        return refuse(
            1,
            "This does not look like a batch script.  The first\n\
             line must start with #! followed by the path to an interpreter.\n\
             For instance: #!/bin/sh",
        );
    }
    let line_of = |at: usize| 1 + bytes[..at].iter().filter(|b| **b == b'\n').count();
    if let Some(at) = bytes.iter().position(|b| *b == 0) {
        return refuse(
            line_of(at),
            "The Slurm controller does not allow scripts that\n\
             contain a NULL character '\\0'.",
        );
    }
    if let Some(at) = bytes.windows(2).position(|w| w == b"\r\n") {
        return refuse(
            line_of(at),
            "Batch script contains DOS line breaks (\\r\\n)\n\
             instead of expected UNIX line breaks (\\n).",
        );
    }
    Ok(())
}

/// Parses script text; `path` names it in errors.
pub fn parse_script(path: &Path, text: &str, args: &[String]) -> Result<SbatchScript, InputError> {
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
        .collect();
    // A trailing newline does not start another line.
    let lines = match lines.split_last() {
        Some((last, rest)) if last.is_empty() => rest.to_vec(),
        _ => lines,
    };
    let mut tokens: Vec<Token> = Vec::new();
    let mut first_command = None;
    let mut gresim = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        if let Some(d) = gresim_directive(line) {
            gresim.extend(parse_gresim(path, n, d)?);
            continue;
        }
        if first_command.is_some() {
            continue;
        }
        let rest = line
            .strip_prefix("#SBATCH")
            .or_else(|| line.strip_prefix("#SLURM"));
        match rest {
            Some(rest) => {
                let offset = line.chars().count() - rest.chars().count();
                let args = split_directive(rest, offset)
                    .map_err(|(col, msg)| InputError::new(path, msg).with_line(n, col))?;
                tokens.extend(
                    args.into_iter()
                        .map(|(text, col)| Token { text, line: n, col }),
                );
            }
            None => {
                let t = line.trim_start();
                if !t.is_empty() && !t.starts_with('#') {
                    first_command = Some(n);
                }
            }
        }
    }
    let mut options = parse_argv(path, &tokens, true)?;
    let cli: Vec<Token> = args
        .iter()
        .enumerate()
        .map(|(i, a)| Token {
            text: a.clone(),
            line: 0,
            col: i + 1,
        })
        .collect();
    options.extend(parse_argv(path, &cli, false)?);
    let mut job = SbatchJob::default();
    let mut begin_offset = None;
    for o in &options {
        apply(path, o, &mut job, &mut begin_offset)?;
    }
    job.begin = begin_offset;
    let mut vram_mib = None;
    for d in &gresim {
        if d.key == "vram" {
            vram_mib = Some(parse_mem_mib(&d.value).map_err(|e| {
                InputError::new(path, format!("#GRESIM vram: {e}")).with_line(d.line, 0)
            })?);
        }
    }
    Ok(SbatchScript {
        path: path.to_path_buf(),
        job,
        options,
        lines,
        first_command,
        gresim,
        vram_mib,
        begin_offset,
    })
}

/// The text after `#GRESIM`, if the line is such a directive.
fn gresim_directive(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let rest = t.strip_prefix("#GRESIM")?;
    (rest.is_empty() || rest.starts_with(char::is_whitespace)).then_some(rest)
}

/// `#GRESIM key=value [key=value …]`. Known keys: `vram` (GPU memory the job needs per GPU).
fn parse_gresim(path: &Path, line: usize, text: &str) -> Result<Vec<GresimDirective>, InputError> {
    let mut out = Vec::new();
    for tok in text.split_whitespace() {
        if tok.starts_with('#') {
            break;
        }
        let Some((k, v)) = tok.split_once('=') else {
            return Err(InputError::new(
                path,
                format!("#GRESIM directive '{tok}': expected key=value, e.g. vram=40G"),
            )
            .with_line(line, 0));
        };
        if k != "vram" {
            return Err(InputError::new(
                path,
                format!("unknown #GRESIM key '{k}'; expected vram (e.g. #GRESIM vram=40G)"),
            )
            .with_line(line, 0));
        }
        out.push(GresimDirective {
            key: k.to_string(),
            value: v.to_string(),
            line,
        });
    }
    Ok(out)
}

fn tok_err(path: &Path, t: &Token, msg: String) -> InputError {
    if t.line == 0 {
        InputError::at(path, format!("command-line argument {}", t.col), msg)
    } else {
        InputError::new(path, msg).with_line(t.line, t.col)
    }
}

/// getopt_long over the argument vector. `script`: the arguments come from `#SBATCH` lines.
fn parse_argv(path: &Path, toks: &[Token], script: bool) -> Result<Vec<ScriptOption>, InputError> {
    let mut out = Vec::new();
    let mut i = 0;
    let rec = |d: &'static OptDef, value: Option<String>, t: &Token| ScriptOption {
        name: d.long,
        value,
        line: t.line,
        col: t.col,
        inert: d.inert,
    };
    while i < toks.len() {
        let t = &toks[i];
        i += 1;
        if let Some(body) = t.text.strip_prefix("--") {
            if body.is_empty() {
                return Err(tok_err(
                    path,
                    t,
                    "unexpected '--': sbatch options only (the script is given separately)".into(),
                ));
            }
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let Some(d) = by_long(name) else {
                return Err(tok_err(path, t, unknown_option(&format!("--{name}"))));
            };
            let value = match (d.arg, inline) {
                (Arg::None, Some(_)) => {
                    return Err(tok_err(
                        path,
                        t,
                        format!("option '--{name}' doesn't allow an argument"),
                    ))
                }
                (Arg::None, None) => None,
                (Arg::Optional, v) => v,
                (Arg::Required, Some(v)) => Some(v),
                (Arg::Required, None) => match toks.get(i) {
                    Some(v) => {
                        i += 1;
                        Some(v.text.clone())
                    }
                    None => {
                        return Err(tok_err(
                            path,
                            t,
                            format!("option '--{name}' requires an argument"),
                        ))
                    }
                },
            };
            out.push(rec(d, value, t));
        } else if let Some(body) = t.text.strip_prefix('-').filter(|b| !b.is_empty()) {
            // Short options, possibly clustered (`-Hv`), the last may take a value (`-N2`).
            let chars: Vec<char> = body.chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let c = chars[k];
                let Some(d) = by_short(c) else {
                    return Err(tok_err(path, t, unknown_option(&format!("-{c}"))));
                };
                k += 1;
                match d.arg {
                    Arg::None | Arg::Optional => out.push(rec(d, None, t)),
                    Arg::Required => {
                        let rest: String = chars[k..].iter().collect();
                        let value = if !rest.is_empty() {
                            rest
                        } else {
                            match toks.get(i) {
                                Some(v) => {
                                    i += 1;
                                    v.text.clone()
                                }
                                None => {
                                    return Err(tok_err(
                                        path,
                                        t,
                                        format!("option requires an argument -- '{c}'"),
                                    ))
                                }
                            }
                        };
                        out.push(rec(d, Some(value), t));
                        break;
                    }
                }
            }
        } else if script {
            return Err(tok_err(
                path,
                t,
                format!("Invalid directive found in batch script: {}", t.text),
            ));
        } else {
            return Err(tok_err(
                path,
                t,
                format!(
                    "unexpected argument '{}': expected sbatch options only",
                    t.text
                ),
            ));
        }
    }
    Ok(out)
}

fn unknown_option(name: &str) -> String {
    format!("unrecognized option '{name}' (gresim reads the sbatch options listed in docs/scenario-format.md, \"Job scripts\")")
}

fn positive(v: &str, what: &str) -> Result<u64, String> {
    match v.trim().parse::<u64>() {
        Ok(0) | Err(_) => Err(format!(
            "Invalid numeric value \"{v}\" for {what}: expected a whole number of at least 1"
        )),
        Ok(n) => Ok(n),
    }
}

/// Checks one GRES token list syntactically: `gpu[:type][:count]`, `none`.
fn check_gres(s: &str) -> Result<(), String> {
    for tok in s.split(',').map(str::trim) {
        if tok.is_empty() {
            return Err(format!(
                "empty GRES token in '{s}'; expected gpu[:type][:count]"
            ));
        }
        if tok == "none" {
            continue;
        }
        let tok = tok.strip_prefix("gres/").unwrap_or(tok);
        let mut parts = tok.split(':');
        let name = parts.next().unwrap_or("");
        if name != "gpu" && gresim_model::shares::ShareKind::from_name(name).is_none() {
            return Err(format!(
                "Invalid generic resource (gres) specification: unknown GRES name '{name}' in '{s}'; expected gpu[:type][:count], shard[:count] or mps[:count]"
            ));
        }
        let rest: Vec<&str> = parts.collect();
        match rest.as_slice() {
            [] => {}
            [c] | [_, c] if c.starts_with('-') && c[1..].starts_with(|ch: char| ch.is_ascii_digit()) => {
                return Err(format!(
                    "Invalid generic resource (gres) specification '{tok}': a negative count; expected gpu[:type][:count] with a count of at least 0"
                ))
            }
            [c] if c.starts_with(|ch: char| ch.is_ascii_digit()) => {
                parse_count(c).map_err(|e| format!("Invalid generic resource (gres) specification '{tok}': {e}"))?;
            }
            [""] | [_, ""] | ["", _] => {
                return Err(format!(
                    "Invalid generic resource (gres) specification '{tok}': an empty field; expected gpu[:type][:count]"
                ))
            }
            [_] => {}
            [_, c] => {
                parse_count(c).map_err(|e| format!("Invalid generic resource (gres) specification '{tok}': {e}"))?;
            }
            _ => {
                return Err(format!(
                    "Invalid generic resource (gres) specification '{tok}': too many fields; expected gpu[:type][:count]"
                ))
            }
        }
    }
    Ok(())
}

/// `[type:]N` of `--gpus`, `--gpus-per-node`, `--gpus-per-task`.
fn check_gpu_count(opt: &str, s: &str) -> Result<(), String> {
    let t = s.trim();
    let t = t.strip_prefix("gpu:").unwrap_or(t);
    let n = match t.rsplit_once(':') {
        Some((ty, n)) => {
            if ty.is_empty() {
                return Err(format!(
                    "Invalid --{opt} specification '{s}': empty GPU type; expected [type:]N"
                ));
            }
            n
        }
        None => t,
    };
    match parse_count(n) {
        Ok(0) | Err(_) => Err(format!(
            "Invalid --{opt} specification '{s}': expected [type:]N with N >= 1"
        )),
        Ok(_) => Ok(()),
    }
}

/// `--begin`: `now[+N[seconds|minutes|hours|days|weeks]]`, as seconds after submission.
/// Absolute dates and times of day need a wall clock, which a simulation has not.
pub fn parse_begin(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || {
        format!(
            "Invalid --begin '{s}': gresim reads now[+N[seconds|minutes|hours|days|weeks]] (absolute dates and times of day have no meaning in simulated time)"
        )
    };
    let Some(rest) = t.strip_prefix("now") else {
        return Err(bad());
    };
    if rest.is_empty() {
        return Ok(0);
    }
    let rest = rest.strip_prefix('+').ok_or_else(bad)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let unit = &rest[digits.len()..];
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let mult = match unit {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86400,
        "w" | "week" | "weeks" => 7 * 86400,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Applies one option to the job, checking its value.
fn apply(
    path: &Path,
    o: &ScriptOption,
    job: &mut SbatchJob,
    begin: &mut Option<u64>,
) -> Result<(), InputError> {
    let err = |msg: String| {
        if o.line == 0 {
            InputError::at(
                path,
                format!("command-line argument {} (--{})", o.col, o.name),
                msg,
            )
        } else {
            InputError::new(path, msg).with_line(o.line, o.col)
        }
    };
    let v = o.value.clone().unwrap_or_default();
    let nonempty = |what: &str| -> Result<String, InputError> {
        if v.trim().is_empty() {
            Err(err(format!("--{what} needs a value")))
        } else {
            Ok(v.clone())
        }
    };
    match o.name {
        "job-name" => job.name = Some(v.clone()),
        "partition" => {
            let p = nonempty("partition")?;
            if p.split(',').any(|x| x.trim().is_empty()) {
                return Err(err(format!("Invalid partition name specified: '{p}'")));
            }
            job.partition = Some(p);
        }
        "nodes" => {
            slurm_opts::parse_nodes(&v).map_err(err)?;
            job.nodes = Some(NumOrStr::Str(v.trim().to_string()));
        }
        "ntasks" => job.ntasks = Some(positive(&v, "--ntasks").map_err(err)?),
        "ntasks-per-node" => {
            job.ntasks_per_node = Some(positive(&v, "--ntasks-per-node").map_err(err)?)
        }
        "cpus-per-task" => job.cpus_per_task = Some(positive(&v, "--cpus-per-task").map_err(err)?),
        "cpus-per-gpu" => job.cpus_per_gpu = Some(positive(&v, "--cpus-per-gpu").map_err(err)?),
        "gres" => {
            check_gres(&v).map_err(err)?;
            job.gres = Some(v.trim().to_string());
        }
        "gpus" | "gpus-per-node" | "gpus-per-task" => {
            check_gpu_count(o.name, &v).map_err(err)?;
            let val = Some(NumOrStr::Str(v.trim().to_string()));
            match o.name {
                "gpus" => job.gpus = val,
                "gpus-per-node" => job.gpus_per_node = val,
                _ => job.gpus_per_task = val,
            }
        }
        "mem" | "mem-per-cpu" | "mem-per-gpu" => {
            parse_mem_mib(&v)
                .map_err(|e| err(format!("Invalid --{} specification: {e}", o.name)))?;
            let val = Some(NumOrStr::Str(v.trim().to_string()));
            // The three are mutually exclusive; the last one given wins on the
            // command line over the script, as sbatch's option merge does.
            if o.line == 0 {
                job.mem = None;
                job.mem_per_cpu = None;
                job.mem_per_gpu = None;
            }
            match o.name {
                "mem" => job.mem = val,
                "mem-per-cpu" => job.mem_per_cpu = val,
                _ => job.mem_per_gpu = val,
            }
        }
        "time" => {
            parse_time_limit(&v).map_err(|e| err(format!("Invalid --time specification: {e}")))?;
            job.time = Some(NumOrStr::Str(v.trim().to_string()));
        }
        "output" => job.output = Some(nonempty("output")?),
        "error" => job.error = Some(nonempty("error")?),
        "array" => {
            slurm_opts::parse_array(v.trim()).map_err(err)?;
            job.array = Some(v.trim().to_string());
        }
        "requeue" => job.requeue = Some(true),
        "no-requeue" => job.requeue = Some(false),
        "dependency" => {
            let d = nonempty("dependency")?;
            slurm_opts::parse_dependency(d.trim(), |_| Some((0, None))).map_err(err)?;
            job.dependency = Some(d.trim().to_string());
        }
        "begin" => *begin = Some(parse_begin(&v).map_err(err)?),
        "gpu-bind" => {
            parse_gpu_bind(&v).map_err(err)?;
            job.gpu_bind = Some(v.trim().to_string());
        }
        "oversubscribe" => {
            job.oversubscribe = true;
            job.exclusive = false;
        }
        "exclusive" => match o.value.as_deref() {
            None | Some("") => {
                job.exclusive = true;
                job.oversubscribe = false;
            }
            Some(x @ ("user" | "mcs" | "topo")) => {
                return Err(err(format!(
                    "--exclusive={x} is not modelled by gresim; use --exclusive (whole nodes)"
                )))
            }
            Some(x) => {
                return Err(err(format!(
                    "invalid --exclusive argument '{x}'; expected no value, user, mcs or topo"
                )))
            }
        },
        "switches" => {
            slurm_opts::parse_switches(&v).map_err(err)?;
            job.switches = Some(v.trim().to_string());
        }
        "segment" => {
            slurm_opts::parse_segment(&v).map_err(err)?;
            job.segment = Some(NumOrStr::Str(v.trim().to_string()));
        }
        "constraint" => job.constraint = Some(nonempty("constraint")?),
        "nodelist" | "exclude" => {
            let h = nonempty(o.name)?;
            if h.contains('/') {
                return Err(err(format!(
                    "--{} from a file ('{h}') is not supported; give a hostlist",
                    o.name
                )));
            }
            hostlist::expand(&h).map_err(|e| err(format!("bad hostlist '{h}': {e}")))?;
            if o.name == "nodelist" {
                job.nodelist = Some(h);
            } else {
                job.exclude = Some(h);
            }
        }
        "nice" => {
            let n = match o.value.as_deref() {
                None | Some("") => 100,
                Some(x) => x
                    .trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|n| n.unsigned_abs() <= 2_147_483_645)
                    .ok_or_else(|| {
                        err(format!("Invalid --nice value '{x}': expected an integer"))
                    })?,
            };
            job.nice = Some(n);
        }
        "hold" => job.hold = true,
        // With accounting they name the association and QOS; without, Slurm ignores them.
        "account" => job.account = Some(nonempty("account")?),
        "qos" => job.qos = Some(nonempty("qos")?),
        "reservation" => job.reservation = Some(nonempty("reservation")?),
        _ => {} // inert options
    }
    Ok(())
}

/// The job field an sbatch option sets (named as in [`SbatchJob`] and
/// the scenario's job), for mapping errors back.
fn field_option(field: &str) -> Option<&'static str> {
    Some(match field {
        "name" => "job-name",
        "partition" => "partition",
        "nodes" => "nodes",
        "ntasks" => "ntasks",
        "ntasks_per_node" => "ntasks-per-node",
        "cpus_per_task" => "cpus-per-task",
        "cpus_per_gpu" => "cpus-per-gpu",
        "gres" => "gres",
        "gpus" => "gpus",
        "gpus_per_node" => "gpus-per-node",
        "gpus_per_task" => "gpus-per-task",
        "mem" => "mem",
        "mem_per_cpu" => "mem-per-cpu",
        "mem_per_gpu" => "mem-per-gpu",
        "time" => "time",
        "array" => "array",
        "dependency" => "dependency",
        "nodelist" => "nodelist",
        "exclude" => "exclude",
        "constraint" => "constraint",
        _ => return None,
    })
}

/// Re-anchors an error found while building the script's job (`at
/// <what>.gres`) on the script line the option came from.
pub fn relocate(err: InputError, script: &SbatchScript) -> InputError {
    let field = err
        .path
        .as_deref()
        .and_then(|p| p.rsplit('.').next())
        .unwrap_or("");
    // Errors about memory and GPU combinations name one field but concern several options.
    let names: &[&str] = match field {
        "mem" => &["mem", "mem-per-cpu", "mem-per-gpu"],
        "cpus_per_gpu" => &["cpus-per-gpu", "mem-per-gpu"],
        _ => &[],
    };
    let opt = field_option(field)
        .and_then(|n| script.option(n))
        .or_else(|| {
            names
                .iter()
                .filter_map(|n| script.option(n))
                .max_by_key(|o| o.line)
        });
    let mut e = InputError::new(&script.path, err.msg);
    match opt {
        Some(o) if o.line > 0 => e = e.with_line(o.line, o.col),
        Some(o) => e.path = Some(format!("command-line argument {} (--{})", o.col, o.name)),
        None => {}
    }
    e
}

/// Expands `%x %j %A %a %N %u %n %t %s %%` (with an optional zero-padding
/// width, `%4a`) in an `--output`/`--error` pattern. `array` is
/// `(array job id, task index)`.
pub fn expand_filename(pattern: &str, ctx: &FilenameCtx<'_>) -> String {
    let mut out = String::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            // sbatch: a backslash disables every replacement.
            return pattern.replace('\\', "");
        }
        if c != '%' {
            out.push(c);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut width = 0usize;
        while j < chars.len() && chars[j].is_ascii_digit() && j - i <= 2 {
            width = width * 10 + chars[j].to_digit(10).unwrap_or(0) as usize;
            j += 1;
        }
        let Some(&k) = chars.get(j) else {
            out.extend(&chars[i..]);
            break;
        };
        let num = |n: u64| format!("{n:0width$}");
        let s = match k {
            '%' => "%".to_string(),
            'x' => ctx.job_name.to_string(),
            'j' => num(ctx.job_id),
            'A' => num(ctx.array.map_or(ctx.job_id, |a| a.0)),
            'a' => num(ctx.array.map_or(4_294_967_294, |a| u64::from(a.1))),
            'J' => format!("{}.batch", num(ctx.job_id)),
            'N' => ctx.node.to_string(),
            'u' => ctx.user.to_string(),
            'n' | 't' => num(0),
            's' => "batch".to_string(),
            _ => {
                out.extend(&chars[i..=j]);
                i = j + 1;
                continue;
            }
        };
        out.push_str(&s);
        i = j + 1;
    }
    out
}

/// What `%` patterns of output file names expand to.
#[derive(Debug, Clone, Copy)]
pub struct FilenameCtx<'a> {
    pub job_id: u64,
    pub job_name: &'a str,
    pub user: &'a str,
    /// The first node of the allocation (where the batch script runs).
    pub node: &'a str,
    pub array: Option<(u64, u32)>,
}

#[cfg(test)]
mod tests;
