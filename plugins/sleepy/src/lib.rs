//! Adversarial plugin: blocks in a host call (a WASI sleep).
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Sleeps for `ms` milliseconds (default: one hour), then returns "awake".
#[derive(Deserialize, JsonSchema)]
struct Sleep {
    /// How long to sleep, in milliseconds.
    ms: Option<u64>,
}

fn sleep(args: Sleep) -> Result<&'static str, ToolError> {
    std::thread::sleep(Duration::from_millis(args.ms.unwrap_or(3_600_000)));
    Ok("awake")
}

toolhost_sdk::plugin!(sleep);
