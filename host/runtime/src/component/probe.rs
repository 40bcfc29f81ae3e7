//! Reviewing a component before serving it: [`ComponentProbe`] holds a
//! component compiled, linked and granted as for serving, whose tool list
//! (and, from 0.2.0, its `declare` answer) can be asked for as they are,
//! unchecked, as often as wanted (each time in a fresh instance). The
//! conformance suite judges them itself; serving takes
//! [`ComponentProbe::load`], which applies the host's checks.

use serde::Serialize;

use super::shape::Shape;
use super::{LoadedComponent, Sandboxed};
use crate::bindings::WorldVersion;
use crate::capabilities::{Declared, Effective, Grants};
use toolhost_core::identity::ComponentHash;
use toolhost_core::registry::ToolHints;

/// A component that passed every load-time check but those of its tool
/// list and `declare` answer (see [`Engine::probe`](crate::Engine::probe)).
/// Nothing is registered and no tool can be called through it.
#[derive(Debug)]
pub struct ComponentProbe {
    component: LoadedComponent,
    shape: Shape,
    grants: Grants,
    /// The capabilities of the declaration sections alone, granted.
    sectioned: Effective,
}

/// One tool as the component listed it, before any check: its name may
/// break the naming rule, its schemas may not be JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedTool {
    /// The name, as listed.
    pub name: String,
    /// The description, as listed.
    pub description: String,
    /// The parameter schema, as the JSON text listed.
    pub parameters: String,
    /// The output schema, as the JSON text listed (0.2.0 and later; always
    /// `None` for 0.1.0 components).
    pub output_schema: Option<String>,
    /// The title, as listed (0.3.0 and later).
    pub title: Option<String>,
    /// The behaviour hints.
    pub hints: ToolHints,
}

/// What one fresh instance answered to `list-tools` and `declare`, and
/// (from 0.3.0 on) `list-prompts`, `list-resources` and `list-templates`.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing {
    /// The tools, as listed.
    pub tools: Vec<ListedTool>,
    /// What `declare` answered, for a world version that has it (0.2.0 and
    /// later); unchecked.
    pub declared: Option<Declared>,
    /// Its prompts, resources and templates, as listed (empty lists before
    /// 0.3.0 and for a component that exports none); unchecked.
    pub catalog: crate::bindings::latest::CatalogListing,
}

impl ComponentProbe {
    pub(super) fn new(
        component: LoadedComponent,
        shape: Shape,
        grants: Grants,
        sectioned: Effective,
    ) -> Self {
        ComponentProbe {
            component,
            shape,
            grants,
            sectioned,
        }
    }

    pub(super) fn into_parts(self) -> (LoadedComponent, Shape, Grants, Effective) {
        (self.component, self.shape, self.grants, self.sectioned)
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
        &self.shape.imports
    }

    /// What its `toolhost:capabilities` sections declare (a 0.2.0
    /// component's `declare` answer comes with [`ComponentProbe::list_tools`]).
    pub fn declared(&self) -> &Declared {
        &self.shape.declared
    }

    /// Calls `list-tools` (then `declare`, for a version that has it) in a
    /// fresh instance, under the component's limits, and returns the
    /// answers as the component gave them, unchecked, with what the instance
    /// used and wrote on stdout. Never panics.
    pub async fn list_tools(&self) -> Sandboxed<Listing> {
        let answer = self.component.list_and_declare().await;
        Sandboxed {
            result: answer.result.map(|listed| Listing {
                tools: listed
                    .specs
                    .into_iter()
                    .map(|spec| ListedTool {
                        name: spec.name,
                        description: spec.description,
                        parameters: spec.parameters,
                        output_schema: spec.output_schema,
                        title: spec.title,
                        hints: ToolHints {
                            read_only: spec.hints.read_only,
                            destructive: spec.hints.destructive,
                            idempotent: spec.hints.idempotent,
                            open_world: spec.hints.open_world,
                        },
                    })
                    .collect(),
                declared: listed.declared.map(Declared::from),
                catalog: listed.catalog,
            }),
            usage: answer.usage,
            stdout_bytes: answer.stdout_bytes,
            stdout: answer.stdout,
        }
    }
}
