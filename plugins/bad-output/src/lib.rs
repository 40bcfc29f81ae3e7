//! Adversarial `toolhost:plugin@0.2.0` plugin: the tool `names` lists an
//! output schema that describes an array, where a structured result must be
//! an object. Written against the WIT directly, since the SDK derives output
//! schemas from Rust types.
wit_bindgen::generate!({ path: "../../wit/0.2.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Capabilities, Guest, ToolError, ToolOutput, ToolSpec};
use toolhost::plugin::types::Hints;

struct BadOutput;

impl Guest for BadOutput {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "names".into(),
            description: "Lists three names.".into(),
            parameters: r#"{"type":"object","properties":{}}"#.into(),
            output_schema: Some(r#"{"type":"array","items":{"type":"string"}}"#.into()),
            hints: Hints {
                read_only: Some(true),
                destructive: None,
                idempotent: None,
                open_world: None,
            },
        }]
    }

    fn declare() -> Capabilities {
        Capabilities {
            dirs: Vec::new(),
            env: Vec::new(),
            http: Vec::new(),
            secrets: Vec::new(),
            tools: Vec::new(),
        }
    }

    fn call_tool(_name: String, _arguments: String) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput {
            json: r#"["Ada","Grace","Edsger"]"#.into(),
            text: None,
        })
    }
}

export!(BadOutput);
