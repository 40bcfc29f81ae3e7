//! Adversarial plugin: recurses until the stack runs out.
use std::hint::black_box;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Recurses without bound.
#[derive(Deserialize, JsonSchema)]
struct Deep {}

#[inline(never)]
#[allow(unconditional_recursion, reason = "recursing without bound is the point")]
fn down(depth: u64, pad: [u64; 8]) -> u64 {
    black_box(down(black_box(depth + 1), black_box(pad))) + pad[0]
}

fn deep(_: Deep) -> Result<u64, ToolError> {
    Ok(down(0, [1; 8]))
}

toolhost_sdk::plugin!(deep);
