//! Shared set-up for the integration tests and the benchmarks: builds the
//! plugins the tests use (once per process, with cargo's own locking across
//! processes) and hands out their paths.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Every plugin crate under `plugins/`, as package names.
pub const PLUGINS: &[&str] = &[
    "hello",
    "calc",
    "spin",
    "hog",
    "deep",
    "panic",
    "huge",
    "counter",
    "caller",
    "probe",
    "sleepy",
    "bad-name",
    "dup-name",
    "missing-import",
    "command-hello",
    "files",
    "memory",
    "time",
    "http-plugin",
    "chatty",
    "claims",
    "handmade",
    "stepper",
    "fickle",
    "bad-schema",
    "mismatch",
    "needs-grant",
    "wrong-error",
    "liar",
    "bad-output",
    "codemode",
];

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    // The toolhost crate is host/toolhost/.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/toolhost/ has two ancestors")
        .to_path_buf()
}

/// The folder the plugins are built into. A separate target folder, so that
/// building them from inside `cargo test` never waits on the outer build.
pub fn plugin_target_dir() -> PathBuf {
    workspace_root().join("target").join("plugins")
}

/// Builds every plugin for `wasm32-wasip2` (once per process) and returns the
/// folder holding the `.wasm` files. Panics with cargo's output if the build
/// fails: a test must never run without the plugins it needs.
pub fn build_plugins() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.current_dir(workspace_root())
            .env("CARGO_TARGET_DIR", plugin_target_dir())
            .args(["build", "--quiet", "--target", "wasm32-wasip2", "--profile", "plugin"]);
        // Qualified by version: a crates.io package may share a plugin's
        // name (codemode's dependencies bring in `spin`).
        for p in PLUGINS {
            cmd.args(["-p", &format!("{p}@{}", env!("CARGO_PKG_VERSION"))]);
        }
        let out = cmd.output().expect("cannot run cargo to build the plugins");
        assert!(
            out.status.success(),
            "building the plugins failed (is the wasm32-wasip2 target installed? `rustup target add wasm32-wasip2`):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        plugin_target_dir().join("wasm32-wasip2").join("plugin")
    })
}

/// The path of plugin `name`'s component (building the plugins first).
pub fn plugin_path(name: &str) -> PathBuf {
    let file = match name {
        "command-hello" => "command-hello.wasm".to_string(),
        other => format!("{}.wasm", other.replace('-', "_")),
    };
    let path = build_plugins().join(file);
    assert!(
        path.exists(),
        "plugin {name} was built but {} is missing",
        path.display()
    );
    path
}

/// The bytes of plugin `name`'s component.
pub fn plugin_bytes(name: &str) -> Vec<u8> {
    std::fs::read(plugin_path(name)).expect("read plugin")
}

/// The path of a frozen component in `tests/data/frozen/` (bytes built once
/// against an older world version and checked in; never rebuilt).
pub fn frozen(file: &str) -> PathBuf {
    workspace_root()
        .join("tests")
        .join("data")
        .join("frozen")
        .join(file)
}

/// The folder the MCP peers are installed in by `tests/peers/install-mcp`.
pub fn peers_dir() -> PathBuf {
    workspace_root().join("target").join("peers")
}

fn peer(relative: &str, what: &str) -> PathBuf {
    let path = peers_dir().join(relative);
    assert!(
        path.exists(),
        "{what} is not installed at {}: run tests/peers/install-mcp (tests/setup runs it)",
        path.display()
    );
    path
}

/// The `mcp-server-everything` binary (npm `@modelcontextprotocol/server-everything`).
pub fn server_everything() -> PathBuf {
    peer(
        "node_modules/.bin/mcp-server-everything",
        "@modelcontextprotocol/server-everything",
    )
}

/// The venv python that has the `mcp` SDK (PyPI `mcp`).
pub fn peer_python() -> PathBuf {
    peer("venv/bin/python", "the Python mcp SDK")
}

/// The path of a script in `tests/peers/`.
pub fn peer_script(name: &str) -> PathBuf {
    workspace_root().join("tests").join("peers").join(name)
}

/// The `toolhost` binary under test.
pub fn toolhost_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_toolhost"))
}

/// The compile cache folder the tests share (so `toolhost serve` in a test
/// does not recompile the plugins).
pub fn cache_dir() -> PathBuf {
    workspace_root().join("target").join("test-compile-cache")
}
