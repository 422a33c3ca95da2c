//! Placement policies written in Python: a callable chooses nodes and GPU
//! indices for a job cons_tres can place now, from a read-only
//! [`PlacementQuery`]; Slurm's queue, main pass and backfill stay around it
//! (`gresim_sched::placement::Placement::Custom`). What it returns is
//! checked by `gresim_sched::placement::apply_choice` before anything is
//! allocated; an exception or a refused choice stops the run, and
//! `gresim.run` raises `gresim.PolicyError` with the policy's own exception
//! (and its traceback) as the cause.

use std::sync::{Arc, Mutex};

use gresim_model::state::gpu_indices;
use gresim_model::{Cluster, NodeId};
use gresim_sched::placement::{Choice, CustomPlacement, PlaceQuery};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

/// What a job asks for, and the free resources that could hold it now:
/// the argument of a Python placement. A snapshot: it stays valid after
/// the call, and changes nothing.
#[pyclass(frozen, module = "gresim._gresim")]
pub struct PlacementQuery {
    #[pyo3(get)]
    partition: String,
    /// `-N`: the least and the most nodes.
    #[pyo3(get)]
    min_nodes: u32,
    #[pyo3(get)]
    max_nodes: u32,
    /// GPUs per node (`--gres=gpu:N`, `--gpus-per-node`), 0 if none.
    #[pyo3(get)]
    gpus_per_node: u32,
    /// GPUs for the whole job (`--gpus`), 0 if none.
    #[pyo3(get)]
    gpus_per_job: u32,
    /// The GPU type asked for, if any.
    #[pyo3(get)]
    gpu_type: Option<String>,
    #[pyo3(get)]
    cpus_per_task: u32,
    /// The time limit in seconds (None: unlimited).
    #[pyo3(get)]
    time_limit: Option<u64>,
    #[pyo3(get)]
    exclusive: bool,
    /// The candidate nodes (indices into `gresim`'s node table), in order.
    #[pyo3(get)]
    candidates: Vec<u32>,
    /// Per candidate: how many GPUs of the job's type are free.
    #[pyo3(get)]
    free_gpu_counts: Vec<u32>,
    /// Per candidate: free CPUs.
    #[pyo3(get)]
    free_cpus: Vec<u32>,
    masks: Vec<u64>,
    /// Slurm's choice: `[(node, [gpu, …]), …]`.
    slurm: Vec<(u32, u64)>,
    names: Arc<[String]>,
}

#[pymethods]
impl PlacementQuery {
    /// The free GPU indices of the job's type on candidate `node`.
    fn free_gpus(&self, node: u32) -> PyResult<Vec<u32>> {
        match self.candidates.iter().position(|&c| c == node) {
            Some(i) => Ok(gpu_indices(self.masks[i]).map(u32::from).collect()),
            None => Err(pyo3::exceptions::PyKeyError::new_err(format!(
                "node {node} is not a candidate of this job"
            ))),
        }
    }

    /// Node `node`'s name.
    fn node_name(&self, node: u32) -> PyResult<String> {
        self.names
            .get(node as usize)
            .cloned()
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("no node {node}")))
    }

    /// Slurm's own choice (cons_tres): `[(node, [gpu, …]), …]`.
    #[getter]
    fn slurm(&self) -> Vec<(u32, Vec<u32>)> {
        self.slurm
            .iter()
            .map(|&(n, m)| (n, gpu_indices(m).map(u32::from).collect()))
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "PlacementQuery(partition={:?}, nodes={}, gpus_per_node={}, gpu_type={:?}, candidates={})",
            self.partition,
            self.min_nodes,
            self.gpus_per_node,
            self.gpu_type,
            self.candidates.len()
        )
    }
}

/// A failure of a Python policy: the Python exception, when the policy
/// raised one (the message went to the engine).
pub struct Failure {
    pub err: Option<PyErr>,
}

/// Where a Python policy keeps its first failure until the run ends.
#[derive(Default)]
pub struct FailureSlot {
    first: Mutex<Option<Failure>>,
    /// The message, taken by the engine's check after the pass.
    reported: Mutex<Option<String>>,
}

impl FailureSlot {
    pub fn set(&self, msg: String, err: Option<PyErr>) {
        let mut f = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *self.reported.lock().unwrap_or_else(|p| p.into_inner()) = Some(msg);
            *f = Some(Failure { err });
        }
    }

    pub fn failed(&self) -> bool {
        self.first
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    pub fn take_reported(&self) -> Option<String> {
        self.reported
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    pub fn take(&self) -> Option<Failure> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A Python placement: `f(query)` returns `None` (Slurm's choice), `[]` (the
/// job waits) or `[(node, [gpu, …]), …]`, a node as an index or a name.
pub struct PyPlacement {
    f: Py<PyAny>,
    name: &'static str,
    pub failure: Arc<FailureSlot>,
    names: Mutex<Option<Arc<[String]>>>,
}

impl PyPlacement {
    pub fn new(f: Py<PyAny>, name: &'static str, failure: Arc<FailureSlot>) -> Self {
        PyPlacement {
            f,
            name,
            failure,
            names: Mutex::new(None),
        }
    }

    fn names(&self, cluster: &Cluster) -> Arc<[String]> {
        let mut n = self.names.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(n.get_or_insert_with(|| cluster.nodes.iter().map(|n| n.name.clone()).collect()))
    }

    fn query(&self, q: &PlaceQuery<'_>) -> PlacementQuery {
        let req = q.req;
        let cluster = q.cluster;
        let gpu_type = gpu_type_of(cluster, req);
        PlacementQuery {
            partition: cluster.partition(q.part).name.clone(),
            min_nodes: req.min_nodes,
            max_nodes: req.max_nodes,
            gpus_per_node: req.gpus_per_node.iter().map(|g| g.count).sum(),
            gpus_per_job: req.gpus_per_job.map_or(0, |g| g.count),
            gpu_type,
            cpus_per_task: req.cpus_per_task,
            time_limit: req
                .time_limit
                .unwrap_or_else(|| cluster.partition(q.part).effective_default_time()),
            exclusive: req.exclusive,
            candidates: q.candidates.iter().map(|n| n.idx() as u32).collect(),
            free_gpu_counts: q.free_gpus.iter().map(|m| m.count_ones()).collect(),
            free_cpus: q
                .candidates
                .iter()
                .map(|&n| {
                    q.state.node(n).free_core_count() * u32::from(cluster.node(n).threads_per_core)
                })
                .collect(),
            masks: q.free_gpus.to_vec(),
            slurm: q
                .slurm
                .nodes
                .iter()
                .map(|n| (n.node.idx() as u32, n.gpus))
                .collect(),
            names: self.names(cluster),
        }
    }
}

/// The GPU type a request names, if any.
pub fn gpu_type_of(cluster: &Cluster, req: &gresim_model::job::JobRequest) -> Option<String> {
    req.gpus_per_node
        .iter()
        .chain(req.gpus_per_job.iter())
        .chain(req.gpus_per_task.iter())
        .find_map(|g| g.ty)
        .map(|t| cluster.gpu_type(t).name.clone())
}

/// A node as Python names it: an index or a name.
fn node_of(item: &Bound<'_, PyAny>, names: &[String]) -> Result<NodeId, String> {
    if let Ok(s) = item.cast::<PyString>() {
        let s = s.to_string();
        return names
            .iter()
            .position(|n| *n == s)
            .map(NodeId::from_idx)
            .ok_or_else(|| format!("unknown node '{s}'"));
    }
    match item.extract::<i64>() {
        Ok(i) if i >= 0 && (i as usize) < names.len() => Ok(NodeId::from_idx(i as usize)),
        Ok(i) => Err(format!(
            "unknown node {i} (the cluster has nodes 0..{})",
            names.len().saturating_sub(1)
        )),
        Err(_) => Err(format!(
            "expected a node index or name, got {}",
            item.repr().map_or_else(|_| "?".into(), |r| r.to_string())
        )),
    }
}

/// What Python answered, as a [`Choice`], or why it is no answer.
pub fn parse_choice(ans: &Bound<'_, PyAny>, names: &[String]) -> Result<Choice, String> {
    if ans.is_none() {
        return Ok(Choice::Slurm);
    }
    let shape = "expected None, [] or a list of (node, [gpu, …])";
    let items: Vec<Bound<'_, PyAny>> = if let Ok(l) = ans.cast::<PyList>() {
        l.iter().collect()
    } else {
        ans.try_iter()
            .map_err(|_| format!("{shape}, got {}", type_name(ans)))?
            .collect::<PyResult<_>>()
            .map_err(|e| e.to_string())?
    };
    if items.is_empty() {
        return Ok(Choice::Wait);
    }
    let mut out = Vec::with_capacity(items.len());
    for it in &items {
        let (node, gpus): (Bound<'_, PyAny>, Bound<'_, PyAny>) = it
            .extract()
            .map_err(|_| format!("{shape}: got the item {}", repr(it)))?;
        let id = node_of(&node, names)?;
        let mut mask = 0u64;
        for g in gpus.try_iter().map_err(|_| {
            format!(
                "GPUs of node {}: expected a list of indices",
                names[id.idx()]
            )
        })? {
            let g = g.map_err(|e| e.to_string())?;
            match g.extract::<i64>() {
                Ok(i) if (0..64).contains(&i) => {
                    if mask & (1 << i) != 0 {
                        return Err(format!(
                            "GPU {i} of node {} is chosen twice",
                            names[id.idx()]
                        ));
                    }
                    mask |= 1 << i;
                }
                _ => {
                    return Err(format!(
                        "GPUs of node {}: {} is no GPU index",
                        names[id.idx()],
                        repr(&g)
                    ))
                }
            }
        }
        out.push((id, mask));
    }
    Ok(Choice::Nodes(out))
}

fn repr(x: &Bound<'_, PyAny>) -> String {
    x.repr().map_or_else(|_| "?".into(), |r| r.to_string())
}

fn type_name(x: &Bound<'_, PyAny>) -> String {
    x.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

impl CustomPlacement for PyPlacement {
    fn name(&self) -> &'static str {
        self.name
    }

    fn choose(&self, q: &PlaceQuery<'_>) -> Choice {
        if self.failure.failed() {
            return Choice::Wait;
        }
        let query = self.query(q);
        let names = Arc::clone(&query.names);
        Python::attach(|py| {
            let ans = self.f.bind(py).call1((query,));
            match ans {
                Ok(a) => match parse_choice(&a, &names) {
                    Ok(c) => c,
                    Err(msg) => {
                        self.failure
                            .set(format!("the placement returned {msg}"), None);
                        Choice::Wait
                    }
                },
                Err(e) => {
                    self.failure
                        .set(format!("the placement raised {e}"), Some(e));
                    Choice::Wait
                }
            }
        })
    }

    fn refused(&self, why: String) {
        self.failure
            .set(format!("the placement's choice was refused: {why}"), None);
    }

    fn take_failure(&self) -> Option<String> {
        self.failure.take_reported()
    }
}
