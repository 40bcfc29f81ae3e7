//! The codemode interpreter: Pydantic's Monty (a Python subset written in
//! Rust) compiled into a toolhost component.
//!
//! The host's `run_tools_script` built-in runs each script in a fresh
//! instance of this component and hands it the script, the tools it may call
//! (their Python names) and its limits. Tool calls leave the interpreter as
//! Monty external calls: every call the script is waiting on together
//! (`asyncio.gather`, or several started before one is awaited) goes to the
//! host in one `tools.call-many`, which runs them at once. The component
//! never decides what a script may call: the host checks every call again
//! (callable set, call cap, approvals) in its dispatch pipeline.
//!
//! Its one tool, `run_tools_script`, has a name reserved for toolhost's
//! built-ins, so this component can never be registered as an ordinary
//! plugin: the host loads it for `[tools.codemode]` only.

mod convert;
mod output;
mod runner;

#[allow(missing_docs, reason = "generated code")]
mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/0.2.0",
        world: "toolhost:plugin/plugin",
    });
}

use bindings::exports::toolhost::plugin::tool::{Capabilities, Guest, ToolError, ToolOutput, ToolSpec};
use bindings::toolhost::plugin::types::Hints;

// Monty enforces the script's memory budget by counting what reaches the
// global allocator; without it, its `max_memory` is silently ignored.
#[global_allocator]
static ALLOC: monty_alloc::LimitedAllocator = monty_alloc::LimitedAllocator;

/// The component's tool name (reserved for built-ins in the host).
const TOOL: &str = "run_tools_script";

struct Component;

impl Guest for Component {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: TOOL.to_string(),
            description: "Runs a Python script for toolhost's run_tools_script built-in, which supplies the tools it may call and its limits.".to_string(),
            parameters: runner::PARAMETERS.to_string(),
            output_schema: None,
            hints: Hints {
                read_only: None,
                destructive: None,
                idempotent: None,
                open_world: None,
            },
        }]
    }

    fn declare() -> Capabilities {
        Capabilities {
            dirs: Vec::new(),
            env: Vec::new(),
            http: Vec::new(),
            secrets: Vec::new(),
            // Whatever its caller lets it: only the host's own instance,
            // loaded for run_tools_script, is given a caller that decides.
            tools: vec!["*".to_string()],
        }
    }

    fn call_tool(name: String, arguments: String) -> Result<ToolOutput, ToolError> {
        if name != TOOL {
            return Err(ToolError::InvalidArguments(format!(
                "this component has one tool, `{TOOL}`; there is no `{name}`"
            )));
        }
        let request: runner::Request = serde_json::from_str(&arguments)
            .map_err(|e| ToolError::InvalidArguments(format!("invalid {TOOL} request: {e}")))?;
        let report = runner::run(request, &HostTools);
        Ok(ToolOutput {
            json: report.to_string(),
            text: None,
        })
    }
}

/// The host's `tools` interface, as the runner sees it.
struct HostTools;

impl runner::Tools for HostTools {
    fn call_many(&self, calls: &[(String, String)]) -> Vec<Result<String, runner::CallFailure>> {
        use bindings::toolhost::plugin::tools;
        let convert = |r: Result<bindings::toolhost::plugin::types::ToolOutput, tools::CallError>| {
            r.map(|out| out.json).map_err(|e| runner::CallFailure {
                code: e.code,
                message: e.message,
            })
        };
        // One call needs no batch; several go to the host together.
        if let [(name, arguments)] = calls {
            return vec![convert(tools::call(name, arguments))];
        }
        let batch: Vec<tools::ToolCall> = calls
            .iter()
            .map(|(name, arguments)| tools::ToolCall {
                name: name.clone(),
                arguments: arguments.clone(),
            })
            .collect();
        tools::call_many(&batch).into_iter().map(convert).collect()
    }
}

bindings::export!(Component with_types_in bindings);
