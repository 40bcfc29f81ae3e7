//! Nested calls: a tool calling a tool (a plugin through
//! `toolhost:plugin/tools`) goes back through the same pipeline, in the same
//! session, so the audience, approval and validation gates all apply again.

use std::sync::Arc;

use serde_json::Value;

use super::{DispatchContext, Dispatcher, Session};
use crate::error::{Error, Result};
use crate::registry::{
    BoxFuture, CallContext, NestedResult, ToolCaller, ToolCallerHandle, ToolOutput, ToolSpec,
};

/// The [`ToolCaller`] a dispatched call hands to its tool.
struct NestedCaller {
    dispatcher: Dispatcher,
    session: Arc<Session>,
}

impl ToolCaller for NestedCaller {
    fn call_tool(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        let whole = self.call_tool_whole(name, arguments, ctx);
        Box::pin(async move {
            let result = whole.await;
            match result.error {
                Some(error) => Err(error),
                None => Ok(ToolOutput {
                    text: result.text,
                    ..ToolOutput::json_text(result.content)
                }),
            }
        })
    }

    fn visible_tools(&self) -> Vec<ToolSpec> {
        let registry = self.dispatcher.registry();
        self.dispatcher
            .searchable(&registry, &self.session)
            .iter()
            .map(|e| e.spec().clone())
            .collect()
    }

    fn call_tool_whole(&self, name: &str, arguments: Value, ctx: CallContext) -> BoxFuture<'_, NestedResult> {
        let name = name.to_string();
        Box::pin(async move {
            let dispatch_ctx = DispatchContext {
                session: Arc::clone(&self.session),
                parent_call_id: ctx.parent_call_id,
                deadline: ctx.deadline,
                cancel: ctx.cancel,
                limits: ctx.limits,
                depth: ctx.depth,
                waiting: ctx.waiting,
                progress: ctx.progress,
                log: ctx.log,
                client: ctx.client,
                trace: ctx.trace,
            };
            let result = self.dispatcher.dispatch(&name, arguments, &dispatch_ctx).await;
            let error = match (result.error, result.error_code) {
                (Some(error), _) => Some(error),
                (None, Some(code)) => Some(Error::new(code, result.content.clone())),
                (None, None) => None,
            };
            NestedResult {
                content: result.content,
                text: result.text,
                error,
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
