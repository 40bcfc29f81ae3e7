//! # Waiting for a person
//!
//! A call can spend a while waiting for someone: the approval gate asking
//! the owner whether a call may run. Whoever keeps time for a group of calls
//! (a codemode script, whose clock must stop while an approval is pending)
//! needs to know. A [`Waiting`] travels with every call, in its
//! [`DispatchContext`](super::DispatchContext) and its
//! [`CallContext`](crate::registry::CallContext), into nested calls too;
//! whoever asks a person holds [`Waiting::person`] for as long as the
//! question is open, and the listeners along the chain hear of it.
//!
//! [`PausingClock`] is such a listener: a time budget that only runs while
//! nobody under it is waiting for a person.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use std::time::Duration;
//! use toolhost_core::dispatch::{PausingClock, Waiting};
//!
//! let clock = PausingClock::new(Duration::from_millis(50), &Waiting::none());
//! let waiting = clock.waiting();
//! {
//!     let _asking = waiting.person();          // the clock stops...
//!     let used = clock.used();
//!     tokio::time::sleep(Duration::from_millis(100)).await;
//!     assert_eq!(clock.used(), used);
//! }                                            // ...and runs again
//! clock.expired().await;                       // 50 ms of running time in all
//! assert_eq!(clock.remaining(), Duration::ZERO);
//! # });
//! ```

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use tokio::sync::watch;

/// Hears when calls under it start and stop waiting for a person.
pub trait WaitListener: Send + Sync {
    /// A call under this listener started waiting for a person (`true`) or
    /// stopped (`false`). Calls pair up: every `true` is followed by one
    /// `false`, even when the wait is abandoned.
    fn person_waiting(&self, waiting: bool);
}

/// Where a call reports that it waits for a person: to no one (the default),
/// or to the listener of whoever keeps time for it. Cheap to clone.
#[derive(Clone, Default)]
pub struct Waiting(Option<Arc<dyn WaitListener>>);

impl fmt::Debug for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "Waiting(listened)"
        } else {
            "Waiting(none)"
        })
    }
}

impl Waiting {
    /// Nobody listens.
    pub fn none() -> Waiting {
        Waiting(None)
    }

    /// Reports to `listener`.
    pub fn to(listener: Arc<dyn WaitListener>) -> Waiting {
        Waiting(Some(listener))
    }

    /// Marks a wait for a person, until the guard is dropped. Hold it
    /// exactly while the question is open (not while deciding alone).
    pub fn person(&self) -> PersonWait {
        if let Some(listener) = &self.0 {
            listener.person_waiting(true);
        }
        PersonWait(self.0.clone())
    }
}

/// An open wait for a person (see [`Waiting::person`]); closes when dropped.
#[must_use = "the wait ends when the guard is dropped"]
pub struct PersonWait(Option<Arc<dyn WaitListener>>);

impl fmt::Debug for PersonWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PersonWait")
    }
}

impl Drop for PersonWait {
    fn drop(&mut self) {
        if let Some(listener) = &self.0 {
            listener.person_waiting(false);
        }
    }
}

/// A time budget that runs on the wall clock except while a call under it
/// waits for a person. Waits are reported to it through
/// [`PausingClock::waiting`], and passed on to the clock's own parent (the
/// [`Waiting`] it was made under), so enclosing clocks stop too.
pub struct PausingClock {
    state: Mutex<ClockState>,
    changed: watch::Sender<()>,
    parent: Waiting,
    budget: Duration,
}

#[derive(Debug)]
struct ClockState {
    /// Running time used up to `since`.
    used: Duration,
    /// When the clock last started running; `None` while stopped.
    since: Option<Instant>,
    /// How many waits for a person are open.
    waits: u32,
}

impl fmt::Debug for PausingClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PausingClock")
            .field("budget", &self.budget)
            .field("remaining", &self.remaining())
            .finish_non_exhaustive()
    }
}

impl PausingClock {
    /// A running clock with `budget`, made under `parent` (waits reported
    /// to this clock are passed on to it).
    pub fn new(budget: Duration, parent: &Waiting) -> Arc<PausingClock> {
        Arc::new(PausingClock {
            state: Mutex::new(ClockState {
                used: Duration::ZERO,
                since: Some(Instant::now()),
                waits: 0,
            }),
            changed: watch::Sender::new(()),
            parent: parent.clone(),
            budget,
        })
    }

    /// Where the calls it times report their waits.
    pub fn waiting(self: &Arc<Self>) -> Waiting {
        Waiting::to(Arc::clone(self) as Arc<dyn WaitListener>)
    }

    /// Running time used so far.
    pub fn used(&self) -> Duration {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.used + state.since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// Running time left (zero once spent).
    pub fn remaining(&self) -> Duration {
        self.budget.saturating_sub(self.used())
    }

    /// Whether the clock is stopped (a wait for a person is open).
    pub fn is_paused(&self) -> bool {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).waits > 0
    }

    /// Resolves once the budget is spent: the running time, not counting
    /// waits for a person, reached it.
    pub async fn expired(&self) {
        let mut changes = self.changed.subscribe();
        loop {
            let left = self.remaining();
            if left.is_zero() {
                return;
            }
            if self.is_paused() {
                // Stopped: nothing to count until a wait ends.
                let _ = changes.changed().await;
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(left) => {}
                _ = changes.changed() => {}
            }
        }
    }
}

impl WaitListener for PausingClock {
    fn person_waiting(&self, waiting: bool) {
        {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            if waiting {
                state.waits += 1;
                if let Some(since) = state.since.take() {
                    state.used += since.elapsed();
                }
            } else {
                state.waits = state.waits.saturating_sub(1);
                if state.waits == 0 && state.since.is_none() {
                    state.since = Some(Instant::now());
                }
            }
        }
        self.changed.send_replace(());
        if let Some(parent) = &self.parent.0 {
            parent.person_waiting(waiting);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waits_stop_the_clock_and_its_parents() {
        let outer = PausingClock::new(Duration::from_secs(600), &Waiting::none());
        let inner = PausingClock::new(Duration::from_secs(600), &outer.waiting());
        let guard = inner.waiting().person();
        let second = inner.waiting().person();
        assert!(inner.is_paused() && outer.is_paused());
        let (inner_used, outer_used) = (inner.used(), outer.used());
        tokio::time::sleep(Duration::from_millis(30)).await;
        drop(guard);
        assert!(inner.is_paused(), "one wait is still open");
        assert_eq!((inner.used(), outer.used()), (inner_used, outer_used));
        drop(second);
        assert!(!inner.is_paused() && !outer.is_paused());
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert!(inner.used() > inner_used && outer.used() > outer_used);
    }

    #[tokio::test]
    async fn expiry_waits_while_paused() {
        let clock = PausingClock::new(Duration::from_secs(1), &Waiting::none());
        let guard = clock.waiting().person();
        tokio::select! {
            _ = clock.expired() => panic!("expired while paused"),
            _ = tokio::time::sleep(Duration::from_millis(1500)) => {}
        }
        drop(guard);
        let short = PausingClock::new(Duration::from_millis(20), &Waiting::none());
        short.expired().await;
        assert_eq!(short.remaining(), Duration::ZERO);
    }
}
