//! # Asking the client: its user, its model, its roots
//!
//! During a call, a tool may ask the user of the MCP client that made the
//! call a question ([`elicit`]: a message and a form), ask the client's
//! model for a completion ([`sample`]), or list the client's roots, the
//! directories and files it exposes ([`list_roots`]). Each is a
//! capability: the plugin declares it (`capabilities! { elicitation: true,
//! sampling: true, roots: true }`) and the operator grants it (sampling
//! with a budget of requests and tokens per call). Time spent waiting for
//! the answer does not count against the call's deadline.
//!
//! Several questions can go in one round ([`ask`]): each is named by a key,
//! and answered or refused on its own. [`available`] says what this call's
//! client can be asked, to ask only that.
//!
//! **Ask first.** A client on MCP 2026-07-28 is not asked while the call
//! runs: the call ends where it asks, the client is sent the questions,
//! and when it retries with the answers the call runs again from the
//! start, in a fresh instance, and the same questions are answered at
//! once. So ask before doing work that must not happen twice, and ask the
//! same questions (same keys, same order) on every run.
//!
//! Each fails with a [`HostError`] whose code says why:
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
//!
//! Several at once:
//!
//! ```ignore
//! use toolhost_sdk::client::{self, Question, SampleRequest};
//!
//! let mut answers = client::ask(vec![
//!     Question::elicit::<Destination>("destination", "Where should the report go?"),
//!     Question::sample("summary", &SampleRequest::new(200).user("Summarise: ...")),
//!     Question::list_roots("roots"),
//! ])
//! .into_iter();
//! let destination = answers.next().unwrap()?.into_elicitation::<Destination>()?;
//! let summary = answers.next().unwrap()?.into_sample()?;
//! let roots = answers.next().unwrap()?.into_roots()?;
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
    Answer::Elicit(elicit_with_schema(message, &form_schema::<T>())?).into_elicitation()
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
    elicitation(wit::elicit(message, &requested_schema.to_string())?)
}

/// The user's answer, its content read as a JSON object.
fn elicitation(response: wit::ElicitResponse) -> Result<Elicitation<Map<String, Value>>, HostError> {
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
    Ok(wit::sample(&request.to_wit())?.into())
}

impl SampleRequest {
    fn to_wit(&self) -> wit::SamplingRequest {
        wit::SamplingRequest {
            messages: self
                .messages
                .iter()
                .map(|(role, content)| wit::SamplingMessage {
                    role: (*role).into(),
                    content: content.clone().into(),
                })
                .collect(),
            system_prompt: self.system_prompt.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            stop_sequences: self.stop_sequences.clone(),
            model_preferences: self.model_preferences.as_ref().map(Value::to_string),
        }
    }
}

impl From<wit::SamplingResponse> for SampleResponse {
    fn from(response: wit::SamplingResponse) -> Self {
        SampleResponse {
            role: response.role.into(),
            content: response.content.into(),
            model: response.model,
            stop_reason: response.stop_reason,
        }
    }
}

/// A directory or file the client exposes (MCP's root).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Root {
    /// Its URI, e.g. `file:///home/ada/project`.
    pub uri: String,
    /// A name for people.
    pub name: Option<String>,
}

impl From<wit::Root> for Root {
    fn from(r: wit::Root) -> Self {
        Root {
            uri: r.uri,
            name: r.name,
        }
    }
}

/// Lists the client's roots, and waits for them.
///
/// # Errors
///
/// See the [module documentation](self).
pub fn list_roots() -> Result<Vec<Root>, HostError> {
    Ok(wit::list_roots()?.into_iter().map(Root::from).collect())
}

/// What this call may ask its client: each is true when the plugin
/// declared and was granted the capability, and the client can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Available {
    /// Questions for the user ([`elicit`]).
    pub elicitation: bool,
    /// Completions from the model ([`sample`]).
    pub sampling: bool,
    /// The client's roots ([`list_roots`]).
    pub roots: bool,
}

/// What this call may ask its client (a client on MCP 2026-07-28 refuses a
/// request for something it did not declare it can answer).
pub fn available() -> Available {
    let a = wit::available();
    Available {
        elicitation: a.elicitation,
        sampling: a.sampling,
        roots: a.roots,
    }
}

/// Lets the caller go while this call carries on, for a tool declared in
/// `tasks_deferred` ([`capabilities!`](crate::capabilities)): when the
/// call's MCP client supports tasks, it is answered now with a task, and
/// this call runs on as that task (what it asks from here on waits in the
/// task until the client answers). Ask what the work needs first, then
/// call this, then do the long part. True when the call is now a task;
/// false when it is not and will not be (the tool is not deferred, the
/// client does not support tasks, the call is nested in another), and the
/// call goes on as before: either way, carry on with the work.
pub fn begin_task() -> bool {
    wit::begin_task()
}

/// One question of a round ([`ask`]), named by a key: 1 to 64 characters
/// of `A-Z a-z 0-9 _ - .`, distinct within the round. On MCP 2026-07-28 the
/// client sees it as the key of the question in the `InputRequiredResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    key: String,
    request: Asked,
}

#[derive(Debug, Clone, PartialEq)]
enum Asked {
    Elicit { message: String, schema: Value },
    Sample(SampleRequest),
    ListRoots,
}

impl Question {
    /// A question for the user, with a form made from `T`'s JSON Schema
    /// (as [`elicit`]'s); read the answer with [`Answer::into_elicitation`].
    pub fn elicit<T: JsonSchema>(key: impl Into<String>, message: impl Into<String>) -> Self {
        Question::elicit_with_schema(key, message, form_schema::<T>())
    }

    /// A question for the user, with the form whose JSON Schema is
    /// `requested_schema` (as [`elicit_with_schema`]'s).
    pub fn elicit_with_schema(
        key: impl Into<String>,
        message: impl Into<String>,
        requested_schema: Value,
    ) -> Self {
        Question {
            key: key.into(),
            request: Asked::Elicit {
                message: message.into(),
                schema: requested_schema,
            },
        }
    }

    /// A request for a completion from the client's model.
    pub fn sample(key: impl Into<String>, request: &SampleRequest) -> Self {
        Question {
            key: key.into(),
            request: Asked::Sample(request.clone()),
        }
    }

    /// A request for the client's roots.
    pub fn list_roots(key: impl Into<String>) -> Self {
        Question {
            key: key.into(),
            request: Asked::ListRoots,
        }
    }

    /// Its key.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// The answer to one [`Question`], of its kind.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
#[allow(
    clippy::large_enum_variant,
    reason = "an answer is made once per question and moved to the tool whole; a box would be one more allocation for nothing"
)]
pub enum Answer {
    /// What the user did, with the form's values when they accepted.
    Elicit(Elicitation<Map<String, Value>>),
    /// The model's answer.
    Sample(SampleResponse),
    /// The client's roots.
    Roots(Vec<Root>),
}

impl Answer {
    /// The user's answer, read into `T`.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` when the answer does not fit `T`, or is not an
    /// answer to a question for the user.
    pub fn into_elicitation<T: DeserializeOwned>(self) -> Result<Elicitation<T>, HostError> {
        match self {
            Answer::Elicit(Elicitation::Accept(values)) => serde_json::from_value(Value::Object(values))
                .map(Elicitation::Accept)
                .map_err(|e| {
                    HostError::local(
                        "invalid_arguments",
                        format!("the user's answer does not fit the form: {e}"),
                    )
                }),
            Answer::Elicit(Elicitation::Decline) => Ok(Elicitation::Decline),
            Answer::Elicit(Elicitation::Cancel) => Ok(Elicitation::Cancel),
            other => Err(other.not("a question for the user")),
        }
    }

    /// The model's answer.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` when it is not an answer to a sampling request.
    pub fn into_sample(self) -> Result<SampleResponse, HostError> {
        match self {
            Answer::Sample(answer) => Ok(answer),
            other => Err(other.not("a sampling request")),
        }
    }

    /// The client's roots.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` when it is not an answer to a roots request.
    pub fn into_roots(self) -> Result<Vec<Root>, HostError> {
        match self {
            Answer::Roots(roots) => Ok(roots),
            other => Err(other.not("a roots request")),
        }
    }

    fn not(&self, what: &str) -> HostError {
        let kind = match self {
            Answer::Elicit(_) => "a question for the user",
            Answer::Sample(_) => "a sampling request",
            Answer::Roots(_) => "a roots request",
        };
        HostError::local(
            "invalid_arguments",
            format!("this is the answer to {kind}, not to {what}"),
        )
    }
}

/// Asks every question of `questions` in one round, and waits until all
/// are answered: the answers come in the same order, each an [`Answer`] of
/// its question's kind or that question's own [`HostError`] (see the
/// [module documentation](self); `invalid_arguments` also for a bad or
/// repeated key). At most 16 questions a round.
pub fn ask(questions: Vec<Question>) -> Vec<Result<Answer, HostError>> {
    let questions: Vec<wit::Question> = questions
        .into_iter()
        .map(|q| wit::Question {
            key: q.key,
            request: match q.request {
                Asked::Elicit { message, schema } => wit::Request::Elicit(wit::ElicitRequest {
                    message,
                    requested_schema: schema.to_string(),
                }),
                Asked::Sample(request) => wit::Request::Sample(request.to_wit()),
                Asked::ListRoots => wit::Request::ListRoots,
            },
        })
        .collect();
    wit::ask(&questions)
        .into_iter()
        .map(|answer| match answer? {
            wit::Answer::Elicit(response) => elicitation(response).map(Answer::Elicit),
            wit::Answer::Sample(response) => Ok(Answer::Sample(response.into())),
            wit::Answer::Roots(roots) => Ok(Answer::Roots(roots.into_iter().map(Root::from).collect())),
        })
        .collect()
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
