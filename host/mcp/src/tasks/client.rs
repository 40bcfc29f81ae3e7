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
use rmcp::model::ElicitResult;
use toolhost_core::client::{Answer, AskKind, ClientRequests, ElicitRequest, Question, Request, Round};
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
    /// Puts `requests` (MCP requests: `method` and `params`, each under its
    /// kind) to the client together, each under a new key, and waits for
    /// all their answers: they are the task's `inputRequests` at once, and
    /// the client may answer them in one `tasks/update` or one by one.
    async fn ask_together(&self, requests: Vec<(&'static str, Value)>) -> Vec<Result<Value>> {
        let keys: Vec<String> = requests
            .iter()
            .map(|(kind, _)| format!("{kind}-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1))
            .collect();
        let mut answers = Vec::with_capacity(keys.len());
        {
            let mut waiting = self.waiters.lock().unwrap_or_else(PoisonError::into_inner);
            for key in &keys {
                let (sender, answer) = oneshot::channel();
                waiting.insert(key.clone(), sender);
                answers.push(answer);
            }
        }
        let asked = self
            .tasks
            .change(&self.task_id, |record| {
                if record.is_terminal() {
                    return false;
                }
                for (key, (_, request)) in keys.iter().zip(&requests) {
                    record.requests.insert(key.clone(), request.clone());
                }
                record.set_status(
                    TaskStatus::InputRequired,
                    Some("waiting for the client's answer".into()),
                );
                true
            })
            .await;
        let refusal = match asked {
            Err(e) => Some(e.into_core()),
            Ok(record)
                if record
                    .as_ref()
                    .is_none_or(|r| keys.iter().any(|k| !r.requests.contains_key(k))) =>
            {
                Some(Error::new(
                    ErrorCode::Cancelled,
                    "the task ended before its question was asked",
                ))
            }
            Ok(_) => None,
        };
        if let Some(refusal) = refusal {
            self.forget(&keys);
            return keys.iter().map(|_| Err(refusal.clone())).collect();
        }
        // One clock for the round: its questions are out together.
        let deadline = tokio::time::Instant::now() + ASK_TIMEOUT;
        let mut got = Vec::with_capacity(keys.len());
        for ((kind, _), answer) in requests.iter().zip(answers) {
            got.push(match tokio::time::timeout_at(deadline, answer).await {
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
            });
        }
        self.forget(&keys);
        got
    }

    /// Drops the waiters of `keys` (answered, or never to be).
    fn forget(&self, keys: &[String]) {
        let mut waiting = self.waiters.lock().unwrap_or_else(PoisonError::into_inner);
        for key in keys {
            waiting.remove(key);
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

    /// The questions of a round, together: each one `inputRequests` entry
    /// of the task until answered.
    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        Box::pin(async move {
            let mut answers: Vec<Option<Result<Answer>>> = Vec::with_capacity(questions.len());
            let mut asked = Vec::new();
            for question in questions {
                match TaskClient::request(question.request) {
                    Ok(request) => {
                        asked.push(request);
                        answers.push(None);
                    }
                    Err(e) => answers.push(Some(Err(e))),
                }
            }
            let kinds: Vec<&'static str> = asked.iter().map(|(kind, _)| *kind).collect();
            let mut got = kinds.into_iter().zip(self.ask_together(asked).await);
            for slot in answers.iter_mut().filter(|a| a.is_none()) {
                *slot = got.next().map(|(kind, answer)| TaskClient::answer(kind, answer?));
            }
            Ok(answers
                .into_iter()
                .map(|a| a.unwrap_or_else(|| Err(Error::new(ErrorCode::Unavailable, "no answer came"))))
                .collect())
        })
    }
}

impl TaskClient {
    /// `request` as an MCP request to put in the task, under its kind.
    fn request(request: Request) -> Result<(&'static str, Value)> {
        match request {
            Request::Elicit(ElicitRequest {
                message,
                requested_schema,
            }) => Ok((
                ELICIT,
                json!({
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": message, "requestedSchema": requested_schema},
                }),
            )),
            Request::Sample(request) => {
                let params = serde_json::to_value(&request).map_err(|e| unreadable("sampling", e))?;
                Ok((
                    SAMPLE,
                    json!({"method": "sampling/createMessage", "params": params}),
                ))
            }
            other => Err(Error::new(
                ErrorCode::Unavailable,
                format!("a task's client cannot be asked for {}", other.kind().as_str()),
            )),
        }
    }

    /// The client's answer to a request of `kind`, as the call gets it:
    /// read by the same readers as a session's or a round trip's answers.
    fn answer(kind: &str, answer: Value) -> Result<Answer> {
        if kind == SAMPLE {
            return crate::asking::sample_response(answer).map(Answer::Sample);
        }
        let result: ElicitResult =
            serde_json::from_value(answer).map_err(|e| unreadable("elicitation", e))?;
        crate::asking::elicit_response(result.action, result.content).map(Answer::Elicit)
    }
}

/// The kinds of request a task's client puts out (and their keys' stems).
const ELICIT: &str = "elicit";
const SAMPLE: &str = "sample";
