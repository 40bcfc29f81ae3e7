//! # What the MCP server serves
//!
//! [`ToolCatalog`] is the one thing [`McpServer`](super::McpServer) needs: the
//! tools to list (already filtered for the audience and toolsets being
//! served), a way to call one, and a generation counter that moves whenever
//! the list changes (so `notifications/tools/list_changed` can be sent).
//! The registry implements it; [`LocalCatalog`] is a small implementation over
//! a list of tools, used by `toolhost serve` and the tests, with components
//! loaded and unloaded at runtime.
//!
//! ```
//! use std::sync::Arc;
//! use serde_json::json;
//! use toolhost::mcp::{Audience, LocalCatalog, ToolCatalog};
//! use toolhost::registry::{FnTool, ToolOutput, ToolSpec};
//!
//! let catalog = LocalCatalog::new(Audience::Public);
//! let echo = FnTool::new(ToolSpec::new("echo", "Echoes.", json!({"type": "object"})),
//!     |args, _| async move { Ok(ToolOutput::json(&args)) });
//! let secret = FnTool::new(ToolSpec::new("secret", "Trusted only.", json!({"type": "object"})),
//!     |_, _| async move { Ok(ToolOutput::text("42")) });
//! catalog.add_tool(Arc::new(echo), true).unwrap();
//! catalog.add_tool(Arc::new(secret), false).unwrap();
//! let names: Vec<_> = catalog.list().into_iter().map(|t| t.name).collect();
//! assert_eq!(names, ["echo"]);
//! assert_eq!(*catalog.changes().borrow(), 2);
//! ```

use std::path::Path;
use std::sync::{Arc, RwLock};

use serde_json::Value;
use tokio::sync::watch;

use crate::component::{LoadOptions, LoadedComponent};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::identity::ComponentHash;
use crate::registry::{BoxFuture, CallContext, Tool, ToolOutput, ToolSpec};

/// The tools an MCP server offers. See the module documentation.
pub trait ToolCatalog: Send + Sync + 'static {
    /// The tools to list, in a stable order. Names are unique.
    fn list(&self) -> Vec<ToolSpec>;

    /// Calls tool `name`. A tool the catalog does not offer (including one
    /// hidden from this audience) is [`ErrorCode::UnknownTool`].
    fn call(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>>;

    /// A generation counter that changes whenever [`ToolCatalog::list`] may
    /// give a different answer.
    fn changes(&self) -> watch::Receiver<u64>;
}

/// Who a [`LocalCatalog`] serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Audience {
    /// Every tool.
    #[default]
    Trusted,
    /// Only tools added as public.
    Public,
}

struct Entry {
    tool: Arc<dyn Tool>,
    public: bool,
    component: Option<ComponentHash>,
}

/// A [`ToolCatalog`] over a list of tools, each public or trusted-only.
pub struct LocalCatalog {
    audience: Audience,
    entries: RwLock<Vec<Entry>>,
    generation: watch::Sender<u64>,
}

impl std::fmt::Debug for LocalCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalCatalog")
            .field("audience", &self.audience)
            .field("generation", &*self.generation.borrow())
            .finish_non_exhaustive()
    }
}

impl LocalCatalog {
    /// An empty catalog serving `audience`.
    pub fn new(audience: Audience) -> Arc<Self> {
        Arc::new(LocalCatalog {
            audience,
            entries: RwLock::new(Vec::new()),
            generation: watch::Sender::new(0),
        })
    }

    /// The audience served.
    pub fn audience(&self) -> Audience {
        self.audience
    }

    /// Adds one tool; `public` says whether the public audience may see it.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DuplicateTool`] if a tool of that name is there already.
    pub fn add_tool(&self, tool: Arc<dyn Tool>, public: bool) -> Result<()> {
        self.add(vec![tool], public, None).map(|_| ())
    }

    /// Adds every tool of `component`, all or none.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::DuplicateTool`] if one of its tools has the name of a tool
    /// already there, or the component is loaded already.
    pub fn load_component(&self, component: &Arc<LoadedComponent>, public: bool) -> Result<Vec<String>> {
        let tools = component
            .wasm_tools()
            .into_iter()
            .map(|t| Arc::new(t) as Arc<dyn Tool>)
            .collect();
        self.add(tools, public, Some(component.hash()))
    }

    /// Loads the component at `path` into `engine` and adds its tools.
    ///
    /// # Errors
    ///
    /// Any load error, or those of [`LocalCatalog::load_component`].
    pub async fn load_file(
        &self,
        engine: &Engine,
        path: &Path,
        public: bool,
    ) -> Result<Arc<LoadedComponent>> {
        let component = engine.load_file(path, LoadOptions::default()).await?;
        self.load_component(&component, public)?;
        Ok(component)
    }

    /// Removes every tool of the component with `hash`. Calls already running
    /// finish normally: they hold their own reference to the tool.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::UnknownTool`] if no such component is loaded.
    pub fn unload_component(&self, hash: ComponentHash) -> Result<Vec<String>> {
        let mut entries = self
            .entries
            .write()
            .map_err(|_| Error::internal("catalog lock poisoned"))?;
        let removed: Vec<String> = entries
            .iter()
            .filter(|e| e.component == Some(hash))
            .map(|e| e.tool.spec().name.clone())
            .collect();
        if removed.is_empty() {
            return Err(Error::new(
                ErrorCode::UnknownTool,
                format!("no component {hash} is loaded"),
            ));
        }
        entries.retain(|e| e.component != Some(hash));
        drop(entries);
        self.generation.send_modify(|g| *g += 1);
        Ok(removed)
    }

    fn add(
        &self,
        tools: Vec<Arc<dyn Tool>>,
        public: bool,
        component: Option<ComponentHash>,
    ) -> Result<Vec<String>> {
        let mut entries = self
            .entries
            .write()
            .map_err(|_| Error::internal("catalog lock poisoned"))?;
        if let Some(hash) = component
            && entries.iter().any(|e| e.component == Some(hash))
        {
            return Err(Error::new(
                ErrorCode::DuplicateTool,
                format!("component {hash} is loaded already"),
            ));
        }
        let mut names: Vec<String> = Vec::with_capacity(tools.len());
        for tool in &tools {
            let name = &tool.spec().name;
            if names.contains(name) || entries.iter().any(|e| &e.tool.spec().name == name) {
                return Err(Error::new(
                    ErrorCode::DuplicateTool,
                    format!("a tool named {name:?} is registered already"),
                ));
            }
            names.push(name.clone());
        }
        entries.extend(tools.into_iter().map(|tool| Entry {
            tool,
            public,
            component,
        }));
        drop(entries);
        self.generation.send_modify(|g| *g += 1);
        Ok(names)
    }

    fn visible(&self, entry: &Entry) -> bool {
        self.audience == Audience::Trusted || entry.public
    }

    fn find(&self, name: &str) -> Option<Arc<dyn Tool>> {
        let entries = self.entries.read().ok()?;
        entries
            .iter()
            .find(|e| e.tool.spec().name == name && self.visible(e))
            .map(|e| Arc::clone(&e.tool))
    }
}

impl ToolCatalog for LocalCatalog {
    fn list(&self) -> Vec<ToolSpec> {
        let Ok(entries) = self.entries.read() else {
            return Vec::new();
        };
        entries
            .iter()
            .filter(|e| self.visible(e))
            .map(|e| e.tool.spec().clone())
            .collect()
    }

    fn call(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        let tool = self.find(name);
        let name = name.to_string();
        Box::pin(async move {
            match tool {
                Some(tool) => tool.call(arguments, ctx).await,
                None => Err(Error::new(
                    ErrorCode::UnknownTool,
                    format!("no tool named {name:?}"),
                )),
            }
        })
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
