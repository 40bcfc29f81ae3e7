//! The client of a call that runs as a task: its questions wait in the
//! task (`input_required`, with `inputRequests`) until a `tasks/update`
//! answers them, on whichever replica it lands.
//!
//! A question is written into the task's record under a key unique in the
//! task (`elicit-1`, `sample-2`, ...); `tasks/update` moves the answer into
//! the record; the owner's watcher ([`super::run`]) hands it to the waiting
//! question. Nothing here needs the client to stay connected.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::TaskStatus;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::Tasks;
use crate::asking::ASK_TIMEOUT;
use toolhost_core::client::{
    Answer, AskKind, ClientRequests, ElicitRequest, ElicitResponse, Question, Request, Round, SampleRequest,
    SampleResponse,
};
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::BoxFuture;

/// Questions waiting for their answers, by key.
pub(crate) type Waiters = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

/// The [`ClientRequests`] of one task's call.
pub(crate) struct TaskClient {
    pub tasks: Arc<Tasks>,
    pub task_id: String,
    pub waiters: Waiters,
    /// What the client declared on the request that created the task.
    pub elicitation: bool,
    pub sampling: bool,
    pub next: AtomicU64,
}

impl TaskClient {
    /// Puts `request` (an MCP request: `method` and `params`) to the client
    /// under a new key, and waits for its answer.
    async fn ask_one(&self, kind: &str, request: Value) -> Result<Value> {
        let key = format!("{kind}-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (sender, answer) = oneshot::channel();
        self.waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), sender);
        let asked = self
            .tasks
            .change(&self.task_id, |record| {
                if record.is_terminal() {
                    return false;
                }
                record.requests.insert(key.clone(), request.clone());
                record.set_status(
                    TaskStatus::InputRequired,
                    Some("waiting for the client's answer".into()),
                );
                true
            })
            .await
            .map_err(|e| e.into_core())?;
        if asked.is_none_or(|r| !r.requests.contains_key(&key)) {
            return Err(Error::new(
                ErrorCode::Cancelled,
                "the task ended before its question was asked",
            ));
        }
        match tokio::time::timeout(ASK_TIMEOUT, answer).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(Error::new(
                ErrorCode::Cancelled,
                "the task ended while waiting for an answer",
            )),
            Err(_) => Err(Error::new(
                ErrorCode::Unavailable,
                format!(
                    "the client did not answer the task's {kind} request within {} s",
                    ASK_TIMEOUT.as_secs()
                ),
            )),
        }
    }
}

fn unreadable(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::ToolFailed,
        format!("the client's answer to the {what} request cannot be read: {e}"),
    )
}

impl ClientRequests for TaskClient {
    /// A task's questions go out as its `inputRequests`: elicitation and
    /// sampling when the request declared them; not roots (not yet asked
    /// of a task's client).
    fn can_answer(&self, kind: AskKind) -> bool {
        match kind {
            AskKind::Elicitation => self.elicitation,
            AskKind::Sampling => self.sampling,
            // Roots, and kinds a later revision adds.
            _ => false,
        }
    }

    /// The questions of a round, one after the other (each is one
    /// `inputRequests` entry of the task until answered).
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        Box::pin(async move {
            let mut answers = Vec::with_capacity(questions.len());
            for question in questions {
                answers.push(match question.request {
                    Request::Elicit(request) => self.elicit(request).await.map(Answer::Elicit),
                    Request::Sample(request) => self.sample(request).await.map(Answer::Sample),
                    other => Err(Error::new(
                        ErrorCode::Unavailable,
                        format!("a task's client cannot be asked for {}", other.kind().as_str()),
                    )),
                });
            }
            Ok(answers)
        })
    }
}

impl TaskClient {
    async fn elicit(&self, request: ElicitRequest) -> Result<ElicitResponse> {
        let asked = json!({
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": request.message,
                "requestedSchema": request.requested_schema,
            },
        });
        let answer = self.ask_one("elicit", asked).await?;
        let mut answer: ElicitResponse =
            serde_json::from_value(answer).map_err(|e| unreadable("elicitation", e))?;
        if answer.action != toolhost_core::client::ElicitAction::Accept {
            answer.content = None;
        } else if answer.content.is_none() {
            answer.content = Some(serde_json::Map::new());
        }
        Ok(answer)
    }

    async fn sample(&self, request: SampleRequest) -> Result<SampleResponse> {
        let params = serde_json::to_value(&request).map_err(|e| unreadable("sampling", e))?;
        let asked = json!({"method": "sampling/createMessage", "params": params});
        crate::asking::sample_response(self.ask_one("sample", asked).await?)
    }
}
