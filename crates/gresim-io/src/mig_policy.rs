//! `scheduler.mig_multi_gpu`: what to do with a multi-GPU job on MIG slices.
//!
//! MIG instances cannot join NVLink collectives: there is no peer-to-peer
//! between MIG instances and a CUDA process sees a single MIG device, so a
//! job that holds a MIG instance and any other GPU device (a second slice on
//! the same node, a slice per node on several nodes) cannot run one NCCL
//! group over them. Slurm does not know this and starts such jobs.
//!
//! * `warn` (default, Slurm's behaviour): jobs run; a JSON or script job
//!   whose typed request is certain to be such a job is a load warning, and
//!   every run that holds MIG instances and other devices is flagged in its
//!   record (`mig_multi_gpu`) and by `sim explain`.
//! * `reject`: a job whose typed request is certain to be such a job is
//!   rejected at submission (a REJECTED record with the reason, as a site's
//!   job_submit filter would do); untyped requests (`gpu:2`) may land on
//!   slices only when they start, and are flagged as with `warn`.
//! * `allow`: no load warning and no rejection (records still state the fact).

use std::path::Path;
use std::sync::Arc;

use gresim_model::job::JobSpec;
use gresim_model::mig::{multi_gpu_mig_request, MigMultiRequest};
use gresim_model::Cluster;

use crate::{InputError, Workload};

/// The setting's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigMultiGpu {
    #[default]
    Warn,
    Reject,
    Allow,
}

impl MigMultiGpu {
    pub const NAMES: [&'static str; 3] = ["warn", "reject", "allow"];

    /// `scheduler.mig_multi_gpu`; `None` is `warn`.
    pub fn parse(path: &Path, v: Option<&str>) -> Result<Self, InputError> {
        match v {
            None | Some("warn") => Ok(MigMultiGpu::Warn),
            Some("reject") => Ok(MigMultiGpu::Reject),
            Some("allow") => Ok(MigMultiGpu::Allow),
            Some(o) => Err(InputError::at(
                path,
                "scheduler.mig_multi_gpu",
                format!(
                    "unknown value '{o}'; expected one of {}",
                    Self::NAMES.join(", ")
                ),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MigMultiGpu::Warn => "warn",
            MigMultiGpu::Reject => "reject",
            MigMultiGpu::Allow => "allow",
        }
    }
}

fn what(r: &MigMultiRequest) -> String {
    format!(
        "{} GPU devices including MIG instances ({})",
        r.devices,
        r.mig_types.join(", ")
    )
}

/// The rejection message for a job in `reject` mode, if its typed request is
/// certain to make a multi-GPU job on MIG slices.
pub fn rejection(cluster: &Cluster, spec: &JobSpec) -> Option<String> {
    let r = multi_gpu_mig_request(cluster, &spec.request)?;
    Some(format!(
        "multi-GPU job on MIG slices: it asks for {}, and MIG instances cannot join \
         NVLink/NCCL collectives with each other (scheduler.mig_multi_gpu is \"reject\")",
        what(&r)
    ))
}

/// Sets `reject` on a job that `reject` mode refuses (unless it is already
/// rejected for another reason).
pub fn reject_spec(cluster: &Cluster, spec: &mut JobSpec) {
    if spec.reject().is_none() {
        let r = rejection(cluster, spec);
        spec.set_reject(r);
    }
}

/// At most this many per-job load warnings; the rest are counted.
const MAX_JOB_WARNINGS: usize = 10;

/// Applies the setting to jobs known at load time (inline, JSON trace,
/// scripts): `reject` marks the jobs it refuses, `warn` adds a load warning
/// per such job. Streamed and synthetic workloads are handled per submission
/// ([`crate::Scenario::jobs`]).
pub fn apply(
    path: &Path,
    mode: MigMultiGpu,
    workload: Workload,
    cluster: &Cluster,
    warnings: &mut Vec<String>,
) -> Workload {
    let Workload::Jobs(jobs) = workload else {
        return workload;
    };
    match mode {
        MigMultiGpu::Allow => Workload::Jobs(jobs),
        MigMultiGpu::Warn => {
            let found: Vec<(&JobSpec, MigMultiRequest)> = jobs
                .iter()
                .filter(|s| s.reject().is_none())
                .filter_map(|s| Some((s, multi_gpu_mig_request(cluster, &s.request)?)))
                .collect();
            for (s, r) in found.iter().take(MAX_JOB_WARNINGS) {
                warnings.push(format!(
                    "{}: job '{}' asks for {}: MIG instances cannot join NVLink/NCCL \
                     collectives with each other, so a distributed program on them fails or \
                     crawls; it runs as Slurm would run it (set scheduler.mig_multi_gpu to \
                     \"reject\" to refuse such jobs, \"allow\" to silence this)",
                    path.display(),
                    s.key,
                    what(r)
                ));
            }
            if found.len() > MAX_JOB_WARNINGS {
                warnings.push(format!(
                    "{}: {} more jobs ask for several GPU devices including MIG instances",
                    path.display(),
                    found.len() - MAX_JOB_WARNINGS
                ));
            }
            Workload::Jobs(jobs)
        }
        MigMultiGpu::Reject => {
            if !jobs.iter().any(|s| {
                s.reject().is_none() && multi_gpu_mig_request(cluster, &s.request).is_some()
            }) {
                return Workload::Jobs(jobs);
            }
            let mut v = Arc::unwrap_or_clone(jobs);
            for s in &mut v {
                reject_spec(cluster, s);
            }
            Workload::Jobs(Arc::new(v))
        }
    }
}
