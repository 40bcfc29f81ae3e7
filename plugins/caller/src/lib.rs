//! Test plugin: calls other tools through `toolhost:plugin/tools`.
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolhost_sdk::ToolError;

toolhost_sdk::capabilities! {
    tools: ["greet", "relay", "sleep"],
}

/// Calls the tool `name` with `arguments` and returns its result.
#[derive(Deserialize, JsonSchema)]
struct Relay {
    /// The tool to call.
    name: String,
    /// Its arguments.
    arguments: Value,
}

fn relay(args: Relay) -> Result<Value, ToolError> {
    Ok(toolhost_sdk::tools::call(&args.name, &args.arguments)?)
}

toolhost_sdk::plugin!(relay);
