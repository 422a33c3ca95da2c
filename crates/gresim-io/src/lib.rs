//! gresim's inputs.
//!
//! [`load_scenario`] reads a JSON scenario (schema version 1, documented in
//! docs/scenario-format.md), checks every field, and resolves it into the
//! model: a [`gresim_model::Cluster`], scheduler settings, a workload and
//! timed events. Errors name the file, the JSON path and what was expected.

pub mod build;
pub mod conformance;
pub mod error;
pub mod slurm_opts;
pub mod spec;
pub mod synth;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gresim_engine::{JobSource, SimInput, TimedAction};
use gresim_model::job::{JobSpec, Time};
use gresim_model::Cluster;
use gresim_sched::SchedParams;

pub use error::InputError;
use spec::{JobDef, ScenarioDef};

/// The schema version this build reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Where the jobs come from.
#[derive(Debug, Clone)]
pub enum Workload {
    /// Inline or trace jobs, sorted by submit time.
    Jobs(Arc<Vec<JobSpec>>),
    /// A seeded generator.
    Synthetic(Box<synth::Synthetic>),
}

/// A loaded, validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub path: PathBuf,
    pub name: String,
    pub description: Option<String>,
    pub seed: u64,
    pub cluster: Cluster,
    pub params: SchedParams,
    pub policy: String,
    pub workload: Workload,
    pub actions: Vec<TimedAction>,
    pub horizon: Option<Time>,
    pub out_dir: Option<PathBuf>,
    /// The scenario file as read, for echoing in reports.
    pub source: String,
}

impl Scenario {
    /// The job stream for a run with `seed`.
    pub fn jobs(&self, seed: u64) -> JobSource<'_> {
        match &self.workload {
            Workload::Jobs(v) => Box::new(v.iter().cloned().map(Ok)),
            Workload::Synthetic(s) => Box::new(s.stream(seed)),
        }
    }

    /// Everything the engine needs, for `seed`.
    pub fn sim_input(&self, seed: u64) -> SimInput<'_> {
        SimInput {
            cluster: self.cluster.clone(),
            params: self.params.clone(),
            jobs: self.jobs(seed),
            actions: self.actions.clone(),
            horizon: self.horizon,
            record_reasons: false,
        }
    }
}

/// Reads and checks a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the scenario: {e}")))?;
    parse_scenario(path, &text)
}

/// Parses scenario text; `path` names it in errors and anchors relative paths.
pub fn parse_scenario(path: &Path, text: &str) -> Result<Scenario, InputError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let def: ScenarioDef =
        serde_path_to_error::deserialize(de).map_err(|e| error::from_json(path, e))?;
    if def.schema_version != SCHEMA_VERSION {
        return Err(InputError::at(
            path,
            "schema_version",
            format!(
                "unsupported schema_version {}; this gresim reads version {SCHEMA_VERSION}",
                def.schema_version
            ),
        ));
    }
    let cluster = build::build_cluster(path, &def.cluster, &def.partitions)?;
    let params = sched_params(path, &def)?;
    let policy = def
        .scheduler
        .policy
        .clone()
        .unwrap_or_else(|| "slurm".to_string());
    if gresim_sched::policy_by_name(&policy).is_none() {
        return Err(InputError::at(
            path,
            "scheduler.policy",
            format!(
                "unknown policy '{policy}'; expected one of {}",
                gresim_sched::POLICY_NAMES.join(", ")
            ),
        ));
    }
    let w = &def.workload;
    let given = [w.jobs.is_some(), w.trace.is_some(), w.synthetic.is_some()];
    if given.iter().filter(|x| **x).count() != 1 {
        return Err(InputError::at(
            path,
            "workload",
            "expected exactly one of jobs, trace or synthetic",
        ));
    }
    let workload = if let Some(jobs) = &w.jobs {
        Workload::Jobs(Arc::new(build::build_jobs(
            path,
            "workload.jobs",
            jobs,
            &cluster,
        )?))
    } else if let Some(t) = &w.trace {
        let tp = path.parent().unwrap_or(Path::new(".")).join(t);
        let defs = read_trace(&tp)?;
        Workload::Jobs(Arc::new(build::build_jobs(&tp, "jobs", &defs, &cluster)?))
    } else if let Some(s) = &w.synthetic {
        Workload::Synthetic(Box::new(synth::Synthetic::new(path, s, &cluster)?))
    } else {
        unreachable!("checked above that exactly one workload kind is given")
    };
    let keys: BTreeMap<String, u32> = match &workload {
        Workload::Jobs(v) => v
            .iter()
            .enumerate()
            .map(|(i, j)| (j.key.clone(), i as u32))
            .collect(),
        // Synthetic jobs are named syn1, syn2, …: resolved below without a table.
        Workload::Synthetic(_) => BTreeMap::new(),
    };
    let synth_jobs = match &workload {
        Workload::Synthetic(s) => s.jobs,
        Workload::Jobs(_) => 0,
    };
    let key_of = |k: &str| -> Option<u32> {
        keys.get(k).copied().or_else(|| {
            let n: u64 = k.strip_prefix("syn")?.parse().ok()?;
            (n >= 1 && n <= synth_jobs).then(|| (n - 1) as u32)
        })
    };
    let actions = build::build_actions(path, &def.events, &cluster, &key_of)?;
    Ok(Scenario {
        path: path.to_path_buf(),
        name: def.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned())
        }),
        description: def.description.clone(),
        seed: def.seed.unwrap_or(1),
        cluster,
        params,
        policy,
        workload,
        actions,
        horizon: def.horizon,
        out_dir: def.outputs.dir.as_ref().map(PathBuf::from),
        source: text.to_string(),
    })
}

fn sched_params(path: &Path, def: &ScenarioDef) -> Result<SchedParams, InputError> {
    let s = &def.scheduler;
    let d = SchedParams::default();
    let positive = |v: Option<u64>, field: &str, dflt: u64| -> Result<u64, InputError> {
        match v {
            Some(0) => Err(InputError::at(
                path,
                format!("scheduler.{field}"),
                "expected at least 1 second",
            )),
            Some(x) => Ok(x),
            None => Ok(dflt),
        }
    };
    let def_mem_per_cpu = s
        .def_mem_per_cpu
        .as_ref()
        .map(|v| {
            build::mem_value(v).map_err(|e| InputError::at(path, "scheduler.def_mem_per_cpu", e))
        })
        .transpose()?;
    Ok(SchedParams {
        sched_interval: positive(s.sched_interval, "sched_interval", d.sched_interval)?,
        bf_interval: positive(s.bf_interval, "bf_interval", d.bf_interval)?,
        pass_on_submit: s.pass_on_submit.unwrap_or(d.pass_on_submit),
        pass_on_end: s.pass_on_end.unwrap_or(d.pass_on_end),
        timelimit_check_interval: s
            .timelimit_check_interval
            .unwrap_or(d.timelimit_check_interval),
        ctld_phase: d.ctld_phase,
        def_mem_per_cpu,
        job_requeue: s.job_requeue.unwrap_or(d.job_requeue),
        cred_expire: s.cred_expire.unwrap_or(d.cred_expire),
        bf_window: s.bf_window.map_or(d.bf_window, |m| m * 60),
        bf_resolution: positive(s.bf_resolution, "bf_resolution", d.bf_resolution)?,
        bf_max_job_test: s.bf_max_job_test.unwrap_or(d.bf_max_job_test),
        kill_invalid_depend: s.kill_invalid_depend.unwrap_or(d.kill_invalid_depend),
        priority: priority_config(path, s)?,
    })
}

fn priority_config(
    path: &Path,
    s: &spec::SchedulerDef,
) -> Result<gresim_sched::priority::PriorityConfig, InputError> {
    use gresim_sched::priority::{Multifactor, PriorityConfig};
    let kind = s
        .priority_type
        .as_deref()
        .map(|t| t.trim_start_matches("priority/"));
    match (kind, &s.priority_weights) {
        (None | Some("basic"), None) => Ok(PriorityConfig::Basic),
        (None | Some("basic"), Some(_)) => Err(InputError::at(
            path,
            "scheduler.priority_weights",
            "priority weights need \"priority_type\": \"multifactor\"",
        )),
        (Some("multifactor"), w) => {
            let w = w.clone().unwrap_or_default();
            let mut m = Multifactor::new();
            m.weight_age = w.age;
            m.weight_job_size = w.job_size;
            m.weight_partition = w.partition;
            m.weight_fairshare = w.fairshare;
            m.weight_qos = w.qos;
            m.weight_tres_cpu = w.tres_cpu;
            m.weight_tres_mem = w.tres_mem;
            m.weight_tres_gpu = w.tres_gpu;
            m.favor_small = w.favor_small;
            if let Some(a) = w.max_age {
                m.max_age = a;
            }
            Ok(PriorityConfig::Multifactor(m))
        }
        (Some(other), _) => Err(InputError::at(
            path,
            "scheduler.priority_type",
            format!("unknown priority type '{other}'; expected basic or multifactor"),
        )),
    }
}

/// Reads a job trace: a JSON array of jobs, or JSON Lines (one job per line).
pub fn read_trace(path: &Path) -> Result<Vec<JobDef>, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the trace: {e}")))?;
    if text.trim_start().starts_with('[') {
        let de = &mut serde_json::Deserializer::from_str(&text);
        return serde_path_to_error::deserialize(de).map_err(|e| error::from_json(path, e));
    }
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let de = &mut serde_json::Deserializer::from_str(line);
        let d: JobDef = serde_path_to_error::deserialize(de).map_err(|e| {
            let mut err = error::from_json(path, e);
            err.line = Some((i + 1, err.line.map_or(0, |l| l.1)));
            err
        })?;
        out.push(d);
    }
    Ok(out)
}
