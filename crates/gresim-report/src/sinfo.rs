//! `sim sinfo RUN_DIR --at T`: one line per node, as `sinfo -N -o "%N %P
//! %C %G %T"` plus the GRES in use (`sinfo -O GresUsed`), in aligned columns.
//!
//! * STATE follows Slurm: `down` and `drained`/`draining` from the admin
//!   actions (a drained node still running jobs is `draining`); else
//!   `idle` (no CPU allocated), `allocated` (every CPU allocated) or `mixed`;
//!   an idle node in an advance reservation in force is `maint` (a `MAINT`
//!   one) or `reserved`.
//!   States are lower case, as sinfo's `%T` prints them.
//! * GRES: configured devices per type, `gpu:a100:4(S:0-1)` (the sockets
//!   when every device has one); GRES_USED: `gpu:a100:2(IDX:0-1)`, or
//!   `gpu:a100:0(IDX:N/A)`; `(null)` for a node without GPUs.
//! * CPUS(A/I/O/T): allocated, idle, other (on down or drained nodes), total.

use std::collections::BTreeMap;

use crate::run_file::{ranges, RunFile};

/// One node's line, before alignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    pub name: String,
    pub partitions: String,
    pub cpus: String,
    pub gres: String,
    pub gres_used: String,
    pub state: String,
    /// Allocated CPUs and GPU indices (for metrics).
    pub alloc_cpus: u32,
    pub used_gpus: Vec<u8>,
}

/// `maint` or `reserved` for a node that an advance reservation holds at
/// `t` (`MAINT` wins), else `None`.
fn resv_state(rf: &RunFile, node: &str, t: u64) -> Option<&'static str> {
    let mut st = None;
    for r in rf.reservations.iter().filter(|r| r.active_at(t)) {
        let holds = gresim_model::hostlist::expand(&r.nodes)
            .map(|v| v.iter().any(|n| n == node))
            .unwrap_or(false);
        if holds {
            if r.flags.iter().any(|f| f == "MAINT") {
                return Some("maint");
            }
            st = Some("reserved");
        }
    }
    st
}

/// The state of every node at `t`, in node order.
pub fn node_rows(rf: &RunFile, t: u64) -> Vec<NodeRow> {
    let idx = rf.node_index();
    let n = rf.cluster.nodes.len();
    let mut cpus = vec![0u32; n];
    let mut jobs = vec![0u32; n];
    let mut gpus: Vec<Vec<u8>> = vec![Vec::new(); n];
    for j in &rf.jobs {
        for r in j.runs.iter().filter(|r| r.active_at(t)) {
            for na in &r.nodes {
                if let Some(&i) = idx.get(na.node.as_str()) {
                    cpus[i] += na.cpus;
                    jobs[i] += 1;
                    gpus[i].extend(&na.gpus);
                }
            }
        }
    }
    let admin = rf.admin_at(t);
    let dflt = rf
        .cluster
        .partitions
        .iter()
        .find(|p| p.default)
        .map(|p| p.name.as_str());
    rf.cluster
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let total = node.cpus();
            let alloc = cpus[i].min(total);
            let state = match admin[i].as_str() {
                "DOWN" => "down",
                "DRAIN" if jobs[i] > 0 => "draining",
                "DRAIN" => "drained",
                // An idle node in a reservation then (sinfo's `%T`).
                _ if alloc == 0 && jobs[i] == 0 => resv_state(rf, &node.name, t).unwrap_or("idle"),
                _ if alloc >= total => "allocated",
                _ => "mixed",
            };
            let other = if admin[i] == "UP" { 0 } else { total - alloc };
            let idle = total - alloc - other;
            let parts: Vec<String> = rf
                .cluster
                .partitions
                .iter()
                .filter(|p| p.nodes.contains(&node.name))
                .map(|p| {
                    if Some(p.name.as_str()) == dflt {
                        format!("{}*", p.name)
                    } else {
                        p.name.clone()
                    }
                })
                .collect();
            // Devices per type, in first-seen order.
            let mut types: Vec<&str> = Vec::new();
            for g in &node.gpus {
                if !types.contains(&g.ty.as_str()) {
                    types.push(&g.ty);
                }
            }
            let mut used = gpus[i].clone();
            used.sort_unstable();
            used.dedup();
            let (gres, gres_used) = if node.gpus.is_empty() {
                ("(null)".to_string(), "(null)".to_string())
            } else {
                let mut g = Vec::new();
                let mut u = Vec::new();
                for ty in &types {
                    let devs: Vec<(usize, Option<u16>)> = node
                        .gpus
                        .iter()
                        .enumerate()
                        .filter(|(_, d)| d.ty == *ty)
                        .map(|(k, d)| (k, d.socket))
                        .collect();
                    let sockets: Option<Vec<u16>> = devs.iter().map(|d| d.1).collect();
                    let mut s = format!("gpu:{ty}:{}", devs.len());
                    if let Some(mut so) = sockets {
                        so.sort_unstable();
                        so.dedup();
                        s.push_str(&format!("(S:{})", ranges(so.iter().map(|&x| u32::from(x)))));
                    }
                    g.push(s);
                    let ui: Vec<u32> = devs
                        .iter()
                        .filter(|d| used.contains(&(d.0 as u8)))
                        .map(|d| d.0 as u32)
                        .collect();
                    u.push(if ui.is_empty() {
                        format!("gpu:{ty}:0(IDX:N/A)")
                    } else {
                        format!("gpu:{ty}:{}(IDX:{})", ui.len(), ranges(ui.iter().copied()))
                    });
                }
                (g.join(","), u.join(","))
            };
            NodeRow {
                name: node.name.clone(),
                partitions: parts.join(","),
                cpus: format!("{alloc}/{idle}/{other}/{total}"),
                gres,
                gres_used,
                state: state.to_string(),
                alloc_cpus: alloc,
                used_gpus: used,
            }
        })
        .collect()
}

/// The sinfo text at `t`: a header and one aligned line per node.
pub fn sinfo(rf: &RunFile, t: u64, no_header: bool) -> String {
    let mut table: Vec<[String; 6]> = Vec::new();
    if !no_header {
        table.push(
            [
                "NODELIST",
                "PARTITION",
                "CPUS(A/I/O/T)",
                "GRES",
                "GRES_USED",
                "STATE",
            ]
            .map(String::from),
        );
    }
    for r in node_rows(rf, t) {
        table.push([r.name, r.partitions, r.cpus, r.gres, r.gres_used, r.state]);
    }
    align(&table)
}

/// Left-justified columns separated by one space; the last column unpadded.
pub fn align<const N: usize>(table: &[[String; N]]) -> String {
    let mut w = [0usize; N];
    for row in table {
        for (k, c) in row.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in table {
        for (k, c) in row.iter().enumerate() {
            if k + 1 == N {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:<width$} ", width = w[k]));
            }
        }
        out.push('\n');
    }
    out
}

/// Node counts per state at `t` (for metrics and charts).
pub fn state_counts(rf: &RunFile, t: u64) -> BTreeMap<String, u32> {
    let mut m = BTreeMap::new();
    for r in node_rows(rf, t) {
        *m.entry(r.state).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests;
