//! The gang scheduler's time-slicing (src/slurmctld/gang.c of Slurm 22.05;
//! docs/preemption.md, "Gang time-slicing"), an engine mechanism as it is
//! slurmctld's own: for each partition with `OverSubscribe=FORCE:N`
//! (N > 1) under a PreemptMode with GANG, the jobs the policy started there
//! (possibly on the same cores, `gresim-sched/src/gang.rs`) take turns.
//! The policy places jobs; this module only suspends and resumes them,
//! through the same `suspend_job`/`resume_job` as `scontrol suspend`.
//!
//! What it follows (read, not copied):
//! * each partition keeps a job list, new jobs at the back; the *active
//!   row* is the cores of the jobs running in it;
//! * a job that starts (`gs_job_start()` → `_add_job_to_part()`) runs as a
//!   FILLER when its cores are free in the active row, and is suspended at
//!   once otherwise;
//! * every `SchedulerTimeSlice` seconds from slurmctld's start
//!   (`_timeslicer_thread()`; phased by `SchedParams::ctld_phase`) each
//!   partition with a job out of the active row is cycled
//!   (`_cycle_job_list()`): ACTIVE jobs move to the back of the list,
//!   FILLER ones become NO_ACTIVE where they stand, the active row is
//!   rebuilt from the list in order (ACTIVE), and the jobs out of it are
//!   suspended, those in it resumed;
//! * a job that ends (or is suspended by an admin) leaves its list
//!   (`gs_job_fini()`), and the row is updated without reordering
//!   (`_update_active_row()`): ACTIVE and FILLER jobs that still fit stay,
//!   then NO_ACTIVE jobs that fit resume as FILLERs; an admin resume adds
//!   the job again at the back.
//!
//! Not modelled: shadows (a higher-tier partition's jobs over this
//! partition's active row; SUSPEND,GANG preemption has its own mechanism,
//! `super::preempt`), GS_CPU/GS_SOCKET resources (cores are compared, as
//! with CR_Core_Memory). With no partition whose jobs share cores
//! `Engine::gang` is `None` and nothing here runs: no events, no cost;
//! with one that shares them without GANG (`OverSubscribe=FORCE:N`, its
//! jobs running at once) it only marks that a core may have several
//! holders.

use gresim_model::job::Time;
use gresim_model::{CoreSet, JobIdx, JobState, NodeId, PartId};

use super::Engine;
use crate::event::{EventKind, Phase};

/// A job's place in its partition's active row (`row_state` in gang.c).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowState {
    /// Not in the active row.
    NoActive,
    /// Put in the active row by the timeslicer.
    Active,
    /// Put in it because it fit (at its start, or when another ended).
    Filler,
}

#[derive(Debug, Clone, Copy)]
struct GangJob {
    job: JobIdx,
    row: RowState,
    /// Suspended by the gang scheduler (`sig_state == GS_SUSPEND`).
    suspended: bool,
}

/// The gang scheduler's state: a job list per time-sliced partition.
#[derive(Debug, Default)]
pub(super) struct Gang {
    /// Per partition (by index), its job list in gang order; always empty
    /// for a partition that is not time-sliced.
    lists: Vec<Vec<GangJob>>,
    /// Whether each partition is time-sliced.
    sliced: Vec<bool>,
    /// The timeslicer's next wake-up in the queue, when one is.
    next_tick: Option<Time>,
}

impl Gang {
    /// The gang state for `cluster` under `params`, or `None` when no
    /// partition's jobs share cores. A partition whose jobs share cores
    /// without gang scheduling (`OverSubscribe=FORCE:N`, no GANG) is not
    /// time-sliced: its jobs run at once, and the state only tells
    /// `release_run` that several jobs may hold a core.
    pub(super) fn new(
        cluster: &gresim_model::Cluster,
        params: &gresim_policy::SchedParams,
    ) -> Option<Box<Gang>> {
        let sliced: Vec<bool> = cluster
            .partitions
            .iter()
            .map(|p| params.time_sliced(p))
            .collect();
        let shared = cluster.partitions.iter().any(|p| params.shares_cores(p));
        shared.then(|| {
            Box::new(Gang {
                lists: vec![Vec::new(); sliced.len()],
                sliced,
                next_tick: None,
            })
        })
    }

    /// Whether a timeslicer wake-up at `t` is the one in force.
    pub(super) fn is_tick(&self, t: Time) -> bool {
        self.next_tick == Some(t)
    }
}

/// The cores of the active row, per node (sparse).
#[derive(Default)]
struct ActiveRow(Vec<(NodeId, CoreSet)>);

impl ActiveRow {
    fn fits(&self, cores: &[(NodeId, CoreSet)]) -> bool {
        cores.iter().all(|(n, c)| {
            self.0
                .iter()
                .find(|(m, _)| m == n)
                .is_none_or(|(_, x)| !x.intersects(c))
        })
    }

    fn add(&mut self, cores: &[(NodeId, CoreSet)]) {
        for (n, c) in cores {
            match self.0.iter_mut().find(|(m, _)| m == n) {
                Some((_, x)) => x.union_with(c),
                None => self.0.push((*n, *c)),
            }
        }
    }
}

impl Engine<'_> {
    /// The cores of `job`'s current run, per node.
    fn gang_cores(&self, job: JobIdx) -> Vec<(NodeId, CoreSet)> {
        self.jobs[job.idx()]
            .runs
            .last()
            .map(|r| r.alloc.nodes.iter().map(|na| (na.node, na.cores)).collect())
            .unwrap_or_default()
    }

    /// The time-sliced partition `job` runs in, if any.
    fn gang_part(&self, job: JobIdx) -> Option<PartId> {
        let g = self.gang.as_deref()?;
        let j = &self.jobs[job.idx()];
        let part = j.runs.last()?.partition;
        (j.state == JobState::Running && g.sliced.get(part.idx()) == Some(&true)).then_some(part)
    }

    /// `gs_job_start()`: a job that started (or an admin resumed) joins
    /// the back of its partition's list, running as a FILLER if its cores
    /// are free in the active row, suspended at once otherwise.
    pub(super) fn gang_start(&mut self, job: JobIdx) {
        let Some(part) = self.gang_part(job) else {
            return;
        };
        self.gang_remove(part, job);
        let cores = self.gang_cores(job);
        let row = self.active_row(part);
        let fits = !self.is_suspended(job) && row.fits(&cores);
        let Some(g) = self.gang.as_deref_mut() else {
            return;
        };
        g.lists[part.idx()].push(GangJob {
            job,
            row: if fits {
                RowState::Filler
            } else {
                RowState::NoActive
            },
            suspended: !fits,
        });
        if fits {
            self.update_active_row(part);
        } else {
            self.suspend_job(job);
            self.ensure_gang_tick();
        }
    }

    /// `gs_job_fini()`: `job` ends (or an admin suspends it): it leaves its
    /// partition's list, and jobs that fit now resume as FILLERs.
    pub(super) fn gang_fini(&mut self, job: JobIdx) {
        let Some(g) = self.gang.as_deref() else {
            return;
        };
        let Some(part) = self.jobs[job.idx()].runs.last().map(|r| r.partition) else {
            return;
        };
        if g.sliced.get(part.idx()) != Some(&true) {
            return;
        }
        if self.gang_remove(part, job) {
            self.update_active_row(part);
        }
    }

    /// Takes `job` off `part`'s list; whether it was there.
    fn gang_remove(&mut self, part: PartId, job: JobIdx) -> bool {
        let Some(g) = self.gang.as_deref_mut() else {
            return false;
        };
        let list = &mut g.lists[part.idx()];
        match list.iter().position(|x| x.job == job) {
            Some(k) => {
                list.remove(k);
                true
            }
            None => false,
        }
    }

    /// The active row of `part`: the cores of its ACTIVE and FILLER jobs.
    fn active_row(&self, part: PartId) -> ActiveRow {
        let mut row = ActiveRow::default();
        if let Some(g) = self.gang.as_deref() {
            for x in &g.lists[part.idx()] {
                if x.row != RowState::NoActive {
                    row.add(&self.gang_cores(x.job));
                }
            }
        }
        row
    }

    /// `_update_active_row()` with new jobs: rebuilds `part`'s active row
    /// without reordering its list (ACTIVE jobs, then FILLERs, that still
    /// fit; the others suspended), then resumes the NO_ACTIVE jobs that fit
    /// as FILLERs.
    fn update_active_row(&mut self, part: PartId) {
        let Some(g) = self.gang.as_deref() else {
            return;
        };
        let mut list = g.lists[part.idx()].clone();
        let mut row = ActiveRow::default();
        let mut suspend = Vec::new();
        let mut resume = Vec::new();
        for state in [RowState::Active, RowState::Filler] {
            for x in list.iter_mut().filter(|x| x.row == state) {
                let cores = self.gang_cores(x.job);
                if row.fits(&cores) {
                    row.add(&cores);
                } else {
                    if !x.suspended {
                        x.suspended = true;
                        suspend.push(x.job);
                    }
                    x.row = RowState::NoActive;
                }
            }
        }
        for x in list.iter_mut().filter(|x| x.row == RowState::NoActive) {
            let cores = self.gang_cores(x.job);
            if row.fits(&cores) {
                row.add(&cores);
                x.row = RowState::Filler;
                if x.suspended {
                    x.suspended = false;
                    resume.push(x.job);
                }
            }
        }
        self.gang_apply(part, list, &suspend, &resume);
    }

    /// `_cycle_job_list()`: the timeslicer's turn for `part`.
    fn cycle_job_list(&mut self, part: PartId) {
        let Some(g) = self.gang.as_deref() else {
            return;
        };
        let old = &g.lists[part.idx()];
        // ACTIVE jobs to the back (in their order), FILLERs NO_ACTIVE in place.
        let mut list: Vec<GangJob> = old
            .iter()
            .filter(|x| x.row != RowState::Active)
            .map(|x| GangJob {
                row: RowState::NoActive,
                ..*x
            })
            .collect();
        list.extend(
            old.iter()
                .filter(|x| x.row == RowState::Active)
                .map(|x| GangJob {
                    row: RowState::NoActive,
                    ..*x
                }),
        );
        // `_build_active_row()`: the list in order.
        let mut row = ActiveRow::default();
        for x in list.iter_mut() {
            let cores = self.gang_cores(x.job);
            if row.fits(&cores) {
                row.add(&cores);
                x.row = RowState::Active;
            }
        }
        let mut suspend = Vec::new();
        let mut resume = Vec::new();
        for x in list.iter_mut() {
            if x.row == RowState::NoActive && !x.suspended {
                x.suspended = true;
                suspend.push(x.job);
            }
        }
        for x in list.iter_mut() {
            if x.row == RowState::Active && x.suspended {
                x.suspended = false;
                resume.push(x.job);
            }
        }
        self.gang_apply(part, list, &suspend, &resume);
    }

    /// Stores `part`'s new list and suspends and resumes as decided.
    fn gang_apply(
        &mut self,
        part: PartId,
        list: Vec<GangJob>,
        suspend: &[JobIdx],
        resume: &[JobIdx],
    ) {
        if let Some(g) = self.gang.as_deref_mut() {
            g.lists[part.idx()] = list;
        }
        for &j in suspend {
            self.suspend_job(j);
        }
        for &j in resume {
            self.resume_job(j);
        }
        self.ensure_gang_tick();
    }

    /// Whether some partition has a job out of its active row (the
    /// timeslicer's `jobs_active < num_jobs`).
    fn gang_waiting(&self) -> bool {
        self.gang.as_deref().is_some_and(|g| {
            g.lists
                .iter()
                .any(|l| l.iter().any(|x| x.row == RowState::NoActive))
        })
    }

    /// Queues the timeslicer's next wake-up while a job waits for its turn
    /// (the thread wakes every `SchedulerTimeSlice` s from slurmctld's
    /// start, but a wake-up with nobody waiting changes nothing).
    fn ensure_gang_tick(&mut self) {
        if self.gang.as_deref().is_none_or(|g| g.next_tick.is_some()) || !self.gang_waiting() {
            return;
        }
        let iv = self.params.time_slice.max(1);
        let phase = self.params.ctld_phase % iv;
        let now = self.now;
        let at = if now < phase {
            phase
        } else {
            phase + ((now - phase) / iv + 1) * iv
        };
        if let Some(g) = self.gang.as_deref_mut() {
            g.next_tick = Some(at);
        }
        self.queue.push(at, Phase::Admin, EventKind::GangTick);
    }

    /// The timeslicer wakes up: each partition with a job waiting is cycled.
    pub(super) fn on_gang_tick(&mut self) {
        let Some(g) = self.gang.as_deref_mut() else {
            return;
        };
        g.next_tick = None;
        for k in 0..g.lists.len() {
            let waiting = self
                .gang
                .as_deref()
                .is_some_and(|g| g.lists[k].iter().any(|x| x.row == RowState::NoActive));
            if waiting {
                self.cycle_job_list(PartId::from_idx(k));
            }
        }
        self.ensure_gang_tick();
    }
}
