//! # Tasks: long calls answered with a handle (MCP's tasks extension)
//!
//! A client that declares the `io.modelcontextprotocol/tasks` extension on a
//! `tools/call` of a tool that supports tasks
//! ([`TaskSupport`](toolhost_core::registry::TaskSupport): the built-in
//! `exec` and codemode, and plugin tools that declare it) gets a task
//! handle at once (`resultType: "task"`); the call runs on, detached from
//! the request, and the client fetches its end with `tasks/get`, answers
//! its questions with `tasks/update`, or stops it with `tasks/cancel`. A
//! tool that requires tasks refuses a client that did not declare the
//! extension (`-32021`).
//!
//! | piece | where |
//! |---|---|
//! | the service: create, get, update, cancel | [`Tasks`] |
//! | its settings | [`TaskOptions`] |
//! | a task as stored | `record` |
//! | the call's questions, as `inputRequests` | `client` |
//! | running a call as a task: lease, cancel, answers | `run` |
//! | a call that begins its task itself (`deferred`) | `deferred` |
//!
//! **Shared by replicas.** A task lives in a [`Store`]: the embedded
//! [`MemoryStore`](crate::store::MemoryStore) by default, Redis to share it
//! (`[store] url`). Every change is a compare-and-swap on the task's
//! record, so any replica can answer `tasks/get`, take a `tasks/update` or
//! a `tasks/cancel` for a task another one runs. The replica running a task
//! holds a **lease** on it, renewed while the call runs; a replica that
//! dies (SIGKILL, a lost machine) stops renewing, and the first `tasks/get`
//! after the lease lapses, on any replica, marks the task failed with an
//! error that says so: a task is never lost or left working for ever.
//! The running replica reads its tasks' records every
//! [`TaskOptions::watch_interval`]: a cancel set by another replica stops
//! the call there (an `exec`'s process group is killed), an answer given
//! there reaches the waiting question.
//!
//! **Ends.** A call that returns a result (an `isError` one included)
//! completes the task with it; one that ends in a fault of the host or the
//! sandbox rather than a result of the tool (a trap, an internal error) fails
//! it with a JSON-RPC error (`-32603`); a cancelled one is `cancelled`. A
//! result too large for the store fails the task, saying so.

mod client;
mod deferred;
mod record;
mod run;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CreateTaskResult, DetailedTask, ErrorCode as RpcCode, InputResponses, Task, TaskStatus};

use crate::store::{Store, StoreError};
pub(crate) use deferred::Deferred;
use record::{Record, now_ms, timestamp};
pub(crate) use run::{AsTask, TaskCall};
use toolhost_core::error::{Error, ErrorCode};

/// How tasks are kept and run.
#[derive(Debug, Clone)]
pub struct TaskOptions {
    /// How long a task is kept from its creation (its `ttlMs`).
    pub ttl: Duration,
    /// The polling interval suggested to clients (`pollIntervalMs`).
    pub poll_interval: Duration,
    /// How long a running replica's claim on a task lasts without renewal:
    /// a replica that stopped is noticed this long after its last renewal.
    pub lease: Duration,
    /// How often the running replica reads its tasks for cancels and
    /// answers (and renews their leases when due).
    pub watch_interval: Duration,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(1000),
            lease: Duration::from_secs(15),
            watch_interval: Duration::from_millis(250),
        }
    }
}

/// Why a task operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// No task has that id (never made, or expired and removed).
    #[error("Failed to retrieve task: Task not found (unknown or expired task id {0:?})")]
    NotFound(String),
    /// The store failed.
    #[error("the task store failed: {0}")]
    Store(#[from] StoreError),
    /// A task's record in the store does not read as one.
    #[error("the stored task {0:?} cannot be read: {1}")]
    Corrupt(String, String),
    /// Too many replicas changed the task at once; the change was not made.
    #[error("the task {0:?} kept changing under this update; try again")]
    Contended(String),
}

impl TaskError {
    /// The JSON-RPC error for a client: an unknown task is invalid params
    /// (`-32602`), the rest internal errors.
    pub fn to_rpc(&self) -> ErrorData {
        match self {
            TaskError::NotFound(_) => ErrorData::invalid_params(self.to_string(), None),
            _ => ErrorData::internal_error(self.to_string(), None),
        }
    }

    /// The same, as a toolhost error (for a call's question).
    pub(crate) fn into_core(self) -> Error {
        Error::new(ErrorCode::Unavailable, self.to_string())
    }
}

/// How many times a change is retried when another replica changed the
/// task in between.
const MAX_SWAPS: usize = 32;

/// The tasks of one server (or several replicas sharing a store). See the
/// module documentation.
pub struct Tasks {
    store: Arc<dyn Store>,
    options: TaskOptions,
    /// This replica's id, as a task's owner.
    replica: String,
}

impl std::fmt::Debug for Tasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tasks")
            .field("replica", &self.replica)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

fn key(task_id: &str) -> String {
    format!("task:{task_id}")
}

impl Tasks {
    /// Tasks kept in `store`, run by this process as a new replica.
    pub fn new(store: Arc<dyn Store>, options: TaskOptions) -> Self {
        Tasks {
            store,
            options,
            replica: toolhost_core::dispatch::new_session_id("replica"),
        }
    }

    /// The settings.
    pub fn options(&self) -> &TaskOptions {
        &self.options
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.options.ttl.as_millis()).unwrap_or(u64::MAX)
    }

    fn lease_ms(&self) -> u64 {
        u64::try_from(self.options.lease.as_millis()).unwrap_or(u64::MAX)
    }

    /// Makes a new task, owned by this replica, and returns its seed state
    /// once it is in the store (a `tasks/get` for it then resolves, on any
    /// replica sharing the store).
    ///
    /// # Errors
    ///
    /// [`TaskError::Store`] when the store cannot take it.
    pub(crate) async fn create(&self) -> Result<CreateTaskResult, TaskError> {
        let now = timestamp();
        let id = toolhost_core::dispatch::new_session_id("task");
        let task = Task::new(id.clone(), TaskStatus::Working, now.clone(), now)
            .with_ttl_ms(self.ttl_ms())
            .with_poll_interval_ms(u64::try_from(self.options.poll_interval.as_millis()).unwrap_or(1000));
        let record = Record {
            task: task.clone(),
            owner: self.replica.clone(),
            lease_until_ms: now_ms().saturating_add(self.lease_ms()),
            cancel: false,
            requests: Default::default(),
            answers: Default::default(),
            result: None,
            error: None,
        };
        let bytes = serde_json::to_vec(&record).map_err(|e| TaskError::Corrupt(id.clone(), e.to_string()))?;
        if !self.store.put_new(&key(&id), &bytes, self.options.ttl).await? {
            // 128 random bits colliding: the random source is broken.
            return Err(TaskError::Contended(id));
        }
        Ok(CreateTaskResult::new(task))
    }

    async fn read(&self, task_id: &str) -> Result<Option<(Vec<u8>, Record)>, TaskError> {
        let Some(bytes) = self.store.get(&key(task_id)).await? else {
            return Ok(None);
        };
        let record =
            serde_json::from_slice(&bytes).map_err(|e| TaskError::Corrupt(task_id.into(), e.to_string()))?;
        Ok(Some((bytes, record)))
    }

    /// Changes the task's record with `change` (which says whether it
    /// changed anything), by compare-and-swap, retried when another replica
    /// changed it in between. Returns the record as it now is; `None` when
    /// there is no such task.
    pub(crate) async fn change(
        &self,
        task_id: &str,
        mut change: impl FnMut(&mut Record) -> bool,
    ) -> Result<Option<Record>, TaskError> {
        for _ in 0..MAX_SWAPS {
            let Some((old, mut record)) = self.read(task_id).await? else {
                return Ok(None);
            };
            if !change(&mut record) {
                return Ok(Some(record));
            }
            let new =
                serde_json::to_vec(&record).map_err(|e| TaskError::Corrupt(task_id.into(), e.to_string()))?;
            match self.store.swap(&key(task_id), &old, &new, self.options.ttl).await {
                Ok(true) => return Ok(Some(record)),
                Ok(false) => continue,
                // A result too large for the store: the task fails, saying so.
                Err(StoreError::TooLarge { len }) => {
                    record.fail(
                        RpcCode::INTERNAL_ERROR.0,
                        format!(
                            "the task's result makes its state {len} bytes, more than the store's limit of {} bytes",
                            crate::store::MAX_VALUE_BYTES
                        ),
                    );
                    let small = serde_json::to_vec(&record)
                        .map_err(|e| TaskError::Corrupt(task_id.into(), e.to_string()))?;
                    if self
                        .store
                        .swap(&key(task_id), &old, &small, self.options.ttl)
                        .await?
                    {
                        return Ok(Some(record));
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(TaskError::Contended(task_id.into()))
    }

    /// Fails the task if its owner's lease lapsed (the owner stopped).
    fn fail_if_lapsed(record: &mut Record) -> bool {
        if !record.lapsed(now_ms()) {
            return false;
        }
        let message = format!(
            "the server replica running this task ({}) stopped before the task finished: it did not renew its claim on the task, which lapsed at {} ms after the Unix epoch",
            record.owner, record.lease_until_ms
        );
        record.fail(RpcCode::INTERNAL_ERROR.0, message);
        true
    }

    /// `tasks/get`: the task's state now. A task whose replica stopped is
    /// failed here, by whichever replica asks first.
    ///
    /// # Errors
    ///
    /// [`TaskError::NotFound`] for an unknown id; a store error.
    pub async fn get(&self, task_id: &str) -> Result<DetailedTask, TaskError> {
        let record = self
            .change(task_id, Self::fail_if_lapsed)
            .await?
            .ok_or_else(|| TaskError::NotFound(task_id.into()))?;
        Ok(record.detailed())
    }

    /// `tasks/update`: takes the answers to the task's outstanding
    /// requests; answers to keys not outstanding are ignored, as the
    /// extension says. The task is `working` again once none is left.
    ///
    /// # Errors
    ///
    /// As [`Tasks::get`].
    pub async fn update(&self, task_id: &str, answers: InputResponses) -> Result<(), TaskError> {
        self.change(task_id, |record| {
            let mut changed = Self::fail_if_lapsed(record);
            for (key, answer) in &answers {
                if record.requests.remove(key).is_some() {
                    record.answers.insert(key.clone(), answer.clone());
                    changed = true;
                }
            }
            if changed && record.requests.is_empty() && record.task.status == TaskStatus::InputRequired {
                record.set_status(TaskStatus::Working, None);
            }
            changed
        })
        .await?
        .ok_or_else(|| TaskError::NotFound(task_id.into()))?;
        Ok(())
    }

    /// `tasks/cancel`: asks the running replica to stop the call (it sees
    /// the request within its watch interval). An ended task is left as it
    /// is; one whose replica stopped is failed as by [`Tasks::get`].
    ///
    /// # Errors
    ///
    /// As [`Tasks::get`].
    pub async fn cancel(&self, task_id: &str) -> Result<(), TaskError> {
        self.change(task_id, |record| {
            if Self::fail_if_lapsed(record) {
                return true;
            }
            if record.is_terminal() || record.cancel {
                return false;
            }
            record.cancel = true;
            true
        })
        .await?
        .ok_or_else(|| TaskError::NotFound(task_id.into()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
