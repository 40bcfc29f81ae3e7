//! # `subscriptions/listen`: MCP 2026-07-28's notification stream
//!
//! The 2026-07-28 revision has no session and no GET stream: a client that
//! wants to hear of changes opens `subscriptions/listen` with a filter (the
//! lists whose changes it wants, the resources whose updates it wants) and
//! keeps the request open. rmcp acknowledges the subscription (tagging its
//! id) and calls [`listen`]; what is sent here follows the same rules as
//! the earlier revisions' session notifications (`server::on_initialized`):
//! a registry change is `tools/list_changed`; a change in the prompts or
//! resources this caller lists, their `list_changed`; a change of the
//! source that serves a subscribed URI, `resources/updated` for it.
//!
//! The accepted filter is what was asked and can be honoured: list changes
//! for the lists the server has, and the subscribed URIs this caller can
//! see (at most `catalog::MAX_SUBSCRIPTIONS`); others are left out of the
//! acknowledgement rather than accepted and never served.

use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;
use toolhost_core::dispatch::{Dispatcher, Session};

use super::catalog::{Listed, Subscriptions};

/// The part of `requested` this server serves to `session`.
pub(crate) fn accepted_filter(
    dispatcher: &Dispatcher,
    session: &Session,
    requested: &SubscriptionFilter,
) -> SubscriptionFilter {
    let wanted = |flag: Option<bool>| flag.filter(|on| *on);
    let resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
        let seen = Subscriptions::default();
        uris.iter()
            .filter(|uri| seen.subscribe(dispatcher, session, uri).is_ok())
            .cloned()
            .collect()
    });
    let mut accepted = SubscriptionFilter::new();
    accepted.tools_list_changed = wanted(requested.tools_list_changed);
    accepted.prompts_list_changed = wanted(requested.prompts_list_changed);
    accepted.resources_list_changed = wanted(requested.resources_list_changed);
    accepted.resource_subscriptions = resource_subscriptions;
    accepted
}

/// Serves one subscription until the client cancels it or the server stops
/// (then rmcp sends the final result). A send that fails (the stream is
/// gone) ends it too.
pub(crate) async fn listen(
    dispatcher: &Dispatcher,
    session: &Session,
    context: SubscriptionContext,
) -> Result<(), ErrorData> {
    let accepted = context.accepted().clone();
    let subscribed = Subscriptions::default();
    for uri in accepted.resource_subscriptions.iter().flatten() {
        // Seen when accepted; a URI gone since is simply not followed.
        let _ = subscribed.subscribe(dispatcher, session, uri);
    }
    let mut changes = dispatcher.subscribe_changes();
    changes.mark_unchanged();
    let mut listed = Listed::now(dispatcher, session);
    let sink = context.sink();
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return Ok(()) },
            () = context.cancelled() => return Ok(()),
        }
        let now = Listed::now(dispatcher, session);
        let sent = async {
            if accepted.tools_list_changed == Some(true) {
                sink.notify_tool_list_changed().await?;
            }
            if accepted.prompts_list_changed == Some(true) && now.prompts_differ(&listed) {
                sink.notify_prompt_list_changed().await?;
            }
            if accepted.resources_list_changed == Some(true) && now.resources_differ(&listed) {
                sink.notify_resource_list_changed().await?;
            }
            for uri in subscribed.changed(&dispatcher.registry()) {
                sink.notify_resource_updated(uri).await?;
            }
            Ok::<(), rmcp::service::SubscriptionSendError>(())
        };
        if sent.await.is_err() {
            return Ok(());
        }
        listed = now;
    }
}
