//! The shell-command detector: a verdict for every command (see
//! `toolhost_fuzz::detector`); libFuzzer's `-timeout` bounds the time.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| toolhost_fuzz::detector(data));
