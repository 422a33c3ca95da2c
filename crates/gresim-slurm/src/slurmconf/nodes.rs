//! slurm.conf's `NodeName=` lines: the fields as written, DEFAULT merging,
//! Slurm's inference of boards, sockets, cores and CPUs, and `Gres=`.

use gresim_model::cluster::{NodeAdminState, MAX_CORES_PER_NODE};
use gresim_model::hostlist;
use gresim_model::units::parse_count;

use super::keys::{QUIET_NODE_KEYS, UNMODELLED_NODE_KEYS};
use super::{line_err, num, GresSpec, NodeConf};
use crate::conf_lines::{ConfLine, Warning};
use crate::error::InputError;

/// Node fields as written (before DEFAULT merging and inference).
#[derive(Debug, Clone, Default)]
pub(super) struct NodeRaw {
    cpus: Option<u32>,
    boards: Option<u16>,
    sockets: Option<u16>,
    sockets_per_board: Option<u16>,
    cores_per_socket: Option<u16>,
    threads_per_core: Option<u16>,
    real_memory: Option<u64>,
    gres: Option<Vec<GresSpec>>,
    weight: Option<u32>,
    features: Option<Vec<String>>,
    state: Option<String>,
}

impl NodeRaw {
    pub(super) fn or(self, d: &NodeRaw) -> NodeRaw {
        NodeRaw {
            cpus: self.cpus.or(d.cpus),
            boards: self.boards.or(d.boards),
            sockets: self.sockets.or(d.sockets),
            sockets_per_board: self.sockets_per_board.or(d.sockets_per_board),
            cores_per_socket: self.cores_per_socket.or(d.cores_per_socket),
            threads_per_core: self.threads_per_core.or(d.threads_per_core),
            real_memory: self.real_memory.or(d.real_memory),
            gres: self.gres.or_else(|| d.gres.clone()),
            weight: self.weight.or(d.weight),
            features: self.features.or_else(|| d.features.clone()),
            state: self.state.or_else(|| d.state.clone()),
        }
    }
}

pub(super) fn node_fields(
    l: &ConfLine,
    ws: &[(String, String)],
    w: &mut Vec<Warning>,
) -> Result<NodeRaw, InputError> {
    let mut r = NodeRaw::default();
    for (k, v) in ws {
        match k.to_ascii_lowercase().as_str() {
            "cpus" | "procs" => r.cpus = Some(num(l, k, v)?),
            "boards" => r.boards = Some(num(l, k, v)?),
            "sockets" => r.sockets = Some(num(l, k, v)?),
            "socketsperboard" => r.sockets_per_board = Some(num(l, k, v)?),
            "corespersocket" => r.cores_per_socket = Some(num(l, k, v)?),
            "threadspercore" => r.threads_per_core = Some(num(l, k, v)?),
            "realmemory" => r.real_memory = Some(num(l, k, v)?),
            "gres" => {
                r.gres =
                    Some(parse_node_gres(v).map_err(|e| line_err(l, &format!("Gres={v}: {e}")))?)
            }
            "weight" => {
                let x: u64 = if v.eq_ignore_ascii_case("INFINITE") {
                    u64::from(u32::MAX)
                } else {
                    num(l, k, v)?
                };
                // Slurm keeps INFINITE - 1 as the largest weight.
                r.weight = Some(u32::try_from(x).unwrap_or(u32::MAX).min(u32::MAX - 1));
            }
            "feature" | "features" => {
                r.features = Some(
                    v.split(',')
                        .map(|s| s.trim().to_string())
                        .filter(|s| !s.is_empty())
                        .collect(),
                )
            }
            "state" => r.state = Some(v.to_ascii_uppercase()),
            o if QUIET_NODE_KEYS.contains(&o) => {}
            o if UNMODELLED_NODE_KEYS.contains(&o) => w.push(Warning::new(
                &l.file,
                l.line,
                format!("node setting {k}={v} is not modelled (ignored)"),
            )),
            _ => w.push(Warning::new(
                &l.file,
                l.line,
                format!("unknown node key '{k}' (ignored)"),
            )),
        }
    }
    Ok(r)
}

/// Parses a node's `Gres=`: `gpu:a100:4,gpu:a100_1g.10gb:2`, `gpu:2`, `nic:1`.
pub fn parse_node_gres(v: &str) -> Result<Vec<GresSpec>, String> {
    let mut out = Vec::new();
    // Split at commas outside parentheses (`gpu:a100:4(S:0-1)`).
    let mut items = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for c in v.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c)
            }
            ')' => {
                depth -= 1;
                cur.push(c)
            }
            ',' if depth <= 0 => items.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    items.push(cur);
    for item in items {
        let item = item.trim();
        if item.is_empty() || item.eq_ignore_ascii_case("(null)") {
            continue;
        }
        let item = item.split('(').next().unwrap_or(item);
        let mut parts: Vec<&str> = item
            .split(':')
            .filter(|p| !p.eq_ignore_ascii_case("no_consume"))
            .collect();
        let name = parts.remove(0).trim();
        if name.is_empty() {
            return Err(format!("'{item}' has no GRES name"));
        }
        let (ty, count) = match parts.as_slice() {
            [] => (None, 1),
            [c] if c.starts_with(|ch: char| ch.is_ascii_digit()) => {
                (None, parse_count(c).map_err(|e| e.to_string())?)
            }
            [t] => (Some(*t), 1),
            [t, c] => (Some(*t), parse_count(c).map_err(|e| e.to_string())?),
            _ => return Err(format!("'{item}': expected name[:type]:count")),
        };
        if ty.is_some_and(str::is_empty) {
            return Err(format!("'{item}' has an empty type"));
        }
        out.push(GresSpec {
            name: name.to_string(),
            ty: ty.map(str::to_string),
            count,
        });
    }
    Ok(out)
}

pub(super) fn resolve_node(
    l: &ConfLine,
    expr: &str,
    r: NodeRaw,
    w: &mut Vec<Warning>,
) -> Result<NodeConf, InputError> {
    let names = hostlist::expand(expr)
        .map_err(|e| line_err(l, &format!("NodeName={expr}: bad hostlist: {e}")))?;
    if names.is_empty() {
        return Err(line_err(l, "NodeName= names no node"));
    }
    let mut warn = |m: String| w.push(Warning::new(&l.file, l.line, m));
    let fix = |x: Option<u16>, what: &str, warn: &mut dyn FnMut(String)| -> u16 {
        match x {
            Some(0) => {
                warn(format!("{what}=0 is invalid; reset to 1 as Slurm does"));
                1
            }
            Some(v) => v,
            None => 1,
        }
    };
    let cores = fix(r.cores_per_socket, "CoresPerSocket", &mut warn);
    let mut threads = fix(r.threads_per_core, "ThreadsPerCore", &mut warn);
    let mut boards = fix(r.boards, "Boards", &mut warn);
    let spb = r
        .sockets_per_board
        .map(|s| fix(Some(s), "SocketsPerBoard", &mut warn));
    let mut sockets = match (r.sockets, spb) {
        (Some(_), Some(s)) => {
            warn(
                "Sockets and SocketsPerBoard are mutually exclusive; using SocketsPerBoard".into(),
            );
            u32::from(boards) * u32::from(s)
        }
        (None, Some(s)) => u32::from(boards) * u32::from(s),
        (Some(s), None) => u32::from(fix(Some(s), "Sockets", &mut warn)),
        (None, None) => {
            let ct = u32::from(cores) * u32::from(threads);
            match r.cpus {
                Some(c) if c >= ct && c % ct == 0 => c / ct,
                _ => u32::from(boards),
            }
        }
    };
    if sockets == 0 {
        sockets = 1;
    }
    if sockets < u32::from(boards) {
        warn(format!(
            "Sockets ({sockets}) < Boards ({boards}); Boards reset to 1 as Slurm does"
        ));
        boards = 1;
    }
    let full = sockets * u32::from(cores) * u32::from(threads);
    let mut cpus = match r.cpus {
        Some(0) => {
            warn("CPUs=0 is invalid; reset as Slurm does".into());
            full
        }
        Some(c) => c,
        None => full,
    };
    if cpus != sockets && cpus != sockets * u32::from(cores) && cpus != full {
        warn(format!(
            "CPUs={cpus} matches neither Sockets, Sockets*CoresPerSocket nor Sockets*CoresPerSocket*ThreadsPerCore; reset to {full} as Slurm does"
        ));
        cpus = full;
    }
    if cpus != full && threads > 1 && cpus == sockets * u32::from(cores) {
        // Slurm then allocates whole cores as CPUs.
        warn(format!(
            "CPUs={cpus} counts cores, not hardware threads: gresim models {cpus} CPUs (ThreadsPerCore=1)"
        ));
        threads = 1;
    } else if cpus != full {
        warn(format!(
            "CPUs={cpus} is fewer than the node's {full} hardware threads; gresim models {full}"
        ));
        cpus = full;
    }
    let total_cores = sockets as usize * usize::from(cores);
    if total_cores > MAX_CORES_PER_NODE {
        return Err(line_err(
            l,
            &format!("{total_cores} cores per node; at most {MAX_CORES_PER_NODE} are supported"),
        ));
    }
    let memory_mib = match r.real_memory {
        Some(m) => m,
        None => {
            warn("RealMemory is not set: Slurm's default is 1 MB, so jobs asking for memory will not fit".into());
            1
        }
    };
    // slurm.conf's own words first, then the common ones (`NodeAdminState::from_str`).
    let state = match r.state.as_deref() {
        None | Some("UNKNOWN") => NodeAdminState::Up,
        Some("FAIL") => NodeAdminState::Down,
        Some("FAILING") => NodeAdminState::Drain,
        Some(w) => match (w.parse::<NodeAdminState>(), w) {
            (Ok(st), _) => st,
            (_, "CLOUD") => {
                warn("State=CLOUD: power saving is not modelled; the nodes are up".into());
                NodeAdminState::Up
            }
            (_, "FUTURE") => {
                warn("State=FUTURE: the nodes are modelled as DOWN".into());
                NodeAdminState::Down
            }
            (_, o) => {
                return Err(line_err(
                    l,
                    &format!(
                    "State={o}: expected UNKNOWN, IDLE, DOWN, DRAIN, FAIL, FAILING, FUTURE or CLOUD"
                ),
                ))
            }
        },
    };
    for g in r.gres.iter().flatten() {
        if !g.name.eq_ignore_ascii_case("gpu")
            && gresim_model::shares::ShareKind::from_name(&g.name).is_none()
        {
            warn(format!(
                "GRES '{}' is not modelled (gpu, shard and mps are); ignored",
                g.name
            ));
        }
    }
    Ok(NodeConf {
        file: l.file.clone(),
        line: l.line,
        names,
        boards,
        sockets: u16::try_from(sockets).unwrap_or(u16::MAX),
        cores_per_socket: cores,
        threads_per_core: threads,
        cpus,
        memory_mib,
        gres: r.gres.unwrap_or_default(),
        weight: r.weight.unwrap_or(1),
        features: r.features.unwrap_or_default(),
        state,
    })
}
