//! # Serving the registry over MCP
//!
//! [`McpServer`] is an rmcp [`ServerHandler`] over a [`Dispatcher`]: the
//! tools it lists are the dispatcher's definitions for an MCP session of the
//! server's audience (toolsets, availability and lazy mode applied), each
//! tool's JSON Schema the MCP input schema and its hints the annotations;
//! every call runs through the full dispatch pipeline (hooks, audience,
//! validation, approval, limits, spill). A result comes back as the text
//! the model reads plus, unless it is a plain string, `structuredContent`
//! (see `call_result`),
//! a tool's output schema as its `outputSchema`; a request that carries a
//! `progressToken` gets the tool's progress reports as
//! `notifications/progress`, all before its result; a failed call comes back as
//! an `isError` result whose text is the pipeline's error JSON
//! (`{"error", "error_code", ...}`). A change of the registry (a component
//! loaded or unloaded, an MCP server's tools bridged in or gone) sends
//! `notifications/tools/list_changed`; so does a lazy-mode `tool_search`
//! that activates a tool, to the session that activated it.
//!
//! Each MCP session (the one stdio session, or one per streamable-HTTP
//! session) is a dispatch [`Session`] of its own: its lazy activations,
//! session approvals and process receipts are its own. With an
//! [`McpApprover`] ([`McpServer::with_approver`]), a call that needs
//! approval is put to that session's client as an elicitation.
//!
//! [`serve_stdio`] and [`serve_http`](super::http::serve_http) run it.
//! Both shut down gracefully when their `shutdown` token is cancelled: new
//! calls are refused, calls in flight get up to `grace` to finish, then the
//! transport closes. What HTTP adds (tokens, origins, health, the bounds on
//! what one client may hold) is in [`http`](super::http).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
    CompleteResult, ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ResourceUpdatedNotificationParam,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool as McpToolDef,
    ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::approval::McpApprover;
use super::asking::PeerClient;
use super::bridge::McpDispatcher;
use super::catalog::{self, Listed, Subscriptions};
use super::round_trip::{self, Ending, Retry, RoundTrip, RoundTrips};
use super::tasks::Deferred;
use toolhost_core::client::ClientHandle;
use toolhost_core::dispatch::{DispatchContext, Dispatcher, Session, ToolResult};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::logging::{LogLevel, LogRecord, LogSink};
use toolhost_core::metrics::Metrics;
use toolhost_core::progress::{Progress, ProgressSink};
use toolhost_core::registry::lazy::RegistryMode;
use toolhost_core::registry::{BoxFuture, ToolAudience, ToolSpec};
use toolhost_core::spans::Tracing;
use toolhost_core::trace::TraceContext;

mod observe;
mod task_calls;
mod traced;

pub use observe::{Observed, Transport};

/// How long the first `tools/list` waits for bridged MCP servers to report
/// their tools (connected, or failed) before answering without them; they
/// arrive later with `list_changed`.
const FIRST_LIST_WAIT: Duration = Duration::from_secs(5);

/// How long a client on MCP 2026-07-28 may cache a list (`ttlMs`): changes
/// reach it sooner on `subscriptions/listen`; a client that does not listen
/// sees a reload within this time.
pub const LIST_TTL: Duration = Duration::from_secs(60);

/// An MCP server over a [`Dispatcher`], for one audience. Cheap to clone;
/// clones share the session and the in-flight call count used for graceful
/// shutdown.
#[derive(Clone)]
pub struct McpServer {
    dispatcher: Dispatcher,
    audience: ToolAudience,
    session: Arc<Session>,
    /// Cancelled when the last handle of this session's server is dropped
    /// (the MCP session ended): stops the session's background tasks.
    session_ended: Arc<tokio_util::sync::DropGuard>,
    state: Arc<Shared>,
    approver: Option<Arc<McpApprover>>,
    /// The level this session's client set with `logging/setLevel`; until it
    /// sets one, tools' log records are not sent to it.
    log_level: Arc<std::sync::Mutex<Option<LogLevel>>>,
    /// The resources this session's client subscribed to.
    subscriptions: Arc<Subscriptions>,
    /// How 2026-07-28 requests ask their client (see [`round_trip`]).
    round_trips: RoundTrips,
    /// Where calls run as tasks are kept, when tasks are served.
    tasks: Option<Arc<crate::tasks::Tasks>>,
    /// Where requests' durations are counted, when metrics are on.
    metrics: Option<Arc<Metrics>>,
    /// Where requests' spans go, when tracing is on.
    tracing: Option<Tracing>,
}

struct Shared {
    in_flight: AtomicUsize,
    draining: AtomicBool,
    /// Whether a `tools/list` has waited for the bridged servers already.
    waited_for_bridges: AtomicBool,
    idle: Notify,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("audience", &self.audience)
            .field("session", &self.session.id())
            .field("in_flight", &self.in_flight())
            .finish_non_exhaustive()
    }
}

/// Decrements the in-flight count when a call ends, however it ends.
struct InFlight(Arc<Shared>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl McpServer {
    /// A server for `dispatcher`'s tools as `audience` may see them:
    /// [`ToolAudience::Public`] lists and calls only tools registered public.
    pub fn new(dispatcher: Dispatcher, audience: ToolAudience) -> Self {
        let state = Arc::new(Shared {
            in_flight: AtomicUsize::new(0),
            draining: AtomicBool::new(false),
            waited_for_bridges: AtomicBool::new(false),
            idle: Notify::new(),
        });
        McpServer {
            session: new_session(audience),
            session_ended: Arc::new(CancellationToken::new().drop_guard()),
            dispatcher,
            audience,
            state,
            approver: None,
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            round_trips: RoundTrips::new(super::request_state::StateSealer::new(
                super::request_state::StateKey::random(),
                Arc::new(super::store::MemoryStore::new()),
            )),
            tasks: None,
            metrics: None,
            tracing: None,
        }
    }

    /// Makes a server span of each request (see [`toolhost_core::spans`]),
    /// the parent of its calls' spans, when served as [`Observed`].
    pub fn with_tracing(mut self, tracing: Tracing) -> Self {
        self.tracing = Some(tracing);
        self
    }

    /// Counts each request's duration in `metrics`
    /// (`mcp_server_operation_duration_seconds`), when served as
    /// [`Observed`].
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Seals the request states of 2026-07-28 clients with `round_trips`'
    /// key and store (by default, a random key of this process and its
    /// memory: replicas need a shared key and store).
    pub fn with_round_trips(mut self, round_trips: RoundTrips) -> Self {
        self.round_trips = round_trips;
        self
    }

    /// Lets `approver` ask this server's clients (each in its own session)
    /// when a call needs approval; it must be the approval callback of the
    /// dispatcher's gate (see [`McpApprover`]).
    pub fn with_approver(mut self, approver: Arc<McpApprover>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// The same server for a new MCP session: same dispatcher, audience
    /// and shutdown state, with a dispatch session of its own.
    pub fn new_session(&self) -> Self {
        McpServer {
            session: new_session(self.audience),
            session_ended: Arc::new(CancellationToken::new().drop_guard()),
            log_level: Arc::default(),
            subscriptions: Arc::default(),
            ..self.clone()
        }
    }

    /// The same server for a new MCP session of a caller with a grant
    /// (an OAuth token's scopes: see [`crate::auth`]): its session is of
    /// `audience` and sees only `toolsets` (all served, when `None`).
    pub fn new_session_granted(&self, audience: ToolAudience, toolsets: Option<Vec<String>>) -> Self {
        McpServer {
            session: Session::granted("mcp", audience, toolsets),
            audience,
            ..self.new_session()
        }
    }

    /// The dispatcher it serves.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// The dispatch session this server's calls run in.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// The number of tool calls running now, in every session.
    pub fn in_flight(&self) -> usize {
        self.state.in_flight.load(Ordering::Acquire)
    }

    /// Refuses new calls, then waits until no call is running or `grace`
    /// has passed. Returns the number of calls still running.
    pub async fn drain(&self, grace: Duration) -> usize {
        self.state.draining.store(true, Ordering::Release);
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let idle = self.state.idle.notified();
            let running = self.in_flight();
            if running == 0 {
                return 0;
            }
            if tokio::time::timeout_at(deadline, idle).await.is_err() {
                return self.in_flight();
            }
        }
    }

    /// Whether the server is shutting down (refusing new calls).
    pub fn is_draining(&self) -> bool {
        self.state.draining.load(Ordering::Acquire)
    }

    fn enter(&self) -> Option<InFlight> {
        self.state.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight(Arc::clone(&self.state));
        (!self.state.draining.load(Ordering::Acquire)).then_some(guard)
    }

    /// As [`McpServer::enter`], for a request answered with a JSON-RPC
    /// error when the server is shutting down.
    fn enter_request(&self) -> std::result::Result<InFlight, ErrorData> {
        self.enter()
            .ok_or_else(|| ErrorData::internal_error("the server is shutting down", None))
    }

    /// The first listing of a session's server waits (up to
    /// [`FIRST_LIST_WAIT`]) for the bridged servers to report what they
    /// offer; later ones answer at once.
    async fn settle_bridges(&self) {
        if !self.state.waited_for_bridges.swap(true, Ordering::AcqRel) {
            self.dispatcher.mcp_settled(FIRST_LIST_WAIT).await;
        }
    }

    /// The caching hints of a list for a client on MCP 2026-07-28 (none
    /// for the revisions before it, which have no such fields): a full
    /// registry lists the same items to every caller of this server, so
    /// any cache may keep them for [`LIST_TTL`] (a change is announced on
    /// `subscriptions/listen` meanwhile); a lazy registry's lists depend on
    /// the tools this caller activated, so they are private and stale at
    /// once.
    fn cache_hints(&self, context: &RequestContext<RoleServer>) -> (Option<u64>, Option<CacheScope>) {
        let current = context
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        if !current {
            return (None, None);
        }
        match self.dispatcher.mode() {
            RegistryMode::Full => (
                Some(u64::try_from(LIST_TTL.as_millis()).unwrap_or(u64::MAX)),
                Some(CacheScope::Public),
            ),
            _ => (Some(0), Some(CacheScope::Private)),
        }
    }

    /// The context of a request of this session that is not a tool call
    /// (a prompt, a resource, a completion): its cancellation, and the
    /// client a prompt or resource may ask (dispatch passes it on to
    /// trusted sessions' prompts and resources only).
    fn request_ctx(&self, context: &RequestContext<RoleServer>) -> DispatchContext {
        DispatchContext {
            cancel: context.ct.clone(),
            trace: traced::trace_of(context),
            client: Some(ClientHandle(Arc::new(PeerClient::new(context.peer.clone())))),
            ..DispatchContext::new(Arc::clone(&self.session))
        }
    }
}

/// A new MCP session's dispatch session: `mcp-` and 128 random bits, new in
/// every process (see [`Session`]).
fn new_session(audience: ToolAudience) -> Arc<Session> {
    Session::new("mcp", audience)
}

/// The MCP description of a tool spec.
pub fn mcp_tool(spec: &ToolSpec) -> McpToolDef {
    let schema = match &spec.parameters {
        Value::Object(map) => map.clone(),
        _ => serde_json::Map::from_iter([("type".to_string(), Value::from("object"))]),
    };
    let mut tool = McpToolDef::new(spec.name.clone(), spec.description.clone(), Arc::new(schema));
    tool.title = spec.title.clone();
    if let Some(Value::Object(output)) = &spec.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(output.clone()));
    }
    if !spec.hints.is_empty() {
        let mut annotations = ToolAnnotations::new();
        annotations.read_only_hint = spec.hints.read_only;
        annotations.destructive_hint = spec.hints.destructive;
        annotations.idempotent_hint = spec.hints.idempotent;
        annotations.open_world_hint = spec.hints.open_world;
        tool = tool.with_annotations(annotations);
    }
    tool
}

/// A dispatched call's result as MCP sees it. A success carries one text
/// block: the tool's text, else its JSON (a JSON string as its plain text,
/// without quotes). A tool's JSON also goes as `structuredContent` (an
/// object as it is, any other value as `{"result": value}`, since MCP wants
/// an object), except a JSON string without text of its own: its text
/// block is the string itself, which a client reads back exactly (the
/// bridge does), so the string crosses the wire once, not twice. A failure
/// is an `isError` result whose text is the pipeline's error JSON.
pub(crate) fn call_result(mut result: ToolResult) -> CallToolResult {
    if result.is_error() {
        return CallToolResult::error(vec![ContentBlock::text(result.content)]);
    }
    if !result.blocks.is_empty() {
        return blocks_result(result);
    }
    if let Some(value) = result.structured.take() {
        // Parsed by the layer that made it: sent as it is, not read again.
        return structured_result(result, value);
    }
    // The JSON is parsed once, for both the structured content and (for a
    // JSON string without text of its own) the model's text: the same
    // answer as `ToolResult::model_text`, one pass over the bytes fewer.
    // A text result (one JSON string) is read 64 bytes a step
    // (`toolhost_json::string_value`); without escapes, its text is the
    // content less its quotes, taken in place rather than copied.
    let text = toolhost_json::string_value(&result.content).map(|text| match text {
        Cow::Borrowed(_) => None,
        Cow::Owned(unescaped) => Some(unescaped),
    });
    let parsed = match text {
        Some(Some(unescaped)) => Ok(Value::String(unescaped)),
        Some(None) => Ok(Value::String(unquoted(std::mem::take(&mut result.content)))),
        None => toolhost_json::from_str::<Value>(&result.content),
    };
    match parsed {
        Ok(value) => structured_result(result, value),
        // Not JSON (a host application's tool breaking the contract): text only.
        Err(_) => CallToolResult::success(vec![ContentBlock::text(result.text.unwrap_or(result.content))]),
    }
}

/// The answer for a result whose JSON is `value` (read from `content`, or
/// handed over parsed by the layer that made it).
fn structured_result(result: ToolResult, value: Value) -> CallToolResult {
    let (text, structured) = match value {
        Value::Object(map) => (result.text.unwrap_or(result.content), Some(Value::Object(map))),
        Value::String(s) => match result.text {
            Some(text) => (text, Some(serde_json::json!({ "result": s }))),
            None => (s, None),
        },
        other => (
            result.text.unwrap_or(result.content),
            Some(serde_json::json!({ "result": other })),
        ),
    };
    let mut out = CallToolResult::success(vec![ContentBlock::text(text)]);
    out.structured_content = structured;
    out
}

/// A result with content blocks: the blocks as its `content`, unchanged
/// (MCP's JSON is theirs: `toolhost_core::content`), and its JSON as
/// `structuredContent` when it is an object (a tool's structured result; a
/// result without one has the blocks' array as its JSON, which is not).
fn blocks_result(result: ToolResult) -> CallToolResult {
    let blocks: Vec<ContentBlock> = result
        .blocks
        .into_iter()
        .filter_map(|block| {
            // The two models are one JSON; a block rmcp would not read
            // (none should) is left out rather than fail the call.
            serde_json::to_value(&block)
                .ok()
                .and_then(|v| serde_json::from_value(v).ok())
        })
        .collect();
    let mut out = CallToolResult::success(blocks);
    out.structured_content = match result.structured {
        Some(value) => Some(value).filter(Value::is_object),
        None if result.content.trim_start().starts_with('{') => {
            toolhost_json::from_str::<Value>(&result.content)
                .ok()
                .filter(Value::is_object)
        }
        None => None,
    };
    out
}

/// `quoted` (a JSON string without escapes, quotes included) less its
/// quotes, in its own buffer: a move within the buffer, not a copy into a
/// new one.
fn unquoted(mut quoted: String) -> String {
    quoted.pop();
    if !quoted.is_empty() {
        quoted.remove(0);
    }
    quoted
}

/// How many notifications (progress reports, log records) may wait to be
/// sent for one call; past that, they are dropped (the tool reports faster
/// than the client reads).
const NOTICE_QUEUE: usize = 64;

/// What a call sends its client while it runs.
enum Notice {
    Progress(Progress),
    Log(LogRecord),
}

/// Sends one call's notifications to its client, in order, from a task of
/// its own, so that reporting never blocks the call: progress reports as
/// `notifications/progress` (the request carried a `progressToken`), log
/// records as `notifications/message` (the client set a level).
struct NoticeRelay {
    /// Notifications, then `None` when the call has ended.
    sender: tokio::sync::mpsc::Sender<Option<Notice>>,
    task: tokio::task::JoinHandle<()>,
}

impl NoticeRelay {
    fn start(peer: rmcp::Peer<RoleServer>, token: Option<ProgressToken>) -> Self {
        let (sender, mut receiver) = tokio::sync::mpsc::channel::<Option<Notice>>(NOTICE_QUEUE);
        let task = tokio::spawn(async move {
            while let Some(Some(notice)) = receiver.recv().await {
                let sent = match notice {
                    Notice::Progress(report) => {
                        let Some(token) = &token else { continue };
                        let mut param = ProgressNotificationParam::new(token.clone(), report.done);
                        param.total = report.total;
                        param.message = report.message;
                        peer.notify_progress(param).await
                    }
                    Notice::Log(record) => super::logging::send(&peer, record).await,
                };
                if sent.is_err() {
                    break;
                }
            }
        });
        NoticeRelay { sender, task }
    }

    /// The sink the call's progress goes to.
    fn progress(&self) -> ProgressSink {
        let sender = self.sender.clone();
        ProgressSink::new(move |report| {
            let _ = sender.try_send(Some(Notice::Progress(report)));
        })
    }

    /// The sink the call's log goes to, from `level` up.
    fn log(&self, level: LogLevel) -> LogSink {
        let sender = self.sender.clone();
        LogSink::new(level, move |record| {
            let _ = sender.try_send(Some(Notice::Log(record)));
        })
    }

    /// Waits until every notification made so far is sent; later ones
    /// (from a sink something kept) are dropped.
    async fn finish(self) {
        let _ = self.sender.send(None).await;
        let _ = self.task.await;
    }
}

impl McpServer {
    /// Answers a `tools/call` (see [`ServerHandler::call_tool`]).
    async fn answer_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        trace: Option<Arc<TraceContext>>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(guard) = self.enter() else {
            let e = Error::new(ErrorCode::Unavailable, "the server is shutting down");
            let text = e.to_json().to_string();
            return Ok(CallToolResult::error(vec![ContentBlock::text(text)]).into());
        };
        let (_guard, deferred) = match self
            .call_as_task(&request, &context, guard, trace.as_ref())
            .await?
        {
            task_calls::Called::Task(created) => return Ok(created.into()),
            task_calls::Called::Now(guard) => (Some(guard), None),
            task_calls::Called::Deferred(tasks, call) => (None, Some((tasks, call))),
        };
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
        // MCP 2026-07-28 sets the level per request (`_meta`); the earlier
        // revisions, per session (`logging/setLevel`). Neither: no records.
        let log_level = context
            .meta
            .log_level()
            .map(super::logging::level)
            .or(*self.log_level.lock().unwrap_or_else(PoisonError::into_inner));
        let relay = (token.is_some() || log_level.is_some())
            .then(|| NoticeRelay::start(context.peer.clone(), token.clone()));
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // A 2026-07-28 request asks by multi-round-trip results.
        let trip = match round_trip::is_round_trip(&context) {
            true => Some(
                RoundTrip::begin(
                    &self.round_trips,
                    &context,
                    Retry {
                        method: "tools/call",
                        name: &request.name,
                        arguments: &arguments,
                        responses: request.input_responses,
                        state: request.request_state.as_deref(),
                    },
                )
                .await?,
            ),
            false => None,
        };
        // A call answered within its request has the request's server
        // span for its own (the conventions' `execute_tool` span); one that
        // may go on as a task, after its request, makes its own.
        let trace = match deferred {
            None => trace.map(|trace| Arc::new(trace.offered_to_call())),
            Some(_) => trace,
        };
        let mut ctx = DispatchContext {
            cancel: context.ct.clone(),
            progress: relay
                .as_ref()
                .filter(|_| token.is_some())
                .map(NoticeRelay::progress),
            log: relay
                .as_ref()
                .zip(log_level)
                .map(|(relay, level)| relay.log(level)),
            // Dispatch passes it on to trusted sessions' calls only.
            client: Some(ClientHandle(Arc::new(PeerClient::new(context.peer.clone())))),
            trace,
            ..DispatchContext::new(Arc::clone(&self.session))
        };
        let activated = self.session.activated().len();
        let result = match (&trip, deferred) {
            (Some(trip), Some((tasks, call))) => {
                trip.attach(&mut ctx);
                let (trip, dispatcher, name) = (
                    Arc::clone(trip),
                    self.dispatcher.clone(),
                    request.name.to_string(),
                );
                let work = move |ctx: DispatchContext| -> BoxFuture<'static, ToolResult> {
                    Box::pin(async move { trip.scope(dispatcher.dispatch(&name, arguments, &ctx)).await })
                };
                match tasks.run_deferred(call, ctx, work).await {
                    Deferred::Finished(Some(result)) => result,
                    Deferred::Finished(None) => {
                        return Err(ErrorData::internal_error(
                            "the call stopped without a result",
                            None,
                        ));
                    }
                    Deferred::Task(created) => {
                        if let Some(relay) = relay {
                            relay.finish().await;
                        }
                        return Ok(created.into());
                    }
                }
            }
            (Some(trip), _) => {
                trip.attach(&mut ctx);
                trip.scope(self.dispatcher.dispatch(&request.name, arguments, &ctx))
                    .await
            }
            // Deferred calls are 2026-07-28 requests, round trips all.
            (None, _) => self.dispatcher.dispatch(&request.name, arguments, &ctx).await,
        };
        if let Some(relay) = relay {
            // Every notification goes out before the result: none may follow it.
            relay.finish().await;
        }
        if self.session.activated().len() != activated {
            // A lazy-mode tool_search activated a tool: this session's list grew.
            let _ = context.peer.notify_tool_list_changed().await;
        }
        if let Some(ending) = trip.as_ref().and_then(|trip| trip.ending()) {
            return match ending {
                Ending::Ask(questions) => Ok(questions.into()),
                Ending::Error(e) => Err(e),
            };
        }
        if result.is_unknown_tool() {
            // Every MCP revision answers a call of a tool the server does
            // not have (or does not show this session) with a protocol
            // error, not a failed result.
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                Some(result.json()),
            ));
        }
        Ok(call_result(result).into())
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated, reason = "MCP logging: see `super::logging`")]
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        self.advertise_tasks(&mut capabilities);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
    }

    /// Records the client (and its elicitation capability) for approvals
    /// before answering, so that a call right after `initialize` can be put
    /// to it: waiting for `notifications/initialized` would race the first
    /// call.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        if let Some(approver) = &self.approver {
            approver.register(self.session.id(), context.peer.clone());
        }
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.settle_bridges().await;
        let specs = self
            .dispatcher
            .tool_specs(&self.session)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let mut result = ListToolsResult::with_all_items(specs.iter().map(mcp_tool).collect());
        (result.ttl_ms, result.cache_scope) = self.cache_hints(&context);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let trace = traced::trace_of(&context);
        self.answer_call(request, context, trace).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.task_get(request).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_update(request).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_cancel(request).await
    }

    /// Keeps the level: from the next call on, tools' log records at or
    /// above it come to this client as `notifications/message`.
    #[allow(deprecated, reason = "MCP logging: see `super::logging`")]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let level = super::logging::level(request.level);
        *self.log_level.lock().unwrap_or_else(PoisonError::into_inner) = Some(level);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.settle_bridges().await;
        let mut result = catalog::list_prompts(&self.dispatcher, &self.session)?;
        (result.ttl_ms, result.cache_scope) = self.cache_hints(&context);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let _guard = self.enter_request()?;
        let ctx = self.request_ctx(&context);
        if !round_trip::is_round_trip(&context) {
            return Ok(catalog::get_prompt(&self.dispatcher, request, &ctx).await?.into());
        }
        // The request itself goes to the prompt: what the state is bound
        // to is taken first.
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let (name, state) = (request.name.clone(), request.request_state.clone());
        let retry = Retry {
            method: "prompts/get",
            name: &name,
            arguments: &arguments,
            responses: request.input_responses.clone(),
            state: state.as_deref(),
        };
        round_trip::run(&self.round_trips, &context, retry, ctx, |ctx| async move {
            Ok(catalog::get_prompt(&self.dispatcher, request, &ctx).await?.into())
        })
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.settle_bridges().await;
        let mut result = catalog::list_resources(&self.dispatcher, &self.session)?;
        (result.ttl_ms, result.cache_scope) = self.cache_hints(&context);
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.settle_bridges().await;
        let mut result = catalog::list_templates(&self.dispatcher, &self.session)?;
        (result.ttl_ms, result.cache_scope) = self.cache_hints(&context);
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let _guard = self.enter_request()?;
        let ctx = self.request_ctx(&context);
        if !round_trip::is_round_trip(&context) {
            return Ok(catalog::read_resource(&self.dispatcher, &request, &ctx)
                .await?
                .into());
        }
        let request = &request;
        let retry = Retry {
            method: "resources/read",
            name: &request.uri,
            arguments: &Value::Null,
            responses: request.input_responses.clone(),
            state: request.request_state.as_deref(),
        };
        round_trip::run(&self.round_trips, &context, retry, ctx, |ctx| async move {
            Ok(catalog::read_resource(&self.dispatcher, request, &ctx)
                .await?
                .into())
        })
        .await
    }

    #[allow(
        deprecated,
        reason = "resources/subscribe is served for the revisions before 2026-07-28"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .subscribe(&self.dispatcher, &self.session, &request.uri)
    }

    #[allow(
        deprecated,
        reason = "resources/unsubscribe is served for the revisions before 2026-07-28"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    /// The tool `name` for rmcp's HTTP layer, which checks a `tools/call`'s
    /// `Mcp-Param-*` headers against the `x-mcp-header` annotations of its
    /// input schema (SEP-2243). Whether the caller may call it is decided
    /// by the call itself, as for every other request.
    fn get_tool(&self, name: &str) -> Option<McpToolDef> {
        let registry = self.dispatcher.registry();
        registry.get(name).map(|entry| mcp_tool(entry.spec()))
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(super::listen::accepted_filter(
            &self.dispatcher,
            &self.session,
            requested,
        ))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        super::listen::listen(&self.dispatcher, &self.session, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let _guard = self.enter_request()?;
        let ctx = self.request_ctx(&context);
        catalog::complete(&self.dispatcher, request, &ctx).await
    }

    /// Follows the registry for this session: every change sends
    /// `tools/list_changed`; a change of the prompts or resources the
    /// session lists, their `list_changed`; a change of a subscribed
    /// resource's source, `resources/updated` for it.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.dispatcher.subscribe_changes();
        changes.mark_unchanged();
        let peer = context.peer;
        let ended = self.session_ended.token().clone();
        let server = self.clone();
        let mut listed = Listed::now(&self.dispatcher, &self.session);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    changed = changes.changed() => if changed.is_err() { break },
                    () = ended.cancelled() => break,
                }
                if peer.notify_tool_list_changed().await.is_err() {
                    break;
                }
                let now = Listed::now(&server.dispatcher, &server.session);
                let sent = async {
                    if now.prompts_differ(&listed) {
                        peer.notify_prompt_list_changed().await?;
                    }
                    if now.resources_differ(&listed) {
                        peer.notify_resource_list_changed().await?;
                    }
                    for uri in server.subscriptions.changed(&server.dispatcher.registry()) {
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                            .await?;
                    }
                    Ok::<(), rmcp::service::ServiceError>(())
                };
                if sent.await.is_err() {
                    break;
                }
                listed = now;
            }
        });
    }
}

/// Serves `server` on this process's stdin and stdout until stdin closes or
/// `shutdown` is cancelled (then calls in flight get `grace` to finish).
///
/// # Errors
///
/// [`ErrorCode::Io`] if the MCP session cannot start (e.g. stdin closed
/// before `initialize`).
pub async fn serve_stdio(server: McpServer, shutdown: CancellationToken, grace: Duration) -> Result<()> {
    // Malformed requests are answered here, not dropped (see `framing`).
    // rmcp's pipes: non-blocking where stdin and stdout are FIFOs (as MCP
    // clients start servers), so a shutdown never waits on a blocked read.
    super::framing::widen_stdio_pipes();
    let (reader, writer) = rmcp::transport::stdio_pipes();
    let reader = tokio::io::BufReader::with_capacity(super::framing::STDIO_READ_BYTES, reader);
    let transport = super::framing::GuardedStdio::new(reader, writer);
    let ct = CancellationToken::new();
    let start = Observed::new(server.clone(), Transport::Stdio).serve_with_ct(transport, ct.clone());
    let running = tokio::select! {
        r = start => r.map_err(|e| Error::new(ErrorCode::Io, format!("MCP session did not start: {e}")))?,
        () = shutdown.cancelled() => return Ok(()),
    };
    let mut done = tokio::spawn(running.waiting());
    tokio::select! {
        _ = &mut done => return Ok(()),
        () = shutdown.cancelled() => {}
    }
    finish(&server, grace).await;
    ct.cancel();
    let _ = done.await;
    Ok(())
}

/// Drains `server`, then gives the transport a moment to write the answers
/// of the calls that just finished.
pub(crate) async fn finish(server: &McpServer, grace: Duration) {
    let had_calls = server.in_flight() > 0;
    let left = server.drain(grace).await;
    if left > 0 {
        tracing::warn!(
            calls = left,
            "shutting down with calls still running after the grace period"
        );
    }
    if had_calls {
        tokio::time::sleep(FLUSH_DELAY).await;
    }
}

/// How long answers get to reach the transport after the last call ends.
const FLUSH_DELAY: Duration = Duration::from_millis(100);

#[cfg(test)]
mod tests {
    use super::*;

    fn result(content: &str, text: Option<&str>) -> ToolResult {
        ToolResult {
            blocks: Vec::new(),
            call_id: 1,
            content: content.to_string(),
            text: text.map(str::to_string),
            error_code: None,
            error: None,
            structured: None,
        }
    }

    /// The answer for `content` read as text, checked to be the answer for
    /// the same JSON handed over parsed.
    fn ok(content: &str, text: Option<&str>) -> CallToolResult {
        let answer = call_result(result(content, text));
        if let Ok(value) = serde_json::from_str::<Value>(content) {
            let parsed = call_result(ToolResult {
                structured: Some(value),
                ..result(content, text)
            });
            assert_eq!(parsed, answer, "{content}");
        }
        answer
    }

    fn text_of(result: &CallToolResult) -> &str {
        let [block] = result.content.as_slice() else {
            panic!("one text block, not {:?}", result.content);
        };
        &block.as_text().expect("a text block").text
    }

    #[test]
    fn a_result_is_its_text_and_its_json_sent_once_each() {
        // A string without text of its own is its text, and nothing else.
        let plain = ok(r#""Hello, \"Ada\"!""#, None);
        assert_eq!(text_of(&plain), r#"Hello, "Ada"!"#);
        assert_eq!(plain.structured_content, None);
        // Without escapes, the text is the string less its quotes.
        for (content, text) in [
            (r#""Hello, Ada!""#, "Hello, Ada!"),
            (r#""""#, ""),
            ("\"é ✓ 😀\"", "é ✓ 😀"),
        ] {
            let unescaped = ok(content, None);
            assert_eq!(text_of(&unescaped), text);
            assert_eq!(unescaped.structured_content, None);
        }
        // With text of its own, the string is the structured result.
        let told = ok(r#""2 items""#, Some("There are 2 items."));
        assert_eq!(text_of(&told), "There are 2 items.");
        assert_eq!(
            told.structured_content,
            Some(serde_json::json!({"result": "2 items"}))
        );
        // An object is the structured content; its JSON is the text.
        let object = ok(r#"{"count":2}"#, None);
        assert_eq!(text_of(&object), r#"{"count":2}"#);
        assert_eq!(object.structured_content, Some(serde_json::json!({"count": 2})));
        // Any other value is wrapped, MCP wanting an object.
        let number = ok("3", None);
        assert_eq!(text_of(&number), "3");
        assert_eq!(number.structured_content, Some(serde_json::json!({"result": 3})));
        // Not JSON (a host tool breaking the contract): text only.
        let broken = ok("not json", None);
        assert_eq!(text_of(&broken), "not json");
        assert_eq!(broken.structured_content, None);
        assert_eq!(plain.is_error, Some(false));
    }
}
