//! Batches: the independent calls of one model turn, run concurrently.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::{DispatchContext, Dispatcher, ToolResult};
use crate::error::ErrorCode;

/// How many calls of a batch run at once unless configured otherwise.
pub const DEFAULT_BATCH_CONCURRENCY: usize = 8;

/// One call of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
        }
    }
}

impl Dispatcher {
    /// Runs `calls` and returns their results in call order. Calls run
    /// concurrently, at most the configured concurrency at once (default
    /// [`DEFAULT_BATCH_CONCURRENCY`]); a call of a tool marked sequential
    /// ([`Tool::sequential`](crate::registry::Tool::sequential)) waits for
    /// the calls before it, runs alone, and the calls after it wait for it.
    pub async fn dispatch_batch(&self, calls: Vec<ToolCall>, ctx: &DispatchContext) -> Vec<ToolResult> {
        let limit = Arc::new(Semaphore::new(self.inner.batch_concurrency));
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let mut running: Vec<(usize, JoinHandle<ToolResult>)> = Vec::new();
        for (index, call) in calls.into_iter().enumerate() {
            let sequential = self.registry().get(&call.name).is_some_and(|e| e.sequential());
            if sequential {
                drain(&mut running, &mut results).await;
                results[index] = Some(self.dispatch(&call.name, call.arguments, ctx).await);
                continue;
            }
            let Ok(permit) = Arc::clone(&limit).acquire_owned().await else {
                unreachable_closed(&mut results, index);
                continue;
            };
            let this = self.clone();
            let ctx = ctx.clone();
            running.push((
                index,
                tokio::spawn(async move {
                    let result = this.dispatch(&call.name, call.arguments, &ctx).await;
                    drop(permit);
                    result
                }),
            ));
        }
        drain(&mut running, &mut results).await;
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| internal("the call's result went missing")))
            .collect()
    }
}

async fn drain(running: &mut Vec<(usize, JoinHandle<ToolResult>)>, results: &mut [Option<ToolResult>]) {
    for (index, task) in running.drain(..) {
        results[index] = Some(match task.await {
            Ok(result) => result,
            Err(e) => internal(&format!("the call's task failed: {e}")),
        });
    }
}

fn unreachable_closed(results: &mut [Option<ToolResult>], index: usize) {
    results[index] = Some(internal("the batch's concurrency limit was closed"));
}

fn internal(message: &str) -> ToolResult {
    let error = crate::Error::new(ErrorCode::Internal, message);
    ToolResult {
        call_id: 0,
        content: error.to_json().to_string(),
        text: None,
        error_code: Some(ErrorCode::Internal),
        error: Some(error),
        blocks: Vec::new(),
        structured: None,
    }
}
