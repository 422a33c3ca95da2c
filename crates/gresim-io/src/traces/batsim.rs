//! Batsim's JSON workload format.
//!
//! One JSON document: `{"nb_res": 32, "jobs": [...], "profiles": {...}}`
//! (other top-level fields are ignored). Each job is
//! `{"id": 7, "subtime": 38.8, "res": 4, "walltime": 96, "profile": "p"}`:
//! `id` (number or string) is the submission's key; `subtime` the submit
//! time in seconds (fractional); `res` the number of Batsim resources, each
//! one host, so the job asks for `res` whole nodes (`-N res --exclusive`);
//! `walltime` the requested time in seconds, kept exactly (not rounded up
//! to minutes as a `--time` would be), and absent or negative means none.
//!
//! A profile gives the run time: `delay` profiles run `delay` seconds;
//! `composed` profiles run their `seq` of profiles `repeat` (or `nb`) times.
//! Other types (parallel tasks, MPI traces, ...) need Batsim's platform
//! model: such jobs run until their walltime. A job that runs longer than
//! its walltime is killed at it, as Batsim does.
//!
//! Batsim's times are real numbers; gresim counts whole ticks. With
//! `ticks_per_second = 1` (the default) every time is rounded to the second.
//! A larger value (the option `batsim_ticks_per_second`) keeps fractions of
//! a second, but then every time in the run, and in its outputs, counts
//! ticks, not seconds. Jobs are submitted in order of submit time, ties in
//! file order.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use gresim_model::job::JobSpec;
use gresim_model::Cluster;

use crate::error::InputError;
use crate::spec::{JobDef, NumOrStr};

/// Reads `path`, a Batsim JSON workload.
pub fn read(
    path: &Path,
    cluster: &Cluster,
    ticks_per_second: u64,
) -> Result<Vec<JobSpec>, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::new(path, format!("cannot read the trace: {e}")))?;
    parse(path, &text, cluster, ticks_per_second)
}

/// Parses a Batsim JSON workload; `path` names it in errors.
pub fn parse(
    path: &Path,
    text: &str,
    cluster: &Cluster,
    ticks_per_second: u64,
) -> Result<Vec<JobSpec>, InputError> {
    if ticks_per_second == 0 {
        return Err(InputError::new(
            path,
            "batsim_ticks_per_second must be at least 1",
        ));
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        let mut msg = e.to_string();
        if let Some(i) = msg.rfind(" at line ") {
            msg.truncate(i);
        }
        InputError::new(path, msg).with_line(e.line(), e.column())
    })?;
    let at = |p: String, msg: String| InputError::at(path, p, msg);
    let Some(top) = doc.as_object() else {
        return Err(at(".".into(), "expected a Batsim workload object".into()));
    };
    let jobs = top
        .get("jobs")
        .ok_or_else(|| at(".".into(), "missing field `jobs`".into()))?
        .as_array()
        .ok_or_else(|| at("jobs".into(), "expected an array of jobs".into()))?;
    let empty = serde_json::Map::new();
    let profiles = match top.get("profiles") {
        None => &empty,
        Some(p) => p
            .as_object()
            .ok_or_else(|| at("profiles".into(), "expected an object of profiles".into()))?,
    };
    let scale = ticks_per_second as f64;
    let ticks = |x: f64, p: &str| -> Result<u64, InputError> {
        let t = (x * scale).round();
        if !(0.0..9.0e18).contains(&t) {
            return Err(at(
                p.to_string(),
                format!("{x} s is out of range at {ticks_per_second} ticks per second"),
            ));
        }
        Ok(t as u64)
    };

    let mut memo: BTreeMap<String, Option<f64>> = BTreeMap::new();
    let mut defs: Vec<(u64, usize, JobDef, Option<u64>)> = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        let p = |f: &str| format!("jobs[{i}].{f}");
        let Some(o) = j.as_object() else {
            return Err(at(format!("jobs[{i}]"), "expected a job object".into()));
        };
        let id = match o.get("id") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(_) => return Err(at(p("id"), "expected a number or a string".into())),
            None => return Err(at(p("id"), "missing field `id`".into())),
        };
        let subtime = o
            .get("subtime")
            .ok_or_else(|| at(p("subtime"), "missing field `subtime`".into()))?
            .as_f64()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| {
                at(
                    p("subtime"),
                    "expected a number of seconds, at least 0".into(),
                )
            })?;
        let res = o
            .get("res")
            .ok_or_else(|| at(p("res"), "missing field `res`".into()))?
            .as_u64()
            .filter(|&r| (1..=u64::from(u32::MAX)).contains(&r))
            .ok_or_else(|| {
                at(
                    p("res"),
                    "expected a whole number of resources, at least 1".into(),
                )
            })?;
        let walltime = match o.get("walltime") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let w = v
                    .as_f64()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| at(p("walltime"), "expected a number of seconds".into()))?;
                // Batsim writes -1 for "no walltime".
                if w <= 0.0 {
                    None
                } else {
                    Some(ticks(w, &p("walltime"))?.max(1))
                }
            }
        };
        let profile = o
            .get("profile")
            .ok_or_else(|| at(p("profile"), "missing field `profile`".into()))?
            .as_str()
            .ok_or_else(|| at(p("profile"), "expected a profile name".into()))?;
        let run = profile_secs(profiles, profile, &mut memo, 0)
            .map_err(|m| at(p("profile"), m))?
            .map(|s| ticks(s, &p("profile")))
            .transpose()?;
        let submit = ticks(subtime, &p("subtime"))?;
        let d = JobDef {
            id: Some(id),
            submit,
            run_time: run,
            nodes: Some(NumOrStr::Num(res)),
            exclusive: true,
            ..JobDef::default()
        };
        defs.push((submit, i, d, walltime));
    }
    defs.sort_by_key(|d| (d.0, d.1));

    let mut keys: BTreeMap<String, u32> = BTreeMap::new();
    let mut specs: Vec<JobSpec> = Vec::with_capacity(defs.len());
    let mut names = gresim_model::Names::default();
    for (sub, (_, i, d, walltime)) in defs.iter().enumerate() {
        let where_ = format!("jobs[{i}]");
        let key = d.id.clone().unwrap_or_default();
        if keys.insert(key.clone(), sub as u32).is_some() {
            return Err(at(
                format!("{where_}.id"),
                format!("id '{key}' is used twice"),
            ));
        }
        let mut spec = crate::build::build_job(path, &where_, d, key, cluster, &keys, &specs)?;
        spec.intern_names(&mut names);
        // The walltime is exact, in ticks: not a `--time` rounded up to minutes.
        if let Some(w) = walltime {
            Arc::make_mut(&mut spec.request).time_limit = Some(Some(*w));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// Run time in seconds of `name`; `None` when only Batsim's platform model
/// could tell (the job then runs until its walltime).
fn profile_secs(
    profiles: &serde_json::Map<String, Value>,
    name: &str,
    memo: &mut BTreeMap<String, Option<f64>>,
    depth: u32,
) -> Result<Option<f64>, String> {
    if let Some(v) = memo.get(name) {
        return Ok(*v);
    }
    if depth > 64 {
        return Err(format!("profile '{name}' is nested too deeply (a cycle?)"));
    }
    let p = profiles
        .get(name)
        .ok_or_else(|| format!("no profile named '{name}' in `profiles`"))?;
    let bad = |f: &str, what: &str| format!("profiles.{name}.{f}: expected {what}");
    let ty = p
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("type", "a profile type"))?;
    let secs = match ty {
        "delay" => Some(
            p.get("delay")
                .and_then(Value::as_f64)
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad("delay", "a number of seconds, at least 0"))?,
        ),
        "composed" => {
            let repeat = match p.get("repeat").or_else(|| p.get("nb")) {
                None => 1,
                Some(v) => v.as_u64().ok_or_else(|| bad("repeat", "a whole number"))?,
            };
            let seq = p
                .get("seq")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("seq", "an array of profile names"))?;
            let mut sum = Some(0.0f64);
            for s in seq {
                let n = s
                    .as_str()
                    .ok_or_else(|| bad("seq", "an array of profile names"))?;
                let x = profile_secs(profiles, n, memo, depth + 1)?;
                sum = sum.zip(x).map(|(a, b)| a + b);
            }
            sum.map(|s| s * repeat as f64)
        }
        _ => None,
    };
    memo.insert(name.to_string(), secs);
    Ok(secs)
}

#[cfg(test)]
mod tests;
