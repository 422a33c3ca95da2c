//! run.json back into the model: the cluster, requests, allocations,
//! scheduler settings and the cluster state at a time, for the views that
//! re-run node selection (`explain`).

use gresim_model::catalog;
use gresim_model::job::{GpuReq, JobRequest, MemReq};
use gresim_model::{
    Allocation, Cluster, ClusterState, CoreSet, GpuDevice, GpuType, GpuTypeId, MigInstance, Node,
    NodeAdminState, NodeAlloc, NodeId, PartId, Partition,
};
use gresim_sched::SchedParams;

use super::*;

impl RunFile {
    /// Rebuilds the model's cluster (for node selection in `explain`).
    pub fn model_cluster(&self) -> Result<Cluster, String> {
        let types: Vec<GpuType> = self
            .cluster
            .gpu_types
            .iter()
            .map(|t| {
                let model = catalog::model_by_name(&t.model)
                    .ok_or_else(|| format!("unknown GPU model '{}'", t.model))?;
                let mig = match &t.mig {
                    Some(p) => Some(
                        catalog::model(model)
                            .mig_profile(p)
                            .ok_or_else(|| format!("unknown MIG profile '{p}'"))?,
                    ),
                    None => None,
                };
                Ok(GpuType {
                    name: t.name.clone(),
                    model,
                    mig,
                })
            })
            .collect::<Result<_, String>>()?;
        let type_id = |name: &str| {
            types
                .iter()
                .position(|t| t.name == name)
                .map(GpuTypeId::from_idx)
                .ok_or_else(|| format!("unknown GPU type '{name}'"))
        };
        let nodes: Vec<Node> = self
            .cluster
            .nodes
            .iter()
            .map(|n| {
                let gpus = n
                    .gpus
                    .iter()
                    .map(|g| {
                        let ty = type_id(&g.ty)?;
                        let model = types[ty.idx()].model;
                        let mig = match &g.mig {
                            Some((p, start)) => Some(MigInstance {
                                profile: catalog::model(model)
                                    .mig_profile(p)
                                    .ok_or_else(|| format!("unknown MIG profile '{p}'"))?,
                                start: *start,
                            }),
                            None => None,
                        };
                        Ok(GpuDevice {
                            ty,
                            model,
                            socket: g.socket,
                            phys: g.phys,
                            mig,
                        })
                    })
                    .collect::<Result<_, String>>()?;
                Ok(Node {
                    name: n.name.clone(),
                    sockets: n.sockets,
                    cores_per_socket: n.cores_per_socket,
                    threads_per_core: n.threads_per_core,
                    memory_mib: n.memory_mib,
                    features: n.features.clone(),
                    weight: n.weight,
                    gpus,
                    gpu_links: n.gpu_links.clone(),
                    state: admin_from(&n.state).unwrap_or_default(),
                })
            })
            .collect::<Result<_, String>>()?;
        let idx = self.node_index();
        let partitions = self
            .cluster
            .partitions
            .iter()
            .map(|p| Partition {
                name: p.name.clone(),
                nodes: p
                    .nodes
                    .iter()
                    .filter_map(|n| idx.get(n.as_str()).map(|&i| NodeId::from_idx(i)))
                    .collect(),
                default: p.default,
                max_time: p.max_time,
                default_time: p.default_time,
                priority_tier: p.priority_tier,
                priority_job_factor: p.priority_job_factor,
                min_nodes: p.min_nodes,
                max_nodes: p.max_nodes,
                state: p.state.parse().unwrap_or_default(),
                preempt_mode: p.preempt_mode.as_deref().and_then(|m| {
                    m.parse::<gresim_model::preempt::PreemptModeSpec>()
                        .ok()
                        .map(|s| s.mode)
                }),
                grace_time: p.grace_time,
                oversubscribe: p.oversubscribe,
                force: p.force.unwrap_or(p.oversubscribe > 1),
                exclusive: p.exclusive,
            })
            .collect();
        let mut cluster = Cluster::new(nodes, partitions, types);
        if self.cluster.nodes.iter().any(|n| n.shares.is_some()) {
            let per = self
                .cluster
                .nodes
                .iter()
                .map(|n| {
                    let (k, per_gpu, one) = n.shares.as_ref()?;
                    Some(gresim_model::shares::NodeShares {
                        kind: gresim_model::shares::ShareKind::from_name(k)?,
                        per_gpu: per_gpu.clone(),
                        one_sharing: *one,
                    })
                })
                .collect();
            cluster.set_shares(per);
        }
        Ok(cluster)
    }

    /// Rebuilds a job's request against [`RunFile::model_cluster`].
    pub fn model_request(&self, c: &Cluster, r: &RequestRec) -> Result<JobRequest, String> {
        let g = |x: &GpuReqRec| -> Result<GpuReq, String> {
            Ok(GpuReq {
                ty: match &x.ty {
                    Some(t) => Some(
                        c.gpu_type_id(t)
                            .ok_or_else(|| format!("unknown GPU type '{t}'"))?,
                    ),
                    None => None,
                },
                count: x.count,
            })
        };
        let nodes = |v: &[String]| -> Result<Vec<NodeId>, String> {
            v.iter()
                .map(|n| c.node_id(n).ok_or_else(|| format!("unknown node '{n}'")))
                .collect()
        };
        Ok(JobRequest {
            min_nodes: r.min_nodes,
            max_nodes: r.max_nodes,
            max_nodes_open: r.max_nodes_open,
            ntasks: r.ntasks,
            ntasks_per_node: r.ntasks_per_node,
            cpus_per_task: r.cpus_per_task,
            mem: match r.mem.as_str() {
                "per_node" => MemReq::PerNode(r.mem_mib),
                "per_cpu" => MemReq::PerCpu(r.mem_mib),
                "per_gpu" => MemReq::PerGpu(r.mem_mib),
                "whole_node" => MemReq::WholeNode,
                _ => MemReq::Default,
            },
            gpus_per_node: r.gpus_per_node.iter().map(g).collect::<Result<_, _>>()?,
            gpus_per_job: r.gpus_per_job.as_ref().map(g).transpose()?,
            gpus_per_task: r.gpus_per_task.as_ref().map(g).transpose()?,
            cpus_per_gpu: r.cpus_per_gpu,
            time_limit: if r.time_unlimited {
                Some(None)
            } else {
                r.time.map(Some)
            },
            partitions: r
                .partitions
                .iter()
                .map(|p| {
                    c.partition_id(p)
                        .ok_or_else(|| format!("unknown partition '{p}'"))
                })
                .collect::<Result<_, _>>()?,
            nodelist: nodes(&r.nodelist)?,
            exclude: nodes(&r.exclude)?,
            features: r.features.clone(),
            exclusive: r.exclusive,
            oversubscribe: r.oversubscribe,
            shared: match &r.shared {
                Some((k, n)) => Some(gresim_model::shares::SharedReq {
                    kind: gresim_model::shares::ShareKind::from_name(k)
                        .ok_or_else(|| format!("unknown shared GRES '{k}'"))?,
                    per_node: *n,
                }),
                None => None,
            },
            switches: r
                .switches
                .map(|(count, wait)| gresim_model::job::SwitchReq { count, wait }),
            segment: r.segment,
        })
    }

    /// The model allocation of a run.
    pub fn model_alloc(&self, c: &Cluster, r: &RunRec) -> Result<Allocation, String> {
        let nodes = r
            .nodes
            .iter()
            .map(|na| {
                let node = c
                    .node_id(&na.node)
                    .ok_or_else(|| format!("unknown node '{}'", na.node))?;
                let mut cores = CoreSet::default();
                for k in parse_ranges(&na.cores).ok_or("bad core list")? {
                    cores.insert(k);
                }
                let mut gpus = 0u64;
                for &g in &na.gpus {
                    gpus |= 1u64.checked_shl(u32::from(g)).unwrap_or(0);
                }
                Ok(NodeAlloc {
                    node,
                    cores,
                    cpus: na.cpus,
                    mem_mib: na.mem_mib,
                    gpus,
                    tasks: na.tasks,
                    share: na
                        .share
                        .map(|(gpu, count)| gresim_model::shares::ShareAlloc { gpu, count }),
                })
            })
            .collect::<Result<_, String>>()?;
        let row_use = match c.partition_id(&r.partition) {
            Some(p) if c.tracks_rows() => {
                gresim_model::RowUse::new(r.node_cr_available, c.partition(p).oversubscribe > 1)
            }
            _ => gresim_model::RowUse::NONE,
        };
        Ok(Allocation {
            nodes,
            exclusive: r.exclusive,
            row_use,
        })
    }

    /// Scheduler settings for re-running node selection.
    pub fn sched_params(&self) -> SchedParams {
        SchedParams {
            def_mem_per_cpu: self.def_mem_per_cpu,
            preempt: self
                .preempt
                .as_ref()
                .and_then(PreemptRec::config)
                .unwrap_or_default(),
            ..SchedParams::default()
        }
    }

    /// The cluster's usage at `t`: every run active at `t` allocated, node
    /// admin states as at `t`. Returns the state and the running (job, run)
    /// pairs, by job index.
    pub fn state_at(
        &self,
        c: &Cluster,
        t: u64,
    ) -> Result<(ClusterState, Vec<(usize, usize)>), String> {
        let mut st = ClusterState::new(c);
        for i in 0..c.nodes.len() {
            st.set_admin(NodeId::from_idx(i), NodeAdminState::Up);
        }
        let mut running = Vec::new();
        for (ji, j) in self.jobs.iter().enumerate() {
            for (ri, r) in j.runs.iter().enumerate() {
                if r.active_at(t) {
                    let a = self.model_alloc(c, r)?;
                    st.allocate(c, &a)
                        .map_err(|e| format!("job {} at {t}: {e}", j.id))?;
                    running.push((ji, ri));
                }
            }
        }
        for (i, s) in self.admin_at(t).iter().enumerate() {
            st.set_admin(NodeId::from_idx(i), admin_from(s).unwrap_or_default());
        }
        Ok((st, running))
    }

    /// A partition id by name in the model cluster.
    pub fn part_id(c: &Cluster, name: &str) -> Option<PartId> {
        c.partition_id(name)
    }
}
