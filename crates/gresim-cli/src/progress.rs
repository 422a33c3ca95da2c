//! The progress bar of `sim run` and `sim sweep`: indicatif on stderr, shown
//! only once the work has taken about a second, and never with `--quiet` or
//! when stderr is not a terminal.
//!
//! The bar only reads: the engine hands it (simulated time, jobs ended) every
//! [`gresim_engine::PROGRESS_EVERY`] events and the sweep counts finished
//! points. Wall-clock time decides when the bar appears and nothing else, so
//! it cannot change a result.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);
/// Overrides [`SHOW_AFTER`] (milliseconds), for tests of the bar itself.
const SHOW_AFTER_VAR: &str = "GRESIM_PROGRESS_AFTER_MS";
/// Steps in which the helper thread waits for [`SHOW_AFTER`] (so that a
/// short run does not wait for it at the end).
const WAIT_STEP: Duration = Duration::from_millis(25);

/// Whether a bar may be drawn: not `--quiet`, and stderr is a terminal.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// A progress bar that stays hidden for its first second.
pub struct Progress {
    bar: Option<ProgressBar>,
    done: Arc<AtomicBool>,
    waiter: Option<JoinHandle<()>>,
}

impl Progress {
    /// A bar that never draws.
    pub fn off() -> Self {
        Progress {
            bar: None,
            done: Arc::new(AtomicBool::new(true)),
            waiter: None,
        }
    }

    /// A bar over `len` units called `unit` (a counter when `len` is
    /// unknown); [`Progress::off`] unless [`wanted`]`(quiet)`.
    pub fn new(len: Option<u64>, unit: &str, quiet: bool) -> Self {
        if !wanted(quiet) {
            return Self::off();
        }
        let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden());
        let template = if len.is_some() {
            format!("{{spinner}} {{elapsed:>4}} [{{bar:25}}] {{pos}}/{{len}} {unit} {{msg}}")
        } else {
            format!("{{spinner}} {{elapsed:>4}} {{pos}} {unit} {{msg}}")
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        let done = Arc::new(AtomicBool::new(false));
        let show_after = std::env::var(SHOW_AFTER_VAR)
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(SHOW_AFTER, Duration::from_millis);
        let (b, d) = (bar.clone(), done.clone());
        let waiter = std::thread::Builder::new()
            .name("sim-progress".into())
            .spawn(move || {
                let mut waited = Duration::ZERO;
                while waited < show_after {
                    if d.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(WAIT_STEP);
                    waited += WAIT_STEP;
                }
                if !d.load(Ordering::Relaxed) {
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b.tick();
                    b.enable_steady_tick(Duration::from_millis(200));
                }
            })
            .ok();
        Progress {
            bar: Some(bar),
            done,
            waiter,
        }
    }

    /// Whether the bar can ever draw.
    pub fn is_on(&self) -> bool {
        self.bar.is_some()
    }

    pub fn set_position(&self, pos: u64) {
        if let Some(b) = &self.bar {
            b.set_position(pos);
        }
    }

    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    pub fn set_message(&self, msg: String) {
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    /// Removes the bar, so that what is printed next starts on a clean line.
    pub fn finish(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(w) = self.waiter.take() {
            let _ = w.join();
        }
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Job records a scenario will submit, when known without running it
/// (streamed traces are not read ahead).
pub fn job_total(s: &gresim_io::Scenario) -> Option<u64> {
    match &s.workload {
        gresim_io::Workload::Jobs(v) => Some(v.iter().map(|j| j.task_count() as u64).sum()),
        gresim_io::Workload::Synthetic(syn) => Some(syn.jobs),
        gresim_io::Workload::Trace { .. } => None,
    }
}

/// The engine's progress hook feeding `bar` (jobs ended, simulated time),
/// or `None` when the bar is off.
pub fn hook(bar: &Progress) -> Option<gresim::ProgressFn<'_>> {
    if !bar.is_on() {
        return None;
    }
    Some(Box::new(move |t, done| {
        bar.set_position(done as u64);
        bar.set_message(format!(
            "at {}",
            gresim_model::slurm_time::format_duration(t)
        ));
    }))
}

#[cfg(test)]
mod tests;
