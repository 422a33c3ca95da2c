//! Property tests of the engine with the FIFO scheduler, over random small
//! clusters, workloads, scheduler settings and timed admin actions.
//!
//! Every property is checked from the outside, on the [`SimOutput`] alone: the
//! job runs (start, end, allocation) are replayed as intervals `[start, end)`
//! (a run still open at the end lasts forever) and compared with the cluster,
//! the timeline and the usage integrals.
//!
//! The scenarios are built directly from `gresim_model` types. Generators
//! draw plain numbers and a deterministic `build` step turns them into a
//! valid scenario, so proptest shrinks towards small, readable cases.

use std::collections::BTreeMap;
use std::sync::Arc;

use gresim_engine::{Action, SimInput, SimOutput, TimedAction};
use gresim_model::catalog::{self, MigProfile};
use gresim_model::cluster::PartitionState;
use gresim_model::job::{
    ArraySpec, DepKind, DepTerm, Dependency, GpuReq, JobRequest, JobSpec, MemReq, RunTime, Time,
};
use gresim_model::state::{gpu_indices, CoreSet, NodeAlloc};
use gresim_model::{
    Cluster, GpuDevice, GpuType, GpuTypeId, JobState, MigInstance, Node, NodeAdminState, NodeId,
    PartId, Partition, Reason,
};
use gresim_sched::SchedParams;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

// ---- raw generators -----------------------------------------------------------

/// One node's hardware, as drawn.
#[derive(Debug, Clone)]
struct NodeGen {
    sockets: u16,
    cores_per_socket: u16,
    threads_per_core: u16,
    memory_mib: u64,
    weight: u32,
    whole_gpus: u8,
    mig_gpus: u8,
    /// `None`: GPUs without socket affinity; else the socket (mod sockets).
    gpu_socket: Option<u16>,
    /// 0..=17 up, 18 drained, 19 down at t0.
    state: u8,
}

#[derive(Debug, Clone)]
struct ClusterGen {
    nodes: Vec<NodeGen>,
    /// Index into [`WHOLE_MODELS`].
    whole_model: usize,
    /// A MIG type next to the whole GPUs: index into [`MIG_PROFILES`].
    mig: Option<usize>,
    max_time: Option<u64>,
    default_time: Option<u64>,
    /// A second partition over a subset of the nodes (bit mask), its tier,
    /// and its OverSubscribe: 0 `NO`, 1 `YES:2` (which no job asks to use,
    /// so nothing shares a core), 2 `FORCE:1` (one row). The last two make
    /// cons_common's node states matter (jobs of `main` keep off nodes
    /// with jobs of a `YES:2` partition; `FORCE:1`'s jobs keep off nodes
    /// with jobs of `main`) without row sharing, which the plain passes
    /// compared below do not have.
    second: Option<(u8, u16, u8)>,
}

/// One submission, as drawn.
#[derive(Debug, Clone)]
struct JobGen {
    submit_delta: u64,
    min_nodes: u32,
    extra_nodes: u32,
    ntasks: Option<u32>,
    cpus_per_task: u32,
    /// 0 default, 1 --mem, 2 --mem-per-cpu, 3 --mem-per-gpu, 4 --mem=0.
    mem_kind: u8,
    mem: u64,
    /// 0..=3 none, 4 untyped per node, 5 typed per node, 6 two types per node,
    /// 7 --gpus (per job), 8 --gpus-per-task.
    gpu_kind: u8,
    gpu_count: u32,
    gpu_type: u8,
    gpu_typed: bool,
    cpus_per_gpu: Option<u32>,
    exclusive: bool,
    /// 0 partition default, 1 a limit, 2 UNLIMITED.
    time_kind: u8,
    time_limit: u64,
    run_time: Option<u64>,
    exit_code: i32,
    array: Option<(u32, Option<u32>)>,
    /// (which earlier submission, kind, array task pick).
    dependency: Option<(u8, u8, Option<u8>)>,
    hold: bool,
    begin: Option<u64>,
    requeue: Option<bool>,
    user: u8,
    name: u8,
    /// 0 default partition, 1 the second one, 2 both.
    partitions: u8,
    requeue_after_start: Option<u64>,
}

#[derive(Debug, Clone)]
struct ActionGen {
    at: u64,
    /// 0 down, 1 up, 2 drain, 3 resume, 4 hold, 5 release, 6 cancel, 7 requeue.
    kind: u8,
    target: u8,
    admin: bool,
}

#[derive(Debug, Clone)]
struct ParamsGen {
    sched_interval: u64,
    bf_interval: u64,
    pass_on_submit: bool,
    pass_on_end: bool,
    timelimit_check_interval: u64,
    ctld_phase: u64,
    def_mem_per_cpu: Option<u64>,
    job_requeue: bool,
    cred_expire: u64,
    requeue_completing: u64,
    main_after_ends_from: Option<u64>,
}

const WHOLE_MODELS: [(&str, &str); 3] = [
    ("A100-SXM4-80GB", "a100"),
    ("H100-SXM5-80GB", "h100"),
    ("V100-32GB", "v100"),
];
/// MIG types of an A100-80GB.
const MIG_PROFILES: [&str; 3] = ["1g.10gb", "2g.20gb", "3g.40gb"];

fn node_gen() -> impl Strategy<Value = NodeGen> {
    (
        (1u16..=2, 1u16..=8, 1u16..=2, 1_000u64..=64_000, 1u32..=3),
        (0u8..=8, 0u8..=8, proptest::option::of(0u16..2), 0u8..20),
    )
        .prop_map(
            |(
                (sockets, cores_per_socket, threads_per_core, memory_mib, weight),
                (whole_gpus, mig_gpus, gpu_socket, state),
            )| NodeGen {
                sockets,
                cores_per_socket,
                threads_per_core,
                memory_mib,
                weight,
                whole_gpus,
                mig_gpus,
                gpu_socket,
                state,
            },
        )
}

fn cluster_gen() -> impl Strategy<Value = ClusterGen> {
    (
        proptest::collection::vec(node_gen(), 1..=6),
        0..WHOLE_MODELS.len(),
        proptest::option::weighted(0.6, 0..MIG_PROFILES.len()),
        proptest::option::weighted(0.3, 1_800u64..=14_400),
        proptest::option::weighted(0.5, 300u64..=3_600),
        proptest::option::weighted(0.5, (1u8..=63, 1u16..=2, 0u8..=2)),
    )
        .prop_map(
            |(nodes, whole_model, mig, max_time, default_time, second)| ClusterGen {
                nodes,
                whole_model,
                mig,
                max_time,
                default_time,
                second,
            },
        )
}

fn job_gen() -> impl Strategy<Value = JobGen> {
    let shape = (
        prop_oneof![3 => Just(0u64), 5 => 0u64..=300],
        prop_oneof![6 => Just(1u32), 2 => Just(2u32), 1 => Just(3u32)],
        prop_oneof![3 => Just(0u32), 1 => 1u32..=2],
        proptest::option::weighted(0.4, 1u32..=6),
        1u32..=4,
        0u8..=4,
        100u64..=32_000,
        0u8..=8,
        prop_oneof![4 => Just(1u32), 2 => Just(2u32), 1 => 3u32..=4],
        any::<u8>(),
        any::<bool>(),
        proptest::option::weighted(0.2, 1u32..=4),
    );
    let life = (
        proptest::bool::weighted(0.15),
        0u8..=2,
        60u64..=7_200,
        proptest::option::weighted(0.85, 1u64..=4_000),
        prop_oneof![4 => Just(0i32), 1 => Just(1i32)],
        proptest::option::weighted(0.25, (1u32..=5, proptest::option::weighted(0.5, 1u32..=3))),
        proptest::option::weighted(
            0.3,
            (
                any::<u8>(),
                0u8..=4,
                proptest::option::weighted(0.3, any::<u8>()),
            ),
        ),
        proptest::bool::weighted(0.05),
        proptest::option::weighted(0.1, 0u64..=900),
        proptest::option::of(any::<bool>()),
        (0u8..=2, 0u8..=2, 0u8..=2),
        proptest::option::weighted(0.05, 1u64..=600),
    );
    (shape, life).prop_map(
        |(
            (
                submit_delta,
                min_nodes,
                extra_nodes,
                ntasks,
                cpus_per_task,
                mem_kind,
                mem,
                gpu_kind,
                gpu_count,
                gpu_type,
                gpu_typed,
                cpus_per_gpu,
            ),
            (
                exclusive,
                time_kind,
                time_limit,
                run_time,
                exit_code,
                array,
                dependency,
                hold,
                begin,
                requeue,
                (user, name, partitions),
                requeue_after_start,
            ),
        )| JobGen {
            submit_delta,
            min_nodes,
            extra_nodes,
            ntasks,
            cpus_per_task,
            mem_kind,
            mem,
            gpu_kind,
            gpu_count,
            gpu_type,
            gpu_typed,
            cpus_per_gpu,
            exclusive,
            time_kind,
            time_limit,
            run_time,
            exit_code,
            array,
            dependency,
            hold,
            begin,
            requeue,
            user,
            name,
            partitions,
            requeue_after_start,
        },
    )
}

fn action_gen() -> impl Strategy<Value = ActionGen> {
    (0u64..=3_000, 0u8..=7, any::<u8>(), any::<bool>()).prop_map(|(at, kind, target, admin)| {
        ActionGen {
            at,
            kind,
            target,
            admin,
        }
    })
}

fn params_gen() -> impl Strategy<Value = ParamsGen> {
    (
        1u64..=60,
        1u64..=60,
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(0u64), Just(30u64)],
        0u64..=59,
        proptest::option::of(100u64..=4_000),
        any::<bool>(),
        0u64..=150,
        0u64..=4,
        proptest::option::of(0u64..=200),
    )
        .prop_map(
            |(
                sched_interval,
                bf_interval,
                pass_on_submit,
                pass_on_end,
                timelimit_check_interval,
                ctld_phase,
                def_mem_per_cpu,
                job_requeue,
                cred_expire,
                requeue_completing,
                main_after_ends_from,
            )| ParamsGen {
                sched_interval,
                bf_interval,
                pass_on_submit,
                pass_on_end,
                timelimit_check_interval,
                ctld_phase,
                def_mem_per_cpu,
                job_requeue,
                cred_expire,
                requeue_completing,
                main_after_ends_from,
            },
        )
}

// ---- the scenario ---------------------------------------------------------------

/// A complete engine input (the job list is kept to rebuild the iterator).
#[derive(Clone)]
struct Scenario {
    cluster: Cluster,
    params: SchedParams,
    specs: Vec<JobSpec>,
    actions: Vec<TimedAction>,
    horizon: Option<Time>,
    record_reasons: bool,
    /// The failure model's stream (empty: no failure model).
    failures: Vec<TimedAction>,
}

/// A compact description for failure reports (the full `Cluster` is noisy).
impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "Scenario {{")?;
        writeln!(f, "  params: {:?}", self.params)?;
        writeln!(f, "  horizon: {:?}", self.horizon)?;
        let types: Vec<&str> = self
            .cluster
            .gpu_types
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        writeln!(f, "  gpu types: {types:?}")?;
        for n in &self.cluster.nodes {
            let gpus: Vec<u16> = n.gpus.iter().map(|g| g.ty.0).collect();
            writeln!(
                f,
                "  node {}: {}x{}x{} cores, {} MiB, weight {}, {:?}, gpu types by index {:?}",
                n.name,
                n.sockets,
                n.cores_per_socket,
                n.threads_per_core,
                n.memory_mib,
                n.weight,
                n.state,
                gpus
            )?;
        }
        for p in &self.cluster.partitions {
            writeln!(
                f,
                "  partition {} default={} tier={} nodes={:?} max_time={:?} default_time={:?}",
                p.name, p.default, p.priority_tier, p.nodes, p.max_time, p.default_time
            )?;
        }
        for (i, s) in self.specs.iter().enumerate() {
            writeln!(
                f,
                "  sub {i} {}: submit {} run {:?} exit {} user {} name {} array {:?} dep {:?} \
                 begin {:?} hold {} requeue {:?} requeue_after_start {:?}\n      request {:?}",
                s.key,
                s.submit,
                s.run_time,
                s.exit_code,
                s.user,
                s.name,
                s.array(),
                s.dependency(),
                s.begin,
                s.hold,
                s.requeue,
                s.requeue_after_start(),
                s.request
            )?;
        }
        for a in &self.actions {
            writeln!(f, "  at {}: {:?}", a.at, a.action)?;
        }
        for a in &self.failures {
            writeln!(f, "  failure model at {}: {:?}", a.at, a.action)?;
        }
        for (i, sp) in self.specs.iter().enumerate() {
            if *sp.behavior() != gresim_model::job::JobBehavior::default() {
                writeln!(f, "  sub {i} behavior {:?}", sp.behavior())?;
            }
        }
        write!(f, "}}")
    }
}

fn build_cluster(g: &ClusterGen) -> Cluster {
    let (model_name, short) = WHOLE_MODELS[g.whole_model];
    let whole_model = catalog::model_by_name(model_name).expect("catalog model");
    let mut gpu_types = vec![GpuType {
        name: short.to_string(),
        model: whole_model,
        mig: None,
    }];
    let mig: Option<(GpuTypeId, &'static MigProfile)> = g.mig.map(|i| {
        let model = catalog::model_by_name("A100-SXM4-80GB").expect("catalog model");
        let profile = catalog::model(model)
            .mig_profile(MIG_PROFILES[i])
            .expect("catalog MIG profile");
        gpu_types.push(GpuType {
            name: format!("a100_{}", profile.name),
            model,
            mig: Some(profile),
        });
        (GpuTypeId(1), profile)
    });
    let mig_model = catalog::model_by_name("A100-SXM4-80GB").expect("catalog model");
    let nodes: Vec<Node> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let socket = n.gpu_socket.map(|s| s % n.sockets);
            let whole = n.whole_gpus;
            let mut gpus: Vec<GpuDevice> = (0..whole)
                .map(|p| GpuDevice {
                    ty: GpuTypeId(0),
                    model: whole_model,
                    socket,
                    phys: p,
                    mig: None,
                })
                .collect();
            if let Some((ty, profile)) = mig {
                let count = n.mig_gpus.min(8 - whole);
                let per_gpu = profile.max_instances;
                for k in 0..count {
                    gpus.push(GpuDevice {
                        ty,
                        model: mig_model,
                        socket,
                        phys: whole + k / per_gpu,
                        mig: Some(MigInstance {
                            profile,
                            start: profile.starts[usize::from(k % per_gpu)],
                        }),
                    });
                }
            }
            Node {
                name: format!("node{:02}", i + 1),
                sockets: n.sockets,
                cores_per_socket: n.cores_per_socket,
                threads_per_core: n.threads_per_core,
                memory_mib: n.memory_mib,
                features: Vec::new(),
                weight: n.weight,
                gpus,
                gpu_links: None,
                state: match n.state {
                    18 => NodeAdminState::Drain,
                    19 => NodeAdminState::Down,
                    _ => NodeAdminState::Up,
                },
            }
        })
        .collect();
    let all: Vec<NodeId> = (0..nodes.len()).map(NodeId::from_idx).collect();
    let mut partitions = vec![Partition {
        name: "main".into(),
        nodes: all.clone(),
        default: true,
        max_time: g.max_time,
        default_time: g.default_time,
        priority_tier: 1,
        priority_job_factor: 1,
        min_nodes: 0,
        max_nodes: None,
        state: PartitionState::Up,
        preempt_mode: None,
        grace_time: 0,
        oversubscribe: 1,
        force: false,
        exclusive: false,
    }];
    if let Some((mask, tier, over)) = g.second {
        let mut members: Vec<NodeId> = all
            .iter()
            .copied()
            .filter(|n| mask & (1 << n.idx()) != 0)
            .collect();
        if members.is_empty() {
            members.push(NodeId(0));
        }
        partitions.push(Partition {
            name: "second".into(),
            nodes: members,
            default: false,
            max_time: None,
            default_time: None,
            priority_tier: tier,
            priority_job_factor: 1,
            min_nodes: 0,
            max_nodes: None,
            state: PartitionState::Up,
            preempt_mode: None,
            grace_time: 0,
            oversubscribe: if over == 1 { 2 } else { 1 },
            force: over == 2,
            exclusive: false,
        });
    }
    Cluster::new(nodes, partitions, gpu_types)
}

/// Builds a request the way `sbatch` and gresim-io would accept it.
fn build_request(g: &JobGen, cluster: &Cluster) -> JobRequest {
    let ntypes = cluster.gpu_types.len();
    let ty = |pick: u8| GpuTypeId::from_idx(usize::from(pick) % ntypes);
    let maybe_ty = |pick: u8| g.gpu_typed.then(|| ty(pick));
    let mut r = JobRequest {
        min_nodes: g.min_nodes,
        max_nodes: g.min_nodes + g.extra_nodes,
        ntasks: g.ntasks,
        cpus_per_task: g.cpus_per_task,
        exclusive: g.exclusive,
        ..JobRequest::default()
    };
    match g.gpu_kind {
        4 => {
            r.gpus_per_node = vec![GpuReq {
                ty: None,
                count: g.gpu_count,
            }]
        }
        5 => {
            r.gpus_per_node = vec![GpuReq {
                ty: Some(ty(g.gpu_type)),
                count: g.gpu_count,
            }]
        }
        6 => {
            r.gpus_per_node = vec![GpuReq {
                ty: Some(ty(g.gpu_type)),
                count: g.gpu_count,
            }];
            let other = ty(g.gpu_type.wrapping_add(1));
            if other != ty(g.gpu_type) {
                r.gpus_per_node.push(GpuReq {
                    ty: Some(other),
                    count: 1,
                });
            }
        }
        7 => {
            // `--gpus` must be at least `-N`; it also caps the node count.
            let count = g.gpu_count.max(r.min_nodes);
            r.gpus_per_job = Some(GpuReq {
                ty: maybe_ty(g.gpu_type),
                count,
            });
            r.max_nodes = r.max_nodes.min(count);
        }
        8 => {
            r.gpus_per_task = Some(GpuReq {
                ty: maybe_ty(g.gpu_type),
                count: g.gpu_count.min(2),
            });
            r.ntasks = Some(g.ntasks.unwrap_or(r.min_nodes));
        }
        _ => {}
    }
    if r.wants_gpus() && g.cpus_per_task == 1 {
        r.cpus_per_gpu = g.cpus_per_gpu;
    }
    r.mem = match g.mem_kind {
        1 => MemReq::PerNode(g.mem),
        2 => MemReq::PerCpu(g.mem / 8 + 1),
        3 if r.wants_gpus() => MemReq::PerGpu(g.mem / 4 + 1),
        4 => MemReq::WholeNode,
        _ => MemReq::Default,
    };
    r.time_limit = match g.time_kind {
        1 => Some(Some(g.time_limit)),
        2 => Some(None),
        _ => None,
    };
    let two = cluster.partitions.len() == 2;
    r.partitions = match g.partitions {
        1 if two => vec![PartId(1)],
        2 if two => vec![PartId(0), PartId(1)],
        _ => Vec::new(),
    };
    r
}

fn build_specs(gens: &[JobGen], cluster: &Cluster) -> Vec<JobSpec> {
    let mut specs: Vec<JobSpec> = Vec::with_capacity(gens.len());
    let mut t = 0;
    for (i, g) in gens.iter().enumerate() {
        t += g.submit_delta;
        let array = g.array.map(|(n, throttle)| ArraySpec {
            indices: (0..n).collect(),
            throttle,
            step: 1,
        });
        let dependency = match g.dependency {
            Some((back, kind, task)) if i > 0 => {
                let kind = [
                    DepKind::After,
                    DepKind::AfterAny,
                    DepKind::AfterOk,
                    DepKind::AfterNotOk,
                    DepKind::Singleton,
                ][usize::from(kind)];
                let target = usize::from(back) % i;
                let task = task.and_then(|pick| {
                    let a = specs[target].array()?;
                    Some(a.indices[usize::from(pick) % a.indices.len()])
                });
                Some(Dependency {
                    terms: vec![if kind == DepKind::Singleton {
                        DepTerm {
                            kind,
                            target: None,
                            task: None,
                        }
                    } else {
                        DepTerm {
                            kind,
                            target: Some(target as u32),
                            task,
                        }
                    }],
                    any: false,
                })
            }
            _ => None,
        };
        let mut spec = JobSpec::new(
            format!("s{i}"),
            format!("name{}", g.name),
            format!("user{}", g.user),
            Arc::new(build_request(g, cluster)),
            t,
            g.run_time.map_or(RunTime::ToLimit, RunTime::Secs),
        );
        spec.exit_code = g.exit_code;
        spec.set_array(array);
        spec.requeue = g.requeue;
        spec.set_dependency(dependency);
        spec.begin = g.begin.map(|b| t + b);
        spec.hold = g.hold;
        spec.set_requeue_after_start(g.requeue_after_start);
        specs.push(spec);
    }
    specs
}

/// Timed actions. With `after_submit`, an action on a job comes at least one
/// second after the job's submission (an action on a job that does not exist
/// yet is what `job_actions_before_submission_are_harmless` exercises).
fn build_actions(
    gens: &[ActionGen],
    nodes: usize,
    specs: &[JobSpec],
    after_submit: bool,
) -> Vec<TimedAction> {
    let mut node_seconds: std::collections::BTreeSet<(usize, Time)> = Default::default();
    gens.iter()
        .map(|a| {
            let node_idx = usize::from(a.target) % nodes;
            let node = vec![NodeId::from_idx(node_idx)];
            let sub = (usize::from(a.target) % specs.len()) as u32;
            let mut at = if a.kind >= 4 && after_submit {
                a.at.max(specs[sub as usize].submit + 1)
            } else {
                a.at
            };
            if a.kind < 4 {
                // At most one action per node and second: their order within
                // a second is the engine's business.
                while !node_seconds.insert((node_idx, at)) {
                    at += 1;
                }
            }
            let action = match a.kind {
                0 => Action::NodeDown(node),
                1 => Action::NodeUp(node),
                2 => Action::NodeDrain(node),
                3 => Action::NodeResume(node),
                4 => Action::Hold {
                    sub,
                    admin: a.admin,
                },
                5 => Action::Release { sub, owner: false },
                6 => Action::Cancel { sub },
                _ => Action::Requeue { sub },
            };
            TimedAction { at, action }
        })
        .collect()
}

fn build_params(g: &ParamsGen) -> SchedParams {
    SchedParams {
        sched_interval: g.sched_interval,
        bf_interval: g.bf_interval,
        pass_on_submit: g.pass_on_submit,
        pass_on_end: g.pass_on_end,
        timelimit_check_interval: g.timelimit_check_interval,
        ctld_phase: g.ctld_phase,
        def_mem_per_cpu: g.def_mem_per_cpu,
        job_requeue: g.job_requeue,
        cred_expire: g.cred_expire,
        requeue_completing: g.requeue_completing,
        main_after_ends_from: g.main_after_ends_from,
        ..SchedParams::default()
    }
}

/// A scenario whose job actions all come after the job's submission.
fn scenario() -> impl Strategy<Value = Scenario> {
    scenario_with(true)
}

fn scenario_with(after_submit: bool) -> impl Strategy<Value = Scenario> {
    (
        cluster_gen(),
        params_gen(),
        proptest::collection::vec(job_gen(), 1..=20),
        proptest::collection::vec(action_gen(), 0..=8),
        proptest::option::weighted(0.2, 500u64..=20_000),
        any::<bool>(),
    )
        .prop_map(move |(c, p, jobs, actions, horizon, record_reasons)| {
            let cluster = build_cluster(&c);
            let specs = build_specs(&jobs, &cluster);
            let actions = build_actions(&actions, cluster.nodes.len(), &specs, after_submit);
            Scenario {
                params: build_params(&p),
                cluster,
                specs,
                actions,
                horizon,
                record_reasons,
                failures: Vec::new(),
            }
        })
}

/// A scenario where every job has the same user and name, every job with a
/// dependency has `--dependency=singleton` instead, and every cancel is a
/// requeue: it stresses the bookkeeping of who blocks a singleton. (Derived
/// job by job, so proptest still shrinks it well.)
fn singleton_scenario() -> impl Strategy<Value = Scenario> {
    scenario().prop_map(|mut s| {
        for spec in &mut s.specs {
            spec.user = "user0".into();
            spec.name = "name0".into();
            if spec.dependency().is_some() {
                spec.set_dependency(Some(Dependency {
                    terms: vec![DepTerm {
                        kind: DepKind::Singleton,
                        target: None,
                        task: None,
                    }],
                    any: false,
                }));
            }
        }
        for a in &mut s.actions {
            if let Action::Cancel { sub } = a.action {
                a.action = Action::Requeue { sub };
            }
        }
        s
    })
}

fn simulate(s: &Scenario) -> Result<SimOutput, TestCaseError> {
    simulate_with(s, gresim_sched::PolicyKind::Fifo.build())
}

fn simulate_with(
    s: &Scenario,
    policy: Box<dyn gresim_sched::Policy>,
) -> Result<SimOutput, TestCaseError> {
    let input = SimInput {
        cluster: s.cluster.clone(),
        params: s.params.clone(),
        jobs: Box::new(s.specs.clone().into_iter().map(Ok)),
        actions: s.actions.clone(),
        horizon: s.horizon,
        stall: None,
        record_reasons: s.record_reasons,
        failures: (!s.failures.is_empty())
            .then(|| Box::new(s.failures.clone().into_iter()) as gresim_engine::FailureSource<'_>),
        reservations: Default::default(),
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        gresim_engine::run(input, policy)
    })) {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(e)) => Err(TestCaseError::fail(format!(
            "the engine failed: {e}\nin {s:?}"
        ))),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|m| m.to_string()))
                .unwrap_or_default();
            Err(TestCaseError::fail(format!(
                "the engine panicked: {msg}\nin {s:?}"
            )))
        }
    }
}

/// Runs `check` on the output of `s`; a failure names the scenario, so the
/// reported reason always goes with the case that produced it.
fn check_with<F>(s: &Scenario, check: F) -> Result<(), TestCaseError>
where
    F: FnOnce(&Scenario, &SimOutput) -> Result<(), TestCaseError>,
{
    let out = simulate(s)?;
    check(s, &out).map_err(|e| match e {
        TestCaseError::Fail(why) => TestCaseError::fail(format!("{why}\nin {s:?}")),
        other => other,
    })
}

// ---- helpers over the output ----------------------------------------------------------

/// One run's hold on one node, as an interval `[start, end)`.
struct Hold<'a> {
    job: usize,
    run: usize,
    start: Time,
    /// `None`: still running when the simulation stopped.
    end: Option<Time>,
    na: &'a NodeAlloc,
    exclusive: bool,
}

impl Hold<'_> {
    fn end_or_max(&self) -> Time {
        self.end.unwrap_or(Time::MAX)
    }
    fn covers(&self, t: Time) -> bool {
        self.start <= t && t < self.end_or_max()
    }
    fn overlaps(&self, o: &Hold<'_>) -> bool {
        self.start < o.end_or_max() && o.start < self.end_or_max()
    }
    fn who(&self) -> String {
        format!(
            "job {} run {} [{}, {:?})",
            self.job, self.run, self.start, self.end
        )
    }
}

/// Every run's hold on each node, by node.
fn holds(out: &SimOutput) -> Vec<Vec<Hold<'_>>> {
    let mut by_node: Vec<Vec<Hold<'_>>> =
        (0..out.cluster.nodes.len()).map(|_| Vec::new()).collect();
    for (ji, j) in out.jobs.iter().enumerate() {
        for (ri, r) in j.runs.iter().enumerate() {
            for na in &r.alloc.nodes {
                by_node[na.node.idx()].push(Hold {
                    job: ji,
                    run: ri,
                    start: r.start,
                    end: r.end,
                    na,
                    exclusive: r.alloc.exclusive,
                });
            }
        }
    }
    by_node
}

fn duration(start: Time, end: Option<Time>, to: Time) -> u128 {
    u128::from(end.unwrap_or(to).saturating_sub(start))
}

/// `cases` per property, unless `PROPTEST_CASES` asks for another number
/// (for a long bug hunt: `PROPTEST_CASES=100000 cargo test --release …`).
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        // Shrunk failures are reported in the test output; nothing is
        // written next to the sources.
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    }
}

// ---- properties ---------------------------------------------------------------

/// No core, MiB or GPU is ever held twice; every allocation lies within its node.
fn check_no_over_allocation(out: &SimOutput) -> Result<(), TestCaseError> {
    for (ji, j) in out.jobs.iter().enumerate() {
        for (ri, r) in j.runs.iter().enumerate() {
            let ids: Vec<NodeId> = r.alloc.node_ids().collect();
            prop_assert!(!ids.is_empty(), "job {ji} run {ri} holds no node");
            prop_assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "job {ji} run {ri} lists nodes {ids:?}: not strictly increasing"
            );
        }
    }
    for (ni, hs) in holds(out).iter().enumerate() {
        let node = &out.cluster.nodes[ni];
        let all_cores = CoreSet::first(node.cores());
        for h in hs {
            prop_assert!(
                h.na.cores.is_subset(&all_cores),
                "{} holds cores {:?} on {} which has {} cores",
                h.who(),
                h.na.cores,
                node.name,
                node.cores()
            );
            prop_assert!(
                node.gpus.len() >= 64 || h.na.gpus >> node.gpus.len() == 0,
                "{} holds GPU mask {:#b} on {} which has {} GPUs",
                h.who(),
                h.na.gpus,
                node.name,
                node.gpus.len()
            );
            prop_assert!(
                h.na.mem_mib <= node.memory_mib,
                "{} holds {} MiB on {} which has {} MiB",
                h.who(),
                h.na.mem_mib,
                node.name,
                node.memory_mib
            );
            if let Some(e) = h.end {
                prop_assert!(h.start <= e, "{} ends before it starts", h.who());
            }
        }
        for (a, ha) in hs.iter().enumerate() {
            for hb in &hs[a + 1..] {
                if !ha.overlaps(hb) {
                    continue;
                }
                let common: Vec<u32> = ha
                    .na
                    .cores
                    .iter()
                    .filter(|c| hb.na.cores.contains(*c))
                    .collect();
                prop_assert!(
                    common.is_empty(),
                    "{} and {} both hold cores {:?} on {}",
                    ha.who(),
                    hb.who(),
                    common,
                    node.name
                );
                prop_assert!(
                    ha.na.gpus & hb.na.gpus == 0,
                    "{} and {} both hold GPUs {:#b} on {}",
                    ha.who(),
                    hb.who(),
                    ha.na.gpus & hb.na.gpus,
                    node.name
                );
                prop_assert!(
                    !ha.exclusive && !hb.exclusive,
                    "{} and {} share {} although one is exclusive",
                    ha.who(),
                    hb.who(),
                    node.name
                );
            }
        }
        // Memory: the sum over the runs covering any instant. The sum only
        // grows at a start, so checking every start suffices.
        for h in hs {
            let t = h.start;
            let sum: u64 = hs
                .iter()
                .filter(|o| o.covers(t))
                .map(|o| o.na.mem_mib)
                .sum();
            prop_assert!(
                sum <= node.memory_mib,
                "at t={t} runs on {} hold {sum} MiB of {} MiB: {:?}",
                node.name,
                node.memory_mib,
                hs.iter()
                    .filter(|o| o.covers(t))
                    .map(|o| (o.who(), o.na.mem_mib))
                    .collect::<Vec<_>>()
            );
        }
    }
    Ok(())
}

/// Each job ends at most once, in exactly one final state, and its runs tell a
/// consistent story.
fn check_jobs_end_once(s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    let expected_jobs: usize = s.specs.iter().map(|sp| sp.task_count()).sum();
    if !out.hit_horizon {
        prop_assert_eq!(
            out.jobs.len(),
            expected_jobs,
            "every submission (and array task) must have a job record"
        );
        prop_assert_eq!(out.specs.len(), s.specs.len());
    }
    for (ji, j) in out.jobs.iter().enumerate() {
        let n = j.runs.len();
        for (ri, r) in j.runs.iter().enumerate().take(n.saturating_sub(1)) {
            prop_assert!(
                r.end.is_some(),
                "job {ji}: run {ri} of {n} has no end although a later run exists"
            );
            prop_assert!(
                matches!(r.state, JobState::Requeued | JobState::NodeFail),
                "job {ji}: run {ri} of {n} ended {:?}; only a requeue starts another run",
                r.state
            );
        }
        for (ri, w) in j.runs.windows(2).enumerate() {
            let end = w[0].end.unwrap_or(Time::MAX);
            prop_assert!(
                w[1].start >= end,
                "job {ji}: run {} starts at {} before run {ri} ended at {end}",
                ri + 1,
                w[1].start
            );
        }
        let last = j.runs.last();
        match j.state {
            JobState::Running => {
                prop_assert!(
                    out.hit_horizon,
                    "job {ji} is still RUNNING although no horizon stopped the run"
                );
                prop_assert!(s.horizon.is_some(), "job {ji} is RUNNING without a horizon");
                let r = last.ok_or_else(|| {
                    TestCaseError::fail(format!("job {ji} RUNNING without a run"))
                })?;
                prop_assert!(
                    r.end.is_none() && r.state == JobState::Running,
                    "job {ji} RUNNING but its last run ended {:?} at {:?}",
                    r.state,
                    r.end
                );
            }
            JobState::Pending => {
                if let Some(r) = last {
                    prop_assert!(
                        r.end.is_some()
                            && matches!(r.state, JobState::Requeued | JobState::NodeFail),
                        "job {ji} PENDING after run {:?} ending {:?}",
                        r.state,
                        r.end
                    );
                }
            }
            JobState::Rejected => {
                prop_assert!(last.is_none(), "job {ji} REJECTED but it ran");
                prop_assert!(
                    j.rejected().is_some(),
                    "job {ji} REJECTED without a message"
                );
            }
            JobState::Cancelled => {
                if let Some(r) = last {
                    prop_assert!(r.end.is_some(), "job {ji} CANCELLED with an open run");
                    prop_assert!(
                        matches!(
                            r.state,
                            JobState::Cancelled | JobState::Requeued | JobState::NodeFail
                        ),
                        "job {ji} CANCELLED but its last run ended {:?}",
                        r.state
                    );
                }
            }
            other => {
                let r = last.ok_or_else(|| {
                    TestCaseError::fail(format!("job {ji} ended {other:?} without ever running"))
                })?;
                prop_assert!(r.end.is_some(), "job {ji} ended {other:?} with an open run");
                prop_assert_eq!(
                    r.state,
                    other,
                    "job {} ended {:?} but its last run ended {:?}",
                    ji,
                    other,
                    r.state
                );
            }
        }
        // A run is open exactly when the job is RUNNING.
        for (ri, r) in j.runs.iter().enumerate() {
            let open = r.end.is_none();
            let is_last = ri + 1 == n;
            prop_assert_eq!(
                open,
                is_last && j.state == JobState::Running,
                "job {} run {} open={} but the job is {:?}",
                ji,
                ri,
                open,
                j.state
            );
            prop_assert_eq!(
                r.state == JobState::Running,
                open,
                "job {} run {} state {:?} end {:?}",
                ji,
                ri,
                r.state,
                r.end
            );
        }
    }
    Ok(())
}

/// A job left PENDING when the event queue ran dry must be stuck for a
/// reason that no later event could have changed.
/// Whether, with the nodes in their final admin states, a partition of `j`
/// has fewer available (UP) nodes than it needs.
fn short_of_nodes(out: &SimOutput, j: &gresim_model::job::Job) -> bool {
    let mut state: Vec<NodeAdminState> = out.cluster.nodes.iter().map(|n| n.state).collect();
    for c in &out.node_log {
        state[c.node.idx()] = c.state;
    }
    let parts: Vec<PartId> = if j.request.partitions.is_empty() {
        out.cluster.default_partition().into_iter().collect()
    } else {
        j.request.partitions.clone()
    };
    parts.into_iter().any(|p| {
        let up = out
            .cluster
            .partition(p)
            .nodes
            .iter()
            .filter(|n| state[n.idx()] == NodeAdminState::Up)
            .count();
        up < j.request.min_nodes.max(1) as usize
    })
}

fn check_stuck_jobs_explained(_s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    if out.hit_horizon {
        return Ok(());
    }
    for (ji, j) in out.jobs.iter().enumerate() {
        if j.state != JobState::Pending {
            continue;
        }
        let spec = &out.specs[j.sub as usize];
        match j.reason {
            Reason::JobHeldUser | Reason::JobHeldAdmin => {
                prop_assert!(
                    j.held.is_some(),
                    "job {ji} has reason {:?} but is not held",
                    j.reason
                );
            }
            Reason::DependencyNeverSatisfied
            | Reason::ReqNodeNotAvail
            | Reason::PartitionConfig
            | Reason::PartitionTimeLimit
            | Reason::PartitionNodeLimit
            | Reason::PartitionDown
            | Reason::PartitionInactive
            | Reason::BadConstraints => {}
            // `_schedule()`: the partition has fewer available (not DOWN or
            // DRAINED) nodes than the job needs.
            Reason::Resources if short_of_nodes(out, j) => {}
            Reason::Dependency => {
                let dep = spec.dependency().ok_or_else(|| {
                    TestCaseError::fail(format!("job {ji} waits on a dependency it does not have"))
                })?;
                // The generator writes single-term dependencies.
                let t = dep.terms[0];
                let blocked = match t.target {
                    None => out.jobs.iter().enumerate().any(|(k, o)| {
                        k < ji
                            && o.sub != j.sub
                            && !o.state.is_terminal()
                            && out.specs[o.sub as usize].user == spec.user
                            && out.specs[o.sub as usize].name == spec.name
                    }),
                    Some(target) => {
                        let tjobs: Vec<_> = out
                            .jobs
                            .iter()
                            .filter(|o| o.sub == target)
                            .filter(|o| t.task.is_none() || o.task == t.task)
                            .collect();
                        match t.kind {
                            DepKind::After => tjobs
                                .iter()
                                .all(|o| o.runs.is_empty() && !o.state.is_terminal()),
                            _ => tjobs.iter().any(|o| !o.state.is_terminal()),
                        }
                    }
                };
                prop_assert!(
                    blocked,
                    "job {ji} still waits on {:?} although its dependee is done (states {:?})",
                    t,
                    out.jobs
                        .iter()
                        .filter(|o| t.target.is_some_and(|x| o.sub == x))
                        .map(|o| o.state)
                        .collect::<Vec<_>>()
                );
            }
            other => {
                return Err(TestCaseError::fail(format!(
                    "job {ji} (sub {}) is left PENDING with reason {other:?} although the run \
                     ended with nothing running (end {}): {:?}",
                    j.sub, out.end_time, spec.request
                )));
            }
        }
    }
    Ok(())
}

/// Time only moves forward.
fn check_time_forward(s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    for w in out.timeline.windows(2) {
        prop_assert!(
            w[0].t < w[1].t,
            "timeline samples at {} then {}",
            w[0].t,
            w[1].t
        );
    }
    if let Some(last) = out.timeline.last() {
        prop_assert!(last.t <= out.end_time, "a sample after the end time");
    }
    if let Some(h) = s.horizon {
        prop_assert!(
            out.end_time <= h,
            "end time {} beyond horizon {h}",
            out.end_time
        );
    }
    prop_assert!(out.usage.from <= out.usage.to);
    // An admin requeue (REQUEUED) counts from slurmd's kill report, a node
    // failure (NODE_FAIL) from the failure.
    let delay = |st: JobState| {
        out.params.cred_expire
            + 1
            + if st == JobState::Requeued {
                out.params.requeue_completing
            } else {
                0
            }
    };
    for (ji, j) in out.jobs.iter().enumerate() {
        let spec = &out.specs[j.sub as usize];
        prop_assert_eq!(j.first_submit, spec.submit, "job {} first_submit", ji);
        for (ri, r) in j.runs.iter().enumerate() {
            prop_assert!(
                r.start >= spec.submit,
                "job {ji} run {ri} starts at {} before its submission at {}",
                r.start,
                spec.submit
            );
            if let Some(b) = spec.begin {
                prop_assert!(
                    r.start >= b,
                    "job {ji} run {ri} starts at {} before --begin {b}",
                    r.start
                );
            }
            if let Some(e) = r.end {
                prop_assert!(
                    r.start <= e,
                    "job {ji} run {ri} ends at {e} before its start {}",
                    r.start
                );
                prop_assert!(
                    e <= out.end_time,
                    "job {ji} run {ri} ends at {e} after the end {}",
                    out.end_time
                );
            }
            prop_assert!(
                r.start <= out.end_time,
                "job {ji} run {ri} starts after the end"
            );
        }
        for (ri, w) in j.runs.windows(2).enumerate() {
            if let Some(e) = w[0].end {
                if matches!(w[0].state, JobState::Requeued | JobState::NodeFail) {
                    let d = delay(w[0].state);
                    prop_assert!(
                        w[1].start >= e + d,
                        "job {ji}: run {} starts at {} but run {ri} was requeued at {e} \
                         (cred_expire {}, requeue_completing {}: not before {})",
                        ri + 1,
                        w[1].start,
                        out.params.cred_expire,
                        out.params.requeue_completing,
                        e + d
                    );
                }
            }
        }
    }
    Ok(())
}

/// The clock stops soon after the last thing that happens. The end time is
/// the usage window's end and the summary's horizon, so an event that
/// changes nothing (the end event of a run that was already cancelled or
/// requeued) must not stretch it.
fn check_end_time(s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    if out.hit_horizon {
        return Ok(());
    }
    let p = &out.params;
    let mut last: Time = 0;
    let mut what = String::from("nothing");
    let mut see = |t: Time, w: &dyn Fn() -> String| {
        if t > last {
            last = t;
            what = w();
        }
    };
    for (i, sp) in out.specs.iter().enumerate() {
        see(sp.submit, &|| format!("submission {i}"));
        if let Some(b) = sp.begin {
            see(b, &|| format!("begin time of submission {i}"));
        }
    }
    for (i, a) in s.actions.iter().enumerate() {
        see(a.at, &|| format!("action {i}"));
    }
    for (ji, j) in out.jobs.iter().enumerate() {
        let spec = &out.specs[j.sub as usize];
        for (ri, r) in j.runs.iter().enumerate() {
            see(r.start, &|| format!("start of job {ji} run {ri}"));
            if let Some(e) = r.end {
                see(e, &|| format!("end of job {ji} run {ri}"));
                if matches!(r.state, JobState::Requeued | JobState::NodeFail) {
                    let wait = if r.state == JobState::Requeued {
                        p.requeue_completing
                    } else {
                        0
                    };
                    see(e + wait + p.cred_expire + 1, &|| {
                        format!("requeued job {ji} eligible again")
                    });
                }
            }
            if let (0, Some(d)) = (ri, spec.requeue_after_start()) {
                see(r.start + d, &|| format!("requeue_after_start of job {ji}"));
            }
        }
    }
    // Passes and time-limit checks run on their ticks after the last change.
    let slack = p.sched_interval + p.bf_interval + p.ctld_phase + p.timelimit_check_interval + 1;
    prop_assert!(
        out.end_time <= last + slack,
        "the run ends at {} but the last thing that happened was the {what} at {last} \
         (allowing {slack} s for pass and check ticks); runs: {:?}",
        out.end_time,
        out.jobs
            .iter()
            .map(|j| j
                .runs
                .iter()
                .map(|r| (r.start, r.end, r.state))
                .collect::<Vec<_>>())
            .collect::<Vec<_>>()
    );
    Ok(())
}

/// The usage integrals equal the sum over the runs.
fn check_usage(out: &SimOutput) -> Result<(), TestCaseError> {
    let to = out.usage.to;
    let ntypes = out.cluster.gpu_types.len();
    let mut gpu_by_type = vec![0u128; ntypes];
    let mut gpu_total = 0u128;
    let mut cpu_total = 0u128;
    let mut sevenths = 0u128;
    for j in &out.jobs {
        for r in &j.runs {
            prop_assert!(r.start >= out.usage.from, "a run starts before usage.from");
            let d = duration(r.start, r.end, to);
            gpu_total += u128::from(r.alloc.gpu_count()) * d;
            cpu_total += u128::from(r.alloc.cpu_count()) * d;
            for na in &r.alloc.nodes {
                let node = &out.cluster.nodes[na.node.idx()];
                for g in gpu_indices(na.gpus) {
                    let ty = node.gpus[usize::from(g)].ty;
                    gpu_by_type[ty.idx()] += d;
                    sevenths += u128::from(out.cluster.gpu_type(ty).compute_sevenths()) * d;
                }
            }
        }
    }
    let engine_gpu: u128 = out.usage.gpu_alloc_secs.iter().sum();
    prop_assert_eq!(engine_gpu, gpu_total, "allocated GPU-seconds");
    prop_assert_eq!(out.usage.cpu_alloc_secs, cpu_total, "allocated CPU-seconds");
    prop_assert_eq!(
        &out.usage.gpu_alloc_secs,
        &gpu_by_type,
        "GPU-seconds by type"
    );
    prop_assert_eq!(
        out.usage.gpu_sevenths_alloc_secs,
        sevenths,
        "SM-weighted GPU-seconds"
    );
    // CPU-seconds of a run: what it holds on each node.
    for j in &out.jobs {
        for r in &j.runs {
            for na in &r.alloc.nodes {
                let tpc = u32::from(out.cluster.nodes[na.node.idx()].threads_per_core);
                prop_assert_eq!(na.cpus, na.cores.count() * tpc, "CPUs = cores x threads");
            }
        }
    }
    Ok(())
}

/// The timeline says what the runs say: at each sample, the allocated GPUs
/// and CPUs and the running jobs equal those of the runs covering that instant.
fn check_timeline(out: &SimOutput) -> Result<(), TestCaseError> {
    for smp in &out.timeline {
        let t = smp.t;
        let mut gpus = 0u32;
        let mut cpus = 0u32;
        let mut running = 0u32;
        for j in &out.jobs {
            for r in &j.runs {
                if r.start <= t && r.end.is_none_or(|e| t < e) {
                    gpus += r.alloc.gpu_count();
                    cpus += r.alloc.cpu_count();
                    running += 1;
                }
            }
        }
        prop_assert_eq!(
            (smp.alloc_gpus, smp.alloc_cpus, smp.running),
            (gpus, cpus, running),
            "sample at t={} (gpus, cpus, running) vs the runs",
            t
        );
    }
    Ok(())
}

/// Jobs start only on nodes that are up, and a node going down ends every
/// run on it at that instant.
fn check_node_states(s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    // Node actions in time order. The generator never puts two actions on
    // one node in the same second, so the order inside a second does not
    // matter here.
    let mut actions: Vec<(Time, usize, &Action)> = s
        .actions
        .iter()
        .enumerate()
        .filter(|(_, a)| a.at <= out.end_time)
        .map(|(i, a)| (a.at, i, &a.action))
        .collect();
    actions.sort_by_key(|&(t, i, _)| (t, i));
    let state_at = |node: NodeId, t: Time| -> NodeAdminState {
        let mut st = out.cluster.nodes[node.idx()].state;
        for &(at, _, a) in &actions {
            if at > t {
                break;
            }
            match a {
                Action::NodeDown(ns) if ns.contains(&node) => st = NodeAdminState::Down,
                Action::NodeUp(ns) | Action::NodeResume(ns) if ns.contains(&node) => {
                    st = NodeAdminState::Up
                }
                Action::NodeDrain(ns) if ns.contains(&node) => st = NodeAdminState::Drain,
                _ => {}
            }
        }
        st
    };
    for (ji, j) in out.jobs.iter().enumerate() {
        for (ri, r) in j.runs.iter().enumerate() {
            for n in r.alloc.node_ids() {
                // Passes and admin actions share a second in an order the
                // engine defines (docs/architecture.md); whichever it is, a
                // node DOWN or DRAINED through the whole second takes no job.
                let before = r
                    .start
                    .checked_sub(1)
                    .map_or(out.cluster.nodes[n.idx()].state, |t| state_at(n, t));
                let after = state_at(n, r.start);
                prop_assert!(
                    before == NodeAdminState::Up || after == NodeAdminState::Up,
                    "job {ji} run {ri} starts at {} on {} which is {before:?} before and \
                     {after:?} after that second",
                    r.start,
                    out.cluster.nodes[n.idx()].name
                );
                prop_assert!(
                    s.cluster.in_partition(r.partition, n),
                    "job {ji} run {ri} runs on node {n} outside its partition {}",
                    r.partition
                );
            }
        }
    }
    // Availability: the timeline and the usage integrals count what is not DOWN.
    let cluster = &out.cluster;
    for smp in &out.timeline {
        let up: u32 = (0..cluster.nodes.len())
            .filter(|&n| state_at(NodeId::from_idx(n), smp.t) != NodeAdminState::Down)
            .map(|n| cluster.nodes[n].gpus.len() as u32)
            .sum();
        prop_assert_eq!(smp.avail_gpus, up, "available GPUs at t={}", smp.t);
    }
    let (from, to) = (out.usage.from, out.usage.to);
    let mut points: Vec<Time> = vec![from, to];
    points.extend(actions.iter().map(|a| a.0).filter(|&t| from < t && t < to));
    points.sort_unstable();
    points.dedup();
    let mut gpu_avail = vec![0u128; cluster.gpu_types.len()];
    let mut sevenths_avail = 0u128;
    let mut cpu_avail = 0u128;
    for w in points.windows(2) {
        let dt = u128::from(w[1] - w[0]);
        for (n, node) in cluster.nodes.iter().enumerate() {
            if state_at(NodeId::from_idx(n), w[0]) == NodeAdminState::Down {
                continue;
            }
            cpu_avail += u128::from(node.cpus()) * dt;
            for d in &node.gpus {
                gpu_avail[d.ty.idx()] += dt;
                sevenths_avail += u128::from(cluster.gpu_type(d.ty).compute_sevenths()) * dt;
            }
        }
    }
    prop_assert_eq!(
        &out.usage.gpu_avail_secs,
        &gpu_avail,
        "available GPU-seconds by type"
    );
    prop_assert_eq!(out.usage.cpu_avail_secs, cpu_avail, "available CPU-seconds");
    prop_assert_eq!(
        out.usage.gpu_sevenths_avail_secs,
        sevenths_avail,
        "available SM-weighted GPU-seconds"
    );
    for &(at, _, a) in &actions {
        let Action::NodeDown(ns) = a else { continue };
        for (ji, j) in out.jobs.iter().enumerate() {
            for (ri, r) in j.runs.iter().enumerate() {
                // A run that starts in the very second its node goes down
                // may or may not be hit, depending on the in-second order.
                let on = r.alloc.node_ids().any(|n| ns.contains(&n));
                if on && r.start < at {
                    prop_assert!(
                        r.end.is_some_and(|e| e <= at),
                        "job {ji} run {ri} [{}, {:?}) survives its node going down at {at}",
                        r.start,
                        r.end
                    );
                }
            }
        }
    }
    Ok(())
}

/// How long runs last: a COMPLETED or FAILED run lasts exactly its run
/// time; a TIMEOUT run lasts its limit, rounded up to the next tick of the
/// time-limit check (a year when unlimited).
fn check_run_lengths(out: &SimOutput) -> Result<(), TestCaseError> {
    let iv = out.params.timelimit_check_interval;
    for (ji, j) in out.jobs.iter().enumerate() {
        for (ri, r) in j.runs.iter().enumerate() {
            let Some(end) = r.end else { continue };
            let d = end - r.start;
            let limit = gresim_sched::time_limit_in(&out.cluster, j, r.partition);
            match r.state {
                JobState::Completed | JobState::Failed => {
                    prop_assert_eq!(
                        j.run_time,
                        RunTime::Secs(d),
                        "job {} run {} ended {:?} after {} s",
                        ji,
                        ri,
                        r.state,
                        d
                    );
                    prop_assert_eq!(
                        r.state == JobState::Failed,
                        j.exit_code != 0,
                        "job {} with exit code {} ended {:?}",
                        ji,
                        j.exit_code,
                        r.state
                    );
                }
                JobState::Timeout => match limit {
                    Some(l) => {
                        if let RunTime::Secs(rt) = j.run_time {
                            prop_assert!(
                                rt > l,
                                "job {ji} run {ri} timed out although its run time {rt} s fits \
                                 its limit {l} s"
                            );
                        }
                        prop_assert!(
                            d >= l && d < l + iv.max(1),
                            "job {ji} run {ri} timed out after {d} s; limit {l} s, check every {iv} s"
                        );
                    }
                    None => prop_assert_eq!(d, 365 * 86_400, "job {} unlimited TIMEOUT", ji),
                },
                _ => {}
            }
        }
    }
    Ok(())
}

/// A job's process exits after its run time: no run lasts longer than that,
/// whatever the time-limit check does (slurmctld kills at its periodic check,
/// but a job that has already exited has nothing left to kill).
fn check_no_run_outlasts_its_work(out: &SimOutput) -> Result<(), TestCaseError> {
    for (ji, j) in out.jobs.iter().enumerate() {
        let RunTime::Secs(rt) = j.run_time else {
            continue;
        };
        for (ri, r) in j.runs.iter().enumerate() {
            let d = r.end.unwrap_or(out.end_time) - r.start;
            prop_assert!(
                d <= rt,
                "job {ji} run {ri} held its resources {d} s ({:?}) although the job exits after \
                 {rt} s (limit {:?}, check interval {})",
                r.state,
                gresim_sched::time_limit_in(&out.cluster, j, r.partition),
                out.params.timelimit_check_interval
            );
        }
    }
    Ok(())
}

/// Allocations honour the request: node count, GPUs per node and type, the
/// exclusive flag and the memory rule.
fn check_alloc_matches_request(out: &SimOutput) -> Result<(), TestCaseError> {
    for (ji, j) in out.jobs.iter().enumerate() {
        let req = &j.request;
        for (ri, r) in j.runs.iter().enumerate() {
            let nn = r.alloc.nodes.len() as u32;
            prop_assert!(
                (req.min_nodes..=req.max_nodes.max(req.min_nodes)).contains(&nn),
                "job {ji} run {ri} got {nn} nodes for -N {}-{}",
                req.min_nodes,
                req.max_nodes
            );
            prop_assert_eq!(
                r.alloc.exclusive,
                req.exclusive,
                "job {} exclusive flag",
                ji
            );
            let parts: Vec<PartId> = if req.partitions.is_empty() {
                out.cluster.default_partition().into_iter().collect()
            } else {
                req.partitions.clone()
            };
            prop_assert!(
                parts.contains(&r.partition),
                "job {ji} ran in partition {}",
                r.partition
            );
            let job_gpus_of = |ty: Option<GpuTypeId>| -> u32 {
                r.alloc
                    .nodes
                    .iter()
                    .map(|na| {
                        let node = &out.cluster.nodes[na.node.idx()];
                        gpu_indices(na.gpus)
                            .filter(|g| ty.is_none_or(|t| node.gpus[usize::from(*g)].ty == t))
                            .count() as u32
                    })
                    .sum()
            };
            if let Some(g) = req.gpus_per_job {
                let got = job_gpus_of(g.ty);
                prop_assert!(
                    got >= g.count,
                    "job {ji} run {ri} got {got} GPUs for --gpus {:?}",
                    g
                );
            }
            for na in &r.alloc.nodes {
                let node = &out.cluster.nodes[na.node.idx()];
                let of = |ty: Option<GpuTypeId>| {
                    gpu_indices(na.gpus)
                        .filter(|g| ty.is_none_or(|t| node.gpus[usize::from(*g)].ty == t))
                        .count() as u32
                };
                let want: u32 = req.gpus_per_node.iter().map(|g| g.count).sum();
                prop_assert!(
                    na.gpu_count() >= want,
                    "job {ji} run {ri} got {} GPUs on {} for {:?}",
                    na.gpu_count(),
                    node.name,
                    req.gpus_per_node
                );
                for g in &req.gpus_per_node {
                    prop_assert!(
                        of(g.ty) >= g.count,
                        "job {ji} run {ri} got {} GPUs of {:?} on {} for {:?}",
                        of(g.ty),
                        g.ty,
                        node.name,
                        req.gpus_per_node
                    );
                }
                if let Some(g) = req.gpus_per_task {
                    prop_assert!(
                        of(g.ty) >= g.count * na.tasks,
                        "job {ji} run {ri}: {} tasks on {} with {} GPUs for --gpus-per-task {:?}",
                        na.tasks,
                        node.name,
                        of(g.ty),
                        g
                    );
                }
                if req.exclusive {
                    prop_assert_eq!(
                        na.cores,
                        CoreSet::first(node.cores()),
                        "job {} is exclusive but does not hold every core of {}",
                        ji,
                        node.name.clone()
                    );
                } else {
                    let want_cpus = na.tasks * req.cpus_per_task;
                    prop_assert!(
                        na.cpus >= want_cpus.min(node.cpus()),
                        "job {ji} run {ri}: {} CPUs on {} for {} tasks x {} cpus",
                        na.cpus,
                        node.name,
                        na.tasks,
                        req.cpus_per_task
                    );
                }
                let want_mem = match req.mem {
                    MemReq::PerNode(m) => m,
                    MemReq::PerCpu(m) => m * u64::from(na.cpus),
                    MemReq::PerGpu(m) => m * u64::from(na.gpu_count()),
                    MemReq::WholeNode => node.memory_mib,
                    MemReq::Default => out
                        .params
                        .def_mem_per_cpu
                        .map_or(node.memory_mib, |d| d * u64::from(na.cpus)),
                };
                prop_assert_eq!(
                    na.mem_mib,
                    want_mem,
                    "job {} run {} memory on {} for {:?}",
                    ji,
                    ri,
                    node.name.clone(),
                    req.mem
                );
            }
        }
    }
    Ok(())
}

// ---- the tests ------------------------------------------------------------------

/// A count of ids per final state, to see that the generator reaches them all.
#[test]
fn generator_reaches_every_outcome() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let mut states: BTreeMap<&'static str, u32> = BTreeMap::new();
    let mut reasons: BTreeMap<&'static str, u32> = BTreeMap::new();
    let mut requeued = 0;
    let mut horizon = 0;
    for _ in 0..200 {
        let s = scenario()
            .new_tree(&mut runner)
            .expect("a scenario")
            .current();
        // Failures are the properties' business; this only counts outcomes.
        let Ok(out) = simulate(&s) else { continue };
        horizon += u32::from(out.hit_horizon);
        for j in &out.jobs {
            *states.entry(j.state.as_str()).or_default() += 1;
            if j.state == JobState::Pending {
                *reasons.entry(j.reason.as_str()).or_default() += 1;
            }
            requeued += u32::from(j.runs.len() > 1);
        }
    }
    eprintln!(
        "final states over 200 scenarios: {states:?}; pending reasons {reasons:?}; \
         requeued jobs {requeued}; horizon hit {horizon}"
    );
    for st in [
        "COMPLETED",
        "FAILED",
        "TIMEOUT",
        "CANCELLED",
        "NODE_FAIL",
        "PENDING",
        "RUNNING",
    ] {
        assert!(
            states.contains_key(st),
            "the generator never produced a {st} job: {states:?}"
        );
    }
    assert!(requeued > 0, "the generator never produced a requeued job");
}

proptest! {
    #![proptest_config(config(1000))]

    #[test]
    fn no_resource_is_over_allocated(s in scenario()) {
        check_with(&s, |_, out| check_no_over_allocation(out))?;
    }

    #[test]
    fn every_job_ends_exactly_once(s in scenario()) {
        check_with(&s, check_jobs_end_once)?;
    }

    #[test]
    fn jobs_left_pending_are_stuck_for_a_reason(s in scenario()) {
        check_with(&s, check_stuck_jobs_explained)?;
    }

    #[test]
    fn time_never_goes_backwards(s in scenario()) {
        check_with(&s, check_time_forward)?;
    }

    #[test]
    fn the_clock_stops_after_the_last_event_that_matters(s in scenario()) {
        check_with(&s, check_end_time)?;
    }

    #[test]
    fn usage_integrals_equal_the_runs(s in scenario()) {
        check_with(&s, |_, out| check_usage(out))?;
    }

    #[test]
    fn timeline_agrees_with_the_runs(s in scenario()) {
        check_with(&s, |_, out| check_timeline(out))?;
    }

    #[test]
    fn runs_respect_node_states(s in scenario()) {
        check_with(&s, check_node_states)?;
    }

    /// `scontrol hold/release/cancel/requeue` of a job id that does not exist
    /// yet must not crash the simulator (Slurm answers "Invalid job id").
    #[test]
    fn job_actions_before_submission_are_harmless(s in scenario_with(false)) {
        simulate(&s)?;
    }

    #[test]
    fn run_lengths_follow_run_times_and_limits(s in scenario()) {
        check_with(&s, |_, out| check_run_lengths(out))?;
    }

    #[test]
    fn no_run_outlasts_its_run_time(s in scenario()) {
        check_with(&s, |_, out| check_no_run_outlasts_its_work(out))?;
    }

    #[test]
    fn allocations_match_requests(s in scenario()) {
        check_with(&s, |_, out| check_alloc_matches_request(out))?;
    }
}

proptest! {
    // The failure needs a rare arrangement (a waiter, a blocker that is
    // requeued, nothing else ending afterwards): more cases, still cheap.
    #![proptest_config(config(10000))]

    #[test]
    fn singleton_waiters_are_not_left_behind(s in singleton_scenario()) {
        check_with(&s, check_stuck_jobs_explained)?;
    }
}

// ---- failure models, checkpoints, GPU memory ------------------------------------

/// One failing unit of a drawn failure model: a node, or (when `group`) the
/// node and the next one, failing together; up and down times in seconds.
#[derive(Debug, Clone)]
struct UnitGen {
    node: u8,
    group: bool,
    cycles: Vec<(u64, u64)>,
}

/// A job's drawn behavior: (checkpoint interval, overhead), vram, CPU fallback.
type BehaviorGen = (Option<(u64, u64)>, Option<u8>, bool, u64);

fn unit_gen() -> impl Strategy<Value = UnitGen> {
    (
        any::<u8>(),
        proptest::bool::weighted(0.3),
        proptest::collection::vec((1u64..=1_500, 1u64..=600), 1..=6),
    )
        .prop_map(|(node, group, cycles)| UnitGen {
            node,
            group,
            cycles,
        })
}

fn behavior_gen() -> impl Strategy<Value = BehaviorGen> {
    (
        proptest::option::weighted(0.5, (1u64..=900, 0u64..=120)),
        proptest::option::weighted(0.2, 0u8..=3),
        proptest::bool::weighted(0.15),
        1u64..=60,
    )
}

/// The merged stream of the units, as gresim-io's generator makes it: in
/// time order, failures before repairs within a second, and a node counted
/// down while any of its units is down.
fn build_failures(units: &[UnitGen], nodes: usize) -> Vec<TimedAction> {
    let mut evs: Vec<(Time, u8, usize, Vec<NodeId>)> = Vec::new();
    for (k, u) in units.iter().enumerate() {
        let first = usize::from(u.node) % nodes;
        let mut members = vec![NodeId::from_idx(first)];
        if u.group && nodes > 1 {
            members.push(NodeId::from_idx((first + 1) % nodes));
        }
        let mut t = 0;
        for &(up, down) in &u.cycles {
            t += up;
            evs.push((t, 0, k, members.clone()));
            t += down;
            evs.push((t, 1, k, members.clone()));
        }
    }
    evs.sort_by_key(|e| (e.0, e.1, e.2));
    let mut count = vec![0u32; nodes];
    let mut out = Vec::new();
    for (t, kind, _, members) in evs {
        let mut changed = Vec::new();
        for n in members {
            let c = &mut count[n.idx()];
            if kind == 0 {
                *c += 1;
                if *c == 1 {
                    changed.push(n);
                }
            } else {
                *c -= 1;
                if *c == 0 {
                    changed.push(n);
                }
            }
        }
        if !changed.is_empty() {
            let action = if kind == 0 {
                Action::NodeFail(changed)
            } else {
                Action::NodeRepair(changed)
            };
            out.push(TimedAction { at: t, action });
        }
    }
    out
}

/// VRAM needs to draw from: below a 1g.10gb slice, between slices, above an 80 GB GPU.
const VRAM_MIB: [u64; 4] = [4_096, 15_000, 45_000, 90_000];

/// A scenario with a random failure model, and random checkpoints, VRAM
/// needs and CPU fallbacks on its jobs.
fn failure_scenario() -> impl Strategy<Value = Scenario> {
    (
        scenario(),
        proptest::collection::vec(unit_gen(), 1..=8),
        proptest::collection::vec(behavior_gen(), 20),
    )
        .prop_map(|(mut s, units, behaviors)| {
            s.failures = build_failures(&units, s.cluster.nodes.len());
            for (spec, (ckpt, vram, fallback, oom_after)) in s.specs.iter_mut().zip(behaviors) {
                let mut b = *spec.behavior();
                if let Some((iv, o)) = ckpt {
                    b.checkpoint_interval = Some(iv);
                    b.restart_overhead = o;
                }
                if spec.request.wants_gpus() {
                    b.vram_mib = vram.map(|v| VRAM_MIB[usize::from(v)]);
                } else if fallback {
                    b.cpu_fallback_slowdown = Some(2.5);
                }
                b.oom_after = oom_after;
                spec.set_behavior(b);
            }
            s
        })
}

/// No job is lost: each has a record; without a horizon none is left
/// RUNNING; a job whose run failed was requeued (a later run, or PENDING)
/// or ended NODE_FAIL; and failed runs end when one of their nodes fails
/// (or an admin requeues them).
fn check_no_job_lost(s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    check_jobs_end_once(s, out)?;
    let expected: usize = s.specs.iter().map(|sp| sp.task_count()).sum();
    if !out.hit_horizon {
        prop_assert_eq!(out.jobs.len(), expected);
    }
    let downs: std::collections::BTreeSet<(Time, NodeId)> = out
        .node_log
        .iter()
        .filter(|c| c.state == NodeAdminState::Down)
        .map(|c| (c.t, c.node))
        .collect();
    for (ji, j) in out.jobs.iter().enumerate() {
        if !out.hit_horizon {
            prop_assert!(
                j.state != JobState::Running,
                "job {ji} is RUNNING at the end without a horizon"
            );
        }
        for (ri, r) in j.runs.iter().enumerate() {
            if r.state != JobState::NodeFail {
                continue;
            }
            let e = r
                .end
                .ok_or_else(|| TestCaseError::fail("NODE_FAIL run without end"))?;
            prop_assert!(
                r.alloc.node_ids().any(|n| downs.contains(&(e, n))),
                "job {ji} run {ri} ended NODE_FAIL at {e} but none of its nodes went down then"
            );
            let last = ri + 1 == j.runs.len();
            if last {
                prop_assert!(
                    matches!(
                        j.state,
                        JobState::NodeFail | JobState::Pending | JobState::Cancelled
                    ),
                    "job {ji} lost after its node failed: state {:?}",
                    j.state
                );
                prop_assert_eq!(
                    j.state == JobState::NodeFail,
                    !j.requeue,
                    "job {} (requeue {}) after a node failure is {:?}",
                    ji,
                    j.requeue,
                    j.state
                );
            }
        }
    }
    Ok(())
}

/// Checkpointed work is conserved: replaying the runs with the checkpoint
/// rule gives each run's length — a run that completes lasts exactly the
/// work left since the last checkpoint (slowed down on the CPU fallback)
/// plus the restart overhead; an OOM run lasts `oom_after` (or less, when
/// the program is shorter); and the lost GPU-seconds add up.
fn check_work_conserved(out: &SimOutput) -> Result<(), TestCaseError> {
    for (ji, j) in out.jobs.iter().enumerate() {
        let b = *out.specs[j.sub as usize].behavior();
        let total = match j.run_time {
            RunTime::Secs(d) => Some(b.scaled(d)),
            RunTime::ToLimit => None,
        };
        let mut saved = 0u64;
        let mut lost_gpu = 0u64;
        for (ri, r) in j.runs.iter().enumerate() {
            let o = match b.checkpoint_interval {
                Some(_) if ri > 0 => b.restart_overhead,
                _ => 0,
            };
            let need = total.map(|t| t - saved + o);
            let Some(end) = r.end else { continue };
            let d = end - r.start;
            match r.state {
                JobState::Completed => {
                    prop_assert_eq!(Some(d), need, "job {} run {} completed", ji, ri);
                }
                JobState::Failed if j.oom && ri + 1 == j.runs.len() => {
                    let want = need.map_or(b.oom_after, |n| n.min(b.oom_after));
                    prop_assert_eq!(d, want, "job {} run {} out of GPU memory", ji, ri);
                }
                JobState::Failed => {
                    prop_assert_eq!(Some(d), need, "job {} run {} failed", ji, ri);
                }
                JobState::NodeFail | JobState::Requeued => {
                    if let Some(n) = need {
                        prop_assert!(d <= n, "job {ji} run {ri} lasted {d} s of {n}");
                    }
                    // An OOM program dies before its first checkpoint.
                    let oom_run = b.vram_mib.is_some_and(|v| {
                        r.alloc.nodes.iter().any(|na| {
                            let node = &out.cluster.nodes[na.node.idx()];
                            gpu_indices(na.gpus).any(|g| node.gpus[usize::from(g)].memory_mib() < v)
                        })
                    });
                    let new_saved = match b.checkpoint_interval {
                        Some(iv) if !oom_run => {
                            let done = saved + d - o.min(d);
                            let cap = total.map_or(u64::MAX, |t| t.saturating_sub(1) / iv * iv);
                            (done / iv * iv).min(cap).max(saved)
                        }
                        _ => saved,
                    };
                    let lost = d - (new_saved - saved);
                    lost_gpu += lost * u64::from(r.alloc.gpu_count());
                    saved = new_saved;
                }
                _ => {}
            }
        }
        prop_assert_eq!(j.lost_gpu_secs(), lost_gpu, "job {} lost GPU-seconds", ji);
        prop_assert_eq!(j.work_saved(), saved, "job {} saved work", ji);
    }
    Ok(())
}

/// Runs never hold a node while it is failed or DOWN, per the engine's own
/// log of node states; and the per-node failure counts match the log.
fn check_failed_nodes_idle(s: &Scenario, out: &SimOutput) -> Result<(), TestCaseError> {
    let n = out.cluster.nodes.len();
    let mut fails = vec![0u32; n];
    for c in &out.node_log {
        if c.failure && c.state == NodeAdminState::Down {
            fails[c.node.idx()] += 1;
        }
    }
    // A failure of a node that is already DOWN counts, but changes no state.
    let mut drawn = vec![0u32; n];
    for a in &s.failures {
        if let Action::NodeFail(ns) = &a.action {
            for x in ns {
                drawn[x.idx()] += 1;
            }
        }
    }
    for i in 0..n {
        prop_assert!(
            fails[i] <= out.node_failures[i] && out.node_failures[i] <= drawn[i],
            "node {i}: {} failures logged, {} counted, {} drawn",
            fails[i],
            out.node_failures[i],
            drawn[i]
        );
    }
    // Down intervals per node: [down, next change).
    let mut down: Vec<Vec<(Time, Time)>> = vec![Vec::new(); n];
    let mut since: Vec<Option<Time>> = out
        .cluster
        .nodes
        .iter()
        .map(|nd| (nd.state == NodeAdminState::Down).then_some(0))
        .collect();
    for c in &out.node_log {
        let i = c.node.idx();
        match (since[i], c.state == NodeAdminState::Down) {
            (None, true) => since[i] = Some(c.t),
            (Some(a), false) => {
                down[i].push((a, c.t));
                since[i] = None;
            }
            _ => {}
        }
    }
    for (i, s) in since.iter().enumerate() {
        if let Some(a) = s {
            down[i].push((*a, Time::MAX));
        }
    }
    for (ji, j) in out.jobs.iter().enumerate() {
        for (ri, r) in j.runs.iter().enumerate() {
            let end = r.end.unwrap_or(Time::MAX);
            for nid in r.alloc.node_ids() {
                for &(a, b) in &down[nid.idx()] {
                    // [start, end) and [a, b) must not overlap: a run
                    // hit by the failure ends in its second, and a repaired
                    // node takes jobs from the next one.
                    prop_assert!(
                        !(r.start < b && a < end),
                        "job {ji} run {ri} [{}, {:?}) holds {} while it is DOWN [{a}, {b})",
                        r.start,
                        r.end,
                        out.cluster.nodes[nid.idx()].name
                    );
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn failures_never_over_allocate(s in failure_scenario()) {
        check_with(&s, |_, out| check_no_over_allocation(out))?;
    }

    #[test]
    fn failures_lose_no_job(s in failure_scenario()) {
        check_with(&s, check_no_job_lost)?;
    }

    #[test]
    fn failures_conserve_gpu_seconds(s in failure_scenario()) {
        check_with(&s, |_, out| {
            check_usage(out)?;
            check_timeline(out)
        })?;
    }

    #[test]
    fn checkpointed_work_is_conserved(s in failure_scenario()) {
        check_with(&s, |_, out| check_work_conserved(out))?;
    }

    #[test]
    fn failed_nodes_run_nothing(s in failure_scenario()) {
        check_with(&s, check_failed_nodes_idle)?;
    }

    #[test]
    fn failures_keep_time_moving_forward(s in failure_scenario()) {
        check_with(&s, check_time_forward)?;
    }

    #[test]
    fn failures_leave_no_job_stuck_without_reason(s in failure_scenario()) {
        check_with(&s, check_stuck_jobs_explained)?;
    }
}

/// The failure generator reaches what the failure properties are about.
#[test]
fn failure_generator_reaches_failures_checkpoints_and_oom() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut node_fail_runs, mut saved, mut oom, mut fallback, mut lost) = (0, 0, 0, 0, 0u64);
    for _ in 0..300 {
        let s = failure_scenario()
            .new_tree(&mut runner)
            .expect("a scenario")
            .current();
        let Ok(out) = simulate(&s) else { continue };
        for j in &out.jobs {
            node_fail_runs += j
                .runs
                .iter()
                .filter(|r| r.state == JobState::NodeFail)
                .count();
            saved += u32::from(j.work_saved() > 0);
            oom += u32::from(j.oom && j.state == JobState::Failed);
            fallback += u32::from(
                out.specs[j.sub as usize]
                    .behavior()
                    .cpu_fallback_slowdown
                    .is_some()
                    && j.state == JobState::Completed,
            );
            lost += j.lost_gpu_secs();
        }
    }
    eprintln!(
        "failure scenarios: {node_fail_runs} NODE_FAIL runs, {saved} jobs resumed from a \
         checkpoint, {oom} OOM, {fallback} CPU fallbacks completed, {lost} GPU-s lost"
    );
    assert!(node_fail_runs > 50 && saved > 10 && oom > 10 && fallback > 5 && lost > 0);
}

/// `s` run with a fast policy and with its plain reference gives every job
/// the same state, reason and runs.
fn same_decisions(
    s: &Scenario,
    fast: Box<dyn gresim_sched::Policy>,
    plain: Box<dyn gresim_sched::Policy>,
) -> Result<(), TestCaseError> {
    let (f, p) = (
        decisions(&simulate_with(s, fast)?),
        decisions(&simulate_with(s, plain)?),
    );
    for (i, (a, b)) in f.iter().zip(&p).enumerate() {
        prop_assert_eq!(a, b, "job {} differs\nin {:?}", i, s);
    }
    prop_assert_eq!(f.len(), p.len());
    Ok(())
}

/// Every job's state, reason and runs (start, end, nodes, cores, GPUs), as
/// one comparable text per job.
fn decisions(out: &SimOutput) -> Vec<String> {
    out.jobs
        .iter()
        .map(|j| format!("{:?} {:?} {:?}", j.state, j.reason, &j.runs[..]))
        .collect()
}

proptest! {
    #![proptest_config(config(400))]

    /// The backfill pass's shortcuts (the slot map of reservations, the
    /// release sweep shared by a pass, the per-shape fit changes, the
    /// free-CPU count, `_will_run_test()`'s groups found by time instead of
    /// end by end) change no decision: random clusters, queues, limits,
    /// admin actions and will-run windows (`bf_will_run_window`, 0 included,
    /// and its wall-clock phase) give the same starts, ends and allocations
    /// as the plain pass kept in `gresim_sched::backfill_plain`. Small
    /// `bf_max_job_test` values make the pass stop early, where the fast
    /// pass counts the jobs whose plans wait before it has planned them
    /// (only jobs that reach a try count, `bf_last_depth_try`).
    #[test]
    fn fast_backfill_decides_as_the_plain_pass(
        (mut s, window, phase, max_test) in (
            scenario(),
            prop_oneof![Just(30u64), Just(0u64), 1u64..=300],
            0u64..=299,
            prop_oneof![Just(500u32), 1u32..=6],
        )
    ) {
        s.params.bf_will_run_window = window;
        s.params.bf_epoch_phase = phase % window.max(1);
        s.params.bf_max_job_test = max_test;
        same_decisions(
            &s,
            Box::new(gresim_sched::Fifo::with_backfill()),
            Box::new(gresim_sched::Fifo::with_plain_backfill()),
        )?;
    }
}

/// A queue of many jobs of a few request shapes, each job with its own time
/// limit and run time: a backfill pass then asks the same node selection
/// and the same `_will_run_test()` walk of the same state and blocked nodes
/// for several jobs, with different cutoffs, which the fast pass reads back
/// (`backfill/picks.rs`).
fn few_shapes_scenario() -> impl Strategy<Value = Scenario> {
    (
        scenario(),
        proptest::collection::vec(job_gen(), 1..=3),
        proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                60u64..=7_200,
                1u64..=4_000,
                0u64..=120,
            ),
            8..=40,
        ),
    )
        .prop_map(|(mut s, shapes, jobs)| {
            let gens: Vec<JobGen> = jobs
                .iter()
                .map(|(k, limit, run, delta)| JobGen {
                    submit_delta: *delta,
                    time_kind: 1,
                    time_limit: *limit,
                    run_time: Some(*run),
                    array: None,
                    dependency: None,
                    hold: false,
                    begin: None,
                    ..shapes[k.index(shapes.len())].clone()
                })
                .collect();
            s.specs = build_specs(&gens, &s.cluster);
            s
        })
}

proptest! {
    #![proptest_config(config(300))]

    /// The same as `fast_backfill_decides_as_the_plain_pass`, on deep
    /// queues of a few request shapes, where the fast pass reads repeated
    /// selections and walks back from its record.
    #[test]
    fn fast_backfill_decides_as_the_plain_pass_on_few_shapes(
        (mut s, window, phase) in (few_shapes_scenario(), prop_oneof![Just(30u64), Just(0u64), 1u64..=300], 0u64..=299)
    ) {
        s.params.bf_will_run_window = window;
        s.params.bf_epoch_phase = phase % window.max(1);
        same_decisions(
            &s,
            Box::new(gresim_sched::Fifo::with_backfill()),
            Box::new(gresim_sched::Fifo::with_plain_backfill()),
        )?;
    }
}

proptest! {
    #![proptest_config(config(300))]

    /// Conservative backfilling's fast earliest-fit search (`classic.rs`'s
    /// `Planner`) changes no decision: random clusters, queues, limits and
    /// admin actions give the same starts, ends and allocations as the plain
    /// search kept in `gresim-sched/src/classic/plain.rs`.
    #[test]
    fn fast_conservative_decides_as_the_plain_one(s in scenario()) {
        use gresim_sched::classic::{Classic, ClassicKind};
        let kind = ClassicKind::Conservative;
        same_decisions(&s, Box::new(Classic::new(kind)), Box::new(Classic::with_plain_planner(kind)))?;
    }

    /// The same for EASY, whose head reservation uses the same search.
    #[test]
    fn fast_easy_decides_as_the_plain_one(s in scenario()) {
        use gresim_sched::classic::{Classic, ClassicKind};
        let kind = ClassicKind::Easy;
        same_decisions(&s, Box::new(Classic::new(kind)), Box::new(Classic::with_plain_planner(kind)))?;
    }
}
