//! Adversarial plugin: `list-tools` answers differently in every fresh
//! instance (the description carries a random number), which the
//! conformance suite's `deterministic` check must catch. Written against the
//! WIT directly, since the SDK's descriptions are constants.
wit_bindgen::generate!({ path: "../../wit/0.1.0", world: "toolhost:plugin/plugin" });

use std::hash::BuildHasher;

use exports::toolhost::plugin::tool::{Guest, ToolError, ToolSpec};
use toolhost::plugin::types::Hints;

struct Fickle;

impl Guest for Fickle {
    fn list_tools() -> Vec<ToolSpec> {
        // A fresh instance has fresh random hash keys.
        let mood = std::collections::hash_map::RandomState::new().hash_one(0u8);
        vec![ToolSpec {
            name: "roll".into(),
            description: format!("Rolls a die. Today's mood: {mood}."),
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
        Ok("4".into())
    }
}

export!(Fickle);
