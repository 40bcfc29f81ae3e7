//! Adversarial plugin: declares the tool "bad name!", which breaks the
//! tool-name rule. Written against the WIT directly, since the SDK derives
//! names from Rust identifiers and cannot produce it.
wit_bindgen::generate!({ path: "../../wit/0.1.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Guest, ToolError, ToolSpec};
use toolhost::plugin::types::Hints;

struct BadName;

impl Guest for BadName {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "bad name!".into(),
            description: "A tool whose name has a space and a bang.".into(),
            parameters: r#"{"type":"object","properties":{}}"#.into(),
            hints: Hints {
                read_only: None,
                destructive: None,
                idempotent: None,
                open_world: None,
            },
        }]
    }

    fn call_tool(_name: String, _arguments: String) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(BadName);
