//! The result of `run_tools_script`, from what the interpreter reported (or
//! from how its instance ended).
//!
//! - success: `{"ok": true, "output": …, "result": …}`;
//! - failure: `{"ok": false, "error_code": "codemode:…", "error": …,
//!   "output": <partial output>}`;
//!
//! both with `tool_errors` (`[{"tool", "error_code"}]`) when nested calls
//! failed. Output and value are each cut to `max_output_chars`, keeping
//! their start and end around a marker ([`cut_middle`]).

use serde_json::{Value, json};

use crate::caller::ToolFailure;

/// The codes a failed script reports.
pub mod codes {
    /// The script does not parse.
    pub const SYNTAX_ERROR: &str = "codemode:syntax_error";
    /// It ran past `timeout_seconds` (or the interpreter's instruction budget).
    pub const TIMEOUT: &str = "codemode:timeout";
    /// It used more than `max_memory_mb`.
    pub const MEMORY_LIMIT: &str = "codemode:memory_limit";
    /// It raised an exception it did not catch.
    pub const SCRIPT_ERROR: &str = "codemode:script_error";
    /// The interpreter itself failed (a crash of the sandboxed instance).
    pub const SANDBOX_FAILED: &str = "codemode:sandbox_failed";
    /// The call past `max_tool_calls` (in `tool_errors`, and the text of
    /// the `ValueError` the script gets).
    pub const TOOL_CALL_LIMIT: &str = "codemode:tool_call_limit";
}

/// `text` cut to at most `max` characters plus a marker, keeping its start
/// and end; `omitted` characters were already dropped from its middle.
///
/// ```
/// use toolhost_codemode::report::cut_middle;
/// assert_eq!(cut_middle("short", 10, 0), "short");
/// assert_eq!(cut_middle("abcdefghij", 4, 0), "ab\n…[6 characters omitted]…\nij");
/// ```
pub fn cut_middle(text: &str, max: usize, omitted: u64) -> String {
    let total = text.chars().count();
    if total <= max && omitted == 0 {
        return text.to_string();
    }
    let keep = total.min(max);
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let dropped = (total - keep) as u64 + omitted;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(total - tail).collect();
    format!("{start}\n…[{dropped} characters omitted]…\n{end}")
}

/// The script's value within `max` characters: itself when its JSON text
/// fits, else that text cut (a string).
pub(crate) fn cut_value(value: Value, max: usize) -> Value {
    let text = value.to_string();
    if text.chars().count() <= max {
        value
    } else {
        Value::String(cut_middle(&text, max, 0))
    }
}

/// A successful run's result.
pub(crate) fn success(output: String, result: Value, failures: &[ToolFailure]) -> Value {
    let mut out = json!({"ok": true, "output": output, "result": result});
    add_failures(&mut out, failures);
    out
}

/// A failed run's result.
pub(crate) fn failure(code: &str, error: &str, output: String, failures: &[ToolFailure]) -> Value {
    let mut out = json!({"ok": false, "error_code": code, "error": error, "output": output});
    add_failures(&mut out, failures);
    out
}

fn add_failures(out: &mut Value, failures: &[ToolFailure]) {
    if !failures.is_empty() {
        out["tool_errors"] = json!(failures);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_keep_both_ends() {
        let text: String = ('a'..='z').collect();
        let cut = cut_middle(&text, 10, 0);
        assert!(cut.starts_with("abcde\n…[16 characters omitted]…\n"), "{cut}");
        assert!(cut.ends_with("vwxyz"), "{cut}");
        assert_eq!(cut_middle("abc", 10, 5), "ab\n…[5 characters omitted]…\nc");
        assert_eq!(cut_middle("ééé", 2, 0), "é\n…[1 characters omitted]…\né");
        assert_eq!(cut_value(json!([1, 2]), 10), json!([1, 2]));
        assert_eq!(
            cut_value(json!("x".repeat(20)), 6),
            json!("\"xx\n…[16 characters omitted]…\nxx\"")
        );
    }
}
