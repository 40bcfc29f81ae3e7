//! Runs one script in Monty, mapping its external calls onto the host's
//! tools: `await tools.NAME(key=value)` suspends the interpreter with a
//! pending future; when every task is blocked, the calls it is waiting on
//! go to the host together and their results (or exceptions) resume it.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use monty::{MontyRun, RunProgress};
use monty_types::{
    CompileOptions, DictPairs, ExcType, ExtFunctionResult, MontyClassInstance, MontyClassType,
    MontyException, MontyObject, MontyUuid, NameLookupResult, PrintWriter, ResourceLimits, ResourceTracker,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::convert::{to_json, to_python};
use crate::output::Printed;

/// The JSON Schema of a request.
pub const PARAMETERS: &str = r#"{
  "type": "object",
  "additionalProperties": false,
  "required": ["code", "tools", "max_output_chars", "timeout_ms"],
  "properties": {
    "code": {"type": "string", "description": "The Python script."},
    "tools": {"type": "object", "additionalProperties": {"type": "string"}, "description": "The tools the script may call: Python name to tool name."},
    "max_output_chars": {"type": "integer", "minimum": 1, "description": "How many characters of printed output to keep from each end."},
    "max_memory_bytes": {"type": "integer", "minimum": 1, "description": "The script's heap budget."},
    "timeout_ms": {"type": "integer", "minimum": 1, "description": "How long the interpreter itself may run (time waiting on tools not counted)."}
  }
}"#;

/// What the host asks for.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    code: String,
    tools: BTreeMap<String, String>,
    max_output_chars: usize,
    max_memory_bytes: Option<usize>,
    timeout_ms: u64,
}

/// Why a nested call failed, in the host's words.
#[derive(Debug)]
pub struct CallFailure {
    /// The host's error code.
    pub code: String,
    /// Its message.
    pub message: String,
}

/// The host's tools: every call in `calls` runs at once, results in order.
pub trait Tools {
    fn call_many(&self, calls: &[(String, String)]) -> Vec<Result<String, CallFailure>>;
}

/// The identity of the `tools` object the script sees.
const TOOLS_CLASS: MontyUuid = MontyUuid::from_u128(0x7001);
const TOOLS_ID: MontyUuid = MontyUuid::from_u128(0x7002);

/// A call the script started and has not had answered yet.
struct Pending {
    tool: String,
    arguments: String,
}

/// What happened to the script, before the output is attached.
enum Ending {
    Done(Value),
    Failed {
        code: &'static str,
        error: String,
        exception: Option<(String, String)>,
    },
}

/// Runs the script of `request`, calling `tools`, and returns the report
/// the host turns into run_tools_script's result.
pub fn run(request: Request, tools: &dyn Tools) -> Value {
    let Request {
        code,
        tools: callable,
        max_output_chars,
        max_memory_bytes,
        timeout_ms,
    } = request;
    // Failing to arm the budget leaves the instance's own memory limit.
    let _ = monty_alloc::set_limit(max_memory_bytes, false);
    let mut printed = Printed::new(max_output_chars);
    let mut script = Script {
        tools,
        callable,
        pending: HashMap::new(),
        denials: Vec::new(),
        missing: Vec::new(),
    };
    let ending = script.drive(code, timeout_ms, max_memory_bytes, &mut printed);
    let (output, omitted) = printed.finish();
    let mut report = match ending {
        Ending::Done(result) => result_report(result, max_output_chars),
        Ending::Failed {
            code,
            error,
            exception,
        } => {
            let mut report = json!({"ok": false, "error_code": code, "error": error});
            if let Some((kind, message)) = exception {
                if kind == "PermissionError" && script.denials.contains(&message) {
                    report["denied"] = json!(message);
                }
                if let Some(name) = script.missing.iter().find(|n| message == missing_message(n)) {
                    report["missing_tool"] = json!(name);
                }
                report["exception"] = json!({"type": kind, "message": message});
            }
            report
        }
    };
    report["output"] = json!(output);
    report["output_omitted"] = json!(omitted);
    report
}

/// The report of a finished script. A value whose JSON text is longer than
/// twice `max_chars` goes as its first and last `max_chars` characters
/// (`result_text`), for the host to cut further.
fn result_report(result: Value, max_chars: usize) -> Value {
    let text = result.to_string();
    let total = text.chars().count();
    if total <= max_chars.saturating_mul(2) {
        return json!({"ok": true, "result": result});
    }
    let head: String = text.chars().take(max_chars).collect();
    let tail: String = text.chars().skip(total - max_chars).collect();
    json!({"ok": true, "result_text": {"text": head + &tail, "omitted": total - 2 * max_chars}})
}

struct Script<'t> {
    tools: &'t dyn Tools,
    /// Python name → tool name.
    callable: BTreeMap<String, String>,
    pending: HashMap<u32, Pending>,
    /// The messages of the `PermissionError`s raised for refused calls.
    denials: Vec<String>,
    /// Names the script asked `tools` for that it does not have.
    missing: Vec<String>,
}

impl Script<'_> {
    fn drive(
        &mut self,
        code: String,
        timeout_ms: u64,
        memory: Option<usize>,
        printed: &mut Printed,
    ) -> Ending {
        let runner = match MontyRun::new(code, "script.py", vec!["tools".into()], CompileOptions::default()) {
            Ok(runner) => runner,
            Err(e) => {
                let code = if e.exc_type() == ExcType::SyntaxError {
                    "codemode:syntax_error"
                } else {
                    "codemode:script_error"
                };
                return Ending::Failed {
                    code,
                    error: e.to_string(),
                    exception: None,
                };
            }
        };
        let mut limits = ResourceLimits::default().max_duration(Duration::from_millis(timeout_ms));
        limits.max_memory = memory;
        // Suspensions are bounded by the host's call cap, not here.
        limits.max_suspensions = usize::MAX;
        let mut progress = runner.start(
            vec![tools_object()],
            ResourceTracker::new(limits),
            PrintWriter::Callback(printed),
        );
        loop {
            progress = match progress {
                Ok(RunProgress::Complete(value)) => return Ending::Done(to_json(&value)),
                Err(e) => return failed(&e),
                Ok(RunProgress::FunctionCall(call)) => {
                    let known = call.object_id.is_none_or(|id| id == TOOLS_ID);
                    let started = if known {
                        self.start_call(&call.function_name, &call.args, &call.kwargs)
                    } else {
                        Err(raise(
                            ExcType::TypeError,
                            "only tools.NAME(...) may be called on the host",
                        ))
                    };
                    match started {
                        Ok(pending) => {
                            self.pending.insert(call.call_id, pending);
                            call.resume_pending(PrintWriter::Callback(printed))
                        }
                        Err(exc) => {
                            call.resume(ExtFunctionResult::Error(exc), PrintWriter::Callback(printed))
                        }
                    }
                }
                Ok(RunProgress::ResolveFutures(waiting)) => {
                    let ids = waiting.pending_call_ids().to_vec();
                    let answers = match self.answer(&ids) {
                        Ok(answers) => answers,
                        Err(ending) => return ending,
                    };
                    waiting.resume(answers, PrintWriter::Callback(printed))
                }
                Ok(RunProgress::NameLookup(lookup)) => {
                    let answer = match lookup.object_id() {
                        Some(id) if id == TOOLS_ID && self.callable.contains_key(&lookup.name) => {
                            NameLookupResult::Value(MontyObject::Function {
                                name: lookup.name.clone(),
                                docstring: None,
                            })
                        }
                        Some(id) if id == TOOLS_ID => {
                            self.missing.push(lookup.name.clone());
                            NameLookupResult::Error(raise(
                                ExcType::AttributeError,
                                &missing_message(&lookup.name),
                            ))
                        }
                        _ => NameLookupResult::Undefined,
                    };
                    lookup.resume(answer, PrintWriter::Callback(printed))
                }
                Ok(RunProgress::OsCall(call)) => {
                    let exc = raise(
                        ExcType::PermissionError,
                        "scripts have no file system, network or environment; use the tools namespace",
                    );
                    call.resume(ExtFunctionResult::Error(exc), PrintWriter::Callback(printed))
                }
            };
        }
    }

    /// Checks a call of `tools.NAME(...)` and turns its arguments into JSON.
    fn start_call(
        &mut self,
        name: &str,
        args: &[MontyObject],
        kwargs: &[(MontyObject, MontyObject)],
    ) -> Result<Pending, MontyException> {
        let Some(tool) = self.callable.get(name) else {
            self.missing.push(name.to_string());
            return Err(raise(ExcType::AttributeError, &missing_message(name)));
        };
        if !args.is_empty() {
            return Err(raise(
                ExcType::TypeError,
                &format!("tools.{name}() takes keyword arguments only, e.g. tools.{name}(key=value)"),
            ));
        }
        let mut object = serde_json::Map::new();
        for (key, value) in kwargs {
            let MontyObject::String(key) = key else {
                return Err(raise(
                    ExcType::TypeError,
                    "keyword argument names must be strings",
                ));
            };
            object.insert(key.clone(), to_json(value));
        }
        Ok(Pending {
            tool: tool.clone(),
            arguments: Value::Object(object).to_string(),
        })
    }

    /// Runs the pending calls among `ids` at once and turns their results
    /// into the values (or exceptions) the script gets. `Err` ends the
    /// script: the host cancelled its calls (its clock ran out).
    fn answer(&mut self, ids: &[u32]) -> Result<Vec<(u32, ExtFunctionResult)>, Ending> {
        let mut order = Vec::new();
        let mut calls = Vec::new();
        let mut answers = Vec::new();
        for id in ids {
            match self.pending.remove(id) {
                Some(p) => {
                    order.push(*id);
                    calls.push((p.tool, p.arguments));
                }
                None => answers.push((
                    *id,
                    ExtFunctionResult::Error(raise(ExcType::RuntimeError, "this call was never started")),
                )),
            }
        }
        let results = if calls.is_empty() {
            Vec::new()
        } else {
            self.tools.call_many(&calls)
        };
        for (id, result) in order.into_iter().zip(results) {
            let answer = match result {
                Ok(json) => match serde_json::from_str::<Value>(&json) {
                    Ok(value) => ExtFunctionResult::Return(to_python(value)),
                    Err(e) => ExtFunctionResult::Error(raise(
                        ExcType::RuntimeError,
                        &format!("the tool returned text that is not JSON: {e}"),
                    )),
                },
                Err(failure) if failure.code == "cancelled" => {
                    return Err(Ending::Failed {
                        code: "codemode:timeout",
                        error: format!("the script was stopped: {}", failure.message),
                        exception: None,
                    });
                }
                Err(failure) => ExtFunctionResult::Error(self.exception_for(failure)),
            };
            answers.push((id, answer));
        }
        Ok(answers)
    }

    /// The exception a failed call raises in the script: `ValueError` for
    /// rejected arguments (and the call cap), `PermissionError` for a
    /// refusal, `RuntimeError` otherwise; its text starts with the code.
    fn exception_for(&mut self, failure: CallFailure) -> MontyException {
        let CallFailure { code, message } = failure;
        match code.as_str() {
            "tool_call_limit" => raise(
                ExcType::ValueError,
                &format!("codemode:tool_call_limit: {message}"),
            ),
            "invalid_arguments" | "unknown_tool" => raise(ExcType::ValueError, &format!("{code}: {message}")),
            "blocked" | "approval_required" | "tool_approval:denied" | "audience_denied" => {
                let text = format!("{code}: {message}");
                self.denials.push(text.clone());
                raise(ExcType::PermissionError, &text)
            }
            _ => raise(ExcType::RuntimeError, &format!("{code}: {message}")),
        }
    }
}

/// The `tools` object: a host instance whose method calls suspend the script.
fn tools_object() -> MontyObject {
    MontyObject::ClassInstance(Box::new(MontyClassInstance {
        class_type: MontyClassType {
            name: "tools".into(),
            id: TOOLS_CLASS,
            host_defined: true,
            is_dataclass: false,
            attrs: DictPairs::default(),
        },
        instance_id: TOOLS_ID,
        attrs: DictPairs::default(),
    }))
}

fn missing_message(name: &str) -> String {
    format!("there is no tool `{name}` in the tools namespace")
}

fn raise(kind: ExcType, message: &str) -> MontyException {
    MontyException::new(kind, Some(message.to_string()))
}

/// A script that raised: a resource limit (uncatchable in Monty) is its
/// own code, anything else a script error.
fn failed(e: &MontyException) -> Ending {
    let message = e.message().unwrap_or_default().to_string();
    let code = match e.exc_type() {
        ExcType::TimeoutError if message.starts_with("time limit exceeded") => "codemode:timeout",
        ExcType::MemoryError if message.contains("memory limit exceeded") => "codemode:memory_limit",
        _ => "codemode:script_error",
    };
    Ending::Failed {
        code,
        error: e.to_string(),
        exception: Some((format!("{:?}", e.exc_type()), message)),
    }
}
