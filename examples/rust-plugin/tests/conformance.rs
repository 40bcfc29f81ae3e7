//! `cargo test` builds this plugin as a WebAssembly component and runs
//! toolhost's conformance suite on it: the test fails, printing the suite's
//! report (each check, what it tried, and how to fix what failed), unless
//! the component is a good toolhost plugin.

use std::path::PathBuf;
use std::process::Command;

/// Builds the component (`cargo build --release --target wasm32-wasip2`)
/// in a target folder of its own, so that the build never waits for the
/// `cargo test` running this, and returns its path.
fn build_component() -> PathBuf {
    let target_dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("component");
    let out = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .args(["--package", env!("CARGO_PKG_NAME")])
        .output()
        .expect("cannot run cargo");
    assert!(
        out.status.success(),
        "building the component failed (is the target installed? `rustup target add wasm32-wasip2`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = format!("{}.wasm", env!("CARGO_PKG_NAME").replace('-', "_"));
    target_dir.join("wasm32-wasip2").join("release").join(file)
}

#[test]
fn the_component_passes_toolhost_conformance() {
    let component = build_component();
    toolhost_conformance::Suite::new().run(&component).assert_passed();
}
