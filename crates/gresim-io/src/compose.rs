//! Scenarios put together from the files users already have: a site's
//! `slurm.conf` (with `gres.conf` beside it) or a scenario file as the
//! cluster, a trace as the workload (`sim env|lint|run|compare --cluster …
//! --trace …`).
//!
//! Each combination becomes the one-line scenario a user would otherwise
//! write by hand (`{"cluster": {"slurm_conf": …}, "workload": {"trace": …}}`)
//! and goes through [`crate::parse_scenario`], so it is checked exactly as a
//! scenario file is; errors in the slurm.conf, gres.conf or trace name that
//! file and line.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::traces::TraceFormat;
use crate::{parse_scenario, InputError, Scenario};

/// What a `--cluster` file is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ClusterFile {
    /// A scenario file (JSON): its cluster, partitions and scheduler settings.
    Scenario,
    /// A site's slurm.conf: its nodes, partitions and scheduler settings,
    /// with gres.conf from beside it.
    SlurmConf,
}

/// Tells a scenario from a slurm.conf: a `.json` name, or text whose first
/// non-blank character is `{`, is a scenario (slurm.conf has no braces
/// outside values); anything else is read as slurm.conf.
pub fn classify(path: &Path) -> Result<ClusterFile, InputError> {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        return Ok(ClusterFile::Scenario);
    }
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::new(path, format!("cannot read the cluster file: {e}")))?;
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    Ok(if first == Some(&b'{') {
        ClusterFile::Scenario
    } else {
        ClusterFile::SlurmConf
    })
}

/// A trace given on the command line as the workload.
#[derive(Clone, Debug)]
pub struct TraceArg<'a> {
    pub path: &'a Path,
    /// Its format; `None`: told from its first line ([`sniff_trace`]).
    pub format: Option<TraceFormat>,
}

/// The scenario for `--cluster FILE` alone (`sim env`, `sim lint`): a
/// scenario file as it is, or a slurm.conf with no jobs.
pub fn load_cluster(path: &Path) -> Result<Scenario, InputError> {
    compose(None, Some(path), None)
}

/// `scenario` (optional) with its cluster replaced by `cluster` and its
/// workload by `trace`. Without a scenario, `cluster` is the base: a
/// scenario file as it is, or a slurm.conf; a workload then comes from
/// `trace`, else the scenario has no jobs.
pub fn compose(
    scenario: Option<&Path>,
    cluster: Option<&Path>,
    trace: Option<&TraceArg>,
) -> Result<Scenario, InputError> {
    // The file that names errors and anchors the relative paths inside it.
    let (anchor, mut doc) = match (scenario, cluster) {
        (Some(s), _) => (s.to_path_buf(), read_json(s)?),
        (None, Some(c)) => match classify(c)? {
            ClusterFile::Scenario => {
                if trace.is_none() {
                    return crate::load_scenario(c);
                }
                (c.to_path_buf(), read_json(c)?)
            }
            ClusterFile::SlurmConf => {
                let name = c
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                // Anchored at the slurm.conf itself: its own name, joined to
                // its directory, is the path the user gave.
                let doc = json!({
                    "schema_version": crate::SCHEMA_VERSION,
                    "name": stem(trace.map_or(c, |t| t.path)),
                    "cluster": {"slurm_conf": name},
                    "workload": {"jobs": []},
                });
                (c.to_path_buf(), doc)
            }
        },
        (None, None) => {
            return Err(InputError::new(
                Path::new("<command line>"),
                "expected a scenario file or --cluster",
            ))
        }
    };
    let Value::Object(top) = &mut doc else {
        return Err(InputError::new(&anchor, "expected a JSON object"));
    };
    let anchor_dir = anchor.parent().unwrap_or(Path::new("")).to_path_buf();
    if let (Some(_), Some(c)) = (scenario, cluster) {
        replace_cluster(top, c)?;
    }
    if let Some(t) = trace {
        let mut w = Map::new();
        w.insert("trace".into(), path_value(t.path, &anchor_dir));
        let format = match t.format {
            Some(f) => f,
            None => sniff_trace(t.path)?.ok_or_else(|| {
                InputError::new(
                    t.path,
                    format!(
                        "cannot tell the trace's format from its first line; give --trace-format, one of {}",
                        TraceFormat::NAMES.join(", ")
                    ),
                )
            })?,
        };
        w.insert("format".into(), Value::String(format.name().to_string()));
        // The scenario's workload settings that are not the jobs stay.
        if let Some(Value::Object(old)) = top.get("workload") {
            for k in ["oom_after", "cpu_fallback_slowdown", "impossible"] {
                if let Some(v) = old.get(k) {
                    w.insert(k.into(), v.clone());
                }
            }
        }
        top.insert("workload".into(), Value::Object(w));
        if scenario.is_none() {
            top.insert("name".into(), Value::String(stem(t.path)));
        }
    }
    let text = serde_json::to_string(&doc).map_err(|e| InputError::new(&anchor, e.to_string()))?;
    parse_scenario(&anchor, &text)
}

/// Replaces the scenario's cluster and partitions with `cluster`'s: a
/// slurm.conf, or a scenario file's `cluster` and `partitions` (its
/// `scheduler` settings are merged under the scenario's own).
fn replace_cluster(top: &mut Map<String, Value>, cluster: &Path) -> Result<(), InputError> {
    let abs = absolute(cluster);
    match classify(cluster)? {
        ClusterFile::SlurmConf => {
            top.insert(
                "cluster".into(),
                json!({"slurm_conf": abs.to_string_lossy()}),
            );
            top.remove("partitions");
        }
        ClusterFile::Scenario => {
            let Value::Object(mut other) = read_json(cluster)? else {
                return Err(InputError::new(cluster, "expected a JSON object"));
            };
            let dir = abs.parent().unwrap_or(Path::new("")).to_path_buf();
            let mut c = other.remove("cluster").unwrap_or(Value::Null);
            anchor_paths(&mut c, &dir);
            top.insert("cluster".into(), c);
            match other.remove("partitions") {
                Some(p) => top.insert("partitions".into(), p),
                None => top.remove("partitions"),
            };
            if let Some(Value::Object(theirs)) = other.remove("scheduler") {
                let ours = top
                    .entry("scheduler")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(ours) = ours {
                    for (k, v) in theirs {
                        ours.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Makes the file names inside a cluster section (`slurm_conf`,
/// `gres_conf`, a node group's `topo_m`) absolute, from `dir`.
fn anchor_paths(v: &mut Value, dir: &Path) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::String(s)
                        if matches!(k.as_str(), "slurm_conf" | "gres_conf" | "topo_m") =>
                    {
                        if Path::new(s.as_str()).is_relative() {
                            *s = dir.join(s.as_str()).to_string_lossy().into_owned();
                        }
                    }
                    _ => anchor_paths(x, dir),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| anchor_paths(x, dir)),
        _ => {}
    }
}

/// `path` as a JSON string a scenario anchored in `anchor_dir` resolves to
/// the same file: unchanged when it is absolute or the anchor is the current
/// directory, else absolute.
fn path_value(path: &Path, anchor_dir: &Path) -> Value {
    let p = if path.is_absolute() || anchor_dir.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        absolute(path)
    };
    Value::String(p.to_string_lossy().into_owned())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cluster".into())
}

fn read_json(path: &Path) -> Result<Value, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the scenario: {e}")))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| crate::error::from_json(path, e))
}

/// A trace's format told from its first line: `[`/`{` JSON (Batsim's when
/// it has `nb_res`), a `JobID|…` header sacct's `-P` dump, `;` or a row of
/// numbers SWF, a CSV header with `gpu_milli` OpenB's, with `gpu_num`
/// Helios's. `None` when it is none of these.
pub fn sniff_trace(path: &Path) -> Result<Option<TraceFormat>, InputError> {
    use std::io::Read as _;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .map_err(|e| InputError::new(path, format!("cannot read the trace: {e}")))?;
    let text = String::from_utf8_lossy(&head);
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let lower = first.to_ascii_lowercase();
    Ok(if first.starts_with('[') || first.starts_with('{') {
        Some(if text.contains("\"nb_res\"") {
            TraceFormat::Batsim
        } else {
            TraceFormat::Json
        })
    } else if lower.starts_with("jobid|") {
        Some(TraceFormat::Sacct)
    } else if first.starts_with(';') || first.split_whitespace().all(|t| t.parse::<f64>().is_ok()) {
        Some(TraceFormat::Swf)
    } else if lower.contains(',') && lower.contains("gpu_milli") {
        Some(TraceFormat::OpenB)
    } else if lower.contains(',') && lower.contains("gpu_num") {
        Some(TraceFormat::Helios)
    } else {
        None
    })
}
