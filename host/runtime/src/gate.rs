//! # Admission to an instance pool
//!
//! Every call runs in an instance of its own, and an engine's pool holds
//! at most [`EngineConfig::max_concurrent_instances`](crate::engine::EngineConfig::max_concurrent_instances)
//! at once. An [`InstanceGate`] admits calls to it, so that a burst of
//! calls past that limit waits its turn instead of failing at random:
//!
//! - a call made by a client (depth 0) takes a free place or waits for
//!   one, first come first served, in a queue of at most
//!   [`EngineConfig::max_waiting_calls`](crate::engine::EngineConfig::max_waiting_calls);
//!   past that it is refused at once (`unavailable`, saying so). Such
//!   calls hold at most three quarters of the places: the rest are kept
//!   for nested calls;
//! - a nested call (a tool calling a tool) never waits: it takes a free
//!   place or is refused (`unavailable`). Its caller holds a place while
//!   it waits for the nested call, so nested calls that waited for places
//!   held by their own callers could wait forever.
//!
//! Waiting counts against the call's deadline (its caller bounds the
//! wait). How many calls wait now is [`InstanceGate::waiting`]; with
//! metrics ([`InstanceGate::count_waits`]), how long each waited is
//! counted too (a call that finds a place free costs nothing more).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use tokio::sync::{Semaphore, SemaphorePermit};

use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::metrics::Metrics;

/// Admission to one wasmtime engine's pool (see the module documentation).
///
/// The pool's places are split in two: `top`, the three quarters calls
/// from clients may hold, and `reserve`, the rest, which only nested
/// calls take (and take first). A client's call takes one `top` permit;
/// a nested call takes a `reserve` permit, or a free `top` one when the
/// reserve is used up. So at most `capacity` instances are in use, client
/// calls hold at most `top` of them, and each call touches one semaphore
/// on its way in and out (two semaphores, both taken by every client
/// call, cost twice as much shared state per call).
#[derive(Debug)]
pub(crate) struct InstanceGate {
    capacity: usize,
    /// The places calls from clients may hold (nested calls too, when the
    /// reserve is used up).
    top: Semaphore,
    /// The places only nested calls take.
    reserve: Semaphore,
    waiting: AtomicUsize,
    max_waiting: usize,
    /// Where each wait's duration is counted, once metrics are on.
    waits: OnceLock<Arc<Metrics>>,
}

/// A place in the pool, held while the call's instance is alive. It
/// borrows its gate: taking and giving back a place touch only one
/// semaphore, no shared reference count.
#[derive(Debug)]
pub(crate) struct InstancePlace<'g> {
    _permit: SemaphorePermit<'g>,
}

/// Counts a waiting call while it waits.
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl InstanceGate {
    /// A gate for a pool of `capacity` instances, queueing at most
    /// `max_waiting` calls.
    pub(crate) fn new(capacity: usize, max_waiting: usize) -> InstanceGate {
        let capacity = capacity.max(1);
        let top = (capacity - capacity / 4).max(1);
        InstanceGate {
            capacity,
            top: Semaphore::new(top),
            reserve: Semaphore::new(capacity - top),
            waiting: AtomicUsize::new(0),
            max_waiting,
            waits: OnceLock::new(),
        }
    }

    /// A place for a call nested `depth` deep (0: a client's call), if one
    /// is free now: without a future, so a caller can skip setting up the
    /// wait. `None`: go through [`InstanceGate::enter`], which waits or
    /// refuses. A free place means no call is queued (the semaphores hand
    /// a freed place to the longest waiter first).
    pub(crate) fn try_enter(&self, depth: u32) -> Option<InstancePlace<'_>> {
        let permit = if depth > 0 {
            self.reserve.try_acquire().or_else(|_| self.top.try_acquire())
        } else {
            self.top.try_acquire()
        };
        permit.ok().map(|permit| InstancePlace { _permit: permit })
    }

    /// A place for a call nested `depth` deep (0: a client's call).
    ///
    /// # Errors
    ///
    /// `unavailable` when the queue is full (a client's call) or the pool
    /// is (a nested call).
    pub(crate) async fn enter(&self, depth: u32) -> Result<InstancePlace<'_>> {
        if let Some(place) = self.try_enter(depth) {
            return Ok(place);
        }
        if depth > 0 {
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "all {} instances of the pool are in use, and a nested call does not wait for one (its caller holds one while it waits); try again, or raise max_concurrent_instances",
                    self.capacity
                ),
            ));
        }
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "the host is at capacity: every instance is in use and {} calls are waiting for one already (the most it queues); try again later, or raise max_concurrent_instances or max_waiting_calls",
                    self.max_waiting
                ),
            ));
        }
        let _waiting = Waiting(&self.waiting);
        let started = Instant::now();
        let permit = self
            .top
            .acquire()
            .await
            .map_err(|_| Error::internal("the instance gate was closed"))?;
        if let Some(metrics) = self.waits.get() {
            metrics.waited(started.elapsed());
        }
        Ok(InstancePlace { _permit: permit })
    }

    /// Counts how long each call that waits for a place waited, in
    /// `metrics` (the first metrics given are kept: `false` for any later).
    pub(crate) fn count_waits(&self, metrics: Arc<Metrics>) -> bool {
        self.waits.set(metrics).is_ok()
    }

    /// How many calls wait for a place now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Acquire)
    }

    /// How many places are in use now.
    pub(crate) fn in_use(&self) -> usize {
        self.capacity - self.top.available_permits() - self.reserve.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn calls_past_the_pool_wait_and_past_the_queue_are_refused() {
        let gate = Arc::new(InstanceGate::new(4, 2));
        // Client calls hold at most 3 of the 4 places.
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(gate.enter(0).await.unwrap());
        }
        // A nested call takes the fourth; another finds none and is refused.
        let nested = gate.enter(1).await.unwrap();
        let refused = gate.enter(2).await.unwrap_err();
        assert_eq!(refused.code(), ErrorCode::Unavailable, "{refused}");
        // Two client calls wait; a third is refused at once.
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let gate = Arc::clone(&gate);
                tokio::spawn(async move { gate.enter(0).await.map(drop) })
            })
            .collect();
        while gate.waiting() < 2 {
            tokio::task::yield_now().await;
        }
        let full = gate.enter(0).await.unwrap_err();
        assert_eq!(full.code(), ErrorCode::Unavailable);
        assert!(full.message().contains("2 calls are waiting"), "{full}");
        assert_eq!(gate.in_use(), 4);
        // Places freed: the waiters get in, in turn.
        drop(held);
        drop(nested);
        for waiter in waiters {
            waiter.await.unwrap().unwrap();
        }
        assert_eq!((gate.in_use(), gate.waiting()), (0, 0));
    }

    #[tokio::test]
    async fn nested_calls_may_fill_the_pool_and_a_waiting_client_gets_a_place_they_free() {
        let gate = Arc::new(InstanceGate::new(4, 8));
        // With no client calls, nested calls take every place: the
        // reserved one first, then those clients may hold.
        let mut nested: Vec<_> = (0..4).map(|_| gate.try_enter(1).expect("a free place")).collect();
        assert!(gate.try_enter(1).is_none());
        assert!(gate.try_enter(0).is_none());
        assert_eq!(gate.in_use(), 4);
        // A client's call waits, and gets the first place a nested call
        // gives back; a nested call does not take it from the waiter.
        let waiter = {
            let gate = Arc::clone(&gate);
            tokio::spawn(async move { gate.enter(0).await.map(drop) })
        };
        while gate.waiting() < 1 {
            tokio::task::yield_now().await;
        }
        nested.pop();
        assert!(gate.try_enter(1).is_none(), "the freed place is the waiter's");
        waiter.await.unwrap().unwrap();
        drop(nested);
        assert_eq!((gate.in_use(), gate.waiting()), (0, 0));
    }
}
