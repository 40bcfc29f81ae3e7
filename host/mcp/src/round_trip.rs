//! # Asking a 2026-07-28 client: multi-round-trip results
//!
//! MCP 2026-07-28 has no server-initiated requests. A request that needs
//! the client's user (elicitation, an approval) or model (sampling) ends
//! with an `InputRequiredResult`: the questions as `inputRequests`, and a
//! sealed `requestState` (see [`request_state`](super::request_state)).
//! The client answers them and sends the same request again with its
//! `inputResponses` and the state; the retry, on any replica, runs the tool
//! again from the start, in a fresh instance, and this time each question
//! is answered from what the state and the responses carry.
//!
//! [`RoundTrip`] is one such request: [`RoundTripClient`] is the call's
//! [`ClientRequests`] (and the approver finds it as the request's
//! [`RoundTrip::current`]). A question is answered when
//!
//! - an earlier round answered it: the state holds an answer at the
//!   question's position in the run (the first question asked is 0), with
//!   the same key (its `inputRequests` key: `elicitation`, `sampling`,
//!   `approval` for a lone question) and the same fingerprint (a digest of
//!   the question); a run that asks something else there drops that answer;
//! - or this round's `inputResponses` has its key: with a state, only for a
//!   question the state says was asked (its position, key and fingerprint
//!   pending); without one (a first round), for any question but an
//!   approval, which cannot be answered in advance. A response answers one
//!   question.
//!
//! Otherwise the call ends at once: the request's cancellation fires (the
//! tool's instance is dropped where it stands; a guest cannot catch it and
//! carry on) and the server answers with the questions. A question the
//! client did not declare it can answer (its `_meta`
//! `io.modelcontextprotocol/clientCapabilities`) ends the request with
//! `-32021`; a response of the wrong shape, with `-32602`.
//!
//! What a tool does before it asks is done again on every round: a tool
//! should ask first and act after.

#![allow(
    deprecated,
    reason = "sampling and elicitation are deprecated from MCP 2026-07-28 (SEP-2577), and still what a 2026-07-28 input request asks"
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageResult, ElicitRequest as McpElicitRequest,
    ElicitRequestParams, ElicitResult, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ListRootsRequest, ListRootsResult, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::asking;
use super::request_state::{Answer, Asked, Binding, StateError, StateSealer, fingerprint};
use toolhost_core::client::{
    Answer as ClientAnswer, AskKind, ClientHandle, ClientRequests, Question, Request, Root, Round,
};
use toolhost_core::dispatch::DispatchContext;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::BoxFuture;

/// The most questions one request may ask over all its rounds; past them
/// the request fails (a tool asking without end).
pub const MAX_QUESTIONS: usize = 64;

/// How long an approval "for this session" lasts for a 2026-07-28 caller
/// after the last call it let through (sliding): see [`RoundTrips`].
pub const DEFAULT_SESSION_APPROVAL_TTL: Duration = Duration::from_secs(30 * 60);

/// What every round-trip request of a server shares: the sealer (its key
/// and store) and how long session approvals last.
///
/// ## "Approve for this session" without sessions
///
/// A 2026-07-28 client has no session. Its **session** is its caller
/// identity for as long as it keeps calling: the bearer token it presents
/// (a digest of it) and the client name it declares
/// (`io.modelcontextprotocol/clientInfo`), kept in the shared store with a
/// sliding lifetime ([`DEFAULT_SESSION_APPROVAL_TTL`], renewed by every
/// call it lets through). Any replica sharing the store honours it. The
/// token is the only identity the server authenticates; the client name
/// separates two agents that share a token, but is the client's word.
#[derive(Debug, Clone)]
pub struct RoundTrips {
    sealer: Arc<StateSealer>,
    session_ttl: Duration,
}

impl RoundTrips {
    /// Round trips sealed by `sealer`.
    pub fn new(sealer: StateSealer) -> RoundTrips {
        RoundTrips {
            sealer: Arc::new(sealer),
            session_ttl: DEFAULT_SESSION_APPROVAL_TTL,
        }
    }

    /// The same, session approvals lasting `ttl` after their last use.
    pub fn with_session_ttl(mut self, ttl: Duration) -> RoundTrips {
        self.session_ttl = ttl;
        self
    }

    /// The sealer.
    pub fn sealer(&self) -> &StateSealer {
        &self.sealer
    }
}

/// Whether `context` is a request on MCP 2026-07-28 or later (asked by
/// multi-round-trip results, not server-initiated requests).
pub fn is_round_trip(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Who made the request, for its state's binding and session approvals:
/// the bearer token it presented (a digest) and the client name it
/// declared.
pub fn caller(context: &RequestContext<RoleServer>) -> String {
    let token = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.headers.get(http::header::AUTHORIZATION))
        .map(|value| blake3::hash(value.as_bytes()).to_hex().to_string());
    let client = context.client_info().map(|info| info.name);
    format!(
        "token={}\nclient={}",
        token.as_deref().unwrap_or("-"),
        client.as_deref().unwrap_or("-")
    )
}

/// The kinds of question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Elicitation,
    Sampling,
    Roots,
    Approval,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Elicitation => "elicitation",
            Kind::Sampling => "sampling",
            Kind::Roots => "roots",
            Kind::Approval => "approval",
        }
    }

    /// The client capability answering it needs.
    fn capability(self) -> &'static str {
        match self {
            Kind::Sampling => "sampling",
            Kind::Roots => "roots",
            Kind::Elicitation | Kind::Approval => "elicitation",
        }
    }
}

/// How a round-trip request ends, when it does not complete.
#[derive(Debug)]
pub enum Ending {
    /// Questions for the client: answer with an `InputRequiredResult`.
    Ask(InputRequiredResult),
    /// A JSON-RPC error: a capability the client did not declare
    /// (`-32021`), a malformed response (`-32602`), too many questions.
    Error(ErrorData),
}

/// A question as the client will see it.
struct Posed {
    /// Its `inputRequests` key.
    key: String,
    kind: Kind,
    /// What its fingerprint is taken of.
    question: Value,
    request: InputRequest,
}

enum End {
    Ask(Vec<(Asked, InputRequest)>),
    Error(ErrorData),
}

struct Inner {
    /// Every answer known: the state's, and this round's taken from the
    /// responses (sealed into the next state).
    answers: Vec<Answer>,
    /// This round's `inputResponses`.
    responses: BTreeMap<String, Value>,
    /// The questions the state says the last round asked.
    pending: Vec<Asked>,
    /// Whether the request carried a state.
    stated: bool,
    /// The position of the run's next question.
    next: usize,
    end: Option<End>,
}

/// One request asked by multi-round-trip results; see the module
/// documentation.
pub struct RoundTrip {
    trips: RoundTrips,
    binding: Binding,
    caller: String,
    capabilities: ClientCapabilities,
    cancel: CancellationToken,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for RoundTrip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoundTrip")
            .field("method", &self.binding.method)
            .field("name", &self.binding.name)
            .finish_non_exhaustive()
    }
}

tokio::task_local! {
    /// The round trip of the request being served, for the approver (which
    /// is asked by the approval gate, outside the call's context).
    static CURRENT: Arc<RoundTrip>;
}

/// What a request that may ask says of itself: what its state is bound to,
/// and what it carries back.
#[derive(Debug, Clone)]
pub struct Retry<'a> {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub method: &'static str,
    /// The tool's or prompt's name, or the resource's URI.
    pub name: &'a str,
    /// Its arguments (`null` for a resource).
    pub arguments: &'a Value,
    /// Its `inputResponses`.
    pub responses: Option<InputResponses>,
    /// Its `requestState`.
    pub state: Option<&'a str>,
}

/// Runs `work` (given the context to run in) for a 2026-07-28 request of
/// `context` as a round trip: its state opened, `ctx` made its own
/// ([`RoundTrip::attach`]), and its answer its questions or refusal if it
/// ended so ([`RoundTrip::conclude`]).
///
/// # Errors
///
/// The state's refusal, the request's own refusal (`-32021`, `-32602`), or
/// `work`'s error.
pub async fn run<R, F, Fut>(
    trips: &RoundTrips,
    context: &RequestContext<RoleServer>,
    retry: Retry<'_>,
    mut ctx: DispatchContext,
    work: F,
) -> std::result::Result<R, ErrorData>
where
    R: From<InputRequiredResult>,
    F: FnOnce(DispatchContext) -> Fut,
    Fut: Future<Output = std::result::Result<R, ErrorData>>,
{
    let trip = RoundTrip::begin(trips, context, retry).await?;
    trip.attach(&mut ctx);
    let done = trip.scope(work(ctx)).await;
    trip.conclude(|| done)
}

impl RoundTrip {
    /// The round trip of the request `retry` describes: opens its
    /// `requestState` (if any) and takes its `inputResponses`. Its
    /// cancellation is a child of the request's.
    ///
    /// # Errors
    ///
    /// The state's refusal ([`StateError`]) as a `-32602`.
    pub async fn begin(
        trips: &RoundTrips,
        context: &RequestContext<RoleServer>,
        retry: Retry<'_>,
    ) -> std::result::Result<Arc<RoundTrip>, ErrorData> {
        let Retry {
            method,
            name,
            arguments,
            responses,
            state,
        } = retry;
        let caller = caller(context);
        let binding = Binding::new(method, name, arguments, &caller);
        let opened = match state {
            Some(state) => trips
                .sealer
                .open(state, &binding)
                .await
                .map_err(|e: StateError| {
                    tracing::info!(reason = e.reason(), method, name, "refused a requestState: {e}");
                    e.to_error_data()
                })?,
            None => Default::default(),
        };
        if state.is_some() {
            tracing::info!(
                method,
                name,
                answers = opened.answers.len(),
                "continuing a request from its requestState"
            );
        }
        Ok(Arc::new(RoundTrip {
            trips: trips.clone(),
            binding,
            caller,
            capabilities: context.client_capabilities().unwrap_or_default(),
            cancel: context.ct.child_token(),
            inner: Mutex::new(Inner {
                answers: opened.answers,
                responses: responses.unwrap_or_default(),
                pending: opened.pending,
                stated: state.is_some(),
                next: 0,
                end: None,
            }),
        }))
    }

    /// The request's cancellation: fired when a question ends the call.
    pub fn cancel(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Runs `work` as this request's (the approver finds it through
    /// [`RoundTrip::current`]).
    pub async fn scope<F: Future>(self: &Arc<Self>, work: F) -> F::Output {
        CURRENT.scope(Arc::clone(self), work).await
    }

    /// The round trip of the request being served, if it is one.
    pub fn current() -> Option<Arc<RoundTrip>> {
        CURRENT.try_with(Arc::clone).ok()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the client declared it can answer `capability`.
    fn declared(&self, capability: &str) -> bool {
        match capability {
            "sampling" => self.capabilities.sampling.is_some(),
            "roots" => self.capabilities.roots.is_some(),
            // Form mode: `{}` (form by default) or `{"form": ...}`.
            _ => self
                .capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none()),
        }
    }

    /// Whether the client can be asked for an approval.
    pub fn can_ask_approval(&self) -> bool {
        self.declared("elicitation")
    }

    /// Ends the request (once: the first ending wins) and cancels it.
    fn end(&self, inner: &mut Inner, end: End) {
        if inner.end.is_none() {
            inner.end = Some(end);
        }
        self.cancel.cancel();
    }

    /// Ends the request with `-32021` for `capability`.
    pub fn refuse_undeclared(&self, capability: &str) {
        let required: ClientCapabilities =
            serde_json::from_value(json!({ capability: {} })).unwrap_or_default();
        let mut inner = self.lock();
        self.end(
            &mut inner,
            End::Error(ErrorData::missing_required_client_capability(required)),
        );
    }

    /// The answers to a round of questions, in order, or `None` when the
    /// request has ended: some were not answered (they are all sent
    /// together) or were refused. Each question is at the next position of
    /// the run; an answer is taken from the state when the state's answer
    /// at that position has the same key and fingerprint, else from this
    /// round's responses under its key (see the module documentation).
    fn round(&self, posed: Vec<Posed>) -> Option<Vec<Value>> {
        let mut inner = self.lock();
        if inner.end.is_some() {
            return None;
        }
        let mut answers = Vec::with_capacity(posed.len());
        let mut unanswered = Vec::new();
        for Posed {
            key,
            kind,
            question,
            request,
        } in posed
        {
            let at = inner.next;
            inner.next += 1;
            let fingerprint = fingerprint(kind.name(), &question);
            if let Some(known) = inner.answers.iter().position(|a| a.at == at) {
                let a = &inner.answers[known];
                if a.key == key && a.fingerprint == fingerprint {
                    answers.push(a.response.clone());
                    continue;
                }
                // This run asks something else here than the last one did:
                // that answer was to another question.
                inner.answers.remove(known);
            }
            if !self.declared(kind.capability()) {
                drop(inner);
                self.refuse_undeclared(kind.capability());
                return None;
            }
            let asked = Asked { at, key, fingerprint };
            // With a state, a response answers only the question the state
            // says it was sent for; without one (a first round), any but an
            // approval, which is taken only as the answer to a question
            // asked. A response answers one question, once.
            let may_answer = match inner.stated {
                true => inner.pending.contains(&asked),
                false => kind != Kind::Approval,
            };
            let sent = may_answer.then(|| inner.responses.remove(&asked.key)).flatten();
            match (sent, may_answer) {
                (Some(response), true) => {
                    if let Err(e) = check_response(kind, &asked.key, &response) {
                        self.end(&mut inner, End::Error(e));
                        return None;
                    }
                    answers.push(response.clone());
                    inner.answers.push(Answer {
                        at,
                        key: asked.key,
                        fingerprint: asked.fingerprint,
                        response,
                    });
                }
                _ => unanswered.push((asked, request)),
            }
        }
        if inner.next > MAX_QUESTIONS {
            let e = ErrorData::invalid_request(
                format!("the request asked more than {MAX_QUESTIONS} questions"),
                None,
            );
            self.end(&mut inner, End::Error(e));
            return None;
        }
        if unanswered.is_empty() {
            return Some(answers);
        }
        match &mut inner.end {
            // Rounds asked concurrently (a script's parallel calls) go out
            // together.
            Some(End::Ask(questions)) => questions.extend(unanswered),
            _ => self.end(&mut inner, End::Ask(unanswered)),
        }
        None
    }

    /// The answer to one question keyed `key`, or `None` (see
    /// [`RoundTrip::round`]).
    fn ask(&self, key: &str, kind: Kind, question: Value, request: InputRequest) -> Option<Value> {
        let posed = Posed {
            key: key.to_string(),
            kind,
            question,
            request,
        };
        self.round(vec![posed])?.pop()
    }

    /// The user's answer to an approval form (`params`), or `None` when the
    /// request has ended (the question is sent).
    pub fn ask_approval(&self, params: ElicitRequestParams) -> Option<Value> {
        let question = serde_json::to_value(&params).unwrap_or_default();
        let request = InputRequest::Elicitation(McpElicitRequest::new(params));
        self.ask("approval", Kind::Approval, question, request)
    }

    /// The store key of a session approval of `what` for this caller.
    fn session_key(&self, what: &str) -> String {
        let caller = blake3::hash(self.caller.as_bytes()).to_hex();
        format!("mcp:session-approval:{caller}:{what}")
    }

    /// Whether this caller approved every one of `subjects` "for this
    /// session" (see [`RoundTrips`]); each is renewed when so. A store that
    /// fails answers no (the question is asked).
    pub async fn session_approved(&self, subjects: &[String]) -> bool {
        if subjects.is_empty() {
            return false;
        }
        let store = self.trips.sealer.store();
        for subject in subjects {
            match store.get(&self.session_key(subject)).await {
                Ok(Some(_)) => {}
                _ => return false,
            }
        }
        for subject in subjects {
            let _ = store
                .put(&self.session_key(subject), b"1", self.trips.session_ttl)
                .await;
        }
        true
    }

    /// Records this caller's approval of `subjects` "for this session".
    pub async fn approve_for_session(&self, subjects: &[String]) {
        let store = self.trips.sealer.store();
        for subject in subjects {
            if let Err(e) = store
                .put(&self.session_key(subject), b"1", self.trips.session_ttl)
                .await
            {
                tracing::warn!("a session approval could not be stored; it lasts this call only: {e}");
            }
        }
    }

    /// How the request ends, if a question or a refusal ended it; `None`
    /// when it ran to its end.
    pub fn ending(&self) -> Option<Ending> {
        let mut inner = self.lock();
        match inner.end.take()? {
            End::Error(e) => Some(Ending::Error(e)),
            End::Ask(questions) => {
                let pending: Vec<Asked> = questions.iter().map(|(a, _)| a.clone()).collect();
                let requests: InputRequests = questions
                    .into_iter()
                    .map(|(asked, request)| (asked.key, request))
                    .collect();
                let state = self.trips.sealer.seal(&self.binding, &inner.answers, &pending);
                tracing::info!(
                    method = self.binding.method,
                    name = self.binding.name,
                    questions = pending.len(),
                    "asking the client by an InputRequiredResult"
                );
                Some(Ending::Ask(InputRequiredResult::new(Some(requests), Some(state))))
            }
        }
    }
}

/// Checks a client's response to a question of `kind` before any tool
/// sees it.
fn check_response(kind: Kind, key: &str, response: &Value) -> std::result::Result<(), ErrorData> {
    let wrong = |what: &str, e: serde_json::Error| {
        ErrorData::invalid_params(
            format!("inputResponses.{key} is not {what}: {e}"),
            Some(json!({ "inputResponse": key })),
        )
    };
    match kind {
        Kind::Elicitation | Kind::Approval => serde_json::from_value::<ElicitResult>(response.clone())
            .map(drop)
            .map_err(|e| wrong("an elicitation result", e)),
        Kind::Sampling => serde_json::from_value::<CreateMessageResult>(response.clone())
            .map(drop)
            .map_err(|e| wrong("a sampling result", e)),
        Kind::Roots => serde_json::from_value::<ListRootsResult>(response.clone())
            .map(drop)
            .map_err(|e| wrong("a roots result", e)),
    }
}

/// A round trip as a call's [`ClientRequests`].
#[derive(Debug, Clone)]
pub struct RoundTripClient(pub Arc<RoundTrip>);

impl RoundTripClient {
    /// `question` as the client will see it, or why it cannot be asked.
    fn pose(question: Question) -> Result<Posed> {
        let Question { key, request } = question;
        let (kind, request) = match request {
            Request::Elicit(r) => {
                let params = asking::elicit_params(r)?;
                (
                    Kind::Elicitation,
                    InputRequest::Elicitation(McpElicitRequest::new(params)),
                )
            }
            Request::Sample(r) => {
                let params = asking::sample_params(&r)?;
                (
                    Kind::Sampling,
                    InputRequest::CreateMessage(CreateMessageRequest::new(params)),
                )
            }
            Request::ListRoots => (Kind::Roots, InputRequest::ListRoots(ListRootsRequest::default())),
            other => {
                return Err(Error::new(
                    ErrorCode::Unavailable,
                    format!(
                        "a {} question cannot be sent in an InputRequiredResult",
                        other.kind()
                    ),
                ));
            }
        };
        // What its fingerprint is taken of: the request's parameters.
        let question = serde_json::to_value(&request)
            .ok()
            .and_then(|v| v.get("params").cloned())
            .unwrap_or_default();
        Ok(Posed {
            key,
            kind,
            question,
            request,
        })
    }

    /// A checked response as the tool gets it.
    fn answer(kind: Kind, response: Value) -> Result<ClientAnswer> {
        // Checked when it came in (`check_response`): it reads.
        let unread = |e: serde_json::Error| {
            Error::new(
                ErrorCode::Internal,
                format!("a checked {} answer did not read: {e}", kind.name()),
            )
        };
        Ok(match kind {
            Kind::Sampling => ClientAnswer::Sample(asking::sample_response(response)?),
            Kind::Roots => {
                let result: ListRootsResult = serde_json::from_value(response).map_err(unread)?;
                ClientAnswer::Roots(
                    result
                        .roots
                        .into_iter()
                        .map(|r| Root {
                            uri: r.uri,
                            name: r.name,
                        })
                        .collect(),
                )
            }
            Kind::Elicitation | Kind::Approval => {
                let result: ElicitResult = serde_json::from_value(response).map_err(unread)?;
                ClientAnswer::Elicit(asking::elicit_response(result.action, result.content)?)
            }
        })
    }
}

impl ClientRequests for RoundTripClient {
    fn can_answer(&self, kind: AskKind) -> bool {
        self.0.declared(kind.as_str())
    }

    /// A round: the questions that can be posed go to `RoundTrip::round`
    /// together; when it ends the request (some are unanswered, or one
    /// needs a capability the client did not declare), the round's outer
    /// error ends the call, whose instance is dropped where it stands.
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        Box::pin(async move {
            let mut answers: Vec<Option<Result<ClientAnswer>>> = Vec::with_capacity(questions.len());
            let mut posed = Vec::new();
            for question in questions {
                match RoundTripClient::pose(question) {
                    Ok(p) => {
                        posed.push(p);
                        answers.push(None);
                    }
                    Err(e) => answers.push(Some(Err(e))),
                }
            }
            let kinds: Vec<Kind> = posed.iter().map(|p| p.kind).collect();
            if !posed.is_empty() {
                let Some(responses) = self.0.round(posed) else {
                    return Err(Error::new(
                        ErrorCode::Cancelled,
                        "the request ended to ask its client (an InputRequiredResult) or was refused",
                    ));
                };
                let mut responses = kinds.into_iter().zip(responses);
                for slot in answers.iter_mut().filter(|a| a.is_none()) {
                    *slot = responses
                        .next()
                        .map(|(kind, response)| RoundTripClient::answer(kind, response));
                }
            }
            Ok(answers
                .into_iter()
                .map(|a| {
                    a.unwrap_or_else(|| {
                        Err(Error::new(
                            ErrorCode::Unavailable,
                            "the client gave no answer to this question",
                        ))
                    })
                })
                .collect())
        })
    }
}

impl RoundTrip {
    /// Makes `ctx` this request's: its cancellation, and this round trip as
    /// the client its calls may ask.
    pub fn attach(self: &Arc<Self>, ctx: &mut DispatchContext) {
        ctx.cancel = self.cancel.clone();
        ctx.client = Some(ClientHandle(Arc::new(RoundTripClient(Arc::clone(self)))));
    }

    /// The request's answer: its questions (an `InputRequiredResult`) or
    /// its refusal if it ended so, otherwise what `done` makes of the
    /// finished request.
    ///
    /// # Errors
    ///
    /// The refusal, or `done`'s error.
    pub fn conclude<R: From<InputRequiredResult>>(
        &self,
        done: impl FnOnce() -> std::result::Result<R, ErrorData>,
    ) -> std::result::Result<R, ErrorData> {
        match self.ending() {
            Some(Ending::Ask(questions)) => Ok(questions.into()),
            Some(Ending::Error(e)) => Err(e),
            None => done(),
        }
    }
}
