//! # toolhost-conformance
//!
//! The checks a WebAssembly component must pass to be a good toolhost
//! plugin, as a library: a plugin author adds it as a dev-dependency and
//! runs it from `cargo test`; `toolhost conformance FILE…` runs the same
//! suite from the command line.
//!
//! ```no_run
//! // tests/conformance.rs of a plugin crate, after building the component:
//! let report = toolhost_conformance::Suite::new().run("target/wasm32-wasip2/release/my_plugin.wasm");
//! report.assert_passed(); // panics with the human report if any check failed
//! ```
//!
//! Each check is a named unit ([`CheckId`]) that reports
//! [passed, failed or skipped](Status), what it tried, and, for each
//! problem, the tool concerned and how to fix it. The checks, in the order
//! they run:
//!
//! | check | family | passes when |
//! |---|---|---|
//! | `component` | [`artifact`](checks::artifact) | the bytes are a WebAssembly component, not a core module |
//! | `world` | [`artifact`](checks::artifact) | it exports the tool interface of a world version the host serves |
//! | `imports` | [`artifact`](checks::artifact) | it imports only interfaces the host provides |
//! | `capabilities` | [`capabilities`](checks::capabilities) | its declared capabilities (sections, and `declare()` from 0.2.0) match its imports, both ways |
//! | `loads` | [`listing`](checks::listing) | the host loads it under the suite's limits (the defaults unless set) and grants |
//! | `deterministic` | [`listing`](checks::listing) | `list-tools` (and `declare`) give the same answers in fresh instances |
//! | `names` | [`listing`](checks::listing) | tool names follow the registry's rule, are unique and not reserved |
//! | `descriptions` | [`listing`](checks::listing) | every tool has a non-empty description |
//! | `schemas` | [`listing`](checks::listing) | every parameter and output schema is valid JSON Schema 2020-12, local, describing an object |
//! | `arguments` | [`calls`](checks::calls) | arguments synthesized from each schema give results or `invalid_arguments`, never traps or timeouts |
//! | `results` | [`calls`](checks::calls) | results are JSON within the output limit, fitting their output schema |
//! | `no-grants` | [`calls`](checks::calls) | without grants, calls fail with a clear error, not a trap |
//! | `stdout` | [`calls`](checks::calls) | the component writes nothing to stdout |
//!
//! A check that cannot run because an earlier one failed (no calls are made
//! to a component the host refuses) is skipped, saying why.
#![deny(missing_docs)]

pub mod checks;
mod junit;
mod report;
mod suite;
pub mod synth;

pub use checks::CheckId;
pub use junit::junit_xml;
pub use report::{CheckReport, Problem, Report, Status, human_summary};
pub use suite::Suite;
