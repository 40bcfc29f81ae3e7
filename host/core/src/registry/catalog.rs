//! # Prompts and resources in the registry
//!
//! A source offers, besides tools, a [`Catalog`]: prompts, resources and
//! resource templates with the reader of its resources. The registry holds
//! them beside its tools under the same rules: the registration method
//! alone decides their source and audience (trusted-only unless a built-in
//! is registered public), their toolset defaults to their source's, and a
//! name (a prompt's), URI (a resource's) or URI template already taken is
//! refused, naming both owners, never replaced.
//!
//! ```
//! use toolhost_core::registry::{Catalog, FnPrompt, PromptResult, PromptSpec, Registry, ToolSource};
//!
//! let prompt = FnPrompt::new(PromptSpec::new("hello", "Greets."), |_args, _ctx| async {
//!     Ok(PromptResult::new(Vec::new()))
//! });
//! let mut registry = Registry::new();
//! registry
//!     .register_catalog(ToolSource::Mcp { server: "docs".into() }, Catalog::new().prompt(prompt))
//!     .unwrap();
//! let entry = registry.prompt("hello").unwrap();
//! assert_eq!(entry.toolset(), "mcp-docs");
//! assert_eq!(entry.audience().as_str(), "trusted");
//! ```

use std::fmt;
use std::sync::Arc;

use super::entry::{ToolAudience, ToolSource};
use super::prompt::{Prompt, PromptSpec};
use super::resource::{ResourceSpec, ResourceTemplateSpec, Resources, UriTemplate, check_uri};
use crate::error::{Error, ErrorCode, Result};

/// Where an entry comes from, who may use it, and its toolset: what every
/// registry entry has, whatever it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// Where it comes from.
    pub source: ToolSource,
    /// Who may use it.
    pub audience: ToolAudience,
    /// The toolset it belongs to.
    pub toolset: String,
}

/// The prompts, resources and templates a source offers, registered
/// together with [`Registry::register_catalog`](super::Registry::register_catalog).
#[derive(Default)]
pub struct Catalog {
    pub(super) prompts: Vec<Arc<dyn Prompt>>,
    pub(super) resources: Vec<ResourceSpec>,
    pub(super) templates: Vec<ResourceTemplateSpec>,
    pub(super) reader: Option<Arc<dyn Resources>>,
    pub(super) toolset: Option<String>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field(
                "prompts",
                &self.prompts.iter().map(|p| &p.spec().name).collect::<Vec<_>>(),
            )
            .field(
                "resources",
                &self.resources.iter().map(|r| &r.uri).collect::<Vec<_>>(),
            )
            .field(
                "templates",
                &self.templates.iter().map(|t| &t.uri_template).collect::<Vec<_>>(),
            )
            .field("toolset", &self.toolset)
            .finish()
    }
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Whether it offers nothing.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty() && self.resources.is_empty() && self.templates.is_empty()
    }

    /// This catalog with `prompt`.
    pub fn prompt(self, prompt: impl Prompt) -> Self {
        self.prompt_arc(Arc::new(prompt))
    }

    /// This catalog with `prompt`, already behind an `Arc`.
    pub fn prompt_arc(mut self, prompt: Arc<dyn Prompt>) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// This catalog with `resources` and `templates`, all read by `reader`.
    pub fn resources(
        mut self,
        reader: Arc<dyn Resources>,
        resources: Vec<ResourceSpec>,
        templates: Vec<ResourceTemplateSpec>,
    ) -> Self {
        self.resources = resources;
        self.templates = templates;
        self.reader = Some(reader);
        self
    }

    /// Puts everything in toolset `name` (default: the source's).
    pub fn toolset(mut self, name: impl Into<String>) -> Self {
        self.toolset = Some(name.into());
        self
    }
}

/// One registered prompt.
#[derive(Debug)]
pub struct PromptEntry {
    pub(super) prompt: Arc<dyn Prompt>,
    pub(super) provenance: Provenance,
}

impl PromptEntry {
    /// The prompt's description.
    pub fn spec(&self) -> &PromptSpec {
        self.prompt.spec()
    }

    /// The prompt.
    pub fn prompt(&self) -> &Arc<dyn Prompt> {
        &self.prompt
    }

    /// Its source, audience and toolset.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// Its toolset.
    pub fn toolset(&self) -> &str {
        &self.provenance.toolset
    }

    /// Who may use it.
    pub fn audience(&self) -> ToolAudience {
        self.provenance.audience
    }
}

/// One registered resource.
#[derive(Debug)]
pub struct ResourceEntry {
    pub(super) spec: ResourceSpec,
    pub(super) reader: Arc<dyn Resources>,
    pub(super) provenance: Provenance,
}

impl ResourceEntry {
    /// The resource's description.
    pub fn spec(&self) -> &ResourceSpec {
        &self.spec
    }

    /// Its reader.
    pub fn reader(&self) -> &Arc<dyn Resources> {
        &self.reader
    }

    /// Its source, audience and toolset.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }
}

/// One registered resource template.
#[derive(Debug)]
pub struct TemplateEntry {
    pub(super) spec: ResourceTemplateSpec,
    pub(super) template: UriTemplate,
    pub(super) reader: Arc<dyn Resources>,
    pub(super) provenance: Provenance,
}

impl TemplateEntry {
    /// The template's description.
    pub fn spec(&self) -> &ResourceTemplateSpec {
        &self.spec
    }

    /// The parsed template.
    pub fn template(&self) -> &UriTemplate {
        &self.template
    }

    /// Its reader.
    pub fn reader(&self) -> &Arc<dyn Resources> {
        &self.reader
    }

    /// Its source, audience and toolset.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }
}

/// The entries of a catalog, checked, ready to insert.
pub(super) struct Checked {
    pub(super) prompts: Vec<PromptEntry>,
    pub(super) resources: Vec<ResourceEntry>,
    pub(super) templates: Vec<TemplateEntry>,
}

impl Catalog {
    /// Checks every item and makes its entry: names by the tool-name rule,
    /// URIs and templates parsed, a reader present when there are
    /// resources, nothing twice within the catalog.
    pub(super) fn check(self, provenance: Provenance) -> Result<Checked> {
        let source = &provenance.source;
        let mut prompts: Vec<PromptEntry> = Vec::with_capacity(self.prompts.len());
        for prompt in self.prompts {
            let name = &prompt.spec().name;
            if !super::names::is_valid_tool_name(name) {
                return Err(Error::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "{source} cannot register a prompt named {:?}: names are 1 to 64 characters from A-Z a-z 0-9 _ -",
                        name.chars().take(80).collect::<String>()
                    ),
                ));
            }
            if prompts.iter().any(|p| p.spec().name == *name) {
                return Err(twice("prompt", name, source));
            }
            prompts.push(PromptEntry {
                prompt,
                provenance: provenance.clone(),
            });
        }
        if self.reader.is_none() && !(self.resources.is_empty() && self.templates.is_empty()) {
            return Err(Error::internal(format!(
                "{source} offers resources without a reader"
            )));
        }
        let mut resources: Vec<ResourceEntry> = Vec::with_capacity(self.resources.len());
        let mut templates: Vec<TemplateEntry> = Vec::with_capacity(self.templates.len());
        if let Some(reader) = self.reader {
            for spec in self.resources {
                check_uri(&spec.uri).map_err(|e| refused(source, e))?;
                if resources.iter().any(|r| r.spec.uri == spec.uri) {
                    return Err(twice("resource", &spec.uri, source));
                }
                resources.push(ResourceEntry {
                    spec,
                    reader: Arc::clone(&reader),
                    provenance: provenance.clone(),
                });
            }
            for spec in self.templates {
                let template = UriTemplate::parse(&spec.uri_template).map_err(|e| refused(source, e))?;
                if templates.iter().any(|t| t.spec.uri_template == spec.uri_template) {
                    return Err(twice("resource template", &spec.uri_template, source));
                }
                templates.push(TemplateEntry {
                    spec,
                    template,
                    reader: Arc::clone(&reader),
                    provenance: provenance.clone(),
                });
            }
        }
        Ok(Checked {
            prompts,
            resources,
            templates,
        })
    }
}

fn refused(source: &ToolSource, e: Error) -> Error {
    Error::new(e.code(), format!("{source} cannot register it: {}", e.message()))
}

fn twice(what: &str, key: &str, source: &ToolSource) -> Error {
    Error::new(
        ErrorCode::DuplicateTool,
        format!("{source} offers the {what} `{key}` twice"),
    )
}

/// The error for a `what` (`prompt`, `resource`, `resource template`) `key`
/// that `existing` registered already, which `newcomer` offers too.
pub(super) fn taken(what: &str, key: &str, existing: &Provenance, newcomer: &ToolSource) -> Error {
    Error::new(
        ErrorCode::DuplicateTool,
        format!(
            "{what} `{key}` is already registered by {} (toolset `{}`); {newcomer} cannot register it too",
            existing.source, existing.toolset
        ),
    )
}
