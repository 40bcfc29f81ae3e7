//! Requests and results of running a command.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The `PATH` a command gets when neither the allowlist nor the explicit
/// environment provides one (the parent's `PATH` is not inherited).
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// A command to run with `sh -c`.
///
/// Environment: the command gets **nothing** from the parent by default.
/// Only the variables named in `env_passthrough` are copied from the
/// parent, then `env` is applied on top; `PATH` is [`DEFAULT_PATH`] unless
/// one of those sets it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecRequest {
    /// The shell command line.
    pub command: String,
    /// The working directory (the backend's default when `None`).
    pub cwd: Option<PathBuf>,
    /// Names of parent environment variables passed through.
    pub env_passthrough: Vec<String>,
    /// Variables set explicitly.
    pub env: BTreeMap<String, String>,
    /// The longest the command may run; its whole process group is then
    /// killed.
    pub timeout: Duration,
    /// The most bytes of output kept (stdout and stderr together).
    pub output_cap: usize,
}

impl ExecRequest {
    /// A request with no environment, a 60 s timeout and a 64 KiB cap.
    pub fn new(command: impl Into<String>) -> ExecRequest {
        ExecRequest {
            command: command.into(),
            cwd: None,
            env_passthrough: Vec::new(),
            env: BTreeMap::new(),
            timeout: Duration::from_secs(60),
            output_cap: 64 * 1024,
        }
    }

    /// The environment the command gets (see the type docs).
    pub fn environment(&self) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        for name in &self.env_passthrough {
            if let Ok(v) = std::env::var(name) {
                env.insert(name.clone(), v);
            }
        }
        env.extend(self.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        env.entry("PATH".to_string())
            .or_insert_with(|| DEFAULT_PATH.to_string());
        env
    }
}

/// The outcome of a finished command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecResult {
    /// Exit code 0 and not timed out.
    pub ok: bool,
    /// The exit code (`None` when killed by a signal).
    pub exit_code: Option<i32>,
    /// Standard output (cut as described by `truncated`).
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// Whether output was cut to the cap.
    pub truncated: bool,
    /// Wall-clock run time.
    pub duration_ms: u64,
}

/// Errors running a command (a non-zero exit is not an error).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// A program the backend needs is not installed.
    #[error("`{program}` is not installed or not on PATH: {hint}")]
    ProgramMissing {
        /// The program.
        program: String,
        /// What to install.
        hint: String,
    },
    /// The working directory does not exist or is not a directory.
    #[error("working directory {0} does not exist or is not a directory")]
    InvalidCwd(PathBuf),
    /// A sandboxed command asked for a working directory outside its
    /// workspace.
    #[error(
        "working directory {} is outside the sandbox's workspace {}; use a folder inside it",
        cwd.display(),
        workspace.display()
    )]
    OutsideWorkspace {
        /// The directory asked for (resolved).
        cwd: PathBuf,
        /// The workspace.
        workspace: PathBuf,
    },
    /// Starting the process failed.
    #[error("could not start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// No background process with this handle belongs to the session.
    #[error("no background process `{0}` for this session")]
    UnknownHandle(String),
    /// Reading or writing a receipt failed.
    #[error("receipt {path}")]
    Receipt {
        /// The receipt file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}
