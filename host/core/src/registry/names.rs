//! # Tool names
//!
//! One rule for every source (built-ins, components, bridged MCP servers):
//! a tool name is 1 to 64 characters from `A-Z a-z 0-9 _ -`
//! ([`is_valid_tool_name`]), the form every model API accepts.
//!
//! Some names are **reserved** ([`reserved`]): the dispatcher's own
//! `tool_search` (lazy mode), which no source may register, and the names
//! of toolhost's built-ins (`exec`, `process`, `run_tools_script`, the
//! `toolhost__` admin tools), which only a built-in may take, whether or not that built-in is
//! enabled: a component or MCP server listing one is refused, never served
//! next to or instead of the real one, and `allow_tool_override` does not
//! lift this.

/// The longest tool name.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// The prefix of toolhost's own administrative tools.
pub const ADMIN_PREFIX: &str = "toolhost__";

/// Names of toolhost's built-ins besides `tool_search`.
const BUILTIN_NAMES: [&str; 3] = ["exec", "process", "run_tools_script"];

/// Whether `name` obeys the tool-name rule `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len()) && name.bytes().all(is_name_byte)
}

/// Whether `b` may appear in a tool name.
pub fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Who may register a reserved name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reserved {
    /// Nobody: the dispatcher answers it itself (`tool_search`).
    Dispatcher,
    /// Built-ins only (`exec`, `process`, `toolhost__*`).
    Builtin,
}

/// Whether `name` is reserved, and for whom.
pub fn reserved(name: &str) -> Option<Reserved> {
    if name == super::lazy::TOOL_SEARCH {
        Some(Reserved::Dispatcher)
    } else if BUILTIN_NAMES.contains(&name) || name.starts_with(ADMIN_PREFIX) {
        Some(Reserved::Builtin)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_the_rule() {
        for ok in ["a", "greet", "list_files", "mcp-x_Y9", &"a".repeat(64)] {
            assert!(is_valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "has space", "dot.name", "ünï", &"a".repeat(65), "semi;colon"] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn reserved_names() {
        assert_eq!(reserved("tool_search"), Some(Reserved::Dispatcher));
        assert_eq!(reserved("exec"), Some(Reserved::Builtin));
        assert_eq!(reserved("toolhost__load_component"), Some(Reserved::Builtin));
        assert_eq!(reserved("greet"), None);
    }
}
