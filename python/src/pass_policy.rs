//! Whole-pass policies written in Python: at each main pass a callable sees
//! a read-only [`PassView`] (the queue in priority order, the free
//! resources of every node) and returns the pass's decisions, which
//! `gresim_sched::external::ExternalPass` checks and applies (see its
//! documentation for what they mean). An exception, an answer of the wrong
//! shape or a refused decision stops the run; `gresim.run` raises
//! `gresim.PolicyError`, with the policy's own exception (and its
//! traceback) as the cause when it raised one.

use std::sync::Arc;

use gresim_model::job::Job;
use gresim_model::{Cluster, ClusterState, PartId};
use gresim_sched::external::{
    reason_from_name, PassDecider, PassDecisions, PassView as RustView, QueuedJob as RustQueued,
    StartDecision,
};
use gresim_sched::placement::Choice;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::placement::{parse_choice, FailureSlot};

/// One pending job as a whole-pass policy sees it.
#[pyclass(frozen, module = "gresim._gresim")]
pub struct QueuedJob {
    /// The Slurm job id decisions name it by.
    #[pyo3(get)]
    pub id: u32,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    user: String,
    /// The account, with accounting (else None).
    #[pyo3(get)]
    account: Option<String>,
    /// The partitions it is queued in, in queue order.
    #[pyo3(get)]
    partitions: Vec<String>,
    #[pyo3(get)]
    min_nodes: u32,
    #[pyo3(get)]
    max_nodes: u32,
    /// GPUs per node, 0 if none.
    #[pyo3(get)]
    gpus_per_node: u32,
    /// GPUs for the whole job (`--gpus`), 0 if none.
    #[pyo3(get)]
    gpus_per_job: u32,
    #[pyo3(get)]
    gpu_type: Option<String>,
    #[pyo3(get)]
    cpus_per_task: u32,
    /// Tasks (`-n`), None when not given.
    #[pyo3(get)]
    ntasks: Option<u32>,
    /// Seconds; None is unlimited.
    #[pyo3(get)]
    time_limit: Option<u64>,
    #[pyo3(get)]
    submit: u64,
    #[pyo3(get)]
    priority: u32,
    #[pyo3(get)]
    exclusive: bool,
    /// The current pending reason (`Priority`, `Resources`, `None`, …).
    #[pyo3(get)]
    reason: String,
}

#[pymethods]
impl QueuedJob {
    /// The first partition it is queued in.
    #[getter]
    fn partition(&self) -> String {
        self.partitions.first().cloned().unwrap_or_default()
    }

    /// GPUs the job takes at least: per node times the least nodes, plus per job.
    #[getter]
    fn gpus(&self) -> u32 {
        self.gpus_per_node * self.min_nodes.max(1) + self.gpus_per_job
    }

    fn __repr__(&self) -> String {
        format!(
            "QueuedJob(id={}, user={:?}, partition={:?}, nodes={}, gpus={}, submit={}, priority={})",
            self.id,
            self.user,
            self.partition(),
            self.min_nodes,
            self.gpus(),
            self.submit,
            self.priority
        )
    }
}

/// A job's row in a view of the queue.
pub fn queued_job(cluster: &Cluster, j: &Job, spec_user: &str, q: &RustQueued) -> QueuedJob {
    let req = &j.request;
    let part = q.partitions.first().copied().unwrap_or(PartId::from_idx(0));
    QueuedJob {
        id: q.id,
        name: String::new(),
        user: spec_user.to_string(),
        account: None,
        partitions: q
            .partitions
            .iter()
            .map(|p| cluster.partition(*p).name.clone())
            .collect(),
        min_nodes: req.min_nodes,
        max_nodes: req.max_nodes,
        gpus_per_node: req.gpus_per_node.iter().map(|g| g.count).sum(),
        gpus_per_job: req.gpus_per_job.map_or(0, |g| g.count),
        gpu_type: crate::placement::gpu_type_of(cluster, req),
        cpus_per_task: req.cpus_per_task,
        ntasks: req.ntasks,
        time_limit: gresim_policy::time_limit_in(cluster, j, part),
        submit: j.submit,
        priority: q.priority,
        exclusive: req.exclusive,
        reason: j.reason.as_str().to_string(),
    }
}

/// The free resources of every node, as columns (index = node index).
pub struct NodeColumns {
    pub names: Arc<[String]>,
    pub free_gpus: Vec<u32>,
    pub total_gpus: Vec<u32>,
    pub free_cpus: Vec<u32>,
    pub total_cpus: Vec<u32>,
    pub free_mem_mib: Vec<u64>,
    pub available: Vec<bool>,
    pub masks: Vec<u64>,
}

impl NodeColumns {
    pub fn of(cluster: &Cluster, state: &ClusterState, names: Arc<[String]>) -> Self {
        let n = cluster.nodes.len();
        let mut c = NodeColumns {
            names,
            free_gpus: Vec::with_capacity(n),
            total_gpus: Vec::with_capacity(n),
            free_cpus: Vec::with_capacity(n),
            total_cpus: Vec::with_capacity(n),
            free_mem_mib: Vec::with_capacity(n),
            available: Vec::with_capacity(n),
            masks: Vec::with_capacity(n),
        };
        for (i, node) in cluster.nodes.iter().enumerate() {
            let u = state.node(gresim_model::NodeId::from_idx(i));
            c.free_gpus.push(u.free_gpus.count_ones());
            c.total_gpus.push(node.gpus.len() as u32);
            c.free_cpus
                .push(u.free_core_count() * u32::from(node.threads_per_core));
            c.total_cpus.push(node.cpus());
            c.free_mem_mib.push(u.free_mem);
            c.available.push(u.schedulable());
            c.masks.push(u.free_gpus);
        }
        c
    }
}

/// What a whole-pass policy sees at a main pass: a snapshot, valid after
/// the call, changing nothing.
#[pyclass(frozen, module = "gresim._gresim")]
pub struct PassView {
    /// The simulated time of the pass (seconds).
    #[pyo3(get)]
    now: u64,
    /// The pending jobs, in priority order.
    #[pyo3(get)]
    jobs: Py<PyList>,
    nodes: NodeColumns,
    partitions: Vec<(String, Vec<u32>)>,
}

#[pymethods]
impl PassView {
    /// Node names, by node index.
    #[getter]
    fn node_names(&self) -> Vec<String> {
        self.nodes.names.to_vec()
    }
    /// Free GPUs per node (GRES indices: a MIG slice counts as one).
    #[getter]
    fn free_gpus(&self) -> Vec<u32> {
        self.nodes.free_gpus.clone()
    }
    #[getter]
    fn total_gpus(&self) -> Vec<u32> {
        self.nodes.total_gpus.clone()
    }
    #[getter]
    fn free_cpus(&self) -> Vec<u32> {
        self.nodes.free_cpus.clone()
    }
    #[getter]
    fn total_cpus(&self) -> Vec<u32> {
        self.nodes.total_cpus.clone()
    }
    #[getter]
    fn free_mem_mib(&self) -> Vec<u64> {
        self.nodes.free_mem_mib.clone()
    }
    /// Whether each node takes jobs (not DOWN or DRAINED).
    #[getter]
    fn available(&self) -> Vec<bool> {
        self.nodes.available.clone()
    }
    /// The free GPU indices of node `node` (an index).
    fn free_gpu_indices(&self, node: usize) -> PyResult<Vec<u32>> {
        self.nodes
            .masks
            .get(node)
            .map(|&m| gresim_model::state::gpu_indices(m).map(u32::from).collect())
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("no node {node}")))
    }
    /// The nodes (indices) of partition `name`.
    fn partition_nodes(&self, name: &str) -> PyResult<Vec<u32>> {
        self.partitions
            .iter()
            .find(|p| p.0 == name)
            .map(|p| p.1.clone())
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(format!("no partition {name:?}")))
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "PassView(now={}, jobs={}, nodes={})",
            self.now,
            self.jobs.bind(py).len(),
            self.nodes.names.len()
        )
    }
}

/// A whole-pass policy written in Python (`f(view)`).
pub struct PyPass {
    f: Py<PyAny>,
    name: &'static str,
    failure: Arc<FailureSlot>,
    names: Option<Arc<[String]>>,
}

impl PyPass {
    pub fn new(f: Py<PyAny>, name: &'static str, failure: Arc<FailureSlot>) -> Self {
        PyPass {
            f,
            name,
            failure,
            names: None,
        }
    }
}

fn repr(x: &Bound<'_, PyAny>) -> String {
    x.repr().map_or_else(|_| "?".into(), |r| r.to_string())
}

fn job_id_of(x: &Bound<'_, PyAny>, what: &str) -> Result<u32, String> {
    if x.is_instance_of::<pyo3::types::PyBool>() {
        return Err(format!("{what}: expected a job id, got {}", repr(x)));
    }
    if let Ok(q) = x.cast::<QueuedJob>() {
        return Ok(q.get().id);
    }
    x.extract::<i64>()
        .ok()
        .and_then(|i| u32::try_from(i).ok())
        .ok_or_else(|| format!("{what}: expected a job id, got {}", repr(x)))
}

fn partition_of(cluster: &Cluster, x: &Bound<'_, PyAny>) -> Result<Option<PartId>, String> {
    if x.is_none() {
        return Ok(None);
    }
    let name: String = x
        .extract()
        .map_err(|_| format!("expected a partition name, got {}", repr(x)))?;
    cluster
        .partitions
        .iter()
        .position(|p| p.name == name)
        .map(|i| Some(PartId::from_idx(i)))
        .ok_or_else(|| format!("unknown partition '{name}'"))
}

/// One item of `start`: a job id (or a `QueuedJob`), or a dict with
/// `job`, and optionally `partition` and `nodes`.
fn start_of(
    cluster: &Cluster,
    names: &[String],
    it: &Bound<'_, PyAny>,
) -> Result<StartDecision, String> {
    let Ok(d) = it.cast::<PyDict>() else {
        return Ok(StartDecision {
            id: job_id_of(it, "start")?,
            partition: None,
            nodes: None,
        });
    };
    for k in d.keys() {
        let k: String = k.extract().unwrap_or_default();
        if !matches!(k.as_str(), "job" | "partition" | "nodes") {
            return Err(format!(
                "start: unknown key '{k}' (expected job, partition, nodes)"
            ));
        }
    }
    let job = d
        .get_item("job")
        .map_err(|e| e.to_string())?
        .ok_or("start: a dict needs the key 'job'")?;
    let id = job_id_of(&job, "start")?;
    let partition = match d.get_item("partition").map_err(|e| e.to_string())? {
        Some(p) => partition_of(cluster, &p).map_err(|e| format!("start: job {id}: {e}"))?,
        None => None,
    };
    let nodes = match d.get_item("nodes").map_err(|e| e.to_string())? {
        None => None,
        Some(n) => match parse_choice(&n, names).map_err(|e| format!("start: job {id}: {e}"))? {
            Choice::Slurm => None,
            Choice::Wait => return Err(format!("start: job {id}: no node chosen")),
            Choice::Nodes(v) => Some(v),
        },
    };
    Ok(StartDecision {
        id,
        partition,
        nodes,
    })
}

fn items<'py>(x: &Bound<'py, PyAny>, what: &str) -> Result<Vec<Bound<'py, PyAny>>, String> {
    if x.is_instance_of::<PyString>() || x.is_instance_of::<PyDict>() {
        return Err(format!("{what}: expected a list, got {}", repr(x)));
    }
    x.try_iter()
        .map_err(|_| format!("{what}: expected a list, got {}", repr(x)))?
        .collect::<PyResult<Vec<_>>>()
        .map_err(|e| e.to_string())
}

/// What Python answered, as decisions, or why it is no answer: None
/// (nothing this pass), or a dict with `start`, `order` and `reasons`.
pub fn parse_decisions(
    cluster: &Cluster,
    names: &[String],
    ans: &Bound<'_, PyAny>,
) -> Result<PassDecisions, String> {
    let mut out = PassDecisions::default();
    if ans.is_none() {
        return Ok(out);
    }
    let Ok(d) = ans.cast::<PyDict>() else {
        return Err(format!(
            "expected None or a dict with start, order and reasons, got {}",
            repr(ans)
        ));
    };
    for k in d.keys() {
        let k: String = k.extract().unwrap_or_else(|_| repr(&k));
        if !matches!(k.as_str(), "start" | "order" | "reasons") {
            return Err(format!(
                "unknown key '{k}' (expected start, order, reasons)"
            ));
        }
    }
    if let Some(s) = d.get_item("start").map_err(|e| e.to_string())? {
        for it in items(&s, "start")? {
            out.starts.push(start_of(cluster, names, &it)?);
        }
    }
    if let Some(o) = d.get_item("order").map_err(|e| e.to_string())? {
        if !o.is_none() {
            let mut ids = Vec::new();
            for it in items(&o, "order")? {
                ids.push(job_id_of(&it, "order")?);
            }
            out.order = Some(ids);
        }
    }
    if let Some(r) = d.get_item("reasons").map_err(|e| e.to_string())? {
        let Ok(r) = r.cast::<PyDict>() else {
            return Err(format!(
                "reasons: expected a dict {{job id: reason}}, got {}",
                repr(&r)
            ));
        };
        for (k, v) in r.iter() {
            let id = job_id_of(&k, "reasons")?;
            let Ok(text) = v.cast::<PyString>() else {
                return Err(format!(
                    "reasons: job {id}: expected a string, got {}",
                    repr(&v)
                ));
            };
            let (reason, desc) = reason_from_name(&text.to_string());
            out.reasons.push((id, reason, desc));
        }
    }
    Ok(out)
}

/// The Python view of a pass.
pub fn view_of(
    py: Python<'_>,
    view: &RustView<'_, '_>,
    names: Arc<[String]>,
) -> PyResult<PassView> {
    let ctx = view.ctx;
    let jobs = PyList::empty(py);
    for q in view.queue {
        let j = &ctx.jobs[q.job.idx()];
        let spec = &ctx.specs[j.sub as usize];
        let mut row = queued_job(ctx.cluster, j, &spec.user, q);
        row.name = spec.name.to_string();
        row.account = match (ctx.cluster.accounting(), spec.acct()) {
            (Some(a), Some(ja)) => Some(a.assocs[ja.assoc as usize].account.clone()),
            _ => None,
        };
        jobs.append(Py::new(py, row)?)?;
    }
    Ok(PassView {
        now: ctx.now,
        jobs: jobs.unbind(),
        nodes: NodeColumns::of(ctx.cluster, ctx.state, names),
        partitions: ctx
            .cluster
            .partitions
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.nodes.iter().map(|n| n.idx() as u32).collect(),
                )
            })
            .collect(),
    })
}

impl PassDecider for PyPass {
    fn name(&self) -> &'static str {
        self.name
    }

    fn decide(&mut self, view: &RustView<'_, '_>) -> Result<PassDecisions, String> {
        let cluster = view.ctx.cluster;
        let names = Arc::clone(
            self.names
                .get_or_insert_with(|| cluster.nodes.iter().map(|n| n.name.clone()).collect()),
        );
        let now = view.ctx.now;
        Python::attach(|py| {
            let v = view_of(py, view, Arc::clone(&names)).map_err(|e| e.to_string())?;
            match self.f.bind(py).call1((v,)) {
                Ok(a) => parse_decisions(cluster, &names, &a).map_err(|m| {
                    let msg = format!("at t={now} the pass returned {m}");
                    self.failure.set(msg.clone(), None);
                    msg
                }),
                Err(e) => {
                    let msg = format!("at t={now} the pass raised {e}");
                    self.failure.set(msg.clone(), Some(e));
                    Err(msg)
                }
            }
        })
    }
}
