//! Bindings of the `toolhost:plugin@0.3` line (0.3.0 and 0.3.1, generated
//! from 0.3.1, the newest world), and the logic of its host functions:
//! `host.log`, `progress.report`, `tools.call`, `tools.call-many`, and the
//! `client` interface ([`client`]). Older versions' host functions call
//! these.
//!
//! A 0.3.0 component links against these bindings by semver: its imports
//! name `@0.3.0` and are served by the `@0.3.1` interfaces (which only add
//! to them), and its exports are found under the `@0.3.1` names (see the
//! [parent module](super)).
//!
//! The bindings are generated from the `server` world, which holds every
//! import and export of the package: a component of `plugin` (or
//! `plugin-wasi`) exports `tool` alone, one of `server` (or `server-wasi`)
//! `prompts` and `resources` too. [`Exports`] finds what a component
//! exports once, at load; each instance is then type-checked against it.
#![allow(missing_docs, reason = "generated code; the WIT documents every item")]

use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use futures_util::future::BoxFuture;
use wasmtime::Store;
use wasmtime::component::InstancePre;

use crate::sandbox::{MAX_LOG_MESSAGE, SandboxState};
use toolhost_core::content::{
    Annotations as CoreAnnotations, Content as CoreContent, ContentBlock as CoreBlock,
    ResourceContents as CoreResourceContents, Role as CoreRole,
};
use toolhost_core::error::{Error, ErrorCode};
use toolhost_core::logging::{LogLevel, LogRecord};
use toolhost_core::progress::Progress;
use toolhost_core::registry::{CallContext, ToolCallerHandle, ToolOutput as CoreToolOutput};
use toolhost_core::text::truncate_utf8;

mod client;

wasmtime::component::bindgen!({
    path: "wit/0.3.1",
    world: "toolhost:plugin/server",
    imports: {
        // A question's round may end the call as a whole (an MCP
        // 2026-07-28 client that must be sent the questions): these trap,
        // with the host's error as the cause, rather than return it to a
        // plugin that could carry on.
        "toolhost:plugin/client.elicit": async | trappable,
        "toolhost:plugin/client.sample": async | trappable,
        "toolhost:plugin/client.list-roots": async | trappable,
        "toolhost:plugin/client.ask": async | trappable,
        default: async,
    },
    exports: { default: async },
    // What a component lists is compared between instances (the
    // conformance suite's `deterministic`).
    additional_derives: [PartialEq],
});

pub use self::exports::toolhost::plugin::prompts::{PromptArgument, PromptMessage, PromptResult, PromptSpec};
pub use self::exports::toolhost::plugin::resources::{ReadError, ResourceSpec, ResourceTemplate};
pub use self::toolhost::plugin::client::{
    Answer, AvailableQuestions, ElicitAction, ElicitRequest, ElicitResponse, Question, Request, Root,
    SamplingMessage, SamplingRequest, SamplingResponse,
};
pub use self::toolhost::plugin::host::Level;
pub use self::toolhost::plugin::tools::ToolCall;
pub use self::toolhost::plugin::types::{
    Annotations, BlobContents, Capabilities, Completion, Content, ContentBlock, Hints, HostError, Media,
    ResourceContents, ResourceLink, Role, TextContents, ToolError, ToolOutput, ToolSpec,
};

use self::exports::toolhost::plugin::{prompts, resources, tool};

/// The name of the `prompts` interface a 0.3 component may export (a
/// 0.3.0 component's `@0.3.0` export is found under it by semver).
pub(crate) const PROMPTS_EXPORT: &str = "toolhost:plugin/prompts@0.3.1";

/// The name of the `resources` interface a 0.3 component may export.
pub(crate) const RESOURCES_EXPORT: &str = "toolhost:plugin/resources@0.3.1";

/// Where a 0.3.0 component's exports are, found once at load: `tool`
/// always, `prompts` and `resources` when it exports them.
#[derive(Clone)]
pub(crate) struct Exports {
    pre: InstancePre<SandboxState>,
    tool: tool::GuestIndices,
    prompts: Option<prompts::GuestIndices>,
    resources: Option<resources::GuestIndices>,
}

impl Exports {
    /// Finds the exports of the component `pre` holds.
    ///
    /// # Errors
    ///
    /// When it has no `tool` export, or a `prompts` or `resources` export
    /// that lacks one of its functions.
    pub(crate) fn new(pre: InstancePre<SandboxState>) -> wasmtime::Result<Self> {
        let tool = tool::GuestIndices::new(&pre)?;
        let has = |name: &str| pre.component().get_export_index(None, name).is_some();
        let prompts = has(PROMPTS_EXPORT)
            .then(|| prompts::GuestIndices::new(&pre))
            .transpose()?;
        let resources = has(RESOURCES_EXPORT)
            .then(|| resources::GuestIndices::new(&pre))
            .transpose()?;
        Ok(Exports {
            pre,
            tool,
            prompts,
            resources,
        })
    }

    /// The linked component.
    pub(crate) fn instance_pre(&self) -> &InstancePre<SandboxState> {
        &self.pre
    }

    /// A fresh instance in `store`, its exports type-checked.
    pub(crate) async fn instantiate_async(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<Instance> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        Ok(Instance {
            tool: self.tool.load(&mut *store, &instance)?,
            prompts: match &self.prompts {
                Some(p) => Some(p.load(&mut *store, &instance)?),
                None => None,
            },
            resources: match &self.resources {
                Some(r) => Some(r.load(&mut *store, &instance)?),
                None => None,
            },
        })
    }
}

/// An instance of a 0.3.0 component: its `tool` export, and its `prompts`
/// and `resources` exports when it has them.
pub(crate) struct Instance {
    pub(crate) tool: tool::Guest,
    pub(crate) prompts: Option<prompts::Guest>,
    pub(crate) resources: Option<resources::Guest>,
}

/// What a component offers besides its tools, as it listed them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogListing {
    /// Its prompts.
    pub prompts: Vec<PromptSpec>,
    /// Its resources.
    pub resources: Vec<ResourceSpec>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplate>,
}

impl Instance {
    /// `list-prompts`, `list-resources` and `list-templates` (empty lists
    /// for what it does not export).
    pub(crate) async fn list_catalog(
        &self,
        store: &mut Store<SandboxState>,
    ) -> wasmtime::Result<CatalogListing> {
        let mut listing = CatalogListing::default();
        if let Some(prompts) = &self.prompts {
            listing.prompts = prompts.call_list_prompts(&mut *store).await?;
        }
        if let Some(resources) = &self.resources {
            listing.resources = resources.call_list_resources(&mut *store).await?;
            listing.templates = resources.call_list_templates(&mut *store).await?;
        }
        Ok(listing)
    }
}

// ---------------------------------------------------------------------
// Content: the world's blocks and the host's (bytes base64-encoded).
// ---------------------------------------------------------------------

impl From<Role> for CoreRole {
    fn from(role: Role) -> Self {
        match role {
            Role::User => CoreRole::User,
            Role::Assistant => CoreRole::Assistant,
        }
    }
}

impl From<CoreRole> for Role {
    fn from(role: CoreRole) -> Self {
        match role {
            CoreRole::User => Role::User,
            CoreRole::Assistant => Role::Assistant,
        }
    }
}

impl From<Annotations> for CoreAnnotations {
    fn from(a: Annotations) -> Self {
        CoreAnnotations {
            audience: (!a.audience.is_empty()).then(|| a.audience.into_iter().map(Into::into).collect()),
            priority: a.priority,
            last_modified: a.last_modified,
        }
    }
}

impl From<CoreAnnotations> for Annotations {
    fn from(a: CoreAnnotations) -> Self {
        Annotations {
            audience: a
                .audience
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect(),
            priority: a.priority,
            last_modified: a.last_modified,
        }
    }
}

impl From<ResourceContents> for CoreResourceContents {
    fn from(c: ResourceContents) -> Self {
        match c {
            ResourceContents::Text(t) => CoreResourceContents::Text {
                uri: t.uri,
                mime_type: t.mime_type,
                text: t.text,
                meta: None,
            },
            ResourceContents::Blob(b) => CoreResourceContents::Blob {
                uri: b.uri,
                mime_type: b.mime_type,
                blob: BASE64.encode(&b.blob),
                meta: None,
            },
        }
    }
}

impl From<ContentBlock> for CoreBlock {
    fn from(block: ContentBlock) -> Self {
        let content = match block.content {
            Content::Text(text) => CoreContent::Text { text },
            Content::Image(m) => CoreContent::Image {
                data: BASE64.encode(&m.data),
                mime_type: m.mime_type,
            },
            Content::Audio(m) => CoreContent::Audio {
                data: BASE64.encode(&m.data),
                mime_type: m.mime_type,
            },
            Content::ResourceLink(l) => CoreContent::ResourceLink {
                uri: l.uri,
                name: l.name,
                title: l.title,
                description: l.description,
                mime_type: l.mime_type,
                size: l.size,
            },
            Content::EmbeddedResource(c) => CoreContent::Resource { resource: c.into() },
        };
        CoreBlock {
            content,
            annotations: block.annotations.map(Into::into),
            meta: None,
        }
    }
}

/// Bytes a client sent base64-encoded, or why they are not.
fn decoded(what: &str, data: &str) -> Result<Vec<u8>, String> {
    BASE64
        .decode(data)
        .map_err(|e| format!("its {what} data is not base64: {e}"))
}

/// A host block as the world's, or why it cannot be one (bytes that are
/// not base64, from a bridged server or a client; a kind this host does
/// not know).
pub(crate) fn wit_block(block: CoreBlock) -> Result<ContentBlock, String> {
    let content = match block.content {
        CoreContent::Text { text } => Content::Text(text),
        CoreContent::Image { data, mime_type } => Content::Image(Media {
            data: decoded("image", &data)?,
            mime_type,
        }),
        CoreContent::Audio { data, mime_type } => Content::Audio(Media {
            data: decoded("audio", &data)?,
            mime_type,
        }),
        CoreContent::ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
        } => Content::ResourceLink(ResourceLink {
            uri,
            name,
            title,
            description,
            mime_type,
            size,
        }),
        CoreContent::Resource { resource } => Content::EmbeddedResource(match resource {
            CoreResourceContents::Text {
                uri, mime_type, text, ..
            } => ResourceContents::Text(TextContents { uri, mime_type, text }),
            CoreResourceContents::Blob {
                uri, mime_type, blob, ..
            } => ResourceContents::Blob(BlobContents {
                blob: decoded("resource", &blob)?,
                uri,
                mime_type,
            }),
        }),
        other => {
            return Err(format!(
                "it is content of a kind this host cannot pass on: {other:?}"
            ));
        }
    };
    Ok(ContentBlock {
        content,
        annotations: block.annotations.map(Into::into),
    })
}

/// The bytes a block carries, as the output limit counts them: its text,
/// data, URIs and names (a 0.2.0 result's text counts as it always did).
pub(crate) fn block_size(block: &ContentBlock) -> usize {
    let resource = |c: &ResourceContents| match c {
        ResourceContents::Text(t) => t.uri.len() + t.text.len(),
        ResourceContents::Blob(b) => b.uri.len() + b.blob.len(),
    };
    match &block.content {
        Content::Text(text) => text.len(),
        Content::Image(m) | Content::Audio(m) => m.data.len() + m.mime_type.len(),
        Content::ResourceLink(l) => {
            l.uri.len() + l.name.len() + l.description.as_ref().map_or(0, String::len)
        }
        Content::EmbeddedResource(c) => resource(c),
    }
}

/// Whether `block` is text with nothing else said about it.
fn plain_text(block: &ContentBlock) -> Option<&str> {
    match (&block.content, &block.annotations) {
        (Content::Text(text), None) => Some(text),
        _ => None,
    }
}

impl ToolOutput {
    /// The bytes of the result, as the output limit counts them.
    pub(crate) fn size(&self) -> usize {
        self.structured.as_ref().map_or(0, String::len) + self.content.iter().map(block_size).sum::<usize>()
    }

    /// The result as the host carries it (its JSON already checked):
    /// - structured JSON with no blocks, or with one plain text block: the
    ///   JSON, and the text for the model (the text-only path, as before
    ///   content blocks);
    /// - no structured JSON, plain text blocks only: their text, joined,
    ///   as a JSON string (a calling tool receives the text), each block
    ///   kept for MCP clients when there are several;
    /// - otherwise the blocks, with the structured JSON (or, without it,
    ///   the blocks themselves as MCP JSON) for callers.
    ///
    /// `parsed` is the structured JSON as the check read it, when it did:
    /// it travels on beside the text (`ToolOutput::structured`), so that no
    /// later layer reads the text again. Text blocks travel as text: a
    /// result of text alone is carried as its string value, never written
    /// as JSON for the MCP server to read back.
    pub(crate) fn into_core(self, parsed: Option<serde_json::Value>) -> CoreToolOutput {
        let ToolOutput { structured, content } = self;
        let all_plain = content.iter().all(|b| plain_text(b).is_some());
        let out = match structured {
            Some(json) if content.is_empty() => CoreToolOutput::json_text(json),
            Some(json) if content.len() == 1 && all_plain => {
                let text = plain_text(&content[0]).unwrap_or_default().to_string();
                CoreToolOutput::json_text(json).with_text(text)
            }
            Some(json) => {
                let blocks: Vec<CoreBlock> = content.into_iter().map(Into::into).collect();
                let texts: Vec<&str> = blocks.iter().filter_map(CoreBlock::as_text).collect();
                let text = (!texts.is_empty()).then(|| texts.join("\n"));
                CoreToolOutput {
                    text,
                    blocks,
                    ..CoreToolOutput::json_text(json)
                }
            }
            None if all_plain => {
                let texts: Vec<String> = content
                    .into_iter()
                    .filter_map(|b| match b.content {
                        Content::Text(text) => Some(text),
                        _ => None,
                    })
                    .collect();
                let blocks = if texts.len() > 1 {
                    texts.iter().cloned().map(CoreBlock::text).collect()
                } else {
                    Vec::new()
                };
                let joined = match <[String; 1]>::try_from(texts) {
                    Ok([one]) => one,
                    Err(texts) => texts.join("\n"),
                };
                return CoreToolOutput {
                    blocks,
                    ..CoreToolOutput::value(serde_json::Value::String(joined))
                };
            }
            None => return CoreToolOutput::blocks(content.into_iter().map(Into::into).collect(), None),
        };
        CoreToolOutput {
            structured: parsed,
            ..out
        }
    }

    /// A nested call's result as a 0.3.0 guest receives it: the blocks, when
    /// the tool gave some; else its text for the model as one text block,
    /// and its JSON as the structured result (a JSON string is the text
    /// itself, not a structured result).
    ///
    /// # Errors
    ///
    /// When a block cannot be passed on (see [`wit_block`]).
    pub(crate) fn from_core(output: CoreToolOutput) -> Result<ToolOutput, String> {
        let CoreToolOutput {
            content: json,
            text,
            blocks,
            ..
        } = output;
        if !blocks.is_empty() {
            let structured = json.trim_start().starts_with('{').then_some(json);
            let content = blocks.into_iter().map(wit_block).collect::<Result<Vec<_>, _>>()?;
            return Ok(ToolOutput { structured, content });
        }
        let text_block = |text: String| ContentBlock {
            content: Content::Text(text),
            annotations: None,
        };
        if let Some(value) = toolhost_json::string_value(&json) {
            let value = value.into_owned();
            return Ok(ToolOutput {
                structured: None,
                content: vec![text_block(text.unwrap_or(value))],
            });
        }
        match toolhost_json::from_str::<serde_json::Value>(&json) {
            Ok(serde_json::Value::String(value)) => Ok(ToolOutput {
                structured: None,
                content: vec![text_block(text.unwrap_or(value))],
            }),
            Ok(_) => Ok(ToolOutput {
                structured: Some(json),
                content: text.into_iter().map(text_block).collect(),
            }),
            // Not JSON (a host application's tool breaking the contract):
            // its text.
            Err(_) => Ok(ToolOutput {
                structured: None,
                content: vec![text_block(text.unwrap_or(json))],
            }),
        }
    }
}

impl From<Error> for HostError {
    fn from(e: Error) -> Self {
        HostError {
            code: e.code().as_str().to_string(),
            message: e.message().to_string(),
        }
    }
}

fn host_error(code: ErrorCode, message: impl Into<String>) -> HostError {
    HostError {
        code: code.as_str().to_string(),
        message: message.into(),
    }
}

// ---------------------------------------------------------------------
// Host functions.
// ---------------------------------------------------------------------

impl self::toolhost::plugin::types::Host for SandboxState {}

impl Level {
    /// Its name, as MCP writes it.
    fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Notice => "notice",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
            Level::Alert => "alert",
            Level::Emergency => "emergency",
        }
    }

    /// MCP's level of the same name.
    fn mcp(self) -> LogLevel {
        match self {
            Level::Debug => LogLevel::Debug,
            Level::Info => LogLevel::Info,
            Level::Notice => LogLevel::Notice,
            Level::Warning => LogLevel::Warning,
            Level::Error => LogLevel::Error,
            Level::Critical => LogLevel::Critical,
            Level::Alert => LogLevel::Alert,
            Level::Emergency => LogLevel::Emergency,
        }
    }
}

impl self::toolhost::plugin::host::Host for SandboxState {
    async fn log(&mut self, level: Level, mut message: String, fields: Vec<(String, String)>) {
        if self.logs_left == 0 {
            self.logs_dropped = self.logs_dropped.saturating_add(1);
            return;
        }
        self.logs_left -= 1;
        truncate_utf8(&mut message, MAX_LOG_MESSAGE);
        let mut fields_text = String::new();
        for (k, v) in fields.iter().take(32) {
            fields_text.push_str(&format!(" {k}={v:?}"));
        }
        truncate_utf8(&mut fields_text, MAX_LOG_MESSAGE);
        if !self.log_budget.take(message.len() + fields_text.len() + 16) {
            self.logs_dropped = self.logs_dropped.saturating_add(1);
            return;
        }
        let mcp_level = level.name();
        let level = level.mcp();
        let component = self.hash.short();
        let tool = self.tool.as_deref().unwrap_or("-");
        let call_id = self.call_id;
        // `tracing` has five levels: notice goes as info, and the three
        // above error as error; the record says which it was.
        macro_rules! emit {
            ($lvl:ident) => {
                tracing::$lvl!(target: "toolhost::plugin", component, tool, call_id, level = %mcp_level, fields = %fields_text, "{message}")
            };
        }
        match level {
            LogLevel::Debug => emit!(debug),
            LogLevel::Info | LogLevel::Notice => emit!(info),
            LogLevel::Warning => emit!(warn),
            LogLevel::Error | LogLevel::Critical | LogLevel::Alert | LogLevel::Emergency => emit!(error),
        }
        // And to the caller, when it asked for the call's log at this level
        // (an MCP client that set one): within the same caps as above.
        if let Some(sink) = &self.ctx.log
            && sink.wants(level)
        {
            sink.report(LogRecord {
                level,
                logger: self.tool.as_deref().map(str::to_string),
                message,
                fields: fields.into_iter().take(32).collect(),
            });
        }
    }
}

impl self::toolhost::plugin::progress::Host for SandboxState {
    async fn report(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        let Some(sink) = &self.ctx.progress else {
            return;
        };
        let report = Progress { done, total, message };
        if let Some(report) = self.progress_gate.admit(report, Instant::now()) {
            sink.report(report);
        }
    }
}

/// A nested call's result for a 0.3.0 guest.
fn nested_result(name: &str, result: Result<CoreToolOutput, Error>) -> Result<ToolOutput, HostError> {
    let output = result?;
    ToolOutput::from_core(output).map_err(|why| {
        host_error(
            ErrorCode::ToolFailed,
            format!("the result of `{name}` cannot be passed on: {why}"),
        )
    })
}

impl self::toolhost::plugin::tools::Host for SandboxState {
    async fn call(&mut self, name: String, arguments: String) -> Result<ToolOutput, HostError> {
        let result = self.nested_call(name.clone(), arguments).await;
        nested_result(&name, result)
    }

    async fn call_many(&mut self, calls: Vec<ToolCall>) -> Vec<Result<ToolOutput, HostError>> {
        let names: Vec<String> = calls.iter().map(|c| c.name.clone()).collect();
        let started: Vec<_> = calls
            .into_iter()
            .map(|c| self.nested_call(c.name, c.arguments))
            .collect();
        crate::sandbox::run_all(started)
            .await
            .into_iter()
            .zip(names)
            .map(|(r, name)| nested_result(&name, r))
            .collect()
    }
}

/// A nested call that passed the sandbox's checks, ready to run.
pub(crate) struct NestedCall {
    name: String,
    arguments: serde_json::Value,
    caller: ToolCallerHandle,
    ctx: CallContext,
}

impl NestedCall {
    /// Runs the call through the caller (the dispatch pipeline).
    pub(crate) fn run(self) -> BoxFuture<'static, Result<CoreToolOutput, Error>> {
        Box::pin(async move {
            self.caller
                .0
                .call_tool(&self.name, self.arguments, self.ctx)
                .await
        })
    }
}

impl SandboxState {
    /// Checks a nested call of tool `name` with `arguments` (JSON text) and
    /// returns the future that runs it (see [`SandboxState::prepare_nested`]);
    /// a refusal is a ready error.
    pub(crate) fn nested_call(
        &mut self,
        name: String,
        arguments: String,
    ) -> BoxFuture<'static, Result<CoreToolOutput, Error>> {
        match self.prepare_nested(name, &arguments) {
            Ok(call) => call.run(),
            Err(e) => Box::pin(std::future::ready(Err(e))),
        }
    }

    /// Checks a nested call of tool `name` with `arguments` (JSON text): it
    /// runs through the call's caller (the dispatch pipeline), in the call's
    /// session, with its remaining deadline, one level deeper.
    ///
    /// # Errors
    ///
    /// `capability_not_granted` when the tool is not both declared and
    /// granted, or the call has no caller; `blocked` past the depth limit or
    /// the call's `nested_calls`; `invalid_arguments` (only) when
    /// `arguments` is not JSON.
    pub(crate) fn prepare_nested(&mut self, name: String, arguments: &str) -> Result<NestedCall, Error> {
        if !self.callable_by_caller && !self.callable.contains(&name) {
            return Err(Error::new(
                ErrorCode::CapabilityNotGranted,
                format!(
                    "this plugin may not call the tool `{name}`: it must declare it (`tools` in its declaration: toolhost_sdk::capabilities! {{ tools: [\"{name}\"] }}, `declare()`, or `toolhost declare --tool {name}`) and be granted it (tools = [\"{name}\"] in its [plugins.grants])"
                ),
            ));
        }
        let Some(caller) = self.ctx.caller.clone() else {
            return Err(Error::new(
                ErrorCode::CapabilityNotGranted,
                "nested tool calls are only available to calls made through the dispatch pipeline",
            ));
        };
        if self.ctx.depth >= self.call_depth {
            return Err(Error::new(
                ErrorCode::Blocked,
                format!(
                    "tool calls may nest at most {} deep; `{name}` would be deeper",
                    self.call_depth
                ),
            ));
        }
        let Some(left) = self.nested_left.checked_sub(1) else {
            return Err(Error::new(
                ErrorCode::Blocked,
                format!(
                    "this call has started {} tool calls, the most one call may (`nested_calls`); `{name}` was not called",
                    self.nested_limit
                ),
            ));
        };
        self.nested_left = left;
        let arguments: serde_json::Value = toolhost_json::from_str(arguments).map_err(|e| {
            Error::new(
                ErrorCode::InvalidArguments,
                format!("the arguments for `{name}` are not JSON: {e}"),
            )
        })?;
        let ctx = CallContext {
            call_id: 0,
            parent_call_id: Some(self.ctx.call_id),
            session_id: self.ctx.session_id.clone(),
            session_continues: std::sync::Arc::clone(&self.ctx.session_continues),
            deadline: Some(self.deadline),
            cancel: self.ctx.cancel.child_token(),
            limits: Default::default(),
            depth: self.ctx.depth + 1,
            caller: Some(caller.clone()),
            progress: None,
            log: self.ctx.log.clone(),
            // A wait for a person in the nested call stops this call's
            // clock too.
            waiting: self.waiting(),
            client: self.ctx.client.clone(),
            trace: self.ctx.trace.clone(),
        };
        Ok(NestedCall {
            name,
            arguments,
            caller,
            ctx,
        })
    }
}

impl From<Capabilities> for crate::capabilities::Declared {
    fn from(c: Capabilities) -> Self {
        crate::capabilities::Declared {
            dirs: c.dirs,
            env: c.env,
            tools: c.tools,
            http: c.http,
            secrets: c.secrets,
            elicitation: c.elicitation,
            sampling: c.sampling,
            // The record has no field for it: `client roots` is declared
            // in the custom section.
            roots: false,
            // Said in the custom section only (WIT records cannot gain fields).
            tasks: Vec::new(),
            tasks_deferred: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(t: &str) -> ContentBlock {
        ContentBlock {
            content: Content::Text(t.into()),
            annotations: None,
        }
    }

    #[test]
    fn text_only_results_keep_the_text_path() {
        let plain = ToolOutput {
            structured: None,
            content: vec![text("Hello, Ada!")],
        }
        .into_core(None);
        assert_eq!(plain.content, r#""Hello, Ada!""#);
        assert!(plain.blocks.is_empty() && plain.text.is_none());
        let told = ToolOutput {
            structured: Some(r#"{"n":1}"#.into()),
            content: vec![text("one")],
        }
        .into_core(None);
        assert_eq!(
            (told.content.as_str(), told.text.as_deref()),
            (r#"{"n":1}"#, Some("one"))
        );
        assert!(told.blocks.is_empty());
        let two = ToolOutput {
            structured: None,
            content: vec![text("a"), text("b")],
        }
        .into_core(None);
        assert_eq!(two.content, r#""a\nb""#);
        assert_eq!(two.blocks.len(), 2);
    }

    #[test]
    fn rich_results_carry_their_blocks_base64_encoded() {
        let image = ContentBlock {
            content: Content::Image(Media {
                data: vec![1, 2, 3],
                mime_type: "image/png".into(),
            }),
            annotations: Some(Annotations {
                audience: vec![Role::User],
                priority: Some(0.5),
                last_modified: None,
            }),
        };
        let out = ToolOutput {
            structured: None,
            content: vec![text("a dot"), image.clone()],
        }
        .into_core(None);
        let wire = serde_json::to_value(&out.blocks).unwrap();
        assert_eq!(
            wire[1],
            json!({"type": "image", "data": "AQID", "mimeType": "image/png", "annotations": {"audience": ["user"], "priority": 0.5}})
        );
        assert_eq!(out.model_text(), "a dot");
        // And back, as a nested call's result.
        let back = ToolOutput::from_core(out).unwrap();
        assert_eq!(back.content[1], image);
        assert_eq!(back.structured, None);
    }

    #[test]
    fn nested_results_are_structured_json_or_text() {
        let object = ToolOutput::from_core(CoreToolOutput::json(&json!({"a": 1}))).unwrap();
        assert_eq!(object.structured.as_deref(), Some(r#"{"a":1}"#));
        assert!(object.content.is_empty());
        let number = ToolOutput::from_core(CoreToolOutput::json(&json!(3))).unwrap();
        assert_eq!(number.structured.as_deref(), Some("3"));
        let string = ToolOutput::from_core(CoreToolOutput::json(&json!("hi \u{e9}"))).unwrap();
        assert_eq!(
            (string.structured, string.content),
            (None, vec![text("hi \u{e9}")])
        );
        let bad = CoreToolOutput::blocks(
            vec![CoreBlock::from(CoreContent::Image {
                data: "not base64!".into(),
                mime_type: "image/png".into(),
            })],
            None,
        );
        assert!(ToolOutput::from_core(bad).unwrap_err().contains("not base64"));
    }
}
