//! The shared set-up: see the `toolhost-test-support` crate.

pub use toolhost_test_support::*;
