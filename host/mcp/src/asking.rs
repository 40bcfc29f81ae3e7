//! # A call's questions to its MCP client
//!
//! [`PeerClient`] is the [`ClientRequests`] of one MCP session: a tool's
//! elicitation goes to the client as `elicitation/create` (form mode), its
//! sampling as `sampling/createMessage`, each only when the client declared
//! the capability at `initialize`. The server gives it to the calls of its
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

use rmcp::model::{CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use toolhost_core::client::{
    ClientRequests, ElicitAction, ElicitRequest, ElicitResponse, SampleRequest, SampleResponse,
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
            .field("elicit", &self.can_elicit())
            .field("sample", &self.can_sample())
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
    fn can_elicit(&self) -> bool {
        !self.peer.is_transport_closed()
            && self
                .peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
    }

    fn can_sample(&self) -> bool {
        !self.peer.is_transport_closed()
            && self
                .peer
                .peer_info()
                .is_some_and(|info| info.capabilities.sampling.is_some())
    }

    fn elicit(&self, request: ElicitRequest) -> BoxFuture<'_, Result<ElicitResponse>> {
        Box::pin(async move {
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
        })
    }

    fn sample(&self, request: SampleRequest) -> BoxFuture<'_, Result<SampleResponse>> {
        Box::pin(async move {
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
        })
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
