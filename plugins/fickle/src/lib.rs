//! Adversarial plugin (0.2.0): `list-tools` and `declare` answer
//! differently in every fresh instance (the description and the declared
//! variable carry a random number), which the conformance suite's
//! `deterministic` check must catch; `roll` answers with that number.
//! Written against the WIT directly, since the SDK's descriptions and
//! declarations are constants.
wit_bindgen::generate!({ path: "../../wit/0.2.0", world: "toolhost:plugin/plugin" });

use std::hash::BuildHasher;

use exports::toolhost::plugin::tool::{Capabilities, Guest, ToolError, ToolOutput, ToolSpec};
use toolhost::plugin::types::Hints;

struct Fickle;

/// A number that differs in every instance: a fresh instance has fresh
/// random hash keys.
fn mood() -> u64 {
    std::collections::hash_map::RandomState::new().hash_one(0u8)
}

impl Guest for Fickle {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "roll".into(),
            description: format!("Rolls a die. Today's mood: {}.", mood()),
            parameters: r#"{"type":"object","properties":{}}"#.into(),
            output_schema: None,
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
            env: vec![format!("MOOD_{}", mood())],
            http: Vec::new(),
            secrets: Vec::new(),
            tools: Vec::new(),
        }
    }

    /// Answers with the instance's mood: a number a later call (a fresh
    /// instance) must not repeat.
    fn call_tool(_name: String, _arguments: String) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput {
            json: mood().to_string(),
            text: None,
        })
    }
}

export!(Fickle);
