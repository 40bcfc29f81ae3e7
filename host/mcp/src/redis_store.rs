//! # The store in Redis, shared by replicas
//!
//! [`RedisStore`] is a [`Store`] in a Redis (or Valkey) server that every
//! replica reaches: `[store] url = "redis://127.0.0.1:6379/0"`. Keys get
//! the configured prefix (so that one Redis serves several deployments);
//! each operation is one Redis command, atomic on the server: `SET NX PX`
//! for [`Store::put_new`], `SET PX`, `GET`, `DEL`, and a short Lua script
//! for [`Store::swap`] (compare-and-swap: `GET`, compare, `SET PX`, in one
//! step no other client can come between).
//!
//! A Redis that is down or slow never holds a caller: the connection is
//! made (and remade) by redis-rs's connection manager with a connect
//! timeout, and every operation has [`RedisOptions::timeout`] in all, after
//! which it fails as [`StoreError::Unavailable`] naming the server. A value
//! larger than [`MAX_VALUE_BYTES`] is refused ([`StoreError::TooLarge`]),
//! written or read back (its length is asked first, so an oversized value
//! is never read in): what a store returns is bounded like everything else
//! the host reads.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use futures_util::future::BoxFuture;

use super::store::{MAX_VALUE_BYTES, Store, StoreError, StoreResult, check_value};

/// How a [`RedisStore`] connects and what it accepts.
#[derive(Debug, Clone)]
pub struct RedisOptions {
    /// `redis://[user:password@]host:port/db` (or `rediss://`).
    pub url: String,
    /// Put before every key (e.g. `toolhost:`).
    pub prefix: String,
    /// The longest one operation may take, connecting included.
    pub timeout: Duration,
}

impl RedisOptions {
    /// Options for `url` with the defaults: prefix `toolhost:`, 2 s per
    /// operation.
    pub fn new(url: impl Into<String>) -> Self {
        RedisOptions {
            url: url.into(),
            prefix: "toolhost:".into(),
            timeout: Duration::from_secs(2),
        }
    }
}

/// A [`Store`] in Redis. See the module documentation.
#[derive(Clone)]
pub struct RedisStore {
    manager: ConnectionManager,
    options: RedisOptions,
    /// Where the server is, for errors (the URL less any password).
    shown: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("server", &self.shown)
            .field("prefix", &self.options.prefix)
            .finish_non_exhaustive()
    }
}

/// Compare-and-swap: sets KEYS[1] to ARGV[2] with a TTL of ARGV[3] ms only
/// if its value is ARGV[1].
const SWAP: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
";

impl RedisStore {
    /// A store in the Redis at `options.url`. The connection is made on
    /// first use (and remade after a failure), so a Redis that starts after
    /// the host is fine; until it answers, operations fail as unavailable.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when the URL is not a Redis URL.
    pub fn new(options: RedisOptions) -> StoreResult<RedisStore> {
        let shown = shown_url(&options.url);
        let client = redis::Client::open(options.url.as_str()).map_err(|e| StoreError::Unavailable {
            store: shown.clone(),
            reason: format!("not a Redis URL: {e}"),
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.timeout))
            .set_response_timeout(Some(options.timeout))
            .set_number_of_retries(1)
            .set_max_delay(options.timeout);
        let manager =
            ConnectionManager::new_lazy_with_config(client, config).map_err(|e| StoreError::Unavailable {
                store: shown.clone(),
                reason: e.to_string(),
            })?;
        Ok(RedisStore {
            manager,
            options,
            shown,
        })
    }

    /// Checks that the server answers (`PING`), for a clear error at
    /// start-up rather than at the first task.
    ///
    /// # Errors
    ///
    /// [`StoreError::Unavailable`] when it does not, in time.
    pub async fn ping(&self) -> StoreResult<()> {
        let reply: String = self.run(redis::cmd("PING")).await?;
        if reply == "PONG" {
            Ok(())
        } else {
            Err(self.unavailable(format!("it answered PING with {reply:?}")))
        }
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.options.prefix)
    }

    fn unavailable(&self, reason: String) -> StoreError {
        StoreError::Unavailable {
            store: self.shown.clone(),
            reason,
        }
    }

    /// Runs `cmd` within the timeout.
    async fn run<T: redis::FromRedisValue>(&self, cmd: redis::Cmd) -> StoreResult<T> {
        let mut connection = self.manager.clone();
        let sent = cmd.query_async::<T>(&mut connection);
        self.within(sent).await
    }

    async fn within<T>(&self, op: impl Future<Output = redis::RedisResult<T>>) -> StoreResult<T> {
        match tokio::time::timeout(self.options.timeout, op).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.unavailable(format!("Redis: {e}"))),
            Err(_) => Err(self.unavailable(format!(
                "Redis did not answer within {} ms",
                self.options.timeout.as_millis()
            ))),
        }
    }
}

/// A TTL in whole milliseconds, at least one (Redis refuses `PX 0`).
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// `url` without the password it may carry.
fn shown_url(url: &str) -> String {
    match (url.split_once("://"), url.rfind('@')) {
        (Some((scheme, _)), Some(at)) => format!("{scheme}://…@{}", &url[at + 1..]),
        _ => url.to_string(),
    }
}

impl Store for RedisStore {
    fn put_new<'a>(
        &'a self,
        key: &'a str,
        value: &'a [u8],
        ttl: Duration,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            check_value(value)?;
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(key))
                .arg(value)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl));
            let set: Option<String> = self.run(cmd).await?;
            Ok(set.is_some())
        })
    }

    fn put<'a>(&'a self, key: &'a str, value: &'a [u8], ttl: Duration) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            check_value(value)?;
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(key)).arg(value).arg("PX").arg(millis(ttl));
            let _: String = self.run(cmd).await?;
            Ok(())
        })
    }

    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<Option<Vec<u8>>>> {
        Box::pin(async move {
            // The size first, so that an oversized value is never read in.
            let mut strlen = redis::cmd("STRLEN");
            strlen.arg(self.key(key));
            let len: usize = self.run(strlen).await?;
            if len > MAX_VALUE_BYTES {
                return Err(StoreError::TooLarge { len });
            }
            let mut cmd = redis::cmd("GET");
            cmd.arg(self.key(key));
            let value: Option<Vec<u8>> = self.run(cmd).await?;
            if let Some(value) = &value {
                // It may have grown between the two commands.
                check_value(value)?;
            }
            Ok(value)
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut cmd = redis::cmd("DEL");
            cmd.arg(self.key(key));
            let removed: u64 = self.run(cmd).await?;
            Ok(removed > 0)
        })
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
            let script = redis::Script::new(SWAP);
            let mut invocation = script.key(self.key(key));
            invocation.arg(expected).arg(new).arg(millis(ttl));
            let mut connection = self.manager.clone();
            let swapped: u64 = self.within(invocation.invoke_async(&mut connection)).await?;
            Ok(swapped == 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_not_shown() {
        assert_eq!(shown_url("redis://user:secret@db:6379/0"), "redis://…@db:6379/0");
        assert_eq!(shown_url("redis://127.0.0.1:6379/0"), "redis://127.0.0.1:6379/0");
    }
}
