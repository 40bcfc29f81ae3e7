//! # A bridged server's requests, and its questions relayed to the caller
//!
//! Every request the bridge sends a bridged server for a call (a tool, a
//! prompt, a resource) goes through one `Remote`: on the server's current
//! connection, within its `timeout_ms` and the call's deadline, cancelled on
//! the server (`notifications/cancelled`) when the call is cancelled or a
//! round runs out of time.
//!
//! On MCP 2026-07-28 a server asks its client for input by answering with
//! an `InputRequiredResult`: questions keyed by name (an elicitation,
//! a sampling request, a roots listing) and an opaque `requestState`; the
//! client answers them and sends the request again with `inputResponses`
//! and that state. When the bridge is that client, the answers can only
//! come from the client of the call it serves: the server's questions go to
//! the call's [`ClientHandle`] as one round (a session's client is asked by
//! server-initiated requests, a 2026-07-28 client by toolhost's own
//! `InputRequiredResult`, a task's client in its `inputRequests`), and the
//! request is sent again with the answers, for at most [`MAX_ROUNDS`]
//! rounds.
//!
//! Fail-closed, as a plugin's questions are:
//! - only what the entry's `ask` grants (none by default) and the call's
//!   client can answer is declared to the server, in each 2026-07-28
//!   request's `io.modelcontextprotocol/clientCapabilities`; a call with
//!   no client (a public-audience call, a headless one) declares nothing;
//! - a question outside that fails the call with an error naming the
//!   server, the question and why; so does one the caller's client
//!   refuses: MCP has no answer meaning "refused", and a made-up "decline"
//!   would tell the server something the user never said.
//!
//! A server on an earlier revision gets no declaration (those revisions
//! declare capabilities once, at `initialize`, for a connection every
//! caller shares): it cannot ask through the bridge.

use std::future::Future;
use std::time::{Duration, Instant};

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientCapabilities, ClientNotification, ClientRequest,
    ElicitRequestParams, ElicitationCapability, FormElicitationCapability, InputRequest, InputRequiredResult,
    InputResponses, RequestId, RequestMetaObject, RootsCapabilities, SamplingCapability, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, ServiceError};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::client::is_stateless_era;
use super::config::McpServerConfig;
use super::tool::PeerSlot;
use toolhost_core::client::{Answer, AskKind, ClientHandle, ElicitRequest, MAX_QUESTIONS, Question, Request};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::CallContext;

/// The most rounds of questions one bridged request may ask before it
/// fails: a server that asks for ever must not hold a call for ever.
pub const MAX_ROUNDS: usize = 16;

/// What a request sent again carries: the answers to the last round's
/// questions (keyed as the server keyed them) and the server's state.
pub(crate) struct Retry {
    pub(crate) responses: InputResponses,
    pub(crate) state: Option<String>,
}

/// The connection, limits and grant every request to one bridged server
/// goes through.
#[derive(Clone)]
pub(crate) struct Remote {
    pub(crate) server: String,
    timeout: Duration,
    peer: PeerSlot,
    ask: Vec<AskKind>,
    /// Where a server that signs in with OAuth keeps its tokens (and the
    /// bridge its refusals: see [`oauth`](super::oauth)).
    token_file: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Remote {
    /// The server of `config`, reached through `peer`.
    pub(crate) fn new(config: &McpServerConfig, peer: PeerSlot) -> Remote {
        Remote {
            server: config.name.clone(),
            timeout: config.timeout(),
            peer,
            ask: config.ask.clone(),
            token_file: config.token_file(),
        }
    }

    /// `e`, saying to sign in again when the server refused the bridge's
    /// tokens since `since`.
    fn explained(&self, e: Error, since: std::time::SystemTime) -> Error {
        let Some(why) = self
            .token_file
            .as_deref()
            .and_then(|file| super::oauth::refused(&self.server, file, since))
        else {
            return e;
        };
        Error::new(e.code(), format!("{}; {why}", e.message()))
    }

    fn connected(&self) -> Result<Peer<RoleClient>> {
        self.peer.borrow().clone().ok_or_else(|| {
            Error::new(
                ErrorCode::Unavailable,
                format!("MCP server {:?} is not connected", self.server),
            )
        })
    }

    /// How long the next round may take: the server's timeout, or what is
    /// left of the call's deadline if that is less.
    fn round_timeout(&self, ctx: &CallContext) -> Duration {
        match ctx.deadline {
            Some(deadline) => self
                .timeout
                .min(deadline.saturating_duration_since(Instant::now())),
            None => self.timeout,
        }
    }

    /// Runs `request` on the current connection, within the server's
    /// timeout and the context's deadline, ended by its cancellation: for
    /// requests that never ask (completions).
    pub(crate) async fn run<T, F, Fut>(&self, what: &str, ctx: &CallContext, request: F) -> Result<T>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = std::result::Result<T, ServiceError>>,
    {
        let peer = self.connected()?;
        let since = std::time::SystemTime::now();
        self.within(what, ctx, request(peer))
            .await
            .map_err(|e| self.explained(e, since))
    }

    /// `round` within the round's time and the call's cancellation.
    async fn within<T>(
        &self,
        what: &str,
        ctx: &CallContext,
        round: impl Future<Output = std::result::Result<T, ServiceError>>,
    ) -> Result<T> {
        let timeout = self.round_timeout(ctx);
        // Dropping the request future cancels it on the server.
        tokio::select! {
            r = tokio::time::timeout(timeout, round) => match r {
                Ok(r) => r.map_err(|e| self.service_error(what, e)),
                Err(_) => Err(Error::new(ErrorCode::Timeout, format!(
                    "MCP server {:?} did not answer {what} within {} ms; the request was cancelled on the server",
                    self.server, timeout.as_millis()))),
            },
            () = ctx.cancel.cancelled() => Err(Error::new(ErrorCode::Cancelled, "the call was cancelled")),
        }
    }

    /// Sends the request `make` builds (with `None` first, then with each
    /// round's answers) until the server answers it with anything but
    /// questions, relaying its questions to the call's client (see the
    /// module documentation): that answer.
    ///
    /// # Errors
    ///
    /// `unavailable` when the server is not connected or asks what the
    /// call cannot answer (naming what); `timeout` past a round's time or
    /// the call's deadline; `cancelled` with the call; the caller's own
    /// refusal of a question; `tool_failed` past [`MAX_ROUNDS`] rounds or
    /// for an error the server answers.
    pub(crate) async fn send(
        &self,
        what: &str,
        ctx: &CallContext,
        mut make: impl FnMut(Option<Retry>) -> ClientRequest,
    ) -> Result<ServerResult> {
        let peer = self.connected()?;
        let declared = if is_stateless_era(&peer) {
            self.declared(ctx.client.as_ref())
        } else {
            None
        };
        let mut retry = None;
        let since = std::time::SystemTime::now();
        for round in 0..=MAX_ROUNDS {
            let request = make(retry.take());
            let answer = self
                .within(what, ctx, send_once(&peer, request, declared.clone()))
                .await
                .map_err(|e| self.explained(e, since))?;
            let ServerResult::InputRequiredResult(asked) = answer else {
                return Ok(answer);
            };
            if round == MAX_ROUNDS {
                break;
            }
            retry = Some(self.relay(what, ctx, asked).await?);
        }
        Err(Error::new(
            ErrorCode::ToolFailed,
            format!(
                "MCP server {:?} asked for input more than {MAX_ROUNDS} times to answer {what}; the call was given up",
                self.server
            ),
        ))
    }

    /// Whether the server may ask `client` questions of `kind`.
    fn may_ask(&self, client: Option<&ClientHandle>, kind: AskKind) -> bool {
        self.ask.contains(&kind) && client.is_some_and(|c| c.can_answer(kind))
    }

    /// The request `_meta` declaring what the server may ask this call's
    /// client; `None` when it may ask nothing.
    fn declared(&self, client: Option<&ClientHandle>) -> Option<RequestMetaObject> {
        let mut capabilities = ClientCapabilities::default();
        if self.may_ask(client, AskKind::Elicitation) {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        }
        if self.may_ask(client, AskKind::Sampling) {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if self.may_ask(client, AskKind::Roots) {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        if capabilities == ClientCapabilities::default() {
            return None;
        }
        let mut meta = RequestMetaObject::new();
        meta.set_client_capabilities(capabilities);
        Some(meta)
    }

    /// Puts the server's questions to the call's client as one round: the
    /// answers, keyed as the server keyed them, and its state.
    async fn relay(&self, what: &str, ctx: &CallContext, asked: InputRequiredResult) -> Result<Retry> {
        let requests = asked.input_requests.unwrap_or_default();
        let failed = |why: String| {
            Error::new(
                ErrorCode::Unavailable,
                format!(
                    "MCP server {:?} asked for input to answer {what}: {why}",
                    self.server
                ),
            )
        };
        if requests.is_empty() {
            return Err(failed("its InputRequiredResult holds no question".into()));
        }
        if requests.len() > MAX_QUESTIONS {
            return Err(failed(format!(
                "{} questions at once, past the {MAX_QUESTIONS} a round may hold",
                requests.len()
            )));
        }
        let client = ctx.client.as_ref();
        let mut keys = Vec::with_capacity(requests.len());
        let mut questions = Vec::with_capacity(requests.len());
        for (key, request) in requests {
            let request = question_of(request).map_err(|why| failed(format!("{key:?} is {why}")))?;
            let kind = request.kind();
            if !self.ask.contains(&kind) {
                return Err(failed(format!(
                    "{key:?} asks for {kind}, which its [[mcp.servers]] entry does not grant (`ask`)"
                )));
            }
            if !self.may_ask(client, kind) {
                return Err(failed(format!(
                    "{key:?} asks for {kind}, which the client of this call cannot answer"
                )));
            }
            questions.push(Question::new(question_key(&key), request));
            keys.push((key, kind));
        }
        let Some(client) = client else {
            return Err(failed("the call has no client to ask".into()));
        };
        // The round's outer error ends the call (a 2026-07-28 caller is
        // sent the questions and retries; the bridged request is then made
        // again from its first round).
        let answers = client.ask(questions).await?;
        let mut responses = InputResponses::new();
        for ((key, kind), answer) in keys.into_iter().zip(answers) {
            let answer = answer.map_err(|e| {
                Error::new(
                    e.code(),
                    format!(
                        "MCP server {:?} asked the caller's client for {kind} ({key:?}) to answer {what}, and it was not answered: {}",
                        self.server, e.message()
                    ),
                )
            })?;
            responses.insert(key, response_of(answer));
        }
        Ok(Retry {
            responses,
            state: asked.request_state,
        })
    }

    /// What the server answered, read into the core's type for the same
    /// MCP JSON.
    pub(crate) fn read<T: Serialize, U: DeserializeOwned>(&self, what: &str, answer: &T) -> Result<U> {
        serde_json::to_value(answer)
            .and_then(serde_json::from_value)
            .map_err(|e| {
                Error::new(
                    ErrorCode::ToolFailed,
                    format!(
                        "MCP server {:?} answered {what} with what MCP does not allow: {e}",
                        self.server
                    ),
                )
            })
    }

    fn service_error(&self, what: &str, e: ServiceError) -> Error {
        let code = match &e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => ErrorCode::Unavailable,
            ServiceError::McpError(data) if data.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND => {
                ErrorCode::NotFound
            }
            ServiceError::McpError(data) if data.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                ErrorCode::InvalidArguments
            }
            _ => ErrorCode::ToolFailed,
        };
        Error::new(code, format!("MCP server {:?}, {what}: {e}", self.server))
    }
}

/// Sends `request` once with `meta` over the session's own, and waits for
/// its answer. Dropped before the answer comes (a timeout, a cancelled
/// call), it tells the server the request is cancelled.
async fn send_once(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
    meta: Option<RequestMetaObject>,
) -> std::result::Result<ServerResult, ServiceError> {
    let mut options = PeerRequestOptions::no_options();
    options.meta = meta;
    let handle = peer.send_request_with_option(request, options).await?;
    let mut abandoned = Abandoned {
        peer,
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    abandoned.id = None;
    answer
}

/// A request whose answer nobody will wait for any more.
struct Abandoned<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(
            Some(id),
            Some("the call through toolhost's bridge ended".into()),
        ));
        // Best effort: a server gone already needs no telling.
        runtime.spawn(async move {
            let _ = peer
                .send_notification(ClientNotification::CancelledNotification(cancelled))
                .await;
        });
    }
}

/// The key a server's question goes to the caller's client under: its own
/// when it is one toolhost's questions may have, else one made of its hash
/// (the same each time, so a retried call finds its answer again).
fn question_key(key: &str) -> String {
    if toolhost_core::client::valid_key(key) {
        key.to_string()
    } else {
        format!("k{}", &blake3::hash(key.as_bytes()).to_hex()[..32])
    }
}

/// A server's input request as a question for the caller's client, or
/// what it is that cannot be relayed.
fn question_of(request: InputRequest) -> std::result::Result<Request, String> {
    match request {
        InputRequest::Elicitation(elicit) => match elicit.params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Ok(Request::Elicit(ElicitRequest {
                message,
                requested_schema: serde_json::to_value(requested_schema)
                    .map_err(|e| format!("an elicitation whose schema does not serialize: {e}"))?,
            })),
            _ => Err("a URL-mode elicitation, which the bridge does not relay".into()),
        },
        InputRequest::CreateMessage(sample) => serde_json::to_value(&sample.params)
            .and_then(serde_json::from_value)
            .map(Request::Sample)
            .map_err(|e| format!("a sampling request toolhost cannot carry: {e}")),
        InputRequest::ListRoots(_) => Ok(Request::ListRoots),
        _ => Err("a kind of input request the bridge does not know".into()),
    }
}

/// The caller's answer as the server's `inputResponses` entry: an
/// `ElicitResult`, a `CreateMessageResult` or a `ListRootsResult`.
fn response_of(answer: Answer) -> Value {
    let value = match &answer {
        Answer::Elicit(elicit) => serde_json::to_value(elicit),
        Answer::Sample(sample) => serde_json::to_value(sample),
        Answer::Roots(roots) => serde_json::to_value(roots).map(|roots| json!({ "roots": roots })),
        _ => Ok(Value::Null),
    };
    // The core's answer types are plain data: they always serialize.
    value.unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolhost_core::client::{ElicitAction, ElicitResponse, Root};

    #[test]
    fn a_key_toolhost_cannot_use_becomes_a_stable_hash() {
        assert_eq!(question_key("name"), "name");
        let odd = question_key("what is your name?");
        assert!(toolhost_core::client::valid_key(&odd), "{odd}");
        assert_eq!(odd, question_key("what is your name?"));
        assert_ne!(odd, question_key("what is your name!"));
    }

    #[test]
    fn answers_are_the_results_mcp_names() {
        let accepted = response_of(Answer::Elicit(ElicitResponse {
            action: ElicitAction::Accept,
            content: Some(serde_json::from_value(json!({"name": "Ada"})).unwrap()),
        }));
        assert_eq!(accepted, json!({"action": "accept", "content": {"name": "Ada"}}));
        let declined = response_of(Answer::Elicit(ElicitResponse {
            action: ElicitAction::Decline,
            content: None,
        }));
        assert_eq!(declined, json!({"action": "decline"}));
        let roots = response_of(Answer::Roots(vec![Root {
            uri: "file:///w".into(),
            name: None,
        }]));
        assert_eq!(roots, json!({"roots": [{"uri": "file:///w"}]}));
    }

    #[test]
    fn url_elicitations_are_not_relayed() {
        let request: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/login", "elicitationId": "e1"}
        }))
        .unwrap();
        assert!(question_of(request).unwrap_err().contains("URL-mode"));
        let form: InputRequest = serde_json::from_value(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }))
        .unwrap();
        assert!(matches!(question_of(form), Ok(Request::Elicit(e)) if e.message == "Name?"));
    }
}
