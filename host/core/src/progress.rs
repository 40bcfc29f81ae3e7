//! # Progress of a long call
//!
//! A caller that wants to know how far a call has come puts a
//! [`ProgressSink`] in its [`DispatchContext`](crate::dispatch::DispatchContext)
//! (the MCP server does, for a request that carried a `progressToken`);
//! dispatch hands it to the tool in its
//! [`CallContext`](crate::registry::CallContext), and the tool reports
//! [`Progress`] into it. A call without a sink reports into nothing.
//!
//! The sink never blocks and never fails: what it does with a report (send
//! a notification, drop it) is the caller's business. Tools that run
//! untrusted code (a plugin's `progress.report`) cap the rate before
//! reporting; see [`ProgressGate`].
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use toolhost_core::progress::{Progress, ProgressSink};
//!
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = ProgressSink::new({
//!     let seen = Arc::clone(&seen);
//!     move |p: Progress| seen.lock().unwrap().push(p.done)
//! });
//! sink.report(Progress::new(1.0).total(4.0).message("one of four"));
//! assert_eq!(*seen.lock().unwrap(), [1.0]);
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::text::truncate_utf8;

/// One progress report: `done` units of work out of `total` (when known).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The work finished so far; grows from one report to the next.
    pub done: f64,
    /// The whole work, when known.
    pub total: Option<f64>,
    /// A short note on what is happening.
    pub message: Option<String>,
}

impl Progress {
    /// `done` units finished, total unknown, no message.
    pub fn new(done: f64) -> Self {
        Progress {
            done,
            total: None,
            message: None,
        }
    }

    /// This report with `total` units in all.
    pub fn total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// This report with `message`.
    pub fn message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Where a call's progress reports go. Cheap to clone.
#[derive(Clone)]
pub struct ProgressSink(Arc<dyn Fn(Progress) + Send + Sync>);

impl fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressSink")
    }
}

impl ProgressSink {
    /// A sink that hands every report to `f`, which must not block.
    pub fn new(f: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressSink(Arc::new(f))
    }

    /// Reports `progress`.
    pub fn report(&self, progress: Progress) {
        (self.0)(progress)
    }
}

/// The longest progress message passed on, in bytes; longer ones are cut.
pub const MAX_PROGRESS_MESSAGE: usize = 1024;

/// How often an untrusted reporter's progress is passed on: at most one
/// report per this interval (the last one, completion, always passes).
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// Filters the reports of an untrusted reporter (a plugin) before they reach
/// a sink: drops values that are not finite, `done` that does not grow
/// (MCP requires progress to increase), and reports closer together than
/// [`PROGRESS_INTERVAL`] unless they complete the work; cuts messages to
/// [`MAX_PROGRESS_MESSAGE`] bytes. One gate per call.
#[derive(Debug, Default)]
pub struct ProgressGate {
    last_done: Option<f64>,
    last_at: Option<Instant>,
    dropped: u64,
}

impl ProgressGate {
    /// The report to pass on, if this one passes; `now` is the time of the
    /// report.
    pub fn admit(&mut self, mut progress: Progress, now: Instant) -> Option<Progress> {
        let finite = progress.done.is_finite() && progress.total.is_none_or(f64::is_finite);
        let grows = self.last_done.is_none_or(|last| progress.done > last);
        let completes = progress.total.is_some_and(|t| progress.done >= t);
        let due = self
            .last_at
            .is_none_or(|at| now.saturating_duration_since(at) >= PROGRESS_INTERVAL);
        if !finite || !grows || !(due || completes) {
            self.dropped = self.dropped.saturating_add(1);
            return None;
        }
        if let Some(message) = &mut progress.message {
            truncate_utf8(message, MAX_PROGRESS_MESSAGE);
        }
        self.last_done = Some(progress.done);
        self.last_at = Some(now);
        Some(progress)
    }

    /// How many reports were dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_passes_growing_spaced_or_completing_reports() {
        let mut gate = ProgressGate::default();
        let t0 = Instant::now();
        assert!(gate.admit(Progress::new(1.0).total(10.0), t0).is_some());
        // Too soon, not growing, not finite:
        assert!(gate.admit(Progress::new(2.0).total(10.0), t0).is_none());
        let later = t0 + PROGRESS_INTERVAL;
        assert!(gate.admit(Progress::new(1.0), later).is_none());
        assert!(gate.admit(Progress::new(f64::NAN), later).is_none());
        assert!(
            gate.admit(Progress::new(3.0).total(f64::INFINITY), later)
                .is_none()
        );
        assert!(gate.admit(Progress::new(3.0).total(10.0), later).is_some());
        // Completion passes however soon it comes.
        assert!(gate.admit(Progress::new(10.0).total(10.0), later).is_some());
        assert_eq!(gate.dropped(), 4);
        let long = "é".repeat(MAX_PROGRESS_MESSAGE);
        let cut = gate
            .admit(Progress::new(11.0).message(long), later + PROGRESS_INTERVAL)
            .unwrap();
        assert!(cut.message.unwrap().len() <= MAX_PROGRESS_MESSAGE + 3);
    }
}
