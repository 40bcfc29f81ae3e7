//! The SDK's JSON reader against serde_json (see `toolhost_fuzz::json_read`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolhost_fuzz::json_read(data));
