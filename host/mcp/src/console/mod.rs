//! # The operator's console: a page on the HTTP listener
//!
//! With [`HttpOptions::console`](crate::HttpOptions::console) set,
//! [`serve_http`](crate::serve_http) serves a console for the operator at
//! `GET /console`: the calls in flight and the last ones finished (tool,
//! source, caller, start, duration, outcome, error code, fuel, peak memory,
//! trace id, spans), failed calls by error code, each plugin (hash,
//! version, grants, limits, calls, errors), the bridged servers, the
//! approvals waiting with a button to approve each once or refuse it, and
//! the audit log, searchable.
//!
//! | type | role |
//! |---|---|
//! | [`Console`] | what the console shows and acts on; `HttpOptions::console` |
//! | [`ConsoleScopes`] | which OAuth scopes may see it and act on it |
//! | [`PendingApprovals`], [`ConsoleDecision`] | approvals waiting for the operator: an [`ApprovalCallback`](toolhost_exec::approval::ApprovalCallback) |
//! | [`Access`] | what a caller may do: read, or operate too |
//!
//! ## How it is protected
//!
//! - **The page holds no secret.** `GET /console` and its script and style
//!   sheet are static (built into the binary, no build step) and served
//!   without a token: a browser cannot put a bearer header on a
//!   navigation. Every piece of data comes from the JSON API under
//!   `/console/api/`, which the page calls with `fetch` and
//!   `Authorization: Bearer`, through the same authentication as `/mcp`
//!   (the static token, or an OAuth JWT). The page takes the token from
//!   the URL's fragment (`/console#token=…`, which no browser sends to the
//!   server) or a form, keeps it in the tab's `sessionStorage` and clears
//!   the fragment.
//! - **Who may do what** ([`Access`]): the static token reads and acts; an
//!   OAuth token needs `[console] read_scope` to read and `operate_scope`
//!   to act, and gets HTTP 403 without; a scope not configured grants
//!   nothing. A listener without any token (`--no-token`) serves no
//!   console data (403).
//! - **No cookies**, so no cross-site request can act as the operator; a
//!   write is a `POST` of `application/json` from the page's own origin
//!   (or an allowed one). Every answer carries a strict
//!   `Content-Security-Policy` (scripts from this origin only, no inline
//!   script or style, no framing), `X-Frame-Options: DENY`,
//!   `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
//! - **Hostile text stays text.** Tool names, audit lines and approval
//!   texts come from plugins and clients; the page inserts every string as
//!   a text node (`textContent`), never as HTML.
//!
//! ## API
//!
//! | request | answer |
//! |---|---|
//! | `GET /console/api/state` | `who`, `calls` (running, finished, errors, total), `plugins`, `servers`, `approvals` (pending, max), `audit` (enabled) |
//! | `GET /console/api/audit?text=T&event=E&limit=N` | the audit log's newest lines matching (see [`read_tail`](toolhost_core::audit::read_tail)), newest first |
//! | `POST /console/api/approvals/ID` `{"decision": "once" \| "deny"}` | the question decided (200), not pending (404), not allowed (403) |

mod approvals;
mod routes;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use toolhost_core::audit::AuditLog;
use toolhost_core::call_log::CallLog;

pub use approvals::{ConsoleDecision, DEFAULT_MAX_PENDING, DecideError, PendingApprovals, PendingView};
pub(crate) use routes::router;

/// What the console shows of the plugins: one JSON object per plugin, with
/// `name`, `status`, `hash`, `version`, `tools`, `grants`, `limits`,
/// `calls`, `errors` (`toolhost::config::plugins_view` makes it from the
/// live plugins).
pub type PluginsFn = Arc<dyn Fn() -> Vec<Value> + Send + Sync>;

/// Which OAuth scopes open the console; `None`: no scope does. The static
/// token always operates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsoleScopes {
    /// A token holding it sees the console.
    pub read: Option<String>,
    /// A token holding it sees the console and decides approvals.
    pub operate: Option<String>,
}

impl ConsoleScopes {
    /// The scopes configured, for a JWT verifier to let through (see
    /// [`JwtVerifier::recognizing`](crate::auth::JwtVerifier::recognizing)).
    pub fn configured(&self) -> Vec<String> {
        self.read.iter().chain(&self.operate).cloned().collect()
    }
}

/// What a caller may do on the console.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// See everything it shows.
    Read,
    /// See, and decide approvals.
    Operate,
}

/// The console of a server; see the [module](self).
pub struct Console {
    calls: Arc<CallLog>,
    approvals: Option<Arc<PendingApprovals>>,
    plugins: Option<PluginsFn>,
    audit: Option<Arc<AuditLog>>,
    scopes: ConsoleScopes,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("calls", &self.calls)
            .field("approvals", &self.approvals)
            .field("plugins", &self.plugins.is_some())
            .field("audit", &self.audit)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl Console {
    /// A console showing the calls of `calls` (which the dispatcher must
    /// have as an observer), and nothing else until the `with_` methods
    /// add it.
    pub fn new(calls: Arc<CallLog>) -> Console {
        Console {
            calls,
            approvals: None,
            plugins: None,
            audit: None,
            scopes: ConsoleScopes::default(),
        }
    }

    /// Shows `approvals` waiting, and decides them.
    pub fn with_approvals(mut self, approvals: Arc<PendingApprovals>) -> Console {
        self.approvals = Some(approvals);
        self
    }

    /// Shows the plugins `plugins` reports.
    pub fn with_plugins(mut self, plugins: PluginsFn) -> Console {
        self.plugins = Some(plugins);
        self
    }

    /// Searches `audit`'s file, and records each decision made on the
    /// console in it.
    pub fn with_audit(mut self, audit: Arc<AuditLog>) -> Console {
        self.audit = Some(audit);
        self
    }

    /// Lets OAuth tokens holding `scopes` in.
    pub fn with_scopes(mut self, scopes: ConsoleScopes) -> Console {
        self.scopes = scopes;
        self
    }

    /// The scopes that open it.
    pub fn scopes(&self) -> &ConsoleScopes {
        &self.scopes
    }
}
