//! The `run_tools_script` built-in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_core::dispatch::PausingClock;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::limits::LimitsOverride;
use toolhost_core::registry::{
    BoxFuture, CallContext, Registration, TaskSupport, Tool, ToolCallerHandle, ToolHints, ToolOutput,
    ToolSpec,
};
use toolhost_core::text::glob_match;
use toolhost_runtime::{Engine, LoadOptions, LoadedComponent, ToolCalls};

use crate::caller::ScriptCaller;
use crate::config::CodemodeConfig;
use crate::report::{self, codes, cut_middle, cut_value};
use crate::signature::{python_name, signature_list};

/// The tool's name (reserved for built-ins: no plugin or MCP server can
/// take it, and the interpreter component, whose own tool has this name,
/// cannot be registered as an ordinary plugin).
pub const NAME: &str = "run_tools_script";

/// Tools a script never calls, whatever the session sees: the seed's
/// delegation tools (an application may register them), lazy mode's
/// search, and `run_tools_script` itself.
pub const NEVER_CALLABLE: &[&str] = &[
    NAME,
    "tool_search",
    "delegate",
    "spawn_task",
    "fetch_agent_info",
    "list_tasks",
    "get_task",
    "cancel_task",
];

/// How long, in all, a script's clock may stand still for approvals before
/// its instance is stopped anyway (each approval is also bounded by the
/// approval gate's own timeout).
pub const MAX_APPROVAL_PAUSE: Duration = Duration::from_secs(3600);

/// Linear memory the interpreter needs besides the script's heap: its
/// code's data, the parsed script, the host's strings.
pub const INTERPRETER_OVERHEAD_MB: u64 = 64;

/// Fuel per second of `timeout_seconds`: about twice what a tight loop
/// burns (see `toolhost_core::limits`), so the clock, not the fuel, ends a
/// runaway script on a busy machine; both end as `codemode:timeout`.
pub const FUEL_PER_SECOND: u64 = 50_000_000_000;

const DESCRIPTION: &str = "Run a short Python script that calls other tools, combines and filters their results, and returns only what matters: nested results stay out of your context. Call tools as `await tools.NAME(key=value)` (keyword arguments only), run independent calls at once with `asyncio.gather`, print with `print`, and return by ending on an expression or with a top-level `return`. A failed call raises ValueError (rejected arguments), PermissionError (refused approval) or RuntimeError; catch it to go on. The sandbox has no files, network or environment: only the tools below. Result: {\"ok\": true, \"output\", \"result\"} or {\"ok\": false, \"error_code\", \"error\", \"output\"}.";

/// `run_tools_script`: runs a Python script in a fresh instance of the
/// codemode interpreter component (Monty), whose tool calls go through the
/// dispatch pipeline in the calling session.
pub struct RunToolsScript {
    spec: ToolSpec,
    component: Arc<LoadedComponent>,
    config: CodemodeConfig,
}

impl std::fmt::Debug for RunToolsScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunToolsScript")
            .field("component", &self.component.hash())
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl RunToolsScript {
    /// Loads the interpreter component at `path` into `engine` for
    /// `config`: with [`ToolCalls::Caller`] (its calls are admitted by the
    /// script's own caller, see [`RunToolsScript::callable`]), its stdout
    /// kept (a stopped script's partial output), and limits derived from
    /// `config`. The component is never registered itself.
    ///
    /// # Errors
    ///
    /// `config` when `config` is invalid; as [`Engine::load_file`] (a
    /// missing file says to run `plugins/build codemode`); `invalid_component`
    /// when the component has no `run_tools_script` tool.
    pub async fn load(engine: &Engine, path: &Path, config: CodemodeConfig) -> Result<RunToolsScript> {
        config.validate()?;
        let options = LoadOptions {
            expected_hash: config.hash,
            limits: instance_limits(&config),
            tool_calls: ToolCalls::Caller,
            keep_stdout: true,
            ..LoadOptions::default()
        };
        let component = engine.load_file(path, options).await.map_err(|e| {
            let hint = if e.code() == ErrorCode::Io {
                " (build it with `plugins/build codemode`, or set [tools.codemode] plugin)"
            } else {
                ""
            };
            e.context(format_args!("the codemode interpreter {}{hint}", path.display()))
        })?;
        if !component.tools().iter().any(|t| t.name == NAME) {
            return Err(Error::new(
                ErrorCode::InvalidComponent,
                format!(
                    "{} is not the codemode interpreter: it has no `{NAME}` tool",
                    path.display()
                ),
            ));
        }
        let parameters = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["code"],
            "properties": {
                "code": {"type": "string", "minLength": 1, "description": "The Python script."}
            }
        });
        let hints = ToolHints {
            open_world: Some(true),
            ..ToolHints::default()
        };
        Ok(RunToolsScript {
            // A script can run long: a client that supports tasks may get a
            // task handle and fetch its end later.
            spec: ToolSpec::new(NAME, DESCRIPTION, parameters)
                .with_hints(hints)
                .with_task_support(TaskSupport::Optional),
            component,
            config,
        })
    }

    /// The interpreter component.
    pub fn component(&self) -> &Arc<LoadedComponent> {
        &self.component
    }

    /// The tool's registration: its description lists a signature per tool
    /// a script of the session may call (see [`RunToolsScript::callable`]),
    /// capped at about 6 000 characters.
    pub fn registration(self) -> Registration {
        let exclude = self.config.exclude.clone();
        Registration::new(self).patch_schema(move |spec, visible| {
            let callable = callable_of(visible.iter().copied(), &exclude);
            let mut spec = spec.clone();
            spec.description = if callable.is_empty() {
                format!(
                    "{}\n\nNo tool is callable from a script in this session.",
                    spec.description
                )
            } else {
                format!(
                    "{}\n\nCallable tools:\n{}",
                    spec.description,
                    signature_list(&callable)
                )
            };
            spec
        })
    }

    /// Which of `visible` (the tools a session sees) a script may call,
    /// with their Python names, in name order: all but
    /// [`NEVER_CALLABLE`] and the `exclude` patterns. When two tools map to
    /// the same Python name, the first in name order keeps it and the other
    /// is not callable.
    pub fn callable<'a>(
        &self,
        visible: impl IntoIterator<Item = &'a ToolSpec>,
    ) -> Vec<(String, &'a ToolSpec)> {
        callable_of(visible, &self.config.exclude)
    }

    async fn run(&self, arguments: Value, ctx: CallContext) -> Result<ToolOutput> {
        let code = arguments.get("code").and_then(Value::as_str).unwrap_or_default();
        let Some(pipeline) = ctx.caller.clone() else {
            return Err(Error::new(
                ErrorCode::Unavailable,
                "run_tools_script runs only through the dispatch pipeline (its scripts call tools there)",
            ));
        };
        let visible = pipeline.0.visible_tools();
        let callable = self.callable(&visible);
        let names: BTreeMap<&str, &str> = callable
            .iter()
            .map(|(py, spec)| (py.as_str(), spec.name.as_str()))
            .collect();
        let allowed: BTreeSet<String> = callable.iter().map(|(_, s)| s.name.clone()).collect();
        let config = &self.config;
        let clock = PausingClock::new(Duration::from_secs(config.timeout_seconds), &ctx.waiting);
        let script = Arc::new(ScriptCaller::new(
            pipeline,
            allowed,
            config.max_tool_calls,
            clock.waiting(),
        ));
        let stop = ctx.cancel.child_token();
        let instance_ctx = CallContext {
            caller: Some(ToolCallerHandle(Arc::clone(&script) as _)),
            cancel: stop.clone(),
            waiting: clock.waiting(),
            limits: LimitsOverride::default(),
            ..ctx
        };
        let request = json!({
            "code": code,
            "tools": names,
            "max_output_chars": config.max_output_chars,
            "max_memory_bytes": config.max_memory_mb << 20,
            "timeout_ms": config.timeout_seconds.saturating_mul(1000),
        })
        .to_string();
        let call = self.component.call_with(NAME, &request, &instance_ctx);
        tokio::pin!(call);
        let mut timed_out = false;
        let outcome = tokio::select! {
            outcome = &mut call => outcome,
            _ = clock.expired() => {
                // Stop the interpreter (and cancel its calls still running);
                // it comes back with what it printed.
                timed_out = true;
                stop.cancel();
                call.await
            }
        };
        let max = config.max_output_chars;
        let failures = script.failures();
        let timeout_message = || {
            format!(
                "the script ran past its {} s limit (timeout_seconds; time waiting for approvals not counted) and was stopped; calls still running were cancelled",
                config.timeout_seconds
            )
        };
        let report = match outcome
            .result
            .map(|out| serde_json::from_str::<Value>(&out.content))
        {
            Ok(Ok(report)) => report,
            // The interpreter is sandboxed code: a report the host cannot
            // read is its failure, not the host's.
            Ok(Err(e)) => {
                let message = format!("the interpreter's report cannot be read: {e}");
                let output = cut_middle(&outcome.stdout, max, 0);
                return Ok(failed(report::failure(
                    codes::SANDBOX_FAILED,
                    &message,
                    output,
                    &failures,
                )));
            }
            Err(e) => {
                let output = cut_middle(&outcome.stdout, max, 0);
                let (code, message) = match e.code() {
                    _ if timed_out => (codes::TIMEOUT, timeout_message()),
                    ErrorCode::Timeout | ErrorCode::OutOfFuel => (codes::TIMEOUT, e.message().to_string()),
                    ErrorCode::MemoryLimit => (codes::MEMORY_LIMIT, e.message().to_string()),
                    // The caller gave up on the call: nothing to report to.
                    ErrorCode::Cancelled => return Err(e),
                    _ if e.message().contains(OOM_MARKER) => (
                        codes::MEMORY_LIMIT,
                        format!(
                            "the script used more than its {} MiB (max_memory_mb)",
                            config.max_memory_mb
                        ),
                    ),
                    _ => (
                        codes::SANDBOX_FAILED,
                        format!("the interpreter failed: {}", e.message()),
                    ),
                };
                return Ok(failed(report::failure(code, &message, output, &failures)));
            }
        };
        let output = cut_middle(
            report["output"].as_str().unwrap_or_default(),
            max,
            report["output_omitted"].as_u64().unwrap_or(0),
        );
        if report["ok"] == json!(true) {
            let result = match report.get("result_text") {
                Some(cut) => Value::String(cut_middle(
                    cut["text"].as_str().unwrap_or_default(),
                    max,
                    cut["omitted"].as_u64().unwrap_or(0),
                )),
                None => cut_value(report["result"].clone(), max),
            };
            return Ok(ToolOutput::json(&report::success(output, result, &failures)));
        }
        // A script ending on the PermissionError of a refused call returns
        // that refusal, as the direct call would have.
        if let Some(refusal) = report["denied"].as_str().and_then(|text| script.refusal(text)) {
            let reason = serde_json::from_str::<Value>(&refusal)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string))
                .unwrap_or_else(|| refusal.clone());
            return Ok(ToolOutput::refused_because(ErrorCode::Blocked, reason, refusal));
        }
        let mut code = report["error_code"]
            .as_str()
            .unwrap_or(codes::SCRIPT_ERROR)
            .to_string();
        let mut error = cut_middle(report["error"].as_str().unwrap_or_default(), max, 0);
        if timed_out {
            code = codes::TIMEOUT.to_string();
            error = timeout_message();
        } else if let Some(missing) = report["missing_tool"].as_str() {
            error.push_str(&missing_hint(missing, names.keys().copied()));
        }
        Ok(failed(report::failure(&code, &error, output, &failures)))
    }
}

/// What the interpreter's allocator writes on stderr, last, when an
/// allocation crosses its hard ceiling (outside the interpreter's own
/// checks, which raise `MemoryError` in the script instead), just before
/// it ends the instance: its exit status cannot carry the reason (WASI
/// preview 2's `exit` says only success or failure), the message can, and
/// the host keeps the end of a failed plugin's stderr in its error.
const OOM_MARKER: &str = "exceeds the memory limit";

impl Tool for RunToolsScript {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin(self.run(arguments, ctx))
    }
}

/// A failed script's result: a refusal with code `script_failed`, so the
/// call counts as failed (events, MCP `isError`) while its content is the
/// script's report.
fn failed(report: Value) -> ToolOutput {
    let reason = format!(
        "{}: {}",
        report["error_code"].as_str().unwrap_or(codes::SCRIPT_ERROR),
        report["error"].as_str().unwrap_or_default()
    );
    ToolOutput::refused_because(ErrorCode::ScriptFailed, reason, report.to_string())
}

fn callable_of<'a>(
    visible: impl IntoIterator<Item = &'a ToolSpec>,
    exclude: &[String],
) -> Vec<(String, &'a ToolSpec)> {
    let mut specs: Vec<&ToolSpec> = visible
        .into_iter()
        .filter(|s| !NEVER_CALLABLE.contains(&s.name.as_str()))
        .filter(|s| !exclude.iter().any(|p| glob_match(p, &s.name)))
        .collect();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let mut taken = BTreeSet::new();
    specs
        .into_iter()
        .filter_map(|spec| {
            let py = python_name(&spec.name);
            taken.insert(py.clone()).then_some((py, spec))
        })
        .collect()
}

/// The hint for a script that named a tool it does not have.
fn missing_hint<'a>(missing: &str, names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    let close: Vec<&str> = toolhost_core::registry::lazy::suggest(names.iter().copied(), missing, 3);
    let mut hint = format!("\nHint: `tools.{missing}` does not exist in this session");
    if !close.is_empty() {
        hint.push_str(&format!(
            "; did you mean {}?",
            close
                .iter()
                .map(|n| format!("tools.{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if names.is_empty() {
        hint.push_str(". No tool is callable from a script here.");
    } else {
        hint.push_str(&format!(". Callable: {}.", names.join(", ")));
    }
    hint
}

/// The limits of the interpreter's instance for `config`.
fn instance_limits(config: &CodemodeConfig) -> LimitsOverride {
    let chars = config.max_output_chars as u64;
    LimitsOverride {
        memory_mb: Some(config.max_memory_mb + INTERPRETER_OVERHEAD_MB),
        timeout_ms: Some(
            (Duration::from_secs(config.timeout_seconds) + MAX_APPROVAL_PAUSE).as_millis() as u64,
        ),
        fuel: Some(config.timeout_seconds.saturating_mul(FUEL_PER_SECOND)),
        // The report holds output and value, each up to a few times
        // max_output_chars in bytes, and the error's traceback.
        output_bytes: Some((chars * 16).max(1 << 20)),
        stderr_bytes: Some((chars * 4).max(64 << 10)),
        // The script's caller refuses the calls past max_tool_calls itself,
        // with `codemode:tool_call_limit`; the sandbox's own cap on started
        // calls stays above it, as the backstop for a script retrying
        // refused calls in a loop.
        nested_calls: Some(config.max_tool_calls.saturating_add(64)),
        ..LimitsOverride::default()
    }
}
