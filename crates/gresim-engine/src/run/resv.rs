//! Advance reservations (docs/reservations.md) as the engine keeps them
//! (`ResvState`): sbatch's refusal of a job naming one it may not use
//! (`validate_job_resv()`), `scontrol create/update/delete reservation`,
//! refused as slurmctld refuses them (`create_resv()`, `update_resv()`,
//! `delete_resv()`), a wake-up at each window's edge, and the history.
//! The passes read them through `PassCtx::resv`.

use gresim_model::job::{JobSpec, Time};
use gresim_model::reservation::Reservations;
use gresim_model::{JobState, NodeId};

use super::Engine;
use crate::event::{EventKind, Phase};
use crate::ResvRefusal;

/// The reservations: empty in most runs, and then nothing here is touched.
pub(super) struct ResvState {
    /// The reservations in force.
    pub(super) live: Reservations,
    /// [`crate::SimOutput::resv_history`].
    pub(super) history: Vec<(Time, Reservations)>,
    pub(super) refused: Vec<ResvRefusal>,
    /// Reservation edges with an event queued.
    pub(super) edges: std::collections::BTreeSet<Time>,
    /// `PURGE_COMP` reservations found idle by a check, since when
    /// (`idle_start_time`).
    pub(super) idle_since: std::collections::BTreeMap<std::sync::Arc<str>, Time>,
    /// The `job_resv_check()` queued, if any.
    pub(super) purge_at: Option<Time>,
    /// Wake-ups were dropped ([`Engine::resv_wake_cannot_matter`]): the
    /// next event that is not one queues them again.
    pub(super) dormant: bool,
    /// Submitted jobs that name a reservation, in submission order, less
    /// those a check found finished: what `job_resv_check()` counts.
    pub(super) jobs: Vec<gresim_model::JobIdx>,
}

impl ResvState {
    pub(super) fn new(live: Reservations) -> Self {
        ResvState {
            live,
            history: Vec::new(),
            refused: Vec::new(),
            edges: Default::default(),
            idle_since: Default::default(),
            purge_at: None,
            dormant: false,
            jobs: Vec::new(),
        }
    }
}

impl Engine<'_> {
    /// `validate_job_resv()` at submission: sbatch fails for a reservation
    /// that does not exist, or that the job's user or account may not use.
    pub(super) fn resv_rejection(&self, spec: &JobSpec) -> Option<String> {
        let name = spec.reservation()?;
        let Some(r) = self.resv.live.get(name) else {
            return Some("Requested reservation is invalid".into());
        };
        let account = gresim_policy::job_account(&self.cluster, spec);
        (!r.may_use(&spec.user, account)).then(|| "Access denied to requested reservation".into())
    }

    /// Queues a wake-up at each reservation edge to come (a week ahead for
    /// recurring ones; each wake-up queues the next).
    pub(super) fn queue_resv_edges(&mut self) {
        for t in self.resv.live.edges_after(self.now, 7 * 86_400) {
            if self.resv.edges.insert(t) {
                self.queue.push(t, Phase::Cancel, EventKind::ResvEdge);
            }
        }
    }

    /// A reservation window opens or closes: queue the next wake-ups and
    /// let the passes look again.
    pub(super) fn on_resv_edge(&mut self, t: Time) {
        self.resv.edges.remove(&t);
        self.queue_resv_edges();
        self.mark_dirty();
    }

    /// A reservation changed: keep the history, wake up at its edges, and
    /// let the passes look again.
    pub(super) fn resv_changed(&mut self) {
        self.resv.history.push((self.now, self.resv.live.clone()));
        self.queue_resv_edges();
        self.queue_purge_check();
        self.mark_dirty();
    }

    /// Whether `job_resv_check()` looks at `r`: a `PURGE_COMP` reservation
    /// whose window (the current or next occurrence of a recurring one)
    /// has not ended.
    fn purge_watched(r: &gresim_model::reservation::Reservation, now: Time) -> bool {
        use gresim_model::reservation::ResvFlags;
        r.flags.has(ResvFlags::PURGE_COMP) && r.window(now).1 > now
    }

    /// Whether a reservation's wake-up at `t` can be dropped, ending the
    /// run where it would end without it: a `DAILY` or `WEEKLY`
    /// reservation wakes the engine at each occurrence for ever, so once
    /// no job runs and none is to come, its wake-ups stop when no job
    /// pends either, or when nothing but wake-ups and periodic passes has
    /// happened for eight days (every occurrence of a week has come and
    /// gone on the same idle cluster: the jobs left pending cannot start in
    /// any of them). Without a recurring reservation the wake-ups end by
    /// themselves and are all kept.
    ///
    /// The eight days count from the last other event or from the latest
    /// reservation's start, whichever is later, so that a job waiting for a
    /// reservation that begins weeks ahead still sees it.
    /// Any later event that is not a wake-up or a periodic pass (an
    /// action, say) queues the wake-ups again.
    pub(super) fn resv_wake_cannot_matter(&self, t: Time) -> bool {
        const QUIET: Time = 8 * 86_400;
        if self.running != 0
            || self.intake.next.is_some()
            || !self.resv.live.list.iter().any(|r| r.period().is_some())
        {
            return false;
        }
        let since = self
            .resv
            .live
            .list
            .iter()
            .map(|r| r.start)
            .fold(self.stop.last_work, Time::max);
        self.pending == 0 || t > since.saturating_add(QUIET)
    }

    /// Whether `job_resv_check()` looks at `r` for `REPLACE`
    /// (`_validate_node_choice()` for every reservation that has not
    /// ended, begun or not).
    fn replace_watched(r: &gresim_model::reservation::Reservation, now: Time) -> bool {
        use gresim_model::reservation::ResvFlags;
        r.flags.has(ResvFlags::REPLACE) && r.end >= now
    }

    /// Queues the next `job_resv_check()` (the next periodic time-limit
    /// check) while a `PURGE_COMP` or `REPLACE` reservation is in force or
    /// to come.
    pub(super) fn queue_purge_check(&mut self) {
        if self.resv.purge_at.is_some()
            || !self
                .resv
                .live
                .list
                .iter()
                .any(|r| Self::purge_watched(r, self.now) || Self::replace_watched(r, self.now))
        {
            return;
        }
        let t = self.limit_check_at(self.now + 1);
        self.resv.purge_at = Some(t);
        self.queue.push(t, Phase::Cancel, EventKind::ResvPurgeCheck);
    }

    /// `job_resv_check()` (reservation.c), which slurmctld runs with the
    /// time-limit check: a reservation that has begun is idle from the
    /// first check that finds no pending or running job naming it
    /// (`idle_start_time`; a job resets it), and a `PURGE_COMP` one that
    /// has been idle for its purge time (5 minutes unless given) at a check
    /// ends then ("has no more jobs for ..., ending it"): it is deleted,
    /// its nodes are free, and sbatch refuses jobs that name it; a `DAILY`
    /// or `WEEKLY` one moves to its next occurrence instead. The check
    /// runs only while such a reservation exists, and looks only at the
    /// unfinished jobs that name a reservation.
    pub(super) fn on_resv_purge_check(&mut self, t: Time) {
        if self.resv.purge_at != Some(t) {
            return;
        }
        self.resv.purge_at = None;
        let now = self.now;
        let live =
            |j: &gresim_model::job::Job| matches!(j.state, JobState::Pending | JobState::Running);
        let jobs = &self.jobs;
        self.resv.jobs.retain(|&j| live(&jobs[j.idx()]));
        let mut ended: Vec<std::sync::Arc<str>> = Vec::new();
        for r in &self.resv.live.list {
            if !Self::purge_watched(r, now) {
                continue;
            }
            let (start, _) = r.window(now);
            if start > now {
                // Between two occurrences: `_advance_resv_time()` cleared
                // `idle_start_time`.
                self.resv.idle_since.remove(&r.name);
            } else {
                let used = self.resv.jobs.iter().any(|&j| {
                    self.specs[self.jobs[j.idx()].sub as usize].reservation() == Some(&*r.name)
                });
                if used {
                    self.resv.idle_since.remove(&r.name);
                } else {
                    self.resv.idle_since.entry(r.name.clone()).or_insert(now);
                }
            }
            let purge = r
                .purge_after
                .unwrap_or(gresim_model::reservation::DEFAULT_PURGE_COMP);
            if self
                .resv
                .idle_since
                .get(&r.name)
                .is_some_and(|&since| now - since >= purge)
            {
                ended.push(r.name.clone());
            }
        }
        // "has no more jobs for ..., ending it": a reservation that recurs
        // moves to its next occurrence (`_advance_resv_time()`: start and
        // end one period later), any other is deleted.
        self.resv.live.list.retain_mut(|r| {
            if !ended.contains(&r.name) {
                return true;
            }
            let Some(p) = r.period() else {
                return false;
            };
            let (s, e) = r.window(now);
            r.start = s + p;
            r.end = e + p;
            true
        });
        for n in &ended {
            self.resv.idle_since.remove(n);
        }
        // Then `_validate_node_choice()` for each reservation that has not
        // ended: `REPLACE` ones take idle nodes for busy ones.
        let replaced = self.resv_replace_all(|r| Self::replace_watched(r, now));
        if !ended.is_empty() || replaced {
            self.resv_changed();
        }
        self.queue_purge_check();
    }

    /// `_resv_node_replace()` on every `REPLACE` reservation that `which`
    /// picks, in list order; whether any changed.
    pub(super) fn resv_replace_all(
        &mut self,
        which: impl Fn(&gresim_model::reservation::Reservation) -> bool,
    ) -> bool {
        use gresim_model::reservation::ResvFlags;
        let mut changed = false;
        for i in 0..self.resv.live.list.len() {
            let r = &self.resv.live.list[i];
            if r.flags.has(ResvFlags::REPLACE) && r.by_count && which(r) {
                changed |= self.resv_node_replace(i);
            }
        }
        changed
    }

    /// `job_claim_resv()` when a job starts, and `_validate_job_resv_internal()`
    /// when one is submitted: a job naming a `REPLACE` reservation makes it
    /// look for idle nodes (the job's own, now busy, among those it gives
    /// up). Records the change.
    pub(super) fn resv_claim(&mut self, job: gresim_model::JobIdx) {
        if self.resv.live.is_empty() {
            return;
        }
        let Some(name) = self.specs[self.jobs[job.idx()].sub as usize].reservation() else {
            return;
        };
        let name: std::sync::Arc<str> = name.into();
        self.resv_replace_named(&name);
    }

    /// [`Self::resv_claim`] by the reservation's name.
    pub(super) fn resv_replace_named(&mut self, name: &str) {
        if self.resv_replace_all(|r| &*r.name == name) {
            self.resv_changed();
        }
    }

    /// `_resv_node_replace()` (reservation.c) on the reservation at `i`:
    /// it keeps its nodes that are available (up, not drained) and idle
    /// (no job on them, `idle_node_bitmap`) and asks `_select_nodes()` for
    /// the rest among the other nodes of its partition: those no
    /// reservation overlapping it holds and no running job holds
    /// (`_pick_node_cnt()`, whatever reservation the job names), first in
    /// node order (the sequential pick). When fewer are idle than it asks
    /// for, `_pick_node_cnt()` fails and it asks for half as many, down to
    /// none; the count it got short is made up with its own busy nodes,
    /// first in node order (`bit_pick_cnt()`). Nothing changes when no
    /// node is idle. Whether the nodes changed.
    fn resv_node_replace(&mut self, i: usize) -> bool {
        let r = &self.resv.live.list[i];
        let idle = |n: NodeId| self.live.node_jobs[n.idx()].is_empty();
        let preserve: Vec<NodeId> = r
            .nodes
            .iter()
            .copied()
            .filter(|&n| self.state.node(n).schedulable() && idle(n))
            .collect();
        let cnt = r.nodes.len();
        let mut add = cnt - preserve.len();
        if add == 0 {
            return false;
        }
        // `_select_nodes()`' candidates: the partition less the
        // reservation's own nodes (and those of every reservation that
        // overlaps it in time), available ones.
        let cand = self.resv_pick_nodes(r, u32::MAX, r.partition);
        let free: Vec<NodeId> = cand.iter().copied().filter(|&n| idle(n)).collect();
        let new: Vec<NodeId> = loop {
            // `_pick_node_cnt()` lowers the count to the candidates there
            // are, then needs that many without a running job.
            let want = add.min(cand.len());
            if want > 0 && free.len() >= want {
                break free[..want].to_vec();
            }
            add /= 2;
            if add == 0 {
                return false;
            }
        };
        let busy_needed = cnt - new.len() - preserve.len();
        let mut nodes: Vec<NodeId> = r
            .nodes
            .iter()
            .copied()
            .filter(|n| !preserve.contains(n))
            .take(busy_needed)
            .collect();
        nodes.extend(preserve);
        nodes.extend(new);
        nodes.sort_unstable();
        if nodes == r.nodes {
            return false;
        }
        self.resv.live.list[i].nodes = nodes;
        true
    }

    pub(super) fn resv_refuse(&mut self, name: &str, error: &str) {
        self.resv.refused.push(crate::ResvRefusal {
            t: self.now,
            name: name.to_string(),
            error: error.to_string(),
        });
    }

    /// When the time-limit check ends the running `job` because its
    /// reservation has ended: `job_time_limit()` (job_mgr.c) times out a
    /// job whose reservation is not `FLEX` once the reservation's end plus
    /// `ResvOverRun` has passed (`end + over_run < now`), at the first
    /// periodic check after it, whatever the job's own limit
    /// (`_purge_expired_resv()` keeps the reservation while a job runs in
    /// it). `None` for a job in no reservation, in a `FLEX` one, or in a
    /// recurring one (which slurmctld moves on to its next occurrence;
    /// docs/reservations.md, "Not modelled").
    pub(super) fn resv_kill_at(&self, job: gresim_model::JobIdx) -> Option<Time> {
        use gresim_model::reservation::ResvFlags;
        if self.resv.live.is_empty() {
            return None;
        }
        let name = self.specs[self.jobs[job.idx()].sub as usize].reservation()?;
        let r = self.resv.live.get(name)?;
        if r.flags.has(ResvFlags::FLEX) || r.period().is_some() {
            return None;
        }
        let past = r
            .end
            .saturating_add(self.params.resv_over_run)
            .saturating_add(1);
        Some(self.limit_check_at(past))
    }

    /// A reservation's window changed: its running jobs' ends move with it.
    fn resv_jobs_reschedule(&mut self, name: &str) {
        let running: Vec<gresim_model::JobIdx> = self
            .live
            .ends
            .iter()
            .map(|&(_, j)| j)
            .filter(|&j| {
                self.jobs[j.idx()].state == JobState::Running
                    && self.specs[self.jobs[j.idx()].sub as usize].reservation() == Some(name)
            })
            .collect();
        for j in running {
            self.reschedule_end(j);
        }
    }

    /// Whether a running job holds `node` past `start` (`_job_overlap()`:
    /// its planned end, start + time limit, is after it), outside the
    /// reservation `name`.
    pub(super) fn job_holds_past(&self, node: NodeId, start: Time, name: &str) -> bool {
        self.live.node_jobs[node.idx()].iter().any(|&j| {
            let job = &self.jobs[j.idx()];
            job.state == JobState::Running
                && job.planned_end > start
                && self.specs[job.sub as usize].reservation() != Some(name)
        })
    }

    /// Why `create_resv()`/`update_resv()` would refuse `r` (at index
    /// `skip` when it replaces an existing one).
    pub(super) fn resv_refusal(
        &self,
        r: &gresim_model::reservation::Reservation,
        skip: Option<usize>,
    ) -> Option<String> {
        use gresim_model::reservation::ResvFlags;
        if r.nodes.is_empty() {
            return Some("Invalid node name specified".into());
        }
        if r.end <= r.start {
            return Some("Invalid time specification".into());
        }
        if let Some(other) = self.resv.live.conflict(r, skip, self.now) {
            return Some(format!(
                "Requested reservation overlaps with another reservation ({other})"
            ));
        }
        if !r.flags.has(ResvFlags::IGNORE_JOBS)
            && r.nodes
                .iter()
                .any(|&n| self.job_holds_past(n, r.start, &r.name))
        {
            return Some("Requested nodes are busy".into());
        }
        None
    }

    /// `NodeCnt=`: the first nodes (of `part`, when given) in no reservation
    /// that overlaps the new one and, without IGNORE_JOBS, held by no
    /// running job past its start.
    pub(super) fn resv_pick_nodes(
        &self,
        r: &gresim_model::reservation::Reservation,
        cnt: u32,
        part: Option<gresim_model::PartId>,
    ) -> Vec<NodeId> {
        use gresim_model::reservation::ResvFlags;
        // A replacement (u32::MAX: every candidate) leaves the busy nodes to its caller.
        let ignore = r.flags.has(ResvFlags::IGNORE_JOBS) || cnt == u32::MAX;
        (0..self.cluster.nodes.len())
            .map(NodeId::from_idx)
            .filter(|&n| part.is_none_or(|p| self.cluster.in_partition(p, n)))
            .filter(|&n| self.state.node(n).schedulable())
            .filter(|&n| {
                !self.resv.live.list.iter().any(|x| {
                    x.holds(n) && !x.flags.has(ResvFlags::OVERLAP) && x.time_overlap(r, self.now)
                })
            })
            .filter(|&n| ignore || !self.job_holds_past(n, r.start, &r.name))
            .take(cnt as usize)
            .collect()
    }

    pub(super) fn resv_create(&mut self, req: crate::ResvRequest) {
        use gresim_model::reservation::ResvFlags;
        let crate::ResvRequest {
            mut resv,
            node_cnt,
            partition,
        } = req;
        if resv.flags.has(ResvFlags::REPLACE) && !resv.by_count {
            // create_resv(): "REPLACE or REPLACE_DOWN flags should be used
            // with the NodeCnt reservation option; do not specify Nodes".
            return self.resv_refuse(&resv.name, "Invalid node name specified");
        }
        if self.resv.live.get(&resv.name).is_some() {
            return self.resv_refuse(&resv.name, "Duplicate reservation name");
        }
        if let Some(c) = node_cnt {
            resv.nodes = self.resv_pick_nodes(&resv, c, partition);
            if resv.nodes.len() < c as usize {
                return self.resv_refuse(&resv.name, "Requested nodes are busy");
            }
        }
        if let Some(e) = self.resv_refusal(&resv, None) {
            return self.resv_refuse(&resv.name, &e);
        }
        self.resv.live.list.push(resv);
        // The next loop's `_validate_all_reservations()`.
        self.resv_replace_all(|_| true);
        self.resv_changed();
    }

    pub(super) fn resv_update(&mut self, c: crate::ResvChange) {
        use gresim_model::reservation::ResvFlags;
        let Some(i) = self.resv.live.index(&c.name) else {
            return self.resv_refuse(&c.name, "Reservation request invalid");
        };
        let mut r = self.resv.live.list[i].clone();
        if let Some(s) = c.start {
            r.start = s;
        }
        if let Some(e) = c.end {
            r.end = e;
        }
        if let Some(d) = c.duration {
            r.end = r.start.saturating_add(d);
        } else if c.start.is_some() && c.end.is_none() {
            // A new start keeps the duration (`update_resv()`).
            let old = &self.resv.live.list[i];
            r.end = r.start.saturating_add(old.end - old.start);
        }
        let replace = |f: ResvFlags| f.has(ResvFlags::REPLACE);
        if c.flags.is_some_and(|(f, _)| replace(f)) && !r.by_count {
            // update_resv(): REPLACE only on a NodeCnt reservation.
            return self.resv_refuse(&c.name, "Requested operation not supported on this system");
        }
        if let Some(n) = c.nodes {
            if replace(r.flags) {
                // update_resv(): Nodes= "is incompatible with REPLACE".
                return self
                    .resv_refuse(&c.name, "Requested operation not supported on this system");
            }
            r.nodes = n;
            r.by_count = false;
        }
        if let Some(u) = c.users {
            r.users = u;
        }
        if let Some(a) = c.accounts {
            r.accounts = a;
        }
        if let Some((f, purge)) = c.flags {
            // REPLACE cannot be taken off (scontrol: "Flag removal with
            // '-=' is not supported").
            r.flags = ResvFlags(f.0 | (r.flags.0 & ResvFlags::REPLACE));
            // `Flags=PURGE_COMP[=time]` sets the purge time too.
            if purge.is_some() {
                r.purge_after = purge;
            }
        }
        if let Some(e) = self.resv_refusal(&r, Some(i)) {
            return self.resv_refuse(&c.name, &e);
        }
        let name = r.name.clone();
        self.resv.live.list[i] = r;
        self.resv_replace_all(|_| true);
        self.resv_changed();
        self.resv_jobs_reschedule(&name);
    }

    pub(super) fn resv_delete(&mut self, name: &str) {
        let Some(i) = self.resv.live.index(name) else {
            return self.resv_refuse(name, "Reservation request invalid");
        };
        let busy = self.jobs.iter().any(|j| {
            j.state == JobState::Running && self.specs[j.sub as usize].reservation() == Some(name)
        });
        if busy {
            return self.resv_refuse(name, "Reservation busy");
        }
        self.resv.live.list.remove(i);
        self.resv_replace_all(|_| true);
        self.resv_changed();
    }
}
