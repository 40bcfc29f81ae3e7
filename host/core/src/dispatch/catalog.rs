//! Serving prompts, resources and completions to a session.
//!
//! A session sees a prompt, resource or template when its audience may use
//! it and its toolset is selected (see
//! [`Toolsets::select_toolsets`](crate::toolsets::Toolsets::select_toolsets)),
//! as for tools. What a session does not see does not exist for it: getting,
//! reading or completing it is `not_found`, the same answer as for a name
//! no source offers. A prompt's or resource's source runs with the call's
//! deadline, cancellation and log sink, and with no tool caller (a prompt
//! does not call tools). A prompt or resource of a trusted session may ask
//! the session's client (elicitation, sampling, roots) as a tool may; a
//! completion never does (it answers as the user types).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{DispatchContext, Dispatcher, Session};
use crate::content::ResourceContents;
use crate::error::{Error, ErrorCode, Result};
use crate::registry::{
    CallContext, Completion, PromptResult, PromptSpec, Provenance, Registry, ResourceSpec,
    ResourceTemplateSpec,
};
use crate::toolsets::ToolsetSelection;

/// What a completion is for (MCP's `ref`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionRef {
    /// An argument of the prompt of this name.
    Prompt(String),
    /// A variable of the resource template of this URI template.
    ResourceTemplate(String),
}

impl Dispatcher {
    /// The prompts `session` sees, in name order.
    ///
    /// # Errors
    ///
    /// `config` when the toolset selection no longer resolves.
    pub fn prompt_specs(&self, session: &Session) -> Result<Vec<PromptSpec>> {
        self.visible(session, |registry, seen| {
            registry
                .prompts()
                .filter(|e| seen.sees(e.provenance()))
                .map(|e| e.spec().clone())
                .collect()
        })
    }

    /// The resources `session` sees, in URI order.
    ///
    /// # Errors
    ///
    /// As [`Dispatcher::prompt_specs`].
    pub fn resource_specs(&self, session: &Session) -> Result<Vec<ResourceSpec>> {
        self.visible(session, |registry, seen| {
            registry
                .resources()
                .filter(|e| seen.sees(e.provenance()))
                .map(|e| e.spec().clone())
                .collect()
        })
    }

    /// The resource templates `session` sees, in template order.
    ///
    /// # Errors
    ///
    /// As [`Dispatcher::prompt_specs`].
    pub fn resource_template_specs(&self, session: &Session) -> Result<Vec<ResourceTemplateSpec>> {
        self.visible(session, |registry, seen| {
            registry
                .resource_templates()
                .filter(|e| seen.sees(e.provenance()))
                .map(|e| e.spec().clone())
                .collect()
        })
    }

    /// Renders prompt `name` with `arguments` for the context's session.
    ///
    /// # Errors
    ///
    /// `not_found` for a prompt the session does not see;
    /// `invalid_arguments` for a missing required or an unknown argument;
    /// the prompt's own error otherwise (`timeout` past the deadline,
    /// `cancelled` when the context is).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        ctx: &DispatchContext,
    ) -> Result<PromptResult> {
        let (registry, seen) = self.catalog_view(&ctx.session)?;
        let entry = registry
            .prompt(name)
            .filter(|e| seen.sees(e.provenance()))
            .ok_or_else(|| not_found("prompt", name))?;
        entry.spec().check_arguments(&arguments)?;
        let prompt = Arc::clone(entry.prompt());
        let call = self.catalog_call(ctx, true);
        bounded(ctx, prompt.get(arguments, call)).await
    }

    /// Reads resource `uri` for the context's session: a resource
    /// registered at `uri`, else the first template that matches it.
    ///
    /// # Errors
    ///
    /// `not_found` for a URI no resource or template the session sees
    /// offers; the source's own error otherwise.
    pub async fn read_resource(&self, uri: &str, ctx: &DispatchContext) -> Result<Vec<ResourceContents>> {
        let (registry, seen) = self.catalog_view(&ctx.session)?;
        let reader = match registry.resource_for(uri) {
            Some((reader, provenance)) if seen.sees(provenance) => Arc::clone(reader),
            _ => return Err(not_found("resource", uri)),
        };
        let call = self.catalog_call(ctx, true);
        bounded(ctx, reader.read(uri, call)).await
    }

    /// Suggests values for `argument` of `reference` whose text so far is
    /// `value`, given the `context` of arguments already chosen. At most
    /// [`Completion::MAX_VALUES`] values, whatever the source answers.
    ///
    /// # Errors
    ///
    /// `not_found` for a prompt or template the session does not see;
    /// `invalid_arguments` for an argument it does not have; the source's
    /// own error otherwise.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: &DispatchContext,
    ) -> Result<Completion> {
        let (registry, seen) = self.catalog_view(&ctx.session)?;
        let call = self.catalog_call(ctx, false);
        let completion = match reference {
            CompletionRef::Prompt(name) => {
                let entry = registry
                    .prompt(name)
                    .filter(|e| seen.sees(e.provenance()))
                    .ok_or_else(|| not_found("prompt", name))?;
                if !entry.spec().arguments.iter().any(|a| a.name == argument) {
                    return Err(no_such_argument("prompt", name, argument));
                }
                let prompt = Arc::clone(entry.prompt());
                bounded(ctx, prompt.complete(argument, value, context, call)).await?
            }
            CompletionRef::ResourceTemplate(template) => {
                let entry = registry
                    .resource_templates()
                    .find(|e| e.spec().uri_template == *template)
                    .filter(|e| seen.sees(e.provenance()))
                    .ok_or_else(|| not_found("resource template", template))?;
                if !entry.template().variables().any(|v| v == argument) {
                    return Err(no_such_argument("resource template", template, argument));
                }
                let reader = Arc::clone(entry.reader());
                bounded(ctx, reader.complete(template, argument, value, context, call)).await?
            }
        };
        Ok(completion.bounded())
    }

    /// What `list` picks from the registry, given what `session` sees.
    fn visible<T>(&self, session: &Session, list: impl FnOnce(&Registry, &Seen) -> Vec<T>) -> Result<Vec<T>> {
        let (registry, seen) = self.catalog_view(session)?;
        Ok(list(&registry, &seen))
    }

    /// The registry and what `session` sees of its catalog.
    fn catalog_view(&self, session: &Session) -> Result<(Arc<Registry>, Seen)> {
        let current = self
            .inner
            .registry
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut toolsets = current.selected_toolsets.clone()?;
        if let Some(granted) = session.toolsets() {
            // The toolsets granted, and those they include, that the
            // selection shows; one that does not resolve grants nothing.
            let mut shown = BTreeSet::new();
            for name in granted {
                let one = ToolsetSelection::enabled([name.as_str()]);
                if let Ok(sets) = self.inner.toolsets.select_toolsets(&one, &current.registry) {
                    shown.extend(sets.into_iter().filter(|s| toolsets.contains(s)));
                }
            }
            toolsets = Arc::new(shown);
        }
        Ok((
            Arc::clone(&current.registry),
            Seen {
                audience: session.audience(),
                toolsets,
            },
        ))
    }

    /// The context a prompt's or resource's source runs in: with the
    /// session's client when it `may_ask` and the session is trusted
    /// (fail-closed, as for tools: a public turn never asks).
    fn catalog_call(&self, ctx: &DispatchContext, may_ask: bool) -> CallContext {
        CallContext {
            call_id: self.inner.next_call_id.fetch_add(1, Ordering::Relaxed),
            parent_call_id: ctx.parent_call_id,
            session_id: Some(Arc::from(ctx.session.id())),
            session_continues: Arc::clone(ctx.session.continues()),
            deadline: ctx.deadline,
            cancel: ctx.cancel.child_token(),
            limits: ctx.limits,
            depth: ctx.depth,
            caller: None,
            waiting: ctx.waiting.clone(),
            progress: None,
            log: ctx.log.clone(),
            client: match ctx.session.audience() {
                crate::registry::ToolAudience::Trusted if may_ask => ctx.client.clone(),
                _ => None,
            },
            trace: ctx.trace.clone(),
        }
    }
}

/// What a session sees: its audience and the selected toolsets.
struct Seen {
    audience: crate::registry::ToolAudience,
    toolsets: Arc<BTreeSet<String>>,
}

impl Seen {
    fn sees(&self, provenance: &Provenance) -> bool {
        self.audience.may_use(provenance.audience) && self.toolsets.contains(&provenance.toolset)
    }
}

/// `work` under the context's cancellation and deadline.
async fn bounded<T>(ctx: &DispatchContext, work: impl Future<Output = Result<T>>) -> Result<T> {
    let deadline = async {
        match ctx.deadline {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        out = work => out,
        () = ctx.cancel.cancelled() => Err(Error::new(ErrorCode::Cancelled, "the request was cancelled")),
        () = deadline => Err(Error::new(ErrorCode::Timeout, "the request did not finish before its deadline")),
    }
}

fn not_found(what: &str, key: &str) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!("no {what} `{}` here", key.chars().take(200).collect::<String>()),
    )
}

fn no_such_argument(what: &str, key: &str, argument: &str) -> Error {
    Error::new(
        ErrorCode::InvalidArguments,
        format!(
            "{what} `{key}` has no argument `{}`",
            argument.chars().take(80).collect::<String>()
        ),
    )
}
