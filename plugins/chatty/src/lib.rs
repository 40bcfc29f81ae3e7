//! Adversarial plugin: prints to stdout and stderr, and writes `host.log`
//! records, while it works: nothing a plugin prints may reach the host's
//! protocol stream, and its log is capped per call and per unit of time.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Prints lines on stdout and stderr and writes log records, then returns
/// "done".
#[derive(Deserialize, JsonSchema)]
struct Chatter {
    /// How many lines to print on each stream (default 100).
    lines: Option<u32>,
    /// How many `host.log` records to write (default 0).
    records: Option<u32>,
}

fn chatter(args: Chatter) -> Result<&'static str, ToolError> {
    for i in 0..args.lines.unwrap_or(100) {
        println!("stdout line {i}: not JSON-RPC");
        eprintln!("stderr line {i}");
    }
    for i in 0..args.records.unwrap_or(0) {
        toolhost_sdk::log::info("chatty record", &[("i", &i.to_string())]);
    }
    Ok("done")
}

toolhost_sdk::plugin!(chatter);
