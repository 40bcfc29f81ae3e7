//! Calling other tools through the host: one at a time ([`call`]) or many
//! at once ([`call_many`]).
//!
//! Every call goes through the host's dispatch pipeline (argument
//! validation, audience and approval gates, hooks) with the calling tool's
//! remaining deadline and a depth limit. The plugin must declare each tool
//! it calls (`capabilities! { tools: ["name"] }`) and the operator must grant
//! it; otherwise the call fails with the code `capability_not_granted`.
//!
//! A call's value is the called tool's structured JSON when it gives one;
//! else, when its result is text, the text (as a JSON string, the blocks
//! joined with newlines); else its content blocks as MCP writes them (a
//! JSON array of `{"type": "image", ...}` objects). [`call_output`] gives
//! the blocks themselves.
//!
//! ```ignore
//! use serde_json::json;
//! use toolhost_sdk::tools;
//!
//! let sum = tools::call("calculate_expression", &json!({"expression": "2+2"}))?;
//! let both = tools::call_many([
//!     ("current_datetime", json!({})),
//!     ("calculate_expression", json!({"expression": "6*7"})),
//! ]);
//! ```

use serde::Serialize;
use serde_json::Value;

use crate::__private::server::toolhost::plugin::tools as wit;
use crate::__private::server::toolhost::plugin::types as wit_types;
use crate::content::{Content, ContentBlock};
pub use crate::error::HostError;

/// Why a nested call did not produce a result (the name this module gave
/// [`HostError`] before it served the client interface too).
pub type CallError = HostError;

/// What a nested call returned, as the called tool gave it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CallOutput {
    /// The structured JSON, when the tool gave one (from a tool of this
    /// SDK, an object; from older plugins and built-in tools, any JSON
    /// value but a string).
    pub structured: Option<Value>,
    /// The content blocks, in order.
    pub content: Vec<ContentBlock>,
}

impl CallOutput {
    /// The call's value: see the [module documentation](self).
    pub fn value(&self) -> Value {
        if let Some(value) = &self.structured {
            return value.clone();
        }
        let texts: Option<Vec<&str>> = self.content.iter().map(ContentBlock::as_text).collect();
        match texts {
            Some(texts) => Value::String(texts.join("\n")),
            None => Value::Array(self.content.iter().map(block_json).collect()),
        }
    }
}

/// A block as MCP writes it (bytes base64-encoded).
fn block_json(block: &ContentBlock) -> Value {
    use serde_json::json;
    let mut value = match &block.content {
        Content::Text(text) => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => {
            json!({"type": "image", "data": base64(data), "mimeType": mime_type})
        }
        Content::Audio { data, mime_type } => {
            json!({"type": "audio", "data": base64(data), "mimeType": mime_type})
        }
        Content::ResourceLink(link) => {
            let mut v = json!({"type": "resource_link", "uri": link.uri, "name": link.name});
            for (key, field) in [
                ("title", &link.title),
                ("description", &link.description),
                ("mimeType", &link.mime_type),
            ] {
                if let Some(field) = field {
                    v[key] = json!(field);
                }
            }
            if let Some(size) = link.size {
                v["size"] = json!(size);
            }
            v
        }
        Content::Resource(contents) => {
            let mut resource = match contents {
                crate::ResourceContents::Text { uri, text, .. } => json!({"uri": uri, "text": text}),
                crate::ResourceContents::Blob { uri, blob, .. } => json!({"uri": uri, "blob": base64(blob)}),
            };
            if let crate::ResourceContents::Text {
                mime_type: Some(m), ..
            }
            | crate::ResourceContents::Blob {
                mime_type: Some(m), ..
            } = contents
            {
                resource["mimeType"] = json!(m);
            }
            json!({"type": "resource", "resource": resource})
        }
    };
    if let Some(a) = &block.annotations {
        let mut annotations = serde_json::Map::new();
        if !a.audience.is_empty() {
            let audience: Vec<&str> = a
                .audience
                .iter()
                .map(|r| match r {
                    crate::Role::User => "user",
                    crate::Role::Assistant => "assistant",
                })
                .collect();
            annotations.insert("audience".into(), json!(audience));
        }
        if let Some(p) = a.priority {
            annotations.insert("priority".into(), json!(p));
        }
        if let Some(t) = &a.last_modified {
            annotations.insert("lastModified".into(), json!(t));
        }
        value["annotations"] = Value::Object(annotations);
    }
    value
}

/// Standard base64 with padding, as MCP carries bytes.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn output_of(
    name: &str,
    result: Result<wit_types::ToolOutput, wit_types::HostError>,
) -> Result<CallOutput, HostError> {
    let output = result?;
    let structured = match output.structured {
        Some(json) => Some(toolhost_json::from_str(&json).map_err(|e| {
            HostError::local(
                "tool_failed",
                format!("`{name}` returned structured content that is not JSON: {e}"),
            )
        })?),
        None => None,
    };
    Ok(CallOutput {
        structured,
        content: output.content.into_iter().map(Into::into).collect(),
    })
}

fn arguments_of(name: &str, arguments: &impl Serialize) -> Result<String, HostError> {
    toolhost_json::to_string(arguments).map_err(|e| {
        HostError::local(
            "invalid_arguments",
            format!("the arguments for `{name}` cannot be serialized: {e}"),
        )
    })
}

/// Calls the tool `name` with `arguments` and waits for its value (see
/// the [module documentation](self)).
///
/// # Errors
///
/// The host's [`HostError`]: the tool is not declared and granted, the
/// arguments do not fit, the called tool failed, ...
pub fn call(name: &str, arguments: &impl Serialize) -> Result<Value, HostError> {
    call_output(name, arguments).map(|out| out.value())
}

/// Calls the tool `name` with `arguments` and waits for its whole result:
/// structured JSON and content blocks as the tool gave them.
///
/// # Errors
///
/// As [`call`].
pub fn call_output(name: &str, arguments: &impl Serialize) -> Result<CallOutput, HostError> {
    let arguments = arguments_of(name, arguments)?;
    output_of(name, wit::call(name, &arguments))
}

/// Starts every call in `calls` (tool name, arguments) at once, waits until
/// all have ended, and returns their values in the same order. The host
/// runs them concurrently: the time taken is that of the slowest. Each is
/// checked, counted and gated like a single [`call`].
pub fn call_many<'a>(calls: impl IntoIterator<Item = (&'a str, Value)>) -> Vec<Result<Value, HostError>> {
    let calls: Vec<wit::ToolCall> = calls
        .into_iter()
        .map(|(name, arguments)| wit::ToolCall {
            name: name.to_string(),
            arguments: arguments.to_string(),
        })
        .collect();
    let results = wit::call_many(&calls);
    calls
        .iter()
        .zip(results)
        .map(|(c, r)| output_of(&c.name, r).map(|out| out.value()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_standard_with_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(&[0x89, b'P', b'N', b'G']), "iVBORw==");
    }

    #[test]
    fn a_calls_value_is_structured_else_text_else_blocks() {
        let structured = CallOutput {
            structured: Some(serde_json::json!({"n": 1})),
            content: vec![ContentBlock::text("one")],
        };
        assert_eq!(structured.value(), serde_json::json!({"n": 1}));
        let text = CallOutput {
            structured: None,
            content: vec![ContentBlock::text("a"), ContentBlock::text("b")],
        };
        assert_eq!(text.value(), "a\nb");
        let media = CallOutput {
            structured: None,
            content: vec![
                ContentBlock::text("a").priority(0.5),
                ContentBlock::image(vec![1, 2, 3], "image/png"),
            ],
        };
        assert_eq!(
            media.value(),
            serde_json::json!([
                {"type": "text", "text": "a", "annotations": {"priority": 0.5}},
                {"type": "image", "data": "AQID", "mimeType": "image/png"}
            ])
        );
    }
}
