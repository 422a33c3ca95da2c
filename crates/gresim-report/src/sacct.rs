//! `sim sacct RUN_DIR`: accounting records as Slurm's sacct prints them.
//!
//! * Default fields `JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode`
//!   (sacct's), with sacct's column widths; `--format` takes any of
//!   [`FIELDS`], each optionally with a width (`JobName%20`).
//! * Columns are cut with a trailing `+` when too long, as sacct does; `-P`
//!   prints `|`-separated fields without padding and without the dash line.
//! * One record per job (its last run); `-D` (`--duplicates`) prints one
//!   record per run, so a requeued job shows its REQUEUED / NODE_FAIL runs.
//! * Pending array tasks that never started are one record `A_[lo-hi%N]`.
//! * Dates: simulated time read as a Unix time (t = 0 is 1970-01-01T00:00:00).
//! * No job steps (`.batch`, `.extern`) are simulated, so none are printed;
//!   rejected submissions (sbatch errors) have no record.

use std::collections::BTreeMap;

use gresim_model::hostlist;
use gresim_model::job::JobState;
use gresim_model::units::format_mem_mib;

use crate::run_file::{parse_state, JobRec, RunFile, RunRec};
use crate::slurmfmt::{sacct_col, sacct_duration, timestamp};

/// sacct's default fields.
pub const DEFAULT_FIELDS: &str = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";

/// The fields known, with sacct's default widths (negative: left-justified).
pub const FIELDS: &[(&str, i32)] = &[
    ("Account", 10),
    ("AllocCPUS", 10),
    ("AllocNodes", 10),
    ("AllocTRES", 10),
    ("Elapsed", 10),
    ("ElapsedRaw", 10),
    ("End", 19),
    ("ExitCode", 8),
    ("JobID", -12),
    ("JobIDRaw", -12),
    ("JobName", 10),
    ("NNodes", 8),
    ("NodeList", 15),
    ("Partition", 10),
    ("QOS", 10),
    ("Reason", 22),
    ("Start", 19),
    ("State", 10),
    ("Submit", 19),
    ("Timelimit", 10),
    ("User", 9),
];

/// One accounting record.
#[derive(Debug, Clone)]
struct Rec<'a> {
    id: String,
    raw: String,
    job: &'a JobRec,
    run: Option<&'a RunRec>,
    state: JobState,
    submit: u64,
    start: Option<u64>,
    end: Option<u64>,
}

/// `code:signal`: the job's exit code for COMPLETED and FAILED runs, signal
/// 15 (SIGTERM) for runs killed at the time limit or cancelled while running,
/// else `0:0`.
fn exit_code(state: JobState, code: i32, ran: bool) -> String {
    match state {
        JobState::Completed | JobState::Failed => format!("{code}:0"),
        JobState::Timeout | JobState::Cancelled if ran => "0:15".into(),
        _ => "0:0".into(),
    }
}

fn alloc_tres(rf: &RunFile, r: &RunRec) -> String {
    let mut parts: Vec<String> = Vec::new();
    let cpus = r.cpu_count();
    parts.push(format!("billing={cpus}"));
    parts.push(format!("cpu={cpus}"));
    let gpus = r.gpu_count();
    if gpus > 0 {
        parts.push(format!("gres/gpu={gpus}"));
        let mut by_type: BTreeMap<&str, u32> = BTreeMap::new();
        let idx = rf.node_index();
        for na in &r.nodes {
            if let Some(&ni) = idx.get(na.node.as_str()) {
                for &g in &na.gpus {
                    if let Some(dev) = rf.cluster.nodes[ni].gpus.get(usize::from(g)) {
                        *by_type.entry(dev.ty.as_str()).or_default() += 1;
                    }
                }
            }
        }
        for (t, n) in by_type {
            parts.push(format!("gres/gpu:{t}={n}"));
        }
    }
    parts.push(format!(
        "mem={}",
        format_mem_mib(r.nodes.iter().map(|n| n.mem_mib).sum())
    ));
    parts.push(format!("node={}", r.nodes.len()));
    parts.sort();
    parts.join(",")
}

fn raw_id(j: &JobRec) -> String {
    j.job_id
        .or(j.array_job_id)
        .map_or_else(|| "?".into(), |v| v.to_string())
}

fn records(rf: &RunFile, duplicates: bool) -> Vec<Rec<'_>> {
    let mut out = Vec::new();
    let mut arrays: BTreeMap<u32, (usize, Vec<u32>, Option<u32>)> = BTreeMap::new();
    for j in &rf.jobs {
        let state = parse_state(&j.state).unwrap_or(JobState::Pending);
        if state == JobState::Rejected {
            continue;
        }
        if j.runs.is_empty() && state == JobState::Pending {
            if let (Some(a), Some(t)) = (j.array_job_id, j.task) {
                let e = arrays.entry(a).or_insert_with(|| {
                    out.push(Rec {
                        id: String::new(),
                        raw: a.to_string(),
                        job: j,
                        run: None,
                        state,
                        submit: j.first_submit,
                        start: None,
                        end: None,
                    });
                    (out.len() - 1, Vec::new(), j.throttle)
                });
                e.1.push(t);
                continue;
            }
        }
        let last_closes = j
            .runs
            .last()
            .is_some_and(|r| r.end.is_none() || parse_state(&r.state) == Some(state));
        let first_shown = if duplicates {
            0
        } else {
            j.runs.len().saturating_sub(1)
        };
        for (k, r) in j.runs.iter().enumerate() {
            let is_last = k + 1 == j.runs.len();
            if k < first_shown || (!duplicates && is_last && !last_closes) {
                continue;
            }
            let submit = if k == 0 {
                j.first_submit
            } else {
                j.runs[k - 1].end.unwrap_or(j.first_submit)
            };
            out.push(Rec {
                id: j.id.clone(),
                raw: raw_id(j),
                job: j,
                run: Some(r),
                state: parse_state(&r.state).unwrap_or(JobState::Running),
                submit,
                start: Some(r.start),
                end: r.end,
            });
        }
        if !last_closes {
            // Pending (again), or ended while pending.
            let submit = j.runs.last().and_then(|r| r.end).unwrap_or(j.first_submit);
            out.push(Rec {
                id: j.id.clone(),
                raw: raw_id(j),
                job: j,
                run: None,
                state,
                submit,
                start: j.ended,
                end: j.ended,
            });
        }
    }
    for (a, (i, mut tasks, throttle)) in arrays {
        tasks.sort_unstable();
        out[i].id = if tasks.len() == 1 && throttle.is_none() {
            format!("{a}_{}", tasks[0])
        } else {
            let mut s = format!("{a}_[{}", crate::run_file::ranges(tasks.iter().copied()));
            if let Some(n) = throttle {
                s.push_str(&format!("%{n}"));
            }
            s.push(']');
            s
        };
    }
    out
}

fn value(rf: &RunFile, r: &Rec<'_>, field: &str) -> String {
    let j = r.job;
    let unknown = || "Unknown".to_string();
    match field {
        "Account" => j.account.clone().unwrap_or_default(),
        "QOS" => j.qos.clone().unwrap_or_default(),
        "AllocCPUS" => r.run.map_or(0, RunRec::cpu_count).to_string(),
        "AllocNodes" => r.run.map_or(0, |x| x.nodes.len()).to_string(),
        "AllocTRES" => r.run.map_or_else(String::new, |x| alloc_tres(rf, x)),
        "Elapsed" | "ElapsedRaw" => {
            let e = match (r.start, r.end) {
                (Some(s), Some(e)) => e.saturating_sub(s),
                (Some(s), None) => rf.end_time.saturating_sub(s),
                _ => 0,
            };
            if field == "Elapsed" {
                sacct_duration(e)
            } else {
                e.to_string()
            }
        }
        "End" => r.end.map_or_else(unknown, timestamp),
        "ExitCode" => exit_code(r.state, j.exit_code, r.run.is_some()),
        "JobID" => r.id.clone(),
        "JobIDRaw" => r.raw.clone(),
        "JobName" => j.name.clone(),
        "NNodes" => r
            .run
            .map_or(j.request.min_nodes as usize, |x| x.nodes.len())
            .to_string(),
        "NodeList" => match r.run {
            Some(x) => {
                hostlist::compress(&x.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>())
            }
            None => "None assigned".into(),
        },
        "Partition" => j.partition_for(r.run, rf.default_partition()),
        "Reason" => {
            if r.state == JobState::Pending {
                j.reason.clone()
            } else {
                "None".into()
            }
        }
        "Start" => r.start.map_or_else(unknown, timestamp),
        "State" => r.state.as_str().to_string(),
        "Submit" => timestamp(r.submit),
        "Timelimit" => j
            .time_limit
            .map_or_else(|| "UNLIMITED".into(), sacct_duration),
        "User" => j.user.clone(),
        _ => String::new(),
    }
}

/// Options of the sacct view.
#[derive(Debug, Clone, Default)]
pub struct SacctOpts {
    /// `--format`: comma-separated fields, each optionally `Name%width`.
    pub format: Option<String>,
    /// `-P`.
    pub parsable: bool,
    /// `-D`.
    pub duplicates: bool,
    pub no_header: bool,
}

/// Parses `--format`.
pub fn parse_fields(s: &str) -> Result<Vec<(&'static str, i32)>, String> {
    let mut out = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (name, width) = match tok.split_once('%') {
            Some((n, w)) => (
                n,
                Some(
                    w.parse::<i32>()
                        .ok()
                        .filter(|w| (1..=1000).contains(w))
                        .ok_or_else(|| format!("bad width in '{tok}'"))?,
                ),
            ),
            None => (tok, None),
        };
        let &(canon, dflt) = FIELDS
            .iter()
            .find(|(f, _)| f.eq_ignore_ascii_case(name))
            .ok_or_else(|| {
                format!(
                    "unknown field '{name}'; known: {}",
                    FIELDS.iter().map(|f| f.0).collect::<Vec<_>>().join(",")
                )
            })?;
        let w = match width {
            Some(w) if dflt < 0 => -w,
            Some(w) => w,
            None => dflt,
        };
        out.push((canon, w));
    }
    if out.is_empty() {
        return Err("empty --format".into());
    }
    Ok(out)
}

/// The sacct text.
pub fn sacct(rf: &RunFile, opts: &SacctOpts) -> Result<String, String> {
    let fields = parse_fields(opts.format.as_deref().unwrap_or(DEFAULT_FIELDS))?;
    let mut out = String::new();
    let line = |vals: Vec<String>| -> String {
        if opts.parsable {
            let mut s = vals.join("|");
            s.push('\n');
            s
        } else {
            let mut s = String::new();
            for ((_, w), v) in fields.iter().zip(&vals) {
                s.push_str(&sacct_col(v, w.unsigned_abs() as usize, *w > 0));
            }
            s.push('\n');
            s
        }
    };
    if !opts.no_header {
        out.push_str(&line(fields.iter().map(|f| f.0.to_string()).collect()));
        if !opts.parsable {
            out.push_str(&line(
                fields
                    .iter()
                    .map(|f| "-".repeat(f.1.unsigned_abs() as usize))
                    .collect(),
            ));
        }
    }
    for r in records(rf, opts.duplicates) {
        out.push_str(&line(fields.iter().map(|f| value(rf, &r, f.0)).collect()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
