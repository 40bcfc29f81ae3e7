//! Adversarial `toolhost:plugin@0.2.0` plugin: its `declare()` asks for an
//! `http` host and a tool to call, but it imports neither
//! `wasi:http/outgoing-handler` nor `toolhost:plugin/tools`; its tool
//! `shout` promises `{"text": string}` in its output schema and returns
//! `{"shouted": ...}`. Written against the WIT directly.
wit_bindgen::generate!({ path: "../../wit/0.2.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Capabilities, Guest, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};
use toolhost::plugin::types::Hints;

struct Liar;

impl Guest for Liar {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "shout".into(),
            description: "Returns the text in capitals.".into(),
            parameters: json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            })
            .to_string(),
            output_schema: Some(
                json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })
                .to_string(),
            ),
            hints: Hints {
                read_only: Some(true),
                destructive: None,
                idempotent: Some(true),
                open_world: None,
            },
        }]
    }

    fn declare() -> Capabilities {
        Capabilities {
            dirs: Vec::new(),
            env: Vec::new(),
            http: vec!["api.example.com".into()],
            secrets: Vec::new(),
            tools: vec!["greet".into()],
        }
    }

    fn call_tool(_name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let args: Value =
            serde_json::from_str(&arguments).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        let Some(text) = args["text"].as_str() else {
            return Err(ToolError::InvalidArguments("`text` must be a string".into()));
        };
        Ok(ToolOutput {
            json: json!({"shouted": text.to_uppercase()}).to_string(),
            text: None,
        })
    }
}

export!(Liar);
