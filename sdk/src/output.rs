//! What a tool returns: any `Serialize` value, or an [`Output`] that adds
//! the text a model should read beside the structured JSON.

use serde::Serialize;

use crate::__private::WitToolOutput;
use crate::error::ToolError;

/// A tool's result with text for the model beside its structured JSON.
///
/// The JSON is what calling tools and scripts receive, and what MCP clients
/// get as `structuredContent`; the text is what the model reads. Return a
/// plain `Serialize` value when the JSON is all there is to say (a string
/// result reads as its plain text).
///
/// ```
/// use toolhost_sdk::Output;
///
/// let rows = vec![("Ada", 36), ("Alan", 41)];
/// let out = Output::new(&rows).text(format!("{} people; the eldest is Alan (41)", rows.len()));
/// # let _ = out;
/// ```
#[derive(Debug, Clone)]
pub struct Output {
    json: Result<String, String>,
    text: Option<String>,
}

impl Output {
    /// The structured result `value`, serialized as JSON. A value that
    /// cannot be serialized (a map with non-string keys, say) makes the call
    /// fail with a message saying so.
    pub fn new(value: impl Serialize) -> Self {
        Output {
            json: toolhost_json::to_string(&value).map_err(|e| e.to_string()),
            text: None,
        }
    }

    /// This result with `text` for the model (a summary, a rendered table,
    /// a sentence).
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }
}

/// What a tool function may return on success: any `Serialize` value, or
/// an [`Output`]. Implemented for both; not meant to be implemented
/// elsewhere.
pub trait IntoOutput {
    /// The result as the host receives it.
    #[doc(hidden)]
    fn into_output(self) -> Result<WitToolOutput, ToolError>;
}

impl IntoOutput for Output {
    fn into_output(self) -> Result<WitToolOutput, ToolError> {
        let json = self
            .json
            .map_err(|e| ToolError::failed(format!("the result could not be serialized: {e}")))?;
        Ok(WitToolOutput {
            json,
            text: self.text,
        })
    }
}

impl<T: Serialize> IntoOutput for T {
    fn into_output(self) -> Result<WitToolOutput, ToolError> {
        Output::new(self).into_output()
    }
}
