//! # Asking the client: elicitation and sampling
//!
//! During a call, a tool may need something only the caller's client has:
//! an answer from its user (**elicitation**: a message and a form, as MCP's
//! `elicitation/create`) or a completion from its model (**sampling**:
//! messages in, one message out, as MCP's `sampling/createMessage`). The
//! client's side is a [`ClientRequests`]; the MCP server provides one for a
//! session whose client declared the capability, and dispatch hands it to
//! the call in [`CallContext::client`](crate::registry::CallContext::client).
//!
//! Fail-closed: dispatch gives no client to a public-audience call, a call
//! with no client (headless, a script's nested call when the script's
//! caller has none) has none, and a [`ClientRequests`] that cannot do one of
//! the two says so ([`ClientRequests::can_elicit`],
//! [`ClientRequests::can_sample`]); asking then is an `unavailable` error
//! naming why. Whether a plugin may ask at all is its grant's business (the
//! runtime checks that before it gets here).
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::client::{ElicitAction, ElicitResponse};
//!
//! let answer: ElicitResponse = serde_json::from_value(json!({
//!     "action": "accept", "content": {"response": "yes"}
//! })).unwrap();
//! assert_eq!(answer.action, ElicitAction::Accept);
//! ```

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::{ContentBlock, Role};
use crate::error::{Error, ErrorCode, Result};
use crate::registry::BoxFuture;

/// A question for the client's user: a message and the form of the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequest {
    /// What to ask, for a person.
    pub message: String,
    /// The JSON Schema of the answer: an object of primitive properties
    /// (string, number, integer, boolean, enums), as MCP restricts it.
    pub requested_schema: Value,
}

/// What the user did with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitAction {
    /// Answered: the response has the content.
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed the question without choosing.
    Cancel,
}

impl ElicitAction {
    /// `accept`, `decline` or `cancel`.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// The user's answer to an [`ElicitRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResponse {
    /// What they did.
    pub action: ElicitAction,
    /// The form's values, when they accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

/// One message of a sampling conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: text, an image or audio.
    pub content: ContentBlock,
}

/// A request for a completion from the client's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleRequest {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens the answer may take.
    pub max_tokens: u32,
    /// The sampling temperature, if the tool has a preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that end the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
    /// MCP's `modelPreferences` (hints, cost, speed, intelligence), as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
}

/// The client model's answer to a [`SampleRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleResponse {
    /// Who answered (the assistant, normally).
    pub role: Role,
    /// The answer.
    pub content: ContentBlock,
    /// The model that answered, as the client names it.
    pub model: String,
    /// Why the answer ended (`endTurn`, `maxTokens`, `stopSequence`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// The client side of a call: what its user and its model can be asked.
/// See the module documentation.
pub trait ClientRequests: Send + Sync + 'static {
    /// Whether the client can answer [`ClientRequests::elicit`].
    fn can_elicit(&self) -> bool;

    /// Whether the client can answer [`ClientRequests::sample`].
    fn can_sample(&self) -> bool;

    /// Asks the client's user `request`, and waits for the answer.
    ///
    /// # Errors
    ///
    /// `unavailable` when the client cannot be asked (see
    /// [`ClientRequests::can_elicit`]) or went away; `invalid_arguments`
    /// when the client refused the request as malformed.
    fn elicit(&self, request: ElicitRequest) -> BoxFuture<'_, Result<ElicitResponse>>;

    /// Asks the client's model `request`, and waits for the answer.
    ///
    /// # Errors
    ///
    /// As [`ClientRequests::elicit`], for sampling; `blocked` when the
    /// client's user refused the request.
    fn sample(&self, request: SampleRequest) -> BoxFuture<'_, Result<SampleResponse>>;

    /// What asking for `what` (`elicitation`, `sampling`) gives when the
    /// client did not declare it: by default at once an `unavailable`
    /// error the tool sees. A client for which asking anyway is a protocol
    /// error (an MCP 2026-07-28 request: `-32021`) ends the call instead,
    /// and its future never resolves.
    fn undeclared(&self, what: &'static str) -> BoxFuture<'_, Error> {
        Box::pin(async move { no_capability(what) })
    }
}

/// A shared [`ClientRequests`], as carried in a call's context.
#[derive(Clone)]
pub struct ClientHandle(pub Arc<dyn ClientRequests>);

impl fmt::Debug for ClientHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientHandle")
            .field("elicit", &self.0.can_elicit())
            .field("sample", &self.0.can_sample())
            .finish()
    }
}

impl ClientHandle {
    /// Asks the user, or says why that is not possible.
    ///
    /// # Errors
    ///
    /// As [`ClientRequests::elicit`].
    pub async fn elicit(&self, request: ElicitRequest) -> Result<ElicitResponse> {
        if !self.0.can_elicit() {
            return Err(self.0.undeclared("elicitation").await);
        }
        self.0.elicit(request).await
    }

    /// Asks the model, or says why that is not possible.
    ///
    /// # Errors
    ///
    /// As [`ClientRequests::sample`].
    pub async fn sample(&self, request: SampleRequest) -> Result<SampleResponse> {
        if !self.0.can_sample() {
            return Err(self.0.undeclared("sampling").await);
        }
        self.0.sample(request).await
    }
}

fn no_capability(what: &str) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("the client of this call did not declare the {what} capability, so it cannot be asked"),
    )
}

/// Why a call with no client (headless, or a public-audience session) cannot
/// ask one for `what` (`elicitation`, `sampling`).
pub fn no_client(what: &str) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!(
            "this call has no client to ask for {what}: it was not made by an MCP client that declared the capability (or it was made in a public-audience session, which may not ask)"
        ),
    )
}
