//! Finding memories: `memory_search` (ranked) and `memory_list_titles`.

use std::cmp::Reverse;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

use crate::records::tags;
use crate::store::{self, Record};

/// The most results one call returns.
const MAX_LIMIT: u64 = 100;
/// The length of a search result's snippet, in characters.
const SNIPPET_CHARS: usize = 200;

/// Searches memories by words, case-insensitively, over titles, content and
/// tags, and returns the best matches first. A memory matches if it contains
/// at least one of the query's words; matches in the title and tags count
/// more than matches in the content, and the whole query appearing as a
/// phrase counts most. Each result has a snippet of the content around the
/// first match; use memory_get for the full text.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemorySearch {
    /// The words to look for, e.g. "trip to Lisbon".
    query: String,
    /// Only memories with all of these tags.
    #[serde(default)]
    tags: Vec<String>,
    /// The most results. Default 10, at most 100.
    limit: Option<u64>,
}

/// One search result.
#[derive(Serialize)]
pub(crate) struct Hit {
    id: String,
    title: String,
    tags: Vec<String>,
    /// How well it matched (higher is better).
    score: u32,
    /// A part of the content around the first match.
    snippet: String,
    updated_at: String,
}

/// Search results.
#[derive(Serialize)]
pub(crate) struct SearchResults {
    query: String,
    /// The best matches, best first.
    entries: Vec<Hit>,
    /// How many memories matched in all (more than `entries` when limited).
    total_matches: usize,
}

/// The score of `record` for the lowercased `terms` and `phrase`.
fn score(record: &Record, terms: &[String], phrase: &str) -> u32 {
    let title = record.title.to_lowercase();
    let content = record.content.to_lowercase();
    let mut score = 0;
    for term in terms {
        if title.contains(term.as_str()) {
            score += 3;
        }
        if record.tags.iter().any(|t| t == term) {
            score += 3;
        } else if record.tags.iter().any(|t| t.contains(term.as_str())) {
            score += 1;
        }
        // Content counts per occurrence, up to 3.
        score += content.matches(term.as_str()).take(3).count() as u32;
    }
    if terms.len() > 1 {
        if title.contains(phrase) {
            score += 5;
        }
        if content.contains(phrase) {
            score += 3;
        }
    }
    score
}

/// About [`SNIPPET_CHARS`] characters of `content` around the first of
/// `terms` it contains (the start, if none).
fn snippet(content: &str, terms: &[String]) -> String {
    let chars: Vec<char> = content.chars().collect();
    let lower: Vec<char> = content.to_lowercase().chars().collect();
    // Lowercasing can change the number of characters; fall back to the start.
    let first = if lower.len() == chars.len() {
        let lower: String = lower.iter().collect();
        terms
            .iter()
            .filter_map(|t| lower.find(t.as_str()))
            .min()
            .map(|byte| lower[..byte].chars().count())
            .unwrap_or(0)
    } else {
        0
    };
    let start = first.saturating_sub(SNIPPET_CHARS / 4);
    let end = (start + SNIPPET_CHARS).min(chars.len());
    let mut text: String = chars[start.min(end)..end].iter().collect();
    if start > 0 {
        text.insert(0, '…');
    }
    if end < chars.len() {
        text.push('…');
    }
    text
}

/// True if `record` has every tag in `wanted`.
fn has_tags(record: &Record, wanted: &[String]) -> bool {
    wanted.iter().all(|w| record.tags.contains(w))
}

/// Runs a search.
pub(crate) fn memory_search(args: MemorySearch) -> Result<SearchResults, ToolError> {
    let phrase = args.query.trim().to_lowercase();
    let terms: Vec<String> = phrase.split_whitespace().map(str::to_string).collect();
    if terms.is_empty() {
        return Err(ToolError::invalid_arguments(
            "the query must contain a word (use memory_list_titles to see everything)",
        ));
    }
    let phrase = terms.join(" ");
    let wanted = tags(args.tags)?;
    let limit = args.limit.unwrap_or(10).clamp(1, MAX_LIMIT) as usize;
    let (records, _) = store::scan()?;
    let mut scored: Vec<(u32, Record)> = records
        .into_iter()
        .filter(|r| has_tags(r, &wanted))
        .map(|r| (score(&r, &terms, &phrase), r))
        .filter(|(s, _)| *s > 0)
        .collect();
    scored.sort_by_key(|(s, r)| (Reverse(*s), Reverse(r.updated_at.clone()), r.id.clone()));
    let total_matches = scored.len();
    let entries = scored
        .into_iter()
        .take(limit)
        .map(|(score, r)| Hit {
            snippet: snippet(&r.content, &terms),
            id: r.id,
            title: r.title,
            tags: r.tags,
            score,
            updated_at: r.updated_at,
        })
        .collect();
    Ok(SearchResults {
        query: args.query,
        entries,
        total_matches,
    })
}

/// Lists the titles of stored memories, most recently updated first, with
/// their ids and tags, optionally only those with given tags.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryListTitles {
    /// Only memories with all of these tags.
    #[serde(default)]
    tags: Vec<String>,
    /// The most titles to return. Default 100, at most 1000.
    limit: Option<u64>,
}

/// One listed memory.
#[derive(Serialize)]
pub(crate) struct Title {
    id: String,
    title: String,
    tags: Vec<String>,
    updated_at: String,
}

/// A list of titles.
#[derive(Serialize)]
pub(crate) struct Titles {
    entries: Vec<Title>,
    /// How many memories there are (with the tags asked for).
    total: usize,
    /// True if `limit` left some out.
    truncated: bool,
    /// Record files that could not be read (damaged outside this plugin).
    #[serde(skip_serializing_if = "is_zero")]
    unreadable: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Lists titles.
pub(crate) fn memory_list_titles(args: MemoryListTitles) -> Result<Titles, ToolError> {
    let wanted = tags(args.tags)?;
    let limit = args.limit.unwrap_or(100).clamp(1, 1000) as usize;
    let (mut records, unreadable) = store::scan()?;
    records.retain(|r| has_tags(r, &wanted));
    records.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
    let total = records.len();
    let entries = records
        .into_iter()
        .take(limit)
        .map(|r| Title {
            id: r.id,
            title: r.title,
            tags: r.tags,
            updated_at: r.updated_at,
        })
        .collect();
    Ok(Titles {
        entries,
        total,
        truncated: total > limit,
        unreadable,
    })
}
