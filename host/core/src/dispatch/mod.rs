//! # Dispatch
//!
//! A [`Dispatcher`] serves a [`Registry`] to agent sessions: it builds each
//! turn's definitions and runs the model's calls through one pipeline.
//!
//! | step | where |
//! |---|---|
//! | pre-call hooks (block, rewrite) | [`hooks`](PreDecision) |
//! | lookup (host-application tools first: [`DispatcherBuilder::intercept`]), audience, toolsets, lazy activation, availability, argument validation | [`Dispatcher::dispatch`] |
//! | a call that stands for another (a lazy MCP server's `call_tool`): the pre-call hooks again, and the gate, on that call | [`Tool::stands_for`] |
//! | the call gate (`require_approval` rules: ask, or return the seed's `BLOCKED: …` result) | [`CallGate`], [`DispatcherBuilder::gate`] |
//! | execution with cancellation and a deadline | [`DispatchContext`] |
//! | post-call hooks, the event, the JSON result | [`ToolCallEvent`], [`ToolResult`] |
//! | error wrapping | [`Failure`] |
//! | concurrent batches | [`Dispatcher::dispatch_batch`] |
//! | prompts, resources, completions: listed and served by the same audience and toolset rules | [`Dispatcher::get_prompt`], [`Dispatcher::read_resource`], [`Dispatcher::complete`] |
//!
//! The registry sits behind a lock and can change while serving
//! ([`Dispatcher::update_registry`]); each change bumps a generation that
//! [`Dispatcher::subscribe_changes`] reports. Layers above attach their own
//! state to a dispatcher ([`Dispatcher::extension`]): the MCP bridge keeps
//! its connections there, so the dispatcher knows no MCP type.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::dispatch::{DispatchContext, Dispatcher, Session};
//! use toolhost_core::registry::{FnTool, Registry, ToolOutput, ToolSpec};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut registry = Registry::new();
//! registry.register(FnTool::new(
//!     ToolSpec::new("add", "Adds.", json!({"type": "object", "required": ["a", "b"]})),
//!     |args, _| async move { Ok(ToolOutput::json(&json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)))) },
//! )).unwrap();
//! let dispatcher = Dispatcher::builder(registry).build().unwrap();
//! let ctx = DispatchContext::new(Session::trusted("s1"));
//!
//! assert_eq!(dispatcher.dispatch("add", json!({"a": 2, "b": 3}), &ctx).await.content, "5");
//! let missing = dispatcher.dispatch("nope", json!({}), &ctx).await;
//! assert_eq!(missing.json()["error"], "Unknown tool: nope");
//! # });
//! ```

mod batch;
mod catalog;
mod errors;
mod events;
mod extensions;
mod gate;
mod hooks;
mod nested;
mod pipeline;
mod session;
mod traced;
mod waiting;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

pub use batch::{DEFAULT_BATCH_CONCURRENCY, ToolCall};
pub use catalog::CompletionRef;
pub use errors::Failure;
pub use events::{CallOutcome, ToolCallEvent};
pub use gate::{CallGate, GateDecision};
pub use hooks::{CallInfo, PostHook, PreDecision, PreHook};
pub use session::{Session, new_session_id};
pub use waiting::{PausingClock, PersonWait, WaitListener, Waiting};

use crate::error::{ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::limits::LimitsOverride;
use crate::metrics::CallObserver;
use crate::registry::lazy::{self, RegistryMode};
use crate::registry::{
    CallId, Registration, Registry, Tool, ToolAudience, ToolEntry, ToolSource, ToolSpec, openai_definition,
};
use crate::spans::Tracing;
use crate::toolsets::{ToolsetSelection, Toolsets};

/// What a dispatched call carries besides its name and arguments.
#[derive(Debug, Clone)]
pub struct DispatchContext {
    /// The session the call belongs to.
    pub session: Arc<Session>,
    /// The calling call (a tool calling a tool), if any.
    pub parent_call_id: Option<CallId>,
    /// The instant the call must finish by; past it the call fails with
    /// `timeout`.
    pub deadline: Option<Instant>,
    /// Cancelling it ends the call with `cancelled`.
    pub cancel: CancellationToken,
    /// Sandbox limits asked for the call.
    pub limits: LimitsOverride,
    /// How many calls enclose this one (0 for the model's own calls).
    pub depth: u32,
    /// Where the call reports waits for a person (an approval), so that
    /// whoever keeps time for it can stop its clock (see [`Waiting`]).
    pub waiting: Waiting,
    /// Where the tool's progress reports go, if the caller wants them.
    pub progress: Option<crate::progress::ProgressSink>,
    /// Where the tool's log records go (from the sink's level up), if the
    /// caller wants them.
    pub log: Option<crate::logging::LogSink>,
    /// The client the call may ask (elicitation, sampling), if any. Dispatch
    /// passes it on only to calls of a trusted session.
    pub client: Option<crate::client::ClientHandle>,
    /// The caller's W3C trace context (see [`crate::trace`]), carried into
    /// the call and every call it makes.
    pub trace: Option<Arc<crate::trace::TraceContext>>,
}

impl DispatchContext {
    /// A context for `session`, with no deadline.
    pub fn new(session: Arc<Session>) -> Self {
        DispatchContext {
            session,
            parent_call_id: None,
            deadline: None,
            cancel: CancellationToken::new(),
            limits: LimitsOverride::default(),
            depth: 0,
            waiting: Waiting::none(),
            progress: None,
            log: None,
            client: None,
            trace: None,
        }
    }
}

/// A call's result: always JSON text, an error object on failure.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The call's id.
    pub call_id: CallId,
    /// The tool's JSON result, or `{"error": ..., "error_code": ...}`.
    pub content: String,
    /// The text the tool gave the model beside its JSON, if any (see
    /// [`ToolOutput::text`](crate::registry::ToolOutput::text)); never set
    /// on a failed call.
    pub text: Option<String>,
    /// The error code when the call failed.
    pub error_code: Option<ErrorCode>,
    /// The failure as a typed error (its `"error"` string as the message,
    /// and its usage), when the call failed: what a nested call hands back
    /// to the tool that made it, without re-reading the JSON.
    pub error: Option<crate::Error>,
    /// The tool's content blocks, for an MCP client (see
    /// [`ToolOutput::blocks`](crate::registry::ToolOutput::blocks)); never
    /// set on a failed call.
    pub blocks: Vec<crate::content::ContentBlock>,
    /// The same JSON as [`content`](ToolResult::content), already parsed,
    /// when the tool handed it over as a value (see
    /// [`ToolOutput::structured`](crate::registry::ToolOutput::structured));
    /// never set on a failed call.
    pub structured: Option<Value>,
}

impl ToolResult {
    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.error_code.is_some()
    }

    /// The content parsed as JSON (`null` if a tool returned non-JSON text).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.content).unwrap_or(Value::Null)
    }

    /// What the model should read: the tool's text, else the JSON (a JSON
    /// string as its plain text); see
    /// [`model_text`](crate::registry::model_text).
    pub fn model_text(&self) -> std::borrow::Cow<'_, str> {
        crate::registry::model_text(&self.content, self.text.as_deref())
    }

    /// Whether the call failed because the session has no tool of that
    /// name ([`Failure::Unknown`]): not a tool or the pipeline answering
    /// `unknown_tool` about some other name (a nested call, `tool_search`),
    /// which [`Failure`]'s table words differently. MCP answers this one
    /// with a JSON-RPC error rather than a failed result.
    pub fn is_unknown_tool(&self) -> bool {
        self.error_code == Some(ErrorCode::UnknownTool)
            && self
                .error
                .as_ref()
                .is_some_and(|e| e.message().starts_with(errors::UNKNOWN_TOOL))
    }
}

struct Inner {
    registry: RwLock<Snapshot>,
    toolsets: Toolsets,
    selection: ToolsetSelection,
    mode: RegistryMode,
    host_tools: HashMap<String, Arc<ToolEntry>>,
    pre_hooks: Vec<PreHook>,
    post_hooks: Vec<PostHook>,
    gate: Option<Arc<dyn CallGate>>,
    /// Told of every call's start and end (metrics).
    observers: Vec<Arc<dyn CallObserver>>,
    /// Where calls' spans go, if anywhere (see [`crate::spans`]).
    tracing: Option<Tracing>,
    events: broadcast::Sender<ToolCallEvent>,
    /// Whether anyone ever subscribed to `events`: until then a call skips
    /// the channel (whose lock every call would take).
    subscribed: AtomicBool,
    generation: watch::Sender<u64>,
    next_call_id: AtomicU64,
    batch_concurrency: usize,
    /// What layers above keep with the dispatcher (see
    /// [`Dispatcher::extension`]); dropped with it.
    extensions: extensions::Extensions,
}

/// The registry the dispatcher serves and the names its toolset selection
/// picks from it, computed once per registry change rather than per call
/// (resolving the toolsets walks every tool of the registry).
struct Snapshot {
    registry: Arc<Registry>,
    selected: Result<Arc<BTreeSet<String>>>,
    /// The toolsets whose prompts and resources the selection shows.
    selected_toolsets: Result<Arc<BTreeSet<String>>>,
}

impl Snapshot {
    fn new(registry: Arc<Registry>, toolsets: &Toolsets, selection: &ToolsetSelection) -> Self {
        let selected = toolsets.select(selection, &registry).map(Arc::new);
        let selected_toolsets = toolsets.select_toolsets(selection, &registry).map(Arc::new);
        Snapshot {
            registry,
            selected,
            selected_toolsets,
        }
    }
}

/// Serves a registry to sessions; cheap to clone (a shared handle).
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("mode", &self.inner.mode)
            .field("tools", &self.registry().len())
            .finish_non_exhaustive()
    }
}

/// A [`Dispatcher`] handle that does not keep it alive (for tasks and tools
/// the dispatcher itself owns).
#[derive(Clone)]
pub struct WeakDispatcher(std::sync::Weak<Inner>);

impl std::fmt::Debug for WeakDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WeakDispatcher")
    }
}

impl WeakDispatcher {
    /// The dispatcher, if it is still alive.
    pub fn upgrade(&self) -> Option<Dispatcher> {
        self.0.upgrade().map(|inner| Dispatcher { inner })
    }
}

/// Builds a [`Dispatcher`].
pub struct DispatcherBuilder {
    registry: Registry,
    toolsets: Toolsets,
    selection: ToolsetSelection,
    mode: RegistryMode,
    host_tools: Vec<(Arc<dyn Tool>, ToolAudience)>,
    pre_hooks: Vec<PreHook>,
    post_hooks: Vec<PostHook>,
    gate: Option<Arc<dyn CallGate>>,
    observers: Vec<Arc<dyn CallObserver>>,
    tracing: Option<Tracing>,
    batch_concurrency: usize,
}

impl std::fmt::Debug for DispatcherBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DispatcherBuilder")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl DispatcherBuilder {
    /// The toolset definitions (default: presets only).
    pub fn toolsets(mut self, toolsets: Toolsets) -> Self {
        self.toolsets = toolsets;
        self
    }

    /// Tells `observer` of every call's start and end, in the call's own
    /// task (see [`CallObserver`]): what metrics count.
    pub fn observer(mut self, observer: Arc<dyn CallObserver>) -> Self {
        self.observers.push(observer);
        self
    }

    /// Makes a span of every call and of its steps (see [`crate::spans`]);
    /// none by default.
    pub fn tracing(mut self, tracing: Tracing) -> Self {
        self.tracing = Some(tracing);
        self
    }

    /// Which toolsets sessions use (default: all).
    pub fn selection(mut self, selection: ToolsetSelection) -> Self {
        self.selection = selection;
        self
    }

    /// Full or lazy mode (default: full).
    pub fn mode(mut self, mode: RegistryMode) -> Self {
        self.mode = mode;
        self
    }

    /// Has `tool` answer calls of its name instead of the registry's tool of
    /// that name (for host-application tools that need the application's
    /// own state). It is **trusted-only**; see
    /// [`DispatcherBuilder::intercept_public`]. Its calls pass every gate a
    /// registry tool's do: the pre-call hooks, the audience gate, argument
    /// validation against its own schema, the approval rules, the deadline,
    /// the post-call hooks (spill) and the event. If the registry also has
    /// a tool of that name (so that the model sees it), that entry's
    /// toolset, lazy activation and availability check apply too; an
    /// intercepted tool the registry does not list is in no toolset, so
    /// toolset selection and lazy mode do not hide it from a caller who
    /// knows its name.
    pub fn intercept(mut self, tool: impl Tool) -> Self {
        self.host_tools.push((Arc::new(tool), ToolAudience::Trusted));
        self
    }

    /// As [`DispatcherBuilder::intercept`], for a tool the application has
    /// reviewed as safe for public (untrusted) sessions.
    pub fn intercept_public(mut self, tool: impl Tool) -> Self {
        self.host_tools.push((Arc::new(tool), ToolAudience::Public));
        self
    }

    /// Adds a pre-call hook (run in the order added).
    pub fn pre_hook(
        mut self,
        hook: impl Fn(&CallInfo, &Value) -> PreDecision + Send + Sync + 'static,
    ) -> Self {
        self.pre_hooks.push(Arc::new(hook));
        self
    }

    /// Adds a post-call hook (run in the order added).
    pub fn post_hook(mut self, hook: impl Fn(&CallInfo, &mut ToolResult) + Send + Sync + 'static) -> Self {
        self.post_hooks.push(Arc::new(hook));
        self
    }

    /// Sends every call through `gate` once its arguments are final (after
    /// the pre-call hooks and validation): a refused call does not run and
    /// returns the gate's result instead (for the approval gate, the seed's
    /// `BLOCKED: …` object with `error_code` `blocked`, or
    /// `approval_required` while an asynchronous answer is pending). This
    /// applies to intercepted host-application tools and to nested calls
    /// too. Default: no gate.
    pub fn gate(mut self, gate: Arc<dyn CallGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The same as [`DispatcherBuilder::gate`] (the name the approval flow
    /// uses).
    pub fn approval(self, gate: Arc<dyn CallGate>) -> Self {
        self.gate(gate)
    }

    /// How many calls of a batch run at once (default
    /// [`DEFAULT_BATCH_CONCURRENCY`]; at least 1).
    pub fn batch_concurrency(mut self, n: usize) -> Self {
        self.batch_concurrency = n.max(1);
        self
    }

    /// The dispatcher.
    ///
    /// # Errors
    ///
    /// `config` when the selection names an unknown toolset or the toolset
    /// definitions have a cycle.
    pub fn build(self) -> Result<Dispatcher> {
        self.toolsets.validate(&self.registry)?;
        self.toolsets.select(&self.selection, &self.registry)?;
        let mut host_tools = HashMap::new();
        for (tool, audience) in self.host_tools {
            let name = tool.spec().name.clone();
            crate::registry::check_name(&name, &ToolSource::Builtin)?;
            let entry = ToolEntry::build(
                Registration::from_arc(tool),
                name.clone(),
                ToolSource::Builtin,
                audience,
            )?;
            host_tools.insert(name, Arc::new(entry));
        }
        let (events, _) = broadcast::channel(1024);
        let snapshot = Snapshot::new(Arc::new(self.registry), &self.toolsets, &self.selection);
        Ok(Dispatcher {
            inner: Arc::new(Inner {
                registry: RwLock::new(snapshot),
                toolsets: self.toolsets,
                selection: self.selection,
                mode: self.mode,
                host_tools,
                pre_hooks: self.pre_hooks,
                post_hooks: self.post_hooks,
                gate: self.gate,
                observers: self.observers,
                tracing: self.tracing,
                events,
                subscribed: AtomicBool::new(false),
                generation: watch::Sender::new(0),
                next_call_id: AtomicU64::new(1),
                batch_concurrency: self.batch_concurrency,
                extensions: Default::default(),
            }),
        })
    }
}

impl Dispatcher {
    /// A builder serving `registry`.
    pub fn builder(registry: Registry) -> DispatcherBuilder {
        DispatcherBuilder {
            registry,
            toolsets: Toolsets::new(),
            selection: ToolsetSelection::default(),
            mode: RegistryMode::Full,
            host_tools: Vec::new(),
            pre_hooks: Vec::new(),
            post_hooks: Vec::new(),
            gate: None,
            observers: Vec::new(),
            tracing: None,
            batch_concurrency: DEFAULT_BATCH_CONCURRENCY,
        }
    }

    /// A snapshot of the registry.
    pub fn registry(&self) -> Arc<Registry> {
        Arc::clone(
            &self
                .inner
                .registry
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .registry,
        )
    }

    /// Changes the registry: `change` runs on a copy, which replaces the
    /// registry only if it succeeds. Calls in flight keep their snapshot.
    ///
    /// # Errors
    ///
    /// Whatever `change` returns.
    pub fn update_registry<T>(&self, change: impl FnOnce(&mut Registry) -> Result<T>) -> Result<T> {
        let mut guard = self
            .inner
            .registry
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut copy = Registry::clone(&guard.registry);
        let out = change(&mut copy)?;
        *guard = Snapshot::new(Arc::new(copy), &self.inner.toolsets, &self.inner.selection);
        drop(guard);
        self.inner.generation.send_modify(|g| *g += 1);
        Ok(out)
    }

    /// Removes every tool of component `hash`; returns how many went.
    /// Calls in flight keep their snapshot of the registry.
    pub fn unload_component(&self, hash: ComponentHash) -> usize {
        self.update_registry(|r| Ok(r.unregister_component(hash)))
            .unwrap_or(0)
    }

    /// The dispatcher's extension of type `T` (made with `T::default()` on
    /// first use): state a layer above keeps with the dispatcher and drops
    /// with it, such as the MCP bridge's connections. One per type.
    pub fn extension<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        self.inner.extensions.get_or_default()
    }

    /// A handle that does not keep the dispatcher alive.
    pub fn downgrade(&self) -> WeakDispatcher {
        WeakDispatcher(Arc::downgrade(&self.inner))
    }

    /// A receiver of the registry's generation, bumped on every change
    /// (for MCP `list_changed` notifications).
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// A receiver of every call's [`ToolCallEvent`].
    pub fn subscribe(&self) -> broadcast::Receiver<ToolCallEvent> {
        let receiver = self.inner.events.subscribe();
        self.inner.subscribed.store(true, Ordering::Release);
        receiver
    }

    /// The registry mode.
    pub fn mode(&self) -> RegistryMode {
        self.inner.mode
    }

    /// The agent's iteration limit for `base` in this mode (tripled in lazy mode).
    pub fn iteration_limit(&self, base: u32) -> u32 {
        self.inner.mode.iteration_limit(base)
    }

    /// The toolset definitions.
    pub fn toolsets(&self) -> &Toolsets {
        &self.inner.toolsets
    }

    /// Whether toolset `name` has an available tool for `audience`.
    ///
    /// # Errors
    ///
    /// `config` for an unknown toolset.
    pub fn is_toolset_available(&self, name: &str, audience: ToolAudience) -> Result<bool> {
        self.inner
            .toolsets
            .is_toolset_available(name, &self.registry(), audience)
    }

    /// The registry and the names the toolset selection picks from it, in
    /// one read of the shared snapshot.
    fn snapshot(&self) -> (Arc<Registry>, Result<Arc<BTreeSet<String>>>) {
        let current = self.inner.registry.read().unwrap_or_else(PoisonError::into_inner);
        (Arc::clone(&current.registry), current.selected.clone())
    }

    /// The names the toolset selection picks from `registry`: computed
    /// when the registry last changed, or afresh for an older snapshot (a
    /// call that started before the change).
    fn selected(&self, registry: &Registry) -> Result<Arc<BTreeSet<String>>> {
        let current = self.inner.registry.read().unwrap_or_else(PoisonError::into_inner);
        if std::ptr::eq(Arc::as_ptr(&current.registry), registry) {
            return current.selected.clone();
        }
        drop(current);
        self.inner
            .toolsets
            .select(&self.inner.selection, registry)
            .map(Arc::new)
    }

    /// The names `session` may use of `registry`: the toolset selection's
    /// ([`Dispatcher::selected`]), less what the session's grant leaves out
    /// (see [`Session::granted`]). A granted toolset that does not resolve
    /// (none has that name, now) grants nothing.
    fn selected_for(&self, registry: &Registry, session: &Session) -> Result<Arc<BTreeSet<String>>> {
        let selected = self.selected(registry)?;
        let Some(granted) = session.toolsets() else {
            return Ok(selected);
        };
        Ok(Arc::new(self.granted_names(registry, &selected, granted)))
    }

    /// The names of `selected` that the toolsets `granted` hold.
    fn granted_names(
        &self,
        registry: &Registry,
        selected: &BTreeSet<String>,
        granted: &[String],
    ) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for toolset in granted {
            match self
                .inner
                .toolsets
                .select(&ToolsetSelection::enabled([toolset.as_str()]), registry)
            {
                Ok(tools) => names.extend(tools.into_iter().filter(|t| selected.contains(t))),
                Err(e) => tracing::debug!("a session's granted toolset `{toolset}` grants nothing: {e}"),
            }
        }
        names
    }

    /// Whether a session of `audience` granted `toolsets` (all the
    /// selection's when `None`) may call the tool `name` now: it is
    /// registered, visible to the audience and selected. What an HTTP
    /// server asks to tell a token's missing scope (HTTP 403) from an
    /// unknown tool.
    pub fn grants(&self, audience: ToolAudience, toolsets: Option<&[String]>, name: &str) -> bool {
        let registry = self.registry();
        let Some(entry) = registry.get(name) else {
            return false;
        };
        if !audience.may_use(entry.audience()) {
            return false;
        }
        let Ok(selected) = self.selected(&registry) else {
            return false;
        };
        match toolsets {
            None => selected.contains(name),
            Some(granted) => self.granted_names(&registry, &selected, granted).contains(name),
        }
    }

    /// The definitions the model sees this turn (OpenAI format). Full mode:
    /// every selected, visible, available tool. Lazy mode: `tool_search`,
    /// then the tools the session activated that pass the same filters.
    ///
    /// # Errors
    ///
    /// `config` when the selection no longer resolves (a toolset vanished).
    pub fn definitions(&self, session: &Session) -> Result<Vec<Value>> {
        Ok(self.tool_specs(session)?.iter().map(openai_definition).collect())
    }

    /// The specs behind [`Dispatcher::definitions`], in the same order,
    /// with their hints (what an MCP `tools/list` answers).
    ///
    /// # Errors
    ///
    /// As [`Dispatcher::definitions`].
    pub fn tool_specs(&self, session: &Session) -> Result<Vec<ToolSpec>> {
        let registry = self.registry();
        let selected = self.selected_for(&registry, session)?;
        let mut specs = registry.visible_specs(session.audience(), Some(&selected));
        if self.inner.mode == RegistryMode::Lazy {
            let activated = session.activated();
            let hidden = specs.len();
            specs.retain(|s| activated.contains(&s.name));
            specs.insert(0, lazy::tool_search_spec(hidden - specs.len()));
        }
        Ok(specs)
    }
}

pub(crate) fn is_lazy_search(mode: RegistryMode, name: &str) -> bool {
    mode == RegistryMode::Lazy && name == lazy::TOOL_SEARCH
}
