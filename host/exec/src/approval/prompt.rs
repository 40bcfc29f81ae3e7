//! # The interactive CLI prompt
//!
//! [`CliPrompt`] asks on a terminal: it writes the request and reads one of
//! `o`nce, `s`ession, `a`lways, `d`eny. It works over any `BufRead`/`Write`
//! pair (so it is testable); [`CliPrompt::stdio`] refuses to be created when
//! standard input is not a terminal, so a headless run fails closed.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::{Arc, Mutex};

use crate::approval::callback::{ApprovalCallback, ApprovalOutcome, ApprovalRequest, BoxFuture, Choice};

/// The error of creating a prompt without a terminal.
#[derive(Debug, thiserror::Error)]
#[error("there is no terminal to ask on; an interactive approval prompt cannot be used")]
pub struct NotATerminal;

/// Reads approval choices from `R` and writes questions to `W`.
#[derive(Debug)]
pub struct CliPrompt<R, W> {
    io: Arc<Mutex<(R, W)>>,
}

impl<R: BufRead + Send + 'static, W: Write + Send + 'static> CliPrompt<R, W> {
    /// A prompt over the given reader and writer.
    pub fn new(reader: R, writer: W) -> CliPrompt<R, W> {
        CliPrompt {
            io: Arc::new(Mutex::new((reader, writer))),
        }
    }

    /// Asks synchronously: shows the request and reads choices until a
    /// valid one (at most 3 tries); end of input or an I/O error is
    /// [`ApprovalOutcome::Unavailable`], which the gate treats as a denial.
    pub fn ask(&self, request: &ApprovalRequest) -> ApprovalOutcome {
        let mut guard = self.io.lock().unwrap_or_else(|e| e.into_inner());
        let (reader, writer) = &mut *guard;
        if write!(writer, "{}", request.display_text()).is_err() {
            return ApprovalOutcome::Unavailable;
        }
        for _ in 0..3 {
            let _ = write!(writer, "Allow? [o]nce / [s]ession / [a]lways / [d]eny: ");
            let _ = writer.flush();
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return ApprovalOutcome::Unavailable,
                Ok(_) => {}
            }
            if let Some(choice) = parse_choice(&line) {
                return ApprovalOutcome::Decided(choice);
            }
            let _ = writeln!(writer, "Please answer o, s, a or d.");
        }
        ApprovalOutcome::Decided(Choice::Deny)
    }
}

impl CliPrompt<std::io::BufReader<std::io::Stdin>, std::io::Stderr> {
    /// A prompt on standard input and standard error.
    ///
    /// # Errors
    /// [`NotATerminal`] when standard input is not a terminal.
    pub fn stdio() -> Result<Self, NotATerminal> {
        if !std::io::stdin().is_terminal() {
            return Err(NotATerminal);
        }
        Ok(CliPrompt::new(
            std::io::BufReader::new(std::io::stdin()),
            std::io::stderr(),
        ))
    }
}

impl CliPrompt<std::io::BufReader<std::fs::File>, std::fs::File> {
    /// A prompt on the process's controlling terminal (`/dev/tty`), for
    /// servers whose standard input and output carry something else (the
    /// MCP protocol of `serve --stdio`, for instance).
    ///
    /// # Errors
    /// [`NotATerminal`] when the process has no controlling terminal (a
    /// daemon, a container without a TTY, a child started with `setsid`).
    pub fn tty() -> Result<Self, NotATerminal> {
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open("/dev/tty")
        };
        let reader = open().map_err(|_| NotATerminal)?;
        if !reader.is_terminal() {
            return Err(NotATerminal);
        }
        let writer = open().map_err(|_| NotATerminal)?;
        Ok(CliPrompt::new(std::io::BufReader::new(reader), writer))
    }
}

/// Parses a typed choice (`o`, `once`, `s`, `session`, `a`, `always`, `d`,
/// `deny`, `n`, `no`; any case). Anything else is `None`.
pub fn parse_choice(line: &str) -> Option<Choice> {
    match line.trim().to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => Some(Choice::Once),
        "s" | "session" => Some(Choice::Session),
        "a" | "always" => Some(Choice::Always),
        "d" | "deny" | "n" | "no" => Some(Choice::Deny),
        _ => None,
    }
}

impl<R: BufRead + Send + 'static, W: Write + Send + 'static> ApprovalCallback for CliPrompt<R, W> {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        let me = CliPrompt {
            io: Arc::clone(&self.io),
        };
        let req = request.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || me.ask(&req))
                .await
                .unwrap_or(ApprovalOutcome::Unavailable)
        })
    }
}
