//! The live plugins folder (`[plugins_dir]`, `serve --plugins DIR`): new
//! components loaded, removed ones unloaded, replaced ones swapped once
//! settled and checked; grants by name carry over, grants by hash do not;
//! calls in flight finish on their version; no call is lost while swapping.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::config::{Config, PluginsDirConfig, Started};
use toolhost::internal::dispatch::{DispatchContext, Session};
use toolhost::internal::registry::Registry;
use toolhost::live::folder::FolderWatch;

use crate::peers::new_version;
use crate::support;

/// A generous bound on waiting for the watcher (a failure guard only).
const LIMIT: Duration = Duration::from_secs(60);

/// Starts a host whose config is `config` (in a temp folder holding the
/// folder `live/`), and watches the folder.
async fn start(config: &str) -> (tempfile::TempDir, Started, FolderWatch) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("live")).unwrap();
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, config).unwrap();
    let config = Config::load(&path).unwrap();
    let folder = config
        .plugins_dir
        .clone()
        .unwrap_or_else(|| PluginsDirConfig::new("live"));
    let started = config
        .start(&crate::engine(), Registry::new(), None)
        .await
        .unwrap();
    let watch = started.live.watch_folder(folder).await.unwrap();
    (dir, started, watch)
}

/// Writes `bytes` as `live/NAME` atomically (a hidden file, then a rename).
fn put(dir: &Path, name: &str, bytes: &[u8]) {
    let hidden = dir.join("live").join(format!(".{name}.tmp"));
    std::fs::write(&hidden, bytes).unwrap();
    std::fs::rename(&hidden, dir.join("live").join(name)).unwrap();
}

/// Waits until `check` holds for the folder's status.
async fn until(started: &Started, what: &str, check: impl Fn(&[Value]) -> bool) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    loop {
        let status = serde_json::to_value(started.live.folder()).unwrap();
        if check(status.as_array().unwrap()) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {LIMIT:?}; status {status}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn hash_of(status: &[Value], file: &str) -> Option<String> {
    status
        .iter()
        .find(|s| s["path"] == file && s["status"] == "loaded")
        .and_then(|s| s["hash"].as_str().map(String::from))
}

async fn call(started: &Started, tool: &str, args: Value) -> toolhost::internal::dispatch::ToolResult {
    let ctx = DispatchContext::new(Session::trusted("model"));
    started.dispatcher.dispatch(tool, args, &ctx).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_components_load_replaced_ones_swap_removed_ones_unload() {
    let hello = support::plugin_bytes("hello");
    let (dir, started, _watch) = start("").await;
    let mut changes = started.dispatcher.subscribe_changes();
    changes.mark_unchanged();
    assert!(!started.dispatcher.registry().contains("greet"));

    put(dir.path(), "hello.wasm", &hello);
    until(&started, "hello.wasm loaded", |s| {
        hash_of(s, "hello.wasm").is_some()
    })
    .await;
    assert_eq!(
        call(&started, "greet", json!({"name": "Ada"})).await.json(),
        "Hello, Ada!"
    );
    assert!(
        changes.has_changed().unwrap(),
        "a change of the registry (MCP list_changed) was signalled"
    );
    let first = hash_of(
        &serde_json::to_value(started.live.folder())
            .unwrap()
            .as_array()
            .unwrap()[..],
        "hello.wasm",
    );

    let v2 = new_version(&hello, "v2");
    put(dir.path(), "hello.wasm", &v2);
    let v2_hash = toolhost::ComponentHash::of(&v2).to_string();
    until(&started, "hello.wasm swapped", |s| {
        hash_of(s, "hello.wasm").as_deref() == Some(&v2_hash)
    })
    .await;
    assert_ne!(first.as_deref(), Some(v2_hash.as_str()));
    let entry = started.dispatcher.registry().get("greet").cloned().unwrap();
    assert_eq!(
        entry.source().to_string(),
        format!("component {v2_hash}"),
        "the registry serves the new version"
    );
    assert_eq!(entry.toolset(), "hello");

    std::fs::remove_file(dir.path().join("live/hello.wasm")).unwrap();
    until(&started, "hello.wasm unloaded", |s| s.is_empty()).await;
    assert!(!started.dispatcher.registry().contains("greet"));
    assert_eq!(
        call(&started, "greet", json!({"name": "Ada"})).await.json()["error_code"],
        "unknown_tool"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_written_file_is_never_loaded() {
    let hello = support::plugin_bytes("hello");
    let (dir, started, _watch) = start("[plugins_dir]\npath = \"live\"\nsettle_ms = 100\n").await;
    let path = dir.path().join("live/hello.wasm");
    let half = hello.len() / 2;
    std::fs::write(&path, &hello[..half]).unwrap();
    // The writer pauses longer than the settle time: the file is checked,
    // refused (it does not compile), and nothing is registered.
    until(&started, "the half file checked", |s| {
        s.iter()
            .any(|e| e["path"] == "hello.wasm" && e["status"] == "failed")
    })
    .await;
    assert!(!started.dispatcher.registry().contains("greet"));
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    file.write_all(&hello[half..]).unwrap();
    drop(file);
    until(&started, "the whole file loaded", |s| {
        hash_of(s, "hello.wasm").is_some()
    })
    .await;
    assert_eq!(
        call(&started, "greet", json!({"name": "Ada"})).await.json(),
        "Hello, Ada!"
    );

    // A broken new version: refused, the previous one keeps serving.
    put(dir.path(), "hello.wasm", &hello[..half]);
    until(&started, "the broken version refused", |s| {
        s.iter()
            .any(|e| e["error"].as_str().is_some_and(|m| m.contains("still serves")))
    })
    .await;
    assert_eq!(
        call(&started, "greet", json!({"name": "Ada"})).await.json(),
        "Hello, Ada!"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_given_by_name_carry_over_and_grants_given_by_hash_do_not() {
    // SAFETY-free: the same value the capability tests set; only probe reads it.
    unsafe { std::env::set_var("PROBE_VISIBLE", "yes") };
    let probe = support::plugin_bytes("probe");
    let v2 = new_version(&probe, "v2");
    let seen = |started: &Started| {
        let started = started.dispatcher.clone();
        async move {
            let ctx = DispatchContext::new(Session::trusted("model"));
            started.dispatch("list_env", json!({}), &ctx).await.json()
        }
    };
    for (key, carries) in [
        ("probe".to_string(), true),
        (toolhost::ComponentHash::of(&probe).to_string(), false),
    ] {
        let config = format!(
            "[plugins_dir]\npath = \"live\"\n[plugins_dir.grants.\"{key}\"]\nenv = [\"PROBE_VISIBLE\"]\n"
        );
        let (dir, started, _watch) = start(&config).await;
        put(dir.path(), "probe.wasm", &probe);
        until(&started, "probe loaded", |s| hash_of(s, "probe.wasm").is_some()).await;
        assert_eq!(
            seen(&started).await,
            json!({"result": ["PROBE_VISIBLE"]}),
            "granted by {key}"
        );
        put(dir.path(), "probe.wasm", &v2);
        let v2_hash = toolhost::ComponentHash::of(&v2).to_string();
        until(&started, "probe swapped", |s| {
            hash_of(s, "probe.wasm").as_deref() == Some(&v2_hash)
        })
        .await;
        let expected = if carries {
            json!({"result": ["PROBE_VISIBLE"]})
        } else {
            json!({"result": []})
        };
        assert_eq!(seen(&started).await, expected, "after a swap, granted by {key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_plugin_swapped_under_load_loses_no_call_and_in_flight_calls_finish_on_their_version() {
    let hello = support::plugin_bytes("hello");
    let sleepy = support::plugin_bytes("sleepy");
    let (dir, started, _watch) = start("[plugins_dir]\npath = \"live\"\nsettle_ms = 50\n").await;
    put(dir.path(), "hello.wasm", &hello);
    put(dir.path(), "sleepy.wasm", &sleepy);
    until(&started, "both loaded", |s| {
        hash_of(s, "hello.wasm").is_some() && hash_of(s, "sleepy.wasm").is_some()
    })
    .await;

    // A long call on sleepy's first version, in flight across its swap.
    let in_flight = {
        let dispatcher = started.dispatcher.clone();
        tokio::spawn(async move {
            let ctx = DispatchContext::new(Session::trusted("model"));
            dispatcher.dispatch("sleep", json!({"ms": 1500}), &ctx).await
        })
    };
    // Callers hammer greet while it is swapped back and forth.
    let stop = Arc::new(AtomicBool::new(false));
    let (answered, lost) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut callers = Vec::new();
    for i in 0..4 {
        let (dispatcher, stop, answered, lost) = (
            started.dispatcher.clone(),
            stop.clone(),
            answered.clone(),
            lost.clone(),
        );
        callers.push(tokio::spawn(async move {
            let ctx = DispatchContext::new(Session::trusted(&format!("caller{i}")));
            while !stop.load(Ordering::Acquire) {
                let result = dispatcher.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
                if result.json() == "Hello, Ada!" {
                    answered.fetch_add(1, Ordering::AcqRel);
                } else {
                    lost.fetch_add(1, Ordering::AcqRel);
                    eprintln!("lost call: {}", result.content);
                }
            }
        }));
    }
    put(dir.path(), "sleepy.wasm", &new_version(&sleepy, "v2"));
    let mut swaps = 0;
    for round in 0..6 {
        let bytes = if round % 2 == 0 {
            new_version(&hello, &format!("v{round}"))
        } else {
            hello.clone()
        };
        let hash = toolhost::ComponentHash::of(&bytes).to_string();
        put(dir.path(), "hello.wasm", &bytes);
        until(&started, "hello swapped", |s| {
            hash_of(s, "hello.wasm").as_deref() == Some(&hash)
        })
        .await;
        swaps += 1;
    }
    stop.store(true, Ordering::Release);
    for caller in callers {
        caller.await.unwrap();
    }
    assert_eq!(swaps, 6);
    assert_eq!(lost.load(Ordering::Acquire), 0, "calls lost during the swaps");
    assert!(answered.load(Ordering::Acquire) > 0);
    let sleepy_v2 = toolhost::ComponentHash::of(&new_version(&sleepy, "v2")).to_string();
    until(&started, "sleepy swapped", |s| {
        hash_of(s, "sleepy.wasm").as_deref() == Some(&sleepy_v2)
    })
    .await;
    let result = in_flight.await.unwrap();
    assert!(
        !result.is_error(),
        "the call in flight across the swap finished: {}",
        result.content
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_grant_may_write_into_the_plugins_folder() {
    let files = support::plugin_path("files").display().to_string();
    let config = format!(
        "[plugins_dir]\npath = \"live\"\n\n[[plugins]]\npath = \"{files}\"\n[plugins.grants]\ndirs = [{{ host = \"live\", guest = \"/workspace\", mode = \"rw\" }}]\n"
    );
    let (_dir, started, _watch) = start(&config).await;
    let status = &started.plugins[0];
    assert_eq!(status.status, "failed", "{status:?}");
    assert!(
        status
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("the live plugins folder"),
        "{status:?}"
    );
}

/// A `toolhost serve --stdio --plugin hello` child whose stderr is
/// collected, line by line; killed when dropped or after a watchdog's
/// minutes (a stalled server fails the test instead of hanging it).
struct Collected {
    server: crate::mcp_server::StdioServer,
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Collected {
    fn start(extra: &[&str], env: &[(&str, &str)]) -> Collected {
        use std::io::BufRead;
        use std::process::{Command, Stdio};
        let hello = support::plugin_path("hello").display().to_string();
        let mut args = vec!["--stdio", "--plugin", hello.as_str()];
        args.extend_from_slice(extra);
        let mut child = Command::new(support::toolhost_bin())
            .args(crate::mcp_server::serve_args(&args))
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let lines = std::io::BufReader::new(child.stderr.take().unwrap());
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let pid = child.id();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(240));
            // SAFETY: a plain kill(2) of the child we started; at worst the
            // pid is gone already.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        });
        let mut server = crate::mcp_server::StdioServer::from_child(child);
        server.handshake();
        Collected { server, log }
    }

    fn count(&self, needle: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .count()
    }

    fn wait_count(&self, needle: &str, n: usize) {
        let deadline = std::time::Instant::now() + LIMIT;
        while self.count(needle) < n {
            assert!(
                std::time::Instant::now() < deadline,
                "{n} lines with {needle:?} not logged: {:?}",
                self.log.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// A named pipe in the folder at start, another added later, and a file
/// of 400 MiB: the server starts, answers every call at once, and reads
/// none of them (a pipe is not a regular file; the big file is refused by
/// its size before it is read).
#[test]
fn pipes_and_huge_files_in_the_plugins_folder_never_stall_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    std::fs::create_dir(&live).unwrap();
    mkfifo(&live.join("early.wasm"));
    let live_arg = live.display().to_string();
    let mut s = Collected::start(&["--plugins", &live_arg], &[]);
    s.server.assert_serves(1);
    s.wait_count("early.wasm", 1);
    let before = crate::mcp_hostile::peak_rss(s.server.child.id());
    mkfifo(&live.join("late.wasm"));
    let huge = std::fs::File::create(live.join("huge.wasm")).unwrap();
    huge.set_len(400 << 20).unwrap();
    drop(huge);
    s.wait_count("late.wasm", 1);
    s.wait_count("huge.wasm", 1);
    for id in 2..20 {
        s.server.assert_serves(id);
    }
    let log = s.log.lock().unwrap().join("\n");
    assert!(log.contains("named pipe, not a regular file"), "{log}");
    assert!(log.contains("more than the cap"), "{log}");
    let growth = crate::mcp_hostile::peak_rss(s.server.child.id()).saturating_sub(before);
    assert!(growth < 64 << 20, "peak memory grew by {growth} bytes");
}

/// Loading a file raises watch events of its own (opened, read, closed):
/// they must not schedule another look, or an unchanged folder is read
/// again and again and a bad file logged each time. Each bad file is
/// reported once, and again only when it changes.
#[test]
fn an_unchanged_folder_is_read_once_and_a_bad_file_reported_once_until_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    std::fs::create_dir(&live).unwrap();
    for i in 0..20 {
        std::fs::write(live.join(format!("junk{i}.wasm")), format!("junk {i}")).unwrap();
    }
    let live_arg = live.display().to_string();
    let mut s = Collected::start(&["--plugins", &live_arg], &[("TOOLHOST_LOG", "error")]);
    const REFUSED: &str = "plugin not loaded";
    s.wait_count(REFUSED, 20);
    // Several settle periods (300 ms) of quiet: nothing is looked at again.
    std::thread::sleep(Duration::from_secs(2));
    s.server.assert_serves(1);
    assert_eq!(s.count(REFUSED), 20, "{:?}", s.log.lock().unwrap());
    // A changed file is looked at again, once.
    std::fs::write(live.join("junk0.wasm"), "other junk").unwrap();
    s.wait_count(REFUSED, 21);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(s.count(REFUSED), 21, "{:?}", s.log.lock().unwrap());
    // A good file still loads.
    put(dir.path(), "counter.wasm", &support::plugin_bytes("counter"));
    let deadline = std::time::Instant::now() + LIMIT;
    for id in 100.. {
        if s.server.call(id, "count", json!({}))["isError"] == false {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "counter.wasm never loaded");
        std::thread::sleep(Duration::from_millis(50));
    }
}
