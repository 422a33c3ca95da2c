//! Dependencies (`--dependency`: after, afterany, afterok, afternotok,
//! singleton) and singleton groups (`Deps`): whether a submission's
//! dependency is met, and the re-checks when what it waits on starts or
//! ends.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use gresim_model::job::{DepKind, JobSpec};
use gresim_model::{JobIdx, JobState, Reason};

use super::Engine;

/// Whether a dependency is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DepStatus {
    Waiting,
    Met,
    Never,
}

/// The live jobs of one (user, name) and who waits on them as a singleton.
#[derive(Debug, Clone, Default)]
pub(super) struct SingletonGroup {
    pub(super) live: BTreeSet<JobIdx>,
    pub(super) waiters: BTreeSet<u32>,
}

/// Who waits on whom.
#[derive(Default)]
pub(super) struct Deps {
    /// Subs waiting on each submission (dependents index), for the
    /// submissions that have any (most have none: a map, not a vector).
    pub(super) dependents: BTreeMap<u32, Vec<u32>>,
    /// (user, name) → group id, for singleton dependencies.
    pub(super) group_ids: BTreeMap<(Arc<str>, Arc<str>), u32>,
    /// Per group: its jobs that have not ended, and the submissions waiting
    /// on a singleton dependency in it.
    pub(super) groups: Vec<SingletonGroup>,
    /// Group id of each submission.
    pub(super) sub_group: Vec<u32>,
    /// Recently found groups by the very strings (`Arc::ptr_eq`) of their
    /// (user, name), which a generated workload shares between its jobs:
    /// [`Deps::register`] answers from here without comparing strings in
    /// `group_ids`. The entries hold their strings, so a pointer cannot be
    /// reused for other text while it is here.
    recent: Vec<Option<RecentGroup>>,
}

/// An entry of [`Deps::recent`]: (user, name) and their group.
type RecentGroup = (Arc<str>, Arc<str>, u32);

/// Entries of [`Deps::recent`] (the slot is a 10-bit hash).
const RECENT_BITS: u32 = 10;
const RECENT: usize = 1 << RECENT_BITS;

impl Deps {
    /// A new submission `sub`: the submissions it waits on know it, and it
    /// joins the singleton group of its (user, name), whose id this returns.
    pub(super) fn register(&mut self, sub: u32, spec: &JobSpec) -> u32 {
        if let Some(dep) = spec.dependency() {
            for t in &dep.terms {
                if let Some(target) = t.target {
                    // Only this or an earlier submission can be waited on.
                    if target <= sub {
                        self.dependents.entry(target).or_default().push(sub);
                    }
                }
            }
        }
        let (user, name) = (&spec.user, &spec.name);
        let (u, n) = (
            Arc::as_ptr(user).cast::<u8>() as u64,
            Arc::as_ptr(name).cast::<u8>() as u64,
        );
        let slot = crate::memo::ptr_slot(u ^ n.rotate_left(29), RECENT_BITS);
        if self.recent.is_empty() {
            self.recent.resize(RECENT, None);
        }
        let group = match &self.recent[slot] {
            Some((u, n, g)) if Arc::ptr_eq(u, user) && Arc::ptr_eq(n, name) => *g,
            _ => {
                let key = (Arc::clone(user), Arc::clone(name));
                let next_group = self.groups.len() as u32;
                let group = *self.group_ids.entry(key).or_insert(next_group);
                if group == next_group {
                    self.groups.push(SingletonGroup::default());
                }
                self.recent[slot] = Some((Arc::clone(user), Arc::clone(name), group));
                group
            }
        };
        self.sub_group.push(group);
        group
    }
}

impl Engine<'_> {
    pub(super) fn dep_status(&self, sub: u32) -> DepStatus {
        let Some(dep) = self.specs[sub as usize].dependency() else {
            return DepStatus::Met;
        };
        let mut all_met = true;
        let mut any_met = false;
        let mut all_never = true;
        let mut any_never = false;
        for t in &dep.terms {
            let s = self.term_status(sub, t);
            all_met &= s == DepStatus::Met;
            any_met |= s == DepStatus::Met;
            all_never &= s == DepStatus::Never;
            any_never |= s == DepStatus::Never;
        }
        if dep.any {
            if any_met {
                DepStatus::Met
            } else if all_never {
                DepStatus::Never
            } else {
                DepStatus::Waiting
            }
        } else if any_never {
            DepStatus::Never
        } else if all_met {
            DepStatus::Met
        } else {
            DepStatus::Waiting
        }
    }

    pub(super) fn term_status(&self, sub: u32, t: &gresim_model::job::DepTerm) -> DepStatus {
        if t.kind == DepKind::Singleton {
            let first = self.subs[sub as usize].first;
            let g = &self.deps.groups[self.deps.sub_group[sub as usize] as usize];
            let blocked = g.live.iter().any(|&j| {
                let job = &self.jobs[j.idx()];
                job.state == JobState::Running || (job.is_pending() && j.0 < first)
            });
            return if blocked {
                DepStatus::Waiting
            } else {
                DepStatus::Met
            };
        }
        let Some(target) = t.target else {
            return DepStatus::Met;
        };
        let Some(s) = self.subs.get(target as usize) else {
            return DepStatus::Met;
        };
        // The state of the dependee: one task, or the whole submission.
        let (done, not_ok, started, total) = match t.task {
            Some(task) => {
                let spec = &self.specs[target as usize];
                let pos = spec
                    .array()
                    .and_then(|a| a.indices.iter().position(|&i| i == task));
                let Some(pos) = pos else {
                    return DepStatus::Met;
                };
                let j = &self.jobs[s.first as usize + pos];
                let done = u32::from(j.state.is_terminal());
                let not_ok = u32::from(j.state.is_terminal() && j.state != JobState::Completed);
                (done, not_ok, !j.runs.is_empty() || j.state.is_terminal(), 1)
            }
            None => (s.done, s.not_ok, s.started_any || s.done > 0, s.tasks),
        };
        match t.kind {
            DepKind::After => {
                if started {
                    DepStatus::Met
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::AfterAny => {
                if done == total {
                    DepStatus::Met
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::AfterOk => {
                if not_ok > 0 {
                    DepStatus::Never
                } else if done == total {
                    DepStatus::Met
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::AfterNotOk => {
                if done == total {
                    if not_ok > 0 {
                        DepStatus::Met
                    } else {
                        DepStatus::Never
                    }
                } else {
                    DepStatus::Waiting
                }
            }
            DepKind::Singleton => DepStatus::Met,
        }
    }

    /// Re-checks the jobs that wait on submission `sub`.
    pub(super) fn notify_dependents(&mut self, sub: u32) {
        let deps = self.deps.dependents.get(&sub).cloned().unwrap_or_default();
        for d in deps {
            self.recheck_sub(d);
        }
    }

    pub(super) fn recheck_sub(&mut self, sub: u32) {
        let s = &self.subs[sub as usize];
        let (first, n) = (s.first, s.tasks);
        for j in first..first + n {
            let job = &self.jobs[j as usize];
            if job.state == JobState::Pending
                && job.eligible.is_none()
                && matches!(job.reason, Reason::Dependency | Reason::None)
            {
                self.try_eligible(JobIdx(j));
            }
        }
    }

    /// Re-checks the submissions waiting as singletons on `job`'s group.
    pub(super) fn notify_singletons(&mut self, job: JobIdx) {
        let g = self.deps.sub_group[self.jobs[job.idx()].sub as usize] as usize;
        if self.deps.groups[g].waiters.is_empty() {
            return;
        }
        let waiting: Vec<u32> = self.deps.groups[g].waiters.iter().copied().collect();
        for s in waiting {
            self.recheck_sub(s);
            // A requeue can make it wait again: it stops waiting only
            // when every task of it has ended.
            let done = self
                .sub_jobs(s)
                .all(|j| self.jobs[j as usize].state.is_terminal());
            if done {
                self.deps.groups[g].waiters.remove(&s);
            }
        }
    }
}
