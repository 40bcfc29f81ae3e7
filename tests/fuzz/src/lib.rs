//! # The fuzz harness: what each fuzz target checks
//!
//! One function per target, each taking the fuzzer's bytes and panicking
//! when a property breaks. The same functions run the saved inputs of
//! `tests/fuzz/regressions/TARGET/` in the normal test suite
//! (`tests/all/fuzz_regressions.rs`, no fuzzer needed), so every input a
//! fuzzer once crashed on stays a test.
//!
//! | target | input | property |
//! |---|---|---|
//! | [`detector`] | a shell command | a verdict for every command (the detector's panic fallback is a failure), consistent with itself |
//! | [`config`] | a `toolhost.toml` | parsed, or a `config` error naming a line; a parsed config builds toolsets, a dispatcher and a gate |
//! | [`mcp_lines`] | JSON-RPC lines after a real `initialize` | every stdout line is a JSON-RPC message; every line the framing answers is answered; the session ends when input ends |
//! | [`load_component`] | component bytes | loaded (then every tool called once) or a typed load error; never `internal`, never a panic |
//! | [`tool_arguments`] | a tool index and JSON argument text | through dispatch and straight into the guest: a result or a typed error, never a trap, `internal` or `stack_overflow` |
//! | [`json_read`] | JSON text | `toolhost_json::from_str` (the SDK's argument reader) reads it as serde_json does, as a `Value` and as a typed struct: the same value or the same error; and `toolhost_json::to_string` writes the value as serde_json does |
//!
//! Shared by the fuzz crate (`tests/fuzz`, its own workspace, built by
//! `cargo fuzz`) and included by path in `tests/all`: it names only crates
//! both have.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{ClientNotification, JsonRpcMessage};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::limits::LimitsOverride;
use toolhost::internal::mcp::McpServer;
use toolhost::internal::mcp::framing::{self, GuardedStdio, Line};
use toolhost::internal::registry::{ComponentRegistration, RegisterComponent, Registry, ToolAudience};
use toolhost::{Engine, EngineConfig, ErrorCode, LoadOptions, LoadedComponent};

/// The plugins the dispatch and MCP targets call into.
pub const PLUGINS: &[&str] = &["hello", "calc", "handmade", "time", "files"];

/// How long one MCP session may take before it counts as a hang.
const SESSION_LIMIT: Duration = Duration::from_secs(60);

/// Error codes no input may ever produce: they mean a bug in the host or
/// a first-party plugin, not bad input.
const NEVER: &[ErrorCode] = &[ErrorCode::Internal, ErrorCode::Trap, ErrorCode::StackOverflow];

/// What the targets share: a runtime, an engine, the plugins loaded and a
/// dispatcher serving them. Built once per process.
pub struct Fixtures {
    rt: tokio::runtime::Runtime,
    engine: Engine,
    components: Vec<Arc<LoadedComponent>>,
    dispatcher: Dispatcher,
    /// Every tool name the dispatcher serves, in a fixed order.
    tools: Vec<String>,
}

/// The fixtures, loading the plugins from `plugin_dir` (the folder of the
/// built `.wasm` files) on first use, through the compile cache in
/// `cache_dir` if given.
///
/// # Panics
///
/// When a plugin is missing or does not load: `plugins/build` builds them.
pub fn fixtures(plugin_dir: &Path, cache_dir: Option<&Path>) -> &'static Fixtures {
    static FIXTURES: OnceLock<Fixtures> = OnceLock::new();
    FIXTURES.get_or_init(|| Fixtures::new(plugin_dir, cache_dir))
}

/// The limits the fuzzed calls run under: small enough that a runaway
/// call ends quickly, large enough for every honest call.
fn call_limits() -> LimitsOverride {
    LimitsOverride {
        fuel: Some(2_000_000_000),
        memory_mb: Some(64),
        timeout_ms: Some(5_000),
        ..LimitsOverride::default()
    }
}

impl Fixtures {
    fn new(plugin_dir: &Path, cache_dir: Option<&Path>) -> Fixtures {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let engine = Engine::new(EngineConfig {
            max_concurrent_instances: 16,
            cache_dir: cache_dir.map(Path::to_path_buf),
            ..EngineConfig::default()
        })
        .expect("an engine");
        let mut registry = Registry::new();
        let components: Vec<Arc<LoadedComponent>> = rt.block_on(async {
            let mut components = Vec::new();
            for name in PLUGINS {
                let path = plugin_file(plugin_dir, name);
                let options = LoadOptions {
                    limits: call_limits(),
                    ..LoadOptions::default()
                };
                let component = engine
                    .load_file(&path, options)
                    .await
                    .unwrap_or_else(|e| panic!("loading {} (run plugins/build): {e}", path.display()));
                components.push(component);
            }
            components
        });
        for component in &components {
            registry
                .register_component(component, &ComponentRegistration::default())
                .expect("registering a plugin");
        }
        let tools = components
            .iter()
            .flat_map(|c| c.tools().iter().map(|t| t.name.clone()))
            .collect();
        let dispatcher = {
            let _guard = rt.enter();
            Dispatcher::builder(registry).build().expect("a dispatcher")
        };
        Fixtures {
            rt,
            engine,
            components,
            dispatcher,
            tools,
        }
    }
}

/// Where `plugins/build` puts the plugins: `target/plugins/wasm32-wasip2/plugin`
/// of the workspace (two folders above the crate including this file, in
/// `tests/fuzz` and in `host/toolhost` alike).
pub fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/plugins/wasm32-wasip2/plugin")
}

/// The fixtures as the fuzz targets use them: the plugins of
/// [`plugin_dir`], compiled through a cache of the fuzz crate's own
/// (`tests/fuzz/target/compile-cache`), so that a fuzzer started again
/// does not compile them again. The targets build them in libFuzzer's
/// initialization, before the first input: compiling five plugins with
/// the fuzz build's debug assertions takes about 17 s here, which a
/// per-input timeout must not count.
#[allow(
    dead_code,
    reason = "the fuzz targets' own; tests/all, which includes this file, passes its own cache"
)]
pub fn fuzz_fixtures() -> &'static Fixtures {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("compile-cache");
    fixtures(&plugin_dir(), Some(&cache))
}

/// The `.wasm` file of plugin `name` in `dir`.
fn plugin_file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}.wasm", name.replace('-', "_")))
}

/// Fails when `code` is one no input may cause.
fn check_code(code: ErrorCode, what: &dyn std::fmt::Display) {
    assert!(!NEVER.contains(&code), "{what} ended with `{code}`");
}

/// Arguments as a plugin might declare them: every shape the SDK's reader
/// reads itself (strings, numbers, options, sequences, maps, enums of each
/// kind, flattened and tagged ones).
#[derive(Debug, PartialEq, serde::Deserialize)]
pub struct Arguments {
    name: Option<String>,
    count: Option<i64>,
    ratio: Option<f64>,
    tags: Option<Vec<String>>,
    mode: Option<Mode>,
    shapes: Option<Vec<Shape>>,
    #[serde(flatten)]
    rest: std::collections::BTreeMap<String, Value>,
}

/// A unit-only enum (a string).
#[derive(Debug, PartialEq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Fast,
    Careful,
}

/// An enum of every variant kind, externally tagged.
#[derive(Debug, PartialEq, serde::Deserialize)]
pub enum Shape {
    Empty,
    Wrapped(u8),
    Pair(i8, char),
    Named { text: String, at: Option<u32> },
}

/// The SDK's JSON reader (`toolhost_json::from_str`, which reads a tool's
/// arguments inside every Rust plugin) reads any text exactly as
/// serde_json does: the same value, or the same error message, as a
/// `Value` and as a typed struct.
pub fn json_read(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    same_as_serde_json::<Value>(text);
    same_as_serde_json::<Arguments>(text);
    // And writes what it read as serde_json writes it (the writer's string
    // scans, vector and word loops, on whatever strings the input holds).
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let ours = toolhost_json::to_string(&value).map_err(|e| e.to_string());
        let theirs = serde_json::to_string(&value).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "writing {text:?}");
    }
}

/// Fails unless `toolhost_json::from_str` reads `text` as a `T` as
/// serde_json does.
fn same_as_serde_json<T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(text: &str) {
    let ours = toolhost_json::from_str::<T>(text).map_err(|e| e.to_string());
    let theirs = serde_json::from_str::<T>(text).map_err(|e| e.to_string());
    assert_eq!(ours, theirs, "as {}: {text:?}", std::any::type_name::<T>());
}

/// The detector: every command gets a verdict that agrees with itself, and
/// no panic (the detector catches its own panics and answers
/// `unanalyzable`: that answer is a failure here).
pub fn detector(data: &[u8]) {
    let command = String::from_utf8_lossy(data);
    let protected = ["/etc/toolhost/toolhost.toml", "/srv/toolhost/.toolhost"];
    let context = toolhost_detector::Context::new()
        .with_cwd("/srv/work")
        .with_home("/home/agent")
        .with_protected(&protected);
    let inspection = toolhost_detector::inspect_with(&command, &context);
    let verdict = &inspection.verdict;
    assert!(
        !verdict
            .matches
            .iter()
            .any(|m| m.reason == "the detector failed on this command"),
        "the detector panicked on {command:?}"
    );
    assert_eq!(verdict.dangerous, !verdict.matches.is_empty(), "{verdict:?}");
    assert_eq!(
        verdict.opaque,
        verdict.categories.iter().any(|c| c.is_opaque()),
        "{verdict:?}"
    );
    assert!(verdict.opaque <= verdict.dangerous, "{verdict:?}");
    for m in &verdict.matches {
        assert!(verdict.categories.contains(&m.category), "{verdict:?}");
        assert!(
            m.matched.chars().count() <= toolhost_detector::MAX_MATCHED_CHARS,
            "{m:?}"
        );
    }
    assert!(verdict.matches.len() <= toolhost_detector::MAX_MATCHES);
    assert!(inspection.programs.len() <= 1024, "{}", inspection.programs.len());
}

/// The config parser: a config, or a `config` error. A config that parses
/// goes on to build its toolsets, a dispatcher and its approval gate (none
/// of which touch the file system).
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let origin = Path::new("/nonexistent/toolhost-fuzz/toolhost.toml");
    let config = match toolhost::config::Config::parse(text, origin) {
        Ok(config) => config,
        Err(e) => {
            assert_eq!(e.code(), ErrorCode::Config, "{e}");
            assert!(e.message().starts_with(&*origin.to_string_lossy()), "{e}");
            return;
        }
    };
    let _ = config.selection();
    let _ = config.mcp_config();
    let _ = config.spill_config();
    let _ = toolhost::config::ProtectedPaths::of(&config).all();
    if let Err(e) = config.toolsets() {
        assert_eq!(e.code(), ErrorCode::Config, "{e}");
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let _guard = rt.enter();
    match config.configure(Dispatcher::builder(Registry::new())) {
        Ok(builder) => {
            if let Err(e) = builder.build() {
                check_code(e.code(), &e);
            }
        }
        Err(e) => assert_eq!(e.code(), ErrorCode::Config, "{e}"),
    }
    // The origin does not exist, so there is no allowlist to read: the
    // gate builds from the config alone.
    let config = toolhost::config::Config {
        origin: None,
        ..config
    };
    if let Err(e) = config.approval_gate(None) {
        check_code(e.code(), &e);
    }
}

/// The MCP server's input: `data`'s lines after a real `initialize`,
/// through the stdio framing into a server over the plugins. Every line the
/// server writes is a JSON-RPC 2.0 message; every line the framing answers
/// itself gets its answer; the session ends once the input does.
pub fn mcp_lines(fixtures: &Fixtures, data: &[u8]) {
    // What must be answered, by id: every line the framing answers itself,
    // and every request it passes on (unless the client cancels it).
    let mut expected: Vec<Value> = Vec::new();
    let mut cancelled: HashSet<String> = HashSet::new();
    for line in data.split(|b| *b == b'\n') {
        match framing::classify(line) {
            Line::Answer(Value::Array(items)) => expected.extend(items.iter().map(|a| a["id"].clone())),
            Line::Answer(one) => expected.push(one["id"].clone()),
            Line::Message(message) => match *message {
                JsonRpcMessage::Request(request) => {
                    expected.push(serde_json::to_value(&request.id).expect("an id is JSON"));
                }
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancel) = notification.notification {
                        let id = serde_json::to_value(&cancel.params.request_id).expect("an id is JSON");
                        cancelled.insert(id.to_string());
                    }
                }
                _ => {}
            },
            Line::Skip => {}
        }
    }
    let server = McpServer::new(fixtures.dispatcher.clone(), ToolAudience::Trusted);
    let output = fixtures.rt.block_on(async {
        let (client, server_io) = tokio::io::duplex(64 << 10);
        let (read, write) = tokio::io::split(server_io);
        let transport = GuardedStdio::new(tokio::io::BufReader::new(read), write);
        let serving = tokio::spawn(async move {
            use rmcp::ServiceExt;
            if let Ok(running) = server.serve(transport).await {
                let _ = running.waiting().await;
            }
        });
        let (client_read, mut client_write) = tokio::io::split(client);
        let input = data.to_vec();
        let writing = tokio::spawn(async move {
            let hello = json!({"jsonrpc": "2.0", "id": "fuzz-init", "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}});
            let head = format!("{hello}\n{}\n", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            client_write.write_all(head.as_bytes()).await?;
            client_write.write_all(&input).await?;
            client_write.write_all(b"\n").await?;
            client_write.shutdown().await
        });
        let reading = async {
            let mut lines = tokio::io::BufReader::new(client_read).lines();
            let mut out = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                out.push(line);
            }
            out
        };
        let session = async {
            let output = reading.await;
            let _ = writing.await;
            let _ = serving.await;
            output
        };
        tokio::time::timeout(SESSION_LIMIT, session)
            .await
            .unwrap_or_else(|_| panic!("the MCP session did not end within {SESSION_LIMIT:?} of its input"))
    });
    let mut answered: HashSet<String> = HashSet::new();
    for line in &output {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("a non-JSON line on stdout ({e}): {line:?}"));
        let items = match message {
            Value::Array(items) => items,
            one => vec![one],
        };
        for item in items {
            assert_eq!(item["jsonrpc"], "2.0", "{item}");
            if item.get("result").is_some() || item.get("error").is_some() {
                answered.insert(item["id"].to_string());
            }
        }
    }
    assert!(
        answered.contains("\"fuzz-init\""),
        "initialize was not answered: {output:?}"
    );
    for id in expected {
        if cancelled.contains(&id.to_string()) {
            continue;
        }
        assert!(
            answered.contains(&id.to_string()),
            "no answer for id {id}: {output:?}"
        );
    }
}

/// Component loading: the bytes load (and every tool they offer is called
/// once with `{}`, under tight limits) or are refused with a typed load
/// error; never `internal`.
pub fn load_component(fixtures: &Fixtures, data: &[u8]) {
    let options = LoadOptions {
        limits: call_limits(),
        ..LoadOptions::default()
    };
    fixtures.rt.block_on(async {
        match fixtures.engine.load(data.to_vec(), options).await {
            Ok(component) => {
                for tool in component.tools() {
                    let call = component
                        .call(&tool.name, "{}", &LimitsOverride::default(), None, 1)
                        .await;
                    if let Err(e) = call.result {
                        // A component that loads may still trap: it is not ours.
                        assert_ne!(e.code(), ErrorCode::Internal, "{e}");
                    }
                }
            }
            Err(e) => assert_ne!(e.code(), ErrorCode::Internal, "{e}"),
        }
    });
}

/// Tool arguments: the first byte picks a tool, the rest is the arguments'
/// JSON text. Through the whole dispatch pipeline (when the text is JSON)
/// and straight into the guest (bypassing validation, as a host
/// application calling `LoadedComponent::call` could): a result or a typed
/// error, never a trap, a stack overflow or `internal` from a first-party
/// plugin.
pub fn tool_arguments(fixtures: &Fixtures, data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let name = &fixtures.tools[usize::from(pick) % fixtures.tools.len()];
    let text = String::from_utf8_lossy(rest);
    let component = fixtures
        .components
        .iter()
        .find(|c| c.tools().iter().any(|t| &t.name == name))
        .expect("every tool has its component");
    fixtures.rt.block_on(async {
        if let Ok(arguments) = serde_json::from_str::<Value>(&text) {
            let ctx = DispatchContext::new(Session::trusted("fuzz"));
            let result = fixtures.dispatcher.dispatch(name, arguments, &ctx).await;
            if let Some(code) = result.error_code {
                check_code(code, &format_args!("{name}({text}): {}", result.content));
            }
        }
        let call = component
            .call(name, &text, &LimitsOverride::default(), None, 1)
            .await;
        if let Err(e) = call.result {
            check_code(e.code(), &format_args!("{name}({text}) called directly: {e}"));
        }
    });
}

/// Runs every saved input under `dir/TARGET/` (none if there is no such
/// folder) through `run`; returns how many ran.
pub fn replay(dir: &Path, target: &str, run: impl Fn(&[u8])) -> usize {
    let folder = dir.join(target);
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return 0;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&bytes)));
        if let Err(panic) = outcome {
            eprintln!("saved fuzz input {} fails", file.display());
            std::panic::resume_unwind(panic);
        }
    }
    files.len()
}
