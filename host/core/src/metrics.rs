//! # Metrics: what an operator's Prometheus scrapes
//!
//! One [`Metrics`] per host, off unless the operator turns it on (`[metrics]
//! enabled`): nothing is counted and nothing costs when it is off. It is fed
//! by the dispatcher (every call's start and end, as a [`CallObserver`]),
//! the MCP server (each request's duration), the approval gate, and, when
//! scraped, by the host's state (plugins, bridged servers); it renders in
//! the Prometheus text format (OpenMetrics) at `GET /metrics`.
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `mcp_server_operation_duration_seconds` | histogram | every MCP request and notification answered: see [`Operation`] (OpenTelemetry's MCP conventions) |
//! | `toolhost_tool_calls_total` | counter | `tool`, `source`, `outcome` (`ok` or the error code) |
//! | `toolhost_tool_call_duration_seconds` | histogram | `tool` |
//! | `toolhost_tool_call_fuel` | histogram | `tool` (sandboxed calls) |
//! | `toolhost_tool_call_peak_memory_bytes` | histogram | `tool` (sandboxed calls) |
//! | `toolhost_tool_calls_in_flight` | gauge | (calls dispatched and not ended yet) |
//! | `toolhost_instances_in_use` | gauge | (the instance pool's places held: sandboxed calls running, nested ones too) |
//! | `toolhost_calls_waiting` | gauge | (calls waiting for a place in the instance pool: the queue's depth) |
//! | `toolhost_call_wait_duration_seconds` | histogram | (how long each call that found the pool full waited) |
//! | `toolhost_approvals_total` | counter | `decision` (`asked`, `granted`, `refused`) |
//! | `toolhost_plugins` | gauge | `status` (`loaded`, `failed`) |
//! | `toolhost_mcp_bridged_servers` | gauge | `state` (`up`, `down`) |
//!
//! **Bounded.** A label names only what the host has: a call of a tool the
//! registry does not have counts as `tool="(unknown)"`, so a client calling
//! made-up names cannot grow the series without end; an operation's other
//! labels are `&'static str`, taken from fixed lists.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabel, EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::FastMap;
use crate::dispatch::{CallInfo, CallOutcome, ToolCallEvent};

/// A metric's labels, as name and value.
type Labels = Vec<(&'static str, String)>;

type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// The tool label of a call of no known tool (and the prompt label of a
/// request for no known prompt).
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// One MCP request or notification the server answered, as
/// `mcp_server_operation_duration_seconds` counts it, with the attributes
/// of OpenTelemetry's MCP conventions (`mcp.server.operation.duration`),
/// dots written as underscores. A label that is `None` is left out.
///
/// Every label but the two names is a `&'static str`, so it can only come
/// from a fixed list; the names must be ones the host has (a tool or
/// prompt it does not have is [`UNKNOWN_TOOL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operation<'a> {
    /// `mcp_method_name`: the request's or notification's method.
    pub method: &'static str,
    /// `gen_ai_tool_name`: the tool a `tools/call` named. A `tools/call`
    /// is also labelled `gen_ai_operation_name="execute_tool"`.
    pub tool: Option<&'a str>,
    /// `gen_ai_prompt_name`: the prompt a `prompts/get` named.
    pub prompt: Option<&'a str>,
    /// `error_type`: the JSON-RPC error's code, or `tool_error` for a call
    /// answered with `isError`; `None` when it succeeded.
    pub error_type: Option<&'static str>,
    /// `rpc_response_status_code`: the JSON-RPC error's code, when the
    /// answer was one.
    pub status_code: Option<&'static str>,
    /// `mcp_protocol_version`: the MCP revision the request was made in.
    pub protocol_version: Option<&'static str>,
    /// `network_transport`: `pipe` (stdio) or `tcp` (HTTP).
    pub transport: &'static str,
}

/// [`Operation`]'s labels, owned: the key of its series.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct OperationLabels {
    method: &'static str,
    tool: Option<String>,
    prompt: Option<String>,
    error_type: Option<&'static str>,
    status_code: Option<&'static str>,
    protocol_version: Option<&'static str>,
    transport: &'static str,
}

impl EncodeLabelSet for OperationLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder) -> std::fmt::Result {
        let execute = (self.method == "tools/call").then_some("execute_tool");
        let labels = [
            ("mcp_method_name", Some(self.method)),
            ("gen_ai_operation_name", execute),
            ("gen_ai_tool_name", self.tool.as_deref()),
            ("gen_ai_prompt_name", self.prompt.as_deref()),
            ("error_type", self.error_type),
            ("rpc_response_status_code", self.status_code),
            ("mcp_protocol_version", self.protocol_version),
            ("network_transport", Some(self.transport)),
        ];
        for (name, value) in labels {
            if let Some(value) = value {
                (name, value).encode(encoder.encode_label())?;
            }
        }
        Ok(())
    }
}

/// A host's metrics; see the [module](self) documentation.
pub struct Metrics {
    registry: Registry,
    operations: Family<OperationLabels, Histogram, fn() -> Histogram>,
    calls: Family<Labels, Counter>,
    call_duration: Histograms,
    fuel: Histograms,
    memory: Histograms,
    in_flight: Gauge,
    instances_in_use: Gauge,
    calls_waiting: Gauge,
    call_wait: Histogram,
    approvals: Family<Labels, Counter>,
    plugins: Family<Labels, Gauge>,
    bridged: Family<Labels, Gauge>,
    /// Each tool's series of a successful call, resolved once: a call
    /// looks them up by the tool's name, allocating nothing.
    tools: RwLock<FastMap<String, Arc<ToolSeries>>>,
    /// Each tool's `tools/call` operation series of a request answered
    /// without error, resolved once for each revision and transport, so
    /// that the common request allocates nothing and hashes only the name.
    tool_calls: RwLock<FastMap<String, Vec<AnsweredCalls>>>,
}

/// The operation series of one tool's `tools/call`s answered without error
/// in one revision over one transport.
struct AnsweredCalls {
    protocol_version: Option<&'static str>,
    transport: &'static str,
    duration: Histogram,
}

/// The series one tool's successful calls and requests count in.
struct ToolSeries {
    /// The source its series were made for.
    source: &'static str,
    ok: Counter,
    duration: Histogram,
    fuel: Histogram,
    memory: Histogram,
}

/// The most tools whose series are kept resolved (a registry larger than
/// this still counts, through the families).
const MAX_RESOLVED_TOOLS: usize = 4096;

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("in_flight", &self.in_flight.get())
            .finish_non_exhaustive()
    }
}

/// The buckets OpenTelemetry's MCP conventions advise for operation
/// durations, in seconds.
fn operation_buckets() -> Histogram {
    Histogram::new([
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ])
}

/// From 100 µs to about 7 minutes.
fn call_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.0001, 3.0, 15))
}

/// From a thousand to about 14 billion units of fuel.
fn fuel_buckets() -> Histogram {
    Histogram::new(exponential_buckets(1_000.0, 4.0, 13))
}

/// From 64 KiB to 4 GiB.
fn memory_buckets() -> Histogram {
    Histogram::new(exponential_buckets(65_536.0, 2.0, 17))
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric of the table, at zero.
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let operations = Family::new_with_constructor(operation_buckets as fn() -> Histogram);
        registry.register_with_unit(
            "mcp_server_operation_duration",
            "How long the MCP server took to answer a request (OpenTelemetry's mcp.server.operation.duration)",
            prometheus_client::registry::Unit::Seconds,
            operations.clone(),
        );
        let calls = Family::<Labels, Counter>::default();
        registry.register(
            "toolhost_tool_calls",
            "Tool calls dispatched, by tool, where it comes from, and how it ended (ok or the error code)",
            calls.clone(),
        );
        let call_duration = Histograms::new_with_constructor(call_buckets);
        registry.register_with_unit(
            "toolhost_tool_call_duration",
            "How long a tool call took, through the whole dispatch pipeline",
            prometheus_client::registry::Unit::Seconds,
            call_duration.clone(),
        );
        let fuel = Histograms::new_with_constructor(fuel_buckets);
        registry.register(
            "toolhost_tool_call_fuel",
            "Fuel a sandboxed call used (WebAssembly instructions, roughly)",
            fuel.clone(),
        );
        let memory = Histograms::new_with_constructor(memory_buckets);
        registry.register_with_unit(
            "toolhost_tool_call_peak_memory",
            "The most linear memory a sandboxed call's instance held",
            prometheus_client::registry::Unit::Bytes,
            memory.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "toolhost_tool_calls_in_flight",
            "Tool calls running now (each sandboxed one in its own fresh instance)",
            in_flight.clone(),
        );
        let instances_in_use = Gauge::default();
        registry.register(
            "toolhost_instances_in_use",
            "Places of the instance pool held now (a sandboxed call, nested ones too, runs in an instance of its own)",
            instances_in_use.clone(),
        );
        let calls_waiting = Gauge::default();
        registry.register(
            "toolhost_calls_waiting",
            "Calls waiting for a place in the instance pool now: the queue's depth",
            calls_waiting.clone(),
        );
        let call_wait = call_buckets();
        registry.register_with_unit(
            "toolhost_call_wait_duration",
            "How long a call that found the instance pool full waited for a place",
            prometheus_client::registry::Unit::Seconds,
            call_wait.clone(),
        );
        let approvals = Family::<Labels, Counter>::default();
        registry.register(
            "toolhost_approvals",
            "Approvals put to a person, and what they decided",
            approvals.clone(),
        );
        let plugins = Family::<Labels, Gauge>::default();
        registry.register(
            "toolhost_plugins",
            "Plugins of the config and the plugins folder, loaded or failed",
            plugins.clone(),
        );
        let bridged = Family::<Labels, Gauge>::default();
        registry.register(
            "toolhost_mcp_bridged_servers",
            "Bridged MCP servers, up or down",
            bridged.clone(),
        );
        Metrics {
            registry,
            operations,
            calls,
            call_duration,
            fuel,
            memory,
            in_flight,
            instances_in_use,
            calls_waiting,
            call_wait,
            approvals,
            plugins,
            bridged,
            tools: RwLock::default(),
            tool_calls: RwLock::default(),
        }
    }

    /// `tool`'s series (made on its first call), when `source` is the one
    /// they were made for.
    fn series(&self, tool: &str, source: &'static str) -> Option<Arc<ToolSeries>> {
        if let Some(series) = self
            .tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
        {
            return (series.source == source).then(|| Arc::clone(series));
        }
        let mut tools = self.tools.write().unwrap_or_else(PoisonError::into_inner);
        if tools.len() >= MAX_RESOLVED_TOOLS {
            return None;
        }
        let by_tool = vec![("tool", tool.to_string())];
        let series = Arc::new(ToolSeries {
            source,
            ok: self
                .calls
                .get_or_create(&vec![
                    ("tool", tool.to_string()),
                    ("source", source.to_string()),
                    ("outcome", "ok".to_string()),
                ])
                .clone(),
            duration: self.call_duration.get_or_create(&by_tool).clone(),
            fuel: self.fuel.get_or_create(&by_tool).clone(),
            memory: self.memory.get_or_create(&by_tool).clone(),
        });
        tools.insert(tool.to_string(), Arc::clone(&series));
        Some(series)
    }

    /// Records an MCP `operation` answered in `duration`.
    pub fn operation(&self, operation: Operation<'_>, duration: Duration) {
        if let Some(series) = self.answered_call(&operation) {
            series.observe(duration.as_secs_f64());
            return;
        }
        self.operation_series(&operation).observe(duration.as_secs_f64());
    }

    /// The series of `operation` when it is a known tool's `tools/call`
    /// answered without error (resolved on its first time; `None` for any
    /// other operation, or past [`MAX_RESOLVED_TOOLS`] tools).
    fn answered_call(&self, operation: &Operation<'_>) -> Option<Histogram> {
        let Operation {
            method: "tools/call",
            tool: Some(tool),
            prompt: None,
            error_type: None,
            status_code: None,
            protocol_version,
            transport,
        } = *operation
        else {
            return None;
        };
        let same = |a: &&AnsweredCalls| a.protocol_version == protocol_version && a.transport == transport;
        if let Some(found) = self
            .tool_calls
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool)
            .and_then(|answered| answered.iter().find(same))
        {
            return Some(found.duration.clone());
        }
        let mut tool_calls = self.tool_calls.write().unwrap_or_else(PoisonError::into_inner);
        if !tool_calls.contains_key(tool) && tool_calls.len() >= MAX_RESOLVED_TOOLS {
            return None;
        }
        let answered = tool_calls.entry(tool.to_string()).or_default();
        if let Some(found) = answered.iter().find(same) {
            return Some(found.duration.clone());
        }
        // Revisions and transports come from fixed lists: a tool's list
        // stays short.
        let duration = self.operation_series(operation);
        answered.push(AnsweredCalls {
            protocol_version,
            transport,
            duration: duration.clone(),
        });
        Some(duration)
    }

    /// `operation`'s series, looked up by all its labels.
    fn operation_series(&self, operation: &Operation<'_>) -> Histogram {
        let labels = OperationLabels {
            method: operation.method,
            tool: operation.tool.map(str::to_string),
            prompt: operation.prompt.map(str::to_string),
            error_type: operation.error_type,
            status_code: operation.status_code,
            protocol_version: operation.protocol_version,
            transport: operation.transport,
        };
        self.operations.get_or_create(&labels).clone()
    }

    /// Records that a call waited `waited` for a place in the instance
    /// pool (calls that found one free at once are not counted).
    pub fn waited(&self, waited: Duration) {
        self.call_wait.observe(waited.as_secs_f64());
    }

    /// Sets the instance pool's state as it is now: calls `waiting` for a
    /// place, and places `in_use`.
    pub fn instances(&self, waiting: usize, in_use: usize) {
        self.calls_waiting.set(i64::try_from(waiting).unwrap_or(i64::MAX));
        self.instances_in_use
            .set(i64::try_from(in_use).unwrap_or(i64::MAX));
    }

    /// Records an approval `decision`: `asked`, `granted` or `refused`.
    pub fn approval(&self, decision: &'static str) {
        self.approvals
            .get_or_create(&vec![("decision", decision.to_string())])
            .inc();
    }

    /// Sets the plugins' counts, as the host has them now.
    pub fn plugins(&self, loaded: usize, failed: usize) {
        for (status, n) in [("loaded", loaded), ("failed", failed)] {
            self.plugins
                .get_or_create(&vec![("status", status.to_string())])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// Sets the bridged servers' counts, as the host has them now.
    pub fn bridged(&self, up: usize, down: usize) {
        for (state, n) in [("up", up), ("down", down)] {
            self.bridged
                .get_or_create(&vec![("state", state.to_string())])
                .set(i64::try_from(n).unwrap_or(i64::MAX));
        }
    }

    /// Everything, in the Prometheus text format (OpenMetrics 1.0).
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    /// The content type of [`Metrics::render`]'s text.
    pub const CONTENT_TYPE: &'static str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
}

/// What the dispatcher tells of each call: when it starts, and when it
/// ends (or is abandoned: its future dropped, as a cancelled request's
/// is). Called in the call's own task, so an observer must be quick.
pub trait CallObserver: Send + Sync + 'static {
    /// A call began, with `arguments` as the caller gave them.
    fn started(&self, info: &CallInfo, arguments: &serde_json::Value);
    /// The call `info` began ended: with `event`, or abandoned (`None`).
    fn ended(&self, info: &CallInfo, event: Option<&ToolCallEvent>);
}

impl CallObserver for Metrics {
    fn started(&self, _info: &CallInfo, _arguments: &serde_json::Value) {
        self.in_flight.inc();
    }

    fn ended(&self, _info: &CallInfo, event: Option<&ToolCallEvent>) {
        self.in_flight.dec();
        let Some(event) = event else { return };
        let name = event.stands_for.as_deref().unwrap_or(&event.name);
        let (tool, source) = match &event.source {
            Some(source) => (name, source.kind()),
            None => (UNKNOWN_TOOL, "none"),
        };
        // The common case, a known tool's successful call: resolved series.
        if let (CallOutcome::Ok, Some(series)) = (event.outcome, self.series(tool, source)) {
            series.ok.inc();
            series.duration.observe(event.duration.as_secs_f64());
            if let Some(usage) = event.usage {
                series.fuel.observe(usage.fuel_consumed as f64);
                series.memory.observe(usage.peak_memory_bytes as f64);
            }
            return;
        }
        let outcome = match event.outcome {
            CallOutcome::Ok => "ok".to_string(),
            CallOutcome::Error(code) => code.as_str().to_string(),
        };
        self.calls
            .get_or_create(&vec![
                ("tool", tool.to_string()),
                ("source", source.to_string()),
                ("outcome", outcome),
            ])
            .inc();
        let by_tool = vec![("tool", tool.to_string())];
        self.call_duration
            .get_or_create(&by_tool)
            .observe(event.duration.as_secs_f64());
        if let Some(usage) = event.usage {
            self.fuel
                .get_or_create(&by_tool)
                .observe(usage.fuel_consumed as f64);
            self.memory
                .get_or_create(&by_tool)
                .observe(usage.peak_memory_bytes as f64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_carries_only_the_labels_it_has() {
        let metrics = Metrics::new();
        let call = Operation {
            method: "tools/call",
            tool: Some("greet"),
            prompt: None,
            error_type: None,
            status_code: None,
            protocol_version: Some("2025-06-18"),
            transport: "pipe",
        };
        // Answered without error, a tool's calls count in series resolved
        // once for each revision and transport: the same as the family's.
        for _ in 0..3 {
            metrics.operation(call, Duration::from_millis(3));
        }
        let over_http = Operation {
            transport: "tcp",
            ..call
        };
        metrics.operation(over_http, Duration::from_millis(3));
        let tool_error = Operation {
            error_type: Some("tool_error"),
            ..call
        };
        metrics.operation(tool_error, Duration::from_millis(3));
        let failed = Operation {
            method: "prompts/get",
            tool: None,
            prompt: Some(UNKNOWN_TOOL),
            error_type: Some("-32602"),
            status_code: Some("-32602"),
            protocol_version: None,
            transport: "tcp",
        };
        metrics.operation(failed, Duration::from_millis(1));
        metrics.instances(2, 5);
        metrics.waited(Duration::from_millis(40));
        let text = metrics.render();
        for line in [
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_operation_name="execute_tool",gen_ai_tool_name="greet",mcp_protocol_version="2025-06-18",network_transport="pipe"} 3"#,
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_operation_name="execute_tool",gen_ai_tool_name="greet",mcp_protocol_version="2025-06-18",network_transport="tcp"} 1"#,
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_operation_name="execute_tool",gen_ai_tool_name="greet",error_type="tool_error",mcp_protocol_version="2025-06-18",network_transport="pipe"} 1"#,
            r#"mcp_server_operation_duration_seconds_count{mcp_method_name="prompts/get",gen_ai_prompt_name="(unknown)",error_type="-32602",rpc_response_status_code="-32602",network_transport="tcp"} 1"#,
            "toolhost_calls_waiting 2",
            "toolhost_instances_in_use 5",
            "toolhost_call_wait_duration_seconds_count 1",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
