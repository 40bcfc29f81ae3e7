//! Adversarial plugin: fails the ways guests of any language do, with
//! messages the host should report: a Rust panic (`explode`), and text on
//! stderr followed by a bare trap (`abort`), as a Python exception or a
//! JavaScript throw leaves them.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Panics with "the answer was <n>, not 42".
#[derive(Deserialize, JsonSchema)]
struct Explode {
    /// The number to put in the panic message.
    n: i64,
}

fn explode(args: Explode) -> Result<(), ToolError> {
    panic!("the answer was {}, not 42", args.n)
}

/// Writes `stderr` to stderr (`repeat` times), then aborts: a trap with no
/// panic message.
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

toolhost_sdk::plugin!(explode, abort);
