//! # The shared store: what replicas must agree on
//!
//! MCP 2026-07-28 has no sessions: a client's retry, a `tasks/get` or a
//! `tasks/cancel` may reach any replica behind a load balancer. What must
//! hold across those requests lives in a [`Store`]: a request state's
//! single use (its nonce claimed once), an approval "for this session",
//! a task's record. One process alone uses the embedded [`MemoryStore`];
//! replicas share a store they already run (Redis or Valkey, `[store] url`).
//!
//! The operations are the few a key-value server does atomically: set if
//! absent, set, get, delete and compare-and-swap, each entry with a
//! lifetime. Every value is bounded ([`MAX_VALUE_BYTES`]) on the way in and
//! on the way out, so a store cannot hand a replica more than it can hold.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

/// The largest value a store keeps or returns: 32 MiB, above any result the
/// host's output limits let through.
pub const MAX_VALUE_BYTES: usize = 32 << 20;

/// The most entries the embedded store holds at once (expired ones are
/// swept first): past it, writes fail with [`StoreError::Full`] rather than
/// let clients grow the process without bound.
pub const MEMORY_STORE_MAX_ENTRIES: usize = 1 << 20;

/// Why a store operation failed. A failed operation changed nothing that
/// the caller can rely on: callers fail closed (a state whose single use
/// cannot be recorded is refused).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store could not be reached or answered with an error.
    #[error("the store at {store} failed: {reason}")]
    Unavailable {
        /// Which store (its address, without credentials).
        store: String,
        /// What went wrong.
        reason: String,
    },
    /// A value is larger than [`MAX_VALUE_BYTES`].
    #[error("a value of {len} bytes is over the store's limit of {MAX_VALUE_BYTES}")]
    TooLarge {
        /// Its size.
        len: usize,
    },
    /// The embedded store holds [`MEMORY_STORE_MAX_ENTRIES`] live entries.
    #[error("the embedded store is full ({MEMORY_STORE_MAX_ENTRIES} live entries)")]
    Full,
}

/// The result of a store operation.
pub type StoreResult<T> = Result<T, StoreError>;

/// A key-value store with lifetimes, shared by the replicas of a
/// deployment. Keys are UTF-8 strings the host builds (never raw client
/// input); values are bytes. Every operation is atomic on its key.
pub trait Store: Send + Sync + fmt::Debug {
    /// Sets `key` to `value` for `ttl` only if it holds nothing; returns
    /// whether it was set. Claiming a one-time value (a nonce) is this.
    fn put_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Sets `key` to `value` for `ttl`, whatever it held.
    fn put<'a>(&'a self, key: &'a str, value: &'a [u8], ttl: Duration) -> BoxFuture<'a, StoreResult<()>>;

    /// The value of `key`, if it holds one that has not expired.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<Option<Vec<u8>>>>;

    /// Removes `key`; returns whether it held a value.
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Sets `key` to `new` for `ttl` only if it holds exactly `expected`;
    /// returns whether it was set. Two replicas racing to change one record
    /// (a task's status) cannot both win.
    fn swap<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        new: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>>;
}

/// Checks a value against [`MAX_VALUE_BYTES`].
pub fn check_value(value: &[u8]) -> StoreResult<()> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(StoreError::TooLarge { len: value.len() });
    }
    Ok(())
}

/// The embedded store: one process's memory. Right for a single server;
/// replicas need a shared one, or each would honour only what it saw.
#[derive(Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    value: Vec<u8>,
    expires: Instant,
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.lock().len();
        f.debug_struct("MemoryStore").field("entries", &len).finish()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the live entries (the expired ones removed first when
    /// the map is at its bound), with `now`.
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Entry>, Instant) -> T) -> T {
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.len() >= MEMORY_STORE_MAX_ENTRIES {
            entries.retain(|_, e| e.expires > now);
        }
        f(&mut entries, now)
    }

    fn live<'m>(entries: &'m HashMap<String, Entry>, key: &str, now: Instant) -> Option<&'m Entry> {
        entries.get(key).filter(|e| e.expires > now)
    }

    fn insert(
        entries: &mut HashMap<String, Entry>,
        key: &str,
        value: &[u8],
        expires: Instant,
    ) -> StoreResult<()> {
        if !entries.contains_key(key) && entries.len() >= MEMORY_STORE_MAX_ENTRIES {
            return Err(StoreError::Full);
        }
        entries.insert(
            key.to_string(),
            Entry {
                value: value.to_vec(),
                expires,
            },
        );
        Ok(())
    }
}

/// `now + ttl`, saturating far in the future rather than overflowing.
fn deadline(now: Instant, ttl: Duration) -> Instant {
    now.checked_add(ttl)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

impl Store for MemoryStore {
    fn put_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            check_value(value)?;
            self.with(|entries, now| {
                if Self::live(entries, key, now).is_some() {
                    return Ok(false);
                }
                Self::insert(entries, key, value, deadline(now, ttl)).map(|()| true)
            })
        })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a [u8], ttl: Duration) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            check_value(value)?;
            self.with(|entries, now| Self::insert(entries, key, value, deadline(now, ttl)))
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<Option<Vec<u8>>>> {
        Box::pin(async move {
            Ok(self.with(|entries, now| Self::live(entries, key, now).map(|e| e.value.clone())))
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(
            async move { Ok(self.with(|entries, now| entries.remove(key).is_some_and(|e| e.expires > now))) },
        )
    }

    fn swap<'a>(
        &'a self,
        key: &'a str,
        expected: &'a [u8],
        new: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            check_value(new)?;
            self.with(|entries, now| {
                if Self::live(entries, key, now).is_none_or(|e| e.value != expected) {
                    return Ok(false);
                }
                Self::insert(entries, key, new, deadline(now, ttl)).map(|()| true)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn put_new_claims_a_key_once() {
        let store = MemoryStore::new();
        assert!(store.put_new("nonce", b"1", TTL).await.unwrap());
        assert!(!store.put_new("nonce", b"2", TTL).await.unwrap());
        assert_eq!(store.get("nonce").await.unwrap().as_deref(), Some(&b"1"[..]));
    }

    #[tokio::test]
    async fn an_expired_entry_is_gone() {
        let store = MemoryStore::new();
        store.put("k", b"v", Duration::ZERO).await.unwrap();
        assert_eq!(store.get("k").await.unwrap(), None);
        assert!(store.put_new("k", b"w", TTL).await.unwrap());
        assert!(!store.swap("gone", b"", b"x", TTL).await.unwrap());
    }

    #[tokio::test]
    async fn swap_changes_only_the_expected_value() {
        let store = MemoryStore::new();
        store.put("task", b"working", TTL).await.unwrap();
        assert!(!store.swap("task", b"completed", b"failed", TTL).await.unwrap());
        assert!(store.swap("task", b"working", b"failed", TTL).await.unwrap());
        assert_eq!(store.get("task").await.unwrap().as_deref(), Some(&b"failed"[..]));
        assert!(store.delete("task").await.unwrap());
        assert!(!store.delete("task").await.unwrap());
    }

    #[tokio::test]
    async fn a_value_over_the_limit_is_refused() {
        let store = MemoryStore::new();
        let big = vec![0u8; MAX_VALUE_BYTES + 1];
        assert!(matches!(
            store.put("k", &big, TTL).await,
            Err(StoreError::TooLarge { .. })
        ));
        assert_eq!(store.get("k").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_huge_ttl_does_not_overflow() {
        let store = MemoryStore::new();
        store.put("k", b"v", Duration::MAX).await.unwrap();
        assert!(store.get("k").await.unwrap().is_some());
    }
}
