//! # The soak: a mixed workload under faults, no call lost
//!
//! [`run`] drives one host (engine, registry, dispatcher, MCP server) with
//! rounds of concurrent work, each round doing all of this at once:
//!
//! - good calls (`greet`, `calculate_expression`), 64 at a time;
//! - every adversarial plugin: calls that spin, grow memory, recurse,
//!   panic, return too much, flood the log, sleep, keep a counter, and
//!   components that must be refused at load (bad names, duplicates,
//!   unknown imports, a plain command, oversized claims, liars);
//! - a bridged MCP server (`toolhost serve --stdio`) killed with SIGKILL
//!   mid-round and reconnected by the bridge;
//! - the compile cache corrupted (overwritten, truncated, one byte
//!   flipped), then components loaded through it;
//! - a plugin file replaced under the host (by another component, by
//!   garbage, by half a file) while its loaded copy keeps serving, then
//!   loaded again with and without its pin;
//! - MCP clients, over stdio framing and streamable HTTP, that disconnect
//!   in the middle of a call, beside clients that wait for their answers.
//!
//! Every call the soak makes must come back, within a generous watchdog,
//! with a result or a typed error of a code the action allows (a spin is
//! a `timeout`, never a `trap`; nothing is ever `internal`): a call that
//! does not come back is **lost**, one with another code is
//! **unexpected**. Resident memory and open file descriptors are read
//! after the first round (a warm-up) and at the end. Descriptors may grow
//! by at most [`FD_GROWTH_BOUND`]. Memory grows while the instance pool
//! warms up (each slot a call has used keeps its pages resident, up to
//! the engine's `pool_resident_ceiling`), so it may grow by at most that
//! ceiling plus [`RSS_SLACK`]; and in a soak of [`TREND_ROUNDS`] rounds or
//! more, by at most [`RSS_TREND_BOUND`] over its second half, when the
//! pool has warmed up: a leak grows with every round, a warming pool
//! levels off.
//!
//! The suite runs a short soak (`soak::a_short_soak_loses_no_call` in
//! `tests/all`), and `cargo bench -p toolhost --bench soak` a long one
//! (`SOAK_SECONDS`, `SOAK_ROUNDS`): this crate is what both share.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use toolhost::admission::PluginRequest;
use toolhost::config::Config;
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, McpDispatcher, Session};
use toolhost::internal::mcp::McpServer;
use toolhost::internal::mcp::framing::GuardedStdio;
use toolhost::internal::registry::{Registry, ToolAudience};
use toolhost::{ComponentHash, Engine, EngineConfig, ErrorCode, LimitsOverride, LoadOptions};

use toolhost_test_support as support;

/// How much resident memory may grow from the end of the first round to
/// the end of the soak, besides the pool warming up.
pub const RSS_SLACK: u64 = 64 << 20;

/// How much resident memory may grow over the second half of a long soak.
pub const RSS_TREND_BOUND: u64 = 16 << 20;

/// The rounds from which a soak counts as long (its trend is checked).
pub const TREND_ROUNDS: usize = 20;

/// How many more file descriptors may be open at the end than after the
/// first round.
pub const FD_GROWTH_BOUND: usize = 16;

/// How long any one action may take before its calls count as lost.
const WATCHDOG: Duration = Duration::from_secs(120);

/// How long the soak runs: `rounds` rounds, fewer if `max_time` runs out
/// first (at least two: the warm-up and one measured).
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Rounds to run.
    pub rounds: usize,
    /// The longest the soak may take (checked between rounds).
    pub max_time: Duration,
}

/// What a soak did.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// Rounds run.
    pub rounds: usize,
    /// Calls made (tool calls and loads), each answered, lost or unexpected.
    pub calls: usize,
    /// Calls that did not come back within the watchdog.
    pub lost: usize,
    /// Answers with a code the action does not allow: what and why.
    pub unexpected: Vec<String>,
    /// Answers by outcome: `ok` or the error code.
    pub outcomes: BTreeMap<String, usize>,
    /// Faults injected, by kind.
    pub faults: BTreeMap<String, usize>,
    /// How much resident memory may grow in all: the pool's resident
    /// ceiling plus [`RSS_SLACK`], in bytes.
    pub rss_bound: u64,
    /// Resident memory after the first round and at the end, in bytes.
    pub rss_start: u64,
    /// See `rss_start`.
    pub rss_end: u64,
    /// Resident memory at the end of each round, in MiB (the first 1000
    /// rounds).
    pub rss_by_round_mib: Vec<u64>,
    /// Open file descriptors after the first round and at the end.
    pub fds_start: usize,
    /// See `fds_start`.
    pub fds_end: usize,
    /// Wall time, in seconds.
    pub seconds: f64,
}

impl Report {
    /// The soak's verdict: no call lost or unexpected, memory and file
    /// descriptors within their bounds.
    pub fn check(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        if self.lost > 0 {
            problems.push(format!("{} calls lost", self.lost));
        }
        if !self.unexpected.is_empty() {
            problems.push(format!("unexpected answers: {:?}", self.unexpected));
        }
        if self.rss_end > self.rss_start + self.rss_bound {
            problems.push(format!(
                "resident memory grew by {} MiB (bound {} MiB)",
                (self.rss_end - self.rss_start) >> 20,
                self.rss_bound >> 20
            ));
        }
        let trace = &self.rss_by_round_mib;
        if trace.len() >= TREND_ROUNDS {
            let (half, last) = (trace[trace.len() / 2], trace[trace.len() - 1]);
            if last.saturating_sub(half) > RSS_TREND_BOUND >> 20 {
                problems.push(format!(
                    "resident memory still grew over the second half of the soak: {half} -> {last} MiB (bound +{} MiB)",
                    RSS_TREND_BOUND >> 20
                ));
            }
        }
        if self.fds_end > self.fds_start + FD_GROWTH_BOUND {
            problems.push(format!(
                "open file descriptors grew from {} to {} (bound +{FD_GROWTH_BOUND})",
                self.fds_start, self.fds_end
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// The outcome of one call: `ok`, or the error code.
fn outcome(code: Option<ErrorCode>) -> String {
    code.map_or_else(|| "ok".to_string(), |c| c.as_str().to_string())
}

/// What the actions of a round tally, shared by their tasks.
#[derive(Default)]
struct Tally {
    calls: AtomicUsize,
    lost: AtomicUsize,
    unexpected: std::sync::Mutex<Vec<String>>,
    outcomes: std::sync::Mutex<BTreeMap<String, usize>>,
    faults: std::sync::Mutex<BTreeMap<String, usize>>,
}

impl Tally {
    /// Records one answer of `what`, which must be one of `allowed`.
    fn answer(&self, what: &str, got: &str, allowed: &[&str]) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        *self.outcomes.lock().unwrap().entry(got.to_string()).or_default() += 1;
        if got == "internal" || !allowed.contains(&got) {
            self.unexpected
                .lock()
                .unwrap()
                .push(format!("{what}: {got} (allowed: {allowed:?})"));
        }
    }

    fn fault(&self, kind: &str) {
        *self.faults.lock().unwrap().entry(kind.to_string()).or_default() += 1;
    }

    /// Runs `call` under the watchdog; a call that does not come back is
    /// lost (and recorded as such), else its outcome is returned.
    async fn watch<T, F: Future<Output = T>>(&self, what: &str, call: F) -> Option<T> {
        match tokio::time::timeout(WATCHDOG, call).await {
            Ok(got) => Some(got),
            Err(_) => {
                self.calls.fetch_add(1, Ordering::Relaxed);
                self.lost.fetch_add(1, Ordering::Relaxed);
                self.unexpected
                    .lock()
                    .unwrap()
                    .push(format!("{what}: no answer within {WATCHDOG:?}"));
                None
            }
        }
    }

    /// Dispatches `tool` and records its outcome, which must be one of
    /// `allowed`.
    async fn dispatch(&self, host: &Host, tool: &str, arguments: Value, allowed: &[&str]) {
        let ctx = DispatchContext::new(Arc::clone(&host.session));
        let call = async { outcome(host.dispatcher.dispatch(tool, arguments, &ctx).await.error_code) };
        if let Some(got) = self.watch(tool, call).await {
            self.answer(tool, &got, allowed);
        }
    }
}

/// The host under soak and what it needs.
struct Host {
    engine: Engine,
    dispatcher: Dispatcher,
    session: Arc<Session>,
    /// The soak's own folder: config, compile cache, replaced plugin files.
    dir: PathBuf,
    _dir: tempfile::TempDir,
    cache: PathBuf,
    /// Limits for the adversarial plugins: short, so that rounds are.
    limits: LimitsOverride,
}

/// Adversarial plugins called every round: tool, arguments, and the one
/// outcome each must have.
const ADVERSARIAL_CALLS: &[(&str, &str, &str, &str)] = &[
    ("spin", "spin", "{}", "timeout"),
    ("hog", "hog", "{}", "memory_limit"),
    ("deep", "deep", "{}", "stack_overflow"),
    ("panic", "explode", r#"{"n":1}"#, "trap"),
    ("huge", "huge", "{}", "output_too_large"),
    ("chatty", "chatter", r#"{"lines":200,"records":50}"#, "ok"),
    ("counter", "count", "{}", "ok"),
    ("sleepy", "sleep", r#"{"ms":100}"#, "ok"),
];

/// Plugins that must be refused at load, or whose calls misbehave: each
/// is loaded, and if it loads, each of its tools is called with `{}`.
const ADVERSARIAL_LOADS: &[&str] = &[
    "bad-name",
    "dup-name",
    "missing-import",
    "command-hello",
    "claims",
    "fickle",
    "bad-schema",
    "mismatch",
    "needs-grant",
    "wrong-error",
    "liar",
    "bad-output",
];

/// Any typed outcome but `internal`: for calls whose code is not fixed.
const ANY_TYPED: &[&str] = &[
    "ok",
    "out_of_fuel",
    "timeout",
    "memory_limit",
    "stack_overflow",
    "trap",
    "invalid_arguments",
    "tool_failed",
    "unknown_tool",
    "output_too_large",
    "capability_not_granted",
    "invalid_component",
    "unsupported_world",
    "missing_imports",
    "hash_mismatch",
    "duplicate_tool",
    "config",
];

/// Runs the soak (see the module documentation).
pub async fn run(bounds: Bounds) -> Report {
    let started = Instant::now();
    let host = Arc::new(Host::start().await);
    let tally = Arc::new(Tally::default());
    let mut report = Report {
        rss_bound: host.engine.pool_resident_ceiling().unwrap_or(0) + RSS_SLACK,
        ..Report::default()
    };
    let rounds = bounds.rounds.max(2);
    for round in 0..rounds {
        if round >= 2 && started.elapsed() > bounds.max_time {
            break;
        }
        run_round(&host, &tally, round).await;
        report.rounds += 1;
        if report.rss_by_round_mib.len() < 1000 {
            report.rss_by_round_mib.push(resident_bytes() >> 20);
        }
        if round == 0 {
            report.rss_start = resident_bytes();
            report.fds_start = open_fds();
        }
    }
    report.rss_end = resident_bytes();
    report.fds_end = open_fds();
    report.calls = tally.calls.load(Ordering::Relaxed);
    report.lost = tally.lost.load(Ordering::Relaxed);
    report.unexpected = std::mem::take(&mut *tally.unexpected.lock().unwrap());
    report.outcomes = std::mem::take(&mut *tally.outcomes.lock().unwrap());
    report.faults = std::mem::take(&mut *tally.faults.lock().unwrap());
    report.seconds = started.elapsed().as_secs_f64();
    let dir = host.dir.clone();
    drop(host);
    kill_bridged_peers(&dir);
    report
}

/// One round: every kind of work at once.
async fn run_round(host: &Arc<Host>, tally: &Arc<Tally>, round: usize) {
    let mut work = tokio::task::JoinSet::new();
    for i in 0..64 {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move {
            let (tool, arguments) = if i % 2 == 0 {
                ("greet", json!({"name": format!("soak {i}")}))
            } else {
                (
                    "calculate_expression",
                    json!({"expression": format!("{i} * (2 + 3) / 7")}),
                )
            };
            tally.dispatch(&host, tool, arguments, &["ok"]).await;
        });
    }
    for &(_, tool, arguments, expected) in ADVERSARIAL_CALLS {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move {
            let arguments: Value = serde_json::from_str(arguments).expect("JSON");
            // Each call may also run out of wall-clock time on a busy
            // machine: that is a typed answer too.
            tally
                .dispatch(&host, tool, arguments, &[expected, "timeout"])
                .await;
        });
    }
    for &plugin in ADVERSARIAL_LOADS {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move { adversarial_load(&host, &tally, plugin).await });
    }
    {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move { bridged_server(&host, &tally).await });
    }
    {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move { corrupt_cache(&host, &tally, round).await });
    }
    {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move { replace_plugin_file(&host, &tally, round).await });
    }
    {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move { stdio_clients(&host, &tally).await });
    }
    {
        let (host, tally) = (Arc::clone(host), Arc::clone(tally));
        work.spawn(async move { http_clients(&host, &tally).await });
    }
    while let Some(done) = work.join_next().await {
        if let Err(e) = done {
            // A task that panicked lost whatever it was doing.
            tally.calls.fetch_add(1, Ordering::Relaxed);
            tally.lost.fetch_add(1, Ordering::Relaxed);
            tally
                .unexpected
                .lock()
                .unwrap()
                .push(format!("a soak task failed: {e}"));
        }
    }
}

impl Host {
    async fn start() -> Host {
        let temp = tempfile::tempdir().expect("a temp folder");
        let dir = temp.path().to_path_buf();
        // Start from the suite's compile cache, so the plugins are not all
        // compiled again; the soak corrupts its own copy only.
        let cache = dir.join("cache");
        copy_tree(&support::cache_dir(), &cache);
        let engine = Engine::new(EngineConfig {
            cache_dir: Some(cache.clone()),
            ..EngineConfig::default()
        })
        .expect("an engine");
        let peer_args = json!([
            "serve",
            "--stdio",
            "--cache-dir",
            cache.join("peer").display().to_string(),
            "--config",
            support::workspace_root()
                .join("tests/data/empty.toml")
                .display()
                .to_string(),
            "--plugin",
            support::plugin_path("hello").display().to_string()
        ]);
        let config_text = format!(
            "[[plugins]]\npath = {:?}\n\n[[plugins]]\npath = {:?}\n\n[[mcp.servers]]\nname = \"peer\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = {peer_args}\ntimeout_ms = 20000\n",
            support::plugin_path("hello").display().to_string(),
            support::plugin_path("calc").display().to_string(),
            support::toolhost_bin().display().to_string(),
        );
        let config_path = dir.join("toolhost.toml");
        std::fs::write(&config_path, config_text).expect("writing the config");
        let config = Config::load(&config_path).expect("the soak's config");
        let started = config
            .start(&engine, Registry::new(), None)
            .await
            .expect("starting the soak's host");
        let dispatcher = started.dispatcher.clone();
        let limits = LimitsOverride {
            timeout_ms: Some(2000),
            memory_mb: Some(64),
            ..LimitsOverride::default()
        };
        for &(plugin, ..) in ADVERSARIAL_CALLS {
            let request = PluginRequest {
                limits,
                ..PluginRequest::file(support::plugin_path(plugin))
            };
            started
                .live
                .load(request)
                .await
                .unwrap_or_else(|e| panic!("loading {plugin}: {e}"));
        }
        assert!(
            dispatcher.mcp_settled(Duration::from_secs(60)).await,
            "the bridged server did not come up"
        );
        Host {
            engine,
            dispatcher,
            session: Session::trusted("soak"),
            dir,
            _dir: temp,
            cache,
            limits,
        }
    }
}

/// Loads `plugin`; if it loads, calls each of its tools with `{}`. Any
/// typed outcome but `internal` is allowed.
async fn adversarial_load(host: &Host, tally: &Tally, plugin: &str) {
    let bytes = support::plugin_bytes(plugin);
    let options = LoadOptions {
        limits: host.limits,
        ..LoadOptions::default()
    };
    let load = async {
        match host.engine.load(bytes, options).await {
            Ok(component) => Ok(component),
            Err(e) => Err(e.code().as_str().to_string()),
        }
    };
    let Some(loaded) = tally.watch(plugin, load).await else {
        return;
    };
    let component = match loaded {
        Ok(component) => {
            tally.answer(plugin, "ok", ANY_TYPED);
            component
        }
        Err(code) => {
            tally.answer(plugin, &code, ANY_TYPED);
            return;
        }
    };
    for tool in component.tools() {
        let call = async {
            let call = component
                .call(&tool.name, "{}", &LimitsOverride::default(), None, 0)
                .await;
            outcome(call.result.err().map(|e| e.code()))
        };
        if let Some(got) = tally.watch(&tool.name, call).await {
            tally.answer(&format!("{plugin}/{}", tool.name), &got, ANY_TYPED);
        }
    }
}

/// Calls the bridged server's `greet`, kills the server mid-way, calls
/// again (the bridge answers `unavailable` or the call fails), and waits
/// for the bridge to reconnect.
async fn bridged_server(host: &Host, tally: &Tally) {
    const TOOL: &str = "mcp__peer__greet";
    const ALLOWED: &[&str] = &["ok", "unavailable", "tool_failed", "unknown_tool", "cancelled"];
    for i in 0..3 {
        tally
            .dispatch(host, TOOL, json!({"name": format!("peer {i}")}), ALLOWED)
            .await;
    }
    if kill_bridged_peers(&host.dir) > 0 {
        tally.fault("bridged server killed");
    }
    for i in 0..3 {
        tally
            .dispatch(host, TOOL, json!({"name": format!("after {i}")}), ALLOWED)
            .await;
    }
    // Back within the bridge's backoff: it must come back (a call that
    // succeeds), or the soak's later rounds test a dead bridge.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ctx = DispatchContext::new(Arc::clone(&host.session));
        let result = host
            .dispatcher
            .dispatch(TOOL, json!({"name": "back"}), &ctx)
            .await;
        let got = outcome(result.error_code);
        tally.answer(TOOL, &got, ALLOWED);
        if got == "ok" {
            break;
        }
        if Instant::now() > deadline {
            tally
                .unexpected
                .lock()
                .unwrap()
                .push("the bridged server did not come back within 60 s".into());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// SIGKILLs the bridged `toolhost serve` children of this process started
/// for the soak in `dir` (their command line names its cache); returns how
/// many.
fn kill_bridged_peers(dir: &Path) -> usize {
    let me = std::process::id();
    let marker = dir.display().to_string();
    let mut killed = 0;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline);
        if ppid == Some(me) && cmdline.contains("serve") && cmdline.contains(&marker) {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            killed += 1;
        }
    }
    killed
}

/// Corrupts every entry of the compile cache (a different way each
/// round), then loads components through it: each must load (recompiled).
async fn corrupt_cache(host: &Host, tally: &Tally, round: usize) {
    let mut entries = Vec::new();
    collect_files(&host.cache, "cwasm", &mut entries);
    for path in &entries {
        if path.starts_with(host.cache.join("peer")) {
            continue;
        }
        let Ok(mut bytes) = std::fs::read(path) else {
            continue;
        };
        match round % 3 {
            0 => bytes = b"not a compiled component".to_vec(),
            1 => bytes.truncate(bytes.len() / 2),
            _ => {
                let at = bytes.len() / 2;
                bytes[at] ^= 0x40;
            }
        }
        if std::fs::write(path, &bytes).is_ok() {
            tally.fault("cache entry corrupted");
        }
    }
    for plugin in ["hello", "calc", "time"] {
        let bytes = support::plugin_bytes(plugin);
        let load = async {
            outcome(
                host.engine
                    .load(bytes, LoadOptions::default())
                    .await
                    .err()
                    .map(|e| e.code()),
            )
        };
        if let Some(got) = tally.watch(plugin, load).await {
            tally.answer(&format!("load {plugin} through a corrupt cache"), &got, &["ok"]);
        }
    }
}

/// A plugin file replaced under the host: its loaded copy keeps serving;
/// loading the file again with its pin is refused, without loads what is
/// there now (another component), and garbage or half a file is refused.
async fn replace_plugin_file(host: &Host, tally: &Tally, round: usize) {
    let path = host.dir.join(format!("replaced-{round}.wasm"));
    let hello = support::plugin_bytes("hello");
    std::fs::write(&path, &hello).expect("writing a plugin file");
    let pin = ComponentHash::of(&hello);
    let load = |expected_hash: Option<ComponentHash>| LoadOptions {
        expected_hash,
        ..LoadOptions::default()
    };
    let component = match host.engine.load_file(&path, load(Some(pin))).await {
        Ok(c) => c,
        Err(e) => {
            tally.answer("load the plugin file", e.code().as_str(), &["ok"]);
            return;
        }
    };
    let calc = support::plugin_bytes("calc");
    let replacements: [(&str, Vec<u8>, Option<ComponentHash>, &str); 4] = [
        (
            "another component, pinned",
            calc.clone(),
            Some(pin),
            "hash_mismatch",
        ),
        ("another component", calc, None, "ok"),
        ("garbage", b"\0asm garbage".to_vec(), None, "invalid_component"),
        (
            "half a file",
            hello[..hello.len() / 2].to_vec(),
            None,
            "invalid_component",
        ),
    ];
    for (what, bytes, expected_hash, expected) in replacements {
        // Replace in place (truncate and write), as a careless deploy would.
        std::fs::write(&path, &bytes).expect("replacing a plugin file");
        tally.fault("plugin file replaced");
        let call = async {
            let call = component
                .call(
                    "greet",
                    r#"{"name":"still here"}"#,
                    &LimitsOverride::default(),
                    None,
                    0,
                )
                .await;
            outcome(call.result.err().map(|e| e.code()))
        };
        if let Some(got) = tally.watch("greet from a replaced file", call).await {
            tally.answer("greet from a replaced file", &got, &["ok"]);
        }
        let reload = async {
            outcome(
                host.engine
                    .load_file(&path, load(expected_hash))
                    .await
                    .err()
                    .map(|e| e.code()),
            )
        };
        if let Some(got) = tally.watch(what, reload).await {
            tally.answer(&format!("load {what}"), &got, &[expected]);
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// MCP sessions over the stdio framing, in process: one client calls and
/// waits for its answer, three hang up in the middle of a call. Every
/// session must end, and the server must have no call left running.
async fn stdio_clients(host: &Host, tally: &Tally) {
    let server = McpServer::new(host.dispatcher.clone(), ToolAudience::Trusted);
    let mut sessions = Vec::new();
    for hang_up in [false, true, true, true] {
        let (client, server_io) = tokio::io::duplex(64 << 10);
        let (read, write) = tokio::io::split(server_io);
        let transport = GuardedStdio::new(tokio::io::BufReader::new(read), write);
        let session = server.new_session();
        let serving = tokio::spawn(async move {
            use rmcp::ServiceExt;
            if let Ok(running) = session.serve(transport).await {
                let _ = running.waiting().await;
            }
        });
        let (client_read, mut client_write) = tokio::io::split(client);
        let mut lines = tokio::io::BufReader::new(client_read).lines();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}});
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"ms": 300}}});
        let opened = async {
            let text = format!(
                "{init}\n{}\n{call}\n",
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            );
            client_write.write_all(text.as_bytes()).await.ok()?;
            lines.next_line().await.ok().flatten()
        };
        if tally.watch("stdio initialize", opened).await.flatten().is_none() {
            tally.answer("stdio initialize", "no answer", &["ok"]);
            continue;
        }
        if hang_up {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop((lines, client_write));
            tally.fault("client hung up mid-call");
        } else {
            let answer = async {
                // Notifications (a tool list that changed) may come first.
                while let Ok(Some(line)) = lines.next_line().await {
                    let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                    if answer["id"] == 1 {
                        return if answer["result"]["isError"] == false {
                            "ok".to_string()
                        } else {
                            format!("bad answer: {line}")
                        };
                    }
                }
                "the session ended without an answer".to_string()
            };
            if let Some(got) = tally.watch("stdio call", answer).await {
                tally.answer("stdio call", &got, &["ok"]);
            }
        }
        sessions.push(serving);
    }
    // Sessions whose client hung up end; the one that waited ends when its
    // client (dropped above at the end of its loop turn) is gone too.
    for serving in sessions {
        let ended = async { serving.await.is_ok() };
        if let Some(ended) = tally.watch("an MCP session ending", ended).await {
            tally.answer(
                "an MCP session ending",
                if ended { "ok" } else { "panicked" },
                &["ok"],
            );
        }
    }
    let drained = async {
        while server.in_flight() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        "ok".to_string()
    };
    if let Some(got) = tally.watch("no call left running", drained).await {
        tally.answer("no call left running", &got, &["ok"]);
    }
}

/// MCP over streamable HTTP, in process: a client that closes its
/// connection in the middle of a call, and one that waits for its answer.
async fn http_clients(host: &Host, tally: &Tally) {
    use toolhost::internal::mcp::{HttpOptions, serve_http};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address").to_string();
    let server = McpServer::new(host.dispatcher.clone(), ToolAudience::Trusted);
    let shutdown = CancellationToken::new();
    let options = HttpOptions {
        bearer_token: Some("soak".into()),
        ..HttpOptions::default()
    };
    let serving = tokio::spawn(serve_http(
        server.clone(),
        listener,
        options,
        shutdown.clone(),
        Duration::from_secs(5),
    ));
    let exchange = {
        let addr = addr.clone();
        tokio::task::spawn_blocking(move || {
            let session = raw_http::session(&addr, "soak")?;
            // Hang up mid-call.
            let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"ms": 300}}});
            raw_http::post_and_hang_up(&addr, "soak", &session, &call)?;
            // Wait for an answer.
            let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "greet", "arguments": {"name": "http"}}});
            let answers = raw_http::post(&addr, "soak", Some(&session), &call)?;
            let ok = answers
                .iter()
                .any(|m| m["id"] == 2 && m["result"]["isError"] == false);
            Ok::<bool, std::io::Error>(ok)
        })
    };
    let got = async {
        match exchange.await {
            Ok(Ok(true)) => "ok".to_string(),
            Ok(Ok(false)) => "no good answer".to_string(),
            Ok(Err(e)) => format!("io: {e}"),
            Err(e) => format!("panicked: {e}"),
        }
    };
    tally.fault("client hung up mid-call");
    if let Some(got) = tally.watch("http call", got).await {
        tally.answer("http call", &got, &["ok"]);
    }
    shutdown.cancel();
    let stopped = async {
        match serving.await {
            Ok(Ok(())) => "ok".to_string(),
            other => format!("{other:?}"),
        }
    };
    if let Some(got) = tally.watch("http server shutting down", stopped).await {
        tally.answer("http server shutting down", &got, &["ok"]);
    }
}

/// A minimal HTTP/1.1 client for the MCP endpoint (blocking).
mod raw_http {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;

    use serde_json::{Value, json};

    fn request(addr: &str, token: &str, session: Option<&str>, body: &str) -> String {
        let session = session
            .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
            .unwrap_or_default();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    /// POSTs `body`; returns the JSON-RPC messages of the answer and the
    /// session id header, if any.
    fn exchange(
        addr: &str,
        token: &str,
        session: Option<&str>,
        body: &Value,
    ) -> std::io::Result<(Vec<Value>, Option<String>)> {
        let mut stream = TcpStream::connect(addr)?;
        stream.write_all(request(addr, token, session, &body.to_string()).as_bytes())?;
        let mut reader = BufReader::new(stream);
        let mut session_id = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("mcp-session-id")
            {
                session_id = Some(v.trim().to_string());
            }
        }
        let mut text = String::new();
        reader.read_to_string(&mut text)?;
        let messages = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:").or(Some(l)))
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .filter(Value::is_object)
            .collect();
        Ok((messages, session_id))
    }

    pub fn post(addr: &str, token: &str, session: Option<&str>, body: &Value) -> std::io::Result<Vec<Value>> {
        exchange(addr, token, session, body).map(|(messages, _)| messages)
    }

    pub fn session(addr: &str, token: &str) -> std::io::Result<String> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "soak", "version": "0"}}});
        let (_, session) = exchange(addr, token, None, &init)?;
        let session = session.ok_or_else(|| std::io::Error::other("no session id"))?;
        post(
            addr,
            token,
            Some(&session),
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )?;
        Ok(session)
    }

    pub fn post_and_hang_up(addr: &str, token: &str, session: &str, body: &Value) -> std::io::Result<()> {
        let mut stream = TcpStream::connect(addr)?;
        stream.write_all(request(addr, token, Some(session), &body.to_string()).as_bytes())?;
        std::thread::sleep(std::time::Duration::from_millis(50));
        stream.shutdown(std::net::Shutdown::Both)
    }
}

fn collect_files(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_files(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("creating the soak's cache");
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            let _ = std::fs::copy(&src, &dst);
        }
    }
}

/// This process's resident memory, in bytes.
pub fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// How many file descriptors this process has open.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}
