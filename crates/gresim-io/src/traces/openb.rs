//! Alibaba OpenB pod lists (cluster-trace-gpu-v2023, `openb_pod_list_*.csv`).
//!
//! Columns by name: `name` (the key), `cpu_milli`, `memory_mib`, `num_gpu`,
//! `gpu_milli` (required), `gpu_spec`, `creation_time`, `deletion_time`,
//! `scheduled_time` (seconds from the trace start; the `multigpu*` files have
//! no times: every pod is submitted at 0 and runs to its limit).
//!
//! A pod is one task on one node: `⌈cpu_milli/1000⌉` CPUs, `memory_mib` MiB,
//! `num_gpu` GPUs. gresim has no fractional GPUs: a GPU-sharing pod
//! (`gpu_milli` < 1000) takes a whole GPU. `gpu_spec` (`V100M16|V100M32`)
//! types the request when it names exactly one type the cluster has. Run
//! time = `deletion_time − scheduled_time`; pods never scheduled are skipped
//! (or, with `openb_scheduled_only: false`, run to their limit).

use std::collections::BTreeMap;

use gresim_model::Cluster;

use super::{columns, known_type, shape, LineParser, Rec};
use crate::spec::{JobDef, NumOrStr};

#[derive(Debug)]
pub(crate) struct OpenB {
    cols: BTreeMap<String, usize>,
    width: usize,
    scheduled_only: bool,
}

impl OpenB {
    pub(crate) fn new(scheduled_only: bool) -> Self {
        OpenB {
            cols: BTreeMap::new(),
            width: 0,
            scheduled_only,
        }
    }
}

impl LineParser for OpenB {
    fn header(&mut self, line: &str) -> Result<bool, String> {
        let h: Vec<&str> = line.split(',').collect();
        self.cols = columns(&h);
        self.width = h.len();
        for need in ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"] {
            if !self.cols.contains_key(need) {
                return Err(format!(
                    "the OpenB header has no {need} column; expected name,cpu_milli,memory_mib,num_gpu,gpu_milli,…"
                ));
            }
        }
        Ok(true)
    }

    fn record(&mut self, line: &str, cluster: &Cluster) -> Result<Rec, String> {
        let f = super::csv_fields(line, self.width)?;
        let get = |n: &str| super::csv_get(&self.cols, &f, n);
        let num = |n: &str| super::csv_num(&self.cols, &f, n);
        let name = get("name").ok_or("empty name")?;
        let created = num("creation_time")?;
        let scheduled = num("scheduled_time")?;
        let deleted = num("deletion_time")?;
        let has_times = self.cols.contains_key("creation_time");
        if has_times && scheduled.is_none() && self.scheduled_only {
            return Ok(Rec::Skip);
        }
        let mut d = JobDef {
            id: Some(name.to_string()),
            submit: created.unwrap_or(0),
            run_time: match (scheduled, deleted) {
                (Some(s), Some(e)) if e >= s => Some(e - s),
                _ => None,
            },
            ..JobDef::default()
        };
        let cpus = num("cpu_milli")?.unwrap_or(0).div_ceil(1000);
        let gpus = num("num_gpu")?.unwrap_or(0);
        let ty = get("gpu_spec")
            .filter(|s| !s.contains('|'))
            .and_then(|s| known_type(cluster, s));
        shape(&mut d, 1, cpus, gpus, ty);
        if let Some(m) = num("memory_mib")?.filter(|&m| m > 0) {
            d.mem = Some(NumOrStr::Num(m));
        }
        Ok(Rec::Job(Box::new(d)))
    }
}
