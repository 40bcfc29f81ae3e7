//! Adversarial plugin: it offers a prompt whose rendering panics and a
//! resource it lists but cannot find, and declares elicitation without ever
//! asking (so it does not import `toolhost:plugin/client`). The conformance
//! suite's `catalog` and `capabilities` checks fail it; the host still
//! loads and serves it, each failure reported as what it is.
use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::ToolError;
use toolhost_sdk::server::{Prompt, ReadError, Resource, Server};

/// Says hello.
#[derive(Deserialize, JsonSchema)]
struct Hi {}

fn hi(_: Hi) -> Result<&'static str, ToolError> {
    Ok("hi")
}

/// Renders nothing: it panics.
#[derive(Deserialize, JsonSchema)]
struct Explode {
    /// Anything.
    topic: String,
}

fn explode(args: Explode) -> Result<String, ToolError> {
    panic!("no prompt about {}", args.topic)
}

fn vanished() -> Result<String, ReadError> {
    Err(ReadError::not_found("it was here a moment ago"))
}

fn server() -> Server {
    Server::new()
        .prompt(Prompt::new("explode", explode))
        .resource(Resource::new("broken://vanished", "vanished", vanished))
}

toolhost_sdk::capabilities! {
    elicitation: true,
}

toolhost_sdk::plugin! {
    tools: [hi],
    server: server,
}
