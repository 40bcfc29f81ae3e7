//! # Sessions
//!
//! A [`Session`] is one agent conversation: its audience, its lazy-mode
//! activations, and its **id**, which is also a capability: approvals given
//! "for the session" and background processes (their live output and their
//! receipts on disk) belong to it. So the id is never chosen by a caller:
//! it is the caller's label followed by 128 random bits
//! (`mcp-3f9c…`, 32 hex digits), new in every process, and cannot be
//! guessed from another session's.
//!
//! A session may declare that it **continues** earlier ones
//! ([`Session::continuing`], for an application resuming a conversation
//! after a restart or a context compression): it then also owns what they
//! owned (their receipts). Only the application declares that; nothing a
//! model or an MCP client sends can.
//!
//! A session may be **granted** only some toolsets ([`Session::granted`],
//! for an HTTP client whose OAuth token's scopes name them): it then sees
//! and calls only the tools of those toolsets that the dispatcher's own
//! selection serves; the rest are unknown to it, in every list and call.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use crate::registry::ToolAudience;

/// One agent session: its unguessable id, its audience, the sessions it
/// continues and, in lazy mode, the tools it has activated. Shared by `Arc`
/// between turns.
#[derive(Debug)]
pub struct Session {
    id: Arc<str>,
    audience: ToolAudience,
    continues: Arc<[String]>,
    /// The toolsets granted; `None`: all that the dispatcher selects.
    toolsets: Option<Arc<[String]>>,
    activated: Mutex<BTreeSet<String>>,
}

/// A new session id: `label-` (the label's letters, digits, `-` and `_`,
/// at most 32) then 128 random bits as 32 hex digits.
///
/// # Panics
///
/// Never: if the operating system's random source fails, the process
/// aborts rather than hand out a guessable id.
pub fn new_session_id(label: &str) -> String {
    let mut bytes = [0u8; 16];
    if let Err(e) = getrandom::fill(&mut bytes) {
        // Fail closed: an id from a broken random source would let one
        // session read another's receipts.
        eprintln!("toolhost: the operating system's random source failed ({e}); aborting");
        std::process::abort();
    }
    let label: String = label
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .take(32)
        .collect();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    if label.is_empty() {
        hex
    } else {
        format!("{label}-{hex}")
    }
}

impl Session {
    /// A new session of `audience`, its id `label-` and 128 random bits
    /// (see [`new_session_id`]).
    pub fn new(label: &str, audience: ToolAudience) -> Arc<Session> {
        Session::continuing(label, audience, [])
    }

    /// A new session that continues the sessions with ids `previous` (an
    /// application resuming a conversation): it owns what they owned, such
    /// as their background processes' receipts, besides its own.
    pub fn continuing(
        label: &str,
        audience: ToolAudience,
        previous: impl IntoIterator<Item = String>,
    ) -> Arc<Session> {
        Arc::new(Session {
            id: Arc::from(new_session_id(label)),
            audience,
            continues: previous.into_iter().collect(),
            toolsets: None,
            activated: Mutex::default(),
        })
    }

    /// A new session of `audience` that sees only the tools of `toolsets`
    /// (those among the dispatcher's selection; a name no toolset has
    /// grants nothing), or everything the dispatcher selects when `None`.
    pub fn granted(label: &str, audience: ToolAudience, toolsets: Option<Vec<String>>) -> Arc<Session> {
        Arc::new(Session {
            id: Arc::from(new_session_id(label)),
            audience,
            continues: Arc::from([]),
            toolsets: toolsets.map(Arc::from),
            activated: Mutex::default(),
        })
    }

    /// A new trusted session (owner or operator turns).
    pub fn trusted(label: &str) -> Arc<Session> {
        Session::new(label, ToolAudience::Trusted)
    }

    /// A new public session (untrusted origins): it sees and calls public
    /// tools only.
    pub fn public(label: &str) -> Arc<Session> {
        Session::new(label, ToolAudience::Public)
    }

    /// The session's id (unguessable; see the module documentation).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session's id, shared: what each of its calls carries (in
    /// [`CallInfo`](super::CallInfo), [`CallContext`](crate::registry::CallContext)
    /// and [`ToolCallEvent`](super::ToolCallEvent)) without a copy.
    pub fn shared_id(&self) -> Arc<str> {
        Arc::clone(&self.id)
    }

    /// The ids of the sessions this one continues.
    pub fn continues(&self) -> &Arc<[String]> {
        &self.continues
    }

    /// The session's audience.
    pub fn audience(&self) -> ToolAudience {
        self.audience
    }

    /// The toolsets granted to this session, if it was granted only some
    /// (see [`Session::granted`]).
    pub fn toolsets(&self) -> Option<&[String]> {
        self.toolsets.as_deref()
    }

    /// The tools activated so far (lazy mode).
    pub fn activated(&self) -> BTreeSet<String> {
        self.activated
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(super) fn activate(&self, name: &str) {
        let mut set = self.activated.lock().unwrap_or_else(PoisonError::into_inner);
        set.insert(name.to_string());
    }

    pub(super) fn is_active(&self, name: &str) -> bool {
        let set = self.activated.lock().unwrap_or_else(PoisonError::into_inner);
        set.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_labelled_random_and_distinct() {
        let a = Session::trusted("mcp");
        let b = Session::trusted("mcp");
        assert_ne!(a.id(), b.id());
        let hex = a.id().strip_prefix("mcp-").unwrap();
        assert_eq!(hex.len(), 32);
        assert!(hex.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(new_session_id("a/../b c").starts_with("abc-"));
    }
}
