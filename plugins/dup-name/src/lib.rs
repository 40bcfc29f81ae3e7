//! Adversarial plugin: declares the tool `twin` twice, which breaks the rule
//! that names are unique within a component. Written against the WIT
//! directly, since the SDK derives names from distinct Rust functions.
wit_bindgen::generate!({ path: "../../wit/0.1.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Guest, ToolError, ToolSpec};
use toolhost::plugin::types::Hints;

struct DupName;

fn twin(description: &str) -> ToolSpec {
    ToolSpec {
        name: "twin".into(),
        description: description.into(),
        parameters: r#"{"type":"object","properties":{}}"#.into(),
        hints: Hints {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        },
    }
}

impl Guest for DupName {
    fn list_tools() -> Vec<ToolSpec> {
        vec![twin("The first twin."), twin("The second twin.")]
    }

    fn call_tool(_name: String, _arguments: String) -> Result<String, ToolError> {
        Ok("null".into())
    }
}

export!(DupName);
