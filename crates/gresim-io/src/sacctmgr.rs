//! The scenario's `accounting` section: sacctmgr commands, a dump file and
//! JSON objects with sacctmgr's field names, read through
//! [`gresim_slurm::sacctmgr`] into the model's
//! [`gresim_model::accounting::Accounting`].

use gresim_model::accounting::{Accounting, Enforce};
use gresim_slurm::sacctmgr::{add, apply_command, apply_dump, new_accounting, parse_enforce};

use crate::error::InputError;

/// The scenario's `accounting` section for `cluster`. Errors name the
/// scenario file and the JSON path (`accounting.sacctmgr[2]`), or the dump
/// file and its line.
pub fn build(
    path: &std::path::Path,
    def: &crate::spec::AccountingDef,
    cluster: &gresim_model::Cluster,
) -> Result<Accounting, InputError> {
    let enforce = match &def.enforce {
        Some(e) => parse_enforce(e).map_err(|m| InputError::at(path, "accounting.enforce", m))?,
        None => Enforce::ALL,
    };
    let tres = match &def.tres {
        Some(t) => t.clone(),
        None => std::iter::once("gres/gpu".to_string())
            .chain(
                cluster
                    .gpu_types
                    .iter()
                    .map(|t| format!("gres/gpu:{}", t.name)),
            )
            .collect::<Vec<_>>()
            .join(","),
    };
    let mut acct =
        new_accounting(enforce, &tres).map_err(|m| InputError::at(path, "accounting.tres", m))?;
    for (i, c) in def.sacctmgr.iter().enumerate() {
        apply_command(&mut acct, c)
            .map_err(|m| InputError::at(path, format!("accounting.sacctmgr[{i}]"), m))?;
    }
    if let Some(d) = &def.dump {
        let dp = path.parent().unwrap_or(std::path::Path::new(".")).join(d);
        let text = std::fs::read_to_string(&dp).map_err(|e| {
            InputError::at(
                path,
                "accounting.dump",
                format!("cannot read {}: {e}", dp.display()),
            )
        })?;
        apply_dump(&mut acct, &text).map_err(|(l, m)| InputError::new(&dp, m).with_line(l, 0))?;
    }
    let objects = [
        ("qos", &def.qos),
        ("accounts", &def.accounts),
        ("users", &def.users),
    ];
    for (what, list) in objects {
        for (i, obj) in list.iter().enumerate() {
            let at = format!("accounting.{what}[{i}]");
            let mut words = vec![
                "add".to_string(),
                match what {
                    "qos" => "qos",
                    "accounts" => "account",
                    _ => "user",
                }
                .to_string(),
            ];
            let mut name = None;
            for (k, v) in obj {
                let v = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Number(n) => n.to_string(),
                    serde_json::Value::Bool(b) => b.to_string(),
                    _ => {
                        return Err(InputError::at(
                            path,
                            format!("{at}.{k}"),
                            "expected a string or a number",
                        ))
                    }
                };
                if v.chars().any(char::is_whitespace) {
                    return Err(InputError::at(
                        path,
                        format!("{at}.{k}"),
                        "expected a value without spaces",
                    ));
                }
                if k.eq_ignore_ascii_case("name") {
                    name = Some(v);
                } else {
                    words.push(format!("{k}={v}"));
                }
            }
            let Some(name) = name else {
                return Err(InputError::at(path, at, "expected a \"name\""));
            };
            words.insert(2, name);
            let entity = words[1].clone();
            add(&mut acct, &entity, &words[2..]).map_err(|m| InputError::at(path, at, m))?;
        }
    }
    // Partition settings: the JSON path and the partition, which must exist.
    let partition = |field: &str, part: &str| {
        let at = format!("accounting.{field}.{part}");
        match cluster.partition_id(part) {
            Some(p) => Ok((at, p)),
            None => Err(InputError::at(
                path,
                &at,
                format!("unknown partition \"{part}\""),
            )),
        }
    };
    for (part, q) in &def.partition_qos {
        let (at, _) = partition("partition_qos", part)?;
        let id = acct
            .qos_by_name(q)
            .ok_or_else(|| InputError::at(path, &at, format!("unknown QOS \"{q}\"")))?;
        acct.part_qos.push((part.clone(), id));
    }
    acct.billing_weights = vec![Vec::new(); cluster.partitions.len()];
    for (part, w) in &def.tres_billing_weights {
        let (at, p) = partition("tres_billing_weights", part)?;
        acct.billing_weights[p.idx()] = acct
            .parse_billing_weights(w)
            .map_err(|m| InputError::at(path, &at, m))?;
    }
    acct.billing_max_tres = def.max_tres;
    acct.finish()
        .map_err(|m| InputError::at(path, "accounting", m))?;
    Ok(acct)
}
