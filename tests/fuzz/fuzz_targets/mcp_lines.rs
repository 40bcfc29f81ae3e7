//! JSON-RPC lines into the MCP server over the stdio framing
//! (see `toolhost_fuzz::mcp_lines`). Needs the plugins built (`plugins/build`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: {
        toolhost_fuzz::fuzz_fixtures();
    },
    |data: &[u8]| toolhost_fuzz::mcp_lines(toolhost_fuzz::fuzz_fixtures(), data)
);
