//! Component loading: arbitrary and mutated component bytes
//! (see `toolhost_fuzz::load_component`). Needs the plugins built (`plugins/build`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: {
        toolhost_fuzz::fuzz_fixtures();
    },
    |data: &[u8]| toolhost_fuzz::load_component(toolhost_fuzz::fuzz_fixtures(), data)
);
