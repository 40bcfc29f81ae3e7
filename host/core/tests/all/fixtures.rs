//! The registry tests' built-in tools: see `toolhost_test_support::registry`.

pub use toolhost_test_support::registry::*;
