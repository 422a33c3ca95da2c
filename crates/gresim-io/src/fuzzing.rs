//! Entry points for fuzzing every input parser (docs/reliability.md).
//!
//! Each function takes arbitrary bytes, feeds them to one parser and
//! discards the result: the only property is that no input panics (or
//! hangs). The cargo-fuzz targets in `fuzz/` and the stable-Rust fallback
//! test (`tests/fuzz_parsers.rs`) call the same functions, so both exercise
//! exactly the same code.

use std::io::Cursor;
use std::path::Path;
use std::sync::OnceLock;

use gresim_model::Cluster;

use crate::traces::{TraceFormat, TraceOptions};

/// A fuzz entry point.
pub type Target = fn(&[u8]);

/// The targets by name, for the fallback test and the docs.
pub const TARGETS: [(&str, Target); 15] = [
    ("scenario_json", scenario_json),
    ("trace_json", trace_json),
    ("trace_sacct", trace_sacct),
    ("trace_swf", trace_swf),
    ("trace_openb", trace_openb),
    ("trace_helios", trace_helios),
    ("trace_batsim", trace_batsim),
    ("sbatch", sbatch),
    ("slurm_conf", slurm_conf),
    ("gres_conf", gres_conf),
    ("hostlist", hostlist),
    ("slurm_time", slurm_time),
    ("sizes", sizes),
    ("slurm_opts", slurm_opts),
    ("topo_m", topo_m),
];

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Splits at the first NUL: `(before, after)`.
fn split0(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// A small cluster with whole and MIG GPUs, for parsers that resolve names.
fn cluster() -> &'static Cluster {
    static C: OnceLock<Cluster> = OnceLock::new();
    C.get_or_init(|| {
        let text = r#"{"schema_version": 1,
          "cluster": {"nodes": [
            {"names": "gpu[01-04]", "sockets": 2, "cores_per_socket": 8, "memory": "256G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 4}], "features": ["ib"]},
            {"names": "mig01", "sockets": 1, "cores_per_socket": 8, "memory": "128G",
             "gpus": [{"model": "A100-SXM4-80GB", "count": 1, "mig": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}]},
            {"names": "cpu[1-2]", "sockets": 1, "cores_per_socket": 4, "memory": "16G"}]},
          "partitions": [{"name": "gpu", "nodes": "ALL", "default": true}, {"name": "cpu", "nodes": "cpu[1-2]"}],
          "workload": {"jobs": []}}"#;
        match crate::parse_scenario(Path::new("fuzz.json"), text) {
            Ok(s) => s.cluster,
            Err(e) => unreachable!("the fuzzing cluster is valid: {e}"),
        }
    })
}

/// A scenario file (`gresim_io::parse_scenario`), and for a valid one
/// the first failure-model actions.
pub fn scenario_json(data: &[u8]) {
    if let Ok(s) = crate::parse_scenario(Path::new("fuzz.json"), &text(data)) {
        if let Some(m) = &s.failures {
            m.stream(1).take(64).for_each(drop);
        }
        if let crate::Workload::Synthetic(_) = s.workload {
            s.jobs(1).take(64).for_each(drop);
        }
    }
}

/// A JSON or JSON Lines job trace, built against the fuzzing cluster.
pub fn trace_json(data: &[u8]) {
    // As `read_trace` reads a file: a JSON array, or one job per line.
    let t = text(data);
    let defs: Result<Vec<crate::spec::JobDef>, _> = if t.trim_start().starts_with('[') {
        serde_json::from_str(&t)
    } else {
        t.lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect()
    };
    if let Ok(defs) = defs {
        let _ = crate::build::build_jobs(Path::new("fuzz.jsonl"), "jobs", &defs, cluster());
    }
}

fn stream(format: TraceFormat, data: &[u8], opts: &TraceOptions) {
    let reader = Box::new(Cursor::new(data.to_vec()));
    if let Ok(src) =
        crate::traces::open_reader(Path::new("fuzz.trace"), reader, format, opts, cluster())
    {
        src.take(10_000).for_each(drop);
    }
}

pub fn trace_sacct(data: &[u8]) {
    stream(TraceFormat::Sacct, data, &TraceOptions::default());
}

/// SWF, read with processors as CPUs, or as GPUs when the first byte is odd.
pub fn trace_swf(data: &[u8]) {
    let gpus = data.first().is_some_and(|b| b % 2 == 1).then_some(4);
    let opts = TraceOptions {
        swf_gpus_per_node: gpus,
        ..TraceOptions::default()
    };
    stream(TraceFormat::Swf, data, &opts);
}

pub fn trace_openb(data: &[u8]) {
    stream(TraceFormat::OpenB, data, &TraceOptions::default());
}

pub fn trace_helios(data: &[u8]) {
    stream(TraceFormat::Helios, data, &TraceOptions::default());
}

/// A Batsim JSON workload; the first byte picks the ticks per second.
pub fn trace_batsim(data: &[u8]) {
    let ticks = match data.first() {
        Some(b) if b % 3 == 0 => 1_000_000,
        Some(b) if b % 3 == 1 => 0,
        _ => 1,
    };
    let _ = crate::traces::batsim::parse(Path::new("fuzz.json"), &text(data), cluster(), ticks);
}

/// An `#SBATCH` script; bytes before a NUL are command-line arguments.
pub fn sbatch(data: &[u8]) {
    let (a, b) = split0(data);
    let (args, script) = if b.is_empty() && !data.contains(&0) {
        (Vec::new(), text(a))
    } else {
        (
            text(a).split_whitespace().map(str::to_string).collect(),
            text(b),
        )
    };
    if let Ok(s) = gresim_slurm::sbatch::parse_script(Path::new("fuzz.sh"), &script, &args) {
        let mut j = crate::spec::JobDef::from(s.job.clone());
        j.submit = 0;
        let _ = crate::build::build_jobs(Path::new("fuzz.sh"), "script", &[j], cluster());
        let _ = s.gpu_bind();
    }
}

/// slurm.conf, then the cluster it describes; bytes after a NUL are its gres.conf.
pub fn slurm_conf(data: &[u8]) {
    let (a, b) = split0(data);
    let Ok((conf, mut w)) =
        gresim_slurm::slurmconf::parse_slurm_conf(Path::new("slurm.conf"), &text(a))
    else {
        return;
    };
    let gres = if b.is_empty() {
        gresim_slurm::gresconf::GresConf::default()
    } else {
        match gresim_slurm::gresconf::parse_gres_conf(Path::new("gres.conf"), &text(b)) {
            Ok((g, _)) => g,
            Err(_) => return,
        }
    };
    let _ = crate::slurmconf::sched_params(&conf, &gresim_sched::SchedParams::default());
    let _ = gresim_slurm::slurmconf::build_cluster(&conf, &gres, &mut w);
}

/// gres.conf, with a fixed slurm.conf to resolve it against.
pub fn gres_conf(data: &[u8]) {
    let Ok((gres, _)) =
        gresim_slurm::gresconf::parse_gres_conf(Path::new("gres.conf"), &text(data))
    else {
        return;
    };
    let conf_text = "NodeName=gpu[01-02] CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=1 RealMemory=256000 Gres=gpu:a100:4\n\
                     PartitionName=gpu Nodes=ALL Default=YES\n";
    if let Ok((conf, mut w)) =
        gresim_slurm::slurmconf::parse_slurm_conf(Path::new("slurm.conf"), conf_text)
    {
        let _ = gresim_slurm::slurmconf::build_cluster(&conf, &gres, &mut w);
    }
}

/// Hostlist expansion and compression round trip.
pub fn hostlist(data: &[u8]) {
    let t = text(data);
    if let Ok(names) = gresim_model::hostlist::expand(&t) {
        let c = gresim_model::hostlist::compress(&names);
        // Compression must give an expression that expands to the same set.
        let mut again = gresim_model::hostlist::expand(&c).unwrap_or_default();
        let mut names = names;
        names.sort();
        names.dedup();
        again.sort();
        again.dedup();
        assert_eq!(
            names, again,
            "hostlist compress/expand round trip of {t:?} via {c:?}"
        );
    }
}

/// Slurm's time formats: `--time`, durations, sacct's Elapsed, `--begin`.
pub fn slurm_time(data: &[u8]) {
    use gresim_model::slurm_time as st;
    let t = text(data);
    if let Ok(Some(s)) = st::parse_time_limit(&t) {
        let _ = st::format_time_limit(Some(s));
    }
    if let Ok(s) = st::parse_duration_exact(&t) {
        let _ = st::format_duration(s);
    }
    let _ = st::parse_elapsed(&t);
    let _ = gresim_slurm::sbatch::parse_begin(&t);
}

/// Memory sizes and counts.
/// `nvidia-smi topo -m` text: parse, and a parsed matrix must print and
/// parse again.
pub fn topo_m(data: &[u8]) {
    let t = text(data);
    if let Ok(topo) = gresim_model::topology::Topology::from_topo_m(&t, 4) {
        let out = topo.to_topo_m();
        let _ = gresim_model::topology::Topology::from_topo_m(&out, 4);
    }
}

pub fn sizes(data: &[u8]) {
    let t = text(data);
    if let Ok(m) = gresim_model::units::parse_mem_mib(&t) {
        let _ = gresim_model::units::format_mem_mib(m);
    }
    let _ = gresim_model::units::parse_count(&t);
}

/// sbatch option values: `--gres`, `--gpus`, `-N`, `--array`, `--dependency`, `--gpu-bind`.
pub fn slurm_opts(data: &[u8]) {
    let t = text(data);
    let c = cluster();
    let _ = gresim_slurm::slurm_opts::parse_gres(&t, c);
    let _ = gresim_slurm::slurm_opts::parse_gpu_count(&t, c);
    let _ = gresim_slurm::slurm_opts::parse_nodes(&t);
    if let Ok(a) = gresim_slurm::slurm_opts::parse_array(&t) {
        let _ = a.indices.len();
    }
    let _ = gresim_slurm::slurm_opts::parse_dependency(&t, |id| {
        id.strip_prefix("job")
            .and_then(|n| n.parse::<u32>().ok())
            .map(|n| (n, None))
    });
    let _ = gresim_slurm::sbatch::parse_gpu_bind(&t);
}
