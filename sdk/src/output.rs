//! What a tool returns: any `Serialize` value, an [`Output`] (structured
//! JSON and content blocks: text, images, audio, resources), or a
//! [`Structured`] value whose type is the tool's output schema.

use std::marker::PhantomData;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::__private::WitToolOutput;
use crate::content::{ContentBlock, ResourceContents, ResourceLink};
use crate::error::ToolError;

/// A tool's result: structured JSON for programs, content blocks for the
/// client and its model, or both.
///
/// The structured JSON is what calling tools and scripts receive, and what
/// MCP clients get as `structuredContent`; the blocks are what the client
/// shows and the model reads (MCP `content`), in order. A result with JSON
/// and no blocks is shown as its JSON text.
///
/// ```
/// use toolhost_sdk::{ContentBlock, Output, ResourceContents, Role};
///
/// let rows = vec![("Ada", 36), ("Alan", 41)];
/// // JSON for programs, a sentence for the model.
/// let table = Output::new(serde_json::json!({ "rows": rows }))
///     .text(format!("{} people; the eldest is Alan (41)", rows.len()));
///
/// // Content alone: an image, a sound and an embedded resource.
/// let png: Vec<u8> = std::fs::read("chart.png").unwrap_or_default();
/// let media = Output::default()
///     .text("The chart, a chime, and the data behind them:")
///     .image(png, "image/png")
///     .audio(vec![0u8; 16], "audio/wav")
///     .resource(ResourceContents::text("data://chart.csv", "x,y\n1,2\n").mime_type("text/csv"))
///     .block(ContentBlock::text("for the user only").audience([Role::User]));
/// # let _ = (table, media);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Output {
    structured: Option<Result<String, String>>,
    blocks: Vec<ContentBlock>,
}

impl Output {
    /// A result whose structured JSON is `value`. MCP wants a JSON object
    /// there: a value that is not one (a number, a list, a string) goes as
    /// `{"result": value}`. A value that cannot be serialized (a map with
    /// non-string keys, say) makes the call fail with a message saying so.
    pub fn new(value: impl Serialize) -> Self {
        let json = toolhost_json::to_string(&value)
            .map_err(|e| e.to_string())
            .map(|json| {
                if json.starts_with('{') {
                    json
                } else {
                    format!("{{\"result\":{json}}}")
                }
            });
        Output {
            structured: Some(json),
            blocks: Vec::new(),
        }
    }

    /// A result of `blocks` alone, without structured JSON.
    pub fn blocks(blocks: impl IntoIterator<Item = ContentBlock>) -> Self {
        Output {
            structured: None,
            blocks: blocks.into_iter().collect(),
        }
    }

    /// This result with a text block (a summary, a rendered table, a
    /// sentence for the model) after its other blocks.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.block(ContentBlock::text(text))
    }

    /// This result with an image (its bytes and MIME type, e.g. `image/png`)
    /// after its other blocks.
    pub fn image(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.block(ContentBlock::image(data, mime_type))
    }

    /// This result with a sound (its bytes and MIME type, e.g. `audio/wav`)
    /// after its other blocks.
    pub fn audio(self, data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Self {
        self.block(ContentBlock::audio(data, mime_type))
    }

    /// This result with a link to a resource after its other blocks.
    pub fn resource_link(self, link: ResourceLink) -> Self {
        self.block(ContentBlock::resource_link(link))
    }

    /// This result with a resource embedded whole after its other blocks.
    pub fn resource(self, contents: ResourceContents) -> Self {
        self.block(ContentBlock::resource(contents))
    }

    /// This result with `block` (any kind, with its annotations) after its
    /// other blocks.
    pub fn block(mut self, block: ContentBlock) -> Self {
        self.blocks.push(block);
        self
    }

    fn into_wit(self) -> Result<WitToolOutput, ToolError> {
        let structured = self
            .structured
            .transpose()
            .map_err(|e| ToolError::failed(format!("the result could not be serialized: {e}")))?;
        Ok(WitToolOutput {
            structured,
            content: self.blocks.into_iter().map(Into::into).collect(),
        })
    }
}

/// A structured result whose type states the tool's output schema: the
/// tool's `outputSchema` is `T`'s JSON Schema (from its doc comments, as for
/// arguments), and the host checks every result against it. `T` must
/// serialize as a JSON object (a struct).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Serialize;
/// use toolhost_sdk::{Structured, ToolError};
///
/// /// How many words a text has.
/// #[derive(Serialize, JsonSchema)]
/// struct Count {
///     /// The number of words.
///     words: usize,
/// }
///
/// fn count(text: &str) -> Result<Structured<Count>, ToolError> {
///     let words = text.split_whitespace().count();
///     Ok(Structured::new(Count { words }).text(format!("{words} words")))
/// }
/// # let _ = count("a b");
/// ```
#[derive(Debug, Clone)]
pub struct Structured<T> {
    output: Output,
    _type: PhantomData<fn() -> T>,
}

impl<T: Serialize + JsonSchema> Structured<T> {
    /// The structured result `value`.
    pub fn new(value: T) -> Self {
        let json = toolhost_json::to_string(&value).map_err(|e| e.to_string());
        Structured {
            output: Output {
                structured: Some(json),
                blocks: Vec::new(),
            },
            _type: PhantomData,
        }
    }

    /// This result with a text block for the model after its other blocks.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.block(ContentBlock::text(text))
    }

    /// This result with `block` after its other blocks.
    pub fn block(mut self, block: ContentBlock) -> Self {
        self.output = self.output.block(block);
        self
    }
}

/// What a tool function may return on success: any `Serialize` value, an
/// [`Output`], a [`Structured`] value or a [`ContentBlock`]. Implemented for those; not meant to be implemented elsewhere.
///
/// A `Serialize` value that is a JSON object is the structured result; a
/// string is a text block; any other value (a number, a list) is the
/// structured result `{"result": value}`, with its JSON as text for the
/// model (as MCP servers commonly give such values).
pub trait IntoOutput {
    /// The result as the host receives it.
    #[doc(hidden)]
    fn into_output(self) -> Result<WitToolOutput, ToolError>;

    /// The tool's output schema (JSON text), for a result type that states
    /// one.
    #[doc(hidden)]
    fn output_schema() -> Option<String> {
        None
    }
}

impl IntoOutput for Output {
    fn into_output(self) -> Result<WitToolOutput, ToolError> {
        self.into_wit()
    }
}

impl<T: Serialize + JsonSchema> IntoOutput for Structured<T> {
    fn into_output(self) -> Result<WitToolOutput, ToolError> {
        self.output.into_wit()
    }

    fn output_schema() -> Option<String> {
        Some(crate::schema::schema_of::<T>().to_string())
    }
}

impl IntoOutput for ContentBlock {
    fn into_output(self) -> Result<WitToolOutput, ToolError> {
        Output::blocks([self]).into_wit()
    }
}

impl<T: Serialize> IntoOutput for T {
    fn into_output(self) -> Result<WitToolOutput, ToolError> {
        let json = toolhost_json::to_string(&self)
            .map_err(|e| ToolError::failed(format!("the result could not be serialized: {e}")))?;
        if json.starts_with('{') {
            return Ok(WitToolOutput {
                structured: Some(json),
                content: Vec::new(),
            });
        }
        if json.starts_with('"')
            && let Ok(Value::String(text)) = toolhost_json::from_str::<Value>(&json)
        {
            return Output::blocks([ContentBlock::text(text)]).into_wit();
        }
        // MCP wants an object as structured content: the value goes as
        // `{"result": value}`, and as its JSON text for the model (MCP's
        // advice for structured results).
        Ok(WitToolOutput {
            structured: Some(format!("{{\"result\":{json}}}")),
            content: vec![ContentBlock::text(json).into()],
        })
    }
}
