//! gresim's inputs.
//!
//! [`load_scenario`] reads a JSON scenario (schema version 1, documented in
//! docs/scenario-format.md), checks every field, and resolves it into the
//! model: a [`gresim_model::Cluster`], scheduler settings, a workload and
//! timed events. Errors name the file, the JSON path and what was expected.
//!
//! Slurm's own formats (slurm.conf, gres.conf, topology.conf, sacctmgr,
//! `#SBATCH` scripts, the linter, the task environment) are read by
//! `gresim-slurm`; the modules here that share their names hold what needs
//! the scenario or the scheduler: [`slurmconf`] (scheduler settings and
//! [`slurmconf::load`]), [`sacctmgr`] (the scenario's `accounting`),
//! [`taskenv`] (the allocation `sim env` renders).

pub mod build;
pub mod compose;
pub mod error;
pub mod failures;
#[doc(hidden)]
pub mod fuzzing;
pub mod mig_policy;
pub mod resv;
pub mod sacctmgr;
mod shares_conf;
pub mod slurmconf;
pub mod spec;
pub mod swf_gen;
pub mod synth;
pub mod taskenv;
pub mod topo_build;
pub mod traces;
pub mod variants;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gresim_engine::{JobSource, SimInput, TimedAction};
use gresim_model::job::{JobSpec, Time};
use gresim_model::Cluster;
use gresim_sched::{PolicyKind, SchedParams};

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
    /// A trace streamed from its file on every run (sacct, SWF, OpenB, Helios).
    Trace {
        path: PathBuf,
        format: traces::TraceFormat,
        options: traces::TraceOptions,
    },
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
    pub policy: PolicyKind,
    pub workload: Workload,
    pub actions: Vec<TimedAction>,
    /// Random node failures (`failures`).
    pub failures: Option<failures::FailureModel>,
    pub horizon: Option<Time>,
    /// Stop once no job runs and nothing has changed for this long (the
    /// conformance harness's `--stall`; `None` for scenarios).
    pub stall: Option<Time>,
    pub out_dir: Option<PathBuf>,
    /// The scenario file as read, for echoing in reports.
    pub source: String,
    /// Remarks about the inputs (unknown slurm.conf keys, settings not
    /// modelled), each `file:line: message`.
    pub warnings: Vec<String>,
    /// `scheduler.mig_multi_gpu`.
    pub mig_multi_gpu: mig_policy::MigMultiGpu,
    /// Advance reservations in force from the start (`reservations`).
    pub reservations: gresim_model::reservation::Reservations,
    /// The first JSON or script job slurmctld would refuse at submission,
    /// when `workload.impossible` is `error` (the default). Commands that
    /// simulate refuse such a scenario ([`load_runnable_scenario`]); `sim
    /// lint` and `sim env` still read it.
    pub impossible: Option<InputError>,
}

impl Scenario {
    /// The job stream for a run with `seed`.
    pub fn jobs(&self, seed: u64) -> JobSource<'_> {
        match &self.workload {
            Workload::Jobs(v) => Box::new(v.iter().cloned().map(Ok)),
            // Jobs known at load time were checked then (mig_policy::apply).
            Workload::Synthetic(_) | Workload::Trace { .. }
                if self.mig_multi_gpu == mig_policy::MigMultiGpu::Reject =>
            {
                let cluster = &self.cluster;
                Box::new(self.stream(seed).map(move |r| {
                    r.map(|mut s| {
                        mig_policy::reject_spec(cluster, &mut s);
                        s
                    })
                }))
            }
            _ => self.stream(seed),
        }
    }

    /// The generated or streamed jobs, as the source gives them, each under
    /// its user's default account and QOS when the cluster has accounting.
    fn stream(&self, seed: u64) -> JobSource<'_> {
        let src = self.stream_raw(seed);
        if self.cluster.accounting().is_none() || matches!(self.workload, Workload::Jobs(_)) {
            return src;
        }
        let cluster = &self.cluster;
        Box::new(src.map(move |r| {
            r.map(|mut s| {
                if s.acct().is_none() && s.reject().is_none() {
                    build::apply_accounting(&mut s, cluster, None, None);
                }
                s
            })
        }))
    }

    fn stream_raw(&self, seed: u64) -> JobSource<'_> {
        match &self.workload {
            Workload::Jobs(v) => Box::new(v.iter().cloned().map(Ok)),
            Workload::Synthetic(s) => Box::new(s.stream(seed)),
            Workload::Trace {
                path,
                format,
                options,
            } => match traces::open(path, *format, options, &self.cluster) {
                Ok(src) => src,
                Err(e) => Box::new(std::iter::once(Err(gresim_engine::SourceError(
                    e.to_string(),
                )))),
            },
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
            stall: self.stall,
            record_reasons: false,
            failures: self
                .failures
                .as_ref()
                .map(|m| Box::new(m.stream(seed)) as gresim_engine::FailureSource<'_>),
            reservations: self.reservations.clone(),
        }
    }
}

/// Reads and checks a scenario file.
pub fn load_scenario(path: &Path) -> Result<Scenario, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the scenario: {e}")))?;
    parse_scenario(path, &text)
}

/// Reads a scenario to simulate: as [`load_scenario`], and refused when a job
/// in it could never run (see [`Scenario::impossible`]).
pub fn load_runnable_scenario(path: &Path) -> Result<Scenario, InputError> {
    let s = load_scenario(path)?;
    match s.impossible {
        Some(e) => Err(e),
        None => Ok(s),
    }
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
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut warnings: Vec<String> = Vec::new();
    // AccountingStorageEnforce and AccountingStorageTRES of a site's slurm.conf.
    let mut conf_acct: Option<spec::AccountingDef> = None;
    let (cluster, base, conf_policy) = match (&def.cluster.nodes, &def.cluster.slurm_conf) {
        (Some(_), None) => {
            if def.cluster.gres_conf.is_some() {
                return Err(InputError::at(
                    path,
                    "cluster.gres_conf",
                    "gres_conf goes with slurm_conf; inline nodes describe their GPUs themselves",
                ));
            }
            (
                build::build_cluster(path, &def.cluster, &def.partitions)?,
                SchedParams::default(),
                None,
            )
        }
        (None, Some(sc)) => {
            if !def.cluster.node_templates.is_empty() {
                return Err(InputError::at(
                    path,
                    "cluster.node_templates",
                    "node templates apply to inline nodes, not to slurm_conf",
                ));
            }
            let gp = def.cluster.gres_conf.as_ref().map(|g| dir.join(g));
            let l = slurmconf::load(&dir.join(sc), gp.as_deref())?;
            warnings.extend(l.warnings.iter().map(ToString::to_string));
            // What slurm.conf says about accounting, for an `accounting`
            // section that does not say it itself.
            conf_acct = Some(spec::AccountingDef {
                enforce: l.conf.accounting_storage_enforce.clone(),
                tres: l.conf.accounting_storage_tres.clone(),
                partition_qos: l
                    .conf
                    .partitions
                    .iter()
                    .filter_map(|p| Some((p.name.clone(), p.qos.clone()?)))
                    .collect(),
                tres_billing_weights: l
                    .conf
                    .partitions
                    .iter()
                    .filter_map(|p| Some((p.name.clone(), p.tres_billing_weights.clone()?)))
                    .collect(),
                max_tres: l
                    .conf
                    .priority_flags
                    .as_deref()
                    .is_some_and(|f| f.to_ascii_uppercase().contains("MAX_TRES")),
                ..Default::default()
            });
            let mut cluster = l.cluster;
            if !def.partitions.is_empty() {
                let parts = build::build_partitions(path, &cluster.nodes, &def.partitions)?;
                let (tree, plugin) = (cluster.switches().cloned(), cluster.topology_plugin());
                cluster = Cluster::new(cluster.nodes, parts, cluster.gpu_types);
                cluster.set_switches(tree, plugin);
            }
            topo_build::apply_fabric(path, &def.cluster, &mut cluster)?;
            (cluster, l.params, Some(l.policy))
        }
        _ => {
            return Err(InputError::at(
                path,
                "cluster",
                "expected exactly one of nodes or slurm_conf",
            ))
        }
    };
    let mut cluster = cluster;
    topo_build::apply_topology(path, &def.cluster, &mut cluster, &mut warnings)?;
    if let Some(a) = &def.accounting {
        let mut a = a.clone();
        if let Some(c) = conf_acct {
            a.enforce = a.enforce.or(c.enforce);
            a.tres = a.tres.or(c.tres);
            for (p, q) in c.partition_qos {
                a.partition_qos.entry(p).or_insert(q);
            }
            for (p, w) in c.tres_billing_weights {
                a.tres_billing_weights.entry(p).or_insert(w);
            }
            a.max_tres |= c.max_tres;
        }
        cluster.set_accounting(Some(sacctmgr::build(path, &a, &cluster)?));
    }
    warnings.extend(build::mig_layout_warnings(path, &cluster));
    let params = sched_params(path, &def, &base)?;
    let policy: PolicyKind = def
        .scheduler
        .policy
        .as_deref()
        .or(conf_policy)
        .unwrap_or("slurm")
        .parse()
        .map_err(|e: gresim_sched::UnknownPolicy| {
            InputError::at(path, "scheduler.policy", e.to_string())
        })?;
    let w = &def.workload;
    let given = [
        w.jobs.is_some(),
        w.trace.is_some(),
        w.synthetic.is_some(),
        w.scripts.is_some(),
    ];
    if given.iter().filter(|x| **x).count() != 1 {
        return Err(InputError::at(
            path,
            "workload",
            "expected exactly one of jobs, trace, synthetic or scripts",
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
        let tp = dir.join(t);
        let format = match &w.format {
            None => traces::TraceFormat::Json,
            Some(f) => traces::TraceFormat::from_name(f).ok_or_else(|| {
                InputError::at(
                    path,
                    "workload.format",
                    format!(
                        "unknown trace format '{f}'; expected one of {}",
                        traces::TraceFormat::NAMES.join(", ")
                    ),
                )
            })?,
        };
        let o = w.trace_options.clone().unwrap_or_default();
        let options = traces::TraceOptions {
            swf_gpus_per_node: o.swf_gpus_per_node,
            openb_scheduled_only: o.openb_scheduled_only.unwrap_or(true),
            openb_gpu_milli: match o.openb_gpu_milli.as_deref() {
                None => traces::openb::GpuMilli::Whole,
                Some(v) => traces::openb::GpuMilli::from_name(v).ok_or_else(|| {
                    InputError::at(
                        path,
                        "workload.trace_options.openb_gpu_milli",
                        format!(
                            "unknown value '{v}'; expected one of {}",
                            traces::openb::GpuMilli::NAMES.join(", ")
                        ),
                    )
                })?,
            },
            batsim_ticks_per_second: o.batsim_ticks_per_second.unwrap_or(1),
        };
        if options.batsim_ticks_per_second == 0 {
            return Err(InputError::at(
                path,
                "workload.trace_options.batsim_ticks_per_second",
                "expected at least 1",
            ));
        }
        if format == traces::TraceFormat::Json {
            let defs = read_trace(&tp)?;
            Workload::Jobs(Arc::new(build::build_jobs(&tp, "jobs", &defs, &cluster)?))
        } else if format == traces::TraceFormat::Batsim {
            let specs = traces::batsim::read(&tp, &cluster, options.batsim_ticks_per_second)?;
            Workload::Jobs(Arc::new(specs))
        } else {
            traces::check(&tp, format, &options)?;
            Workload::Trace {
                path: tp,
                format,
                options,
            }
        }
    } else if let Some(s) = &w.synthetic {
        Workload::Synthetic(Box::new(synth::Synthetic::new(path, s, &cluster)?))
    } else if let Some(scripts) = &w.scripts {
        Workload::Jobs(Arc::new(build_scripts(path, scripts, &cluster)?))
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
        // Streamed traces are not read ahead: events cannot name their jobs.
        Workload::Synthetic(_) | Workload::Trace { .. } => BTreeMap::new(),
    };
    let synth_jobs = match &workload {
        Workload::Synthetic(s) => s.jobs,
        Workload::Jobs(_) | Workload::Trace { .. } => 0,
    };
    let key_of = |k: &str| -> Option<u32> {
        keys.get(k).copied().or_else(|| {
            let n: u64 = k.strip_prefix("syn")?.parse().ok()?;
            (n >= 1 && n <= synth_jobs).then(|| (n - 1) as u32)
        })
    };
    let actions = build::build_actions(path, &def.events, &cluster, &key_of)?;
    let reservations = resv::build_reservations(path, &def.reservations, &cluster)?;
    let failures = def
        .failures
        .as_ref()
        .map(|f| failures::build(path, f, &cluster))
        .transpose()?;
    let workload = apply_behavior_settings(path, w, workload)?;
    let impossible = check_impossible(path, w, &workload, &cluster, &params)?;
    let mig_multi_gpu =
        mig_policy::MigMultiGpu::parse(path, def.scheduler.mig_multi_gpu.as_deref())?;
    let workload = mig_policy::apply(path, mig_multi_gpu, workload, &cluster, &mut warnings);
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
        failures,
        horizon: def.horizon,
        stall: None,
        out_dir: def.outputs.dir.as_ref().map(PathBuf::from),
        source: text.to_string(),
        warnings,
        mig_multi_gpu,
        impossible,
        reservations,
    })
}

/// `workload.impossible`: unless it is `reject`, the error for the first
/// JSON or script job that slurmctld would refuse at submission, naming the
/// job and Slurm's message. Streamed and synthetic workloads keep Slurm's
/// per-submission refusal (a REJECTED record). `Err` for a bad setting.
fn check_impossible(
    path: &Path,
    w: &spec::WorkloadDef,
    workload: &Workload,
    cluster: &Cluster,
    params: &SchedParams,
) -> Result<Option<InputError>, InputError> {
    match w.impossible.as_deref() {
        None | Some("error") => {}
        Some("reject") => return Ok(None),
        Some(other) => {
            return Err(InputError::at(
                path,
                "workload.impossible",
                format!("expected \"error\" or \"reject\", got \"{other}\""),
            ))
        }
    }
    let Workload::Jobs(specs) = workload else {
        return Ok(None);
    };
    // The JSON path of each submission, by its key (specs are sorted by submit).
    let (what, ids): (&str, Vec<Option<&String>>) = if let Some(j) = &w.jobs {
        ("workload.jobs", j.iter().map(|d| d.id.as_ref()).collect())
    } else if let Some(s) = &w.scripts {
        (
            "workload.scripts",
            s.iter().map(|d| d.id.as_ref()).collect(),
        )
    } else {
        ("jobs", Vec::new())
    };
    let where_is = |key: &str| -> String {
        let i = ids.iter().enumerate().position(|(i, id)| match id {
            Some(id) => id.as_str() == key,
            None => key == format!("job{}", i + 1),
        });
        match i {
            Some(i) => format!("{what}[{i}]"),
            None => format!("{what} (job '{key}')"),
        }
    };
    // Node selection's caches, for this cluster only.
    let mut cache = gresim_sched::select::SelectCache::new();
    for spec in specs.iter() {
        let msg = spec.reject().map(str::to_string).or_else(|| {
            gresim_sched::admission::submission_rejection(&mut cache, cluster, params, spec)
        });
        if let Some(msg) = msg {
            return Ok(Some(InputError::at(
                path,
                where_is(&spec.key),
                format!(
                    "job '{}' cannot run on any node of its partitions; sbatch would say \
                     \"Batch job submission failed: {msg}\". Fix the request, or set \
                     workload.impossible to \"reject\" to keep it as a REJECTED record \
                     as slurmctld does",
                    spec.key
                ),
            )));
        }
    }
    Ok(None)
}

/// `workload.oom_after` and `workload.cpu_fallback_slowdown` over every job.
fn apply_behavior_settings(
    path: &Path,
    w: &spec::WorkloadDef,
    workload: Workload,
) -> Result<Workload, InputError> {
    if let Some(f) = w.cpu_fallback_slowdown {
        if !(f.is_finite() && (1.0..=1e6).contains(&f)) {
            return Err(InputError::at(
                path,
                "workload.cpu_fallback_slowdown",
                format!("expected a factor between 1 and 1e6, got {f}"),
            ));
        }
    }
    if w.oom_after.is_none() && w.cpu_fallback_slowdown.is_none() {
        return Ok(workload);
    }
    let Workload::Jobs(jobs) = workload else {
        return Err(InputError::at(
            path,
            if w.oom_after.is_some() {
                "workload.oom_after"
            } else {
                "workload.cpu_fallback_slowdown"
            },
            "applies to jobs given as JSON (inline, a JSON trace or scripts)",
        ));
    };
    let mut jobs = Arc::unwrap_or_clone(jobs);
    for j in &mut jobs {
        let mut b = *j.behavior();
        if let Some(o) = w.oom_after {
            b.oom_after = o;
        }
        if let (Some(f), Some(_)) = (w.cpu_fallback_slowdown, b.cpu_fallback_slowdown) {
            b.cpu_fallback_slowdown = Some(f);
        }
        j.set_behavior(b);
    }
    Ok(Workload::Jobs(Arc::new(jobs)))
}

/// The scenario's scheduler settings over `base` (Slurm's defaults, or
/// slurm.conf's settings when the cluster comes from slurm.conf).
fn sched_params(
    path: &Path,
    def: &ScenarioDef,
    base: &SchedParams,
) -> Result<SchedParams, InputError> {
    let s = &def.scheduler;
    let d = base.clone();
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
        .transpose()?
        .or(d.def_mem_per_cpu);
    let mut params = SchedParams {
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
        kill_wait: s.kill_wait.unwrap_or(d.kill_wait),
        resv_over_run: s.resv_over_run.unwrap_or(d.resv_over_run),
        kill_completing: d.kill_completing,
        requeue_completing: d.requeue_completing,
        preempt_completing: d.preempt_completing,
        grace_kill: match &s.grace_kill {
            None => d.grace_kill,
            Some(g) => g
                .parse()
                .map_err(|e: String| InputError::at(path, "scheduler.grace_kill", e))?,
        },
        signal_exit_delay: d.signal_exit_delay,
        enable_user_top: s.enable_user_top.unwrap_or(d.enable_user_top),
        main_after_ends_from: d.main_after_ends_from,
        main_after_backfill: d.main_after_backfill,
        priority_calc_period: match s.priority_weights.as_ref().and_then(|w| w.calc_period) {
            Some(0) => {
                return Err(InputError::at(
                    path,
                    "scheduler.priority_weights.calc_period",
                    "expected at least 1 second",
                ))
            }
            Some(c) => c,
            None => d.priority_calc_period,
        },
        decay_phase: d.decay_phase,
        bf_window: s.bf_window.map_or(d.bf_window, |m| m * 60),
        bf_resolution: positive(s.bf_resolution, "bf_resolution", d.bf_resolution)?,
        bf_max_job_test: s.bf_max_job_test.unwrap_or(d.bf_max_job_test),
        max_switch_wait: s.max_switch_wait.unwrap_or(d.max_switch_wait),
        bf_will_run_window: d.bf_will_run_window,
        bf_epoch_phase: d.bf_epoch_phase,
        kill_invalid_depend: s.kill_invalid_depend.unwrap_or(d.kill_invalid_depend),
        priority: if s.priority_type.is_none() && s.priority_weights.is_none() {
            d.priority.clone()
        } else {
            priority_config(path, s)?
        },
        preempt: match &s.preempt {
            None => d.preempt.clone(),
            Some(p) => preempt_config(path, p)?,
        },
        time_slice: match s.time_slice {
            // read_config.c: SchedulerTimeSlice is a uint16 of at least 5.
            Some(t) if !(5..=65535).contains(&t) => {
                return Err(InputError::at(
                    path,
                    "scheduler.time_slice",
                    "expected 5 to 65535 seconds (Slurm's SchedulerTimeSlice)",
                ))
            }
            Some(t) => t,
            None => d.time_slice,
        },
    };
    if let Some(k) = s.kill_wait {
        params.set_kill_wait(k, SchedParams::DEFAULT_MESSAGE_TIMEOUT);
    }
    Ok(params)
}

/// `scheduler.preempt`, checked as slurmctld checks slurm.conf.
fn preempt_config(
    path: &Path,
    p: &spec::PreemptDef,
) -> Result<gresim_model::preempt::PreemptConfig, InputError> {
    use gresim_model::preempt::{PreemptConfig, PreemptMode, PreemptModeSpec, PreemptType};
    let at = |f: &str, m: String| InputError::at(path, format!("scheduler.preempt.{f}"), m);
    let ptype: PreemptType = p.ty.parse().map_err(|e| at("type", e))?;
    let mode: PreemptModeSpec = p.mode.parse().map_err(|e| at("mode", e))?;
    if mode.mode == PreemptMode::Suspend && !mode.gang {
        return Err(at(
            "mode",
            "SUSPEND requires GANG too (SUSPEND,GANG)".into(),
        ));
    }
    if (ptype != PreemptType::None) == (mode.mode == PreemptMode::Off) {
        return Err(at(
            "mode",
            format!(
                "PreemptType={} and PreemptMode={mode} are incompatible (Slurm refuses them)",
                ptype.as_str()
            ),
        ));
    }
    Ok(PreemptConfig {
        ptype,
        mode,
        exempt_time: p.exempt_time,
        youngest_first: p.youngest_first,
        reorder_count: p.reorder_count.unwrap_or(1),
        strict_order: p.strict_order,
        ..PreemptConfig::new()
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
            m.weight_assoc = w.assoc;
            if let Some(r) = &w.usage_reset_period {
                m.usage_reset = r.parse().map_err(|e: String| {
                    InputError::at(path, "scheduler.priority_weights.usage_reset_period", e)
                })?;
            }
            m.weight_tres_cpu = w.tres_cpu;
            m.weight_tres_mem = w.tres_mem;
            m.weight_tres_gpu = w.tres_gpu;
            m.favor_small = w.favor_small;
            if let Some(a) = w.max_age {
                m.max_age = a;
            }
            if let Some(h) = w.decay_half_life {
                m.half_life = h;
            }
            m.fair_tree = match w.fairshare_algorithm.as_deref() {
                None | Some("fair_tree") => true,
                Some("classic") => false,
                Some(other) => {
                    return Err(InputError::at(
                        path,
                        "scheduler.priority_weights.fairshare_algorithm",
                        format!("expected \"fair_tree\" or \"classic\", got \"{other}\""),
                    ))
                }
            };
            Ok(PriorityConfig::Multifactor(m))
        }
        (Some(other), _) => Err(InputError::at(
            path,
            "scheduler.priority_type",
            format!("unknown priority type '{other}'; expected basic or multifactor"),
        )),
    }
}

/// Reads the `workload.scripts` entries: each script is parsed with its
/// command-line options, then built like an inline job. Errors found while
/// building name the script and the line of the option.
fn build_scripts(
    path: &Path,
    defs: &[spec::ScriptDef],
    cluster: &Cluster,
) -> Result<Vec<JobSpec>, InputError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut scripts = Vec::with_capacity(defs.len());
    let mut jobs = Vec::with_capacity(defs.len());
    for d in defs {
        let s = gresim_slurm::sbatch::load_script(&dir.join(&d.path), &d.args)?;
        let mut j = JobDef::from(s.job.clone());
        // sbatch names a job after its script unless --job-name says otherwise.
        if j.name.is_none() {
            j.name = Path::new(&d.path)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned());
        }
        j.id = d.id.clone();
        j.user = d.user.clone();
        j.submit = d.submit;
        j.run_time = d.run_time;
        j.task_run_times = d.task_run_times.clone();
        j.exit_code = d.exit_code;
        j.begin = s.begin_offset.map(|b| d.submit.saturating_add(b));
        jobs.push(j);
        scripts.push(s);
    }
    let mut specs = build::build_jobs(path, "workload.scripts", &jobs, cluster).map_err(|e| {
        // `workload.scripts[i].field`: re-anchor on the script's option line.
        let idx = e
            .path
            .as_deref()
            .and_then(|p| p.strip_prefix("workload.scripts["))
            .and_then(|p| p.split_once(']'))
            .and_then(|(i, rest)| Some((i.parse::<usize>().ok()?, rest)));
        match idx {
            Some((i, rest)) if rest.starts_with('.') && rest != ".id" => match scripts.get(i) {
                Some(s) => gresim_slurm::sbatch::relocate(e, s),
                None => e,
            },
            _ => e,
        }
    })?;
    // sbatch refuses a request that names the GPU GRES with and without a
    // type (`--gres=gpu:a100:4 --gpus-per-task=1`); see `sim lint`.
    // build_jobs sorts by submit time (stably), so map specs back by key.
    for (i, (d, s)) in jobs.iter().zip(&scripts).enumerate() {
        if gresim_slurm::lint::unify_gpu_types(s).is_some() {
            let key = d.id.clone().unwrap_or_else(|| format!("job{}", i + 1));
            if let Some(spec) = specs.iter_mut().find(|x| x.key == key) {
                spec.set_reject(Some(
                    "Invalid generic resource (gres) specification: Invalid GRES specification (with and without type identification)".into(),
                ));
            }
        }
    }
    Ok(specs)
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
