//! A task as it is kept in the store: the MCP task, who runs it, what it
//! waits for, and how it ended. One JSON value under `task:{id}`, changed
//! only by compare-and-swap ([`Tasks::change`](super::Tasks)), so that two
//! replicas never overwrite each other's change.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::model::{DetailedTask, InputRequests, JsonObject, Task, TaskPayload, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One task in the store.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Record {
    /// The MCP task (its status agrees with the fields below).
    pub task: Task,
    /// The replica running it.
    pub owner: String,
    /// Until when (Unix milliseconds) the owner has said it is alive; past
    /// it, any replica may fail the task.
    pub lease_until_ms: u64,
    /// A client asked to cancel it; the owner stops the call when it sees
    /// this.
    #[serde(default)]
    pub cancel: bool,
    /// Requests to the client not yet answered (MCP `inputRequests`), by key.
    #[serde(default)]
    pub requests: BTreeMap<String, Value>,
    /// Answers given by `tasks/update`, not yet taken by the owner.
    #[serde(default)]
    pub answers: BTreeMap<String, Value>,
    /// The result, once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<JsonObject>,
    /// The JSON-RPC error, once failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<JsonObject>,
}

impl Record {
    /// Whether the task has ended (completed, failed or cancelled).
    pub fn is_terminal(&self) -> bool {
        self.task.status.is_terminal()
    }

    /// Whether the owner's lease ran out at `now_ms` on a task not ended.
    pub fn lapsed(&self, now_ms: u64) -> bool {
        !self.is_terminal() && self.lease_until_ms < now_ms
    }

    /// Sets the status (and the time of the change).
    pub fn set_status(&mut self, status: TaskStatus, message: Option<String>) {
        self.task.status = status;
        self.task.status_message = message;
        self.task.last_updated_at = timestamp();
    }

    /// Ends the task as failed with the JSON-RPC error `code`, `message`.
    pub fn fail(&mut self, code: i32, message: String) {
        let mut error = JsonObject::new();
        error.insert("code".into(), Value::from(code));
        error.insert("message".into(), Value::from(message.clone()));
        self.error = Some(error);
        self.result = None;
        self.requests.clear();
        self.set_status(TaskStatus::Failed, Some(message));
    }

    /// The task as `tasks/get` shows it. A request that no longer reads as
    /// an MCP input request (it was written by this code, so it does) is
    /// left out rather than fail the read.
    pub fn detailed(&self) -> DetailedTask {
        let payload = match self.task.status {
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: self
                    .requests
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), serde_json::from_value(v.clone()).ok()?)))
                    .collect::<InputRequests>(),
            },
            TaskStatus::Completed => TaskPayload::Completed {
                result: self.result.clone().unwrap_or_default(),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: self.error.clone().unwrap_or_default(),
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        DetailedTask::new(self.task.clone(), payload)
    }
}

/// Now, in Unix milliseconds.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Now, as MCP writes task times (ISO 8601, UTC).
pub(crate) fn timestamp() -> String {
    rmcp::task_manager::current_timestamp()
}
