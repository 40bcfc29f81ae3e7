//! Adversarial plugin: allocates until something stops it.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Allocates memory in 1 MiB blocks, without bound.
#[derive(Deserialize, JsonSchema)]
struct Hog {}

fn hog(_: Hog) -> Result<usize, ToolError> {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    loop {
        blocks.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&blocks);
    }
}

toolhost_sdk::plugin!(hog);
