//! # A call's questions to its MCP client
//!
//! [`PeerClient`] is the [`ClientRequests`] of one MCP session: a tool's
//! elicitation goes to the client as `elicitation/create` (form mode), its
//! sampling as `sampling/createMessage`, its roots question as
//! `roots/list`, each only when the client declared the capability at
//! `initialize`. The questions of one round are asked concurrently, each
//! answered or refused on its own (a refused one does not hold up the
//! others). The server gives it to the calls of its
//! session (dispatch passes it on to trusted sessions only; the runtime to
//! plugins that declared and were granted the capability).
//!
//! What the client answers is checked before it reaches the tool: an
//! elicitation's content must be a JSON object, a sampling answer one
//! content block. A question gets [`ASK_TIMEOUT`] at most: a person may
//! take a while, but a client that never answers must not hold the call
//! for ever.

#![allow(
    deprecated,
    reason = "sampling and elicitation are deprecated from MCP 2026-07-28 (SEP-2577), served for the revisions before it"
)]

use std::time::Duration;

use futures_util::future::join_all;
use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use toolhost_core::client::{
    Answer, AskKind, ClientRequests, ElicitAction, ElicitRequest, ElicitResponse, Question, Request, Root,
    Round, SampleRequest, SampleResponse,
};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::BoxFuture;

/// The longest a question to the client may stay unanswered.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(600);

/// The client of one MCP session, asked on behalf of its calls.
#[derive(Clone)]
pub struct PeerClient {
    peer: Peer<RoleServer>,
}

impl std::fmt::Debug for PeerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerClient")
            .field("elicit", &self.can_answer(AskKind::Elicitation))
            .field("sample", &self.can_answer(AskKind::Sampling))
            .field("roots", &self.can_answer(AskKind::Roots))
            .finish()
    }
}

impl PeerClient {
    /// The client behind `peer`.
    pub fn new(peer: Peer<RoleServer>) -> Self {
        PeerClient { peer }
    }
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Unavailable,
        format!("the client did not answer the {what} request: {e}"),
    )
}

impl ClientRequests for PeerClient {
    fn can_answer(&self, kind: AskKind) -> bool {
        if self.peer.is_transport_closed() {
            return false;
        }
        match kind {
            AskKind::Elicitation => self
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form),
            AskKind::Sampling => self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.sampling.is_some()),
            AskKind::Roots => self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.roots.is_some()),
            // A kind a later core adds: not one this session knows to ask.
            _ => false,
        }
    }

    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        Box::pin(async move {
            // Concurrently: a person may answer the questions in any order,
            // and a model's answer need not wait for them.
            Ok(join_all(questions.into_iter().map(|q| self.ask_one(q.request))).await)
        })
    }
}

impl PeerClient {
    /// One question, answered or refused.
    async fn ask_one(&self, request: Request) -> Result<Answer> {
        let kind = request.kind();
        if !self.can_answer(kind) {
            return Err(toolhost_core::client::not_declared(kind));
        }
        match request {
            Request::Elicit(r) => self.elicit(r).await.map(Answer::Elicit),
            Request::Sample(r) => self.sample(r).await.map(Answer::Sample),
            Request::ListRoots => self.list_roots().await.map(Answer::Roots),
            _ => Err(toolhost_core::client::not_declared(kind)),
        }
    }

    async fn list_roots(&self) -> Result<Vec<Root>> {
        let answer = tokio::time::timeout(ASK_TIMEOUT, self.peer.list_roots())
            .await
            .map_err(|_| unavailable("roots", format!("no answer within {} s", ASK_TIMEOUT.as_secs())))?
            .map_err(|e| unavailable("roots", e))?;
        Ok(answer
            .roots
            .into_iter()
            .map(|r| Root {
                uri: r.uri,
                name: r.name,
            })
            .collect())
    }

    async fn elicit(&self, request: ElicitRequest) -> Result<ElicitResponse> {
        let params = elicit_params(request)?;
        let answer = tokio::time::timeout(ASK_TIMEOUT, self.peer.create_elicitation(params))
            .await
            .map_err(|_| {
                unavailable(
                    "elicitation",
                    format!("no answer within {} s", ASK_TIMEOUT.as_secs()),
                )
            })?
            .map_err(|e| unavailable("elicitation", e))?;
        elicit_response(answer.action, answer.content)
    }

    async fn sample(&self, request: SampleRequest) -> Result<SampleResponse> {
        let params = sample_params(&request)?;
        let answer = tokio::time::timeout(ASK_TIMEOUT, self.peer.create_message(params))
            .await
            .map_err(|_| {
                unavailable(
                    "sampling",
                    format!("no answer within {} s", ASK_TIMEOUT.as_secs()),
                )
            })?
            .map_err(|e| unavailable("sampling", e))?;
        let answer = serde_json::to_value(&answer)
            .map_err(|e| unavailable("sampling", format!("its answer cannot be read: {e}")))?;
        sample_response(answer)
    }
}

/// A tool's elicitation as MCP's form-mode parameters.
///
/// # Errors
///
/// `invalid_arguments` when the schema is not one MCP allows.
pub(crate) fn elicit_params(request: ElicitRequest) -> Result<ElicitRequestParams> {
    let schema: ElicitationSchema = serde_json::from_value(request.requested_schema).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArguments,
            format!(
                "the requested schema is not one MCP allows for elicitation (an object of string, number, integer, boolean or enum properties): {e}"
            ),
        )
    })?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: request.message,
        requested_schema: schema,
    })
}

/// A tool's sampling request as MCP's parameters.
///
/// # Errors
///
/// `invalid_arguments` when MCP would not carry it.
pub(crate) fn sample_params(request: &SampleRequest) -> Result<CreateMessageRequestParams> {
    serde_json::to_value(request)
        .and_then(serde_json::from_value)
        .map_err(|e| {
            Error::new(
                ErrorCode::InvalidArguments,
                format!("the sampling request is not one MCP allows: {e}"),
            )
        })
}

/// The client's elicitation answer as the tool gets it: an accepted form's
/// content must be a JSON object.
///
/// # Errors
///
/// `tool_failed` for accepted content that is not an object.
pub(crate) fn elicit_response(action: ElicitationAction, content: Option<Value>) -> Result<ElicitResponse> {
    let action = match action {
        ElicitationAction::Accept => ElicitAction::Accept,
        ElicitationAction::Decline => ElicitAction::Decline,
        // Cancel, and whatever a later revision adds: not an answer.
        _ => ElicitAction::Cancel,
    };
    let content = match (action, content) {
        (ElicitAction::Accept, Some(Value::Object(map))) => Some(map),
        (ElicitAction::Accept, Some(other)) => {
            let mut shown = other.to_string();
            toolhost_core::text::truncate_utf8(&mut shown, 200);
            return Err(Error::new(
                ErrorCode::ToolFailed,
                format!(
                    "the client accepted the elicitation with content that is not a JSON object: {shown}"
                ),
            ));
        }
        (ElicitAction::Accept, None) => Some(serde_json::Map::new()),
        (_, _) => None,
    };
    Ok(ElicitResponse { action, content })
}

/// The client model's answer (a `CreateMessageResult` as JSON) as the tool
/// gets it: one content block.
///
/// # Errors
///
/// `tool_failed` for several blocks; `unavailable` for JSON that is not a
/// sampling result.
pub(crate) fn sample_response(mut answer: Value) -> Result<SampleResponse> {
    // A revision that allows several blocks: one is what a tool gets.
    if let Some(Value::Array(blocks)) = answer.get_mut("content") {
        if blocks.len() != 1 {
            return Err(Error::new(
                ErrorCode::ToolFailed,
                format!(
                    "the client's model answered with {} content blocks; a tool gets one",
                    blocks.len()
                ),
            ));
        }
        let block = blocks.remove(0);
        answer["content"] = block;
    }
    serde_json::from_value(answer)
        .map_err(|e| unavailable("sampling", format!("its answer is not a sampling result: {e}")))
}
