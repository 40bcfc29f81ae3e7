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
//! | `mcp_server_operation_duration_seconds` | histogram | `mcp_method_name`, `gen_ai_tool_name`, `error_type` (OpenTelemetry's MCP conventions) |
//! | `toolhost_tool_calls_total` | counter | `tool`, `source`, `outcome` (`ok` or the error code) |
//! | `toolhost_tool_call_duration_seconds` | histogram | `tool` |
//! | `toolhost_tool_call_fuel` | histogram | `tool` (sandboxed calls) |
//! | `toolhost_tool_call_peak_memory_bytes` | histogram | `tool` (sandboxed calls) |
//! | `toolhost_tool_calls_in_flight` | gauge | (each sandboxed call is one fresh instance: the instances in use) |
//! | `toolhost_approvals_total` | counter | `decision` (`asked`, `granted`, `refused`) |
//! | `toolhost_plugins` | gauge | `status` (`loaded`, `failed`) |
//! | `toolhost_mcp_bridged_servers` | gauge | `state` (`up`, `down`) |
//!
//! **Bounded.** A label names only what the host has: a call of a tool the
//! registry does not have counts as `tool="(unknown)"`, so a client calling
//! made-up names cannot grow the series without end.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::dispatch::{CallInfo, CallOutcome, ToolCallEvent};

/// A metric's labels, as name and value.
type Labels = Vec<(&'static str, String)>;

type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// The tool label of a call of no known tool.
pub const UNKNOWN_TOOL: &str = "(unknown)";

/// A host's metrics; see the [module](self) documentation.
pub struct Metrics {
    registry: Registry,
    operations: Histograms,
    calls: Family<Labels, Counter>,
    call_duration: Histograms,
    fuel: Histograms,
    memory: Histograms,
    in_flight: Gauge,
    approvals: Family<Labels, Counter>,
    plugins: Family<Labels, Gauge>,
    bridged: Family<Labels, Gauge>,
    /// Each tool's series of a successful call, resolved once: a call
    /// looks them up by the tool's name, allocating nothing.
    tools: RwLock<HashMap<String, Arc<ToolSeries>>>,
}

/// The series one tool's successful calls and requests count in.
struct ToolSeries {
    /// The source its series were made for.
    source: &'static str,
    ok: Counter,
    duration: Histogram,
    fuel: Histogram,
    memory: Histogram,
    /// `tools/call` answered without an error.
    operation: Histogram,
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
        let operations = Histograms::new_with_constructor(operation_buckets);
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
            approvals,
            plugins,
            bridged,
            tools: RwLock::default(),
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
            operation: self
                .operations
                .get_or_create(&vec![
                    ("mcp_method_name", "tools/call".to_string()),
                    ("gen_ai_tool_name", tool.to_string()),
                    ("error_type", String::new()),
                ])
                .clone(),
        });
        tools.insert(tool.to_string(), Arc::clone(&series));
        Some(series)
    }

    /// Records an MCP request `method` answered in `duration`: for
    /// `tools/call`, the tool it called (`None` for one the host does not
    /// have) and `error_type` (`tool_error` for a result with `isError`, a
    /// JSON-RPC error's code) when it failed.
    pub fn operation(&self, method: &str, tool: Option<&str>, error_type: Option<&str>, duration: Duration) {
        if let (Some(tool), None, "tools/call") = (tool, error_type, method) {
            let resolved = self
                .tools
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(tool)
                .cloned();
            if let Some(series) = resolved {
                series.operation.observe(duration.as_secs_f64());
                return;
            }
        }
        let labels = vec![
            ("mcp_method_name", method.to_string()),
            ("gen_ai_tool_name", tool.unwrap_or_default().to_string()),
            ("error_type", error_type.unwrap_or_default().to_string()),
        ];
        self.operations
            .get_or_create(&labels)
            .observe(duration.as_secs_f64());
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
