//! Start-up time and resident memory with many components loaded, and
//! resident memory per call in flight, each measured on a child
//! `toolhost serve --stdio` process (its own address space, nothing of the
//! benchmark's in it).
//!
//! ```text
//! cargo bench -p toolhost --bench scale
//! SCALE_RUNS=5 SCALE_COMPONENTS=1,10,100,1000 cargo bench -p toolhost --bench scale
//! ```
//!
//! 1. **Components**: N distinct components (N = 0, 1, 10, 100, 1000) made
//!    from `hello` by renaming its tool `greet` to `g0000`, `g0001`, ...
//!    in place (the same length: a valid component with its own hash and
//!    its own tool name, so the N register side by side). A config lists
//!    the N; one run of the largest warms the compile cache (kept under
//!    `target/bench-scale/`, so only the first run compiles). Then for each
//!    N, `SCALE_RUNS` times: start `toolhost serve --stdio --config F`,
//!    send `initialize` and `tools/list`, and time until the tool list
//!    (with N tools) comes back: that is start-up (process, engine and
//!    pool, every component loaded from the cache and registered). Then
//!    its resident memory (`VmRSS` of `/proc/PID/status`, and the
//!    anonymous part of it, `RssAnon`). Printed: the
//!    medians, and memory per component (the slope from N = 0).
//! 2. **Calls in flight**: `toolhost serve` with `sleepy` alone; K calls
//!    of a 3 s sleep sent at once (K = 16, 64; within the places client
//!    calls may hold); once every one is in its instance (no answer yet,
//!    half a second on), resident memory minus that of an idle server,
//!    over K.

mod common;
use toolhost_test_support as support;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A `toolhost serve --stdio` child process.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn(config: &Path, cache: &Path) -> Server {
        let mut child = Command::new(support::toolhost_bin())
            .args(["serve", "--stdio", "--config"])
            .arg(config)
            .arg("--cache-dir")
            .arg(cache)
            .env("RUST_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("toolhost serve starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server { child, stdin, stdout }
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("JSON");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("a request sent");
        self.stdin.flush().expect("flushed");
    }

    /// The next message carrying an `id` (a response).
    fn response(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("a line read");
            assert!(n > 0, "toolhost serve exited before answering");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC message");
            if message.get("id").is_some() && message.get("method").is_none() {
                return message;
            }
        }
    }

    fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "scale-bench", "version": "0"}}}),
        );
        let answer = self.response();
        assert!(answer.get("result").is_some(), "{answer}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// How many tools `tools/list` lists.
    fn tool_count(&mut self) -> usize {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
        let answer = self.response();
        answer["result"]["tools"].as_array().map_or(0, Vec::len)
    }

    /// Resident memory, in bytes.
    fn rss(&self) -> u64 {
        self.status("VmRSS")
    }

    /// A size from `/proc/PID/status` (`VmRSS`, `RssAnon`, ...), in bytes.
    fn status(&self, field: &str) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("/proc/PID/status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/PID/status"))
            << 10
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing stdin ends the server; kill it if it lingers.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `hello` with its tool renamed to `name` (5 bytes, as `greet`).
fn hello_as(hello: &[u8], name: &str) -> Vec<u8> {
    assert_eq!(name.len(), 5);
    let mut bytes = hello.to_vec();
    let mut found = 0;
    let mut i = 0;
    while i + 5 <= bytes.len() {
        if &bytes[i..i + 5] == b"greet" {
            bytes[i..i + 5].copy_from_slice(name.as_bytes());
            found += 1;
            i += 5;
        } else {
            i += 1;
        }
    }
    assert!(found > 0, "`greet` not found in hello.wasm");
    bytes
}

/// A config serving `components` and nothing else (no `[exec]`: no built-ins).
fn config(dir: &Path, components: &[PathBuf]) -> PathBuf {
    let mut text = String::new();
    for path in components {
        text.push_str(&format!("[[plugins]]\npath = \"{}\"\n", path.display()));
    }
    let file = dir.join(format!("toolhost-{}.toml", components.len()));
    std::fs::write(&file, text).expect("config written");
    file
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn mib(bytes: f64) -> f64 {
    bytes / f64::from(1 << 20)
}

fn components(dir: &Path, cache: &Path) {
    let counts = common::env_list("SCALE_COMPONENTS", &[0, 1, 10, 100, 1000]);
    let runs = common::env_list("SCALE_RUNS", &[3])[0].max(1);
    let largest = counts.iter().copied().max().unwrap_or(0);
    let hello = support::plugin_bytes("hello");
    let paths: Vec<PathBuf> = (0..largest)
        .map(|i| {
            let path = dir.join(format!("hello_{i:04}.wasm"));
            std::fs::write(&path, hello_as(&hello, &format!("g{i:04}"))).expect("component written");
            path
        })
        .collect();
    // Warm the cache: one start with every component (compiles those not
    // cached yet).
    let start = Instant::now();
    let mut warm = Server::spawn(&config(dir, &paths), cache);
    warm.initialize();
    let tools = warm.tool_count();
    assert!(tools >= largest, "{tools} tools for {largest} components");
    drop(warm);
    println!(
        "## components: {largest} distinct `hello`s in the cache (warmed) in {:.1} s; then {runs} starts per N, medians",
        start.elapsed().as_secs_f64()
    );
    println!(
        "| components | start-up ms (to tools/list) | resident MiB | of which anonymous MiB | MiB per component over N = 0 |"
    );
    println!("|---:|---:|---:|---:|---:|");
    let mut base_rss = None;
    for &n in &counts {
        let file = config(dir, &paths[..n]);
        let (mut times, mut rss, mut anon) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let start = Instant::now();
            let mut server = Server::spawn(&file, cache);
            server.initialize();
            let tools = server.tool_count();
            times.push(start.elapsed().as_secs_f64() * 1e3);
            assert!(tools >= n, "{tools} tools for {n} components");
            rss.push(server.rss() as f64);
            anon.push(server.status("RssAnon") as f64);
        }
        let (ms, rss, anon) = (median(times), median(rss), median(anon));
        let base = *base_rss.get_or_insert(rss);
        let per = if n == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", mib(rss - base) / n as f64)
        };
        println!("| {n} | {ms:.0} | {:.1} | {:.1} | {per} |", mib(rss), mib(anon));
    }
}

fn calls_in_flight(dir: &Path, cache: &Path) {
    const SLEEP_MS: u64 = 3000;
    let file = config(dir, &[support::plugin_path("sleepy")]);
    println!();
    println!("## calls in flight: `sleepy` sleeping {SLEEP_MS} ms, K calls sent at once");
    println!("| K | idle MiB | K in flight MiB | after they end MiB | KiB per call in flight |");
    println!("|---:|---:|---:|---:|---:|");
    // Warm the cache for `sleepy` (a compile would count in the first
    // server's idle memory).
    let mut warm = Server::spawn(&file, cache);
    warm.initialize();
    drop(warm);
    for k in common::env_list("SCALE_IN_FLIGHT", &[16, 64]) {
        let mut server = Server::spawn(&file, cache);
        server.initialize();
        assert_eq!(server.tool_count(), 1);
        std::thread::sleep(Duration::from_millis(200));
        let idle = server.rss() as f64;
        let sent = Instant::now();
        for id in 0..k {
            server.send(&json!({"jsonrpc": "2.0", "id": 100 + id, "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"ms": SLEEP_MS}}}));
        }
        std::thread::sleep(Duration::from_millis(1000));
        let busy = server.rss() as f64;
        let measured_at = sent.elapsed();
        for _ in 0..k {
            let answer = server.response();
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        }
        assert!(
            measured_at < Duration::from_millis(SLEEP_MS),
            "measured after the calls ended ({measured_at:?}): the machine is too busy"
        );
        let after = server.rss() as f64;
        println!(
            "| {k} | {:.1} | {:.1} | {:.1} | {:.0} |",
            mib(idle),
            mib(busy),
            mib(after),
            (busy - idle) / 1024.0 / k as f64
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` too: run only
    // for a real benchmark run.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // Kept between runs (under target/), so that a second run finds the
    // thousand components compiled already.
    let dir = support::workspace_root().join("target").join("bench-scale");
    std::fs::create_dir_all(&dir).expect("a folder");
    let cache = dir.join("cache");
    components(&dir, &cache);
    calls_in_flight(&dir, &cache);
}
