//! Adversarial plugin: a global counter. Since every call runs in a fresh
//! instance, it must return 1 every time.
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

static COUNT: AtomicU64 = AtomicU64::new(0);

/// Increments a global counter and returns its new value.
#[derive(Deserialize, JsonSchema)]
struct Count {}

fn count(_: Count) -> Result<u64, ToolError> {
    Ok(COUNT.fetch_add(1, Ordering::SeqCst) + 1)
}

toolhost_sdk::plugin!(count);
