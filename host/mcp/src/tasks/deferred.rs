//! Deferred tasks: a call that becomes a task when its tool says so.
//!
//! A tool declared `task TOOL optional|required deferred` starts as an
//! ordinary call of its request: what it asks is the request's own question
//! (on MCP 2026-07-28, an `InputRequiredResult`, the tool run again from the
//! start with the answers). When it calls `client.begin-task`, the task is
//! made, the request is answered with it at once, and the same call, in the
//! same instance, runs on as the task: its client is now the task's (later
//! questions wait in the task), its cancellation the task's (the request's
//! no longer reaches it). A call that ends before it begins a task answers
//! its request as an ordinary call does.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::CreateTaskResult;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Tasks;
use super::client::Waiters;
use super::run::{AsTask, Running, drive};
use toolhost_core::client::{AskKind, ClientHandle, ClientRequests, Question, Round};
use toolhost_core::dispatch::{DispatchContext, ToolResult};
use toolhost_core::registry::BoxFuture;

/// How a deferred call answers its request.
pub(crate) enum Deferred {
    /// It ended before it began a task: its result, as an ordinary call's
    /// (`None`: it stopped without one).
    Finished(Option<ToolResult>),
    /// It began a task, which runs on.
    Task(CreateTaskResult),
}

/// The reply to a `begin_task`: whether the call is now a task.
type Begin = oneshot::Sender<bool>;

/// The client of a deferred call: the request's until the task begins, the
/// task's after.
struct DeferredClient {
    current: Mutex<ClientHandle>,
    /// Where `begin_task` asks the request side to make the task (taken by
    /// the first ask: a call begins its task once).
    begin: Mutex<Option<oneshot::Sender<Begin>>>,
}

impl DeferredClient {
    fn current(&self) -> ClientHandle {
        self.current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ClientRequests for DeferredClient {
    fn can_answer(&self, kind: AskKind) -> bool {
        self.current().can_answer(kind)
    }

    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        // Checked by the handle that wraps this client already.
        let current = self.current();
        Box::pin(async move { current.0.ask(questions).await })
    }

    fn begin_task(&self) -> BoxFuture<'_, bool> {
        Box::pin(async move {
            let signal = self.begin.lock().unwrap_or_else(PoisonError::into_inner).take();
            let Some(signal) = signal else {
                return false;
            };
            let (reply, began) = oneshot::channel();
            if signal.send(reply).is_err() {
                return false;
            }
            began.await.unwrap_or(false)
        })
    }
}

/// Aborts the spawned call when dropped (a task ended elsewhere).
struct AbortOnDrop(JoinHandle<ToolResult>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Tasks {
    /// Runs a deferred call, `work` (the dispatch, given its context) in
    /// `ctx` (the request's: its client and cancellation), until it ends or
    /// begins its task; see the module documentation. A task that cannot be
    /// made (the store failing) is logged, `begin_task` answers false, and
    /// the call goes on in its request.
    pub(crate) async fn run_deferred<F>(
        self: &Arc<Self>,
        deferred: AsTask,
        mut ctx: DispatchContext,
        work: F,
    ) -> Deferred
    where
        F: FnOnce(DispatchContext) -> BoxFuture<'static, ToolResult>,
    {
        let Some(request_client) = ctx.client.clone() else {
            return Deferred::Finished(Some(work(ctx).await));
        };
        let (signal, mut begun) = oneshot::channel::<Begin>();
        let client = Arc::new(DeferredClient {
            current: Mutex::new(request_client),
            begin: Mutex::new(Some(signal)),
        });
        ctx.client = Some(ClientHandle(client.clone()));
        // The call's own cancellation, which the request's reaches until
        // the task begins.
        let cancel = CancellationToken::new();
        let request_cancel = std::mem::replace(&mut ctx.cancel, cancel.clone());
        let detached = CancellationToken::new();
        tokio::spawn({
            let (cancel, detached) = (cancel.clone(), detached.clone());
            async move {
                tokio::select! {
                    // Detached first: once the task has begun, the end of
                    // the request (its token cancelled as it closes) must
                    // not reach the call, however late this is polled.
                    biased;
                    () = detached.cancelled() => {}
                    () = request_cancel.cancelled() => cancel.cancel(),
                }
            }
        });
        let mut call = AbortOnDrop(tokio::spawn(work(ctx)));
        let mut asked = false;
        loop {
            tokio::select! {
                joined = &mut call.0 => {
                    detached.cancel();
                    return Deferred::Finished(joined.ok());
                }
                reply = &mut begun, if !asked => {
                    asked = true;
                    let Ok(reply) = reply else { continue };
                    match self.create().await {
                        Ok(created) => {
                            let id = created.task.task_id.clone();
                            let waiters = Waiters::default();
                            *client.current.lock().unwrap_or_else(PoisonError::into_inner) =
                                self.client(&id, &waiters, deferred.elicitation, deferred.sampling);
                            detached.cancel();
                            let _ = reply.send(true);
                            let running = Running {
                                cancel,
                                waiters,
                                to_result: deferred.to_result,
                                guard: deferred.guard,
                            };
                            let work = async move {
                                let mut call = call;
                                (&mut call.0).await.ok()
                            };
                            tokio::spawn(drive(Arc::clone(self), id, running, work));
                            return Deferred::Task(created);
                        }
                        Err(e) => {
                            tracing::warn!("cannot begin a deferred call's task; it goes on in its request: {e}");
                            let _ = reply.send(false);
                        }
                    }
                }
            }
        }
    }
}
