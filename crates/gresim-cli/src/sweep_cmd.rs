//! `sim sweep SWEEP.json`: a grid of policies × parameters × seeds over one
//! scenario, run in parallel with rayon (docs/scenario-format.md, "Sweeps").
//!
//! - `--shard K/N` runs the points `i` with `i mod N = K` (by default from
//!   `SLURM_ARRAY_TASK_ID` / `SLURM_ARRAY_TASK_COUNT`) and writes its rows to
//!   `DIR/shards/shard-K-of-N.json`;
//! - `sim sweep merge DIR…` joins shards into `results.json`/`results.csv`,
//!   byte for byte what the unsharded run writes;
//! - `--emit-sbatch FILE` writes a Slurm job-array script running the shards.
//!
//! Every point is one run exactly as `sim run --policy P --seed S` builds it
//! (through [`gresim::sweep::run_point`]), on a scenario whose JSON
//! has the point's parameter values set. Results go through one function that
//! orders rows by point index, so they do not depend on the thread count or
//! on how the sweep was sharded.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gresim::sweep::{point_label, run_point, table, write_results, Point, Row, ShardFile, Sweep};
use rayon::prelude::*;

use crate::progress::Progress;
use crate::Failure;

/// The largest array Slurm accepts by default (MaxArraySize=1001).
const MAX_ARRAY_TASKS: usize = 1000;

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct SweepArgs {
    #[command(subcommand)]
    cmd: Option<SweepCmd>,
    /// The sweep file (JSON, see docs/scenario-format.md, "Sweeps").
    #[arg(required = true)]
    sweep: Option<PathBuf>,
    /// Output directory (default: the sweep's outputs.dir, else out/<sweep name>).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Run only shard K of N (0 <= K < N): the points i with i mod N = K.
    /// Default: SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN) of
    /// SLURM_ARRAY_TASK_COUNT when set, else the whole sweep.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Worker threads (default: RAYON_NUM_THREADS, else one per core). Results do not depend on it.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Print nothing on success, and no progress bar.
    #[arg(long, short)]
    quiet: bool,
    /// Print the points of the grid (and of the shard) and exit without running.
    #[arg(long)]
    list: bool,
    /// Write a Slurm job-array script that runs the sweep in shards, then exit.
    #[arg(long, value_name = "FILE")]
    emit_sbatch: Option<PathBuf>,
    #[command(flatten)]
    sbatch: SbatchOpts,
}

/// Options of `--emit-sbatch`.
#[derive(clap::Args, Debug)]
struct SbatchOpts {
    /// Array tasks (shards) (default: one per point, at most 1000).
    #[arg(long, requires = "emit_sbatch", value_name = "N")]
    tasks: Option<usize>,
    /// CPUs per array task; each task runs that many points at once.
    #[arg(long, requires = "emit_sbatch", default_value_t = 1, value_name = "N")]
    cpus_per_task: u32,
    /// Memory per array task (sbatch --mem), e.g. 8G.
    #[arg(long, requires = "emit_sbatch")]
    mem: Option<String>,
    /// Time limit per array task (sbatch --time), e.g. 2:00:00.
    #[arg(long, requires = "emit_sbatch")]
    time: Option<String>,
    /// Partition of the array and merge jobs.
    #[arg(long, requires = "emit_sbatch")]
    partition: Option<String>,
    /// Another #SBATCH option for the array and merge jobs (repeatable), e.g. --sbatch-arg=--account=proj.
    #[arg(
        long = "sbatch-arg",
        requires = "emit_sbatch",
        allow_hyphen_values = true,
        value_name = "OPTION"
    )]
    sbatch_args: Vec<String>,
    /// The sim binary the jobs run (default: this one).
    #[arg(long, requires = "emit_sbatch", value_name = "PATH")]
    sim_bin: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum SweepCmd {
    /// Join the shards' rows (DIR/shards/shard-K-of-N.json) into results.json and results.csv.
    Merge(MergeArgs),
}

#[derive(clap::Args, Debug)]
struct MergeArgs {
    /// Sweep output directories (or shard files) holding the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where to write the results (default: the first directory).
    #[arg(long, short)]
    out: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(long, short)]
    quiet: bool,
}

// ---- shards -----------------------------------------------------------------

/// Which shard to run, and where that came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shard {
    k: usize,
    n: usize,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = || format!("--shard: expected K/N with 0 <= K < N, got '{s}'");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k: usize = k.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || k >= n {
        return Err(bad());
    }
    Ok(Shard { k, n })
}

/// The shard from Slurm's job-array variables, if they are set.
fn shard_from_env(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<Shard>, String> {
    let Some(id) = get("SLURM_ARRAY_TASK_ID") else {
        return Ok(None);
    };
    let num = |name: &str, dflt: Option<usize>| -> Result<usize, String> {
        match get(name) {
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| format!("{name}={v}: expected a whole number")),
            None => dflt.ok_or_else(|| {
                format!("SLURM_ARRAY_TASK_ID is set but {name} is not; give --shard K/N")
            }),
        }
    };
    let id: usize = id
        .trim()
        .parse()
        .map_err(|_| format!("SLURM_ARRAY_TASK_ID={id}: expected a whole number"))?;
    let count = num("SLURM_ARRAY_TASK_COUNT", None)?;
    let min = num("SLURM_ARRAY_TASK_MIN", Some(0))?;
    let step = num("SLURM_ARRAY_TASK_STEP", Some(1))?.max(1);
    if id < min || !(id - min).is_multiple_of(step) || (id - min) / step >= count || count == 0 {
        return Err(format!(
            "SLURM_ARRAY_TASK_ID={id} with SLURM_ARRAY_TASK_MIN={min}, SLURM_ARRAY_TASK_STEP={step} and SLURM_ARRAY_TASK_COUNT={count} is not a shard; give --shard K/N"
        ));
    }
    Ok(Some(Shard {
        k: (id - min) / step,
        n: count,
    }))
}

fn shard_file_name(s: Shard) -> String {
    format!("shard-{}-of-{}.json", s.k, s.n)
}

// ---- running ------------------------------------------------------------------

pub fn cmd_sweep(args: &SweepArgs) -> Result<(), Failure> {
    if let Some(SweepCmd::Merge(m)) = &args.cmd {
        return cmd_merge(m);
    }
    let Some(path) = &args.sweep else {
        return Err(Failure::input("expected a sweep file"));
    };
    let sweep = gresim::sweep::load(path).map_err(Failure::input)?;
    if !args.quiet {
        for w in &sweep.warnings {
            eprintln!("warning: {w}");
        }
    }
    let dir = args
        .out
        .clone()
        .or_else(|| sweep.out_dir.clone())
        .unwrap_or_else(|| Path::new("out").join(&sweep.head.sweep));
    if let Some(file) = &args.emit_sbatch {
        return emit_sbatch(args, &sweep, &dir, file);
    }
    let (shard, from_env) = match &args.shard {
        Some(s) => (parse_shard(s).map_err(Failure::input)?, false),
        None => match shard_from_env(&|k| std::env::var(k).ok()).map_err(Failure::input)? {
            Some(s) => (s, true),
            None => (Shard { k: 0, n: 1 }, false),
        },
    };
    let mine: Vec<&Point> = sweep
        .points
        .iter()
        .filter(|p| p.index % shard.n == shard.k)
        .collect();
    if args.list {
        let mut s = String::new();
        for p in &mine {
            let _ = writeln!(s, "{}", point_label(&sweep, p));
        }
        return crate::print_stdout(&s);
    }
    if args.threads == Some(0) {
        return Err(Failure::input("--threads: expected at least 1"));
    }
    if from_env && !args.quiet {
        eprintln!(
            "shard {}/{} (from SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT)",
            shard.k, shard.n
        );
    }
    let rows = match args.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .map_err(|e| Failure::internal(format!("cannot start {t} threads: {e}")))?
            .install(|| run_points(&sweep, &mine, &dir, args.quiet))?,
        None => run_points(&sweep, &mine, &dir, args.quiet)?,
    };
    if shard.n == 1 {
        write_results(&sweep.head, &rows, &dir).map_err(Failure::from)?;
        if !args.quiet {
            crate::print_stdout(&format!(
                "sweep {}: {} points\n{}outputs  {}\n",
                sweep.head.sweep,
                rows.len(),
                table(&sweep.names, &rows),
                dir.display()
            ))?;
        }
    } else {
        let file = ShardFile {
            head: sweep.head.clone(),
            shard: shard.k,
            shards: shard.n,
            rows,
        };
        let text = serde_json::to_string_pretty(&file).map_err(Failure::internal)? + "\n";
        // Array tasks on different nodes may share a pid: write through a
        // temporary name of this shard's own, not a per-pid directory.
        let sdir = dir.join("shards");
        std::fs::create_dir_all(&sdir)
            .map_err(|e| Failure::internal(format!("cannot create {}: {e}", sdir.display())))?;
        crate::write_atomic(&sdir.join(shard_file_name(shard)), &text)?;
        if !args.quiet {
            crate::print_stdout(&format!(
                "sweep {}: shard {}/{}: {} of {} points\noutputs  {}\nmerge with: sim sweep merge {}\n",
                sweep.head.sweep,
                shard.k,
                shard.n,
                file.rows.len(),
                sweep.points.len(),
                sdir.join(shard_file_name(shard)).display(),
                dir.display()
            ))?;
        }
    }
    Ok(())
}

/// Runs `points` in parallel on the current rayon pool; rows in point order.
fn run_points(
    sweep: &Sweep,
    points: &[&Point],
    dir: &Path,
    quiet: bool,
) -> Result<Vec<Row>, Failure> {
    let mut bar = Progress::new(Some(points.len() as u64), "points", quiet);
    let rows = points
        .par_iter()
        .map(|p| {
            let r = run_point(sweep, p, Some(dir)).map_err(Failure::from);
            bar.inc(1);
            r
        })
        .collect::<Result<Vec<Row>, Failure>>();
    bar.finish();
    rows
}

// ---- merge --------------------------------------------------------------------

fn cmd_merge(args: &MergeArgs) -> Result<(), Failure> {
    let mut files = Vec::new();
    for d in &args.dirs {
        files.extend(gresim::sweep::shard_files(d)?);
    }
    let (head, rows) = gresim::sweep::merge_shards(&files)?;
    let dir = match &args.out {
        Some(o) => o.clone(),
        None if args.dirs[0].is_dir() => args.dirs[0].clone(),
        None => return Err(Failure::input("give --out DIR when merging shard files")),
    };
    write_results(&head, &rows, &dir).map_err(Failure::from)?;
    if !args.quiet {
        crate::print_stdout(&format!(
            "sweep {}: merged {} points from {} shard file(s)\noutputs  {}\n",
            head.sweep,
            rows.len(),
            files.len(),
            dir.display()
        ))?;
    }
    Ok(())
}

// ---- the Slurm job-array script -------------------------------------------------

/// Quotes for a POSIX shell.
fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn absolute(p: &Path) -> Result<PathBuf, Failure> {
    std::path::absolute(p).map_err(|e| {
        Failure::input(format!(
            "{}: cannot make the path absolute: {e}",
            p.display()
        ))
    })
}

fn emit_sbatch(args: &SweepArgs, sweep: &Sweep, dir: &Path, file: &Path) -> Result<(), Failure> {
    let o = &args.sbatch;
    let points = sweep.points.len();
    let tasks = o.tasks.unwrap_or(points.min(MAX_ARRAY_TASKS));
    if tasks == 0 || tasks > MAX_ARRAY_TASKS {
        return Err(Failure::input(format!(
            "--tasks: expected 1 to {MAX_ARRAY_TASKS} (Slurm's default MaxArraySize is 1001), got {tasks}"
        )));
    }
    if o.cpus_per_task == 0 {
        return Err(Failure::input("--cpus-per-task: expected at least 1"));
    }
    if args.shard.is_some() {
        return Err(Failure::input("--shard and --emit-sbatch do not go together: the script gives each array task its shard"));
    }
    if tasks > points && !args.quiet {
        eprintln!(
            "warning: {tasks} tasks for {points} points: {} tasks will have nothing to do",
            tasks - points
        );
    }
    for (flag, v) in [
        ("--mem", &o.mem),
        ("--time", &o.time),
        ("--partition", &o.partition),
    ] {
        if let Some(v) = v {
            if v.is_empty() || v.contains(char::is_whitespace) {
                return Err(Failure::input(format!(
                    "{flag}: expected a value without spaces, got '{v}'"
                )));
            }
        }
    }
    for a in &o.sbatch_args {
        if !a.starts_with('-') || a.contains('\n') {
            return Err(Failure::input(format!(
                "--sbatch-arg: expected an sbatch option such as --account=proj, got '{a}'"
            )));
        }
    }
    let sim = match &o.sim_bin {
        Some(p) => absolute(p)?,
        None => std::env::current_exe()
            .map_err(|e| Failure::internal(format!("cannot find this sim binary: {e}")))?,
    };
    let sweep_abs = absolute(&sweep.path)?;
    let out_abs = absolute(dir)?;
    let log_dir = out_abs.join("slurm");
    let name = format!("gresim-sweep-{}", sweep.head.sweep);
    let job_name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut shared = Vec::new();
    if let Some(t) = &o.time {
        shared.push(format!("--time={t}"));
    }
    if let Some(p) = &o.partition {
        shared.push(format!("--partition={p}"));
    }
    shared.extend(o.sbatch_args.iter().cloned());

    let q = |p: &Path| sh_quote(&p.to_string_lossy());
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(s, "#SBATCH --job-name={job_name}");
    let _ = writeln!(s, "#SBATCH --array=0-{}", tasks - 1);
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", o.cpus_per_task);
    if let Some(m) = &o.mem {
        let _ = writeln!(s, "#SBATCH --mem={m}");
    }
    for a in &shared {
        let _ = writeln!(s, "#SBATCH {a}");
    }
    let _ = writeln!(
        s,
        "#SBATCH --output={}",
        log_dir.join("%x-%A_%a.out").display()
    );
    let _ = writeln!(
        s,
        "#
# Written by `sim sweep --emit-sbatch` for the sweep '{sweep_name}': {points} points in
# {tasks} shards. Array task K runs shard K/{tasks}: the points i with i mod {tasks} = K.
#
#   bash {file}     submits the array and a merge job that runs once every task succeeded
#   sbatch {file}   submits the array only; merge afterwards with:
#                   {sim_q} sweep merge {out_q}
#   sbatch --array=K {file}   runs shard K again (after a failure), then merge.
#
# Each task writes {out_q}/points/NNNN/ and {out_q}/shards/shard-K-of-{tasks}.json;
# the merge writes {out_q}/results.json and results.csv, the same bytes as one
# unsharded `sim sweep` run.
set -euo pipefail
SIM={sim_q}
SWEEP={sweep_q}
OUT={out_q}
if [ -z \"${{SLURM_ARRAY_TASK_ID:-}}\" ]; then
    mkdir -p {log_q}
    array=$(sbatch --parsable \"$0\")
    array=${{array%%;*}}
    merge=$(sbatch --parsable --job-name={job_name}-merge --dependency=afterok:\"$array\" \\
        --ntasks=1 --cpus-per-task=1{shared_args} \\
        --output={merge_log} \\
        --wrap={wrap})
    echo \"submitted array job $array ({tasks} tasks) and merge job ${{merge%%;*}}\"
    exit 0
fi
exec \"$SIM\" sweep \"$SWEEP\" --out \"$OUT\" --shard \"$SLURM_ARRAY_TASK_ID/{tasks}\" \\
    --threads \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet",
        sweep_name = sweep.head.sweep,
        file = file.display(),
        sim_q = q(&sim),
        out_q = q(&out_abs),
        sweep_q = q(&sweep_abs),
        log_q = q(&log_dir),
        shared_args = shared
            .iter()
            .map(|a| format!(" {}", sh_quote(a)))
            .collect::<String>(),
        merge_log = q(&log_dir.join("%x-%j.out")),
        wrap = sh_quote(&format!("{} sweep merge --quiet {}", q(&sim), q(&out_abs))),
    );
    // Slurm opens the output files before a task starts: the directory must exist.
    std::fs::create_dir_all(&log_dir)
        .map_err(|e| Failure::internal(format!("cannot create {}: {e}", log_dir.display())))?;
    crate::write_atomic(file, &s)?;
    if !args.quiet {
        crate::print_stdout(&format!(
            "wrote {}: {points} points in {tasks} array tasks\nsubmit with: bash {}   (array + merge job)\n",
            file.display(),
            file.display()
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
