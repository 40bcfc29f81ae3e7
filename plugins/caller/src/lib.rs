//! Test plugin: calls other tools through `toolhost:plugin/tools`: one
//! (`relay`), several one after the other (`chain`), or several at once
//! (`fan_out`). It declares `nowhere`, a tool no test registers.
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_sdk::{ToolError, tools};

toolhost_sdk::capabilities! {
    tools: ["greet", "relay", "sleep", "barrier", "describe", "fan_out", "nowhere"],
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
    Ok(tools::call(&args.name, &args.arguments)?)
}

/// Calls every tool in `calls` at once and returns each result in order, as
/// `{"ok": RESULT}` or `{"error": {"code", "message"}}`.
#[derive(Deserialize, JsonSchema)]
struct FanOut {
    /// The calls.
    calls: Vec<Relay>,
}

fn fan_out(args: FanOut) -> Result<Value, ToolError> {
    let results = tools::call_many(args.calls.iter().map(|c| (c.name.as_str(), c.arguments.clone())));
    Ok(report(results))
}

/// Calls every tool in `calls` one after the other and returns each result
/// in order, as `fan_out` does.
#[derive(Deserialize, JsonSchema)]
struct Chain {
    /// The calls.
    calls: Vec<Relay>,
}

fn chain(args: Chain) -> Result<Value, ToolError> {
    let results = args.calls.iter().map(|c| tools::call(&c.name, &c.arguments));
    Ok(report(results.collect()))
}

fn report(results: Vec<Result<Value, tools::CallError>>) -> Value {
    results
        .into_iter()
        .map(|r| match r {
            Ok(value) => json!({ "ok": value }),
            Err(e) => json!({ "error": { "code": e.code(), "message": e.message() } }),
        })
        .collect()
}

toolhost_sdk::plugin!(relay, fan_out, chain);
