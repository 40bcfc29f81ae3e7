//! # The standard plugins, bundled
//!
//! toolhost's standard plugins come with the library (feature `bundled`,
//! on by default, built from the repository's `plugins/` by the build
//! script): `toolhost serve` serves them with no config file and no plugin
//! build of the user's, and a config names one with `bundled = "NAME"`
//! instead of a `path`:
//!
//! | name | tools | declares |
//! |---|---|---|
//! | `files` | `list_files`, `file_info`, `read_file`, `code_read`, `write_file`, `move_file`, `delete_file`, `glob_files`, `grep` | dir `/workspace` |
//! | `memory` | `memory_create`, `memory_update`, `memory_get`, `memory_search`, `memory_delete`, `memory_list_titles` | dir `/memory` |
//! | `time` | `current_datetime` | env `TZ` |
//! | `calc` | `calculate_expression` | nothing |
//! | `http` | `http_request` | `http *`, `secret *` |
//!
//! They are admitted as every plugin is ([`crate::admission`]), with the
//! grants the config gives them; their identity is fixed when the library
//! is built, so they need no signature ([`SignatureStatus::Bundled`](crate::distribution::SignatureStatus::Bundled)).
//! [`STANDARD_CONFIG`] is the config `toolhost serve` uses when it is given
//! none: the five, with the safe grants of the repository's `toolhost.toml`.
//!
//! ```
//! let names: Vec<&str> = toolhost::standard::plugins().iter().map(|p| p.name).collect();
//! if toolhost::standard::is_bundled() {
//!     assert_eq!(names, ["files", "memory", "time", "calc", "http"]);
//! }
//! ```

/// One bundled plugin.
#[derive(Debug, Clone, Copy)]
pub struct StandardPlugin {
    /// Its name, as `bundled = "NAME"` gives it (and its toolset).
    pub name: &'static str,
    /// Its component.
    pub bytes: &'static [u8],
}

#[cfg(toolhost_bundled)]
const PLUGINS: &[StandardPlugin] = &[
    StandardPlugin {
        name: "files",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/files.wasm")),
    },
    StandardPlugin {
        name: "memory",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/memory.wasm")),
    },
    StandardPlugin {
        name: "time",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/time.wasm")),
    },
    StandardPlugin {
        name: "calc",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/calc.wasm")),
    },
    StandardPlugin {
        name: "http",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/http_plugin.wasm")),
    },
];

#[cfg(not(toolhost_bundled))]
const PLUGINS: &[StandardPlugin] = &[];

/// The bundled plugins (none in a build without them).
pub fn plugins() -> &'static [StandardPlugin] {
    PLUGINS
}

/// Whether this build bundles the standard plugins.
pub fn is_bundled() -> bool {
    !PLUGINS.is_empty()
}

/// The bundled plugin `name`.
///
/// # Errors
///
/// `config` naming the bundled plugins, or saying this build has none.
pub fn get(name: &str) -> crate::Result<&'static StandardPlugin> {
    use crate::error::{Error, ErrorCode};
    if !is_bundled() {
        return Err(Error::new(
            ErrorCode::Config,
            format!(
                "bundled = {name:?}: this toolhost was built without its standard plugins (feature `bundled`, built from the repository); give the component's `path` instead"
            ),
        ));
    }
    PLUGINS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PLUGINS.iter().map(|p| p.name).collect();
        Error::new(
            ErrorCode::Config,
            format!(
                "bundled = {name:?}: no such standard plugin; the bundled ones are {}",
                names.join(", ")
            ),
        )
    })
}

/// The config `toolhost serve` (and every command that reads a config)
/// uses when it is given none and finds no `toolhost.toml`: the standard
/// plugins with the repository's default grants, exec behind the approval
/// gate, storage in `.toolhost/` under the working directory. The
/// repository's `toolhost.toml` is this text.
pub const STANDARD_CONFIG: &str = include_str!("standard.toml");
