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
//! implements the `toolhost:plugin@0.3.1` world (`plugin`, or `server` when
//! it offers prompts and resources); `sdk/docs/rust.md` walks through a
//! plugin from an empty folder.
//!
//! ## Map
//!
//! | to | use |
//! |---|---|
//! | export tools (and prompts, resources) | [`plugin!`] |
//! | declare capabilities | [`capabilities!`] |
//! | fail a call | [`ToolError`] |
//! | return JSON, text, images, audio, resources | a `Serialize` value, [`Output`], [`Structured`], [`ContentBlock`] |
//! | report progress | [`progress`] |
//! | log at MCP's levels | [`log`] |
//! | call other tools | [`tools`] |
//! | ask the user, the client's model, its roots | [`client::elicit`], [`client::sample`], [`client::list_roots`] |
//! | ask several questions in one round | [`client::ask`] |
//! | offer prompts, resources, templates, completions | [`server`] |
//!
//! ## What a tool can do
//!
//! - return any `Serialize` value (an object is its structured JSON, a
//!   string its text, any other value `{"result": value}`), an [`Output`] with structured
//!   JSON and content blocks (text, images, audio, resource links and
//!   embedded resources, with annotations), or a [`Structured`] value whose
//!   type is the tool's output schema;
//! - fail with a [`ToolError`] (`invalid_arguments` or `failed`);
//! - report how far it has come with [`progress`];
//! - log at MCP's eight levels ([`log`]), to the host's log and the client
//!   that asked for it;
//! - call other tools, one at a time or many at once ([`tools`]);
//! - ask the client's user a question, its model for a completion, or
//!   for its roots, one at a time or several in one round ([`client`]);
//! - use what it declared with [`capabilities!`] and was granted: files
//!   and environment variables through `std`, HTTP through `wasi:http`.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolhost_sdk::{Output, ToolError};
//!
//! /// Draws a dot.
//! #[derive(Deserialize, JsonSchema)]
//! struct Dot {
//!     /// Its colour.
//!     colour: String,
//! }
//!
//! fn dot(args: Dot) -> Result<Output, ToolError> {
//!     let png: Vec<u8> = vec![0x89, b'P', b'N', b'G']; // the image's bytes
//!     Ok(Output::default().text(format!("a {} dot", args.colour)).image(png, "image/png"))
//! }
//! # let _ = dot;
//! ```
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
//! - Hints and a title are given in the macro:
//!   `plugin!(read_file(read_only, title = "Read a file"), wipe(destructive))`.
//! - What [`capabilities!`] declares is both written into the component (a
//!   `toolhost:capabilities` custom section) and answered by the world's
//!   `declare()`.
//! - A component imports only the host interfaces it uses: one that never
//!   calls [`client::sample`] does not import `client`.
//! - No WIT type appears in the SDK's API; an author never imports
//!   `wit_bindgen`.
#![deny(missing_docs)]

// The generated bindings name this crate by its absolute path, so that the
// `plugin!` expansion in a plugin crate and the SDK itself agree.
extern crate self as toolhost_sdk;

pub mod client;
mod content;
mod error;
mod export;
pub mod log;
mod output;
mod schema;
pub mod server;
pub mod tools;

pub use content::{Annotations, Content, ContentBlock, ResourceContents, ResourceLink, Role};
pub use error::{HostError, ToolError};
pub use output::{IntoOutput, Output, Structured};

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
    __private::server::toolhost::plugin::progress::report(done, total, message);
}

/// Items used by the [`plugin!`] macro's expansion. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use wit_bindgen;

    pub use crate::export::*;
    pub use crate::schema::{invoke, spec_of};

    /// The generated bindings of the `toolhost:plugin@0.3.1` `server`
    /// world: every import, and the `tool`, `prompts` and `resources`
    /// exports. Its types are the ones the SDK converts to and from.
    #[allow(missing_docs, reason = "generated code")]
    pub mod server {
        wit_bindgen::generate!({
            path: "wit/0.3.1",
            world: "toolhost:plugin/server",
            pub_export_macro: true,
            export_macro_name: "__export_server",
            default_bindings_module: "::toolhost_sdk::__private::server",
            runtime_path: "::toolhost_sdk::__private::wit_bindgen::rt",
        });
    }

    /// The `toolhost:plugin@0.3.1` `plugin` world (tools only), for its
    /// description alone: a component of it exports `tool` through the
    /// `server` bindings' `tool` export (one set of types and traits), and
    /// [`PLUGIN_WORLD`] puts this world's description (imports and the
    /// `tool` export) into the component in place of the `server` world's.
    #[allow(missing_docs, unused_macros, reason = "generated code")]
    pub mod plugin {
        wit_bindgen::generate!({
            path: "wit/0.3.1",
            world: "toolhost:plugin/plugin",
            runtime_path: "::toolhost_sdk::__private::wit_bindgen::rt",
            with: {
                "toolhost:plugin/types@0.3.1": crate::__private::server::toolhost::plugin::types,
                "toolhost:plugin/host@0.3.1": crate::__private::server::toolhost::plugin::host,
                "toolhost:plugin/progress@0.3.1": crate::__private::server::toolhost::plugin::progress,
                "toolhost:plugin/tools@0.3.1": crate::__private::server::toolhost::plugin::tools,
                "toolhost:plugin/client@0.3.1": crate::__private::server::toolhost::plugin::client,
            },
        });
    }

    /// The custom section describing the `plugin` world with its export,
    /// which a tools-only component's `plugin!` expansion refers to so that
    /// the linker keeps it (`wit-component` reads it to make the
    /// component).
    #[cfg(target_arch = "wasm32")]
    pub static PLUGIN_WORLD: &[u8] = &plugin::__WIT_BINDGEN_COMPONENT_TYPE;

    pub use server::exports::toolhost::plugin::prompts::{
        PromptResult as WitPromptResult, PromptSpec as WitPromptSpec,
    };
    pub use server::exports::toolhost::plugin::resources::{
        ReadError as WitReadError, ResourceSpec as WitResourceSpec, ResourceTemplate as WitResourceTemplate,
    };
    pub use server::toolhost::plugin::types::{
        Capabilities, Completion as WitCompletion, Content as WitContent, Hints,
        ResourceContents as WitResourceContents, ToolError as WitToolError, ToolOutput as WitToolOutput,
        ToolSpec,
    };

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
            elicitation: false,
            sampling: false,
        };
        for line in text.lines() {
            let Some((kind, value)) = line.split_once(' ') else {
                continue;
            };
            let list = match (kind, value) {
                ("client", "elicitation") => {
                    caps.elicitation = true;
                    continue;
                }
                ("client", "sampling") => {
                    caps.sampling = true;
                    continue;
                }
                // `declare()`'s record has no field for it: the custom
                // section carries `client roots` alone.
                ("client", "roots") => continue,
                ("dir", _) => &mut caps.dirs,
                ("env", _) => &mut caps.env,
                ("http", _) => &mut caps.http,
                ("secret", _) => &mut caps.secrets,
                ("tool", _) => &mut caps.tools,
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

    /// Whether `name` is an option `plugin!` knows for a tool, given with a
    /// value (`title = "..."`) or without (a hint); checked at compile
    /// time, so a misspelled hint is a build error rather than a guest
    /// panic.
    pub const fn hint_is_known(name: &str, has_value: bool) -> bool {
        if has_value {
            one_of(name, &["title"])
        } else {
            one_of(name, &["read_only", "destructive", "idempotent", "open_world"])
        }
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

    /// The hints and title given to `plugin!` for one tool (already
    /// checked by [`hint_is_known`] at compile time; unknown names are
    /// ignored).
    pub fn tool_options(options: &[(&str, Option<&str>)]) -> (Hints, Option<String>) {
        let mut hints = Hints {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        };
        let mut title = None;
        for (name, value) in options {
            match (*name, value) {
                ("read_only", None) => hints.read_only = Some(true),
                ("destructive", None) => hints.destructive = Some(true),
                ("idempotent", None) => hints.idempotent = Some(true),
                ("open_world", None) => hints.open_world = Some(true),
                ("title", Some(t)) => title = Some(t.to_string()),
                _ => {}
            }
        }
        (hints, title)
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
///     elicitation: true,          // questions to the user: `client::elicit`
///     sampling: true,             // completions from the client's model: `client::sample`
///     roots: true,                // the client's roots: `client::list_roots`
///     tasks: ["build_site"],      // calls that may run as MCP tasks (long work)
///     tasks_required: ["train"],  // calls that run only as MCP tasks
///     tasks_deferred: ["train"],  // of those, the ones that begin their task themselves
/// }
/// ```
///
/// `tasks`, `tasks_required` and `tasks_deferred` are not capabilities (no
/// grant is needed): they tell an MCP server that a client supporting the
/// tasks extension may get a task handle for these tools' calls and fetch
/// the result later; `tasks_required` tools refuse clients that do not
/// support it. A call of a `tasks_deferred` tool becomes a task only when
/// it calls [`client::begin_task`]: what it asks before is asked of the
/// request itself, so it can gather its inputs and then go long.
///
/// Every section is optional. Use it once, in the module that calls
/// [`plugin!`] (the crate root, usually).
#[macro_export]
macro_rules! capabilities {
    ($($kind:ident: $value:tt),* $(,)?) => {
        const _: () = {
            const TEXT: &str = concat!($($crate::__capability_lines!($kind $value),)*);
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

/// The declaration lines of one [`capabilities!`] section.
#[doc(hidden)]
#[macro_export]
macro_rules! __capability_lines {
    (elicitation true) => {
        "client elicitation\n"
    };
    (sampling true) => {
        "client sampling\n"
    };
    (elicitation false) => {
        ""
    };
    (sampling false) => {
        ""
    };
    (roots true) => {
        "client roots\n"
    };
    (roots false) => {
        ""
    };
    (tasks [$($value:literal),* $(,)?]) => {
        concat!($("task ", $value, " optional\n",)*)
    };
    (tasks_required [$($value:literal),* $(,)?]) => {
        concat!($("task ", $value, " required\n",)*)
    };
    (tasks_deferred [$($value:literal),* $(,)?]) => {
        concat!($("task ", $value, " deferred\n",)*)
    };
    ($kind:ident [$($value:literal),* $(,)?]) => {
        concat!($($crate::__capability_line!($kind), $value, "\n",)*)
    };
    ($kind:ident $other:tt) => {
        compile_error!(concat!(
            "`",
            stringify!($kind),
            ": ",
            stringify!($other),
            "`: use a list of names for dirs, env, http, secrets, tools, tasks, tasks_required and tasks_deferred, and `true` or `false` for elicitation, sampling and roots"
        ))
    };
}

/// The declaration line's keyword for a [`capabilities!`] list section.
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
            "`: use dirs, env, http, secrets, tools, elicitation, sampling or roots"
        ))
    };
}

/// Exports the listed functions as the component's tools, and optionally a
/// [`server::Server`]'s prompts and resources beside them.
///
/// Each function takes one argument that implements `serde::Deserialize` and
/// `schemars::JsonSchema`, and returns `Result<T, ToolError>` where `T`
/// implements [`IntoOutput`] (any `serde::Serialize` value, an [`Output`],
/// a [`Structured`] value, a [`ContentBlock`]). Hints follow a function's
/// name in parentheses: `read_only`, `destructive`, `idempotent`,
/// `open_world`, and `title = "..."` (a title for people).
///
/// ```ignore
/// toolhost_sdk::plugin!(list_files(read_only, idempotent), delete_file(destructive, title = "Delete a file"));
/// ```
///
/// With prompts and resources (the component then targets the `server`
/// world), name the function that describes them (see [`server`]):
///
/// ```ignore
/// toolhost_sdk::plugin! {
///     tools: [list_files(read_only), delete_file(destructive)],
///     server: my_server,
/// }
/// ```
#[macro_export]
macro_rules! plugin {
    (tools: [$($tools:tt)*], server: $server:path $(,)?) => {
        $crate::__plugin_tools!([$crate::__private::server::exports::toolhost::plugin::tool::Guest] $($tools)*);

        impl $crate::__private::server::exports::toolhost::plugin::prompts::Guest for __ToolhostPlugin {
            fn list_prompts() -> ::std::vec::Vec<$crate::__private::WitPromptSpec> {
                $crate::__private::list_prompts(&$server())
            }

            fn get_prompt(
                name: ::std::string::String,
                arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<$crate::__private::WitPromptResult, $crate::__private::WitToolError> {
                $crate::__private::get_prompt(&$server(), &name, arguments)
            }

            fn complete(
                name: ::std::string::String,
                argument: ::std::string::String,
                value: ::std::string::String,
                context: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<$crate::__private::WitCompletion, $crate::__private::WitToolError> {
                $crate::__private::complete_prompt(&$server(), &name, &argument, &value, context)
            }
        }

        impl $crate::__private::server::exports::toolhost::plugin::resources::Guest for __ToolhostPlugin {
            fn list_resources() -> ::std::vec::Vec<$crate::__private::WitResourceSpec> {
                $crate::__private::list_resources(&$server())
            }

            fn list_templates() -> ::std::vec::Vec<$crate::__private::WitResourceTemplate> {
                $crate::__private::list_templates(&$server())
            }

            fn read_resource(
                uri: ::std::string::String,
            ) -> ::std::result::Result<
                ::std::vec::Vec<$crate::__private::WitResourceContents>,
                $crate::__private::WitReadError,
            > {
                $crate::__private::read_resource(&$server(), &uri)
            }

            fn complete(
                template: ::std::string::String,
                argument: ::std::string::String,
                value: ::std::string::String,
                context: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<$crate::__private::WitCompletion, $crate::__private::WitToolError> {
                $crate::__private::complete_template(&$server(), &template, &argument, &value, context)
            }
        }

        $crate::__private::server::__export_server!(__ToolhostPlugin with_types_in $crate::__private::server);
    };
    (tools: [$($tools:tt)*] $(,)?) => {
        $crate::__plugin_tools!([$crate::__private::server::exports::toolhost::plugin::tool::Guest] $($tools)*);
        $crate::__plugin_world!();
    };
    ($($tools:tt)+) => {
        $crate::__plugin_tools!([$crate::__private::server::exports::toolhost::plugin::tool::Guest] $($tools)+);
        $crate::__plugin_world!();
    };
}

/// The `plugin` world's exports (`tool` alone) and its description.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_world {
    () => {
        $crate::__private::server::exports::toolhost::plugin::tool::__export_toolhost_plugin_tool_0_3_1_cabi!(
            __ToolhostPlugin with_types_in $crate::__private::server::exports::toolhost::plugin::tool
        );
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            #[used]
            static KEEP: &&[u8] = &$crate::__private::PLUGIN_WORLD;
        };
    };
}

/// A hint's value in `plugin!`: `None` for a bare hint.
#[doc(hidden)]
#[macro_export]
macro_rules! __hint_value {
    () => {
        ::std::option::Option::<&'static str>::None
    };
    ($value:literal) => {
        ::std::option::Option::<&'static str>::Some($value)
    };
}

/// The `tool` export of [`plugin!`], implementing the world's `Guest` trait
/// `$guest`.
#[doc(hidden)]
#[macro_export]
macro_rules! __plugin_tools {
    ([$guest:path] $($tool:ident $(( $($hint:ident $(= $value:literal)?),* $(,)? ))?),* $(,)?) => {
        $($($(
            const _: () = ::std::assert!(
                $crate::__private::hint_is_known(stringify!($hint), $crate::__hint_value!($($value)?).is_some()),
                "unknown hint: use read_only, destructive, idempotent, open_world, or title = \"...\"",
            );
        )*)?)*

        #[doc(hidden)]
        struct __ToolhostPlugin;

        /// What [`capabilities!`] declared, if it was used (it adds an
        /// inherent `declared` method); nothing otherwise.
        #[doc(hidden)]
        struct __ToolhostDeclaration;

        impl $crate::__private::NothingDeclared for __ToolhostDeclaration {}

        impl $guest for __ToolhostPlugin {
            fn list_tools() -> ::std::vec::Vec<$crate::__private::ToolSpec> {
                ::std::vec![$(
                    $crate::__private::spec_of(
                        stringify!($tool),
                        &$tool,
                        $crate::__private::tool_options(&[$($((stringify!($hint), $crate::__hint_value!($($value)?))),*)?]),
                    )
                ),*]
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
                )*
                let _ = arguments;
                ::std::result::Result::Err($crate::__private::WitToolError::Failed(
                    ::std::format!("this component has no tool named `{name}`"),
                ))
            }
        }
    };
}
