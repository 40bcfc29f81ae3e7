//! # Every request, counted on its way in
//!
//! [`Observed`] is the rmcp handler an [`McpServer`] is served as, over
//! stdio and over HTTP: each request and notification rmcp hands to the
//! server passes through it, and with metrics on it is timed and counted
//! in `mcp_server_operation_duration_seconds` (see [`Operation`]). With
//! metrics off it hands each message on and does nothing else.
//!
//! It is a [`ServerHandler`] forwarding every method of the trait (rmcp's
//! streamable HTTP service takes a `ServerHandler`, not any service), so
//! what rmcp refuses before it calls a handler (a revision the server
//! does not speak, a `ping` in 2026-07-28, a request missing its `_meta`)
//! is not counted. rmcp is pinned: a new version's new methods must be
//! forwarded here too, or the server's own would be bypassed.
//!
//! The labels follow OpenTelemetry's MCP conventions
//! (`mcp.server.operation.duration`) and stay bounded: the method is a
//! constant of this module ([`OTHER`] for a custom one), the error one of
//! the JSON-RPC codes an MCP server answers with (any other is `_OTHER`),
//! the revision one rmcp knows, the tool or prompt one the host has
//! ([`UNKNOWN_TOOL`] for any other).

#![allow(
    deprecated,
    reason = "logging/setLevel and resources/subscribe are served for the revisions before 2026-07-28"
)]

use std::borrow::Cow;
use std::future::Future;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam,
    CompleteRequestParams, CompleteResult, CustomNotification, CustomRequest, CustomResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams,
    GetTaskResult, InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, ServerConfig,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use toolhost_core::metrics::{Operation, UNKNOWN_TOOL};
use toolhost_core::spans::{ActiveSpan, interned};

use super::{McpServer, traced};

/// The method label of a custom request or notification.
pub const OTHER: &str = "(other)";

/// The JSON-RPC error codes an MCP server answers with, as labelled; any
/// other is `_OTHER` (OpenTelemetry's fallback).
const ERROR_CODES: [(i32, &str); 11] = [
    (-32700, "-32700"),
    (-32600, "-32600"),
    (-32601, "-32601"),
    (-32602, "-32602"),
    (-32603, "-32603"),
    (-32000, "-32000"),
    (-32002, "-32002"),
    (-32020, "-32020"),
    (-32021, "-32021"),
    (-32022, "-32022"),
    (-32042, "-32042"),
];

/// The transport an [`Observed`] server is served over
/// (`network_transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio: `pipe`.
    Stdio,
    /// streamable HTTP: `tcp`.
    Http,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::Stdio => "pipe",
            Transport::Http => "tcp",
        }
    }
}

/// An [`McpServer`] whose requests are counted (see the `server::observe` module
/// documentation). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Observed {
    server: McpServer,
    transport: Transport,
}

/// What names a tool or a prompt, for the labels.
#[derive(Default)]
struct Names {
    tool: Option<Cow<'static, str>>,
    prompt: Option<Cow<'static, str>>,
}

/// A request or notification being answered: when it began, and in which
/// revision.
struct Timing {
    started: Instant,
    version: Option<&'static str>,
}

impl Observed {
    /// `server`, served over `transport`.
    pub fn new(server: McpServer, transport: Transport) -> Observed {
        Observed { server, transport }
    }

    /// The server it serves.
    pub fn server(&self) -> &McpServer {
        &self.server
    }

    /// Runs `answer`, counting it as `method` when metrics are on; the
    /// revision is `version`'s (read before the request moved on), or what
    /// `initialize` agreed on.
    async fn timed<T>(
        &self,
        method: &'static str,
        version: impl FnOnce() -> Option<ProtocolVersion>,
        names: impl FnOnce() -> Names,
        answer: impl Future<Output = Result<T, ErrorData>>,
        failed: impl FnOnce(&T) -> bool,
        span: Option<ActiveSpan>,
    ) -> Result<T, ErrorData> {
        if self.server.metrics.is_none() && span.is_none() {
            return answer.await;
        }
        let timing = Timing {
            started: Instant::now(),
            version: revision(version().as_ref()),
        };
        let names = self.server.metrics.is_some().then(names);
        let answer = answer.await;
        let error_type = match &answer {
            Err(e) => Some(error_code(e.code.0, timing.version)),
            Ok(result) if failed(result) => Some("tool_error"),
            Ok(_) => None,
        };
        if let (Some(span), Some(error_type)) = (&span, error_type) {
            let message = match &answer {
                Err(e) => e.message.to_string(),
                Ok(_) => "the tool's result is an error".to_string(),
            };
            traced::failed(span, error_type, &message);
        }
        if let Some(names) = names {
            self.count(method, &timing, &names, error_type, answer.is_err());
        }
        answer
    }

    /// The server span of request `method` about `target`, when the server
    /// traces; its context goes in the request's extensions, for the
    /// server's calls to be made under it.
    fn span(
        &self,
        method: &'static str,
        target: Option<&str>,
        context: &mut RequestContext<RoleServer>,
    ) -> Option<ActiveSpan> {
        let tracing = self.server.tracing.as_ref()?;
        let span = traced::request_span(tracing, method, target, context);
        if let Some(trace) = span.context() {
            context.extensions.insert(traced::RequestTrace(trace));
        }
        Some(span)
    }

    /// [`Observed::timed`] for a request with no name to label and no
    /// failure but an error.
    async fn plain<T>(
        &self,
        method: &'static str,
        context: &RequestContext<RoleServer>,
        answer: impl Future<Output = Result<T, ErrorData>>,
        span: Option<ActiveSpan>,
    ) -> Result<T, ErrorData> {
        self.timed(
            method,
            || context.protocol_version(),
            Names::default,
            answer,
            |_| false,
            span,
        )
        .await
    }

    /// Runs a notification's handling, counting it as `method` and in a
    /// server span of its own when the server traces.
    async fn notified(
        &self,
        method: &'static str,
        context: &NotificationContext<RoleServer>,
        handled: impl Future<Output = ()>,
    ) {
        if self.server.metrics.is_none() && self.server.tracing.is_none() {
            return handled.await;
        }
        let version = context.peer.peer_info().map(|info| info.protocol_version.clone());
        let _span = self
            .server
            .tracing
            .as_ref()
            .map(|tracing| traced::notification_span(tracing, method, context, version.as_ref()));
        let timing = Timing {
            started: Instant::now(),
            version: revision(version.as_ref()),
        };
        handled.await;
        self.count(method, &timing, &Names::default(), None, false);
    }

    /// Counts one answered `method`: `error_type` on a failure, the
    /// status code too when the answer was a JSON-RPC error (`rpc_error`)
    /// rather than a tool's failed result.
    fn count(
        &self,
        method: &'static str,
        timing: &Timing,
        names: &Names,
        error_type: Option<&'static str>,
        rpc_error: bool,
    ) {
        let Some(metrics) = &self.server.metrics else {
            return;
        };
        let operation = Operation {
            method,
            tool: names.tool.as_deref(),
            prompt: names.prompt.as_deref(),
            error_type,
            status_code: error_type.filter(|_| rpc_error),
            protocol_version: timing.version,
            transport: self.transport.label(),
        };
        metrics.operation(operation, timing.started.elapsed());
    }

    /// Whether requests are counted or traced: what the names they carry
    /// are looked up for.
    fn observing(&self) -> bool {
        self.server.metrics.is_some() || self.server.tracing.is_some()
    }

    /// `name` if the host has a tool of that name, when observing: what a
    /// request's labels and span are named by (never a made-up name).
    fn known_tool<'n>(&self, name: &'n str) -> Option<&'n str> {
        let known = self.observing() && self.server.dispatcher.registry().get(name).is_some();
        known.then_some(name)
    }

    /// `name` if the host has a prompt of that name, when observing.
    fn known_prompt<'n>(&self, name: &'n str) -> Option<&'n str> {
        let known = self.observing() && self.server.dispatcher.registry().prompt(name).is_some();
        known.then_some(name)
    }
}

/// A name the host has, as labelled (made once, see [`interned`]), else
/// [`UNKNOWN_TOOL`].
fn label(known: Option<&str>) -> Cow<'static, str> {
    known.map_or(Cow::Borrowed(UNKNOWN_TOOL), |name| interned("", name))
}

/// `version` as labelled, if rmcp knows it (a constant, its own).
pub(super) fn revision(version: Option<&ProtocolVersion>) -> Option<&'static str> {
    let version = version?.as_str();
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .find(|known| *known == version)
}

/// A JSON-RPC error `code` as labelled, as the client gets it in
/// `version` (2026-07-28 answers a resource not found with -32602).
fn error_code(code: i32, version: Option<&str>) -> &'static str {
    let code = match (code, version) {
        (-32002, Some(v)) if v >= ProtocolVersion::V_2026_07_28.as_str() => -32602,
        _ => code,
    };
    ERROR_CODES
        .iter()
        .find(|(known, _)| *known == code)
        .map_or("_OTHER", |(_, label)| label)
}

/// Forwards requests that carry no name to label, each counted as
/// `$method` (see [`Observed::plain`]).
macro_rules! plain {
    ($($name:ident($request:ty) -> $answer:ty = $method:expr;)*) => {$(
        async fn $name(
            &self,
            request: $request,
            mut context: RequestContext<RoleServer>,
        ) -> Result<$answer, ErrorData> {
            let span = self.span($method, None, &mut context);
            self.plain($method, &context, self.server.$name(request, context.clone()), span)
                .await
        }
    )*};
}

impl ServerHandler for Observed {
    fn get_info(&self) -> ServerConfig {
        self.server.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.server.supported_protocol_versions()
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.server.get_tool(name)
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.server.accepted_subscription_filter(requested)
    }

    plain! {
        complete(CompleteRequestParams) -> CompleteResult = "completion/complete";
        set_level(SetLevelRequestParams) -> () = "logging/setLevel";
        list_prompts(Option<PaginatedRequestParams>) -> ListPromptsResult = "prompts/list";
        list_resources(Option<PaginatedRequestParams>) -> ListResourcesResult = "resources/list";
        read_resource(ReadResourceRequestParams) -> ReadResourceResponse = "resources/read";
        subscribe(SubscribeRequestParams) -> () = "resources/subscribe";
        list_tools(Option<PaginatedRequestParams>) -> ListToolsResult = "tools/list";
        on_custom_request(CustomRequest) -> CustomResult = OTHER;
        get_task(GetTaskParams) -> GetTaskResult = "tasks/get";
        update_task(UpdateTaskParams) -> () = "tasks/update";
        cancel_task(CancelTaskParams) -> () = "tasks/cancel";
        list_skills(Option<PaginatedRequestParams>) -> ListSkillsResult = "skills/list";
        get_skill(GetSkillRequestParams) -> GetSkillResult = "skills/get";
        list_resource_templates(Option<PaginatedRequestParams>) -> ListResourceTemplatesResult = "resources/templates/list";
        unsubscribe(UnsubscribeRequestParams) -> () = "resources/unsubscribe";
        read_resource_directory(ReadResourceDirectoryRequestParams) -> ReadResourceDirectoryResult = "resources/directory/read";
    }

    async fn ping(&self, mut context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        let span = self.span("ping", None, &mut context);
        self.plain("ping", &context, self.server.ping(context.clone()), span)
            .await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        let span = self.span("initialize", None, &mut context);
        if self.server.metrics.is_none() {
            let answer = self.server.initialize(request, context).await;
            if let (Some(span), Err(e)) = (&span, &answer) {
                traced::failed(span, error_code(e.code.0, None), &e.message);
            }
            return answer;
        }
        let started = Instant::now();
        let answer = self.server.initialize(request, context).await;
        if let (Some(span), Err(e)) = (&span, &answer) {
            traced::failed(span, error_code(e.code.0, None), &e.message);
        }
        // The revision is the one it agreed on.
        let timing = Timing {
            started,
            version: answer
                .as_ref()
                .ok()
                .and_then(|init| revision(Some(&init.protocol_version))),
        };
        let error_type = answer.as_ref().err().map(|e| error_code(e.code.0, None));
        self.count(
            "initialize",
            &timing,
            &Names::default(),
            error_type,
            error_type.is_some(),
        );
        answer
    }

    async fn discover(&self, mut context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let span = self.span("server/discover", None, &mut context);
        self.plain(
            "server/discover",
            &context,
            self.server.discover(context.clone()),
            span,
        )
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let known = self.known_prompt(&request.name);
        let names = self.server.metrics.is_some().then(|| Names {
            prompt: Some(label(known)),
            ..Names::default()
        });
        let span = self.span("prompts/get", known, &mut context);
        self.timed(
            "prompts/get",
            || context.protocol_version(),
            || names.unwrap_or_default(),
            self.server.get_prompt(request, context.clone()),
            |_| false,
            span,
        )
        .await
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // subscriptions/listen is a 2026-07-28 request only.
        self.timed(
            "subscriptions/listen",
            || Some(ProtocolVersion::V_2026_07_28),
            Names::default,
            self.server.listen(context),
            |_| false,
            None,
        )
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let known = self.known_tool(&request.name);
        let names = self.server.metrics.is_some().then(|| Names {
            tool: Some(label(known)),
            ..Names::default()
        });
        let span = self
            .server
            .tracing
            .as_ref()
            .map(|tracing| traced::request_span(tracing, "tools/call", known, &context));
        // The call is made under its request's span, its context handed on
        // directly (not through the request's extensions, as other
        // requests' are: a map made and dropped each call).
        let trace = span
            .as_ref()
            .and_then(ActiveSpan::context)
            .or_else(|| traced::trace_of(&context));
        self.timed(
            "tools/call",
            || context.protocol_version(),
            || names.unwrap_or_default(),
            self.server.answer_call(request, context.clone(), trace),
            |answer| matches!(answer, CallToolResponse::Complete(result) if result.is_error == Some(true)),
            span,
        )
        .await
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        let handled = self.server.on_cancelled(notification, context.clone());
        self.notified("notifications/cancelled", &context, handled).await;
    }

    async fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) {
        let handled = self.server.on_progress(notification, context.clone());
        self.notified("notifications/progress", &context, handled).await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let handled = self.server.on_initialized(context.clone());
        self.notified("notifications/initialized", &context, handled)
            .await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        let handled = self.server.on_roots_list_changed(context.clone());
        self.notified("notifications/roots/list_changed", &context, handled)
            .await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) {
        let handled = self.server.on_custom_notification(notification, context.clone());
        self.notified(OTHER, &context, handled).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_come_from_fixed_lists_only() {
        assert_eq!(error_code(-32602, None), "-32602");
        assert_eq!(error_code(-1, None), "_OTHER");
        // As the client gets it: -32602 for a resource not found in 2026-07-28.
        assert_eq!(error_code(-32002, Some("2025-11-25")), "-32002");
        assert_eq!(error_code(-32002, Some("2026-07-28")), "-32602");
        let known = ProtocolVersion::V_2025_06_18;
        assert_eq!(revision(Some(&known)), Some("2025-06-18"));
    }
}
