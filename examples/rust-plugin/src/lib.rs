//! A toolhost plugin with one tool, `greet`. `toolhost new` starts every
//! Rust plugin from this file: replace the tool with yours.
//!
//! A tool is a function taking one argument struct. Its name is the
//! function's name, its description is the struct's doc comment, and its
//! parameters are the struct's JSON Schema (each field's doc comment tells
//! the model what to put there).
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;

/// Greets someone by name, with "Hello" or the greeting given.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Greet {
    /// Who to greet (1 to 200 characters).
    name: String,
    /// The greeting to use instead of "Hello".
    greeting: Option<String>,
}

fn greet(args: Greet) -> Result<String, ToolError> {
    let name = args.name.trim();
    // Arguments the model can fix are `invalid_arguments`, saying how.
    if name.is_empty() || name.chars().count() > 200 {
        return Err(ToolError::invalid_arguments("`name` must be 1 to 200 characters"));
    }
    let greeting = args.greeting.as_deref().unwrap_or("Hello");
    Ok(format!("{greeting}, {name}!"))
}

toolhost_sdk::plugin!(greet(read_only, idempotent));
