//! The seeded synthetic workload: Poisson arrivals, lognormal run times and
//! a discrete mix of job shapes. Jobs are generated one at a time, so a
//! million-job workload never sits in memory.

use std::path::Path;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::weighted::WeightedIndex;
use rand_distr::{Distribution, Exp, LogNormal, Uniform};

use gresim_engine::SourceError;
use gresim_model::job::{GpuReq, JobRequest, JobSpec, MemReq, RunTime};
use gresim_model::units::parse_mem_mib;
use gresim_model::{Cluster, PartId};

use crate::error::InputError;
use crate::spec::SyntheticDef;

/// A validated synthetic workload description.
#[derive(Debug, Clone)]
pub struct Synthetic {
    pub jobs: u64,
    arrival: Exp<f64>,
    run_time: LogNormal<f64>,
    run_min: u64,
    run_max: u64,
    limit_factor: f64,
    to_limit_share: f64,
    /// (job name, request, run-time scale) per shape; the name is shared by its jobs.
    shapes: Vec<(Arc<str>, Arc<JobRequest>, f64)>,
    /// Each shape's communication profile.
    shape_comm: Vec<Option<Arc<gresim_model::comm::CommProfile>>>,
    weights: WeightedIndex<f64>,
    users: u32,
}

impl Synthetic {
    pub fn new(file: &Path, d: &SyntheticDef, cluster: &Cluster) -> Result<Self, InputError> {
        let p = "workload.synthetic";
        let err = |f: &str, m: String| InputError::at(file, format!("{p}.{f}"), m);
        if !(d.mean_interarrival.is_finite() && d.mean_interarrival > 0.0) {
            return Err(err(
                "mean_interarrival",
                "expected a positive number of seconds".into(),
            ));
        }
        let arrival = Exp::new(1.0 / d.mean_interarrival)
            .map_err(|e| err("mean_interarrival", e.to_string()))?;
        if !(d.run_time_median.is_finite() && d.run_time_median > 0.0) {
            return Err(err(
                "run_time_median",
                "expected a positive number of seconds".into(),
            ));
        }
        if !(d.run_time_sigma.is_finite() && d.run_time_sigma >= 0.0) {
            return Err(err("run_time_sigma", "expected a number >= 0".into()));
        }
        let run_time = LogNormal::new(d.run_time_median.ln(), d.run_time_sigma)
            .map_err(|e| err("run_time_sigma", e.to_string()))?;
        let limit_factor = d.time_limit_factor.unwrap_or(2.0);
        if !(limit_factor.is_finite() && limit_factor >= 1.0) {
            return Err(err("time_limit_factor", "expected a number >= 1".into()));
        }
        let to_limit_share = d.runs_to_limit_share.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&to_limit_share) {
            return Err(err(
                "runs_to_limit_share",
                "expected a share between 0 and 1".into(),
            ));
        }
        let partitions: Vec<PartId> = match &d.partition {
            None => Vec::new(),
            Some(name) => vec![cluster
                .partition_id(name)
                .ok_or_else(|| err("partition", format!("unknown partition '{name}'")))?],
        };
        if d.mix.is_empty() {
            return Err(err("mix", "expected at least one job shape".into()));
        }
        let mut shapes = Vec::new();
        let mut shape_comm = Vec::new();
        for (i, m) in d.mix.iter().enumerate() {
            let mp = format!("mix[{i}]");
            if !(m.weight.is_finite() && m.weight > 0.0) {
                return Err(err(
                    &format!("{mp}.weight"),
                    "expected a positive weight".into(),
                ));
            }
            let ty = match &m.ty {
                None => None,
                Some(t) => Some(cluster.gpu_type_id(t).ok_or_else(|| {
                    let known: Vec<&str> =
                        cluster.gpu_types.iter().map(|t| t.name.as_str()).collect();
                    err(
                        &format!("{mp}.type"),
                        format!(
                            "unknown GPU type '{t}'; the cluster has: {}",
                            known.join(", ")
                        ),
                    )
                })?),
            };
            if m.gpus > 0 && cluster.gpu_types.is_empty() {
                return Err(err(
                    &format!("{mp}.gpus"),
                    "requests GPUs, but the cluster has no GPUs".into(),
                ));
            }
            let nodes = m.nodes.unwrap_or(1);
            if nodes == 0 {
                return Err(err(
                    &format!("{mp}.nodes"),
                    "expected at least 1 node".into(),
                ));
            }
            let mem = match (&m.mem, &m.mem_per_gpu) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        &mp,
                        "mem and mem_per_gpu are mutually exclusive".into(),
                    ))
                }
                (Some(s), None) => MemReq::PerNode(
                    parse_mem_mib(s).map_err(|e| err(&format!("{mp}.mem"), e.to_string()))?,
                ),
                (None, Some(s)) if m.gpus > 0 => MemReq::PerGpu(
                    parse_mem_mib(s)
                        .map_err(|e| err(&format!("{mp}.mem_per_gpu"), e.to_string()))?,
                ),
                (None, Some(_)) => {
                    return Err(err(
                        &format!("{mp}.mem_per_gpu"),
                        "mem_per_gpu without GPUs".into(),
                    ))
                }
                (None, None) => MemReq::PerNode(1024),
            };
            let req = JobRequest {
                min_nodes: nodes,
                max_nodes: nodes,
                cpus_per_task: if m.gpus > 0 {
                    1
                } else {
                    m.cpus.unwrap_or(1).max(1)
                },
                cpus_per_gpu: if m.gpus > 0 { m.cpus_per_gpu } else { None },
                gpus_per_node: if m.gpus > 0 {
                    vec![GpuReq { ty, count: m.gpus }]
                } else {
                    Vec::new()
                },
                mem,
                partitions: partitions.clone(),
                ..JobRequest::default()
            };
            let scale = m.run_time_scale.unwrap_or(1.0);
            if !(scale.is_finite() && scale > 0.0) {
                return Err(err(
                    &format!("{mp}.run_time_scale"),
                    "expected a positive number".into(),
                ));
            }
            let name = m.name.clone().unwrap_or_else(|| format!("shape{i}"));
            shapes.push((Arc::from(name), Arc::new(req), scale));
            shape_comm.push(match &m.comm {
                Some(c) => Some(Arc::new(crate::topo_build::build_comm(
                    file,
                    &format!("{p}.{mp}.comm"),
                    c,
                    cluster,
                    true,
                )?)),
                None => None,
            });
        }
        let weights = WeightedIndex::new(d.mix.iter().map(|m| m.weight))
            .map_err(|e| err("mix", e.to_string()))?;
        let run_min = d.run_time_min.unwrap_or(1).max(1);
        let run_max = d.run_time_max.unwrap_or(u64::MAX / 4);
        if run_max < run_min {
            return Err(err("run_time_max", "must be at least run_time_min".into()));
        }
        Ok(Synthetic {
            jobs: d.jobs,
            arrival,
            run_time,
            run_min,
            run_max,
            limit_factor,
            to_limit_share,
            shapes,
            shape_comm,
            weights,
            users: d.users.unwrap_or(8).max(1),
        })
    }

    /// The job stream for `seed`.
    pub fn stream(&self, seed: u64) -> SynthStream<'_> {
        SynthStream {
            syn: self,
            rng: ChaCha8Rng::seed_from_u64(seed),
            t: 0.0,
            i: 0,
            requests: Vec::new(),
            users: Interned::default(),
        }
    }
}

/// An iterator over the generated submissions.
pub struct SynthStream<'a> {
    syn: &'a Synthetic,
    rng: ChaCha8Rng,
    t: f64,
    i: u64,
    /// One shared request per (shape, time limit), per shape by the limit
    /// in minutes: jobs differ from their shape only in the limit, and a
    /// long trace repeats each pair many times, so a million jobs hold a
    /// few thousand requests, not a million.
    requests: Vec<Interned<Arc<JobRequest>>>,
    /// The user names handed out so far, shared by their jobs.
    users: Interned<Arc<str>>,
}

/// Values by a number, made on first use: the multiples of a step below
/// [`Interned::DIRECT`] steps in a vector indexed by them (a generated job
/// looks two up), the others in a map.
struct Interned<V> {
    direct: Vec<Option<V>>,
    rest: std::collections::BTreeMap<u64, V>,
}

impl<V> Default for Interned<V> {
    fn default() -> Self {
        Interned {
            direct: Vec::new(),
            rest: std::collections::BTreeMap::new(),
        }
    }
}

impl<V> Interned<V> {
    /// Numbers kept in the vector: a time limit of up to about 45 days in
    /// minutes, as many users.
    const DIRECT: u64 = 1 << 16;

    fn get_or_insert_with(&mut self, n: u64, step: u64, make: impl FnOnce() -> V) -> &V {
        if n.is_multiple_of(step) && n / step < Self::DIRECT {
            let i = (n / step) as usize;
            if self.direct.len() <= i {
                self.direct.resize_with(i + 1, || None);
            }
            self.direct[i].get_or_insert_with(make)
        } else {
            self.rest.entry(n).or_insert_with(make)
        }
    }
}

impl Iterator for SynthStream<'_> {
    type Item = Result<JobSpec, SourceError>;

    /// Exact: one submission per job still to come (the engine sizes its
    /// tables by it).
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = usize::try_from(self.syn.jobs.saturating_sub(self.i)).unwrap_or(usize::MAX);
        (left, Some(left))
    }

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.syn;
        if self.i >= s.jobs {
            return None;
        }
        self.i += 1;
        if self.i > 1 {
            self.t += s.arrival.sample(&mut self.rng);
        }
        let k = s.weights.sample(&mut self.rng);
        let (name, req, scale) = &s.shapes[k];
        let raw = s.run_time.sample(&mut self.rng) * scale;
        let run = (raw.round() as u64).clamp(s.run_min, s.run_max);
        let limit_secs = ((run as f64) * s.limit_factor).ceil() as u64;
        let limit = limit_secs.div_ceil(60).max(1) * 60;
        let to_limit = s.to_limit_share > 0.0
            && Uniform::new(0.0, 1.0)
                .map(|u| u.sample(&mut self.rng))
                .unwrap_or(1.0)
                < s.to_limit_share;
        let user = self.rng_user();
        if self.requests.len() <= k {
            self.requests.resize_with(k + 1, Interned::default);
        }
        let request = Arc::clone(self.requests[k].get_or_insert_with(limit, 60, || {
            let mut r = (**req).clone();
            r.time_limit = Some(Some(limit));
            Arc::new(r)
        }));
        let run_time = if to_limit {
            RunTime::ToLimit
        } else {
            RunTime::Secs(run)
        };
        let mut spec = JobSpec::new(
            key_of(self.i),
            Arc::clone(name),
            user,
            request,
            self.t as u64,
            run_time,
        );
        spec.comm = s.shape_comm.get(k).cloned().flatten();
        Some(Ok(spec))
    }
}

/// `format!("syn{i}")`, written digit by digit: the same string without
/// the formatting machinery (one of these per generated job).
fn key_of(i: u64) -> String {
    let mut digits = [0u8; 20];
    let (mut n, mut k) = (i, digits.len());
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut key = String::with_capacity(3 + digits.len() - k);
    key.push_str("syn");
    for &d in &digits[k..] {
        key.push(char::from(d));
    }
    key
}

impl SynthStream<'_> {
    fn rng_user(&mut self) -> Arc<str> {
        let u = Uniform::new(0, self.syn.users)
            .map(|d| d.sample(&mut self.rng))
            .unwrap_or(0);
        Arc::clone(
            self.users
                .get_or_insert_with(u64::from(u), 1, || Arc::from(format!("user{}", u + 1))),
        )
    }
}

#[cfg(test)]
mod tests;
