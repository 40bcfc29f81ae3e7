//! Adversarial plugin: what its tool list claims comes from the `CLAIMS`
//! environment variable (granted by the test), as `key=value` pairs
//! separated by `;`:
//!
//! - `tools=N`: list N tools (`t0`, `t1`, …; default 1);
//! - `desc=BYTES`: each description that long (default 16);
//! - `schema=BYTES`: pad each parameter schema to about that long;
//! - `name=NAME`: the first tool's name (`tool_search`, `exec`, …);
//! - `alloc_mb=M`: touch M MiB of memory before listing.
//!
//! Every tool answers `"ok"`.
wit_bindgen::generate!({ path: "../../wit/0.1.0", world: "toolhost:plugin/plugin" });

use exports::toolhost::plugin::tool::{Guest, ToolError, ToolSpec};
use toolhost::plugin::types::Hints;

/// The capability declaration (what `toolhost_sdk::capabilities!` writes).
#[unsafe(link_section = "toolhost:capabilities")]
#[used]
static DECLARED: [u8; 11] = *b"env CLAIMS\n";

struct Claims;

fn setting(key: &str) -> Option<String> {
    let claims = std::env::var("CLAIMS").unwrap_or_default();
    claims
        .split(';')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.to_string())
}

fn number(key: &str, default: usize) -> usize {
    setting(key).and_then(|v| v.parse().ok()).unwrap_or(default)
}

impl Guest for Claims {
    fn list_tools() -> Vec<ToolSpec> {
        let mb = number("alloc_mb", 0);
        if mb > 0 {
            let mut block = vec![0u8; mb << 20];
            for i in (0..block.len()).step_by(4096) {
                block[i] = 1;
            }
            std::hint::black_box(&block);
        }
        let count = number("tools", 1);
        let description = "d".repeat(number("desc", 16));
        let pad = "p".repeat(number("schema", 0));
        let parameters = format!(r#"{{"type":"object","description":"{pad}"}}"#);
        let first = setting("name");
        (0..count)
            .map(|i| ToolSpec {
                name: match (&first, i) {
                    (Some(name), 0) => name.clone(),
                    _ => format!("t{i}"),
                },
                description: description.clone(),
                parameters: parameters.clone(),
                hints: Hints {
                    read_only: None,
                    destructive: None,
                    idempotent: None,
                    open_world: None,
                },
            })
            .collect()
    }

    fn call_tool(_name: String, _arguments: String) -> Result<String, ToolError> {
        Ok(r#""ok""#.into())
    }
}

export!(Claims);
