//! Searching file contents: `grep`.

use std::fs::{self, File};
use std::io::Read;

use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

use crate::listing::compile_glob;
use crate::workspace::{self, Flow, Kind, WalkLimits, WsPath, clamp, io_error, resolve};

/// The most matches one call returns.
const MAX_MATCHES: u64 = 1000;
/// The most context lines on each side of a match.
const MAX_CONTEXT: u64 = 10;
/// The largest per-file size limit a call may ask for.
const MAX_FILE_BYTES: u64 = 16 << 20;
/// Lines longer than this (in bytes) are cut in the results.
const MAX_LINE_BYTES: usize = 500;
/// The most entries a search looks at.
const MAX_VISITED: usize = 50_000;

/// Searches workspace files for lines matching a regular expression (Rust
/// `regex` syntax) or, with `fixed_string`, a literal text. Searches one file
/// or a whole folder tree, optionally only files matching `glob`. Returns
/// each matching line with its number and optional context lines, capped at
/// `max_matches` in all. Files larger than `max_file_size_bytes`, binary
/// files and hidden entries (unless `include_hidden`) are skipped.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Grep {
    /// The regular expression, or the literal text with `fixed_string`.
    pattern: String,
    /// The file or folder to search, relative to the workspace root. Default ".".
    path: Option<String>,
    /// Treat `pattern` as literal text, not a regex. Default: false.
    #[serde(default)]
    fixed_string: bool,
    /// Match regardless of case. Default: false.
    #[serde(default)]
    case_insensitive: bool,
    /// Lines of context to include before each match. Default 0, at most 10.
    #[serde(default)]
    context_before: u64,
    /// Lines of context to include after each match. Default 0, at most 10.
    #[serde(default)]
    context_after: u64,
    /// The most matching lines to return in all. Default 100, at most 1000.
    max_matches: Option<u64>,
    /// Skip files larger than this many bytes. Default 1048576 (1 MiB), at
    /// most 16 MiB.
    max_file_size_bytes: Option<u64>,
    /// Only search files matching this glob: matched against the file name
    /// when it has no `/` (e.g. `*.rs`), else against the path relative to
    /// `path` (e.g. `src/**/*.rs`).
    glob: Option<String>,
    /// Search entries whose name starts with a dot. Default: false.
    #[serde(default)]
    include_hidden: bool,
}

/// One matching line.
#[derive(Serialize)]
pub(crate) struct Match {
    /// The file, relative to the workspace root.
    path: String,
    /// The 1-based line number.
    line_number: usize,
    /// The matching line (cut past 500 bytes).
    line: String,
    /// The lines before it, oldest first (only with `context_before`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    before: Vec<String>,
    /// The lines after it (only with `context_after`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    after: Vec<String>,
}

/// Search results.
#[derive(Serialize)]
pub(crate) struct GrepResult {
    pattern: String,
    matches: Vec<Match>,
    /// Files searched.
    files_searched: usize,
    /// Files with at least one match.
    files_matched: usize,
    /// Files skipped as larger than the size limit.
    skipped_too_large: Vec<String>,
    /// Files skipped as binary or not UTF-8.
    skipped_binary: usize,
    /// True if the match cap was reached (more matches may exist) or the tree
    /// was too large to search in one call.
    truncated: bool,
}

/// Runs a search.
pub(crate) fn grep(args: Grep) -> Result<GrepResult, ToolError> {
    if args.pattern.is_empty() {
        return Err(ToolError::invalid_arguments("the pattern must not be empty"));
    }
    let regex = compile(&args)?;
    let filter = args.glob.as_deref().map(compile_glob).transpose()?;
    let glob_on_name = args.glob.as_deref().is_some_and(|g| !g.contains('/'));
    let base = resolve(args.path.as_deref().unwrap_or("."))?;
    let meta = fs::metadata(&base.full).map_err(|e| io_error(&base, e))?;
    let mut search = Search {
        regex,
        before: args.context_before.min(MAX_CONTEXT) as usize,
        after: args.context_after.min(MAX_CONTEXT) as usize,
        max_matches: clamp(args.max_matches, 100, MAX_MATCHES) as usize,
        max_file: clamp(args.max_file_size_bytes, 1 << 20, MAX_FILE_BYTES),
        result: GrepResult {
            pattern: args.pattern.clone(),
            matches: Vec::new(),
            files_searched: 0,
            files_matched: 0,
            skipped_too_large: Vec::new(),
            skipped_binary: 0,
            truncated: false,
        },
    };
    if !meta.is_dir() {
        search.file(&base, meta.len());
        return Ok(search.result);
    }
    let limits = WalkLimits {
        max_depth: 64,
        include_hidden: args.include_hidden,
        max_visited: MAX_VISITED,
    };
    let prefix = if base.rel.is_empty() {
        0
    } else {
        base.rel.len() + 1
    };
    let report = workspace::walk(&base, limits, &mut |path, meta, _| {
        if Kind::of(meta) != Kind::File {
            return Flow::Continue;
        }
        if let Some(filter) = &filter {
            let relative = path.rel.get(prefix..).unwrap_or_default();
            let subject = if glob_on_name {
                relative.rsplit('/').next().unwrap_or_default()
            } else {
                relative
            };
            if !filter.is_match(subject) {
                return Flow::Continue;
            }
        }
        search.file(path, meta.len());
        if search.result.truncated {
            Flow::Stop
        } else {
            Flow::Continue
        }
    })?;
    search.result.truncated |= report.hit_visit_cap;
    Ok(search.result)
}

/// Compiles the pattern, with a bounded size so a pathological pattern fails
/// cleanly instead of exhausting the call's memory.
fn compile(args: &Grep) -> Result<Regex, ToolError> {
    let source = if args.fixed_string {
        regex::escape(&args.pattern)
    } else {
        args.pattern.clone()
    };
    RegexBuilder::new(&source)
        .case_insensitive(args.case_insensitive)
        .size_limit(4 << 20)
        .dfa_size_limit(8 << 20)
        .build()
        .map_err(|e| ToolError::invalid_arguments(format!("the pattern is not a valid regex: {e}")))
}

/// A search in progress.
struct Search {
    regex: Regex,
    before: usize,
    after: usize,
    max_matches: usize,
    max_file: u64,
    result: GrepResult,
}

impl Search {
    /// Searches one file of `size` bytes, recording what it finds or skips.
    fn file(&mut self, path: &WsPath, size: u64) {
        if size > self.max_file {
            self.result.skipped_too_large.push(path.shown());
            return;
        }
        let Some(text) = read_text(path, self.max_file) else {
            self.result.skipped_binary += 1;
            return;
        };
        self.result.files_searched += 1;
        let lines: Vec<&str> = text.lines().collect();
        let mut matched = false;
        for (i, line) in lines.iter().enumerate() {
            if !self.regex.is_match(line) {
                continue;
            }
            if self.result.matches.len() >= self.max_matches {
                self.result.truncated = true;
                break;
            }
            matched = true;
            let from = i.saturating_sub(self.before);
            let to = (i + 1 + self.after).min(lines.len());
            self.result.matches.push(Match {
                path: path.shown(),
                line_number: i + 1,
                line: cut(line),
                before: lines[from..i].iter().map(|l| cut(l)).collect(),
                after: lines[i + 1..to].iter().map(|l| cut(l)).collect(),
            });
        }
        if matched {
            self.result.files_matched += 1;
        }
    }
}

/// The file's text, or `None` if it cannot be read, is binary, or is not UTF-8.
fn read_text(path: &WsPath, cap: u64) -> Option<String> {
    let mut bytes = Vec::new();
    File::open(&path.full)
        .ok()?
        .take(cap)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// `line`, cut to [`MAX_LINE_BYTES`] at a character boundary.
fn cut(line: &str) -> String {
    if line.len() <= MAX_LINE_BYTES {
        return line.to_string();
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}
