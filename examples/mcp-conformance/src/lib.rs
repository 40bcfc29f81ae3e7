//! The official MCP conformance suite's fixture, as a toolhost plugin.
//!
//! `@modelcontextprotocol/conformance` 0.1.16 tests a server by calling the
//! tools, prompts and resources of its reference server
//! (`examples/servers/typescript/everything-server.ts` in
//! `modelcontextprotocol/conformance`). This plugin offers the same ones,
//! answering as the reference does, written with the Rust SDK: content
//! blocks of every kind, logging, progress, elicitation, sampling, prompts
//! (with arguments, an embedded resource, an image), resources (text,
//! bytes, a template, one to subscribe to) and a tool whose parameter schema
//! is raw JSON Schema 2020-12. `toolhost.toml` beside it serves it;
//! `run-suite` runs the suite against it (see README.md).
//!
//! Where the reference swallows a failed request to the client into a
//! successful text ("Sampling not supported or error: ..."), this plugin
//! fails the call with the host's error instead: a tool never reports
//! success for work it did not do.
use std::time::Duration;

mod headers;
mod stateless;
use headers::test_header_echo;
use stateless::{test_logging_tool, test_streaming_elicitation};
mod input_required;
use input_required::*;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_sdk::client::{self, Elicitation, SampleRequest};
use toolhost_sdk::server::{PromptMessage, ReadError, Resource, ResourceTemplate, Server};
use toolhost_sdk::{ContentBlock, Output, ResourceContents, ToolError, log, progress};

mod tasks;
use tasks::*;

/// The reference's 1x1 PNG (`TEST_IMAGE_BASE64`), as bytes: the host
/// base64-encodes them for MCP.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00,
    0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05,
    0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1, 0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42,
    0x60, 0x82,
];

/// The reference's minimal WAV file (`TEST_AUDIO_BASE64`), as bytes.
const WAV: &[u8] = &[
    0x52, 0x49, 0x46, 0x46, 0x26, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20, 0x10,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x40, 0x1f, 0x00, 0x00, 0x00, 0x7d, 0x00, 0x00, 0x02, 0x00,
    0x10, 0x00, 0x64, 0x61, 0x74, 0x61, 0x02, 0x00, 0x00, 0x00,
];

/// Tests simple text content response
#[derive(Deserialize, JsonSchema)]
struct SimpleText {}

fn test_simple_text(_: SimpleText) -> Result<Output, ToolError> {
    Ok(Output::default().text("This is a simple text response for testing."))
}

/// Tests image content response
#[derive(Deserialize, JsonSchema)]
struct ImageContent {}

fn test_image_content(_: ImageContent) -> Result<Output, ToolError> {
    Ok(Output::default().image(PNG, "image/png"))
}

/// Tests audio content response
#[derive(Deserialize, JsonSchema)]
struct AudioContent {}

fn test_audio_content(_: AudioContent) -> Result<Output, ToolError> {
    Ok(Output::default().audio(WAV, "audio/wav"))
}

/// Tests embedded resource content response
#[derive(Deserialize, JsonSchema)]
struct EmbeddedResource {}

fn test_embedded_resource(_: EmbeddedResource) -> Result<Output, ToolError> {
    Ok(Output::default().resource(
        ResourceContents::text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )
        .mime_type("text/plain"),
    ))
}

/// Tests response with multiple content types (text, image, resource)
#[derive(Deserialize, JsonSchema)]
struct MultipleContentTypes {}

fn test_multiple_content_types(_: MultipleContentTypes) -> Result<Output, ToolError> {
    let data = json!({"test": "data", "value": 123}).to_string();
    Ok(Output::default()
        .text("Multiple content types test:")
        .image(PNG, "image/png")
        .resource(
            ResourceContents::text("test://mixed-content-resource", data).mime_type("application/json"),
        ))
}

/// Tests tool that emits log messages during execution
#[derive(Deserialize, JsonSchema)]
struct WithLogging {}

fn test_tool_with_logging(_: WithLogging) -> Result<Output, ToolError> {
    log::info("Tool execution started", &[]);
    std::thread::sleep(Duration::from_millis(50));
    log::info("Tool processing data", &[]);
    std::thread::sleep(Duration::from_millis(50));
    log::info("Tool execution completed", &[]);
    Ok(Output::default().text("Tool with logging executed successfully"))
}

/// Tests tool that reports progress notifications
#[derive(Deserialize, JsonSchema)]
struct WithProgress {}

fn test_tool_with_progress(_: WithProgress) -> Result<Output, ToolError> {
    // The host forwards at most one report per 50 ms (always the last):
    // reports further apart than that all reach the client.
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(60));
        }
        progress(done, Some(100.0), Some(&format!("Completed step {done} of 100")));
    }
    // The official TypeScript client (the suite's) handles a notification
    // in a later microtask but the response at once: a last report read in
    // the same chunk as the result finds its request gone and is dropped
    // (`@modelcontextprotocol/sdk` 1.x, `Protocol._onnotification`). The
    // host sends every report before the result; this pause lets a busy
    // client read the last one before the result arrives.
    std::thread::sleep(Duration::from_millis(200));
    Ok(Output::default().text("Progress reported: 0, 50 and 100 of 100"))
}

/// Tests error response handling
#[derive(Deserialize, JsonSchema)]
struct ErrorHandling {}

fn test_error_handling(_: ErrorHandling) -> Result<Output, ToolError> {
    Err(ToolError::failed(
        "This tool intentionally returns an error for testing",
    ))
}

/// Tests SSE stream disconnection and client reconnection (SEP-1699). The
/// host keeps the stream open; the result arrives on it.
#[derive(Deserialize, JsonSchema)]
struct Reconnection {}

fn test_reconnection(_: Reconnection) -> Result<Output, ToolError> {
    Ok(Output::default().text(
        "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.",
    ))
}

/// Tests server-initiated sampling (LLM completion request)
#[derive(Deserialize, JsonSchema)]
struct Sampling {
    /// The prompt to send to the LLM
    prompt: String,
}

fn test_sampling(args: Sampling) -> Result<Output, ToolError> {
    let answer = client::sample(&SampleRequest::new(100).user(args.prompt.as_str()))?;
    let text = answer.text().unwrap_or("No response");
    Ok(Output::default().text(format!("LLM response: {text}")))
}

/// Tests server-initiated elicitation (user input request)
#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user
    message: String,
}

fn test_elicitation(args: ElicitationArgs) -> Result<Output, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"],
    });
    let (action, content) = answer(client::elicit_with_schema(&args.message, &form)?);
    Ok(Output::default().text(format!("User response: action={action}, content={content}")))
}

/// Tests elicitation with default values per SEP-1034
#[derive(Deserialize, JsonSchema)]
struct ElicitationDefaults {}

fn test_elicitation_sep1034_defaults(_: ElicitationDefaults) -> Result<Output, ToolError> {
    let form = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true},
        },
        "required": [],
    });
    let message = "Please review and update the form fields with defaults";
    let (action, content) = answer(client::elicit_with_schema(message, &form)?);
    Ok(Output::default().text(format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// Tests elicitation with enum schema improvements per SEP-1330
#[derive(Deserialize, JsonSchema)]
struct ElicitationEnums {}

fn test_elicitation_sep1330_enums(_: ElicitationEnums) -> Result<Output, ToolError> {
    let titled = |prefix: &str, word: &str| {
        ["First", "Second", "Third"]
            .iter()
            .enumerate()
            .map(|(i, ordinal)| json!({"const": format!("{prefix}{}", i + 1), "title": format!("{ordinal} {word}")}))
            .collect::<Vec<_>>()
    };
    let form = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"],
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": titled("value", "Option"),
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {"anyOf": titled("value", "Choice")},
            },
        },
        "required": [],
    });
    let message = "Please select options from the enum fields";
    let (action, content) = answer(client::elicit_with_schema(message, &form)?);
    Ok(Output::default().text(format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// The user's answer as the reference words it: the action, and the
/// form's values as JSON (`{}` when there are none).
fn answer(elicitation: Elicitation<serde_json::Map<String, Value>>) -> (&'static str, String) {
    match elicitation {
        Elicitation::Accept(values) => ("accept", Value::Object(values).to_string()),
        Elicitation::Decline => ("decline", "{}".into()),
        Elicitation::Cancel => ("cancel", "{}".into()),
    }
}

/// Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonSchema202012 {
    name: Option<String>,
    address: Option<Address>,
    #[serde(rename = "contactMethod")]
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

#[derive(Deserialize, serde::Serialize)]
struct Address {
    #[serde(skip_serializing_if = "Option::is_none")]
    street: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    city: Option<String>,
}

/// The schema exactly as the suite wants it listed: its dialect, its
/// `$defs` and the `$ref` into them, and no other properties allowed. A
/// schema that states its own `$schema` keeps it (the SDK drops only the
/// one its generator adds).
impl JsonSchema for JsonSchema202012 {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JsonSchema202012".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "description": "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                },
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"},
            },
            // JSON Schema 2020-12's composition and conditional keywords
            // (SEP-2106): listed as they are, and checked on every call.
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {
                "properties": {"contactMethod": {"const": "phone"}},
                "required": ["contactMethod"],
            },
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false,
        })
    }
}

fn json_schema_2020_12_tool(args: JsonSchema202012) -> Result<Output, ToolError> {
    let mut called = serde_json::Map::new();
    if let Some(name) = args.name {
        called.insert("name".into(), json!(name));
    }
    if let Some(address) = args.address {
        called.insert("address".into(), json!(address));
    }
    for (key, value) in [
        ("contactMethod", args.contact_method),
        ("phone", args.phone),
        ("email", args.email),
    ] {
        if let Some(value) = value {
            called.insert(key.into(), json!(value));
        }
    }
    Ok(Output::default().text(format!(
        "JSON Schema 2020-12 tool called with: {}",
        Value::Object(called)
    )))
}

// ===== Prompts =====

/// A simple prompt without arguments
#[derive(Deserialize, JsonSchema)]
struct SimplePrompt {}

fn simple_prompt(_: SimplePrompt) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![PromptMessage::user("This is a simple prompt for testing.")])
}

/// A prompt with required arguments
#[derive(Deserialize, JsonSchema)]
struct WithArguments {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

fn prompt_with_arguments(args: WithArguments) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![PromptMessage::user(format!(
        "Prompt with arguments: arg1='{}', arg2='{}'",
        args.arg1, args.arg2
    ))])
}

/// A prompt that includes an embedded resource
#[derive(Deserialize, JsonSchema)]
struct WithEmbeddedResource {
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

fn prompt_with_embedded_resource(args: WithEmbeddedResource) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![
        PromptMessage::user(ContentBlock::resource(
            ResourceContents::text(args.resource_uri, "Embedded resource content for testing.")
                .mime_type("text/plain"),
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ])
}

/// A prompt that includes image content
#[derive(Deserialize, JsonSchema)]
struct WithImage {}

fn prompt_with_image(_: WithImage) -> Result<Vec<PromptMessage>, ToolError> {
    Ok(vec![
        PromptMessage::user(ContentBlock::image(PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ])
}

// ===== Resources =====

fn static_text() -> Result<&'static str, ReadError> {
    Ok("This is the content of the static text resource.")
}

fn static_binary() -> Result<Vec<u8>, ReadError> {
    Ok(PNG.to_vec())
}

fn watched() -> Result<&'static str, ReadError> {
    Ok("Watched resource content")
}

/// The variables of `test://template/{id}/data`.
#[derive(Deserialize)]
struct TemplateId {
    id: String,
}

fn template(args: TemplateId) -> Result<String, ReadError> {
    Ok(json!({"id": args.id, "templateTest": true, "data": format!("Data for ID: {}", args.id)}).to_string())
}

fn server() -> Server {
    use toolhost_sdk::server::Prompt;
    Server::new()
        .prompt(Prompt::new("test_simple_prompt", simple_prompt).title("Simple Test Prompt"))
        .prompt(
            Prompt::new("test_prompt_with_arguments", prompt_with_arguments).title("Prompt With Arguments"),
        )
        .prompt(
            Prompt::new(
                "test_prompt_with_embedded_resource",
                prompt_with_embedded_resource,
            )
            .title("Prompt With Embedded Resource"),
        )
        .prompt(Prompt::new("test_prompt_with_image", prompt_with_image).title("Prompt With Image"))
        .prompt(input_required::prompt())
        .resource(
            Resource::new("test://static-text", "static-text", static_text)
                .title("Static Text Resource")
                .description("A static text resource for testing")
                .mime_type("text/plain"),
        )
        .resource(
            Resource::new("test://static-binary", "static-binary", static_binary)
                .title("Static Binary Resource")
                .description("A static binary resource (image) for testing")
                .mime_type("image/png"),
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource", watched)
                .title("Watched Resource")
                .description("A resource to subscribe to")
                .mime_type("text/plain"),
        )
        .template(
            ResourceTemplate::new("test://template/{id}/data", "template", template)
                .title("Resource Template")
                .description("A resource template with parameter substitution")
                .mime_type("application/json"),
        )
}

toolhost_sdk::capabilities! {
    elicitation: true,
    sampling: true,
    roots: true,
    tasks: ["slow_compute", "protocol_error_job", "confirm_delete", "multi_input"],
    tasks_required: ["failing_job", "test_tool_with_task"],
    tasks_deferred: ["test_tool_with_task"],
}

toolhost_sdk::plugin! {
    tools: [
        test_simple_text,
        test_image_content,
        test_audio_content,
        test_embedded_resource,
        test_multiple_content_types,
        test_tool_with_logging,
        test_tool_with_progress,
        test_error_handling,
        test_reconnection,
        test_sampling,
        test_elicitation,
        test_elicitation_sep1034_defaults,
        test_elicitation_sep1330_enums,
        json_schema_2020_12_tool,
        test_header_echo,
        test_streaming_elicitation,
        test_logging_tool,
        test_missing_capability, test_input_required_result_elicitation, test_input_required_result_sampling,
        test_input_required_result_list_roots, test_input_required_result_request_state,
        test_input_required_result_multiple_inputs, test_input_required_result_multi_round,
        test_input_required_result_tampered_state, test_input_required_result_capabilities,
        greet, slow_compute, failing_job, protocol_error_job, confirm_delete, multi_input, test_tool_with_task,
    ],
    server: server,
}
