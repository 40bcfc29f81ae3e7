//! Tool arguments through dispatch into the plugins
//! (see `toolhost_fuzz::tool_arguments`). Needs the plugins built (`plugins/build`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: {
        toolhost_fuzz::fuzz_fixtures();
    },
    |data: &[u8]| toolhost_fuzz::tool_arguments(toolhost_fuzz::fuzz_fixtures(), data)
);
