//! Codemode: `run_tools_script` runs a Python script (Monty, in the
//! `codemode` component) whose tool calls go through the dispatch pipeline
//! in the calling session. Real tools (memory, time) and built-ins written
//! here to observe concurrency, approvals and limits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::ErrorCode;
use toolhost::internal::approval::{
    ApprovalCallback, ApprovalGate, ApprovalOutcome, ApprovalPolicy, ApprovalRequest, BoxFuture, Choice,
    ToolApprovalRules,
};
use toolhost::internal::capabilities::DirMode;
use toolhost::internal::codemode::{CodemodeConfig, RunToolsScript};
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session, ToolResult};
use toolhost::internal::registry::lazy::RegistryMode;
use toolhost::internal::registry::{
    FnTool, RegisterComponent, Registration, Registry, Tool, ToolOutput, ToolSpec,
};

use crate::support;

/// A codemode config for tests: enabled, with `change` applied.
pub fn config(change: impl FnOnce(&mut CodemodeConfig)) -> CodemodeConfig {
    let mut config = CodemodeConfig {
        enabled: true,
        timeout_seconds: 20,
        ..CodemodeConfig::default()
    };
    change(&mut config);
    config
}

/// `run_tools_script` for `config`, on the shared test engine.
pub async fn run_tools_script(config: CodemodeConfig) -> RunToolsScript {
    RunToolsScript::load(&crate::engine(), &support::plugin_path("codemode"), config)
        .await
        .expect("load the codemode interpreter")
}

/// A tool that returns only once `n` calls of it are running at the same
/// time (or fails after `give_up`, saying how many were): proof by
/// behaviour that calls overlap.
fn barrier(n: usize, give_up: Duration) -> impl Tool {
    let inside = Arc::new(AtomicUsize::new(0));
    let changed = Arc::new(tokio::sync::Notify::new());
    FnTool::new(
        ToolSpec::new(
            "barrier",
            "Returns once enough calls are inside.",
            json!({"type": "object"}),
        ),
        move |_, _| {
            let (inside, changed) = (Arc::clone(&inside), Arc::clone(&changed));
            async move {
                let me = inside.fetch_add(1, Ordering::SeqCst) + 1;
                changed.notify_waiters();
                let all_in = async {
                    while inside.load(Ordering::SeqCst) < n {
                        let notified = changed.notified();
                        if inside.load(Ordering::SeqCst) >= n {
                            break;
                        }
                        notified.await;
                    }
                };
                if tokio::time::timeout(give_up, all_in).await.is_err() {
                    let seen = inside.load(Ordering::SeqCst);
                    return Err(toolhost::Error::new(
                        ErrorCode::ToolFailed,
                        format!("only {seen} of {n} calls were ever inside at once"),
                    ));
                }
                Ok(ToolOutput::json(&json!(me)))
            }
        },
    )
}

/// A tool that sleeps `ms` milliseconds (default 50) and says so.
pub fn sleeper() -> impl Tool {
    FnTool::new(
        ToolSpec::new(
            "nap",
            "Sleeps.",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
        ),
        |args: Value, _| async move {
            let ms = args["ms"].as_u64().unwrap_or(50);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(ToolOutput::json(&json!({"slept_ms": ms})))
        },
    )
}

/// A tool with a hyphen and a dot-free odd name, counting its runs.
fn deploy(runs: &Arc<AtomicUsize>) -> impl Tool {
    let runs = Arc::clone(runs);
    FnTool::new(
        ToolSpec::new(
            "deploy-app",
            "Deploys the app.",
            json!({"type": "object", "properties": {"env": {"type": "string"}}, "required": ["env"]}),
        ),
        move |args, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            std::future::ready(Ok(ToolOutput::json(&json!({"deployed": args["env"]}))))
        },
    )
}

/// Answers approval requests with `choice`, after `delay`, and counts them.
struct Approver {
    choice: Choice,
    delay: Duration,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl ApprovalCallback for Approver {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalOutcome> {
        self.asked.lock().unwrap().push(request.clone());
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            ApprovalOutcome::Decided(self.choice)
        })
    }
}

fn approver(choice: Choice, delay: Duration) -> Arc<Approver> {
    Arc::new(Approver {
        choice,
        delay,
        asked: Mutex::new(Vec::new()),
    })
}

/// What a test serves: memory (in a temporary folder), time, the tools
/// written here, and `run_tools_script`.
struct Served {
    dispatcher: Dispatcher,
    _memory: tempfile::TempDir,
}

struct Setup {
    codemode: CodemodeConfig,
    approval: Option<(Vec<&'static str>, Arc<Approver>)>,
    extra: Vec<Registration>,
    mode: RegistryMode,
}

impl Setup {
    fn new(codemode: CodemodeConfig) -> Setup {
        Setup {
            codemode,
            approval: None,
            extra: Vec::new(),
            mode: RegistryMode::Full,
        }
    }

    fn tool(mut self, tool: impl Tool) -> Setup {
        self.extra.push(Registration::new(tool));
        self
    }

    async fn serve(self) -> Served {
        let memory = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        let mem = crate::load_with_dir("memory", memory.path(), "/memory", DirMode::Rw).await;
        registry.register_component(&mem, &Default::default()).unwrap();
        let time = crate::load("time").await;
        registry.register_component(&time, &Default::default()).unwrap();
        for tool in self.extra {
            registry.register(tool).unwrap();
        }
        registry
            .register(run_tools_script(self.codemode).await.registration())
            .unwrap();
        let mut builder = Dispatcher::builder(registry).mode(self.mode);
        if let Some((patterns, answer)) = self.approval {
            let policy = ApprovalPolicy {
                tools: ToolApprovalRules::new(patterns),
                ..ApprovalPolicy::default()
            };
            builder = builder.gate(Arc::new(ApprovalGate::new(policy).with_callback(answer)));
        }
        Served {
            dispatcher: builder.build().unwrap(),
            _memory: memory,
        }
    }
}

impl Served {
    async fn call(&self, name: &str, args: Value, ctx: &DispatchContext) -> ToolResult {
        self.dispatcher.dispatch(name, args, ctx).await
    }

    async fn script(&self, code: &str, ctx: &DispatchContext) -> ToolResult {
        self.call("run_tools_script", json!({"code": code}), ctx).await
    }
}

fn trusted() -> DispatchContext {
    DispatchContext::new(Session::trusted("codemode"))
}

async fn remember(served: &Served, ctx: &DispatchContext, title: &str) {
    let created = served
        .call(
            "memory_create",
            json!({"title": title, "content": format!("notes about {title}")}),
            ctx,
        )
        .await;
    assert!(!created.is_error(), "{}", created.content);
}

#[tokio::test]
async fn the_seeds_first_example_gathers_memory_search_and_the_time() {
    let served = Setup::new(config(|_| {})).serve().await;
    let ctx = trusted();
    for title in ["trip to Lisbon", "trip budget", "groceries"] {
        remember(&served, &ctx, title).await;
    }
    let mut events = served.dispatcher.subscribe();
    let code = r#"
import asyncio

first, second = await asyncio.gather(
    tools.memory_search(query="trip"),
    tools.current_datetime(),
)
print("found", len(first["entries"]))
{"now": second, "titles": sorted([entry["title"] for entry in first["entries"]])[:5]}
"#;
    let result = served.script(code, &ctx).await;
    assert!(!result.is_error(), "{}", result.content);
    let out = result.json();
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["output"], "found 2\n");
    assert_eq!(out["result"]["titles"], json!(["trip budget", "trip to Lisbon"]));
    assert!(
        out["result"]["now"]["iso8601"].is_string() || out["result"]["now"].is_object(),
        "{out}"
    );
    assert!(out.get("tool_errors").is_none(), "{out}");
    // Each nested call published its event, its parent the script's call.
    let mut nested = Vec::new();
    while let Ok(event) = events.try_recv() {
        nested.push(event);
    }
    let script = nested
        .iter()
        .find(|e| e.name == "run_tools_script")
        .expect("the script's event");
    let mut children: Vec<&str> = nested
        .iter()
        .filter(|e| e.parent_call_id == Some(script.call_id))
        .map(|e| e.name.as_str())
        .collect();
    children.sort_unstable();
    assert_eq!(children, ["current_datetime", "memory_search"]);
}

#[tokio::test]
async fn the_seeds_second_example_catches_a_failed_call_and_goes_on() {
    let served = Setup::new(config(|_| {})).serve().await;
    let ctx = trusted();
    let code = r#"
try:
    await tools.memory_get(id="../../etc/passwd")
except ValueError as exc:
    print("skipped:", str(exc).split(":")[0])
try:
    await tools.memory_create(title="x")
except ValueError as exc:
    print("rejected:", str(exc).split(":")[0])
"done"
"#;
    let out = served.script(code, &ctx).await.json();
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(
        out["output"],
        "skipped: invalid_arguments\nrejected: invalid_arguments\n"
    );
    assert_eq!(out["result"], "done");
    assert_eq!(
        out["tool_errors"],
        json!([
            {"tool": "memory_get", "error_code": "invalid_arguments"},
            {"tool": "memory_create", "error_code": "invalid_arguments"},
        ])
    );
}

#[tokio::test]
async fn gathered_calls_reach_the_host_together_and_run_at_once() {
    let served = Setup::new(config(|_| {}))
        .tool(barrier(5, Duration::from_secs(30)))
        .serve()
        .await;
    let code = "import asyncio\nsorted(await asyncio.gather(*[tools.barrier() for _ in range(5)]))";
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["result"], json!([1, 2, 3, 4, 5]));
}

#[tokio::test]
async fn awaited_one_by_one_the_calls_do_not_overlap() {
    // The same barrier, awaited in sequence: the first call waits alone
    // and fails (so the barrier above proves overlap, not luck).
    let served = Setup::new(config(|_| {}))
        .tool(barrier(2, Duration::from_secs(2)))
        .serve()
        .await;
    let code = "try:\n    await tools.barrier()\nexcept RuntimeError as e:\n    print(e)\n";
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["ok"], true, "{out}");
    assert!(
        out["output"]
            .as_str()
            .unwrap()
            .contains("only 1 of 2 calls were ever inside at once"),
        "{out}"
    );
}

#[tokio::test]
async fn syntax_errors_are_reported_before_anything_runs() {
    let served = Setup::new(config(|_| {})).serve().await;
    let out = served.script("def f(:\n  pass", &trusted()).await;
    assert_eq!(out.error_code, Some(ErrorCode::ScriptFailed));
    let out = out.json();
    assert_eq!(out["ok"], false);
    assert_eq!(out["error_code"], "codemode:syntax_error", "{out}");
    assert!(out["error"].as_str().unwrap().contains("SyntaxError"), "{out}");
}

#[tokio::test]
async fn an_uncaught_exception_is_a_script_error_with_its_output() {
    let served = Setup::new(config(|_| {})).serve().await;
    let out = served
        .script("print('before')\n{}['missing']", &trusted())
        .await
        .json();
    assert_eq!(out["error_code"], "codemode:script_error", "{out}");
    assert_eq!(out["output"], "before\n");
    assert!(out["error"].as_str().unwrap().contains("KeyError"), "{out}");
}

#[tokio::test]
async fn naming_a_missing_tool_gets_a_hint() {
    let served = Setup::new(config(|_| {})).serve().await;
    let out = served
        .script("await tools.memory_serch(query='x')", &trusted())
        .await
        .json();
    assert_eq!(out["error_code"], "codemode:script_error", "{out}");
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("`tools.memory_serch` does not exist"), "{error}");
    assert!(error.contains("did you mean tools.memory_search"), "{error}");
}

#[tokio::test]
async fn a_loop_that_never_ends_times_out_and_the_host_serves_other_calls_meanwhile() {
    let served = Arc::new(Setup::new(config(|c| c.timeout_seconds = 5)).serve().await);
    let ctx = trusted();
    let runaway = {
        let served = Arc::clone(&served);
        let ctx = ctx.clone();
        tokio::spawn(async move {
            served
                .script("print('started')\nwhile True:\n    pass", &ctx)
                .await
        })
    };
    // Other calls are answered while the script spins.
    for _ in 0..3 {
        let now = served.call("current_datetime", json!({}), &ctx).await;
        assert!(!now.is_error(), "{}", now.content);
    }
    assert!(
        !runaway.is_finished(),
        "the runaway script ended before the other calls were served"
    );
    let out = runaway.await.unwrap().json();
    assert_eq!(out["ok"], false);
    assert_eq!(out["error_code"], "codemode:timeout", "{out}");
    assert_eq!(out["output"], "started\n");
}

#[tokio::test]
async fn a_nested_call_that_outlasts_the_clock_is_cancelled() {
    let served = Setup::new(config(|c| c.timeout_seconds = 1))
        .tool(sleeper())
        .serve()
        .await;
    let out = served
        .script(
            "print('calling')\nawait tools.nap(ms=60000)\nprint('never')",
            &trusted(),
        )
        .await
        .json();
    assert_eq!(out["error_code"], "codemode:timeout", "{out}");
    assert_eq!(out["output"], "calling\n");
}

#[tokio::test]
async fn unbounded_allocation_is_a_memory_limit() {
    let served = Setup::new(config(|c| c.max_memory_mb = 16)).serve().await;
    let code = "print('growing')\nx = []\nwhile True:\n    x.append('a' * 100000)";
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["error_code"], "codemode:memory_limit", "{out}");
    assert_eq!(out["output"], "growing\n");
}

/// A huge value built where the interpreter does not check its budget (a
/// `str()` of a large list, a large dict's table) crosses the allocator's
/// hard ceiling instead, which ends the interpreter: still the script's
/// memory limit, never a failure of the sandbox.
#[tokio::test]
async fn a_huge_value_past_the_allocators_ceiling_is_a_memory_limit() {
    let served = Setup::new(config(|c| c.max_memory_mb = 64)).serve().await;
    for code in [
        "x = 'a' * (10 ** 7)\ny = [x] * 1000\nprint(len(str(y)))",
        "x = {i: str(i) for i in range(10 ** 7)}",
    ] {
        let out = served.script(code, &trusted()).await.json();
        assert_eq!(out["error_code"], "codemode:memory_limit", "{code}: {out}");
        assert_eq!(
            out["error"], "the script used more than its 64 MiB (max_memory_mb)",
            "{out}"
        );
    }
    let next = served.script("1 + 1", &trusted()).await.json();
    assert_eq!(next["result"], 2, "{next}");
}

#[tokio::test]
async fn an_interpreter_report_the_host_cannot_read_is_a_sandbox_failure() {
    // A value nested deeper than the host's JSON reader goes: the
    // interpreter's report is unusable, and the host says so.
    let served = Setup::new(config(|_| {})).serve().await;
    let code = "x = []\nfor i in range(1000):\n    x = [x]\nx";
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["error_code"], "codemode:sandbox_failed", "{out}");
    // The host is fine and the next script runs.
    let next = served.script("1 + 1", &trusted()).await.json();
    assert_eq!(next["result"], 2, "{next}");
}

#[tokio::test]
async fn the_call_past_the_cap_raises_a_catchable_value_error() {
    let served = Setup::new(config(|c| c.max_tool_calls = 2)).serve().await;
    let code = r#"
for i in range(3):
    try:
        await tools.current_datetime()
        print("ok", i)
    except ValueError as e:
        print(str(e)[:24])
"#;
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(out["output"], "ok 0\nok 1\ncodemode:tool_call_limit\n");
    assert_eq!(
        out["tool_errors"],
        json!([{"tool": "current_datetime", "error_code": "codemode:tool_call_limit"}])
    );
}

#[tokio::test]
async fn excluded_tools_are_neither_listed_nor_callable() {
    let served = Setup::new(config(|c| c.exclude = vec!["memory_*".into()]))
        .serve()
        .await;
    let ctx = trusted();
    let defs = served.dispatcher.definitions(&ctx.session).unwrap();
    let script = defs
        .iter()
        .find(|d| d["function"]["name"] == "run_tools_script")
        .expect("run_tools_script is offered");
    let description = script["function"]["description"].as_str().unwrap();
    assert!(description.contains("tools.current_datetime("), "{description}");
    assert!(!description.contains("memory_"), "{description}");
    assert!(!description.contains("tools.run_tools_script"), "{description}");
    let out = served
        .script("await tools.memory_search(query='x')", &ctx)
        .await
        .json();
    assert_eq!(out["error_code"], "codemode:script_error", "{out}");
    assert!(out["error"].as_str().unwrap().contains("does not exist"), "{out}");
}

#[tokio::test]
async fn a_nested_call_that_needs_approval_is_asked_for_and_runs_when_approved() {
    let runs = Arc::new(AtomicUsize::new(0));
    let answer = approver(Choice::Once, Duration::ZERO);
    let mut setup = Setup::new(config(|_| {})).tool(deploy(&runs));
    setup.approval = Some((vec!["deploy-*"], Arc::clone(&answer)));
    let served = setup.serve().await;
    let out = served
        .script("await tools.deploy_app(env='prod')", &trusted())
        .await
        .json();
    assert_eq!(out["result"], json!({"deployed": "prod"}), "{out}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(answer.asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_denied_nested_call_raises_permission_error_and_an_uncaught_one_is_the_denial() {
    let runs = Arc::new(AtomicUsize::new(0));
    let answer = approver(Choice::Deny, Duration::ZERO);
    let mut setup = Setup::new(config(|_| {})).tool(deploy(&runs));
    setup.approval = Some((vec!["deploy-*"], answer));
    let served = setup.serve().await;
    let ctx = trusted();
    let caught = served
        .script(
            "try:\n    await tools.deploy_app(env='prod')\nexcept PermissionError as e:\n    print('denied')\n'went on'",
            &ctx,
        )
        .await
        .json();
    assert_eq!(caught["result"], "went on", "{caught}");
    assert_eq!(caught["output"], "denied\n");
    assert_eq!(
        caught["tool_errors"],
        json!([{"tool": "deploy-app", "error_code": "blocked"}])
    );
    // Uncaught: the script's result is the denial, as a direct call's is.
    let direct = served.call("deploy-app", json!({"env": "prod"}), &ctx).await;
    let uncaught = served.script("await tools.deploy_app(env='prod')", &ctx).await;
    assert_eq!(uncaught.error_code, Some(ErrorCode::Blocked));
    assert_eq!(uncaught.error_code, direct.error_code);
    let (uncaught, direct) = (uncaught.json(), direct.json());
    assert!(
        uncaught["error"].as_str().unwrap().starts_with("BLOCKED: "),
        "{uncaught}"
    );
    assert_eq!(uncaught["reason"], direct["reason"]);
    // Wrapped in another exception, it is an ordinary script error.
    let wrapped = served
        .script(
            "try:\n    await tools.deploy_app(env='prod')\nexcept PermissionError as e:\n    raise RuntimeError('no deploy')",
            &ctx,
        )
        .await
        .json();
    assert_eq!(wrapped["error_code"], "codemode:script_error", "{wrapped}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_clock_stops_while_an_approval_is_pending() {
    // The person takes longer to answer than the script's whole budget.
    let runs = Arc::new(AtomicUsize::new(0));
    let answer = approver(Choice::Once, Duration::from_secs(4));
    let mut setup = Setup::new(config(|c| c.timeout_seconds = 2)).tool(deploy(&runs));
    setup.approval = Some((vec!["deploy-*"], answer));
    let served = setup.serve().await;
    let out = served
        .script("await tools.deploy_app(env='staging')", &trusted())
        .await
        .json();
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn output_and_value_are_cut_keeping_start_and_end() {
    let served = Setup::new(config(|c| c.max_output_chars = 40)).serve().await;
    let code = "for i in range(1000):\n    print(i)\n'A' + 'x' * 5000 + 'Z'";
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["ok"], true, "{out}");
    let output = out["output"].as_str().unwrap();
    assert!(output.starts_with("0\n1\n2\n"), "{output}");
    assert!(output.ends_with("998\n999\n"), "{output}");
    assert!(output.contains("characters omitted]"), "{output}");
    let value = out["result"].as_str().unwrap();
    assert!(
        value.starts_with("\"Axxx") && value.ends_with("xxxZ\""),
        "{value}"
    );
    assert!(value.contains("characters omitted]"), "{value}");
    assert!(value.chars().count() < 100, "{value}");
}

#[tokio::test]
async fn lazy_mode_finds_it_and_its_scripts_call_tools_not_activated() {
    let mut setup = Setup::new(config(|_| {}));
    setup.mode = RegistryMode::Lazy;
    let served = setup.serve().await;
    let ctx = trusted();
    let found = served
        .call("tool_search", json!({"query": "python script"}), &ctx)
        .await
        .json();
    assert!(found.to_string().contains("run_tools_script"), "{found}");
    let activated = served
        .call("tool_search", json!({"name": "run_tools_script"}), &ctx)
        .await
        .json();
    let description = activated["schema"]["function"]["description"].as_str().unwrap();
    assert!(description.contains("tools.current_datetime("), "{description}");
    let out = served
        .script("r = await tools.current_datetime()\n'ok'", &ctx)
        .await
        .json();
    assert_eq!(out["result"], "ok", "{out}");
}

#[tokio::test]
async fn a_public_session_cannot_use_it() {
    let served = Setup::new(config(|_| {})).serve().await;
    let ctx = DispatchContext::new(Session::public("web"));
    let out = served.script("1", &ctx).await;
    assert_eq!(out.error_code, Some(ErrorCode::AudienceDenied), "{}", out.content);
}

#[tokio::test]
async fn the_interpreter_cannot_be_registered_as_an_ordinary_plugin() {
    let component = crate::load("codemode").await;
    let mut registry = Registry::new();
    let err = registry
        .register_component(&component, &Default::default())
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DuplicateTool, "{err}");
    assert!(err.message().contains("reserved"), "{err}");
}

#[test]
fn over_mcp_it_is_listed_and_its_nested_approvals_use_the_sessions_elicitation() {
    use crate::mcp_server::{error_code, names, python_client, stdio_mode, temp_config};
    let (_dir, config) = temp_config(&format!(
        "require_approval = [\"greet\"]\n\n[tools.codemode]\nenabled = true\nplugin = {:?}\n\n[[plugins]]\npath = {:?}\n",
        support::plugin_path("codemode").display().to_string(),
        support::plugin_path("hello").display().to_string(),
    ));
    let script = json!({"code": "await tools.greet(name='Ada')"});
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"list": true},
            {"elicit": "once"},
            {"call": "run_tools_script", "args": script},
            {"elicit": "deny"},
            {"call": "run_tools_script", "args": script},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    assert!(
        names(&steps[0]).contains(&"run_tools_script".to_string()),
        "{}",
        steps[0]
    );
    let listed = steps[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "run_tools_script")
        .unwrap();
    assert!(
        listed["description"]
            .as_str()
            .unwrap()
            .contains("tools.greet(name: str)"),
        "{listed}"
    );
    assert_eq!(steps[2]["is_error"], false, "{}", steps[2]);
    let approved: Value = serde_json::from_str(steps[2]["text"].as_str().unwrap()).unwrap();
    assert_eq!(approved["result"], "Hello, Ada!", "{approved}");
    // Denied in the client's form: the script ends on the denial.
    assert_eq!(error_code(&steps[4]), "blocked", "{}", steps[4]);
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "{out}");
    assert!(
        asked[0]["message"].as_str().unwrap().contains("greet"),
        "{}",
        asked[0]
    );
}

/// Accepts every nested call and counts them.
struct AcceptAll(AtomicUsize);

impl toolhost::internal::registry::ToolCaller for AcceptAll {
    fn call_tool(
        &self,
        _name: &str,
        _arguments: Value,
        _ctx: toolhost::internal::registry::CallContext,
    ) -> toolhost::internal::registry::BoxFuture<'_, toolhost::Result<ToolOutput>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(Ok(ToolOutput::json(&json!("reached")))))
    }
}

#[tokio::test]
async fn calling_any_tool_is_no_grant_the_component_carries() {
    // The same interpreter loaded as a plugin would be (no ToolCalls::Caller):
    // even with a caller that accepts everything, the sandbox refuses its
    // calls, since it declares `*` and no grant can name that.
    let plain = crate::load("codemode").await;
    assert!(!plain.capabilities().tools_from_caller);
    let accept = Arc::new(AcceptAll(AtomicUsize::new(0)));
    let ctx = toolhost::internal::registry::CallContext {
        caller: Some(toolhost::internal::registry::ToolCallerHandle(
            Arc::clone(&accept) as _,
        )),
        ..Default::default()
    };
    let request = json!({
        "code": "try:\n    await tools.anything()\nexcept RuntimeError as e:\n    print(str(e).split(':')[0])",
        "tools": {"anything": "anything"},
        "max_output_chars": 1000,
        "timeout_ms": 10000,
    });
    let out = plain
        .call_with("run_tools_script", &request.to_string(), &ctx)
        .await
        .result
        .unwrap();
    let report: Value = serde_json::from_str(&out.content).unwrap();
    assert_eq!(report["output"], "capability_not_granted\n", "{report}");
    assert_eq!(accept.0.load(Ordering::SeqCst), 0);
    // run_tools_script's own instance reaches the caller it is given.
    let tool = run_tools_script(config(|_| {})).await;
    assert!(tool.component().capabilities().tools_from_caller);
    let out = tool
        .component()
        .call_with("run_tools_script", &request.to_string(), &ctx)
        .await
        .result
        .unwrap();
    let report: Value = serde_json::from_str(&out.content).unwrap();
    assert_eq!(report["output"], "", "{report}");
    assert_eq!(accept.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_cap_above_the_sandboxs_nested_call_limit_still_counts_in_scripts() {
    // 80 calls fit an 80-call cap though one call of a plugin may start
    // only 64 by default; the 81st is the cap's ValueError.
    let served = Setup::new(config(|c| c.max_tool_calls = 80))
        .tool(sleeper())
        .serve()
        .await;
    let code = r#"
done = 0
for i in range(81):
    try:
        await tools.nap(ms=0)
        done += 1
    except ValueError as e:
        print(str(e)[:24])
done
"#;
    let out = served.script(code, &trusted()).await.json();
    assert_eq!(out["result"], 80, "{out}");
    assert_eq!(out["output"], "codemode:tool_call_limit\n");
}
