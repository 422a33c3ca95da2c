//! `sim sweep SWEEP.json`: a grid of policies × parameters × seeds over one
//! scenario, run in parallel with rayon (docs/scenario-format.md, "Sweeps").
//!
//! - `--shard K/N` runs the points `i` with `i mod N = K` (by default from
//!   `SLURM_ARRAY_TASK_ID` / `SLURM_ARRAY_TASK_COUNT`) and writes its rows to
//!   `DIR/shards/shard-K-of-N.json`;
//! - `sim sweep merge DIR…` joins shards into `results.json`/`results.csv`,
//!   byte for byte what the unsharded run writes;
//! - `--emit-sbatch FILE` writes a Slurm job-array script running the shards.
//!
//! Every point is one run exactly as `sim run --policy P --seed S` builds it
//! (through [`crate::compare_cmd::run_policies`]), on a scenario whose JSON
//! has the point's parameter values set. Results go through one function that
//! orders rows by point index, so they do not depend on the thread count or
//! on how the sweep was sharded.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gresim_io::{InputError, Scenario, Workload};
use gresim_report::summary::round6;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::progress::Progress;
use crate::Failure;

/// The sweep file's schema version.
const SWEEP_SCHEMA_VERSION: u32 = 1;
/// The largest array Slurm accepts by default (MaxArraySize=1001).
const MAX_ARRAY_TASKS: usize = 1000;
/// The pseudo-parameter that scales the arrival rate.
const LOAD_SCALE: &str = "load_scale";

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    cmd: Option<SweepCmd>,
    /// The sweep file (JSON, see docs/scenario-format.md, "Sweeps").
    #[arg(required = true)]
    sweep: Option<PathBuf>,
    /// Output directory (default: the sweep's outputs.dir, else out/<sweep name>).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Run only shard K of N (0 <= K < N): the points i with i mod N = K.
    /// Default: SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) of
    /// SLURM_ARRAY_TASK_COUNT when set, else the whole sweep.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Worker threads (default: RAYON_NUM_THREADS, else one per core). Results do not depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print nothing on success, and no progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Print the points of the grid (and of the shard) and exit without running.
    #[arg(long)]
    list: bool,
    /// Write a Slurm job-array script that runs the sweep in shards, then exit.
    #[arg(long, value_name = "FILE")]
    emit_sbatch: Option<PathBuf>,
    #[command(flatten)]
    sbatch: SbatchOpts,
}

/// Options of `--emit-sbatch`.
#[derive(clap::Args, Debug)]
struct SbatchOpts {
    /// Array tasks (shards) (default: one per point, at most 1000).
    #[arg(long, requires = "emit_sbatch", value_name = "N")]
    tasks: Option<usize>,
    /// CPUs per array task; each task runs that many points at once.
    #[arg(long, requires = "emit_sbatch", default_value_t = 1, value_name = "N")]
    cpus_per_task: u32,
    /// Memory per array task (sbatch --mem), e.g. 8G.
    #[arg(long, requires = "emit_sbatch")]
    mem: Option<String>,
    /// Time limit per array task (sbatch --time), e.g. 2:00:00.
    #[arg(long, requires = "emit_sbatch")]
    time: Option<String>,
    /// Partition of the array and merge jobs.
    #[arg(long, requires = "emit_sbatch")]
    partition: Option<String>,
    /// Another #SBATCH option for the array and merge jobs (repeatable), e.g. --sbatch-arg=--account=proj.
    #[arg(
        long = "sbatch-arg",
        requires = "emit_sbatch",
        allow_hyphen_values = true,
        value_name = "OPTION"
    )]
    sbatch_args: Vec<String>,
    /// The sim binary the jobs run (default: this one).
    #[arg(long, requires = "emit_sbatch", value_name = "PATH")]
    sim_bin: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum SweepCmd {
    /// Join the shards' rows (DIR/shards/shard-K-of-N.json) into results.json and results.csv.
    Merge(MergeArgs),
}

#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// Sweep output directories (or shard files) holding the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write the results (default: the first directory).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(long, short)]
    quiet: bool,
}

// ---- the sweep file ---------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepDef {
    #[serde(default)]
    schema_version: Option<u32>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    /// The scenario, relative to the sweep file.
    scenario: String,
    #[serde(default)]
    policies: Option<Vec<String>>,
    #[serde(default)]
    parameters: BTreeMap<String, Vec<Value>>,
    #[serde(default)]
    seeds: Option<Vec<u64>>,
    #[serde(default)]
    outputs: OutputsDef,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputsDef {
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    per_point: Option<PerPoint>,
}

/// What each point writes into `points/NNNN/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
enum PerPoint {
    /// Everything `sim run` writes.
    #[default]
    Full,
    /// summary.json only.
    Summary,
    /// Nothing: the results table only.
    None,
}

/// Where a parameter goes.
#[derive(Debug, Clone)]
enum Target {
    /// A field of the scenario's JSON.
    Json(Vec<Seg>),
    /// Divide arrival times by the value.
    LoadScale,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    Key(String),
    Index(usize),
}

/// What every shard of one sweep agrees on; the head of shard and results files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Head {
    sweep: String,
    /// The scenario as the sweep file names it.
    scenario: String,
    /// A hash of the scenario text and the expanded grid: shards of different sweeps do not merge.
    fingerprint: String,
    points: usize,
    policies: Vec<String>,
    parameters: BTreeMap<String, Vec<Value>>,
    seeds: Vec<u64>,
}

/// One point of the grid.
#[derive(Debug, Clone)]
struct Point {
    index: usize,
    policy: String,
    /// Index of the parameter combination.
    combo: usize,
    seed: u64,
}

/// One row of the results table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    point: usize,
    policy: String,
    parameters: BTreeMap<String, Value>,
    seed: u64,
    jobs: u64,
    gpu_utilization: f64,
    wait_mean: f64,
    wait_p50: f64,
    wait_p95: f64,
    jct_mean: f64,
    bounded_slowdown_mean: f64,
    makespan: u64,
    placed_ideally: f64,
    allreduce_slowdown: f64,
    gpu_hours_lost: f64,
    fragmentation: f64,
}

/// The metric columns after the parameters and the seed, in CSV order.
const METRICS: &[&str] = &[
    "jobs",
    "gpu_utilization",
    "wait_mean",
    "wait_p50",
    "wait_p95",
    "jct_mean",
    "bounded_slowdown_mean",
    "makespan",
    "placed_ideally",
    "allreduce_slowdown",
    "gpu_hours_lost",
    "fragmentation",
];

/// A shard's file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShardFile {
    #[serde(flatten)]
    head: Head,
    shard: usize,
    shards: usize,
    rows: Vec<Row>,
}

/// The results file.
#[derive(Debug, Serialize)]
struct ResultsFile<'a> {
    #[serde(flatten)]
    head: &'a Head,
    rows: &'a [Row],
}

/// A loaded, expanded sweep.
struct Sweep {
    path: PathBuf,
    head: Head,
    names: Vec<String>,
    /// Per combination: the values, in `names` order.
    combos: Vec<Vec<Value>>,
    /// Per combination: the scenario to run.
    scenarios: Vec<Arc<Scenario>>,
    points: Vec<Point>,
    per_point: PerPoint,
    out_dir: Option<PathBuf>,
    warnings: Vec<String>,
}

fn input_err(e: InputError) -> Failure {
    Failure::input(e)
}

fn at(path: &Path, field: impl Into<String>, msg: impl Into<String>) -> Failure {
    input_err(InputError::at(path, field, msg))
}

/// Reads, checks and expands a sweep file; every scenario variant is built
/// (and so checked) before anything runs.
fn load_sweep(path: &Path) -> Result<Sweep, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| input_err(InputError::new(path, format!("cannot read the sweep: {e}"))))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let def: SweepDef = serde_path_to_error::deserialize(de)
        .map_err(|e| input_err(gresim_io::error::from_json(path, e)))?;
    if let Some(v) = def.schema_version {
        if v != SWEEP_SCHEMA_VERSION {
            return Err(at(
                path,
                "schema_version",
                format!("unsupported schema_version {v}; this gresim reads version {SWEEP_SCHEMA_VERSION}"),
            ));
        }
    }
    if def.scenario.is_empty() {
        return Err(at(path, "scenario", "expected the path of a scenario file"));
    }
    let scen_path = path.parent().unwrap_or(Path::new(".")).join(&def.scenario);
    let base = gresim_io::load_runnable_scenario(&scen_path)
        .map_err(|e| Failure::input(format!("{}: at scenario: {e}", path.display())))?;
    let policies = match &def.policies {
        None => vec![base.policy.to_string()],
        Some(v) if v.is_empty() => {
            return Err(at(path, "policies", "expected at least one policy"))
        }
        Some(v) => v.clone(),
    };
    for (i, p) in policies.iter().enumerate() {
        if let Err(e) = p.parse::<gresim::PolicyKind>() {
            return Err(at(path, format!("policies[{i}]"), e.to_string()));
        }
        if policies[..i].contains(p) {
            return Err(at(
                path,
                format!("policies[{i}]"),
                format!("'{p}' is listed twice"),
            ));
        }
    }
    let seeds = match &def.seeds {
        None => vec![base.seed],
        Some(v) if v.is_empty() => return Err(at(path, "seeds", "expected at least one seed")),
        Some(v) => v.clone(),
    };
    for (i, s) in seeds.iter().enumerate() {
        if seeds[..i].contains(s) {
            return Err(at(
                path,
                format!("seeds[{i}]"),
                format!("seed {s} is listed twice"),
            ));
        }
    }
    let mut targets = Vec::new();
    for (name, values) in &def.parameters {
        let field = format!("parameters.{name}");
        let target = parse_target(name).map_err(|m| at(path, &field, m))?;
        if values.is_empty() {
            return Err(at(path, &field, "expected a list of at least one value"));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(at(
                    path,
                    format!("{field}[{i}]"),
                    format!("{v} is listed twice"),
                ));
            }
            if matches!(target, Target::LoadScale) {
                match v.as_f64() {
                    Some(f) if f.is_finite() && f > 0.0 && f <= 1e6 => {}
                    _ => {
                        return Err(at(
                            path,
                            format!("{field}[{i}]"),
                            format!("expected a factor above 0 (arrivals come that many times as fast), got {v}"),
                        ))
                    }
                }
            }
        }
        targets.push((name.clone(), target));
    }
    let names: Vec<String> = def.parameters.keys().cloned().collect();
    let lists: Vec<&Vec<Value>> = def.parameters.values().collect();
    let combos = cartesian(&lists);
    let base_json: Value = serde_json::from_str(&base.source)
        .map_err(|e| Failure::input(format!("{}: {e}", scen_path.display())))?;
    let mut scenarios = Vec::with_capacity(combos.len());
    for combo in &combos {
        let sc = build_variant(&base, &base_json, &targets, combo).map_err(|e| {
            // Name the value that breaks the scenario on its own, if one does.
            for (one, v) in targets.iter().zip(combo) {
                let alone = build_variant(
                    &base,
                    &base_json,
                    std::slice::from_ref(one),
                    std::slice::from_ref(v),
                );
                if alone.is_err() {
                    let name = &one.0;
                    let i = def.parameters[name]
                        .iter()
                        .position(|x| x == v)
                        .unwrap_or(0);
                    return Failure::input(format!(
                        "{}: at parameters.{name}[{i}]: with {name} = {v}: {e}",
                        path.display()
                    ));
                }
            }
            Failure::input(format!(
                "{}: at parameters: with {}: {e}",
                path.display(),
                describe(&names, combo)
            ))
        })?;
        scenarios.push(Arc::new(sc));
    }
    let mut points = Vec::new();
    for p in &policies {
        for c in 0..combos.len() {
            for &s in &seeds {
                points.push(Point {
                    index: points.len(),
                    policy: p.clone(),
                    combo: c,
                    seed: s,
                });
            }
        }
    }
    let sweep_name = def.name.clone().unwrap_or_else(|| {
        path.file_stem()
            .map_or_else(|| "sweep".into(), |s| s.to_string_lossy().into_owned())
    });
    let per_point = def.outputs.per_point.unwrap_or_default();
    let fingerprint = fingerprint(&base.source, &policies, &def.parameters, &seeds, per_point);
    let head = Head {
        sweep: sweep_name,
        scenario: def.scenario.clone(),
        fingerprint,
        points: points.len(),
        policies,
        parameters: def.parameters.clone(),
        seeds,
    };
    Ok(Sweep {
        path: path.to_path_buf(),
        head,
        names,
        combos,
        scenarios,
        points,
        per_point,
        out_dir: def.outputs.dir.as_ref().map(PathBuf::from),
        warnings: base.warnings.clone(),
    })
}

/// A parameter name: `load_scale`, a scheduler setting (`bf_window`), or a
/// dotted path into the scenario (`workload.synthetic.jobs`, `cluster.nodes[0].names`).
fn parse_target(name: &str) -> Result<Target, String> {
    if name == LOAD_SCALE {
        return Ok(Target::LoadScale);
    }
    if name.is_empty() {
        return Err("expected a parameter name".into());
    }
    let mut segs = Vec::new();
    for part in name.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() && rest.is_empty() {
            return Err(format!("'{name}' has an empty path segment"));
        }
        if !key.is_empty() {
            match key.parse::<usize>() {
                Ok(i) => segs.push(Seg::Index(i)),
                Err(_) => segs.push(Seg::Key(key.to_string())),
            }
        }
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("'{name}': unclosed '['"))?;
            let idx = rest[1..close]
                .parse::<usize>()
                .map_err(|_| format!("'{name}': expected an index in [...]"))?;
            segs.push(Seg::Index(idx));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("'{name}': unexpected text after ']'"));
            }
        }
    }
    // A bare name is a scheduler setting.
    if let [Seg::Key(_)] = segs.as_slice() {
        segs.insert(0, Seg::Key("scheduler".into()));
    }
    match segs.as_slice() {
        [Seg::Key(s), Seg::Key(p)] if s == "scheduler" && p == "policy" => {
            Err("the policy is not a parameter: list policies under \"policies\"".into())
        }
        [Seg::Key(s)] | [Seg::Key(s), ..] if s == "seed" => {
            Err("the seed is not a parameter: list seeds under \"seeds\"".into())
        }
        [Seg::Key(s), Seg::Key(k)] if s == "scheduler" && k == "seed" => {
            Err("the seed is not a parameter: list seeds under \"seeds\"".into())
        }
        _ => Ok(Target::Json(segs)),
    }
}

/// Every combination of one value per list, the first list varying slowest.
fn cartesian(lists: &[&Vec<Value>]) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = vec![Vec::new()];
    for l in lists {
        let mut next = Vec::with_capacity(out.len() * l.len());
        for prefix in &out {
            for v in l.iter() {
                let mut c = prefix.clone();
                c.push(v.clone());
                next.push(c);
            }
        }
        out = next;
    }
    out
}

fn describe(names: &[String], values: &[Value]) -> String {
    names
        .iter()
        .zip(values)
        .map(|(n, v)| format!("{n} = {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Sets `segs` in `doc` to `v`, creating missing object fields.
fn set_json(doc: &mut Value, segs: &[Seg], v: Value) -> Result<(), String> {
    let Some((last, init)) = segs.split_last() else {
        return Err("empty path".into());
    };
    let mut cur = doc;
    let mut seen = String::new();
    for s in init {
        cur = match (s, cur) {
            (Seg::Key(k), Value::Object(m)) => m
                .entry(k.clone())
                .or_insert_with(|| Value::Object(serde_json::Map::new())),
            (Seg::Index(i), Value::Array(a)) => {
                let n = a.len();
                a.get_mut(*i)
                    .ok_or_else(|| format!("the scenario's {seen} has {n} entries, no index {i}"))?
            }
            (_, other) => {
                return Err(format!(
                    "the scenario's {} is {}, not {}",
                    if seen.is_empty() { "top level" } else { &seen },
                    kind(other),
                    if matches!(s, Seg::Key(_)) {
                        "an object"
                    } else {
                        "a list"
                    }
                ))
            }
        };
        push_seg(&mut seen, s);
    }
    match (last, cur) {
        (Seg::Key(k), Value::Object(m)) => {
            m.insert(k.clone(), v);
            Ok(())
        }
        (Seg::Index(i), Value::Array(a)) => {
            let n = a.len();
            let slot = a
                .get_mut(*i)
                .ok_or_else(|| format!("the scenario's {seen} has {n} entries, no index {i}"))?;
            *slot = v;
            Ok(())
        }
        (s, other) => Err(format!(
            "the scenario's {} is {}, not {}",
            if seen.is_empty() { "top level" } else { &seen },
            kind(other),
            if matches!(s, Seg::Key(_)) {
                "an object"
            } else {
                "a list"
            }
        )),
    }
}

fn push_seg(s: &mut String, seg: &Seg) {
    match seg {
        Seg::Key(k) => {
            if !s.is_empty() {
                s.push('.');
            }
            s.push_str(k);
        }
        Seg::Index(i) => {
            let _ = write!(s, "[{i}]");
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The scenario with one combination of parameter values applied.
fn build_variant(
    base: &Scenario,
    base_json: &Value,
    targets: &[(String, Target)],
    values: &[Value],
) -> Result<Scenario, String> {
    let mut doc = base_json.clone();
    let mut edited = false;
    let mut load = None;
    for ((_, t), v) in targets.iter().zip(values) {
        match t {
            Target::Json(segs) => {
                set_json(&mut doc, segs, v.clone())?;
                edited = true;
            }
            Target::LoadScale => load = v.as_f64(),
        }
    }
    // A synthetic workload scales through its mean inter-arrival time, so
    // the scenario text each point records says what ran.
    let synthetic_ia = doc
        .pointer("/workload/synthetic/mean_interarrival")
        .and_then(Value::as_f64);
    if let (Some(f), Some(ia)) = (load, synthetic_ia) {
        if let Some(x) = doc.pointer_mut("/workload/synthetic/mean_interarrival") {
            *x = serde_json::Number::from_f64(ia / f).map_or(Value::Null, Value::Number);
            edited = true;
        }
    }
    let mut sc = if edited {
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
        // Lines of the rewritten text are not lines of the file: keep the path only.
        let sc = gresim_io::parse_scenario(&base.path, &text).map_err(|mut e| {
            e.line = None;
            e.to_string()
        })?;
        if let Some(e) = &sc.impossible {
            return Err(e.to_string());
        }
        sc
    } else {
        base.clone()
    };
    if let (Some(f), None) = (load, synthetic_ia) {
        match &mut sc.workload {
            Workload::Jobs(jobs) => {
                let scale = |t: u64| (t as f64 / f).floor() as u64;
                let mut v = jobs.as_ref().clone();
                for j in &mut v {
                    j.submit = scale(j.submit);
                    j.begin = j.begin.map(scale);
                }
                *jobs = Arc::new(v);
            }
            Workload::Trace { .. } => {
                return Err(format!(
                    "{LOAD_SCALE} needs a synthetic workload or jobs given as JSON; {} traces are streamed, not read ahead",
                    base.path.display()
                ))
            }
            Workload::Synthetic(_) => unreachable!("synthetic workloads scale above"),
        }
    }
    Ok(sc)
}

/// FNV-1a over everything that decides the rows.
fn fingerprint(
    scenario_text: &str,
    policies: &[String],
    params: &BTreeMap<String, Vec<Value>>,
    seeds: &[u64],
    per_point: PerPoint,
) -> String {
    let canon = serde_json::json!({
        "policies": policies,
        "parameters": params,
        "seeds": seeds,
        "per_point": per_point,
    })
    .to_string();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in scenario_text
        .as_bytes()
        .iter()
        .chain(&[0u8])
        .chain(canon.as_bytes())
    {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

// ---- shards -----------------------------------------------------------------

/// Which shard to run, and where that came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shard {
    k: usize,
    n: usize,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = || format!("--shard: expected K/N with 0 <= K < N, got '{s}'");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: usize = k.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k >= n {
        return Err(bad());
    }
    Ok(Shard { k, n })
}

/// The shard from Slurm's job-array variables, if they are set.
fn shard_from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shard>, String> {
    let Some(id) = get("SLURM_ARRAY_TASK_ID") else {
        return Ok(None);
    };
    let num = |name: &str, dflt: Option<usize>| -> Result<usize, String> {
        match get(name) {
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| format!("{name}={v}: expected a whole number")),
            None => dflt.ok_or_else(|| {
                format!("SLURM_ARRAY_TASK_ID is set but {name} is not; give --shard K/N")
            }),
        }
    };
    let id: usize = id
        .trim()
        .parse()
        .map_err(|_| format!("SLURM_ARRAY_TASK_ID={id}: expected a whole number"))?;
    let count = num("SLURM_ARRAY_TASK_COUNT", None)?;
    let min = num("SLURM_ARRAY_TASK_MIN", Some(0))?;
    let step = num("SLURM_ARRAY_TASK_STEP", Some(1))?.max(1);
    if id < min || !(id - min).is_multiple_of(step) || (id - min) / step >= count || count == 0 {
        return Err(format!(
            "SLURM_ARRAY_TASK_ID={id} with SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_STEP={step} and SLURM_ARRAY_TASK_COUNT={count} is not a shard; give --shard K/N"
        ));
    }
    Ok(Some(Shard {
        k: (id - min) / step,
        n: count,
    }))
}

fn shard_file_name(s: Shard) -> String {
    format!("shard-{}-of-{}.json", s.k, s.n)
}

// ---- running ------------------------------------------------------------------

pub fn cmd_sweep(args: &SweepArgs) -> Result<(), Failure> {
    if let Some(SweepCmd::Merge(m)) = &args.cmd {
        return cmd_merge(m);
    }
    let Some(path) = &args.sweep else {
        return Err(Failure::input("expected a sweep file"));
    };
    let sweep = load_sweep(path)?;
    if !args.quiet {
        for w in &sweep.warnings {
            eprintln!("warning: {w}");
        }
    }
    let dir = args
        .out
        .clone()
        .or_else(|| sweep.out_dir.clone())
        .unwrap_or_else(|| Path::new("out").join(&sweep.head.sweep));
    if let Some(file) = &args.emit_sbatch {
        return emit_sbatch(args, &sweep, &dir, file);
    }
    let (shard, from_env) = match &args.shard {
        Some(s) => (parse_shard(s).map_err(Failure::input)?, false),
        None => match shard_from_env(&|k| std::env::var(k).ok()).map_err(Failure::input)? {
            Some(s) => (s, true),
            None => (Shard { k: 0, n: 1 }, false),
        },
    };
    let mine: Vec<&Point> = sweep
        .points
        .iter()
        .filter(|p| p.index % shard.n == shard.k)
        .collect();
    if args.list {
        let mut s = String::new();
        for p in &mine {
            let _ = writeln!(s, "{}", point_label(&sweep, p));
        }
        return crate::print_stdout(&s);
    }
    if args.threads == Some(0) {
        return Err(Failure::input("--threads: expected at least 1"));
    }
    if from_env && !args.quiet {
        eprintln!(
            "shard {}/{} (from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)",
            shard.k, shard.n
        );
    }
    let rows = match args.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| Failure::internal(format!("cannot start {t} threads: {e}")))?
            .install(|| run_points(&sweep, &mine, &dir, args.quiet))?,
        None => run_points(&sweep, &mine, &dir, args.quiet)?,
    };
    if shard.n == 1 {
        write_results(&sweep.head, &rows, &dir)?;
        if !args.quiet {
            crate::print_stdout(&format!(
                "sweep {}: {} points\n{}outputs  {}\n",
                sweep.head.sweep,
                rows.len(),
                table(&sweep.names, &rows),
                dir.display()
            ))?;
        }
    } else {
        let file = ShardFile {
            head: sweep.head.clone(),
            shard: shard.k,
            shards: shard.n,
            rows,
        };
        let text = serde_json::to_string_pretty(&file).map_err(Failure::internal)? + "\n";
        // Array tasks on different nodes may share a pid: write through a
        // temporary name of this shard's own, not a per-pid directory.
        let sdir = dir.join("shards");
        std::fs::create_dir_all(&sdir)
            .map_err(|e| Failure::internal(format!("cannot create {}: {e}", sdir.display())))?;
        crate::write_atomic(&sdir.join(shard_file_name(shard)), &text)?;
        if !args.quiet {
            crate::print_stdout(&format!(
                "sweep {}: shard {}/{}: {} of {} points\noutputs  {}\nmerge with: sim sweep merge {}\n",
                sweep.head.sweep,
                shard.k,
                shard.n,
                file.rows.len(),
                sweep.points.len(),
                sdir.join(shard_file_name(shard)).display(),
                dir.display()
            ))?;
        }
    }
    Ok(())
}

/// `0007 policy=slurm bf_window=60 seed=2`.
fn point_label(sweep: &Sweep, p: &Point) -> String {
    let mut s = format!(
        "{} policy={}",
        point_dir_name(sweep.points.len(), p.index),
        p.policy
    );
    for (n, v) in sweep.names.iter().zip(&sweep.combos[p.combo]) {
        let _ = write!(s, " {n}={}", plain(v));
    }
    let _ = write!(s, " seed={}", p.seed);
    s
}

fn point_dir_name(total: usize, i: usize) -> String {
    let width = total.saturating_sub(1).to_string().len().max(4);
    format!("{i:0width$}")
}

/// Runs `points` in parallel on the current rayon pool; rows in point order.
fn run_points(
    sweep: &Sweep,
    points: &[&Point],
    dir: &Path,
    quiet: bool,
) -> Result<Vec<Row>, Failure> {
    let mut bar = Progress::new(Some(points.len() as u64), "points", quiet);
    let rows = points
        .par_iter()
        .map(|p| {
            let r = run_point(sweep, p, dir);
            bar.inc(1);
            r
        })
        .collect::<Result<Vec<Row>, Failure>>();
    bar.finish();
    rows
}

fn run_point(sweep: &Sweep, p: &Point, dir: &Path) -> Result<Row, Failure> {
    let scenario = &sweep.scenarios[p.combo];
    let runs = crate::compare_cmd::run_policies(scenario, std::slice::from_ref(&p.policy), p.seed)?;
    let run = runs
        .into_iter()
        .next()
        .ok_or_else(|| Failure::internal("a run went missing"))?;
    let (out, meta) = (&run.output, &run.meta);
    let sub = dir
        .join("points")
        .join(point_dir_name(sweep.points.len(), p.index));
    let summary = match sweep.per_point {
        PerPoint::Full => run.write(&sub).map_err(|e| {
            Failure::internal(format!("cannot write outputs to {}: {e}", sub.display()))
        })?,
        PerPoint::Summary | PerPoint::None => {
            let s = run.summary();
            if sweep.per_point == PerPoint::Summary {
                gresim_report::write_files_atomic(&sub, &[("summary.json", s.to_json())]).map_err(
                    |e| Failure::internal(format!("cannot write to {}: {e}", sub.display())),
                )?;
            }
            s
        }
    };
    let c = crate::compare_cmd::row(&p.policy, out, &summary, meta);
    Ok(Row {
        point: p.index,
        policy: p.policy.clone(),
        parameters: sweep
            .names
            .iter()
            .cloned()
            .zip(sweep.combos[p.combo].iter().cloned())
            .collect(),
        seed: p.seed,
        jobs: summary.jobs,
        gpu_utilization: c.gpu_utilization,
        wait_mean: round6(summary.wait.mean),
        wait_p50: c.wait_p50,
        wait_p95: c.wait_p95,
        jct_mean: c.jct_mean,
        bounded_slowdown_mean: round6(summary.bounded_slowdown.mean),
        makespan: c.makespan,
        placed_ideally: c.placed_ideally,
        allreduce_slowdown: c.allreduce_slowdown,
        gpu_hours_lost: c.gpu_hours_lost,
        fragmentation: c.fragmentation,
    })
}

// ---- results ------------------------------------------------------------------

/// Writes results.json and results.csv: the only writer of both, for a whole
/// run and for a merge alike.
fn write_results(head: &Head, rows: &[Row], dir: &Path) -> Result<(), Failure> {
    let json = serde_json::to_string_pretty(&ResultsFile { head, rows })
        .map_err(Failure::internal)?
        + "\n";
    let names: Vec<String> = head.parameters.keys().cloned().collect();
    let csv = results_csv(&names, rows);
    gresim_report::write_files_atomic(dir, &[("results.json", json), ("results.csv", csv)])
        .map_err(|e| Failure::internal(format!("cannot write to {}: {e}", dir.display())))
}

fn results_csv(names: &[String], rows: &[Row]) -> String {
    let mut s = String::new();
    let mut head: Vec<String> = vec!["point".into(), "policy".into()];
    head.extend(names.iter().cloned());
    head.push("seed".into());
    head.extend(METRICS.iter().map(|m| m.to_string()));
    s.push_str(
        &head
            .iter()
            .map(|h| csv_field(h))
            .collect::<Vec<_>>()
            .join(","),
    );
    s.push('\n');
    for r in rows {
        let mut f: Vec<String> = vec![r.point.to_string(), csv_field(&r.policy)];
        for n in names {
            f.push(csv_field(
                &r.parameters.get(n).map(plain).unwrap_or_default(),
            ));
        }
        f.push(r.seed.to_string());
        f.push(r.jobs.to_string());
        for x in [
            r.gpu_utilization,
            r.wait_mean,
            r.wait_p50,
            r.wait_p95,
            r.jct_mean,
            r.bounded_slowdown_mean,
        ] {
            f.push(num(x));
        }
        f.push(r.makespan.to_string());
        for x in [
            r.placed_ideally,
            r.allreduce_slowdown,
            r.gpu_hours_lost,
            r.fragmentation,
        ] {
            f.push(num(x));
        }
        s.push_str(&f.join(","));
        s.push('\n');
    }
    s
}

/// A number as JSON writes it.
fn num(x: f64) -> String {
    serde_json::to_string(&x).unwrap_or_else(|_| "null".into())
}

/// A parameter value for a table: strings without quotes, the rest as JSON.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table printed after a whole run.
fn table(names: &[String], rows: &[Row]) -> String {
    let mut s = String::new();
    let mut head = format!("{:>5} {:<14}", "point", "policy");
    for n in names {
        let _ = write!(head, " {:>w$}", n, w = n.len().max(8));
    }
    let _ = write!(
        head,
        " {:>6} {:>6} {:>9} {:>9} {:>10} {:>9}",
        "seed", "util%", "wait p50", "wait p95", "JCT mean", "makespan"
    );
    s.push_str(head.trim_end());
    s.push('\n');
    for r in rows {
        let mut line = format!("{:>5} {:<14}", r.point, r.policy);
        for n in names {
            let v = r.parameters.get(n).map(plain).unwrap_or_default();
            let _ = write!(line, " {:>w$}", v, w = n.len().max(8));
        }
        let _ = write!(
            line,
            " {:>6} {:>6.1} {:>9.0} {:>9.0} {:>10.1} {:>9}",
            r.seed,
            r.gpu_utilization * 100.0,
            r.wait_p50,
            r.wait_p95,
            r.jct_mean,
            r.makespan
        );
        s.push_str(&line);
        s.push('\n');
    }
    s
}

// ---- merge --------------------------------------------------------------------

/// The shard files a merge argument stands for.
fn shard_files(arg: &Path) -> Result<Vec<PathBuf>, Failure> {
    if arg.is_file() {
        return Ok(vec![arg.to_path_buf()]);
    }
    let sdir = arg.join("shards");
    let rd = std::fs::read_dir(&sdir).map_err(|e| {
        Failure::input(format!(
            "{}: no shards to merge ({}: {e})",
            arg.display(),
            sdir.display()
        ))
    })?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("shard-") && n.ends_with(".json"))
        })
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(Failure::input(format!(
            "{}: no shard-K-of-N.json files to merge",
            sdir.display()
        )));
    }
    Ok(v)
}

fn cmd_merge(args: &MergeArgs) -> Result<(), Failure> {
    let mut files = Vec::new();
    for d in &args.dirs {
        files.extend(shard_files(d)?);
    }
    let mut head: Option<(Head, PathBuf)> = None;
    let mut by_point: BTreeMap<usize, (Row, PathBuf)> = BTreeMap::new();
    for f in &files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| Failure::input(format!("{}: cannot read: {e}", f.display())))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let sf: ShardFile = serde_path_to_error::deserialize(de)
            .map_err(|e| input_err(gresim_io::error::from_json(f, e)))?;
        match &head {
            None => head = Some((sf.head.clone(), f.clone())),
            Some((h, first)) if *h != sf.head => {
                return Err(Failure::input(format!(
                    "{}: a shard of another sweep than {} (sweep '{}', fingerprint {}, against '{}', {})",
                    f.display(),
                    first.display(),
                    sf.head.sweep,
                    sf.head.fingerprint,
                    h.sweep,
                    h.fingerprint
                )));
            }
            Some(_) => {}
        }
        if sf.shards == 0 || sf.shard >= sf.shards {
            return Err(at(
                f,
                "shard",
                format!("shard {} of {} is not a shard", sf.shard, sf.shards),
            ));
        }
        for (i, r) in sf.rows.into_iter().enumerate() {
            if r.point >= sf.head.points || r.point % sf.shards != sf.shard {
                return Err(at(
                    f,
                    format!("rows[{i}].point"),
                    format!(
                        "point {} does not belong to shard {}/{}",
                        r.point, sf.shard, sf.shards
                    ),
                ));
            }
            match by_point.get(&r.point) {
                Some((old, other)) if *old != r => {
                    return Err(Failure::input(format!(
                        "{}: point {} differs from the same point in {}",
                        f.display(),
                        r.point,
                        other.display()
                    )));
                }
                Some(_) => {}
                None => {
                    by_point.insert(r.point, (r, f.clone()));
                }
            }
        }
    }
    let Some((head, _)) = head else {
        return Err(Failure::input("no shards to merge"));
    };
    let missing: Vec<usize> = (0..head.points)
        .filter(|i| !by_point.contains_key(i))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(20).map(ToString::to_string).collect();
        return Err(Failure::input(format!(
            "{} of {} points are missing (a shard did not finish?): {}{}",
            missing.len(),
            head.points,
            shown.join(", "),
            if missing.len() > 20 { ", …" } else { "" }
        )));
    }
    let rows: Vec<Row> = by_point.into_values().map(|(r, _)| r).collect();
    let dir = match &args.out {
        Some(o) => o.clone(),
        None if args.dirs[0].is_dir() => args.dirs[0].clone(),
        None => return Err(Failure::input("give --out DIR when merging shard files")),
    };
    write_results(&head, &rows, &dir)?;
    if !args.quiet {
        crate::print_stdout(&format!(
            "sweep {}: merged {} points from {} shard file(s)\noutputs  {}\n",
            head.sweep,
            rows.len(),
            files.len(),
            dir.display()
        ))?;
    }
    Ok(())
}

// ---- the Slurm job-array script -------------------------------------------------

/// Quotes for a POSIX shell.
fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn absolute(p: &Path) -> Result<PathBuf, Failure> {
    std::path::absolute(p).map_err(|e| {
        Failure::input(format!(
            "{}: cannot make the path absolute: {e}",
            p.display()
        ))
    })
}

fn emit_sbatch(args: &SweepArgs, sweep: &Sweep, dir: &Path, file: &Path) -> Result<(), Failure> {
    let o = &args.sbatch;
    let points = sweep.points.len();
    let tasks = o.tasks.unwrap_or(points.min(MAX_ARRAY_TASKS));
    if tasks == 0 || tasks > MAX_ARRAY_TASKS {
        return Err(Failure::input(format!(
            "--tasks: expected 1 to {MAX_ARRAY_TASKS} (Slurm's default MaxArraySize is 1001), got {tasks}"
        )));
    }
    if o.cpus_per_task == 0 {
        return Err(Failure::input("--cpus-per-task: expected at least 1"));
    }
    if args.shard.is_some() {
        return Err(Failure::input("--shard and --emit-sbatch do not go together: the script gives each array task its shard"));
    }
    if tasks > points && !args.quiet {
        eprintln!(
            "warning: {tasks} tasks for {points} points: {} tasks will have nothing to do",
            tasks - points
        );
    }
    for (flag, v) in [
        ("--mem", &o.mem),
        ("--time", &o.time),
        ("--partition", &o.partition),
    ] {
        if let Some(v) = v {
            if v.is_empty() || v.contains(char::is_whitespace) {
                return Err(Failure::input(format!(
                    "{flag}: expected a value without spaces, got '{v}'"
                )));
            }
        }
    }
    for a in &o.sbatch_args {
        if !a.starts_with('-') || a.contains('\n') {
            return Err(Failure::input(format!(
                "--sbatch-arg: expected an sbatch option such as --account=proj, got '{a}'"
            )));
        }
    }
    let sim = match &o.sim_bin {
        Some(p) => absolute(p)?,
        None => std::env::current_exe()
            .map_err(|e| Failure::internal(format!("cannot find this sim binary: {e}")))?,
    };
    let sweep_abs = absolute(&sweep.path)?;
    let out_abs = absolute(dir)?;
    let log_dir = out_abs.join("slurm");
    let name = format!("gresim-sweep-{}", sweep.head.sweep);
    let job_name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut shared = Vec::new();
    if let Some(t) = &o.time {
        shared.push(format!("--time={t}"));
    }
    if let Some(p) = &o.partition {
        shared.push(format!("--partition={p}"));
    }
    shared.extend(o.sbatch_args.iter().cloned());

    let q = |p: &Path| sh_quote(&p.to_string_lossy());
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(s, "#SBATCH --job-name={job_name}");
    let _ = writeln!(s, "#SBATCH --array=0-{}", tasks - 1);
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", o.cpus_per_task);
    if let Some(m) = &o.mem {
        let _ = writeln!(s, "#SBATCH --mem={m}");
    }
    for a in &shared {
        let _ = writeln!(s, "#SBATCH {a}");
    }
    let _ = writeln!(
        s,
        "#SBATCH --output={}",
        log_dir.join("%x-%A_%a.out").display()
    );
    let _ = writeln!(
        s,
        "#
# Written by `sim sweep --emit-sbatch` for the sweep '{sweep_name}': {points} points in
# {tasks} shards. Array task K runs shard K/{tasks}: the points i with i mod {tasks} = K.
#
#   bash {file}     submits the array and a merge job that runs once every task succeeded
#   sbatch {file}   submits the array only; merge afterwards with:
#                   {sim_q} sweep merge {out_q}
#   sbatch --array=K {file}   runs shard K again (after a failure), then merge.
#
# Each task writes {out_q}/points/NNNN/ and {out_q}/shards/shard-K-of-{tasks}.json;
# the merge writes {out_q}/results.json and results.csv, the same bytes as one
# unsharded `sim sweep` run.
set -euo pipefail
SIM={sim_q}
SWEEP={sweep_q}
OUT={out_q}
if [ -z \"${{SLURM_ARRAY_TASK_ID:-}}\" ]; then
    mkdir -p {log_q}
    array=$(sbatch --parsable \"$0\")
    array=${{array%%;*}}
    merge=$(sbatch --parsable --job-name={job_name}-merge --dependency=afterok:\"$array\" \\
        --ntasks=1 --cpus-per-task=1{shared_args} \\
        --output={merge_log} \\
        --wrap={wrap})
    echo \"submitted array job $array ({tasks} tasks) and merge job ${{merge%%;*}}\"
    exit 0
fi
exec \"$SIM\" sweep \"$SWEEP\" --out \"$OUT\" --shard \"$SLURM_ARRAY_TASK_ID/{tasks}\" \\
    --threads \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet",
        sweep_name = sweep.head.sweep,
        file = file.display(),
        sim_q = q(&sim),
        out_q = q(&out_abs),
        sweep_q = q(&sweep_abs),
        log_q = q(&log_dir),
        shared_args = shared
            .iter()
            .map(|a| format!(" {}", sh_quote(a)))
            .collect::<String>(),
        merge_log = q(&log_dir.join("%x-%j.out")),
        wrap = sh_quote(&format!("{} sweep merge --quiet {}", q(&sim), q(&out_abs))),
    );
    // Slurm opens the output files before a task starts: the directory must exist.
    std::fs::create_dir_all(&log_dir)
        .map_err(|e| Failure::internal(format!("cannot create {}: {e}", log_dir.display())))?;
    crate::write_atomic(file, &s)?;
    if !args.quiet {
        crate::print_stdout(&format!(
            "wrote {}: {points} points in {tasks} array tasks\nsubmit with: bash {}   (array + merge job)\n",
            file.display(),
            file.display()
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse() {
        assert_eq!(parse_shard("1/3"), Ok(Shard { k: 1, n: 3 }));
        assert!(parse_shard("3/3").is_err());
        assert!(parse_shard("0/0").is_err());
        assert!(parse_shard("1").is_err());
        assert!(parse_shard("a/3").is_err());
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn shard_from_slurm_variables() {
        assert_eq!(shard_from_env(&env(&[])), Ok(None));
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert_eq!(shard_from_env(&e), Ok(Some(Shard { k: 2, n: 4 })));
        // --array=1-4: ids start at SLURM_ARRAY_TASK_MIN.
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert_eq!(shard_from_env(&e), Ok(Some(Shard { k: 3, n: 4 })));
        // --array=0-6:2 has ids 0, 2, 4, 6.
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ]);
        assert_eq!(shard_from_env(&e), Ok(Some(Shard { k: 2, n: 4 })));
        let e = env(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ]);
        assert!(shard_from_env(&e).is_err());
        let e = env(&[("SLURM_ARRAY_TASK_ID", "1")]);
        assert!(shard_from_env(&e)
            .unwrap_err()
            .contains("SLURM_ARRAY_TASK_COUNT"));
    }

    #[test]
    fn parameter_names() {
        let t = |s: &str| match parse_target(s) {
            Ok(Target::Json(v)) => v,
            other => panic!("{s}: {other:?}"),
        };
        let k = |s: &str| Seg::Key(s.into());
        assert_eq!(t("bf_window"), vec![k("scheduler"), k("bf_window")]);
        assert_eq!(
            t("cluster.nodes[1].names"),
            vec![k("cluster"), k("nodes"), Seg::Index(1), k("names")]
        );
        assert_eq!(
            t("workload.synthetic.mix.0.weight"),
            vec![
                k("workload"),
                k("synthetic"),
                k("mix"),
                Seg::Index(0),
                k("weight")
            ]
        );
        assert!(matches!(parse_target("load_scale"), Ok(Target::LoadScale)));
        assert!(parse_target("policy").is_err());
        assert!(parse_target("seed").is_err());
        assert!(parse_target("a..b").is_err());
        assert!(parse_target("a[x]").is_err());
    }

    #[test]
    fn set_json_creates_fields_and_checks_lists() {
        let mut v = serde_json::json!({"a": {"b": [1, 2]}});
        set_json(
            &mut v,
            &[Seg::Key("s".into()), Seg::Key("x".into())],
            5.into(),
        )
        .unwrap();
        assert_eq!(v["s"]["x"], 5);
        set_json(
            &mut v,
            &[Seg::Key("a".into()), Seg::Key("b".into()), Seg::Index(1)],
            9.into(),
        )
        .unwrap();
        assert_eq!(v["a"]["b"][1], 9);
        let e = set_json(
            &mut v,
            &[Seg::Key("a".into()), Seg::Key("b".into()), Seg::Index(5)],
            9.into(),
        )
        .unwrap_err();
        assert!(e.contains("a.b has 2 entries"), "{e}");
        let e = set_json(
            &mut v,
            &[
                Seg::Key("a".into()),
                Seg::Key("b".into()),
                Seg::Key("c".into()),
            ],
            1.into(),
        )
        .unwrap_err();
        assert!(e.contains("is a list, not an object"), "{e}");
    }

    #[test]
    fn grid_order_first_parameter_slowest() {
        let a = vec![Value::from(1), Value::from(2)];
        let b = vec![Value::from("x"), Value::from("y"), Value::from("z")];
        let c = cartesian(&[&a, &b]);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], vec![Value::from(1), Value::from("x")]);
        assert_eq!(c[1], vec![Value::from(1), Value::from("y")]);
        assert_eq!(c[3], vec![Value::from(2), Value::from("x")]);
        assert_eq!(cartesian(&[]), vec![Vec::<Value>::new()]);
    }

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(csv_field("gpu[01-04]"), "gpu[01-04]");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(sh_quote("/tmp/out"), "/tmp/out");
        assert_eq!(sh_quote("/tmp/my out"), "'/tmp/my out'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
    }
}
