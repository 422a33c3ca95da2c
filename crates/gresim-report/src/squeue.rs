//! `sim squeue RUN_DIR --at T`: the simulated queue at time T, printed as
//! Slurm 22.05's squeue prints it.
//!
//! * Default format `%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R` (squeue's).
//! * Codes `%i %P %j %u %T %t %M %l %D %R %b`, with `%.N` (right-justified,
//!   cut to N) and `%N` (left-justified, cut to N) widths.
//! * Default states PENDING and RUNNING; `--states` takes long or compact
//!   names (`PD,R,CD`) or `all`. Ended jobs are listed for 300 s after their
//!   end (Slurm's default MinJobAge).
//! * Order: squeue's default `P,t,-p`: partition name, state (pending before
//!   running), priority descending, then job id.
//! * Pending array tasks that never started are one row, `A_[lo-hi%N]`.

use std::collections::BTreeMap;

use gresim_model::hostlist;
use gresim_model::job::JobState;
use gresim_model::slurm_time::{format_duration, format_time_limit};

use crate::run_file::{JobAt, JobRec, RunFile};
use crate::slurmfmt::{pad, parse_format, Piece};

/// squeue's default format.
pub const DEFAULT_FORMAT: &str = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
const CODES: &str = "iPjuaqTtMlDRb";
/// Slurm's default MinJobAge: how long ended jobs stay visible.
pub const MIN_JOB_AGE: u64 = 300;

/// squeue's compact state names.
pub fn compact_state(s: JobState) -> &'static str {
    match s {
        JobState::Pending => "PD",
        JobState::Running => "R",
        JobState::Completed => "CD",
        JobState::Failed => "F",
        JobState::Timeout => "TO",
        JobState::Cancelled => "CA",
        JobState::NodeFail => "NF",
        JobState::Requeued => "RQ",
        JobState::OutOfMemory => "OOM",
        JobState::Rejected => "RJ",
        JobState::Preempted => "PR",
    }
}

/// Reads a `--states` list: long or compact names, any case, or `all`.
pub fn parse_states(s: &str) -> Result<Vec<JobState>, String> {
    let mut out = Vec::new();
    for tok in s.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let up = tok.to_ascii_uppercase();
        if up == "ALL" {
            return Ok(JobState::ALL.to_vec());
        }
        let st = JobState::ALL
            .iter()
            .copied()
            .find(|x| x.as_str() == up || compact_state(*x) == up)
            .ok_or_else(|| format!("unknown job state '{tok}'"))?;
        out.push(st);
    }
    if out.is_empty() {
        return Err("empty --states list".into());
    }
    Ok(out)
}

/// One printed row.
#[derive(Debug, Clone)]
struct Row {
    id: String,
    sort_id: (u32, u32),
    partition: String,
    name: String,
    user: String,
    account: String,
    qos: String,
    state: JobState,
    time: u64,
    limit: Option<u64>,
    nodes: u32,
    /// Nodelist, or `(Reason)`.
    reason_list: String,
    tres: String,
    priority: u32,
}

fn job_num(j: &JobRec) -> (u32, u32) {
    match (j.array_job_id, j.task) {
        (Some(a), Some(t)) => (a, t),
        _ => (j.job_id.unwrap_or(u32::MAX), 0),
    }
}

fn reason_text(reason: &str, desc: Option<&str>) -> String {
    match desc {
        Some(d) if !d.is_empty() => format!("({reason}, {d})"),
        _ => format!("({reason})"),
    }
}

fn row(rf: &RunFile, j: &JobRec, at: &JobAt<'_>, t: u64) -> Row {
    let dflt = rf.default_partition();
    let (state, time, nodes, list, part) = match at {
        JobAt::Pending { reason, desc, .. } => (
            JobState::Pending,
            0,
            j.request.min_nodes,
            reason_text(reason, desc.as_deref()),
            j.partition_for(None, dflt),
        ),
        JobAt::Running(r) => (
            JobState::Running,
            t - r.start,
            r.nodes.len() as u32,
            hostlist::compress(&r.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>()),
            j.partition_for(Some(r), dflt),
        ),
        JobAt::Done { state, .. } => {
            let last = j.runs.last();
            let list = if matches!(
                state,
                JobState::Timeout | JobState::Failed | JobState::OutOfMemory
            ) {
                reason_text(&j.reason, j.reason_desc.as_deref())
            } else {
                last.map_or_else(String::new, |r| {
                    hostlist::compress(&r.nodes.iter().map(|n| n.node.as_str()).collect::<Vec<_>>())
                })
            };
            (
                *state,
                last.map_or(0, |r| r.end.unwrap_or(t).saturating_sub(r.start)),
                last.map_or(j.request.min_nodes, |r| r.nodes.len() as u32),
                list,
                j.partition_for(last, dflt),
            )
        }
    };
    Row {
        id: j.id.clone(),
        sort_id: job_num(j),
        partition: part,
        name: j.name.clone(),
        user: j.user.clone(),
        account: j.account.clone().unwrap_or_default(),
        qos: j.qos.clone().unwrap_or_default(),
        state,
        time,
        limit: j.time_limit,
        nodes,
        reason_list: list,
        tres: j.tres_per_node(),
        priority: j.priority,
    }
}

/// The rows of the queue at `t`, in squeue's order.
fn rows(rf: &RunFile, t: u64, states: &[JobState]) -> Vec<Row> {
    let mut out = Vec::new();
    // Unsplit pending array tasks, by array job id: (first row, task ids, throttle).
    let mut arrays: BTreeMap<u32, (Row, Vec<u32>, Option<u32>)> = BTreeMap::new();
    for j in &rf.jobs {
        let Some(at) = j.at(t) else { continue };
        let st = match &at {
            JobAt::Pending { .. } => JobState::Pending,
            JobAt::Running(_) => JobState::Running,
            JobAt::Done { state, end } => {
                if *state == JobState::Rejected || t >= end.saturating_add(MIN_JOB_AGE) {
                    continue;
                }
                *state
            }
        };
        if !states.contains(&st) {
            continue;
        }
        let r = row(rf, j, &at, t);
        match (&at, j.array_job_id, j.task) {
            (
                JobAt::Pending {
                    requeued: false, ..
                },
                Some(a),
                Some(task),
            ) => {
                let e = arrays
                    .entry(a)
                    .or_insert_with(|| (r, Vec::new(), j.throttle));
                e.1.push(task);
            }
            _ => out.push(r),
        }
    }
    for (a, (mut r, mut tasks, throttle)) in arrays {
        tasks.sort_unstable();
        tasks.dedup();
        r.id = if tasks.len() == 1 && throttle.is_none() {
            format!("{a}_{}", tasks[0])
        } else {
            let mut s = format!("{a}_[{}", crate::run_file::ranges(tasks.iter().copied()));
            if let Some(n) = throttle {
                s.push_str(&format!("%{n}"));
            }
            s.push(']');
            s
        };
        r.sort_id = (a, tasks[0]);
        out.push(r);
    }
    out.sort_by(|a, b| {
        a.partition
            .cmp(&b.partition)
            .then(a.state.cmp(&b.state))
            .then(b.priority.cmp(&a.priority))
            .then(a.sort_id.cmp(&b.sort_id))
    });
    out
}

fn header(code: char) -> &'static str {
    match code {
        'i' => "JOBID",
        'P' => "PARTITION",
        'j' => "NAME",
        'u' => "USER",
        'a' => "ACCOUNT",
        'q' => "QOS",
        'T' => "STATE",
        't' => "ST",
        'M' => "TIME",
        'l' => "TIME_LIMIT",
        'D' => "NODES",
        'R' => "NODELIST(REASON)",
        'b' => "TRES_PER_NODE",
        _ => "",
    }
}

fn value(r: &Row, code: char) -> String {
    match code {
        'i' => r.id.clone(),
        'P' => r.partition.clone(),
        'j' => r.name.clone(),
        'u' => r.user.clone(),
        'a' => r.account.clone(),
        'q' => r.qos.clone(),
        'T' => r.state.as_str().to_string(),
        't' => compact_state(r.state).to_string(),
        'M' => format_duration(r.time),
        'l' => format_time_limit(r.limit),
        'D' => r.nodes.to_string(),
        'R' => r.reason_list.clone(),
        'b' => r.tres.clone(),
        _ => String::new(),
    }
}

/// Options of the squeue view.
#[derive(Debug, Clone)]
pub struct SqueueOpts {
    pub at: u64,
    pub format: Option<String>,
    /// `None`: PENDING and RUNNING.
    pub states: Option<Vec<JobState>>,
    pub no_header: bool,
}

/// The squeue text at `opts.at` (lines end with `\n`), or an error for a bad format.
pub fn squeue(rf: &RunFile, opts: &SqueueOpts) -> Result<String, String> {
    let pieces = parse_format(opts.format.as_deref().unwrap_or(DEFAULT_FORMAT), CODES)?;
    let states = opts
        .states
        .clone()
        .unwrap_or_else(|| vec![JobState::Pending, JobState::Running]);
    let line = |f: &dyn Fn(char) -> String| -> String {
        let mut s = String::new();
        for p in &pieces {
            match p {
                Piece::Literal(l) => s.push_str(l),
                Piece::Field { code, width, right } => {
                    // Node lists are never cut (squeue's _print_nodes).
                    let cut = *code != 'R';
                    s.push_str(&pad(&f(*code), *width, *right, cut));
                }
            }
        }
        s.push('\n');
        s
    };
    let mut out = String::new();
    if !opts.no_header {
        out.push_str(&line(&|c| header(c).to_string()));
    }
    for r in rows(rf, opts.at, &states) {
        out.push_str(&line(&|c| value(&r, c)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
