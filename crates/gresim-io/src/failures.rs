//! The failure model: seeded random node failures and repairs.
//!
//! Each failing unit (one node, or a correlated group such as a rack) has
//! its own `ChaCha8Rng` stream, so its failure times depend only on the seed
//! and the unit, not on the other units or the order of anything else. A
//! unit alternates: up for a time drawn from its MTBF distribution, then
//! down for a time drawn from its repair distribution. The stream merges the
//! units lazily in time order and yields [`Action::NodeFail`] /
//! [`Action::NodeRepair`] for the nodes whose state changes (a node down
//! both on its own and with its rack comes back when both are repaired).
//! See docs/reliability.md.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Weibull};

use gresim_engine::{Action, TimedAction};
use gresim_model::job::Time;
use gresim_model::{hostlist, Cluster, NodeId};

use crate::error::InputError;
use crate::spec::{DistDef, FailuresDef};

/// Durations are capped at a century (a mean of 1e300 hours must not overflow).
const MAX_SECS: f64 = 100.0 * 365.0 * 86_400.0;

/// A validated distribution of durations, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Exponential(Exp<f64>),
    Weibull(Weibull<f64>),
    Fixed(f64),
}

impl Dist {
    /// A duration in whole seconds, at least 1.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> Time {
        let x = match self {
            Dist::Exponential(d) => d.sample(rng),
            Dist::Weibull(d) => d.sample(rng),
            Dist::Fixed(v) => *v,
        };
        if x.is_finite() {
            x.clamp(1.0, MAX_SECS).ceil() as Time
        } else {
            MAX_SECS as Time
        }
    }
}

/// One failing unit: a node or a group.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub name: String,
    pub nodes: Vec<NodeId>,
    pub mtbf: Dist,
    pub repair: Dist,
    /// The unit's random stream: the node index, or 2^32 + group index.
    pub stream: u64,
}

/// A validated failure model.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureModel {
    pub units: Arc<[Unit]>,
    pub seed: Option<u64>,
    pub start: Time,
    pub until: Option<Time>,
    pub nodes: usize,
}

/// Γ(x) for x > 0 (Lanczos, g = 7), for the Weibull mean.
fn gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x));
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

fn dist(file: &Path, path: &str, d: &DistDef) -> Result<Dist, InputError> {
    let err = |f: &str, m: String| InputError::at(file, format!("{path}.{f}"), m);
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let mean = match (d.mean_hours, d.mean_seconds) {
        (Some(_), Some(_)) => {
            return Err(err(
                "mean_seconds",
                "give mean_hours or mean_seconds, not both".into(),
            ))
        }
        (Some(h), None) => Some((h * 3600.0, "mean_hours")),
        (None, Some(s)) => Some((s, "mean_seconds")),
        (None, None) => None,
    };
    if let Some((m, f)) = mean {
        if !positive(m) {
            return Err(err(f, format!("expected a positive duration, got {m}")));
        }
    }
    let need_mean = |what: &str| {
        mean.map(|m| m.0).ok_or_else(|| {
            err(
                "mean_hours",
                format!("a {what} distribution needs mean_hours or mean_seconds"),
            )
        })
    };
    match d.distribution.as_str() {
        "exponential" => {
            if d.shape.is_some() || d.scale_hours.is_some() {
                return Err(err(
                    "shape",
                    "shape and scale_hours belong to the weibull distribution".into(),
                ));
            }
            let m = need_mean("exponential")?;
            Exp::new(1.0 / m)
                .map(Dist::Exponential)
                .map_err(|e| err("mean_hours", e.to_string()))
        }
        "fixed" => {
            if d.shape.is_some() || d.scale_hours.is_some() {
                return Err(err(
                    "shape",
                    "shape and scale_hours belong to the weibull distribution".into(),
                ));
            }
            Ok(Dist::Fixed(need_mean("fixed")?))
        }
        "weibull" => {
            let k = d
                .shape
                .ok_or_else(|| err("shape", "a weibull distribution needs a shape".into()))?;
            if !(k.is_finite() && (0.05..=50.0).contains(&k)) {
                return Err(err(
                    "shape",
                    format!("expected a shape between 0.05 and 50, got {k}"),
                ));
            }
            let scale = match (d.scale_hours, mean) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        "scale_hours",
                        "give a mean or scale_hours, not both".into(),
                    ))
                }
                (Some(s), None) => {
                    if !positive(s) {
                        return Err(err(
                            "scale_hours",
                            format!("expected a positive duration, got {s}"),
                        ));
                    }
                    s * 3600.0
                }
                (None, Some((m, _))) => m / gamma(1.0 + 1.0 / k),
                (None, None) => {
                    return Err(err(
                        "mean_hours",
                        "a weibull distribution needs mean_hours, mean_seconds or scale_hours"
                            .into(),
                    ))
                }
            };
            if !positive(scale) {
                return Err(err("scale_hours", "the scale is out of range".into()));
            }
            Weibull::new(scale, k)
                .map(Dist::Weibull)
                .map_err(|e| err("shape", e.to_string()))
        }
        other => Err(err(
            "distribution",
            format!("unknown distribution '{other}'; expected exponential, weibull or fixed"),
        )),
    }
}

fn node_ids(
    file: &Path,
    path: &str,
    h: &str,
    cluster: &Cluster,
) -> Result<Vec<NodeId>, InputError> {
    if h == "ALL" {
        return Ok((0..cluster.nodes.len()).map(NodeId::from_idx).collect());
    }
    let names = hostlist::expand(h)
        .map_err(|e| InputError::at(file, path, format!("bad hostlist '{h}': {e}")))?;
    let mut ids: Vec<NodeId> = names
        .iter()
        .map(|n| {
            cluster.node_id(n).ok_or_else(|| {
                InputError::at(file, path, format!("node '{n}' is not in the cluster"))
            })
        })
        .collect::<Result<_, _>>()?;
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// Checks `failures` and resolves it against the cluster.
pub fn build(file: &Path, d: &FailuresDef, cluster: &Cluster) -> Result<FailureModel, InputError> {
    let repair = d
        .repair
        .as_ref()
        .map(|r| dist(file, "failures.repair", r))
        .transpose()?;
    let mut units = Vec::new();
    if let Some(m) = &d.mtbf {
        let mtbf = dist(file, "failures.mtbf", m)?;
        let repair = repair.ok_or_else(|| {
            InputError::at(
                file,
                "failures.repair",
                "node failures need a repair-time distribution",
            )
        })?;
        for n in node_ids(
            file,
            "failures.nodes",
            d.nodes.as_deref().unwrap_or("ALL"),
            cluster,
        )? {
            units.push(Unit {
                name: cluster.node(n).name.clone(),
                nodes: vec![n],
                mtbf,
                repair,
                stream: n.idx() as u64,
            });
        }
    } else if d.nodes.is_some() {
        return Err(InputError::at(
            file,
            "failures.nodes",
            "nodes that fail on their own need an mtbf distribution",
        ));
    }
    for (i, c) in d.correlated.iter().enumerate() {
        let p = format!("failures.correlated[{i}]");
        let mtbf =
            match (&c.mtbf, c.mtbf_hours) {
                (Some(m), None) => dist(file, &format!("{p}.mtbf"), m)?,
                (None, Some(h)) => {
                    if !(h.is_finite() && h > 0.0) {
                        return Err(InputError::at(
                            file,
                            format!("{p}.mtbf_hours"),
                            format!("expected a positive number of hours, got {h}"),
                        ));
                    }
                    Dist::Exponential(Exp::new(1.0 / (h * 3600.0)).map_err(|e| {
                        InputError::at(file, format!("{p}.mtbf_hours"), e.to_string())
                    })?)
                }
                _ => {
                    return Err(InputError::at(
                        file,
                        format!("{p}.mtbf_hours"),
                        "expected exactly one of mtbf_hours and mtbf",
                    ))
                }
            };
        let repair = match &c.repair {
            Some(r) => dist(file, &format!("{p}.repair"), r)?,
            None => repair.ok_or_else(|| {
                InputError::at(
                    file,
                    format!("{p}.repair"),
                    "no repair distribution here nor in failures.repair",
                )
            })?,
        };
        let nodes = node_ids(file, &format!("{p}.nodes"), &c.nodes, cluster)?;
        if nodes.is_empty() {
            return Err(InputError::at(file, format!("{p}.nodes"), "no nodes"));
        }
        units.push(Unit {
            name: c.name.clone().unwrap_or_else(|| format!("group{i}")),
            nodes,
            mtbf,
            repair,
            stream: (1 << 32) | i as u64,
        });
    }
    if units.is_empty() {
        return Err(InputError::at(
            file,
            "failures",
            "expected mtbf (per-node failures) or correlated groups",
        ));
    }
    let start = d.start.unwrap_or(0);
    if let Some(u) = d.until {
        if u < start {
            return Err(InputError::at(
                file,
                "failures.until",
                format!("until ({u}) is before start ({start})"),
            ));
        }
    }
    Ok(FailureModel {
        units: units.into(),
        seed: d.seed,
        start,
        until: d.until,
        nodes: cluster.nodes.len(),
    })
}

/// Mixes the run's seed so the failure process does not share the
/// workload generator's stream.
const SEED_SALT: u64 = 0x6661_696c_7572_6573; // "failures"

impl FailureModel {
    /// The failure process for a run with `run_seed` (unless the model has its own seed).
    pub fn stream(&self, run_seed: u64) -> FailureStream {
        let seed = self.seed.unwrap_or(run_seed ^ SEED_SALT);
        let mut rngs = Vec::with_capacity(self.units.len());
        let mut heap = BinaryHeap::with_capacity(self.units.len());
        for (i, u) in self.units.iter().enumerate() {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(u.stream);
            let t = self.start.saturating_add(u.mtbf.sample(&mut rng));
            if self.until.is_none_or(|until| t <= until) {
                heap.push(Reverse((t, 0u8, i as u32)));
            }
            rngs.push(rng);
        }
        FailureStream {
            units: Arc::clone(&self.units),
            rngs,
            heap,
            down: vec![0; self.nodes],
            until: self.until,
        }
    }
}

/// The lazily merged failure process of all units.
#[derive(Debug, Clone)]
pub struct FailureStream {
    units: Arc<[Unit]>,
    rngs: Vec<ChaCha8Rng>,
    /// (time, 0 = failure / 1 = repair, unit): failures before repairs in a second.
    heap: BinaryHeap<Reverse<(Time, u8, u32)>>,
    /// Per node: how many of its units are down.
    down: Vec<u16>,
    until: Option<Time>,
}

impl Iterator for FailureStream {
    type Item = TimedAction;

    fn next(&mut self) -> Option<TimedAction> {
        loop {
            let Reverse((t, kind, u)) = self.heap.pop()?;
            let unit = &self.units[u as usize];
            let rng = &mut self.rngs[u as usize];
            let mut changed = Vec::new();
            if kind == 0 {
                for &n in &unit.nodes {
                    let d = &mut self.down[n.idx()];
                    *d += 1;
                    if *d == 1 {
                        changed.push(n);
                    }
                }
                let back = t.saturating_add(unit.repair.sample(rng));
                self.heap.push(Reverse((back, 1, u)));
            } else {
                for &n in &unit.nodes {
                    let d = &mut self.down[n.idx()];
                    *d = d.saturating_sub(1);
                    if *d == 0 {
                        changed.push(n);
                    }
                }
                let next = t.saturating_add(unit.mtbf.sample(rng));
                if self.until.is_none_or(|until| next <= until) {
                    self.heap.push(Reverse((next, 0, u)));
                }
            }
            if !changed.is_empty() {
                let action = if kind == 0 {
                    Action::NodeFail(changed)
                } else {
                    Action::NodeRepair(changed)
                };
                return Some(TimedAction { at: t, action });
            }
        }
    }
}

#[cfg(test)]
mod tests;
