//! # toolhost-test-support
//!
//! What the workspace's tests and benchmarks share: building the plugins
//! the tests use (once per process, with cargo's own locking across
//! processes) and handing out their paths, the peers' paths, the `toolhost`
//! binary under test, and the built-in tools of the registry tests
//! ([`registry`]). A crate of its own, so that no test includes another's
//! files by path.

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
    "abort",
    "fickle",
    "bad-schema",
    "mismatch",
    "needs-grant",
    "wrong-error",
    "liar",
    "bad-output",
    "codemode",
    "showcase",
    "nosy",
    "broken-server",
    "mcp-conformance",
    "bad-structured",
];

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    // This crate is tests/support/.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("tests/support/ has two ancestors")
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

/// The `toolhost` binary under test: the one cargo built beside the
/// running test or benchmark (`target/PROFILE/deps/NAME-HASH` runs, and
/// `target/PROFILE/toolhost` is the binary).
pub fn toolhost_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the running test's path");
    let profile = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test runs from target/PROFILE/deps/");
    let bin = profile.join("toolhost");
    assert!(
        bin.exists(),
        "{} is not built: run the tests with cargo, which builds it",
        bin.display()
    );
    bin
}

/// The compile cache folder the tests share (so `toolhost serve` in a test
/// does not recompile the plugins).
pub fn cache_dir() -> PathBuf {
    workspace_root().join("target").join("test-compile-cache")
}

/// A plugin written in Python or JavaScript, and how to build it.
#[derive(Debug)]
pub struct Polyglot {
    /// Its name, which names the built file.
    pub name: &'static str,
    /// The command that builds it (relative to the workspace root) and its
    /// arguments; the output path is appended.
    pub build: &'static [&'static str],
    /// The files and folders (relative to the workspace root) whose contents
    /// make the component: sources, helper library, WIT, and the script that
    /// pins the toolchain's version.
    pub inputs: &'static [&'static str],
}

/// The Python example plugin (`examples/python-plugin`), built with its build script.
pub const PYTHON_EXAMPLE: Polyglot = Polyglot {
    name: "python-plugin",
    build: &["examples/python-plugin/build"],
    inputs: &[
        "examples/python-plugin",
        "sdk/python",
        "wit/0.3.1",
        "tests/peers/install-plugin-toolchains",
    ],
};

/// A Python plugin whose tool raises past the helper and traps
/// (`tests/data/python-trap`).
pub const PYTHON_TRAP: Polyglot = Polyglot {
    name: "python-trap",
    build: &["sdk/python/componentize", "tests/data/python-trap", "app"],
    inputs: &[
        "tests/data/python-trap",
        "sdk/python",
        "wit/0.3.1",
        "tests/peers/install-plugin-toolchains",
    ],
};

/// The JavaScript example plugin (`examples/js-plugin`), built with its build script.
pub const JS_EXAMPLE: Polyglot = Polyglot {
    name: "js-plugin",
    build: &["examples/js-plugin/build"],
    inputs: &[
        "examples/js-plugin",
        "sdk/js",
        "wit/0.3.1",
        "tests/peers/install-plugin-toolchains",
    ],
};

/// A Python plugin without the helper library (`tests/data/polyglot/python-raw`).
pub const PYTHON_RAW: Polyglot = Polyglot {
    name: "python-raw",
    build: &["sdk/python/componentize", "tests/data/polyglot/python-raw", "app"],
    inputs: &[
        "tests/data/polyglot/python-raw",
        "sdk/python",
        "wit/0.3.1",
        "tests/peers/install-plugin-toolchains",
    ],
};

/// A JavaScript plugin without the helper library, importing nothing of the
/// host's (`tests/data/polyglot/js-raw`).
pub const JS_RAW: Polyglot = Polyglot {
    name: "js-raw",
    build: &["sdk/js/componentize", "tests/data/polyglot/js-raw/plugin.js"],
    inputs: &[
        "tests/data/polyglot/js-raw",
        "sdk/js",
        "wit/0.3.1",
        "tests/peers/install-plugin-toolchains",
    ],
};

/// The blake3 hash of `inputs` (every file under them, by relative path and
/// contents, in a fixed order), as 16 hex digits.
fn inputs_hash(inputs: &[&str]) -> String {
    fn add(hasher: &mut blake3::Hasher, root: &Path, path: &Path) {
        let relative = path.strip_prefix(root).unwrap_or(path);
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
                .unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
                .map(|e| e.expect("a directory entry").path())
                .filter(|p| p.file_name().is_none_or(|n| n != "__pycache__"))
                .collect();
            entries.sort();
            for entry in entries {
                add(hasher, root, &entry);
            }
        } else {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
            hasher.update(relative.to_string_lossy().as_bytes());
            hasher.update(&[0]);
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
    }
    let root = workspace_root();
    let mut hasher = blake3::Hasher::new();
    for input in inputs {
        add(&mut hasher, &root, &root.join(input));
    }
    hasher.finalize().to_hex()[..16].to_string()
}

/// Builds `plugin` (once per process, and only when its inputs changed since
/// the last build on this machine: the component is kept under
/// `target/polyglot/`, named by the hash of its inputs, since componentize-py
/// and jco take 10-40 s) and returns its path. Panics with the build's output
/// if it fails: a test must never run without the plugins it needs.
pub fn polyglot(plugin: &Polyglot) -> PathBuf {
    // One build at a time: each toolchain takes hundreds of MB and a core.
    static BUILT: std::sync::Mutex<Vec<(&'static str, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, path)) = built.iter().find(|(name, _)| *name == plugin.name) {
        return path.clone();
    }
    let dir = workspace_root().join("target").join("polyglot");
    let path = dir.join(format!("{}-{}.wasm", plugin.name, inputs_hash(plugin.inputs)));
    if !path.exists() {
        std::fs::create_dir_all(&dir).expect("create target/polyglot");
        // Built beside, then renamed: another process building the same
        // plugin at once never sees half a file.
        let partial = dir.join(format!("{}.{}.partial.wasm", plugin.name, std::process::id()));
        let out = Command::new(workspace_root().join(plugin.build[0]))
            .args(&plugin.build[1..])
            .arg(&partial)
            .current_dir(workspace_root())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", plugin.build[0]));
        assert!(
            out.status.success() && partial.exists(),
            "building {} failed (are the toolchains installed? tests/setup installs them):\nstdout: {}\nstderr: {}",
            plugin.name,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&partial, &path).expect("move the built component into place");
        // Earlier builds of the same plugin are stale now.
        let prefix = format!("{}-", plugin.name);
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&prefix) && name.ends_with(".wasm") && entry.path() != path {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    built.push((plugin.name, path.clone()));
    path
}

pub mod registry;
