//! Test plugin: every feature of `toolhost:plugin@0.3.0`, through the Rust
//! SDK. Tools return images, audio and embedded resources, state an output
//! schema, log at every level, ask the user (elicitation) and the client's
//! model (sampling); the plugin also offers prompts, resources and a
//! resource template, with completions.
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolhost_sdk::client::{self, Elicitation, SampleRequest};
use toolhost_sdk::server::{
    Completion, Context, Prompt, PromptMessage, PromptResult, ReadError, Resource, ResourceTemplate, Server,
};
use toolhost_sdk::{ContentBlock, Output, ResourceContents, ResourceLink, Role, Structured, ToolError, log};

/// A 1x1 red PNG.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, 0x00,
    0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01,
    0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
    0x82,
];

/// The first bytes of a WAV file (a header, no samples).
pub const WAV: &[u8] =
    b"RIFF$\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x44\xac\0\0\x88\x58\x01\0\x02\0\x10\0data\0\0\0\0";

/// Returns an image, a sound, an embedded text resource, an embedded
/// binary resource and a resource link, with annotations.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Media {}

fn media(_: Media) -> Result<Output, ToolError> {
    Ok(Output::default()
        .text("a red dot, a silence, and two resources")
        .block(
            ContentBlock::image(PNG, "image/png")
                .audience([Role::User])
                .priority(0.8),
        )
        .audio(WAV, "audio/wav")
        .resource(ResourceContents::text("showcase://readme", "# Showcase\n").mime_type("text/markdown"))
        .block(
            ContentBlock::resource(ResourceContents::blob("showcase://logo", PNG).mime_type("image/png"))
                .last_modified("2026-01-31T12:00:00Z"),
        )
        .resource_link(
            ResourceLink::new("showcase://notes/1", "note 1")
                .mime_type("text/plain")
                .description("the first note"),
        ))
}

/// How many words a text has, and which is longest.
#[derive(Serialize, JsonSchema)]
struct WordCount {
    /// The number of words.
    words: usize,
    /// The longest word. Left out for an empty text, which breaks this
    /// schema (it is required): the host then refuses the result.
    #[serde(skip_serializing_if = "String::is_empty")]
    longest: String,
}

/// Counts the words of a text; its result states an output schema.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CountWords {
    /// The text.
    text: String,
}

fn count_words(args: CountWords) -> Result<Structured<WordCount>, ToolError> {
    let words: Vec<&str> = args.text.split_whitespace().collect();
    let longest = words
        .iter()
        .max_by_key(|w| w.len())
        .map(|w| w.to_string())
        .unwrap_or_default();
    let count = WordCount {
        words: words.len(),
        longest,
    };
    Ok(Structured::new(count).text(format!("{} words", words.len())))
}

/// Logs one record at each of MCP's eight levels, then returns.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LogLevels {
    /// How many rounds of eight records (default 1).
    rounds: Option<u32>,
}

fn log_levels(args: LogLevels) -> Result<&'static str, ToolError> {
    for round in 0..args.rounds.unwrap_or(1) {
        let round = round.to_string();
        let fields = [("round", round.as_str())];
        log::debug("a debug record", &fields);
        log::info("an info record", &fields);
        log::notice("a notice record", &fields);
        log::warn("a warning record", &fields);
        log::error("an error record", &fields);
        log::critical("a critical record", &fields);
        log::alert("an alert record", &fields);
        log::emergency("an emergency record", &fields);
    }
    Ok("logged")
}

/// Asks the user a question, and says what they answered.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AskUser {
    /// The question.
    question: String,
}

/// The form the user fills in.
#[derive(Deserialize, JsonSchema)]
struct Decision {
    /// What they decided.
    decision: String,
}

fn ask_user(args: AskUser) -> Result<serde_json::Value, ToolError> {
    Ok(match client::elicit::<Decision>(&args.question)? {
        Elicitation::Accept(d) => json!({"action": "accept", "decision": d.decision}),
        Elicitation::Decline => json!({"action": "decline"}),
        Elicitation::Cancel => json!({"action": "cancel"}),
    })
}

/// Asks the client's model to complete a prompt, and returns its answer.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AskModel {
    /// The prompt.
    prompt: String,
    /// The most tokens the answer may take (default 50).
    max_tokens: Option<u32>,
    /// How many times to ask (default 1).
    times: Option<u32>,
}

fn ask_model(args: AskModel) -> Result<serde_json::Value, ToolError> {
    let mut answers = Vec::new();
    for _ in 0..args.times.unwrap_or(1) {
        let request = SampleRequest::new(args.max_tokens.unwrap_or(50))
            .system_prompt("Answer briefly.")
            .user(args.prompt.as_str())
            .user(ContentBlock::image(PNG, "image/png"))
            .temperature(0.5);
        let answer = client::sample(&request)?;
        answers.push(json!({
            "text": answer.text(),
            "model": answer.model,
            "stop_reason": answer.stop_reason,
        }));
    }
    Ok(json!({ "answers": answers }))
}

/// Greets someone, in a style.
#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How: `formal` or `casual` (default casual).
    style: Option<String>,
}

fn greeting(args: Greeting) -> Result<PromptResult, ToolError> {
    let text = match args.style.as_deref() {
        Some("formal") => format!("Please greet {} formally.", args.name),
        Some("casual") | None => format!("Say hi to {}.", args.name),
        Some(other) => return Err(ToolError::invalid_arguments(format!("unknown style `{other}`"))),
    };
    Ok(
        PromptResult::new([PromptMessage::user(text), PromptMessage::assistant("Happy to.")])
            .description(format!("a greeting for {}", args.name)),
    )
}

fn styles(typed: &str, _: &Context) -> Completion {
    Completion::matching(["casual", "formal"], typed)
}

/// Shows a picture and the readme.
#[derive(Deserialize, JsonSchema)]
struct Picture {}

fn picture(_: Picture) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![
        PromptMessage::user(ContentBlock::image(PNG, "image/png")),
        PromptMessage::user(ContentBlock::resource(
            ResourceContents::text("showcase://readme", "# Showcase\n").mime_type("text/markdown"),
        )),
    ])
}

fn readme() -> Result<&'static str, ReadError> {
    Ok("# Showcase\n")
}

fn logo() -> Result<Vec<u8>, ReadError> {
    Ok(PNG.to_vec())
}

/// The variables of `showcase://notes/{id}`.
#[derive(Deserialize)]
struct NoteId {
    id: String,
}

const NOTES: [&str; 3] = ["1", "2", "10"];

fn note(args: NoteId) -> Result<String, ReadError> {
    if NOTES.contains(&args.id.as_str()) {
        Ok(format!("note {}", args.id))
    } else {
        Err(ReadError::not_found(format!("there is no note {}", args.id)))
    }
}

fn server() -> Server {
    Server::new()
        .prompt(
            Prompt::new("greeting", greeting)
                .title("A greeting")
                .complete("style", styles),
        )
        .prompt(Prompt::new("picture", picture))
        .resource(
            Resource::new("showcase://readme", "readme", readme)
                .title("The readme")
                .description("What this plugin is")
                .mime_type("text/markdown"),
        )
        .resource(
            Resource::new("showcase://logo", "logo", logo)
                .mime_type("image/png")
                .size(PNG.len() as u64),
        )
        .template(
            ResourceTemplate::new("showcase://notes/{id}", "note", note)
                .description("A note, by id")
                .mime_type("text/plain")
                .complete("id", |typed, _| Completion::matching(NOTES, typed)),
        )
}

toolhost_sdk::capabilities! {
    elicitation: true,
    sampling: true,
}

toolhost_sdk::plugin! {
    tools: [
        media(read_only, title = "Media"),
        count_words(read_only, idempotent),
        log_levels,
        ask_user,
        ask_model,
    ],
    server: server,
}
