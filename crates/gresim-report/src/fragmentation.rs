//! GPU fragmentation over a run: idle GPU capacity split into what the
//! workload's typical request could use and what it could not.
//!
//! An FGD-style measure (Weng et al., ATC '23) adapted to whole GPUs and MIG
//! instances: FGD counts a node's free GPU capacity as fragmented for a task
//! that cannot be placed on the node. Here the task is the workload's
//! **typical request** ([`TypicalRequest`]): the most common per-node GPU
//! request (type and count) among run.json's jobs, with the CPUs and memory
//! such jobs were given per node. At every instant the run's state changes,
//! each node's free GPU capacity is:
//!
//! * *down or drained* when the node is DOWN or DRAIN (admin, not
//!   fragmentation);
//! * *fragmented* when the node is up but the typical request does not fit
//!   on it: too few free devices of its type, too few free CPUs, too little
//!   free memory, or the node is held by an exclusive job;
//! * *usable* otherwise.
//!
//! Capacity is counted in sevenths of a GPU: a whole GPU weighs 7, a MIG
//! instance its compute slices (`3g.40gb` weighs 3), as the engine's
//! `alloc_gpu_sevenths`. The fit is a capacity check (counts of free
//! devices, CPUs and memory), not a full node selection: core and socket
//! layout, NVLink, features and partitions are not considered.
//!
//! Everything is computed from run.json alone, exactly (every change point,
//! no sampling); charts sample the series themselves.

use std::collections::BTreeMap;

use gresim_model::catalog;

use crate::run_file::{RequestRec, RunFile};

/// The weight of a whole GPU, in sevenths.
pub const WHOLE_GPU: u64 = 7;

/// The workload's most common per-node GPU request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypicalRequest {
    /// GRES type; `None`: any type.
    pub gpu_type: Option<String>,
    /// GPUs (devices) per node.
    pub gpus: u32,
    /// CPUs per node.
    pub cpus: u32,
    /// Memory per node, MiB.
    pub mem_mib: u64,
    /// Jobs with this per-node GPU request.
    pub jobs: usize,
    /// Jobs requesting GPUs at all.
    pub gpu_jobs: usize,
}

impl TypicalRequest {
    /// `gpu:a100:2, 16 CPUs, 64G` — the request as a short text.
    pub fn describe(&self) -> String {
        let gres = match &self.gpu_type {
            Some(t) => format!("gpu:{t}:{}", self.gpus),
            None => format!("gpu:{}", self.gpus),
        };
        format!(
            "{gres}, {} CPU{}, {}",
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            gresim_model::units::format_mem_mib(self.mem_mib)
        )
    }
}

/// GPU capacity by category at one instant, in sevenths of a GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Split {
    pub allocated: u64,
    pub usable: u64,
    pub fragmented: u64,
    /// Free capacity on DOWN or DRAIN nodes.
    pub unavailable: u64,
}

/// The split over the whole run.
#[derive(Debug, Clone, PartialEq)]
pub struct Fragmentation {
    /// `None` when no job requests GPUs: then no idle capacity is fragmented.
    pub typical: Option<TypicalRequest>,
    /// The cluster's GPU capacity, in sevenths.
    pub total: u64,
    /// The split from each change point on, in time order (the first at 0).
    pub points: Vec<(u64, Split)>,
    /// The end of the run: the series holds until then.
    pub end: u64,
    /// Time integrals over `[0, end)`, in sevenths × seconds.
    pub integral: [u128; 4],
}

impl Fragmentation {
    /// Time-averaged fragmented capacity over the cluster's GPU capacity
    /// (0 for an empty run or cluster).
    pub fn fragmented_share(&self) -> f64 {
        let denom = u128::from(self.total) * u128::from(self.end);
        if denom == 0 {
            0.0
        } else {
            self.integral[2] as f64 / denom as f64
        }
    }

    /// Time-averaged fragmented capacity over idle capacity on up nodes
    /// (usable + fragmented); 0 when nothing was ever idle.
    pub fn fragmented_share_of_idle(&self) -> f64 {
        let idle = self.integral[1] + self.integral[2];
        if idle == 0 {
            0.0
        } else {
            self.integral[2] as f64 / idle as f64
        }
    }
}

/// A job's per-node GPU request: type (`None`: any) and count.
pub fn per_node_gpus(r: &RequestRec) -> Option<(Option<String>, u32)> {
    let nodes = r.min_nodes.max(1);
    let tasks_per_node = r
        .ntasks_per_node
        .unwrap_or_else(|| r.ntasks.map_or(1, |n| n.div_ceil(nodes)))
        .max(1);
    let (ty, count) = if !r.gpus_per_node.is_empty() {
        let first = r.gpus_per_node[0].ty.clone();
        let same = r.gpus_per_node.iter().all(|g| g.ty == first);
        let n = r
            .gpus_per_node
            .iter()
            .fold(0u32, |a, g| a.saturating_add(g.count));
        (if same { first } else { None }, n)
    } else if let Some(g) = &r.gpus_per_job {
        (g.ty.clone(), g.count.div_ceil(nodes))
    } else if let Some(g) = &r.gpus_per_task {
        (g.ty.clone(), g.count.saturating_mul(tasks_per_node))
    } else {
        return None;
    };
    (count > 0).then_some((ty, count))
}

fn lower_median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    v.get(v.len().saturating_sub(1) / 2).copied()
}

/// The workload's typical request: the most common per-node GPU request
/// (ties: more jobs, then fewer GPUs, then type name, any type first) among
/// jobs not rejected; its CPUs and memory are the lower medians over the
/// node allocations holding that many GPUs in the first runs of such jobs,
/// or, when none ran, taken from the request of the first such job.
pub fn typical_request(rf: &RunFile) -> Option<TypicalRequest> {
    let mut counts: BTreeMap<(u32, Option<String>), usize> = BTreeMap::new();
    let mut shape_of: Vec<Option<(Option<String>, u32)>> = Vec::with_capacity(rf.jobs.len());
    for j in &rf.jobs {
        let s = if j.rejected.is_some() || j.state == "REJECTED" {
            None
        } else {
            per_node_gpus(&j.request)
        };
        if let Some((ty, n)) = &s {
            *counts.entry((*n, ty.clone())).or_default() += 1;
        }
        shape_of.push(s);
    }
    let gpu_jobs = counts.values().sum();
    // BTreeMap order: fewer GPUs first, then type (None first); keep the first maximum.
    let ((gpus, gpu_type), jobs) = counts.into_iter().fold(
        None::<((u32, Option<String>), usize)>,
        |best, (k, n)| match best {
            Some((_, m)) if m >= n => best,
            _ => Some((k, n)),
        },
    )?;
    let shape = Some((gpu_type.clone(), gpus));
    let mut cpus = Vec::new();
    let mut mem = Vec::new();
    let mut first_req: Option<&RequestRec> = None;
    for (j, s) in rf.jobs.iter().zip(&shape_of) {
        if *s != shape {
            continue;
        }
        first_req.get_or_insert(&j.request);
        if let Some(r) = j.runs.first() {
            for na in r.nodes.iter().filter(|na| na.gpus.len() == gpus as usize) {
                cpus.push(u64::from(na.cpus));
                mem.push(na.mem_mib);
            }
        }
    }
    let (cpus, mem_mib) = match (lower_median(cpus), lower_median(mem)) {
        (Some(c), Some(m)) => (u32::try_from(c).unwrap_or(u32::MAX), m),
        _ => {
            let r = first_req?;
            let nodes = r.min_nodes.max(1);
            let tasks = r
                .ntasks_per_node
                .unwrap_or_else(|| r.ntasks.map_or(1, |n| n.div_ceil(nodes)))
                .max(1);
            let c = match r.cpus_per_gpu {
                Some(k) => k.saturating_mul(gpus),
                None => r.cpus_per_task.max(1).saturating_mul(tasks),
            };
            let m = match r.mem.as_str() {
                "per_node" => r.mem_mib,
                "per_cpu" => r.mem_mib.saturating_mul(u64::from(c)),
                "per_gpu" => r.mem_mib.saturating_mul(u64::from(gpus)),
                _ => rf.def_mem_per_cpu.unwrap_or(0).saturating_mul(u64::from(c)),
            };
            (c, m)
        }
    };
    Some(TypicalRequest {
        gpu_type,
        gpus,
        cpus,
        mem_mib,
        jobs,
        gpu_jobs,
    })
}

/// A device's weight in sevenths: 7 for a whole GPU, the compute slices of
/// a MIG instance.
fn weight(g: &crate::run_file::GpuRec) -> u64 {
    let Some((profile, _)) = &g.mig else {
        return WHOLE_GPU;
    };
    catalog::model_by_name(&g.model)
        .and_then(|m| catalog::model(m).mig_profile(profile))
        .map(|p| u64::from(p.compute_slices))
        .or_else(|| {
            // An unknown profile: its leading number (`3g.40gb`: 3), else 1.
            profile
                .split('g')
                .next()
                .and_then(|x| x.parse::<u64>().ok())
        })
        .unwrap_or(1)
        .clamp(1, WHOLE_GPU)
}

/// One node's changing state during the sweep.
struct NodeSt {
    cpus: u64,
    mem: u64,
    /// Per device: its weight, whether it has the typical type, its holders.
    dev: Vec<(u64, bool, i64)>,
    alloc_cpus: i64,
    alloc_mem: i64,
    exclusive: i64,
    up: bool,
    split: Split,
}

impl NodeSt {
    fn classify(&self, typ: Option<&TypicalRequest>) -> Split {
        let mut s = Split::default();
        let mut free_w = 0;
        let mut free_typed = 0u64;
        for &(w, typed, holders) in &self.dev {
            if holders > 0 {
                s.allocated += w;
            } else {
                free_w += w;
                free_typed += u64::from(typed);
            }
        }
        if !self.up {
            s.unavailable = free_w;
            return s;
        }
        let fits = typ.is_none_or(|t| {
            self.exclusive <= 0
                && free_typed >= u64::from(t.gpus)
                && self.cpus.saturating_sub(self.alloc_cpus.max(0) as u64) >= u64::from(t.cpus)
                && self.mem.saturating_sub(self.alloc_mem.max(0) as u64) >= t.mem_mib
        });
        if fits {
            s.usable = free_w;
        } else {
            s.fragmented = free_w;
        }
        s
    }
}

/// What changes at an instant.
enum Ev {
    /// A run takes (+1) or gives back (−1) its resources: job, run, sign.
    Run(usize, usize, i64),
    /// A node's admin state changes: node, up.
    Admin(usize, bool),
}

/// The split of GPU capacity at every change point of the run.
pub fn fragmentation(rf: &RunFile) -> Fragmentation {
    let typical = typical_request(rf);
    let typ = typical.as_ref();
    let idx = rf.node_index();
    let end = rf.end_time;
    let mut nodes: Vec<NodeSt> = rf
        .cluster
        .nodes
        .iter()
        .map(|n| NodeSt {
            cpus: u64::from(n.cpus()),
            mem: n.memory_mib,
            dev: n
                .gpus
                .iter()
                .map(|g| {
                    let typed = typ.is_some_and(|t| t.gpu_type.as_ref().is_none_or(|x| *x == g.ty));
                    (weight(g), typed, 0)
                })
                .collect(),
            alloc_cpus: 0,
            alloc_mem: 0,
            exclusive: 0,
            up: n.state == "UP",
            split: Split::default(),
        })
        .collect();
    let total: u64 = nodes.iter().flat_map(|n| n.dev.iter().map(|d| d.0)).sum();

    let mut evs: Vec<(u64, Ev)> = Vec::new();
    for (ji, j) in rf.jobs.iter().enumerate() {
        for (ri, r) in j.runs.iter().enumerate() {
            // A run still going at the end holds its resources until then.
            let stop = r.end.unwrap_or(u64::MAX);
            if r.start >= stop || r.start > end {
                continue;
            }
            evs.push((r.start, Ev::Run(ji, ri, 1)));
            if stop <= end {
                evs.push((stop, Ev::Run(ji, ri, -1)));
            }
        }
    }
    for s in &rf.node_states {
        if let Some(&ni) = idx.get(s.node.as_str()) {
            if s.t <= end {
                evs.push((s.t, Ev::Admin(ni, s.state == "UP")));
            }
        }
    }
    // Stable: admin changes keep their recorded order within an instant.
    evs.sort_by_key(|e| e.0);

    let mut cur = Split::default();
    for n in &mut nodes {
        n.split = n.classify(typ);
        add(&mut cur, n.split, 1);
    }
    let mut points: Vec<(u64, Split)> = vec![(0, cur)];
    let mut dirty: Vec<usize> = Vec::new();
    let mut k = 0;
    while k < evs.len() {
        let t = evs[k].0;
        while k < evs.len() && evs[k].0 == t {
            match evs[k].1 {
                Ev::Run(ji, ri, sign) => {
                    let r = &rf.jobs[ji].runs[ri];
                    for na in &r.nodes {
                        let Some(&ni) = idx.get(na.node.as_str()) else {
                            continue;
                        };
                        let n = &mut nodes[ni];
                        for &g in &na.gpus {
                            if let Some(d) = n.dev.get_mut(usize::from(g)) {
                                d.2 += sign;
                            }
                        }
                        n.alloc_cpus += sign * i64::from(na.cpus);
                        n.alloc_mem += sign * i64::try_from(na.mem_mib).unwrap_or(i64::MAX / 4);
                        if r.exclusive {
                            n.exclusive += sign;
                        }
                        dirty.push(ni);
                    }
                }
                Ev::Admin(ni, up) => {
                    nodes[ni].up = up;
                    dirty.push(ni);
                }
            }
            k += 1;
        }
        dirty.sort_unstable();
        dirty.dedup();
        for &ni in &dirty {
            let n = &mut nodes[ni];
            add(&mut cur, n.split, -1);
            n.split = n.classify(typ);
            add(&mut cur, n.split, 1);
        }
        dirty.clear();
        match points.last_mut() {
            Some(last) if last.0 == t => last.1 = cur,
            Some(last) if last.1 == cur => {}
            _ => points.push((t, cur)),
        }
    }

    let mut integral = [0u128; 4];
    for (i, &(t, s)) in points.iter().enumerate() {
        let next = points.get(i + 1).map_or(end, |p| p.0).min(end);
        let dt = u128::from(next.saturating_sub(t));
        for (acc, v) in
            integral
                .iter_mut()
                .zip([s.allocated, s.usable, s.fragmented, s.unavailable])
        {
            *acc += dt * u128::from(v);
        }
    }
    Fragmentation {
        typical,
        total,
        points,
        end,
        integral,
    }
}

fn add(acc: &mut Split, s: Split, sign: i64) {
    let f = |a: &mut u64, b: u64| {
        *a = if sign > 0 {
            a.saturating_add(b)
        } else {
            a.saturating_sub(b)
        }
    };
    f(&mut acc.allocated, s.allocated);
    f(&mut acc.usable, s.usable);
    f(&mut acc.fragmented, s.fragmented);
    f(&mut acc.unavailable, s.unavailable);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-made run.json (testdata/frag_run.json) with a known answer:
    ///
    /// * nodeA, nodeB: 8 CPUs, 64G, 4 whole A100s each; nodeC: 16 CPUs,
    ///   128G, one A100 as two `3g.40gb` MIG instances (3/7 each); 62/7 GPUs.
    /// * jobs 1–3 ask `gpu:a100:2` (the typical request: 3 of the 5 GPU
    ///   jobs; four rejected `gpu:a100:8` submissions do not count) and got
    ///   2, 6 and 2 CPUs with 16G: typical 2 CPUs, 16G.
    /// * job 1 holds nodeA GPUs 0–1 over [0,100), job 3 GPUs 2–3 over
    ///   [50,100); job 2 holds nodeB GPUs 0–1 with 6 CPUs over [0,50); job 6
    ///   (no GPUs) holds 7 of nodeB's 8 CPUs over [50,100); job 4 holds one
    ///   MIG instance on nodeC from 0 on (still running at the end, 100);
    ///   nodeC is drained at 80.
    ///
    /// In sevenths of a GPU (allocated, usable, fragmented, down/drained):
    /// [0,50): 31, 28, 3, 0 (nodeC's free instance is not an a100);
    /// [50,80): 31, 0, 31, 0 (nodeB: 1 free CPU < 2);
    /// [80,100): 31, 0, 28, 3 (nodeC drained).
    pub(crate) const HAND_MADE: &str = include_str!("../testdata/frag_run.json");

    fn split(allocated: u64, usable: u64, fragmented: u64, unavailable: u64) -> Split {
        Split {
            allocated,
            usable,
            fragmented,
            unavailable,
        }
    }

    #[test]
    fn hand_made_run_has_the_known_split() {
        let rf = RunFile::parse(HAND_MADE).unwrap();
        let fr = fragmentation(&rf);
        let t = fr.typical.clone().unwrap();
        assert_eq!(
            (
                t.gpu_type.as_deref(),
                t.gpus,
                t.cpus,
                t.mem_mib,
                t.jobs,
                t.gpu_jobs
            ),
            (Some("a100"), 2, 2, 16384, 3, 5)
        );
        assert_eq!(t.describe(), "gpu:a100:2, 2 CPUs, 16G");
        assert_eq!(fr.total, 62);
        assert_eq!(
            fr.points,
            vec![
                (0, split(31, 28, 3, 0)),
                (50, split(31, 0, 31, 0)),
                (80, split(31, 0, 28, 3)),
                // The end: only the MIG job still runs.
                (100, split(3, 56, 0, 3)),
            ]
        );
        assert_eq!(fr.integral, [3100, 1400, 1640, 60]);
        // 1640 / (62 × 100) and 1640 / (1400 + 1640).
        assert!((fr.fragmented_share() - 1640.0 / 6200.0).abs() < 1e-12);
        assert!((fr.fragmented_share_of_idle() - 1640.0 / 3040.0).abs() < 1e-12);
    }

    #[test]
    fn each_constraint_counts() {
        let base = RunFile::parse(HAND_MADE).unwrap();
        // Without the CPU-only job, nodeB's GPUs stay usable after 50.
        let mut rf = base.clone();
        rf.jobs.retain(|j| j.name != "cpu-hog");
        let fr = fragmentation(&rf);
        assert_eq!(fr.points[1], (80, split(31, 28, 0, 3)));
        assert_eq!(fr.integral[2], 3 * 80);
        // Memory: a typical request of 60G does not fit beside job 1 (16G of 64G).
        let mut rf = base.clone();
        for j in rf.jobs.iter_mut().filter(|j| j.name.starts_with("two-")) {
            j.runs[0].nodes[0].mem_mib = 60 * 1024;
        }
        let fr = fragmentation(&rf);
        assert_eq!(fr.typical.as_ref().unwrap().mem_mib, 60 * 1024);
        assert_eq!(fr.points[0], (0, split(31, 0, 31, 0)));
        // An exclusive run blocks its node whatever is free.
        let mut rf = base.clone();
        rf.jobs[0].runs[0].exclusive = true;
        assert_eq!(fragmentation(&rf).points[0], (0, split(31, 14, 17, 0)));
        // A typeless typical request may use the MIG instance's slot count.
        let mut rf = base.clone();
        for j in rf.jobs.iter_mut().filter(|j| j.name.starts_with("two-")) {
            j.request.gpus_per_node[0].ty = None;
            j.request.gpus_per_node[0].count = 1;
        }
        let fr = fragmentation(&rf);
        let t = fr.typical.as_ref().unwrap();
        assert_eq!((t.gpu_type.as_deref(), t.gpus, t.jobs), (None, 1, 3));
        // No node allocation holds exactly 1 GPU for these jobs: the request's CPUs and memory.
        assert_eq!((t.cpus, t.mem_mib), (2, 16384));
        assert_eq!(fr.points[0], (0, split(31, 31, 0, 0)));
        // No GPU jobs: nothing is fragmented.
        let mut rf = base;
        for j in &mut rf.jobs {
            j.request.gpus_per_node.clear();
            j.request.gpus_per_job = None;
        }
        let fr = fragmentation(&rf);
        assert!(fr.typical.is_none());
        assert_eq!(fr.integral[2], 0);
        assert_eq!(fr.fragmented_share(), 0.0);
    }

    #[test]
    fn per_node_requests_and_degenerate_runs() {
        let rf = RunFile::parse(HAND_MADE).unwrap();
        let mut r = rf.jobs[0].request.clone();
        assert_eq!(per_node_gpus(&r), Some((Some("a100".into()), 2)));
        r.gpus_per_node.clear();
        assert_eq!(per_node_gpus(&r), None);
        r.min_nodes = 2;
        r.gpus_per_job = Some(crate::run_file::GpuReqRec { ty: None, count: 6 });
        assert_eq!(per_node_gpus(&r), Some((None, 3)));
        r.gpus_per_job = None;
        r.ntasks = Some(8);
        r.gpus_per_task = Some(crate::run_file::GpuReqRec { ty: None, count: 1 });
        assert_eq!(per_node_gpus(&r), Some((None, 4)));
        // An empty run: one point, no time.
        let mut empty = rf.clone();
        empty.jobs.clear();
        empty.node_states.clear();
        empty.end_time = 0;
        let fr = fragmentation(&empty);
        assert_eq!(fr.points, vec![(0, split(0, 62, 0, 0))]);
        assert_eq!(
            (fr.fragmented_share(), fr.fragmented_share_of_idle()),
            (0.0, 0.0)
        );
        // No GPUs at all.
        let mut bare = rf;
        for n in &mut bare.cluster.nodes {
            n.gpus.clear();
        }
        for j in &mut bare.jobs {
            for r in &mut j.runs {
                for na in &mut r.nodes {
                    na.gpus.clear();
                }
            }
        }
        let fr = fragmentation(&bare);
        assert_eq!(fr.total, 0);
        assert_eq!(fr.fragmented_share(), 0.0);
    }
}
