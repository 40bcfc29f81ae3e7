//! Adversarial plugin: writes to stderr, then traps with no panic message
//! (`std::process::abort`), as a Python exception or a JavaScript throw
//! leaves a call: the host should quote the end of that stderr.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Writes `stderr` to stderr (`repeat` times), then aborts.
#[derive(Deserialize, JsonSchema)]
struct Abort {
    /// What to write first.
    stderr: String,
    /// How many times (default 1).
    repeat: Option<usize>,
}

fn abort(args: Abort) -> Result<(), ToolError> {
    for _ in 0..args.repeat.unwrap_or(1) {
        eprintln!("{}", args.stderr);
    }
    std::process::abort()
}

toolhost_sdk::plugin!(abort);
