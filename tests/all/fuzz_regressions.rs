//! The fuzz targets' properties (`tests/fuzz/src/lib.rs`) over their
//! committed seeds and every input a fuzzer ever failed on
//! (`tests/fuzz/regressions/TARGET/`), without a fuzzer: a crash found once
//! stays a test. `tests/fuzz/run` runs the fuzzers themselves.

use std::path::PathBuf;

use crate::support;

#[path = "../fuzz/src/lib.rs"]
mod harness;

fn folders() -> [PathBuf; 2] {
    let fuzz = support::workspace_root().join("tests").join("fuzz");
    [fuzz.join("seeds"), fuzz.join("regressions")]
}

/// Replays `target`'s seeds and regressions through `run`; at least one
/// input must exist, so that a renamed folder cannot pass by running none.
fn replay(target: &str, run: impl Fn(&[u8])) {
    let ran: usize = folders()
        .iter()
        .map(|dir| harness::replay(dir, target, &run))
        .sum();
    assert!(ran > 0, "no saved inputs for fuzz target {target}");
}

fn fixtures() -> &'static harness::Fixtures {
    // The harness finds the plugins where the set-up builds them.
    support::build_plugins();
    harness::fixtures(&harness::plugin_dir(), Some(&support::cache_dir()))
}

#[test]
fn detector_inputs() {
    replay("detector", harness::detector);
}

#[test]
fn config_inputs() {
    replay("config", harness::config);
}

#[test]
fn mcp_lines_inputs() {
    replay("mcp_lines", |data| harness::mcp_lines(fixtures(), data));
}

#[test]
fn load_component_inputs() {
    replay("load_component", |data| harness::load_component(fixtures(), data));
}

#[test]
fn tool_arguments_inputs() {
    replay("tool_arguments", |data| harness::tool_arguments(fixtures(), data));
}

#[test]
fn json_read_inputs() {
    replay("json_read", harness::json_read);
}
