//! `sim env`'s allocation: a parsed batch script built against the cluster
//! and allocated on the idle cluster exactly as the scheduler would
//! ([`gresim_sched::select::select`] on a fresh [`ClusterState`]), then
//! rendered by [`gresim_slurm::taskenv::describe`] into what each task sees.

use std::collections::BTreeMap;

use gresim_model::hostlist;
use gresim_model::{Cluster, ClusterState, PartId};
use gresim_sched::select::{select, SelectCache, SelectFail};
use gresim_sched::SchedParams;
use gresim_slurm::sbatch::{self, SbatchScript};
use gresim_slurm::taskenv::{describe, EnvOptions, JobEnv, JobFacts, Launcher};

use crate::build;
use crate::error::InputError;
use crate::spec::JobDef;

/// Builds the script's job against `cluster`, allocates it on the idle
/// cluster as the scheduler would, and describes every task.
pub fn job_env(
    cluster: &Cluster,
    params: &SchedParams,
    script: &SbatchScript,
    opts: &EnvOptions,
) -> Result<JobEnv, InputError> {
    let mut job = script.job.clone();
    let mut notes = Vec::new();
    if let Some((unified, ty)) = gresim_slurm::lint::unify_gpu_types(script) {
        notes.push(format!(
            "sbatch refuses this request as written (typed and untyped GPU options: 'Invalid GRES specification (with and without type identification)'); shown with type '{ty}' on every GPU option, see `sim lint`"
        ));
        job = unified;
    }
    let mut def = JobDef::from(job);
    // Dependencies name other submissions; the environment does not depend on them.
    def.dependency = None;
    let spec = build::build_job(
        &script.path,
        "job",
        &def,
        "job".into(),
        cluster,
        &BTreeMap::new(),
        &[],
    )
    .map_err(|e| sbatch::relocate(e, script))?;
    let req = &spec.request;
    let part: PartId = match req.partitions.first() {
        Some(p) => *p,
        None => cluster.default_partition().ok_or_else(|| {
            InputError::new(
                &script.path,
                "the job names no partition and the cluster has no default partition",
            )
        })?,
    };
    let pname = cluster.partition(part).name.clone();
    let state = ClusterState::new(cluster);
    let mut cache = SelectCache::new();
    let alloc = select(&mut cache, cluster, params, &state, req, part, None).map_err(|f| {
        let why = match f {
            SelectFail::Never => {
                "it can never run there (sbatch: Requested node configuration is not available)"
                    .to_string()
            }
            SelectFail::Busy => "the resources are busy".to_string(),
            SelectFail::Unavailable(n) => format!(
                "it needs nodes that are down or drained: {}",
                hostlist::compress(&cluster.node_names(&n))
            ),
        };
        InputError::new(
            &script.path,
            format!("the job does not fit partition '{pname}' of the idle cluster: {why}"),
        )
    })?;
    let echoes: Vec<(String, String)> = [
        ("gpus", "SLURM_GPUS"),
        ("gpus-per-node", "SLURM_GPUS_PER_NODE"),
        ("gpus-per-task", "SLURM_GPUS_PER_TASK"),
        ("cpus-per-gpu", "SLURM_CPUS_PER_GPU"),
        ("mem-per-gpu", "SLURM_MEM_PER_GPU"),
    ]
    .iter()
    .filter_map(|(o, var)| {
        let v = script.option(o)?.value.clone()?;
        Some((var.to_string(), v))
    })
    .collect();
    let facts = JobFacts {
        name: def.name.as_deref().unwrap_or(
            script
                .path
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or("sbatch"),
        ),
        partition: &pname,
        array: spec.array(),
        gpu_bind: script.gpu_bind(),
        output: def.output.as_deref(),
        error: def.error.as_deref(),
        echoes,
    };
    let launcher = opts.launcher.unwrap_or_else(|| Launcher::detect(script));
    let mut env = describe(cluster, req, &alloc, &facts, opts, launcher)
        .map_err(|e| InputError::new(&script.path, e))?;
    notes.append(&mut env.notes);
    env.notes = notes;
    Ok(env)
}
