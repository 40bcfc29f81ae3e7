//! The quick-start plugin: one tool, `greet`.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Greets someone by name.
#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

fn greet(args: Greet) -> Result<String, ToolError> {
    if args.name.trim().is_empty() {
        return Err(ToolError::invalid_arguments("`name` must not be empty"));
    }
    Ok(format!("Hello, {}!", args.name))
}

toolhost_sdk::plugin!(greet(read_only, idempotent));
