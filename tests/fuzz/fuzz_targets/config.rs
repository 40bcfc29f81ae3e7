//! The `toolhost.toml` parser (see `toolhost_fuzz::config`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolhost_fuzz::config(data));
