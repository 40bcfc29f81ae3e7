//! Bindings of `toolhost:plugin/plugin@0.1.0`.
#![allow(missing_docs, reason = "generated code; the WIT documents every item")]

wasmtime::component::bindgen!({
    path: "../../wit/0.1.0",
    world: "toolhost:plugin/plugin",
    imports: { default: async },
    exports: { default: async },
});
