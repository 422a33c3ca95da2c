//! Whole-run summary: job counts, wait/JCT/slowdown statistics, utilization.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use gresim_engine::SimOutput;
use serde::Serializer;

use crate::records::run_length;

/// Feitelson's bounded-slowdown threshold τ in seconds.
pub const SLOWDOWN_TAU: u64 = 10;

/// Rounds to 6 decimal places so that JSON output is stable and readable.
/// Non-finite values become 0 and `-0` becomes `0`.
pub fn round6(x: f64) -> f64 {
    if !x.is_finite() {
        return 0.0;
    }
    if x.abs() >= 1e15 {
        // No fractional digits left to round at this magnitude.
        return x;
    }
    let r = (x * 1e6).round() / 1e6;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

fn ser_f64<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round6(*x))
}

fn ser_f64_map<S: Serializer>(m: &BTreeMap<String, f64>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(m.iter().map(|(k, v)| (k, round6(*v))))
}

/// Count, mean and nearest-rank percentiles of a sample.
///
/// Floats are rounded to 6 decimal places when serialised (see [`round6`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, Default)]
pub struct Stats {
    pub count: u64,
    #[serde(serialize_with = "ser_f64")]
    pub mean: f64,
    /// Nearest-rank 50th percentile: the value at rank ⌈0.5·n⌉.
    #[serde(serialize_with = "ser_f64")]
    pub median: f64,
    /// Nearest-rank 95th percentile: the value at rank ⌈0.95·n⌉.
    #[serde(serialize_with = "ser_f64")]
    pub p95: f64,
    #[serde(serialize_with = "ser_f64")]
    pub max: f64,
}

impl Stats {
    /// Statistics of `values` (sorted in place). An empty slice gives all zeros.
    pub fn of(values: &mut [f64]) -> Stats {
        let n = values.len();
        if n == 0 {
            return Stats::default();
        }
        values.sort_by(f64::total_cmp);
        // Nearest rank ⌈p·n/100⌉ in exact integer arithmetic, clamped to 1..=n.
        let rank = |pct: usize| (pct * n).div_ceil(100).clamp(1, n);
        Stats {
            count: n as u64,
            mean: values.iter().sum::<f64>() / n as f64,
            median: values[rank(50) - 1],
            p95: values[rank(95) - 1],
            max: values[n - 1],
        }
    }
}

/// The summary of a run.
///
/// Definitions (all times in simulated seconds; "first/last run" are a job's
/// first and last entries in `Job::runs`):
///
/// * `wait`: over jobs that started at least once, `first run start − first_submit`.
/// * `jct` (job completion time): over *ended* jobs (terminal state and at
///   least one run with an end), `last run end − first_submit`.
/// * `bounded_slowdown`: over ended jobs,
///   `max(1, (wait + run) / max(run, τ))` with τ = 10 s ([`SLOWDOWN_TAU`]),
///   `run = last run end − last run start` and
///   `wait = last run start − first_submit` (so time lost in earlier,
///   requeued runs counts as waiting, and `wait + run` equals the JCT).
/// * `makespan`: the latest end of a last run among jobs that ran (a run still
///   going at the horizon ends at `end_time`), minus the earliest
///   `first_submit` of all jobs; 0 if no job ran.
/// * utilizations: allocated over available resource-seconds of
///   [`gresim_engine::Usage`]; 0 when nothing was available.
///
/// Floats are rounded to 6 decimal places when serialised (see [`round6`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Summary {
    pub scenario: String,
    pub policy: String,
    pub jobs: u64,
    /// Jobs per final state ([`gresim_model::JobState::as_str`]); states with no job are left out.
    pub by_state: BTreeMap<String, u64>,
    pub wait: Stats,
    pub jct: Stats,
    pub bounded_slowdown: Stats,
    pub makespan: u64,
    #[serde(serialize_with = "ser_f64")]
    pub gpu_utilization: f64,
    /// Per GRES type name (`a100`, `a100_1g.10gb`).
    #[serde(serialize_with = "ser_f64_map")]
    pub gpu_utilization_by_type: BTreeMap<String, f64>,
    /// Utilization weighted by compute share (a `1g` MIG slice is 1/7 of a GPU).
    #[serde(serialize_with = "ser_f64")]
    pub gpu_sm_weighted_utilization: f64,
    /// Utilization weighted by memory share (a `1g.10gb` MIG slice is 1/8 of
    /// an A100-80GB: its memory slices over the GPU's 8).
    #[serde(serialize_with = "ser_f64")]
    pub gpu_memory_weighted_utilization: f64,
    #[serde(serialize_with = "ser_f64")]
    pub cpu_utilization: f64,
    /// Allocated GPU device-hours (all types).
    #[serde(serialize_with = "ser_f64")]
    pub gpu_hours_allocated: f64,
    pub end_time: u64,
    pub events: u64,
    /// Runs after the first, over all jobs (requeues).
    pub restarts: u64,
    /// Times a failure model took a node down.
    pub node_failures: u64,
    /// GPU-hours of failed runs that did not turn into checkpointed work.
    #[serde(serialize_with = "ser_f64")]
    pub lost_gpu_hours: f64,
    /// Jobs that failed with "CUDA out of memory".
    pub oom_jobs: u64,
    /// Jobs that expected a GPU, asked for none and ran on the CPU.
    pub cpu_fallback_jobs: u64,
    /// Placement quality (runs with a topology model only; docs/topology.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<crate::placement::PlacementSummary>,
    /// Dynamic MIG repartitionings (clusters with dynamic MIG GPUs only; docs/mig.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig_reconfig: Option<crate::mig_dynamic::MigReconfigSummary>,
}

/// Allocated over available GPU memory-seconds, each device weighing its
/// memory slices (8 for a whole GPU; [`gresim_model::mig::memory_eighths`]).
/// Every device of a GRES type has the same weight, so the per-type usage
/// integrals give it exactly.
fn memory_weighted(out: &SimOutput) -> f64 {
    let u = &out.usage;
    let (mut alloc, mut avail) = (0u128, 0u128);
    for (i, t) in out.cluster.gpu_types.iter().enumerate() {
        let w = u128::from(gresim_model::mig::memory_eighths(t));
        alloc += w * u.gpu_alloc_secs.get(i).copied().unwrap_or(0);
        avail += w * u.gpu_avail_secs.get(i).copied().unwrap_or(0);
    }
    ratio(alloc, avail)
}

fn ratio(num: u128, den: u128) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

impl Summary {
    /// Summarises a run.
    pub fn compute(out: &SimOutput, scenario_name: &str) -> Summary {
        let mut by_state: BTreeMap<String, u64> = BTreeMap::new();
        let mut waits = Vec::new();
        let mut jcts = Vec::new();
        let mut slowdowns = Vec::new();
        let mut last_end: Option<u64> = None;
        for job in &out.jobs {
            *by_state.entry(job.state.as_str().to_string()).or_default() += 1;
            let (Some(first), Some(last)) = (job.runs.first(), job.runs.last()) else {
                continue;
            };
            waits.push(first.start.saturating_sub(job.first_submit) as f64);
            let end = last.end.unwrap_or(out.end_time).max(last.start);
            last_end = Some(last_end.map_or(end, |e: u64| e.max(end)));
            if let (true, Some(end)) = (job.state.is_terminal(), last.end) {
                let jct = end.saturating_sub(job.first_submit);
                let run = run_length(last, out.end_time);
                let wait = last.start.saturating_sub(job.first_submit);
                jcts.push(jct as f64);
                let sd = (wait + run) as f64 / run.max(SLOWDOWN_TAU) as f64;
                slowdowns.push(sd.max(1.0));
            }
        }
        let first_submit = out.jobs.iter().map(|j| j.first_submit).min();
        let makespan = match (last_end, first_submit) {
            (Some(e), Some(s)) => e.saturating_sub(s),
            _ => 0,
        };

        let u = &out.usage;
        let alloc: u128 = u.gpu_alloc_secs.iter().sum();
        let avail: u128 = u.gpu_avail_secs.iter().sum();
        let gpu_utilization_by_type = out
            .cluster
            .gpu_types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let a = u.gpu_alloc_secs.get(i).copied().unwrap_or(0);
                let v = u.gpu_avail_secs.get(i).copied().unwrap_or(0);
                (t.name.clone(), ratio(a, v))
            })
            .collect();

        Summary {
            scenario: scenario_name.to_string(),
            policy: out.policy.clone(),
            jobs: out.jobs.len() as u64,
            by_state,
            wait: Stats::of(&mut waits),
            jct: Stats::of(&mut jcts),
            bounded_slowdown: Stats::of(&mut slowdowns),
            makespan,
            gpu_utilization: ratio(alloc, avail),
            gpu_utilization_by_type,
            gpu_sm_weighted_utilization: ratio(
                u.gpu_sevenths_alloc_secs,
                u.gpu_sevenths_avail_secs,
            ),
            gpu_memory_weighted_utilization: memory_weighted(out),
            cpu_utilization: ratio(u.cpu_alloc_secs, u.cpu_avail_secs),
            gpu_hours_allocated: alloc as f64 / 3600.0,
            end_time: out.end_time,
            events: out.events,
            restarts: out.jobs.iter().map(|j| u64::from(j.restarts())).sum(),
            node_failures: out.node_failures.iter().map(|&n| u64::from(n)).sum(),
            lost_gpu_hours: out.jobs.iter().map(|j| j.lost_gpu_secs()).sum::<u64>() as f64 / 3600.0,
            oom_jobs: out
                .jobs
                .iter()
                .filter(|j| j.oom && j.state == gresim_model::JobState::Failed)
                .count() as u64,
            cpu_fallback_jobs: out
                .jobs
                .iter()
                .filter(|j| {
                    out.specs
                        .get(j.sub as usize)
                        .is_some_and(|s| s.behavior().cpu_fallback_slowdown.is_some())
                })
                .count() as u64,
            placement: crate::placement::summary(out),
            mig_reconfig: crate::mig_dynamic::MigReconfigSummary::of(out),
        }
        .with_shared_gpus(out)
    }

    /// Pretty-printed JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a summary always serialises");
        s.push('\n');
        s
    }

    /// A short human-readable table for the terminal.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let states = if self.by_state.is_empty() {
            "-".to_string()
        } else {
            self.by_state
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            s,
            "{:<10} {:<13} policy {}",
            "scenario", self.scenario, self.policy
        );
        let _ = writeln!(s, "{:<10} {:<13} {}", "jobs", self.jobs, states);
        let _ = writeln!(s, "{:<10} {}", "wait  (s)", stats_line(&self.wait, 1));
        let _ = writeln!(s, "{:<10} {}", "JCT   (s)", stats_line(&self.jct, 1));
        let _ = writeln!(
            s,
            "{:<10} {}  (bounded, tau={SLOWDOWN_TAU} s)",
            "slowdown",
            stats_line(&self.bounded_slowdown, 2)
        );
        let _ = writeln!(s, "{:<10} {} s", "makespan", self.makespan);
        if let Some(p) = &self.placement {
            let _ = writeln!(
                s,
                "{:<10} {}/{} multi-GPU jobs placed ideally, mean all-reduce slowdown {:.2}x, {:.2} GPU-h lost",
                "placement",
                p.placed_ideally,
                p.multi_gpu_jobs,
                p.mean_allreduce_slowdown,
                p.gpu_hours_lost
            );
        }
        let by_type = if self.gpu_utilization_by_type.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = self
                .gpu_utilization_by_type
                .iter()
                .map(|(k, v)| format!("{k} {}", pct(*v)))
                .collect();
            format!("  ({})", parts.join(", "))
        };
        let _ = writeln!(
            s,
            "{:<10} {}{}   SM-weighted {}   memory-weighted {}",
            "GPU util",
            pct(self.gpu_utilization),
            by_type,
            pct(self.gpu_sm_weighted_utilization),
            pct(self.gpu_memory_weighted_utilization)
        );
        let _ = writeln!(s, "{:<10} {}", "CPU util", pct(self.cpu_utilization));
        if let Some(m) = &self.mig_reconfig {
            let _ = writeln!(s, "{}", m.line());
        }
        let _ = writeln!(
            s,
            "{:<10} {:.2} allocated   end {} s, {} events",
            "GPU hours", self.gpu_hours_allocated, self.end_time, self.events
        );
        if self.restarts + self.node_failures + self.oom_jobs + self.cpu_fallback_jobs > 0 {
            let _ = writeln!(
                s,
                "{:<10} {} node failures, {} restarts, {:.2} GPU hours lost, {} OOM, {} on CPU",
                "failures",
                self.node_failures,
                self.restarts,
                self.lost_gpu_hours,
                self.oom_jobs,
                self.cpu_fallback_jobs
            );
        }
        s
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A number with no decimals when it is whole, else `decimals` of them.
fn num(x: f64, decimals: usize) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.decimals$}")
    }
}

fn stats_line(st: &Stats, decimals: usize) -> String {
    if st.count == 0 {
        return "n 0".to_string();
    }
    format!(
        "n {}  mean {:.decimals$}  median {}  p95 {}  max {}",
        st.count,
        st.mean,
        num(st.median, decimals),
        num(st.p95, decimals),
        num(st.max, decimals)
    )
}

#[cfg(test)]
mod tests;
