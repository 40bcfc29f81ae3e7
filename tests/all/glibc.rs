//! The `toolhost` binary starts once, as it was started: whatever the
//! machine's glibc and processor, `serve` runs with the environment it was
//! given (no `GLIBC_TUNABLES` of its own, no second start), and hands the
//! same environment to its children. The advice for a slow glibc `memcpy`
//! (`toolhost::internal::glibc`) is the operator's to follow.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::mcp_server::{StdioServer, serve_args, temp_config};
use crate::support;

const SENTINEL: (&str, &str) = ("TOOLHOST_TEST_SENTINEL", "given-to-toolhost");

/// The environment a process was started with (by its last `exec`).
fn environ(pid: u32) -> Vec<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    bytes
        .split(|&b| b == 0)
        .filter(|v| !v.is_empty())
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .collect()
}

fn value<'a>(environ: &'a [String], name: &str) -> Option<&'a str> {
    environ
        .iter()
        .find_map(|v| v.strip_prefix(name)?.strip_prefix('='))
}

fn wait_for_file(path: &Path) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.contains(SENTINEL.0)
        {
            return text;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Serves `hello` with `env` added and a bridged MCP server that writes
/// the environment it was given (a shell that then becomes another
/// toolhost server): what the server and the bridged server were given.
fn serve_bridging(env: &[(&str, &str)]) -> (Vec<String>, Vec<String>) {
    let dumps = tempfile::tempdir().unwrap();
    let dump = dumps.path().join("bridged-environ");
    let script = format!(
        "tr '\\0' '\\n' < /proc/$$/environ > '{}'; exec \"$0\" \"$@\"",
        dump.display()
    );
    let mut bridged = vec![
        "-c".to_string(),
        script,
        support::toolhost_bin().display().to_string(),
    ];
    bridged.extend(serve_args(&["--stdio"]));
    let (_dir, config) = temp_config(&format!(
        "[[mcp.servers]]\nname = \"inner\"\ntransport = \"stdio\"\ncommand = \"sh\"\nargs = {}\n",
        toml::Value::Array(bridged.into_iter().map(toml::Value::String).collect())
    ));
    let mut env = env.to_vec();
    env.push(SENTINEL);
    let hello = support::plugin_path("hello").display().to_string();
    let server = StdioServer::start_with_env(&["--plugin", &hello, "--config", &config], &env);
    let started = environ(server.child.id());
    let children = wait_for_file(&dump);
    drop(server);
    assert_eq!(value(&started, SENTINEL.0), Some(SENTINEL.1));
    let children: Vec<String> = children.lines().map(str::to_string).collect();
    assert_eq!(value(&children, SENTINEL.0), Some(SENTINEL.1), "{children:?}");
    (started, children)
}

#[test]
fn the_server_runs_with_the_environment_it_was_given_and_passes_it_on() {
    let given = std::env::var("GLIBC_TUNABLES").ok();
    let (started, children) = serve_bridging(&[]);
    // On every machine, the one a slow glibc `memcpy` would once have
    // started again included: no tunable of its own.
    assert_eq!(value(&started, "GLIBC_TUNABLES"), given.as_deref(), "{started:?}");
    assert_eq!(
        value(&children, "GLIBC_TUNABLES"),
        given.as_deref(),
        "{children:?}"
    );
    assert!(
        !started.iter().any(|v| v.starts_with("TOOLHOST_GLIBC")),
        "{started:?}"
    );
}

#[test]
fn tunables_the_operator_sets_reach_the_server_and_its_children() {
    // One tunable: glibc cuts the variable at each `:` in the process's
    // first environment block, which /proc shows.
    let advised = format!(
        "{}={}",
        toolhost::internal::glibc::REP_MOVSB_THRESHOLD,
        toolhost::internal::glibc::ABOVE_ANY_L2
    );
    let (started, children) = serve_bridging(&[("GLIBC_TUNABLES", &advised)]);
    assert_eq!(
        value(&started, "GLIBC_TUNABLES"),
        Some(advised.as_str()),
        "{started:?}"
    );
    assert_eq!(
        value(&children, "GLIBC_TUNABLES"),
        Some(advised.as_str()),
        "{children:?}"
    );
}
