//! # toolhost-sdk
//!
//! Write tools for [toolhost](https://example.invalid/toolhost) in plain Rust.
//! A tool is a function taking one argument struct; its JSON Schema and its
//! description come from the struct's type and doc comments (through
//! [`schemars`]), so nothing is written twice and no WIT is involved.
//!
//! ```ignore
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolhost_sdk::ToolError;
//!
//! /// Greets someone by name.
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! fn greet(args: Greet) -> Result<String, ToolError> {
//!     Ok(format!("Hello, {}!", args.name))
//! }
//!
//! toolhost_sdk::plugin!(greet);
//! ```
//!
//! Build with `cargo build --target wasm32-wasip2 --release`: the `.wasm` in
//! `target/wasm32-wasip2/release/` is the component toolhost loads. It
//! implements the `toolhost:plugin@0.2.0` world; `sdk/docs/rust.md` walks
//! through a plugin from an empty folder.
//!
//! ## What a tool can do
//!
//! - return any `Serialize` value (its JSON is the result), or an [`Output`]
//!   with text for the model beside the JSON;
//! - fail with a [`ToolError`] (`invalid_arguments` or `failed`);
//! - report how far it has come with [`progress`];
//! - call other tools, one at a time or many at once ([`tools`]);
//! - log into the host's log ([`log`]);
//! - use what it declared with [`capabilities!`] and was granted: files
//!   and environment variables through `std`, HTTP through `wasi:http`.
//!
//! ## What the SDK guarantees
//!
//! - The tool's name is the function's name; its description is the argument
//!   struct's doc comment; its parameters are the struct's JSON Schema, with
//!   field doc comments as property descriptions.
//! - Arguments that do not deserialize come back to the host as
//!   `invalid arguments` with serde's message, never as a trap.
//! - Any error that implements [`std::error::Error`] converts into
//!   [`ToolError::failed`] with `?`.
//! - Hints are given in the macro: `plugin!(read_file(read_only), wipe(destructive))`.
//! - What [`capabilities!`] declares is both written into the component (a
//!   `toolhost:capabilities` custom section) and answered by the world's
//!   `declare()`.
//! - No WIT type appears in the SDK's API; an author never imports
//!   `wit_bindgen`.
#![deny(missing_docs)]

// The generated bindings name this crate by its absolute path, so that the
// `plugin!` expansion in a plugin crate and the SDK itself agree.
extern crate self as toolhost_sdk;

mod error;
pub mod log;
mod output;
mod schema;
pub mod tools;

pub use error::ToolError;
pub use output::{IntoOutput, Output};

/// Tells the caller how far the current call has come: `done` units of work
/// out of `total` (when known), with an optional short `message`. `done`
/// should grow from one report to the next. The host passes reports on to
/// a caller that asked for them (an MCP client that sent a `progressToken`)
/// and caps their rate; reporting never fails and never blocks.
///
/// ```ignore
/// for (i, file) in files.iter().enumerate() {
///     toolhost_sdk::progress(i as f64, Some(files.len() as f64), Some(file));
///     // ...
/// }
/// ```
pub fn progress(done: f64, total: Option<f64>, message: Option<&str>) {
    __private::bindings::toolhost::plugin::progress::report(done, total, message);
}

/// Items used by the [`plugin!`] macro's expansion. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;

    pub use crate::schema::{invoke, spec_of};

    /// The generated bindings of the `toolhost:plugin@0.2.0` world.
    #[allow(missing_docs, reason = "generated code")]
    pub mod bindings {
        wit_bindgen::generate!({
            path: "wit/0.2.0",
            world: "toolhost:plugin/plugin",
            pub_export_macro: true,
            export_macro_name: "__export_plugin",
            default_bindings_module: "::toolhost_sdk::__private::bindings",
            runtime_path: "::toolhost_sdk::__private::wit_bindgen::rt",
        });
    }

    pub use bindings::exports::toolhost::plugin::tool::{
        Capabilities, Guest, ToolError as WitToolError, ToolOutput as WitToolOutput, ToolSpec,
    };
    pub use bindings::toolhost::plugin::types::Hints;

    /// The answer of `declare()`: parses the text [`capabilities!`]
    /// writes (one `KIND VALUE` line each), or nothing declared.
    ///
    /// [`capabilities!`]: crate::capabilities
    pub fn declared(text: &str) -> Capabilities {
        let mut caps = Capabilities {
            dirs: Vec::new(),
            env: Vec::new(),
            http: Vec::new(),
            secrets: Vec::new(),
            tools: Vec::new(),
        };
        for line in text.lines() {
            let Some((kind, value)) = line.split_once(' ') else {
                continue;
            };
            let list = match kind {
                "dir" => &mut caps.dirs,
                "env" => &mut caps.env,
                "http" => &mut caps.http,
                "secret" => &mut caps.secrets,
                "tool" => &mut caps.tools,
                _ => continue,
            };
            list.push(value.to_string());
        }
        caps
    }

    /// The declaration of a plugin without [`capabilities!`]: nothing. An
    /// inherent `declared` method, which [`capabilities!`] adds, wins over
    /// this trait's.
    ///
    /// [`capabilities!`]: crate::capabilities
    pub trait NothingDeclared {
        /// The declaration's text: empty.
        fn declared(&self) -> &'static str {
            ""
        }
    }

    /// Whether `name` is a hint `plugin!` knows; checked at compile time, so
    /// a misspelled hint is a build error rather than a guest panic.
    pub const fn hint_is_known(name: &str) -> bool {
        one_of(name, &["read_only", "destructive", "idempotent", "open_world"])
    }

    const fn one_of(name: &str, known: &[&str]) -> bool {
        let mut i = 0;
        while i < known.len() {
            let (a, b) = (known[i].as_bytes(), name.as_bytes());
            if a.len() == b.len() {
                let mut j = 0;
                while j < a.len() && a[j] == b[j] {
                    j += 1;
                }
                if j == a.len() {
                    return true;
                }
            }
            i += 1;
        }
        false
    }

    /// Parses hint identifiers given to `plugin!` (already checked by
    /// [`hint_is_known`] at compile time; unknown names are ignored).
    pub fn hints(names: &[&str]) -> Hints {
        let mut hints = Hints {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        };
        for name in names {
            match *name {
                "read_only" => hints.read_only = Some(true),
                "destructive" => hints.destructive = Some(true),
                "idempotent" => hints.idempotent = Some(true),
                "open_world" => hints.open_world = Some(true),
                _ => {}
            }
        }
        hints
    }
}

/// Declares the capabilities the plugin wants. The declaration is written
/// into the component itself (a `toolhost:capabilities` custom section) and
/// answered by its `declare()`, so it travels with the component's hash. A
/// capability is usable only when declared here **and** granted by the
/// operator in the host's config.
///
/// ```ignore
/// toolhost_sdk::capabilities! {
///     dirs: ["/workspace"],       // guest paths of directories to preopen
///     env: ["TZ"],                // environment variables to read
///     http: ["api.example.com"],  // hosts to send HTTP to (`*`, `*.example.com`)
///     secrets: ["GITHUB"],        // secrets the host may add to requests
///     tools: ["calculate_expression"], // tools to call with `tools::call`
/// }
/// ```
///
/// Every section is optional. Use it once, in the module that calls
/// [`plugin!`] (the crate root, usually).
#[macro_export]
macro_rules! capabilities {
    ($($kind:ident: [$($value:literal),* $(,)?]),* $(,)?) => {
        const _: () = {
            const TEXT: &str = concat!($($($crate::__capability_line!($kind), $value, "\n",)*)*);
            const LEN: usize = TEXT.len();
            const fn bytes() -> [u8; LEN] {
                let src = TEXT.as_bytes();
                let mut out = [0u8; LEN];
                let mut i = 0;
                while i < LEN {
                    out[i] = src[i];
                    i += 1;
                }
                out
            }
            #[unsafe(link_section = "toolhost:capabilities")]
            #[used]
            static DECLARED: [u8; LEN] = bytes();

            impl __ToolhostDeclaration {
                #[allow(dead_code, reason = "called by plugin!'s declare()")]
                fn declared(&self) -> &'static str {
                    TEXT
                }
            }
        };
    };
}

/// The declaration line's keyword for a [`capabilities!`] section.
#[doc(hidden)]
#[macro_export]
macro_rules! __capability_line {
    (dirs) => {
        "dir "
    };
    (env) => {
        "env "
    };
    (http) => {
        "http "
    };
    (secrets) => {
        "secret "
    };
    (tools) => {
        "tool "
    };
    ($other:ident) => {
        compile_error!(concat!(
            "unknown capability `",
            stringify!($other),
            "`: use dirs, env, http, secrets or tools"
        ))
    };
}

/// Exports the listed functions as the component's tools.
///
/// Each function takes one argument that implements `serde::Deserialize` and
/// `schemars::JsonSchema`, and returns `Result<T, ToolError>` where `T`
/// implements `serde::Serialize` or is an [`Output`]. Hints follow a
/// function's name in parentheses: `read_only`, `destructive`, `idempotent`,
/// `open_world`.
///
/// ```ignore
/// toolhost_sdk::plugin!(list_files(read_only, idempotent), delete_file(destructive));
/// ```
#[macro_export]
macro_rules! plugin {
    ($($tool:ident $(( $($hint:ident),* $(,)? ))?),+ $(,)?) => {
        $($($(
            const _: () = ::std::assert!(
                $crate::__private::hint_is_known(stringify!($hint)),
                "unknown hint: use read_only, destructive, idempotent or open_world",
            );
        )*)?)+

        #[doc(hidden)]
        struct __ToolhostPlugin;

        /// What [`capabilities!`] declared, if it was used (it adds an
        /// inherent `declared` method); nothing otherwise.
        #[doc(hidden)]
        struct __ToolhostDeclaration;

        impl $crate::__private::NothingDeclared for __ToolhostDeclaration {}

        impl $crate::__private::Guest for __ToolhostPlugin {
            fn list_tools() -> ::std::vec::Vec<$crate::__private::ToolSpec> {
                ::std::vec![$(
                    $crate::__private::spec_of(
                        stringify!($tool),
                        &$tool,
                        $crate::__private::hints(&[$($(stringify!($hint)),*)?]),
                    )
                ),+]
            }

            fn declare() -> $crate::__private::Capabilities {
                #[allow(unused_imports, reason = "the fallback when capabilities! is not used")]
                use $crate::__private::NothingDeclared as _;
                $crate::__private::declared(__ToolhostDeclaration.declared())
            }

            fn call_tool(
                name: ::std::string::String,
                arguments: ::std::string::String,
            ) -> ::std::result::Result<$crate::__private::WitToolOutput, $crate::__private::WitToolError> {
                $(
                    if name == stringify!($tool) {
                        return $crate::__private::invoke(&arguments, $tool);
                    }
                )+
                ::std::result::Result::Err($crate::__private::WitToolError::Failed(
                    ::std::format!("this component has no tool named `{name}`"),
                ))
            }
        }

        $crate::__private::bindings::__export_plugin!(__ToolhostPlugin with_types_in $crate::__private::bindings);
    };
}
