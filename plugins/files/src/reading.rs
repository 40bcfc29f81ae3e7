//! Reading text: `read_file` (a whole file, size-capped) and `code_read` (a
//! bounded window of numbered lines).

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::ToolError;

use crate::workspace::{WsPath, clamp, follow_links, io_error, resolve};

/// `read_file`'s default size cap.
const DEFAULT_READ_BYTES: u64 = 256 << 10;
/// The largest `max_bytes` a `read_file` call may ask for (the result, JSON
/// escaped, must stay under the host's 1 MiB output limit).
pub(crate) const MAX_READ_BYTES: u64 = 512 << 10;
/// The most lines one `code_read` call returns.
const MAX_WINDOW_LINES: u64 = 2000;
/// `code_read` cuts longer lines (in bytes), marking them as cut.
const MAX_LINE_BYTES: usize = 2000;
/// The largest file `code_read` scans (it reads up to the end to count lines).
const MAX_SCAN_BYTES: u64 = 64 << 20;

/// Reads a whole UTF-8 text file from the workspace. Files larger than
/// `max_bytes` are refused with an error giving the size (use `code_read`
/// for a line window of a large file, or `grep` to find lines); binary files
/// are refused too.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadFile {
    /// The file, relative to the workspace root.
    path: String,
    /// The size cap in bytes. Default 262144 (256 KiB), at most 524288.
    max_bytes: Option<u64>,
}

/// A file's text.
#[derive(Serialize)]
pub(crate) struct FileText {
    path: String,
    /// The whole text.
    content: String,
    /// The size in bytes.
    size: u64,
    /// The number of lines.
    total_lines: usize,
}

/// Refuses anything but a regular file.
fn open_file(path: &WsPath) -> Result<(File, u64), ToolError> {
    let meta = fs::metadata(&path.full).map_err(|e| io_error(path, e))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_arguments(format!(
            "{} is a folder: use list_files",
            path.shown()
        )));
    }
    let file = File::open(&path.full).map_err(|e| io_error(path, e))?;
    Ok((file, meta.len()))
}

/// Reads a file.
pub(crate) fn read_file(args: ReadFile) -> Result<FileText, ToolError> {
    let asked = resolve(&args.path)?;
    let path = follow_links(&asked)?;
    let cap = clamp(args.max_bytes, DEFAULT_READ_BYTES, MAX_READ_BYTES);
    let (file, size) = open_file(&path)?;
    if size > cap {
        return Err(too_large(&path, size, cap));
    }
    // Read at most one byte past the cap, in case the file grew meanwhile.
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&path, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_large(&path, bytes.len() as u64, cap));
    }
    let content = text_of(&path, bytes)?;
    Ok(FileText {
        path: asked.shown(),
        size: content.len() as u64,
        total_lines: content.lines().count(),
        content,
    })
}

/// The error for a file over the read cap.
fn too_large(path: &WsPath, size: u64, cap: u64) -> ToolError {
    ToolError::invalid_arguments(format!(
        "{} is {size} bytes, more than read_file's cap of {cap} bytes: read a line window with code_read, or search it with grep",
        path.shown()
    ))
}

/// `bytes` as text.
///
/// # Errors
///
/// `failed` if they contain a NUL byte or are not UTF-8.
pub(crate) fn text_of(path: &WsPath, bytes: Vec<u8>) -> Result<String, ToolError> {
    if bytes.contains(&0) {
        return Err(binary(path));
    }
    String::from_utf8(bytes).map_err(|_| binary(path))
}

fn binary(path: &WsPath) -> ToolError {
    ToolError::failed(format!(
        "{} is not UTF-8 text (it looks binary); use file_info to see its type and size",
        path.shown()
    ))
}

/// Reads a window of lines from a text file: `num_lines` lines starting at
/// line `start_line` (1-based), each with its line number, plus the file's
/// total line count so the next window can be asked for. Works on files too
/// large for `read_file` (up to 64 MiB). Over-long lines are cut; bytes that
/// are not UTF-8 are replaced.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CodeRead {
    /// The file, relative to the workspace root.
    path: String,
    /// The first line to return, 1-based. Default 1.
    start_line: Option<u64>,
    /// How many lines to return. Default 200, at most 2000.
    num_lines: Option<u64>,
}

/// One numbered line.
#[derive(Serialize)]
pub(crate) struct Line {
    /// The 1-based line number.
    number: u64,
    /// The line's text, without its line ending.
    text: String,
    /// True if the line was longer than 2000 bytes and was cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cut: bool,
}

/// A window of lines.
#[derive(Serialize)]
pub(crate) struct LineWindow {
    path: String,
    /// The first line returned (1-based).
    start_line: u64,
    /// The last line returned (0 if none).
    end_line: u64,
    /// The number of lines in the whole file.
    total_lines: u64,
    /// True if lines follow the window.
    has_more: bool,
    lines: Vec<Line>,
}

/// Reads a line window.
pub(crate) fn code_read(args: CodeRead) -> Result<LineWindow, ToolError> {
    let path = follow_links(&resolve(&args.path)?)?;
    let start = args.start_line.unwrap_or(1);
    if start == 0 {
        return Err(ToolError::invalid_arguments(
            "start_line is 1-based: use 1 for the first line",
        ));
    }
    let count = clamp(args.num_lines, 200, MAX_WINDOW_LINES);
    let (file, size) = open_file(&path)?;
    if size > MAX_SCAN_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "{} is {size} bytes, more than code_read's limit of {MAX_SCAN_BYTES}: search it with grep instead",
            path.shown()
        )));
    }
    let mut reader = BufReader::new(file.take(MAX_SCAN_BYTES));
    let mut lines = Vec::new();
    let mut total = 0u64;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_error(&path, e))?;
        if n == 0 {
            break;
        }
        total += 1;
        if total >= start && total < start.saturating_add(count) {
            lines.push(line_of(total, &buf));
        }
    }
    if start > total && !(start == 1 && total == 0) {
        return Err(ToolError::invalid_arguments(format!(
            "start_line {start} is past the end: {} has {total} lines",
            path.shown()
        )));
    }
    let end = if lines.is_empty() {
        0
    } else {
        start + lines.len() as u64 - 1
    };
    Ok(LineWindow {
        path: path.shown(),
        start_line: start,
        end_line: end,
        total_lines: total,
        has_more: end < total,
        lines,
    })
}

/// Line `number`, from its raw bytes (line ending included).
fn line_of(number: u64, raw: &[u8]) -> Line {
    let mut raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let cut = raw.len() > MAX_LINE_BYTES;
    let mut text = String::from_utf8_lossy(&raw[..raw.len().min(MAX_LINE_BYTES)]).into_owned();
    if cut {
        // Cutting may have split a character: drop a trailing replacement.
        if text.ends_with('\u{FFFD}') {
            text.pop();
        }
        text.push('…');
    }
    Line { number, text, cut }
}
