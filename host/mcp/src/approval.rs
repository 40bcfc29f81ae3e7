//! # Approvals asked of the MCP client (elicitation)
//!
//! A server has no terminal of its own to ask on, but an MCP client can ask
//! its user: [`McpApprover`] is an [`ApprovalCallback`] that turns a call
//! needing approval (a flagged command, a `require_approval` tool) into an
//! `elicitation/create` request to the client of the session the call came
//! from. The form offers `deny`, `once`, `session` and `always` (deny first,
//! so that a client picking the first value by default denies), shows the
//! request's [`display_text`](ApprovalRequest::display_text), and is parsed
//! strictly: only an accepted form whose `decision` is one of the four values
//! decides; a declined or cancelled form is a denial.
//!
//! Fail-closed: a session whose client did not declare the elicitation
//! capability (form mode), or whose transport has closed, cannot be asked:
//! the `fallback` callback is asked instead if there is one, and otherwise the
//! answer is [`ApprovalOutcome::Unavailable`], a denial. The gate's timeout
//! bounds how long the client may take.
//!
//! ## MCP 2026-07-28: approvals by multi-round-trip results
//!
//! A 2026-07-28 request has no session to ask on. When the call comes from
//! one (its [`RoundTrip`] is current), the same form goes out as an
//! elicitation input request of an `InputRequiredResult` (the call ends
//! there, its outcome [`ApprovalOutcome::Pending`]), and the client's retry
//! brings the answer back under the sealed request state. The scopes:
//! `once` is this call; `always` the allowlist, as for any client;
//! `session` the caller's identity for as long as it keeps calling (see
//! [`RoundTrips`](super::round_trip::RoundTrips)), kept in the shared store
//! so that every replica honours it. A client that did not declare
//! elicitation is not asked: the `fallback` is, if there is one, and
//! otherwise the request fails with `-32021`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema, EnumSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};

use toolhost_exec::approval::{
    ApprovalCallback, ApprovalOutcome, ApprovalRequest, BoxFuture, Choice, Subject,
};

use super::round_trip::RoundTrip;

/// The values of the form's `decision` field, in the order offered.
const DECISIONS: [(&str, Choice, &str); 4] = [
    ("deny", Choice::Deny, "Deny: do not run it"),
    ("once", Choice::Once, "Approve once"),
    ("session", Choice::Session, "Approve for this session"),
    (
        "always",
        Choice::Always,
        "Always allow (saved to the config's allowlist)",
    ),
];

/// Asks the MCP client of a call's session; see the module documentation.
#[derive(Default)]
pub struct McpApprover {
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
    fallback: Option<Arc<dyn ApprovalCallback>>,
    /// Whether sessions' clients are asked (server-initiated elicitation);
    /// a stateless server asks only by multi-round-trip results.
    sessions: bool,
}

impl std::fmt::Debug for McpApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions = self.peers.lock().map(|p| p.len()).unwrap_or_default();
        f.debug_struct("McpApprover")
            .field("sessions", &sessions)
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

impl McpApprover {
    /// An approver with no sessions yet, asking `fallback` (for example the
    /// operator's terminal) for sessions whose client cannot be asked.
    pub fn new(fallback: Option<Arc<dyn ApprovalCallback>>) -> Arc<McpApprover> {
        Arc::new(McpApprover {
            peers: Mutex::default(),
            fallback,
            sessions: true,
        })
    }

    /// An approver for a stateless server: 2026-07-28 clients are asked by
    /// multi-round-trip results; the clients of earlier revisions cannot
    /// be asked (a server-initiated request has no session to come back
    /// on), so `fallback` is asked for them, or the call is denied.
    pub fn without_sessions(fallback: Option<Arc<dyn ApprovalCallback>>) -> Arc<McpApprover> {
        Arc::new(McpApprover {
            peers: Mutex::default(),
            fallback,
            sessions: false,
        })
    }

    /// Records the client of `session`, if it can answer a form
    /// elicitation; returns whether it was recorded. Sessions whose
    /// transport has closed are forgotten on the way.
    pub fn register(&self, session: &str, peer: Peer<RoleServer>) -> bool {
        let mut peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.retain(|_, p| !p.is_transport_closed());
        if !self.sessions
            || !peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
        {
            return false;
        }
        peers.insert(session.to_string(), peer);
        true
    }

    fn peer(&self, session: &str) -> Option<Peer<RoleServer>> {
        let peers = self.peers.lock().unwrap_or_else(PoisonError::into_inner);
        peers.get(session).filter(|p| !p.is_transport_closed()).cloned()
    }

    async fn ask(&self, peer: Peer<RoleServer>, request: &ApprovalRequest) -> ApprovalOutcome {
        let Some(form) = form() else {
            return ApprovalOutcome::Unavailable;
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: request.display_text(),
            requested_schema: form,
        };
        let Ok(result) = peer.create_elicitation(params).await else {
            return ApprovalOutcome::Unavailable;
        };
        ApprovalOutcome::Decided(decision(result.action, result.content.as_ref()))
    }

    /// Asks a 2026-07-28 client by a multi-round-trip result; see the
    /// module documentation.
    async fn ask_round_trip(&self, trip: Arc<RoundTrip>, request: &ApprovalRequest) -> ApprovalOutcome {
        let subjects = session_subjects(request);
        if trip.session_approved(&subjects).await {
            return ApprovalOutcome::Decided(Choice::Session);
        }
        if !trip.can_ask_approval() {
            if let Some(fallback) = &self.fallback {
                return fallback.request(request).await;
            }
            trip.refuse_undeclared("elicitation");
            return ApprovalOutcome::Unavailable;
        }
        let Some(form) = form() else {
            return ApprovalOutcome::Unavailable;
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: request.display_text(),
            requested_schema: form,
        };
        let Some(answer) = trip.ask_approval(params) else {
            // The question goes out with the request's InputRequiredResult.
            return ApprovalOutcome::Pending {
                ticket: "input_required".to_string(),
            };
        };
        let choice = serde_json::from_value::<rmcp::model::ElicitResult>(answer)
            .map_or(Choice::Deny, |r| decision(r.action, r.content.as_ref()));
        if choice == Choice::Session {
            trip.approve_for_session(&subjects).await;
        }
        ApprovalOutcome::Decided(choice)
    }
}

/// What an answered form decided: an accepted form's `decision`, one of
/// [`DECISIONS`]; anything else denies.
fn decision(action: ElicitationAction, content: Option<&serde_json::Value>) -> Choice {
    match action {
        ElicitationAction::Accept => content
            .and_then(|c| c.get("decision"))
            .and_then(|d| d.as_str())
            .and_then(|d| DECISIONS.iter().find(|(value, ..)| *value == d))
            .map_or(Choice::Deny, |(_, choice, _)| *choice),
        // Decline, cancel, and any action a later protocol adds.
        _ => Choice::Deny,
    }
}

/// What an approval "for this session" of `request` covers, as the gate
/// keeps it for a session: a command's flagged categories, or the tool.
fn session_subjects(request: &ApprovalRequest) -> Vec<String> {
    match &request.subject {
        Subject::Command { verdict, .. } => verdict
            .categories
            .iter()
            .map(|c| format!("category:{}", c.as_str()))
            .collect(),
        Subject::ToolCall { tool, .. } => vec![format!("tool:{tool}")],
    }
}

/// The form: one required `decision` among [`DECISIONS`].
fn form() -> Option<ElicitationSchema> {
    let values = DECISIONS.iter().map(|(v, ..)| v.to_string()).collect();
    let titles = DECISIONS.iter().map(|(.., t)| t.to_string()).collect();
    let decision = EnumSchema::builder(values)
        .enum_titles(titles)
        .ok()?
        .title("Decision")
        .build();
    ElicitationSchema::builder()
        .title("Approval needed")
        .required_enum_schema("decision", decision)
        .build()
        .ok()
}

impl ApprovalCallback for McpApprover {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        Box::pin(async move {
            if let Some(trip) = RoundTrip::current() {
                return self.ask_round_trip(trip, request).await;
            }
            match (self.peer(&request.session_id), &self.fallback) {
                (Some(peer), _) => self.ask(peer, request).await,
                (None, Some(fallback)) => fallback.request(request).await,
                (None, None) => ApprovalOutcome::Unavailable,
            }
        })
    }
}
