//! `[pool]`: the instance pool sandboxed calls run in. Every call runs in
//! an instance of its own; the pool holds at most `max_concurrent_instances`
//! at once, and calls past them wait their turn, at most
//! `max_waiting_calls` of them (see [`EngineConfig`]).
//!
//! ```toml
//! [pool]
//! max_concurrent_instances = 16   # default 128
//! max_waiting_calls = 64          # default 1024
//! ```

use serde::Deserialize;

use crate::engine::EngineConfig;
use crate::error::{Error, ErrorCode, Result};

/// The `[pool]` section: what it leaves out, the engine's defaults decide.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolConfig {
    /// The most instances alive at once: the calls that run at the same
    /// time (a quarter of them kept for nested calls).
    #[serde(default)]
    pub max_concurrent_instances: Option<u32>,
    /// The most calls waiting for an instance; past them a call is refused
    /// at once (`unavailable`).
    #[serde(default)]
    pub max_waiting_calls: Option<usize>,
}

impl PoolConfig {
    /// `engine` with this section's bounds.
    ///
    /// # Errors
    ///
    /// `config` when `max_concurrent_instances` is 0.
    pub fn engine(&self, engine: EngineConfig) -> Result<EngineConfig> {
        if self.max_concurrent_instances == Some(0) {
            return Err(Error::new(
                ErrorCode::Config,
                "[pool] max_concurrent_instances must be at least 1",
            ));
        }
        Ok(EngineConfig {
            max_concurrent_instances: self
                .max_concurrent_instances
                .unwrap_or(engine.max_concurrent_instances),
            max_waiting_calls: self.max_waiting_calls.unwrap_or(engine.max_waiting_calls),
            ..engine
        })
    }
}
