//! Dynamic MIG (docs/mig.md): the repartitionings a policy asks for after
//! its pass (`Policy::take_mig_reconfigs`), checked and applied, the GPU's
//! devices out of service until the cluster's reconfiguration delay has
//! passed, and back in service with their new layout (`MigReady`).

use gresim_model::{NodeAdminState, NodeId};

use super::Engine;
use crate::event::{EventKind, Phase};
use crate::EngineError;

impl Engine<'_> {
    /// Counts the devices `mask` of `node` in or out of the available GPUs.
    fn count_devices(&mut self, node: NodeId, mask: u64, up: bool) {
        self.rec.count_devices(&self.cluster, node, mask, up);
    }

    /// Applies the repartitionings the policy decided in its pass: each GPU
    /// must be idle and the layout legal, else the run stops with an
    /// internal error (a policy bug). The GPU's devices leave service until
    /// the cluster's reconfiguration delay has passed.
    pub(super) fn apply_mig_reconfigs(&mut self) -> Result<(), EngineError> {
        let reqs = self.policy.take_mig_reconfigs();
        if reqs.is_empty() {
            return Ok(());
        }
        let policy = self.policy.name();
        for r in reqs {
            let Some(g) = self.cluster.dynamic_mig().and_then(|d| d.gpus.get(r.gpu)) else {
                return Err(EngineError::Internal(format!(
                    "policy {policy} asked to repartition GPU {}, which is not a dynamic MIG GPU",
                    r.gpu
                )));
            };
            let (node, online, phys) = (g.node, g.online_mask(), g.phys);
            if online & !self.state.node(node).free_gpus != 0 {
                return Err(EngineError::Internal(format!(
                    "policy {policy} asked to repartition GPU {phys} of {} while it is in use",
                    self.cluster.node(node).name
                )));
            }
            if self.state.node(node).admin != NodeAdminState::Down {
                self.count_devices(node, online, false);
            }
            let (was, ready) = self
                .cluster
                .begin_mig_reconfig(r.gpu, r.to, self.now)
                .map_err(|e| EngineError::Internal(format!("policy {policy}: {e}")))?;
            self.state
                .take_gpus_offline(&self.cluster, node, was)
                .map_err(|e| EngineError::Internal(e.to_string()))?;
            self.queue.push(
                ready,
                Phase::NodeReturn,
                EventKind::MigReady { gpu: r.gpu as u32 },
            );
        }
        // What the policy knows of nodes under the old GRES types must go.
        self.policy.cluster_changed();
        Ok(())
    }

    /// A repartitioned GPU's new devices come into service.
    pub(super) fn on_mig_ready(&mut self, gpu: usize) -> Result<(), EngineError> {
        let mask = self
            .cluster
            .finish_mig_reconfig(gpu, self.now)
            .map_err(EngineError::Internal)?;
        let node = self
            .cluster
            .dynamic_mig()
            .map(|d| d.gpus[gpu].node)
            .ok_or_else(|| EngineError::Internal("no dynamic MIG GPUs".into()))?;
        self.state
            .put_gpus_online(&self.cluster, node, mask)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        if self.state.node(node).admin != NodeAdminState::Down {
            self.count_devices(node, mask, true);
        }
        self.policy.cluster_changed();
        // New devices are like freed ones: a pass may use them at once.
        self.mark_dirty();
        self.request_main(self.now);
        Ok(())
    }
}
