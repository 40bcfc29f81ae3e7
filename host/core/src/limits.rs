//! # Sandbox limits
//!
//! Every limit a tool call runs under is defined here, with its default.
//! A call's effective limits are the host defaults, then the plugin's
//! overrides (from the config), then the call's own overrides, each layer
//! replacing only the values it sets: see [`Limits::apply`].
//!
//! | limit | default | when exceeded |
//! |---|---|---|
//! | [`fuel`](Limits::fuel) | 50 000 000 000 units: about 2 s of a tight loop (`toolhost call spin.wasm spin --fuel 50000000000 --timeout-ms 60000` stops after 1.9 s on these machines); code that waits on the host burns far less | `out_of_fuel` |
//! | [`memory_bytes`](Limits::memory_bytes) | 128 MiB per linear memory | `memory_limit` |
//! | [`table_elements`](Limits::table_elements) | 100 000 per table | `memory_limit` |
//! | [`instances`](Limits::instances) | 64 core instances per call | `memory_limit` |
//! | [`wasm_stack_bytes`](Limits::wasm_stack_bytes) | 1 MiB of WebAssembly stack | `stack_overflow` |
//! | [`timeout`](Limits::timeout) | 10 s wall-clock | `timeout` |
//! | [`output_bytes`](Limits::output_bytes) | 1 MiB of result JSON | `output_too_large` |
//! | [`stderr_bytes`](Limits::stderr_bytes) | 64 KiB of captured stderr/stdout | excess dropped |
//! | [`log_records`](Limits::log_records) | 1 000 `host.log` records per call | excess dropped, counted |
//! | [`log_bytes_per_sec`](Limits::log_bytes_per_sec) | 64 KiB/s of log (`host.log` records, captured stdout and stderr) per component, across its calls, in bursts of up to [`log_burst_bytes`](Limits::log_burst_bytes) (1 MiB) | excess dropped, counted |
//! | [`call_depth`](Limits::call_depth) | 4 nested tool calls (a tool calling a tool calling …) | `blocked` |
//! | [`nested_calls`](Limits::nested_calls) | 64 tool calls started by one call (`tools.call` and each entry of `tools.call-many`) | `blocked` |
//! | [`http_requests`](Limits::http_requests) | 32 outbound HTTP requests per call | `connection-limit-reached` to the guest |
//! | [`http_response_bytes`](Limits::http_response_bytes) | 16 MiB of response bodies per call | `HTTP-response-body-size` to the guest |
//! | [`http_timeout`](Limits::http_timeout) | 30 s per request, capped by the call's deadline | a timeout error code to the guest |
//!
//! And what a plugin (or a bridged MCP server) may claim when it lists its
//! tools, checked at load ([`MetadataLimits`]), in time linear in what it
//! lists; past one, nothing of it is registered:
//!
//! | limit | default | when exceeded |
//! |---|---|---|
//! | [`max_tools`](Limits::max_tools) | 256 tools | `invalid_component` (a component), a refused server (MCP) |
//! | [`description_bytes`](Limits::description_bytes) | 16 KiB per tool description | same |
//! | [`schema_bytes`](Limits::schema_bytes) | 64 KiB per tool's parameter schema, and per output schema (JSON text) | same |
//! | [`metadata_bytes`](Limits::metadata_bytes) | 1 MiB of names, descriptions and schemas in all | same |
//!
//! Wasmtime fixes the stack limit per wasmtime engine rather than per store;
//! the runtime's engine (`toolhost_runtime::engine`, its stack tiers) keeps
//! one per stack size in use, so it is overridable like the others, between
//! 16 KiB and the engine's `max_wasm_stack` ceiling (8 MiB by default), with
//! at most `MAX_STACK_TIERS` sizes besides the default in use at once.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The limits one tool call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fuel: roughly, the number of WebAssembly instructions the call may run.
    pub fuel: u64,
    /// The largest size, in bytes, any one linear memory may grow to.
    pub memory_bytes: u64,
    /// The largest number of elements any one table may grow to.
    pub table_elements: u64,
    /// The largest number of core instances (and, separately, of memories and
    /// of tables) the component may create.
    pub instances: u32,
    /// The WebAssembly stack the call may use, in bytes.
    pub wasm_stack_bytes: usize,
    /// The wall-clock time the call may take, from the start of instantiation.
    pub timeout: Duration,
    /// The largest result, in bytes of JSON text.
    pub output_bytes: u64,
    /// How much of the guest's stderr (and of its stdout, separately) is kept
    /// for the host's log.
    pub stderr_bytes: u64,
    /// How many `host.log` records a call may emit.
    pub log_records: u32,
    /// How many bytes of log a component may write per second, across all
    /// its calls (records, captured stdout and stderr), on average.
    pub log_bytes_per_sec: u64,
    /// How many bytes of log a component may write in one burst.
    pub log_burst_bytes: u64,
    /// How deep tool calls may nest through `toolhost:plugin/tools`.
    pub call_depth: u32,
    /// How many tool calls one call may start through
    /// `toolhost:plugin/tools` (`call`, and each entry of `call-many`).
    pub nested_calls: u32,
    /// How many outbound HTTP requests a call may send.
    pub http_requests: u32,
    /// How many bytes of HTTP response bodies a call may receive, in all.
    pub http_response_bytes: u64,
    /// How long one HTTP request may take (never past the call's deadline).
    pub http_timeout: Duration,
    /// How many tools a component may list.
    pub max_tools: u32,
    /// The longest tool description, in bytes.
    pub description_bytes: u64,
    /// The largest parameter schema (and, separately, output schema) of one
    /// tool, in bytes of JSON text.
    pub schema_bytes: u64,
    /// The most bytes of names, descriptions and schemas a component may
    /// list in all.
    pub metadata_bytes: u64,
}

impl Limits {
    /// The documented defaults (see the module documentation).
    pub const DEFAULT: Limits = Limits {
        fuel: 50_000_000_000,
        memory_bytes: 128 << 20,
        table_elements: 100_000,
        instances: 64,
        wasm_stack_bytes: 1 << 20,
        timeout: Duration::from_secs(10),
        output_bytes: 1 << 20,
        stderr_bytes: 64 << 10,
        log_records: 1_000,
        log_bytes_per_sec: 64 << 10,
        log_burst_bytes: 1 << 20,
        call_depth: 4,
        nested_calls: 64,
        http_requests: 32,
        http_response_bytes: 16 << 20,
        http_timeout: Duration::from_secs(30),
        max_tools: 256,
        description_bytes: 16 << 10,
        schema_bytes: 64 << 10,
        metadata_bytes: 1 << 20,
    };

    /// Returns these limits with every value `overrides` sets replaced.
    pub fn apply(mut self, overrides: &LimitsOverride) -> Limits {
        let LimitsOverride {
            fuel,
            memory_mb,
            table_elements,
            instances,
            wasm_stack_kb,
            timeout_ms,
            output_bytes,
            stderr_bytes,
            log_records,
            log_bytes_per_sec,
            log_burst_bytes,
            call_depth,
            nested_calls,
            http_requests,
            http_response_bytes,
            http_timeout_ms,
            max_tools,
            description_bytes,
            schema_bytes,
            metadata_bytes,
        } = *overrides;
        if let Some(v) = fuel {
            self.fuel = v;
        }
        if let Some(v) = memory_mb {
            self.memory_bytes = v.saturating_mul(1 << 20);
        }
        if let Some(v) = table_elements {
            self.table_elements = v;
        }
        if let Some(v) = instances {
            self.instances = v;
        }
        if let Some(v) = wasm_stack_kb {
            self.wasm_stack_bytes = usize::try_from(v.saturating_mul(1 << 10)).unwrap_or(usize::MAX);
        }
        if let Some(v) = timeout_ms {
            self.timeout = Duration::from_millis(v);
        }
        if let Some(v) = output_bytes {
            self.output_bytes = v;
        }
        if let Some(v) = stderr_bytes {
            self.stderr_bytes = v;
        }
        if let Some(v) = log_records {
            self.log_records = v;
        }
        if let Some(v) = log_bytes_per_sec {
            self.log_bytes_per_sec = v;
        }
        if let Some(v) = log_burst_bytes {
            self.log_burst_bytes = v;
        }
        if let Some(v) = call_depth {
            self.call_depth = v;
        }
        if let Some(v) = nested_calls {
            self.nested_calls = v;
        }
        if let Some(v) = http_requests {
            self.http_requests = v;
        }
        if let Some(v) = http_response_bytes {
            self.http_response_bytes = v;
        }
        if let Some(v) = http_timeout_ms {
            self.http_timeout = Duration::from_millis(v);
        }
        if let Some(v) = max_tools {
            self.max_tools = v;
        }
        if let Some(v) = description_bytes {
            self.description_bytes = v;
        }
        if let Some(v) = schema_bytes {
            self.schema_bytes = v;
        }
        if let Some(v) = metadata_bytes {
            self.metadata_bytes = v;
        }
        self
    }

    /// The limits on what a tool list may claim.
    pub fn metadata(&self) -> MetadataLimits {
        MetadataLimits {
            max_tools: self.max_tools,
            description_bytes: self.description_bytes,
            schema_bytes: self.schema_bytes,
            metadata_bytes: self.metadata_bytes,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// A partial set of limits, as written in the config (`[plugins.limits]`) or
/// given for one call; unset values keep the layer below.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsOverride {
    /// See [`Limits::fuel`].
    pub fuel: Option<u64>,
    /// See [`Limits::memory_bytes`], in MiB.
    pub memory_mb: Option<u64>,
    /// See [`Limits::table_elements`].
    pub table_elements: Option<u64>,
    /// See [`Limits::instances`].
    pub instances: Option<u32>,
    /// See [`Limits::wasm_stack_bytes`], in KiB.
    pub wasm_stack_kb: Option<u64>,
    /// See [`Limits::timeout`], in milliseconds.
    pub timeout_ms: Option<u64>,
    /// See [`Limits::output_bytes`].
    pub output_bytes: Option<u64>,
    /// See [`Limits::stderr_bytes`].
    pub stderr_bytes: Option<u64>,
    /// See [`Limits::log_records`].
    pub log_records: Option<u32>,
    /// See [`Limits::log_bytes_per_sec`].
    pub log_bytes_per_sec: Option<u64>,
    /// See [`Limits::log_burst_bytes`].
    pub log_burst_bytes: Option<u64>,
    /// See [`Limits::call_depth`].
    pub call_depth: Option<u32>,
    /// See [`Limits::nested_calls`].
    pub nested_calls: Option<u32>,
    /// See [`Limits::http_requests`].
    pub http_requests: Option<u32>,
    /// See [`Limits::http_response_bytes`].
    pub http_response_bytes: Option<u64>,
    /// See [`Limits::http_timeout`], in milliseconds.
    pub http_timeout_ms: Option<u64>,
    /// See [`Limits::max_tools`].
    pub max_tools: Option<u32>,
    /// See [`Limits::description_bytes`].
    pub description_bytes: Option<u64>,
    /// See [`Limits::schema_bytes`].
    pub schema_bytes: Option<u64>,
    /// See [`Limits::metadata_bytes`].
    pub metadata_bytes: Option<u64>,
}

impl LimitsOverride {
    /// `self`, with every value `over` sets replaced (`over` wins).
    pub fn merged_with(&self, over: &LimitsOverride) -> LimitsOverride {
        LimitsOverride {
            fuel: over.fuel.or(self.fuel),
            memory_mb: over.memory_mb.or(self.memory_mb),
            table_elements: over.table_elements.or(self.table_elements),
            instances: over.instances.or(self.instances),
            wasm_stack_kb: over.wasm_stack_kb.or(self.wasm_stack_kb),
            timeout_ms: over.timeout_ms.or(self.timeout_ms),
            output_bytes: over.output_bytes.or(self.output_bytes),
            stderr_bytes: over.stderr_bytes.or(self.stderr_bytes),
            log_records: over.log_records.or(self.log_records),
            log_bytes_per_sec: over.log_bytes_per_sec.or(self.log_bytes_per_sec),
            log_burst_bytes: over.log_burst_bytes.or(self.log_burst_bytes),
            call_depth: over.call_depth.or(self.call_depth),
            nested_calls: over.nested_calls.or(self.nested_calls),
            http_requests: over.http_requests.or(self.http_requests),
            http_response_bytes: over.http_response_bytes.or(self.http_response_bytes),
            http_timeout_ms: over.http_timeout_ms.or(self.http_timeout_ms),
            max_tools: over.max_tools.or(self.max_tools),
            description_bytes: over.description_bytes.or(self.description_bytes),
            schema_bytes: over.schema_bytes.or(self.schema_bytes),
            metadata_bytes: over.metadata_bytes.or(self.metadata_bytes),
        }
    }
}

/// A component's log budget over time: a token bucket of bytes, shared by
/// all its calls, filled at [`Limits::log_bytes_per_sec`] up to
/// [`Limits::log_burst_bytes`]. What does not fit is dropped (and counted),
/// so a plugin called in a tight loop cannot flood the host's log.
#[derive(Debug)]
pub struct LogBudget {
    rate: f64,
    burst: f64,
    state: std::sync::Mutex<(f64, std::time::Instant)>,
}

impl LogBudget {
    /// A full bucket for `limits`.
    pub fn new(limits: &Limits) -> LogBudget {
        let burst = limits.log_burst_bytes as f64;
        LogBudget {
            rate: limits.log_bytes_per_sec as f64,
            burst,
            state: std::sync::Mutex::new((burst, std::time::Instant::now())),
        }
    }

    /// Takes `bytes` from the bucket; `false` (taking nothing) when they do
    /// not fit.
    pub fn take(&self, bytes: usize) -> bool {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = std::time::Instant::now();
        let (tokens, last) = *state;
        let tokens = (tokens + now.duration_since(last).as_secs_f64() * self.rate).min(self.burst);
        let cost = bytes as f64;
        if cost <= tokens {
            *state = (tokens - cost, now);
            true
        } else {
            *state = (tokens, now);
            false
        }
    }
}

/// What one tool list (a component's, a bridged server's) may claim: see
/// the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataLimits {
    /// See [`Limits::max_tools`].
    pub max_tools: u32,
    /// See [`Limits::description_bytes`].
    pub description_bytes: u64,
    /// See [`Limits::schema_bytes`].
    pub schema_bytes: u64,
    /// See [`Limits::metadata_bytes`].
    pub metadata_bytes: u64,
}

impl Default for MetadataLimits {
    fn default() -> Self {
        Limits::DEFAULT.metadata()
    }
}

/// What one tool claims when it is listed, as [`MetadataLimits::check`]
/// measures it: text as the component or server sent it.
#[derive(Debug, Clone, Copy)]
pub struct ToolClaim<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its description.
    pub description: &'a str,
    /// Its parameter schema, as JSON text.
    pub parameters: &'a str,
    /// Its output schema, as JSON text, if it states one.
    pub output_schema: Option<&'a str>,
}

impl MetadataLimits {
    /// Checks a tool list of `owner` ("the component", "MCP server `x`")
    /// in one pass; stops at the first tool past a limit.
    ///
    /// # Errors
    ///
    /// The limit exceeded, by how much, and the key that raises it (in
    /// `[plugins.limits]`), as a message for the caller to give a code.
    pub fn check<'a>(
        &self,
        owner: &str,
        tools: impl ExactSizeIterator<Item = ToolClaim<'a>>,
    ) -> std::result::Result<(), String> {
        let count = tools.len();
        if count as u64 > u64::from(self.max_tools) {
            return Err(format!(
                "{owner} lists {count} tools, more than the limit of {} (raise `max_tools` in its [plugins.limits] if it really needs more)",
                self.max_tools
            ));
        }
        let mut total: u64 = 0;
        for tool in tools {
            let name = tool.name;
            if tool.description.len() as u64 > self.description_bytes {
                return Err(format!(
                    "{owner}: the description of tool `{}` is {} bytes, more than the limit of {} (`description_bytes`)",
                    clip_name(name),
                    tool.description.len(),
                    self.description_bytes
                ));
            }
            let schemas = [
                ("parameter", Some(tool.parameters)),
                ("output", tool.output_schema),
            ];
            for (which, schema) in schemas {
                let Some(schema) = schema else { continue };
                if schema.len() as u64 > self.schema_bytes {
                    return Err(format!(
                        "{owner}: the {which} schema of tool `{}` is {} bytes, more than the limit of {} (`schema_bytes`)",
                        clip_name(name),
                        schema.len(),
                        self.schema_bytes
                    ));
                }
            }
            let output = tool.output_schema.map_or(0, str::len);
            total = total.saturating_add(
                (name.len() + tool.description.len() + tool.parameters.len() + output) as u64,
            );
            if total > self.metadata_bytes {
                return Err(format!(
                    "{owner}: its tools' names, descriptions and schemas come to more than {} bytes (`metadata_bytes`)",
                    self.metadata_bytes
                ));
            }
        }
        Ok(())
    }
}

/// A tool name as shown in a message: at most 64 characters.
fn clip_name(name: &str) -> String {
    let mut out: String = name.chars().take(64).collect();
    if out.len() < name.len() {
        out.push('…');
    }
    out
}

/// What a sandboxed call used of its limits: reported in its
/// [`ToolCallEvent`](crate::dispatch::ToolCallEvent), and with its error
/// when it failed (a trap, a timeout, an exhausted limit), so the operator
/// sees how far it got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Fuel consumed by the call.
    pub fuel_consumed: u64,
    /// The largest linear memory size the call reached, in bytes.
    pub peak_memory_bytes: u64,
    /// Wall-clock time from the start of instantiation to the end, in
    /// milliseconds.
    #[serde(default)]
    pub wall_time_ms: u64,
    /// How long the call waited for a free instance of the pool before it
    /// could start, in microseconds (0: one was free).
    #[serde(default)]
    pub instance_wait_us: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_replace_only_what_they_set() {
        let plugin = LimitsOverride {
            fuel: Some(10),
            timeout_ms: Some(500),
            ..Default::default()
        };
        let call = LimitsOverride {
            timeout_ms: Some(200),
            ..Default::default()
        };
        let limits = Limits::DEFAULT.apply(&plugin.merged_with(&call));
        assert_eq!(limits.fuel, 10);
        assert_eq!(limits.timeout, Duration::from_millis(200));
        assert_eq!(limits.memory_bytes, Limits::DEFAULT.memory_bytes);
    }
}
