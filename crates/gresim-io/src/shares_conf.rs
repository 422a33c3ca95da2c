//! Shared GRES (gres/shard, gres/mps) from a scenario's GPU groups,
//! resolved to per-GPU counts ([`gresim_model::shares::NodeShares`]) as
//! [`gresim_slurm::shares_conf`] resolves slurm.conf's and gres.conf's.

use std::path::Path;

use gresim_model::shares::{NodeShares, ShareKind};
use gresim_model::GpuDevice;
use gresim_slurm::shares_conf::one_sharing;

use crate::error::InputError;
use crate::spec::GpuGroupDef;

/// The shared GRES of one node of a scenario node group: `groups` are its
/// GPU groups (after templates), `gpus` the devices they made, `gp` the
/// group's JSON path.
pub(crate) fn group_shares(
    file: &Path,
    gp: &str,
    groups: &[GpuGroupDef],
    gpus: &[GpuDevice],
) -> Result<Option<NodeShares>, InputError> {
    let err = |path: String, msg: String| InputError::at(file, path, msg);
    let mut kind: Option<(ShareKind, usize)> = None;
    let mut sharing: Option<(bool, usize)> = None;
    // Physical GPUs of each group, in order: group ki covers phys ranges[ki].
    let mut ranges = Vec::with_capacity(groups.len());
    let mut phys = 0u32;
    for (ki, gg) in groups.iter().enumerate() {
        let kp = format!("{gp}.gpus[{ki}]");
        ranges.push(phys..phys + gg.count);
        phys += gg.count;
        let k = match (gg.shards, gg.mps) {
            (None, None) => {
                if gg.sharing.is_some() {
                    return Err(err(
                        format!("{kp}.sharing"),
                        "sharing is given but the group has neither shards nor mps".into(),
                    ));
                }
                continue;
            }
            (Some(_), Some(_)) => {
                return Err(err(
                    kp,
                    "a GPU group configures shards or mps, not both (Slurm links one shared GRES to gres/gpu)".into(),
                ))
            }
            (Some(_), None) => ShareKind::Shard,
            (None, Some(_)) => ShareKind::Mps,
        };
        if gg.mig.is_some() || gg.mig_dynamic {
            return Err(err(
                format!("{kp}.{k}"),
                format!("gres/{k} on MIG GPUs is not modelled; give the group whole GPUs"),
            ));
        }
        if let Some((other, at)) = kind.filter(|(o, _)| *o != k) {
            return Err(err(
                format!("{kp}.{k}"),
                format!(
                    "gpus[{at}] configures gres/{other}; a node has one shared GRES (Slurm 22.05 links only one to gres/gpu)"
                ),
            ));
        }
        kind = Some((k, ki));
        let one =
            one_sharing(k, gg.sharing.as_deref()).map_err(|e| err(format!("{kp}.sharing"), e))?;
        if gg.sharing.is_some() {
            if let Some((prev, at)) = sharing.filter(|(p, _)| *p != one) {
                let word = |b: bool| if b { "one_sharing" } else { "all_sharing" };
                return Err(err(
                    format!("{kp}.sharing"),
                    format!(
                        "{} conflicts with gpus[{at}]'s {}; the node has one sharing mode",
                        word(one),
                        word(prev)
                    ),
                ));
            }
            sharing = Some((one, ki));
        }
    }
    let Some((kind, _)) = kind else {
        return Ok(None);
    };
    let per_gpu = gpus
        .iter()
        .map(|d| {
            let p = u32::from(d.phys);
            ranges
                .iter()
                .position(|r| r.contains(&p))
                .and_then(|ki| match kind {
                    ShareKind::Shard => groups[ki].shards,
                    ShareKind::Mps => groups[ki].mps,
                })
                .unwrap_or(0)
        })
        .collect::<Vec<u32>>();
    let one = sharing.map_or(kind.default_one_sharing(), |(o, _)| o);
    Ok(Some(NodeShares {
        kind,
        per_gpu,
        one_sharing: one,
    }))
}
