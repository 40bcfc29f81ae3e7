//! # Asking the client: its user (elicitation) or its model (sampling)
//!
//! During a call, a tool may ask the user of the MCP client that made the
//! call a question ([`elicit`]: a message and a form), or ask the client's
//! model for a completion ([`sample`]). Each is a capability: the plugin
//! declares it (`capabilities! { elicitation: true, sampling: true }`) and
//! the operator grants it (sampling with a budget of requests and tokens
//! per call). Time spent waiting for the answer does not count against the
//! call's deadline.
//!
//! Either fails with a [`HostError`] whose code says why:
//! `capability_not_granted` (not declared, or not granted),
//! `unavailable` (no client can answer: a call made without an MCP
//! client, in a public-audience session, or by a client without the
//! capability), `blocked` (past the sampling budget, or the client's user
//! refused), `invalid_arguments` (a malformed request).
//!
//! ```ignore
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolhost_sdk::client::{self, Elicitation, SampleRequest};
//!
//! /// Where to send the report.
//! #[derive(Deserialize, JsonSchema)]
//! struct Destination {
//!     /// An e-mail address.
//!     email: String,
//! }
//!
//! match client::elicit::<Destination>("Where should the report go?")? {
//!     Elicitation::Accept(d) => send(&d.email),
//!     Elicitation::Decline | Elicitation::Cancel => {}
//! }
//!
//! let answer = client::sample(&SampleRequest::new(200).user("Summarise: ..."))?;
//! let summary = answer.text().unwrap_or_default();
//! ```

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::__private::server::toolhost::plugin::client as wit;
use crate::content::{ContentBlock, Role};
use crate::error::HostError;

/// What the user did with a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// They answered: the form's values.
    Accept(T),
    /// They explicitly said no.
    Decline,
    /// They dismissed the question without choosing.
    Cancel,
}

/// Asks the user `message` with a form made from `T`'s JSON Schema (its
/// fields' doc comments are the form's labels; MCP allows an object of
/// strings, numbers, integers, booleans and enums), waits for the answer,
/// and reads it into `T`.
///
/// # Errors
///
/// See the [module documentation](self); `invalid_arguments` also when
/// the user's answer does not fit `T`.
pub fn elicit<T: DeserializeOwned + JsonSchema>(message: &str) -> Result<Elicitation<T>, HostError> {
    let schema = form_schema::<T>();
    match elicit_with_schema(message, &schema)? {
        Elicitation::Accept(values) => serde_json::from_value(Value::Object(values))
            .map(Elicitation::Accept)
            .map_err(|e| {
                HostError::local(
                    "invalid_arguments",
                    format!("the user's answer does not fit the form: {e}"),
                )
            }),
        Elicitation::Decline => Ok(Elicitation::Decline),
        Elicitation::Cancel => Ok(Elicitation::Cancel),
    }
}

/// Asks the user `message` with the form whose JSON Schema is
/// `requested_schema` (an object of primitive properties, as MCP restricts
/// it: defaults, enums and formats as MCP allows), and waits for the
/// answer: the form's values as a JSON object.
///
/// # Errors
///
/// See the [module documentation](self).
pub fn elicit_with_schema(
    message: &str,
    requested_schema: &Value,
) -> Result<Elicitation<Map<String, Value>>, HostError> {
    let response = wit::elicit(message, &requested_schema.to_string())?;
    Ok(match response.action {
        wit::ElicitAction::Accept => {
            let content = match response.content.as_deref() {
                None => Map::new(),
                Some(text) => match toolhost_json::from_str::<Value>(text) {
                    Ok(Value::Object(map)) => map,
                    _ => {
                        return Err(HostError::local(
                            "invalid_arguments",
                            "the user's answer is not a JSON object".to_string(),
                        ));
                    }
                },
            };
            Elicitation::Accept(content)
        }
        wit::ElicitAction::Decline => Elicitation::Decline,
        wit::ElicitAction::Cancel => Elicitation::Cancel,
    })
}

/// `T`'s schema as an elicitation form: optional fields' `null` type left
/// out (a form field is optional by not being required).
fn form_schema<T: JsonSchema>() -> Value {
    let mut schema = crate::schema::schema_of::<T>();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            if let Some(Value::Array(types)) = property.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    property["type"] = only;
                }
            }
        }
    }
    schema
}

/// A request for a completion from the client's model: a conversation and
/// how to answer it.
///
/// ```
/// use toolhost_sdk::client::SampleRequest;
///
/// let request = SampleRequest::new(100)
///     .system_prompt("You answer in one word.")
///     .user("What colour is the sky?")
///     .temperature(0.2);
/// # let _ = request;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRequest {
    messages: Vec<(Role, ContentBlock)>,
    system_prompt: Option<String>,
    max_tokens: u32,
    temperature: Option<f64>,
    stop_sequences: Vec<String>,
    model_preferences: Option<Value>,
}

impl SampleRequest {
    /// A request whose answer may take at most `max_tokens` tokens (within
    /// the operator's budget for the call), with no message yet.
    pub fn new(max_tokens: u32) -> Self {
        SampleRequest {
            messages: Vec::new(),
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
        }
    }

    /// This request with a message from the user: text, an image or audio.
    pub fn user(self, content: impl Into<ContentBlock>) -> Self {
        self.message(Role::User, content)
    }

    /// This request with a message from the model (an earlier answer).
    pub fn assistant(self, content: impl Into<ContentBlock>) -> Self {
        self.message(Role::Assistant, content)
    }

    /// This request with a message from `role`.
    pub fn message(mut self, role: Role, content: impl Into<ContentBlock>) -> Self {
        self.messages.push((role, content.into()));
        self
    }

    /// This request with a system prompt the client may use.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// This request with a sampling temperature.
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// This request with a sequence that ends the answer.
    pub fn stop_sequence(mut self, stop: impl Into<String>) -> Self {
        self.stop_sequences.push(stop.into());
        self
    }

    /// This request with MCP's `modelPreferences` (`hints`,
    /// `costPriority`, `speedPriority`, `intelligencePriority`).
    pub fn model_preferences(mut self, preferences: Value) -> Self {
        self.model_preferences = Some(preferences);
        self
    }
}

/// The model's answer to a [`SampleRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SampleResponse {
    /// Who answered (the assistant, normally).
    pub role: Role,
    /// The answer.
    pub content: ContentBlock,
    /// The model that answered, as the client names it.
    pub model: String,
    /// Why the answer ended (`endTurn`, `maxTokens`, `stopSequence`, ...).
    pub stop_reason: Option<String>,
}

impl SampleResponse {
    /// The answer's text, when it is text.
    pub fn text(&self) -> Option<&str> {
        self.content.as_text()
    }
}

/// Asks the client's model for a completion of `request`, and waits for
/// it.
///
/// # Errors
///
/// See the [module documentation](self).
pub fn sample(request: &SampleRequest) -> Result<SampleResponse, HostError> {
    let request = wit::SamplingRequest {
        messages: request
            .messages
            .iter()
            .map(|(role, content)| wit::SamplingMessage {
                role: (*role).into(),
                content: content.clone().into(),
            })
            .collect(),
        system_prompt: request.system_prompt.clone(),
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        stop_sequences: request.stop_sequences.clone(),
        model_preferences: request.model_preferences.as_ref().map(Value::to_string),
    };
    let response = wit::sample(&request)?;
    Ok(SampleResponse {
        role: response.role.into(),
        content: response.content.into(),
        model: response.model,
        stop_reason: response.stop_reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Who to greet.
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code, reason = "only the schema is used")]
    struct Form {
        /// Their name.
        name: String,
        /// Their age.
        age: Option<u32>,
    }

    #[test]
    fn a_form_is_the_types_schema_with_optional_fields_not_nullable() {
        let schema = form_schema::<Form>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["name"]["type"], "string");
        assert_eq!(schema["properties"]["age"]["type"], "integer");
        assert_eq!(schema["properties"]["age"]["description"], "Their age.");
        assert_eq!(schema["required"], serde_json::json!(["name"]));
    }
}
