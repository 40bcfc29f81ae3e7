//! The evaluator's tests: one binary, one module per area.

// Tests are allowed to panic; the panic lints in Cargo.toml guard library code.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod common;

mod arithmetic;
mod errors;
mod limits;
mod no_panic;
