//! The tools the suite's tasks scenarios call (`src/scenarios/server/tasks`
//! in `modelcontextprotocol/conformance`): a synchronous `greet`, and tools
//! that run as tasks because this component says so in its
//! `toolhost:capabilities` section (`tasks` and `tasks_required` in
//! `capabilities!` in lib.rs), not because the host knows their names.
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::client::{self, Elicitation, Question};
use toolhost_sdk::{Output, ToolError};

/// Sync-only greeting: returns "Hello, {name}!"
#[derive(Deserialize, JsonSchema)]
pub(crate) struct Greet {
    /// Who to greet
    name: String,
}

pub(crate) fn greet(args: Greet) -> Result<Output, ToolError> {
    Ok(Output::default().text(format!("Hello, {}!", args.name)))
}

/// Task-supporting: sleeps `seconds` seconds, then answers
#[derive(Deserialize, JsonSchema)]
pub(crate) struct SlowCompute {
    /// How long to work, in seconds
    #[serde(default)]
    seconds: f64,
    /// A label echoed in the result
    #[serde(default)]
    label: String,
}

pub(crate) fn slow_compute(args: SlowCompute) -> Result<Output, ToolError> {
    if !(0.0..=600.0).contains(&args.seconds) {
        return Err(ToolError::invalid_arguments("seconds must be between 0 and 600"));
    }
    // A cancelled task's call is stopped by the host between these steps.
    std::thread::sleep(Duration::from_secs_f64(args.seconds));
    Ok(Output::default().text(format!("Computed {} after {} seconds", args.label, args.seconds)))
}

/// Task-required: fails with a tool error after about a second
#[derive(Deserialize, JsonSchema)]
pub(crate) struct FailingJob {}

pub(crate) fn failing_job(_: FailingJob) -> Result<Output, ToolError> {
    std::thread::sleep(Duration::from_secs(1));
    Err(ToolError::failed("The job failed, as this test tool always does"))
}

/// Task-supporting: crashes (a panic, which traps), a protocol-level error
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ProtocolErrorJob {}

pub(crate) fn protocol_error_job(_: ProtocolErrorJob) -> Result<Output, ToolError> {
    panic!("protocol_error_job crashes on purpose")
}

/// The confirmation form of `confirm_delete`
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Delete the file?
    confirm: bool,
}

/// Task-supporting: asks the user to confirm, then answers
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ConfirmDelete {
    /// The file to delete
    filename: String,
}

pub(crate) fn confirm_delete(args: ConfirmDelete) -> Result<Output, ToolError> {
    let answer = client::elicit::<Confirm>(&format!("Delete {}?", args.filename))?;
    let text = match answer {
        Elicitation::Accept(Confirm { confirm: true }) => format!("Deleted {}", args.filename),
        Elicitation::Accept(_) | Elicitation::Decline | Elicitation::Cancel => {
            format!("Kept {}", args.filename)
        }
    };
    Ok(Output::default().text(text))
}

/// Task-supporting: asks two questions at once (one round, two
/// `inputRequests` of the task outstanding together), and answers with both
#[derive(Deserialize, JsonSchema)]
pub(crate) struct MultiInput {}

/// The form of `multi_input`'s questions
#[derive(Deserialize, JsonSchema)]
struct Entry {
    /// A value
    #[serde(default)]
    name: String,
}

pub(crate) fn multi_input(_: MultiInput) -> Result<Output, ToolError> {
    let answers = client::ask(vec![
        Question::elicit::<Entry>("first", "First value?"),
        Question::elicit::<Entry>("second", "Second value?"),
    ]);
    let mut got = Vec::with_capacity(answers.len());
    for answer in answers {
        match answer?.into_elicitation::<Entry>()? {
            Elicitation::Accept(Entry { name }) => got.push(name),
            Elicitation::Decline | Elicitation::Cancel => {
                return Err(ToolError::failed("an input was refused"));
            }
        }
    }
    Ok(Output::default().text(format!("Got {}", got.join(" and "))))
}

/// Task-required, deferred: asks the user's name as the request's own
/// question (a multi-round-trip result on MCP 2026-07-28, before any task
/// exists), then begins its task and greets them from it
#[derive(Deserialize, JsonSchema)]
pub(crate) struct ToolWithTask {}

/// The form of `test_tool_with_task`
#[derive(Deserialize, JsonSchema)]
struct UserName {
    /// Your name
    name: String,
}

pub(crate) fn test_tool_with_task(_: ToolWithTask) -> Result<Output, ToolError> {
    let name = match client::elicit::<UserName>("What is your name?")? {
        Elicitation::Accept(UserName { name }) => name,
        Elicitation::Decline | Elicitation::Cancel => return Err(ToolError::failed("no name was given")),
    };
    // The inputs are in: the rest runs as the task (when the client
    // supports tasks; otherwise in the request, as before).
    client::begin_task();
    Ok(Output::default().text(format!("Hello, {name}! The task is done.")))
}
