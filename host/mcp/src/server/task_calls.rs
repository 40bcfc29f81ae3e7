//! The server's side of the tasks extension: which `tools/call` becomes a
//! task, and `tasks/get`, `tasks/update`, `tasks/cancel` answered from
//! [`Tasks`](crate::tasks::Tasks) (see that module for how tasks run and are
//! shared).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CancelTaskParams, ClientCapabilities, CreateTaskResult, GetTaskParams,
    GetTaskResult, JsonObject, ServerCapabilities, TASKS_EXTENSION_ID, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::{InFlight, McpServer, call_result};
use crate::tasks::{AsTask, TaskCall, Tasks};
use toolhost_core::registry::TaskSupport;

/// What a `tools/call` becomes.
pub(super) enum Called {
    /// A task, started.
    Task(CreateTaskResult),
    /// An ordinary call, to run now (with its in-flight guard back).
    Now(InFlight),
    /// A call that becomes a task when its tool says so: to run now, in
    /// [`Tasks::run_deferred`] (a 2026-07-28 request: it asks by
    /// multi-round-trip results until then).
    Deferred(Arc<Tasks>, AsTask),
}

impl McpServer {
    /// Serves tasks from `tasks` (advertised as the
    /// `io.modelcontextprotocol/tasks` extension): calls of tools that
    /// support tasks, from clients that declare the extension, run as tasks.
    pub fn with_tasks(mut self, tasks: Arc<Tasks>) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// The extension in `capabilities`, when this server serves tasks.
    pub(super) fn advertise_tasks(&self, capabilities: &mut ServerCapabilities) {
        if self.tasks.is_some() {
            capabilities
                .extensions
                .get_or_insert_default()
                .insert(TASKS_EXTENSION_ID.into(), JsonObject::new());
        }
    }

    /// Starts `request` as a task when the tool supports tasks and the
    /// client declared the extension on this request (or, for a deferred
    /// tool, says it is to run until it begins its task); refuses a tool
    /// that requires tasks to a client that did not (`-32021`).
    ///
    /// # Errors
    ///
    /// `-32021` as above; an internal error when the task store fails.
    pub(super) async fn call_as_task(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        guard: InFlight,
        trace: Option<&Arc<toolhost_core::trace::TraceContext>>,
    ) -> Result<Called, ErrorData> {
        let Some(tasks) = &self.tasks else {
            return Ok(Called::Now(guard));
        };
        let (support, deferred) = self
            .dispatcher
            .registry()
            .get(&request.name)
            .map_or((TaskSupport::Forbidden, false), |entry| {
                (entry.spec().task_support, entry.spec().task_deferred)
            });
        if support == TaskSupport::Forbidden {
            return Ok(Called::Now(guard));
        }
        let capabilities = context.client_capabilities().unwrap_or_default();
        // The extension exists from 2026-07-28 on: a client of an earlier
        // revision is one that did not declare it, whatever its capabilities
        // say (SEP-2663's compatibility table).
        let declared = capabilities.supports_tasks()
            && context
                .protocol_version()
                .is_some_and(|version| !version.has_initialize());
        if !declared {
            if support == TaskSupport::Required && self.shows(&request.name) {
                return Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
            return Ok(Called::Now(guard));
        }
        let task = AsTask {
            elicitation: capabilities.elicitation.is_some(),
            sampling: capabilities.sampling.is_some(),
            guard: Box::new(guard),
            to_result: call_result,
        };
        if deferred {
            return Ok(Called::Deferred(Arc::clone(tasks), task));
        }
        let call = TaskCall {
            dispatcher: self.dispatcher.clone(),
            session: Arc::clone(&self.session),
            name: request.name.to_string(),
            arguments: Value::Object(request.arguments.clone().unwrap_or_default()),
            task,
            trace: trace.cloned(),
        };
        let created = tasks.start(call).await.map_err(|e| e.to_rpc())?;
        Ok(Called::Task(created))
    }

    /// Whether this session sees the tool `name` (a tool it does not see is
    /// never said to need anything: it is unknown to it).
    fn shows(&self, name: &str) -> bool {
        self.dispatcher
            .tool_specs(&self.session)
            .is_ok_and(|specs| specs.iter().any(|s| s.name == name))
    }

    fn tasks(&self) -> Result<&Arc<Tasks>, ErrorData> {
        // rmcp answers tasks/* with "method not found" when the extension
        // is not advertised, so this is not reached without tasks.
        self.tasks
            .as_ref()
            .ok_or_else(|| ErrorData::internal_error("this server does not serve tasks", None))
    }

    pub(super) async fn task_get(&self, request: GetTaskParams) -> Result<GetTaskResult, ErrorData> {
        let task = self
            .tasks()?
            .get(&request.task_id)
            .await
            .map_err(|e| e.to_rpc())?;
        Ok(GetTaskResult::new(task))
    }

    pub(super) async fn task_update(&self, request: UpdateTaskParams) -> Result<(), ErrorData> {
        self.tasks()?
            .update(&request.task_id, request.input_responses)
            .await
            .map_err(|e| e.to_rpc())
    }

    pub(super) async fn task_cancel(&self, request: CancelTaskParams) -> Result<(), ErrorData> {
        self.tasks()?
            .cancel(&request.task_id)
            .await
            .map_err(|e| e.to_rpc())
    }
}
