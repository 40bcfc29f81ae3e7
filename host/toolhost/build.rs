//! Bundles toolhost's standard plugins (files, memory, time, calc, http)
//! into the library, so that `toolhost serve` serves them with no config
//! and no plugin build of the user's (feature `bundled`, on by default).
//!
//! Built from the repository: the plugins' crates are built for
//! `wasm32-wasip2` (profile `plugin`) into `target/plugins/`, where
//! `plugins/build` and the tests build them too, so one build serves all
//! three; the components are then copied into `OUT_DIR` and embedded. A
//! packaged crate has no `plugins/` folder: it is built without them
//! (`toolhost::standard` says so at run time), unless
//! `TOOLHOST_BUNDLE_DIR` names a folder holding the built components.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The standard plugins: (package, component file).
const STANDARD: [(&str, &str); 5] = [
    ("files", "files.wasm"),
    ("memory", "memory.wasm"),
    ("time", "time.wasm"),
    ("calc", "calc.wasm"),
    ("http-plugin", "http_plugin.wasm"),
];

fn main() {
    println!("cargo::rustc-check-cfg=cfg(toolhost_bundled)");
    println!("cargo::rerun-if-env-changed=TOOLHOST_BUNDLE_DIR");
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_FEATURE_BUNDLED").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let built = match std::env::var_os("TOOLHOST_BUNDLE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
            let workspace = manifest.join("../..");
            if !workspace.join("plugins/files/Cargo.toml").is_file() {
                // A packaged crate: nothing to build the plugins from.
                println!(
                    "cargo::warning=toolhost is built without its standard plugins (no plugins/ folder next to it, and TOOLHOST_BUNDLE_DIR is not set)"
                );
                return;
            }
            build_standard(&workspace, &out)
        }
    };
    for (_, file) in STANDARD {
        let from = built.join(file);
        std::fs::copy(&from, out.join(file))
            .unwrap_or_else(|e| panic!("cannot copy the standard plugin {}: {e}", from.display()));
    }
    println!("cargo::rustc-cfg=toolhost_bundled");
}

/// Builds the standard plugins of the repository at `workspace`; returns
/// the folder holding their components.
fn build_standard(workspace: &Path, out: &Path) -> PathBuf {
    for (package, _) in STANDARD {
        let folder = if package == "http-plugin" { "http" } else { package };
        println!(
            "cargo::rerun-if-changed={}",
            workspace.join("plugins").join(folder).display()
        );
    }
    for path in ["sdk", "wit", "plugins/calc-eval", "Cargo.lock"] {
        println!("cargo::rerun-if-changed={}", workspace.join(path).display());
    }
    // Shared with `plugins/build` and the tests; but never the target
    // folder this build runs in (its lock is held: a nested build there
    // would wait for ever).
    let shared = workspace.join("target/plugins");
    let target = if out.starts_with(&shared) {
        out.join("plugins-target")
    } else {
        shared
    };
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets it");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(workspace)
        .args([
            "build",
            "--quiet",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "plugin",
        ])
        .env("CARGO_TARGET_DIR", &target);
    for (package, _) in STANDARD {
        command.args(["-p", &format!("{package}@{version}")]);
    }
    // This build's own settings are for the host, not for the guests.
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        command.env_remove(var);
    }
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the standard plugins: {e}"));
    assert!(
        status.success(),
        "building toolhost's standard plugins for wasm32-wasip2 failed (see above). Install the target with `rustup target add wasm32-wasip2`, or build toolhost without them: `--no-default-features --features cli`"
    );
    target.join("wasm32-wasip2/plugin")
}
