//! Adversarial plugin: recurses until the stack runs out (`deep`), or exactly
//! as deep as asked (`recurse`), to show the stack limit is the call's own.
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

/// Recurses `depth` calls deep, then returns `depth`.
#[derive(Deserialize, JsonSchema)]
struct Recurse {
    /// How many nested calls to make.
    depth: u64,
}

#[inline(never)]
fn nest(n: u64, a: u64, b: u64, c: u64) -> u64 {
    if n == 0 {
        return a ^ b ^ c;
    }
    // Values live across the call, so every frame keeps them on the stack.
    let r = nest(black_box(n - 1), b.wrapping_mul(3), c ^ n, a.rotate_left(7));
    r.rotate_left(1) ^ a ^ b.wrapping_add(c)
}

fn recurse(args: Recurse) -> Result<u64, ToolError> {
    black_box(nest(args.depth, 1, 2, 3));
    Ok(args.depth)
}

toolhost_sdk::plugin!(deep, recurse);
