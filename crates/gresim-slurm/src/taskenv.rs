//! What each task of a job sees: the Slurm environment after allocation.
//!
//! [`describe`] turns an [`Allocation`] into the per-task environment
//! (gresim-io's `taskenv::job_env` first allocates a parsed batch script on
//! an idle cluster exactly as the scheduler would) (spec §8, §3.7; Slurm's gres_common.c
//! `common_gres_set_env`, env.c):
//!
//! - tasks are laid out in block order: node 0 gets ranks 0…k−1, and so on;
//! - `SLURM_JOB_GPUS` is set for the batch step, from the first node, and srun
//!   tasks inherit it unchanged; each srun task gets `SLURM_STEP_GPUS`, the
//!   global GRES indices it may use on its node;
//! - `CUDA_VISIBLE_DEVICES` holds global GRES indices without
//!   ConstrainDevices, and with it each device's position among the step's
//!   GPUs on the node (Slurm's local device index: GPUs 2,5 → `0,1`);
//! - per-task binding comes from `--gpu-bind`, or `per_task:N` implied by
//!   `--gpus-per-task=N` (22.05: task with local id l gets the step's GPUs
//!   l·N … l·N+N−1 on its node); binding is ignored for single-task steps;
//! - two launch patterns: `srun` runs the job's tasks (one per GPU in the
//!   seed's pattern 1); `torchrun` runs one launcher task per node that sees
//!   every GPU the job has on the node and starts `SLURM_GPUS_ON_NODE`
//!   workers.
//!
//! `MASTER_ADDR` is not set by Slurm: it is what the seed scripts derive,
//! the first host of `scontrol show hostnames $SLURM_JOB_NODELIST`.

use gresim_model::hostlist;
use gresim_model::job::{ArraySpec, JobRequest};
use gresim_model::state::gpu_indices;
use gresim_model::{Allocation, Cluster};
use serde_json::{json, Value};

use crate::sbatch::{self, FilenameCtx, GpuBind, SbatchScript};

/// How the job starts its processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launcher {
    /// `srun prog`: one process per task of the job.
    Srun,
    /// `srun torchrun …` (or deepspeed): one launcher per node, which starts
    /// one worker per GPU of the node.
    Torchrun,
}

impl Launcher {
    pub fn as_str(self) -> &'static str {
        match self {
            Launcher::Srun => "srun",
            Launcher::Torchrun => "torchrun",
        }
    }

    /// The pattern the script's body uses: a per-node launcher (`torchrun`,
    /// `torch.distributed.run`, `deepspeed`, `accelerate launch`) or srun.
    pub fn detect(script: &SbatchScript) -> Launcher {
        let per_node = script.body().any(|(_, l)| {
            let code = l.split('#').next().unwrap_or("");
            [
                "torchrun",
                "torch.distributed.run",
                "deepspeed",
                "accelerate launch",
            ]
            .iter()
            .any(|w| code.contains(w))
        });
        if per_node {
            Launcher::Torchrun
        } else {
            Launcher::Srun
        }
    }
}

/// Settings of `sim env`.
#[derive(Debug, Clone)]
pub struct EnvOptions {
    /// cgroup.conf ConstrainDevices=yes (with task/cgroup).
    pub constrain_devices: bool,
    /// `None`: detect from the script.
    pub launcher: Option<Launcher>,
    /// The job id to show (Slurm's next job id).
    pub job_id: u64,
    /// For arrays: the task to show (default: the first index).
    pub array_task: Option<u32>,
    /// The submitting user, for `%u`.
    pub user: String,
}

impl Default for EnvOptions {
    fn default() -> Self {
        EnvOptions {
            constrain_devices: false,
            launcher: None,
            job_id: 1000,
            array_task: None,
            user: "user".into(),
        }
    }
}

/// One process the job starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskEnv {
    pub node: String,
    pub procid: u32,
    pub localid: u32,
    pub nodeid: u32,
    pub gpus_on_node: u32,
    /// Global GRES indices the task may use (SLURM_STEP_GPUS).
    pub gpus: Vec<u32>,
    /// CUDA_VISIBLE_DEVICES without ConstrainDevices.
    pub cvd_global: String,
    /// CUDA_VISIBLE_DEVICES with ConstrainDevices.
    pub cvd_local: String,
    /// Torchrun: workers this launcher starts and their global ranks.
    pub workers: Option<(u32, u32, u32)>,
    /// Every variable, in a fixed order.
    pub vars: Vec<(String, String)>,
}

/// The job's environment: job-level values and every task.
#[derive(Debug, Clone)]
pub struct JobEnv {
    pub job_id: u64,
    pub name: String,
    pub partition: String,
    pub launcher: Launcher,
    pub constrain_devices: bool,
    pub nodes: Vec<String>,
    pub nodelist: String,
    pub ntasks: u32,
    pub tasks_per_node: String,
    pub master_addr: String,
    pub batch_node: String,
    pub batch_job_gpus: String,
    pub batch_cvd: String,
    pub stdout: String,
    pub stderr: String,
    pub array: Vec<(String, String)>,
    pub tasks: Vec<TaskEnv>,
    /// Things Slurm would log (a task left without a GPU by its binding …).
    pub notes: Vec<String>,
}

/// Slurm's `2(x3),1` form of a per-node count list.
pub fn compress_counts(counts: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < counts.len() {
        let mut j = i;
        while j < counts.len() && counts[j] == counts[i] {
            j += 1;
        }
        if j - i > 1 {
            out.push(format!("{}(x{})", counts[i], j - i));
        } else {
            out.push(counts[i].to_string());
        }
        i = j;
    }
    out.join(",")
}

/// Everything about the job that is not in its request.
#[derive(Debug, Clone)]
pub struct JobFacts<'a> {
    pub name: &'a str,
    pub partition: &'a str,
    pub array: Option<&'a ArraySpec>,
    pub gpu_bind: Option<GpuBind>,
    pub output: Option<&'a str>,
    pub error: Option<&'a str>,
    /// Request echoes: (variable, value), e.g. (`SLURM_GPUS_PER_TASK`, `1`).
    pub echoes: Vec<(String, String)>,
}

/// A device's CUDA_VISIBLE_DEVICES entry: its index, or a MIG identifier
/// (Slurm uses MIG UUIDs; gresim writes a stand-in naming GPU and slice).
fn device_name(
    cluster: &Cluster,
    node: gresim_model::NodeId,
    g: u32,
    local: Option<usize>,
) -> String {
    let n = cluster.node(node);
    match n
        .gpus
        .get(g as usize)
        .and_then(|d| d.mig.map(|m| (d.phys, m)))
    {
        Some((phys, m)) => format!("MIG-{}-GPU{phys}/{}/0", n.name, m.start),
        None => match local {
            Some(l) => l.to_string(),
            None => g.to_string(),
        },
    }
}

/// The per-task environment of `alloc`.
pub fn describe(
    cluster: &Cluster,
    req: &JobRequest,
    alloc: &Allocation,
    facts: &JobFacts<'_>,
    opts: &EnvOptions,
    launcher: Launcher,
) -> Result<JobEnv, String> {
    if alloc.nodes.is_empty() {
        return Err("the allocation has no nodes".into());
    }
    let names: Vec<String> = alloc
        .nodes
        .iter()
        .map(|n| cluster.node(n.node).name.clone())
        .collect();
    let nodelist = hostlist::compress(&names);
    let master_addr = hostlist::expand(&nodelist)
        .ok()
        .and_then(|v| v.into_iter().next())
        .unwrap_or_default();
    let per_node: Vec<u32> = match launcher {
        Launcher::Srun => alloc.nodes.iter().map(|n| n.tasks.max(1)).collect(),
        Launcher::Torchrun => vec![1; alloc.nodes.len()],
    };
    let ntasks: u32 = per_node.iter().sum();
    let tasks_per_node = compress_counts(&per_node);
    let cpus_per_node = compress_counts(&alloc.nodes.iter().map(|n| n.cpus).collect::<Vec<_>>());
    // Array task and job ids: tasks start in index order on an idle cluster;
    // each started task but the last is split off with the next job id.
    let (job_id, array_vars, array_ids) = match facts.array {
        Some(a) => {
            let idx = opts.array_task.unwrap_or(a.indices[0]);
            let Some(pos) = a.indices.iter().position(|&i| i == idx) else {
                return Err(format!("array task {idx} is not in the job's array"));
            };
            let id = if pos + 1 == a.indices.len() {
                opts.job_id
            } else {
                opts.job_id + pos as u64 + 1
            };
            let vars = vec![
                ("SLURM_ARRAY_JOB_ID".to_string(), opts.job_id.to_string()),
                ("SLURM_ARRAY_TASK_ID".to_string(), idx.to_string()),
                (
                    "SLURM_ARRAY_TASK_COUNT".to_string(),
                    a.indices.len().to_string(),
                ),
                ("SLURM_ARRAY_TASK_MIN".to_string(), a.indices[0].to_string()),
                (
                    "SLURM_ARRAY_TASK_MAX".to_string(),
                    a.indices.last().copied().unwrap_or(0).to_string(),
                ),
                ("SLURM_ARRAY_TASK_STEP".to_string(), a.step.to_string()),
            ];
            (id, vars, Some((opts.job_id, idx)))
        }
        None => (opts.job_id, Vec::new(), None),
    };
    let node0 = &alloc.nodes[0];
    let g0: Vec<u32> = node_gpus(node0);
    let batch_job_gpus = join(g0.iter());
    let batch_cvd = if opts.constrain_devices {
        g0.iter()
            .enumerate()
            .map(|(l, &g)| device_name(cluster, node0.node, g, Some(l)))
            .collect::<Vec<_>>()
            .join(",")
    } else {
        g0.iter()
            .map(|&g| device_name(cluster, node0.node, g, None))
            .collect::<Vec<_>>()
            .join(",")
    };
    let fctx = FilenameCtx {
        job_id,
        job_name: facts.name,
        user: &opts.user,
        node: &names[0],
        array: array_ids,
    };
    let default_out = if facts.array.is_some() {
        "slurm-%A_%a.out"
    } else {
        "slurm-%j.out"
    };
    let stdout = sbatch::expand_filename(facts.output.unwrap_or(default_out), &fctx);
    let stderr = match facts.error {
        Some(e) => sbatch::expand_filename(e, &fctx),
        None => stdout.clone(),
    };
    let bind = facts
        .gpu_bind
        .clone()
        .or_else(|| req.gpus_per_task.map(|g| GpuBind::PerTask(g.count.max(1))));
    let mut notes = Vec::new();
    let mut tasks = Vec::new();
    let mut procid = 0u32;
    let mut worker_base = 0u32;
    for (nodeid, (na, &ntask)) in alloc.nodes.iter().zip(&per_node).enumerate() {
        let node = cluster.node(na.node);
        let step: Vec<u32> = node_gpus(na);
        let cores: Vec<u32> = na.cores.iter().collect();
        let tpc = u32::from(node.threads_per_core.max(1));
        let cores_per_task = (req.cpus_per_task.max(1)).div_ceil(tpc).max(1) as usize;
        for localid in 0..ntask {
            let mut usable: Vec<u32> = if launcher == Launcher::Torchrun || ntasks == 1 {
                step.clone()
            } else {
                match &bind {
                    None | Some(GpuBind::None) => step.clone(),
                    Some(GpuBind::Closest) => {
                        let lo = (localid as usize).saturating_mul(cores_per_task);
                        let mine: Vec<u32> = cores
                            .iter()
                            .skip(lo)
                            .take(cores_per_task)
                            .copied()
                            .collect();
                        let mine = if mine.is_empty() { cores.clone() } else { mine };
                        let sockets: Vec<u16> =
                            mine.iter().map(|&c| node.socket_of_core(c)).collect();
                        step.iter()
                            .copied()
                            .filter(|&g| {
                                node.gpus
                                    .get(g as usize)
                                    .and_then(|d| d.socket)
                                    .is_none_or(|s| sockets.contains(&s))
                            })
                            .collect()
                    }
                    Some(GpuBind::Map(ids)) => {
                        let id = ids[localid as usize % ids.len()];
                        let g = if opts.constrain_devices {
                            step.get(id as usize).copied()
                        } else {
                            step.contains(&id).then_some(id)
                        };
                        g.into_iter().collect()
                    }
                    Some(GpuBind::Mask(masks)) => {
                        let m = masks[localid as usize % masks.len()];
                        gpu_indices(m)
                            .filter_map(|b| {
                                let b = u32::from(b);
                                if opts.constrain_devices {
                                    step.get(b as usize).copied()
                                } else {
                                    step.contains(&b).then_some(b)
                                }
                            })
                            .collect()
                    }
                    Some(GpuBind::Single(n)) => {
                        if step.is_empty() {
                            Vec::new()
                        } else {
                            vec![step[(localid / n) as usize % step.len()]]
                        }
                    }
                    Some(GpuBind::PerTask(n)) => step
                        .iter()
                        .skip((localid as usize).saturating_mul(*n as usize))
                        .take(*n as usize)
                        .copied()
                        .collect(),
                }
            };
            if usable.is_empty() && !step.is_empty() {
                notes.push(format!(
                    "task {procid} on {}: its GPU binding leaves it no GPU; Slurm binds it to the first GPU and logs an error",
                    node.name
                ));
                usable = vec![step[0]];
            }
            let cvd_global = usable
                .iter()
                .map(|&g| device_name(cluster, na.node, g, None))
                .collect::<Vec<_>>()
                .join(",");
            let cvd_local = usable
                .iter()
                .map(|&g| {
                    let l = step.iter().position(|&s| s == g).unwrap_or(0);
                    device_name(cluster, na.node, g, Some(l))
                })
                .collect::<Vec<_>>()
                .join(",");
            let gpus_on_node = step.len() as u32;
            let workers = (launcher == Launcher::Torchrun).then(|| {
                let w = (
                    gpus_on_node,
                    worker_base,
                    worker_base + gpus_on_node.saturating_sub(1),
                );
                worker_base += gpus_on_node;
                w
            });
            let mut vars: Vec<(String, String)> = Vec::new();
            let mut set = |k: &str, v: String| vars.push((k.to_string(), v));
            set("SLURM_JOB_ID", job_id.to_string());
            set("SLURM_JOB_NAME", facts.name.to_string());
            set("SLURM_JOB_PARTITION", facts.partition.to_string());
            set("SLURM_JOB_NODELIST", nodelist.clone());
            set("SLURM_NODELIST", nodelist.clone());
            set("SLURM_JOB_NUM_NODES", alloc.nodes.len().to_string());
            set("SLURM_NNODES", alloc.nodes.len().to_string());
            set("SLURM_NTASKS", ntasks.to_string());
            set("SLURM_TASKS_PER_NODE", tasks_per_node.clone());
            set("SLURM_JOB_CPUS_PER_NODE", cpus_per_node.clone());
            set("SLURM_CPUS_ON_NODE", na.cpus.to_string());
            set("SLURMD_NODENAME", node.name.clone());
            set("SLURM_PROCID", procid.to_string());
            set("SLURM_LOCALID", localid.to_string());
            set("SLURM_NODEID", nodeid.to_string());
            if gpus_on_node > 0 {
                set("SLURM_GPUS_ON_NODE", gpus_on_node.to_string());
                set("SLURM_STEP_GPUS", join(usable.iter()));
                set(
                    "CUDA_VISIBLE_DEVICES",
                    if opts.constrain_devices {
                        cvd_local.clone()
                    } else {
                        cvd_global.clone()
                    },
                );
            }
            if !batch_job_gpus.is_empty() {
                set("SLURM_JOB_GPUS", batch_job_gpus.clone());
            }
            if let Some(sa) = na.share {
                for (k, v) in share_vars(cluster, na.node, sa) {
                    set(k, v);
                }
            }
            for (k, v) in &facts.echoes {
                set(k, v.clone());
            }
            for (k, v) in &array_vars {
                set(k, v.clone());
            }
            set("MASTER_ADDR", master_addr.clone());
            tasks.push(TaskEnv {
                node: node.name.clone(),
                procid,
                localid,
                nodeid: nodeid as u32,
                gpus_on_node,
                gpus: usable,
                cvd_global,
                cvd_local,
                workers,
                vars,
            });
            procid += 1;
        }
    }
    Ok(JobEnv {
        job_id,
        name: facts.name.to_string(),
        partition: facts.partition.to_string(),
        launcher,
        constrain_devices: opts.constrain_devices,
        nodes: names.clone(),
        nodelist,
        ntasks,
        tasks_per_node,
        master_addr,
        batch_node: names[0].clone(),
        batch_job_gpus,
        batch_cvd,
        stdout,
        stderr,
        array: array_vars,
        tasks,
        notes,
    })
}

/// The GPUs a job uses on one node: its whole GPUs, or the GPU its
/// gres/shard or gres/mps shares are on (Slurm sets the GPU variables for
/// shares as for a GPU: gres_common_gpu_set_env).
fn node_gpus(na: &gresim_model::NodeAlloc) -> Vec<u32> {
    let mut v: Vec<u32> = gpu_indices(na.gpus).map(u32::from).collect();
    if let Some(sa) = na.share {
        v.push(u32::from(sa.gpu));
        v.sort_unstable();
        v.dedup();
    }
    v
}

/// What shares add: `SLURM_SHARDS_ON_NODE` (gres_shard.c) or
/// `CUDA_MPS_ACTIVE_THREAD_PERCENTAGE` (gres_mps.c: count × 100 / the
/// GPU's mps count, at least 1).
pub fn share_vars(
    cluster: &Cluster,
    node: gresim_model::NodeId,
    sa: gresim_model::shares::ShareAlloc,
) -> Vec<(&'static str, String)> {
    use gresim_model::shares::{mps_percentage, ShareKind};
    match cluster.node_shares(node) {
        Some(ns) if ns.kind == ShareKind::Shard => {
            vec![("SLURM_SHARDS_ON_NODE", sa.count.to_string())]
        }
        Some(ns) => vec![(
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
            mps_percentage(sa.count, ns.capacity(sa.gpu)).to_string(),
        )],
        None => Vec::new(),
    }
}

fn join<'a>(it: impl Iterator<Item = &'a u32>) -> String {
    it.map(u32::to_string).collect::<Vec<_>>().join(",")
}

impl JobEnv {
    /// A readable table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let pattern = match self.launcher {
            Launcher::Srun => "srun: one process per task",
            Launcher::Torchrun => "torchrun: one launcher per node, one worker per GPU",
        };
        s.push_str(&format!(
            "job {} '{}' in partition {} ({pattern}; ConstrainDevices={})\n",
            self.job_id,
            self.name,
            self.partition,
            if self.constrain_devices { "yes" } else { "no" }
        ));
        s.push_str(&format!(
            "SLURM_JOB_NODELIST={}  SLURM_JOB_NUM_NODES={}  SLURM_NTASKS={}  SLURM_TASKS_PER_NODE={}\n",
            self.nodelist,
            self.nodes.len(),
            self.ntasks,
            self.tasks_per_node
        ));
        if !self.array.is_empty() {
            let a: Vec<String> = self.array.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&a.join("  "));
            s.push('\n');
        }
        s.push_str(&format!(
            "MASTER_ADDR={}  (first host of `scontrol show hostnames $SLURM_JOB_NODELIST`)\n",
            self.master_addr
        ));
        if self.batch_job_gpus.is_empty() {
            s.push_str(&format!("batch step on {}: no GPUs\n", self.batch_node));
        } else {
            s.push_str(&format!(
                "batch step on {}: SLURM_JOB_GPUS={}  CUDA_VISIBLE_DEVICES={}\n",
                self.batch_node, self.batch_job_gpus, self.batch_cvd
            ));
        }
        s.push_str(&format!(
            "stdout {}\nstderr {}\n\n",
            self.stdout, self.stderr
        ));
        let mut rows: Vec<Vec<String>> = vec![vec![
            "NODE".into(),
            "PROCID".into(),
            "LOCALID".into(),
            "NODEID".into(),
            "GPUS_ON_NODE".into(),
            "STEP_GPUS".into(),
            format!(
                "CVD(global){}",
                if self.constrain_devices { "" } else { "*" }
            ),
            format!(
                "CVD(constrained){}",
                if self.constrain_devices { "*" } else { "" }
            ),
        ]];
        if self.launcher == Launcher::Torchrun {
            rows[0].push("NPROC_PER_NODE".into());
            rows[0].push("WORKER_RANKS".into());
        }
        let dash = |v: &str| {
            if v.is_empty() {
                "-".to_string()
            } else {
                v.to_string()
            }
        };
        for t in &self.tasks {
            let mut r = vec![
                t.node.clone(),
                t.procid.to_string(),
                t.localid.to_string(),
                t.nodeid.to_string(),
                t.gpus_on_node.to_string(),
                dash(&join(t.gpus.iter())),
                dash(&t.cvd_global),
                dash(&t.cvd_local),
            ];
            if let Some((n, a, b)) = t.workers {
                r.push(n.to_string());
                r.push(if n == 0 {
                    "-".into()
                } else {
                    format!("{a}-{b}")
                });
            }
            rows.push(r);
        }
        let ncol = rows[0].len();
        let widths: Vec<usize> = (0..ncol)
            .map(|c| {
                rows.iter()
                    .map(|r| r.get(c).map_or(0, |x| x.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for r in &rows {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, x)| format!("{x:<w$}", w = widths[c]))
                .collect();
            s.push_str(line.join("  ").trim_end());
            s.push('\n');
        }
        s.push_str("(* = the CUDA_VISIBLE_DEVICES tasks see; --constrain-devices switches)\n");
        // gres/shard and gres/mps: what each node's tasks get besides the GPU.
        let mut seen: Vec<&str> = Vec::new();
        for t in &self.tasks {
            for (k, v) in &t.vars {
                if (k == "SLURM_SHARDS_ON_NODE" || k == "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")
                    && !seen.contains(&t.node.as_str())
                {
                    seen.push(&t.node);
                    s.push_str(&format!("shares on {}: {k}={v}\n", t.node));
                }
            }
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s
    }

    /// The same as JSON.
    pub fn to_json(&self) -> Value {
        let tasks: Vec<Value> = self
            .tasks
            .iter()
            .map(|t| {
                let env: serde_json::Map<String, Value> = t
                    .vars
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect();
                let mut o = json!({
                    "node": t.node,
                    "procid": t.procid,
                    "localid": t.localid,
                    "nodeid": t.nodeid,
                    "gpus_on_node": t.gpus_on_node,
                    "step_gpus": t.gpus,
                    "cuda_visible_devices_global": t.cvd_global,
                    "cuda_visible_devices_constrained": t.cvd_local,
                    "env": env,
                });
                if let Some((n, a, _)) = t.workers {
                    o["nproc_per_node"] = json!(n);
                    o["worker_ranks"] = json!((a..a + n).collect::<Vec<_>>());
                }
                o
            })
            .collect();
        json!({
            "job_id": self.job_id,
            "name": self.name,
            "partition": self.partition,
            "launcher": self.launcher.as_str(),
            "constrain_devices": self.constrain_devices,
            "nodes": self.nodes,
            "SLURM_JOB_NODELIST": self.nodelist,
            "SLURM_JOB_NUM_NODES": self.nodes.len(),
            "SLURM_NTASKS": self.ntasks,
            "SLURM_TASKS_PER_NODE": self.tasks_per_node,
            "MASTER_ADDR": self.master_addr,
            "batch": {
                "node": self.batch_node,
                "SLURM_JOB_GPUS": self.batch_job_gpus,
                "CUDA_VISIBLE_DEVICES": self.batch_cvd,
            },
            "array": self.array.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<serde_json::Map<_, _>>(),
            "stdout": self.stdout,
            "stderr": self.stderr,
            "tasks": tasks,
            "notes": self.notes,
        })
    }
}

#[cfg(test)]
mod tests;
