//! The `exec` and `process` built-in tools: shell commands behind the
//! approval gate, on a configured backend.
//!
//! Every command goes through [`ApprovalGate::check_command_in`] before it
//! runs, judged in the working directory it will run in; nothing in the
//! arguments can skip it. Secrets are redacted from results by default
//! ([`ExecSettings::redact_output`]; see [`toolhost_core::redact`]). A blocked command returns the seed's
//! `{"status": "blocked", "error": "BLOCKED: … Do NOT retry …"}` object (or
//! `"approval_required"` when the approval callback answers later).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::approval::{ApprovalGate, Decision};
use crate::{Backend, BackgroundManager, Caller, ExecError, ExecRequest};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::redact::Redactor;
use toolhost_core::registry::{BoxFuture, CallContext, TaskSupport, Tool, ToolHints, ToolOutput, ToolSpec};

/// How `exec` runs commands (`[exec]` in the config).
#[derive(Debug, Clone)]
pub struct ExecSettings {
    /// The working directory when a call names none.
    pub default_cwd: Option<PathBuf>,
    /// Parent environment variables passed to commands (nothing else is).
    pub env_passthrough: Vec<String>,
    /// The default and the largest per-call timeout.
    pub default_timeout: Duration,
    /// The largest timeout a call may ask for.
    pub max_timeout: Duration,
    /// Output kept per command (head and tail), in bytes.
    pub output_cap: usize,
    /// Whether secrets are redacted from results before the model sees
    /// them (default: yes). Process receipts are redacted regardless.
    pub redact_output: bool,
}

impl Default for ExecSettings {
    fn default() -> Self {
        ExecSettings {
            default_cwd: None,
            env_passthrough: Vec::new(),
            default_timeout: Duration::from_secs(60),
            max_timeout: Duration::from_secs(600),
            output_cap: 64 << 10,
            redact_output: true,
        }
    }
}

/// The `exec` tool.
#[derive(Debug)]
pub struct ExecTool {
    spec: ToolSpec,
    backend: Arc<dyn Backend>,
    gate: Arc<ApprovalGate>,
    background: Arc<BackgroundManager>,
    settings: ExecSettings,
    /// Redacts results ([`ExecSettings::redact_output`]); built once, from
    /// the passed-through variables' values at start-up.
    redactor: Option<Redactor>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExecArgs {
    command: String,
    cwd: Option<PathBuf>,
    timeout_ms: Option<u64>,
    #[serde(default)]
    background: bool,
}

/// The session a call belongs to, for approvals and background processes.
/// A call outside any session gets a fresh one of its own: it can start
/// processes but never reach another caller's.
fn session_of(ctx: &CallContext) -> String {
    ctx.session_id.as_deref().map_or_else(
        || toolhost_core::dispatch::new_session_id("anonymous"),
        str::to_string,
    )
}

fn exec_error(e: ExecError) -> Error {
    let code = match e {
        ExecError::ProgramMissing { .. } => ErrorCode::Unavailable,
        _ => ErrorCode::ToolFailed,
    };
    Error::new(code, e.to_string()).with_source(e)
}

impl ExecTool {
    /// An `exec` tool running on `backend`, gated by `gate`.
    pub fn new(
        backend: Arc<dyn Backend>,
        gate: Arc<ApprovalGate>,
        background: Arc<BackgroundManager>,
        settings: ExecSettings,
    ) -> ExecTool {
        let spec = ToolSpec::new(
            "exec",
            format!(
                "Runs a shell command ({} backend) and returns ok, exit_code, stdout, stderr, timed_out, truncated and duration_ms. Dangerous commands (recursive deletes, formatting disks, piping downloads into a shell, ...) need the user's approval. With background=true it starts the command and returns a handle for the `process` tool.",
                backend.name()
            ),
            object_schema(
                json!({
                    "command": {"type": "string", "description": "The shell command line."},
                    "cwd": {"type": "string", "description": "Working directory, relative to the configured one (default: the configured one)."},
                    "timeout_ms": {"type": "integer", "minimum": 1, "description": "Time limit; the whole process group is killed past it."},
                    "background": {"type": "boolean", "description": "Start it in the background and return a handle."}
                }),
                &["command"],
            ),
        )
        .with_hints(ToolHints { destructive: Some(true), open_world: Some(true), ..Default::default() })
        // A command can run long: a client that supports tasks may get a task
        // handle, disconnect, and fetch the end later; a cancel kills it.
        .with_task_support(TaskSupport::Optional);
        let redactor = settings
            .redact_output
            .then(|| Redactor::with_env_secrets(&settings.env_passthrough));
        ExecTool {
            spec,
            backend,
            gate,
            background,
            settings,
            redactor,
        }
    }

    async fn run(&self, args: Value, ctx: CallContext) -> Result<ToolOutput> {
        let args: ExecArgs = serde_json::from_value(args)
            .map_err(|e| Error::new(ErrorCode::InvalidArguments, e.to_string()))?;
        let session = session_of(&ctx);
        // One working directory, resolved once, travels to the judge and
        // the backend alike: a relative one asked for is relative to the
        // configured one (the workspace), never to this process's.
        let cwd = match (args.cwd, &self.settings.default_cwd) {
            (Some(asked), Some(base)) => Some(base.join(asked)),
            (asked, base) => asked.or_else(|| base.clone()),
        };
        let cwd_text = cwd.as_ref().map(|c| c.to_string_lossy().into_owned());
        let decision = self
            .gate
            .check_command_with(&session, &args.command, cwd_text.as_deref(), &ctx.waiting)
            .await;
        if let Decision::Block(blocked) = decision {
            return Ok(blocked.into_output());
        }
        let mut timeout = args
            .timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(self.settings.default_timeout);
        timeout = timeout.min(self.settings.max_timeout);
        if let Some(deadline) = ctx.deadline {
            timeout = timeout.min(deadline.saturating_duration_since(std::time::Instant::now()));
        }
        let request = ExecRequest {
            command: args.command,
            cwd,
            env_passthrough: self.settings.env_passthrough.clone(),
            env: Default::default(),
            timeout,
            output_cap: self.settings.output_cap,
        };
        if args.background {
            let handle = self.background.start(&session, &request).map_err(exec_error)?;
            return Ok(ToolOutput::json(&json!({ "handle": handle, "state": "running" })));
        }
        let mut result = self.backend.run(&request).await.map_err(exec_error)?;
        if let Some(redactor) = &self.redactor {
            result.stdout = redactor.redact(&result.stdout);
            result.stderr = redactor.redact(&result.stderr);
        }
        let value = serde_json::to_value(&result).map_err(|e| Error::internal(e.to_string()))?;
        Ok(ToolOutput::json(&value))
    }
}

impl Tool for ExecTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(self.run(arguments, ctx))
    }
}

/// The `process` tool: polls, reads, kills and reads the receipt of the
/// calling session's background processes.
#[derive(Debug)]
pub struct ProcessTool {
    spec: ToolSpec,
    background: Arc<BackgroundManager>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProcessArgs {
    action: String,
    handle: String,
    #[serde(default)]
    offset: u64,
}

impl ProcessTool {
    /// A `process` tool over `background`.
    pub fn new(background: Arc<BackgroundManager>) -> ProcessTool {
        let spec = ToolSpec::new(
            "process",
            "Manages a background command started by exec: action `poll` (running or exited, with the exit code), `read` (output from `offset`; pass the returned next_offset to read only what is new), `kill`, or `receipt` (the final result of a finished process). Only the session that started a process can see it.",
            object_schema(
                json!({
                    "action": {"type": "string", "enum": ["poll", "read", "kill", "receipt"]},
                    "handle": {"type": "string", "description": "The handle exec returned."},
                    "offset": {"type": "integer", "minimum": 0, "description": "For read: where to start."}
                }),
                &["action", "handle"],
            ),
        );
        ProcessTool { spec, background }
    }
}

impl Tool for ProcessTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(async move {
            let args: ProcessArgs = serde_json::from_value(arguments)
                .map_err(|e| Error::new(ErrorCode::InvalidArguments, e.to_string()))?;
            let session = session_of(&ctx);
            let caller = Caller {
                session: &session,
                continues: &ctx.session_continues,
            };
            let bg = &self.background;
            let value = match args.action.as_str() {
                "poll" => serde_json::to_value(bg.poll(caller, &args.handle).map_err(exec_error)?),
                "read" => serde_json::to_value(
                    bg.read_output(caller, &args.handle, args.offset)
                        .map_err(exec_error)?,
                ),
                "kill" => {
                    bg.kill(caller, &args.handle).map_err(exec_error)?;
                    Ok(json!({ "killed": true }))
                }
                "receipt" => serde_json::to_value(bg.receipt(caller, &args.handle).map_err(exec_error)?),
                other => {
                    return Err(Error::new(
                        ErrorCode::InvalidArguments,
                        format!("unknown action {other:?}: use poll, read, kill or receipt"),
                    ));
                }
            };
            let value = value.map_err(|e| Error::internal(e.to_string()))?;
            Ok(ToolOutput::json(&value))
        })
    }
}

/// `{"type": "object", "properties": …, "required": …, "additionalProperties": false}`.
fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}
