//! The `toolhost` binary's start under glibc's slow `memcpy`
//! (`toolhost::glibc`): where the machine needs it, the server runs with
//! glibc's `REP MOVSB` threshold raised; its children get the environment
//! it was given; `TOOLHOST_KEEP_MEMCPY` keeps it as it is.

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

/// `toolhost serve --stdio` of `hello` (plus `extra`), with `env` added,
/// once it has answered `initialize` (so after any second start).
fn serve(extra: &[&str], env: &[(&str, &str)]) -> StdioServer {
    let hello = support::plugin_path("hello").display().to_string();
    let mut args = vec!["--plugin", hello.as_str()];
    args.extend_from_slice(extra);
    StdioServer::start_with_env(&args, env)
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
    let server = serve(&["--config", &config], &env);
    let started = environ(server.child.id());
    let children = wait_for_file(&dump);
    drop(server);
    assert_eq!(value(&started, SENTINEL.0), Some(SENTINEL.1));
    let children: Vec<String> = children.lines().map(str::to_string).collect();
    assert_eq!(value(&children, SENTINEL.0), Some(SENTINEL.1), "{children:?}");
    // Nothing of the second start reaches the children.
    assert!(
        !children
            .iter()
            .any(|v| v.starts_with("TOOLHOST_GLIBC_TUNABLES_WAS")),
        "{children:?}"
    );
    (started, children)
}

#[test]
fn the_server_runs_with_the_threshold_where_needed_and_its_children_get_its_environment() {
    let (started, children) = serve_bridging(&[]);
    let given = std::env::var("GLIBC_TUNABLES").ok();
    match toolhost::glibc::tunables() {
        // This machine copies slowly with REP MOVSB: the server started
        // again with the threshold above any L2 cache.
        Some(tunables) => {
            assert!(
                tunables.ends_with("glibc.cpu.x86_rep_movsb_threshold=1073741824"),
                "{tunables}"
            );
            assert_eq!(
                value(&started, "GLIBC_TUNABLES"),
                Some(tunables.as_str()),
                "{started:?}"
            );
        }
        None => assert_eq!(value(&started, "GLIBC_TUNABLES"), given.as_deref(), "{started:?}"),
    }
    assert_eq!(
        value(&children, "GLIBC_TUNABLES"),
        given.as_deref(),
        "{children:?}"
    );
}

#[test]
fn other_tunables_are_kept_and_given_back_to_the_children() {
    let other = "glibc.malloc.tcache_count=7";
    let (started, children) = serve_bridging(&[("GLIBC_TUNABLES", other)]);
    // glibc, reading the variable, cuts it at each `:` where it lies in
    // the process's first environment block, which /proc shows.
    assert_eq!(value(&started, "GLIBC_TUNABLES"), Some(other), "{started:?}");
    assert_eq!(
        started
            .iter()
            .any(|v| v == "glibc.cpu.x86_rep_movsb_threshold=1073741824"),
        toolhost::glibc::tunables().is_some(),
        "{started:?}"
    );
    assert_eq!(value(&children, "GLIBC_TUNABLES"), Some(other), "{children:?}");
}

#[test]
fn keep_memcpy_starts_the_server_once_as_it_is() {
    let started = environ(serve(&[], &[("TOOLHOST_KEEP_MEMCPY", "1")]).child.id());
    assert_eq!(
        value(&started, "GLIBC_TUNABLES"),
        std::env::var("GLIBC_TUNABLES").ok().as_deref(),
        "{started:?}"
    );
    assert!(
        !started
            .iter()
            .any(|v| v.starts_with("TOOLHOST_GLIBC_TUNABLES_WAS"))
    );
}

#[test]
fn a_threshold_already_set_is_left_as_it_is() {
    let mine = "glibc.cpu.x86_rep_movsb_threshold=4096";
    let started = environ(serve(&[], &[("GLIBC_TUNABLES", mine)]).child.id());
    assert_eq!(value(&started, "GLIBC_TUNABLES"), Some(mine), "{started:?}");
    assert!(
        !started
            .iter()
            .any(|v| v.starts_with("TOOLHOST_GLIBC_TUNABLES_WAS"))
    );
}
