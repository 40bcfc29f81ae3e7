//! Component loading: arbitrary and mutated component bytes
//! (see `toolhost_fuzz::load_component`). Needs the plugins built (`plugins/build`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    toolhost_fuzz::load_component(toolhost_fuzz::fixtures(&toolhost_fuzz::plugin_dir(), None), data)
});
