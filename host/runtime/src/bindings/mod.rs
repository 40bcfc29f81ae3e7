//! # Bindings of the released WIT worlds
//!
//! One module per released version of the `toolhost:plugin` world, generated
//! by wasmtime's `bindgen!` from `wit/`. Released versions are frozen; only
//! the newest holds logic, older ones will convert into it.

pub mod v0_1_0;

/// The `toolhost:plugin` world versions this host serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum WorldVersion {
    /// `toolhost:plugin/plugin@0.1.0`.
    V0_1_0,
}

impl WorldVersion {
    /// Every served version, newest last.
    pub const ALL: &'static [WorldVersion] = &[WorldVersion::V0_1_0];

    /// The name of the interface a component of this version exports.
    pub fn tool_export(self) -> &'static str {
        match self {
            WorldVersion::V0_1_0 => "toolhost:plugin/tool@0.1.0",
        }
    }

    /// The world's full name, e.g. `toolhost:plugin/plugin@0.1.0`.
    pub fn world_name(self) -> &'static str {
        match self {
            WorldVersion::V0_1_0 => "toolhost:plugin/plugin@0.1.0",
        }
    }

    /// The version number, e.g. `0.1.0`.
    pub fn version(self) -> &'static str {
        match self {
            WorldVersion::V0_1_0 => "0.1.0",
        }
    }

    /// The version whose tool interface is exported under `name`, if any.
    pub fn from_export(name: &str) -> Option<WorldVersion> {
        WorldVersion::ALL
            .iter()
            .copied()
            .find(|v| v.tool_export() == name)
    }
}
