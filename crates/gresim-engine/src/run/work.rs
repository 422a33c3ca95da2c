//! How long a job's run lasts and what a failed run loses: the work left
//! since its last checkpoint (slowed down on the CPU fallback, plus the
//! restart overhead), a program that runs out of GPU memory, and the work
//! and GPU-seconds lost when a run fails or is requeued (docs/reliability.md).

use gresim_model::job::RunTime;
use gresim_model::{Allocation, JobIdx};

use super::Engine;

impl Engine<'_> {
    /// Seconds of run time the job's next run needs (`None`: it runs to its
    /// limit): the work left since the last checkpoint, slowed down on the CPU
    /// fallback, plus the restart overhead when it resumes from a checkpoint.
    pub(super) fn run_secs(&self, job: JobIdx) -> Option<u64> {
        let j = &self.jobs[job.idx()];
        let b = self.specs[j.sub as usize].behavior();
        let RunTime::Secs(d) = j.run_time else {
            return None;
        };
        let total = b.scaled(d);
        let overhead = if b.checkpoint_interval.is_some() && !j.runs.is_empty() {
            b.restart_overhead
        } else {
            0
        };
        Some(
            total
                .saturating_sub(j.work_saved())
                .saturating_add(overhead),
        )
    }

    /// Slurm does not manage GPU memory: a program that needs more than a
    /// device it got has fails with "CUDA out of memory".
    pub(super) fn runs_out_of_gpu_memory(&self, job: JobIdx, alloc: &Allocation) -> bool {
        let sub = self.jobs[job.idx()].sub as usize;
        let Some(need) = self.specs[sub].behavior().vram_mib else {
            return false;
        };
        alloc.nodes.iter().any(|na| {
            let node = &self.cluster.nodes[na.node.idx()];
            gresim_model::state::gpu_indices(na.gpus)
                .filter_map(|g| node.gpus.get(usize::from(g)))
                .any(|d| d.memory_mib() < need)
        })
    }

    /// The current run fails (node failure or requeue): the work since the
    /// last checkpoint is lost, and so is the restart overhead it spent.
    pub(super) fn account_failed_run(&mut self, job: JobIdx) {
        let now = self.now;
        let j = &self.jobs[job.idx()];
        let Some(r) = j.runs.last() else {
            return;
        };
        let b = *self.specs[j.sub as usize].behavior();
        let elapsed = now.saturating_sub(r.start);
        let overhead = match b.checkpoint_interval {
            Some(_) if j.runs.len() > 1 => b.restart_overhead.min(elapsed),
            _ => 0,
        };
        let saved = match (b.checkpoint_interval, j.oom) {
            (Some(iv), false) if iv > 0 => {
                let done = j.work_saved() + (elapsed - overhead);
                let total = match j.run_time {
                    RunTime::Secs(d) => b.scaled(d),
                    RunTime::ToLimit => u64::MAX,
                };
                // The checkpoints are at multiples of the interval, short of the end.
                let last = (done / iv) * iv;
                last.min(total.saturating_sub(1) / iv * iv)
                    .max(j.work_saved())
            }
            _ => j.work_saved(),
        };
        let gained = saved - j.work_saved();
        let lost = elapsed - gained.min(elapsed);
        let gpus: u64 = r
            .alloc
            .nodes
            .iter()
            .map(|na| u64::from(na.gpu_count()))
            .sum();
        let j = &mut self.jobs[job.idx()];
        j.set_work_saved(saved);
        j.add_lost(lost, lost * gpus);
    }
}
