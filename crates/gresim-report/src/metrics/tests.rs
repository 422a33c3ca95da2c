//! Unit tests of `metrics` (metrics.rs).

use super::*;
use crate::run_file::RunMeta;
use crate::test_support::sample_output;

#[test]
fn series_follow_the_run() {
    let rf = RunFile::from_output(&sample_output(), &RunMeta::new("tiny"));
    assert_eq!(snapshot_times(300, 100), vec![0, 100, 200, 300]);
    let (om, csv) = metrics_files(&rf, 100);
    assert!(om.ends_with("# EOF\n"));
    // GPU 0 of gpu01: idle at 0, job 1 at 100, idle at 200 and 300.
    let g0 = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"gpu01\",modelName=\"NVIDIA A100-SXM4-80GB\",job=";
    assert!(om.contains(&format!("{g0}\"\"}} 0 0\n")), "{om}");
    assert!(om.contains(&format!("{g0}\"1\"}} 100 100\n")), "{om}");
    // GPU 1: job 2's second run at 200.
    assert!(om.contains("DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"gpu01\",modelName=\"NVIDIA A100-SXM4-80GB\",job=\"2\"} 100 200\n"));
    assert!(om.contains("slurm_queue_pending 2 0\n") || om.contains("slurm_queue_pending 1 0\n"));
    assert!(
        om.contains(
            "slurm_queue_running 1 100\nslurm_queue_running 1 200\nslurm_queue_running 0 300\n"
        ),
        "{om}"
    );
    assert!(om.contains("slurm_nodes_mix 1 100\n"));
    assert!(om.contains("slurm_job_gpu_utilization{job=\"2\",user=\"bob\"} 100 200\n"));
    // Families are not interleaved: each TYPE line appears once.
    assert_eq!(om.matches("# TYPE DCGM_FI_DEV_GPU_UTIL gauge").count(), 1);
    assert!(
        csv.starts_with("timestamp,metric,labels,value\n0,DCGM_FI_DEV_GPU_UTIL,\"gpu=\"\"0\"\"")
    );
    assert!(csv.contains("\n300,slurm_queue_running,,0\n"));
}
