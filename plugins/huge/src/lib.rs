//! Adversarial plugin: returns a result far larger than the output limit.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Returns a string of `mb` MiB (default 8).
#[derive(Deserialize, JsonSchema)]
struct Huge {
    /// The size of the result, in MiB.
    mb: Option<usize>,
}

fn huge(args: Huge) -> Result<String, ToolError> {
    Ok("x".repeat(args.mb.unwrap_or(8) << 20))
}

toolhost_sdk::plugin!(huge);
