//! Advance reservations in scenario files and `scontrol` commands
//! (docs/reservations.md).
//!
//! One shape, [`ResvDef`], serves the scenario's `reservations`, the
//! `create_reservation` / `update_reservation` / `delete_reservation`
//! events, and the `scontrol create|update|delete reservation` commands
//! of the conformance cases, which [`parse_scontrol`] turns into it.
//! Errors name the JSON path (or the command) and what was expected.

use std::path::Path;
use std::sync::Arc;

use gresim_engine::{Action, ResvChange, ResvRequest};
use gresim_model::job::Time;
use gresim_model::reservation::{Reservation, Reservations, ResvFlags};
use gresim_model::{hostlist, Cluster, NodeId};
use serde::Deserialize;

use crate::error::InputError;
use crate::spec::{EventDef, NumOrStr};

/// A reservation as a scenario spells it (`scontrol create reservation`'s
/// keys in snake case).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResvDef {
    /// `ReservationName=`.
    pub name: String,
    /// `Nodes=`: a hostlist, or `ALL`.
    #[serde(default)]
    pub nodes: Option<String>,
    /// `NodeCnt=`: nodes picked at creation (the first free ones, in node order).
    #[serde(default)]
    pub node_count: Option<u32>,
    /// `PartitionName=`: where `node_count` picks from.
    #[serde(default)]
    pub partition: Option<String>,
    /// `Users=`: comma-separated.
    #[serde(default)]
    pub users: Option<String>,
    /// `Accounts=`: comma-separated.
    #[serde(default)]
    pub accounts: Option<String>,
    /// `StartTime=`, seconds from the start of the run (default: now: 0 for
    /// the scenario's reservations, the event's time for an event).
    #[serde(default)]
    pub start: Option<Time>,
    /// `Duration=`, in `--time` syntax (a bare number is minutes), or
    /// `UNLIMITED`.
    #[serde(default)]
    pub duration: Option<NumOrStr>,
    /// `EndTime=`, seconds from the start of the run.
    #[serde(default)]
    pub end: Option<Time>,
    /// `Flags=`: MAINT, IGNORE_JOBS, FLEX, OVERLAP, DAILY, WEEKLY, PURGE_COMP[=time].
    #[serde(default)]
    pub flags: Option<String>,
}

/// A year: what an UNLIMITED reservation lasts (Slurm's `YEAR_SECONDS`).
const YEAR: Time = 365 * 86_400;

fn list(s: Option<&str>) -> Vec<Arc<str>> {
    s.map(|s| {
        s.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(Arc::from)
            .collect()
    })
    .unwrap_or_default()
}

fn nodes_of(cluster: &Cluster, h: &str) -> Result<Vec<NodeId>, String> {
    if h.eq_ignore_ascii_case("ALL") {
        return Ok((0..cluster.nodes.len()).map(NodeId::from_idx).collect());
    }
    let names = hostlist::expand(h).map_err(|e| format!("bad hostlist '{h}': {e}"))?;
    let mut v: Vec<NodeId> = names
        .iter()
        .map(|n| {
            cluster
                .node_id(n)
                .ok_or_else(|| format!("node '{n}' is not in the cluster"))
        })
        .collect::<Result<_, _>>()?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

fn duration_of(d: &NumOrStr) -> Result<Time, String> {
    let s = d.as_string();
    gresim_model::slurm_time::parse_time_limit(&s)
        .map(|x| x.unwrap_or(YEAR))
        .map_err(|e| format!("bad duration '{s}': {e}"))
}

/// Error with the field's path under `path`.
fn at(file: &Path, path: &str, field: &str, msg: String) -> InputError {
    InputError::at(file, format!("{path}.{field}"), msg)
}

/// A reservation to create, at time `now` (its default start).
pub fn build_request(
    file: &Path,
    path: &str,
    d: &ResvDef,
    now: Time,
    cluster: &Cluster,
) -> Result<ResvRequest, InputError> {
    if d.name.is_empty() {
        return Err(at(file, path, "name", "expected a reservation name".into()));
    }
    let nodes = match (&d.nodes, d.node_count) {
        (Some(h), None) => nodes_of(cluster, h).map_err(|m| at(file, path, "nodes", m))?,
        (None, Some(c)) if c > 0 => Vec::new(),
        _ => {
            return Err(at(
                file,
                path,
                "nodes",
                "expected either nodes (a hostlist) or node_count (at least 1)".into(),
            ))
        }
    };
    let partition = d
        .partition
        .as_deref()
        .map(|p| {
            cluster
                .partition_id(p)
                .ok_or_else(|| at(file, path, "partition", format!("no partition '{p}'")))
        })
        .transpose()?;
    let (flags, purge_after) = ResvFlags::parse(d.flags.as_deref().unwrap_or(""))
        .map_err(|m| at(file, path, "flags", m))?;
    let users = list(d.users.as_deref());
    let accounts = list(d.accounts.as_deref());
    if users.is_empty() && accounts.is_empty() {
        return Err(at(
            file,
            path,
            "users",
            "expected users or accounts (Slurm refuses a reservation for nobody)".into(),
        ));
    }
    let start = d.start.unwrap_or(now);
    let end = match (&d.duration, d.end) {
        (Some(x), None) => {
            start.saturating_add(duration_of(x).map_err(|m| at(file, path, "duration", m))?)
        }
        (None, Some(e)) if e > start => e,
        (None, Some(_)) => {
            return Err(at(
                file,
                path,
                "end",
                "expected an end after the start".into(),
            ))
        }
        _ => {
            return Err(at(
                file,
                path,
                "duration",
                "expected either duration or end".into(),
            ))
        }
    };
    Ok(ResvRequest {
        resv: Reservation {
            name: Arc::from(d.name.as_str()),
            nodes,
            users,
            accounts,
            start,
            end,
            flags,
            purge_after,
            by_count: d.node_count.is_some(),
            partition,
        },
        node_cnt: d.node_count,
        partition,
    })
}

/// Whether `words` (a command line) is `scontrol` on a reservation.
pub fn is_resv_cmd(words: &[&str]) -> bool {
    let resv_kv = |w: &&str| {
        w.split_once('=')
            .is_some_and(|(k, _)| k.eq_ignore_ascii_case("reservationname"))
    };
    match words {
        ["scontrol", "create" | "show", r, ..] => r.eq_ignore_ascii_case("reservation"),
        ["scontrol", "update" | "delete", kv, ..] => resv_kv(kv),
        _ => false,
    }
}

/// What `scontrol` itself refuses in `scontrol create|update reservation`
/// before asking slurmctld, as 22.05's `state_control_parse_resv_tres()`
/// does: a `TRES=` of any type but `license/`, `bb/`, `cpu` and `node`
/// (`gres/gpu` among them: 22.05 reserves no GRES). The command fails and
/// nothing changes; `None` for any other command.
pub fn scontrol_refusal(words: &[&str]) -> Option<String> {
    if !is_resv_cmd(words) {
        return None;
    }
    words.iter().find_map(|w| {
        let (k, v) = w.split_once('=')?;
        if !k.eq_ignore_ascii_case("tres") {
            return None;
        }
        v.split(',').find_map(|item| {
            let ty = item.split_once('=').map_or(item, |(t, _)| t);
            let base = ty.split_once('/').map_or(ty, |(b, _)| b);
            let known = ["license", "bb", "cpu", "node"]
                .iter()
                .any(|t| base.eq_ignore_ascii_case(t));
            // The values after `cpu=` may go on as bare numbers (`cpu=2,4`).
            let more_cpus = !item.contains('=') && item.bytes().all(|b| b.is_ascii_digit());
            (!known && !more_cpus)
                .then(|| format!("TRES type '{ty}' not supported with reservations"))
        })
    })
}

/// The node count of a reservation's `TRES=` (`node=N`, with `k`/`m`
/// multiples, as `parse_resv_nodecnt()` reads it); every other type is an
/// error: GRES are refused by 22.05 itself ([`scontrol_refusal`]), cores,
/// licenses and burst buffers are not modelled.
fn tres_node_count(v: &str) -> Result<u32, String> {
    let mut count = None;
    for item in v.split(',') {
        let Some((ty, val)) = item.split_once('=') else {
            return Err(format!("TRES={v}: '{item}': expected type=value"));
        };
        let base = ty.split_once('/').map_or(ty, |(b, _)| b);
        if base.eq_ignore_ascii_case("node") {
            let (num, mult) = match val.as_bytes().last() {
                Some(b'k' | b'K') => (&val[..val.len() - 1], 1024),
                Some(b'm' | b'M') => (&val[..val.len() - 1], 1024 * 1024),
                _ => (val, 1),
            };
            let n = num
                .parse::<u32>()
                .ok()
                .and_then(|n| n.checked_mul(mult))
                .filter(|_| count.is_none())
                .ok_or_else(|| format!("Invalid TRES node count {val} (expected one count)"))?;
            count = Some(n);
        } else if ["cpu", "license", "bb"]
            .iter()
            .any(|t| base.eq_ignore_ascii_case(t))
        {
            return Err(format!(
                "TRES={v}: '{ty}' in a reservation is not modelled (gresim reserves whole nodes)"
            ));
        } else {
            return Err(format!(
                "TRES={v}: TRES type '{ty}' not supported with reservations (Slurm 22.05 \
                 reserves no GRES; reserve whole nodes with Nodes= or NodeCnt=)"
            ));
        }
    }
    count.ok_or_else(|| format!("TRES={v}: expected node=N"))
}

/// Adds a reservation in force from the start (the scenario's, or a case's
/// setup command): a `node_count` takes the first nodes (of its partition)
/// that no earlier one holds then; one that overlaps another without
/// `OVERLAP` or `MAINT` is refused, as Slurm's `_resv_overlap()` refuses it.
pub fn add_initial(
    all: &mut Reservations,
    req: ResvRequest,
    cluster: &Cluster,
) -> Result<(), String> {
    let ResvRequest {
        mut resv,
        node_cnt,
        partition,
    } = req;
    if all.get(&resv.name).is_some() {
        return Err(format!("a second reservation '{}'", resv.name));
    }
    if resv.flags.has(ResvFlags::REPLACE) && !resv.by_count {
        return Err(format!(
            "reservation '{}': REPLACE needs node_count, not nodes (Slurm's create_resv() refuses \
             REPLACE with Nodes=: Invalid node name specified)",
            resv.name
        ));
    }
    if let Some(c) = node_cnt {
        resv.nodes = (0..cluster.nodes.len())
            .map(NodeId::from_idx)
            .filter(|&n| partition.is_none_or(|p| cluster.in_partition(p, n)))
            .filter(|&n| {
                !all.list.iter().any(|x| {
                    x.holds(n) && !x.flags.has(ResvFlags::OVERLAP) && x.time_overlap(&resv, 0)
                })
            })
            .take(c as usize)
            .collect();
        if resv.nodes.len() < c as usize {
            return Err(format!(
                "node count {c}: only {} nodes are free for it",
                resv.nodes.len()
            ));
        }
    }
    if let Some(other) = all.conflict(&resv, None, 0) {
        return Err(format!(
            "reservation '{}' overlaps reservation '{other}' in nodes and time; expected \
             Flags=OVERLAP (or MAINT) on one of them, as Slurm refuses it otherwise",
            resv.name
        ));
    }
    all.list.push(resv);
    Ok(())
}

/// The scenario's `reservations` (see [`add_initial`]).
pub fn build_reservations(
    file: &Path,
    defs: &[ResvDef],
    cluster: &Cluster,
) -> Result<Reservations, InputError> {
    let mut all = Reservations::default();
    for (i, d) in defs.iter().enumerate() {
        let path = format!("reservations[{i}]");
        let req = build_request(file, &path, d, 0, cluster)?;
        let field = if req.node_cnt.is_some() {
            "node_count"
        } else {
            "nodes"
        };
        add_initial(&mut all, req, cluster).map_err(|m| at(file, &path, field, m))?;
    }
    Ok(all)
}

/// A `create_reservation` / `update_reservation` / `delete_reservation` event.
pub fn event_action(
    file: &Path,
    path: &str,
    e: &EventDef,
    cluster: &Cluster,
) -> Result<Action, InputError> {
    let d = e.reservation.as_ref().ok_or_else(|| {
        at(
            file,
            path,
            "reservation",
            format!("action '{}' needs reservation", e.action),
        )
    })?;
    let rp = format!("{path}.reservation");
    match e.action.as_str() {
        "create_reservation" => Ok(Action::ResvCreate(Box::new(build_request(
            file, &rp, d, e.at, cluster,
        )?))),
        "update_reservation" => Ok(Action::ResvUpdate(Box::new(
            change_of(d, cluster).map_err(|(f, m)| at(file, &rp, f, m))?,
        ))),
        _ => Ok(Action::ResvDelete(Arc::from(d.name.as_str()))),
    }
}

/// What an update changes: the fields given.
fn change_of(d: &ResvDef, cluster: &Cluster) -> Result<ResvChange, (&'static str, String)> {
    Ok(ResvChange {
        name: Arc::from(d.name.as_str()),
        start: d.start,
        end: d.end,
        duration: d
            .duration
            .as_ref()
            .map(duration_of)
            .transpose()
            .map_err(|m| ("duration", m))?,
        nodes: d
            .nodes
            .as_deref()
            .map(|h| nodes_of(cluster, h))
            .transpose()
            .map_err(|m| ("nodes", m))?,
        users: d.users.as_deref().map(|u| list(Some(u))),
        accounts: d.accounts.as_deref().map(|a| list(Some(a))),
        flags: d
            .flags
            .as_deref()
            .map(ResvFlags::parse)
            .transpose()
            .map_err(|m| ("flags", m))?,
    })
}

/// `StartTime=` as scontrol reads it, at `now`: `now[+N[units]]`, or
/// seconds (gresim's time) as a plain number. Every recording shows the
/// reservation's `now` one second before the command's own second
/// (`StartTime=now+90` issued at t0 starts at t0 + 89; docs/reservations.md),
/// so the `now` forms are taken one second earlier.
fn start_time(v: &str, now: Time) -> Result<Time, String> {
    let l = v.to_ascii_lowercase();
    let Some(rest) = l.strip_prefix("now") else {
        return v
            .parse()
            .map_err(|_| format!("StartTime '{v}': expected now[+N[seconds|minutes|hours|days]]"));
    };
    if rest.is_empty() {
        return Ok(now.saturating_sub(1));
    }
    let r = rest
        .strip_prefix('+')
        .ok_or_else(|| format!("StartTime '{v}': expected now+N"))?;
    let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
    let n: Time = digits
        .parse()
        .map_err(|_| format!("StartTime '{v}': expected now+N"))?;
    let unit = match &r[digits.len()..] {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 7 * 86_400,
        u => return Err(format!("StartTime '{v}': unknown unit '{u}'")),
    };
    Ok(now.saturating_add(n.saturating_mul(unit)).saturating_sub(1))
}

/// `scontrol create reservation K=V ...`, `scontrol update
/// ReservationName=N K=V ...` and `scontrol delete ReservationName=N`
/// (the words after `scontrol`), issued at `now`, as an engine action.
/// `Ok(None)` for `scontrol show reservation`, which changes nothing.
pub fn parse_scontrol(
    words: &[&str],
    now: Time,
    cluster: &Cluster,
) -> Result<Option<Action>, String> {
    let (verb, kvs) = match words {
        ["show", r, ..] | ["show", r] if r.eq_ignore_ascii_case("reservation") => return Ok(None),
        ["create", r, rest @ ..] if r.eq_ignore_ascii_case("reservation") => ("create", rest),
        ["update", rest @ ..] => ("update", rest),
        ["delete", rest @ ..] => ("delete", rest),
        _ => return Err("expected scontrol create|update|delete|show reservation".into()),
    };
    let mut d = ResvDef::default();
    let mut start_raw = None;
    for w in kvs {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| format!("'{w}': expected Key=Value"))?;
        match k.to_ascii_lowercase().as_str() {
            "reservationname" | "reservation" => d.name = v.to_string(),
            "nodes" | "nodelist" => d.nodes = Some(v.to_string()),
            "nodecnt" | "nodecount" => {
                d.node_count = Some(
                    v.parse()
                        .map_err(|_| format!("NodeCnt '{v}': expected a number"))?,
                )
            }
            "partitionname" | "partition" => d.partition = Some(v.to_string()),
            "users" | "user" => d.users = Some(v.to_string()),
            "accounts" | "account" => d.accounts = Some(v.to_string()),
            "starttime" => start_raw = Some(v.to_string()),
            "duration" => d.duration = Some(NumOrStr::Str(v.to_string())),
            "endtime" => d.end = Some(start_time(v, now)?),
            "flags" => d.flags = Some(v.to_string()),
            "tres" => d.node_count = Some(tres_node_count(v)?),
            "corecnt" | "cpucnt" => {
                return Err(format!(
                    "{k}={v}: reservations of cores are not modelled (gresim reserves whole \
                     nodes); use Nodes= or NodeCnt="
                ))
            }
            other => {
                return Err(format!(
                    "unsupported reservation key '{other}'; expected ReservationName, Nodes, \
                     NodeCnt, PartitionName, Users, Accounts, StartTime, Duration, EndTime, \
                     Flags or TRES"
                ))
            }
        }
    }
    if let Some(s) = start_raw {
        d.start = Some(start_time(&s, now)?);
    }
    if d.name.is_empty() {
        return Err("expected ReservationName=".into());
    }
    let file = Path::new("");
    match verb {
        "create" => build_request(file, "reservation", &d, now, cluster)
            .map(|r| Some(Action::ResvCreate(Box::new(r))))
            .map_err(|e| e.msg),
        "update" => change_of(&d, cluster)
            .map(|c| Some(Action::ResvUpdate(Box::new(c))))
            .map_err(|(_, m)| m),
        _ => Ok(Some(Action::ResvDelete(Arc::from(d.name.as_str())))),
    }
}
