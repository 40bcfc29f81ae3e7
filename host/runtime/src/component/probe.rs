//! Reviewing a component before serving it: [`ComponentProbe`] holds a
//! component compiled, linked and granted as for serving, whose tool list
//! can be asked for as it is, unchecked, as often as wanted (each time in a
//! fresh instance). The conformance suite judges the list itself; serving
//! takes [`ComponentProbe::load`], which applies the host's checks.

use serde::Serialize;

use super::{LoadedComponent, Sandboxed};
use crate::bindings::WorldVersion;
use crate::capabilities::{Declared, Effective};
use toolhost_core::identity::ComponentHash;
use toolhost_core::registry::ToolHints;

/// A component that passed every load-time check but those of its tool
/// list (see [`Engine::probe`](crate::Engine::probe)). Nothing is registered
/// and no tool can be called through it.
#[derive(Debug)]
pub struct ComponentProbe {
    component: LoadedComponent,
}

/// One tool as the component listed it, before any check: its name may
/// break the naming rule, its parameters may not be JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedTool {
    /// The name, as listed.
    pub name: String,
    /// The description, as listed.
    pub description: String,
    /// The parameter schema, as the JSON text listed.
    pub parameters: String,
    /// The behaviour hints.
    pub hints: ToolHints,
}

impl ComponentProbe {
    pub(super) fn new(component: LoadedComponent) -> Self {
        ComponentProbe { component }
    }

    pub(super) fn into_inner(self) -> LoadedComponent {
        self.component
    }

    /// The component's identity.
    pub fn hash(&self) -> ComponentHash {
        self.component.hash
    }

    /// The world version it implements.
    pub fn world(&self) -> WorldVersion {
        self.component.world
    }

    /// The interfaces it imports, as `ns:pkg/iface@version`.
    pub fn imports(&self) -> &[String] {
        &self.component.imports
    }

    /// The capabilities it declares.
    pub fn declared(&self) -> &Declared {
        &self.component.declared
    }

    /// The capabilities it gets: declared and granted.
    pub fn capabilities(&self) -> &Effective {
        &self.component.capabilities
    }

    /// Calls `list-tools` in a fresh instance, under the component's limits,
    /// and returns the list as the component gave it, unchecked, with what
    /// the call used and wrote on stdout. Never panics.
    pub async fn list_tools(&self) -> Sandboxed<Vec<ListedTool>> {
        let listed = self.component.list_tools().await;
        Sandboxed {
            result: listed.result.map(|specs| {
                specs
                    .into_iter()
                    .map(|spec| ListedTool {
                        name: spec.name,
                        description: spec.description,
                        parameters: spec.parameters,
                        hints: ToolHints {
                            read_only: spec.hints.read_only,
                            destructive: spec.hints.destructive,
                            idempotent: spec.hints.idempotent,
                            open_world: spec.hints.open_world,
                        },
                    })
                    .collect()
            }),
            usage: listed.usage,
            stdout_bytes: listed.stdout_bytes,
        }
    }
}
