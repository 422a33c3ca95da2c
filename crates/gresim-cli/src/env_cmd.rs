//! `sim env SCRIPT --cluster SCENARIO|slurm.conf`: what each task of a batch script sees.

use std::path::PathBuf;

use clap::ValueEnum;
use gresim_slurm::taskenv::{EnvOptions, Launcher};

use crate::{print_stdout, Failure, Format};

#[derive(clap::Args, Debug)]
pub struct EnvArgs {
    /// The batch script (#SBATCH lines).
    pub script: PathBuf,
    /// The cluster, partitions and scheduler settings: a scenario file, or a
    /// site's slurm.conf (gres.conf beside it is read too).
    #[arg(long)]
    pub cluster: PathBuf,
    /// cgroup.conf ConstrainDevices=yes: tasks see their GPUs renumbered from 0.
    #[arg(long)]
    pub constrain_devices: bool,
    /// How the script starts its processes (auto: torchrun if the script runs torchrun or deepspeed).
    #[arg(long, value_enum, default_value_t = LauncherArg::Auto)]
    pub launcher: LauncherArg,
    /// The job id to show.
    #[arg(long, default_value_t = 1000)]
    pub job_id: u64,
    /// For a job array: the array index to show (default: the first).
    #[arg(long)]
    pub array_task: Option<u32>,
    /// The submitting user (for %u in --output).
    #[arg(long, default_value = "user")]
    pub user: String,
    /// How to print.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// sbatch command-line options after `--`; they override the script's.
    #[arg(last = true)]
    pub sbatch_args: Vec<String>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LauncherArg {
    Auto,
    Srun,
    Torchrun,
}

pub fn cmd_env(args: &EnvArgs) -> Result<(), Failure> {
    let scenario = gresim_io::compose::load_cluster(&args.cluster).map_err(Failure::input)?;
    let script = gresim_slurm::sbatch::load_script(&args.script, &args.sbatch_args)
        .map_err(Failure::input)?;
    let opts = EnvOptions {
        constrain_devices: args.constrain_devices,
        launcher: match args.launcher {
            LauncherArg::Auto => None,
            LauncherArg::Srun => Some(Launcher::Srun),
            LauncherArg::Torchrun => Some(Launcher::Torchrun),
        },
        job_id: args.job_id,
        array_task: args.array_task,
        user: args.user.clone(),
    };
    let env = gresim_io::taskenv::job_env(&scenario.cluster, &scenario.params, &script, &opts)
        .map_err(Failure::input)?;
    let text = match args.format {
        Format::Table => env.table(),
        Format::Json => {
            serde_json::to_string_pretty(&env.to_json()).map_err(Failure::internal)? + "\n"
        }
    };
    print_stdout(&text)
}
