//! Adversarial `toolhost:plugin@0.3.0` plugin, written against the WIT
//! directly (the SDK cannot produce these): `number` gives a structured
//! result that is JSON but not an object, `garbled` one that is not JSON,
//! `unstructured` states an output schema and gives no structured result.
//! The host refuses each result as the tool's failure (`tool_failed`).
wit_bindgen::generate!({ path: "../../wit/0.3.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Capabilities, Guest, ToolError, ToolOutput, ToolSpec};
use toolhost::plugin::types::{Content, ContentBlock, Hints};

struct BadStructured;

fn spec(name: &str, description: &str, output_schema: Option<&str>) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        title: None,
        description: description.into(),
        parameters: r#"{"type":"object","properties":{}}"#.into(),
        output_schema: output_schema.map(str::to_string),
        hints: Hints {
            read_only: Some(true),
            destructive: None,
            idempotent: None,
            open_world: None,
        },
    }
}

impl Guest for BadStructured {
    fn list_tools() -> Vec<ToolSpec> {
        vec![
            spec("number", "Gives 3 as its structured result.", None),
            spec("garbled", "Gives a structured result that is not JSON.", None),
            spec(
                "unstructured",
                "States an output schema and gives text alone.",
                Some(r#"{"type":"object","properties":{"n":{"type":"integer"}}}"#),
            ),
        ]
    }

    fn declare() -> Capabilities {
        Capabilities {
            dirs: Vec::new(),
            env: Vec::new(),
            http: Vec::new(),
            secrets: Vec::new(),
            tools: Vec::new(),
            elicitation: false,
            sampling: false,
        }
    }

    fn call_tool(name: String, _arguments: String) -> Result<ToolOutput, ToolError> {
        let structured = match name.as_str() {
            "number" => Some("3".to_string()),
            "garbled" => Some("{oops".to_string()),
            _ => None,
        };
        Ok(ToolOutput {
            structured,
            content: vec![ContentBlock {
                content: Content::Text("text".into()),
                annotations: None,
            }],
        })
    }
}

export!(BadStructured);
