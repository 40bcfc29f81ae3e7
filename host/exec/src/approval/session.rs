//! # Session approvals
//!
//! "Approve for this session" approves the command's categories (or the
//! tool) for that session id only. The store also counts denials in a row
//! per session, so the model can be told to stop trying variations.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use crate::approval::Category;

#[derive(Debug, Default)]
struct SessionState {
    categories: HashSet<Category>,
    tools: HashSet<String>,
    denials_in_row: u32,
}

/// Per-session approvals and denial counts. Thread-safe.
#[derive(Debug, Default)]
pub struct SessionApprovals {
    inner: Mutex<HashMap<String, SessionState>>,
}

impl SessionApprovals {
    /// An empty store.
    pub fn new() -> SessionApprovals {
        SessionApprovals::default()
    }

    fn with<T>(&self, session: &str, f: impl FnOnce(&mut SessionState) -> T) -> T {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(map.entry(session.to_string()).or_default())
    }

    /// Approves `categories` for `session` (and no other session).
    pub fn approve_categories(&self, session: &str, categories: &[Category]) {
        self.with(session, |s| s.categories.extend(categories.iter().copied()));
    }

    /// Whether every one of `categories` is approved for `session`
    /// (false for an empty list).
    pub fn categories_approved(&self, session: &str, categories: &[Category]) -> bool {
        !categories.is_empty() && self.with(session, |s| categories.iter().all(|c| s.categories.contains(c)))
    }

    /// Approves the tool `name` for `session`.
    pub fn approve_tool(&self, session: &str, name: &str) {
        self.with(session, |s| {
            s.tools.insert(name.to_string());
        });
    }

    /// Whether the tool `name` is approved for `session`.
    pub fn tool_approved(&self, session: &str, name: &str) -> bool {
        self.with(session, |s| s.tools.contains(name))
    }

    /// Records a denial; returns how many denials in a row `session` has.
    pub fn record_denial(&self, session: &str) -> u32 {
        self.with(session, |s| {
            s.denials_in_row = s.denials_in_row.saturating_add(1);
            s.denials_in_row
        })
    }

    /// Resets the denial count after something was allowed.
    pub fn record_allowed(&self, session: &str) {
        self.with(session, |s| s.denials_in_row = 0);
    }

    /// Forgets everything about `session`.
    pub fn forget(&self, session: &str) {
        let mut map = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(session);
    }
}
