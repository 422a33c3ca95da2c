//! The accounting configuration as admins write it: `sacctmgr` commands
//! (`add qos …`, `add account …`, `add user …`, `modify … set …`), the file
//! `sacctmgr dump CLUSTER` writes. The scenario's JSON form, whose objects
//! use sacctmgr's field names, is read through these by gresim-io.
//!
//! Everything ends in [`gresim_model::accounting::Accounting`]; errors say
//! which command or line, which field, and what was expected.

use gresim_model::accounting::{
    Accounting, AssocId, Enforce, QosId, Shares, TresArray, NO_LIMIT, TRES_CPU, TRES_MEM, TRES_NODE,
};
use gresim_model::slurm_time::parse_time_limit;
use gresim_model::units::parse_mem_mib;

/// `AccountingStorageEnforce=`'s value.
pub fn parse_enforce(s: &str) -> Result<Enforce, String> {
    let mut e = Enforce::default();
    for f in s.split(',').map(str::trim).filter(|f| !f.is_empty()) {
        match f.to_ascii_lowercase().as_str() {
            "associations" => e.associations = true,
            "limits" => {
                e.associations = true;
                e.limits = true
            }
            "qos" => {
                e.associations = true;
                e.qos = true
            }
            "safe" => {
                e.associations = true;
                e.limits = true;
                e.safe = true
            }
            "all" => e = Enforce::ALL,
            "nojobs" | "nosteps" | "wckeys" => {}
            "none" | "0" => e = Enforce::default(),
            other => {
                return Err(format!(
                    "unknown AccountingStorageEnforce flag \"{other}\": expected associations, limits, qos, safe, wckeys, nojobs, nosteps"
                ))
            }
        }
    }
    Ok(e)
}

/// A new configuration tracking `tres` (`AccountingStorageTRES`, comma-separated GRES).
pub fn new_accounting(enforce: Enforce, tres: &str) -> Result<Accounting, String> {
    let mut a = Accounting::new(enforce);
    for t in tres.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match t.to_ascii_lowercase().as_str() {
            "cpu" | "mem" | "node" | "billing" | "energy" | "fs/disk" | "vmem" | "pages" => {}
            _ => {
                a.add_tres(t)?;
            }
        }
    }
    Ok(a)
}

/// How a field is changed: `=`, `+=` or `-=` (QOS lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Set,
    Add,
    Remove,
}

/// Splits `key=value`, `key+=value`, `key-=value`.
fn split_kv(tok: &str) -> Option<(&str, Op, &str)> {
    let i = tok.find('=')?;
    let (k, v) = (&tok[..i], unquote(&tok[i + 1..]));
    if let Some(k) = k.strip_suffix('+') {
        Some((k, Op::Add, v))
    } else if let Some(k) = k.strip_suffix('-') {
        Some((k, Op::Remove, v))
    } else {
        Some((k, Op::Set, v))
    }
}

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['\'', '"'] {
        if let Some(s) = v.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return s;
        }
    }
    v
}

/// A count limit: a whole number, or -1 to clear.
fn count(key: &str, v: &str) -> Result<u32, String> {
    if v == "-1" {
        return Ok(u32::MAX);
    }
    v.parse::<u32>().map_err(|_| {
        format!("{key}: expected a whole number of at least 0 (or -1 for no limit), got \"{v}\"")
    })
}

/// A wall limit in minutes (Slurm's time formats; -1 clears).
fn wall(key: &str, v: &str) -> Result<u64, String> {
    if v == "-1" {
        return Ok(NO_LIMIT);
    }
    match parse_time_limit(v) {
        Ok(Some(s)) => Ok(s / 60),
        Ok(None) => Ok(NO_LIMIT),
        Err(e) => Err(format!(
            "{key}: expected a time (minutes, [D-]HH:MM:SS), got \"{v}\": {e}"
        )),
    }
}

/// A TRES list `gres/gpu=4,cpu=10,mem=2G`; `=-1` clears an entry. Refuses
/// TRES the configuration does not track and negative counts.
fn tres_list(acct: &Accounting, key: &str, v: &str, into: &mut TresArray) -> Result<(), String> {
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((name, val)) = item.split_once('=') else {
            return Err(format!(
                "{key}: expected TRES=COUNT entries (gres/gpu=4,cpu=16), got \"{item}\""
            ));
        };
        let i = acct.tres_index(name.trim()).ok_or_else(|| {
            format!(
                "{key}: unknown TRES \"{name}\": this configuration tracks {} (add GRES to AccountingStorageTRES)",
                acct.tres_names.join(", ")
            )
        })?;
        let val = val.trim();
        if val == "-1" {
            into[i] = NO_LIMIT;
            continue;
        }
        let n = if i == TRES_MEM {
            parse_mem_mib(val).map_err(|e| format!("{key}: {name}: {e}"))?
        } else {
            val.parse::<u64>().map_err(|_| {
                format!(
                    "{key}: {name}: expected a whole number of at least 0 (or -1), got \"{val}\""
                )
            })?
        };
        into[i] = n;
    }
    Ok(())
}

fn qos_list(acct: &Accounting, key: &str, v: &str) -> Result<Vec<QosId>, String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|n| {
            acct.qos_by_name(n).ok_or_else(|| {
                format!("{key}: unknown QOS \"{n}\" (add it first with `add qos {n}`)")
            })
        })
        .collect()
}

/// If QOS `q` with the Preempt list `list` could reach itself through the
/// other QOS's lists: the QOS where the loop closes.
fn preemption_loop(acct: &Accounting, q: QosId, list: &[QosId]) -> Option<QosId> {
    let mut seen = vec![false; acct.qos.len()];
    let mut stack: Vec<(QosId, QosId)> = list.iter().map(|&x| (x, x)).collect();
    while let Some((x, via)) = stack.pop() {
        if x == q {
            return Some(via);
        }
        if std::mem::replace(&mut seen[x as usize], true) {
            continue;
        }
        for &y in &acct.qos[x as usize].preempt {
            stack.push((y, x));
        }
    }
    None
}

/// Sets one field of a QOS.
pub fn set_qos_field(acct: &mut Accounting, q: QosId, key: &str, v: &str) -> Result<(), String> {
    let k = key.to_ascii_lowercase();
    let snapshot = acct.clone();
    let qos = &mut acct.qos[q as usize];
    let l = &mut qos.limits;
    match k.as_str() {
        "name" => {}
        "description" | "limitfactor" | "cluster" => {}
        "preemptmode" => {
            let m: gresim_model::preempt::PreemptModeSpec =
                v.parse().map_err(|e| format!("{key}: {e}"))?;
            // A QOS mode of OFF (0) is "not set": the global mode applies.
            qos.preempt_mode =
                (m.mode != gresim_model::preempt::PreemptMode::Off || m.within).then_some(m);
        }
        "preemptexempttime" => {
            qos.preempt_exempt_time = if ["-1", "infinite", "unlimited"]
                .contains(&v.trim().to_ascii_lowercase().as_str())
            {
                None
            } else {
                Some(gresim_model::slurm_time::parse_duration_exact(v).map_err(|_| {
                    format!("{key}: expected a time ([days-]hours:minutes:seconds or minutes), got \"{v}\"")
                })?)
            }
        }
        "priority" => {
            qos.priority = v
                .parse()
                .map_err(|_| format!("{key}: expected a whole number of at least 0, got \"{v}\""))?
        }
        "usagefactor" => {
            let f: f64 = v
                .parse()
                .map_err(|_| format!("{key}: expected a number of at least 0, got \"{v}\""))?;
            if !(f.is_finite() && f >= 0.0) {
                return Err(format!(
                    "{key}: expected a number of at least 0, got \"{v}\""
                ));
            }
            qos.usage_factor = f;
        }
        "gracetime" => {
            // sacctmgr reads GraceTime as a number of seconds (get_uint).
            qos.grace_time = match v.trim().parse::<u64>() {
                Ok(s) => s,
                Err(_) => gresim_model::slurm_time::parse_duration_exact(v)
                    .map_err(|_| format!("{key}: expected seconds or a time, got \"{v}\""))?,
            }
        }
        "flags" => {
            for f in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                let fl = &mut qos.flags;
                match f.to_ascii_lowercase().as_str() {
                    "denyonlimit" => fl.deny_on_limit = true,
                    "overpartqos" => fl.over_part_qos = true,
                    "partitionmaxnodes" => fl.partition_max_nodes = true,
                    "partitionminnodes" => fl.partition_min_nodes = true,
                    "partitiontimelimit" => fl.partition_time_limit = true,
                    "noreserve" => fl.no_reserve = true,
                    "usagefactorsafe" => fl.usage_factor_safe = true,
                    "requiresreservation" => fl.requires_reservation = true,
                    "nodecay" => fl.no_decay = true,
                    "enforceusagethreshold" | "nodecay_" | "relative" => {}
                    "-1" | "none" => *fl = Default::default(),
                    other => {
                        return Err(format!(
                            "{key}: unknown QOS flag \"{other}\": expected DenyOnLimit, OverPartQOS, PartitionMaxNodes, PartitionMinNodes, PartitionTimeLimit, NoReserve, UsageFactorSafe, RequiresReservation, NoDecay"
                        ))
                    }
                }
            }
        }
        "preempt" => {
            let list = qos_list(&snapshot, key, v)?;
            if let Some(at) = preemption_loop(&snapshot, q, &list) {
                // slurmdbd's _preemption_loop() refuses it.
                return Err(format!(
                    "{key}: QOS {} would preempt itself through QOS {} (a preemption loop; slurmdbd refuses it)",
                    snapshot.qos[q as usize].name, snapshot.qos[at as usize].name
                ));
            }
            qos.preempt = list;
        }
        "grptres" => tres_list(&snapshot, key, v, &mut l.grp_tres)?,
        "grptresmins" => tres_list(&snapshot, key, v, &mut l.grp_tres_mins)?,
        "grptresrunmins" => tres_list(&snapshot, key, v, &mut l.grp_tres_run_mins)?,
        "grpcpus" => l.grp_tres[TRES_CPU] = limit64(count(key, v)?),
        "grpnodes" => l.grp_tres[TRES_NODE] = limit64(count(key, v)?),
        "grpjobs" => l.grp_jobs = count(key, v)?,
        "grpsubmitjobs" | "grpsubmit" => l.grp_submit_jobs = count(key, v)?,
        "grpwall" => l.grp_wall = wall(key, v)?,
        "maxtres" | "maxtresperjob" | "maxtrespj" => {
            tres_list(&snapshot, key, v, &mut l.max_tres_pj)?
        }
        "maxtrespernode" | "maxtrespn" => tres_list(&snapshot, key, v, &mut l.max_tres_pn)?,
        "maxtresperuser" | "maxtrespu" => tres_list(&snapshot, key, v, &mut l.max_tres_pu)?,
        "maxtresperaccount" | "maxtrespa" => tres_list(&snapshot, key, v, &mut l.max_tres_pa)?,
        "maxtresmins" | "maxtresminsperjob" | "maxtresminspj" => {
            tres_list(&snapshot, key, v, &mut l.max_tres_mins_pj)?
        }
        "mintres" | "mintresperjob" | "mintrespj" => {
            tres_list(&snapshot, key, v, &mut l.min_tres_pj)?
        }
        "maxcpus" | "maxcpusperjob" => l.max_tres_pj[TRES_CPU] = limit64(count(key, v)?),
        "maxnodes" | "maxnodesperjob" => l.max_tres_pj[TRES_NODE] = limit64(count(key, v)?),
        "maxcpusperuser" | "maxcpuspu" => l.max_tres_pu[TRES_CPU] = limit64(count(key, v)?),
        "maxnodesperuser" | "maxnodespu" => l.max_tres_pu[TRES_NODE] = limit64(count(key, v)?),
        "maxjobs" | "maxjobsperuser" | "maxjobspu" => l.max_jobs_pu = count(key, v)?,
        "maxjobsperaccount" | "maxjobspa" => l.max_jobs_pa = count(key, v)?,
        "maxsubmitjobs"
        | "maxsubmitjobsperuser"
        | "maxsubmitjobspu"
        | "maxsubmitpu"
        | "maxsubmit" => l.max_submit_pu = count(key, v)?,
        "maxsubmitjobsperaccount" | "maxsubmitjobspa" | "maxsubmitpa" => {
            l.max_submit_pa = count(key, v)?
        }
        "maxwall" | "maxwalldurationperjob" => l.max_wall_pj = wall(key, v)?,
        _ => return Err(format!("unknown QOS field \"{key}\"")),
    }
    Ok(())
}

/// The QOS an association may use now: its own list, else the nearest ancestor's.
fn effective_qos(acct: &Accounting, a: AssocId) -> Vec<QosId> {
    for x in acct.lineage(a) {
        let r = &acct.assocs[x as usize];
        if r.set.qos {
            return r.qos.clone();
        }
    }
    Vec::new()
}

/// Sets one field of an association (account or user).
fn set_assoc_field(
    acct: &mut Accounting,
    a: AssocId,
    key: &str,
    op: Op,
    v: &str,
) -> Result<(), String> {
    let k = key.to_ascii_lowercase();
    if k == "qos" {
        let list = qos_list(acct, key, v)?;
        let mut cur = effective_qos(acct, a);
        match op {
            Op::Set => cur = list,
            Op::Add => {
                for q in list {
                    if !cur.contains(&q) {
                        cur.push(q);
                    }
                }
            }
            Op::Remove => cur.retain(|q| !list.contains(q)),
        }
        let r = &mut acct.assocs[a as usize];
        r.qos = cur;
        r.set.qos = true;
        return Ok(());
    }
    if op != Op::Set {
        return Err(format!("{key}: only QOS takes += and -="));
    }
    if k == "defaultqos" {
        let q = qos_list(acct, key, v)?;
        acct.assocs[a as usize].default_qos = q.first().copied();
        return Ok(());
    }
    let snapshot = acct.clone();
    let r = &mut acct.assocs[a as usize];
    let l = &mut r.limits;
    match k.as_str() {
        "description" | "organization" | "cluster" | "adminlevel" | "defaultaccount"
        | "defaultwckey" | "wckeys" | "account" | "accounts" | "names" | "name" | "user"
        | "users" | "parent" | "partition" => {}
        "priority" => {
            r.priority = if v == "-1" { 0 } else { count(key, v)? };
            r.set.priority = true;
        }
        "fairshare" | "shares" => {
            r.shares = if v.eq_ignore_ascii_case("parent") {
                Shares::Parent
            } else {
                match v.parse::<u32>() {
                    Ok(n) => Shares::Raw(n),
                    Err(_) if v == "-1" => Shares::Raw(1),
                    Err(_) => {
                        return Err(format!(
                        "{key}: expected a whole number of at least 0 or \"parent\", got \"{v}\""
                    ))
                    }
                }
            }
        }
        "grptres" => tres_list(&snapshot, key, v, &mut l.grp_tres)?,
        "grptresmins" => tres_list(&snapshot, key, v, &mut l.grp_tres_mins)?,
        "grptresrunmins" => tres_list(&snapshot, key, v, &mut l.grp_tres_run_mins)?,
        "grpcpus" => l.grp_tres[TRES_CPU] = limit64(count(key, v)?),
        "grpnodes" => l.grp_tres[TRES_NODE] = limit64(count(key, v)?),
        "grpjobs" => l.grp_jobs = count(key, v)?,
        "grpsubmitjobs" | "grpsubmit" => l.grp_submit_jobs = count(key, v)?,
        "grpwall" => l.grp_wall = wall(key, v)?,
        "maxtres" | "maxtresperjob" | "maxtrespj" => {
            tres_list(&snapshot, key, v, &mut l.max_tres_pj)?;
            r.set.max_tres_pj = true;
        }
        "maxtrespernode" | "maxtrespn" => {
            tres_list(&snapshot, key, v, &mut l.max_tres_pn)?;
            r.set.max_tres_pn = true;
        }
        "maxtresmins" | "maxtresminsperjob" | "maxtresminspj" => {
            tres_list(&snapshot, key, v, &mut l.max_tres_mins_pj)?;
            r.set.max_tres_mins_pj = true;
        }
        "maxcpus" | "maxcpusperjob" => {
            l.max_tres_pj[TRES_CPU] = limit64(count(key, v)?);
            r.set.max_tres_pj = true;
        }
        "maxnodes" | "maxnodesperjob" => {
            l.max_tres_pj[TRES_NODE] = limit64(count(key, v)?);
            r.set.max_tres_pj = true;
        }
        "maxjobs" => {
            l.max_jobs = count(key, v)?;
            r.set.max_jobs = true;
        }
        "maxsubmitjobs" | "maxsubmit" => {
            l.max_submit_jobs = count(key, v)?;
            r.set.max_submit_jobs = true;
        }
        "maxwall" | "maxwalldurationperjob" => {
            l.max_wall_pj = wall(key, v)?;
            r.set.max_wall_pj = true;
        }
        _ => return Err(format!("unknown account/user field \"{key}\"")),
    }
    Ok(())
}

fn limit64(n: u32) -> u64 {
    if n == u32::MAX {
        NO_LIMIT
    } else {
        u64::from(n)
    }
}

/// Splits a command line into words, keeping quoted values whole.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c.is_whitespace() => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            None => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Applies one sacctmgr command (`add qos inter MaxTRESPerUser=gres/gpu=1`,
/// `add account ml GrpJobs=2`, `add user v1 Account=ml`, `modify user where
/// name=v1 set qos+=inter`). The leading `sacctmgr` and `-i` are optional.
pub fn apply_command(acct: &mut Accounting, line: &str) -> Result<(), String> {
    let mut w: Vec<String> = words(line);
    if w.first().is_some_and(|x| x == "sacctmgr") {
        w.remove(0);
    }
    w.retain(|x| !matches!(x.as_str(), "-i" | "--immediate" | "-Q" | "--quiet"));
    if w.len() < 2 {
        return Err("expected `add|modify qos|account|user NAME [field=value …]`".into());
    }
    let verb = w[0].to_ascii_lowercase();
    let entity = w[1].to_ascii_lowercase();
    let rest = &w[2..];
    match verb.as_str() {
        "add" | "create" => add(acct, &entity, rest),
        "modify" | "update" => modify(acct, &entity, rest),
        other => Err(format!(
            "unsupported sacctmgr command \"{other}\": expected add or modify"
        )),
    }
}

/// `sacctmgr add ENTITY NAME[,NAME…] KEY=VALUE …` with the words after
/// the entity (`qos`, `account`, `user`) already split.
pub fn add(acct: &mut Accounting, entity: &str, rest: &[String]) -> Result<(), String> {
    let mut names: Vec<String> = Vec::new();
    let mut fields: Vec<(String, Op, String)> = Vec::new();
    for t in rest {
        match split_kv(t) {
            Some((k, op, v))
                if k.eq_ignore_ascii_case("name") || k.eq_ignore_ascii_case("names") =>
            {
                let _ = op;
                names.extend(v.split(',').map(str::to_string))
            }
            Some((k, op, v)) => fields.push((k.to_string(), op, v.to_string())),
            None if t.eq_ignore_ascii_case("where") || t.eq_ignore_ascii_case("set") => {}
            None => names.extend(t.split(',').filter(|s| !s.is_empty()).map(str::to_string)),
        }
    }
    if names.is_empty() {
        return Err(format!("add {entity}: expected a name"));
    }
    let field = |k: &str| {
        fields
            .iter()
            .find(|(f, _, _)| f.eq_ignore_ascii_case(k))
            .map(|(_, _, v)| v.clone())
    };
    match entity {
        "qos" => {
            for n in &names {
                let q = match acct.qos_by_name(n) {
                    Some(q) => q,
                    None => {
                        acct.qos.push(gresim_model::accounting::Qos::new(n.clone()));
                        (acct.qos.len() - 1) as QosId
                    }
                };
                for (k, _, v) in &fields {
                    set_qos_field(acct, q, k, v)?;
                }
            }
        }
        "account" | "accounts" => {
            let parent = match field("parent") {
                Some(p) => Some(
                    acct.account(&p)
                        .ok_or_else(|| format!("Parent: unknown account \"{p}\" (add it first)"))?,
                ),
                None => None,
            };
            for n in &names {
                let a = acct.add_account(n, parent);
                for (k, op, v) in &fields {
                    set_assoc_field(acct, a, k, *op, v)?;
                }
            }
        }
        "user" | "users" => {
            let accounts = field("account")
                .or_else(|| field("accounts"))
                .or_else(|| field("defaultaccount"))
                .ok_or("add user: expected Account=NAME")?;
            let partition = field("partition");
            for n in &names {
                let mut first = true;
                for an in accounts.split(',').filter(|s| !s.is_empty()) {
                    let pa = acct.account(an).ok_or_else(|| {
                        format!("Account: unknown account \"{an}\" (add it first)")
                    })?;
                    let a = acct.add_user(n, pa, partition.as_deref());
                    if first {
                        let d = field("defaultaccount").unwrap_or_else(|| an.to_string());
                        acct.default_account.entry(n.clone()).or_insert(d);
                        first = false;
                    }
                    for (k, op, v) in &fields {
                        set_assoc_field(acct, a, k, *op, v)?;
                    }
                }
            }
        }
        "cluster" | "clusters" => {}
        other => return Err(format!("add {other}: expected qos, account or user")),
    }
    Ok(())
}

fn modify(acct: &mut Accounting, entity: &str, rest: &[String]) -> Result<(), String> {
    let set_at = rest
        .iter()
        .position(|t| t.eq_ignore_ascii_case("set"))
        .ok_or_else(|| format!("modify {entity}: expected `set field=value`"))?;
    let mut filter: Vec<(String, String)> = Vec::new();
    for t in &rest[..set_at] {
        match split_kv(t) {
            Some((k, _, v)) => filter.push((k.to_ascii_lowercase(), v.to_string())),
            None if t.eq_ignore_ascii_case("where") => {}
            None => filter.push(("name".into(), t.clone())),
        }
    }
    let mut fields = Vec::new();
    for t in &rest[set_at + 1..] {
        let (k, op, v) = split_kv(t)
            .ok_or_else(|| format!("modify {entity}: expected field=value, got \"{t}\""))?;
        fields.push((k.to_string(), op, v.to_string()));
    }
    let matches = |want: &str, have: &str| want.split(',').any(|w| w.eq_ignore_ascii_case(have));
    match entity {
        "qos" => {
            let names: Vec<&String> = filter
                .iter()
                .filter(|(k, _)| k == "name" || k == "names")
                .map(|(_, v)| v)
                .collect();
            let mut hit = false;
            for q in 0..acct.qos.len() {
                if names.iter().any(|n| matches(n, &acct.qos[q].name)) {
                    hit = true;
                    for (k, _, v) in &fields {
                        set_qos_field(acct, q as QosId, k, v)?;
                    }
                }
            }
            if !hit {
                return Err("modify qos: no QOS matches".into());
            }
        }
        "user" | "users" | "account" | "accounts" => {
            let is_user = entity.starts_with("user");
            let mut targets = Vec::new();
            for (i, a) in acct.assocs.iter().enumerate() {
                if a.user.is_some() != is_user {
                    continue;
                }
                let ok = filter.iter().all(|(k, v)| match k.as_str() {
                    "name" | "names" if is_user => a.user.as_deref().is_some_and(|u| matches(v, u)),
                    "name" | "names" => matches(v, &a.account),
                    "user" | "users" => a.user.as_deref().is_some_and(|u| matches(v, u)),
                    "account" | "accounts" => matches(v, &a.account),
                    "partition" => a.partition.as_deref().is_some_and(|p| matches(v, p)),
                    _ => true,
                });
                if ok {
                    targets.push(i as AssocId);
                }
            }
            if targets.is_empty() {
                return Err(format!("modify {entity}: nothing matches"));
            }
            for t in targets {
                for (k, op, v) in &fields {
                    if k.eq_ignore_ascii_case("defaultaccount") {
                        if let Some(u) = acct.assocs[t as usize].user.clone() {
                            acct.default_account.insert(u, v.clone());
                        }
                        continue;
                    }
                    set_assoc_field(acct, t, k, *op, v)?;
                }
            }
        }
        other => return Err(format!("modify {other}: expected qos, account or user")),
    }
    Ok(())
}

/// Reads the file `sacctmgr dump CLUSTER` writes (`Cluster - 'c':…`,
/// `Parent - 'root'`, `Account - 'ml':GrpJobs=2`, `User - 'v1':…`) into
/// `acct`, whose QOS must already exist. `Err((line, message))`.
pub fn apply_dump(acct: &mut Accounting, text: &str) -> Result<(), (usize, String)> {
    let mut parent: AssocId = 0;
    for (ln, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let lno = ln + 1;
        let (kind, rest) = line
            .split_once(" - ")
            .ok_or((lno, "expected `Kind - 'name':Field=value…`".to_string()))?;
        let parts = split_dump_fields(rest);
        let name = unquote(parts.first().map_or("", |s| s.as_str())).to_string();
        let fields: Vec<(String, String)> = parts[1..]
            .iter()
            .filter_map(|p| {
                p.split_once('=')
                    .map(|(k, v)| (k.to_string(), unquote(v).to_string()))
            })
            .collect();
        let e = |m: String| (lno, m);
        match kind.trim().to_ascii_lowercase().as_str() {
            "cluster" => {
                for (k, v) in &fields {
                    set_assoc_field(acct, 0, k, Op::Set, v).map_err(e)?;
                }
            }
            "parent" => {
                parent = acct
                    .account(&name)
                    .ok_or_else(|| (lno, format!("Parent: unknown account \"{name}\"")))?;
            }
            "account" => {
                let a = acct.add_account(&name, Some(parent));
                for (k, v) in &fields {
                    set_assoc_field(acct, a, k, Op::Set, v).map_err(e)?;
                }
            }
            "user" => {
                let partition = fields
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("partition"))
                    .map(|(_, v)| v.clone());
                let a = acct.add_user(&name, parent, partition.as_deref());
                for (k, v) in &fields {
                    if k.eq_ignore_ascii_case("defaultaccount") {
                        acct.default_account.insert(name.clone(), v.clone());
                        continue;
                    }
                    set_assoc_field(acct, a, k, Op::Set, v).map_err(e)?;
                }
            }
            other => {
                return Err((
                    lno,
                    format!(
                    "unknown dump line kind \"{other}\": expected Cluster, Parent, Account or User"
                ),
                ))
            }
        }
    }
    Ok(())
}

/// `'name':A=1:B='x:y'` → [`'name'`, `A=1`, `B='x:y'`], splitting on colons outside quotes.
fn split_dump_fields(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut q = false;
    for c in s.chars() {
        match c {
            '\'' => {
                q = !q;
                cur.push(c)
            }
            ':' if !q => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests;
