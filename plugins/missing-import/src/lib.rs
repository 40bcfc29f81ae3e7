//! Adversarial plugin: a valid tool that imports `test:missing/telepathy`,
//! which no host provides. The host must refuse it at load, naming the import.
wit_bindgen::generate!({ path: ["../../wit/0.1.0", "wit"], world: "test:missing/missing-import", generate_all });

use exports::toolhost::plugin::tool::{Guest, ToolError, ToolSpec};
use toolhost::plugin::types::Hints;

struct MissingImport;

impl Guest for MissingImport {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "read_mind".into(),
            description: "Reads the operator's mind.".into(),
            parameters: r#"{"type":"object","properties":{}}"#.into(),
            hints: Hints {
                read_only: Some(true),
                destructive: None,
                idempotent: None,
                open_world: None,
            },
        }]
    }

    fn call_tool(_name: String, _arguments: String) -> Result<String, ToolError> {
        Ok(format!("{:?}", test::missing::telepathy::read_mind()))
    }
}

export!(MissingImport);
