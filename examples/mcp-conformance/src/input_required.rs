//! The reference fixture's tools and prompt for MCP 2026-07-28's
//! multi-round-trip requests (SEP-2322, the suite's
//! `input-required-result-*` scenarios) and its missing-capability probe
//! (`server-stateless`), answering as the reference does.
//!
//! Where the reference builds `InputRequiredResult`s and its own
//! `requestState` by hand, a plugin just asks ([`client::ask`]): the host
//! turns the questions of a round into the result's `inputRequests`,
//! keyed by the questions' keys, seals what the retry needs into the
//! request state (a tampered one is refused before the plugin runs), and
//! runs the call again with the answers. On a 2025 session the same
//! questions are server-initiated requests. Each tool asks before doing
//! anything, so a re-run repeats nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use toolhost_sdk::client::{self, Answer, Elicitation, Question, SampleRequest};
use toolhost_sdk::server::{Prompt, PromptMessage};
use toolhost_sdk::{HostError, Output, ToolError};

/// The user's name.
#[derive(Deserialize, JsonSchema)]
struct Name {
    name: String,
}

/// A confirmation.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

/// A favourite colour.
#[derive(Deserialize, JsonSchema)]
struct Colour {
    color: String,
}

/// A context for a prompt.
#[derive(Deserialize, JsonSchema)]
struct Context {
    context: String,
}

/// A value.
#[derive(Deserialize, JsonSchema)]
#[allow(
    dead_code,
    reason = "only its form is used: the answer's keys are what the tool reports"
)]
struct Input {
    value: String,
}

/// Argument structs without fields: each one's doc comment is its tool's
/// description (the SDK's rule), the reference's words.
macro_rules! no_arguments {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Deserialize, JsonSchema)]
        pub(crate) struct $name {}
    )*};
}

no_arguments! {
    /// Test tool requiring sampling
    MissingCapability;
    /// MRTR: returns InputRequiredResult with elicitation request
    ElicitationArgs;
    /// MRTR: returns InputRequiredResult with sampling request
    SamplingArgs;
    /// MRTR: returns InputRequiredResult with roots/list request
    ListRootsArgs;
    /// MRTR: returns InputRequiredResult with requestState
    RequestStateArgs;
    /// MRTR: returns InputRequiredResult with multiple input requests
    MultipleInputsArgs;
    /// MRTR: multi-round InputRequiredResult workflow
    MultiRoundArgs;
    /// MRTR: HMAC-signed requestState integrity test
    TamperedStateArgs;
    /// MRTR: respects client capabilities in inputRequests
    CapabilitiesArgs;
}

/// The answers of a round, in order, each one's refusal a failed call.
fn answers(questions: Vec<Question>) -> Result<Vec<Answer>, ToolError> {
    client::ask(questions)
        .into_iter()
        .map(|a| a.map_err(ToolError::from))
        .collect()
}

/// The one answer of a round of one question.
fn answer(question: Question) -> Result<Answer, ToolError> {
    answers(vec![question])?
        .pop()
        .ok_or_else(|| ToolError::failed("the client gave no answer"))
}

/// What the user accepted, or the call's failure naming what they did.
fn accepted<T: serde::de::DeserializeOwned>(answer: Answer) -> Result<T, ToolError> {
    match answer.into_elicitation::<T>()? {
        Elicitation::Accept(value) => Ok(value),
        Elicitation::Decline => Err(ToolError::failed("the user declined")),
        Elicitation::Cancel => Err(ToolError::failed("the user cancelled")),
    }
}

/// The text of the model's answer, or the reference's words for none.
fn sampled(answer: Answer) -> Result<String, HostError> {
    Ok(answer.into_sample()?.text().unwrap_or("no response").to_string())
}

fn name_question(key: &str, message: &str) -> Question {
    Question::elicit::<Name>(key, message)
}

pub(crate) fn test_missing_capability(_: MissingCapability) -> Result<Output, ToolError> {
    // It needs the client's model: a client that did not declare sampling
    // is refused before anything else happens.
    answer(Question::sample(
        "sample_request",
        &SampleRequest::new(10).user("Say OK."),
    ))?
    .into_sample()?;
    Ok(Output::default().text("Success"))
}

pub(crate) fn test_input_required_result_elicitation(_: ElicitationArgs) -> Result<Output, ToolError> {
    let Name { name } = accepted(answer(name_question("user_name", "What is your name?"))?)?;
    Ok(Output::default().text(format!("Hello, {name}!")))
}

pub(crate) fn test_input_required_result_sampling(_: SamplingArgs) -> Result<Output, ToolError> {
    let request = SampleRequest::new(100).user("What is the capital of France?");
    let text = sampled(answer(Question::sample("sample_request", &request))?)?;
    Ok(Output::default().text(format!("Sampling result: {text}")))
}

pub(crate) fn test_input_required_result_list_roots(_: ListRootsArgs) -> Result<Output, ToolError> {
    let roots = answer(Question::list_roots("roots_request"))?.into_roots()?;
    Ok(Output::default().text(format!("Found {} root(s)", roots.len())))
}

pub(crate) fn test_input_required_result_request_state(_: RequestStateArgs) -> Result<Output, ToolError> {
    let Confirm { ok } = accepted(answer(Question::elicit::<Confirm>("confirm", "Please confirm"))?)?;
    if !ok {
        return Err(ToolError::failed("the user did not confirm"));
    }
    Ok(Output::default().text("state-ok: requestState validated"))
}

pub(crate) fn test_input_required_result_multiple_inputs(_: MultipleInputsArgs) -> Result<Output, ToolError> {
    let mut got = answers(vec![
        name_question("user_name", "What is your name?"),
        Question::sample("greeting", &SampleRequest::new(50).user("Generate a greeting")),
        Question::list_roots("client_roots"),
    ])?
    .into_iter();
    let (Some(name), Some(greeting), Some(roots)) = (got.next(), got.next(), got.next()) else {
        return Err(ToolError::failed("the client did not answer every question"));
    };
    let Name { name } = accepted(name)?;
    let greeting = sampled(greeting)?;
    let roots = roots.into_roots()?;
    Ok(Output::default().text(format!(
        "Name: {name}; Greeting: {greeting}; Roots: {}",
        roots.len()
    )))
}

pub(crate) fn test_input_required_result_multi_round(_: MultiRoundArgs) -> Result<Output, ToolError> {
    let Name { name } = accepted(answer(name_question("step1", "Step 1: What is your name?"))?)?;
    let Colour { color } = accepted(answer(Question::elicit::<Colour>(
        "step2",
        "Step 2: What is your favorite color?",
    ))?)?;
    Ok(Output::default().text(format!("Multi-round complete for {name} who likes {color}")))
}

pub(crate) fn test_input_required_result_tampered_state(_: TamperedStateArgs) -> Result<Output, ToolError> {
    // The host seals the request state and refuses a tampered one before
    // this runs again: reaching the answer means it verified.
    answer(Question::elicit::<Confirm>("confirm", "Please confirm"))?.into_elicitation::<Confirm>()?;
    Ok(Output::default().text("integrity-ok: state verified"))
}

pub(crate) fn test_input_required_result_capabilities(_: CapabilitiesArgs) -> Result<Output, ToolError> {
    let can = client::available();
    let mut questions = Vec::new();
    if can.elicitation {
        questions.push(Question::elicit::<Input>("elicit_input", "Elicitation input"));
    }
    if can.sampling {
        questions.push(Question::sample(
            "sample_input",
            &SampleRequest::new(50).user("Sample request"),
        ));
    }
    if questions.is_empty() {
        return Ok(Output::default().text("No supported capabilities declared"));
    }
    let keys: Vec<String> = questions.iter().map(|q| q.key().to_string()).collect();
    answers(questions)?;
    Ok(Output::default().text(format!("capabilities-ok: received {}", keys.join(","))))
}

/// MRTR: prompt that requires elicitation input
#[derive(Deserialize, JsonSchema)]
struct PromptArguments {}

fn input_required_prompt(_: PromptArguments) -> Result<Vec<PromptMessage>, ToolError> {
    let Context { context } = accepted(answer(Question::elicit::<Context>(
        "user_context",
        "What context should the prompt use?",
    ))?)?;
    Ok(vec![PromptMessage::user(format!(
        "Prompt with context: {context}"
    ))])
}

/// The prompt `test_input_required_result_prompt`.
pub(crate) fn prompt() -> Prompt {
    Prompt::new("test_input_required_result_prompt", input_required_prompt)
        .description("MRTR: prompt that requires elicitation input")
}
