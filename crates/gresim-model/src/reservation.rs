//! Advance reservations, as `scontrol create reservation` makes them
//! (Slurm 22.05, `src/slurmctld/reservation.c`).
//!
//! A reservation holds whole nodes for a time window, for some users or
//! accounts. Pure data and the tests Slurm makes of it:
//! [`Reservation::overlaps`] is `job_test_resv()`'s time test (a job whose
//! `[start, start + time limit)` meets the window cannot use the nodes),
//! [`Reservation::may_use`] is `_valid_job_access_resv()`, and
//! [`Reservations::conflict`] is `_resv_overlap()`, the refusal of a
//! reservation that overlaps another without `OVERLAP`. Recurring
//! reservations (`DAILY`, `WEEKLY`) hold their next occurrence, as Slurm's
//! `_advance_resv_time()` moves them once an occurrence ends.
//!
//! Reservations of cores or GRES on part of a node, licenses, burst
//! buffers, `TIME_FLOAT`, `MAGNETIC` and `REPLACE_DOWN` are not modelled
//! (docs/reservations.md). `REPLACE` is data here; the engine moves the
//! nodes (`_resv_node_replace()`).

use std::sync::Arc;

use crate::job::Time;
use crate::{NodeId, PartId};

/// `PURGE_COMP` without a time: 5 minutes (reservation.c's default).
pub const DEFAULT_PURGE_COMP: u64 = 300;

/// The flags of a reservation that change scheduling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ResvFlags(pub u16);

impl ResvFlags {
    /// `MAINT`: maintenance; may overlap other reservations, and a job
    /// whose partition lies wholly inside it waits with "ReqNodeNotAvail,
    /// Reserved for maintenance".
    pub const MAINT: u16 = 1;
    /// `IGNORE_JOBS`: created even if running jobs would still hold its nodes at its start.
    pub const IGNORE_JOBS: u16 = 1 << 1;
    /// `FLEX`: its jobs may also use nodes outside it and start at any time.
    pub const FLEX: u16 = 1 << 2;
    /// `OVERLAP`: may overlap other reservations.
    pub const OVERLAP: u16 = 1 << 3;
    /// `DAILY`: recurs every day.
    pub const DAILY: u16 = 1 << 4;
    /// `WEEKLY`: recurs every week.
    pub const WEEKLY: u16 = 1 << 5;
    /// `PURGE_COMP[=time]`: ends once no job has used it for a while.
    pub const PURGE_COMP: u16 = 1 << 6;
    /// `REPLACE`: a `NodeCnt=` reservation gives up its nodes that jobs
    /// use (or that are down or drained) for idle ones
    /// (`_resv_node_replace()`). Refused with `Nodes=`.
    pub const REPLACE: u16 = 1 << 7;

    pub fn has(self, f: u16) -> bool {
        self.0 & f != 0
    }

    /// Parses `scontrol`'s `Flags=` list (case-insensitive, comma separated;
    /// `PURGE_COMP=5:00` gives the purge time). Returns the flags and the
    /// purge time, or the first unknown flag.
    pub fn parse(s: &str) -> Result<(ResvFlags, Option<u64>), String> {
        let mut f = 0u16;
        let mut purge = None;
        for w in s.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let (name, val) = match w.split_once('=') {
                Some((a, b)) => (a, Some(b)),
                None => (w, None),
            };
            f |= match name.to_ascii_uppercase().as_str() {
                "MAINT" => Self::MAINT,
                "IGNORE_JOBS" => Self::IGNORE_JOBS,
                "FLEX" => Self::FLEX,
                "OVERLAP" => Self::OVERLAP,
                "DAILY" => Self::DAILY,
                "WEEKLY" => Self::WEEKLY,
                "REPLACE" => Self::REPLACE,
                "REPLACE_DOWN" => {
                    return Err(
                        "REPLACE_DOWN is not modelled (docs/reservations.md); REPLACE is".into(),
                    )
                }
                "PURGE_COMP" => {
                    // In seconds (scontrol's `time_str2secs()`: `MM:SS`
                    // is minutes and seconds, a bare number minutes).
                    use crate::slurm_time::{parse_duration_exact, TimeError};
                    let secs = match val {
                        None => DEFAULT_PURGE_COMP,
                        Some(v) => match parse_duration_exact(v) {
                            Ok(secs) => secs,
                            Err(TimeError::Unlimited { .. }) => u64::MAX,
                            Err(e) => return Err(format!("PURGE_COMP={v}: {e}")),
                        },
                    };
                    purge = Some(secs);
                    Self::PURGE_COMP
                }
                _ => {
                    return Err(format!(
                        "unknown reservation flag '{w}'; expected MAINT, IGNORE_JOBS, FLEX, \
                         OVERLAP, DAILY, WEEKLY, PURGE_COMP[=time] or REPLACE"
                    ))
                }
            };
        }
        if f & Self::DAILY != 0 && f & Self::WEEKLY != 0 {
            return Err("DAILY and WEEKLY together".into());
        }
        Ok((ResvFlags(f), purge))
    }

    /// Slurm's spelling, for views (`scontrol show reservation`).
    pub fn names(self) -> Vec<&'static str> {
        let all = [
            (Self::MAINT, "MAINT"),
            (Self::IGNORE_JOBS, "IGNORE_JOBS"),
            (Self::FLEX, "FLEX"),
            (Self::OVERLAP, "OVERLAP"),
            (Self::DAILY, "DAILY"),
            (Self::WEEKLY, "WEEKLY"),
            (Self::PURGE_COMP, "PURGE_COMP"),
            (Self::REPLACE, "REPLACE"),
        ];
        all.iter()
            .filter(|(b, _)| self.has(*b))
            .map(|(_, n)| *n)
            .collect()
    }
}

/// One reservation (its current or next occurrence, when it recurs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub name: Arc<str>,
    /// Its nodes, in node order.
    pub nodes: Vec<NodeId>,
    /// `Users=`: who may use it (with `accounts`, either grants access).
    pub users: Vec<Arc<str>>,
    /// `Accounts=`.
    pub accounts: Vec<Arc<str>>,
    pub start: Time,
    /// Exclusive: the reservation holds `[start, end)`.
    pub end: Time,
    pub flags: ResvFlags,
    /// With `PURGE_COMP`: seconds without a job after which it ends.
    pub purge_after: Option<u64>,
    /// Made with `NodeCnt=` (not `Nodes=`, Slurm's `SPEC_NODES`): only
    /// such a reservation may have `REPLACE`.
    pub by_count: bool,
    /// `PartitionName=`: where a `NodeCnt=` reservation picks its nodes,
    /// and `REPLACE` picks again (every node when none).
    pub partition: Option<PartId>,
}

const DAY: Time = 86_400;

impl Reservation {
    /// The recurrence period, for `DAILY` and `WEEKLY`.
    pub fn period(&self) -> Option<Time> {
        if self.flags.has(ResvFlags::DAILY) {
            Some(DAY)
        } else if self.flags.has(ResvFlags::WEEKLY) {
            Some(7 * DAY)
        } else {
            None
        }
    }

    /// The window as Slurm sees it at `now`: a recurring reservation whose
    /// occurrence ended has moved on (`_advance_resv_time()`).
    pub fn window(&self, now: Time) -> (Time, Time) {
        match self.period() {
            Some(p) if self.end <= now && self.end > self.start => {
                let k = (now - self.end) / p + 1;
                (self.start + k * p, self.end + k * p)
            }
            _ => (self.start, self.end),
        }
    }

    /// Whether a job running over `[s, e)` meets the window (seen at
    /// `now`): `job_test_resv()`'s `start_relative >= job_end_time ||
    /// end_relative <= job_start_time` skip, negated.
    pub fn overlaps(&self, now: Time, s: Time, e: Time) -> bool {
        let (rs, re) = self.window(now);
        rs < e && re > s
    }

    /// Whether the window is in force at `now`.
    pub fn active(&self, now: Time) -> bool {
        let (rs, re) = self.window(now);
        rs <= now && now < re
    }

    /// `_valid_job_access_resv()` without AccountingStorageEnforce: the
    /// job's user is named (or no user is), and its account is named (or
    /// no account is).
    pub fn may_use(&self, user: &str, account: Option<&str>) -> bool {
        (self.users.is_empty() || self.users.iter().any(|u| &**u == user))
            && (self.accounts.is_empty()
                || account.is_some_and(|a| self.accounts.iter().any(|x| &**x == a)))
    }

    /// Whether it holds `node`.
    pub fn holds(&self, node: NodeId) -> bool {
        self.nodes.binary_search(&node).is_ok()
    }

    /// Whether it shares a node with `other`.
    pub fn shares_node(&self, other: &Reservation) -> bool {
        self.nodes.iter().any(|n| other.holds(*n))
    }

    /// `_resv_time_overlap()` for two windows at `now` (recurring ones
    /// compared over a week of their occurrences).
    pub fn time_overlap(&self, other: &Reservation, now: Time) -> bool {
        let (a0, a1) = self.window(now);
        let (b0, b1) = other.window(now);
        let steps = |r: &Reservation| match r.period() {
            Some(p) => (7 * DAY / p) as usize,
            None => 1,
        };
        for i in 0..steps(self) {
            let off_a = self.period().map_or(0, |p| p * i as u64);
            for j in 0..steps(other) {
                let off_b = other.period().map_or(0, |p| p * j as u64);
                if a0 + off_a < b1 + off_b && b0 + off_b < a1 + off_a {
                    return true;
                }
            }
        }
        false
    }
}

/// Every reservation of the cluster, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reservations {
    pub list: Vec<Reservation>,
}

impl Reservations {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Reservation> {
        self.list.iter().find(|r| &*r.name == name)
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.list.iter().position(|r| &*r.name == name)
    }

    /// `_resv_overlap()`: the reservation `r` (not yet in the list, or at
    /// index `skip`) would overlap this one in nodes and time, neither of
    /// them being `MAINT` or `OVERLAP`. Returns the name of the first.
    pub fn conflict(&self, r: &Reservation, skip: Option<usize>, now: Time) -> Option<&str> {
        let exempt = |x: &Reservation| x.flags.has(ResvFlags::MAINT | ResvFlags::OVERLAP);
        if exempt(r) {
            return None;
        }
        self.list
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != skip)
            .map(|(_, x)| x)
            .find(|x| !exempt(x) && x.shares_node(r) && x.time_overlap(r, now))
            .map(|x| &*x.name)
    }

    /// The end of the first reservation that ends at or after `t`
    /// (`find_resv_end()`, before its rounding).
    pub fn first_end_after(&self, now: Time, t: Time) -> Option<Time> {
        self.list
            .iter()
            .map(|r| r.window(now).1)
            .filter(|&e| e >= t)
            .min()
    }

    /// The times after `now` at which a window opens or closes, for the
    /// engine's wake-ups (within `horizon` of now for recurring ones).
    pub fn edges_after(&self, now: Time, horizon: Time) -> Vec<Time> {
        let mut v = Vec::new();
        for r in &self.list {
            let (mut s, mut e) = r.window(now);
            loop {
                for t in [s, e] {
                    if t > now {
                        v.push(t);
                    }
                }
                match r.period() {
                    Some(p) if e <= now.saturating_add(horizon) => {
                        s += p;
                        e += p;
                    }
                    _ => break,
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests;
