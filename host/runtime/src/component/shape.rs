//! What a component's bytes say before anything is compiled: whether they
//! are a component at all, which world version it implements, what it
//! imports, and what its `toolhost:capabilities` sections declare. Read in
//! one pass with `wasmparser` (milliseconds even for an interpreter-sized
//! component), so that a component the host would refuse is refused before
//! a compile that can take tens of seconds.

use crate::bindings::WorldVersion;
use crate::capabilities::{Declared, SECTION};
use crate::sandbox;
use toolhost_core::error::{Error, ErrorCode, Result};

/// A component's outline, read from its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The world version it implements (by its `tool` export).
    pub(crate) world: WorldVersion,
    /// Its top-level imports, as `ns:pkg/iface@version`.
    pub(crate) imports: Vec<String>,
    /// What its `toolhost:capabilities` custom sections declare.
    pub(crate) declared: Declared,
}

impl Shape {
    /// Reads and checks the outline of the component in `bytes`.
    ///
    /// # Errors
    ///
    /// - `invalid_component`: not WebAssembly, a core module, malformed, or
    ///   a capability section that does not parse;
    /// - `unsupported_world`: it exports no `toolhost:plugin/tool` of a
    ///   served version (the message names the versions served);
    /// - `missing_imports`: it imports what the host does not provide for
    ///   its world version (all of them are listed).
    pub(crate) fn read(bytes: &[u8]) -> Result<Shape> {
        check_header(bytes)?;
        let mut imports = Vec::new();
        let mut exports = Vec::new();
        let mut declared = Declared::default();
        // Nesting depth: every module or component starts with `Version`
        // and ends with `End`; the component itself is depth 1.
        let mut depth = 0usize;
        let malformed = |e: wasmparser::BinaryReaderError| {
            Error::new(
                ErrorCode::InvalidComponent,
                format!("the component is not valid: {e}"),
            )
        };
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            match payload.map_err(malformed)? {
                wasmparser::Payload::Version { .. } => depth += 1,
                wasmparser::Payload::End(_) => depth = depth.saturating_sub(1),
                wasmparser::Payload::ComponentImportSection(reader) if depth == 1 => {
                    for import in reader {
                        imports.push(import.map_err(malformed)?.name.name.to_string());
                    }
                }
                wasmparser::Payload::ComponentExportSection(reader) if depth == 1 => {
                    for export in reader {
                        exports.push(export.map_err(malformed)?.name.name.to_string());
                    }
                }
                wasmparser::Payload::CustomSection(section) if section.name() == SECTION => {
                    declared.add_section(section.data())?;
                }
                _ => {}
            }
        }
        declared.dedup();
        let world = world_of(&exports)?;
        check_imports(world, &imports)?;
        Ok(Shape {
            world,
            imports,
            declared,
        })
    }

    /// Whether it imports `wasi:http/outgoing-handler` (in any version).
    pub(crate) fn http_imports(&self) -> Vec<&str> {
        self.imports
            .iter()
            .map(String::as_str)
            .filter(|i| i.split('@').next() == Some(crate::http::OUTGOING_HANDLER))
            .collect()
    }
}

/// The world version whose `tool` interface is among `exports`.
fn world_of(exports: &[String]) -> Result<WorldVersion> {
    if let Some(world) = exports.iter().find_map(|name| WorldVersion::from_export(name)) {
        return Ok(world);
    }
    let served: Vec<&str> = WorldVersion::ALL.iter().map(|v| v.tool_export()).collect();
    let other_version = exports
        .iter()
        .find(|e| e.starts_with("toolhost:plugin/tool@") || e.as_str() == "toolhost:plugin/tool");
    let message = match other_version {
        Some(name) => format!(
            "the component exports {name}, a version of the toolhost plugin world this host does not serve; it serves versions {} (exports {}); build the plugin against one of those (wit/<version>/ in toolhost's sources), or upgrade the host",
            WorldVersion::served(),
            served.join(" or ")
        ),
        None => format!(
            "the component does not implement a toolhost plugin world: it exports [{}], but a plugin must export {} (served versions: {}); build it against wit/<version>/ (for Rust, with toolhost-sdk)",
            exports.join(", "),
            served.join(" or "),
            WorldVersion::served()
        ),
    };
    Err(Error::new(ErrorCode::UnsupportedWorld, message))
}

/// Refuses imports the host does not provide for `world`.
fn check_imports(world: WorldVersion, imports: &[String]) -> Result<()> {
    let missing: Vec<&str> = imports
        .iter()
        .map(String::as_str)
        .filter(|name| !sandbox::is_provided(name, world))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let other_toolhost: Vec<&str> = missing
        .iter()
        .copied()
        .filter(|m| m.starts_with("toolhost:plugin/"))
        .collect();
    let hint = if other_toolhost.is_empty() {
        "remove those imports (for WASI, use the interfaces of WASI 0.2; jco: leave out unused features with `-d`, e.g. `-d http`; componentize-py: target a world without them, such as wit/0.3.0's `plugin-wasi`) or ask for a host that provides them"
            .to_string()
    } else {
        format!(
            "a component of {world} imports the toolhost:plugin interfaces of that version only ({}); build every part of it against the same wit/{}/",
            world
                .imports()
                .iter()
                .map(|i| format!("toolhost:plugin/{i}@{}", world.version()))
                .collect::<Vec<_>>()
                .join(", "),
            world.version()
        )
    };
    Err(Error::new(
        ErrorCode::MissingImports,
        format!(
            "the component imports interfaces this host does not provide: {}; {hint}",
            missing.join(", ")
        ),
    ))
}

/// Checks that `bytes` are a WebAssembly component, before anything is
/// compiled.
///
/// # Errors
///
/// `invalid_component`, saying whether the bytes are a core module (and how
/// to make a component of it) or not WebAssembly at all.
pub fn check_header(bytes: &[u8]) -> Result<()> {
    if wasmparser::Parser::is_component(bytes) {
        return Ok(());
    }
    let message = if wasmparser::Parser::is_core_wasm(bytes) {
        "this is a core WebAssembly module, not a component; build the plugin for the wasm32-wasip2 target (or wrap it with `wasm-tools component new`)".to_string()
    } else {
        let shown = bytes.len().min(8);
        format!(
            "these bytes are not WebAssembly: they start with {:02x?} instead of the `\\0asm` magic number",
            &bytes[..shown]
        )
    };
    Err(Error::new(ErrorCode::InvalidComponent, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_checked_before_compiling() {
        assert_eq!(
            check_header(b"garbage!").unwrap_err().code(),
            ErrorCode::InvalidComponent
        );
        let core = check_header(b"\0asm\x01\0\0\0").unwrap_err();
        assert!(
            core.message().contains("core WebAssembly module"),
            "{}",
            core.message()
        );
        assert!(check_header(b"\0asm\x0d\0\x01\0").is_ok());
        assert!(check_header(b"").is_err());
    }

    #[test]
    fn unknown_world_versions_name_the_served_ones() {
        for export in ["toolhost:plugin/tool@0.4.0", "toolhost:plugin/tool@0.1.1"] {
            let e = world_of(&[export.to_string()]).unwrap_err();
            assert_eq!(e.code(), ErrorCode::UnsupportedWorld);
            assert!(e.message().contains(export), "{}", e.message());
            assert!(
                e.message().contains("0.1.0, 0.2.0, 0.3.0, 0.3.1"),
                "{}",
                e.message()
            );
        }
        let e = world_of(&["wasi:cli/run@0.2.0".to_string()]).unwrap_err();
        assert!(e.message().contains("wasi:cli/run@0.2.0"), "{}", e.message());
    }

    #[test]
    fn mixed_world_versions_are_refused() {
        let imports = ["toolhost:plugin/host@0.1.0".to_string()];
        let e = check_imports(WorldVersion::V0_2_0, &imports).unwrap_err();
        assert_eq!(e.code(), ErrorCode::MissingImports);
        assert!(
            e.message().contains("toolhost:plugin/host@0.2.0"),
            "{}",
            e.message()
        );
        assert!(check_imports(WorldVersion::V0_1_0, &imports).is_ok());
    }
}
