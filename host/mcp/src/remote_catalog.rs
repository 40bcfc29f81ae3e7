//! # A bridged server's prompts and resources
//!
//! Beside its tools, a bridged MCP server's prompts, resources and resource
//! templates join the registry (see [`client`](super::client) and
//! [`bridge`](super::bridge)): prompts under the same naming rule as its
//! tools (`mcp__SERVER__PROMPT`, or the entry's `prefix`), resources and
//! templates under their own URIs (a URI names the resource inside the
//! content that refers to it, so it cannot be renamed; one another source
//! registered first is refused, as a name would be). Getting a prompt,
//! reading a resource and completing an argument go to whichever connection
//! to the server is current, within its `timeout_ms` and the request's
//! deadline, cancelled on the server when the request is.
//!
//! A listing is bounded like the tools' (at most [`MAX_LISTED_TOOLS`] items
//! and [`MAX_LISTED_BYTES`] of definitions per kind), and what the server
//! answers is read into the core's types, MCP's JSON: content passes
//! through intact.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    ArgumentInfo, ClientRequest, CompleteRequestParams, CompletionContext, GetPromptRequest,
    GetPromptRequestParams, PaginatedRequestParams, ReadResourceRequest, ReadResourceRequestParams,
    Reference, ServerResult,
};
use rmcp::{Peer, RoleClient, ServiceError};
use serde::Serialize;

use super::client::{MAX_LISTED_BYTES, MAX_LISTED_TOOLS};
use super::config::McpServerConfig;
use super::naming::{NameTable, bridged_name};
use super::relay::Remote;
use super::tool::PeerSlot;
use toolhost_core::content::ResourceContents;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::{
    BoxFuture, CallContext, Completion, Prompt, PromptResult, PromptSpec, ResourceSpec, ResourceTemplateSpec,
    Resources,
};

/// What a bridged server offers besides its tools.
#[derive(Debug, Clone, Default)]
pub struct RemoteCatalog {
    /// Its prompts, under their bridged names.
    pub prompts: Vec<Arc<McpPrompt>>,
    /// Its resources.
    pub resources: Vec<ResourceSpec>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplateSpec>,
    /// What reads its resources (set when it has any).
    pub reader: Option<Arc<McpResources>>,
}

impl RemoteCatalog {
    /// Whether the server offers nothing besides its tools.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty() && self.resources.is_empty() && self.templates.is_empty()
    }

    /// Whether `other` offers the same prompts, resources and templates
    /// (by their specs), so that registering it again would change nothing.
    pub fn same_offer(&self, other: &RemoteCatalog) -> bool {
        self.resources == other.resources
            && self.templates == other.templates
            && self.reader.is_some() == other.reader.is_some()
            && self.prompts.len() == other.prompts.len()
            && self
                .prompts
                .iter()
                .zip(&other.prompts)
                .all(|(a, b)| a.spec() == b.spec() && a.remote_name() == b.remote_name())
    }
}

/// One prompt of a bridged server, as a registry [`Prompt`].
#[derive(Debug)]
pub struct McpPrompt {
    spec: PromptSpec,
    remote_name: String,
    remote: Remote,
}

impl McpPrompt {
    /// Its name on the server.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }
}

impl Prompt for McpPrompt {
    fn spec(&self) -> &PromptSpec {
        &self.spec
    }

    fn get(
        &self,
        arguments: BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<PromptResult>> {
        Box::pin(async move {
            let arguments: serde_json::Map<String, serde_json::Value> = arguments
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            let what = format!("prompts/get {:?}", self.remote_name);
            let answer = self
                .remote
                .send(&what, &ctx, |retry| {
                    let mut params = GetPromptRequestParams::new(self.remote_name.clone())
                        .with_arguments(arguments.clone());
                    if let Some(retry) = retry {
                        params.input_responses = Some(retry.responses);
                        params.request_state = retry.state;
                    }
                    ClientRequest::GetPromptRequest(GetPromptRequest::new(params))
                })
                .await?;
            match answer {
                ServerResult::GetPromptResult(result) => self.remote.read("prompts/get", &result),
                _ => Err(unexpected(&self.remote.server, &what)),
            }
        })
    }

    fn complete(
        &self,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<Completion>> {
        let params = completion_params(
            Reference::for_prompt(self.remote_name.clone()),
            argument,
            value,
            context,
        );
        Box::pin(async move { complete(&self.remote, params, ctx).await })
    }
}

/// The reader of a bridged server's resources, as a registry [`Resources`].
#[derive(Debug)]
pub struct McpResources {
    remote: Remote,
}

impl Resources for McpResources {
    fn read(&self, uri: &str, ctx: CallContext) -> BoxFuture<'_, Result<Vec<ResourceContents>>> {
        let uri = uri.to_string();
        Box::pin(async move {
            let what = format!("resources/read {uri:?}");
            let answer = self
                .remote
                .send(&what, &ctx, |retry| {
                    let mut params = ReadResourceRequestParams::new(uri.clone());
                    if let Some(retry) = retry {
                        params.input_responses = Some(retry.responses);
                        params.request_state = retry.state;
                    }
                    ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params))
                })
                .await?;
            match answer {
                ServerResult::ReadResourceResult(result) => {
                    self.remote.read("resources/read", &result.contents)
                }
                _ => Err(unexpected(&self.remote.server, &what)),
            }
        })
    }

    fn complete(
        &self,
        template: &str,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
        ctx: CallContext,
    ) -> BoxFuture<'_, Result<Completion>> {
        let params = completion_params(Reference::for_resource(template), argument, value, context);
        Box::pin(async move { complete(&self.remote, params, ctx).await })
    }
}

fn unexpected(server: &str, what: &str) -> Error {
    Error::new(
        ErrorCode::ToolFailed,
        format!("MCP server {server:?} answered {what} with a result of another kind"),
    )
}

fn completion_params(
    reference: Reference,
    argument: &str,
    value: &str,
    context: &BTreeMap<String, String>,
) -> CompleteRequestParams {
    let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
    if !context.is_empty() {
        params.context = Some(CompletionContext::with_arguments(
            context.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        ));
    }
    params
}

async fn complete(remote: &Remote, params: CompleteRequestParams, ctx: CallContext) -> Result<Completion> {
    let answer = remote
        .run("completion/complete", &ctx, |peer| async move {
            peer.complete(params).await
        })
        .await?;
    let completion: Completion = remote.read("completion/complete", &answer.completion)?;
    Ok(completion.bounded())
}

/// Lists what `peer`'s server offers besides tools, by what it declared at
/// `initialize`: its prompts (under bridged names), resources and
/// templates, every page, each kind bounded like the tools.
///
/// # Errors
///
/// `timeout` past the server's timeout; `unavailable` when a listing fails
/// or passes its bounds, or two prompts' names collide after sanitizing.
pub(crate) async fn list(
    config: &McpServerConfig,
    peer: &Peer<RoleClient>,
    slot: &PeerSlot,
) -> Result<RemoteCatalog> {
    let remote = Remote::new(config, slot.clone());
    let capabilities = peer
        .peer_info()
        .map(|info| info.capabilities.clone())
        .unwrap_or_default();
    let failed = |what: &str, e: String| {
        Error::new(
            ErrorCode::Unavailable,
            format!("MCP server {:?}: {what} failed: {e}", config.name),
        )
    };
    let listing = async {
        let mut catalog = RemoteCatalog::default();
        if capabilities.prompts.is_some() {
            let prompts = paginate("prompts", |cursor| async move {
                let page = peer
                    .list_prompts(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                    .await?;
                Ok((page.prompts, page.next_cursor))
            })
            .await
            .map_err(|e| failed("prompts/list", e))?;
            let mut names = NameTable::new(&config.name);
            for prompt in prompts {
                let name = bridged_name(&config.name, config.prefix.as_deref(), &prompt.name);
                names.insert(&name, &prompt.name)?;
                let mut spec: PromptSpec = remote.read("prompts/list", &prompt)?;
                spec.name = name;
                catalog.prompts.push(Arc::new(McpPrompt {
                    spec,
                    remote_name: prompt.name,
                    remote: remote.clone(),
                }));
            }
        }
        if capabilities.resources.is_some() {
            let resources = paginate("resources", |cursor| async move {
                let page = peer
                    .list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                    .await?;
                Ok((page.resources, page.next_cursor))
            })
            .await
            .map_err(|e| failed("resources/list", e))?;
            catalog.resources = remote.read("resources/list", &resources)?;
            let templates = paginate("resource templates", |cursor| async move {
                let page = peer
                    .list_resource_templates(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                    .await?;
                Ok((page.resource_templates, page.next_cursor))
            })
            .await
            .map_err(|e| failed("resources/templates/list", e))?;
            catalog.templates = remote.read("resources/templates/list", &templates)?;
            catalog.reader = Some(Arc::new(McpResources {
                remote: remote.clone(),
            }));
        }
        Ok(catalog)
    };
    tokio::time::timeout(config.timeout(), listing)
        .await
        .map_err(|_| {
            Error::new(
                ErrorCode::Timeout,
                format!(
                    "MCP server {:?}: listing its prompts and resources timed out",
                    config.name
                ),
            )
        })?
}

/// Every page of a listing of `what`, fetched from a cursor: at most
/// [`MAX_LISTED_TOOLS`] items (and pages) and [`MAX_LISTED_BYTES`] of
/// definitions, past which the listing fails.
pub(crate) async fn paginate<T, F, Fut>(what: &str, mut fetch: F) -> std::result::Result<Vec<T>, String>
where
    T: Serialize,
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = std::result::Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let (mut items, mut pages, mut bytes) = (Vec::new(), 0usize, 0usize);
    let mut cursor = None;
    loop {
        let (page, next) = fetch(cursor.take()).await.map_err(|e| e.to_string())?;
        pages += 1;
        for item in page {
            bytes += super::client::json_len(&item);
            items.push(item);
        }
        bytes += next.as_ref().map_or(0, String::len);
        if items.len().max(pages) > MAX_LISTED_TOOLS || bytes > MAX_LISTED_BYTES {
            return Err(format!(
                "the server listed more than {MAX_LISTED_TOOLS} {what} or {} MiB of definitions ({} {what} in {pages} pages, {bytes} bytes so far); refused",
                MAX_LISTED_BYTES >> 20,
                items.len()
            ));
        }
        match next {
            Some(next) => cursor = Some(next),
            None => return Ok(items),
        }
    }
}
