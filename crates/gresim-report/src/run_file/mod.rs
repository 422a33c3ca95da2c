//! `run.json`: the persisted run. Everything the views (`sim squeue`,
//! `sacct`, `sinfo`, `explain`, `report`) need to reconstruct the cluster at
//! any time T: the cluster, every job with every run and its allocation, the
//! pending-reason history, the timed admin actions with the node-state
//! timeline they imply, the load timeline and the scenario text.
//!
//! The file is compact JSON (one job per line) with a fixed key order, so the
//! same run gives the same bytes. [`RunFile::load`] reads it back and checks
//! it; every view works on a [`RunFile`], never on a live engine.
//!
//! `schema.rs` holds the records, `write.rs` builds and writes them from an
//! engine output, `read.rs` parses and checks a file, `rehydrate.rs` turns
//! it back into the model for the views that re-run node selection.

mod read;
mod rehydrate;
mod schema;
mod write;

use read::admin_from;
pub use schema::*;
pub use write::*;

#[cfg(test)]
mod tests;
