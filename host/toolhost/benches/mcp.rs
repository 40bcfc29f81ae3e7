//! `toolhost serve` as an MCP server, measured from outside: how long
//! from spawn to an answered `initialize`, and how much server CPU and
//! wall time one `tools/call` of a trivial WASM tool (`hello`'s `greet`)
//! costs, over stdio and streamable HTTP, one call at a time and many in
//! flight on one session, with arguments of 5 B to 1 MiB.
//!
//! The client is deliberately light (raw JSON-RPC lines over pipes, raw
//! HTTP/1.1 with keep-alive), so what is measured is the server. Server
//! CPU is read from `/proc/PID/task/*/schedstat` (nanoseconds) before and
//! after the calls.
//!
//! Floors are measured in the same run, with the same client, pipes and
//! tokio runtime, so that the figures can be read on a noisy or
//! virtualized machine (where a context switch alone can cost tens of
//! microseconds):
//!
//! - `echo`: a server that answers each line with a canned JSON-RPC
//!   result (the pipes and the scheduler, nothing else);
//! - `rmcp`: an rmcp server whose `greet` is native Rust (the MCP SDK's
//!   own cost);
//! - `rmcp+sandbox`: an rmcp server whose `greet` is a bare
//!   `LoadedComponent::call` of `hello` (a fresh sandboxed instance, no
//!   registry, no dispatch pipeline): toolhost's excess over this floor is
//!   what the registry, the pipeline and its MCP adapter add;
//! - over HTTP, the same rmcp servers behind rmcp's streamable HTTP
//!   service.
//!
//! On a virtual machine, a vCPU that goes idle between two requests halts,
//! and waking it costs the hypervisor tens of microseconds, charged to the
//! process that wakes: on a quiet machine that dominates every floor.
//! `MCP_BENCH_BUSY=N` runs N spinning threads in the benchmark's process so
//! that the vCPUs never halt, and the figures show the servers' own work.
//!
//! ```text
//! cargo bench -p toolhost --bench mcp                   # release build
//! MCP_BENCH_BUSY=2 cargo bench -p toolhost --bench mcp  # vCPUs kept busy
//! MCP_BENCH_SPAWNS=50 MCP_BENCH_CALLS=5000 cargo bench -p toolhost --bench mcp
//! MCP_BENCH_ONLY=stdio,stdio32,payload,http,spawn,metrics cargo bench -p toolhost --bench mcp  # some sections
//! MCP_BENCH_ONLY=metrics MCP_BENCH_OBSERVED=traces cargo bench -p toolhost --bench mcp  # one observer's cost
//! MCP_BENCH_ROUNDS=5 cargo bench -p toolhost --bench mcp  # rounds (default 3)
//! MCP_BENCH_BLOCKS=20 cargo bench -p toolhost --bench mcp  # turns within a round (default 10)
//! MCP_BENCH_ONLY=metrics MCP_BENCH_OBSERVED=audit cargo bench -p toolhost --bench mcp  # [audit] alone (or metrics)
//! MCP_BENCH_ONLY=metrics MCP_BENCH_OBSERVED=@empty.toml cargo bench ...  # any config beside none: an A/A run
//! MCP_BENCH_ONLY=metrics-http MCP_BENCH_OBSERVED=console cargo bench ...  # the same over HTTP (the console is served there only)
//! ```
//!
//! The `metrics` section's servers and client are best pinned to one vCPU
//! (`taskset -c 1 target/release/deps/mcp-* --bench`): unpinned, which
//! vCPU each thread lands on decides whether a wake-up costs an
//! inter-processor interrupt, a server keeps the placement it starts
//! with, and a ratio swings from 0.73x to 1.3x between runs of the same
//! build (see `BENCHMARKS.md`, "Observability's cost").
//!
//! The stdio sections run the `rmcp+sandbox` floor and toolhost side by
//! side, each on a server of its own, taking turns in `MCP_BENCH_BLOCKS`
//! blocks of calls (the payload section: every size and both servers), so
//! that both sides of a ratio meet the same machine; they do that
//! `MCP_BENCH_ROUNDS` times, and summarize each ratio as its median and
//! range over the rounds: on a shared machine one measurement can be 30%
//! off either way, and two measured seconds apart twice that.
//! Targets: spawn-to-initialized under 20 ms; toolhost within 1.15x of the
//! `rmcp+sandbox` floor per call; a 16 KiB argument within 2x of a 5 B one.

mod common;
use toolhost_test_support as support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Set to a floor's name, the benchmark runs as that floor server.
const FLOOR_ENV: &str = "TOOLHOST_MCP_BENCH_FLOOR";

/// A server process and its CPU clock.
struct Process {
    child: Child,
}

impl Process {
    /// CPU time the server has run, in seconds: the sum of its threads'
    /// run times from `/proc/PID/task/*/schedstat` (nanoseconds), plus
    /// what its exited threads ran (utime + stime of the process less that
    /// of the live threads, in clock ticks). The ticks alone are 10 ms
    /// coarse, too coarse for calls of tens of microseconds.
    fn cpu_seconds(&self) -> f64 {
        self.cpu().total
    }

    /// [`Process::cpu_seconds`], and the part of it run by the server's
    /// threads of its own (any thread but the main one and the async
    /// runtime's workers, which answer the calls): the traces' exporter,
    /// the audit log's mover, the epoch ticker.
    fn cpu(&self) -> Cpu {
        let pid = self.child.id();
        let mut live_ns = 0u64;
        let mut own_ns = 0u64;
        let mut live_ticks = 0u64;
        if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
            for task in tasks.flatten() {
                let path = task.path();
                // A thread that exits between the listing and the read is
                // counted in the process's ticks instead.
                let (Ok(sched), Ok(stat)) = (
                    std::fs::read_to_string(path.join("schedstat")),
                    std::fs::read_to_string(path.join("stat")),
                ) else {
                    continue;
                };
                let ns = sched
                    .split_whitespace()
                    .next()
                    .and_then(|n| n.parse::<u64>().ok())
                    .unwrap_or(0);
                live_ns += ns;
                let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
                let answering =
                    comm.trim() == "tokio-rt-worker" || task.file_name().to_str() == Some(&pid.to_string());
                if !answering {
                    own_ns += ns;
                }
                live_ticks += stat_ticks(&stat);
            }
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let exited_ticks = stat_ticks(&stat).saturating_sub(live_ticks);
        Cpu {
            total: live_ns as f64 / 1e9 + exited_ticks as f64 / clock_ticks_per_second() as f64,
            own_threads: own_ns as f64 / 1e9,
        }
    }
}

/// A server's CPU time so far, in seconds (see [`Process::cpu`]).
#[derive(Clone, Copy)]
struct Cpu {
    total: f64,
    own_threads: f64,
}

/// utime + stime (clock ticks) from a `/proc/.../stat` line.
fn stat_ticks(stat: &str) -> u64 {
    // Fields after the `(comm)`: state is field 3; utime and stime are 14 and 15.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clock_ticks_per_second() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

/// Which server to start.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Echo,
    Rmcp,
    RmcpSandbox,
    Toolhost,
    /// `toolhost serve` observed: metrics, the audit log, traces exported
    /// to a collector in the bench and the console's call log (or one of
    /// them: `MCP_BENCH_OBSERVED`).
    ToolhostMetrics,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Echo => "floor/echo",
            Kind::Rmcp => "floor/rmcp",
            Kind::RmcpSandbox => "floor/rmcp+sandbox",
            Kind::Toolhost => "toolhost",
            Kind::ToolhostMetrics => "toolhost+observed",
        }
    }

    fn floor_name(self) -> &'static str {
        match self {
            Kind::Echo => "echo",
            Kind::Rmcp => "rmcp",
            Kind::RmcpSandbox => "rmcp+sandbox",
            Kind::Toolhost | Kind::ToolhostMetrics => unreachable!("toolhost is no floor"),
        }
    }

    /// The server's command: `toolhost serve`, or this benchmark as a floor.
    fn command(self, http: bool) -> Command {
        let mut command = if matches!(self, Kind::Toolhost | Kind::ToolhostMetrics) {
            let mut c = Command::new(env!("CARGO_BIN_EXE_toolhost"));
            let cache = support::cache_dir().display().to_string();
            let plugin = support::plugin_path("hello").display().to_string();
            let empty = match self {
                Kind::ToolhostMetrics => observed_config(),
                _ => support::workspace_root().join("tests/data/empty.toml"),
            }
            .display()
            .to_string();
            c.args([
                "serve",
                "--cache-dir",
                &cache,
                "--config",
                &empty,
                "--plugin",
                &plugin,
            ]);
            if http {
                c.args(["--http", "127.0.0.1:0", "--token", "bench"]);
            } else {
                c.arg("--stdio");
            }
            c
        } else {
            let mut c = Command::new(std::env::current_exe().expect("the benchmark's path"));
            c.env(FLOOR_ENV, self.floor_name());
            if http {
                c.env(FLOOR_HTTP_ENV, "1");
            }
            c
        };
        // Every server copies the same way, as a deployment that follows
        // the advice of `toolhost::internal::glibc` would (the machines this bench
        // runs on differ: on some, glibc's `REP MOVSB` is slow at some
        // offsets); `MCP_BENCH_GLIBC_AS_IS` measures them as they start.
        if std::env::var_os("MCP_BENCH_GLIBC_AS_IS").is_none()
            && let Some(tunables) = toolhost::internal::glibc::tunables()
        {
            command.env("GLIBC_TUNABLES", tunables);
        }
        command.env("TOOLHOST_LOG", "warn");
        command
    }
}

/// An MCP client over a server's stdin and stdout. Requests are written
/// by a thread of their own, so that many can be in flight whatever their
/// size.
struct StdioClient {
    process: Process,
    requests: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<std::thread::JoinHandle<()>>,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl StdioClient {
    fn spawn(kind: Kind) -> StdioClient {
        let mut child = kind
            .command(false)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the server");
        let mut stdin: ChildStdin = child.stdin.take().unwrap();
        let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
        let (requests, queue) = mpsc::channel::<Vec<u8>>();
        let writer = std::thread::spawn(move || {
            for request in queue {
                if stdin.write_all(&request).is_err() {
                    break;
                }
            }
        });
        StdioClient {
            process: Process { child },
            requests: Some(requests),
            writer: Some(writer),
            stdout,
            line: String::new(),
        }
    }

    fn send(&self, message: &str) {
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message.as_bytes());
        line.push(b'\n');
        self.requests.as_ref().unwrap().send(line).unwrap();
    }

    fn recv(&mut self) -> &str {
        self.line.clear();
        assert!(
            self.stdout.read_line(&mut self.line).unwrap() > 0,
            "the server closed stdout"
        );
        &self.line
    }

    fn initialize(&mut self) {
        self.send(INITIALIZE);
        let answer = self.recv();
        assert!(answer.contains("serverInfo"), "{answer}");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

impl Drop for StdioClient {
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

fn greet(id: usize, name: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"greet","arguments":{{"name":"{name}"}}}}}}"#
    )
}

/// What `calls` calls cost the server.
struct Measured {
    /// Server CPU per call, in microseconds.
    cpu_us: f64,
    /// The part of it on the server's threads of its own (see
    /// [`Process::cpu`]; stdio sections only).
    own_threads_us: f64,
    /// Wall time per call, in microseconds (the client's view).
    wall_us: f64,
    /// Percentiles of one call's round trip (only with one in flight).
    p50_us: f64,
    p99_us: f64,
}

/// One server under measurement: `calls` calls of `greet` with a name of
/// `payload` bytes, `in_flight` at once.
#[derive(Clone, Copy)]
struct Side {
    kind: Kind,
    payload: usize,
    calls: usize,
}

/// A running [`Side`]: its server, warmed up, and what its blocks cost so far.
struct Running {
    side: Side,
    client: StdioClient,
    name: String,
    sent: usize,
    cpu: f64,
    own_threads: f64,
    wall: Duration,
    /// Each call's round trip, as the client saw it.
    round_trips: Vec<Duration>,
}

impl Running {
    fn start(side: Side) -> Running {
        let mut client = StdioClient::spawn(side.kind);
        client.initialize();
        let name = "x".repeat(side.payload);
        for id in 1..=20 {
            client.send(&greet(id, &name));
            let answer = client.recv();
            assert!(
                answer.contains("Hello, x") || side.kind == Kind::Echo,
                "{answer:.200}"
            );
        }
        Running {
            side,
            client,
            name,
            sent: 100,
            cpu: 0.0,
            own_threads: 0.0,
            wall: Duration::ZERO,
            round_trips: Vec::with_capacity(side.calls),
        }
    }

    /// Makes `calls` calls, `in_flight` at once, and adds what they cost.
    fn block(&mut self, calls: usize, in_flight: usize) {
        let cpu_before = self.client.process.cpu();
        let start = Instant::now();
        let first = self.sent;
        let end = first + calls;
        while self.sent < end.min(first + in_flight) {
            self.client.send(&greet(self.sent, &self.name));
            self.sent += 1;
        }
        let mut last = start;
        for _ in 0..calls {
            self.client.recv();
            let now = Instant::now();
            self.round_trips.push(now - last);
            last = now;
            if self.sent < end {
                self.client.send(&greet(self.sent, &self.name));
                self.sent += 1;
            }
        }
        self.wall += start.elapsed();
        let cpu_after = self.client.process.cpu();
        self.cpu += cpu_after.total - cpu_before.total;
        self.own_threads += cpu_after.own_threads - cpu_before.own_threads;
    }

    fn measured(mut self) -> Measured {
        let calls = self.round_trips.len() as f64;
        self.round_trips.sort();
        Measured {
            cpu_us: self.cpu * 1e6 / calls,
            own_threads_us: self.own_threads * 1e6 / calls,
            wall_us: self.wall.as_secs_f64() * 1e6 / calls,
            p50_us: percentile(&self.round_trips, 0.5),
            p99_us: percentile(&self.round_trips, 0.99),
        }
    }
}

/// Measures `sides` side by side, each on a server of its own: every
/// server started and warmed up, then their calls made in `blocks` blocks,
/// one block of each side in turn, so that every side meets the machine's
/// slow and quiet moments alike (run one after the other, two sides of a
/// ratio were seconds apart, and on this shared VM a side's cost could
/// double from one to the next: a 16 KiB call read 1.13x and 2.69x its 5 B
/// call in two rounds of one run).
fn side_by_side(sides: &[Side], in_flight: usize, blocks: usize) -> Vec<Measured> {
    let mut running: Vec<Running> = sides.iter().map(|&side| Running::start(side)).collect();
    for b in 0..blocks {
        for r in &mut running {
            // The calls split as evenly as they go.
            let calls = r.side.calls * (b + 1) / blocks - r.side.calls * b / blocks;
            r.block(calls, in_flight);
        }
    }
    running.into_iter().map(Running::measured).collect()
}

/// Calls `greet` with a name of `payload` bytes `calls` times, `in_flight`
/// at once, after a warm-up.
fn measure_stdio(kind: Kind, calls: usize, in_flight: usize, payload: usize) -> Measured {
    let side = Side { kind, payload, calls };
    side_by_side(&[side], in_flight, 1).remove(0)
}

/// One round: the `rmcp+sandbox` floor and toolhost side by side (see
/// [`side_by_side`]), each making `calls` calls with a name of `payload`
/// bytes, each printed with `print`.
fn floor_and_toolhost(
    section: &str,
    print: fn(&str, Kind, &Measured),
    calls: usize,
    in_flight: usize,
    payload: usize,
    blocks: usize,
) -> (Measured, Measured) {
    let sides = [Kind::RmcpSandbox, Kind::Toolhost].map(|kind| Side { kind, payload, calls });
    let mut measured = side_by_side(&sides, in_flight, blocks).into_iter();
    let (floor, toolhost) = (measured.next().unwrap(), measured.next().unwrap());
    print(section, Kind::RmcpSandbox, &floor);
    print(section, Kind::Toolhost, &toolhost);
    (floor, toolhost)
}

/// `rounds` rounds of `measure` (the plain server, then the observed one),
/// each printed, and their ratio of server CPU summed up.
fn observed_rounds(section: &str, rounds: usize, mut measure: impl FnMut() -> (Measured, Measured)) {
    let mut cpu = Vec::new();
    for _ in 0..rounds {
        let (off, on) = measure();
        print_round_trip(section, Kind::Toolhost, &off);
        print_round_trip(section, Kind::ToolhostMetrics, &on);
        if section == "metrics" {
            println!(
                "mcp/{section}/of which on the server's own threads (not answering calls): off {:.1} us/call, on {:.1} us/call; on the answering threads: off {:.1}, on {:.1} ({:.2}x)",
                off.own_threads_us,
                on.own_threads_us,
                off.cpu_us - off.own_threads_us,
                on.cpu_us - on.own_threads_us,
                (on.cpu_us - on.own_threads_us) / (off.cpu_us - off.own_threads_us)
            );
        }
        cpu.push(on.cpu_us / off.cpu_us);
    }
    println!(
        "mcp/{section}/summary: server CPU per call with {} on = {} the same with them off",
        std::env::var("MCP_BENCH_OBSERVED")
            .unwrap_or_else(|_| "metrics, the audit log, traces and the console".into()),
        Spread::of(&cpu).ratio()
    );
}

fn print_round_trip(section: &str, kind: Kind, m: &Measured) {
    println!(
        "mcp/{section}/{:<20} cpu {:>7.1} us/call  round trip p50 {:>7.1} us  p99 {:>7.1} us",
        kind.label(),
        m.cpu_us,
        m.p50_us,
        m.p99_us
    );
}

fn print_cpu_and_wall(section: &str, kind: Kind, m: &Measured) {
    println!(
        "mcp/{section}/{:<20} cpu {:>7.1} us/call  wall {:>7.1} us/call",
        kind.label(),
        m.cpu_us,
        m.wall_us
    );
}

/// A config with everything an operator observes on, the audit log in the
/// temporary folder.
fn observed_config() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("toolhost-bench-observed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let path = dir.join("toolhost.toml");
    // MCP_BENCH_OBSERVED=metrics, audit, traces or console measures one of
    // them alone (the console's cost per call is its ring of calls and its
    // spans; stdio serves no page); MCP_BENCH_OBSERVED=@FILE, the config
    // FILE holds (an A/A run: an empty one); unset, all of them together.
    let metrics = "[metrics]\nenabled = true\n";
    let audit = "[audit]\npath = \"audit.jsonl\"\n";
    let console = "[console]\nenabled = true\n";
    let observed = std::env::var("MCP_BENCH_OBSERVED").unwrap_or_default();
    let text = match observed.as_str() {
        "metrics" => metrics.to_string(),
        "audit" => audit.to_string(),
        "console" => console.to_string(),
        "traces" => traces_section(),
        file if file.starts_with('@') => {
            std::fs::read_to_string(&file[1..]).expect("MCP_BENCH_OBSERVED=@FILE")
        }
        _ => format!("{metrics}\n{audit}\n{console}\n{}", traces_section()),
    };
    std::fs::write(&path, text).expect("the config");
    path
}

/// `[traces]` exporting to a collector in this process that takes every
/// export and answers 200 (its own work is not the server's CPU).
fn traces_section() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let header = line.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err()
                        || writer
                            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                            .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    format!("[traces]\nendpoint = \"http://{addr}\"\n")
}

/// The median and range of a figure over the rounds.
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

impl Spread {
    fn of(values: &[f64]) -> Spread {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = match n {
            0 => f64::NAN,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        Spread {
            median,
            min: sorted.first().copied().unwrap_or(f64::NAN),
            max: sorted.last().copied().unwrap_or(f64::NAN),
        }
    }

    /// `1.07x (1.02-1.15x over the rounds)`.
    fn ratio(&self) -> String {
        format!(
            "{:.2}x ({:.2}-{:.2}x over the rounds)",
            self.median, self.min, self.max
        )
    }

    /// `14.2 (12.9-16.0 over the rounds)`.
    fn plain(&self) -> String {
        format!(
            "{:.1} ({:.1}-{:.1} over the rounds)",
            self.median, self.min, self.max
        )
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize].as_secs_f64() * 1e6
}

/// An MCP session over streamable HTTP: one keep-alive connection, one
/// request at a time.
struct Http {
    process: Process,
    addr: String,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    session: Option<String>,
}

impl Http {
    fn spawn(kind: Kind) -> Http {
        let mut child = kind
            .command(true)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the server");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let addr = loop {
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "the HTTP server exited");
            if let Some(url) = line.trim().strip_prefix("toolhost: serving MCP at ") {
                break url
                    .trim_start_matches("http://")
                    .trim_end_matches("/mcp")
                    .to_string();
            }
        };
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let writer = TcpStream::connect(&addr).unwrap();
        writer.set_nodelay(true).unwrap();
        let reader = BufReader::with_capacity(1 << 16, writer.try_clone().unwrap());
        Http {
            process: Process { child },
            addr,
            reader,
            writer,
            session: None,
        }
    }

    /// POSTs `body` and returns the JSON-RPC answer in it (`None` for a
    /// notification's empty 202).
    fn post(&mut self, body: &str) -> Option<String> {
        let session = self
            .session
            .as_deref()
            .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer bench\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\n{session}Content-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(body.as_bytes());
        self.writer.write_all(&request).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status: u16 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        let (mut chunked, mut length) = (false, 0usize);
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (key, value) = header.split_once(':').unwrap();
            let value = value.trim();
            match key.to_ascii_lowercase().as_str() {
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "content-length" => length = value.parse().unwrap(),
                "mcp-session-id" => self.session = Some(value.to_string()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).unwrap();
        }
        assert!(
            status == 200 || status == 202,
            "HTTP {status}: {}",
            String::from_utf8_lossy(&body)
        );
        let body = String::from_utf8(body).unwrap();
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.trim().to_string())
            .find(|d| d.starts_with('{'))
            .or_else(|| body.trim().starts_with('{').then(|| body.trim().to_string()))
    }
}

fn measure_http(kind: Kind, calls: usize) -> Measured {
    let mut client = Http::spawn(kind);
    let answer = client.post(INITIALIZE).expect("an answer to initialize");
    assert!(answer.contains("serverInfo"), "{answer}");
    client.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for id in 1..=20 {
        let answer = client.post(&greet(id, "Ada")).unwrap();
        assert!(answer.contains("Hello, Ada!"), "{answer}");
    }
    let mut rounds = Vec::with_capacity(calls);
    let cpu_before = client.process.cpu_seconds();
    let start = Instant::now();
    for id in 0..calls {
        let call = Instant::now();
        client.post(&greet(100 + id, "Ada"));
        rounds.push(call.elapsed());
    }
    let wall = start.elapsed();
    let cpu = client.process.cpu_seconds() - cpu_before;
    rounds.sort();
    Measured {
        cpu_us: cpu * 1e6 / calls as f64,
        own_threads_us: 0.0,
        wall_us: wall.as_secs_f64() * 1e6 / calls as f64,
        p50_us: percentile(&rounds, 0.5),
        p99_us: percentile(&rounds, 0.99),
    }
}

/// Set, a floor server serves streamable HTTP instead of stdio.
const FLOOR_HTTP_ENV: &str = "TOOLHOST_MCP_BENCH_FLOOR_HTTP";

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
            let arguments = request.arguments.unwrap_or_default();
            let text = match &self.0 {
                Some(hello) => {
                    let args = serde_json::Value::Object(arguments).to_string();
                    let outcome = hello.call("greet", &args, &Default::default(), None, 1).await;
                    outcome
                        .result
                        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
                        .content
                }
                None => {
                    let name = arguments.get("name").and_then(|n| n.as_str()).unwrap_or_default();
                    serde_json::to_string(&format!("Hello, {name}!")).unwrap_or_default()
                }
            };
            Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
        }
    }

    pub fn run(kind: &str, http: bool) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let engine = toolhost::Engine::new(toolhost::EngineConfig::default()).expect("engine");
            let hello = if kind == "rmcp+sandbox" {
                let path = super::support::plugin_path("hello");
                Some(engine.load_file(&path, Default::default()).await.expect("load hello"))
            } else {
                None
            };
            if http {
                use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
                use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
                let native = Native(hello);
                let service = StreamableHttpService::new(
                    move || Ok(native.clone()),
                    Arc::new(LocalSessionManager::default()),
                    StreamableHttpServerConfig::default(),
                );
                let router = axum::Router::new().route_service("/mcp", service);
                use axum::serve::ListenerExt;
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
                eprintln!("toolhost: serving MCP at http://{}/mcp", listener.local_addr().expect("an address"));
                // As toolhost does: no Nagle delay on small writes.
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                axum::serve(listener, router).await.expect("serving");
                return;
            }
            let (reader, mut writer) = rmcp::transport::stdio_pipes();
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
                        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"serverInfo\":{},\"content\":[{\"type\":\"text\",\"text\":\"Hello, Ada!\"}]}}\n";
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
        floor::run(&kind, std::env::var_os(FLOOR_HTTP_ENV).is_some());
        return;
    }
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let spawns = common::env_or("MCP_BENCH_SPAWNS", 20);
    let busy = common::env_or("MCP_BENCH_BUSY", 0);
    let calls = common::env_or("MCP_BENCH_CALLS", 10000);
    // Floor and toolhost are measured this many times: the summaries give
    // the median ratio and the range over the rounds.
    let rounds = common::env_or("MCP_BENCH_ROUNDS", 3usize).max(1);
    // Within a round, the servers compared take turns this many times.
    let blocks = common::env_or("MCP_BENCH_BLOCKS", 10usize).max(1);
    // MCP_BENCH_ONLY=payload,http runs those sections only.
    let only = std::env::var("MCP_BENCH_ONLY").unwrap_or_default();
    let section = |name: &str| only.is_empty() || only.split(',').any(|s| s.trim() == name);
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

    if section("spawn") {
        // Warm the compile cache once so every measured spawn loads precompiled code.
        StdioClient::spawn(Kind::Toolhost).initialize();
        let mut times = Vec::with_capacity(spawns);
        for _ in 0..spawns {
            let start = Instant::now();
            StdioClient::spawn(Kind::Toolhost).initialize();
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "mcp/spawn_to_initialized: n={spawns} p50={:.2} ms p90={:.2} ms min={:.2} ms",
            percentile(&times, 0.5) / 1e3,
            percentile(&times, 0.9) / 1e3,
            times[0].as_secs_f64() * 1e3,
        );
    }
    if section("stdio") {
        println!(
            "\n== stdio, one call in flight (n={calls}, {rounds} rounds): server CPU per call, and the client's round trip"
        );
        let (echo, rmcp) = (
            measure_stdio(Kind::Echo, calls, 1, 3),
            measure_stdio(Kind::Rmcp, calls, 1, 3),
        );
        for (kind, m) in [(Kind::Echo, &echo), (Kind::Rmcp, &rmcp)] {
            print_round_trip("stdio", kind, m);
        }
        let mut cpu = Vec::new();
        let mut over_echo = Vec::new();
        for _ in 0..rounds {
            let (floor, toolhost) = floor_and_toolhost("stdio", print_round_trip, calls, 1, 3, blocks);
            cpu.push(toolhost.cpu_us / floor.cpu_us);
            over_echo.push(toolhost.p50_us - echo.p50_us);
        }
        println!(
            "mcp/stdio/summary: toolhost CPU per call = {} the rmcp+sandbox floor (rmcp alone {:.1} us); round trip p50 {} us over the pipe-echo floor ({:.1} us)",
            Spread::of(&cpu).ratio(),
            rmcp.cpu_us,
            Spread::of(&over_echo).plain(),
            echo.p50_us
        );
    }
    if section("metrics") {
        println!(
            "\n== stdio, one call in flight (n={calls}, {rounds} rounds): toolhost observed ([metrics], [audit], [traces], [console]; MCP_BENCH_OBSERVED=one of them) beside not"
        );
        observed_rounds("metrics", rounds, || {
            let sides = [Kind::Toolhost, Kind::ToolhostMetrics].map(|kind| Side {
                kind,
                payload: 3,
                calls,
            });
            let mut measured = side_by_side(&sides, 1, blocks).into_iter();
            (measured.next().unwrap(), measured.next().unwrap())
        });
    }
    if section("metrics-http") {
        println!(
            "\n== streamable HTTP, one call in flight (n={calls}, {rounds} rounds): toolhost observed (as in `metrics`; the console served) beside not, one after the other"
        );
        observed_rounds("metrics-http", rounds, || {
            (
                measure_http(Kind::Toolhost, calls),
                measure_http(Kind::ToolhostMetrics, calls),
            )
        });
    }
    if section("stdio32") {
        println!("\n== stdio, 32 calls in flight on one session (n={calls}, {rounds} rounds)");
        print_cpu_and_wall("stdio32", Kind::Rmcp, &measure_stdio(Kind::Rmcp, calls, 32, 3));
        let mut cpu = Vec::new();
        for _ in 0..rounds {
            let (floor, toolhost) = floor_and_toolhost("stdio32", print_cpu_and_wall, calls, 32, 3, blocks);
            cpu.push(toolhost.cpu_us / floor.cpu_us);
        }
        println!(
            "mcp/stdio32/summary: toolhost CPU per call = {} the rmcp+sandbox floor",
            Spread::of(&cpu).ratio()
        );
    }
    if section("payload") {
        println!("\n== stdio, argument size (the name greet echoes), 1 and 32 in flight ({rounds} rounds)");
        // 1 MiB less a little: the result (`Hello, NAME!`) must fit the
        // default 1 MiB output limit.
        let sizes = [5usize, 1 << 10, 16 << 10, (1 << 20) - 256];
        for in_flight in [1, 32] {
            // Per size: toolhost over its own 5 B call, and over the floor,
            // each from one round.
            let mut own = vec![Vec::new(); sizes.len()];
            let mut floor = vec![Vec::new(); sizes.len()];
            for _ in 0..rounds {
                // Every size and both servers side by side in one round.
                let sides: Vec<Side> = sizes
                    .iter()
                    .flat_map(|&payload| {
                        let calls = if payload > (64 << 10) {
                            (calls / 50).max(100)
                        } else {
                            calls
                        };
                        [Kind::RmcpSandbox, Kind::Toolhost].map(|kind| Side { kind, payload, calls })
                    })
                    .collect();
                let measured = side_by_side(&sides, in_flight, blocks);
                let base_cpu = measured[1].cpu_us;
                for (i, (payload, pair)) in sizes.iter().zip(measured.chunks(2)).enumerate() {
                    let (f, m) = (&pair[0], &pair[1]);
                    println!(
                        "mcp/payload/{in_flight}x{payload:<8} toolhost cpu {:>8.1} us/call ({:>5.2}x its 5 B call)  rmcp+sandbox floor {:>8.1} us ({:.2}x)",
                        m.cpu_us,
                        m.cpu_us / base_cpu,
                        f.cpu_us,
                        m.cpu_us / f.cpu_us
                    );
                    own[i].push(m.cpu_us / base_cpu);
                    floor[i].push(m.cpu_us / f.cpu_us);
                }
            }
            for (i, payload) in sizes.iter().enumerate() {
                println!(
                    "mcp/payload/summary/{in_flight}x{payload:<8} toolhost CPU per call = {} its 5 B call, {} the rmcp+sandbox floor",
                    Spread::of(&own[i]).ratio(),
                    Spread::of(&floor[i]).ratio()
                );
            }
        }
    }
    if section("http") {
        let http_calls = (calls / 2).max(100);
        println!("\n== streamable HTTP, one call in flight, one keep-alive connection (n={http_calls})");
        let mut http = Vec::new();
        for kind in [Kind::Rmcp, Kind::RmcpSandbox, Kind::Toolhost] {
            let m = measure_http(kind, http_calls);
            println!(
                "mcp/http/{:<20} cpu {:>7.1} us/call  round trip p50 {:>7.1} us  p99 {:>7.1} us",
                kind.label(),
                m.cpu_us,
                m.p50_us,
                m.p99_us
            );
            http.push(m);
        }
        println!(
            "mcp/http/summary: toolhost {:.1} us CPU = {:.2}x the rmcp+sandbox floor over HTTP ({:.1} us)",
            http[2].cpu_us,
            http[2].cpu_us / http[1].cpu_us,
            http[1].cpu_us
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for spinner in spinners {
        let _ = spinner.join();
    }
}
