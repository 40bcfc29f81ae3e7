//! # Registry entries
//!
//! A [`ToolEntry`] is one registered tool: its name and toolset, the schema
//! the model sees, where it comes from ([`ToolSource`]), who may use it
//! ([`ToolAudience`]), its handler, an optional availability [`Check`], the
//! environment variables it needs (for display) and its display emoji.
//!
//! Entries are built by the [`Registry`](super::Registry) from a
//! [`Registration`], which carries everything except the source and the
//! audience: those are decided by the registration method alone
//! (fail-closed), never by the tool or its metadata.
//!
//! ```
//! use serde_json::json;
//! use toolhost_core::registry::{Check, FnTool, Registration, ToolOutput, ToolSpec};
//!
//! let tool = FnTool::new(
//!     ToolSpec::new("search", "Search the web.", json!({"type": "object"})),
//!     |_args, _ctx| async { Ok(ToolOutput::json_text("[]")) },
//! );
//! let registration = Registration::new(tool)
//!     .toolset("web")
//!     .check(Check::env("SEARCH_API_KEY"))
//!     .requires_env(["SEARCH_API_KEY"])
//!     .emoji("🔎");
//! # let _ = registration;
//! ```

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::availability::Check;
use super::tool::{Tool, ToolSpec};
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum ToolSource {
    /// Shipped with (or registered by) the host application.
    Builtin,
    /// Provided by an MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
    },
    /// Provided by a WebAssembly component.
    Wasm {
        /// The component's identity.
        component_hash: ComponentHash,
    },
}

impl ToolSource {
    /// `builtin`, `mcp` or `wasm`, as in schemas and events.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolSource::Builtin => "builtin",
            ToolSource::Mcp { .. } => "mcp",
            ToolSource::Wasm { .. } => "wasm",
        }
    }
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolSource::Builtin => f.write_str("built-in"),
            ToolSource::Mcp { server } => write!(f, "MCP server `{server}`"),
            ToolSource::Wasm { component_hash } => write!(f, "component {component_hash}"),
        }
    }
}

/// Who may see and call a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolAudience {
    /// Authenticated owner and authorized operator turns only (the default).
    Trusted,
    /// Also eligible for explicitly configured untrusted origins.
    Public,
}

impl ToolAudience {
    /// `trusted` or `public`.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolAudience::Trusted => "trusted",
            ToolAudience::Public => "public",
        }
    }

    /// Whether a turn of audience `self` may use a tool registered for `tool`.
    /// A trusted turn may use every tool; a public turn only public tools.
    pub fn may_use(self, tool: ToolAudience) -> bool {
        self == ToolAudience::Trusted || tool == ToolAudience::Public
    }
}

/// Rewrites a tool's schema after filtering, given the specs of the tools
/// that passed it, itself included (for tools whose schema lists other
/// tools, such as `run_tools_script`'s signatures).
pub type SchemaPatch = Arc<dyn Fn(&ToolSpec, &[&ToolSpec]) -> ToolSpec + Send + Sync>;

/// What a registration says about a tool besides its handler, source,
/// audience and toolset, kept as is in its [`ToolEntry`].
#[derive(Clone, Default)]
pub(super) struct ToolMeta {
    pub(super) check: Option<Check>,
    pub(super) requires_env: Vec<String>,
    pub(super) emoji: Option<String>,
    pub(super) description: Option<String>,
    pub(super) patch: Option<SchemaPatch>,
}

/// Everything about a tool except its source and audience: what a caller
/// hands to a `register*` method.
#[derive(Clone)]
pub struct Registration {
    pub(super) handler: Arc<dyn Tool>,
    pub(super) toolset: Option<String>,
    pub(super) meta: ToolMeta,
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("name", &self.handler.spec().name)
            .field("toolset", &self.toolset)
            .finish_non_exhaustive()
    }
}

impl Registration {
    /// A registration of `tool` with no metadata. Its toolset defaults to the
    /// tool's name (built-ins), `mcp-SERVER` (MCP) or the component's toolset.
    pub fn new(tool: impl Tool) -> Self {
        Registration::from_arc(Arc::new(tool))
    }

    /// As [`Registration::new`], for a tool already behind an `Arc`.
    pub fn from_arc(tool: Arc<dyn Tool>) -> Self {
        Registration {
            handler: tool,
            toolset: None,
            meta: ToolMeta::default(),
        }
    }

    /// Puts the tool in toolset `name`.
    pub fn toolset(mut self, name: impl Into<String>) -> Self {
        self.toolset = Some(name.into());
        self
    }

    /// Makes the tool's presence in definitions depend on `check`.
    pub fn check(mut self, check: Check) -> Self {
        self.meta.check = Some(check);
        self
    }

    /// The environment variables the tool needs (for display only; use
    /// [`Check::env`] to make availability depend on them).
    pub fn requires_env<I, S>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.meta.requires_env = vars.into_iter().map(Into::into).collect();
        self
    }

    /// The emoji shown next to the tool in progress displays.
    pub fn emoji(mut self, emoji: impl Into<String>) -> Self {
        self.meta.emoji = Some(emoji.into());
        self
    }

    /// Registry-only description metadata. The model never sees it: it
    /// reads the schema's description (see [`ToolEntry::description`]).
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.meta.description = Some(text.into());
        self
    }

    /// A patch applied to the schema after filtering (see [`SchemaPatch`]).
    pub fn patch_schema(
        mut self,
        patch: impl Fn(&ToolSpec, &[&ToolSpec]) -> ToolSpec + Send + Sync + 'static,
    ) -> Self {
        self.meta.patch = Some(Arc::new(patch));
        self
    }
}

impl<T: Tool> From<T> for Registration {
    fn from(tool: T) -> Self {
        Registration::new(tool)
    }
}

/// One registered tool. Immutable; the registry shares entries by `Arc`.
pub struct ToolEntry {
    pub(super) name: String,
    pub(super) toolset: String,
    pub(super) source: ToolSource,
    pub(super) audience: ToolAudience,
    pub(super) handler: Arc<dyn Tool>,
    pub(super) validator: Arc<jsonschema::Validator>,
    pub(super) meta: ToolMeta,
}

impl fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.name)
            .field("toolset", &self.toolset)
            .field("source", &self.source)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl ToolEntry {
    /// Builds an entry, compiling the tool's parameter schema once.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` when the parameter schema is not a valid JSON
    /// Schema.
    pub(crate) fn build(
        reg: Registration,
        default_toolset: String,
        source: ToolSource,
        audience: ToolAudience,
    ) -> Result<ToolEntry> {
        let spec = reg.handler.spec();
        let validator = compile(spec)?;
        Ok(ToolEntry {
            name: spec.name.clone(),
            toolset: reg.toolset.unwrap_or(default_toolset),
            source,
            audience,
            validator: Arc::new(validator),
            handler: reg.handler,
            meta: reg.meta,
        })
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The toolset it belongs to.
    pub fn toolset(&self) -> &str {
        &self.toolset
    }

    /// Where it comes from.
    pub fn source(&self) -> &ToolSource {
        &self.source
    }

    /// Who may use it.
    pub fn audience(&self) -> ToolAudience {
        self.audience
    }

    /// The model-facing schema (description and parameters).
    pub fn spec(&self) -> &ToolSpec {
        self.handler.spec()
    }

    /// The handler.
    pub fn handler(&self) -> &Arc<dyn Tool> {
        &self.handler
    }

    /// The availability check, if any.
    pub fn check(&self) -> Option<&Check> {
        self.meta.check.as_ref()
    }

    /// The environment variables the tool needs (display only).
    pub fn requires_env(&self) -> &[String] {
        &self.meta.requires_env
    }

    /// The display emoji, if any.
    pub fn emoji(&self) -> Option<&str> {
        self.meta.emoji.as_deref()
    }

    /// Registry metadata: the registration's description, falling back to
    /// the schema's. The model always sees the schema's description.
    pub fn description(&self) -> &str {
        self.meta
            .description
            .as_deref()
            .unwrap_or(&self.spec().description)
    }

    /// Whether the tool must run alone in a batch.
    pub fn sequential(&self) -> bool {
        self.handler.sequential()
    }

    /// Checks `arguments` against the tool's parameter schema.
    ///
    /// # Errors
    ///
    /// `invalid_arguments`, naming the failing field (its JSON pointer) and
    /// what is wrong with it.
    pub fn validate(&self, arguments: &Value) -> Result<()> {
        let Some(error) = self.validator.iter_errors(arguments).next() else {
            return Ok(());
        };
        let path = error.instance_path().as_str();
        let message = if path.is_empty() {
            format!("invalid arguments: {error}")
        } else {
            format!("invalid argument `{path}`: {error}")
        };
        Err(Error::new(ErrorCode::InvalidArguments, message))
    }

    /// The spec after the entry's schema patch, given the specs of the tools
    /// that passed filtering.
    pub(crate) fn patched_spec(&self, visible: &[&ToolSpec]) -> ToolSpec {
        match &self.meta.patch {
            Some(patch) => patch(self.spec(), visible),
            None => self.spec().clone(),
        }
    }

    /// A copy of this entry with another handler (for `replace`); the
    /// source, audience, toolset and metadata stay.
    pub(super) fn with_handler(&self, handler: Arc<dyn Tool>) -> Result<ToolEntry> {
        let validator = compile(handler.spec())?;
        Ok(ToolEntry {
            name: self.name.clone(),
            toolset: self.toolset.clone(),
            source: self.source.clone(),
            audience: self.audience,
            handler,
            validator: Arc::new(validator),
            meta: self.meta.clone(),
        })
    }
}

fn compile(spec: &ToolSpec) -> Result<jsonschema::Validator> {
    jsonschema::validator_for(&spec.parameters).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArguments,
            format!("tool `{}` has an invalid parameter schema: {e}", spec.name),
        )
    })
}
