//! toolhost-core's integration tests: the registry, toolsets, the dispatch
//! pipeline and lazy mode, with built-in tools only (no WebAssembly: `cargo
//! test -p toolhost-core` builds no wasmtime). The tests that need
//! components are in the workspace's `tests/all`.

mod catalog;
mod dispatch;
mod fixtures;
mod lazy;
mod registry;
mod spans;
mod toolsets;
