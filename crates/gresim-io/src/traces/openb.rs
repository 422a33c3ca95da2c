//! Alibaba OpenB pod lists (cluster-trace-gpu-v2023, `openb_pod_list_*.csv`).
//!
//! Columns by name: `name` (the key), `cpu_milli`, `memory_mib`, `num_gpu`,
//! `gpu_milli` (required), `gpu_spec`, `creation_time`, `deletion_time`,
//! `scheduled_time` (seconds from the trace start; the `multigpu*` files have
//! no times: every pod is submitted at 0 and runs to its limit).
//!
//! A pod is one task on one node: `⌈cpu_milli/1000⌉` CPUs, `memory_mib` MiB,
//! `num_gpu` GPUs. A GPU-sharing pod (`num_gpu` 1, `gpu_milli` < 1000)
//! takes a whole GPU by default; with the trace option `openb_gpu_milli`
//! `mps` or `shard` it asks for `--gres=mps:N` / `--gres=shard:N` instead,
//! N = ⌈gpu_milli × C / 1000⌉ where C is the per-GPU count of that shared
//! GRES on the first node (in node-table order) that configures it (C = 100
//! for `mps:100` per GPU: N is the percentage). `gpu_spec` (`V100M16|V100M32`)
//! types the request when it names exactly one type the cluster has. Run
//! time = `deletion_time − scheduled_time`; pods never scheduled are skipped
//! (or, with `openb_scheduled_only: false`, run to their limit).

use std::collections::BTreeMap;

use gresim_model::shares::ShareKind;
use gresim_model::{Cluster, NodeId};

use super::{columns, known_type, shape, LineParser, Rec};
use crate::spec::{JobDef, NumOrStr};

/// What a pod with a fraction of a GPU (`gpu_milli` < 1000) asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuMilli {
    /// A whole GPU (`--gpus-per-node=1`).
    #[default]
    Whole,
    /// Its share of one GPU as gres/mps.
    Mps,
    /// Its share of one GPU as gres/shard.
    Shard,
}

impl GpuMilli {
    /// The trace option's values.
    pub const NAMES: &'static [&'static str] = &["whole", "mps", "shard"];

    pub fn from_name(s: &str) -> Option<GpuMilli> {
        match s.to_ascii_lowercase().as_str() {
            "whole" => Some(GpuMilli::Whole),
            "mps" => Some(GpuMilli::Mps),
            "shard" => Some(GpuMilli::Shard),
            _ => None,
        }
    }

    fn kind(self) -> Option<ShareKind> {
        match self {
            GpuMilli::Whole => None,
            GpuMilli::Mps => Some(ShareKind::Mps),
            GpuMilli::Shard => Some(ShareKind::Shard),
        }
    }
}

/// The shares a pod of `milli` thousandths of a GPU asks for, on GPUs of
/// `per_gpu` shares: ⌈milli × per_gpu / 1000⌉, at least 1.
pub fn shares_for_milli(milli: u64, per_gpu: u32) -> u64 {
    (milli * u64::from(per_gpu)).div_ceil(1000).max(1)
}

#[derive(Debug)]
pub(crate) struct OpenB {
    cols: BTreeMap<String, usize>,
    width: usize,
    scheduled_only: bool,
    milli: GpuMilli,
    /// The per-GPU count of the shared GRES, once looked up.
    per_gpu: std::cell::Cell<Option<u32>>,
}

impl OpenB {
    pub(crate) fn new(scheduled_only: bool, milli: GpuMilli) -> Self {
        OpenB {
            cols: BTreeMap::new(),
            width: 0,
            scheduled_only,
            milli,
            per_gpu: std::cell::Cell::new(None),
        }
    }

    /// The per-GPU count of `kind` on the first node that has some.
    fn per_gpu(&self, cluster: &Cluster, kind: ShareKind) -> Result<u32, String> {
        if let Some(c) = self.per_gpu.get() {
            return Ok(c);
        }
        let c = (0..cluster.nodes.len())
            .filter_map(|i| cluster.node_shares(NodeId::from_idx(i)))
            .filter(|s| s.kind == kind)
            .find_map(|s| s.per_gpu.iter().copied().find(|&c| c > 0))
            .ok_or_else(|| {
                format!(
                    "trace option openb_gpu_milli is '{kind}' but no node configures gres/{kind}"
                )
            })?;
        self.per_gpu.set(Some(c));
        Ok(c)
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
        let milli = num("gpu_milli")?.unwrap_or(0);
        match self.milli.kind() {
            Some(kind) if gpus == 1 && milli > 0 && milli < 1000 => {
                let n = shares_for_milli(milli, self.per_gpu(cluster, kind)?);
                shape(&mut d, 1, cpus, 0, None);
                d.gres = Some(format!("{kind}:{n}"));
            }
            _ => shape(&mut d, 1, cpus, gpus, ty),
        }
        if let Some(m) = num("memory_mib")?.filter(|&m| m > 0) {
            d.mem = Some(NumOrStr::Num(m));
        }
        // Kubernetes' QoS class (LS, BE, Guaranteed …) as the job's QOS:
        // with accounting, a QOS of that name must exist.
        d.qos = get("qos").map(str::to_string);
        Ok(Rec::Job(Box::new(d)))
    }
}
