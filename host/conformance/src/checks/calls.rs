//! The calls family: `arguments`, `results`, `no-grants` and `stdout`. Each
//! tool is called, in a fresh instance per call as the host always does,
//! with the arguments [`synth`](crate::synth) makes from its schema; the
//! checks judge the outcomes.

use std::collections::BTreeMap;

use toolhost_core::error::{Error, ErrorCode};
use toolhost_core::registry::ToolOutput;
use toolhost_runtime::LoadedComponent;
use toolhost_runtime::component::{NO_STRUCTURED, NOT_AN_OBJECT, NOT_JSON, OUTPUT_MISFIT, SandboxedCall};

use super::CheckId;
use super::listing::Listing;
use crate::report::{CheckReport, Problem, count};
use crate::synth::{self, Case, Verdict};

/// One call the suite made.
pub(crate) struct CallRecord {
    /// The tool called.
    pub tool: String,
    /// The arguments and whether the schema accepts them.
    pub case: Case,
    /// What came back.
    pub outcome: SandboxedCall,
}

impl CallRecord {
    /// The case, as a report names it: its label and abbreviated arguments.
    fn shown(&self) -> String {
        format!("{} {}", self.case.label, synth::abbreviate(&self.case.arguments))
    }
}

/// Every call made for the `arguments` check.
#[derive(Default)]
pub(crate) struct Exercised {
    /// The calls, tool by tool, in order.
    pub records: Vec<CallRecord>,
    /// Tools whose remaining cases were not tried after a trap, a timeout
    /// or an exhausted limit, and how many were left.
    pub cut_short: Vec<(String, usize)>,
}

/// Whether an error is the sandbox stopping the guest (as opposed to the
/// tool answering with an error).
fn is_hard(error: &Error) -> bool {
    matches!(
        error.code(),
        ErrorCode::Trap
            | ErrorCode::Timeout
            | ErrorCode::OutOfFuel
            | ErrorCode::MemoryLimit
            | ErrorCode::StackOverflow
    )
}

/// Calls every tool with every case of its schema. A tool's remaining cases
/// are skipped after its first hard failure (one trap or timeout is enough
/// to fail it, and a timeout costs the whole wall-clock limit).
pub(crate) async fn exercise(component: &LoadedComponent) -> Exercised {
    let mut exercised = Exercised::default();
    let mut call_id = 1;
    for tool in component.tools() {
        let cases = synth::cases(&tool.parameters);
        let total = cases.len();
        for (i, case) in cases.into_iter().enumerate() {
            call_id += 1;
            let outcome = call(component, &tool.name, &case, call_id).await;
            let hard = outcome.result.as_ref().is_err_and(is_hard);
            exercised.records.push(CallRecord {
                tool: tool.name.clone(),
                case,
                outcome,
            });
            if hard {
                if total > i + 1 {
                    exercised.cut_short.push((tool.name.clone(), total - i - 1));
                }
                break;
            }
        }
    }
    exercised
}

/// One call, straight to the component: the host would refuse arguments
/// the schema forbids before they reach it, but the suite wants to see how
/// the component itself answers them.
async fn call(component: &LoadedComponent, tool: &str, case: &Case, call_id: u64) -> SandboxedCall {
    let ctx = toolhost_core::registry::CallContext {
        call_id,
        ..Default::default()
    };
    component
        .call_unchecked(tool, &case.arguments.to_string(), &ctx)
        .await
}

/// The fix for a call stopped by the sandbox.
fn hard_fix(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Trap => {
            "return a tool error instead of trapping: no panic, unwrap or expect on input (Rust: return Err(ToolError::invalid_arguments(..)) or Err(ToolError::failed(..)); Python and JavaScript: raise or throw only what the SDK maps to a tool error)"
        }
        ErrorCode::Timeout => {
            "bound the work by the arguments (a page, a limit, a deadline shorter than the call's) and refuse arguments that ask for too much with invalid_arguments"
        }
        ErrorCode::OutOfFuel => {
            "bound the computation (no unbounded loops; cap sizes and iterations taken from the arguments)"
        }
        ErrorCode::MemoryLimit => "bound memory use: cap what the arguments can make it allocate",
        ErrorCode::StackOverflow => "bound the recursion, or make it a loop",
        _ => "answer with a result, invalid_arguments or failed",
    }
}

/// `arguments`: no call ended in a trap, a timeout or an exhausted limit;
/// arguments the schema forbids were not answered with `tool_failed`.
pub(crate) fn arguments(component: &LoadedComponent, exercised: &Exercised) -> CheckReport {
    let tools = component.tools().len();
    let mut tried = format!(
        "made {}, a fresh instance each: each of {} with the arguments synthesized from its schema (valid ones, an empty object, each required field missing, each field of a wrong type, an extra field, {}-character strings, unicode)",
        count(exercised.records.len(), "call"),
        count(tools, "tool"),
        synth::LONG_STRING_CHARS
    );
    for (tool, left) in &exercised.cut_short {
        tried.push_str(&format!(
            "; stopped calling `{tool}` after its first trap or timeout ({} not tried)",
            count(*left, "case")
        ));
    }
    let mut problems = Vec::new();
    let mut accepted: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for record in &exercised.records {
        match (&record.outcome.result, &record.case.verdict) {
            (Err(e), _) if is_hard(e) => problems.push(Problem::tool(
                &record.tool,
                format!("{} ended in {}: {}", record.shown(), e.code(), e.message()),
                hard_fix(e.code()),
            )),
            (Err(e), Verdict::Invalid(why)) if e.code() == ErrorCode::ToolFailed && !is_bad_result(e) => {
                problems.push(Problem::tool(
                    &record.tool,
                    format!(
                        "{} breaks its schema ({why}) but was answered with tool_failed, not invalid_arguments: {}",
                        record.shown(),
                        e.message()
                    ),
                    "answer arguments that do not fit the schema with invalid_arguments naming the field, so the model can correct its call (Rust: the SDK does so when the argument struct does not deserialize; keep such errors as ToolError::invalid_arguments)",
                ));
            }
            (Err(e), _) if is_bad_result(e) => {}
            (Err(e), _)
                if !matches!(
                    e.code(),
                    ErrorCode::InvalidArguments | ErrorCode::ToolFailed | ErrorCode::OutputTooLarge
                ) =>
            {
                problems.push(Problem::tool(
                    &record.tool,
                    format!(
                        "{} ended in an unexpected {}: {}",
                        record.shown(),
                        e.code(),
                        e.message()
                    ),
                    "answer with a result, invalid_arguments or failed",
                ));
            }
            (Ok(_), Verdict::Invalid(_)) => {
                accepted.entry(&record.tool).or_default().push(&record.case.label)
            }
            _ => {}
        }
    }
    let mut notes: Vec<String> = accepted
        .into_iter()
        .map(|(tool, labels)| {
            format!(
                "`{tool}` answered arguments its schema forbids with a result ({}); the host checks arguments before calls, but the tool should refuse them too",
                labels.join("; ")
            )
        })
        .collect();
    for tool in component.tools() {
        let valid = exercised
            .records
            .iter()
            .any(|r| r.tool == tool.name && r.case.verdict == Verdict::Valid);
        let stopped = exercised.cut_short.iter().any(|(t, _)| *t == tool.name);
        if !valid && !stopped {
            notes.push(format!(
                "no valid arguments could be synthesized for `{}` (its schema uses keywords such as `pattern` the synthesizer does not satisfy); only invalid ones were tried",
                tool.name
            ));
        }
    }
    CheckReport::ran(CheckId::Arguments, tried, problems).with_notes(notes)
}

/// Whether the runtime refused the tool's result: not JSON, or not fitting
/// the tool's output schema (reported by `results`, not `arguments`).
fn is_bad_result(error: &Error) -> bool {
    error.code() == ErrorCode::ToolFailed
        && [NOT_JSON, OUTPUT_MISFIT, NOT_AN_OBJECT, NO_STRUCTURED]
            .iter()
            .any(|start| error.message().starts_with(start))
}

/// `results`: every result is JSON within the output limit.
pub(crate) fn results(component: &LoadedComponent, exercised: &Exercised) -> CheckReport {
    let limit = component.effective_limits(&Default::default()).output_bytes;
    let answered = exercised
        .records
        .iter()
        .filter(|r| r.outcome.result.is_ok())
        .count();
    let tried = format!(
        "checked the results of {} ({answered} gave a result) are JSON within the {limit}-byte output limit and fit the tool's output schema, if it lists one",
        count(exercised.records.len(), "call")
    );
    let mut problems = Vec::new();
    for record in &exercised.records {
        match &record.outcome.result {
            Err(e) if e.code() == ErrorCode::OutputTooLarge => problems.push(Problem::tool(
                &record.tool,
                format!("{}: {}", record.shown(), e.message()),
                "return less: cap what one call returns (a page, a range, a `truncated` flag) so that it stays under the limit whatever the arguments",
            )),
            Err(e) if e.message().starts_with(NOT_JSON) => problems.push(Problem::tool(
                &record.tool,
                format!("{}: {}", record.shown(), e.message()),
                "return the result as JSON text (Rust: the SDK serializes it for you; a plain string must be quoted)",
            )),
            Err(e) if e.message().starts_with(NOT_AN_OBJECT) => problems.push(Problem::tool(
                &record.tool,
                format!("{}: {}", record.shown(), e.message()),
                "give a structured result as a JSON object (a struct), and other values as text or as {\"result\": value}",
            )),
            Err(e) if e.message().starts_with(NO_STRUCTURED) => problems.push(Problem::tool(
                &record.tool,
                format!("{}: {}", record.shown(), e.message()),
                "give a structured result on every success (Rust: return Structured<T>), or stop listing an output schema",
            )),
            Err(e) if is_bad_result(e) => problems.push(Problem::tool(
                &record.tool,
                format!("{}: {}", record.shown(), e.message()),
                "return results that fit the output schema the tool lists, or correct the schema",
            )),
            Ok(output) if !fits(output, limit) => {
                problems.push(Problem::tool(
                    &record.tool,
                    format!(
                        "{} gave {} bytes that are not JSON within the limit",
                        record.shown(),
                        output.content.len()
                    ),
                    "return JSON text within the output limit",
                ));
            }
            _ => {}
        }
    }
    CheckReport::ran(CheckId::Results, tried, problems)
}

/// Whether a result's JSON parses and, with its text, is within `limit`
/// bytes (the runtime checks both; checked again here, so that the report
/// never depends on it). A result of content blocks (0.3.0) was measured by
/// the runtime as the tool gave it, bytes as bytes; its JSON here carries
/// them base64-encoded, a third larger, so only its JSON is checked.
fn fits(output: &ToolOutput, limit: u64) -> bool {
    let size = output.content.len() + output.text.as_ref().map_or(0, String::len);
    serde_json::from_str::<serde::de::IgnoredAny>(&output.content).is_ok()
        && (!output.blocks.is_empty() || size as u64 <= limit)
}

/// How a call made without grants must end: a result, or a tool error that
/// says something; never a trap or an exhausted limit.
fn judge_without_grants(tool: &str, shown: &str, result: &Result<ToolOutput, Error>) -> Option<Problem> {
    match result {
        Ok(_) => None,
        Err(e)
            if matches!(e.code(), ErrorCode::InvalidArguments | ErrorCode::ToolFailed)
                && !e.message().trim().is_empty() =>
        {
            None
        }
        Err(e) => Some(Problem::tool(
            tool,
            format!("without grants, {shown} ended in {}: {}", e.code(), e.message()),
            "check that the capability is there and return ToolError::failed naming it (\"/data is not granted\") instead of unwrapping; the host adds which declared capabilities were not granted",
        )),
    }
}

/// `no-grants`, from the calls the `arguments` check made (the suite had no
/// grants): each tool's first valid case.
pub(crate) fn no_grants_from(exercised: &Exercised) -> CheckReport {
    let mut firsts: Vec<&CallRecord> = Vec::new();
    for record in &exercised.records {
        if firsts.iter().all(|r| r.tool != record.tool) {
            firsts.push(record);
        }
    }
    let tried = format!(
        "called each of {} once, without grants, with its first synthesized arguments",
        count(firsts.len(), "tool")
    );
    let problems = firsts
        .iter()
        .filter_map(|r| judge_without_grants(&r.tool, &r.shown(), &r.outcome.result))
        .collect();
    CheckReport::ran(CheckId::NoGrants, tried, problems)
}

/// `no-grants`, with the component loaded again without grants (the suite
/// had some): each tool's first synthesized case. A refusal at load is a
/// clear error too.
pub(crate) async fn no_grants_loaded(
    ungranted: Result<std::sync::Arc<LoadedComponent>, Error>,
) -> CheckReport {
    let component = match ungranted {
        Ok(component) => component,
        Err(e) if e.code() == ErrorCode::CapabilityNotGranted => {
            return CheckReport::ran(CheckId::NoGrants, "loaded it without grants", Vec::new()).with_notes(
                vec![format!(
                    "without grants the host refuses it at load: {}",
                    e.message()
                )],
            );
        }
        Err(e) => {
            let problem = Problem::component(
                format!(
                    "without grants, the host refuses it: {}: {}",
                    e.code(),
                    e.message()
                ),
                "make it load without grants; calls may fail, loading may not",
            );
            return CheckReport::ran(CheckId::NoGrants, "loaded it without grants", vec![problem]);
        }
    };
    let mut problems = Vec::new();
    let mut call_id = 1_000_000;
    for tool in component.tools() {
        let Some(case) = synth::cases(&tool.parameters).into_iter().next() else {
            continue;
        };
        call_id += 1;
        let outcome = call(&component, &tool.name, &case, call_id).await;
        let shown = format!("{} {}", case.label, synth::abbreviate(&case.arguments));
        problems.extend(judge_without_grants(&tool.name, &shown, &outcome.result));
    }
    let tried = format!(
        "loaded it without grants and called each of {} once with its first synthesized arguments",
        count(component.tools().len(), "tool")
    );
    CheckReport::ran(CheckId::NoGrants, tried, problems)
}

/// `stdout`: nothing was written to stdout by the listings or the calls.
pub(crate) fn stdout(listings: &[Listing], exercised: Option<&Exercised>) -> CheckReport {
    if listings.is_empty() {
        return CheckReport::skipped(CheckId::Stdout, "no guest code ran (see `loads`)");
    }
    const FIX: &str = "write diagnostics to stderr (Rust: eprintln!) or as log records (toolhost_sdk::log); the host keeps stdout away from every caller, so what is printed there is lost";
    let calls = exercised.map_or(0, |e| e.records.len());
    let tried = format!(
        "counted the bytes written to stdout by {} of list-tools and {}",
        count(listings.len(), "run"),
        count(calls, "call")
    );
    let mut problems = Vec::new();
    let listed: u64 = listings.iter().map(|l| l.stdout_bytes).sum();
    if listed > 0 {
        problems.push(Problem::component(
            format!("list-tools wrote {listed} bytes to stdout"),
            FIX,
        ));
    }
    let mut by_tool: BTreeMap<&str, (u64, &CallRecord)> = BTreeMap::new();
    for record in exercised.map_or(&[][..], |e| &e.records) {
        if record.outcome.stdout_bytes > 0 {
            let entry = by_tool.entry(&record.tool).or_insert((0, record));
            entry.0 += record.outcome.stdout_bytes;
        }
    }
    for (tool, (bytes, first)) in by_tool {
        problems.push(Problem::tool(
            tool,
            format!(
                "its calls wrote {bytes} bytes to stdout (the first with {})",
                first.shown()
            ),
            FIX,
        ));
    }
    CheckReport::ran(CheckId::Stdout, tried, problems)
}
