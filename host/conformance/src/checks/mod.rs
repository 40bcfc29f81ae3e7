//! The checks, one module per family. [`CheckId`] names each check and
//! documents what it guarantees; the family modules implement them.

pub mod artifact;
pub mod calls;
pub mod capabilities;
pub mod catalog;
pub mod listing;

use serde::Serialize;

/// A named check of the suite. Its [`as_str`](CheckId::as_str) name is
/// stable: it appears in every report format (human, JSON, JUnit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(into = "&'static str")]
#[non_exhaustive]
pub enum CheckId {
    /// The bytes are a WebAssembly component: not a core module, not
    /// something else. ([`artifact`])
    Component,
    /// The component exports the `toolhost:plugin/tool` interface of a world
    /// version the host serves (`toolhost_runtime::bindings::WorldVersion::ALL`).
    /// ([`artifact`])
    World,
    /// Every import is an interface the host provides, at a version it
    /// serves. ([`artifact`])
    Imports,
    /// The capabilities the component declares (in its custom sections and,
    /// from 0.2.0, its `declare()` answer) match what it imports: each
    /// declared kind has the import that uses it, and each import that needs
    /// a declaration has one. ([`capabilities`])
    Capabilities,
    /// The host loads the component (compiles, links, lists its tools and
    /// accepts the list) under the suite's limits and grants. ([`listing`])
    Loads,
    /// `list-tools` (and, from 0.2.0, `declare`) answer the same in fresh
    /// instances. ([`listing`])
    Deterministic,
    /// Tool names follow the registry's rule (`^[A-Za-z0-9_-]{1,64}$`), are
    /// unique within the component and are not reserved for toolhost's
    /// built-ins. ([`listing`])
    Names,
    /// Every tool has a non-empty description. ([`listing`])
    Descriptions,
    /// Every parameter schema, and every output schema (0.2.0), is JSON,
    /// valid against the JSON Schema draft 2020-12 meta-schema, needs no
    /// remote `$ref`, and describes an object. ([`listing`])
    Schemas,
    /// Arguments synthesized from each tool's schema (valid ones, an empty
    /// object, each required field missing, each field of a wrong type, an
    /// extra field, very long strings, unicode) give results, or errors that
    /// fit them (`invalid_arguments` for arguments the schema forbids),
    /// never traps, timeouts or exhausted limits. ([`calls`])
    Arguments,
    /// Every result is JSON (and so UTF-8) within the output limit and, for a
    /// tool that lists an output schema (0.2.0), fits it (from 0.3.0, its
    /// structured result is an object). ([`calls`])
    Results,
    /// A component's prompts render with their required arguments, its
    /// resources read (and are found), its templates read at a URI made
    /// from them, and its completions answer, never with a trap or an
    /// exhausted limit (0.3.0's `server` worlds; skipped for a component
    /// that offers none). ([`catalog`])
    Catalog,
    /// Without grants, a call of a component that declares capabilities
    /// fails with a clear tool error (or succeeds), never a trap. ([`calls`])
    NoGrants,
    /// Nothing is written to stdout, by `list-tools` or by any call.
    /// ([`calls`])
    Stdout,
}

impl CheckId {
    /// Every check, in the order the suite runs them.
    pub const ALL: &'static [CheckId] = &[
        CheckId::Component,
        CheckId::World,
        CheckId::Imports,
        CheckId::Capabilities,
        CheckId::Loads,
        CheckId::Deterministic,
        CheckId::Names,
        CheckId::Descriptions,
        CheckId::Schemas,
        CheckId::Arguments,
        CheckId::Results,
        CheckId::Catalog,
        CheckId::NoGrants,
        CheckId::Stdout,
    ];

    /// The check's stable name, e.g. `no-grants`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckId::Component => "component",
            CheckId::World => "world",
            CheckId::Imports => "imports",
            CheckId::Capabilities => "capabilities",
            CheckId::Loads => "loads",
            CheckId::Deterministic => "deterministic",
            CheckId::Names => "names",
            CheckId::Descriptions => "descriptions",
            CheckId::Schemas => "schemas",
            CheckId::Arguments => "arguments",
            CheckId::Results => "results",
            CheckId::Catalog => "catalog",
            CheckId::NoGrants => "no-grants",
            CheckId::Stdout => "stdout",
        }
    }

    /// What the check requires, in a short phrase.
    pub fn title(self) -> &'static str {
        match self {
            CheckId::Component => "a WebAssembly component, not a core module",
            CheckId::World => "implements a toolhost:plugin world version the host serves",
            CheckId::Imports => "imports only interfaces the host provides",
            CheckId::Capabilities => "declared capabilities match the imports",
            CheckId::Loads => "the host loads it under the limits",
            CheckId::Deterministic => "list-tools is the same in fresh instances",
            CheckId::Names => "tool names follow the rule, are unique and not reserved",
            CheckId::Descriptions => "every tool has a description",
            CheckId::Schemas => "parameter and output schemas are valid JSON Schema 2020-12 objects",
            CheckId::Arguments => "synthesized arguments never trap or time out",
            CheckId::Results => "results are JSON within the limit and fit their output schema",
            CheckId::Catalog => "prompts render, resources read and completions answer, never trapping",
            CheckId::NoGrants => "without grants, calls fail clearly, not with a trap",
            CheckId::Stdout => "nothing is written to stdout",
        }
    }

    /// The check named `name` (as [`CheckId::as_str`] gives it).
    pub fn from_name(name: &str) -> Option<CheckId> {
        CheckId::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

impl From<CheckId> for &'static str {
    fn from(id: CheckId) -> Self {
        id.as_str()
    }
}

impl std::fmt::Display for CheckId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
