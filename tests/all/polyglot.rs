//! Plugins in Python and JavaScript, as their authors build them: the two
//! examples (written with the helper libraries in `sdk/python` and `sdk/js`)
//! and two plugins written against the bindings alone
//! (`tests/data/polyglot`), built by the test set-up with the real
//! toolchains (`support::polyglot`), then loaded and called the way a user
//! would: `toolhost inspect`, `toolhost call`, `toolhost call-tool` through a
//! config that grants them, and `toolhost serve` driven by an MCP client.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::mcp_server::{python_client, stdio_mode};
use crate::support::{self, JS_EXAMPLE, JS_RAW, PYTHON_EXAMPLE, PYTHON_RAW, Polyglot};

/// What `toolhost` printed: whether it exited 0, its stdout as JSON, its stderr.
struct Run {
    ok: bool,
    json: Value,
    stderr: String,
}

/// Runs `toolhost ARGS` in `dir` with `env` added, with the shared compile
/// cache (so an 18 MB component is compiled once per machine, not per test).
fn toolhost(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = Command::new(support::toolhost_bin())
        .current_dir(dir)
        .args(args)
        .env("TOOLHOST_CACHE_DIR", support::cache_dir())
        .envs(env.iter().copied())
        .output()
        .expect("run toolhost");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("toolhost {args:?} printed no JSON ({e}):\n{stdout}\nstderr: {stderr}"));
    Run {
        ok: out.status.success(),
        json,
        stderr,
    }
}

/// `plugin`, built, and its `toolhost inspect` description. Inspecting it
/// once (under a lock) also compiles it into the shared cache before any
/// test loads it, so concurrent tests never compile it side by side.
fn built(plugin: &Polyglot) -> (PathBuf, Value) {
    static INSPECTED: Mutex<Vec<(&'static str, PathBuf, Value)>> = Mutex::new(Vec::new());
    let path = support::polyglot(plugin);
    let mut seen = INSPECTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, p, v)) = seen
        .iter()
        .find(|(name, p, _)| *name == plugin.name && *p == path)
    {
        return (p.clone(), v.clone());
    }
    let run = toolhost(
        &support::workspace_root(),
        &["inspect", path.to_str().unwrap()],
        &[],
    );
    assert!(run.ok, "inspect {}: {}\n{}", plugin.name, run.json, run.stderr);
    seen.push((plugin.name, path.clone(), run.json.clone()));
    (path, run.json)
}

fn path_of(plugin: &Polyglot) -> String {
    built(plugin).0.display().to_string()
}

/// A folder holding a `toolhost.toml` that serves `plugins` (path, grants as
/// TOML lines) and a `workspace/` folder with `notes.txt`.
pub(crate) fn setup(plugins: &[(&Polyglot, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("workspace")).unwrap();
    std::fs::write(dir.path().join("workspace/notes.txt"), NOTES).unwrap();
    let mut config = String::new();
    for (plugin, grants) in plugins {
        config.push_str(&format!("[[plugins]]\npath = {:?}\n", path_of(plugin)));
        if !grants.is_empty() {
            config.push_str(&format!("[plugins.grants]\n{grants}\n"));
        }
    }
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    dir
}

pub(crate) const NOTES: &str = "the cat and the dog\nthe end\n";
const GRANTS: &str = r#"env = ["GREETING"]
dirs = [{ host = "workspace", guest = "/workspace", mode = "ro" }]"#;
const EXAMPLES: [&Polyglot; 2] = [&PYTHON_EXAMPLE, &JS_EXAMPLE];
/// The examples' tools, in the order they list them.
const TOOLS: [&str; 11] = [
    "greet",
    "word_stats",
    "word_chart",
    "share",
    "chime",
    "greet_me",
    "summarize",
    "client_roots",
    "report",
    "can_ask",
    "index_words",
];
const RAW: [&Polyglot; 2] = [&PYTHON_RAW, &JS_RAW];

fn stats() -> Value {
    json!({"lines": 2, "words": 7, "top": ["the", "cat", "and"]})
}

/// Both examples describe the same tools: the Python one from type hints
/// and docstrings, the JavaScript one from its definitions. Both declare the
/// environment variable and the folder they use, and the questions they
/// ask, through `tool.declare`; the client's roots and `index_words`'s task
/// support, which `declare()`'s record cannot carry, through the
/// `toolhost:capabilities` section their builds append.
#[test]
fn the_examples_describe_their_tools_and_declare_their_capabilities() {
    for plugin in EXAMPLES {
        let (_, info) = built(plugin);
        let name = plugin.name;
        assert_eq!(info["world"]["version"], "0.3.1", "{name}");
        assert_eq!(
            info["capabilities"]["declared"],
            json!({
                "dirs": ["/workspace"], "env": ["GREETING"], "http": [], "secrets": [], "tools": [],
                "elicitation": true, "sampling": true, "roots": true,
                "tasks": [["index_words", "optional"]], "tasks_deferred": ["index_words"],
            }),
            "{name}"
        );
        let tools = info["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, TOOLS, "{name}");
        // The section's task line, read back onto its tool.
        let tasks: Vec<(&str, &Value, &Value)> = tools
            .iter()
            .filter(|t| t.get("task_support").is_some())
            .map(|t| {
                (
                    t["name"].as_str().unwrap(),
                    &t["task_support"],
                    &t["task_deferred"],
                )
            })
            .collect();
        assert_eq!(
            tasks,
            [("index_words", &json!("optional"), &json!(true))],
            "{name}"
        );
        assert_eq!(
            tools[0]["parameters"],
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "Who to greet."}},
                "required": ["name"],
                "additionalProperties": false,
            }),
            "{name}"
        );
        assert!(
            tools[0]["description"]
                .as_str()
                .unwrap()
                .starts_with("Greets someone"),
            "{name}: {}",
            tools[0]["description"]
        );
        assert_eq!(
            tools[0]["hints"],
            json!({"readOnlyHint": true, "idempotentHint": true}),
            "{name}"
        );
        assert_eq!(
            tools[1]["parameters"],
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The file, relative to the workspace folder."},
                    "top": {
                        "type": "integer",
                        "description": "How many of the most common words to list (1 to 20).",
                        "default": 3,
                    },
                },
                "required": ["path"],
                "additionalProperties": false,
            }),
            "{name}"
        );
        assert_eq!(
            tools[1]["output_schema"],
            json!({
                "type": "object",
                "properties": {
                    "lines": {"type": "integer"},
                    "words": {"type": "integer"},
                    "top": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["lines", "words", "top"],
                "additionalProperties": false,
            }),
            "{name}"
        );
    }
}

/// Through the registry, with a config that grants what they declare, the
/// examples read the granted variable and the granted folder; without the
/// grants they still load and answer, and a call that needed a capability
/// fails naming what was not granted.
#[test]
fn the_examples_answer_through_the_registry_with_their_grants() {
    for plugin in EXAMPLES {
        let name = plugin.name;
        let granted = setup(&[(plugin, GRANTS)]);
        let env = [("GREETING", "Ahoy")];
        let run = toolhost(granted.path(), &["call-tool", "greet", r#"{"name":"Ada"}"#], &env);
        assert!(run.ok, "{name}: {}", run.json);
        assert_eq!(run.json, json!("Ahoy, Ada!"), "{name}");
        let run = toolhost(
            granted.path(),
            &["call-tool", "word_stats", r#"{"path":"notes.txt"}"#],
            &env,
        );
        assert!(run.ok, "{name}: {}", run.json);
        assert_eq!(run.json, stats(), "{name}");
        let run = toolhost(
            granted.path(),
            &["call-tool", "word_stats", r#"{"path":"notes.txt","top":1}"#],
            &env,
        );
        assert_eq!(run.json["top"], json!(["the"]), "{name}");

        let bare = setup(&[(plugin, "")]);
        let run = toolhost(bare.path(), &["call-tool", "greet", r#"{"name":"Ada"}"#], &env);
        assert!(run.ok, "{name}: {}", run.json);
        assert_eq!(run.json, json!("Hello, Ada!"), "{name}: GREETING is not granted");
        let run = toolhost(
            bare.path(),
            &["call-tool", "word_stats", r#"{"path":"notes.txt"}"#],
            &env,
        );
        assert!(!run.ok, "{name}: {}", run.json);
        assert_eq!(run.json["error_code"], "tool_failed", "{name}: {}", run.json);
        let error = run.json["error"].as_str().unwrap();
        assert!(error.contains("dir /workspace"), "{name}: {error}");
    }
}

/// Over MCP, a result with a text for the model reaches the client as that
/// text plus the structured JSON its output schema describes; a plain string
/// result is its text without quotes.
#[test]
fn the_examples_answer_over_mcp() {
    for plugin in EXAMPLES {
        let name = plugin.name;
        let dir = setup(&[(plugin, GRANTS)]);
        let config = dir.path().join("toolhost.toml");
        let out = python_client(
            &stdio_mode(&["--stdio", "--config", config.to_str().unwrap()]),
            json!([
                {"list": true},
                {"call": "greet", "args": {"name": "Ada"}},
                {"call": "word_stats", "args": {"path": "notes.txt"}},
                {"call": "word_stats", "args": {"path": "nope.txt"}},
            ]),
        );
        let steps = out["steps"].as_array().unwrap();
        let tools = steps[0]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), TOOLS.len(), "{name}: {tools:?}");
        let word_stats = tools.iter().find(|t| t["name"] == "word_stats").unwrap();
        assert_eq!(
            word_stats["output_schema"]["required"],
            json!(["lines", "words", "top"]),
            "{name}"
        );
        // The MCP client starts the server with a minimal environment, so
        // GREETING has no value there: the default greeting.
        assert_eq!(steps[1]["is_error"], false, "{name}: {}", steps[1]);
        assert_eq!(steps[1]["text"], "Hello, Ada!", "{name}");
        assert_eq!(steps[2]["is_error"], false, "{name}: {}", steps[2]);
        assert_eq!(
            steps[2]["text"], "notes.txt: 2 lines, 7 words; most common: the, cat, and",
            "{name}"
        );
        assert_eq!(steps[2]["structured"], stats(), "{name}");
        assert_eq!(steps[3]["is_error"], true, "{name}: {}", steps[3]);
        let err: Value = serde_json::from_str(steps[3]["text"].as_str().unwrap()).unwrap();
        assert_eq!(err["error_code"], "tool_failed", "{name}: {err}");
    }
}

/// An exception raised by a tool written with a helper library reaches the
/// caller as a tool error with the guest's own message: `ValueError` /
/// `InvalidArguments` as `invalid_arguments`, anything else as
/// `tool_failed`, never a trap.
#[test]
fn a_helpers_exceptions_are_tool_errors_with_the_guests_message() {
    let dir = setup(&[]);
    let ws = format!("{}:/workspace", dir.path().join("workspace").display());
    for (plugin, not_found) in [(&PYTHON_EXAMPLE, "FileNotFoundError"), (&JS_EXAMPLE, "no-entry")] {
        let name = plugin.name;
        let path = path_of(plugin);
        let cases = [
            (
                "greet",
                r#"{"name":"  "}"#,
                "invalid_arguments",
                "`name` must not be empty",
            ),
            (
                "word_stats",
                r#"{"path":"notes.txt","top":99}"#,
                "invalid_arguments",
                "between 1 and 20",
            ),
            (
                "word_stats",
                r#"{"path":"missing.txt"}"#,
                "tool_failed",
                not_found,
            ),
        ];
        for (tool, args, code, message) in cases {
            let run = toolhost(dir.path(), &["call", &path, tool, args, "--dir", &ws], &[]);
            assert!(!run.ok, "{name} {tool} {args}: {}", run.json);
            assert_eq!(run.json["error_code"], code, "{name} {tool} {args}: {}", run.json);
            let error = run.json["error"].as_str().unwrap();
            assert!(error.contains(message), "{name} {tool} {args}: {error}");
        }
    }
}

/// An exception a plugin does not catch (no helper library) traps the
/// instance; the caller's `trap` error still carries the guest's own message
/// (from its captured stderr: the Python traceback, the JS error).
#[test]
fn an_uncaught_exception_is_a_trap_naming_the_guests_message() {
    let dir = setup(&[]);
    for (plugin, message) in [
        (&PYTHON_RAW, "ZeroDivisionError"),
        (&JS_RAW, "cannot divide by zero"),
    ] {
        let name = plugin.name;
        let path = path_of(plugin);
        let run = toolhost(dir.path(), &["call", &path, "divide", r#"{"a":1,"b":4}"#], &[]);
        assert!(run.ok, "{name}: {}", run.json);
        // They answer with a text block (no structured JSON): its text.
        assert_eq!(run.json, json!("0.25"), "{name}");
        let run = toolhost(dir.path(), &["call", &path, "divide", r#"{"a":1,"b":0}"#], &[]);
        assert!(!run.ok, "{name}");
        assert_eq!(run.json["error_code"], "trap", "{name}: {}", run.json);
        let error = run.json["error"].as_str().unwrap();
        assert!(
            error.contains(message),
            "{name}: the trap should name {message:?}: {error}"
        );
    }
}

/// Arguments that do not fit a tool's schema are refused with
/// `invalid_arguments` before the guest runs, on every path: `toolhost call`,
/// the registry (`call-tool`) and MCP. The plugins without helpers read
/// their arguments unchecked, so a call that reached them would trap instead.
#[test]
fn arguments_are_checked_before_the_guest_runs_on_every_path() {
    let bad = [r#"{"a":1}"#, r#"{"a":1,"b":"2"}"#, r#"{"a":1,"b":2,"c":3}"#];
    let dir = setup(&[]);
    for plugin in RAW {
        let name = plugin.name;
        let path = path_of(plugin);
        for args in bad {
            let run = toolhost(dir.path(), &["call", &path, "divide", args], &[]);
            assert_eq!(
                run.json["error_code"], "invalid_arguments",
                "{name} call {args}: {}",
                run.json
            );
        }
    }
    // Both plugins name their tool `divide`: one registry each.
    for plugin in RAW {
        let name = plugin.name;
        let dir = setup(&[(plugin, "")]);
        for args in bad {
            let run = toolhost(dir.path(), &["call-tool", "divide", args], &[]);
            assert_eq!(
                run.json["error_code"], "invalid_arguments",
                "{name} call-tool {args}: {}",
                run.json
            );
        }
        let config = dir.path().join("toolhost.toml");
        let steps: Vec<Value> = bad
            .iter()
            .map(|a| json!({"call": "divide", "args": serde_json::from_str::<Value>(a).unwrap()}))
            .collect();
        let out = python_client(
            &stdio_mode(&["--stdio", "--config", config.to_str().unwrap()]),
            Value::Array(steps),
        );
        for (step, args) in out["steps"].as_array().unwrap().iter().zip(bad) {
            assert_eq!(step["is_error"], true, "{name} MCP {args}: {step}");
            let err: Value = serde_json::from_str(step["text"].as_str().unwrap()).unwrap();
            assert_eq!(err["error_code"], "invalid_arguments", "{name} MCP {args}: {err}");
        }
    }
}

/// A grant for a capability the plugin did not declare is not given, and
/// the host says so when it loads the plugin.
#[test]
fn a_grant_the_plugin_did_not_declare_warns() {
    for plugin in EXAMPLES {
        let name = plugin.name;
        let dir = setup(&[(plugin, r#"env = ["GREETING", "UNDECLARED_VARIABLE"]"#)]);
        let run = toolhost(
            dir.path(),
            &["call-tool", "greet", r#"{"name":"Ada"}"#],
            &[("GREETING", "Ahoy"), ("UNDECLARED_VARIABLE", "x")],
        );
        assert!(run.ok, "{name}: {}", run.json);
        assert_eq!(run.json, json!("Ahoy, Ada!"), "{name}");
        assert!(
            run.stderr.contains("UNDECLARED_VARIABLE"),
            "{name}: no warning names the undeclared grant:\n{}",
            run.stderr
        );
    }
}

/// The examples pass conformance as their authors run it, with and without
/// the grants they declare: every check passes (none is skipped, since both
/// declare capabilities), with no note under `capabilities`: their builds
/// import only what they use, so no `toolhost:plugin/tools` they never call.
#[test]
fn the_examples_pass_conformance() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), NOTES).unwrap();
    let dir = format!("{}:/workspace", workspace.path().display());
    for plugin in EXAMPLES {
        let name = plugin.name;
        let path = path_of(plugin);
        let granted = ["--env", "GREETING", "--dir", dir.as_str()];
        for grants in [&[][..], &granted[..]] {
            let mut args = vec!["conformance", path.as_str(), "--format", "json"];
            args.extend_from_slice(grants);
            let run = toolhost(&support::workspace_root(), &args, &[("GREETING", "Ahoy")]);
            assert!(
                run.ok,
                "{name} {grants:?} failed conformance:\n{:#}\n{}",
                run.json, run.stderr
            );
            assert_eq!(run.json["passed"], true, "{name}");
            let checks = run.json["components"][0]["checks"].as_array().unwrap();
            // `catalog` too: the examples offer a prompt and resources.
            for check in checks {
                assert_eq!(check["status"], "passed", "{name} {grants:?}: {check:#}");
            }
            let capabilities = checks.iter().find(|c| c["check"] == "capabilities").unwrap();
            assert!(capabilities.get("notes").is_none(), "{name}: {capabilities:#}");
        }
    }
}
