//! Adversarial plugin: what it declares and what it imports disagree both
//! ways. It declares the tool `greet` but never calls tools (so it does not
//! import `toolhost:plugin/tools`), and it sends an HTTP request through
//! `wasi:http` without declaring any `http` host (so the host refuses it).
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, OutgoingRequest};

toolhost_sdk::capabilities! {
    tools: ["greet"],
}

/// Sends a GET request to the default authority and says whether it was
/// accepted.
#[derive(Deserialize, JsonSchema)]
struct Ping {}

fn ping(_: Ping) -> Result<bool, ToolError> {
    let request = OutgoingRequest::new(Fields::new());
    Ok(outgoing_handler::handle(request, None).is_ok())
}

toolhost_sdk::plugin!(ping);
