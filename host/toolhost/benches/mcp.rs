//! `toolhost serve --stdio` as a per-session MCP server: how long from spawn
//! to an answered `initialize`, and how much server CPU one `tools/call` of a
//! trivial WASM tool (`hello`'s `greet`) costs.
//!
//! The client is deliberately light (raw JSON-RPC lines over pipes), so what
//! is measured is the server. Server CPU is read from `/proc/PID/stat`
//! (utime + stime) before and after the calls.
//!
//! Two floors are measured in the same run, with the same client, pipes
//! and tokio runtime, so that the figures can be read on a noisy or
//! virtualized machine (where a context switch alone can cost tens of
//! microseconds): `floor/echo`, a server that answers each line with a
//! canned JSON-RPC result (the pipes and the scheduler, nothing else), and
//! `floor/rmcp`, an rmcp server whose `greet` is native Rust (the MCP SDK's
//! own cost). toolhost's excess over `floor/rmcp` is what it adds: the
//! registry, the dispatch pipeline and a fresh WebAssembly sandbox; a third
//! server, `floor/rmcp+sandbox`, answers `greet` with a bare
//! `LoadedComponent::call` of `hello` (no registry, no pipeline), which
//! splits that excess between the sandbox and the rest.
//!
//! On a virtual machine, a vCPU that goes idle between two requests halts,
//! and waking it costs the hypervisor tens of microseconds, charged to the
//! process that wakes: on a quiet machine that dominates every floor.
//! `MCP_BENCH_BUSY=N` runs N spinning threads in the benchmark's process so
//! that the vCPUs never halt, and the figures show the servers' own work.
//!
//! ```text
//! cargo bench --bench mcp                 # release build
//! MCP_BENCH_BUSY=2 cargo bench --bench mcp   # vCPUs kept busy
//! cargo bench --profile dev --bench mcp   # quicker to build, slower code
//! MCP_BENCH_SPAWNS=50 MCP_BENCH_CALLS=5000 cargo bench --bench mcp
//! ```
//! Targets: spawn-to-initialized under 20 ms, server CPU under 60 us per call.

#[path = "../../../tests/all/support.rs"]
#[allow(dead_code, reason = "shared with the tests; the benchmark uses part of it")]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Server {
    fn spawn(plugin: &str, cache: &str) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command.args(["serve", "--stdio", "--cache-dir", cache, "--plugin", plugin]);
        Server::start(command)
    }

    /// This benchmark itself, as floor server `kind` (`echo` or `rmcp`).
    fn spawn_floor(kind: &str) -> Server {
        let mut command = Command::new(std::env::current_exe().expect("the benchmark's path"));
        command.env(FLOOR_ENV, kind);
        Server::start(command)
    }

    fn start(mut command: Command) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn toolhost serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Server {
            child,
            stdin,
            stdout,
            line: String::new(),
        }
    }

    fn request(&mut self, message: &str) -> &str {
        self.stdin.write_all(message.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        self.line.clear();
        assert!(
            self.stdout.read_line(&mut self.line).unwrap() > 0,
            "server closed stdout"
        );
        &self.line
    }

    fn initialize(&mut self) {
        let answer = self.request(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
        );
        assert!(answer.contains("serverInfo"), "{answer}");
        self.stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .unwrap();
    }

    /// utime + stime of the server, in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // Fields after the `(comm)`: state is field 3; utime and stime are 14 and 15.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Set to `echo` or `rmcp`, the benchmark runs as that floor server.
const FLOOR_ENV: &str = "TOOLHOST_MCP_BENCH_FLOOR";

/// The floor servers (see the module documentation).
mod floor {
    use std::sync::Arc;

    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
        PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    };
    use rmcp::service::RequestContext;
    use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// `greet` in native Rust, or through a bare call of the `hello` component.
    #[derive(Clone)]
    struct Native(Option<Arc<toolhost::LoadedComponent>>);

    impl ServerHandler for Native {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}});
            let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
            Ok(ListToolsResult::with_all_items(vec![Tool::new(
                "greet", "Greets.", schema,
            )]))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let name = request
                .arguments
                .and_then(|a| a.get("name").and_then(|n| n.as_str()).map(String::from))
                .unwrap_or_default();
            let text = match &self.0 {
                Some(hello) => {
                    let args = serde_json::json!({ "name": name }).to_string();
                    let outcome = hello.call("greet", &args, &Default::default(), None, 1).await;
                    outcome
                        .result
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
                        .content
                }
                None => serde_json::to_string(&format!("Hello, {name}!")).unwrap_or_default(),
            };
            Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
        }
    }

    pub fn run(kind: &str) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let (reader, mut writer) = rmcp::transport::stdio_pipes();
            let engine = toolhost::Engine::new(toolhost::EngineConfig::default()).expect("engine");
            let hello = if kind == "rmcp+sandbox" {
                let path = super::support::plugin_path("hello");
                Some(engine.load_file(&path, Default::default()).await.expect("load hello"))
            } else {
                None
            };
            match kind {
                "rmcp" | "rmcp+sandbox" => {
                    let running = Native(hello).serve((reader, writer)).await.expect("serve");
                    let _ = running.waiting().await;
                }
                _ => {
                    let mut lines = BufReader::new(reader).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if !line.contains("\"id\"") {
                            continue;
                        }
                        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"serverInfo\":{},\"content\":[{\"type\":\"text\",\"text\":\"\\\"Hello, Ada!\\\"\"}]}}\n";
                        if writer.write_all(answer).await.is_err() || writer.flush().await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
    }
}

fn main() {
    if let Ok(kind) = std::env::var(FLOOR_ENV) {
        floor::run(&kind);
        return;
    }
    let plugin = support::plugin_path("hello").display().to_string();
    let cache = support::workspace_root()
        .join("target")
        .join("test-compile-cache");
    let cache = cache.display().to_string();
    let spawns = env_usize("MCP_BENCH_SPAWNS", 20);
    let busy = env_usize("MCP_BENCH_BUSY", 0);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinners: Vec<_> = (0..busy)
        .map(|_| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    if busy > 0 {
        println!("mcp/busy: {busy} spinning threads keep the vCPUs from halting");
    }
    let calls = env_usize("MCP_BENCH_CALLS", 10000);

    // Warm the compile cache once so every measured spawn loads precompiled code.
    let mut warm = Server::spawn(&plugin, &cache);
    warm.initialize();
    warm.close();

    let mut times = Vec::with_capacity(spawns);
    for _ in 0..spawns {
        let start = Instant::now();
        let mut server = Server::spawn(&plugin, &cache);
        server.initialize();
        times.push(start.elapsed());
        server.close();
    }
    times.sort();
    let mean = times.iter().sum::<Duration>() / spawns as u32;
    println!(
        "mcp/spawn_to_initialized: n={spawns} mean={:.2} ms p50={:.2} ms p90={:.2} ms min={:.2} ms",
        mean.as_secs_f64() * 1e3,
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.9).as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
    );

    let toolhost = measure_calls("mcp/call_greet", Server::spawn(&plugin, &cache), calls);
    let echo = measure_calls("floor/echo", Server::spawn_floor("echo"), calls);
    let rmcp = measure_calls("floor/rmcp", Server::spawn_floor("rmcp"), calls);
    let sandbox = measure_calls("floor/rmcp+sandbox", Server::spawn_floor("rmcp+sandbox"), calls);
    println!(
        "mcp/summary: server CPU per call: toolhost {toolhost:.1} us, rmcp with a native tool {rmcp:.1} us, rmcp with a bare sandboxed call {sandbox:.1} us, echo {echo:.1} us; toolhost adds {:.1} us over rmcp, {:.1} us of it the sandbox",
        toolhost - rmcp,
        sandbox - rmcp
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for spinner in spinners {
        let _ = spinner.join();
    }
}

/// Calls `greet` `calls` times on `server` (after a warm-up) and prints,
/// then returns, the server's CPU time per call in microseconds.
fn measure_calls(label: &str, mut server: Server, calls: usize) -> f64 {
    server.initialize();
    let call = |id: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"greet","arguments":{{"name":"Ada"}}}}}}"#
        )
    };
    for id in 1..=50 {
        let answer = server.request(&call(id));
        assert!(answer.contains("Hello, Ada!"), "{answer}");
    }
    let ticks_before = server.cpu_ticks();
    let start = Instant::now();
    for id in 0..calls {
        server.request(&call(100 + id));
    }
    let wall = start.elapsed();
    let ticks = server.cpu_ticks() - ticks_before;
    let cpu = Duration::from_secs_f64(ticks as f64 / clock_ticks_per_second() as f64);
    let per_call = cpu.as_secs_f64() * 1e6 / calls as f64;
    println!(
        "{label}: n={calls} server_cpu_per_call={per_call:.1} us wall_per_call={:.1} us (cpu ticks: {ticks})",
        wall.as_secs_f64() * 1e6 / calls as f64,
    );
    server.close();
    per_call
}
