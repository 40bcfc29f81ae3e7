//! `require_approval` through the dispatch pipeline: any tool, not only
//! `exec`, can need approval; the request shows the final arguments; nothing
//! runs without an approval, and a blocked call is the seed's `BLOCKED: …`
//! result.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolhost::ErrorCode;
use toolhost::internal::approval::{
    ApprovalCallback, ApprovalGate, ApprovalOutcome, ApprovalPolicy, ApprovalRequest, BoxFuture, Choice,
    Subject, ToolApprovalRules,
};
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, PreDecision, Session, ToolResult};
use toolhost::internal::registry::{FnTool, Registry, ToolOutput, ToolSpec};

/// Answers every request with `outcome` and keeps the requests.
struct Answer {
    outcome: ApprovalOutcome,
    seen: Mutex<Vec<ApprovalRequest>>,
}

impl Answer {
    fn new(outcome: ApprovalOutcome) -> Arc<Answer> {
        Arc::new(Answer {
            outcome,
            seen: Mutex::new(Vec::new()),
        })
    }

    fn requests(&self) -> Vec<ApprovalRequest> {
        self.seen.lock().unwrap().clone()
    }
}

impl ApprovalCallback for Answer {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.seen.lock().unwrap().push(request.clone());
        Box::pin(async move { self.outcome.clone() })
    }
}

/// A tool that counts its runs and echoes its arguments.
fn counting(name: &str, runs: &Arc<AtomicUsize>) -> impl toolhost::internal::registry::Tool {
    let runs = Arc::clone(runs);
    FnTool::new(
        ToolSpec::new(name, "Counts its runs.", json!({"type": "object"})),
        move |args, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok(ToolOutput::json(&args)))
        },
    )
}

fn gate(patterns: &[&str], answer: Option<Arc<Answer>>) -> Arc<ApprovalGate> {
    let policy = ApprovalPolicy {
        tools: ToolApprovalRules::new(patterns.iter().copied()),
        ..ApprovalPolicy::default()
    };
    let mut gate = ApprovalGate::new(policy);
    if let Some(answer) = answer {
        gate = gate.with_callback(answer);
    }
    Arc::new(gate)
}

/// A config file in a new temporary folder: `require_approval = [PATTERN]`,
/// then `extra`, then the hello plugin.
fn gated_config(pattern: &str, extra: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolhost.toml");
    let hello = crate::support::plugin_path("hello");
    let text = format!(
        "require_approval = [{pattern:?}]\n{extra}\n[[plugins]]\npath = {:?}\n",
        hello.display().to_string()
    );
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

async fn call(d: &Dispatcher, session: &Arc<Session>, name: &str, args: Value) -> ToolResult {
    d.dispatch(name, args, &DispatchContext::new(Arc::clone(session)))
        .await
}

#[tokio::test]
async fn headless_a_matching_tool_is_blocked_and_never_runs() {
    let (deploys, reads) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let mut registry = Registry::new();
    registry.register(counting("deploy_service", &deploys)).unwrap();
    registry.register(counting("read_file", &reads)).unwrap();
    let d = Dispatcher::builder(registry)
        .approval(gate(&["deploy*"], None))
        .build()
        .unwrap();
    let s = Session::trusted("s1");
    let result = call(&d, &s, "deploy_service", json!({"env": "prod"})).await;
    assert_eq!(result.error_code, Some(ErrorCode::Blocked), "{}", result.content);
    let json = result.json();
    assert_eq!(json["status"], "blocked");
    assert_eq!(json["error_code"], "blocked");
    let error = json["error"].as_str().unwrap();
    assert!(
        error.starts_with("BLOCKED: the tool call `deploy_service`"),
        "{error}"
    );
    assert!(error.contains("Do NOT retry"), "{error}");
    assert_eq!(deploys.load(Ordering::SeqCst), 0);
    // Tools no pattern names run as before.
    let result = call(&d, &s, "read_file", json!({"path": "a"})).await;
    assert!(!result.is_error(), "{}", result.content);
    assert_eq!(reads.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_request_shows_the_arguments_as_the_tool_gets_them() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.register(counting("deploy", &runs)).unwrap();
    let answer = Answer::new(ApprovalOutcome::Decided(Choice::Once));
    // A pre-call hook rewrites the arguments: the person approving must see
    // the rewritten ones, which are what the tool runs with.
    let d = Dispatcher::builder(registry)
        .pre_hook(|_, args| {
            let mut args = args.clone();
            args["env"] = json!("staging");
            PreDecision::Rewrite(args)
        })
        .approval(gate(&["deploy"], Some(answer.clone())))
        .build()
        .unwrap();
    let result = call(&d, &Session::trusted("s1"), "deploy", json!({"env": "prod"})).await;
    assert_eq!(result.json(), json!({"env": "staging"}));
    let requests = answer.requests();
    assert_eq!(requests.len(), 1);
    let Subject::ToolCall {
        tool,
        arguments,
        pattern,
    } = &requests[0].subject
    else {
        panic!("a tool-call request")
    };
    assert_eq!((tool.as_str(), pattern.as_str()), ("deploy", "deploy"));
    assert_eq!(
        arguments,
        &serde_json::to_string_pretty(&json!({"env": "staging"})).unwrap()
    );
    // "Once" is not remembered: the next call asks again.
    call(&d, &Session::trusted("s1"), "deploy", json!({})).await;
    assert_eq!(answer.requests().len(), 2);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_session_approval_is_kept_for_that_session_only() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.register(counting("deploy", &runs)).unwrap();
    let answer = Answer::new(ApprovalOutcome::Decided(Choice::Session));
    let d = Dispatcher::builder(registry)
        .approval(gate(&["deploy"], Some(answer.clone())))
        .build()
        .unwrap();
    let (a, b) = (Session::trusted("a"), Session::trusted("b"));
    for _ in 0..3 {
        assert!(!call(&d, &a, "deploy", json!({})).await.is_error());
    }
    assert_eq!(answer.requests().len(), 1);
    assert!(!call(&d, &b, "deploy", json!({})).await.is_error());
    assert_eq!(answer.requests().len(), 2);
    assert_eq!(runs.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn denials_block_and_the_third_says_stop() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.register(counting("wipe", &runs)).unwrap();
    let d = Dispatcher::builder(registry)
        .approval(gate(
            &["wipe"],
            Some(Answer::new(ApprovalOutcome::Decided(Choice::Deny))),
        ))
        .build()
        .unwrap();
    let s = Session::trusted("s");
    let mut last = String::new();
    for _ in 0..3 {
        let result = call(&d, &s, "wipe", json!({})).await;
        assert_eq!(result.error_code, Some(ErrorCode::Blocked));
        last = result.json()["error"].as_str().unwrap().to_string();
    }
    assert!(last.contains("the user denied it"), "{last}");
    assert!(last.contains("stop trying variations"), "{last}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_pending_question_is_approval_required() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.register(counting("deploy", &runs)).unwrap();
    let pending = Answer::new(ApprovalOutcome::Pending { ticket: "t-7".into() });
    let d = Dispatcher::builder(registry)
        .approval(gate(&["deploy"], Some(pending)))
        .build()
        .unwrap();
    let result = call(&d, &Session::trusted("s"), "deploy", json!({})).await;
    assert_eq!(result.error_code, Some(ErrorCode::ApprovalRequired));
    let json = result.json();
    assert_eq!(json["status"], "approval_required");
    assert_eq!(json["ticket"], "t-7");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn intercepted_and_nested_calls_go_through_the_gate_too() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = Registry::new();
    registry.register(counting("deploy", &runs)).unwrap();
    // A tool that calls `deploy` through the nested-call API.
    registry
        .register(FnTool::new(
            ToolSpec::new("orchestrate", "Calls deploy.", json!({"type": "object"})),
            |_, ctx: toolhost::internal::registry::CallContext| async move {
                let caller = ctx.caller.clone().expect("a caller");
                match caller.0.call_tool("deploy", json!({}), ctx).await {
                    Ok(out) => Ok(out),
                    Err(e) => Ok(ToolOutput::json(
                        &json!({"nested_error": e.code().as_str(), "message": e.message()}),
                    )),
                }
            },
        ))
        .unwrap();
    let host_runs = Arc::new(AtomicUsize::new(0));
    let d = Dispatcher::builder(registry)
        .intercept(counting("deploy_app_state", &host_runs))
        .approval(gate(&["deploy*"], None))
        .build()
        .unwrap();
    let s = Session::trusted("s");
    let result = call(&d, &s, "deploy_app_state", json!({})).await;
    assert_eq!(result.error_code, Some(ErrorCode::Blocked), "{}", result.content);
    assert_eq!(host_runs.load(Ordering::SeqCst), 0);
    let result = call(&d, &s, "orchestrate", json!({})).await;
    let json = result.json();
    assert_eq!(json["nested_error"], "blocked", "{json}");
    assert!(
        json["message"].as_str().unwrap().starts_with("BLOCKED: "),
        "{json}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn require_approval_in_the_config_gates_a_wasm_tool() {
    let (_dir, config_path) = gated_config("gree*", "");
    let config = toolhost::config::Config::load(&config_path).unwrap();
    let headless = config
        .dispatcher(&crate::engine(), Registry::new())
        .await
        .unwrap();
    let s = Session::trusted("s");
    let result = call(&headless, &s, "greet", json!({"name": "Ada"})).await;
    assert_eq!(result.error_code, Some(ErrorCode::Blocked), "{}", result.content);
    let answer = Answer::new(ApprovalOutcome::Decided(Choice::Once));
    let asking = config
        .dispatcher_with_approver(&crate::engine(), Registry::new(), Some(answer.clone()))
        .await
        .unwrap();
    let result = call(&asking, &s, "greet", json!({"name": "Ada"})).await;
    assert_eq!(result.content, r#""Hello, Ada!""#);
    assert_eq!(answer.requests().len(), 1);
}

#[test]
fn call_tool_without_a_terminal_is_blocked_by_require_approval() {
    let (_dir, config_path) = gated_config("greet", "");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["call-tool", "greet", r#"{"name":"Ada"}"#, "--config"])
        .arg(&config_path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "blocked", "{json}");
    assert!(
        json["error"].as_str().unwrap().contains("no one to approve it"),
        "{json}"
    );
}

/// Runs `toolhost ARGS` with a pseudo-terminal as its controlling terminal,
/// stdin and stderr (stdout stays a pipe, for the JSON result), answers the
/// approval prompt with `answer`, and returns the result and what the
/// terminal showed.
fn on_a_terminal(args: &[&str], answer: &str) -> (Value, String) {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;

    let pty = nix::pty::openpty(None, None).unwrap();
    let slave = std::fs::File::from(pty.slave);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"));
    command
        .args(args)
        .stdin(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap())
        .stdout(std::process::Stdio::piped());
    let fd = slave.as_raw_fd();
    // SAFETY: between fork and exec the closure only makes async-signal-safe
    // system calls (setsid, ioctl) on a descriptor the child inherited.
    unsafe {
        command.pre_exec(move || {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            if nix::libc::ioctl(fd, nix::libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    drop(slave);
    let master = std::fs::File::from(pty.master);
    let mut reader = master.try_clone().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut shown = String::new();
    while !shown.contains("Allow?") {
        // A guard against a hang, not a timing assertion.
        let chunk = rx
            .recv_timeout(std::time::Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("no prompt; the terminal showed: {shown}"));
        shown.push_str(&String::from_utf8_lossy(&chunk));
    }
    (&master).write_all(format!("{answer}\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    while let Ok(chunk) = rx.try_recv() {
        shown.push_str(&String::from_utf8_lossy(&chunk));
    }
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {:?}; terminal: {shown}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (json, shown)
}

#[test]
fn the_cli_asks_on_its_terminal_for_commands_and_for_tool_calls() {
    let (dir, config_path) = gated_config("greet", "[exec]\nbackend = \"local\"\n");
    let config = config_path.to_str().unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    let rm = json!({"command": format!("rm -rf {}", victim.display())}).to_string();

    // Denied on the terminal: blocked, nothing deleted.
    let (json, shown) = on_a_terminal(&["call-tool", "exec", &rm, "--config", config], "d");
    assert_eq!(json["status"], "blocked", "{json}");
    assert!(
        json["error"].as_str().unwrap().contains("the user denied it"),
        "{json}"
    );
    assert!(shown.contains("rm -rf"), "{shown}");
    assert!(victim.exists());

    // Approved once: it runs.
    let (json, _) = on_a_terminal(&["call-tool", "exec", &rm, "--config", config], "o");
    assert_eq!(json["ok"], true, "{json}");
    assert!(!victim.exists());

    // A require_approval tool: the prompt shows its arguments.
    let (json, shown) = on_a_terminal(
        &["call-tool", "greet", r#"{"name":"Ada"}"#, "--config", config],
        "o",
    );
    assert_eq!(json, json!("Hello, Ada!"));
    assert!(shown.contains("greet") && shown.contains("\"Ada\""), "{shown}");

    // "Always" on the terminal: written to the config file, so the next run
    // (another process, with no terminal) is allowed without asking.
    let (json, _) = on_a_terminal(
        &["call-tool", "greet", r#"{"name":"Bo"}"#, "--config", config],
        "a",
    );
    assert_eq!(json, json!("Hello, Bo!"));
    let written = std::fs::read_to_string(&config_path).unwrap();
    assert!(written.contains("\"tool:greet\""), "{written}");
    let out = std::process::Command::new(crate::support::toolhost_bin())
        .args(["call-tool", "greet", r#"{"name":"Cy"}"#, "--config", config])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "\"Hello, Cy!\"");
}
