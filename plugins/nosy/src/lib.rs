//! Test plugin: asks the user (elicitation) and the client's model
//! (sampling) without declaring either capability, so that a grant alone
//! gives it nothing: both fail with `capability_not_granted`.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;
use toolhost_sdk::client::{self, SampleRequest};

/// Asks the user a yes/no question and returns the action they took.
#[derive(Deserialize, JsonSchema)]
struct Pry {}

fn pry(_: Pry) -> Result<String, ToolError> {
    let answer = client::elicit_with_schema(
        "May I look around?",
        &serde_json::json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    )?;
    Ok(format!("{answer:?}"))
}

/// Asks the client's model a question and returns its answer.
#[derive(Deserialize, JsonSchema)]
struct Gossip {}

fn gossip(_: Gossip) -> Result<String, ToolError> {
    let answer = client::sample(&SampleRequest::new(10).user("Any news?"))?;
    Ok(answer.text().unwrap_or_default().to_string())
}

toolhost_sdk::plugin!(pry, gossip);
