//! The Parallel Workloads Archive's Standard Workload Format (SWF).
//!
//! 18 whitespace-separated numeric fields per job; header comments start
//! with `;`. Read: 1 job number (the key), 2 submit time (s), 4 run time,
//! 5 allocated and 8 requested processors, 9 requested time (s), 10 requested
//! memory (KB per processor), 11 status (0 failed, 1 completed, 5 cancelled),
//! 12 user id, 15 queue and 16 partition numbers (used when the cluster has
//! a partition of that name). `-1` is "unknown".
//!
//! Processors are CPUs (`--ntasks=P` over 1 to P nodes, so that, as with
//! Slurm's `-n P`, any P free cores of the cluster will do), or, with
//! `swf_gpus_per_node: G`, GPUs: `--gpus=P` over `⌈P/G⌉` nodes. Jobs with no
//! processors, and cancelled jobs that never ran, are skipped; a run time of
//! -1 runs to the limit. SWF logs are sorted by submit time.
//!
//! **Note:** `-N 1-P` makes the node selection aim at P nodes, whereas
//! Slurm's bare `-n P` aims at one and spreads only as far as it must (a
//! bare `ntasks` in gresim never spreads). With memory per core (field 10
//! or `def_mem_per_cpu`) whether and when a job starts is the same and only
//! its nodes may differ; without, each node it spreads over is given whole.

use gresim_model::Cluster;

use super::{known_partition, shape, time_string, LineParser, Rec};
use crate::spec::{JobDef, NumOrStr};

#[derive(Debug)]
pub(crate) struct Swf {
    gpus_per_node: Option<u32>,
}

impl Swf {
    pub(crate) fn new(gpus_per_node: Option<u32>) -> Self {
        Swf { gpus_per_node }
    }
}

impl LineParser for Swf {
    fn header(&mut self, _line: &str) -> Result<bool, String> {
        Ok(false)
    }

    fn record(&mut self, line: &str, cluster: &Cluster) -> Result<Rec, String> {
        let t = line.trim();
        if t.starts_with(';') {
            return Ok(Rec::Skip);
        }
        let (mut f, mut n) = ([""; 18], 0);
        for x in t.split_whitespace() {
            if let Some(slot) = f.get_mut(n) {
                *slot = x;
            }
            n += 1;
        }
        if n != 18 {
            return Err(format!("{n} fields; SWF has 18"));
        }
        let mut v = [0f64; 18];
        for (i, x) in f.iter().enumerate() {
            v[i] = number(x).ok_or_else(|| format!("field {} '{x}' is not a number", i + 1))?;
        }
        let known = |x: f64| (x >= 0.0).then(|| x.round() as u64);
        let procs = known(v[7]).filter(|&p| p > 0).or(known(v[4])).unwrap_or(0);
        let run = known(v[3]);
        let status = v[10].round() as i64;
        if procs == 0 || (run.is_none() && status == 5) {
            return Ok(Rec::Skip);
        }
        let submit = known(v[1]).ok_or("field 2 (submit time) is negative")?;
        let mut d = JobDef {
            id: Some(f[0].to_string()),
            submit,
            run_time: run,
            exit_code: Some(if status == 0 { 1 } else { 0 }),
            user: known(v[11]).map(|u| format!("u{u}")),
            ..JobDef::default()
        };
        if let Some(r) = known(v[8]).filter(|&r| r > 0) {
            d.time = Some(time_string(r));
        }
        match self.gpus_per_node {
            Some(g) if g > 0 => {
                let g = u64::from(g);
                let nodes = procs.div_ceil(g);
                shape(&mut d, nodes, 1, procs, None);
                // `--gpus` spreads over at most `nodes` nodes.
                d.gpus_per_node = None;
                d.gpus = Some(NumOrStr::Num(procs));
                d.ntasks_per_node = None;
                d.cpus_per_task = None;
            }
            _ => {
                d.ntasks = Some(procs);
                // Slurm spreads `-n P` alone over as many nodes as it needs;
                // a bare `ntasks` stays on one node here, so allow 1-P nodes.
                let max = procs.min(cluster.nodes.len() as u64);
                if max > 1 {
                    d.nodes = Some(NumOrStr::Str(format!("1-{max}")));
                }
                if let Some(m) = known(v[9]).filter(|&m| m > 0) {
                    d.mem_per_cpu = Some(NumOrStr::Num(m.div_ceil(1024)));
                }
            }
        }
        d.partition = [v[15], v[14]]
            .iter()
            .filter_map(|&x| known(x))
            .find_map(|x| known_partition(cluster, &x.to_string()));
        Ok(Rec::Job(Box::new(d)))
    }
}

/// A field's value: finite, as `str::parse::<f64>` reads it. Most fields
/// are integers, read here without the float parser (exactly, as every
/// integer of up to 15 digits is an `f64`).
fn number(x: &str) -> Option<f64> {
    let (neg, digits) = match x.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        b => (false, b),
    };
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let n = digits
            .iter()
            .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
        let n = n as f64;
        return Some(if neg { -n } else { n });
    }
    x.parse::<f64>().ok().filter(|x| x.is_finite())
}

#[cfg(test)]
mod tests;
