//! Adversarial plugin: `spin` never returns; `busy` computes for a while.
use std::hint::black_box;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Loops forever.
#[derive(Deserialize, JsonSchema)]
struct Spin {}

fn spin(_: Spin) -> Result<u64, ToolError> {
    let mut n = 0u64;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

/// Computes (without sleeping) for `ms` milliseconds, then returns how many
/// iterations it made.
#[derive(Deserialize, JsonSchema)]
struct Busy {
    /// How long to compute, in milliseconds.
    ms: u64,
}

fn busy(args: Busy) -> Result<u64, ToolError> {
    let until = Instant::now() + Duration::from_millis(args.ms);
    let mut n = 0u64;
    while Instant::now() < until {
        for _ in 0..1000 {
            n = black_box(n.wrapping_add(1));
        }
    }
    Ok(n)
}

toolhost_sdk::plugin!(spin, busy);
