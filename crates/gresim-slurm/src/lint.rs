//! `sim lint`: the pitfalls of the seed documents, found in a batch script.
//!
//! Each [`Finding`] names a rule, the script line, what is wrong, why it
//! matters and what to write instead. The checks read the parsed options
//! ([`SbatchScript`]) and the script body line by line; with a cluster they
//! also check GPU types and partitions. Rules (ids are stable):
//!
//! | id | finding |
//! |---|---|
//! | `no-gpu-request` | a GPU partition, but no GPU request |
//! | `tasks-exceed-gpus` | more tasks per node than GPUs per node |
//! | `cuda-visible-devices-set` | CUDA_VISIBLE_DEVICES set by hand |
//! | `no-master-addr` | a multi-node job with no MASTER_ADDR |
//! | `hardcoded-gpu-count` | `--nproc_per_node=8`, `--num_gpus=8`, `torch.cuda.device_count() == 8` disagreeing with the request |
//! | `alloc-conf-overwritten` | a second `export PYTORCH_CUDA_ALLOC_CONF=` overwriting the first |
//! | `mig-distributed` | MIG slices for a multi-GPU or multi-node job (typed, or, with a cluster, an untyped multi-GPU request in a partition that has MIG slices) |
//! | `mig-layout-unverified` | a MIG type that lives on GPUs whose layout is not among NVIDIA's published combinations (with a cluster) |
//! | `vram-exceeds-gpu` | `#GRESIM vram=` at or above the GPU type's memory |
//! | `no-nccl-socket-ifname` | a multi-node job without NCCL_SOCKET_IFNAME |
//! | `unknown-gpu-type` | a GPU type the cluster (or the partition) does not have |
//! | `gpu-request-mixed` | typed and untyped GPU options together, which sbatch rejects |
//! | `gpu-counts-contradict` | tasks per node × GPUs per task above the GPUs per node the script asks for: no node can hold it |
//! | `no-node-fits` | more GPUs per node than any node of the partition (or cluster) has (with a cluster) |

use gresim_model::catalog::GPU_MODELS;
use gresim_model::units::parse_count;
use gresim_model::Cluster;

use crate::sbatch::SbatchScript;
use crate::slurm_opts;
use crate::NumOrStr;

/// One warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: &'static str,
    /// 1-based script line; 0 for a command-line option.
    pub line: usize,
    pub message: String,
    pub why: String,
    pub fix: String,
}

impl Finding {
    /// `file:line: warning[rule]: message` plus the why and the fix.
    pub fn render(&self, file: &str) -> String {
        let loc = if self.line == 0 {
            format!("{file} (command line)")
        } else {
            format!("{file}:{}", self.line)
        };
        format!(
            "{loc}: warning[{}]: {}\n  why: {}\n  fix: {}\n",
            self.rule, self.message, self.why, self.fix
        )
    }
}

/// A GPU request option: which option, its type (if any) and count.
#[derive(Debug, Clone)]
struct GpuOpt {
    opt: &'static str,
    ty: Option<String>,
    count: u32,
    line: usize,
}

fn count_of(s: &str) -> u32 {
    parse_count(s)
        .ok()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}

/// `[type:]N` → (type, N).
fn typed_count(s: &str) -> (Option<String>, u32) {
    let t = s.trim();
    let t = t.strip_prefix("gpu:").unwrap_or(t);
    match t.rsplit_once(':') {
        Some((ty, n)) => (Some(ty.to_string()), count_of(n)),
        None => (None, count_of(t)),
    }
}

fn gpu_opts(s: &SbatchScript) -> Vec<GpuOpt> {
    let mut out = Vec::new();
    let line = |o: &str| s.option_line(o).unwrap_or(0);
    if let Some(g) = &s.job.gres {
        for tok in g.split(',').map(str::trim) {
            let tok = tok.strip_prefix("gres/").unwrap_or(tok);
            let mut parts: Vec<&str> = tok.split(':').collect();
            if parts.first() != Some(&"gpu") {
                continue;
            }
            parts.remove(0);
            let (ty, n) = match parts.as_slice() {
                [] => (None, 1),
                [c] if c.starts_with(|ch: char| ch.is_ascii_digit()) => (None, count_of(c)),
                [t] => (Some(t.to_string()), 1),
                [t, c] => (Some(t.to_string()), count_of(c)),
                _ => continue,
            };
            if n > 0 {
                out.push(GpuOpt {
                    opt: "gres",
                    ty,
                    count: n,
                    line: line("gres"),
                });
            }
        }
    }
    for (opt, v) in [
        ("gpus-per-node", &s.job.gpus_per_node),
        ("gpus-per-task", &s.job.gpus_per_task),
        ("gpus", &s.job.gpus),
    ] {
        if let Some(v) = v {
            let (ty, n) = typed_count(&v.as_string());
            out.push(GpuOpt {
                opt,
                ty,
                count: n,
                line: line(opt),
            });
        }
    }
    out
}

/// The request in numbers, as far as the script says.
struct Shape {
    nodes: u32,
    tasks_per_node: Option<u32>,
    /// GPUs per node the job gets (0: none requested).
    gpus_per_node: u32,
    gpus: Vec<GpuOpt>,
}

fn shape(s: &SbatchScript) -> Shape {
    let j = &s.job;
    let num = |v: &Option<u64>| v.and_then(|x| u32::try_from(x).ok());
    let mut nodes = j
        .nodes
        .as_ref()
        .and_then(|n| slurm_opts::parse_nodes(&n.as_string()).ok())
        .map_or(1, |(a, _)| a);
    let (ntasks, tpn) = (num(&j.ntasks), num(&j.ntasks_per_node));
    if j.nodes.is_none() {
        if let (Some(n), Some(t)) = (ntasks, tpn) {
            if t > 0 {
                nodes = n.div_ceil(t).max(1);
            }
        }
    }
    let tasks_per_node = tpn.or_else(|| ntasks.map(|n| n.div_ceil(nodes.max(1))));
    let gpus = gpu_opts(s);
    let mut per_node: u32 = gpus
        .iter()
        .filter(|g| g.opt == "gres" || g.opt == "gpus-per-node")
        .map(|g| g.count)
        .max()
        .unwrap_or(0);
    if per_node == 0 {
        if let Some(t) = gpus.iter().find(|g| g.opt == "gpus-per-task") {
            per_node = t.count.saturating_mul(tasks_per_node.unwrap_or(1));
        } else if let Some(t) = gpus.iter().find(|g| g.opt == "gpus") {
            per_node = t.count.div_ceil(nodes.max(1));
        }
    }
    Shape {
        nodes,
        tasks_per_node,
        gpus_per_node: per_node,
        gpus,
    }
}

/// The code part of a body line: `None` for comments.
fn code(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    Some(match line.find(" #") {
        Some(i) => &line[..i],
        None => line,
    })
}

/// Whether `code` assigns `var` (`export VAR=`, `VAR=…`, `env VAR=`, `os.environ["VAR"] =`).
fn assigns(code: &str, var: &str) -> bool {
    let pat = format!("{var}=");
    let mut from = 0;
    while let Some(i) = code[from..].find(&pat) {
        let at = from + i;
        let before = code[..at].chars().next_back();
        if before.is_none_or(|c| c.is_whitespace() || c == ';' || c == '(' || c == '&' || c == '|')
        {
            return true;
        }
        from = at + pat.len();
    }
    code.contains(&format!("environ[\"{var}\"]")) || code.contains(&format!("environ['{var}']"))
}

/// The first number after `key` followed by `=` or whitespace.
fn number_after(code: &str, key: &str) -> Option<(u32, String)> {
    let i = code.find(key)?;
    let rest = &code[i + key.len()..];
    let rest2 = rest.strip_prefix('=').or_else(|| rest.strip_prefix(' '))?;
    let digits: String = rest2
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n = digits.parse().ok()?;
    Some((n, format!("{key}{}{digits}", &rest[..1])))
}

/// GPU memory of a type name (MiB): the cluster's, else the catalog's
/// smallest model with that short name, else a MIG name's `Ngb`.
fn type_memory(ty: &str, cluster: Option<&Cluster>) -> Option<u64> {
    if let Some(c) = cluster {
        if let Some(id) = c.gpu_type_id(ty) {
            return Some(c.gpu_type(id).memory_mib());
        }
    }
    if let Some(gb) = mig_gb(ty) {
        return Some(gb * 1024);
    }
    GPU_MODELS
        .iter()
        .filter(|m| m.short.eq_ignore_ascii_case(ty))
        .map(|m| m.memory_mib)
        .min()
}

/// `a100_1g.5gb` → 5: the memory of a MIG type name.
fn mig_gb(ty: &str) -> Option<u64> {
    let (_, prof) = ty.rsplit_once('_')?;
    let (g, mem) = prof.split_once("g.")?;
    g.parse::<u32>().ok()?;
    mem.strip_suffix("gb")?.parse().ok()
}

fn is_mig(ty: &str, cluster: Option<&Cluster>) -> bool {
    if let Some(c) = cluster {
        if let Some(id) = c.gpu_type_id(ty) {
            return c.gpu_type(id).mig.is_some();
        }
    }
    mig_gb(ty).is_some()
}

/// A request no node can hold: the script's own GPU numbers contradicting
/// each other, or (with a cluster) more GPUs per node than its largest node
/// in the job's partition has.
fn impossible_shape(
    s: &SbatchScript,
    sh: &Shape,
    within: Option<(&Cluster, Option<gresim_model::PartId>)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let per_task = sh
        .gpus
        .iter()
        .find(|g| g.opt == "gpus-per-task" && g.count > 0);
    let per_node = sh
        .gpus
        .iter()
        .filter(|g| (g.opt == "gres" || g.opt == "gpus-per-node") && g.count > 0)
        .max_by_key(|g| g.count);
    let mut need = per_node.map_or(0, |g| g.count);
    if let (Some(t), Some(tpn)) = (per_task, sh.tasks_per_node) {
        let tasks_need = t.count.saturating_mul(tpn);
        if let Some(n) = per_node.filter(|n| tasks_need > n.count) {
            let tpn_opt = if s.option_line("ntasks-per-node").is_some() {
                format!("--ntasks-per-node={tpn}")
            } else {
                format!("{tpn} tasks per node")
            };
            out.push(Finding {
                rule: "gpu-counts-contradict",
                line: t.line,
                message: format!(
                    "{tpn_opt} × --gpus-per-task={} needs {tasks_need} GPUs per node, but --{} asks for {} per node",
                    t.count, n.opt, n.count
                ),
                why: "every task on a node needs its own GPUs, and the per-node count caps them: no node can hold the request, so the job is refused or never starts".into(),
                fix: format!(
                    "ask for {tasks_need} GPUs per node, or run {} task(s) per node",
                    (n.count / t.count).max(1)
                ),
            });
        }
        need = need.max(tasks_need);
    }
    if let Some((c, part)) = within {
        let most = match part {
            Some(p) => c
                .partition(p)
                .nodes
                .iter()
                .map(|n| c.node(*n).gpus.len())
                .max(),
            None => c.nodes.iter().map(|n| n.gpus.len()).max(),
        }
        .unwrap_or(0);
        if need > 0 && need as usize > most {
            let place = match part {
                Some(p) => format!("partition '{}'", c.partition(p).name),
                None => "the cluster".to_string(),
            };
            out.push(Finding {
                rule: "no-node-fits",
                line: per_node.or(per_task).map_or(0, |g| g.line),
                message: format!(
                    "the job needs {need} GPUs on each node, but no node of {place} has more than {most}"
                ),
                why: "a node must hold its share of the request; Slurm refuses the job (Requested node configuration is not available)".into(),
                fix: format!("ask for at most {most} GPUs per node and spread the work over more nodes"),
            });
        }
    }
    out
}

/// Lints a parsed script; `cluster` adds the checks that need one.
pub fn lint(s: &SbatchScript, cluster: Option<&Cluster>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let sh = shape(s);
    let body: Vec<(usize, &str)> = s.body().filter_map(|(n, l)| Some((n, code(l)?))).collect();
    let first_directive = s
        .options
        .iter()
        .map(|o| o.line)
        .filter(|l| *l > 0)
        .min()
        .unwrap_or(1);
    let wants_gpus =
        !sh.gpus.is_empty() || crate::shares_conf::gres_has_shares(s.job.gres.as_deref());

    // The partition the job runs in, by name, and whether it is a GPU partition.
    let pname: Option<String> = match &s.job.partition {
        Some(p) => p.split(',').next().map(|x| x.trim().to_string()),
        None => cluster.and_then(|c| c.default_partition().map(|p| c.partition(p).name.clone())),
    };
    let part = cluster.and_then(|c| {
        pname
            .as_deref()
            .and_then(|n| c.partition_id(n))
            .map(|p| (c, p))
    });
    let gpu_partition = match part {
        Some((c, p)) => {
            let nodes = &c.partition(p).nodes;
            !nodes.is_empty() && nodes.iter().all(|n| !c.node(*n).gpus.is_empty())
        }
        None => pname
            .as_deref()
            .is_some_and(|n| n.to_ascii_lowercase().contains("gpu")),
    };
    if gpu_partition && !wants_gpus {
        let p = pname.clone().unwrap_or_default();
        out.push(Finding {
            rule: "no-gpu-request",
            line: s.option_line("partition").unwrap_or(first_directive),
            message: format!("the job runs in GPU partition '{p}' but requests no GPU"),
            why: "Slurm allocates GPUs only on request: the job lands on a GPU node, CUDA_VISIBLE_DEVICES is empty and PyTorch silently falls back to the CPU".into(),
            fix: "add #SBATCH --gres=gpu:N (or --gpus-per-node=N)".into(),
        });
    }

    if let Some(tpn) = sh.tasks_per_node {
        let per_task = sh.gpus.iter().any(|g| g.opt == "gpus-per-task");
        if wants_gpus && !per_task && sh.gpus_per_node > 0 && tpn > sh.gpus_per_node {
            out.push(Finding {
                rule: "tasks-exceed-gpus",
                line: s
                    .option_line("ntasks-per-node")
                    .or_else(|| s.option_line("ntasks"))
                    .unwrap_or(first_directive),
                message: format!(
                    "{tpn} tasks per node but {} GPU(s) per node",
                    sh.gpus_per_node
                ),
                why: "with one process per task, the extra tasks have no GPU of their own: they share GPUs or fail".into(),
                fix: format!(
                    "match them: --ntasks-per-node={} (one task per GPU), or add --gpus-per-task=1",
                    sh.gpus_per_node
                ),
            });
        }
    }

    out.extend(impossible_shape(
        s,
        &sh,
        part.map(|(c, p)| (c, Some(p)))
            .or(cluster.map(|c| (c, None))),
    ));

    for &(n, c) in &body {
        if assigns(c, "CUDA_VISIBLE_DEVICES") {
            out.push(Finding {
                rule: "cuda-visible-devices-set",
                line: n,
                message: "CUDA_VISIBLE_DEVICES is set by hand".into(),
                why: "Slurm sets it to the GPUs it allocated; overriding it makes the job use GPUs it was not given (another job's) or hides its own".into(),
                fix: "remove the assignment; request the GPUs with --gres/--gpus-per-task and let Slurm set CUDA_VISIBLE_DEVICES".into(),
            });
        }
    }

    let multi_node = sh.nodes > 1;
    let launch = |pats: &[&str]| {
        body.iter()
            .find(|(_, c)| pats.iter().any(|p| c.contains(p)))
            .map(|(n, _)| *n)
    };
    let distributed = launch(&[
        "torchrun",
        "torch.distributed",
        "deepspeed",
        "accelerate",
        "python",
    ]);
    if multi_node {
        if let Some(launch_line) = distributed {
            let launch_line =
                launch(&["srun", "torchrun", "deepspeed", "accelerate"]).unwrap_or(launch_line);
            if !body.iter().any(|(_, c)| assigns(c, "MASTER_ADDR")) {
                out.push(Finding {
                    rule: "no-master-addr",
                    line: launch_line,
                    message: format!("a {}-node job with no MASTER_ADDR", sh.nodes),
                    why: "without a master address the processes on different nodes cannot find each other and distributed training hangs at init".into(),
                    fix: "before the launch: export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)".into(),
                });
            }
            if !body.iter().any(|(_, c)| assigns(c, "NCCL_SOCKET_IFNAME")) {
                out.push(Finding {
                    rule: "no-nccl-socket-ifname",
                    line: launch_line,
                    message: format!("a {}-node job without NCCL_SOCKET_IFNAME", sh.nodes),
                    why: "NCCL may pick the wrong network interface between nodes (docker0, a management Ethernet): 'NCCL error: unhandled system error / timeout', or training 10x slower".into(),
                    fix: "export NCCL_SOCKET_IFNAME=ib0 (your cluster's inter-node interface) before the launch".into(),
                });
            }
        }
    }

    for &(n, c) in &body {
        for key in [
            "--nproc_per_node",
            "--nproc-per-node",
            "--num_gpus",
            "--num-gpus",
        ] {
            if let Some((k, text)) = number_after(c, key) {
                if k != sh.gpus_per_node {
                    out.push(hardcoded(n, &text, k, sh.gpus_per_node));
                }
            }
        }
        if let Some(i) = c.find("device_count()") {
            let rest = c[i + "device_count()".len()..].trim_start();
            let rest = ["==", "!=", ">=", "<="]
                .iter()
                .find_map(|op| rest.strip_prefix(op));
            if let Some(r) = rest {
                let digits: String = r
                    .trim_start()
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(k) = digits.parse::<u32>() {
                    if k != sh.gpus_per_node {
                        out.push(hardcoded(
                            n,
                            &format!("torch.cuda.device_count() == {k}"),
                            k,
                            sh.gpus_per_node,
                        ));
                    }
                }
            }
        }
    }

    let alloc_conf: Vec<(usize, &str)> = body
        .iter()
        .filter(|(_, c)| assigns(c, "PYTORCH_CUDA_ALLOC_CONF"))
        .copied()
        .collect();
    if let Some(&(first, _)) = alloc_conf.first() {
        for &(n, c) in alloc_conf.iter().skip(1) {
            if !c.contains("$PYTORCH_CUDA_ALLOC_CONF") && !c.contains("${PYTORCH_CUDA_ALLOC_CONF") {
                out.push(Finding {
                    rule: "alloc-conf-overwritten",
                    line: n,
                    message: format!("PYTORCH_CUDA_ALLOC_CONF is set again here, overwriting line {first}"),
                    why: "each export replaces the whole variable: only the last setting takes effect".into(),
                    fix: "combine the settings in one export, comma-separated: export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512".into(),
                });
            }
        }
    }

    let mig: Vec<&GpuOpt> = sh
        .gpus
        .iter()
        .filter(|g| g.ty.as_deref().is_some_and(|t| is_mig(t, cluster)))
        .collect();
    if let Some(m) = mig.first() {
        let total: u32 = mig.iter().map(|g| g.count).sum();
        if multi_node || total > 1 || sh.gpus_per_node > 1 {
            out.push(Finding {
                rule: "mig-distributed",
                line: m.line,
                message: format!(
                    "MIG slices ({}) for a {} job",
                    m.ty.clone().unwrap_or_default(),
                    if multi_node { "multi-node" } else { "multi-GPU" }
                ),
                why: "MIG instances cannot use NVLink with each other (nor peer-to-peer), so the collectives of distributed training crawl over PCIe/host memory or fail".into(),
                fix: "request whole GPUs for distributed training (--gres=gpu:a100:N); keep MIG for single-process jobs (inference, notebooks, small sweeps)".into(),
            });
        }
    }

    // An untyped multi-GPU request may get MIG slices where the partition has some.
    if mig.is_empty() && (multi_node || sh.gpus_per_node > 1) {
        if let (Some((c, p)), Some(u)) = (part, sh.gpus.iter().find(|g| g.ty.is_none())) {
            let mig_types: Vec<String> = {
                let mut v: Vec<String> = Vec::new();
                for n in &c.partition(p).nodes {
                    for d in &c.node(*n).gpus {
                        let t = c.gpu_type(d.ty);
                        if t.mig.is_some() && !v.contains(&t.name) {
                            v.push(t.name.clone());
                        }
                    }
                }
                v
            };
            if !mig_types.is_empty() {
                out.push(Finding {
                    rule: "mig-distributed",
                    line: u.line,
                    message: format!(
                        "an untyped request for {} GPU(s) per node in partition '{}', which has MIG slices ({})",
                        sh.gpus_per_node.max(1),
                        c.partition(p).name,
                        mig_types.join(", ")
                    ),
                    why: "Slurm may give an untyped request MIG instances; MIG instances cannot use NVLink with each other (nor peer-to-peer), so a multi-GPU or multi-node job on them crawls or fails".into(),
                    fix: "ask for whole GPUs by type (--gres=gpu:a100:N) or pick a partition without MIG nodes".into(),
                });
            }
        }
    }

    // MIG types that live on GPUs whose layout NVIDIA does not publish.
    if let Some(c) = cluster {
        let unverified = gresim_model::mig::layout_findings(c);
        if !unverified.is_empty() {
            for m in &mig {
                let Some(t) = m.ty.as_deref() else { continue };
                let Some(id) = c.gpu_type_id(t) else { continue };
                let hit = unverified.iter().find(|f| {
                    f.illegal.is_none()
                        && c.node(f.node)
                            .gpus
                            .iter()
                            .any(|d| d.phys == f.phys && d.ty == id)
                });
                if let Some(f) = hit {
                    out.push(Finding {
                        rule: "mig-layout-unverified",
                        line: m.line,
                        message: format!(
                            "'{t}' slices live on GPUs with MIG layout {} ({} GPU {} of {}), which is not one of NVIDIA's published combinations",
                            f.layout,
                            f.model,
                            f.phys,
                            c.node(f.node).name
                        ),
                        why: "the slice model admits the layout, but NVIDIA lists the supported combinations per GPU and the driver may refuse others: verify on hardware that these instances can be created".into(),
                        fix: "use a published layout (e.g. 3g+2g+1g+1g or 7×1g on an A100), or check with nvidia-smi mig -cgi on the node".into(),
                    });
                }
            }
        }
    }

    if let Some(vram) = s.vram_mib {
        let line = s
            .gresim
            .iter()
            .rev()
            .find(|d| d.key == "vram")
            .map_or(0, |d| d.line);
        let mut mems: Vec<(String, u64)> = sh
            .gpus
            .iter()
            .filter_map(|g| g.ty.as_ref())
            .filter_map(|t| type_memory(t, cluster).map(|m| (t.clone(), m)))
            .collect();
        if mems.is_empty() {
            if let Some((c, p)) = part {
                if let Some((t, m)) = c
                    .partition(p)
                    .nodes
                    .iter()
                    .flat_map(|n| c.node(*n).gpus.iter())
                    .map(|d| (c.gpu_type(d.ty).name.clone(), c.gpu_type(d.ty).memory_mib()))
                    .min_by_key(|(_, m)| *m)
                {
                    mems.push((t, m));
                }
            }
        }
        if let Some((t, m)) = mems.into_iter().min_by_key(|(_, m)| *m) {
            if vram >= m {
                out.push(Finding {
                    rule: "vram-exceeds-gpu",
                    line,
                    message: format!(
                        "the job declares {} MiB of VRAM but a '{t}' GPU has {m} MiB",
                        vram
                    ),
                    why: "Slurm does not track GPU memory: the job starts and dies with 'CUDA out of memory' (the CUDA context and NCCL buffers need room too, so a need equal to the GPU's memory does not fit either)".into(),
                    fix: "request a GPU type with more memory (e.g. --gres=gpu:h100:N or an 80GB A100), or shard the model (FSDP/DeepSpeed ZeRO-3), or cut the batch size".into(),
                });
            }
        }
    }

    if let Some(c) = cluster {
        for g in &sh.gpus {
            let Some(t) = &g.ty else { continue };
            match c.gpu_type_id(t) {
                None => {
                    let known: Vec<&str> = c.gpu_types.iter().map(|x| x.name.as_str()).collect();
                    out.push(Finding {
                        rule: "unknown-gpu-type",
                        line: g.line,
                        message: format!("--{} asks for GPU type '{t}', which the cluster does not have", g.opt),
                        why: "sbatch refuses the job ('Requested node configuration is not available'), or it pends forever with ReqNodeNotAvail".into(),
                        fix: format!("use one of the cluster's types: {}", if known.is_empty() { "none (the cluster has no GPUs)".to_string() } else { known.join(", ") }),
                    });
                }
                Some(id) => {
                    if let Some((c, p)) = part {
                        let has = c
                            .partition(p)
                            .nodes
                            .iter()
                            .any(|n| c.node(*n).gpus.iter().any(|d| d.ty == id));
                        if !has {
                            out.push(Finding {
                                rule: "unknown-gpu-type",
                                line: g.line,
                                message: format!("partition '{}' has no '{t}' GPUs", c.partition(p).name),
                                why: "the job can never start in this partition: sbatch refuses it".into(),
                                fix: "pick the partition that holds these GPUs (-p), or another GPU type".into(),
                            });
                        }
                    }
                }
            }
        }
    }

    let typed = sh.gpus.iter().find(|g| g.ty.is_some());
    let untyped = sh.gpus.iter().find(|g| g.ty.is_none());
    if let (Some(t), Some(u)) = (typed, untyped) {
        let ty = t.ty.clone().unwrap_or_default();
        let later = if u.line >= t.line { u } else { t };
        out.push(Finding {
            rule: "gpu-request-mixed",
            line: later.line,
            message: format!(
                "--{} gives GPU type '{ty}' but --{} gives none",
                t.opt, u.opt
            ),
            why: "sbatch (22.05-23.11) refuses a job that asks for the same GRES with and without a type: 'Invalid GRES specification (with and without type identification)'".into(),
            fix: format!(
                "give the type everywhere (--{}={ty}:{}) or drop one of the options",
                u.opt, u.count
            ),
        });
    }

    out.sort_by(|a, b| a.line.cmp(&b.line).then(a.rule.cmp(b.rule)));
    out
}

fn hardcoded(line: usize, text: &str, k: u32, per_node: u32) -> Finding {
    Finding {
        rule: "hardcoded-gpu-count",
        line,
        message: format!(
            "'{text}' assumes {k} GPU(s) per node, but the job requests {per_node}"
        ),
        why: "a hard-coded count that disagrees with the allocation starts processes without a GPU ('CUDA error: invalid device ordinal') or leaves GPUs idle".into(),
        fix: "derive it from the allocation: --nproc_per_node=$SLURM_GPUS_ON_NODE (or let the framework count the visible GPUs)".into(),
    }
}

/// If the request mixes typed and untyped GPU options with a single type,
/// the same request with the type on every option (what the user meant),
/// and the type. `None` when the request is not mixed or is ambiguous.
pub fn unify_gpu_types(s: &SbatchScript) -> Option<(crate::sbatch::SbatchJob, String)> {
    let g = gpu_opts(s);
    let mut types: Vec<&str> = g.iter().filter_map(|x| x.ty.as_deref()).collect();
    types.sort_unstable();
    types.dedup();
    if types.len() != 1 || !g.iter().any(|x| x.ty.is_none()) {
        return None;
    }
    let ty = types[0].to_string();
    let mut j = s.job.clone();
    let fix = |v: &mut Option<NumOrStr>| {
        if let Some(x) = v {
            let (t, n) = typed_count(&x.as_string());
            if t.is_none() {
                *v = Some(NumOrStr::Str(format!("{ty}:{n}")));
            }
        }
    };
    fix(&mut j.gpus_per_node);
    fix(&mut j.gpus_per_task);
    fix(&mut j.gpus);
    if let Some(gres) = &j.gres {
        let toks: Vec<String> = gres
            .split(',')
            .map(|t| {
                let t = t.trim();
                match t.strip_prefix("gpu:") {
                    Some(c)
                        if c.starts_with(|ch: char| ch.is_ascii_digit()) && !c.contains(':') =>
                    {
                        format!("gpu:{ty}:{c}")
                    }
                    None if t == "gpu" => format!("gpu:{ty}:1"),
                    _ => t.to_string(),
                }
            })
            .collect();
        j.gres = Some(toks.join(","));
    }
    Some((j, ty))
}
