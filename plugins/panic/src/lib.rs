//! Adversarial plugin: panics with a message the host should report.
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

toolhost_sdk::plugin!(explode);
