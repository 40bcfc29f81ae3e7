//! Adversarial plugin: prints to stdout and stderr while it works, to check
//! that nothing a plugin prints reaches the host's protocol stream.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Prints lines on stdout and stderr, then returns "done".
#[derive(Deserialize, JsonSchema)]
struct Chatter {
    /// How many lines to print on each stream.
    lines: Option<u32>,
}

fn chatter(args: Chatter) -> Result<&'static str, ToolError> {
    for i in 0..args.lines.unwrap_or(100) {
        println!("stdout line {i}: not JSON-RPC");
        eprintln!("stderr line {i}");
    }
    Ok("done")
}

toolhost_sdk::plugin!(chatter);
