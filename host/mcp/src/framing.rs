//! # JSON-RPC framing on stdio: every request gets an answer
//!
//! rmcp's line codec drops a line it cannot turn into a typed MCP message,
//! without a word, and a client whose request was dropped waits forever.
//! [`GuardedStdio`] reads the lines itself and hands rmcp only messages
//! rmcp will take; anything else that carries a readable `id` is answered
//! at once with the error JSON-RPC 2.0 names, echoing that id:
//!
//! | line | answer |
//! |---|---|
//! | not UTF-8, or not JSON | `-32700` parse error (the id when it can still be read, else `null`) |
//! | a batch (MCP 2025-06-18 has none) | `-32600` for each request in it |
//! | not an object, `jsonrpc` other than `"2.0"`, no `method` (and not a response), a `method` or `id` of the wrong type | `-32600` invalid request |
//! | a known method whose `params` do not fit | `-32602` invalid params |
//! | longer than [`MAX_LINE_BYTES`] | `-32600` (the rest of the line is discarded) |
//!
//! Notifications never get answers (JSON-RPC forbids them); a bad one is
//! logged and dropped. Unknown methods reach rmcp, which answers `-32601`.
//!
//! The buffers are bounded: a line is kept up to [`MAX_LINE_BYTES`], and
//! at most [`MAX_IN_FLIGHT`] requests are read and not yet answered, so a
//! client that sends faster than it reads its answers (or never reads
//! them) stalls its own input instead of filling the server's memory. On
//! Linux, `serve_stdio` makes stdin's and stdout's pipes hold
//! [`STDIO_PIPE_BYTES`] each (kernel memory, bounded as well), so that
//! large requests and answers pass without a wake-up per 64 KiB.
//!
//! Over streamable HTTP a POST body gets the same answers: HTTP 400 with
//! the same JSON-RPC error (413 past the size limit) instead of rmcp's
//! bare 415. There only the envelope of a body is read first
//! (`well_formed_envelope`); rmcp reads a well-formed one whole, and
//! [`classify`] reads a body whole only when its envelope is malformed or
//! rmcp refused it (see [`http`](super::http)).
//!
//! Written here rather than taken from a crate: the check must be rmcp's
//! own parse (so that what passes is exactly what rmcp accepts), and the
//! answers must share rmcp's writer.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

/// The longest line read; a longer one is answered with `-32600` and
/// discarded.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// How much of an oversized or unparsable line is searched for its `id`.
const ID_SCAN_BYTES: usize = 4096;

const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;
/// A server error (JSON-RPC's range for them): the server cannot take the
/// request now, and the client may retry later.
pub(crate) const SERVER_BUSY: i64 = -32000;

/// What one line is.
#[derive(Debug)]
pub enum Line {
    /// A message rmcp takes.
    Message(Box<ClientJsonRpcMessage>),
    /// Nothing to do (a blank line, a bad notification).
    Skip,
    /// Not for rmcp: this answer (a JSON-RPC error, or an array of them for
    /// a batch) goes back to the client.
    Answer(Value),
}

/// Classifies one line (without its newline) as the module documentation
/// describes.
pub fn classify(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let Ok(text) = simdutf8::basic::from_utf8(line) else {
        let lossy = String::from_utf8_lossy(line);
        let id = serde_json::from_str::<Value>(&lossy)
            .ok()
            .and_then(|v| v.get("id").cloned())
            .or_else(|| scan_id(&lossy));
        return answer(id, PARSE_ERROR, "Parse error: the message is not valid UTF-8");
    };
    // The common case, a request rmcp takes, is read once: rmcp's request
    // type itself requires what `single` checks (`jsonrpc` "2.0", an `id`
    // that is a string or an integer, a string `method`). Any other object
    // (a notification or a response, whose stray fields rmcp ignores; what
    // rmcp refuses) is checked as below. Not tried on anything else: serde
    // would also read a struct from an array. Read by toolhost-json's
    // reader (serde_json's answer exactly; its strings, a tool's arguments,
    // scanned 64 bytes a step where serde_json takes 8).
    let object = text.trim_start().starts_with('{');
    let mut parsed = match object.then(|| toolhost_json::from_str::<ClientJsonRpcMessage>(text)) {
        Some(Ok(message @ JsonRpcMessage::Request(_))) => return Line::Message(Box::new(message)),
        other => other,
    };
    // Then without building a `Value` of the message (whose strings, a
    // tool's arguments, would be copied only to be dropped): `Envelope`
    // reads the fields the checks need and skips the rest. Only a message
    // rmcp takes is answered this way; anything else (a duplicate field;
    // nesting past serde_json's depth limit, which skipping does not apply)
    // goes the general way below and gets the same answer as ever.
    if object
        && let Ok(envelope) = toolhost_json::from_str::<Envelope>(text)
        && let Line::Message(message) = single(text, &envelope, parsed.take())
    {
        return Line::Message(message);
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return answer(scan_id(text), PARSE_ERROR, &format!("Parse error: {e}")),
    };
    match value {
        Value::Array(items) => batch(&items),
        Value::Object(ref map) => single(
            text,
            &Envelope {
                jsonrpc: map.get("jsonrpc").cloned(),
                id: map.get("id").cloned(),
                method: map.get("method").cloned(),
                result: map.get("result").map(|_| IgnoredAny),
                error: map.get("error").map(|_| IgnoredAny),
            },
            parsed,
        ),
        _ => answer(
            None,
            INVALID_REQUEST,
            "Invalid Request: a message must be a JSON object",
        ),
    }
}

/// The fields of a JSON-RPC message that [`classify`] checks; the rest of
/// the message is skipped, not copied. A field that is present with
/// `null` is `Some(Value::Null)` (absent is `None`), as `Value::get` sees it.
#[derive(serde::Deserialize)]
pub(crate) struct Envelope {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    pub(crate) method: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    error: Option<IgnoredAny>,
}

impl Envelope {
    /// The answer to a message whose envelope is malformed (an `id` that is
    /// not a string or a number, `jsonrpc` other than "2.0", no string
    /// `method` in a request or notification); `None` if it is well-formed.
    fn refusal(&self) -> Option<Line> {
        let id = self.id.clone();
        if !matches!(&id, None | Some(Value::String(_)) | Some(Value::Number(_))) {
            return Some(answer(
                None,
                INVALID_REQUEST,
                "Invalid Request: `id` must be a string or a number",
            ));
        }
        if self.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
            return Some(answer(
                id,
                INVALID_REQUEST,
                "Invalid Request: `jsonrpc` must be \"2.0\"",
            ));
        }
        match &self.method {
            Some(Value::String(_)) => None,
            None if self.is_response() => None,
            None => Some(answer(id, INVALID_REQUEST, "Invalid Request: no `method`")),
            Some(_) => Some(answer(
                id,
                INVALID_REQUEST,
                "Invalid Request: `method` must be a string",
            )),
        }
    }

    fn is_response(&self) -> bool {
        self.result.is_some() || self.error.is_some()
    }

    /// Whether the message is a request or notification of `method`.
    pub(crate) fn is(&self, method: &str) -> bool {
        self.method.as_ref().and_then(Value::as_str) == Some(method)
    }
}

/// The envelope of `body`, one JSON-RPC message, if it is well-formed:
/// UTF-8, an object, and fields that [`classify`] would not refuse. Read
/// without the rest of the message (a tool's arguments are skipped, not
/// copied): what an HTTP body needs before rmcp reads it whole. `None`:
/// [`classify`] says what is wrong, if anything is.
pub(crate) fn well_formed_envelope(body: &[u8]) -> Option<Envelope> {
    let text = simdutf8::basic::from_utf8(body).ok()?;
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let envelope = toolhost_json::from_str::<Envelope>(text).ok()?;
    envelope.refusal().is_none().then_some(envelope)
}

/// A field that is there, whatever its value (`null` included).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// Checks one message (an object) whose fields the checks need are in
/// `envelope`; `parsed` is rmcp's reading of `text` when it was already
/// made.
fn single(text: &str, envelope: &Envelope, parsed: Option<serde_json::Result<ClientJsonRpcMessage>>) -> Line {
    if let Some(refused) = envelope.refusal() {
        return refused;
    }
    let id = envelope.id.clone();
    let is_response = envelope.is_response();
    match parsed.unwrap_or_else(|| toolhost_json::from_str::<ClientJsonRpcMessage>(text)) {
        Ok(message) => Line::Message(Box::new(message)),
        Err(e) if id.is_some() && !is_response => {
            let method = envelope
                .method
                .as_ref()
                .and_then(Value::as_str)
                .unwrap_or_default();
            answer(
                id,
                INVALID_PARAMS,
                &format!("Invalid params: `{method}` does not take these params ({e})"),
            )
        }
        Err(e) => {
            tracing::debug!("dropped an MCP message that does not parse: {e}");
            Line::Skip
        }
    }
}

fn batch(items: &[Value]) -> Line {
    if items.is_empty() {
        return answer(None, INVALID_REQUEST, "Invalid Request: an empty batch");
    }
    let answers: Vec<Value> = items
        .iter()
        .filter(|item| item.get("method").is_some() && item.get("id").is_some())
        .map(|item| {
            error_object(
                item.get("id").cloned(),
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches are not supported (MCP 2025-06-18 removed them); send one message per line",
            )
        })
        .collect();
    if answers.is_empty() {
        Line::Skip
    } else {
        Line::Answer(Value::Array(answers))
    }
}

/// The answer to a message longer than [`MAX_LINE_BYTES`] whose id could
/// not be read.
pub fn too_long() -> Value {
    error_object(
        None,
        INVALID_REQUEST,
        &format!("Invalid Request: the message is longer than {MAX_LINE_BYTES} bytes"),
    )
}

fn answer(id: Option<Value>, code: i64, message: &str) -> Line {
    Line::Answer(error_object(id, code, message))
}

/// A JSON-RPC error answer; an `id` that is not a string or a number is
/// answered as `null`.
pub(crate) fn error_object(id: Option<Value>, code: i64, message: &str) -> Value {
    let id = id
        .filter(|v| v.is_string() || v.is_number())
        .unwrap_or(Value::Null);
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// The `id` of a message that does not parse as a whole (cut short, or
/// broken after its id): the first `"id": NUMBER` or `"id": "STRING"` in
/// its first [`ID_SCAN_BYTES`] bytes.
fn scan_id(text: &str) -> Option<Value> {
    let head = &text.as_bytes()[..text.len().min(ID_SCAN_BYTES)];
    let mut at = 0;
    while let Some(pos) = find(&head[at..], b"\"id\"") {
        let mut i = at + pos + 4;
        while head.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if head.get(i) == Some(&b':') {
            i += 1;
            while head.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            let rest = &head[i..];
            let end = match rest.first() {
                Some(b'"') => rest[1..]
                    .iter()
                    .position(|b| *b == b'"' || *b == b'\\')
                    .map(|p| p + 2),
                Some(b) if b.is_ascii_digit() || *b == b'-' => Some(
                    rest.iter()
                        .position(|b| !(b.is_ascii_digit() || *b == b'-'))
                        .unwrap_or(rest.len()),
                ),
                _ => None,
            };
            if let Some(end) = end
                && let Ok(v) = serde_json::from_slice::<Value>(&rest[..end])
            {
                return Some(v);
            }
        }
        at += pos + 4;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// How many requests one stdio session may have outstanding (read but not
/// yet answered, the answer written out): past it, no more input is read
/// until an answer has been written. A client that never reads its
/// answers thus holds at most this many in the server, not one per line it
/// sends.
pub const MAX_IN_FLIGHT: usize = 256;

/// How much of stdin one read takes: a 64 KiB pipe's worth, so that a
/// large request is read in one or two system calls, not eight-KiB pieces.
pub const STDIO_READ_BYTES: usize = 64 << 10;

/// How large stdin's and stdout's pipe buffers are made, on Linux (its
/// limit for an unprivileged process, `/proc/sys/fs/pipe-max-size`, is
/// 1 MiB by default).
pub const STDIO_PIPE_BYTES: usize = 1 << 20;

/// Makes stdin's and stdout's pipes hold [`STDIO_PIPE_BYTES`] where they
/// are pipes (Linux only; elsewhere, or when refused, they stay as they
/// are). With the default 64 KiB, a client with a few large requests in
/// flight fills the pipe: each of its writes then waits for the server to
/// read, and each of the server's reads wakes it up again, and the same on
/// the answers' side; wider pipes take that cost away (`BENCHMARKS.md` has
/// the MCP benchmark's figures).
pub(crate) fn widen_stdio_pipes() {
    #[cfg(target_os = "linux")]
    for fd in [rustix::stdio::stdin(), rustix::stdio::stdout()] {
        // Not a pipe (a file, a terminal, a socket): EBADF or EINVAL, and
        // nothing to do.
        if let Err(e) = rustix::pipe::fcntl_setpipe_size(fd, STDIO_PIPE_BYTES) {
            tracing::debug!("stdio pipe left at its size: {e}");
        }
    }
}

/// An rmcp server transport over a line reader and writer (stdin and
/// stdout) that answers malformed requests itself (see the module
/// documentation), bounds the requests in flight ([`MAX_IN_FLIGHT`]), and
/// loses no line when rmcp drops a `receive` half-way (it does, whenever
/// another event wins its `select!`): a partly read line stays in the
/// transport, and answers are written by tasks of their own.
pub struct GuardedStdio<R, W> {
    lines: LineReader<R>,
    writer: Arc<Mutex<W>>,
    /// A free place among the requests in flight, taken before a line is
    /// read, held by the request until its answer is written.
    slot: Option<OwnedSemaphorePermit>,
    slots: Arc<Semaphore>,
    /// The places of the requests in flight, by id.
    outstanding: Arc<std::sync::Mutex<HashMap<RequestId, OwnedSemaphorePermit>>>,
}

impl<R, W> std::fmt::Debug for GuardedStdio<R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GuardedStdio")
    }
}

impl<R, W> GuardedStdio<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `reader` and writing `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        GuardedStdio {
            lines: LineReader::new(reader, MAX_LINE_BYTES),
            writer: Arc::new(Mutex::new(writer)),
            slot: None,
            slots: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            outstanding: Arc::default(),
        }
    }

    /// Reads the rest of one line and classifies it (a line past
    /// [`MAX_LINE_BYTES`] is answered as too long). `None` at the end of
    /// input. Cancel-safe, as [`LineReader::next`].
    async fn read_line(&mut self) -> std::io::Result<Option<Line>> {
        self.lines
            .next(|line| match line {
                RawLine::Whole(bytes) => classify(bytes),
                RawLine::Cut { head } => answer(
                    scan_id(&String::from_utf8_lossy(head)),
                    INVALID_REQUEST,
                    &format!("Invalid Request: the message is longer than {MAX_LINE_BYTES} bytes"),
                ),
            })
            .await
    }

    async fn write(writer: &Mutex<W>, value: &impl serde::Serialize) -> std::io::Result<()> {
        let mut line = toolhost_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut w = writer.lock().await;
        w.write_all(&line).await?;
        w.flush().await
    }
}

/// A line buffer larger than this is freed after its line.
const LARGE_LINE_BYTES: usize = 1 << 20;

/// One line as [`LineReader`] read it.
#[derive(Debug, Clone, Copy)]
pub enum RawLine<'a> {
    /// The whole line, without its newline.
    Whole(&'a [u8]),
    /// A line longer than the reader's bound: its first
    /// `ID_SCAN_BYTES` bytes (the rest was discarded unread into memory).
    Cut {
        /// The line's head.
        head: &'a [u8],
    },
}

/// The one bounded reader of every line-framed peer: MCP clients on
/// stdin ([`GuardedStdio`]), bridged MCP servers' stdout and stderr. A line
/// is kept up to a bound; past it, only its head is kept and the rest is
/// read and dropped, so a peer that never sends a newline costs a bounded
/// buffer, not memory without end.
pub struct LineReader<R> {
    reader: R,
    /// The line being read (its head only, once it is past the bound).
    buffer: Vec<u8>,
    /// Whether the line being read went past the bound.
    cut: bool,
    max: usize,
}

impl<R> std::fmt::Debug for LineReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineReader")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Reads lines of at most `max` bytes from `reader`.
    pub fn new(reader: R, max: usize) -> Self {
        LineReader {
            reader,
            buffer: Vec::new(),
            cut: false,
            max,
        }
    }

    /// Reads the rest of one line and hands it to `take`, returning what
    /// that gives. A line read whole in one piece of the reader's buffer
    /// (the common case: the buffer holds 64 KiB) is handed over where it
    /// lies; any other is gathered into a buffer of at most `max` bytes
    /// first (past that, only its head is kept). `None` at the end of
    /// input. Cancel-safe: what was read stays in `self` for the next call.
    pub async fn next<T>(&mut self, take: impl FnOnce(RawLine<'_>) -> T) -> std::io::Result<Option<T>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                let read_any = !self.buffer.is_empty() || self.cut;
                return Ok(read_any.then(|| self.take_line(take)));
            }
            let newline = memchr::memchr(b'\n', available);
            if let Some(end) = newline
                && end <= self.max
                && self.buffer.is_empty()
                && !self.cut
            {
                let line = take(RawLine::Whole(&available[..end]));
                self.reader.consume(end + 1);
                return Ok(Some(line));
            }
            let consumed = newline.map_or(available.len(), |p| p + 1);
            if !self.cut {
                let room = self.max.saturating_sub(self.buffer.len());
                let chunk = &available[..consumed];
                let end = chunk.strip_suffix(b"\n").unwrap_or(chunk);
                if end.len() > room {
                    // Keep the head (to find the id), drop the rest.
                    self.buffer.truncate(ID_SCAN_BYTES);
                    let fill = ID_SCAN_BYTES.saturating_sub(self.buffer.len()).min(end.len());
                    self.buffer.extend_from_slice(&end[..fill]);
                    self.cut = true;
                } else {
                    self.buffer.extend_from_slice(end);
                }
            }
            self.reader.consume(consumed);
            if newline.is_some() {
                return Ok(Some(self.take_line(take)));
            }
        }
    }

    /// Hands the line gathered in the buffer to `take`, then starts a new
    /// one: the buffer emptied (and given back to the allocator after a
    /// large line).
    fn take_line<T>(&mut self, take: impl FnOnce(RawLine<'_>) -> T) -> T {
        let line = if self.cut {
            take(RawLine::Cut { head: &self.buffer })
        } else {
            take(RawLine::Whole(&self.buffer))
        };
        self.cut = false;
        if self.buffer.capacity() > LARGE_LINE_BYTES {
            self.buffer = Vec::new();
        } else {
            self.buffer.clear();
        }
        line
    }
}

impl<R, W> Transport<RoleServer> for GuardedStdio<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let outstanding = Arc::clone(&self.outstanding);
        async move {
            let written = Self::write(&writer, &item).await;
            if let Some(id) = answered {
                // Written (or failed): the request's place is free.
                outstanding
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.slot.is_none() {
                let slot = Arc::clone(&self.slots).acquire_owned().await.ok()?;
                self.slot = Some(slot);
            }
            let line = match self.read_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!("reading MCP input failed: {e}");
                    return None;
                }
            };
            // From here to the end of the iteration nothing awaits: the
            // line is handled whole, whatever happens to this future.
            let slot = self.slot.take();
            match line {
                Line::Message(message) => {
                    let mut outstanding = self.outstanding.lock().unwrap_or_else(PoisonError::into_inner);
                    match &*message {
                        JsonRpcMessage::Request(request) => {
                            if let Some(slot) = slot {
                                outstanding.insert(request.id.clone(), slot);
                            }
                        }
                        JsonRpcMessage::Notification(notification) => {
                            // A cancelled request may never be answered.
                            if let ClientNotification::CancelledNotification(cancel) =
                                &notification.notification
                                && let Some(id) = &cancel.params.request_id
                            {
                                outstanding.remove(id);
                            }
                        }
                        _ => {}
                    }
                    return Some(*message);
                }
                Line::Skip => {}
                Line::Answer(answer) => {
                    let writer = Arc::clone(&self.writer);
                    tokio::spawn(async move {
                        if let Err(e) = Self::write(&writer, &answer).await {
                            tracing::warn!("writing an MCP error answer failed: {e}");
                        }
                        drop(slot);
                    });
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &str) -> Value {
        match classify(line.as_bytes()) {
            Line::Answer(v) => v,
            other => panic!("{line}: expected an answer, got {other:?}"),
        }
    }

    #[test]
    fn malformed_requests_are_answered_with_their_id() {
        let v = answered(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        let v = answered(r#"{"jsonrpc":"2.0","id":"a"}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!("a"), json!(-32600))
        );
        let v = answered(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":7}"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(3), json!(-32602))
        );
        let v = answered(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"#);
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(9), json!(-32700))
        );
        let v = answered(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]"#);
        assert_eq!(v.as_array().map(Vec::len), Some(1));
        assert_eq!(v[0]["id"], json!(1));
        let bad_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"x\":\"\xff\"}";
        let Line::Answer(v) = classify(bad_utf8) else {
            panic!()
        };
        assert_eq!(
            (v["id"].clone(), v["error"]["code"].clone()),
            (json!(4), json!(-32700))
        );
        assert_eq!(answered("42")["id"], Value::Null);
    }

    #[test]
    fn good_messages_pass() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Line::Message(_)
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"no/such/method"}"#),
            Line::Message(_)
        ));
        assert!(matches!(classify(b"  \r"), Line::Skip));
    }

    /// A request rmcp reads is taken without the envelope's checks (rmcp's
    /// type makes the same ones); everything around that edge is still
    /// answered as the module documentation says.
    #[test]
    fn requests_rmcp_takes_and_those_it_does_not() {
        let call = r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"t","arguments":{"x":"\u00e9"}}}"#;
        let Line::Message(message) = classify(call.as_bytes()) else {
            panic!("a good call is a message")
        };
        assert!(matches!(*message, JsonRpcMessage::Request(_)));
        for (line, id, code) in [
            // No `jsonrpc`, or the wrong one.
            (r#"{"id":1,"method":"ping"}"#, json!(1), -32600),
            (r#"{"jsonrpc":"2.0 ","id":2,"method":"ping"}"#, json!(2), -32600),
            // An `id` that is neither a string nor a number.
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
                Value::Null,
                -32600,
            ),
            // A number rmcp does not take as an id: its params do not fit.
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                json!(1.5),
                -32602,
            ),
            // A `method` that is not a string.
            (r#"{"jsonrpc":"2.0","id":3,"method":7}"#, json!(3), -32600),
            // A duplicate `method`: the last one is read, as JSON parsers do.
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"ping","method":7}"#,
                json!(4),
                -32600,
            ),
        ] {
            let v = answered(line);
            assert_eq!(
                (v["id"].clone(), v["error"]["code"].clone()),
                (id, json!(code)),
                "{line}"
            );
        }
        // A notification with a stray `id` rmcp would ignore is refused.
        let v = answered(r#"{"jsonrpc":"2.0","id":{},"method":"notifications/initialized"}"#);
        assert_eq!(v["error"]["code"], json!(-32600));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Line::Message(_)
        ));
    }

    /// Input that arrives `chunk` bytes per read, whatever the lines.
    struct Trickle {
        input: Vec<u8>,
        at: usize,
        chunk: usize,
    }

    impl tokio::io::AsyncRead for Trickle {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let end = self.input.len().min(self.at + self.chunk.min(buf.remaining()));
            buf.put_slice(&self.input[self.at..end]);
            self.at = end;
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// Lines are read whole however the input is cut (a line in one piece
    /// of the reader's buffer, or gathered from many; a last line without
    /// its newline), and the messages come out in order, a malformed line
    /// answered on the way.
    #[tokio::test]
    async fn lines_are_whole_however_the_input_arrives() {
        let call = |id: u32| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{"s":"{}"}}}}}}"#,
                "é".repeat(id as usize * 40)
            )
        };
        let input = format!(
            "{}\n\r\n{}\r\n{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\n{}",
            call(1),
            call(2),
            call(4)
        );
        for capacity in [1, 2, 7, 64, 300, 64 << 10] {
            for chunk in [1, 3, 16, 333, input.len()] {
                let reader = Trickle {
                    input: input.clone().into_bytes(),
                    at: 0,
                    chunk,
                };
                let (writer, mut answers) = tokio::io::duplex(1 << 16);
                let mut transport =
                    GuardedStdio::new(tokio::io::BufReader::with_capacity(capacity, reader), writer);
                let mut ids = Vec::new();
                while let Some(message) = transport.receive().await {
                    let JsonRpcMessage::Request(request) = message else {
                        panic!("only requests were sent");
                    };
                    let rmcp::model::ClientRequest::CallToolRequest(call) = request.request else {
                        panic!("only calls were sent");
                    };
                    let argument = call.params.arguments.and_then(|a| a.get("s").cloned());
                    ids.push((
                        request.id.to_string(),
                        argument.and_then(|s| s.as_str().map(str::len)),
                    ));
                }
                assert_eq!(
                    ids,
                    [
                        ("1".to_string(), Some(80)),
                        ("2".to_string(), Some(160)),
                        ("4".to_string(), Some(320))
                    ],
                    "capacity {capacity}, {chunk} bytes a read"
                );
                drop(transport);
                let mut written = String::new();
                tokio::io::AsyncReadExt::read_to_string(&mut answers, &mut written)
                    .await
                    .unwrap();
                let answer: Value = serde_json::from_str(written.trim()).unwrap();
                assert_eq!(
                    (answer["id"].clone(), answer["error"]["code"].clone()),
                    (json!(3), json!(-32700)),
                    "capacity {capacity}, {chunk} bytes a read"
                );
            }
        }
    }
}
