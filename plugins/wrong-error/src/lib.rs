//! Adversarial plugin: its schema caps `text` at 10 characters, and a
//! longer one is answered with `failed`, although it is the model's
//! arguments that are wrong (`invalid_arguments` would let it correct them).
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Echoes a short text.
#[derive(Deserialize, JsonSchema)]
struct Echo {
    /// The text, at most 10 characters.
    #[schemars(length(max = 10))]
    text: String,
}

fn echo(args: Echo) -> Result<String, ToolError> {
    if args.text.chars().count() > 10 {
        return Err(ToolError::failed("the text is too long"));
    }
    Ok(args.text)
}

toolhost_sdk::plugin!(echo(read_only));
