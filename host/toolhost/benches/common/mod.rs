//! What the benchmark binaries share: their settings, read from the
//! environment. (A folder, not `benches/common.rs`, so that Cargo does not
//! take it for a benchmark of its own.)

#![allow(dead_code, reason = "each benchmark uses a part")]

/// `name` from the environment, parsed; `default` when it is unset or does
/// not parse.
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `name` from the environment as numbers separated by commas (those that
/// do not parse are left out); `default` when it is unset.
pub fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(name).ok().map_or_else(
        || default.to_vec(),
        |v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
    )
}
