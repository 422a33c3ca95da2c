//! `sim fgd`: reproduce the FGD paper (ATC'23) on the OpenB trace and compare
//! with the published figures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gresim_frag::experiment::{stat, Experiment, Metric, RunResult, MAX_PCT};
use gresim_frag::openb::{read_nodes, read_published, read_tasks, Published, PublishedKey};
use gresim_frag::PolicyKind;

use crate::Failure;

/// Arrival points (% of GPU capacity requested) at which the fragmentation is shown.
const FRAG_POINTS: [usize; 4] = [80, 90, 100, 130];

#[derive(clap::Args, Debug)]
pub struct FgdArgs {
    /// Data root holding alibaba-openb-gpu-v2023/ and fgd-expected-results/.
    #[arg(long, default_value = "../shared/data")]
    data: PathBuf,
    /// OpenB workload: default, cpu050, gpushare40, gpuspec10, multigpu20, …
    /// (the file openb_pod_list_<name>.csv).
    #[arg(long, default_value = "default")]
    workload: String,
    /// Seeds, as A..B (inclusive) or a comma list.
    #[arg(long, default_value = "42..51")]
    seeds: String,
    /// Policies, comma-separated: random,dotprod,clustering,packing,bestfit,fgd.
    #[arg(long, default_value = "random,dotprod,clustering,packing,bestfit,fgd")]
    policies: String,
    /// Also write per-run and summary CSVs here.
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

fn parse_seeds(s: &str) -> Result<Vec<u64>, Failure> {
    let bad = || {
        Failure::input(format!(
            "--seeds: expected A..B or a comma list of integers, found '{s}'"
        ))
    };
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?;
        if b < a || b - a > 10_000 {
            return Err(bad());
        }
        Ok((a..=b).collect())
    } else {
        s.split(',')
            .map(|x| x.trim().parse::<u64>().map_err(|_| bad()))
            .collect()
    }
}

fn parse_policies(s: &str) -> Result<Vec<PolicyKind>, Failure> {
    let mut out = Vec::new();
    for p in s.split(',').filter(|p| !p.trim().is_empty()) {
        let k = PolicyKind::parse(p).ok_or_else(|| {
            Failure::input(format!(
                "--policies: unknown policy '{p}'; expected some of {}",
                PolicyKind::ALL.map(PolicyKind::name).join(", ")
            ))
        })?;
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err(Failure::input("--policies: no policy given"));
    }
    Ok(out)
}

/// Runs the command. Wall-clock time is read here only for the time report
/// printed at the end; it never reaches any result.
#[allow(clippy::disallowed_methods)]
pub fn cmd_fgd(args: &FgdArgs) -> Result<(), Failure> {
    let started = std::time::Instant::now();
    let seeds = parse_seeds(&args.seeds)?;
    let policies = parse_policies(&args.policies)?;
    if args.workload.is_empty()
        || !args
            .workload
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(Failure::input(format!(
            "--workload: bad name '{}'",
            args.workload
        )));
    }
    let trace_dir = args.data.join("alibaba-openb-gpu-v2023");
    let cluster =
        read_nodes(&trace_dir.join("openb_node_list_gpu_node.csv")).map_err(Failure::input)?;
    let tasks = read_tasks(
        &trace_dir.join(format!("openb_pod_list_{}.csv", args.workload)),
        &cluster,
    )
    .map_err(Failure::input)?;
    let summary_path = args
        .data
        .join("fgd-expected-results/fgd_summary_by_arrival.csv");
    let published = if summary_path.exists() {
        Some(read_published(&summary_path).map_err(Failure::input)?)
    } else {
        None
    };

    let exp = Experiment::new(cluster, tasks);
    let loaded = started.elapsed();
    let (results, threads) = exp
        .run_grid_on(&seeds, &policies, args.threads.unwrap_or(0))
        .map_err(|e| Failure::internal(format!("cannot start worker threads: {e}")))?;
    let ran = started.elapsed();

    let workload = format!("openb_pod_list_{}", args.workload);
    let mut text = report(
        &exp,
        &results,
        &policies,
        &seeds,
        published.as_ref(),
        &workload,
    );
    let _ = writeln!(
        text,
        "wall time: {:.2} s total ({:.2} s loading, {:.2} s for {} runs on {} threads)",
        ran.as_secs_f64(),
        loaded.as_secs_f64(),
        (ran - loaded).as_secs_f64(),
        results.len(),
        threads
    );
    if let Some(dir) = &args.out {
        write_outputs(dir, &results, &policies, published.as_ref(), &workload)?;
        let _ = writeln!(text, "wrote {}", dir.display());
    }
    crate::print_stdout(&text)?;
    Ok(())
}

fn pub_mean(
    published: Option<&std::collections::BTreeMap<PublishedKey, Published>>,
    metric: Metric,
    workload: &str,
    p: PolicyKind,
    pct: usize,
) -> Option<f64> {
    let key = (
        metric.upstream_name().to_string(),
        workload.to_string(),
        p.upstream_label().to_string(),
        pct as u32,
    );
    published?
        .get(&key)
        .map(|v| v.mean)
        .filter(|m| m.is_finite())
}

fn cell(ours: Option<f64>, theirs: Option<f64>) -> String {
    match (ours, theirs) {
        (Some(o), Some(t)) => format!("{o:6.2} {t:6.2} {:+5.2}", o - t),
        (Some(o), None) => format!("{o:6.2}     --    --"),
        (None, Some(t)) => format!("    -- {t:6.2}    --"),
        (None, None) => "    --     --    --".to_string(),
    }
}

fn report(
    exp: &Experiment,
    results: &[RunResult],
    policies: &[PolicyKind],
    seeds: &[u64],
    published: Option<&std::collections::BTreeMap<PublishedKey, Published>>,
    workload: &str,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "FGD reproduction: {workload}, {} nodes / {} GPUs, {} original tasks, {} typical sizes, tune {}, seeds {}",
        exp.cluster.nodes.len(),
        exp.cluster.total_gpus(),
        exp.tasks.len(),
        exp.dist.len(),
        exp.tune,
        if seeds.len() > 1 {
            format!("{}..{} ({})", seeds[0], seeds[seeds.len() - 1], seeds.len())
        } else {
            format!("{seeds:?}")
        }
    );
    let _ = writeln!(
        s,
        "each cell: ours (mean over seeds)  published mean  difference in percentage points"
    );
    let mut cols: Vec<(Metric, usize, String)> = vec![
        (Metric::Alloc, 100, "alloc % @100%".into()),
        (Metric::Alloc, 130, "alloc % @130%".into()),
    ];
    for &p in &FRAG_POINTS {
        cols.push((Metric::FragRatio, p, format!("frag ratio % @{p}%")));
    }
    for &p in &FRAG_POINTS {
        cols.push((Metric::FragAmount, p, format!("frag amount % @{p}%")));
    }
    for chunk in cols.chunks(4) {
        let _ = write!(s, "\n{:<16}", "policy");
        for (_, _, h) in chunk {
            let _ = write!(s, " | {h:^19}");
        }
        let _ = writeln!(s);
        for &p in policies {
            let _ = write!(s, "{:<16}", p.upstream_label());
            for &(m, pct, _) in chunk {
                let ours = stat(results, p, m, pct).map(|v| v.mean);
                let _ = write!(
                    s,
                    " | {}",
                    cell(ours, pub_mean(published, m, workload, p, pct))
                );
            }
            let _ = writeln!(s);
        }
    }
    // Worst gap over the compared cells.
    let mut worst: Option<(f64, String)> = None;
    let mut within = 0;
    let mut compared = 0;
    for &(m, pct, ref h) in &cols {
        for &p in policies {
            if let (Some(o), Some(t)) = (
                stat(results, p, m, pct).map(|v| v.mean),
                pub_mean(published, m, workload, p, pct),
            ) {
                compared += 1;
                let d = (o - t).abs();
                if d <= 0.5 {
                    within += 1;
                }
                if worst.as_ref().is_none_or(|w| d > w.0) {
                    worst = Some((d, format!("{} {h}", p.upstream_label())));
                }
            }
        }
    }
    if let Some((d, what)) = worst {
        let _ = writeln!(
            s,
            "\n{within}/{compared} cells within 0.5 pp of the published mean; largest gap {d:.2} pp ({what})"
        );
    } else {
        let _ = writeln!(s, "\nno published figures for {workload}");
    }
    let failed: usize = results.iter().map(|r| r.failed).sum();
    let tasks: usize = results.iter().map(|r| r.tasks).sum();
    let _ = writeln!(
        s,
        "{tasks} placements attempted over {} runs, {failed} failed",
        results.len()
    );
    s
}

fn write_outputs(
    dir: &Path,
    results: &[RunResult],
    policies: &[PolicyKind],
    published: Option<&std::collections::BTreeMap<PublishedKey, Published>>,
    workload: &str,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::internal(format!("cannot create {}: {e}", dir.display())))?;
    let mut runs = String::from("workload,sc_policy,seed,metric,arrived_gpu_request_pct,value\n");
    for r in results {
        for m in Metric::ALL {
            for pct in 0..=MAX_PCT {
                if let Some(v) = r.get(m, pct) {
                    let _ = writeln!(
                        runs,
                        "{workload},{},{},{},{pct},{v}",
                        r.policy.upstream_label(),
                        r.seed,
                        m.upstream_name()
                    );
                }
            }
        }
    }
    let mut summary =
        String::from("metric,workload,sc_policy,arrived_gpu_request_pct,mean,std,n_seeds,published_mean,diff_pp\n");
    for m in Metric::ALL {
        for &p in policies {
            for pct in (10..=MAX_PCT).step_by(10) {
                if let Some(st) = stat(results, p, m, pct) {
                    let theirs = pub_mean(published, m, workload, p, pct);
                    let _ = writeln!(
                        summary,
                        "{},{workload},{},{pct},{:.3},{:.3},{},{},{}",
                        m.upstream_name(),
                        p.upstream_label(),
                        st.mean,
                        st.std,
                        st.n,
                        theirs.map(|t| format!("{t:.3}")).unwrap_or_default(),
                        theirs
                            .map(|t| format!("{:.3}", st.mean - t))
                            .unwrap_or_default(),
                    );
                }
            }
        }
    }
    crate::write_atomic(&dir.join("fgd_runs.csv"), &runs)?;
    crate::write_atomic(&dir.join("fgd_summary.csv"), &summary)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_and_policies_parse() {
        assert_eq!(parse_seeds("42..44").ok().unwrap(), vec![42, 43, 44]);
        assert_eq!(parse_seeds("1,5").ok().unwrap(), vec![1, 5]);
        assert!(parse_seeds("5..1").is_err());
        assert!(parse_seeds("x").is_err());
        assert_eq!(
            parse_policies("fgd,BestFit,06-FGD").ok().unwrap(),
            vec![PolicyKind::Fgd, PolicyKind::BestFit]
        );
        assert!(parse_policies("tetris").is_err());
    }

    fn args(data: &Path, out: Option<PathBuf>) -> FgdArgs {
        FgdArgs {
            data: data.to_path_buf(),
            workload: "tiny".into(),
            seeds: "1..2".into(),
            policies: "random,fgd".into(),
            out,
            threads: Some(1),
        }
    }

    #[test]
    fn bad_input_is_exit_2_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let trace = dir.path().join("alibaba-openb-gpu-v2023");
        std::fs::create_dir_all(&trace).unwrap();
        // Missing files.
        let e = cmd_fgd(&args(dir.path(), None)).err().unwrap();
        assert_eq!(e.code, 2);
        std::fs::write(
            trace.join("openb_node_list_gpu_node.csv"),
            "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,1024,2,T4\nn1,8000,1024,2,T4\n",
        )
        .unwrap();
        std::fs::write(
            trace.join("openb_pod_list_tiny.csv"),
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,1,500\np1,1000,10,one,500\n",
        )
        .unwrap();
        let e = cmd_fgd(&args(dir.path(), None)).err().unwrap();
        assert_eq!(e.code, 2);
        assert!(
            e.msg.contains("openb_pod_list_tiny.csv:3:") && e.msg.contains("num_gpu"),
            "{}",
            e.msg
        );
        // Fixed, it runs and writes its CSVs (no published figures for this workload).
        std::fs::write(
            trace.join("openb_pod_list_tiny.csv"),
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,1,500\np1,1000,10,1,300\np2,500,10,0,0\n",
        )
        .unwrap();
        let out = dir.path().join("out");
        assert!(cmd_fgd(&args(dir.path(), Some(out.clone()))).is_ok());
        let runs = std::fs::read_to_string(out.join("fgd_runs.csv")).unwrap();
        assert!(runs.starts_with("workload,sc_policy,seed,metric"));
        assert!(runs.contains("openb_pod_list_tiny,06-FGD,2,gpu_alloc_ratio_pct,"));
    }
}
