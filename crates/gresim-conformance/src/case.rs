//! The conformance harness's case format.
//!
//! A case (`cases/NAME.json` in the conformance suite) describes nodes with
//! GPUs, `Cores=` and `Links=`, partitions, Slurm settings, timed `scontrol`
//! actions and jobs with sbatch options. [`load_case`] turns it into a
//! [`Scenario`] configured as the harness configures Slurm (its
//! `DEFAULT_SLURM` block).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;

use gresim_engine::{Action, TimedAction};
use gresim_model::cluster::NodeAdminState;
use gresim_model::hostlist;
use gresim_model::job::JobSpec;
use gresim_model::{Cluster, NodeId};
use gresim_sched::SchedParams;

use gresim_io::error::{self, InputError};
use gresim_io::spec::{JobDef, NumOrStr};
use gresim_io::{build, Scenario, Workload};
use gresim_slurm::gresconf::{self, GresConf, GresLine};
use gresim_slurm::slurmconf::{self, NodeConf, SlurmConf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseDef {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub comment: Option<String>,
    pub nodes: Vec<CaseNode>,
    #[serde(default)]
    pub partitions: Option<Vec<CasePartition>>,
    #[serde(default)]
    pub slurm: Option<CaseSlurm>,
    #[serde(default)]
    pub actions: Vec<CaseAction>,
    pub jobs: Vec<CaseJob>,
    /// When slurmctld started, relative to t0 (a recording's `ctld_start`; 0 by default).
    #[serde(default)]
    pub ctld_start: Option<i64>,
    /// Wall-clock time (Unix seconds) of t0, a recording's `t0_epoch`, copied
    /// into the case (0 when absent). Backfill's `_will_run_test()` groups
    /// planned job ends on multiples of 30 s of wall-clock time, so this
    /// phase changes its plans. It is an input of the case: nothing is read
    /// from the recordings, which are only the answers.
    #[serde(default)]
    pub t0_epoch: Option<f64>,
    /// slurmdbd with MariaDB: enforcement, tracked TRES and the `sacctmgr`
    /// commands the harness applies before the jobs.
    #[serde(default)]
    pub accounting: Option<CaseAccounting>,
    /// The harness's `--stall` when the recording used it: jobs still
    /// pending once nothing has changed for this many seconds are
    /// cancelled by the harness (`replay.py`), and the simulation does the same.
    #[serde(default)]
    pub stall: Option<f64>,
    /// The harness's periodic `sprio`/`sshare` snapshots (`{"every": 5}`):
    /// they change nothing the simulation decides.
    #[serde(default)]
    pub snapshots: Option<serde_json::Value>,
    /// `scontrol` commands the harness runs once Slurm is up, before the
    /// jobs (`scontrol update PartitionName=p QOS=q`).
    #[serde(default)]
    pub setup_cmds: Vec<String>,
    /// The harness records every node state change (`node_states`); it
    /// changes nothing the simulation decides.
    #[serde(default)]
    pub track_nodes: bool,
    /// topology.conf lines the harness writes beside slurm.conf; the case's
    /// `slurm.extra_conf` names the plugin (`TopologyPlugin=topology/tree`).
    #[serde(default)]
    pub topology_conf: Vec<String>,
    /// The harness ran each slurmd under `reaper.py`, which reaps a killed
    /// job's orphaned processes at once, as systemd does on a real node
    /// (the recording VM's PID 1 takes 1-2 s, which makes slurmstepd's
    /// kill of a job wait about 3.7 s by chance). It changes how the
    /// recordings were made, not anything the simulation decides.
    #[serde(default)]
    pub reaper: bool,
}

/// A case's `accounting` block (the harness's `dbd.sh`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseAccounting {
    #[serde(default)]
    pub enforce: Option<String>,
    #[serde(default)]
    pub tres: Option<String>,
    #[serde(default)]
    pub sacctmgr: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseNode {
    pub name: String,
    #[serde(default)]
    pub cpus: Option<u32>,
    #[serde(default)]
    pub sockets: Option<u16>,
    #[serde(default)]
    pub mem_mb: Option<u64>,
    #[serde(default)]
    pub gpus: Vec<CaseGpu>,
    #[serde(default)]
    pub gpu_links: Option<Vec<Vec<i32>>>,
    #[serde(default)]
    pub features: Option<String>,
    #[serde(default)]
    pub weight: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CoresDef {
    One(String),
    PerDevice(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseGpu {
    #[serde(default, rename = "type")]
    pub ty: Option<String>,
    pub count: u32,
    #[serde(default)]
    pub cores: Option<CoresDef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CasePartition {
    pub name: String,
    #[serde(default)]
    pub nodes: Option<String>,
    #[serde(default)]
    pub default: bool,
    #[serde(default)]
    pub max_time: Option<String>,
    /// Further `Key=Value` words of the PartitionName line.
    #[serde(default)]
    pub extra: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseSlurm {
    #[serde(default)]
    pub scheduler_type: Option<String>,
    #[serde(default)]
    pub scheduler_parameters: Option<String>,
    #[serde(default)]
    pub select_type_parameters: Option<String>,
    #[serde(default)]
    pub priority_type: Option<String>,
    #[serde(default)]
    pub def_mem_per_cpu: Option<u64>,
    #[serde(default)]
    pub cred_expire: Option<u64>,
    #[serde(default)]
    pub min_job_age: Option<u64>,
    #[serde(default)]
    pub kill_wait: Option<u64>,
    #[serde(default)]
    pub return_to_service: Option<u32>,
    #[serde(default)]
    pub debug_flags: Option<String>,
    #[serde(default)]
    pub extra_conf: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseAction {
    pub at: f64,
    pub cmd: String,
    /// The Unix user the harness runs the command as (`runuser`; root by
    /// default): a job's owner may hold, release and requeue it, but not
    /// release an administrator's hold, suspend it or (without
    /// `enable_user_top`) `top` it.
    #[serde(default)]
    pub user: Option<String>,
}

/// Run time: seconds, or `{"default": 10, "3": 20}` per array task.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Duration {
    Secs(f64),
    PerTask(BTreeMap<String, f64>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseJob {
    pub id: String,
    /// The Unix user the harness submits as (`runuser -u`; root by default).
    #[serde(default)]
    pub user: Option<String>,
    #[serde(default)]
    pub account: Option<String>,
    #[serde(default)]
    pub qos: Option<String>,
    #[serde(default)]
    pub comment: Option<String>,
    #[serde(default)]
    pub submit: f64,
    #[serde(default)]
    pub duration: Option<Duration>,
    #[serde(default)]
    pub nodes: Option<NumOrStr>,
    #[serde(default)]
    pub ntasks: Option<u64>,
    #[serde(default)]
    pub ntasks_per_node: Option<u64>,
    #[serde(default)]
    pub cpus_per_task: Option<u64>,
    #[serde(default)]
    pub mem: Option<NumOrStr>,
    #[serde(default)]
    pub mem_per_cpu: Option<NumOrStr>,
    #[serde(default)]
    pub mem_per_gpu: Option<NumOrStr>,
    #[serde(default)]
    pub gres: Option<String>,
    #[serde(default)]
    pub gpus: Option<NumOrStr>,
    #[serde(default)]
    pub gpus_per_node: Option<NumOrStr>,
    #[serde(default)]
    pub gpus_per_task: Option<NumOrStr>,
    #[serde(default)]
    pub gpus_per_socket: Option<NumOrStr>,
    #[serde(default)]
    pub cpus_per_gpu: Option<u64>,
    #[serde(default)]
    pub time_limit: Option<NumOrStr>,
    #[serde(default)]
    pub partition: Option<String>,
    #[serde(default)]
    pub nodelist: Option<String>,
    #[serde(default)]
    pub exclude: Option<String>,
    #[serde(default)]
    pub constraint: Option<String>,
    #[serde(default)]
    pub exclusive: bool,
    #[serde(default)]
    pub nice: Option<i32>,
    #[serde(default)]
    pub priority: Option<u64>,
    #[serde(default)]
    pub array: Option<String>,
    #[serde(default)]
    pub requeue: Option<bool>,
    #[serde(default)]
    pub requeue_after: Option<f64>,
    #[serde(default)]
    pub hold: bool,
    #[serde(default)]
    pub release_after: Option<f64>,
    #[serde(default)]
    pub cancel_after: Option<f64>,
    #[serde(default)]
    pub begin_after: Option<f64>,
    #[serde(default)]
    pub dependency: Option<String>,
    #[serde(default)]
    pub step: Option<bool>,
    /// The harness's job counts only the time it is not suspended towards
    /// its duration (it sleeps in 0.25-s steps). gresim's jobs always do:
    /// a suspended job's run time stops (see `Action::Suspend`).
    #[serde(default)]
    pub run_time_only: bool,
    #[serde(default)]
    pub sbatch_args: Vec<String>,
    /// The payload ignores SIGTERM: slurmd's `MAX(KillWait, 5)` s between
    /// SIGTERM and SIGKILL keep it COMPLETING that much longer when Slurm
    /// ends it (`JobBehavior::ignores_sigterm`). A preempted job's batch
    /// script is not signalled at the preemption in Slurm 22.05 (it runs
    /// through its GraceTime either way).
    #[serde(default)]
    pub ignore_sigterm: bool,
}

/// A loaded case: the scenario, and the case's job ids in submission order.
#[derive(Debug, Clone)]
pub struct Case {
    pub def: CaseDef,
    pub scenario: Scenario,
    /// For each submission (in the scenario's order), the case job's index.
    pub order: Vec<usize>,
}

/// Slurm's time: whole seconds since t0 (the harness aligns t0 to a second).
fn whole(t: f64) -> u64 {
    if t.is_finite() && t > 0.0 {
        t.floor() as u64
    } else {
        0
    }
}

/// Reads a case file.
pub fn load_case(path: &Path) -> Result<Case, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the case: {e}")))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let def: CaseDef =
        serde_path_to_error::deserialize(de).map_err(|e| error::from_json(path, e))?;
    let mut cluster = case_cluster(path, &def)?;
    if let Some(a) = &def.accounting {
        // `scontrol update PartitionName=P QOS=Q` (or `TRESBillingWeights=W`)
        // among the setup commands.
        let mut partition_qos = BTreeMap::new();
        let mut tres_billing_weights = BTreeMap::new();
        for (i, c) in def.setup_cmds.iter().enumerate() {
            let w: Vec<&str> = c.split_whitespace().collect();
            if gresim_io::resv::is_resv_cmd(&w) {
                continue;
            }
            let kv = |k: &str| {
                w.iter()
                    .find_map(|x| x.split_once('=').filter(|(a, _)| a.eq_ignore_ascii_case(k)))
                    .map(|(_, v)| v.to_string())
            };
            let (qos, weights) = (kv("QOS"), kv("TRESBillingWeights"));
            match (w.get(..2), kv("PartitionName")) {
                (Some(["scontrol", "update"]), Some(p)) if qos.is_some() || weights.is_some() => {
                    if let Some(q) = qos {
                        partition_qos.insert(p.clone(), q);
                    }
                    if let Some(wt) = weights {
                        tres_billing_weights.insert(p, wt);
                    }
                }
                _ => return Err(InputError::at(
                    path,
                    format!("setup_cmds[{i}]"),
                    "expected `scontrol update PartitionName=P QOS=Q` or `… TRESBillingWeights=W`",
                )),
            }
        }
        let d = gresim_io::spec::AccountingDef {
            enforce: a.enforce.clone(),
            tres: Some(a.tres.clone().unwrap_or_else(|| "gres/gpu".into())),
            sacctmgr: a.sacctmgr.clone(),
            partition_qos,
            tres_billing_weights,
            ..Default::default()
        };
        cluster.set_accounting(Some(gresim_io::sacctmgr::build(path, &d, &cluster)?));
    }
    // Reservations made by setup commands (before t0): in force from the start.
    let mut reservations = gresim_model::reservation::Reservations::default();
    for (i, c) in def.setup_cmds.iter().enumerate() {
        let w: Vec<&str> = c.split_whitespace().collect();
        if !gresim_io::resv::is_resv_cmd(&w) {
            if def.accounting.is_none() {
                return Err(InputError::at(
                    path,
                    format!("setup_cmds[{i}]"),
                    "expected `scontrol create reservation …` (other setup commands need accounting)",
                ));
            }
            continue;
        }
        // One scontrol itself refuses changes nothing.
        if gresim_io::resv::scontrol_refusal(&w).is_some() {
            continue;
        }
        let err = |m: String| InputError::at(path, format!("setup_cmds[{i}]"), m);
        match gresim_io::resv::parse_scontrol(&w[1..], 0, &cluster).map_err(err)? {
            Some(gresim_engine::Action::ResvCreate(r)) => {
                gresim_io::resv::add_initial(&mut reservations, *r, &cluster).map_err(err)?
            }
            None => {}
            Some(_) => {
                return Err(err(
                    "expected `scontrol create reservation …` among the setup commands".into(),
                ))
            }
        }
    }
    let mut params = case_params(path, &def)?;
    if let Some(t0) = def.t0_epoch {
        if !t0.is_finite() || t0 < 0.0 {
            return Err(InputError::at(
                path,
                "t0_epoch",
                "expected a time in seconds since 1970, at least 0",
            ));
        }
    }
    if let Some(t0) = def.t0_epoch {
        if params.bf_will_run_window > 0 {
            params.bf_epoch_phase = (t0.floor() as u64) % params.bf_will_run_window;
        }
    }
    // Submissions in order of submit time (stable: the harness submits in file order).
    let mut order: Vec<usize> = (0..def.jobs.len()).collect();
    order.sort_by(|&a, &b| def.jobs[a].submit.total_cmp(&def.jobs[b].submit));
    let mut keys: BTreeMap<String, u32> = BTreeMap::new();
    let mut specs: Vec<JobSpec> = Vec::new();
    let mut actions = Vec::new();
    for (sub, &i) in order.iter().enumerate() {
        let j = &def.jobs[i];
        let path_s = format!("jobs[{i}]");
        let (jd, reject) = job_def(j, &cluster);
        let mut spec =
            match build::build_job(path, &path_s, &jd, j.id.clone(), &cluster, &keys, &specs) {
                Ok(s) => s,
                Err(e) => {
                    // What sbatch would refuse is a rejected submission, not bad input.
                    let mut jd2 = jd.clone();
                    jd2.gres = None;
                    jd2.gpus = None;
                    jd2.gpus_per_node = None;
                    jd2.gpus_per_task = None;
                    jd2.cpus_per_gpu = None;
                    jd2.mem_per_gpu = None;
                    jd2.dependency = None;
                    let mut s = build::build_job(
                        path,
                        &path_s,
                        &jd2,
                        j.id.clone(),
                        &cluster,
                        &keys,
                        &specs,
                    )
                    .map_err(|_| e.clone())?;
                    s.set_reject(Some(e.msg));
                    s
                }
            };
        if reject.is_some() {
            spec.set_reject(reject);
        }
        spec.set_requeue_after_start(j.requeue_after.map(|r| r.ceil() as u64 + 1));
        let submit = whole(j.submit);
        if let Some(c) = j.cancel_after {
            actions.push(TimedAction {
                at: whole(j.submit + c),
                action: Action::Cancel { sub: sub as u32 },
            });
        }
        if let Some(r) = j.release_after {
            actions.push(TimedAction {
                at: whole(j.submit + r),
                action: Action::Release {
                    sub: sub as u32,
                    owner: false,
                },
            });
        }
        spec.submit = submit;
        keys.insert(j.id.clone(), sub as u32);
        specs.push(spec);
    }
    let owners: Vec<Option<&str>> = order
        .iter()
        .map(|&i| def.jobs[i].user.as_deref().filter(|u| *u != "root"))
        .collect();
    for (ai, a) in def.actions.iter().enumerate() {
        let user = a.user.as_deref().filter(|u| *u != "root");
        let acts = parse_action(&a.cmd, whole(a.at), user, &cluster, &keys, &owners)
            .map_err(|m| InputError::at(path, format!("actions[{ai}].cmd"), m))?;
        actions.extend(acts.into_iter().map(|action| TimedAction {
            at: whole(a.at),
            action,
        }));
    }
    actions.sort_by_key(|a| a.at);
    let name = def.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or_else(|| "case".into(), |s| s.to_string_lossy().into_owned())
    });
    let scenario = Scenario {
        path: path.to_path_buf(),
        name,
        description: def.comment.clone(),
        seed: 1,
        cluster,
        params,
        policy: gresim_sched::PolicyKind::Slurm,
        workload: Workload::Jobs(Arc::new(specs)),
        actions,
        failures: None,
        horizon: None,
        stall: def.stall.map(|s| s.max(0.0).floor() as u64),
        out_dir: None,
        source: text,
        warnings: Vec::new(),
        mig_multi_gpu: Default::default(),
        impossible: None,
        reservations,
    };
    Ok(Case {
        def,
        scenario,
        order,
    })
}

/// The job's sbatch options as a scenario job, plus a rejection sbatch would print.
fn job_def(j: &CaseJob, cluster: &Cluster) -> (JobDef, Option<String>) {
    let (run_time, task_run_times) = match &j.duration {
        None => (Some(10), None),
        Some(Duration::Secs(s)) => (Some(s.max(0.0).round() as u64), None),
        Some(Duration::PerTask(m)) => {
            let dflt = m.get("default").copied().unwrap_or(10.0).max(0.0).round() as u64;
            let per: BTreeMap<String, u64> = m
                .iter()
                .filter(|(k, _)| k.as_str() != "default")
                .map(|(k, v)| (k.clone(), v.max(0.0).round() as u64))
                .collect();
            (Some(dflt), Some(per))
        }
    };
    let mut name = None;
    let mut reservation = None;
    let mut switches = None;
    let mut oversubscribe = false;
    let mut it = j.sbatch_args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix("--reservation=") {
            reservation = Some(v.to_string());
        } else if a == "--reservation" {
            reservation = it.next().cloned();
        } else if a == "-J" || a == "--job-name" {
            name = it.next().cloned();
        } else if let Some(v) = a.strip_prefix("--job-name=") {
            name = Some(v.to_string());
        } else if let Some(v) = a.strip_prefix("--switches=") {
            switches = Some(v.to_string());
        } else if a == "--switches" {
            switches = it.next().cloned();
        } else if a == "--oversubscribe" || a == "-s" {
            oversubscribe = true;
        }
    }
    let mut reject = None;
    // --gpus-per-socket: Slurm 22.05 allocated one GPU per node here (see the harness README).
    let mut gres = j.gres.clone();
    if let Some(g) = &j.gpus_per_socket {
        gres = Some(format!("gpu:{}", g.as_string()));
    }
    if let Some(g) = &gres {
        if let Err(e) = gresim_slurm::slurm_opts::parse_gres(g, cluster) {
            if e.contains("unknown GPU type") || e.contains("no GPUs") {
                reject = Some("Requested node configuration is not available".to_string());
            }
        }
    }
    let jd = JobDef {
        id: Some(j.id.clone()),
        name: Some(name.unwrap_or_else(|| j.id.clone())),
        user: Some(j.user.clone().unwrap_or_else(|| "root".into())),
        account: j.account.clone(),
        qos: j.qos.clone(),
        submit: whole(j.submit),
        run_time,
        task_run_times,
        exit_code: None,
        time: j.time_limit.clone(),
        partition: j.partition.clone(),
        nodes: j.nodes.clone(),
        ntasks: j.ntasks,
        ntasks_per_node: j.ntasks_per_node,
        cpus_per_task: j.cpus_per_task,
        mem: j.mem.clone(),
        mem_per_cpu: j.mem_per_cpu.clone(),
        mem_per_gpu: j.mem_per_gpu.clone(),
        gres,
        gpus: j.gpus.clone(),
        gpus_per_node: j.gpus_per_node.clone(),
        gpus_per_task: j.gpus_per_task.clone(),
        cpus_per_gpu: j.cpus_per_gpu,
        nodelist: j.nodelist.clone(),
        exclude: j.exclude.clone(),
        constraint: j.constraint.clone(),
        exclusive: j.exclusive,
        oversubscribe,
        array: j.array.clone(),
        requeue: j.requeue,
        dependency: j.dependency.clone(),
        begin: j.begin_after.map(|b| whole(j.submit) + b.round() as u64),
        hold: j.hold,
        nice: j.nice,
        reservation,
        switches,
        ignores_sigterm: j.ignore_sigterm,
        ..JobDef::default()
    };
    (jd, reject)
}

/// The cluster of a case, built as the harness configures Slurm: the case is
/// turned into the slurm.conf nodes and partitions and the gres.conf lines
/// `replay.py` writes, and built by [`slurmconf::build_cluster`], the same
/// code that reads real slurm.conf and gres.conf files.
fn case_cluster(path: &Path, def: &CaseDef) -> Result<Cluster, InputError> {
    let (conf, gres) = case_conf(path, def)?;
    // Warnings concern hand-written files; a case's configuration is generated.
    let mut warnings = Vec::new();
    let mut cluster = slurmconf::build_cluster(&conf, &gres, &mut warnings)?;
    if !def.topology_conf.is_empty() {
        let mut plugin = gresim_model::switches::TopologyPlugin::None;
        let extra = def.slurm.as_ref().map_or(&[][..], |s| &s.extra_conf[..]);
        for (i, line) in extra.iter().enumerate() {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim().eq_ignore_ascii_case("TopologyPlugin") {
                    plugin = gresim_slurm::topology_conf::plugin(v)
                        .map_err(|m| InputError::at(path, format!("slurm.extra_conf[{i}]"), m))?;
                }
            }
        }
        let tree = gresim_slurm::topology_conf::parse(
            &path.with_file_name(format!(
                "{}#topology_conf",
                path.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            )),
            &def.topology_conf.join("\n"),
            &cluster,
            &mut warnings,
        )?;
        gresim_slurm::topology_conf::check_plugin(&tree, plugin)
            .map_err(|m| InputError::at(path, "slurm.extra_conf", m))?;
        cluster.set_switches(Some(tree), plugin);
    }
    Ok(cluster)
}

/// The slurm.conf and gres.conf the harness generates for a case.
pub fn case_conf(path: &Path, def: &CaseDef) -> Result<(SlurmConf, GresConf), InputError> {
    let mut conf = SlurmConf {
        file: path.to_path_buf(),
        ..SlurmConf::default()
    };
    let mut gres = GresConf::default();
    for (ni, n) in def.nodes.iter().enumerate() {
        let np = format!("nodes[{ni}]");
        let names = hostlist::expand(&n.name)
            .map_err(|e| InputError::at(path, format!("{np}.name"), e.to_string()))?;
        let sockets = n.sockets.unwrap_or(2).max(1);
        let cpus = n.cpus.unwrap_or(32);
        if cpus % u32::from(sockets) != 0 {
            return Err(InputError::at(
                path,
                format!("{np}.cpus"),
                format!("{cpus} CPUs do not divide into {sockets} sockets"),
            ));
        }
        let cps = (cpus / u32::from(sockets)) as u16;
        // Same type in several groups (per-socket Cores) -> one Gres= entry.
        let mut agg: Vec<slurmconf::GresSpec> = Vec::new();
        let mut dev = 0usize;
        for (gi, g) in n.gpus.iter().enumerate() {
            if g.count == 0 {
                continue;
            }
            match agg.iter_mut().find(|a| a.ty == g.ty) {
                Some(a) => a.count += u64::from(g.count),
                None => agg.push(slurmconf::GresSpec {
                    name: "gpu".into(),
                    ty: g.ty.clone(),
                    count: u64::from(g.count),
                }),
            }
            let cores = |c: &str| {
                gresconf::parse_cores(c)
                    .map_err(|m| InputError::at(path, format!("{np}.gpus[{gi}].cores"), m))
            };
            let line = GresLine {
                file: path.to_path_buf(),
                nodes: Some(names.clone()),
                name: "gpu".into(),
                ty: g.ty.clone(),
                ..GresLine::default()
            };
            let per_device =
                n.gpu_links.is_some() || matches!(g.cores, Some(CoresDef::PerDevice(_)));
            if per_device {
                for d in 0..g.count as usize {
                    let c = match &g.cores {
                        None => None,
                        Some(CoresDef::One(c)) => Some(cores(c)?),
                        Some(CoresDef::PerDevice(v)) => v.get(d).map(|c| cores(c)).transpose()?,
                    };
                    let links = n.gpu_links.as_ref().map(|m| {
                        m.get(dev + d)
                            .map(|row| {
                                row.iter()
                                    .enumerate()
                                    .map(|(j, &v)| if j == dev + d { -1 } else { v })
                                    .collect()
                            })
                            .unwrap_or_default()
                    });
                    gres.lines.push(GresLine {
                        count: Some(1),
                        cores: c,
                        links,
                        ..line.clone()
                    });
                }
            } else {
                let c = match &g.cores {
                    Some(CoresDef::One(c)) => Some(cores(c)?),
                    _ => None,
                };
                gres.lines.push(GresLine {
                    count: Some(u64::from(g.count)),
                    cores: c,
                    ..line
                });
            }
            dev += g.count as usize;
        }
        let features = n
            .features
            .as_deref()
            .map(|f| {
                f.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        conf.nodes.push(NodeConf {
            file: path.to_path_buf(),
            line: 0,
            names,
            boards: 1,
            sockets,
            cores_per_socket: cps,
            threads_per_core: 1,
            cpus,
            memory_mib: n.mem_mb.unwrap_or(256000),
            gres: agg,
            weight: n.weight.unwrap_or(1),
            features,
            state: NodeAdminState::Up,
        });
    }
    let parts = def.partitions.clone().unwrap_or_else(|| {
        vec![CasePartition {
            name: "gpu".into(),
            nodes: Some("ALL".into()),
            default: true,
            max_time: Some("INFINITE".into()),
            extra: None,
        }]
    });
    // The PartitionName lines replay.py writes, read by the slurm.conf reader.
    let mut text = String::new();
    for p in &parts {
        text += &format!(
            "PartitionName={} Nodes={} Default={} MaxTime={} State=UP {}\n",
            p.name,
            p.nodes.as_deref().unwrap_or("ALL"),
            if p.default { "YES" } else { "NO" },
            p.max_time.as_deref().unwrap_or("INFINITE"),
            p.extra.as_deref().unwrap_or("")
        );
    }
    let (pc, _) = slurmconf::parse_slurm_conf(path, &text).map_err(|e| {
        let i = e.line.map_or(0, |l| l.0.saturating_sub(1));
        InputError::at(path, format!("partitions[{i}]"), e.msg)
    })?;
    conf.partitions = pc.partitions;
    Ok((conf, gres))
}

fn case_params(path: &Path, def: &CaseDef) -> Result<SchedParams, InputError> {
    let s = def.slurm.clone().unwrap_or_default();
    // The time-limit check runs every 30 s from slurmctld's start, a fraction
    // of a second into its 29th second: a job is killed in the first check
    // second at or after start + limit (README of the conformance suite).
    let ctld = def.ctld_start.unwrap_or(0);
    let ctld_phase = (ctld + 29).rem_euclid(30) as u64;
    let base = SchedParams {
        ctld_phase,
        // The harness's slurm.conf.
        sched_interval: 1,
        bf_interval: 1,
        bf_resolution: 1,
        pass_on_submit: false,
        pass_on_end: false,
        def_mem_per_cpu: Some(1000),
        cred_expire: 5,
        // A cancelled job's nodes came back 3 s later in two of the three
        // recordings of pub_arrays_deps (p01), at once in the third: the
        // recording VM's PID 1 reaped the job's orphans 1-2 s late, so
        // slurmstepd's process-group wait slept 1 + 2 s by chance. With the
        // harness's reaper (orphans reaped at once, as on a real node) the
        // group is empty at its first check: the kill is done at once, as
        // the preemption kills of every `*_reaped` recording were.
        kill_completing: if def.reaper { 0 } else { 2 },
        // `scontrol requeue`: the job showed BeginTime (batch_requeue_fini)
        // 0-5 s after the requeue, most often 3-4 s (mixed_gpu j13 started
        // again 6, 10 and 9 s after it, pub_failures r04's reason came 1,
        // 4 and 4.5 s after): the same late reaping as above. With the
        // reaper, `scontrol requeuehold`'s kill was done within the second
        // in all three recordings of admin_requeuehold_reaped (its waiting
        // jobs started in the second of each requeue).
        requeue_completing: if def.reaper { 0 } else { 3 },
        // `scancel --signal=USR1 --batch`: the job ended FAILED 3 s after
        // the signal in all three recordings of admin_scancel.
        signal_exit_delay: 3,
        // The main pass falls behind the ends of the jobs backfill started
        // 15-55 s after slurmctld's start in the recordings
        // (docs/slurm-fidelity.md).
        main_after_ends_from: Some((ctld + 45).max(0) as u64),
        // Before that, the main pass runs just after backfill (the
        // controller logs of hold_e505's fourth recording, 2026-12-04).
        main_after_backfill: true,
        ..SchedParams::default()
    };
    // The settings replay.py writes, read by the slurm.conf reader.
    let mut text = format!(
        "SchedulerParameters={}\n",
        s.scheduler_parameters
            .as_deref()
            .unwrap_or("bf_interval=1,bf_resolution=1,sched_interval=1,batch_sched_delay=0")
    );
    if let Some(t) = &s.priority_type {
        text += &format!("PriorityType={t}\n");
    }
    if let Some(d) = s.def_mem_per_cpu {
        text += &format!("DefMemPerCPU={d}\n");
    }
    if let Some(c) = s.cred_expire {
        text += &format!("AuthInfo=cred_expire={c}\n");
    }
    // replay.py's KillWait (MessageTimeout stays at its default).
    text += &format!("KillWait={}\n", s.kill_wait.unwrap_or(1));
    if def.accounting.is_some() {
        // The harness runs slurmdbd for such a case (which, for one, turns
        // on the age factor).
        text += "AccountingStorageType=accounting_storage/slurmdbd\n";
    }
    for line in &s.extra_conf {
        text += line;
        text.push('\n');
    }
    let (conf, _) = slurmconf::parse_slurm_conf(path, &text)
        .map_err(|e| InputError::at(path, "slurm", e.msg))?;
    let mut p = gresim_io::slurmconf::sched_params(&conf, &base);
    p.decay_phase = ctld.rem_euclid(p.priority_calc_period.max(1) as i64) as u64;
    Ok(p)
}

/// `scontrol …` or `scancel …` as the harness writes it, with `{id}` naming
/// a case job, run by `user` (root when `None`), as engine actions: none
/// when Slurm refuses the command (a user acting on another's job, or
/// asking what only an operator may).
fn parse_action(
    cmd: &str,
    at: u64,
    user: Option<&str>,
    cluster: &Cluster,
    keys: &BTreeMap<String, u32>,
    owners: &[Option<&str>],
) -> Result<Vec<Action>, String> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let job = |w: &str| -> Result<u32, String> {
        let k = w.trim_start_matches('{').trim_end_matches('}');
        keys.get(k).copied().ok_or_else(|| format!("no job '{k}'"))
    };
    // Job lists: `{a},{b}` or several words.
    let jobs = |ws: &[&str]| -> Result<Vec<u32>, String> {
        let mut v = Vec::new();
        for w in ws {
            for x in w.split(',').filter(|x| !x.is_empty()) {
                v.push(job(x)?);
            }
        }
        if v.is_empty() {
            return Err(format!("'{cmd}' names no job"));
        }
        Ok(v)
    };
    // Plain users may act on their own jobs only.
    let owned = |subs: &[u32]| {
        user.is_none_or(|u| {
            subs.iter()
                .all(|&s| owners.get(s as usize) == Some(&Some(u)))
        })
    };
    let per_job = |subs: Vec<u32>, f: &dyn Fn(u32) -> Action| -> Vec<Action> {
        if owned(&subs) {
            subs.into_iter().map(f).collect()
        } else {
            Vec::new()
        }
    };
    let operator = user.is_none();
    if gresim_io::resv::is_resv_cmd(&words) {
        // scontrol refuses some before asking slurmctld: nothing changes.
        if gresim_io::resv::scontrol_refusal(&words).is_some() {
            return Ok(Vec::new());
        }
        // Only an operator may create, change or delete a reservation.
        let a = gresim_io::resv::parse_scontrol(&words[1..], at, cluster)?;
        return Ok(a.into_iter().filter(|_| operator).collect());
    }
    match words.as_slice() {
        ["scontrol", "hold", js @ ..] => Ok(per_job(jobs(js)?, &|sub| Action::Hold {
            sub,
            admin: operator,
        })),
        ["scontrol", "uhold", js @ ..] => Ok(per_job(jobs(js)?, &|sub| Action::Hold {
            sub,
            admin: false,
        })),
        ["scontrol", "release", js @ ..] => Ok(per_job(jobs(js)?, &|sub| Action::Release {
            sub,
            owner: !operator,
        })),
        ["scontrol", "requeue", js @ ..] => Ok(per_job(jobs(js)?, &|sub| Action::Requeue { sub })),
        ["scontrol", "requeuehold", rest @ ..] => {
            let (special_exit, js) = match rest {
                [st, js @ ..] if st.contains('=') => {
                    match st.split_once('=').map(|(k, v)| (k.to_ascii_lowercase(), v)) {
                        Some((k, v)) if k == "state" && v.eq_ignore_ascii_case("specialexit") => {
                            (true, js)
                        }
                        _ => return Err(format!("'{st}': expected State=SpecialExit")),
                    }
                }
                js => (false, js),
            };
            Ok(per_job(jobs(js)?, &|sub| Action::RequeueHold {
                sub,
                special_exit,
            }))
        }
        ["scontrol", "suspend", js @ ..] => {
            let subs = jobs(js)?;
            Ok(if operator {
                subs.into_iter()
                    .map(|sub| Action::Suspend { sub })
                    .collect()
            } else {
                Vec::new()
            })
        }
        ["scontrol", "resume", js @ ..] => {
            let subs = jobs(js)?;
            Ok(if operator {
                subs.into_iter().map(|sub| Action::Resume { sub }).collect()
            } else {
                Vec::new()
            })
        }
        ["scontrol", "top", js @ ..] => {
            let subs = jobs(js)?;
            Ok(if owned(&subs) {
                vec![Action::Top {
                    subs,
                    owner: !operator,
                }]
            } else {
                Vec::new()
            })
        }
        ["scontrol", "update", rest @ ..] => {
            let mut kv: Vec<(String, &str)> = Vec::new();
            for w in rest {
                let (k, v) = w
                    .split_once('=')
                    .ok_or_else(|| format!("'{w}': expected Key=Value"))?;
                kv.push((k.to_ascii_lowercase(), v));
            }
            let get = |k: &str| kv.iter().find(|(x, _)| x == k).map(|(_, v)| *v);
            if let Some(j) = get("jobid") {
                let sub = job(j)?;
                let mut out = Vec::new();
                for (k, v) in kv.iter().filter(|(k, _)| k != "jobid") {
                    let v = strip_braces(v);
                    let change = gresim_io::build::job_change(k, &v, cluster, &|id| {
                        keys.get(id).map(|&s| (s, None))
                    })?;
                    out.push(Action::Update { sub, change });
                }
                if out.is_empty() {
                    return Err(format!("'{cmd}' changes nothing"));
                }
                return Ok(if owned(&[sub]) { out } else { Vec::new() });
            }
            let names = get("nodename").ok_or("scontrol update without JobId= or NodeName=")?;
            if let Some((k, _)) = kv
                .iter()
                .find(|(k, _)| !["nodename", "state", "reason"].contains(&k.as_str()))
            {
                return Err(format!(
                    "unsupported node update key '{k}'; expected State= and Reason="
                ));
            }
            let nodes: Vec<NodeId> = hostlist::expand(names)
                .map_err(|e| e.to_string())?
                .iter()
                .map(|n| {
                    cluster
                        .node_id(n)
                        .ok_or_else(|| format!("unknown node '{n}'"))
                })
                .collect::<Result<_, _>>()?;
            let a = gresim_io::build::node_state_action(get("state").unwrap_or(""), nodes)?;
            Ok(if operator { vec![a] } else { Vec::new() })
        }
        ["scancel", rest @ ..] => parse_scancel(cmd, rest, user, &jobs, &owned),
        _ => Err(format!(
            "unsupported command '{cmd}'; expected scontrol hold, uhold, release, requeue, \
             requeuehold, suspend, resume, top or update, or scancel"
        )),
    }
}

/// `{id}` placeholders to the case's job ids.
fn strip_braces(v: &str) -> String {
    v.replace(['{', '}'], "")
}

/// Case job words (`{a},{b}`) to submissions.
type JobList<'a> = &'a dyn Fn(&[&str]) -> Result<Vec<u32>, String>;

/// `scancel [--state=S] [--user=U] [--signal=SIG [--batch]] [JOB...]`.
fn parse_scancel(
    cmd: &str,
    rest: &[&str],
    user: Option<&str>,
    jobs: JobList<'_>,
    owned: &dyn Fn(&[u32]) -> bool,
) -> Result<Vec<Action>, String> {
    let (mut state, mut by_user, mut signal, mut batch) = (None, None, None, false);
    let mut named: Vec<&str> = Vec::new();
    let mut it = rest.iter();
    while let Some(&w) = it.next() {
        let (opt, inline) = match w.split_once('=') {
            Some((o, v)) if o.starts_with('-') => (o, Some(v)),
            _ => (w, None),
        };
        let mut value = || -> Result<&str, String> {
            inline
                .or_else(|| it.next().copied())
                .ok_or_else(|| format!("'{opt}' needs a value"))
        };
        match opt {
            "--state" | "-t" => state = Some(gresim_io::build::cancel_state(value()?)?),
            "--user" | "-u" => by_user = Some(value()?.to_string()),
            "--signal" | "-s" => signal = Some(gresim_io::build::signal_number(value()?)?),
            "--batch" | "-b" => batch = true,
            o if o.starts_with('-') => {
                return Err(format!(
                "unsupported scancel option '{o}'; expected --state, --user, --signal or --batch"
            ))
            }
            _ => named.push(w),
        }
    }
    let subs = if named.is_empty() {
        None
    } else {
        Some(jobs(&named)?)
    };
    if let Some(sig) = signal {
        let (Some(subs), None, None) = (subs, state, &by_user) else {
            return Err(format!(
                "'{cmd}': scancel --signal is replayed for named jobs only"
            ));
        };
        return Ok(if owned(&subs) {
            subs.into_iter()
                .map(|sub| Action::Signal {
                    sub,
                    signal: sig,
                    batch,
                })
                .collect()
        } else {
            Vec::new()
        });
    }
    if batch {
        return Err(format!("'{cmd}': --batch without --signal"));
    }
    // A plain user cancels only their own jobs.
    let by_user = by_user.or_else(|| user.map(str::to_string));
    match (subs, state, by_user) {
        (Some(subs), None, None) => {
            Ok(subs.into_iter().map(|sub| Action::Cancel { sub }).collect())
        }
        (None, None, None) => Err(format!("'{cmd}' names no job and no filter")),
        (subs, state, by_user) => Ok(vec![Action::CancelWhere {
            subs,
            state,
            user: by_user.map(Arc::from),
        }]),
    }
}
