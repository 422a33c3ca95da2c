//! Streamed job traces: sacct dumps, SWF logs, Alibaba OpenB pod lists and
//! Helios/Acme job logs.
//!
//! A trace is read line by line through [`std::io::BufRead`] (never whole
//! into memory) and yields one [`JobSpec`] per submission, through the
//! engine's [`JobSource`] iterator. Each record becomes a scenario
//! [`JobDef`] and is built by [`crate::build::build_job`], so it is checked
//! like an inline job. Errors name the file and the line.
//!
//! The engine needs submissions in order of submit time and stops with an
//! error on the first one out of order: SWF logs and `sacct` dumps of one
//! cluster are normally sorted (sacct lists jobs by id, which is submit
//! order); other traces may need `sort` first (for CSVs keep the header on
//! top).
//!
//! Mapping rules shared by the readers:
//! * a partition the cluster does not have is dropped (the job goes to the
//!   default partition); a GPU type the cluster does not have is dropped
//!   (the job takes any GPU);
//! * `N` GPUs over `k` nodes are `--gpus-per-node=N/k` when `k` divides `N`,
//!   else `--gpus=N`; CPUs are `--ntasks-per-node=1 --cpus-per-task=⌈C/k⌉`;
//! * a job that never started (cancelled while pending) is skipped; a job
//!   without a known run time runs until its time limit.

pub mod batsim;
pub mod helios;
pub mod openb;
pub mod sacct;
pub mod swf;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use gresim_engine::{JobSource, SourceError};
use gresim_model::job::JobSpec;
use gresim_model::Cluster;

use crate::error::InputError;
use crate::spec::{JobDef, NumOrStr};

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// A JSON array or JSON Lines of scenario jobs (read whole, as before).
    Json,
    Sacct,
    Swf,
    OpenB,
    Helios,
    /// Batsim's JSON workload (read whole, like `Json`).
    Batsim,
}

impl TraceFormat {
    /// The names a scenario's `workload.format` takes.
    pub const NAMES: &'static [&'static str] =
        &["json", "sacct", "swf", "openb", "helios", "batsim"];

    pub fn from_name(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "json" | "jsonl" => Some(TraceFormat::Json),
            "sacct" => Some(TraceFormat::Sacct),
            "swf" => Some(TraceFormat::Swf),
            "openb" => Some(TraceFormat::OpenB),
            "helios" | "acme" => Some(TraceFormat::Helios),
            "batsim" => Some(TraceFormat::Batsim),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Json => "json",
            TraceFormat::Sacct => "sacct",
            TraceFormat::Swf => "swf",
            TraceFormat::OpenB => "openb",
            TraceFormat::Helios => "helios",
            TraceFormat::Batsim => "batsim",
        }
    }
}

/// Options of the readers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOptions {
    /// SWF: processors are GPUs, this many per node (default: CPUs).
    pub swf_gpus_per_node: Option<u32>,
    /// OpenB: only pods that were scheduled (default true).
    pub openb_scheduled_only: bool,
    /// OpenB: what a pod with `gpu_milli` < 1000 asks for (default: a whole GPU).
    pub openb_gpu_milli: openb::GpuMilli,
    /// Batsim: gresim ticks per second of Batsim time (default 1).
    pub batsim_ticks_per_second: u64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            swf_gpus_per_node: None,
            openb_scheduled_only: true,
            openb_gpu_milli: openb::GpuMilli::Whole,
            batsim_ticks_per_second: 1,
        }
    }
}

/// What a reader makes of one line.
pub(crate) enum Rec {
    /// Not a submission (a comment, a job step, a job that never ran).
    Skip,
    Job(Box<JobDef>),
}

/// One format's line reader. The first non-empty line goes to `header`
/// (a reader without a header returns `false` to read it as a record).
pub(crate) trait LineParser {
    fn header(&mut self, line: &str) -> Result<bool, String>;
    fn record(&mut self, line: &str, cluster: &Cluster) -> Result<Rec, String>;
}

/// Streams `path` in `format` (not `Json`).
pub fn open<'a>(
    path: &Path,
    format: TraceFormat,
    opts: &TraceOptions,
    cluster: &'a Cluster,
) -> Result<JobSource<'a>, InputError> {
    open_reader(path, open_text(path)?, format, opts, cluster)
}

/// A trace file's text: gunzipped, as it is read, when its name ends in
/// `.gz` (SWF logs and OpenB's CSVs ship compressed), and read from
/// `<path>.gz` when `path` is absent and that is there.
pub fn open_text(path: &Path) -> Result<Box<dyn BufRead>, InputError> {
    let mut gz = path.as_os_str().to_owned();
    gz.push(".gz");
    let gz = PathBuf::from(gz);
    let zipped_name = path.extension().is_some_and(|e| e == "gz");
    let (p, zipped) = if !zipped_name && !path.exists() && gz.exists() {
        (gz.as_path(), true)
    } else {
        (path, zipped_name)
    };
    let file =
        File::open(p).map_err(|e| InputError::new(p, format!("cannot read the trace: {e}")))?;
    Ok(if zipped {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(
            BufReader::new(file),
        )))
    } else {
        Box::new(BufReader::new(file))
    })
}

/// Streams a reader in `format`; `path` names it in errors.
pub fn open_reader<'a>(
    path: &Path,
    reader: Box<dyn BufRead + 'a>,
    format: TraceFormat,
    opts: &TraceOptions,
    cluster: &'a Cluster,
) -> Result<JobSource<'a>, InputError> {
    let parser: Box<dyn LineParser + 'a> = match format {
        TraceFormat::Sacct => Box::new(sacct::Sacct::default()),
        TraceFormat::Swf => Box::new(swf::Swf::new(opts.swf_gpus_per_node)),
        TraceFormat::OpenB => Box::new(openb::OpenB::new(
            opts.openb_scheduled_only,
            opts.openb_gpu_milli,
        )),
        TraceFormat::Helios => Box::new(helios::Helios::default()),
        TraceFormat::Json | TraceFormat::Batsim => {
            return Err(InputError::new(
                path,
                "JSON and Batsim traces are read whole, not streamed",
            ))
        }
    };
    Ok(Box::new(Stream {
        path: path.to_path_buf(),
        reader,
        parser,
        cluster,
        line: 0,
        header_done: false,
        done: false,
        buf: Vec::new(),
        count: 0,
        names: gresim_model::Names::default(),
    }))
}

/// Checks that `path` opens and its first line is a header `format` reads.
pub fn check(path: &Path, format: TraceFormat, opts: &TraceOptions) -> Result<(), InputError> {
    let file = File::open(path)
        .map_err(|e| InputError::new(path, format!("cannot read the trace: {e}")))?;
    let mut r = BufReader::new(file);
    let mut buf = Vec::new();
    let mut line = 0;
    loop {
        buf.clear();
        let n = r
            .read_until(b'\n', &mut buf)
            .map_err(|e| InputError::new(path, format!("cannot read the trace: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        line += 1;
        let text = String::from_utf8_lossy(&buf);
        let t = text.trim_end_matches(['\n', '\r']);
        if t.trim().is_empty() {
            continue;
        }
        let mut p: Box<dyn LineParser> = match format {
            TraceFormat::Sacct => Box::new(sacct::Sacct::default()),
            TraceFormat::Swf => return Ok(()),
            TraceFormat::OpenB => Box::new(openb::OpenB::new(
                opts.openb_scheduled_only,
                opts.openb_gpu_milli,
            )),
            TraceFormat::Helios => Box::new(helios::Helios::default()),
            TraceFormat::Json | TraceFormat::Batsim => return Ok(()),
        };
        return p
            .header(t)
            .map(|_| ())
            .map_err(|m| InputError::new(path, m).with_line(line, 0));
    }
}

struct Stream<'a> {
    path: PathBuf,
    reader: Box<dyn BufRead + 'a>,
    parser: Box<dyn LineParser + 'a>,
    cluster: &'a Cluster,
    line: usize,
    header_done: bool,
    done: bool,
    buf: Vec<u8>,
    count: u64,
    /// User and job names seen so far, shared by the jobs that carry them.
    names: gresim_model::Names,
}

impl Stream<'_> {
    fn fail(&mut self, msg: String) -> Option<Result<JobSpec, SourceError>> {
        self.done = true;
        Some(Err(SourceError(format!(
            "{}:{}: {msg}",
            self.path.display(),
            self.line
        ))))
    }
}

impl Iterator for Stream<'_> {
    type Item = Result<JobSpec, SourceError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.done = true;
                    return None;
                }
                Ok(_) => {}
                Err(e) => return self.fail(format!("cannot read the trace: {e}")),
            }
            self.line += 1;
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return self.fail("not UTF-8 text".into());
            };
            let text = text.trim_end_matches(['\n', '\r']).to_string();
            if text.trim().is_empty() {
                continue;
            }
            if !self.header_done {
                self.header_done = true;
                match self.parser.header(&text) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(m) => return self.fail(m),
                }
            }
            match self.parser.record(&text, self.cluster) {
                Ok(Rec::Skip) => continue,
                Ok(Rec::Job(d)) => {
                    self.count += 1;
                    let key = d.id.clone().unwrap_or_else(|| format!("job{}", self.count));
                    let where_ = format!("line {}", self.line);
                    return match crate::build::build_job(
                        &self.path,
                        &where_,
                        &d,
                        key,
                        self.cluster,
                        &BTreeMap::new(),
                        &[],
                    ) {
                        Ok(mut s) => {
                            s.intern_names(&mut self.names);
                            Some(Ok(s))
                        }
                        Err(e) => {
                            let field = e
                                .path
                                .as_deref()
                                .and_then(|p| p.strip_prefix(&where_))
                                .unwrap_or("")
                                .trim_start_matches('.')
                                .to_string();
                            self.fail(format!("{} ({field})", e.msg))
                        }
                    };
                }
                Err(m) => return self.fail(m),
            }
        }
        None
    }
}

/// Column positions from a header, by lower-cased name.
/// A CSV record's fields, which must be as many as the header's.
pub(crate) fn csv_fields(line: &str, width: usize) -> Result<Vec<&str>, String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != width {
        return Err(format!("{} fields, but the header has {width}", f.len()));
    }
    Ok(f)
}

/// Field `n` of a CSV record by header name; empty and `nan` are absent.
pub(crate) fn csv_get<'a>(
    cols: &BTreeMap<String, usize>,
    f: &[&'a str],
    n: &str,
) -> Option<&'a str> {
    cols.get(n)
        .and_then(|&i| f.get(i))
        .map(|s| s.trim())
        .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("nan"))
}

/// Field `n` as a non-negative number, rounded to an integer.
pub(crate) fn csv_num(
    cols: &BTreeMap<String, usize>,
    f: &[&str],
    n: &str,
) -> Result<Option<u64>, String> {
    csv_get(cols, f, n)
        .map(|v| {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|x| x.round() as u64)
                .ok_or_else(|| format!("{n} '{v}' is not a non-negative number"))
        })
        .transpose()
}

pub(crate) fn columns(header: &[&str]) -> BTreeMap<String, usize> {
    header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.trim().to_ascii_lowercase(), i))
        .collect()
}

/// The partition if the cluster has it.
pub(crate) fn known_partition(cluster: &Cluster, p: &str) -> Option<String> {
    let p = p.trim();
    cluster.partition_id(p).map(|_| p.to_string())
}

/// The GPU type if the cluster has it.
pub(crate) fn known_type(cluster: &Cluster, t: &str) -> Option<String> {
    let t = t.trim();
    if t.is_empty() {
        return None;
    }
    if cluster.gpu_type_id(t).is_some() {
        return Some(t.to_string());
    }
    cluster
        .gpu_types
        .iter()
        .find(|g| g.name.eq_ignore_ascii_case(t))
        .map(|g| g.name.clone())
}

/// Fills the shape of a job with `gpus` GPUs of `ty` and `cpus` CPUs over `nodes` nodes.
pub(crate) fn shape(d: &mut JobDef, nodes: u64, cpus: u64, gpus: u64, ty: Option<String>) {
    let nodes = nodes.max(1);
    d.nodes = Some(NumOrStr::Num(nodes));
    d.ntasks_per_node = Some(1);
    d.cpus_per_task = Some(cpus.div_ceil(nodes).max(1));
    if gpus > 0 {
        let g = |n: u64| match &ty {
            Some(t) => NumOrStr::Str(format!("{t}:{n}")),
            None => NumOrStr::Num(n),
        };
        if gpus.is_multiple_of(nodes) {
            d.gpus_per_node = Some(g(gpus / nodes));
        } else {
            d.gpus = Some(g(gpus));
        }
    }
}

/// Seconds as a `--time` string (`H:MM:SS`).
pub(crate) fn time_string(secs: u64) -> NumOrStr {
    NumOrStr::Str(format!(
        "{}:{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    ))
}

/// Seconds since the Unix epoch of `YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|±HH[:MM]]`,
/// or of a plain integer. `None` for `Unknown`, `None`, empty and other text.
pub(crate) fn parse_datetime(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<i64>() {
        return Some(n);
    }
    if let Ok(f) = s.parse::<f64>() {
        return f.is_finite().then_some(f.floor() as i64);
    }
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    let n = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, se) = (n(11..13)?, n(14..16)?, n(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 24 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "" | "Z" => 0,
        r if r.starts_with(['+', '-']) => {
            let sign = if r.starts_with('-') { -1 } else { 1 };
            let digits: String = r[1..].chars().filter(|c| *c != ':').collect();
            if digits.len() != 2 && digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_digit())
            {
                return None;
            }
            let hh: i64 = digits[..2].parse().ok()?;
            let mm: i64 = if digits.len() == 4 {
                digits[2..].parse().ok()?
            } else {
                0
            };
            sign * (hh * 3600 + mm * 60)
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// Submit times relative to the first submission.
#[derive(Debug, Default)]
pub(crate) struct Epoch {
    first: Option<i64>,
}

impl Epoch {
    /// `t` relative to the first time seen; an earlier time is an error
    /// (the trace must be sorted).
    pub(crate) fn rel(&mut self, t: i64) -> Result<u64, String> {
        let f = *self.first.get_or_insert(t);
        u64::try_from(t - f).map_err(|_| {
            "submitted before the trace's first job: the trace must be sorted by submit time"
                .to_string()
        })
    }
}

#[cfg(test)]
mod tests;
