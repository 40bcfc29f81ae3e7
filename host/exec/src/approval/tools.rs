//! # Tool-level approval
//!
//! Operators list `require_approval` glob patterns on tool names (`deploy`,
//! `github.*`, `*_delete`). A call to a matching tool needs approval, and
//! the request shows the arguments exactly as they will be used.

use crate::approval::callback::{ApprovalRequest, Subject};

/// The configured `require_approval` patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolApprovalRules {
    patterns: Vec<String>,
}

impl ToolApprovalRules {
    /// Rules from glob patterns: `*` matches any run of characters, `?` one
    /// character; everything else matches itself.
    pub fn new(patterns: impl IntoIterator<Item = impl Into<String>>) -> ToolApprovalRules {
        ToolApprovalRules {
            patterns: patterns.into_iter().map(Into::into).collect(),
        }
    }

    /// Checks that every pattern can match some tool name: tool names are
    /// 1 to 64 characters from `A-Z a-z 0-9 _ -` (the registry's rule, for
    /// every source), so a pattern with any other character (a `.`, a
    /// space, a `/`) or an empty one would silently never apply.
    ///
    /// # Errors
    ///
    /// The first such pattern, with why it can never match.
    pub fn validate(&self) -> Result<(), String> {
        for p in &self.patterns {
            if p.is_empty() {
                return Err("an empty pattern matches no tool".into());
            }
            if let Some(bad) = p
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*' | '?')))
            {
                return Err(format!(
                    "pattern `{p}` contains {bad:?}, which no tool name can contain (names are 1 to 64 characters from A-Z a-z 0-9 _ -; patterns add * and ?), so it would never apply; bridged MCP tools are named like mcp__SERVER__TOOL"
                ));
            }
            let literal = p.chars().filter(|c| *c != '*').count();
            if literal > 64 {
                return Err(format!(
                    "pattern `{p}` needs more than 64 characters, longer than any tool name"
                ));
            }
        }
        Ok(())
    }

    /// The patterns that match none of `names`.
    pub fn unmatched<'a>(&self, names: impl Iterator<Item = &'a str> + Clone) -> Vec<&str> {
        self.patterns
            .iter()
            .map(String::as_str)
            .filter(|p| !names.clone().any(|n| glob_match(p, n)))
            .collect()
    }

    /// The first pattern matching `tool`, if any.
    pub fn matching(&self, tool: &str) -> Option<&str> {
        self.patterns
            .iter()
            .map(String::as_str)
            .find(|p| glob_match(p, tool))
    }

    /// The approval request for a call of `tool` with `arguments`, or
    /// `None` when no pattern matches. The arguments are shown as pretty
    /// JSON, exactly as they will be passed to the tool.
    pub fn request(
        &self,
        session_id: &str,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Option<ApprovalRequest> {
        let pattern = self.matching(tool)?.to_string();
        let pretty = serde_json::to_string_pretty(arguments).unwrap_or_else(|_| arguments.to_string());
        Some(ApprovalRequest {
            session_id: session_id.to_string(),
            summary: format!("tool `{tool}` matches require_approval pattern `{pattern}`"),
            subject: Subject::ToolCall {
                tool: tool.to_string(),
                arguments: pretty,
                pattern,
            },
        })
    }
}

pub use toolhost_core::text::glob_match;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("deploy", "deploy"));
        assert!(glob_match("github.*", "github.create_issue"));
        assert!(glob_match("*_delete", "file_delete"));
        assert!(glob_match("a?c*", "abcdef"));
        assert!(!glob_match("github.*", "gitlab.x"));
        assert!(!glob_match("deploy", "deploy2"));
        assert!(glob_match("*", ""));
    }

    #[test]
    fn request_shows_pretty_arguments() {
        let rules = ToolApprovalRules::new(["deploy*"]);
        let args = serde_json::json!({"env": "prod", "force": true});
        let req = rules.request("s1", "deploy_service", &args).expect("matches");
        let Subject::ToolCall { arguments, .. } = &req.subject else {
            panic!("tool subject")
        };
        assert_eq!(arguments, &serde_json::to_string_pretty(&args).expect("json"));
        assert!(rules.request("s1", "read_file", &args).is_none());
    }
}
