//! Running a call as a task: detached from the request that started it
//! (the client may disconnect), watched for cancels and answers, its lease
//! renewed, its end written into the task.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use rmcp::model::{CreateTaskResult, ErrorCode as RpcCode, JsonObject, TaskStatus};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client::{TaskClient, Waiters};
use super::record::now_ms;
use super::{TaskError, Tasks};
use toolhost_core::client::ClientHandle;
use toolhost_core::dispatch::{DispatchContext, Dispatcher, Session, ToolResult};
use toolhost_core::error::ErrorCode;

/// What a call needs to run as a task, besides the call itself: the same
/// for a call that is a task from its start ([`TaskCall`]) and one that
/// begins its task itself ([`Tasks::run_deferred`]).
pub(crate) struct AsTask {
    /// What the client declared on the request: whether the task's
    /// questions may be put to it.
    pub elicitation: bool,
    pub sampling: bool,
    /// Held while the call runs (a graceful shutdown waits for it).
    pub guard: Box<dyn Send>,
    /// Makes the call's MCP result.
    pub to_result: fn(ToolResult) -> rmcp::model::CallToolResult,
}

/// A call to run as a task.
pub(crate) struct TaskCall {
    pub dispatcher: Dispatcher,
    pub session: Arc<Session>,
    pub name: String,
    pub arguments: Value,
    pub task: AsTask,
    /// The trace the request that made it belongs to.
    pub trace: Option<Arc<toolhost_core::trace::TraceContext>>,
}

impl std::fmt::Debug for TaskCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskCall")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// How a task's call ended.
enum End {
    Completed(JsonObject),
    Failed(i32, String),
    Cancelled,
}

impl Tasks {
    /// Makes a task for `call` and starts the call, detached: the task
    /// handle is returned once the task is in the store.
    ///
    /// # Errors
    ///
    /// As [`Tasks::create`]; the call is not started then.
    pub(crate) async fn start(self: &Arc<Self>, call: TaskCall) -> Result<CreateTaskResult, TaskError> {
        let created = self.create().await?;
        let id = created.task.task_id.clone();
        let TaskCall {
            dispatcher,
            session,
            name,
            arguments,
            task:
                AsTask {
                    elicitation,
                    sampling,
                    guard,
                    to_result,
                },
            trace,
        } = call;
        let cancel = CancellationToken::new();
        let waiters = Waiters::default();
        let ctx = DispatchContext {
            cancel: cancel.clone(),
            client: Some(self.client(&id, &waiters, elicitation, sampling)),
            trace,
            ..DispatchContext::new(session)
        };
        let work = async move { Some(dispatcher.dispatch(&name, arguments, &ctx).await) };
        let running = Running {
            cancel,
            waiters,
            to_result,
            guard,
        };
        tokio::spawn(drive(Arc::clone(self), id, running, work));
        Ok(created)
    }

    /// The client of the task `id`'s call: its questions wait in the task.
    pub(super) fn client(
        self: &Arc<Self>,
        id: &str,
        waiters: &Waiters,
        elicitation: bool,
        sampling: bool,
    ) -> ClientHandle {
        ClientHandle(Arc::new(TaskClient {
            tasks: Arc::clone(self),
            task_id: id.to_string(),
            waiters: Arc::clone(waiters),
            elicitation,
            sampling,
            next: AtomicU64::new(0),
        }))
    }
}

/// A task's call as it runs: what stops it, where its answers go, how its
/// result is written.
pub(super) struct Running {
    /// The call's cancellation.
    pub cancel: CancellationToken,
    pub waiters: Waiters,
    pub to_result: fn(ToolResult) -> rmcp::model::CallToolResult,
    /// Held until the call ends (a graceful shutdown waits for it).
    pub guard: Box<dyn Send>,
}

/// Runs the task `id`'s call (`work`: its result, or `None` when it
/// stopped without one) to its end, watching the task meanwhile, and
/// writes the end into the task.
pub(super) async fn drive(
    tasks: Arc<Tasks>,
    id: String,
    running: Running,
    work: impl Future<Output = Option<ToolResult>>,
) {
    let Running {
        cancel,
        waiters,
        to_result,
        guard,
    } = running;
    let result = tokio::select! {
        result = work => result,
        // The task ended elsewhere (failed by another replica, expired):
        // the call is stopped and dropped (an exec's process is killed).
        () = watch(&tasks, &id, &cancel, &waiters) => {
            cancel.cancel();
            return;
        }
    };
    let end = match result {
        _ if cancel.is_cancelled() => End::Cancelled,
        Some(result) => end_of(result, to_result),
        None => End::Failed(
            RpcCode::INTERNAL_ERROR.0,
            "the task's call stopped without a result".into(),
        ),
    };
    finish(&tasks, &id, end).await;
    drop(guard);
}

/// What `result` makes of the task.
fn end_of(result: ToolResult, to_result: fn(ToolResult) -> rmcp::model::CallToolResult) -> End {
    if result.is_unknown_tool() {
        return End::Failed(RpcCode::INVALID_PARAMS.0, "Unknown tool".into());
    }
    // A fault of the sandbox or the host, not a result of the tool: a
    // protocol-level error, as the extension wants it.
    if let Some(code @ (ErrorCode::Trap | ErrorCode::Internal)) = result.error_code {
        let message = result
            .error
            .as_ref()
            .map_or_else(|| code.as_str().to_string(), |e| e.to_string());
        return End::Failed(RpcCode::INTERNAL_ERROR.0, message);
    }
    match serde_json::to_value(to_result(result)) {
        Ok(Value::Object(result)) => End::Completed(result),
        Ok(_) | Err(_) => End::Failed(
            RpcCode::INTERNAL_ERROR.0,
            "the call's result cannot be written as JSON".into(),
        ),
    }
}

/// Reads the task every watch interval until it ends elsewhere or is gone:
/// renews this replica's lease when due, turns a cancel into the call's
/// cancellation, hands answers to the questions waiting for them. A store
/// that fails is logged and read again at the next tick (the call runs on;
/// if the store stays away past the lease, other replicas fail the task).
async fn watch(tasks: &Tasks, id: &str, cancel: &CancellationToken, waiters: &Waiters) {
    let mut tick = tokio::time::interval(tasks.options.watch_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let lease_ms = tasks.lease_ms();
    loop {
        tick.tick().await;
        let mut taken = BTreeMap::new();
        let changed = tasks
            .change(id, |record| {
                taken.clear();
                if record.is_terminal() || record.owner != tasks.replica {
                    return false;
                }
                let now = now_ms();
                let mut changed = false;
                // Renewed once a third of the lease is gone.
                if record.lease_until_ms.saturating_sub(now) < lease_ms / 3 * 2 {
                    record.lease_until_ms = now.saturating_add(lease_ms);
                    changed = true;
                }
                if !record.answers.is_empty() {
                    taken = std::mem::take(&mut record.answers);
                    changed = true;
                }
                changed
            })
            .await;
        let record = match changed {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(task = id, "cannot read the task's state: {e}");
                continue;
            }
        };
        if record.is_terminal() || record.owner != tasks.replica {
            return;
        }
        if record.cancel {
            cancel.cancel();
        }
        let mut waiting = waiters.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (key, answer) in taken {
            if let Some(sender) = waiting.remove(&key) {
                let _ = sender.send(answer);
            }
        }
    }
}

/// How many times the end of a task is written before giving up (the store
/// failing all along: other replicas then fail the task when its lease
/// lapses).
const FINISH_TRIES: u32 = 8;

async fn finish(tasks: &Tasks, id: &str, end: End) {
    for attempt in 0..FINISH_TRIES {
        let written = tasks
            .change(id, |record| {
                if record.is_terminal() {
                    return false;
                }
                record.requests.clear();
                record.answers.clear();
                match &end {
                    End::Completed(result) => {
                        record.result = Some(result.clone());
                        record.set_status(TaskStatus::Completed, None);
                    }
                    End::Failed(code, message) => record.fail(*code, message.clone()),
                    End::Cancelled => {
                        record.set_status(TaskStatus::Cancelled, Some("cancelled by the client".into()));
                    }
                }
                true
            })
            .await;
        match written {
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(task = id, attempt, "cannot write the task's end: {e}");
                tokio::time::sleep(tasks.options.watch_interval * (attempt + 1)).await;
            }
        }
    }
}
