//! The artifact family: `component`, `world` and `imports`, read from the
//! bytes alone (the top-level sections of the component), before anything
//! is compiled, so that each is judged even when the host would refuse the
//! component for another reason.

use toolhost_runtime::bindings::WorldVersion;
use toolhost_runtime::component::check_header;
use wasmparser::{ComponentExternalKind, ComponentTypeRef, Parser, Payload};

use super::CheckId;
use crate::report::{CheckReport, Problem, count};

/// What a component's top level says it imports and exports.
#[derive(Debug, Clone, Default)]
pub(crate) struct Artifact {
    /// Its exports' names.
    pub exports: Vec<String>,
    /// Its imports: name, and whether it is an interface (an instance).
    pub imports: Vec<(String, bool)>,
}

impl Artifact {
    /// Whether it imports interface `iface` (`ns:pkg/name`, any version).
    pub fn imports_interface(&self, iface: &str) -> bool {
        self.imports
            .iter()
            .any(|(name, _)| name.split('@').next() == Some(iface))
    }
}

/// `component`: the bytes are a component whose top level can be read.
pub(crate) fn component(bytes: &toolhost_core::error::Result<Vec<u8>>) -> (CheckReport, Option<Artifact>) {
    let bytes = match bytes {
        Ok(bytes) => bytes,
        Err(e) => {
            let problem = Problem::component(
                e.with_causes(),
                "give the path of a .wasm file (a regular file, within the size cap) that exists and is readable",
            );
            return (
                CheckReport::ran(CheckId::Component, "read the file", vec![problem]),
                None,
            );
        }
    };
    let tried = format!("read the header and top-level sections of {} bytes", bytes.len());
    if let Err(e) = check_header(bytes) {
        let fix = if wasmparser::Parser::is_core_wasm(bytes) {
            "build for the wasm32-wasip2 target (`cargo build --target wasm32-wasip2`), which makes a component, or wrap the module with `wasm-tools component new`"
        } else {
            "give the component's .wasm file (for Rust: target/wasm32-wasip2/release/NAME.wasm)"
        };
        let problem = Problem::component(e.message().to_string(), fix);
        return (CheckReport::ran(CheckId::Component, tried, vec![problem]), None);
    }
    match top_level(bytes) {
        Ok(artifact) => (
            CheckReport::ran(CheckId::Component, tried, Vec::new()),
            Some(artifact),
        ),
        Err(e) => {
            let problem = Problem::component(
                format!("the component cannot be read: {e}"),
                "rebuild it; the file may be truncated or made by a broken tool",
            );
            (CheckReport::ran(CheckId::Component, tried, vec![problem]), None)
        }
    }
}

/// Reads the names of the top-level imports and exports.
fn top_level(bytes: &[u8]) -> Result<Artifact, wasmparser::BinaryReaderError> {
    let mut artifact = Artifact::default();
    // Nested modules and components have sections of their own; only the
    // outermost component's imports and exports are the plugin's.
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    let import = import?;
                    let is_interface = matches!(import.ty, ComponentTypeRef::Instance(_));
                    artifact
                        .imports
                        .push((import.name.name.to_string(), is_interface));
                }
            }
            Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    let export = export?;
                    if export.kind == ComponentExternalKind::Instance {
                        artifact.exports.push(export.name.name.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    Ok(artifact)
}

/// The tool interfaces of every served version, for messages.
fn served() -> String {
    WorldVersion::ALL
        .iter()
        .map(|v| v.tool_export())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `world`: it exports the tool interface of a served world version.
pub(crate) fn world(artifact: Option<&Artifact>) -> (CheckReport, Option<WorldVersion>) {
    let Some(artifact) = artifact else {
        return (
            CheckReport::skipped(CheckId::World, "the file is not a readable component"),
            None,
        );
    };
    let tried = format!(
        "looked for {} among its {}",
        served(),
        count(artifact.exports.len(), "exported interface")
    );
    if let Some(world) = artifact.exports.iter().find_map(|e| WorldVersion::from_export(e)) {
        return (CheckReport::ran(CheckId::World, tried, Vec::new()), Some(world));
    }
    let other_version = artifact
        .exports
        .iter()
        .find(|e| e.starts_with("toolhost:plugin/tool@"));
    let problem = match other_version {
        Some(export) => Problem::component(
            format!(
                "it exports {export}, a version this host does not serve; it serves {}",
                served()
            ),
            "build it against one of the served versions' WIT (wit/ in toolhost's sources; for Rust, the toolhost-sdk of this host)",
        ),
        None => Problem::component(
            format!(
                "it exports [{}] but not a toolhost tool interface; a plugin exports one of {}",
                artifact.exports.join(", "),
                served()
            ),
            "implement the `plugin` world of wit/ (for Rust, write the tools with toolhost-sdk's plugin! macro); a command or another world's component is not a plugin",
        ),
    };
    (CheckReport::ran(CheckId::World, tried, vec![problem]), None)
}

/// `imports`: every import is an interface the host provides to a
/// component of its world version (of any served version, when it has
/// none).
pub(crate) fn imports(artifact: Option<&Artifact>, world: Option<WorldVersion>) -> CheckReport {
    let Some(artifact) = artifact else {
        return CheckReport::skipped(CheckId::Imports, "the file is not a readable component");
    };
    let tried = format!(
        "compared its {} with the interfaces the host provides",
        count(artifact.imports.len(), "import")
    );
    let problems = artifact
        .imports
        .iter()
        .filter(|(name, is_interface)| {
            let provided = match world {
                Some(world) => toolhost_runtime::sandbox::is_provided(name, world),
                None => WorldVersion::ALL
                    .iter()
                    .any(|w| toolhost_runtime::sandbox::is_provided(name, *w)),
            };
            !is_interface || !provided
        })
        .map(|(name, is_interface)| {
            let what = if *is_interface {
                "an interface this host does not provide (or not at that version)"
            } else {
                "not an interface: a plugin may import only interfaces"
            };
            Problem::component(
                format!("it imports {name}, {what}; the host refuses to load it"),
                "remove the import (a dependency may pull it in: check which crate uses it), or target an interface version the host serves: WASI 0.2.x, and toolhost:plugin in the version of the world the component implements",
            )
        })
        .collect();
    CheckReport::ran(CheckId::Imports, tried, problems)
}
