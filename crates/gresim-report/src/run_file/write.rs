//! Writing run.json from an engine output: each record built from the
//! model, the header and the job lines streamed in a fixed key order so the
//! same run gives the same bytes.

use std::collections::BTreeMap;
use std::io::{self, Write};

use gresim_engine::{Action, SimOutput, TimedAction};
use gresim_model::catalog;
use gresim_model::job::{DepKind, GpuReq, Job, JobRequest, JobState, MemReq, Reason};
use gresim_model::state::gpu_indices;
use gresim_model::{Cluster, NodeAdminState, NodeId};
use serde::Serialize;

use super::*;

/// Every version of every reservation, from the engine's history.
fn resv_recs(out: &SimOutput) -> Vec<ResvRec> {
    let c = &out.cluster;
    let h = &out.resv_history;
    let mut v = Vec::new();
    for (k, (from, all)) in h.iter().enumerate() {
        let until = h.get(k + 1).map(|x| x.0);
        for r in &all.list {
            v.push(ResvRec {
                name: r.name.to_string(),
                nodes: gresim_model::hostlist::compress(&c.node_names(&r.nodes)),
                users: r.users.iter().map(|u| u.to_string()).collect(),
                accounts: r.accounts.iter().map(|a| a.to_string()).collect(),
                start: r.start,
                end: r.end,
                flags: r.flags.names().iter().map(|f| f.to_string()).collect(),
                period: r.period(),
                from: *from,
                until,
            });
        }
    }
    v
}

/// The account and QOS names of a job under accounting.
fn acct_names(out: &SimOutput, spec: Option<&gresim_model::JobSpec>) -> Option<(String, String)> {
    let a = out.cluster.accounting()?;
    let ja = spec?.acct()?;
    Some((
        a.assocs[ja.assoc as usize].account.clone(),
        a.qos[ja.qos as usize].name.clone(),
    ))
}

fn gpu_req_rec(c: &Cluster, g: &GpuReq) -> GpuReqRec {
    GpuReqRec {
        ty: g.ty.map(|t| c.gpu_type(t).name.clone()),
        count: g.count,
    }
}

fn request_rec(c: &Cluster, r: &JobRequest) -> RequestRec {
    let (mem, mem_mib) = match r.mem {
        MemReq::Default => ("default", 0),
        MemReq::PerNode(m) => ("per_node", m),
        MemReq::PerCpu(m) => ("per_cpu", m),
        MemReq::PerGpu(m) => ("per_gpu", m),
        MemReq::WholeNode => ("whole_node", 0),
    };
    let names =
        |ids: &[NodeId]| -> Vec<String> { ids.iter().map(|n| c.node(*n).name.clone()).collect() };
    RequestRec {
        min_nodes: r.min_nodes,
        max_nodes: r.max_nodes,
        max_nodes_open: r.max_nodes_open,
        ntasks: r.ntasks,
        ntasks_per_node: r.ntasks_per_node,
        cpus_per_task: r.cpus_per_task,
        mem: mem.to_string(),
        mem_mib,
        gpus_per_node: r.gpus_per_node.iter().map(|g| gpu_req_rec(c, g)).collect(),
        gpus_per_job: r.gpus_per_job.as_ref().map(|g| gpu_req_rec(c, g)),
        gpus_per_task: r.gpus_per_task.as_ref().map(|g| gpu_req_rec(c, g)),
        cpus_per_gpu: r.cpus_per_gpu,
        time: r.time_limit.flatten(),
        time_unlimited: r.time_limit == Some(None),
        partitions: r
            .partitions
            .iter()
            .map(|p| c.partition(*p).name.clone())
            .collect(),
        nodelist: names(&r.nodelist),
        exclude: names(&r.exclude),
        features: r.features.clone(),
        exclusive: r.exclusive,
        oversubscribe: r.oversubscribe,
        shared: r.shared.map(|s| (s.kind.as_str().to_string(), s.per_node)),
        switches: r.switches.map(|s| (s.count, s.wait)),
        segment: r.segment,
    }
}

/// The job id a dependency on submission `sub` (task `task`) names.
fn dep_target(out: &SimOutput, first_job: &[usize], sub: u32, task: Option<u32>) -> String {
    let Some(&j) = first_job.get(sub as usize).filter(|&&j| j != usize::MAX) else {
        return format!("?{sub}");
    };
    let job = &out.jobs[j];
    let base = job
        .array_job_id
        .or(job.job_id)
        .map_or_else(|| "?".to_string(), |i| i.to_string());
    match task {
        Some(t) => format!("{base}_{t}"),
        None => base,
    }
}

fn action_rec(c: &Cluster, a: &TimedAction) -> ActionRec {
    let hl = |ns: &[NodeId]| Some(gresim_model::hostlist::compress(&c.node_names(ns)));
    let (action, nodes, sub) = match &a.action {
        Action::NodeDown(n) => ("node_down", hl(n), None),
        Action::NodeUp(n) => ("node_up", hl(n), None),
        Action::NodeDrain(n) => ("node_drain", hl(n), None),
        Action::NodeResume(n) => ("node_resume", hl(n), None),
        Action::Hold { sub, admin } => {
            (if *admin { "hold_admin" } else { "hold" }, None, Some(*sub))
        }
        Action::Release { sub, .. } => ("release", None, Some(*sub)),
        Action::Cancel { sub } => ("cancel", None, Some(*sub)),
        // The first job named (none: every job the filters select).
        Action::CancelWhere { subs, .. } => (
            "cancel_where",
            None,
            subs.as_ref().and_then(|s| s.first().copied()),
        ),
        Action::Signal { sub, .. } => ("signal", None, Some(*sub)),
        Action::Requeue { sub } => ("requeue", None, Some(*sub)),
        Action::RequeueHold { sub, .. } => ("requeue_hold", None, Some(*sub)),
        Action::Suspend { sub } => ("suspend", None, Some(*sub)),
        Action::Resume { sub } => ("resume", None, Some(*sub)),
        Action::Top { subs, .. } => ("top", None, subs.first().copied()),
        Action::Update { sub, .. } => ("update", None, Some(*sub)),
        Action::NodeFail(n) => ("node_fail", hl(n), None),
        Action::NodeRepair(n) => ("node_repair", hl(n), None),
        Action::ResvCreate(r) => ("create_reservation", hl(&r.resv.nodes), None),
        Action::ResvUpdate(c) => ("update_reservation", c.nodes.as_deref().and_then(hl), None),
        Action::ResvDelete(_) => ("delete_reservation", None, None),
    };
    ActionRec {
        at: a.at,
        action: action.to_string(),
        nodes,
        sub,
    }
}

/// The node-state timeline the actions imply, as the engine applies them.
fn node_states(c: &Cluster, actions: &[TimedAction]) -> Vec<NodeStateRec> {
    let mut cur: Vec<NodeAdminState> = c.nodes.iter().map(|n| n.state).collect();
    let mut sorted: Vec<&TimedAction> = actions.iter().collect();
    sorted.sort_by_key(|a| a.at); // stable: equal times keep their order
    let mut out = Vec::new();
    for a in sorted {
        let (nodes, to) = match &a.action {
            Action::NodeDown(n) | Action::NodeFail(n) => (n, NodeAdminState::Down),
            Action::NodeUp(n) | Action::NodeResume(n) | Action::NodeRepair(n) => {
                (n, NodeAdminState::Up)
            }
            Action::NodeDrain(n) => (n, NodeAdminState::Drain),
            _ => continue,
        };
        for n in nodes {
            let Some(s) = cur.get_mut(n.idx()) else {
                continue;
            };
            if *s != to {
                *s = to;
                out.push(NodeStateRec {
                    t: a.at,
                    node: c.node(*n).name.clone(),
                    state: to.as_str().to_string(),
                });
            }
        }
    }
    out
}

/// When a terminal job left the system (see [`JobRec::ended`]).
fn ended(
    job: &Job,
    sub_cancels: &[u64],
    reasons: Option<&Vec<gresim_engine::ReasonChange>>,
) -> Option<u64> {
    if !job.state.is_terminal() {
        return None;
    }
    if let Some(last) = job.runs.last() {
        if last.state == job.state {
            return last.end;
        }
    }
    if job.state == JobState::Rejected {
        return Some(job.first_submit);
    }
    let from = job
        .runs
        .last()
        .and_then(|r| r.end)
        .unwrap_or(job.first_submit);
    if job.state == JobState::Cancelled && job.reason != Reason::DependencyNeverSatisfied {
        if let Some(&t) = sub_cancels.iter().find(|&&t| t >= from) {
            return Some(t);
        }
    }
    let last_reason = reasons.and_then(|h| h.last()).map_or(from, |r| r.t);
    Some(from.max(last_reason))
}

/// The cluster as run.json records it.
fn cluster_rec(c: &Cluster) -> ClusterRec {
    ClusterRec {
        nodes: c
            .nodes
            .iter()
            .map(|n| NodeRec {
                name: n.name.clone(),
                sockets: n.sockets,
                cores_per_socket: n.cores_per_socket,
                threads_per_core: n.threads_per_core,
                memory_mib: n.memory_mib,
                features: n.features.clone(),
                weight: n.weight,
                state: n.state.as_str().to_string(),
                gpus: n
                    .gpus
                    .iter()
                    .map(|g| GpuRec {
                        ty: c.gpu_type(g.ty).name.clone(),
                        model: catalog::model(g.model).name.to_string(),
                        socket: g.socket,
                        phys: g.phys,
                        mig: g.mig.map(|m| (m.profile.name.to_string(), m.start)),
                    })
                    .collect(),
                gpu_links: n.gpu_links.clone(),
                shares: c
                    .node_id(&n.name)
                    .and_then(|id| c.node_shares(id))
                    .map(|s| {
                        (
                            s.kind.as_str().to_string(),
                            s.per_gpu.clone(),
                            s.one_sharing,
                        )
                    }),
            })
            .collect(),
        partitions: c
            .partitions
            .iter()
            .map(|p| PartRec {
                name: p.name.clone(),
                nodes: p.nodes.iter().map(|n| c.node(*n).name.clone()).collect(),
                default: p.default,
                max_time: p.max_time,
                default_time: p.default_time,
                priority_tier: p.priority_tier,
                priority_job_factor: p.priority_job_factor,
                min_nodes: p.min_nodes,
                max_nodes: p.max_nodes,
                state: p.state.as_str().to_string(),
                preempt_mode: p.preempt_mode.map(|m| m.as_str().to_string()),
                grace_time: p.grace_time,
                oversubscribe: p.oversubscribe,
                force: (p.force != (p.oversubscribe > 1)).then_some(p.force),
                exclusive: p.exclusive,
            })
            .collect(),
        gpu_types: c
            .gpu_types
            .iter()
            .map(|t| GpuTypeRec {
                name: t.name.clone(),
                model: catalog::model(t.model).name.to_string(),
                mig: t.mig.map(|p| p.name.to_string()),
            })
            .collect(),
    }
}

/// What each job's record needs from the whole run.
struct JobCtx {
    /// `first_job[sub]`: the index in the job table of submission `sub`'s
    /// first job (`usize::MAX`: none), for dependencies.
    first_job: Vec<usize>,
    /// Cancel actions per submission, sorted by time.
    cancels: BTreeMap<u32, Vec<u64>>,
    /// Per job whose priority changed (when recorded): its priority from
    /// each time on, the first from its first submission.
    priorities: BTreeMap<u32, Vec<(u64, u32)>>,
}

impl JobCtx {
    fn new(out: &SimOutput, meta: &RunMeta) -> JobCtx {
        let subs = out
            .jobs
            .iter()
            .map(|j| j.sub as usize + 1)
            .max()
            .unwrap_or(0);
        let mut first_job = vec![usize::MAX; subs];
        for (i, j) in out.jobs.iter().enumerate().rev() {
            first_job[j.sub as usize] = i;
        }
        let mut cancels: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for a in &meta.actions {
            if let Action::Cancel { sub } = a.action {
                cancels.entry(sub).or_default().push(a.at);
            }
        }
        for v in cancels.values_mut() {
            v.sort_unstable();
        }
        let mut priorities: BTreeMap<u32, Vec<(u64, u32)>> = BTreeMap::new();
        for c in out.priority_log.iter().flatten() {
            let h = priorities.entry(c.job.0).or_insert_with(|| {
                let first = out.jobs.get(c.job.idx()).map_or(0, |j| j.first_submit);
                vec![(first, c.from)]
            });
            match h.last_mut() {
                // Several changes in one second: the last one holds.
                Some(last) if last.0 == c.t => last.1 = c.to,
                _ => h.push((c.t, c.to)),
            }
        }
        JobCtx {
            first_job,
            cancels,
            priorities,
        }
    }
}

/// The record of job `i` of the job table.
fn job_rec(out: &SimOutput, ctx: &JobCtx, i: usize, j: &Job) -> JobRec {
    let c = &out.cluster;
    let spec = out.specs.get(j.sub as usize);
    let part = crate::records::job_partition(out, j).filter(|p| p.idx() < c.partitions.len());
    let time_limit = match part {
        Some(p) => gresim_sched::time_limit_in(c, j, p),
        None => j.request.time_limit.flatten(),
    };
    let dependency = spec.and_then(|s| s.dependency()).map(|d| {
        d.terms
            .iter()
            .map(|t| match (t.kind, t.target) {
                (DepKind::Singleton, _) | (_, None) => t.kind.as_str().to_string(),
                (k, Some(sub)) => {
                    format!(
                        "{}:{}",
                        k.as_str(),
                        dep_target(out, &ctx.first_job, sub, t.task)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(if d.any { "?" } else { "," })
    });
    let hist = out.reasons.as_ref().and_then(|r| r.get(i));
    JobRec {
        id: j.display_id(),
        job_id: j.job_id.map(|x| x.0),
        array_job_id: j.array_job_id.map(|x| x.0),
        task: j.task,
        throttle: spec.and_then(|s| s.array()).and_then(|a| a.throttle),
        sub: j.sub,
        key: spec.map_or_else(String::new, |s| s.key.clone()),
        name: spec.map_or_else(String::new, |s| s.name.to_string()),
        user: spec.map_or_else(String::new, |s| s.user.to_string()),
        account: acct_names(out, spec).map(|(a, _)| a),
        qos: acct_names(out, spec).map(|(_, q)| q),
        reservation: spec.and_then(|s| s.reservation()).map(str::to_string),
        first_submit: j.first_submit,
        submit: j.submit,
        eligible: j.eligible,
        state: j.state.as_str().to_string(),
        reason: j.reason.as_str().to_string(),
        reason_desc: j.reason_desc.clone(),
        priority: j.priority,
        exit_code: j.exit_code,
        time_limit,
        dependency,
        begin: j.begin,
        hold: spec.is_some_and(|s| s.hold),
        rejected: j.rejected().map(str::to_string),
        ended: ended(
            j,
            ctx.cancels.get(&j.sub).map_or(&[][..], |v| v.as_slice()),
            hist,
        ),
        request: request_rec(c, &j.request),
        runs: j
            .runs
            .iter()
            .map(|r| RunRec {
                start: r.start,
                end: r.end,
                state: r.state.as_str().to_string(),
                partition: c
                    .partitions
                    .get(r.partition.idx())
                    .map_or_else(String::new, |p| p.name.clone()),
                exclusive: r.alloc.exclusive,
                node_cr_available: r.alloc.row_use.available(),
                nodes: r
                    .alloc
                    .nodes
                    .iter()
                    .map(|na| NodeAllocRec {
                        node: c.node(na.node).name.clone(),
                        cpus: na.cpus,
                        cores: ranges(na.cores.iter()),
                        mem_mib: na.mem_mib,
                        gpus: gpu_indices(na.gpus).collect(),
                        tasks: na.tasks,
                        share: na.share.map(|s| (s.gpu, s.count)),
                    })
                    .collect(),
            })
            .collect(),
        reasons: hist.map(|h| {
            h.iter()
                .map(|r| (r.t, r.reason.as_str().to_string(), r.desc.clone()))
                .collect()
        }),
        priorities: ctx.priorities.get(&(i as u32)).cloned(),
    }
}

/// The parts of run.json's header that are built, not borrowed, from an engine output.
struct HeadParts {
    cluster: ClusterRec,
    actions: Vec<ActionRec>,
    node_states: Vec<NodeStateRec>,
    usage: UsageRec,
    fairshare: Option<FairshareRec>,
    reservations: Vec<ResvRec>,
}

impl HeadParts {
    fn new(out: &SimOutput, meta: &RunMeta) -> HeadParts {
        let c = &out.cluster;
        let clamp = |v: u128| u64::try_from(v).unwrap_or(u64::MAX);
        HeadParts {
            cluster: cluster_rec(c),
            actions: meta.actions.iter().map(|a| action_rec(c, a)).collect(),
            node_states: if out.node_log.is_empty() {
                node_states(c, &meta.actions)
            } else {
                // What the engine applied: failures included, actions after
                // a horizon not.
                out.node_log
                    .iter()
                    .map(|ch| NodeStateRec {
                        t: ch.t,
                        node: c.node(ch.node).name.clone(),
                        state: ch.state.as_str().to_string(),
                    })
                    .collect()
            },
            usage: UsageRec {
                gpu_alloc_secs: out.usage.gpu_alloc_secs.iter().map(|&v| clamp(v)).collect(),
                gpu_avail_secs: out.usage.gpu_avail_secs.iter().map(|&v| clamp(v)).collect(),
                cpu_alloc_secs: clamp(out.usage.cpu_alloc_secs),
                cpu_avail_secs: clamp(out.usage.cpu_avail_secs),
                from: out.usage.from,
                to: out.usage.to,
            },
            fairshare: FairshareRec::new(out),
            reservations: resv_recs(out),
        }
    }
}

fn sample_rec(s: &gresim_engine::Sample) -> SampleRec {
    [
        s.t,
        u64::from(s.alloc_gpus),
        u64::from(s.alloc_gpu_sevenths),
        u64::from(s.alloc_cpus),
        u64::from(s.avail_gpus),
        u64::from(s.running),
        u64::from(s.pending),
    ]
}

/// The engine's load timeline, serialised as `Vec<SampleRec>` without building it.
struct TimelineSer<'a>(&'a [gresim_engine::Sample]);

impl Serialize for TimelineSer<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(sample_rec))
    }
}

#[derive(Serialize)]
struct Head<'a, T: Serialize> {
    format: &'a str,
    version: u32,
    scenario: &'a str,
    policy: &'a str,
    seed: Option<u64>,
    end_time: u64,
    hit_horizon: bool,
    events: u64,
    reasons_recorded: bool,
    def_mem_per_cpu: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preempt: Option<PreemptRec>,
    cluster: &'a ClusterRec,
    actions: &'a [ActionRec],
    node_states: &'a [NodeStateRec],
    timeline: T,
    usage: &'a UsageRec,
    #[serde(skip_serializing_if = "Option::is_none")]
    fairshare: Option<&'a FairshareRec>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    reservations: &'a [ResvRec],
    scenario_text: Option<&'a str>,
    jobs: &'a [JobRec],
}

/// A writer that passes everything on to `inner` but the last `keep` bytes
/// (and a block of up to 8 KiB before them, until the caller takes them).
struct HoldBack<'w, W: Write> {
    inner: &'w mut W,
    held: Vec<u8>,
    keep: usize,
}

impl<W: Write> Write for HoldBack<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(buf);
        // Pass bytes on in blocks: serde writes a token at a time.
        if self.held.len() >= self.keep + 8192 {
            let n = self.held.len() - self.keep;
            self.inner.write_all(&self.held[..n])?;
            self.held.drain(..n);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes run.json: the header (with an empty job list) on the first line,
/// then each job on its own line, the records coming from `jobs`.
fn write_run<W: Write, T: Serialize, R: std::borrow::Borrow<JobRec>>(
    w: &mut W,
    head: &Head<'_, T>,
    jobs: impl Iterator<Item = R>,
) -> io::Result<()> {
    // Serialise the header with `"jobs":[]}` and open the list instead.
    let mut hb = HoldBack {
        inner: &mut *w,
        held: Vec::with_capacity(3 + 8192 + 64),
        keep: 3,
    };
    serde_json::to_writer(&mut hb, head)?;
    let n = hb.held.len().saturating_sub(hb.keep);
    hb.inner.write_all(&hb.held[..n])?;
    if hb.held[n..] != *b"[]}" {
        return Err(io::Error::other(
            "run.json header does not end with its job list",
        ));
    }
    w.write_all(b"[\n")?;
    for (i, j) in jobs.enumerate() {
        if i > 0 {
            w.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut *w, j.borrow())?;
    }
    w.write_all(b"\n]}\n")
}

/// Writes run.json for an engine output, job by job: the same bytes as
/// `RunFile::from_output(out, meta).to_json()`, without holding the whole
/// run (or its text) in memory.
pub fn write_run_json<W: Write>(out: &SimOutput, meta: &RunMeta, w: &mut W) -> io::Result<()> {
    let parts = HeadParts::new(out, meta);
    let head = Head {
        format: RUN_FORMAT,
        version: RUN_VERSION,
        scenario: &meta.scenario,
        policy: &out.policy,
        seed: meta.seed,
        end_time: out.end_time,
        hit_horizon: out.hit_horizon,
        events: out.events,
        reasons_recorded: out.reasons.is_some(),
        def_mem_per_cpu: out.params.def_mem_per_cpu,
        preempt: PreemptRec::of(out),
        cluster: &parts.cluster,
        actions: &parts.actions,
        node_states: &parts.node_states,
        timeline: TimelineSer(&out.timeline),
        usage: &parts.usage,
        fairshare: parts.fairshare.as_ref(),
        reservations: &parts.reservations,
        scenario_text: meta.scenario_text.as_deref(),
        jobs: &[],
    };
    let ctx = JobCtx::new(out, meta);
    write_run(
        w,
        &head,
        out.jobs
            .iter()
            .enumerate()
            .map(|(i, j)| job_rec(out, &ctx, i, j)),
    )
}

impl RunFile {
    /// Builds the persisted run from an engine output.
    pub fn from_output(out: &SimOutput, meta: &RunMeta) -> RunFile {
        let HeadParts {
            cluster,
            actions,
            node_states,
            usage,
            fairshare,
            reservations,
        } = HeadParts::new(out, meta);
        let ctx = JobCtx::new(out, meta);
        let jobs = out
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| job_rec(out, &ctx, i, j))
            .collect();
        RunFile {
            format: RUN_FORMAT.to_string(),
            version: RUN_VERSION,
            scenario: meta.scenario.clone(),
            policy: out.policy.clone(),
            seed: meta.seed,
            end_time: out.end_time,
            hit_horizon: out.hit_horizon,
            events: out.events,
            reasons_recorded: out.reasons.is_some(),
            def_mem_per_cpu: out.params.def_mem_per_cpu,
            preempt: PreemptRec::of(out),
            cluster,
            actions,
            node_states,
            timeline: out.timeline.iter().map(sample_rec).collect(),
            usage,
            fairshare,
            reservations,
            scenario_text: meta.scenario_text.clone(),
            jobs,
        }
    }

    /// Compact JSON: the header and each job on its own line, keys in a fixed order.
    pub fn to_json(&self) -> String {
        let mut v = Vec::new();
        self.write_json(&mut v)
            .expect("a run file always serialises into memory");
        String::from_utf8(v).expect("serde_json writes UTF-8")
    }

    /// [`RunFile::to_json`] into a writer.
    pub fn write_json<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let head = Head {
            format: &self.format,
            version: self.version,
            scenario: &self.scenario,
            policy: &self.policy,
            seed: self.seed,
            end_time: self.end_time,
            hit_horizon: self.hit_horizon,
            events: self.events,
            reasons_recorded: self.reasons_recorded,
            def_mem_per_cpu: self.def_mem_per_cpu,
            preempt: self.preempt.clone(),
            cluster: &self.cluster,
            actions: &self.actions,
            node_states: &self.node_states,
            timeline: &self.timeline,
            usage: &self.usage,
            fairshare: self.fairshare.as_ref(),
            reservations: &self.reservations,
            scenario_text: self.scenario_text.as_deref(),
            jobs: &[],
        };
        write_run(w, &head, self.jobs.iter())
    }
}
