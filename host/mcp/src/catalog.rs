//! # Prompts, resources and completions, served
//!
//! What [`McpServer`](super::McpServer) answers to `prompts/*`,
//! `resources/*` and `completion/complete`: the dispatcher's catalog as the
//! session sees it (its audience and toolsets; what it does not see does
//! not exist for it), in MCP's JSON, which the core's types already write
//! (`toolhost_core::content`, `toolhost_core::registry`'s specs).
//!
//! Errors are JSON-RPC errors, as the MCP specification names them: an
//! unknown resource is `-32002` (resource not found) with the URI; an
//! unknown prompt, a missing or unknown argument, `-32602` (invalid
//! params); a source's own failure `-32603` (internal error) with its
//! message. Each carries the host's `error_code` in its `data`.
//!
//! A client may subscribe to resources it sees (at most
//! [`MAX_SUBSCRIPTIONS`] per session); when the registry changes and a
//! subscribed URI's source is not the one it was (a plugin reloaded, a
//! bridged server reconnected), the client gets
//! `notifications/resources/updated` for it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResult, Reference, ResultType,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use toolhost_core::dispatch::{CompletionRef, DispatchContext, Dispatcher, Session};
use toolhost_core::error::{Error, ErrorCode};
use toolhost_core::registry::{Registry, check_uri};

/// The most resources one session may be subscribed to at once.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// `value` as rmcp's type for the same MCP JSON.
fn wire<T: Serialize, U: DeserializeOwned>(value: &T) -> Result<U, ErrorData> {
    serde_json::to_value(value)
        .and_then(serde_json::from_value)
        .map_err(|e| ErrorData::internal_error(format!("cannot write the answer as MCP JSON: {e}"), None))
}

/// `e` as the JSON-RPC error MCP names for it; `resource` when the request
/// was about a resource (whose absence has its own code).
pub(crate) fn rpc_error(e: &Error, resource: bool) -> ErrorData {
    let data = Some(json!({ "error_code": e.code().as_str() }));
    let message = format!("{e:#}");
    match e.code() {
        ErrorCode::NotFound if resource => ErrorData::resource_not_found(message, data),
        ErrorCode::NotFound | ErrorCode::InvalidArguments => ErrorData::invalid_params(message, data),
        _ => ErrorData::internal_error(message, data),
    }
}

/// `prompts/list`.
pub(crate) fn list_prompts(
    dispatcher: &Dispatcher,
    session: &Session,
) -> Result<ListPromptsResult, ErrorData> {
    let specs = dispatcher
        .prompt_specs(session)
        .map_err(|e| rpc_error(&e, false))?;
    Ok(ListPromptsResult::with_all_items(wire(&specs)?))
}

/// `prompts/get`: the arguments must be strings, as MCP has them.
pub(crate) async fn get_prompt(
    dispatcher: &Dispatcher,
    request: GetPromptRequestParams,
    ctx: &DispatchContext,
) -> Result<GetPromptResult, ErrorData> {
    let mut arguments = BTreeMap::new();
    for (name, value) in request.arguments.unwrap_or_default() {
        let Value::String(value) = value else {
            let e = Error::new(
                ErrorCode::InvalidArguments,
                format!("prompt argument `{name}` must be a string, as MCP passes them"),
            );
            return Err(rpc_error(&e, false));
        };
        arguments.insert(name, value);
    }
    let result = dispatcher
        .get_prompt(&request.name, arguments, ctx)
        .await
        .map_err(|e| rpc_error(&e, false))?;
    let mut result: GetPromptResult = wire(&result)?;
    // 2026-07-28 requires the discriminator (rmcp removes it for older
    // revisions); the registry's prompt result does not carry it.
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// `resources/list`.
pub(crate) fn list_resources(
    dispatcher: &Dispatcher,
    session: &Session,
) -> Result<ListResourcesResult, ErrorData> {
    let specs = dispatcher
        .resource_specs(session)
        .map_err(|e| rpc_error(&e, true))?;
    Ok(ListResourcesResult::with_all_items(wire(&specs)?))
}

/// `resources/templates/list`.
pub(crate) fn list_templates(
    dispatcher: &Dispatcher,
    session: &Session,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    let specs = dispatcher
        .resource_template_specs(session)
        .map_err(|e| rpc_error(&e, true))?;
    Ok(ListResourceTemplatesResult::with_all_items(wire(&specs)?))
}

/// `resources/read`.
pub(crate) async fn read_resource(
    dispatcher: &Dispatcher,
    request: &ReadResourceRequestParams,
    ctx: &DispatchContext,
) -> Result<ReadResourceResult, ErrorData> {
    let contents = dispatcher
        .read_resource(&request.uri, ctx)
        .await
        .map_err(|e| rpc_error(&e, true))?;
    Ok(ReadResourceResult::new(wire(&contents)?))
}

/// `completion/complete`.
pub(crate) async fn complete(
    dispatcher: &Dispatcher,
    request: CompleteRequestParams,
    ctx: &DispatchContext,
) -> Result<CompleteResult, ErrorData> {
    let (reference, resource) = match request.r#ref {
        Reference::Prompt(prompt) => (CompletionRef::Prompt(prompt.name), false),
        Reference::Resource(template) => (CompletionRef::ResourceTemplate(template.uri), true),
        _ => {
            let e = Error::new(
                ErrorCode::InvalidArguments,
                "a completion refers to a prompt or a resource template",
            );
            return Err(rpc_error(&e, false));
        }
    };
    let context: BTreeMap<String, String> = request
        .context
        .and_then(|c| c.arguments)
        .map(|arguments| arguments.into_iter().collect())
        .unwrap_or_default();
    let completion = dispatcher
        .complete(
            &reference,
            &request.argument.name,
            &request.argument.value,
            &context,
            ctx,
        )
        .await
        .map_err(|e| rpc_error(&e, resource))?;
    let mut info: CompletionInfo = wire(&completion)?;
    info.has_more = Some(completion.has_more);
    Ok(CompleteResult::new(info))
}

/// The resources one session is subscribed to, each with the source it had
/// when last seen (to tell when it changes).
#[derive(Debug, Default)]
pub(crate) struct Subscriptions(Mutex<BTreeMap<String, Option<SourceId>>>);

/// Which reader serves a URI: its address, compared, never dereferenced.
type SourceId = usize;

/// The reader that serves `uri` in `registry`, if any.
fn source_of(registry: &Registry, uri: &str) -> Option<SourceId> {
    registry
        .resource_for(uri)
        .map(|(reader, _)| Arc::as_ptr(reader).cast::<()>() as usize)
}

impl Subscriptions {
    /// Subscribes to `uri`, which the session must see.
    ///
    /// # Errors
    ///
    /// `-32002` for a URI the session does not see; `-32602` for one that
    /// is not a URI, or past [`MAX_SUBSCRIPTIONS`].
    pub(crate) fn subscribe(
        &self,
        dispatcher: &Dispatcher,
        session: &Session,
        uri: &str,
    ) -> Result<(), ErrorData> {
        check_uri(uri).map_err(|e| rpc_error(&e, true))?;
        let seen = dispatcher
            .resource_specs(session)
            .map_err(|e| rpc_error(&e, true))?
            .iter()
            .any(|r| r.uri == uri)
            || dispatcher
                .resource_template_specs(session)
                .map_err(|e| rpc_error(&e, true))?
                .iter()
                .filter_map(|t| toolhost_core::registry::UriTemplate::parse(&t.uri_template).ok())
                .any(|t| t.matches(uri).is_some());
        if !seen {
            let e = Error::new(ErrorCode::NotFound, format!("no resource `{uri}` here"));
            return Err(rpc_error(&e, true));
        }
        let mut subscribed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if subscribed.len() >= MAX_SUBSCRIPTIONS && !subscribed.contains_key(uri) {
            let e = Error::new(
                ErrorCode::InvalidArguments,
                format!(
                    "a session may subscribe to at most {MAX_SUBSCRIPTIONS} resources; unsubscribe from some first"
                ),
            );
            return Err(rpc_error(&e, true));
        }
        subscribed.insert(uri.to_string(), source_of(&dispatcher.registry(), uri));
        Ok(())
    }

    /// Unsubscribes from `uri` (nothing happens if it was not subscribed).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(uri);
    }

    /// The subscribed URIs whose source differs in `registry` from when
    /// they were last seen (gone, come, or another reader), now noted.
    pub(crate) fn changed(&self, registry: &Registry) -> BTreeSet<String> {
        let mut subscribed = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut changed = BTreeSet::new();
        for (uri, source) in subscribed.iter_mut() {
            let now = source_of(registry, uri);
            if now != *source {
                *source = now;
                changed.insert(uri.clone());
            }
        }
        changed
    }
}

/// What a session lists of the catalog, to tell when it changes.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Listed {
    prompts: Vec<toolhost_core::registry::PromptSpec>,
    resources: Vec<toolhost_core::registry::ResourceSpec>,
    templates: Vec<toolhost_core::registry::ResourceTemplateSpec>,
}

impl Listed {
    /// What `session` lists now (nothing when its selection does not
    /// resolve).
    pub(crate) fn now(dispatcher: &Dispatcher, session: &Session) -> Listed {
        Listed {
            prompts: dispatcher.prompt_specs(session).unwrap_or_default(),
            resources: dispatcher.resource_specs(session).unwrap_or_default(),
            templates: dispatcher.resource_template_specs(session).unwrap_or_default(),
        }
    }

    /// Whether the prompts differ from `other`'s.
    pub(crate) fn prompts_differ(&self, other: &Listed) -> bool {
        self.prompts != other.prompts
    }

    /// Whether the resources or templates differ from `other`'s.
    pub(crate) fn resources_differ(&self, other: &Listed) -> bool {
        self.resources != other.resources || self.templates != other.templates
    }
}
