//! A deterministic synthetic SWF workload (Standard Workload Format, the
//! Parallel Workloads Archive's), for benchmarks and peer comparisons.
//!
//! The same model as the peer kit's `gen_swf.py` (Python), whose options it
//! mirrors:
//!
//! * arrivals: a Poisson process (exponential inter-arrival times; submit
//!   times are the whole seconds of their running sum);
//! * run times: lognormal(`rt_mu`, `rt_sigma`) seconds, rounded half to
//!   even and clipped to `[min_runtime, max_runtime]`;
//! * sizes: powers of two 2^k, k in `[0, max_log2]` (capped so that 2^k ≤
//!   `capacity`), P(k) ∝ `decay`^k; the size is both the allocated (field
//!   5) and requested (field 8) processors;
//! * requested time (field 9): ⌈run time × U(1, `max_overestimate`)⌉;
//! * users: uniform over `1..=users`.
//!
//! With `load`, the mean inter-arrival time is set so that the offered
//! load Σ size × run time / (capacity × jobs × mean inter-arrival) equals
//! it; otherwise `mean_interarrival` is used.
//!
//! The random numbers come from ChaCha8 seeded with `seed` and are drawn in
//! `gen_swf.py`'s order (size then run time for every job; then per job the
//! inter-arrival gap, the overestimate and the user), but the generator and
//! the samplers differ from Python's Mersenne Twister and `random` module,
//! so the file is **not** byte-identical to `gen_swf.py`'s for the same seed:
//! it is a different draw from the same distributions. A given seed and set
//! of parameters always gives the same file, on every platform.

use std::io::Write;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::weighted::WeightedIndex;
use rand_distr::{Distribution, Exp, LogNormal};

/// The generator's parameters; [`Default`] is `gen_swf.py`'s defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct SwfGen {
    /// Jobs in the workload (`-n`).
    pub jobs: u64,
    pub seed: u64,
    /// System size in units; also caps the job size.
    pub capacity: u64,
    /// Target offered load; sets the arrival rate when given.
    pub load: Option<f64>,
    /// Mean seconds between arrivals when `load` is `None`.
    pub mean_interarrival: f64,
    /// Lognormal mu of the run time, in ln(seconds).
    pub rt_mu: f64,
    /// Lognormal sigma of the run time.
    pub rt_sigma: f64,
    pub min_runtime: u64,
    pub max_runtime: u64,
    /// The largest size is 2^max_log2, capped by `capacity`.
    pub max_log2: u32,
    /// P(size = 2^k) ∝ decay^k.
    pub decay: f64,
    /// Requested time = run time × U(1, this); 1 is exact.
    pub max_overestimate: f64,
    pub users: u64,
    /// Label for the header comment only.
    pub unit: String,
}

impl Default for SwfGen {
    fn default() -> Self {
        SwfGen {
            jobs: 1,
            seed: 42,
            capacity: 1024,
            load: None,
            mean_interarrival: 60.0,
            rt_mu: 7.0,
            rt_sigma: 1.5,
            min_runtime: 1,
            max_runtime: 7 * 24 * 3600,
            max_log2: 7,
            decay: 0.6,
            max_overestimate: 1.0,
            users: 100,
            unit: "processor".into(),
        }
    }
}

/// A parameter out of range: `field` is the option's name without dashes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--{field}: {msg}")]
pub struct SwfGenError {
    pub field: &'static str,
    pub msg: String,
}

/// One generated job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwfJob {
    /// Field 1, from 1.
    pub id: u64,
    /// Field 2, seconds.
    pub submit: u64,
    /// Field 4, seconds.
    pub run_time: u64,
    /// Fields 5 and 8.
    pub procs: u64,
    /// Field 9, seconds.
    pub req_time: u64,
    /// Field 12.
    pub user: u64,
}

/// A generated workload: its jobs and the mean inter-arrival time used.
#[derive(Debug, Clone)]
pub struct SwfWorkload {
    pub params: SwfGen,
    pub mean_interarrival: f64,
    pub jobs: Vec<SwfJob>,
}

fn bad(field: &'static str, msg: &str) -> SwfGenError {
    SwfGenError {
        field,
        msg: msg.to_string(),
    }
}

impl SwfGen {
    /// Checks every parameter; the error names the first bad one.
    pub fn validate(&self) -> Result<(), SwfGenError> {
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if self.jobs == 0 {
            return Err(bad("jobs", "expected at least 1 job"));
        }
        if self.capacity == 0 {
            return Err(bad("capacity", "expected at least 1 unit"));
        }
        if self.load.is_some_and(|l| !pos(l)) {
            return Err(bad("load", "expected a positive number"));
        }
        if !pos(self.mean_interarrival) {
            return Err(bad(
                "mean-interarrival",
                "expected a positive number of seconds",
            ));
        }
        if !self.rt_mu.is_finite() || self.rt_mu.abs() > 100.0 {
            return Err(bad("rt-mu", "expected a number in [-100, 100]"));
        }
        if !(self.rt_sigma.is_finite() && (0.0..=100.0).contains(&self.rt_sigma)) {
            return Err(bad("rt-sigma", "expected a number in [0, 100]"));
        }
        if self.min_runtime > self.max_runtime {
            return Err(bad("min-runtime", "expected at most --max-runtime"));
        }
        // Keeps run time × overestimate and the load's work sum far from overflow.
        if self.max_runtime > 1 << 40 {
            return Err(bad("max-runtime", "expected at most 2^40 seconds"));
        }
        if self.max_log2 > 40 {
            return Err(bad("max-log2", "expected at most 40"));
        }
        if !pos(self.decay) {
            return Err(bad("decay", "expected a positive number"));
        }
        if !(self.max_overestimate.is_finite() && (1.0..=1e6).contains(&self.max_overestimate)) {
            return Err(bad("max-overestimate", "expected a number in [1, 1e6]"));
        }
        if self.users == 0 {
            return Err(bad("users", "expected at least 1"));
        }
        if self.unit.contains(['\n', '\r']) {
            return Err(bad("unit", "expected a label on one line"));
        }
        Ok(())
    }

    /// Generates the workload (every job in memory: 48 bytes each).
    pub fn generate(&self) -> Result<SwfWorkload, SwfGenError> {
        self.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut kmax = self.max_log2;
        while kmax > 0 && (1u64 << kmax) > self.capacity {
            kmax -= 1;
        }
        let weights: Vec<f64> = (0..=kmax).map(|k| self.decay.powi(k as i32)).collect();
        if weights.iter().sum::<f64>().is_infinite() {
            return Err(bad("decay", "too large: decay^max-log2 overflows"));
        }
        let size = WeightedIndex::new(&weights)
            .map_err(|e| bad("decay", &format!("no usable size weights ({e})")))?;
        let run_time = LogNormal::new(self.rt_mu, self.rt_sigma)
            .map_err(|e| bad("rt-sigma", &e.to_string()))?;

        let n = usize::try_from(self.jobs).map_err(|_| bad("jobs", "too many jobs"))?;
        let mut jobs = Vec::new();
        jobs.try_reserve_exact(n)
            .map_err(|_| bad("jobs", "too many jobs to hold in memory"))?;
        let mut work: f64 = 0.0;
        for i in 0..self.jobs {
            let procs = 1u64 << size.sample(&mut rng);
            let rt = run_time.sample(&mut rng).round_ties_even();
            // `as` saturates: a huge draw is clipped like any other.
            let rt = (rt as u64).clamp(self.min_runtime, self.max_runtime);
            work += procs as f64 * rt as f64;
            jobs.push(SwfJob {
                id: i + 1,
                submit: 0,
                run_time: rt,
                procs,
                req_time: 0,
                user: 0,
            });
        }
        let mean_ia = match self.load {
            Some(load) => work / (load * self.capacity as f64 * self.jobs as f64),
            None => self.mean_interarrival,
        };
        if !mean_ia.is_finite() {
            return Err(bad(
                "load",
                "too small: the mean inter-arrival time overflows",
            ));
        }
        // No gaps when every run time is 0 (so is the work), as gen_swf.py.
        let gap = (mean_ia > 0.0)
            .then(|| Exp::new(1.0 / mean_ia).ok())
            .flatten();
        let mut t = 0.0f64;
        for (i, j) in jobs.iter_mut().enumerate() {
            if i > 0 {
                if let Some(g) = &gap {
                    t += g.sample(&mut rng);
                }
            }
            let over = 1.0 + rng.random::<f64>() * (self.max_overestimate - 1.0);
            j.submit = t as u64;
            j.req_time = (j.run_time as f64 * over).ceil() as u64;
            j.user = rng.random_range(1..=self.users);
        }
        // Submit times stay exact in f64 and far from overflowing the
        // engine's time arithmetic.
        if t > (1u64 << 53) as f64 {
            let field = if self.load.is_some() {
                "load"
            } else {
                "mean-interarrival"
            };
            return Err(bad(
                field,
                "gives submit times past 2^53 s; expected a higher load or shorter gaps",
            ));
        }
        Ok(SwfWorkload {
            params: self.clone(),
            mean_interarrival: mean_ia,
            jobs,
        })
    }
}

impl SwfWorkload {
    /// Writes the workload as SWF: a header of `;` comments, then one line
    /// of 18 fields per job (unknown fields -1, status 1, group, executable,
    /// queue and partition 1).
    pub fn write(&self, w: &mut impl Write) -> std::io::Result<()> {
        let p = &self.params;
        let opt = |x: Option<f64>| x.map_or_else(|| "None".to_string(), |v| v.to_string());
        writeln!(
            w,
            "; SWF generated by gresim (gresim_io::swf_gen, synthetic)"
        )?;
        writeln!(w, "; Version: 2.2")?;
        writeln!(
            w,
            "; Generator: capacity={} decay={} jobs={} load={} max_log2={} max_overestimate={} \
max_runtime={} mean_interarrival={} min_runtime={} rng=ChaCha8 rt_mu={} rt_sigma={} seed={} \
unit={} users={}",
            p.capacity,
            p.decay,
            p.jobs,
            opt(p.load),
            p.max_log2,
            p.max_overestimate,
            p.max_runtime,
            p.mean_interarrival,
            p.min_runtime,
            p.rt_mu,
            p.rt_sigma,
            p.seed,
            p.unit,
            p.users
        )?;
        writeln!(w, "; MeanInterarrival: {:.3}", self.mean_interarrival)?;
        writeln!(w, "; Unit: {}", p.unit)?;
        writeln!(w, "; MaxJobs: {}\n; MaxRecords: {}", p.jobs, p.jobs)?;
        writeln!(w, "; MaxProcs: {}\n; MaxNodes: {}", p.capacity, p.capacity)?;
        writeln!(w, "; UnixStartTime: 0")?;
        for j in &self.jobs {
            writeln!(
                w,
                "{} {} -1 {} {} -1 -1 {} {} -1 1 {} 1 1 1 1 -1 -1",
                j.id, j.submit, j.run_time, j.procs, j.procs, j.req_time, j.user
            )?;
        }
        Ok(())
    }

    /// The SWF text (see [`SwfWorkload::write`]).
    pub fn to_swf(&self) -> String {
        let mut v = Vec::with_capacity(64 + self.jobs.len() * 40);
        // Writing to a Vec cannot fail.
        let _ = self.write(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    }

    /// Writes the SWF to `path` through a temporary file beside it (named
    /// after this process, so concurrent writers of the same file do not
    /// collide), renamed into place at the end, so a failure leaves no
    /// half-written file.
    pub fn write_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".{}.part", std::process::id()));
        let tmp = std::path::PathBuf::from(tmp);
        let res = (|| {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            self.write(&mut f)?;
            f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if res.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        res
    }
}

/// The gresim scenario of AccaSim's system file `accasim_sys_128x8.json`
/// reading the SWF `trace` (a path relative to the scenario): 128 nodes × 8
/// cores, 1 GiB per core, so a job of P processors (`--ntasks=P` over 1 to P
/// nodes, see `traces::swf`) takes any P cores of the cluster, count-based
/// admission as AccaSim's FirstFit. Policies are given with `--policy`.
pub fn peer_128x8_scenario_json(trace: &str) -> String {
    serde_json::json!({
        "schema_version": 1,
        "name": "peer_128x8",
        "description": "AccaSim's accasim_sys_128x8.json: 128 nodes x 8 units, count-based admission. \
A job of P SWF processors is --ntasks=P over 1-P nodes; 1 GiB per core and 8 GiB per node, \
so memory never limits. Time limits are the SWF requested times, enforced exactly.",
        "cluster": {"nodes": [{"names": "n[001-128]", "cores_per_socket": 8, "memory": "8G"}]},
        "scheduler": {"def_mem_per_cpu": "1G", "timelimit_check_interval": 0},
        "workload": {"trace": trace, "format": "swf"}
    })
    .to_string()
}

#[cfg(test)]
mod tests;
