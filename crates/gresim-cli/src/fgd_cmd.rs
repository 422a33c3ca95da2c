//! `sim fgd`: reproduce the FGD paper (ATC'23) on the OpenB trace and compare
//! with the published figures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gresim_frag::experiment::{stat, Experiment, Metric, RunResult};
use gresim_frag::mig::{LayoutRule, MigGeometry, StartRule};
use gresim_frag::mig_experiment::{default_mix, parse_mix, uniform_nodes, MigExperiment};
use gresim_frag::model::TaskSpec;
use gresim_frag::openb::{Cluster, Published, PublishedKey};
use gresim_frag::PolicyKind;
use gresim_model::catalog;

use crate::Failure;

/// Arrival points (% of GPU capacity requested) at which the fragmentation is shown.
const FRAG_POINTS: [usize; 4] = [80, 90, 100, 130];

#[derive(clap::Args, Debug)]
pub struct FgdArgs {
    /// Data root holding alibaba-openb-gpu-v2023/ and fgd-expected-results/,
    /// as .csv or .csv.gz files [default: the repository's data/, which ships
    /// them compressed; see data/*/SOURCE.md].
    #[arg(long)]
    data: Option<PathBuf>,
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
    /// Run the experiment on MIG-partitioned GPUs instead of GPU sharing: a
    /// synthetic task mix on a uniform cluster by default (no data needed),
    /// or OpenB mapped to MIG with --mig-openb. No published figures exist.
    #[arg(long)]
    mig: bool,
    /// MIG: GPU model (A100-40GB, A100-80GB, H100-80GB, H200).
    #[arg(long, default_value = "A100-80GB", requires = "mig")]
    mig_model: String,
    /// MIG: nodes of the synthetic cluster.
    #[arg(
        long,
        default_value_t = 100,
        requires = "mig",
        conflicts_with = "mig_openb"
    )]
    mig_nodes: usize,
    /// MIG: GPUs per node of the synthetic cluster.
    #[arg(
        long,
        default_value_t = 8,
        requires = "mig",
        conflicts_with = "mig_openb"
    )]
    mig_gpus: u8,
    /// MIG: CPUs per node of the synthetic cluster.
    #[arg(
        long,
        default_value_t = 128,
        requires = "mig",
        conflicts_with = "mig_openb"
    )]
    mig_cpus: u64,
    /// MIG: task mix, comma-separated TASK:WEIGHT[:CPUS], TASK a profile of
    /// the model (3g.40gb), Nx<whole-GPU profile> (2x7g.80gb) or cpu; CPUs
    /// default to 2 per compute slice. Default: 1g 30, 1g (2 memory slices)
    /// 10, 2g 20, 3g 20, 4g 10, 7g 10.
    #[arg(long, requires = "mig", conflicts_with = "mig_openb")]
    mig_mix: Option<String>,
    /// MIG: use OpenB's cluster (CPUs, GPU counts) and tasks (--workload),
    /// each shared GPU mapped to the smallest profile with enough compute.
    #[arg(long, requires = "mig")]
    mig_openb: bool,
    /// MIG: layouts a GPU may take: published (NVIDIA's combinations) or
    /// legal (everything the slice model admits).
    #[arg(long, default_value = "published", requires = "mig")]
    mig_layouts: String,
    /// MIG: where the deterministic policies put an instance: highest or
    /// lowest legal start.
    #[arg(long, default_value = "highest", requires = "mig")]
    mig_start: String,
}

impl FgdArgs {
    fn data(&self) -> PathBuf {
        self.data.clone().unwrap_or_else(gresim::fgd::repo_data)
    }
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
    let names: Vec<&str> = s.split(',').collect();
    gresim::fgd::parse_policies(&names).map_err(|e| Failure::input(format!("--policies: {e}")))
}

/// Runs the command. Wall-clock time is read here only for the time report
/// printed at the end; it never reaches any result.
#[allow(clippy::disallowed_methods)]
pub fn cmd_fgd(args: &FgdArgs) -> Result<(), Failure> {
    let started = std::time::Instant::now();
    let seeds = parse_seeds(&args.seeds)?;
    let policies = parse_policies(&args.policies)?;
    if args.mig {
        return cmd_fgd_mig(args, &seeds, &policies, started);
    }
    let (cluster, tasks) = read_openb(args)?;
    let published = gresim::fgd::read_published_figures(&args.data()).map_err(Failure::input)?;

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
    text.push_str(&wall_line(ran, loaded, results.len(), threads));
    if let Some(dir) = &args.out {
        write_outputs(
            dir,
            "fgd",
            &results,
            &policies,
            published.as_ref(),
            &workload,
        )?;
        let _ = writeln!(text, "wrote {}", dir.display());
    }
    crate::print_stdout(&text)?;
    Ok(())
}

/// OpenB's cluster and the `--workload` tasks.
fn read_openb(args: &FgdArgs) -> Result<(Cluster, Vec<TaskSpec>), Failure> {
    gresim::fgd::read_openb(&args.data(), &args.workload).map_err(Failure::input)
}

/// `sim fgd --mig`: the experiment on MIG-partitioned GPUs.
#[allow(clippy::disallowed_methods)]
fn cmd_fgd_mig(
    args: &FgdArgs,
    seeds: &[u64],
    policies: &[PolicyKind],
    started: std::time::Instant,
) -> Result<(), Failure> {
    let model_id = catalog::model_by_name(&args.mig_model).ok_or_else(|| {
        Failure::input(format!(
            "--mig-model: unknown GPU model '{}'; expected one of {}",
            args.mig_model,
            catalog::model_names().join(", ")
        ))
    })?;
    let model = catalog::model(model_id);
    let rule = match args.mig_layouts.to_ascii_lowercase().as_str() {
        "published" => LayoutRule::Published,
        "legal" => LayoutRule::Legal,
        other => {
            return Err(Failure::input(format!(
                "--mig-layouts: expected published or legal, found '{other}'"
            )))
        }
    };
    let start = match args.mig_start.to_ascii_lowercase().as_str() {
        "highest" => StartRule::Highest,
        "lowest" => StartRule::Lowest,
        other => {
            return Err(Failure::input(format!(
                "--mig-start: expected highest or lowest, found '{other}'"
            )))
        }
    };
    let geo =
        MigGeometry::new(model, rule).map_err(|e| Failure::input(format!("--mig-model: {e}")))?;
    let layouts = geo.layout_count();
    let (exp, source) = if args.mig_openb {
        let (cluster, tasks) = read_openb(args)?;
        let exp =
            MigExperiment::from_openb(geo, start, &cluster, &tasks).map_err(Failure::input)?;
        (
            exp,
            format!("openb_pod_list_{} mapped to MIG", args.workload),
        )
    } else {
        if args.mig_nodes == 0 || args.mig_nodes > 100_000 {
            return Err(Failure::input(format!(
                "--mig-nodes: expected 1..=100000, found {}",
                args.mig_nodes
            )));
        }
        if args.mig_gpus == 0 || usize::from(args.mig_gpus) > gresim_frag::model::MAX_GPUS {
            return Err(Failure::input(format!(
                "--mig-gpus: expected 1..={}, found {}",
                gresim_frag::model::MAX_GPUS,
                args.mig_gpus
            )));
        }
        if args.mig_cpus > 1_000_000 {
            return Err(Failure::input(format!(
                "--mig-cpus: expected at most 1000000, found {}",
                args.mig_cpus
            )));
        }
        let mix = match &args.mig_mix {
            Some(m) => parse_mix(&geo, m).map_err(|e| Failure::input(format!("--mig-mix: {e}")))?,
            None => default_mix(&geo),
        };
        let nodes = uniform_nodes(args.mig_nodes, args.mig_gpus, args.mig_cpus);
        let exp = MigExperiment::synthetic(geo, start, nodes, &mix)
            .map_err(|e| Failure::input(format!("--mig-mix: {e}")))?;
        let what = if args.mig_mix.is_some() {
            "custom"
        } else {
            "default"
        };
        (exp, format!("synthetic {what} mix"))
    };
    let loaded = started.elapsed();
    let (results, threads) = exp
        .run_grid_on(seeds, policies, args.threads.unwrap_or(0))
        .map_err(|e| Failure::internal(format!("cannot start worker threads: {e}")))?;
    let ran = started.elapsed();

    let mut text = mig_report(&exp, &results, policies, seeds, &source, layouts);
    text.push_str(&wall_line(ran, loaded, results.len(), threads));
    if let Some(dir) = &args.out {
        let workload = if args.mig_openb {
            format!("mig_openb_pod_list_{}", args.workload)
        } else {
            "mig_synthetic".to_string()
        };
        write_outputs(dir, "mig", &results, policies, None, &workload)?;
        let _ = writeln!(text, "wrote {}", dir.display());
    }
    crate::print_stdout(&text)?;
    Ok(())
}

fn seeds_label(seeds: &[u64]) -> String {
    if seeds.len() > 1 {
        format!("{}..{} ({})", seeds[0], seeds[seeds.len() - 1], seeds.len())
    } else {
        format!("{seeds:?}")
    }
}

fn mig_report(
    exp: &MigExperiment,
    results: &[RunResult],
    policies: &[PolicyKind],
    seeds: &[u64],
    source: &str,
    layouts: usize,
) -> String {
    let mut s = String::new();
    let cpus: Vec<u64> = exp.nodes.iter().map(|n| n.cpu_milli / 1000).collect();
    let (cmin, cmax) = (
        cpus.iter().min().copied().unwrap_or(0),
        cpus.iter().max().copied().unwrap_or(0),
    );
    let _ = writeln!(
        s,
        "FGD on MIG: {source}; {} nodes / {} {} GPUs ({} compute slices), {} CPUs per node; tune {}, seeds {}",
        exp.nodes.len(),
        exp.total_gpus(),
        exp.geo.model.name,
        exp.total_gpus() * 7,
        if cmin == cmax {
            cmin.to_string()
        } else {
            format!("{cmin}–{cmax}")
        },
        exp.tune,
        seeds_label(seeds)
    );
    let _ = writeln!(
        s,
        "layouts: {} ({layouts} reachable per GPU); start rule: {}; instances are created at placement (dynamic MIG)",
        match exp.geo.rule {
            LayoutRule::Published => "NVIDIA's published combinations",
            LayoutRule::Legal => "every layout the slice model admits",
        },
        match exp.start {
            StartRule::Highest => "highest legal start",
            StartRule::Lowest => "lowest legal start",
        }
    );
    let mut dist: Vec<String> = exp
        .dist
        .iter()
        .map(|(t, p)| {
            format!(
                "{} {:.1}% ({} CPU)",
                t.describe(&exp.geo),
                100.0 * p,
                t.cpu_milli as f64 / 1000.0
            )
        })
        .collect();
    let n = dist.len();
    if n > 8 {
        dist.truncate(8);
        dist.push(format!("… ({n} types)"));
    }
    let _ = writeln!(s, "task distribution of the measure: {}", dist.join(", "));
    let _ = writeln!(
        s,
        "each cell: mean ± sample std over seeds; no published MIG figures exist to compare with"
    );
    let cols: Vec<(Metric, usize, String)> = vec![
        (Metric::Alloc, 100, "alloc % @100%".into()),
        (Metric::Alloc, 130, "alloc % @130%".into()),
        (Metric::FragRatio, 80, "frag ratio % @80%".into()),
        (Metric::FragRatio, 90, "frag ratio % @90%".into()),
        (Metric::FragRatio, 100, "frag ratio % @100%".into()),
        (Metric::FragRatio, 130, "frag ratio % @130%".into()),
        (Metric::FragAmount, 100, "frag amount % @100%".into()),
        (Metric::FragAmount, 130, "frag amount % @130%".into()),
    ];
    for chunk in cols.chunks(4) {
        let _ = write!(s, "\n{:<16}", "policy");
        for (_, _, h) in chunk {
            let _ = write!(s, " | {h:^19}");
        }
        let _ = writeln!(s);
        for &p in policies {
            let _ = write!(s, "{:<16}", p.upstream_label());
            for &(m, pct, _) in chunk {
                let c = match stat(results, p, m, pct) {
                    Some(v) => format!("{:7.2} ± {:<5.2}", v.mean, v.std),
                    None => "--".to_string(),
                };
                let _ = write!(s, " | {c:^19}");
            }
            let _ = writeln!(s);
        }
    }
    let _ = writeln!(s);
    for &p in policies {
        let runs: Vec<&RunResult> = results.iter().filter(|r| r.policy == p).collect();
        let tasks: usize = runs.iter().map(|r| r.tasks).sum();
        let failed: usize = runs.iter().map(|r| r.failed).sum();
        let _ = writeln!(
            s,
            "{:<16} {tasks} placements attempted over {} runs, {failed} failed",
            p.upstream_label(),
            runs.len()
        );
    }
    s
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
        seeds_label(seeds)
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
                    cell(
                        ours,
                        gresim::fgd::published_mean(published, m, workload, p, pct)
                    )
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
                gresim::fgd::published_mean(published, m, workload, p, pct),
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

/// Writes `<prefix>_runs.csv` and `<prefix>_summary.csv` into `dir`.
fn write_outputs(
    dir: &Path,
    prefix: &str,
    results: &[RunResult],
    policies: &[PolicyKind],
    published: Option<&std::collections::BTreeMap<PublishedKey, Published>>,
    workload: &str,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::internal(format!("cannot create {}: {e}", dir.display())))?;
    let runs = gresim::fgd::runs_csv(results, workload);
    let summary = gresim::fgd::summary_csv(results, policies, published, workload);
    crate::write_atomic(&dir.join(format!("{prefix}_runs.csv")), &runs)?;
    crate::write_atomic(&dir.join(format!("{prefix}_summary.csv")), &summary)?;
    Ok(())
}

/// The wall-time line both experiments print (not part of any output file).
fn wall_line(
    ran: std::time::Duration,
    loaded: std::time::Duration,
    runs: usize,
    threads: usize,
) -> String {
    format!(
        "wall time: {:.2} s total ({:.2} s loading, {:.2} s for {runs} runs on {threads} threads)\n",
        ran.as_secs_f64(),
        loaded.as_secs_f64(),
        (ran - loaded).as_secs_f64(),
    )
}

#[cfg(test)]
mod tests;
