//! # A bridged stdio server: the child process and its pipes
//!
//! A bridged MCP server on stdio is a program toolhost starts and speaks to
//! through pipes, and everything it sends is untrusted. [`ChildStdio`] is
//! the transport the bridge gives rmcp in place of rmcp's own child
//! transport, whose line codec has no bound:
//!
//! | what the server does | what toolhost does |
//! |---|---|
//! | writes a line longer than [`MAX_LINE_BYTES`], or never a newline | keeps the line's head only ([`LineReader`]), drops it, logs it |
//! | writes lines that are not MCP messages | drops each one; logs the first few, then one in a thousand |
//! | writes endless lines on stderr | each is cut to [`STDERR_LINE_BYTES`] and logged at `debug` |
//! | closes its stdin | the next write fails (`EPIPE`: SIGPIPE is ignored in toolhost, never the default), the connection ends, the bridge reports the server down |
//! | closes its stdout or exits | the connection ends at once; calls in flight fail |
//! | hangs | the call's `timeout_ms` ends it |
//!
//! The server runs in a process group of its own, killed whole (its own
//! children too) when the connection ends or is dropped.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

use crate::framing::{LineReader, MAX_LINE_BYTES, RawLine, STDIO_READ_BYTES};

/// The longest stderr line kept for the log; the rest is dropped.
pub const STDERR_LINE_BYTES: usize = 4 << 10;

/// How long a closed connection waits for the server to exit before
/// killing it.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The transport to a bridged stdio server (see the module docs).
pub struct ChildStdio {
    server: String,
    child: Child,
    lines: LineReader<BufReader<ChildStdout>>,
    writer: Arc<Mutex<ChildStdin>>,
    dropped: u64,
}

impl std::fmt::Debug for ChildStdio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildStdio")
            .field("server", &self.server)
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl ChildStdio {
    /// Starts `command` as server `server`: stdin and stdout piped to the
    /// transport, stderr read line by line into the log, in a process group
    /// of its own.
    ///
    /// # Errors
    ///
    /// The spawn's error (no such program, say).
    pub fn spawn(server: &str, mut command: Command) -> std::io::Result<ChildStdio> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("the server's pipes were not opened"));
        };
        let name = server.to_string();
        tokio::spawn(async move {
            let mut lines = LineReader::new(BufReader::new(stderr), STDERR_LINE_BYTES);
            while let Ok(Some(())) = lines
                .next(|line| {
                    let (RawLine::Whole(text) | RawLine::Cut { head: text }) = line;
                    let text = String::from_utf8_lossy(&text[..text.len().min(STDERR_LINE_BYTES)]);
                    tracing::debug!(target: "toolhost::mcp::server_stderr", server = %name, "{text}");
                })
                .await
            {}
        });
        Ok(ChildStdio {
            server: server.to_string(),
            child,
            lines: LineReader::new(BufReader::with_capacity(STDIO_READ_BYTES, stdout), MAX_LINE_BYTES),
            writer: Arc::new(Mutex::new(stdin)),
            dropped: 0,
        })
    }

    /// Notes a line that was not an MCP message: logged for the first few,
    /// then once in a thousand, so that a server sending garbage cannot
    /// flood the log.
    fn dropped(&mut self, why: &str) {
        self.dropped += 1;
        if self.dropped <= 3 || self.dropped.is_multiple_of(1000) {
            tracing::warn!(server = %self.server, dropped = self.dropped, "the MCP server sent a line that is not an MCP message ({why}); dropped");
        }
    }

    /// Kills the server's process group (the server and what it started).
    fn kill_group(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(pid) = self
            .child
            .id()
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.start_kill();
    }
}

impl Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut w = writer.lock().await;
            w.write_all(&line).await?;
            w.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let line = self
                .lines
                .next(|line| match line {
                    RawLine::Whole(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => Err(None),
                    RawLine::Whole(bytes) => serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(bytes)
                        .map_err(|e| Some(e.to_string())),
                    RawLine::Cut { .. } => Err(Some(format!("longer than {MAX_LINE_BYTES} bytes"))),
                })
                .await;
            match line {
                Ok(Some(Ok(message))) => return Some(message),
                Ok(Some(Err(None))) => {}
                Ok(Some(Err(Some(why)))) => self.dropped(&why),
                Ok(None) => return None,
                Err(e) => {
                    tracing::warn!(server = %self.server, "reading the MCP server's output failed: {e}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing its stdin asks it to exit; it gets a moment to.
        let _ = self.writer.lock().await.shutdown().await;
        if tokio::time::timeout(EXIT_GRACE, self.child.wait()).await.is_err() {
            self.kill_group();
            let _ = self.child.wait().await;
        }
        Ok(())
    }
}

impl Drop for ChildStdio {
    fn drop(&mut self) {
        // A server that already exited has no group left to signal; one
        // still running is ended with what it started.
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill_group();
        }
    }
}
