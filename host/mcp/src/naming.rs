//! # Names of bridged tools
//!
//! A remote tool `TOOL` of server `SERVER` is registered as
//! `mcp__SERVER__TOOL` (or `PREFIX` + `TOOL` when the server has a
//! `prefix`), sanitized to the tool-name rule `^[A-Za-z0-9_-]{1,64}$`: every
//! other character becomes `_` and the name is cut at 64 characters.
//! Sanitizing can make two names equal; [`NameTable`] catches that and
//! reports it, naming both remote tools, instead of dropping or replacing one.
//!
//! ```
//! use toolhost_mcp::naming::{bridged_name, NameTable};
//!
//! assert_eq!(bridged_name("fs", None, "read.file"), "mcp__fs__read_file");
//! let mut names = NameTable::new("fs");
//! names.insert("mcp__fs__read_file", "read.file").unwrap();
//! assert!(names.insert("mcp__fs__read_file", "read/file").is_err());
//! ```

use std::collections::HashMap;

use toolhost_core::error::{Error, ErrorCode, Result};

use toolhost_core::registry::names::is_name_byte;
pub use toolhost_core::registry::names::{MAX_TOOL_NAME_LEN, is_valid_tool_name};

/// Replaces every character outside `A-Za-z0-9_-` with `_` and cuts the
/// result at 64 characters. An empty input gives `_`.
pub fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii() && is_name_byte(c as u8) {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOOL_NAME_LEN)
        .collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// The registry name of remote tool `tool` of server `server`: `prefix` (by
/// default `mcp__SERVER__`) followed by `tool`, sanitized.
pub fn bridged_name(server: &str, prefix: Option<&str>, tool: &str) -> String {
    match prefix {
        Some(prefix) => sanitize(&format!("{prefix}{tool}")),
        None => sanitize(&format!("mcp__{server}__{tool}")),
    }
}

/// The bridged names of one server's tool list, for collision detection.
#[derive(Debug)]
pub struct NameTable {
    server: String,
    by_name: HashMap<String, String>,
}

impl NameTable {
    /// An empty table for server `server` (named in errors).
    pub fn new(server: impl Into<String>) -> Self {
        NameTable {
            server: server.into(),
            by_name: HashMap::new(),
        }
    }

    /// Records that bridged name `name` stands for remote tool `remote`.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DuplicateTool`] if another remote tool already has that
    /// bridged name; the message names both.
    pub fn insert(&mut self, name: &str, remote: &str) -> Result<()> {
        if let Some(previous) = self.by_name.get(name) {
            return Err(Error::new(
                ErrorCode::DuplicateTool,
                format!(
                    "MCP server {:?} has tools {previous:?} and {remote:?}, which both become {name:?} \
                     after sanitizing to the tool-name rule; rename one on the server, or keep only \
                     one with enabled_tools / disabled_tools",
                    self.server
                ),
            ));
        }
        self.by_name.insert(name.to_string(), remote.to_string());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_and_truncates() {
        assert_eq!(sanitize("a b/c"), "a_b_c");
        assert_eq!(sanitize("é"), "_");
        assert_eq!(sanitize(""), "_");
        let long = bridged_name("server", None, &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert!(is_valid_tool_name(&long));
        assert_eq!(bridged_name("s", Some("ev_"), "echo"), "ev_echo");
    }

    #[test]
    fn truncation_collision_is_an_error() {
        let mut table = NameTable::new("s");
        let a = bridged_name("s", None, &format!("{}a", "x".repeat(70)));
        let b = bridged_name("s", None, &format!("{}b", "x".repeat(70)));
        table.insert(&a, "a").unwrap();
        let err = table.insert(&b, "b").unwrap_err();
        assert_eq!(err.code(), ErrorCode::DuplicateTool);
    }
}
