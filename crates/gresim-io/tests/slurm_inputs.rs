//! slurm.conf + gres.conf, scenarios that use them, and the streamed trace
//! readers, on files under tests/data and the public traces the repository
//! ships compressed in data/.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use gresim_io::slurmconf::load;
use gresim_io::traces::{self, TraceFormat, TraceOptions};
use gresim_model::cluster::PartitionState;
use gresim_model::job::{JobSpec, MemReq, RunTime};
use gresim_model::{Cluster, NodeId};
use gresim_sched::priority::PriorityConfig;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(p)
}

#[test]
fn topology_links_cores_and_mig_types() {
    let dir = data("conf/topology");
    let l = load(&dir.join("slurm.conf"), None).unwrap(); // gres.conf found next to it
    let nvl = &l.cluster.nodes[l.cluster.node_id("nvl01").unwrap().idx()];
    assert_eq!(nvl.gpus.len(), 8);
    assert_eq!(nvl.gpus[0].socket, Some(0));
    assert_eq!(nvl.gpus[7].socket, Some(1));
    let links = nvl.gpu_links.as_ref().unwrap();
    assert_eq!(links[0], [0, 2, 1, 1, 0, 0, 0, 0]);
    assert_eq!(links[5][4], 2);
    let pcie = &l.cluster.nodes[l.cluster.node_id("pcie01").unwrap().idx()];
    assert_eq!(pcie.gpus[3].socket, None);
    assert!(pcie.gpu_links.is_none());
    let h100 = l.cluster.gpu_type(pcie.gpus[0].ty);
    assert_eq!(h100.model().name, "H100-SXM5-80GB");

    let dir = data("conf/pub_arrays_deps");
    let l = load(&dir.join("slurm.conf"), Some(&dir.join("gres.conf"))).unwrap();
    let mig1 = &l.cluster.nodes[l.cluster.node_id("mig1").unwrap().idx()];
    let names: Vec<&str> = mig1
        .gpus
        .iter()
        .map(|g| l.cluster.gpu_type(g.ty).name.as_str())
        .collect();
    assert_eq!(names, ["2g.20gb", "2g.20gb", "2g.20gb", "1g.10gb"]);
    assert_eq!(mig1.gpus[0].mig.unwrap().profile.compute_slices, 2);
    assert!(l.params.kill_invalid_depend);
}

#[test]
fn site_scenario_uses_slurm_conf_with_overrides_and_warnings() {
    let sc = gresim_io::load_scenario(&data("scenario_slurmconf.json")).unwrap();
    let c = &sc.cluster;
    assert_eq!(c.nodes.len(), 3);
    assert_eq!(
        c.node_names(&[NodeId::from_idx(0), NodeId::from_idx(2)]),
        ["a1", "h1"]
    );
    let a1 = &c.nodes[0];
    assert_eq!(
        (a1.sockets, a1.cores_per_socket, a1.memory_mib),
        (2, 16, 512000)
    );
    assert_eq!(a1.weight, 10);
    assert_eq!(a1.features, ["a100"]);
    let sockets: Vec<Option<u16>> = a1.gpus.iter().map(|g| g.socket).collect();
    assert_eq!(sockets, [Some(0), Some(0), Some(1), Some(1)]);
    let h1 = &c.nodes[2];
    assert_eq!(h1.weight, 20, "continued line");
    assert_eq!(h1.gpu_links.as_ref().unwrap()[2], [0, 0, 0, 4]);
    assert_eq!(c.partitions.len(), 2);
    assert_eq!(c.partitions[0].max_time, Some(2 * 86400));
    assert_eq!(c.partitions[0].default_time, Some(3600));
    assert_eq!(c.partitions[1].priority_tier, 2);
    assert_eq!(c.partitions[1].state, PartitionState::Up);
    // slurm.conf's scheduler settings, with the scenario's bf_interval.
    assert_eq!(sc.params.bf_interval, 7);
    assert_eq!(sc.params.sched_interval, 20);
    assert_eq!(sc.params.bf_window, 7200);
    assert_eq!(sc.params.def_mem_per_cpu, Some(2048));
    let PriorityConfig::Multifactor(m) = &sc.params.priority else {
        panic!("multifactor expected")
    };
    assert_eq!((m.weight_job_size, m.weight_tres_gpu), (1000, 100.0));
    assert_eq!(sc.policy, gresim_sched::PolicyKind::Slurm);
    // Warnings: the unknown key with its line, and the mps GRES.
    assert!(
        sc.warnings
            .iter()
            .any(|w| w.ends_with("slurm.conf:12: unknown key 'Colour' (ignored)")),
        "{:?}",
        sc.warnings
    );
    assert!(sc
        .warnings
        .iter()
        .any(|w| w.contains("gres.conf:8: GRES 'mps'")));
    assert_eq!(sc.warnings.len(), 2, "{:?}", sc.warnings);
    // The sacct trace streams through the scenario.
    let jobs: Vec<JobSpec> = sc.jobs(1).map(Result::unwrap).collect();
    assert_eq!(jobs.len(), 3);
}

#[test]
fn scenario_needs_exactly_one_cluster_source() {
    let both = r#"{"schema_version":1,"cluster":{"slurm_conf":"site/slurm.conf","nodes":[]},"workload":{"jobs":[]}}"#;
    let e = gresim_io::parse_scenario(&data("x.json"), both).unwrap_err();
    assert!(
        e.to_string().contains("exactly one of nodes or slurm_conf"),
        "{e}"
    );
    let none = r#"{"schema_version":1,"cluster":{},"workload":{"jobs":[]}}"#;
    assert!(gresim_io::parse_scenario(&data("x.json"), none).is_err());
    let bad_fmt = r#"{"schema_version":1,"cluster":{"slurm_conf":"site/slurm.conf"},"workload":{"trace":"traces/small.swf","format":"csv"}}"#;
    let e = gresim_io::parse_scenario(&data("x.json"), bad_fmt).unwrap_err();
    assert!(e.to_string().contains("unknown trace format 'csv'"), "{e}");
}

fn site() -> Cluster {
    load(&data("site/slurm.conf"), None).unwrap().cluster
}

fn read(file: &str, format: TraceFormat, opts: &TraceOptions, c: &Cluster) -> Vec<JobSpec> {
    traces::open(&data(file), format, opts, c)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

#[test]
fn sacct_dump() {
    let c = site();
    let jobs = read(
        "traces/small.sacct",
        TraceFormat::Sacct,
        &TraceOptions::default(),
        &c,
    );
    assert_eq!(
        jobs.len(),
        3,
        "steps folded, the pending-cancelled job skipped"
    );
    let j = &jobs[0];
    assert_eq!(
        (j.key.as_str(), &*j.name, &*j.user),
        ("100", "train", "alice")
    );
    assert_eq!(j.submit, 0);
    assert_eq!(j.run_time, RunTime::Secs(3600));
    assert_eq!(j.exit_code, 0);
    let r = &j.request;
    assert_eq!((r.min_nodes, r.max_nodes), (2, 2));
    assert_eq!(r.cpus_per_task, 8);
    assert_eq!(r.ntasks_per_node, Some(1));
    assert_eq!(r.gpus_per_node.len(), 1);
    assert_eq!(r.gpus_per_node[0].count, 4);
    assert_eq!(r.gpus_per_node[0].ty, c.gpu_type_id("a100"));
    assert_eq!(r.mem, MemReq::PerNode(32768));
    assert_eq!(r.time_limit, Some(Some(7200)));
    assert_eq!(r.partitions, [c.partition_id("gpu").unwrap()]);
    let t = &jobs[1];
    assert_eq!(t.key, "101_3");
    assert_eq!(t.submit, 300);
    assert_eq!(
        t.run_time,
        RunTime::Secs(600),
        "from Elapsed: End is Unknown"
    );
    assert_eq!(t.exit_code, 2);
    assert_eq!(t.request.gpus_per_node[0].ty, None);
    assert_eq!(t.request.mem, MemReq::PerNode(8000));
    assert_eq!(t.request.time_limit, Some(Some(1800)));
    assert_eq!(t.request.partitions, [c.partition_id("other").unwrap()]);
    let a = &jobs[2];
    assert_eq!(a.key, "101");
    assert_eq!(a.submit, 420);
    assert_eq!(a.run_time, RunTime::ToLimit);
    let arr = a.array().unwrap();
    assert_eq!(arr.indices, [4, 5, 6, 7, 8, 9]);
    assert_eq!(arr.throttle, Some(2));
    assert_eq!(a.request.time_limit, None);
}

#[test]
fn swf_log_as_cpus_and_as_gpus() {
    let c = site();
    let jobs = read(
        "traces/small.swf",
        TraceFormat::Swf,
        &TraceOptions::default(),
        &c,
    );
    assert_eq!(jobs.len(), 3, "the cancelled job that never ran is skipped");
    let j = &jobs[0];
    assert_eq!((j.key.as_str(), j.submit, &*j.user), ("1", 0, "u7"));
    assert_eq!(j.run_time, RunTime::Secs(3600));
    assert_eq!(j.request.ntasks, Some(4));
    assert_eq!(
        (j.request.min_nodes, j.request.max_nodes),
        (1, 3),
        "-n 4 may spread over all 3 nodes of the site, as in Slurm"
    );
    assert_eq!(j.request.time_limit, Some(Some(7200)));
    assert_eq!(j.request.mem, MemReq::PerCpu(1));
    assert_eq!(j.exit_code, 0);
    let f = &jobs[1];
    assert_eq!(
        f.request.ntasks,
        Some(8),
        "allocated processors when requested is -1"
    );
    assert_eq!(f.exit_code, 1, "status 0 = failed");
    assert_eq!(f.request.time_limit, None);
    let opts = TraceOptions {
        swf_gpus_per_node: Some(4),
        ..TraceOptions::default()
    };
    let g = read("traces/small.swf", TraceFormat::Swf, &opts, &c);
    let big = &g[2];
    assert_eq!(big.key, "4");
    assert_eq!(big.request.gpus_per_job.map(|x| x.count), Some(12));
    assert_eq!(big.request.min_nodes, 3);
}

#[test]
fn openb_pods() {
    let c = site();
    let jobs = read(
        "traces/small_openb.csv",
        TraceFormat::OpenB,
        &TraceOptions::default(),
        &c,
    );
    assert_eq!(jobs.len(), 3, "the never-scheduled pod is skipped");
    let p = &jobs[0];
    assert_eq!((p.key.as_str(), p.submit), ("openb-pod-0000", 0));
    assert_eq!(p.run_time, RunTime::Secs(3590));
    assert_eq!(p.request.cpus_per_task, 12);
    assert_eq!(p.request.mem, MemReq::PerNode(16384));
    assert_eq!(p.request.gpus_per_node[0].count, 1);
    let s = &jobs[1];
    assert_eq!(
        s.request.gpus_per_node[0].count, 1,
        "a GPU share takes a whole GPU"
    );
    assert_eq!(s.request.gpus_per_node[0].ty, c.gpu_type_id("a100"));
    assert_eq!(s.request.cpus_per_task, 6);
    let b = &jobs[2];
    assert_eq!(b.request.gpus_per_node[0].count, 8);
    assert_eq!(
        b.request.gpus_per_node[0].ty, None,
        "a two-model gpu_spec is untyped"
    );
    assert_eq!(b.run_time, RunTime::Secs(500));
    let all = TraceOptions {
        openb_scheduled_only: false,
        ..TraceOptions::default()
    };
    let jobs = read("traces/small_openb.csv", TraceFormat::OpenB, &all, &c);
    assert_eq!(jobs.len(), 4);
    assert_eq!(jobs[2].run_time, RunTime::ToLimit);
    assert_eq!(jobs[2].request.mem, MemReq::Default);
}

#[test]
fn helios_log() {
    let c = site();
    let jobs = read(
        "traces/small_helios.csv",
        TraceFormat::Helios,
        &TraceOptions::default(),
        &c,
    );
    assert_eq!(jobs.len(), 3);
    let j = &jobs[0];
    assert_eq!((j.key.as_str(), &*j.user, j.submit), ("6466", "u1", 0));
    assert_eq!(j.run_time, RunTime::Secs(3600));
    assert_eq!(j.request.gpus_per_node[0].count, 8);
    assert_eq!(j.request.cpus_per_task, 48);
    assert_eq!(j.request.partitions, [c.partition_id("gpu").unwrap()]);
    let f = &jobs[1];
    assert_eq!(f.submit, 60);
    assert_eq!(
        f.run_time,
        RunTime::Secs(600),
        "end - start when duration is empty"
    );
    assert_eq!(f.exit_code, 1);
    assert_eq!(
        (f.request.min_nodes, f.request.gpus_per_node[0].count),
        (2, 8)
    );
    assert!(f.request.partitions.is_empty(), "unknown vc dropped");
    let cpu = &jobs[2];
    assert_eq!((cpu.key.as_str(), cpu.submit), ("6469", 180));
    assert!(cpu.request.gpus_per_node.is_empty());
}

#[test]
fn trace_errors_name_file_and_line() {
    let c = site();
    let cases: [(&str, TraceFormat, &str); 5] = [
        (
            "JobID|Submit\n1|2024-01-01T00:00:00\n2|yesterday\n",
            TraceFormat::Sacct,
            ":3: Submit 'yesterday'",
        ),
        (
            "JobID|Submit\n1|2024-01-01T00:00:10\n2|2024-01-01T00:00:00\n",
            TraceFormat::Sacct,
            ":3: submitted before",
        ),
        ("1 0 0 10 1\n", TraceFormat::Swf, ":1: 5 fields"),
        (
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,10,x,0\n",
            TraceFormat::OpenB,
            ":2: num_gpu 'x'",
        ),
        (
            "job_id,submit_time\n1\n",
            TraceFormat::Helios,
            ":2: 1 fields",
        ),
    ];
    for (text, fmt, want) in cases {
        let r: Box<dyn BufRead> = Box::new(BufReader::new(text.as_bytes()));
        let out: Vec<_> =
            traces::open_reader(Path::new("t.txt"), r, fmt, &TraceOptions::default(), &c)
                .unwrap()
                .collect();
        let err = out.iter().find_map(|r| r.as_ref().err()).expect(want);
        assert!(
            err.0.starts_with("t.txt:") && err.0.contains(want),
            "{want}: {}",
            err.0
        );
        assert!(
            out.last().unwrap().is_err(),
            "the stream stops at the error"
        );
    }
    // A bad header is found when the scenario loads.
    let e = traces::check(
        &data("traces/small.swf"),
        TraceFormat::Sacct,
        &TraceOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("small.swf:1: the sacct header has no jobid column"),
        "{e}"
    );
}

/// Counts the bytes a reader hands out.
struct Counting<R> {
    inner: R,
    n: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n.fetch_add(k as u64, Ordering::Relaxed);
        Ok(k)
    }
}

#[test]
fn public_swf_log_streams_lazily() {
    // Shipped compressed in the repository (data/pwa-unilu-gaia-2014/SOURCE.md).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/pwa-unilu-gaia-2014/UniLu-Gaia-2014-2.swf.gz");
    let c = site();
    let n = Arc::new(AtomicU64::new(0));
    let file = std::fs::File::open(&path).unwrap();
    let total = file.metadata().unwrap().len();
    // Compressed bytes read so far are counted.
    let r: Box<dyn BufRead> = Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(
        Counting {
            inner: file,
            n: n.clone(),
        },
    )));
    let mut it =
        traces::open_reader(&path, r, TraceFormat::Swf, &TraceOptions::default(), &c).unwrap();
    let first: Vec<JobSpec> = it.by_ref().take(10).map(Result::unwrap).collect();
    assert_eq!(first[0].key, "1");
    assert!(
        n.load(Ordering::Relaxed) < 64 * 1024,
        "read ahead {} of {total} bytes",
        n.load(Ordering::Relaxed)
    );
    let mut count = 10u64;
    let mut last = first[9].submit;
    let mut max_run = 0;
    for j in it {
        let j = j.unwrap();
        assert!(j.submit >= last, "sorted by submit time");
        last = j.submit;
        if let RunTime::Secs(s) = j.run_time {
            max_run = max_run.max(s);
        }
        count += 1;
    }
    // 51,987 jobs in the log; those without processors or cancelled before running are skipped.
    assert!((51_000..=51_987).contains(&count), "{count}");
    assert!(last > 80 * 86400 && last < 90 * 86400, "89 days: {last}");
    assert!(max_run > 86400);
}

#[test]
fn public_openb_default_pods() {
    // The repository ships it compressed (data/alibaba-openb-gpu-v2023/SOURCE.md):
    // the trace reader takes the `.csv.gz` beside the `.csv` named.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/alibaba-openb-gpu-v2023/openb_pod_list_default.csv");
    assert!(!path.exists() && path.with_extension("csv.gz").exists());
    let mut c = site();
    // A cluster big enough that no pod is rejected by shape: 8-GPU nodes.
    c.nodes.iter_mut().for_each(|n| n.memory_mib = 1 << 20);
    let all = TraceOptions {
        openb_scheduled_only: false,
        ..TraceOptions::default()
    };
    let mut n = 0u64;
    let mut gpus = 0u64;
    let mut sorted = true;
    let mut last = 0;
    for j in traces::open(&path, TraceFormat::OpenB, &all, &c).unwrap() {
        let j = j.unwrap();
        sorted &= j.submit >= last;
        last = j.submit;
        gpus += j
            .request
            .gpus_per_node
            .iter()
            .map(|g| u64::from(g.count))
            .sum::<u64>();
        n += 1;
    }
    assert_eq!(n, 8152);
    assert!(sorted, "OpenB pods are in creation order");
    // 6,989 one-GPU pods + 2×16 + 4×15 + 8×44 (a GPU share counts as one GPU).
    assert_eq!(gpus, 6989 + 32 + 60 + 352);
    let scheduled = traces::open(&path, TraceFormat::OpenB, &TraceOptions::default(), &c)
        .unwrap()
        .count();
    assert_eq!(scheduled, 8152 - 897);
}
