//! Per-job records: one row per job or array task, as `sacct` would list it.

use std::io::{self, Write};

use serde::Serialize as _;
use serde_json::ser::{Formatter as _, PrettyFormatter};

use gresim_engine::SimOutput;
use gresim_model::hostlist;
use gresim_model::job::{Job, JobState, Run, Time};
use gresim_model::state::gpu_indices;
use gresim_model::PartId;

/// The outcome of one job (or array task) at the end of a run.
///
/// Times are simulated seconds since the scenario's t0. Fields that describe
/// "the run" refer to the job's last run (the current one if it was still
/// running when the simulation stopped).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct JobRecord {
    /// [`Job::display_id`]: `%A_%a` for array tasks, else the job id.
    pub job_id: String,
    /// `--job-name`.
    pub name: String,
    pub user: String,
    /// Account and QOS, with accounting (JSON only; absent without accounting).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qos: Option<String>,
    /// Partition of the last run; else the first requested partition; else
    /// the default partition; `""` if there is none.
    pub partition: String,
    /// Final state ([`JobState::as_str`]); PENDING or RUNNING when the run
    /// stopped at a horizon.
    pub state: String,
    /// Final pending reason ([`gresim_model::Reason::as_str`]); `"None"` for
    /// jobs that are not pending.
    pub reason: String,
    /// When the job was first submitted.
    pub submit: u64,
    /// When it last became eligible.
    pub eligible: Option<u64>,
    /// Start of the last run.
    pub start: Option<u64>,
    /// End of the last run (`None` while it runs).
    pub end: Option<u64>,
    /// Start of the first run minus the first submission.
    pub wait: Option<u64>,
    /// Length of the last run (up to the end of the simulation while it runs).
    pub elapsed: Option<u64>,
    /// Time limit in seconds in the partition of [`JobRecord::partition`];
    /// `None` (null) when UNLIMITED.
    pub time_limit: Option<u64>,
    /// Hostlist-compressed nodes of the last run (`""` if it never ran).
    pub nodes: String,
    /// GPU indices per node of the last run, `gpu01:0-3;gpu02:0,2`; `""` if none.
    pub gpus: String,
    /// GPU devices of the last run.
    pub gpu_count: u32,
    /// CPUs of the last run.
    pub cpus: u32,
    /// Memory (MiB, all nodes) of the last run.
    pub mem_mib: u64,
    /// Number of runs minus one.
    pub restarts: u32,
    pub exit_code: i32,
    /// Sum over all runs of GPU devices × run length (seconds).
    pub gpu_seconds: u64,
    /// GPU-seconds of failed runs (node failure, requeue) that did not turn
    /// into checkpointed work: the work since the last checkpoint and the
    /// restart overhead, × the run's GPUs (all of a failed run without
    /// checkpoints).
    pub lost_gpu_seconds: u64,
    /// The last run ran out of GPU memory ("CUDA out of memory").
    pub oom: bool,
    /// The job expects a GPU but asked for none: it ran on the CPU, slower
    /// (seed pitfall 1).
    pub cpu_fallback: bool,
    /// What went wrong, in words (`""` when nothing did).
    pub note: String,
    /// The last run held a MIG instance and at least one other GPU device: a
    /// multi-GPU job on MIG slices, whose devices cannot join one NVLink/NCCL
    /// group (`scheduler.mig_multi_gpu`). In the JSON only when true; the
    /// note says it in words.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mig_multi_gpu: bool,
    /// Placement cost of the last run (runs with a topology model only;
    /// not in the CSV). See docs/topology.md.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::PlacementRecord>,
}

/// The CSV header: the field names of [`JobRecord`] in order.
const CSV_HEADER: [&str; 25] = [
    "job_id",
    "name",
    "user",
    "partition",
    "state",
    "reason",
    "submit",
    "eligible",
    "start",
    "end",
    "wait",
    "elapsed",
    "time_limit",
    "nodes",
    "gpus",
    "gpu_count",
    "cpus",
    "mem_mib",
    "restarts",
    "exit_code",
    "gpu_seconds",
    "lost_gpu_seconds",
    "oom",
    "cpu_fallback",
    "note",
];

/// The job's account (`account`) or QOS name, with accounting.
fn acct_name(
    out: &SimOutput,
    spec: Option<&gresim_model::JobSpec>,
    account: bool,
) -> Option<String> {
    let a = out.cluster.accounting()?;
    let ja = spec?.acct()?;
    Some(if account {
        a.assocs[ja.assoc as usize].account.clone()
    } else {
        a.qos[ja.qos as usize].name.clone()
    })
}

/// The partition a job is reported in: that of its last run, else the first
/// one it asked for, else the cluster's default partition.
pub(crate) fn job_partition(out: &SimOutput, job: &Job) -> Option<PartId> {
    job.runs
        .last()
        .map(|r| r.partition)
        .or_else(|| job.request.partitions.first().copied())
        .or_else(|| out.cluster.default_partition())
}

/// How long a run lasted (up to the end of the simulation if it still runs).
pub(crate) fn run_length(run: &Run, end_time: Time) -> u64 {
    run.end.unwrap_or(end_time).saturating_sub(run.start)
}

/// Compresses sorted GPU indices into ranges: `0-3,5`.
fn compress_indices(idx: impl Iterator<Item = u8>) -> String {
    let mut ranges: Vec<(u8, u8)> = Vec::new();
    for i in idx {
        match ranges.last_mut() {
            Some((_, hi)) if u16::from(*hi) + 1 == u16::from(i) => *hi = i,
            _ => ranges.push((i, i)),
        }
    }
    ranges
        .iter()
        .map(|&(lo, hi)| {
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}-{hi}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn record(out: &SimOutput, job: &Job, placed: bool) -> JobRecord {
    let cluster = &out.cluster;
    let spec = out.specs.get(job.sub as usize);
    let last = job.runs.last();
    let part = job_partition(out, job);
    let time_limit = match part {
        Some(p) if p.idx() < cluster.partitions.len() => {
            gresim_sched::time_limit_in(cluster, job, p)
        }
        _ => job.request.time_limit.flatten(),
    };
    let (nodes, gpus, gpu_count, cpus, mem_mib) = match last {
        Some(r) => {
            let names: Vec<&str> = cluster.node_names(r.alloc.nodes.iter().map(|n| &n.node));
            let gpus = r
                .alloc
                .nodes
                .iter()
                .filter(|n| n.gpus != 0 || n.share.is_some())
                .map(|n| {
                    format!(
                        "{}:{}{}",
                        cluster.node(n.node).name,
                        compress_indices(gpu_indices(n.gpus)),
                        crate::shares::record_suffix(cluster, n)
                    )
                })
                .collect::<Vec<_>>()
                .join(";");
            (
                hostlist::compress(&names),
                gpus,
                r.alloc.gpu_count(),
                r.alloc.cpu_count(),
                r.alloc.nodes.iter().map(|n| n.mem_mib).sum(),
            )
        }
        None => (String::new(), String::new(), 0, 0, 0),
    };
    JobRecord {
        job_id: job.display_id(),
        name: spec.map_or_else(String::new, |s| s.name.to_string()),
        user: spec.map_or_else(String::new, |s| s.user.to_string()),
        account: acct_name(out, spec, true),
        qos: acct_name(out, spec, false),
        partition: part
            .and_then(|p| cluster.partitions.get(p.idx()))
            .map_or_else(String::new, |p| p.name.clone()),
        state: job.state.as_str().to_string(),
        reason: if job.state == JobState::Pending {
            job.reason.as_str()
        } else {
            "None"
        }
        .to_string(),
        submit: job.first_submit,
        eligible: job.eligible,
        start: last.map(|r| r.start),
        end: last.and_then(|r| r.end),
        wait: job
            .runs
            .first()
            .map(|r| r.start.saturating_sub(job.first_submit)),
        elapsed: last.map(|r| run_length(r, out.end_time)),
        time_limit,
        nodes,
        gpus,
        gpu_count,
        cpus,
        mem_mib,
        restarts: job.restarts(),
        exit_code: job.exit_code,
        gpu_seconds: job
            .runs
            .iter()
            .map(|r| u64::from(r.alloc.gpu_count()) * run_length(r, out.end_time))
            .sum(),
        lost_gpu_seconds: job.lost_gpu_secs(),
        oom: job.oom && job.state == JobState::Failed,
        cpu_fallback: spec.is_some_and(|s| s.behavior().cpu_fallback_slowdown.is_some()),
        note: note(out, job),
        mig_multi_gpu: last.is_some_and(|r| gresim_model::mig::multi_gpu_on_mig(cluster, &r.alloc)),
        placement: placed
            .then(|| crate::placement::placement_of(out, job))
            .flatten(),
    }
}

/// The note of a record: out of GPU memory, CPU fallback, lost work.
fn note(out: &SimOutput, job: &Job) -> String {
    let mut notes: Vec<String> = Vec::new();
    let b = out.specs.get(job.sub as usize).map(|s| *s.behavior());
    if let (true, Some(r), Some(need)) = (job.oom, job.runs.last(), b.and_then(|b| b.vram_mib)) {
        // The smallest device the run got.
        let small = r
            .alloc
            .nodes
            .iter()
            .flat_map(|na| {
                let node = out.cluster.node(na.node);
                gpu_indices(na.gpus).filter_map(move |g| node.gpus.get(usize::from(g)))
            })
            .min_by_key(|d| d.memory_mib());
        if let Some(d) = small {
            notes.push(format!(
                "CUDA out of memory: needs {need} MiB per GPU, {} has {} MiB",
                out.cluster.gpu_type(d.ty).name,
                d.memory_mib()
            ));
        }
    }
    if let Some(f) = b.and_then(|b| b.cpu_fallback_slowdown) {
        let on_gpu_node = job.runs.last().is_some_and(|r| {
            r.alloc
                .nodes
                .iter()
                .any(|na| !out.cluster.node(na.node).gpus.is_empty())
        });
        notes.push(format!(
            "expects a GPU but requested none: ran on the CPU{}, {f}x slower",
            if on_gpu_node { " of a GPU node" } else { "" }
        ));
    }
    if let Some(r) = job.runs.last() {
        let (mig, total) = gresim_model::mig::mig_devices(&out.cluster, &r.alloc);
        if mig >= 1 && total >= 2 {
            notes.push(format!(
                "multi-GPU job on MIG slices: {total} GPU devices, {mig} of them MIG instances, \
                 which cannot join NVLink/NCCL collectives with each other"
            ));
        }
    }
    if job.lost_secs() > 0 {
        notes.push(format!(
            "{} s of work lost to {} failed run(s)",
            job.lost_secs(),
            job.runs
                .iter()
                .filter(|r| matches!(r.state, JobState::NodeFail | JobState::Requeued))
                .count()
        ));
    }
    notes.join("; ")
}

/// One record per job, in job-table order.
pub fn job_records(out: &SimOutput) -> Vec<JobRecord> {
    let placed = crate::placement::active(out);
    out.jobs.iter().map(|j| record(out, j, placed)).collect()
}

/// The records as a pretty-printed JSON array, with a trailing newline.
pub fn records_json(records: &[JobRecord]) -> String {
    let mut s = serde_json::to_string_pretty(records).expect("records always serialise");
    s.push('\n');
    s
}

/// Writes a CSV field, quoted when it holds `,`, `"`, CR or LF (RFC 4180).
fn write_csv_field<W: Write>(w: &mut W, s: &str) -> io::Result<()> {
    if s.contains([',', '"', '\n', '\r']) {
        w.write_all(b"\"")?;
        for (i, part) in s.split('"').enumerate() {
            if i > 0 {
                w.write_all(b"\"\"")?;
            }
            w.write_all(part.as_bytes())?;
        }
        w.write_all(b"\"")
    } else {
        w.write_all(s.as_bytes())
    }
}

/// Quotes a CSV field when it holds `,`, `"`, CR or LF (RFC 4180).
#[cfg(test)]
fn csv_field(s: &str) -> String {
    let mut v = Vec::new();
    write_csv_field(&mut v, s).expect("writing to a Vec never fails");
    String::from_utf8(v).expect("UTF-8 in, UTF-8 out")
}

/// Writes an optional number (`None` is an empty field).
fn write_opt<W: Write>(w: &mut W, v: Option<u64>) -> io::Result<()> {
    match v {
        Some(v) => write!(w, "{v}"),
        None => Ok(()),
    }
}

/// The CSV header line.
fn write_csv_header<W: Write>(w: &mut W) -> io::Result<()> {
    w.write_all(CSV_HEADER.join(",").as_bytes())?;
    w.write_all(b"\n")
}

/// One CSV line (with its `\n`).
fn write_csv_row<W: Write>(w: &mut W, r: &JobRecord) -> io::Result<()> {
    for s in [
        &r.job_id,
        &r.name,
        &r.user,
        &r.partition,
        &r.state,
        &r.reason,
    ] {
        write_csv_field(w, s)?;
        w.write_all(b",")?;
    }
    write!(w, "{},", r.submit)?;
    for v in [r.eligible, r.start, r.end, r.wait, r.elapsed, r.time_limit] {
        write_opt(w, v)?;
        w.write_all(b",")?;
    }
    write_csv_field(w, &r.nodes)?;
    w.write_all(b",")?;
    write_csv_field(w, &r.gpus)?;
    write!(
        w,
        ",{},{},{},{},{},{},{},{},{},",
        r.gpu_count,
        r.cpus,
        r.mem_mib,
        r.restarts,
        r.exit_code,
        r.gpu_seconds,
        r.lost_gpu_seconds,
        r.oom,
        r.cpu_fallback
    )?;
    write_csv_field(w, &r.note)?;
    w.write_all(b"\n")
}

/// The records as CSV: a header line, then one line per record (lines end
/// with `\n`). `None` is an empty field.
pub fn records_csv(records: &[JobRecord]) -> String {
    let mut v = Vec::new();
    write_csv_header(&mut v).expect("writing to a Vec never fails");
    for r in records {
        write_csv_row(&mut v, r).expect("writing to a Vec never fails");
    }
    String::from_utf8(v).expect("the records are UTF-8")
}

/// Writes records.json and records.csv of `out` in one pass over the job
/// table, one record at a time: the same bytes as
/// `records_json(&job_records(out))` and `records_csv(&job_records(out))`
/// without holding the records in memory.
pub fn write_records<J: Write, C: Write>(
    out: &SimOutput,
    json: &mut J,
    csv: &mut C,
) -> io::Result<()> {
    let placed = crate::placement::active(out);
    write_csv_header(csv)?;
    if out.jobs.is_empty() {
        return json.write_all(b"[]\n");
    }
    // The array as `serde_json::to_writer_pretty` writes it, one element at
    // a time: its formatter, moved into the array, serialises each element.
    let mut inside = PrettyFormatter::new();
    inside.begin_array(&mut *json)?;
    for (i, job) in out.jobs.iter().enumerate() {
        let r = record(out, job, placed);
        let mut f = inside.clone();
        f.begin_array_value(&mut *json, i == 0)?;
        let mut ser = serde_json::Serializer::with_formatter(&mut *json, f);
        r.serialize(&mut ser)?;
        write_csv_row(csv, &r)?;
    }
    json.write_all(b"\n]\n")
}

#[cfg(test)]
mod tests;
