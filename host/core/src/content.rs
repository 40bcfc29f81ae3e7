//! # Rich content: what a result shows besides its JSON
//!
//! A tool's result is JSON ([`ToolOutput::content`](crate::registry::ToolOutput::content));
//! a tool may also give **content blocks**, as MCP carries them: text,
//! images and audio (base64 data with a MIME type), links to resources, and
//! embedded resources (text or base64 bytes), each with optional
//! annotations (who it is for, how important, when it changed). An MCP
//! client gets the blocks as the result's `content`, unchanged; a tool or
//! script calling the tool gets the JSON.
//!
//! The types serialize to MCP's JSON exactly (`{"type": "image", "data":
//! …, "mimeType": …}`), so that content from a bridged MCP server passes
//! through intact, `_meta` included.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::content::{Content, ContentBlock};
//!
//! let block: ContentBlock = serde_json::from_value(json!({
//!     "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png",
//!     "annotations": {"audience": ["user"], "priority": 0.5}
//! })).unwrap();
//! assert!(matches!(block.content, Content::Image { ref mime_type, .. } if mime_type == "image/png"));
//! assert_eq!(serde_json::to_value(&block).unwrap()["annotations"]["priority"], 0.5);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a result's content, with its annotations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentBlock {
    /// What it is.
    #[serde(flatten)]
    pub content: Content,
    /// Who it is for, how important, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata the block carries (`_meta`), passed on as it is.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::from(Content::Text { text: text.into() })
    }

    /// The block's text, for a text block.
    pub fn as_text(&self) -> Option<&str> {
        match &self.content {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}

impl From<Content> for ContentBlock {
    fn from(content: Content) -> Self {
        ContentBlock {
            content,
            annotations: None,
            meta: None,
        }
    }
}

/// The kinds of content, as MCP names them (its `type`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Its bytes, base64-encoded.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A sound.
    Audio {
        /// Its bytes, base64-encoded.
        data: String,
        /// Its MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// A title for people.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Its size in bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// A resource embedded in the result.
    Resource {
        /// Its contents.
        resource: ResourceContents,
    },
}

/// A resource's contents: text, or base64 bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// Text.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Metadata (`_meta`), passed on as it is.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// Bytes.
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The bytes, base64-encoded.
        blob: String,
        /// Metadata (`_meta`), passed on as it is.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

/// Who a block is for, how important it is, when it changed (MCP's
/// annotations).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Annotations {
    /// Who the block is for: `user`, `assistant`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// How important it is, from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<f64>,
    /// When it last changed (ISO 8601).
    #[serde(rename = "lastModified", default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// A party of a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_round_trips_as_mcp_writes_it() {
        for block in [
            json!({"type": "text", "text": "hi", "_meta": {"k": 1}}),
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png", "annotations": {"audience": ["user", "assistant"], "lastModified": "2026-01-01T00:00:00Z"}}),
            json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
            json!({"type": "resource_link", "uri": "test://a", "name": "a", "title": "A", "description": "d", "mimeType": "text/plain", "size": 3}),
            json!({"type": "resource", "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "t"}}),
            json!({"type": "resource", "resource": {"uri": "test://b", "blob": "AAAA", "_meta": {"x": true}}}),
        ] {
            let parsed: ContentBlock = serde_json::from_value(block.clone()).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), block);
        }
    }
}
