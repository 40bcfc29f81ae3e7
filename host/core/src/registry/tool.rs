//! # The `Tool` trait
//!
//! The registry, dispatch and the MCP bridge see every tool through [`Tool`]:
//! a description ([`ToolSpec`]) and an async `call`. The trait knows nothing of
//! WebAssembly or WIT; a component's tool, an MCP server's tool and a built-in
//! are all implementations of it.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::registry::{CallContext, FnTool, Tool, ToolOutput, ToolSpec};
//!
//! let tool = FnTool::new(
//!     ToolSpec::new("echo", "Returns its arguments.", json!({"type": "object"})),
//!     |args, _ctx| async move { Ok(ToolOutput::json(&args)) },
//! );
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let out = tool.call(json!({"x": 1}), CallContext::default()).await.unwrap();
//! assert_eq!(out.content, r#"{"x":1}"#);
//! # });
//! ```

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::dispatch::Waiting;
use crate::error::Result;
use crate::limits::LimitsOverride;
pub use crate::limits::Usage;

/// A boxed, sendable future, as returned by [`Tool::call`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Advisory hints about a tool's behaviour, as in MCP's tool annotations.
/// `None` means "not stated". Hints never grant anything.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHints {
    /// The tool does not modify its environment.
    #[serde(skip_serializing_if = "Option::is_none", rename = "readOnlyHint")]
    pub read_only: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(skip_serializing_if = "Option::is_none", rename = "destructiveHint")]
    pub destructive: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none", rename = "idempotentHint")]
    pub idempotent: Option<bool>,
    /// The tool reaches an open world of external entities.
    #[serde(skip_serializing_if = "Option::is_none", rename = "openWorldHint")]
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// True when no hint is stated.
    pub fn is_empty(&self) -> bool {
        *self == ToolHints::default()
    }
}

/// Whether a call of a tool may run as a task (MCP's tasks extension,
/// `io.modelcontextprotocol/tasks`): started, answered at once with a task
/// handle, and fetched later. The tool states it; MCP 2026-07-28 has no
/// field for it on a tool's definition, so it is the server's to act on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupport {
    /// Always answered synchronously (the default).
    #[default]
    Forbidden,
    /// Run as a task for a client that declared the extension, and
    /// synchronously for one that did not.
    Optional,
    /// Only as a task: a client that did not declare the extension is
    /// refused (`-32021`).
    Required,
}

impl TaskSupport {
    /// `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Reads `forbidden`, `optional` or `required`.
    pub fn parse(text: &str) -> Option<TaskSupport> {
        match text {
            "forbidden" => Some(TaskSupport::Forbidden),
            "optional" => Some(TaskSupport::Optional),
            "required" => Some(TaskSupport::Required),
            _ => None,
        }
    }

    /// Whether calls never run as tasks.
    pub fn is_forbidden(&self) -> bool {
        *self == TaskSupport::Forbidden
    }
}

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name, unique in a registry.
    pub name: String,
    /// A short title for people (MCP's `title`), when the tool states one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    pub description: String,
    /// The JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    /// The JSON Schema of the structured result ([`ToolOutput::content`]),
    /// when the tool states one (MCP's `outputSchema`). An object schema;
    /// a result that does not fit it is the tool's failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "ToolHints::is_empty")]
    pub hints: ToolHints,
    /// Whether its calls may run as tasks (see [`TaskSupport`]).
    #[serde(default, skip_serializing_if = "TaskSupport::is_forbidden")]
    pub task_support: TaskSupport,
    /// Whether a call becomes a task only when the tool says so
    /// (`client.begin-task`), its earlier questions asked of the request
    /// itself, rather than when it starts. Meaningless without
    /// [`ToolSpec::task_support`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task_deferred: bool,
}

impl ToolSpec {
    /// A spec with no hints and no output schema.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolSpec {
            name: name.into(),
            title: None,
            description: description.into(),
            parameters,
            output_schema: None,
            hints: ToolHints::default(),
            task_support: TaskSupport::Forbidden,
            task_deferred: false,
        }
    }

    /// This spec with `support` (see [`ToolSpec::task_support`]).
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// This spec with `hints`.
    pub fn with_hints(mut self, hints: ToolHints) -> Self {
        self.hints = hints;
        self
    }

    /// This spec with the result schema `schema` (see
    /// [`ToolSpec::output_schema`]).
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }
}

/// Identifies one tool call within a host process.
pub type CallId = u64;

/// What a tool call carries besides its arguments.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// This call's id, unique within the process.
    pub call_id: CallId,
    /// The call that made this one (a tool calling a tool), if any.
    pub parent_call_id: Option<CallId>,
    /// The agent session the call belongs to, if the application has one.
    pub session_id: Option<Arc<str>>,
    /// The sessions that session declares it continues (see
    /// [`Session::continuing`](crate::dispatch::Session::continuing)): it
    /// owns what they owned.
    pub session_continues: Arc<[String]>,
    /// The instant by which the call must be finished, if any. A tool must
    /// not run past it; WASM tools take the earlier of it and their own limit.
    pub deadline: Option<Instant>,
    /// Cancelled when the caller gives up on the call. Async tools are also
    /// cancelled by being dropped; blocking tools should poll this.
    pub cancel: CancellationToken,
    /// Sandbox limits asked for this call (applied on top of the plugin's).
    pub limits: LimitsOverride,
    /// How many tool calls enclose this one (0 for a call from the model).
    pub depth: u32,
    /// Where a tool that calls other tools sends those calls (the dispatch
    /// pipeline sets itself here); `None` means nested calls are refused.
    pub caller: Option<ToolCallerHandle>,
    /// Where the call reports waits for a person (a tool that asks for an
    /// approval itself, such as `exec`, holds [`Waiting::person`] while it
    /// asks), passed on to its nested calls.
    pub waiting: Waiting,
    /// Where the tool's progress reports go, when the caller asked for them
    /// (see [`crate::progress`]).
    pub progress: Option<crate::progress::ProgressSink>,
    /// Where the tool's log records go, when the caller wants them (see
    /// [`crate::logging`]); nested calls log there too.
    pub log: Option<crate::logging::LogSink>,
    /// The client the call may ask for its user's answer or its model's
    /// completion (see [`crate::client`]); `None` (headless, or a public
    /// audience) means it may not.
    pub client: Option<crate::client::ClientHandle>,
    /// The caller's W3C trace context, passed on to the calls this one
    /// makes (nested, bridged); see [`crate::trace`].
    pub trace: Option<Arc<crate::trace::TraceContext>>,
}

/// Something that runs nested tool calls: the dispatch pipeline, so that a
/// tool calling a tool passes the same gates as the model's own calls.
pub trait ToolCaller: Send + Sync + 'static {
    /// Calls `name` with `arguments` on behalf of the call described by `ctx`
    /// (whose `call_id` becomes the nested call's parent).
    fn call_tool(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>>;

    /// As [`ToolCaller::call_tool`], with the result whole: on failure, the
    /// JSON a direct call of the tool would have returned (an approval
    /// gate's `BLOCKED: …` object with all its fields, say) besides the
    /// typed error. Default: made from [`ToolCaller::call_tool`].
    fn call_tool_whole(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, NestedResult> {
        let call = self.call_tool(name, arguments, ctx);
        Box::pin(async move {
            match call.await {
                Ok(output) => NestedResult {
                    content: output.content,
                    text: output.text,
                    error: None,
                },
                Err(error) => NestedResult {
                    content: error.to_json().to_string(),
                    text: None,
                    error: Some(error),
                },
            }
        })
    }

    /// The tools a call through this caller may name: those the calling
    /// session sees after its filtering (audience, toolsets, availability),
    /// in name order, in either registry mode (lazy mode's activation
    /// concerns the model's own calls, not nested ones). Default: none.
    fn visible_tools(&self) -> Vec<ToolSpec> {
        Vec::new()
    }
}

/// A nested call's result, whole (see [`ToolCaller::call_tool_whole`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NestedResult {
    /// The tool's JSON result, or the pipeline's error JSON.
    pub content: String,
    /// The text for the model, when the tool gave one besides its JSON.
    pub text: Option<String>,
    /// Why it failed, when it did.
    pub error: Option<crate::Error>,
}

/// A shared [`ToolCaller`], as carried in a [`CallContext`].
#[derive(Clone)]
pub struct ToolCallerHandle(pub Arc<dyn ToolCaller>);

impl fmt::Debug for ToolCallerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolCallerHandle")
    }
}

/// A successful tool result: structured JSON, and the text a model should
/// read when the tool wrote one.
///
/// ```
/// use serde_json::json;
/// use toolhost_core::registry::ToolOutput;
///
/// let plain = ToolOutput::json(&json!("Hello, Ada!"));
/// assert_eq!(plain.content, r#""Hello, Ada!""#);
/// assert_eq!(plain.model_text(), "Hello, Ada!");
/// let table = ToolOutput::json(&json!({"rows": 2})).with_text("2 rows");
/// assert_eq!(table.model_text(), "2 rows");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The result as JSON text: what a calling tool or script receives, and
    /// what MCP clients receive as `structuredContent` (a JSON string
    /// without [`text`](ToolOutput::text) goes as the text block alone).
    pub content: String,
    /// The text the model should read, when the tool gave one that differs
    /// from the JSON (a summary, a rendered table). `None`: the model reads
    /// the JSON (see [`ToolOutput::model_text`]).
    pub text: Option<String>,
    /// Sandbox usage, for tools that run in a sandbox.
    pub usage: Option<Usage>,
    /// Set when the call did not do its work and `content` already says why,
    /// in the tool's own words (the approval gate's `BLOCKED: …` result, for
    /// instance): dispatch reports the call as failed with this code and
    /// passes `content` on unchanged, rather than wrap it as an error.
    pub error_code: Option<crate::ErrorCode>,
    /// For a refusal, why, in one line (the `"error"` string of `content`):
    /// the message of the typed error a nested caller gets.
    pub reason: Option<String>,
    /// Content blocks (images, audio, resources, annotated text) an MCP
    /// client gets as the result's `content`, in place of the text made
    /// from [`content`](ToolOutput::content) (see [`crate::content`]);
    /// empty for a result that is JSON and text alone.
    pub blocks: Vec<crate::content::ContentBlock>,
    /// The same JSON as [`content`](ToolOutput::content), already parsed,
    /// when the layer that made the result had it as a value (a bridged
    /// server's `structuredContent`, a plugin's checked structured result):
    /// the MCP server then sends it as it is instead of reading the text
    /// again. `None` says nothing; the text is the result either way.
    pub structured: Option<Value>,
}

impl ToolOutput {
    /// A result from JSON text the tool produced.
    pub fn json_text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            text: None,
            usage: None,
            error_code: None,
            reason: None,
            blocks: Vec::new(),
            structured: None,
        }
    }

    /// A result whose JSON is `value`, kept parsed beside its text (see
    /// [`ToolOutput::structured`]): for a layer that holds the value
    /// anyway, so that no layer after it reads the text back.
    pub fn value(value: Value) -> Self {
        ToolOutput {
            structured: Some(value),
            ..ToolOutput::json_text(String::new())
        }
        .with_content_of_structured()
    }

    fn with_content_of_structured(mut self) -> Self {
        if let Some(value) = &self.structured {
            self.content = value.to_string();
        }
        self
    }

    /// A refusal: the call did not run, `content` (JSON text) says why, and
    /// `code` is the error code dispatch reports. See [`ToolOutput::error_code`].
    pub fn refused(code: crate::ErrorCode, content: impl Into<String>) -> Self {
        ToolOutput {
            error_code: Some(code),
            ..ToolOutput::json_text(content)
        }
    }

    /// A refusal (see [`ToolOutput::refused`]) whose one-line reason is
    /// `reason`.
    pub fn refused_because(
        code: crate::ErrorCode,
        reason: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        ToolOutput {
            reason: Some(reason.into()),
            ..ToolOutput::refused(code, content)
        }
    }

    /// A result serialized from a JSON value.
    pub fn json(value: &Value) -> Self {
        ToolOutput::json_text(value.to_string())
    }

    /// A result of content blocks: MCP clients get `blocks`; its JSON (what
    /// a calling tool or script gets) is `structured` when the tool gives
    /// one (an object, MCP's `structuredContent`), else the blocks
    /// themselves as a JSON array; its text for the model, the text blocks'.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost_core::content::{Content, ContentBlock};
    /// use toolhost_core::registry::ToolOutput;
    ///
    /// let image = ContentBlock::from(Content::Image { data: "AAAA".into(), mime_type: "image/png".into() });
    /// let out = ToolOutput::blocks(vec![ContentBlock::text("a dot"), image], None);
    /// assert_eq!(out.model_text(), "a dot");
    /// assert_eq!(serde_json::from_str::<serde_json::Value>(&out.content).unwrap()[1]["type"], "image");
    /// ```
    pub fn blocks(blocks: Vec<crate::content::ContentBlock>, structured: Option<Value>) -> Self {
        let content = match &structured {
            Some(_) => String::new(),
            None => serde_json::to_string(&blocks).unwrap_or_else(|_| "[]".into()),
        };
        let texts: Vec<&str> = blocks.iter().filter_map(|b| b.as_text()).collect();
        let text = (!texts.is_empty()).then(|| texts.join("\n"));
        ToolOutput {
            text,
            blocks,
            structured,
            ..ToolOutput::json_text(content)
        }
        .with_content_of_structured()
    }

    /// This result with `text` for the model (see [`ToolOutput::json_text`]).
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// What the model should read: see [`model_text`].
    pub fn model_text(&self) -> std::borrow::Cow<'_, str> {
        model_text(&self.content, self.text.as_deref())
    }
}

/// The text a model should read for a result whose JSON text is `content`
/// and whose own text is `text`: `text` when there is one; else a JSON
/// string's value, without quotes (a tool returning `"Hello, Ada!"` reads as
/// `Hello, Ada!`); else `content` as it is.
pub fn model_text<'a>(content: &'a str, text: Option<&'a str>) -> std::borrow::Cow<'a, str> {
    if let Some(text) = text {
        return text.into();
    }
    if content.trim_start().starts_with('"')
        && let Ok(Value::String(s)) = serde_json::from_str(content)
    {
        return s.into();
    }
    content.into()
}

/// A tool: a description and an async handler. See the module documentation.
pub trait Tool: Send + Sync + 'static {
    /// The tool's description. It does not change while the tool is registered.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool with `arguments` (already validated against the spec's
    /// parameter schema by dispatch). Errors carry a [`crate::ErrorCode`]: a tool's
    /// own failure is `tool_failed` or `invalid_arguments`; sandbox limits have
    /// their own codes.
    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>>;

    /// Whether this tool must run alone in a batch (see dispatch). Default: no.
    fn sequential(&self) -> bool {
        false
    }

    /// Whether this tool may call tools itself. Dispatch gives a tool that
    /// says no no [`CallContext::caller`], so that its calls skip making
    /// one; any nested call it tried would be refused. Default: yes.
    fn calls_tools(&self) -> bool {
        true
    }

    /// The call a call of this tool stands for, for a tool that calls
    /// another on the model's behalf: a lazy MCP server's `call_tool` names
    /// the remote tool it will call, as `mcp__SERVER__TOOL`, and the
    /// arguments that tool will get. Dispatch asks this after argument
    /// validation; the pre-call hooks then see that call too, the approval
    /// gate judges it in place of this one and the post-call hooks see its
    /// name (see [`crate::dispatch`]), so that an operator's rules for the
    /// tool apply however it is reached. Default: [`Standing::Itself`].
    fn stands_for<'a>(&self, arguments: &'a Value) -> Standing<'a> {
        let _ = arguments;
        Standing::Itself
    }

    /// The arguments of a call of this tool (`arguments`) that stands for
    /// the same call as before (see [`Tool::stands_for`]) with `effective`
    /// as that call's arguments: how a pre-call hook's rewrite of the call
    /// a tool stands for reaches the tool. Asked only of tools that stand
    /// for a call. Default: `arguments`, unchanged.
    fn stand_in_arguments(&self, arguments: Value, effective: Value) -> Value {
        let _ = effective;
        arguments
    }
}

/// What a call of a tool stands for (see [`Tool::stands_for`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Standing<'a> {
    /// Nothing but itself (the tools that call no other on the model's
    /// behalf).
    Itself,
    /// A call of tool `name` with `arguments`.
    For {
        /// The name the tool would have if it were registered itself (for
        /// an MCP tool, its bridged name).
        name: String,
        /// The arguments it gets.
        arguments: Cow<'a, Value>,
    },
    /// A call the tool refuses without running: it names no tool the tool
    /// can call, or arguments that tool's schema refuses. This refusal is
    /// the result, and no one is asked.
    Refused(Box<ToolOutput>),
}

impl fmt::Debug for dyn Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.spec().name)
            .finish_non_exhaustive()
    }
}

/// A tool made of a spec and an async closure: the quickest way to write a
/// built-in.
pub struct FnTool<F> {
    spec: ToolSpec,
    handler: F,
}

impl<F> fmt::Debug for FnTool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl<F, Fut> FnTool<F>
where
    F: Fn(Value, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput>> + Send + 'static,
{
    /// A tool whose calls run `handler`.
    pub fn new(spec: ToolSpec, handler: F) -> Self {
        FnTool { spec, handler }
    }
}

impl<F, Fut> Tool for FnTool<F>
where
    F: Fn(Value, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput>> + Send + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        Box::pin((self.handler)(arguments, ctx))
    }
}

/// A tool whose handler blocks (file or process work without async): calls
/// run on tokio's blocking pool, so they never stall the async workers.
pub struct BlockingFnTool<F> {
    spec: ToolSpec,
    handler: Arc<F>,
}

impl<F> fmt::Debug for BlockingFnTool<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingFnTool")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl<F> BlockingFnTool<F>
where
    F: Fn(Value, CallContext) -> Result<ToolOutput> + Send + Sync + 'static,
{
    /// A tool whose calls run `handler` on the blocking pool.
    pub fn new(spec: ToolSpec, handler: F) -> Self {
        BlockingFnTool {
            spec,
            handler: Arc::new(handler),
        }
    }
}

impl<F> Tool for BlockingFnTool<F>
where
    F: Fn(Value, CallContext) -> Result<ToolOutput> + Send + Sync + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        let handler = Arc::clone(&self.handler);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || handler(arguments, ctx))
                .await
                .map_err(|e| crate::Error::internal(format!("blocking tool task failed: {e}")))?
        })
    }
}
