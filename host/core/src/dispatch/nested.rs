//! Nested calls: a tool calling a tool (a plugin through
//! `toolhost:plugin/tools`) goes back through the same pipeline, in the same
//! session, so the audience, approval and validation gates all apply again.

use std::sync::Arc;

use serde_json::Value;

use super::{DispatchContext, Dispatcher, Session};
use crate::error::{Error, Result};
use crate::registry::{BoxFuture, CallContext, ToolCaller, ToolCallerHandle, ToolOutput};

/// The [`ToolCaller`] a dispatched call hands to its tool.
struct NestedCaller {
    dispatcher: Dispatcher,
    session: Arc<Session>,
}

impl ToolCaller for NestedCaller {
    fn call_tool(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        let name = name.to_string();
        Box::pin(async move {
            let dispatch_ctx = DispatchContext {
                session: Arc::clone(&self.session),
                parent_call_id: ctx.parent_call_id,
                deadline: ctx.deadline,
                cancel: ctx.cancel,
                limits: ctx.limits,
                depth: ctx.depth,
                progress: ctx.progress,
            };
            let result = self.dispatcher.dispatch(&name, arguments, &dispatch_ctx).await;
            match (result.error, result.error_code) {
                (Some(error), _) => Err(error),
                (None, Some(code)) => Err(Error::new(code, result.content)),
                (None, None) => Ok(ToolOutput {
                    text: result.text,
                    ..ToolOutput::json_text(result.content)
                }),
            }
        })
    }
}

impl Dispatcher {
    /// The caller that nested calls of a call in `ctx` go to.
    pub(crate) fn nested_caller(&self, ctx: &DispatchContext) -> ToolCallerHandle {
        ToolCallerHandle(Arc::new(NestedCaller {
            dispatcher: self.clone(),
            session: Arc::clone(&ctx.session),
        }))
    }
}
