//! Slurm's own formats, read into gresim's model.
//!
//! Every reader here follows Slurm 22.05's syntax and messages and depends
//! on `gresim-model` only:
//!
//! - [`slurmconf`]: slurm.conf (nodes, partitions, scheduler settings) and
//!   the [`gresim_model::Cluster`] built from slurm.conf + gres.conf
//!   ([`gresconf`]) + topology.conf ([`topology_conf`]); [`conf_lines`] is
//!   the line reader the three share, [`shares_conf`] resolves their shared
//!   GRES (gres/shard, gres/mps);
//! - [`partition`]: a partition lowered into the model with Slurm's
//!   defaults, for slurm.conf and the scenario's JSON alike;
//! - [`sacctmgr`]: sacctmgr commands and `sacctmgr dump` files;
//! - [`sbatch`]: `#SBATCH` scripts and sbatch command lines, read into an
//!   [`sbatch::SbatchJob`] (the options as written, each value checked),
//!   with [`slurm_opts`], the grammar of option values (`--gres`,
//!   `--gpus`, `-N`, `--array`, `--dependency`);
//! - [`lint`]: the script linter behind `sim lint`;
//! - [`taskenv`]: the environment each task sees (`CUDA_VISIBLE_DEVICES`,
//!   `SLURM_*`) for a given allocation.
//!
//! What needs more than the model stays with its users: turning a
//! slurm.conf into scheduler settings, building a script's job into the
//! scenario's `JobDef`, and choosing the allocation a task environment is
//! rendered for live in `gresim-io` (its `slurmconf`, `sbatch` and
//! `taskenv` modules). Errors are [`InputError`]s naming the file, the
//! line (or command-line argument) and what was expected.

pub mod conf_lines;
pub mod error;
pub mod gresconf;
pub mod lint;
pub mod num_or_str;
pub mod partition;
pub mod sacctmgr;
pub mod sbatch;
pub mod shares_conf;
pub mod slurm_opts;
pub mod slurmconf;
pub mod taskenv;
pub mod topology_conf;

pub use error::InputError;
pub use num_or_str::NumOrStr;
