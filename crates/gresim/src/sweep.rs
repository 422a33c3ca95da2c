//! Sweeps (`sim sweep`, docs/scenario-format.md, "Sweeps"): a grid of
//! policies × parameters × seeds over one scenario. [`load`] reads a sweep
//! file, checks it and builds every point's scenario (parameters patched
//! into the scenario's JSON, or `load_scale` on its arrival times);
//! [`run_point`] runs one point exactly as `sim run --policy P --seed S`
//! does and makes its row; [`write_results`] is the one writer of
//! `results.json` and `results.csv`, for a whole run and a merge of shards
//! alike. The CLI adds sharding, the progress bar, merging and the Slurm
//! job-array script, and prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gresim_io::{InputError, Scenario, Workload};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::metrics::{job_needs, Metrics, COLUMNS};
use crate::Error;

/// The sweep file's schema version.
const SWEEP_SCHEMA_VERSION: u32 = 1;
/// The pseudo-parameter that scales the arrival rate.
const LOAD_SCALE: &str = "load_scale";
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
pub enum PerPoint {
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
pub struct Head {
    pub sweep: String,
    /// The scenario as the sweep file names it.
    pub scenario: String,
    /// A hash of the scenario text and the expanded grid: shards of different sweeps do not merge.
    pub fingerprint: String,
    pub points: usize,
    pub policies: Vec<String>,
    pub parameters: BTreeMap<String, Vec<Value>>,
    pub seeds: Vec<u64>,
}

/// One point of the grid.
#[derive(Debug, Clone)]
pub struct Point {
    pub index: usize,
    pub policy: String,
    /// Index of the parameter combination.
    pub combo: usize,
    pub seed: u64,
}

/// One row of the results table: the point, then its run's [`Metrics`].
/// (Not `deny_unknown_fields`: serde does not combine it with `flatten`;
/// a shard file's rows are read back by the merge only.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub point: usize,
    pub policy: String,
    pub parameters: BTreeMap<String, Value>,
    pub seed: u64,
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// A shard's file.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardFile {
    #[serde(flatten)]
    pub head: Head,
    pub shard: usize,
    pub shards: usize,
    pub rows: Vec<Row>,
}

/// The results file.
#[derive(Debug, Serialize)]
struct ResultsFile<'a> {
    #[serde(flatten)]
    head: &'a Head,
    rows: &'a [Row],
}

/// A loaded, expanded sweep.
pub struct Sweep {
    pub path: PathBuf,
    pub head: Head,
    pub names: Vec<String>,
    /// Per combination: the values, in `names` order.
    pub combos: Vec<Vec<Value>>,
    /// Per combination: the scenario to run.
    pub scenarios: Vec<Arc<Scenario>>,
    pub points: Vec<Point>,
    pub per_point: PerPoint,
    pub out_dir: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// Reads, checks and expands a sweep file; every scenario variant is built
/// (and so checked) before anything runs.
pub fn load(path: &Path) -> Result<Sweep, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the sweep: {e}")))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let def: SweepDef =
        serde_path_to_error::deserialize(de).map_err(|e| gresim_io::error::from_json(path, e))?;
    if let Some(v) = def.schema_version {
        if v != SWEEP_SCHEMA_VERSION {
            return Err(InputError::at(
                path,
                "schema_version",
                format!("unsupported schema_version {v}; this gresim reads version {SWEEP_SCHEMA_VERSION}"),
            ));
        }
    }
    if def.scenario.is_empty() {
        return Err(InputError::at(
            path,
            "scenario",
            "expected the path of a scenario file",
        ));
    }
    let scen_path = path.parent().unwrap_or(Path::new(".")).join(&def.scenario);
    let base = gresim_io::load_runnable_scenario(&scen_path)
        .map_err(|e| InputError::at(path, "scenario", e.to_string()))?;
    let policies = match &def.policies {
        None => vec![base.policy.to_string()],
        Some(v) if v.is_empty() => {
            return Err(InputError::at(
                path,
                "policies",
                "expected at least one policy",
            ))
        }
        Some(v) => v.clone(),
    };
    for (i, p) in policies.iter().enumerate() {
        if let Err(e) = p.parse::<crate::PolicyKind>() {
            return Err(InputError::at(
                path,
                format!("policies[{i}]"),
                e.to_string(),
            ));
        }
        if policies[..i].contains(p) {
            return Err(InputError::at(
                path,
                format!("policies[{i}]"),
                format!("'{p}' is listed twice"),
            ));
        }
    }
    let seeds = match &def.seeds {
        None => vec![base.seed],
        Some(v) if v.is_empty() => {
            return Err(InputError::at(path, "seeds", "expected at least one seed"))
        }
        Some(v) => v.clone(),
    };
    for (i, s) in seeds.iter().enumerate() {
        if seeds[..i].contains(s) {
            return Err(InputError::at(
                path,
                format!("seeds[{i}]"),
                format!("seed {s} is listed twice"),
            ));
        }
    }
    let mut targets = Vec::new();
    for (name, values) in &def.parameters {
        let field = format!("parameters.{name}");
        let target = parse_target(name).map_err(|m| InputError::at(path, &field, m))?;
        if values.is_empty() {
            return Err(InputError::at(
                path,
                &field,
                "expected a list of at least one value",
            ));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(InputError::at(
                    path,
                    format!("{field}[{i}]"),
                    format!("{v} is listed twice"),
                ));
            }
            if matches!(target, Target::LoadScale) {
                match v.as_f64() {
                    Some(f) if f.is_finite() && f > 0.0 && f <= 1e6 => {}
                    _ => {
                        return Err(InputError::at(
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
        .map_err(|e| InputError::new(&scen_path, e.to_string()))?;
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
                    return InputError::at(
                        path,
                        format!("parameters.{name}[{i}]"),
                        format!("with {name} = {v}: {e}"),
                    );
                }
            }
            InputError::at(
                path,
                "parameters",
                format!("with {}: {e}", describe(&names, combo)),
            )
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

/// `0007 policy=slurm bf_window=60 seed=2`.
pub fn point_label(sweep: &Sweep, p: &Point) -> String {
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

pub fn point_dir_name(total: usize, i: usize) -> String {
    let width = total.saturating_sub(1).to_string().len().max(4);
    format!("{i:0width$}")
}

/// Runs one point exactly as `sim run --policy P --seed S` runs it, on
/// the point's scenario, writes what `outputs.per_point` asks into
/// `dir/points/NNNN/` when there is a `dir`, and returns its row.
pub fn run_point(sweep: &Sweep, p: &Point, dir: Option<&Path>) -> Result<Row, Error> {
    let scenario = &sweep.scenarios[p.combo];
    let kind = p
        .policy
        .parse::<crate::PolicyKind>()
        .map_err(|e| InputError::at(&sweep.path, "policies", e.to_string()))?;
    let run = crate::Simulation::new(scenario)
        .policy(kind)
        .seed(p.seed)
        .run()?;
    let (out, meta) = (&run.output, &run.meta);
    let sub = dir.map(|d| {
        d.join("points")
            .join(point_dir_name(sweep.points.len(), p.index))
    });
    let summary = match (sweep.per_point, &sub) {
        (PerPoint::Full, Some(sub)) => run
            .write(sub)
            .map_err(|e| Error::Write(format!("cannot write outputs to {}: {e}", sub.display())))?,
        _ => {
            let s = run.summary();
            if let (PerPoint::Summary, Some(sub)) = (sweep.per_point, &sub) {
                gresim_report::write_files_atomic(sub, &[("summary.json", s.to_json())])
                    .map_err(|e| Error::Write(format!("cannot write to {}: {e}", sub.display())))?;
            }
            s
        }
    };
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
        metrics: Metrics::of(out, &summary, meta, &job_needs(out)),
    })
}

// ---- results ------------------------------------------------------------------

/// Writes results.json and results.csv: the only writer of both, for a whole
/// run and for a merge alike.
pub fn write_results(head: &Head, rows: &[Row], dir: &Path) -> Result<(), Error> {
    let json = serde_json::to_string_pretty(&ResultsFile { head, rows })
        .map_err(|e| Error::Write(e.to_string()))?
        + "\n";
    let names: Vec<String> = head.parameters.keys().cloned().collect();
    let csv = results_csv(&names, rows);
    gresim_report::write_files_atomic(dir, &[("results.json", json), ("results.csv", csv)])
        .map_err(|e| Error::Write(format!("cannot write to {}: {e}", dir.display())))
}

fn results_csv(names: &[String], rows: &[Row]) -> String {
    let mut s = String::new();
    let mut head: Vec<String> = vec!["point".into(), "policy".into()];
    head.extend(names.iter().cloned());
    head.push("seed".into());
    head.extend(COLUMNS.iter().map(|m| m.to_string()));
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
        f.extend(r.metrics.csv_values());
        s.push_str(&f.join(","));
        s.push('\n');
    }
    s
}

/// A parameter value for a table: strings without quotes, the rest as JSON.
pub fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table printed after a whole run.
pub fn table(names: &[String], rows: &[Row]) -> String {
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
            r.metrics.gpu_utilization * 100.0,
            r.metrics.wait_p50,
            r.metrics.wait_p95,
            r.metrics.jct_mean,
            r.metrics.makespan
        );
        s.push_str(&line);
        s.push('\n');
    }
    s
}

// ---- merging shards -------------------------------------------------------------

/// The shard files a merge argument stands for.
pub fn shard_files(arg: &Path) -> Result<Vec<PathBuf>, Error> {
    if arg.is_file() {
        return Ok(vec![arg.to_path_buf()]);
    }
    let sdir = arg.join("shards");
    let rd = std::fs::read_dir(&sdir).map_err(|e| {
        Error::Input(InputError::new(
            arg,
            format!("no shards to merge ({}: {e})", sdir.display()),
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
        return Err(Error::Input(InputError::new(
            &sdir,
            "no shard-K-of-N.json files to merge",
        )));
    }
    Ok(v)
}

/// Joins shard files (`shards/shard-K-of-N.json`, each a [`ShardFile`])
/// into one sweep's rows in point order: every file of the same sweep (its
/// [`Head`]), each row of its own shard, a point seen twice the same, and
/// no point missing.
pub fn merge_shards(files: &[PathBuf]) -> Result<(Head, Vec<Row>), Error> {
    let input = |f: &Path, m: String| Error::Input(InputError::new(f, m));
    let at = |f: &Path, field: String, m: String| Error::Input(InputError::at(f, field, m));
    let mut head: Option<(Head, PathBuf)> = None;
    let mut by_point: BTreeMap<usize, (Row, PathBuf)> = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| input(f, format!("cannot read: {e}")))?;
        let de = &mut serde_json::Deserializer::from_str(&text);
        let sf: ShardFile = serde_path_to_error::deserialize(de)
            .map_err(|e| Error::Input(gresim_io::error::from_json(f, e)))?;
        match &head {
            None => head = Some((sf.head.clone(), f.clone())),
            Some((h, first)) if *h != sf.head => {
                return Err(input(f, format!(
                    "a shard of another sweep than {} (sweep '{}', fingerprint {}, against '{}', {})",
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
                "shard".into(),
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
                    return Err(input(
                        f,
                        format!(
                            "point {} differs from the same point in {}",
                            r.point,
                            other.display()
                        ),
                    ));
                }
                Some(_) => {}
                None => {
                    by_point.insert(r.point, (r, f.clone()));
                }
            }
        }
    }
    let Some((head, first)) = head else {
        return Err(Error::Input(InputError::new(
            Path::new("sim sweep merge"),
            "no shards to merge",
        )));
    };
    let missing: Vec<usize> = (0..head.points)
        .filter(|i| !by_point.contains_key(i))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<String> = missing.iter().take(20).map(ToString::to_string).collect();
        return Err(input(
            &first,
            format!(
                "{} of {} points are missing (a shard did not finish?): {}{}",
                missing.len(),
                head.points,
                shown.join(", "),
                if missing.len() > 20 { ", …" } else { "" }
            ),
        ));
    }
    Ok((head, by_point.into_values().map(|(r, _)| r).collect()))
}

#[cfg(test)]
mod tests;
