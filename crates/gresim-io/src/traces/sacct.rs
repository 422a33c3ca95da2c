//! `sacct -P` dumps (`--parsable2`, `|`-separated, a header line first).
//!
//! Columns are found by name, so any `--format` order works. Read:
//! `JobID` (required), `Submit` (required), `Start`, `End`, `Elapsed`,
//! `Timelimit`, `State`, `ReqTRES`, `AllocTRES`, `NNodes`, `NCPUS`,
//! `Partition`, `ExitCode`, `User`, `JobName`.
//!
//! * `123` is a job; `123_4` an array task, a job of its own; `123_[1-5%2]`
//!   the pending rest of an array, submitted as `--array=1-5%2`; steps
//!   (`123.batch`, `123.extern`, `123.0`) are folded into their job, that is
//!   skipped;
//! * submit times become seconds after the first line's submit;
//! * run time = `End − Start`, else `Elapsed`; a job that never started
//!   (`CANCELLED` without `Start`) is skipped, a `PENDING` one runs to its limit;
//! * the request comes from `ReqTRES` (else `AllocTRES`, else `NCPUS` and
//!   `NNodes`): `cpu`, `mem`, `node`, `gres/gpu` and `gres/gpu:TYPE`.

use std::collections::BTreeMap;

use gresim_model::units::parse_mem_mib;
use gresim_model::Cluster;

use super::{columns, known_partition, known_type, parse_datetime, shape, Epoch, LineParser, Rec};
use crate::spec::{JobDef, NumOrStr};

#[derive(Debug, Default)]
pub(crate) struct Sacct {
    cols: BTreeMap<String, usize>,
    width: usize,
    epoch: Epoch,
}

/// The request in a TRES string.
#[derive(Debug, Default, PartialEq)]
struct Tres {
    cpu: Option<u64>,
    mem: Option<u64>,
    node: Option<u64>,
    gpu: Option<u64>,
    gpu_type: Option<String>,
}

fn parse_tres(s: &str) -> Result<Tres, String> {
    let mut t = Tres::default();
    for item in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!("TRES item '{item}' is not name=value"));
        };
        let count = || {
            v.parse::<u64>()
                .map_err(|_| format!("TRES {k}={v}: expected a count"))
        };
        match k {
            "cpu" => t.cpu = Some(count()?),
            "node" => t.node = Some(count()?),
            "mem" => t.mem = Some(parse_mem_mib(v).map_err(|e| format!("TRES mem={v}: {e}"))?),
            "gres/gpu" => t.gpu = Some(count()?),
            _ => {
                if let Some(ty) = k.strip_prefix("gres/gpu:") {
                    // A typed count; the untyped total is also present in sacct's output.
                    t.gpu_type = Some(ty.to_string());
                    if t.gpu.is_none() {
                        t.gpu = Some(count()?);
                    }
                }
            }
        }
    }
    Ok(t)
}

impl Sacct {
    fn get<'a>(&self, f: &[&'a str], name: &str) -> Option<&'a str> {
        self.cols
            .get(name)
            .and_then(|&i| f.get(i))
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
    }
}

impl LineParser for Sacct {
    fn header(&mut self, line: &str) -> Result<bool, String> {
        let h: Vec<&str> = line.split('|').collect();
        self.cols = columns(&h);
        self.width = h.len();
        for need in ["jobid", "submit"] {
            if !self.cols.contains_key(need) {
                return Err(format!(
                    "the sacct header has no {need} column; expected `sacct -P --format=JobID,Submit,…` output with its header"
                ));
            }
        }
        Ok(true)
    }

    fn record(&mut self, line: &str, cluster: &Cluster) -> Result<Rec, String> {
        let f: Vec<&str> = line.split('|').collect();
        if f.len() != self.width {
            return Err(format!(
                "{} fields, but the header has {}",
                f.len(),
                self.width
            ));
        }
        let id = self.get(&f, "jobid").ok_or("empty JobID")?;
        if id.contains('.') {
            return Ok(Rec::Skip); // a step: part of its job
        }
        let mut d = JobDef::default();
        let (key, array) = match id.split_once('_') {
            Some((base, rest)) if rest.starts_with('[') => {
                let inner = rest.trim_start_matches('[').trim_end_matches(']');
                (base.to_string(), Some(inner.to_string()))
            }
            _ => (id.to_string(), None),
        };
        d.id = Some(key);
        d.array = array;
        let sub = self.get(&f, "submit").ok_or("empty Submit")?;
        let sub_t = parse_datetime(sub).ok_or_else(|| format!("Submit '{sub}' is not a time"))?;
        let state = self
            .get(&f, "state")
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        let start = self.get(&f, "start").and_then(parse_datetime);
        let end = self.get(&f, "end").and_then(parse_datetime);
        if start.is_none() && state == "CANCELLED" {
            return Ok(Rec::Skip);
        }
        d.submit = self.epoch.rel(sub_t)?;
        d.run_time = match (start, end) {
            _ if state == "PENDING" => None,
            (Some(s), Some(e)) if e >= s => Some((e - s) as u64),
            _ => match self.get(&f, "elapsed") {
                Some(e) => Some(
                    gresim_model::slurm_time::parse_elapsed(e)
                        .map_err(|x| format!("Elapsed '{e}': {x}"))?,
                ),
                None => None,
            },
        };
        if let Some(t) = self.get(&f, "timelimit") {
            if !t.eq_ignore_ascii_case("Partition_Limit") {
                gresim_model::slurm_time::parse_time_limit(t)
                    .map_err(|e| format!("Timelimit '{t}': {e}"))?;
                d.time = Some(NumOrStr::Str(t.to_string()));
            }
        }
        let tres = match self
            .get(&f, "reqtres")
            .or_else(|| self.get(&f, "alloctres"))
        {
            Some(s) => parse_tres(s)?,
            None => Tres::default(),
        };
        let num = |name: &str| -> Result<Option<u64>, String> {
            self.get(&f, name)
                .map(|v| {
                    v.parse::<u64>()
                        .map_err(|_| format!("{name} '{v}' is not a count"))
                })
                .transpose()
        };
        let nodes = match tres.node {
            Some(n) => n,
            None => num("nnodes")?.unwrap_or(1),
        };
        let cpus = match tres.cpu {
            Some(c) => c,
            None => num("ncpus")?.unwrap_or(1),
        };
        let ty = tres
            .gpu_type
            .as_deref()
            .and_then(|t| known_type(cluster, t));
        shape(&mut d, nodes, cpus, tres.gpu.unwrap_or(0), ty);
        if let Some(m) = tres.mem {
            d.mem = Some(NumOrStr::Num(m.div_ceil(nodes.max(1)).max(1)));
        }
        d.partition = self
            .get(&f, "partition")
            .and_then(|p| known_partition(cluster, p));
        d.user = self.get(&f, "user").map(str::to_string);
        d.account = self.get(&f, "account").map(str::to_string);
        d.qos = self.get(&f, "qos").map(str::to_string);
        d.name = self.get(&f, "jobname").map(str::to_string);
        if let Some(x) = self.get(&f, "exitcode") {
            let code = x.split(':').next().unwrap_or("0");
            d.exit_code = Some(
                code.parse()
                    .map_err(|_| format!("ExitCode '{x}' is not code:signal"))?,
            );
        }
        Ok(Rec::Job(Box::new(d)))
    }
}

#[cfg(test)]
mod tests;
