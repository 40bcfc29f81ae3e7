//! Execution: the local backend, background processes and receipts, the
//! bubblewrap sandbox and the ssh backend against a real sshd.
//!
//! These tests need `bubblewrap`, `openssh-server` and `openssh-client`
//! (Debian packages). They fail, never skip, when a program is missing.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toolhost::internal::exec::{
    Backend, BackgroundManager, ExecError, ExecRequest, HostKeyCheck, LocalBackend, ProcState, ReceiptStore,
    SandboxBackend, SshBackend, find_program,
};

fn require(program: &str, package: &str) {
    assert!(
        find_program(program).is_some() || Path::new(program).is_file(),
        "`{program}` is missing: install it with `apt-get install -y {package}`"
    );
}

/// Whether, within `limit`, no process's command line matches `pattern`
/// (`pgrep -f`), polling every 100 ms.
async fn no_process_matches(pattern: &str, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        let found = std::process::Command::new("pgrep")
            .args(["-f", pattern])
            .output()
            .expect("pgrep");
        if !found.status.success() {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a process is gone (or a zombie nobody has reaped yet).
fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z')),
    }
}

async fn eventually_dead(pid: i32) -> bool {
    for _ in 0..50 {
        if dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

fn req(cmd: &str) -> ExecRequest {
    let mut r = ExecRequest::new(cmd);
    r.timeout = Duration::from_secs(20);
    r
}

#[tokio::test]
async fn local_basics_cwd_exit_code_and_env() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut r = req("pwd; echo \"pkg=${CARGO_PKG_NAME:-unset}\"; echo \"path=$PATH\"; exit 3");
    r.cwd = Some(dir.path().to_path_buf());
    let res = LocalBackend::default().run(&r).await.expect("run");
    let real = dir.path().canonicalize().expect("canon");
    assert!(
        res.stdout.starts_with(&format!("{}\n", real.display())),
        "{res:?}"
    );
    assert!(
        res.stdout.contains("pkg=unset"),
        "parent environment leaked: {res:?}"
    );
    assert!(
        res.stdout
            .contains(&format!("path={}", toolhost::internal::exec::DEFAULT_PATH))
    );
    assert_eq!(res.exit_code, Some(3));
    assert!(!res.ok && !res.timed_out);
    r.env_passthrough = vec!["CARGO_PKG_NAME".into()];
    r.env.insert("EXTRA".into(), "x y".into());
    r.command = "echo \"$CARGO_PKG_NAME $EXTRA\"".into();
    let res = LocalBackend::default().run(&r).await.expect("run");
    assert_eq!(res.stdout, format!("{} x y\n", env!("CARGO_PKG_NAME")));
    assert!(res.ok);
    let mut bad = req("true");
    bad.cwd = Some("/definitely/not/here".into());
    assert!(matches!(
        LocalBackend::default().run(&bad).await,
        Err(ExecError::InvalidCwd(_))
    ));
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let mut r = req(&format!(
        "sh -c 'sleep 30 & echo $! > {}; wait'",
        pidfile.display()
    ));
    r.timeout = Duration::from_millis(700);
    let res = LocalBackend::default().run(&r).await.expect("run");
    assert!(res.timed_out && !res.ok, "{res:?}");
    assert!(res.duration_ms < 10_000);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("pid")
        .trim()
        .parse()
        .expect("number");
    assert!(
        eventually_dead(pid).await,
        "grandchild sleep {pid} survived the timeout"
    );
}

#[tokio::test]
async fn dropping_the_future_kills_the_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("pid");
    let r = req(&format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
    let backend = LocalBackend::default();
    let cancelled = tokio::time::timeout(Duration::from_millis(700), backend.run(&r)).await;
    assert!(cancelled.is_err(), "should still be running");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .expect("pid")
        .trim()
        .parse()
        .expect("number");
    assert!(eventually_dead(pid).await, "sleep {pid} survived cancellation");
}

#[tokio::test]
async fn output_cap_keeps_head_and_tail() {
    let mut r = req("seq 1 100000; echo err >&2");
    r.output_cap = 1000;
    let res = LocalBackend::default().run(&r).await.expect("run");
    assert!(res.truncated);
    assert!(res.stdout.starts_with("1\n2\n3\n"), "{}", &res.stdout[..40]);
    assert!(res.stdout.ends_with("99999\n100000\n"));
    assert!(res.stdout.contains(" bytes cut ...]\n"));
    assert_eq!(res.stderr, "err\n");
    assert!(res.stdout.len() + res.stderr.len() < 1100);
}

fn manager(dir: &Path, max_count: usize) -> BackgroundManager {
    BackgroundManager::new(
        Arc::new(LocalBackend::default()),
        ReceiptStore::new(dir, Duration::from_secs(3600), max_count),
    )
}

#[tokio::test]
async fn background_start_poll_read_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = manager(dir.path(), 100);
    let h = m
        .start("alice", &req("echo one; sleep 0.5; echo two"))
        .expect("start");
    assert_eq!(m.poll("alice", &h).expect("poll"), ProcState::Running);
    let mut first = m.read_output("alice", &h, 0).expect("read");
    for _ in 0..40 {
        if first.data.contains("one") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        first = m.read_output("alice", &h, 0).expect("read");
    }
    assert_eq!(first.data, "one\n");
    let state = m.wait("alice", &h).await.expect("wait");
    assert_eq!(
        state,
        ProcState::Exited {
            exit_code: Some(0),
            timed_out: false,
            killed: false
        }
    );
    let rest = m.read_output("alice", &h, first.next_offset).expect("read");
    assert_eq!(rest.data, "two\n");
    // Knowing the handle is not enough.
    assert!(matches!(m.poll("mallory", &h), Err(ExecError::UnknownHandle(_))));
    assert!(matches!(
        m.read_output("mallory", &h, 0),
        Err(ExecError::UnknownHandle(_))
    ));
    assert!(matches!(
        m.receipt("mallory", &h),
        Err(ExecError::UnknownHandle(_))
    ));
    assert!(m.kill("mallory", &h).is_err());
    let receipt = m.receipt("alice", &h).expect("receipt");
    assert_eq!(receipt.output, "one\ntwo\n");
    assert_eq!(receipt.owner_session, "alice");

    let k = m.start("alice", &req("sleep 30")).expect("start");
    m.kill("alice", &k).expect("kill");
    let state = m.wait("alice", &k).await.expect("wait");
    assert!(
        matches!(
            state,
            ProcState::Exited {
                killed: true,
                exit_code: None,
                ..
            }
        ),
        "{state:?}"
    );

    // After a restart the receipt still answers, for the owner only.
    let again = manager(dir.path(), 100);
    assert!(matches!(
        again.poll("alice", &h).expect("poll"),
        ProcState::Exited {
            exit_code: Some(0),
            ..
        }
    ));
    assert!(again.poll("bob", &h).is_err());
    assert_eq!(again.read_output("alice", &h, 4).expect("read").data, "two\n");
    let files = files_under(dir.path());
    assert_eq!(
        files.len(),
        2,
        "exactly one receipt per finished process, no temp files: {files:?}"
    );
    assert!(files.iter().all(|f| f.extension().is_some_and(|x| x == "json")));
}

/// Every file below `dir` (receipts live in one folder per session).
pub(crate) fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
    {
        if entry.is_dir() {
            out.extend(files_under(&entry));
        } else {
            out.push(entry);
        }
    }
    out
}

#[tokio::test]
async fn receipts_are_pruned_by_count_per_session_and_by_age() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = manager(dir.path(), 2);
    let quiet = m.start("quiet", &req("echo kept")).expect("start");
    m.wait("quiet", &quiet).await.expect("wait");
    let mut handles = Vec::new();
    for i in 0..4 {
        let h = m.start("busy", &req(&format!("echo {i}"))).expect("start");
        m.wait("busy", &h).await.expect("wait");
        handles.push(h);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(files_under(dir.path()).len(), 3, "two of busy's, one of quiet's");
    assert!(m.receipt("busy", &handles[0]).is_err(), "the oldest went");
    assert!(m.receipt("busy", &handles[3]).is_ok());
    assert!(
        m.receipt("quiet", &quiet).is_ok(),
        "another session's processes never evict a receipt"
    );
    // Past the age limit a receipt cannot be read, even before a prune.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let short = ReceiptStore::new(dir.path(), Duration::from_millis(10), 100);
    assert!(matches!(
        short.read("quiet", &quiet),
        Err(ExecError::UnknownHandle(_))
    ));
    short.prune();
    assert!(files_under(dir.path()).is_empty());
}

#[tokio::test]
async fn sandbox_confines_writes_and_network() {
    require("bwrap", "bubblewrap");
    let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir");
    let outside = tempfile::tempdir_in("/var/tmp").expect("tempdir");
    let target = outside.path().join("escaped");
    let sandbox = SandboxBackend {
        network: false,
        default_cwd: Some(dir.path().to_path_buf()),
        ..SandboxBackend::default()
    };
    let mut r = req(&format!(
        "echo inside > ok.txt && echo ok; touch {} && echo ESCAPED; touch /etc/sandbox-escape && echo ESCAPED",
        target.display()
    ));
    r.cwd = Some(dir.path().to_path_buf());
    let res = sandbox.run(&r).await.expect("run");
    assert!(
        res.stdout.starts_with("ok\n") && !res.stdout.contains("ESCAPED"),
        "{res:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ok.txt")).expect("written"),
        "inside\n"
    );
    assert!(!target.exists() && !Path::new("/etc/sandbox-escape").exists());

    // The working directory moves the command inside the workspace, never
    // out of it: the writable area stays the workspace.
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    let mut r = req("pwd; echo here > here.txt");
    r.cwd = Some("sub".into());
    let res = sandbox.run(&r).await.expect("run");
    assert_eq!(
        res.stdout,
        format!("{}\n", dir.path().join("sub").canonicalize().unwrap().display())
    );
    assert!(dir.path().join("sub/here.txt").exists());
    for outside in [outside.path().to_path_buf(), "/".into(), "..".into()] {
        let mut r = req(&format!("touch {}", target.display()));
        r.cwd = Some(outside.clone());
        let err = sandbox.run(&r).await.unwrap_err();
        assert!(
            matches!(err, ExecError::OutsideWorkspace { .. }),
            "{outside:?}: {err}"
        );
    }
    assert!(!target.exists());

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let probe = format!(
        "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo CONNECTED || echo REFUSED"
    );
    let mut r = req(&probe);
    r.cwd = Some(dir.path().to_path_buf());
    let res = sandbox.run(&r).await.expect("run");
    assert_eq!(res.stdout, "REFUSED\n", "{res:?}");
    let granted = SandboxBackend {
        network: true,
        default_cwd: Some(dir.path().to_path_buf()),
        ..SandboxBackend::default()
    };
    let res = granted.run(&r).await.expect("run");
    assert_eq!(res.stdout, "CONNECTED\n", "{res:?}");
}

struct Sshd {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
    key: std::path::PathBuf,
    known_hosts: std::path::PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen runs");
    assert!(st.success());
}

async fn start_sshd() -> Sshd {
    require("/usr/sbin/sshd", "openssh-server");
    require("ssh", "openssh-client");
    require("ssh-keygen", "openssh-client");
    std::fs::create_dir_all("/run/sshd").expect("mkdir /run/sshd");
    let dir = tempfile::tempdir().expect("tempdir");
    let (host, key) = (dir.path().join("host_key"), dir.path().join("user_key"));
    keygen(&host);
    keygen(&key);
    let authorized = dir.path().join("authorized_keys");
    std::fs::copy(key.with_extension("pub"), &authorized).expect("authorized_keys");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let config = dir.path().join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\n\
             PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nStrictModes no\n",
            host.display(),
            dir.path().join("sshd.pid").display(),
            authorized.display()
        ),
    )
    .expect("config");
    let child = std::process::Command::new("/usr/sbin/sshd")
        .args(["-D", "-e", "-f"])
        .arg(&config)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sshd starts");
    let hostpub = std::fs::read_to_string(host.with_extension("pub")).expect("host pub");
    let known_hosts = dir.path().join("known_hosts");
    std::fs::write(&known_hosts, format!("[127.0.0.1]:{port} {hostpub}")).expect("known_hosts");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Sshd {
        child,
        port,
        _dir: dir,
        key,
        known_hosts,
    }
}

#[tokio::test]
async fn ssh_runs_remotely_with_quoting() {
    let sshd = start_sshd().await;
    let user = std::process::Command::new("id").arg("-un").output().expect("id");
    let backend = SshBackend {
        host: "127.0.0.1".into(),
        port: sshd.port,
        user: String::from_utf8_lossy(&user.stdout).trim().to_string(),
        identity_file: sshd.key.clone(),
        known_hosts: sshd.known_hosts.clone(),
        host_key_check: HostKeyCheck::Strict,
    };
    let mut r = req("pwd; echo \"$GREETING\"; echo 'it'\"'\"'s'; echo $((6*7)); exit 4");
    r.cwd = Some("/tmp".into());
    r.env.insert("GREETING".into(), "hello 'world'".into());
    let res = backend.run(&r).await.expect("run");
    assert_eq!(res.stdout, "/tmp\nhello 'world'\nit's\n42\n", "{res:?}");
    assert_eq!(res.exit_code, Some(4));

    // Passed-through variables travel to the remote command too.
    let mut r = req("echo \"$CARGO_MANIFEST_DIR\"");
    r.env_passthrough = vec!["CARGO_MANIFEST_DIR".into()];
    let res = backend.run(&r).await.expect("run");
    assert_eq!(res.stdout, format!("{}\n", env!("CARGO_MANIFEST_DIR")), "{res:?}");

    // A timed-out command does not live on on the remote host.
    let marker = format!("sleep 37.{}", std::process::id());
    let mut r = req(&format!("{marker}; echo finished"));
    r.timeout = Duration::from_secs(1);
    let res = backend.run(&r).await.expect("run");
    assert!(res.timed_out, "{res:?}");
    let gone = no_process_matches(&marker, Duration::from_secs(8)).await;
    assert!(gone, "the remote `{marker}` outlived its timeout");

    let wrong = SshBackend {
        known_hosts: sshd.key.with_extension("none"),
        ..backend
    };
    let res = wrong.run(&req("echo should-not-run")).await.expect("run");
    assert!(
        !res.ok && !res.stdout.contains("should-not-run"),
        "unknown host key must be refused: {res:?}"
    );
}

#[tokio::test]
async fn a_missing_shell_is_a_typed_error_naming_it() {
    let local = LocalBackend {
        default_cwd: None,
        shell: Some("/nonexistent/sh".into()),
    };
    let err = local.run(&req("echo hi")).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::ProgramMissing { program, .. } if program == "/nonexistent/sh"),
        "{err}"
    );
    assert!(err.to_string().contains("shell"), "{err}");
}

/// Runs `toolhost call-tool exec` under a config with `[exec]` EXEC and a
/// `PATH` where no program can be found; returns the printed JSON.
fn exec_without_programs(exec: &str) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty-bin");
    std::fs::create_dir(&empty).expect("mkdir");
    std::fs::write(dir.path().join("toolhost.toml"), format!("[exec]\n{exec}")).expect("config");
    let out = std::process::Command::new(crate::support::toolhost_bin())
        .args(["call-tool", "exec", r#"{"command": "echo hi"}"#, "--config"])
        .arg(dir.path().join("toolhost.toml"))
        .env("PATH", &empty)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run toolhost");
    assert!(!out.status.success());
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn a_missing_bwrap_or_ssh_is_a_clear_error() {
    let sandbox = exec_without_programs("backend = \"sandbox\"\n");
    assert_eq!(sandbox["error_code"], "unavailable", "{sandbox}");
    let text = sandbox["error"].as_str().unwrap();
    assert!(
        text.contains("`bwrap` is not installed") && text.contains("apt-get install -y bubblewrap"),
        "{text}"
    );

    let ssh = exec_without_programs(
        "backend = \"ssh\"\n[exec.ssh]\nhost = \"127.0.0.1\"\nuser = \"u\"\nidentity_file = \"k\"\nknown_hosts = \"kh\"\n",
    );
    assert_eq!(ssh["error_code"], "unavailable", "{ssh}");
    let text = ssh["error"].as_str().unwrap();
    assert!(
        text.contains("`ssh` is not installed") && text.contains("openssh-client"),
        "{text}"
    );
}

#[test]
fn bwrap_arguments_confine_the_command() {
    let sandbox = SandboxBackend::default();
    let args = sandbox.bwrap_args("/w", "/w/sub", "echo hi");
    for flag in [
        "--unshare-all",
        "--ro-bind",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
    ] {
        assert!(args.iter().any(|a| a == flag), "{flag}");
    }
    assert!(!args.iter().any(|a| a == "--share-net"));
    let bind = args.iter().position(|a| a == "--bind").unwrap();
    assert_eq!(args[bind + 1..bind + 3], ["/w", "/w"]);
    let chdir = args.iter().position(|a| a == "--chdir").unwrap();
    assert_eq!(args[chdir + 1], "/w/sub");
    assert_eq!(toolhost::internal::exec::shell_quote("it's"), "'it'\\''s'");
}

#[tokio::test]
async fn receipts_are_redacted_and_private_on_disk() {
    use std::os::unix::fs::PermissionsExt;
    let parent = tempfile::tempdir().expect("tempdir");
    let dir = parent.path().join("receipts");
    // A folder made earlier with the usual permissions is tightened too.
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let store = ReceiptStore::new(&dir, Duration::from_secs(3600), 100).with_redactor(
        toolhost::internal::redact::Redactor::new(["swordfish-1234".to_string()]),
    );
    let m = BackgroundManager::new(Arc::new(LocalBackend::default()), store);
    let command =
        "echo API_TOKEN=s3cret-value; echo swordfish-1234; echo ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let h = m.start("s", &req(command)).expect("start");
    m.wait("s", &h).await.expect("wait");
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    let receipts = files_under(&dir);
    assert_eq!(receipts.len(), 1);
    assert_eq!(mode(&receipts[0]), 0o600);
    assert_eq!(mode(receipts[0].parent().unwrap()), 0o700);
    let text = std::fs::read_to_string(&receipts[0]).expect("read");
    for secret in ["s3cret-value", "swordfish-1234", "ghp_0123456789"] {
        assert!(!text.contains(secret), "{secret} leaked into the receipt: {text}");
    }
    let receipt = m.receipt("s", &h).expect("receipt");
    assert_eq!(
        receipt.output, "API_TOKEN=[REDACTED]\n[REDACTED]\n[REDACTED]\n",
        "{receipt:?}"
    );
    assert!(receipt.command.contains("API_TOKEN=[REDACTED]"), "{receipt:?}");
}

#[tokio::test]
async fn the_config_can_point_exec_at_an_ssh_host() {
    use toolhost::internal::dispatch::{DispatchContext, Session};
    let sshd = start_sshd().await;
    let user = std::process::Command::new("id").arg("-un").output().expect("id");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("toolhost.toml");
    std::fs::write(
        &path,
        format!(
            "[exec]\nbackend = \"ssh\"\ncwd = \"/tmp\"\n[exec.ssh]\nhost = \"127.0.0.1\"\nport = {}\nuser = {:?}\nidentity_file = {:?}\nknown_hosts = {:?}\n",
            sshd.port,
            String::from_utf8_lossy(&user.stdout).trim(),
            sshd.key.display().to_string(),
            sshd.known_hosts.display().to_string(),
        ),
    )
    .expect("config");
    let config = toolhost::config::Config::load(&path).expect("config loads");
    let dispatcher = config
        .dispatcher(&crate::engine(), toolhost::internal::registry::Registry::new())
        .await
        .expect("dispatcher");
    let ctx = DispatchContext::new(Session::trusted("s"));
    let result = dispatcher
        .dispatch("exec", serde_json::json!({"command": "pwd; echo over-ssh"}), &ctx)
        .await;
    let json = result.json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["stdout"], "/tmp\nover-ssh\n", "{json}");
    // The gate still stands in front of the remote host.
    let result = dispatcher
        .dispatch("exec", serde_json::json!({"command": "rm -rf /tmp/x"}), &ctx)
        .await;
    assert_eq!(result.json()["status"], "blocked", "{}", result.content);
}

#[test]
fn ssh_backend_config_errors_name_the_fix() {
    let cases = [
        ("[exec]\nbackend = \"ssh\"\n", "needs an [exec.ssh] table"),
        (
            "[exec]\n[exec.ssh]\nhost = \"h\"\nuser = \"u\"\nidentity_file = \"k\"\nknown_hosts = \"kh\"\n",
            "set backend = \"ssh\"",
        ),
        (
            "[exec]\nbackend = \"ssh\"\n[exec.ssh]\nhost = \"h\"\nuser = \"u\"\nidentity_file = \"k\"\nknown_hosts = \"kh\"\nhost_key_check = \"no\"\n",
            "use \"strict\" or \"accept-new\"",
        ),
    ];
    for (text, expected) in cases {
        let config = toolhost::config::Config::parse(text, Path::new("t.toml")).expect("parses");
        let gate = config.approval_gate(None).expect("gate");
        let err = config
            .register_builtins(&mut toolhost::internal::registry::Registry::new(), &gate)
            .expect_err(text);
        assert!(err.message().contains(expected), "{err}");
    }
}

#[tokio::test]
async fn nothing_started_in_the_sandbox_outlives_the_command() {
    require("bwrap", "bubblewrap");
    let dir = tempfile::tempdir_in("/var/tmp").expect("tempdir");
    let sandbox = SandboxBackend {
        network: false,
        default_cwd: Some(dir.path().to_path_buf()),
        ..SandboxBackend::default()
    };
    // A child that leaves the process group (a new session), then the
    // command itself ends at once.
    let marker = format!("sleep 123.{}", std::process::id());
    let res = sandbox
        .run(&req(&format!("setsid {marker} & echo started")))
        .await
        .expect("run");
    assert_eq!(res.stdout, "started\n", "{res:?}");
    let gone = no_process_matches(&marker, Duration::from_secs(5)).await;
    assert!(gone, "`{marker}` outlived its sandbox");
}
