//! Answers the engine computes once per job shape instead of once per job.

use std::collections::BTreeMap;
use std::sync::Arc;

use gresim_model::job::JobRequest;

/// Most shapes remembered; a workload with more distinct shapes than this
/// computes the rest every time (same answers, only slower).
const MAX_SHAPES: usize = 1 << 16;

/// The submission test (`Policy::submission_rejection`) by request shape: it depends
/// only on the static configuration and the request without its time limit
/// ([`JobRequest::same_shape`]), and on a 1,000-node partition it costs a
/// full node selection per submission.
#[derive(Default)]
pub(crate) struct ShapeMemo<T> {
    /// By [`JobRequest::shape_hash`]; entries with equal hashes share a bucket.
    by_hash: BTreeMap<u64, Vec<(Arc<JobRequest>, T)>>,
    len: usize,
    /// The last request answered: a run of jobs sharing one `Arc` costs no lookup.
    last: Option<(Arc<JobRequest>, T)>,
    /// Requests answered recently, by the `Arc`'s pointer (a workload that
    /// shares requests between jobs, as the generator does, then costs
    /// neither a hash nor a comparison of shapes). An entry holds its
    /// request, so its pointer cannot stand for another request meanwhile.
    recent: Vec<Option<(Arc<JobRequest>, T)>>,
}

/// Entries of [`ShapeMemo::recent`] (the slot is a 12-bit hash).
const RECENT_BITS: u32 = 12;
const RECENT: usize = 1 << RECENT_BITS;

/// The slot of a pointer-keyed cache of `1 << bits` entries for `key` (an
/// address, or addresses mixed): Fibonacci hashing, the top `bits` bits.
#[inline]
pub(crate) fn ptr_slot(key: u64, bits: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

impl<T: Clone> ShapeMemo<T> {
    /// The remembered answer for `req`'s shape, or `f()`, remembered.
    pub(crate) fn get_or(&mut self, req: &Arc<JobRequest>, f: impl FnOnce() -> T) -> T {
        if let Some((r, v)) = &self.last {
            if Arc::ptr_eq(r, req) {
                return v.clone();
            }
        }
        let slot = ptr_slot(Arc::as_ptr(req) as u64, RECENT_BITS);
        if self.recent.is_empty() {
            self.recent.resize_with(RECENT, || None);
        }
        if let Some((r, v)) = &self.recent[slot] {
            if Arc::ptr_eq(r, req) {
                let v = v.clone();
                self.last = Some((Arc::clone(req), v.clone()));
                return v;
            }
        }
        let v = self.lookup(req, f);
        self.recent[slot] = Some((Arc::clone(req), v.clone()));
        v
    }

    /// [`ShapeMemo::get_or`] by the shape's hash and comparison.
    fn lookup(&mut self, req: &Arc<JobRequest>, f: impl FnOnce() -> T) -> T {
        let h = req.shape_hash();
        if let Some(b) = self.by_hash.get(&h) {
            if let Some((_, v)) = b.iter().find(|(r, _)| r.same_shape(req)) {
                let v = v.clone();
                self.last = Some((Arc::clone(req), v.clone()));
                return v;
            }
        }
        let v = f();
        if self.len < MAX_SHAPES {
            self.by_hash
                .entry(h)
                .or_default()
                .push((Arc::clone(req), v.clone()));
            self.len += 1;
        }
        self.last = Some((Arc::clone(req), v.clone()));
        v
    }
}

#[cfg(test)]
mod tests;
