//! Parsers for sbatch option values: `--gres`, `--gpus`, `-N`, `--array`,
//! `--dependency`. Each returns a message saying what was expected; callers
//! add the file and position.

use gresim_model::job::{ArraySpec, DepKind, DepTerm, Dependency, GpuReq};
use gresim_model::shares::{ShareKind, SharedReq};
use gresim_model::units::parse_count;
use gresim_model::Cluster;

/// Slurm's MaxArraySize default: indices run from 0 to 1000.
pub const MAX_ARRAY_INDEX: u32 = 1000;

fn gpu_type(cluster: &Cluster, ty: &str) -> Result<gresim_model::GpuTypeId, String> {
    if cluster.gpu_types.is_empty() {
        return Err("requests GPUs, but the cluster has no GPUs".into());
    }
    cluster.gpu_type_id(ty).ok_or_else(|| {
        let known: Vec<&str> = cluster.gpu_types.iter().map(|t| t.name.as_str()).collect();
        format!(
            "unknown GPU type '{ty}'; the cluster has: {}",
            known.join(", ")
        )
    })
}

fn count(s: &str, what: &str) -> Result<u32, String> {
    let n = parse_count(s).map_err(|e| format!("{what}: {e}"))?;
    u32::try_from(n).map_err(|_| format!("{what}: count {n} is too large"))
}

/// `--gres=gpu[:type][:count][,…]`: GPUs per node. A count of 0 drops the
/// token. Shared GRES (`shard`, `mps`) are refused here; see
/// [`parse_gres_shared`].
pub fn parse_gres(s: &str, cluster: &Cluster) -> Result<Vec<GpuReq>, String> {
    match parse_gres_shared(s, cluster)? {
        (g, None) => Ok(g),
        (_, Some(sr)) => Err(format!(
            "'{s}' requests the shared GRES {}; expected gpu",
            sr.kind
        )),
    }
}

/// `--gres=…` with shared GRES: `gpu[:type][:count]` tokens, or one
/// `shard[:count]` / `mps[:count]` token (count per node, all from one
/// GPU; see `gresim_model::shares`). Slurm refuses a job asking for
/// `gpu` and a shared GRES together.
pub fn parse_gres_shared(
    s: &str,
    cluster: &Cluster,
) -> Result<(Vec<GpuReq>, Option<SharedReq>), String> {
    let mut out: Vec<GpuReq> = Vec::new();
    let mut shared: Option<SharedReq> = None;
    for tok in s.split(',').map(str::trim) {
        if tok.is_empty() {
            return Err(format!(
                "empty GRES token in '{s}'; expected gpu[:type][:count]"
            ));
        }
        if tok == "none" {
            continue;
        }
        let tok = tok.strip_prefix("gres/").unwrap_or(tok);
        let mut parts: Vec<&str> = tok.split(':').collect();
        let name = parts.remove(0);
        if let Some(kind) = ShareKind::from_name(name) {
            let n = match parts.as_slice() {
                [] => 1,
                [c] if c.chars().next().is_some_and(|ch| ch.is_ascii_digit()) => count(c, tok)?,
                [""] => {
                    return Err(format!(
                        "'{tok}' has an empty count; expected {kind}[:count]"
                    ))
                }
                _ => {
                    return Err(format!(
                        "'{tok}': typed {kind} requests are not modelled; expected {kind}[:count]"
                    ))
                }
            };
            if !cluster.has_shares(kind) {
                return Err(format!(
                    "unknown GRES name '{name}' in '{s}': no node configures gres/{kind} (Gres={kind}:N, gres.conf Name={kind}, or a scenario GPU group's \"{kind}\")"
                ));
            }
            if shared.is_some_and(|x| x.kind != kind) {
                return Err(format!(
                    "'{s}': Invalid generic resource (gres) specification (gresim models one shared GRES per job)"
                ));
            }
            shared = if n == 0 {
                None
            } else {
                Some(SharedReq { kind, per_node: n })
            };
            continue;
        }
        if name != "gpu" {
            return Err(format!(
                "unknown GRES name '{name}' in '{s}'; expected gpu, shard or mps"
            ));
        }
        let (ty, n) = match parts.as_slice() {
            [] => (None, 1),
            [c] if c.chars().next().is_some_and(|ch| ch.is_ascii_digit()) => (None, count(c, tok)?),
            [""] => {
                return Err(format!(
                    "'{tok}' has an empty count; expected gpu[:type][:count]"
                ))
            }
            [t] => (Some(*t), 1),
            [t, c] => (Some(*t), count(c, tok)?),
            _ => {
                return Err(format!(
                    "'{tok}' has too many fields; expected gpu[:type][:count]"
                ))
            }
        };
        if n == 0 {
            continue;
        }
        let ty = match ty {
            Some(t) => Some(gpu_type(cluster, t)?),
            None => {
                gpu_type(cluster, "")
                    .err()
                    .filter(|e| e.contains("no GPUs"))
                    .map_or(Ok(()), Err)?;
                None
            }
        };
        // Repeated same name+type tokens merge; the last value wins.
        match out.iter_mut().find(|g| g.ty == ty) {
            Some(g) => g.count = n,
            None => out.push(GpuReq { ty, count: n }),
        }
    }
    if out.iter().any(|g| g.ty.is_none()) && out.iter().any(|g| g.ty.is_some()) {
        return Err(format!(
            "'{s}': Invalid GRES specification (with and without type identification)"
        ));
    }
    if let (Some(sr), false) = (shared, out.is_empty()) {
        return Err(format!(
            "'{s}': Invalid generic resource (gres) specification (a job cannot request gres/gpu and the shared gres/{} together)",
            sr.kind
        ));
    }
    Ok((out, shared))
}

/// `--gpus`, `--gpus-per-node`, `--gpus-per-task`: `[type:]N`.
pub fn parse_gpu_count(s: &str, cluster: &Cluster) -> Result<GpuReq, String> {
    let s = s.trim();
    let s = s.strip_prefix("gpu:").unwrap_or(s);
    let (ty, n) = match s.rsplit_once(':') {
        Some((t, c)) => (Some(t), c),
        None => (None, s),
    };
    let n = count(n, s)?;
    if n == 0 {
        return Err(format!("'{s}': a GPU count must be at least 1"));
    }
    let ty = match ty {
        Some(t) => Some(gpu_type(cluster, t)?),
        None => {
            if cluster.gpu_types.is_empty() {
                return Err("requests GPUs, but the cluster has no GPUs".into());
            }
            None
        }
    };
    Ok(GpuReq { ty, count: n })
}

/// `--segment=N` (Slurm 24.05+, beyond 22.05; slurm_opt.c
/// `arg_set_segment_size`, `parse_uint16`: a whole number from 0 to 65533,
/// 0 being unset). Topology/block's node choice reads it.
pub fn parse_segment(s: &str) -> Result<Option<u32>, String> {
    let v: u32 = s
        .trim()
        .parse()
        .ok()
        .filter(|v| *v < 0xfffe)
        .ok_or_else(|| {
            format!("Invalid --segment specification '{s}': expected a whole number of nodes")
        })?;
    Ok((v > 0).then_some(v))
}

/// `--switches=count[@max-time]` (slurm_opt.c `arg_set_switches`: a
/// positive count, the time in `--time`'s grammar).
pub fn parse_switches(s: &str) -> Result<gresim_model::job::SwitchReq, String> {
    let s = s.trim();
    let (count, wait) = match s.split_once('@') {
        Some((c, w)) => (c, Some(w)),
        None => (s, None),
    };
    let count: u32 = count
        .trim()
        .parse()
        .ok()
        .filter(|c| *c > 0)
        .ok_or_else(|| {
            format!("Invalid --switches specification '{s}': expected a positive count")
        })?;
    let wait = wait
        .map(|w| {
            gresim_model::slurm_time::parse_duration_exact(w.trim()).map_err(|e| {
                format!("Invalid --switches specification '{s}': bad max-time '{w}': {e}")
            })
        })
        .transpose()?;
    Ok(gresim_model::job::SwitchReq { count, wait })
}

/// `-N min[-max]`.
pub fn parse_nodes(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("\"{s}\" is not a valid node count; expected N or MIN-MAX, N >= 1");
    let one = |x: &str| -> Result<u32, String> {
        let n = count(x.trim(), "node count").map_err(|_| bad())?;
        if n == 0 {
            return Err(bad());
        }
        Ok(n)
    };
    match s.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (one(a)?, one(b)?);
            if b < a {
                return Err(bad());
            }
            Ok((a, b))
        }
        None => {
            let n = one(s)?;
            Ok((n, n))
        }
    }
}

/// `--array=a[-b[:s]][,…][%N]`.
pub fn parse_array(s: &str) -> Result<ArraySpec, String> {
    let bad = |why: &str| format!("Invalid job array specification '{s}': {why}");
    let (body, throttle) = match s.split_once('%') {
        Some((b, t)) => {
            let t: u32 = t
                .trim()
                .parse()
                .map_err(|_| bad("the throttle after % must be a number"))?;
            (b, Some(t))
        }
        None => (s, None),
    };
    let body = body.trim();
    let body = body
        .strip_prefix('[')
        .and_then(|b| b.strip_suffix(']'))
        .unwrap_or(body);
    let mut indices: Vec<u32> = Vec::new();
    let mut step = None;
    for tok in body.split(',') {
        let tok = tok.trim();
        let num = |x: &str| -> Result<u32, String> {
            x.trim()
                .parse::<u32>()
                .map_err(|_| bad(&format!("'{x}' is not an index")))
        };
        let (range, st) = match tok.split_once(':') {
            Some((r, st)) => (r, num(st)?),
            None => (tok, 1),
        };
        if st == 0 || st > MAX_ARRAY_INDEX {
            return Err(bad("the step must be between 1 and 1000"));
        }
        let (a, b) = match range.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => {
                let a = num(range)?;
                (a, a)
            }
        };
        if b < a {
            return Err(bad("a range goes backwards"));
        }
        if b > MAX_ARRAY_INDEX {
            return Err(bad("indices must be at most 1000 (MaxArraySize=1001)"));
        }
        if step.is_none() && tok.contains(':') {
            step = Some(st);
        }
        let mut i = a;
        while i <= b {
            indices.push(i);
            i += st;
        }
    }
    indices.sort_unstable();
    indices.dedup();
    if indices.is_empty() {
        return Err(bad("no indices"));
    }
    if throttle == Some(0) {
        return Err(bad("the throttle must be at least 1"));
    }
    Ok(ArraySpec {
        indices,
        throttle,
        step: step.unwrap_or(1),
    })
}

/// `--dependency`: `type:id[:id…][,type:id…]`, `?` for OR, or `singleton`.
/// `resolve` maps an id (`train` or `train_3` for one array task) to a submission index.
pub fn parse_dependency(
    s: &str,
    resolve: impl Fn(&str) -> Option<(u32, Option<u32>)>,
) -> Result<Dependency, String> {
    let any = s.contains('?');
    if any && s.contains(',') {
        return Err(format!(
            "'{s}': use either ',' (all) or '?' (any), not both"
        ));
    }
    let mut terms = Vec::new();
    for part in s.split([',', '?']).map(str::trim) {
        if part == "singleton" {
            terms.push(DepTerm {
                kind: DepKind::Singleton,
                target: None,
                task: None,
            });
            continue;
        }
        let Some((kind, ids)) = part.split_once(':') else {
            return Err(format!(
                "'{part}' in '{s}': expected TYPE:ID[:ID…] (after, afterany, afterok, afternotok) or singleton"
            ));
        };
        let kind = match kind {
            "after" => DepKind::After,
            "afterany" => DepKind::AfterAny,
            "afterok" => DepKind::AfterOk,
            "afternotok" => DepKind::AfterNotOk,
            other => {
                return Err(format!(
                    "unknown dependency type '{other}'; expected after, afterany, afterok, afternotok or singleton"
                ))
            }
        };
        for id in ids.split(':') {
            let Some((target, task)) = resolve(id.trim()) else {
                return Err(format!(
                    "Job dependency problem: no earlier submission has id '{id}'"
                ));
            };
            terms.push(DepTerm {
                kind,
                target: Some(target),
                task,
            });
        }
    }
    Ok(Dependency { terms, any })
}

#[cfg(test)]
mod tests;
