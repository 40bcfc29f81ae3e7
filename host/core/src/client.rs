//! # Asking the client: elicitation, sampling and roots
//!
//! During a call, a tool may need something only the caller's client has:
//! an answer from its user (**elicitation**: a message and a form, as MCP's
//! `elicitation/create`), a completion from its model (**sampling**:
//! messages in, one message out, as MCP's `sampling/createMessage`), or the
//! client's **roots** (the directories and files it exposes, as MCP's
//! `roots/list`). The client's side is a [`ClientRequests`]; the MCP server
//! provides one for each request whose client can be asked, and dispatch
//! hands it to the call in
//! [`CallContext::client`](crate::registry::CallContext::client).
//!
//! Questions go in **rounds**: [`ClientRequests::ask`] takes several
//! [`Question`]s at once, each named by a key, and answers each one or
//! refuses it on its own. A client on a session (MCP before 2026-07-28)
//! asks them as server-initiated requests; on MCP 2026-07-28 one round is
//! one `InputRequiredResult`, whose `inputRequests` are keyed by the
//! questions' keys.
//!
//! Fail-closed: dispatch gives no client to a public-audience call, a call
//! with no client (headless, a script's nested call when the script's
//! caller has none) has none, and a question a client cannot answer
//! ([`ClientRequests::can_answer`]) is refused as `unavailable`, naming
//! why. Whether a plugin may ask at all is its grant's business (the
//! runtime checks that before it gets here).
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::client::{AskKind, ElicitAction, ElicitResponse, Question, Request};
//!
//! let answer: ElicitResponse = serde_json::from_value(json!({
//!     "action": "accept", "content": {"response": "yes"}
//! })).unwrap();
//! assert_eq!(answer.action, ElicitAction::Accept);
//! let roots = Question::new("client_roots", Request::ListRoots);
//! assert_eq!(roots.request.kind(), AskKind::Roots);
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

/// A directory or file the client exposes (MCP's `Root`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file://...`).
    pub uri: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The kinds of question a client may be asked, named as the MCP client
/// capability that answers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AskKind {
    /// A question for the user (`elicitation`).
    Elicitation,
    /// A completion from the model (`sampling`).
    Sampling,
    /// The client's roots (`roots`).
    Roots,
}

impl AskKind {
    /// `elicitation`, `sampling` or `roots`: the name of the MCP client
    /// capability (and of the plugin capability) it needs.
    pub fn as_str(self) -> &'static str {
        match self {
            AskKind::Elicitation => "elicitation",
            AskKind::Sampling => "sampling",
            AskKind::Roots => "roots",
        }
    }
}

impl fmt::Display for AskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one question asks.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Request {
    /// A question for the user.
    Elicit(ElicitRequest),
    /// A completion from the model.
    Sample(SampleRequest),
    /// The client's roots.
    ListRoots,
}

impl Request {
    /// The kind of question.
    pub fn kind(&self) -> AskKind {
        match self {
            Request::Elicit(_) => AskKind::Elicitation,
            Request::Sample(_) => AskKind::Sampling,
            Request::ListRoots => AskKind::Roots,
        }
    }
}

/// One question of a round, named by a key.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// Its name within the call: the key of its `inputRequests` entry on
    /// MCP 2026-07-28 (unused by clients on a session). [`ClientHandle::ask`]
    /// refuses a key that is not 1 to [`MAX_KEY`] characters of
    /// `A-Z a-z 0-9 _ - .`, or that repeats one of the same round.
    pub key: String,
    /// What it asks.
    pub request: Request,
}

impl Question {
    /// The question `request`, named `key`.
    pub fn new(key: impl Into<String>, request: Request) -> Self {
        Question {
            key: key.into(),
            request,
        }
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
    /// What the user did with a [`Request::Elicit`].
    Elicit(ElicitResponse),
    /// The model's answer to a [`Request::Sample`].
    Sample(SampleResponse),
    /// The client's roots, for [`Request::ListRoots`].
    Roots(Vec<Root>),
}

impl Answer {
    /// The kind of question it answers.
    pub fn kind(&self) -> AskKind {
        match self {
            Answer::Elicit(_) => AskKind::Elicitation,
            Answer::Sample(_) => AskKind::Sampling,
            Answer::Roots(_) => AskKind::Roots,
        }
    }
}

/// The longest key a [`Question`] may have, in bytes.
pub const MAX_KEY: usize = 64;

/// The most questions one round may hold.
pub const MAX_QUESTIONS: usize = 16;

/// What a round of questions gives: an answer or a refusal for each
/// question, in order; or, as a whole, the reason the call cannot go on.
pub type Round = Result<Vec<Result<Answer>>>;

/// The client side of a call: what its user, its model and its roots can be
/// asked. See the module documentation.
pub trait ClientRequests: Send + Sync + 'static {
    /// Whether the client can answer questions of `kind` (it declared the
    /// capability, and can still be reached).
    fn can_answer(&self, kind: AskKind) -> bool;

    /// Asks every question of `questions` (at least one, keys valid and
    /// distinct: [`ClientHandle::ask`] makes sure) in one round, and waits
    /// for the answers: one per question, in the same order, each an
    /// [`Answer`] of the question's kind or that question's refusal. The
    /// questions may be asked concurrently.
    ///
    /// # Errors
    ///
    /// Per question: `unavailable` when the client cannot answer its kind
    /// ([`ClientRequests::can_answer`]) or went away; `invalid_arguments`
    /// when the client refused it as malformed; `blocked` when the client's
    /// user refused a sampling request.
    ///
    /// As a whole (the outer error): the call cannot go on past this round
    /// and ends with this error, which a plugin cannot catch. An MCP
    /// 2026-07-28 client that must be sent the questions in an
    /// `InputRequiredResult` and asked again ends the call this way.
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round>;

    /// Answers the request now with a task and lets the call run on as it
    /// (MCP's tasks extension; WIT `client.begin-task`): true when the call
    /// is now a task, whose later questions wait in it; false when this
    /// client cannot make one of this call (the default: the tool's task is
    /// not deferred, the client does not support tasks, the call already
    /// is one), and nothing changed.
    fn begin_task(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
}

/// A shared [`ClientRequests`], as carried in a call's context.
#[derive(Clone)]
pub struct ClientHandle(pub Arc<dyn ClientRequests>);

impl fmt::Debug for ClientHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientHandle")
            .field("elicit", &self.0.can_answer(AskKind::Elicitation))
            .field("sample", &self.0.can_answer(AskKind::Sampling))
            .field("roots", &self.0.can_answer(AskKind::Roots))
            .finish()
    }
}

impl ClientHandle {
    /// Whether the client can answer questions of `kind`.
    pub fn can_answer(&self, kind: AskKind) -> bool {
        self.0.can_answer(kind)
    }

    /// Makes the call a task (see [`ClientRequests::begin_task`]).
    pub async fn begin_task(&self) -> bool {
        self.0.begin_task().await
    }

    /// Asks `questions` in one round (see [`ClientRequests::ask`]). A
    /// question with an invalid or repeated key, or past [`MAX_QUESTIONS`],
    /// is refused as `invalid_arguments` without being asked; the others
    /// are asked. An answer of the wrong kind, or a missing one, is
    /// refused as `unavailable` (a broken client, never passed on).
    ///
    /// # Errors
    ///
    /// As a whole: the round's own outer error ([`ClientRequests::ask`]).
    pub async fn ask(&self, questions: Vec<Question>) -> Round {
        let mut answers: Vec<Option<Result<Answer>>> = Vec::with_capacity(questions.len());
        let mut asked = Vec::new();
        let mut kinds = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, question) in questions.into_iter().enumerate() {
            let refusal = if i >= MAX_QUESTIONS {
                Some(format!("one round may hold at most {MAX_QUESTIONS} questions"))
            } else if !valid_key(&question.key) {
                Some(format!(
                    "the question key {:?} is not 1 to {MAX_KEY} characters of A-Z a-z 0-9 _ - .",
                    question.key
                ))
            } else if !seen.insert(question.key.clone()) {
                Some(format!(
                    "the key {:?} names two questions of the round",
                    question.key
                ))
            } else {
                None
            };
            match refusal {
                Some(why) => answers.push(Some(Err(Error::new(ErrorCode::InvalidArguments, why)))),
                None => {
                    kinds.push((i, question.request.kind()));
                    asked.push(question);
                    answers.push(None);
                }
            }
        }
        if !asked.is_empty() {
            let mut got = self.0.ask(asked).await?.into_iter();
            for (i, kind) in kinds {
                answers[i] = Some(match got.next() {
                    Some(Ok(answer)) if answer.kind() == kind => Ok(answer),
                    Some(Ok(answer)) => Err(Error::new(
                        ErrorCode::Unavailable,
                        format!("the client answered a {kind} question with {}", answer.kind()),
                    )),
                    Some(Err(e)) => Err(e),
                    None => Err(Error::new(
                        ErrorCode::Unavailable,
                        format!("the client gave no answer to a {kind} question"),
                    )),
                });
            }
        }
        Ok(answers.into_iter().flatten().collect())
    }

    /// Asks the user one question, keyed `elicitation`, or says why that
    /// is not possible (the round's outer error and the question's refusal
    /// alike).
    ///
    /// # Errors
    ///
    /// As [`ClientRequests::ask`].
    pub async fn elicit(&self, request: ElicitRequest) -> Result<ElicitResponse> {
        match self.ask_one("elicitation", Request::Elicit(request)).await? {
            Answer::Elicit(answer) => Ok(answer),
            other => Err(wrong_kind(AskKind::Elicitation, &other)),
        }
    }

    /// Asks the model once, keyed `sampling`, or says why that is not
    /// possible.
    ///
    /// # Errors
    ///
    /// As [`ClientRequests::ask`].
    pub async fn sample(&self, request: SampleRequest) -> Result<SampleResponse> {
        match self.ask_one("sampling", Request::Sample(request)).await? {
            Answer::Sample(answer) => Ok(answer),
            other => Err(wrong_kind(AskKind::Sampling, &other)),
        }
    }

    /// Lists the client's roots, keyed `roots`, or says why that is not
    /// possible.
    ///
    /// # Errors
    ///
    /// As [`ClientRequests::ask`].
    pub async fn list_roots(&self) -> Result<Vec<Root>> {
        match self.ask_one("roots", Request::ListRoots).await? {
            Answer::Roots(roots) => Ok(roots),
            other => Err(wrong_kind(AskKind::Roots, &other)),
        }
    }

    async fn ask_one(&self, key: &str, request: Request) -> Result<Answer> {
        let kind = request.kind();
        self.ask(vec![Question::new(key, request)])
            .await?
            .pop()
            .unwrap_or_else(|| {
                Err(Error::new(
                    ErrorCode::Unavailable,
                    format!("the client gave no answer to a {kind} question"),
                ))
            })
    }
}

/// Whether `key` may name a question: 1 to [`MAX_KEY`] bytes of
/// `A-Z a-z 0-9 _ - .`.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn wrong_kind(kind: AskKind, answer: &Answer) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("the client answered a {kind} question with {}", answer.kind()),
    )
}

/// The refusal of a question of `kind` by a client that did not declare
/// the capability to answer it (for [`ClientRequests`] implementations).
pub fn not_declared(kind: AskKind) -> Error {
    no_capability(kind.as_str())
}

fn no_capability(what: &str) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("the client of this call did not declare the {what} capability, so it cannot be asked"),
    )
}

/// Why a call with no client (headless, or a public-audience session) cannot
/// ask one for `what` (`elicitation`, `sampling`, `roots`).
pub fn no_client(what: &str) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!(
            "this call has no client to ask for {what}: it was not made by an MCP client that declared the capability (or it was made in a public-audience session, which may not ask)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every question with roots, whatever it asked: a broken
    /// client, to see the handle refuse what does not fit.
    struct RootsForAll;

    impl ClientRequests for RootsForAll {
        fn can_answer(&self, _: AskKind) -> bool {
            true
        }

        fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
            let n = questions.len();
            Box::pin(async move { Ok((0..n).map(|_| Ok(Answer::Roots(Vec::new()))).collect()) })
        }
    }

    fn question(key: &str) -> Question {
        Question::new(key, Request::ListRoots)
    }

    #[tokio::test]
    async fn each_question_is_answered_or_refused_on_its_own() {
        let client = ClientHandle(Arc::new(RootsForAll));
        let elicit = Question::new(
            "name",
            Request::Elicit(ElicitRequest {
                message: "Name?".into(),
                requested_schema: serde_json::json!({"type": "object"}),
            }),
        );
        let answers = client
            .ask(vec![
                question("a"),
                question("bad key"),
                question("a"),
                elicit,
                question(&"k".repeat(MAX_KEY + 1)),
            ])
            .await
            .unwrap();
        assert_eq!(answers.len(), 5);
        assert_eq!(answers[0].as_ref().unwrap(), &Answer::Roots(Vec::new()));
        for refused in [1, 2, 4] {
            assert_eq!(
                answers[refused].as_ref().unwrap_err().code(),
                ErrorCode::InvalidArguments,
                "{refused}"
            );
        }
        // The client answered the question for the user with roots.
        let wrong = answers[3].as_ref().unwrap_err();
        assert_eq!(wrong.code(), ErrorCode::Unavailable);
        assert!(
            wrong.message().contains("elicitation question with roots"),
            "{wrong}"
        );
        assert!(client.list_roots().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_round_holds_at_most_max_questions() {
        let client = ClientHandle(Arc::new(RootsForAll));
        let many = (0..MAX_QUESTIONS + 1)
            .map(|i| question(&format!("q{i}")))
            .collect();
        let answers = client.ask(many).await.unwrap();
        assert!(answers[..MAX_QUESTIONS].iter().all(Result::is_ok));
        assert_eq!(
            answers[MAX_QUESTIONS].as_ref().unwrap_err().code(),
            ErrorCode::InvalidArguments
        );
    }
}
