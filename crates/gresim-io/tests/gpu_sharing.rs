//! gres/shard and gres/mps from every input: scenario GPU groups, slurm.conf
//! `Gres=` with gres.conf, `--gres` requests, the OpenB `gpu_milli` option,
//! and the environment a task sees.

use std::io::BufReader;
use std::path::Path;

use gresim_io::taskenv::job_env;
use gresim_io::traces::openb::GpuMilli;
use gresim_io::traces::{self, TraceFormat, TraceOptions};
use gresim_io::{parse_scenario, Scenario};
use gresim_model::shares::{ShareKind, SharedReq};
use gresim_model::{Cluster, NodeId};
use gresim_slurm::sbatch;
use gresim_slurm::slurmconf::{build_cluster, parse_slurm_conf};
use gresim_slurm::taskenv::EnvOptions;

/// A scenario with one node group `g[1-2]` of 4 A100 (sockets 0,0,1,1)
/// whose groups get `extra` (e.g. `"shards": 8`), and `jobs`.
fn scenario(extra: &str, jobs: &str) -> Result<Scenario, String> {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(", {extra}")
    };
    let text = format!(
        r#"{{"schema_version": 1, "name": "t",
  "cluster": {{"nodes": [{{"names": "g[1-2]", "sockets": 2, "cores_per_socket": 8, "memory": "256G",
     "gpus": [{{"model": "A100-SXM4-80GB", "count": 2, "socket": 0{extra}}},
              {{"model": "A100-SXM4-80GB", "count": 2, "socket": 1{extra}}}]}}]}},
  "workload": {{"jobs": [{jobs}]}}}}"#
    );
    parse_scenario(Path::new("t.json"), &text).map_err(|e| e.to_string())
}

fn shared_req(s: &Scenario, i: usize) -> Option<SharedReq> {
    match &s.workload {
        gresim_io::Workload::Jobs(j) => j[i].request.shared,
        _ => panic!("inline jobs expected"),
    }
}

#[test]
fn scenario_groups_configure_shares_per_gpu() {
    let s = scenario(r#""shards": 8"#, r#"{"gres": "shard:3"}"#).unwrap();
    let ns = s.cluster.node_shares(NodeId(1)).expect("g2 has shards");
    assert_eq!(
        (ns.kind, ns.per_gpu.clone(), ns.one_sharing),
        (ShareKind::Shard, vec![8; 4], false)
    );
    assert_eq!(
        shared_req(&s, 0),
        Some(SharedReq {
            kind: ShareKind::Shard,
            per_node: 3
        })
    );
    let s = scenario(r#""mps": 100"#, r#"{"gres": "gres/mps:50"}"#).unwrap();
    let ns = s.cluster.node_shares(NodeId(0)).unwrap();
    assert!(ns.one_sharing, "mps is one_sharing unless said otherwise");
    let s = scenario(
        r#""mps": 100, "sharing": "all_sharing""#,
        r#"{"gres": "mps"}"#,
    )
    .unwrap();
    assert!(!s.cluster.node_shares(NodeId(0)).unwrap().one_sharing);
    assert_eq!(
        shared_req(&s, 0).map(|r| r.per_node),
        Some(1),
        "no count means 1"
    );
}

#[test]
fn bad_requests_and_groups_are_clear_errors() {
    let cases = [
        // No node has shards.
        (
            "",
            r#"{"gres": "shard:2"}"#,
            "no node configures gres/shard",
        ),
        // The wrong kind.
        (
            r#""shards": 8"#,
            r#"{"gres": "mps:50"}"#,
            "no node configures gres/mps",
        ),
        // gpu and a shared GRES in one job.
        (
            r#""shards": 8"#,
            r#"{"gres": "gpu:1,shard:2"}"#,
            "cannot request gres/gpu and the shared gres/shard",
        ),
        (
            r#""shards": 8"#,
            r#"{"gres": "shard:2", "gpus": 1}"#,
            "cannot request GPUs",
        ),
        (
            r#""shards": 8"#,
            r#"{"gres": "shard:a100:2"}"#,
            "typed shard requests are not modelled",
        ),
        (r#""shards": 8"#, r#"{"gres": "shard:"}"#, "empty count"),
        (r#""shards": 8"#, r#"{"gres": "shard:x2"}"#, "typed shard"),
        (r#""shards": 8, "mps": 100"#, "", "shards or mps, not both"),
        (
            r#""mps": 100, "sharing": "some""#,
            "",
            "expected one_sharing or all_sharing",
        ),
        (r#""sharing": "one_sharing""#, "", "neither shards nor mps"),
    ];
    for (extra, jobs, want) in cases {
        let e = scenario(extra, jobs)
            .err()
            .unwrap_or_else(|| panic!("{extra} {jobs}: accepted"));
        assert!(e.contains(want), "{extra} / {jobs}: {e}");
        assert!(e.contains("t.json"), "the error names the file: {e}");
    }
    // The JSON path of the field is named.
    let e = scenario(r#""shards": 8"#, r#"{"gres": "gpu:1,shard:2"}"#).unwrap_err();
    assert!(e.contains("jobs[0].gres"), "{e}");
    let e = scenario(r#""mps": 100, "sharing": "some""#, "").unwrap_err();
    assert!(e.contains("cluster.nodes[0].gpus[0].sharing"), "{e}");
}

#[test]
fn one_shared_kind_per_node() {
    let text = r#"{"schema_version": 1, "name": "t",
  "cluster": {"nodes": [{"names": "g1", "sockets": 1, "cores_per_socket": 8, "memory": "64G",
     "gpus": [{"model": "A100-SXM4-80GB", "count": 1, "shards": 4},
              {"model": "A100-SXM4-80GB", "count": 1, "mps": 100}]}]},
  "workload": {"jobs": []}}"#;
    let e = parse_scenario(Path::new("t.json"), text)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("configures gres/shard; a node has one shared GRES"),
        "{e}"
    );
    // Groups without shares on a node that has some: their GPUs get 0.
    let text = text.replace(r#", "mps": 100"#, "");
    let s = parse_scenario(Path::new("t.json"), &text).unwrap();
    assert_eq!(
        s.cluster.node_shares(NodeId(0)).unwrap().per_gpu,
        vec![4, 0]
    );
}

fn conf_cluster(slurm: &str, gres: &str) -> Result<(Cluster, Vec<String>), String> {
    let (conf, mut w) =
        parse_slurm_conf(Path::new("slurm.conf"), slurm).map_err(|e| e.to_string())?;
    let (g, w2) = gresim_slurm::gresconf::parse_gres_conf(Path::new("gres.conf"), gres)
        .map_err(|e| e.to_string())?;
    w.extend(w2);
    let c = build_cluster(&conf, &g, &mut w).map_err(|e| e.to_string())?;
    Ok((c, w.iter().map(|x| x.to_string()).collect()))
}

const SLURM: &str = "SelectType=select/cons_tres\nGresTypes=gpu,shard,mps\n\
NodeName=n[1-2] Sockets=2 CoresPerSocket=8 RealMemory=64000 Gres=gpu:a100:4,GRES\n\
PartitionName=p Nodes=ALL Default=YES\n";
const GPUS: &str = "Name=gpu Type=a100 File=/dev/nvidia[0-3]\n";

#[test]
fn slurm_conf_spreads_and_gres_conf_places() {
    // Gres=shard:10 alone: spread evenly, remainder to the last GPUs.
    let (c, w) = conf_cluster(&SLURM.replace("GRES", "shard:10"), GPUS).unwrap();
    let ns = c.node_shares(NodeId(0)).unwrap();
    assert_eq!(
        (ns.kind, ns.per_gpu.clone()),
        (ShareKind::Shard, vec![2, 2, 3, 3])
    );
    assert!(w.iter().all(|x| !x.contains("not modelled")), "{w:?}");
    // gres.conf Name=mps Count=400 without File: 100 per GPU, one_sharing.
    let (c, _) = conf_cluster(
        &SLURM.replace("GRES", "mps:400"),
        &format!("{GPUS}Name=mps Count=400\n"),
    )
    .unwrap();
    let ns = c.node_shares(NodeId(1)).unwrap();
    assert_eq!((ns.per_gpu.clone(), ns.one_sharing), (vec![100; 4], true));
    // Per File, with Flags=all_sharing; GPU 2 gets none.
    let (c, w) = conf_cluster(
        &SLURM.replace("GRES", "mps:300"),
        &format!(
            "{GPUS}Name=mps Count=200 File=/dev/nvidia[0-1] Flags=all_sharing\n\
             Name=mps Count=100 File=/dev/nvidia3\nName=mps Count=50 File=/dev/nvidia9\n"
        ),
    )
    .unwrap();
    let ns = c.node_shares(NodeId(0)).unwrap();
    assert_eq!(
        (ns.per_gpu.clone(), ns.one_sharing),
        (vec![100, 100, 0, 100], false)
    );
    assert!(
        w.iter()
            .any(|x| x.contains("File=/dev/nvidia9 matches no gres/gpu")),
        "{w:?}"
    );
}

#[test]
fn slurm_conf_decides_what_is_scheduled() {
    // gres.conf alone does not configure mps: slurm.conf's Gres= must.
    let (c, w) = conf_cluster(
        &SLURM.replace(",GRES", ""),
        &format!("{GPUS}Name=mps Count=400\n"),
    )
    .unwrap();
    assert!(c.node_shares(NodeId(0)).is_none());
    let hits: Vec<_> = w
        .iter()
        .filter(|x| x.contains("gres.conf:2: GRES 'mps' is not configured"))
        .collect();
    assert_eq!(hits.len(), 1, "one warning per line, not per node: {w:?}");
    // A GresTypes without shard: ignored with a warning on the node line.
    let (c, w) = conf_cluster(
        &SLURM
            .replace("GRES", "shard:8")
            .replace("gpu,shard,mps", "gpu"),
        GPUS,
    )
    .unwrap();
    assert!(c.node_shares(NodeId(0)).is_none());
    assert!(
        w.iter()
            .any(|x| x.contains("slurm.conf:3: GRES 'shard' is not in GresTypes")),
        "{w:?}"
    );
}

#[test]
fn slurm_conf_errors() {
    let e = conf_cluster(&SLURM.replace("GRES", "shard:8,mps:400"), GPUS).unwrap_err();
    assert!(
        e.contains("both gres/shard and gres/mps") && e.contains("slurm.conf:3"),
        "{e}"
    );
    let e = conf_cluster(
        "NodeName=c1 CPUs=8 RealMemory=1000 Gres=shard:8\nPartitionName=p Nodes=ALL\n",
        "",
    )
    .unwrap_err();
    assert!(e.contains("needs gres/gpu devices"), "{e}");
    let e = conf_cluster(
        &SLURM.replace("GRES", "shard:8"),
        &format!("{GPUS}Name=shard Count=4\nName=shard Count=4 File=/dev/nvidia0\n"),
    )
    .unwrap_err();
    assert!(
        e.contains("with and without File=") && e.contains("gres.conf:"),
        "{e}"
    );
}

fn env_of(extra: &str, script: &str, constrain: bool) -> Vec<(String, String)> {
    let s = scenario(extra, "").unwrap();
    let sc = sbatch::parse_script(Path::new("job.sh"), script, &[]).unwrap();
    let opts = EnvOptions {
        constrain_devices: constrain,
        ..EnvOptions::default()
    };
    let env = job_env(&s.cluster, &s.params, &sc, &opts).unwrap();
    env.tasks[0].vars.clone()
}

fn var<'a>(v: &'a [(String, String)], k: &str) -> Option<&'a str> {
    v.iter().find(|(a, _)| a == k).map(|(_, b)| b.as_str())
}

#[test]
fn task_environment_of_shares() {
    let mps = env_of(
        r#""mps": 200"#,
        "#!/bin/bash\n#SBATCH --gres=mps:50\n#SBATCH --mem=1G\nsrun prog\n",
        false,
    );
    // 50 of a GPU's 200 is 25 %; the GPU is GRES index 0.
    assert_eq!(var(&mps, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), Some("25"));
    assert_eq!(var(&mps, "CUDA_VISIBLE_DEVICES"), Some("0"));
    assert_eq!(var(&mps, "SLURM_GPUS_ON_NODE"), Some("1"));
    assert_eq!(var(&mps, "SLURM_SHARDS_ON_NODE"), None);
    let shard = env_of(
        r#""shards": 4"#,
        "#!/bin/bash\n#SBATCH --gres=shard:3\n#SBATCH --mem=1G\nsrun prog\n",
        true,
    );
    assert_eq!(var(&shard, "SLURM_SHARDS_ON_NODE"), Some("3"));
    assert_eq!(var(&shard, "CUDA_VISIBLE_DEVICES"), Some("0"));
    assert_eq!(var(&shard, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), None);
    // A plain GPU job sees neither.
    let gpu = env_of(
        r#""shards": 4"#,
        "#!/bin/bash\n#SBATCH --gres=gpu:1\n#SBATCH --mem=1G\nsrun prog\n",
        false,
    );
    assert_eq!(var(&gpu, "SLURM_SHARDS_ON_NODE"), None);
    assert_eq!(var(&gpu, "CUDA_VISIBLE_DEVICES"), Some("0"));
}

const OPENB: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time,scheduled_time\n\
p1,4000,1024,1,250,,0,100,10\n\
p2,4000,1024,1,1000,,0,100,10\n\
p3,4000,1024,2,1000,,0,100,10\n\
p4,4000,1024,1,333,,0,100,10\n";

fn openb(extra: &str, mode: GpuMilli) -> Result<Vec<gresim_model::JobSpec>, String> {
    let s = scenario(extra, "").unwrap();
    let opts = TraceOptions {
        openb_gpu_milli: mode,
        ..TraceOptions::default()
    };
    let r = Box::new(BufReader::new(OPENB.as_bytes()));
    let src = traces::open_reader(
        Path::new("pods.csv"),
        r,
        TraceFormat::OpenB,
        &opts,
        &s.cluster,
    )
    .map_err(|e| e.to_string())?;
    let jobs = src
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    Ok(jobs)
}

#[test]
fn openb_gpu_milli_maps_to_shares() {
    let whole = openb(r#""mps": 100"#, GpuMilli::Whole).unwrap();
    assert!(whole.iter().all(|j| j.request.shared.is_none()));
    assert_eq!(whole[0].request.gpus_per_node.len(), 1);
    let mps = openb(r#""mps": 100"#, GpuMilli::Mps).unwrap();
    let got: Vec<Option<u32>> = mps
        .iter()
        .map(|j| j.request.shared.map(|s| s.per_node))
        .collect();
    // 250 milli = 25 %, 333 → ⌈33.3⌉ = 34; whole-GPU pods stay GPUs.
    assert_eq!(got, vec![Some(25), None, None, Some(34)]);
    assert!(mps[0].request.gpus_per_node.is_empty());
    assert_eq!(mps[2].request.gpus_per_node[0].count, 2);
    // Shards: 8 per GPU → ⌈0.25·8⌉ = 2, ⌈0.333·8⌉ = 3.
    let sh = openb(r#""shards": 8"#, GpuMilli::Shard).unwrap();
    let got: Vec<Option<u32>> = sh
        .iter()
        .map(|j| j.request.shared.map(|s| s.per_node))
        .collect();
    assert_eq!(got, vec![Some(2), None, None, Some(3)]);
    // Asking for mps on a cluster without it names the option.
    let e = openb(r#""shards": 8"#, GpuMilli::Mps).unwrap_err();
    assert!(
        e.contains("openb_gpu_milli") && e.contains("no node configures gres/mps"),
        "{e}"
    );
}

#[test]
fn openb_option_in_the_scenario() {
    let dir = std::env::temp_dir().join(format!("gresim-sharing-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("pods.csv"), OPENB).unwrap();
    let text = |v: &str| {
        format!(
            r#"{{"schema_version": 1, "name": "t",
  "cluster": {{"nodes": [{{"names": "g1", "sockets": 1, "cores_per_socket": 16, "memory": "64G",
     "gpus": [{{"model": "A100-SXM4-80GB", "count": 2, "mps": 100}}]}}]}},
  "workload": {{"trace": "pods.csv", "format": "openb", "trace_options": {{"openb_gpu_milli": "{v}"}}}}}}"#
        )
    };
    let p = dir.join("s.json");
    std::fs::write(&p, text("mps")).unwrap();
    let s = gresim_io::load_scenario(&p).unwrap();
    let jobs: Vec<_> = s.jobs(1).collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(jobs[0].request.shared.map(|r| r.per_node), Some(25));
    std::fs::write(&p, text("half")).unwrap();
    let e = gresim_io::load_scenario(&p).err().unwrap().to_string();
    assert!(
        e.contains("workload.trace_options.openb_gpu_milli") && e.contains("whole, mps, shard"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
