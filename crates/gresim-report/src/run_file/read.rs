//! Reading run.json back: parsing, the checks that a file is whole and
//! consistent, and the lookups the views share.

use std::collections::BTreeMap;
use std::path::Path;

use gresim_model::NodeAdminState;

use super::*;

impl RunFile {
    /// Parses and checks run.json text.
    pub fn parse(text: &str) -> Result<RunFile, String> {
        let rf: RunFile =
            serde_json::from_str(text).map_err(|e| format!("not a gresim run file: {e}"))?;
        if rf.format != RUN_FORMAT {
            return Err(format!("not a gresim run file (format '{}')", rf.format));
        }
        if rf.version != RUN_VERSION {
            return Err(format!(
                "run file version {} is not supported; this gresim reads version {RUN_VERSION}",
                rf.version
            ));
        }
        rf.check()?;
        Ok(rf)
    }

    /// Reads `DIR/run.json`; the error names the file and what is wrong.
    pub fn load(dir: &Path) -> Result<RunFile, String> {
        let p = if dir.is_file() {
            dir.to_path_buf()
        } else {
            dir.join(RUN_FILE)
        };
        let text = std::fs::read_to_string(&p).map_err(|e| {
            format!(
                "{}: cannot read the run ({e}); run `sim run SCENARIO --out DIR` first",
                p.display()
            )
        })?;
        RunFile::parse(&text).map_err(|e| format!("{}: {e}", p.display()))
    }

    /// Cross-references: every node, partition and GPU index named exists.
    fn check(&self) -> Result<(), String> {
        let nodes: BTreeMap<&str, &NodeRec> = self
            .cluster
            .nodes
            .iter()
            .map(|n| (n.name.as_str(), n))
            .collect();
        let parts: Vec<&str> = self
            .cluster
            .partitions
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        let types: Vec<&str> = self
            .cluster
            .gpu_types
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        for n in &self.cluster.nodes {
            admin_from(&n.state)
                .ok_or_else(|| format!("node {}: bad state '{}'", n.name, n.state))?;
            if n.gpus.len() > gresim_model::cluster::MAX_GPUS_PER_NODE {
                return Err(format!("node {}: too many GPUs", n.name));
            }
            for g in &n.gpus {
                if !types.contains(&g.ty.as_str()) {
                    return Err(format!("node {}: unknown GPU type '{}'", n.name, g.ty));
                }
            }
            if n.cpus() as usize > gresim_model::cluster::MAX_CORES_PER_NODE * 8 {
                return Err(format!("node {}: too many CPUs", n.name));
            }
        }
        for p in &self.cluster.partitions {
            for n in &p.nodes {
                if !nodes.contains_key(n.as_str()) {
                    return Err(format!("partition {}: unknown node '{n}'", p.name));
                }
            }
        }
        for s in &self.node_states {
            if !nodes.contains_key(s.node.as_str()) || admin_from(&s.state).is_none() {
                return Err(format!(
                    "node_states: bad entry {} {} at {}",
                    s.node, s.state, s.t
                ));
            }
        }
        for j in &self.jobs {
            if parse_state(&j.state).is_none() {
                return Err(format!("job {}: unknown state '{}'", j.id, j.state));
            }
            if let Some(h) = &j.priorities {
                if h.is_empty() || h.windows(2).any(|w| w[0].0 > w[1].0) {
                    return Err(format!(
                        "job {}: priorities must be a non-empty list in time order",
                        j.id
                    ));
                }
            }
            for r in &j.runs {
                if !r.partition.is_empty() && !parts.contains(&r.partition.as_str()) {
                    return Err(format!("job {}: unknown partition '{}'", j.id, r.partition));
                }
                if parse_state(&r.state).is_none() {
                    return Err(format!("job {}: unknown run state '{}'", j.id, r.state));
                }
                for na in &r.nodes {
                    let Some(n) = nodes.get(na.node.as_str()) else {
                        return Err(format!("job {}: unknown node '{}'", j.id, na.node));
                    };
                    if na.gpus.iter().any(|&g| usize::from(g) >= n.gpus.len()) {
                        return Err(format!(
                            "job {}: GPU index out of range on {}",
                            j.id, na.node
                        ));
                    }
                    if parse_ranges(&na.cores).is_none() {
                        return Err(format!("job {}: bad core list '{}'", j.id, na.cores));
                    }
                }
            }
            for p in &j.request.partitions {
                if !parts.contains(&p.as_str()) {
                    return Err(format!("job {}: unknown partition '{p}'", j.id));
                }
            }
            for n in j.request.nodelist.iter().chain(&j.request.exclude) {
                if !nodes.contains_key(n.as_str()) {
                    return Err(format!("job {}: unknown node '{n}'", j.id));
                }
            }
        }
        Ok(())
    }

    pub fn node_index(&self) -> BTreeMap<&str, usize> {
        self.cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect()
    }

    /// Each node's admin state at `t` (`UP`/`DOWN`/`DRAIN`), in node order.
    pub fn admin_at(&self, t: u64) -> Vec<String> {
        let idx = self.node_index();
        let mut cur: Vec<String> = self.cluster.nodes.iter().map(|n| n.state.clone()).collect();
        for s in self.node_states.iter().filter(|s| s.t <= t) {
            if let Some(&i) = idx.get(s.node.as_str()) {
                cur[i] = s.state.clone();
            }
        }
        cur
    }

    /// The default partition's name, or the first partition's.
    pub fn default_partition(&self) -> Option<&str> {
        self.cluster
            .partitions
            .iter()
            .find(|p| p.default)
            .or(self.cluster.partitions.first())
            .map(|p| p.name.as_str())
    }
}

/// run.json's own words only (upper case), read back.
pub(super) fn admin_from(s: &str) -> Option<NodeAdminState> {
    match s {
        "UP" | "DOWN" | "DRAIN" => s.parse().ok(),
        _ => None,
    }
}
