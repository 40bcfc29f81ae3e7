//! The CNCF WebAssembly OCI artifact layout (TAG Runtime's "Wasm OCI
//! Artifact" format, as `wkg oci push` writes it): an OCI image manifest
//! whose config has the media type [`CONFIG_MEDIA_TYPE`] and whose one layer
//! is the component, [`LAYER_MEDIA_TYPE`].
//!
//! The config is written here rather than by the `oci-wasm` crate: that
//! crate pins an older `oci-client`, defaults to native TLS, and parses the
//! component's WIT with `wit-component` (another `wasmparser` version) only
//! to list its top-level import and export names, which `wasmparser` gives
//! directly.

use serde::{Deserialize, Serialize};

use crate::error::{DistributionError, ErrorKind, Result};

/// The media type of the config blob.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The media type of the component layer.
pub const LAYER_MEDIA_TYPE: &str = "application/wasm";
/// The `architecture` of every Wasm artifact.
pub const ARCHITECTURE: &str = "wasm";
/// The `os` of a component (`wasip1` is a core module's).
pub const COMPONENT_OS: &str = "wasip2";

/// The config blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When the artifact was made (RFC 3339).
    pub created: String,
    /// Who made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The layers' digests, in manifest order.
    pub layer_digests: Vec<String>,
    /// The component's top-level imports and exports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentInfo>,
}

/// A component's top-level interface names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentInfo {
    /// What it exports, e.g. `toolhost:plugin/tool@0.1.0`.
    pub exports: Vec<String>,
    /// What it imports, e.g. `wasi:cli/environment@0.2.0`.
    pub imports: Vec<String>,
    /// The world it targets, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl WasmConfig {
    /// The config of the component in `bytes`, whose layer has the digest
    /// `layer_digest`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotWasm`] when `bytes` are not a WebAssembly component.
    pub fn for_component(bytes: &[u8], layer_digest: String) -> Result<WasmConfig> {
        Ok(WasmConfig {
            created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            author: None,
            architecture: ARCHITECTURE.into(),
            os: COMPONENT_OS.into(),
            layer_digests: vec![layer_digest],
            component: Some(component_info(bytes)?),
        })
    }
}

/// Refuses bytes that are not a component, naming what they are instead.
///
/// # Errors
///
/// [`ErrorKind::NotWasm`].
pub fn check_component(bytes: &[u8]) -> Result<()> {
    if wasmparser::Parser::is_component(bytes) {
        return Ok(());
    }
    let what = if wasmparser::Parser::is_core_wasm(bytes) {
        "a core WebAssembly module, not a component (build it for wasm32-wasip2)"
    } else {
        "not WebAssembly"
    };
    Err(DistributionError::new(
        ErrorKind::NotWasm,
        format!("the file is {what}; only components can be pushed"),
    ))
}

fn component_info(bytes: &[u8]) -> Result<ComponentInfo> {
    use wasmparser::Payload;
    check_component(bytes)?;
    let invalid = |e: wasmparser::BinaryReaderError| {
        DistributionError::new(ErrorKind::NotWasm, format!("the component cannot be read: {e}"))
    };
    let mut info = ComponentInfo::default();
    // Only the outer component's names: nested modules and components are
    // entered (depth + 1) and left at their `End`.
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(bytes) {
        match payload.map_err(invalid)? {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 0 => {
                for import in reader {
                    info.imports.push(import.map_err(invalid)?.name.name.to_string());
                }
            }
            Payload::ComponentExportSection(reader) if depth == 0 => {
                for export in reader {
                    info.exports.push(export.map_err(invalid)?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(info)
}
