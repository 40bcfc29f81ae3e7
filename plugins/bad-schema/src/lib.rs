//! Adversarial plugin: three tools whose parameter schemas break the rules
//! in three ways: `meta_invalid` is not valid JSON Schema (a `minimum` that
//! is a string), `not_object` describes an array, `remote_ref` refers to a
//! schema on the network. Written against the WIT directly, since the SDK
//! derives valid object schemas from Rust types.
wit_bindgen::generate!({ path: "../../wit/0.1.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Guest, ToolError, ToolSpec};
use toolhost::plugin::types::Hints;

struct BadSchema;

fn tool(name: &str, parameters: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("A tool whose schema is wrong: {name}."),
        parameters: parameters.into(),
        hints: Hints {
            read_only: Some(true),
            destructive: None,
            idempotent: None,
            open_world: None,
        },
    }
}

impl Guest for BadSchema {
    fn list_tools() -> Vec<ToolSpec> {
        vec![
            tool(
                "meta_invalid",
                r#"{"type":"object","properties":{"n":{"type":"integer","minimum":"zero"}}}"#,
            ),
            tool("not_object", r#"{"type":"array","items":{"type":"string"}}"#),
            tool(
                "remote_ref",
                r#"{"type":"object","properties":{"where":{"$ref":"https://schemas.example.invalid/place.json"}}}"#,
            ),
        ]
    }

    fn call_tool(_name: String, _arguments: String) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(BadSchema);
