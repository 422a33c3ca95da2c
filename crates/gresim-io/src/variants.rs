//! Scenario variants: the same workload and seed on a changed cluster or
//! policy, run side by side by `sim run` (docs/scenario-format.md, "Variants").
//!
//! A variant is the scenario file with a few rewrites applied to its JSON,
//! then read by [`crate::parse_scenario`] like any scenario, so it is checked
//! exactly as strictly. The rewrites:
//!
//! * `policy`: sets `scheduler.policy`.
//! * `gpus: "whole"`: drops every GPU group's `mig` and `mig_dynamic` (and
//!   `cluster.mig_reconfig_delay`): every GPU is whole.
//! * `gpus: "dynamic"`: sets `mig_dynamic` on every GPU group of a
//!   MIG-capable model; its `mig` stays, as the initial layout.
//! * `slice_requests: "whole_gpu"`: a request for a MIG type
//!   `<type>_<profile>` (`a100_1g.10gb`) becomes a request for `<type>`
//!   (`a100`), count unchanged: one whole GPU per slice. Applies to the
//!   synthetic mix's `type` and to inline jobs' `gres`, `gpus`,
//!   `gpus_per_node` and `gpus_per_task`.
//! * `mig_reconfig_delay`: sets `cluster.mig_reconfig_delay`.
//! * `accounting`: replaces the `accounting` section (`null` removes it).
//! * `topology_plugin`: sets `cluster.topology_plugin` (`null` removes it):
//!   the same switch tree, with or without Slurm's topology/tree placement.
//!
//! The synthetic generator draws the same random numbers whatever the
//! types, so a variant's job stream has the same submit times, run times
//! and shapes as the base scenario's.

use std::path::Path;

use serde_json::Value;

use crate::error::InputError;
use crate::spec::VariantDef;
use crate::Scenario;

/// A variant, built.
pub struct Variant {
    pub name: String,
    pub description: Option<String>,
    pub scenario: Scenario,
}

/// Builds the variants of `base` (none when its file has no `variants`).
/// Errors name the variant and what is wrong with it.
pub fn build_variants(base: &Scenario) -> Result<Vec<Variant>, InputError> {
    let file = base.path.as_path();
    let root: Value = serde_json::from_str(&base.source)
        .map_err(|e| InputError::new(file, format!("cannot re-read the scenario: {e}")))?;
    let Some(list) = root.get("variants").filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let defs: Vec<VariantDef> = serde_json::from_value(list.clone())
        .map_err(|e| InputError::at(file, "variants", e.to_string()))?;
    let mut out: Vec<Variant> = Vec::new();
    for (i, d) in defs.iter().enumerate() {
        let at = format!("variants[{i}]");
        let bad = |field: &str, msg: String| InputError::at(file, format!("{at}.{field}"), msg);
        if d.name.is_empty()
            || !d
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(bad(
                "name",
                format!(
                    "'{}' is not a valid variant name: use letters, digits, '-' and '_'",
                    d.name
                ),
            ));
        }
        if out.iter().any(|v| v.name == d.name) {
            return Err(bad(
                "name",
                format!("variant '{}' is defined twice", d.name),
            ));
        }
        let mut v = root.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("variants");
        }
        if let Some(p) = &d.policy {
            let sched = v.as_object_mut().map(|o| {
                o.entry("scheduler")
                    .or_insert_with(|| Value::Object(Default::default()))
            });
            if let Some(Value::Object(s)) = sched {
                s.insert("policy".into(), Value::String(p.clone()));
            }
        }
        if let Some(pre) = &d.preempt {
            let sched = v.as_object_mut().map(|o| {
                o.entry("scheduler")
                    .or_insert_with(|| Value::Object(Default::default()))
            });
            if let Some(Value::Object(s)) = sched {
                if pre.is_null() {
                    s.remove("preempt");
                } else {
                    s.insert("preempt".into(), pre.clone());
                }
            }
        }
        if let Some(r) = &d.reservations {
            if let Some(o) = v.as_object_mut() {
                if r.is_null() {
                    o.remove("reservations");
                } else {
                    o.insert("reservations".into(), r.clone());
                }
            }
        }
        if let Some(tp) = &d.topology_plugin {
            if let Some(c) = v["cluster"].as_object_mut() {
                if tp.is_null() {
                    c.remove("topology_plugin");
                } else {
                    c.insert("topology_plugin".into(), tp.clone());
                }
            }
        }
        if let Some(ck) = &d.checkpoint_interval {
            let Some(Value::Array(jobs)) = v["workload"].get_mut("jobs") else {
                return Err(bad(
                    "checkpoint_interval",
                    "applies to inline workload.jobs".into(),
                ));
            };
            for j in jobs.iter_mut().filter_map(Value::as_object_mut) {
                if ck.is_null() {
                    j.remove("checkpoint_interval");
                } else {
                    j.insert("checkpoint_interval".into(), ck.clone());
                }
            }
        }
        match d.gpus.as_deref() {
            None | Some("as_is") => {}
            Some(kind @ ("whole" | "dynamic")) => {
                if v["cluster"].get("nodes").is_none() {
                    return Err(bad(
                        "gpus",
                        "rewriting GPU groups needs inline cluster.nodes, not slurm_conf".into(),
                    ));
                }
                let whole = kind == "whole";
                if whole {
                    if let Some(c) = v["cluster"].as_object_mut() {
                        c.remove("mig_reconfig_delay");
                    }
                }
                for_each_gpu_group(&mut v["cluster"], &mut |g| {
                    if whole {
                        g.remove("mig");
                        g.remove("mig_dynamic");
                    } else if g
                        .get("model")
                        .and_then(Value::as_str)
                        .and_then(gresim_model::catalog::model_by_name)
                        .is_some_and(|m| !gresim_model::catalog::model(m).mig_profiles.is_empty())
                    {
                        g.insert("mig_dynamic".into(), Value::Bool(true));
                    }
                });
            }
            Some(other) => {
                return Err(bad(
                    "gpus",
                    format!("expected \"as_is\", \"whole\" or \"dynamic\", got \"{other}\""),
                ))
            }
        }
        match d.slice_requests.as_deref() {
            None | Some("as_is") => {}
            Some("whole_gpu") => {
                let w = &mut v["workload"];
                if w.get("trace").is_some() || w.get("scripts").is_some() {
                    return Err(bad(
                        "slice_requests",
                        "whole_gpu rewrites inline jobs and synthetic mixes, not traces or scripts"
                            .into(),
                    ));
                }
                if let Some(Value::Array(mix)) = w.pointer_mut("/synthetic/mix") {
                    for m in mix {
                        rewrite_field(m, "type");
                    }
                }
                if let Some(Value::Array(jobs)) = w.get_mut("jobs") {
                    for j in jobs {
                        for f in ["gres", "gpus", "gpus_per_node", "gpus_per_task"] {
                            rewrite_field(j, f);
                        }
                    }
                }
            }
            Some(other) => {
                return Err(bad(
                    "slice_requests",
                    format!("expected \"as_is\" or \"whole_gpu\", got \"{other}\""),
                ))
            }
        }
        if let Some(delay) = d.mig_reconfig_delay {
            if let Some(c) = v["cluster"].as_object_mut() {
                c.insert("mig_reconfig_delay".into(), Value::from(delay));
            }
        }
        if let (Some(a), Some(o)) = (&d.accounting, v.as_object_mut()) {
            if a.is_null() {
                o.remove("accounting");
            } else {
                o.insert("accounting".into(), a.clone());
            }
        }
        let text = serde_json::to_string_pretty(&v)
            .map_err(|e| InputError::new(file, format!("cannot write variant: {e}")))?;
        let scenario = crate::parse_scenario(file, &text)
            .map_err(|e| variant_error(file, &at, &d.name, &e))?;
        if let Some(e) = &scenario.impossible {
            return Err(variant_error(file, &at, &d.name, e));
        }
        out.push(Variant {
            name: d.name.clone(),
            description: d.description.clone(),
            scenario,
        });
    }
    Ok(out)
}

/// An error in variant `name`'s scenario, anchored on the variant at `at`.
fn variant_error(file: &Path, at: &str, name: &str, e: &InputError) -> InputError {
    let inner = match &e.path {
        Some(p) if !p.is_empty() && p != "." => format!("at {p}: {}", e.msg),
        _ => e.msg.clone(),
    };
    InputError::at(file, at, format!("variant '{name}': {inner}"))
}

/// Calls `f` on every GPU group of the cluster's node groups and templates.
fn for_each_gpu_group(cluster: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
    let Value::Object(c) = cluster else {
        return;
    };
    let mut groups: Vec<&mut Value> = Vec::new();
    for (k, v) in c.iter_mut() {
        match (k.as_str(), v) {
            ("nodes", Value::Array(nodes)) => groups.extend(nodes.iter_mut()),
            ("node_templates", Value::Object(t)) => groups.extend(t.values_mut()),
            _ => {}
        }
    }
    for g in groups {
        if let Some(Value::Array(gpus)) = g.get_mut("gpus") {
            for gpu in gpus {
                if let Value::Object(o) = gpu {
                    f(o);
                }
            }
        }
    }
}

/// Rewrites the MIG types in a string or number field (see [`whole_gpu_types`]).
fn rewrite_field(obj: &mut Value, field: &str) {
    if let Some(Value::String(s)) = obj.get_mut(field) {
        *s = whole_gpu_types(s);
    }
}

/// `gpu:a100_1g.10gb:2` → `gpu:a100:2`: every `:`/`,`-separated token
/// `<type>_<profile>` whose `<profile>` is a MIG profile of some catalog
/// model loses the `_<profile>`.
pub fn whole_gpu_types(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut token = String::new();
    let flush = |token: &mut String, out: &mut String| {
        let t = match token.rsplit_once('_') {
            Some((base, prof))
                if !base.is_empty()
                    && gresim_model::catalog::GPU_MODELS
                        .iter()
                        .any(|m| m.mig_profile(prof).is_some()) =>
            {
                base
            }
            _ => token.as_str(),
        };
        out.push_str(t);
        token.clear();
    };
    for c in s.chars() {
        if c == ':' || c == ',' {
            flush(&mut token, &mut out);
            out.push(c);
        } else {
            token.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

#[cfg(test)]
mod tests;
