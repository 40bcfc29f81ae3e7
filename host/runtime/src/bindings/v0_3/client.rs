//! `toolhost:plugin/client`: a call's questions to its client (its user,
//! its model, its roots): 0.3.0's `elicit` and `sample`, 0.3.1's
//! `list-roots`, `ask`, `available` and `begin-task`.
//!
//! Every question takes one path, [`SandboxState::ask_round`]: each is
//! checked on its own (declared and granted, within the sampling budget, of
//! a sane size), the ones that pass are asked of the call's
//! [`ClientHandle`](toolhost_core::client::ClientHandle) in one round with
//! the call's clock stopped, and each answer is turned back into the
//! world's types; a question refused here is never asked. A round the
//! client ends as a whole (an MCP 2026-07-28 client that must be sent the
//! questions and asked again) traps the guest with the host's error as its
//! cause ([`crate::sandbox::classify`] returns it unchanged): the plugin
//! cannot catch it and carry on.
//!
//! 0.3.0's single questions are rounds of one, keyed `elicitation-N` or
//! `sampling-N` by the call's count of questions so far: the same keys on
//! every run of the same call, which is what a retried 2026-07-28 call
//! matches its answers by.

use std::time::Instant;

use toolhost_core::client::{
    Answer as CoreAnswer, AskKind, ElicitAction as CoreAction, ElicitRequest as CoreElicitRequest,
    Question as CoreQuestion, Request as CoreRequest, SampleRequest, SamplingMessage as CoreSamplingMessage,
};
use toolhost_core::error::ErrorCode;

use super::{
    Answer, AvailableQuestions, ElicitAction, ElicitRequest, ElicitResponse, HostError, Question, Request,
    Root, SamplingRequest, SamplingResponse, block_size, host_error, wit_block,
};
use crate::sandbox::SandboxState;

/// The longest question, system prompt or stop sequence a plugin may send a
/// client, in bytes.
const MAX_CLIENT_TEXT: usize = 64 * 1024;

/// A round's answers as the world has them, or the error that ends the
/// call.
type Answers = wasmtime::Result<Vec<Result<Answer, HostError>>>;

impl super::toolhost::plugin::client::Host for SandboxState {
    async fn elicit(
        &mut self,
        message: String,
        requested_schema: String,
    ) -> wasmtime::Result<Result<ElicitResponse, HostError>> {
        let key = self.next_key(AskKind::Elicitation);
        let request = Request::Elicit(ElicitRequest {
            message,
            requested_schema,
        });
        Ok(match self.ask_one(key, request).await? {
            Ok(Answer::Elicit(answer)) => Ok(answer),
            other => Err(unexpected(other)),
        })
    }

    async fn sample(
        &mut self,
        request: SamplingRequest,
    ) -> wasmtime::Result<Result<SamplingResponse, HostError>> {
        let key = self.next_key(AskKind::Sampling);
        Ok(match self.ask_one(key, Request::Sample(request)).await? {
            Ok(Answer::Sample(answer)) => Ok(answer),
            other => Err(unexpected(other)),
        })
    }

    async fn list_roots(&mut self) -> wasmtime::Result<Result<Vec<Root>, HostError>> {
        let key = self.next_key(AskKind::Roots);
        Ok(match self.ask_one(key, Request::ListRoots).await? {
            Ok(Answer::Roots(roots)) => Ok(roots),
            other => Err(unexpected(other)),
        })
    }

    async fn ask(&mut self, questions: Vec<Question>) -> Answers {
        self.ask_round(questions).await
    }

    async fn available(&mut self) -> AvailableQuestions {
        let can = |granted: bool, kind: AskKind| {
            granted && self.ctx.client.as_ref().is_some_and(|c| c.can_answer(kind))
        };
        AvailableQuestions {
            elicitation: can(self.client.elicitation, AskKind::Elicitation),
            sampling: can(self.client.sampling.is_some(), AskKind::Sampling),
            roots: can(self.client.roots, AskKind::Roots),
        }
    }

    /// Only the request's own call may become its task: a nested call's
    /// client is its caller's, whose call it does not own.
    async fn begin_task(&mut self) -> bool {
        match &self.ctx.client {
            Some(client) if self.ctx.depth == 0 => client.clone().begin_task().await,
            _ => false,
        }
    }
}

/// The refusal of an answer of another kind than the question's (or of a
/// round that gave none): the host's own contract broken, never passed on
/// as an answer.
fn unexpected(got: Result<Answer, HostError>) -> HostError {
    match got {
        Err(e) => e,
        Ok(_) => host_error(
            ErrorCode::Unavailable,
            "the client's answer is not of the kind asked",
        ),
    }
}

/// The refusal of a question the plugin may not ask.
fn not_granted(kind: AskKind) -> HostError {
    let (what, declare, grant) = match kind {
        AskKind::Elicitation => (
            "ask the user questions",
            "toolhost_sdk::capabilities! { elicitation: true }, or `elicitation: true` from declare()",
            "elicitation = true",
        ),
        AskKind::Sampling => (
            "ask the client's model for completions",
            "toolhost_sdk::capabilities! { sampling: true }, or `sampling: true` from declare()",
            "sampling = { requests = 1, max_tokens = 1024 }",
        ),
        _ => (
            "list the client's roots",
            "toolhost_sdk::capabilities! { roots: true }, or `toolhost declare --roots`",
            "roots = true",
        ),
    };
    host_error(
        ErrorCode::CapabilityNotGranted,
        format!(
            "this plugin may not {what}: it must declare `client {kind}` ({declare}) and be granted it ({grant} in its [plugins.grants])"
        ),
    )
}

impl SandboxState {
    /// The key of the call's next single question of `kind`.
    fn next_key(&self, kind: AskKind) -> String {
        format!("{kind}-{}", self.questions_asked + 1)
    }

    /// A round of one question.
    async fn ask_one(
        &mut self,
        key: String,
        request: Request,
    ) -> wasmtime::Result<Result<Answer, HostError>> {
        let mut answers = self.ask_round(vec![Question { key, request }]).await?;
        Ok(answers
            .pop()
            .unwrap_or_else(|| Err(host_error(ErrorCode::Unavailable, "the client gave no answer"))))
    }

    /// Asks `questions` in one round: see the module documentation.
    async fn ask_round(&mut self, questions: Vec<Question>) -> Answers {
        self.questions_asked = self
            .questions_asked
            .saturating_add(u32::try_from(questions.len()).unwrap_or(u32::MAX));
        let mut answers: Vec<Option<Result<Answer, HostError>>> = Vec::with_capacity(questions.len());
        let mut asked = Vec::new();
        let mut slots = Vec::new();
        for (i, question) in questions.into_iter().enumerate() {
            match self.check(question) {
                Ok(question) => {
                    asked.push(question);
                    slots.push(i);
                    answers.push(None);
                }
                Err(refusal) => answers.push(Some(Err(refusal))),
            }
        }
        if !asked.is_empty() {
            let Some(client) = self.ctx.client.clone() else {
                // `check` refuses every question of a call with no client.
                return Err(wasmtime::format_err!("a question reached a call with no client"));
            };
            let got = {
                // The person's (and the model's) time is not the call's:
                // its deadline stands still while the round is open (and so
                // do those of the calls around it).
                let _asking = self.waiting().person();
                client.ask(asked).await
            };
            self.extend_deadline();
            let got = got.map_err(wasmtime::Error::new)?;
            for (slot, answer) in slots.into_iter().zip(got) {
                answers[slot] = Some(answer.map_err(HostError::from).and_then(from_core));
            }
        }
        Ok(answers
            .into_iter()
            .map(|a| {
                a.unwrap_or_else(|| {
                    Err(host_error(
                        ErrorCode::Unavailable,
                        "the client gave no answer to this question",
                    ))
                })
            })
            .collect())
    }

    /// `question` as the host's, if the plugin may ask it: declared and
    /// granted, a client to ask, within the size cap and (sampling) the
    /// call's budget, which it then takes from.
    fn check(&mut self, question: Question) -> Result<CoreQuestion, HostError> {
        let Question { key, request } = question;
        if !toolhost_core::client::valid_key(&key) {
            return Err(host_error(
                ErrorCode::InvalidArguments,
                format!(
                    "the question key {key:?} is not 1 to {} characters of A-Z a-z 0-9 _ - .",
                    toolhost_core::client::MAX_KEY
                ),
            ));
        }
        let kind = match &request {
            Request::Elicit(_) => AskKind::Elicitation,
            Request::Sample(_) => AskKind::Sampling,
            Request::ListRoots => AskKind::Roots,
        };
        let granted = match kind {
            AskKind::Elicitation => self.client.elicitation,
            AskKind::Sampling => self.client.sampling.is_some(),
            _ => self.client.roots,
        };
        if !granted {
            return Err(not_granted(kind));
        }
        if self.ctx.client.is_none() {
            return Err(toolhost_core::client::no_client(kind.as_str()).into());
        }
        let request = match request {
            Request::Elicit(r) => CoreRequest::Elicit(elicit_request(r)?),
            Request::Sample(r) => CoreRequest::Sample(self.sample_request(r)?),
            Request::ListRoots => CoreRequest::ListRoots,
        };
        Ok(CoreQuestion { key, request })
    }

    /// `request` as the host's, checked: within the call's sampling budget
    /// (which it takes from) and the size cap, its model preferences JSON.
    fn sample_request(&mut self, request: SamplingRequest) -> Result<SampleRequest, HostError> {
        let invalid = |m: String| host_error(ErrorCode::InvalidArguments, m);
        let Some(grant) = self.client.sampling else {
            return Err(not_granted(AskKind::Sampling));
        };
        if self.samples_made >= grant.requests {
            return Err(host_error(
                ErrorCode::Blocked,
                format!(
                    "this call has made {} sampling request(s), all its grant allows (`requests` in its [plugins.grants] sampling)",
                    grant.requests
                ),
            ));
        }
        let tokens_left = grant.max_tokens.saturating_sub(self.tokens_asked);
        if request.max_tokens > tokens_left {
            return Err(host_error(
                ErrorCode::Blocked,
                format!(
                    "this request asks for up to {} tokens, but the call has {tokens_left} left of its grant's {} (`max_tokens` in its [plugins.grants] sampling); ask for fewer",
                    request.max_tokens, grant.max_tokens
                ),
            ));
        }
        let SamplingRequest {
            messages,
            system_prompt,
            max_tokens,
            temperature,
            stop_sequences,
            model_preferences,
        } = request;
        let size: usize = messages.iter().map(|m| block_size(&m.content)).sum::<usize>()
            + system_prompt.as_ref().map_or(0, String::len)
            + stop_sequences.iter().map(String::len).sum::<usize>()
            + model_preferences.as_ref().map_or(0, String::len);
        let cap = usize::try_from(self.output_bytes).unwrap_or(usize::MAX);
        if size > cap {
            return Err(invalid(format!(
                "the sampling request is {size} bytes, more than the call's {cap} byte output limit"
            )));
        }
        if messages.is_empty() {
            return Err(invalid("a sampling request needs at least one message".into()));
        }
        let model_preferences = match model_preferences {
            None => None,
            Some(text) => match toolhost_json::from_str::<serde_json::Value>(&text) {
                Ok(value @ serde_json::Value::Object(_)) => Some(value),
                _ => return Err(invalid("the model preferences must be a JSON object".into())),
            },
        };
        self.samples_made += 1;
        self.tokens_asked = self.tokens_asked.saturating_add(max_tokens);
        Ok(SampleRequest {
            messages: messages
                .into_iter()
                .map(|m| CoreSamplingMessage {
                    role: m.role.into(),
                    content: m.content.into(),
                })
                .collect(),
            system_prompt,
            max_tokens,
            temperature,
            stop_sequences,
            model_preferences,
        })
    }

    /// After a wait for a person: the deadline nested calls get moves out
    /// by the time the wait took.
    fn extend_deadline(&mut self) {
        if let Some(clock) = &self.clock {
            self.deadline = Instant::now() + clock.remaining();
        }
    }
}

/// A question for the user as the host's, checked: within the size cap,
/// its form a JSON object.
fn elicit_request(request: ElicitRequest) -> Result<CoreElicitRequest, HostError> {
    let ElicitRequest {
        message,
        requested_schema,
    } = request;
    if message.len() > MAX_CLIENT_TEXT || requested_schema.len() > MAX_CLIENT_TEXT {
        return Err(host_error(
            ErrorCode::InvalidArguments,
            format!("a question and its form may be at most {MAX_CLIENT_TEXT} bytes each"),
        ));
    }
    match toolhost_json::from_str::<serde_json::Value>(&requested_schema) {
        Ok(schema @ serde_json::Value::Object(_)) => Ok(CoreElicitRequest {
            message,
            requested_schema: schema,
        }),
        _ => Err(host_error(
            ErrorCode::InvalidArguments,
            "the requested schema must be a JSON Schema object (an object of primitive properties)",
        )),
    }
}

/// The client's answer as the world's.
fn from_core(answer: CoreAnswer) -> Result<Answer, HostError> {
    Ok(match answer {
        CoreAnswer::Elicit(a) => Answer::Elicit(ElicitResponse {
            action: match a.action {
                CoreAction::Accept => ElicitAction::Accept,
                CoreAction::Decline => ElicitAction::Decline,
                CoreAction::Cancel => ElicitAction::Cancel,
            },
            content: a.content.map(|map| serde_json::Value::Object(map).to_string()),
        }),
        CoreAnswer::Sample(a) => {
            let content = wit_block(a.content).map_err(|why| {
                host_error(
                    ErrorCode::Unavailable,
                    format!("the client's answer cannot be passed on: {why}"),
                )
            })?;
            Answer::Sample(SamplingResponse {
                role: a.role.into(),
                content,
                model: a.model,
                stop_reason: a.stop_reason,
            })
        }
        CoreAnswer::Roots(roots) => Answer::Roots(
            roots
                .into_iter()
                .map(|r| Root {
                    uri: r.uri,
                    name: r.name,
                })
                .collect(),
        ),
        // A kind a later core adds: not one this world can carry.
        _ => {
            return Err(host_error(
                ErrorCode::Unavailable,
                "the client's answer is of a kind this world cannot carry",
            ));
        }
    })
}
