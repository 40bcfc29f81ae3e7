//! A component's prompts and resources (from `toolhost:plugin@0.3.0`):
//! listed once at load with its tools and checked ([`check_catalog`]), then
//! served through the registry as [`ComponentPrompt`]s and one
//! [`ComponentResources`] reader. Every `get-prompt`, `read-resource` and
//! `complete` runs as a tool call does: in a fresh instance, under the
//! component's limits, with its granted capabilities, every failure
//! classified.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use super::LoadedComponent;
use super::load::MAX_TITLE_BYTES;
use crate::bindings::latest;
use toolhost_core::content::ResourceContents;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::limits::MetadataLimits;
use toolhost_core::registry::names::is_valid_tool_name;
use toolhost_core::registry::{
    BoxFuture, CallContext, Completion, Prompt, PromptArgument, PromptMessage, PromptResult, PromptSpec,
    ResourceSpec, ResourceTemplateSpec, Resources, UriTemplate, check_uri,
};

/// What a component offers besides its tools, checked: prompts (valid,
/// unique names), resources (valid, unique URIs) and resource templates
/// (templates this host can match, unique).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ComponentCatalog {
    /// Its prompts.
    pub prompts: Vec<PromptSpec>,
    /// Its resources.
    pub resources: Vec<ResourceSpec>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplateSpec>,
}

impl ComponentCatalog {
    /// Whether it offers nothing.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty() && self.resources.is_empty() && self.templates.is_empty()
    }
}

/// Checks what a component listed besides its tools, under the same
/// metadata limits as its tools: at most `max_tools` entries, descriptions
/// of at most `description_bytes`, `metadata_bytes` in all.
///
/// # Errors
///
/// `invalid_component`, naming the entry and the rule it breaks.
pub(super) fn check_catalog(
    listing: latest::CatalogListing,
    claims: &MetadataLimits,
) -> Result<ComponentCatalog> {
    let invalid = |msg: String| Error::new(ErrorCode::InvalidComponent, msg);
    let latest::CatalogListing {
        prompts,
        resources,
        templates,
    } = listing;
    let count = prompts.len() + resources.len() + templates.len();
    if count > claims.max_tools as usize {
        return Err(invalid(format!(
            "the component lists {count} prompts, resources and templates, more than the limit of {} (max_tools)",
            claims.max_tools
        )));
    }
    let mut total = 0u64;
    let mut claim = |what: &str, name: &str, texts: &[Option<&str>]| -> Result<()> {
        for text in texts.iter().flatten() {
            if text.len() as u64 > claims.description_bytes {
                return Err(invalid(format!(
                    "the {what} `{name}` has a text of {} bytes, more than the limit of {} (description_bytes)",
                    text.len(),
                    claims.description_bytes
                )));
            }
            total += text.len() as u64;
        }
        if total > claims.metadata_bytes {
            return Err(invalid(format!(
                "the component's prompts, resources and templates take more than {} bytes (metadata_bytes)",
                claims.metadata_bytes
            )));
        }
        Ok(())
    };
    let title_ok = |what: &str, name: &str, title: &Option<String>| -> Result<()> {
        match title {
            Some(t) if t.trim().is_empty() || t.len() > MAX_TITLE_BYTES || t.contains(['\n', '\r']) => {
                Err(invalid(format!(
                    "the title of {what} `{name}` must be one non-empty line of at most {MAX_TITLE_BYTES} bytes"
                )))
            }
            _ => Ok(()),
        }
    };
    let mut catalog = ComponentCatalog::default();
    let mut seen = HashSet::new();
    for p in prompts {
        let shown: String = p.name.chars().take(80).collect();
        if !is_valid_tool_name(&p.name) {
            return Err(invalid(format!(
                "the component offers a prompt named {shown:?}, which is not a valid name: names are 1 to 64 characters from A-Z a-z 0-9 _ -"
            )));
        }
        if !seen.insert(p.name.clone()) {
            return Err(invalid(format!(
                "the component offers the prompt `{shown}` twice"
            )));
        }
        title_ok("prompt", &p.name, &p.title)?;
        let mut texts = vec![
            Some(p.name.as_str()),
            p.title.as_deref(),
            p.description.as_deref(),
        ];
        let mut arguments = Vec::with_capacity(p.arguments.len());
        let mut names = HashSet::new();
        for a in p.arguments {
            if a.name.is_empty() || a.name.len() > 64 || !names.insert(a.name.clone()) {
                return Err(invalid(format!(
                    "prompt `{shown}` has an argument {:?} that is empty, longer than 64 bytes, or given twice",
                    a.name.chars().take(80).collect::<String>()
                )));
            }
            title_ok("prompt argument", &a.name, &a.title)?;
            arguments.push(PromptArgument {
                name: a.name,
                title: a.title,
                description: a.description,
                required: a.required,
            });
        }
        texts.extend(arguments.iter().map(|a| a.description.as_deref()));
        claim("prompt", &p.name, &texts)?;
        catalog.prompts.push(PromptSpec {
            name: p.name,
            title: p.title,
            description: p.description,
            arguments,
        });
    }
    let mut uris = HashSet::new();
    for r in resources {
        check_uri(&r.uri)
            .map_err(|e| invalid(format!("the component offers a resource whose {}", e.message())))?;
        if !uris.insert(r.uri.clone()) {
            return Err(invalid(format!(
                "the component offers the resource {} twice",
                r.uri
            )));
        }
        title_ok("resource", &r.uri, &r.title)?;
        claim(
            "resource",
            &r.uri,
            &[
                Some(&r.uri),
                Some(&r.name),
                r.title.as_deref(),
                r.description.as_deref(),
            ],
        )?;
        catalog.resources.push(ResourceSpec {
            uri: r.uri,
            name: r.name,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            size: r.size,
            annotations: r.annotations.map(Into::into),
        });
    }
    let mut patterns = HashSet::new();
    for t in templates {
        UriTemplate::parse(&t.uri_template).map_err(|e| {
            invalid(format!(
                "the component offers a resource template that is refused: {}",
                e.message()
            ))
        })?;
        if !patterns.insert(t.uri_template.clone()) {
            return Err(invalid(format!(
                "the component offers the resource template {} twice",
                t.uri_template
            )));
        }
        title_ok("resource template", &t.uri_template, &t.title)?;
        claim(
            "resource template",
            &t.uri_template,
            &[
                Some(&t.uri_template),
                Some(&t.name),
                t.title.as_deref(),
                t.description.as_deref(),
            ],
        )?;
        catalog.templates.push(ResourceTemplateSpec {
            uri_template: t.uri_template,
            name: t.name,
            title: t.title,
            description: t.description,
            mime_type: t.mime_type,
            annotations: t.annotations.map(Into::into),
        });
    }
    Ok(catalog)
}

/// The host's error for a prompt's or completion's own failure.
fn tool_error(e: latest::ToolError) -> Error {
    match e {
        latest::ToolError::InvalidArguments(m) => Error::new(ErrorCode::InvalidArguments, m),
        latest::ToolError::Failed(m) => Error::new(ErrorCode::ToolFailed, m),
    }
}

/// The refusal of an answer over the call's output limit.
fn too_large(size: usize, limit: u64) -> Error {
    Error::new(
        ErrorCode::OutputTooLarge,
        format!(
            "the component answered {size} bytes, more than the {limit} byte output limit (output_bytes)"
        ),
    )
}

impl LoadedComponent {
    /// Runs `f` on a fresh instance, as a call of `label` under `ctx`
    /// (its limit overrides, deadline, cancellation and log), and takes
    /// its result.
    async fn run_export<R>(
        &self,
        label: &str,
        ctx: CallContext,
        f: impl AsyncFnOnce(
            &mut wasmtime::Store<crate::sandbox::SandboxState>,
            &crate::bindings::Plugin,
        ) -> wasmtime::Result<R>,
    ) -> (Result<R>, u64) {
        let limits = self.effective_limits(&ctx.limits);
        let ran = self
            .run(limits, Some(Arc::from(label)), ctx, async |store, pre| {
                let plugin = pre.instantiate_async(store).await?;
                f(store, &plugin).await
            })
            .await;
        (ran.result, limits.output_bytes)
    }

    /// Renders prompt `name` (one of [`LoadedComponent::catalog`]'s) with
    /// `arguments`, already checked against its spec, in a fresh instance.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` or `tool_failed` as the component says;
    /// `output_too_large` past the output limit; a sandbox limit's code.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> Result<PromptResult> {
        let pairs: Vec<(String, String)> = arguments.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let (result, limit) = self
            .run_export(name, ctx, async |store, plugin| {
                plugin.get_prompt(store, name, &pairs).await
            })
            .await;
        let rendered = result?.map_err(tool_error)?;
        let size: usize = rendered
            .messages
            .iter()
            .map(|m| latest::block_size(&m.content))
            .sum::<usize>()
            + rendered.description.as_ref().map_or(0, String::len);
        if size as u64 > limit {
            return Err(too_large(size, limit));
        }
        Ok(PromptResult {
            description: rendered.description,
            messages: rendered
                .messages
                .into_iter()
                .map(|m| PromptMessage::new(m.role.into(), m.content.into()))
                .collect(),
        })
    }

    /// Reads `uri` (one of [`LoadedComponent::catalog`]'s resources, or a
    /// URI one of its templates matches) in a fresh instance.
    ///
    /// # Errors
    ///
    /// `not_found` or `tool_failed` as the component says;
    /// `output_too_large` past the output limit; a sandbox limit's code.
    pub async fn read_resource(&self, uri: &str, ctx: CallContext) -> Result<Vec<ResourceContents>> {
        let (result, limit) = self
            .run_export(uri, ctx, async |store, plugin| {
                plugin.read_resource(store, uri).await
            })
            .await;
        let contents = result?.map_err(|e| match e {
            latest::ReadError::NotFound(m) => Error::new(ErrorCode::NotFound, m),
            latest::ReadError::Failed(m) => Error::new(ErrorCode::ToolFailed, m),
        })?;
        let size: usize = contents
            .iter()
            .map(|c| match c {
                latest::ResourceContents::Text(t) => t.uri.len() + t.text.len(),
                latest::ResourceContents::Blob(b) => b.uri.len() + b.blob.len(),
            })
            .sum();
        if size as u64 > limit {
            return Err(too_large(size, limit));
        }
        Ok(contents.into_iter().map(Into::into).collect())
    }

    /// Suggests values for argument `argument` of prompt `prompt`, whose
    /// text so far is `value`, given the arguments already chosen in
    /// `context`, in a fresh instance.
    ///
    /// # Errors
    ///
    /// `invalid_arguments` or `tool_failed` as the component says; a
    /// sandbox limit's code.
    pub async fn complete_prompt(
        &self,
        prompt: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> Result<Completion> {
        self.complete(prompt, false, argument, value, context, ctx).await
    }

    /// Suggests values for variable `variable` of resource template
    /// `template`, as [`LoadedComponent::complete_prompt`] does for a
    /// prompt's argument.
    ///
    /// # Errors
    ///
    /// As [`LoadedComponent::complete_prompt`].
    pub async fn complete_resource(
        &self,
        template: &str,
        variable: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> Result<Completion> {
        self.complete(template, true, variable, value, context, ctx).await
    }

    /// Suggests values for `argument` of prompt `target` (`template`
    /// false) or of resource template `target` (`template` true).
    async fn complete(
        &self,
        target: &str,
        template: bool,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> Result<Completion> {
        let pairs: Vec<(String, String)> = context.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let (result, _) = self
            .run_export(target, ctx, async |store, plugin| {
                if template {
                    plugin
                        .complete_resource(store, target, argument, value, &pairs)
                        .await
                } else {
                    plugin
                        .complete_prompt(store, target, argument, value, &pairs)
                        .await
                }
            })
            .await;
        let c = result?.map_err(tool_error)?;
        Ok(Completion {
            values: c.values,
            total: c.total,
            has_more: c.has_more,
        }
        .bounded())
    }
}

/// One prompt of a [`LoadedComponent`], as a registry [`Prompt`]. Each
/// rendering runs in a fresh instance.
#[derive(Debug, Clone)]
pub struct ComponentPrompt {
    component: Arc<LoadedComponent>,
    index: usize,
}

impl Prompt for ComponentPrompt {
    fn spec(&self) -> &PromptSpec {
        &self.component.catalog.prompts[self.index]
    }

    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptResult>> {
        Box::pin(async move {
            self.component
                .get_prompt(&self.spec().name, &arguments, ctx)
                .await
        })
    }

    fn complete(
        &self,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<Completion>> {
        let (argument, value, context) = (argument.to_string(), value.to_string(), context.clone());
        Box::pin(async move {
            self.component
                .complete_prompt(&self.spec().name, &argument, &value, &context, ctx)
                .await
        })
    }
}

/// The reader of a [`LoadedComponent`]'s resources and templates, as a
/// registry [`Resources`]. Each read runs in a fresh instance.
#[derive(Debug, Clone)]
pub struct ComponentResources {
    component: Arc<LoadedComponent>,
}

impl Resources for ComponentResources {
    fn read(&self, uri: &str, ctx: CallContext) -> BoxFuture<'_, Result<Vec<ResourceContents>>> {
        let uri = uri.to_string();
        Box::pin(async move { self.component.read_resource(&uri, ctx).await })
    }

    fn complete(
        &self,
        template: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<Completion>> {
        let (template, argument, value, context) = (
            template.to_string(),
            argument.to_string(),
            value.to_string(),
            context.clone(),
        );
        Box::pin(async move {
            self.component
                .complete_resource(&template, &argument, &value, &context, ctx)
                .await
        })
    }
}

impl LoadedComponent {
    /// Its prompts and resources as a registry [`Catalog`](toolhost_core::registry::Catalog)
    /// in `toolset`: `None` when it offers none.
    pub(super) fn registry_catalog(
        self: &Arc<Self>,
        toolset: String,
    ) -> Option<toolhost_core::registry::Catalog> {
        if self.catalog.is_empty() {
            return None;
        }
        let mut catalog = toolhost_core::registry::Catalog::new().toolset(toolset);
        for index in 0..self.catalog.prompts.len() {
            catalog = catalog.prompt(ComponentPrompt {
                component: Arc::clone(self),
                index,
            });
        }
        if !self.catalog.resources.is_empty() || !self.catalog.templates.is_empty() {
            catalog = catalog.resources(
                Arc::new(ComponentResources {
                    component: Arc::clone(self),
                }),
                self.catalog.resources.clone(),
                self.catalog.templates.clone(),
            );
        }
        Some(catalog)
    }
}
