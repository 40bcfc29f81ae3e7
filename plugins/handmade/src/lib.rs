//! A `toolhost:plugin@0.2.0` plugin written against the WIT directly, the
//! way a Python or JavaScript toolchain builds one: no SDK, no custom
//! section. Its capabilities come from `declare()` alone.
//!
//! - `read_env {name}`: the value of environment variable `name`, or `null`
//!   (it declares `HANDMADE_VAR`; `toolhost declare` can add more);
//! - `describe {count}`: `{"count", "label"}` under an output schema, with
//!   a sentence for the model; a negative count breaks its own schema.
wit_bindgen::generate!({ path: "../../wit/0.2.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Capabilities, Guest, ToolError, ToolOutput, ToolSpec};
use serde_json::{Value, json};
use toolhost::plugin::types::Hints;

struct Handmade;

const NO_HINTS: Hints = Hints {
    read_only: Some(true),
    destructive: None,
    idempotent: None,
    open_world: None,
};

impl Guest for Handmade {
    fn list_tools() -> Vec<ToolSpec> {
        vec![
            ToolSpec {
                name: "read_env".into(),
                description: "Reads an environment variable the plugin was granted.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": false
                })
                .to_string(),
                output_schema: None,
                hints: NO_HINTS,
            },
            ToolSpec {
                name: "describe".into(),
                description: "Describes a number of items.".into(),
                parameters: json!({
                    "type": "object",
                    "properties": {"count": {"type": "integer"}},
                    "required": ["count"]
                })
                .to_string(),
                output_schema: Some(
                    json!({
                        "type": "object",
                        "properties": {
                            "count": {"type": "integer"},
                            "label": {"type": "string"}
                        },
                        "required": ["count", "label"]
                    })
                    .to_string(),
                ),
                hints: NO_HINTS,
            },
        ]
    }

    fn declare() -> Capabilities {
        Capabilities {
            dirs: Vec::new(),
            env: vec!["HANDMADE_VAR".into()],
            http: Vec::new(),
            secrets: Vec::new(),
            tools: Vec::new(),
        }
    }

    fn call_tool(name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        let args: Value =
            serde_json::from_str(&arguments).map_err(|e| ToolError::InvalidArguments(e.to_string()))?;
        match name.as_str() {
            "read_env" => {
                let var = args["name"].as_str().unwrap_or_default();
                let value = std::env::var(var).ok();
                Ok(ToolOutput {
                    json: json!(value).to_string(),
                    text: None,
                })
            }
            "describe" => {
                let count = args["count"].as_i64().unwrap_or_default();
                let json = if count < 0 {
                    json!({"count": "negative"})
                } else {
                    json!({"count": count, "label": format!("{count} items")})
                };
                Ok(ToolOutput {
                    json: json.to_string(),
                    text: Some(format!("There are {count} items.")),
                })
            }
            other => Err(ToolError::Failed(format!("no tool `{other}`"))),
        }
    }
}

export!(Handmade);
