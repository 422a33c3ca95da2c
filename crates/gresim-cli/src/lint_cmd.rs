//! `sim lint SCRIPT [--cluster SCENARIO]`: the seed documents' pitfalls in a batch script.

use std::path::PathBuf;

use crate::{print_stdout, Failure, Format};

#[derive(clap::Args, Debug)]
pub struct LintArgs {
    /// The batch script (#SBATCH lines).
    pub script: PathBuf,
    /// A scenario file or a site's slurm.conf (gres.conf beside it): also
    /// check GPU types and partitions against its cluster.
    #[arg(long)]
    pub cluster: Option<PathBuf>,
    /// Exit 1 when there are findings (for CI).
    #[arg(long)]
    pub deny_warnings: bool,
    /// How to print.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// sbatch command-line options after `--`; they override the script's.
    #[arg(last = true)]
    pub sbatch_args: Vec<String>,
}

pub fn cmd_lint(args: &LintArgs) -> Result<(), Failure> {
    let scenario = match &args.cluster {
        Some(c) => Some(gresim_io::compose::load_cluster(c).map_err(Failure::input)?),
        None => None,
    };
    let script = gresim_slurm::sbatch::load_script(&args.script, &args.sbatch_args)
        .map_err(Failure::input)?;
    let findings = gresim_slurm::lint::lint(&script, scenario.as_ref().map(|s| &s.cluster));
    let file = args.script.display().to_string();
    let text = match args.format {
        Format::Table => {
            let mut t: String = findings.iter().map(|f| f.render(&file)).collect();
            t.push_str(&format!("{file}: {} warning(s)\n", findings.len()));
            t
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = findings
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "rule": f.rule, "file": file, "line": f.line,
                        "message": f.message, "why": f.why, "fix": f.fix,
                    })
                })
                .collect();
            serde_json::to_string_pretty(&v).map_err(Failure::internal)? + "\n"
        }
    };
    print_stdout(&text)?;
    if args.deny_warnings && !findings.is_empty() {
        return Err(Failure {
            code: 1,
            msg: format!("{} warning(s) and --deny-warnings", findings.len()),
        });
    }
    Ok(())
}
