//! A component's tool as a registry [`Tool`].

use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::Value;

use super::LoadedComponent;
use toolhost_core::error::{Error, ErrorCode, Result};
use toolhost_core::registry::{BoxFuture, CallContext, Tool, ToolOutput, ToolSpec};

/// One tool of a [`LoadedComponent`]. Each call runs in a fresh instance.
#[derive(Debug, Clone)]
pub struct WasmTool {
    component: Arc<LoadedComponent>,
    index: usize,
}

impl WasmTool {
    pub(super) fn new(component: Arc<LoadedComponent>, index: usize) -> Self {
        WasmTool { component, index }
    }

    /// The component the tool belongs to.
    pub fn component(&self) -> &Arc<LoadedComponent> {
        &self.component
    }
}

impl Tool for WasmTool {
    fn spec(&self) -> &ToolSpec {
        &self.component.tools[self.index]
    }

    /// Only a component granted tools (or whose caller decides) may.
    fn calls_tools(&self) -> bool {
        let capabilities = self.component.capabilities();
        capabilities.tools_from_caller || !capabilities.tools.is_empty()
    }

    fn call(&self, arguments: Value, ctx: CallContext) -> BoxFuture<'_, Result<ToolOutput>> {
        // serde_json's text, with strings escaped eight bytes at a time
        // (see `toolhost_json`). Made before the future, which then holds
        // the text and the call's store, not the `Value` and the context.
        let args = match toolhost_json::to_string(&arguments) {
            Ok(args) => args,
            Err(e) => {
                let e = Error::new(
                    ErrorCode::InvalidArguments,
                    format!("the arguments do not serialize: {e}"),
                );
                return Box::pin(std::future::ready(Err(e)));
            }
        };
        drop(arguments);
        let call = self.component.call_in(&self.spec().name, args, ctx);
        Box::pin(call.map(|called| called.result))
    }
}
