//! # Lazy registry mode
//!
//! In [`RegistryMode::Lazy`] the model's tool list holds only
//! [`TOOL_SEARCH`]. `tool_search(query=...)` returns at most
//! [`MAX_RESULTS`] name + description pairs, no schemas, ranked: exact name,
//! name prefix, name substring, description match, then fuzzy name match.
//! `tool_search(name=...)` returns one tool's full schema and activates it
//! for the session, so the next definitions include it. The dispatcher
//! (see [`crate::dispatch`]) holds the per-session activations; this module
//! holds the mode, the ranking and the suggestions.
//!
//! ```
//! use toolhost_core::registry::lazy::{RegistryMode, rank};
//!
//! let tools = [("memory_search", "Search memories"), ("memory", "Write a memory"), ("web", "Fetch pages about memory")];
//! let hits = rank(tools.iter().copied(), "memory");
//! assert_eq!(hits, ["memory", "memory_search", "web"]);
//! assert_eq!(RegistryMode::Lazy.iteration_limit(10), 30);
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::tool::ToolSpec;

/// The name of the lazy mode's meta-tool.
pub const TOOL_SEARCH: &str = "tool_search";

/// The most results one `tool_search(query=...)` returns.
pub const MAX_RESULTS: usize = 15;

/// The longest `tool_search` query, and the longest name suggestions are
/// looked for, in characters. Ranking costs the query's length times each
/// name's (an edit distance), and no tool name is longer than 64
/// characters: a longer query is refused (a client's 16 MiB query held a
/// thread for seconds), a longer unknown name gets no suggestions.
pub const MAX_QUERY_CHARS: usize = 1024;

/// Whether `query` is longer than [`MAX_QUERY_CHARS`].
pub fn query_too_long(query: &str) -> bool {
    query.len() > MAX_QUERY_CHARS && query.chars().count() > MAX_QUERY_CHARS
}

/// How much the agent's iteration limit grows in lazy mode, to account for
/// the discovery round-trips.
pub const LAZY_ITERATION_FACTOR: u32 = 3;

/// Whether the model sees every schema each turn, or discovers tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistryMode {
    /// Every available tool's schema in every turn (the default).
    #[default]
    Full,
    /// Only `tool_search`, plus the tools activated in the session.
    Lazy,
}

impl RegistryMode {
    /// The agent's iteration limit in this mode: `base` in full mode,
    /// tripled in lazy mode.
    pub fn iteration_limit(self, base: u32) -> u32 {
        match self {
            RegistryMode::Full => base,
            RegistryMode::Lazy => base.saturating_mul(LAZY_ITERATION_FACTOR),
        }
    }
}

/// The schema of `tool_search`, saying how many tools can be found.
pub fn tool_search_spec(available: usize) -> ToolSpec {
    ToolSpec::new(
        TOOL_SEARCH,
        format!(
            "Find and activate tools. {available} tools are available but not listed. \
             Call with `query` to list up to {MAX_RESULTS} matching tool names and descriptions; \
             call with `name` to get that tool's full schema and activate it, so that you can call it \
             directly from the next turn on."
        ),
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": MAX_QUERY_CHARS, "description": "Words to look for in tool names and descriptions."},
                "name": {"type": "string", "description": "The exact name of a tool to activate."}
            },
            "additionalProperties": false
        }),
    )
}

/// The names of the tools matching `query`, best first, at most
/// [`MAX_RESULTS`]: exact name, name prefix, name substring, description
/// match, then fuzzy name match (case-insensitive). None for a query
/// longer than [`MAX_QUERY_CHARS`].
pub fn rank<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>, query: &str) -> Vec<&'a str> {
    if query_too_long(query) {
        return Vec::new();
    }
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return Vec::new();
    }
    let words: Vec<&str> = q.split_whitespace().collect();
    let mut scored: Vec<(u8, usize, &str)> = tools
        .into_iter()
        .filter_map(|(name, description)| {
            let n = name.to_lowercase();
            let d = description.to_lowercase();
            let tier = if n == q {
                0
            } else if n.starts_with(&q) {
                1
            } else if n.contains(&q) {
                2
            } else if d.contains(&q) || words.iter().all(|w| d.contains(w) || n.contains(w)) {
                3
            } else if fuzzy(&q, &n) {
                4
            } else {
                return None;
            };
            Some((tier, levenshtein(&q, &n), name))
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(b.2)));
    scored.into_iter().take(MAX_RESULTS).map(|(_, _, n)| n).collect()
}

/// Up to `n` names closest to `name` (for "did you mean" errors): the
/// ranked matches first, then the nearest by edit distance.
pub fn suggest<'a>(names: impl IntoIterator<Item = &'a str> + Clone, name: &str, n: usize) -> Vec<&'a str> {
    if query_too_long(name) {
        return Vec::new();
    }
    let mut out: Vec<&str> = rank(names.clone().into_iter().map(|t| (t, "")), name);
    let mut rest: Vec<(usize, &str)> = names
        .into_iter()
        .filter(|t| !out.contains(t))
        .map(|t| (levenshtein(&name.to_lowercase(), &t.to_lowercase()), t))
        .filter(|(d, t)| *d <= t.len().max(name.len()) / 2)
        .collect();
    rest.sort();
    out.extend(rest.into_iter().map(|(_, t)| t));
    out.truncate(n);
    out
}

/// The `tool_search(query=...)` result: `{"tools": [{"name", "description"}]}`.
pub fn search_result(hits: &[(&str, &str)]) -> Value {
    let tools: Vec<Value> = hits
        .iter()
        .map(|(name, description)| json!({"name": name, "description": description}))
        .collect();
    json!({ "tools": tools })
}

/// Fuzzy: `q` is within half its length in edits of `name`, or
/// its characters (three or more) appear in order in `name`.
fn fuzzy(q: &str, name: &str) -> bool {
    let budget = (q.chars().count() / 2).max(1);
    if levenshtein(q, name) <= budget {
        return true;
    }
    let mut chars = name.chars();
    q.chars().all(|c| chars.any(|n| n == c)) && q.chars().count() >= 3
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_tiers() {
        let tools = [
            ("fetch_page", "Downloads a URL"),
            ("page", "A page"),
            ("pager", "Pages"),
            ("web_page_info", "Info"),
            ("screenshot", "Renders a web page"),
            ("pgae", "typo'd"),
        ];
        assert_eq!(
            rank(tools.iter().copied(), "page"),
            [
                "page",
                "pager",
                "fetch_page",
                "web_page_info",
                "screenshot",
                "pgae"
            ]
        );
    }

    #[test]
    fn at_most_fifteen() {
        let names: Vec<String> = (0..40).map(|i| format!("tool_{i:02}")).collect();
        let hits = rank(names.iter().map(|n| (n.as_str(), "")), "tool");
        assert_eq!(hits.len(), MAX_RESULTS);
    }

    #[test]
    fn suggestions() {
        let names = ["greet", "great_tool", "spin", "busy"];
        assert_eq!(suggest(names.iter().copied(), "gret", 2), ["greet", "great_tool"]);
        assert!(suggest(names.iter().copied(), "zzzzzzzz", 3).is_empty());
    }
}
