//! The Helios (SC'21) and Acme (NSDI'24) job-log schema, CSV with a header.
//!
//! Helios `cluster_log.csv`: `job_id,user,vc,gpu_num,cpu_num,node_num,state,
//! submit_time,start_time,end_time,duration,queue`; Acme adds `type`,
//! `gpu_time` and (Kalos) memory columns, and has no `vc`. Columns are found
//! by name; `job_id` and `submit_time` are required.
//!
//! Times are `YYYY-MM-DD HH:MM:SS` (an offset such as `+08:00` is applied)
//! or Unix seconds; submit times become seconds after the first row's.
//! Run time = `duration`, else `end_time − start_time`; a job without a start
//! that was CANCELLED is skipped. `vc` is the partition when the cluster has
//! one of that name. The logs carry no time limit: jobs get the partition's.

use std::collections::BTreeMap;

use gresim_model::Cluster;

use super::{columns, known_partition, parse_datetime, shape, Epoch, LineParser, Rec};
use crate::spec::JobDef;

#[derive(Debug, Default)]
pub(crate) struct Helios {
    cols: BTreeMap<String, usize>,
    width: usize,
    epoch: Epoch,
}

impl LineParser for Helios {
    fn header(&mut self, line: &str) -> Result<bool, String> {
        let h: Vec<&str> = line.split(',').collect();
        self.cols = columns(&h);
        self.width = h.len();
        for need in ["job_id", "submit_time"] {
            if !self.cols.contains_key(need) {
                return Err(format!(
                    "the Helios/Acme header has no {need} column; expected job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,…"
                ));
            }
        }
        Ok(true)
    }

    fn record(&mut self, line: &str, cluster: &Cluster) -> Result<Rec, String> {
        let f = super::csv_fields(line, self.width)?;
        let get = |n: &str| super::csv_get(&self.cols, &f, n);
        let num = |n: &str| super::csv_num(&self.cols, &f, n);
        let id = get("job_id").ok_or("empty job_id")?;
        let sub = get("submit_time").ok_or("empty submit_time")?;
        let sub_t =
            parse_datetime(sub).ok_or_else(|| format!("submit_time '{sub}' is not a time"))?;
        let state = get("state").unwrap_or("").to_ascii_uppercase();
        let start = get("start_time").and_then(parse_datetime);
        let end = get("end_time").and_then(parse_datetime);
        if start.is_none() && state.starts_with("CANCELLED") {
            return Ok(Rec::Skip);
        }
        let mut d = JobDef {
            id: Some(id.to_string()),
            submit: self.epoch.rel(sub_t)?,
            user: get("user").map(str::to_string),
            ..JobDef::default()
        };
        d.run_time = match num("duration")? {
            Some(x) => Some(x),
            None => match (start, end) {
                (Some(s), Some(e)) if e >= s => Some((e - s) as u64),
                _ => None,
            },
        };
        if matches!(state.as_str(), "FAILED" | "NODE_FAIL") {
            d.exit_code = Some(1);
        }
        let nodes = num("node_num")?.unwrap_or(1);
        let cpus = num("cpu_num")?.unwrap_or(1);
        shape(&mut d, nodes, cpus, num("gpu_num")?.unwrap_or(0), None);
        d.partition = get("vc").and_then(|p| known_partition(cluster, p));
        Ok(Rec::Job(Box::new(d)))
    }
}
