//! The conformance suite (`toolhost conformance`, the `toolhost-conformance`
//! library): every first-party plugin passes; each adversarial plugin fails
//! exactly the checks it should, naming the tool and the problem; the human,
//! JSON and JUnit reports; `toolhost new` makes a crate that builds and
//! passes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use toolhost::internal::capabilities::Grants;
use toolhost::internal::http::HttpGrant;
use toolhost_conformance::{CheckId, Report, Status, Suite};

use crate::support;

/// Runs `toolhost conformance ARGS` with the tests' compile cache and the
/// environment `env`.
fn conformance(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(support::toolhost_bin())
        .arg("conformance")
        .args(args)
        .args(["--cache-dir", &support::cache_dir().display().to_string()])
        .envs(env.iter().copied())
        .output()
        .expect("run toolhost conformance")
}

fn plugin(name: &str) -> String {
    support::plugin_path(name).display().to_string()
}

/// The suite on the shared engine (and its compile cache).
fn suite() -> Suite {
    Suite::new().engine(crate::engine())
}

/// Plugins that must pass, with the grants they need to load: every
/// plugin that is not adversarial (0.2.0 components), and the frozen 0.1.0,
/// 0.2.0 and 0.3.0 components.
fn first_party() -> Vec<(PathBuf, Grants)> {
    let http = Grants {
        http: vec![HttpGrant::Url("https://api.example.com".into())],
        ..Default::default()
    };
    let mut plugins: Vec<(PathBuf, Grants)> = [
        "hello", "calc", "files", "memory", "time", "counter", "caller", "probe", "handmade", "stepper",
        "showcase", "nosy",
    ]
    .into_iter()
    .map(|p| (support::plugin_path(p), Grants::default()))
    .collect();
    // The http plugin imports wasi:http, which loads only with a grant.
    plugins.push((support::plugin_path("http-plugin"), http));
    for frozen in [
        "hello-0.1.0.wasm",
        "caller-0.1.0.wasm",
        "hello-0.2.0.wasm",
        "caller-0.2.0.wasm",
        "hello-0.3.0.wasm",
        "caller-0.3.0.wasm",
        "showcase-0.3.0.wasm",
    ] {
        let path = support::workspace_root().join("tests/data/frozen").join(frozen);
        plugins.push((path, Grants::default()));
    }
    plugins
}

#[tokio::test]
async fn every_first_party_plugin_passes() {
    let mut worlds = BTreeSet::new();
    for (path, grants) in first_party() {
        let name = path.display();
        let report = suite().grants(grants).run_async(&path).await;
        worlds.insert(report.world.clone().unwrap());
        assert!(report.passed(), "{name} failed:\n{}", report.to_human());
        assert_eq!(report.checks.len(), CheckId::ALL.len());
        for check in &report.checks {
            // Only `no-grants` may be skipped, and only for a plugin that
            // declares nothing; and `catalog`, for one that offers no
            // prompts or resources.
            if check.status == Status::Skipped {
                let why = check.skipped.as_deref().unwrap();
                match check.check {
                    CheckId::NoGrants => assert!(why.contains("declares no capabilities"), "{why}"),
                    CheckId::Catalog => assert!(why.contains("offers no prompts or resources"), "{why}"),
                    other => panic!("{name}: {other} skipped:\n{}", report.to_human()),
                }
            }
        }
        assert!(!report.tools.is_empty(), "{name}");
    }
    // Every served version was checked.
    let served: BTreeSet<String> = toolhost::internal::bindings::WorldVersion::ALL
        .iter()
        .map(|v| v.world_name().to_string())
        .collect();
    assert_eq!(worlds, served);
}

/// The codemode interpreter is not a plugin: the host loads it itself for
/// `[tools.codemode]`, under the built-in name `run_tools_script`, which the
/// registry refuses from any plugin. It passes every check but `names`, and
/// fails that one only for the reserved name.
#[tokio::test]
async fn the_codemode_interpreter_passes_every_check_but_its_reserved_name() {
    let report = suite().run_async(&support::plugin_path("codemode")).await;
    assert_eq!(report.tools, vec!["run_tools_script".to_string()]);
    let failed: Vec<_> = report.failed().collect();
    assert_eq!(failed.len(), 1, "{}", report.to_human());
    assert_eq!(failed[0].check, CheckId::Names);
    assert_eq!(failed[0].problems.len(), 1, "{}", report.to_human());
    let problem = &failed[0].problems[0];
    assert_eq!(problem.tool.as_deref(), Some("run_tools_script"));
    assert!(problem.message.contains("reserved"), "{}", problem.message);
    for check in &report.checks {
        match check.check {
            CheckId::Names => {}
            CheckId::Catalog => assert_eq!(check.status, Status::Skipped, "{}", report.to_human()),
            _ => assert_eq!(check.status, Status::Passed, "{}", report.to_human()),
        }
    }
}

/// One adversarial plugin and what the suite must say about it.
struct Expect {
    plugin: &'static str,
    /// Extra `toolhost conformance` options.
    args: &'static [&'static str],
    /// Extra environment.
    env: &'static [(&'static str, &'static str)],
    /// Every check that fails, and for each a problem: the tool it names
    /// (`None`: the whole component) and a phrase its message holds.
    fails: &'static [(&'static str, Option<&'static str>, &'static str)],
}

/// No extra options or environment.
const PLAIN: Expect = Expect {
    plugin: "",
    args: &[],
    env: &[],
    fails: &[],
};

/// Every adversarial plugin fails exactly these checks, naming these tools
/// and problems.
const ADVERSARIAL: &[Expect] = &[
    Expect {
        plugin: "bad-name",
        fails: &[
            (
                "names",
                Some("bad name!"),
                "characters outside A-Z a-z 0-9 _ -: ' ', '!'",
            ),
            ("loads", None, "not a valid tool name"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "bad-structured",
        fails: &[
            ("results", Some("number"), "not a JSON object"),
            ("results", Some("garbled"), "not JSON"),
            ("results", Some("unstructured"), "gave no structured result"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "broken-server",
        fails: &[
            (
                "capabilities",
                None,
                "declares `client elicitation` but does not import toolhost:plugin/client",
            ),
            (
                "catalog",
                None,
                "prompt `explode`: rendering it with its required arguments ended in trap",
            ),
            (
                "catalog",
                None,
                "resource broken://vanished: the component lists it but reading it says it is not found",
            ),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "dup-name",
        fails: &[
            ("names", Some("twin"), "listed more than once"),
            ("loads", None, "declares the tool `twin` twice"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "missing-import",
        fails: &[
            ("imports", None, "it imports test:missing/telepathy"),
            ("loads", None, "test:missing/telepathy"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "command-hello",
        fails: &[
            ("world", None, "wasi:cli/run"),
            ("loads", None, "does not implement a toolhost plugin world"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "claims",
        args: &["--env", "CLAIMS"],
        env: &[("CLAIMS", "tools=2;name=exec;desc=0")],
        fails: &[
            ("names", Some("exec"), "reserved for a toolhost built-in"),
            ("descriptions", Some("t1"), "the description is empty"),
        ],
    },
    Expect {
        plugin: "fickle",
        fails: &[
            ("deterministic", Some("roll"), "with a different description"),
            ("deterministic", None, "declare answered differently"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "bad-schema",
        fails: &[
            (
                "schemas",
                Some("meta_invalid"),
                "not valid JSON Schema 2020-12: \"zero\" is not of type \"number\"",
            ),
            (
                "schemas",
                Some("not_object"),
                "does not describe an object: its \"type\" is \"array\"",
            ),
            (
                "schemas",
                Some("remote_ref"),
                "refers to https://schemas.example.invalid/place.json",
            ),
            ("loads", None, "`meta_invalid`"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "mismatch",
        fails: &[
            (
                "capabilities",
                None,
                "imports wasi:http/outgoing-handler but declares no `http` host",
            ),
            (
                "capabilities",
                None,
                "declares `tool greet` but does not import toolhost:plugin/tools",
            ),
            ("loads", None, "not granted"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "panic",
        fails: &[(
            "arguments",
            Some("explode"),
            "ended in trap: the plugin panicked: the answer was 1, not 42",
        )],
        ..PLAIN
    },
    Expect {
        plugin: "abort",
        fails: &[(
            "arguments",
            Some("abort"),
            "ended in trap: the plugin trapped: wasm trap: wasm `unreachable` instruction executed; the plugin's stderr ends with:",
        )],
        ..PLAIN
    },
    Expect {
        plugin: "hog",
        fails: &[("arguments", Some("hog"), "ended in memory_limit")],
        ..PLAIN
    },
    Expect {
        plugin: "deep",
        fails: &[("arguments", Some("deep"), "ended in stack_overflow")],
        ..PLAIN
    },
    // A small fuel budget, so that the endless loop ends quickly.
    Expect {
        plugin: "spin",
        args: &["--fuel", "200000000"],
        fails: &[("arguments", Some("spin"), "ended in out_of_fuel")],
        ..PLAIN
    },
    // A short wall-clock limit, so that the hour-long sleep ends quickly.
    Expect {
        plugin: "sleepy",
        args: &["--timeout-ms", "1000"],
        fails: &[("arguments", Some("sleep"), "ended in timeout")],
        ..PLAIN
    },
    Expect {
        plugin: "wrong-error",
        fails: &[(
            "arguments",
            Some("echo"),
            "breaks its schema (\"xxxxxxxxxxxxxxxxxxxx… (100000 characters)\" is longer than 10 characters, at /text) but was answered with tool_failed",
        )],
        ..PLAIN
    },
    // 0.2.0: declare() asks for what no import can use; a result breaks its
    // output schema.
    Expect {
        plugin: "liar",
        fails: &[
            (
                "capabilities",
                None,
                "declares `http api.example.com` but does not import wasi:http/outgoing-handler",
            ),
            (
                "capabilities",
                None,
                "declares `tool greet` but does not import toolhost:plugin/tools",
            ),
            (
                "results",
                Some("shout"),
                "does not fit its output schema: \"text\" is a required property",
            ),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "bad-output",
        fails: &[
            (
                "schemas",
                Some("names"),
                "the output schema does not describe an object",
            ),
            ("loads", None, "output schema of tool `names`"),
        ],
        ..PLAIN
    },
    Expect {
        plugin: "huge",
        fails: &[("results", Some("huge"), "more than the 1048576 byte output limit")],
        ..PLAIN
    },
    Expect {
        plugin: "chatty",
        fails: &[("stdout", Some("chatter"), "bytes to stdout")],
        ..PLAIN
    },
    // Granted its directory, it works; only the call without grants traps.
    Expect {
        plugin: "needs-grant",
        args: &["--dir", "{DATA}:/data"],
        fails: &[(
            "no-grants",
            Some("read_config"),
            "without grants, valid: the required fields only {} ended in trap",
        )],
        ..PLAIN
    },
];

#[test]
fn each_adversarial_plugin_fails_the_check_it_should() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("config.json"), "{}").unwrap();
    let data = data.path().display().to_string();
    // Built once, before the threads start.
    for expect in ADVERSARIAL {
        support::plugin_path(expect.plugin);
    }
    let outcomes: Vec<(&Expect, Output)> = std::thread::scope(|scope| {
        let runs: Vec<_> = ADVERSARIAL
            .iter()
            .map(|expect| {
                let data = &data;
                scope.spawn(move || {
                    let path = plugin(expect.plugin);
                    let mut args = vec![path.as_str(), "--format", "json"];
                    let extra: Vec<String> = expect.args.iter().map(|a| a.replace("{DATA}", data)).collect();
                    args.extend(extra.iter().map(String::as_str));
                    (expect, conformance(&args, expect.env))
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (expect, out) in outcomes {
        let name = expect.plugin;
        assert_eq!(out.status.code(), Some(1), "{name}: {out:?}");
        let json: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}: {out:?}"));
        assert_eq!(json["passed"], false, "{name}");
        let report = &json["components"][0];
        let failed: BTreeSet<&str> = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "failed")
            .map(|c| c["check"].as_str().unwrap())
            .collect();
        let expected: BTreeSet<&str> = expect.fails.iter().map(|(check, _, _)| *check).collect();
        assert_eq!(failed, expected, "{name}: {report:#}");
        for (check, tool, phrase) in expect.fails {
            let problems = report["checks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["check"] == *check)
                .unwrap()["problems"]
                .as_array()
                .unwrap();
            let found = problems.iter().any(|p| {
                p["tool"].as_str() == *tool
                    && p["message"].as_str().unwrap().contains(phrase)
                    && !p["fix"].as_str().unwrap().is_empty()
            });
            assert!(
                found,
                "{name}: no `{check}` problem naming {tool:?} with {phrase:?}: {problems:#?}"
            );
        }
    }
}

#[tokio::test]
async fn what_is_not_a_component_fails_the_first_check_and_nothing_else_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 3] = [
        ("core.wasm", b"\0asm\x01\0\0\0", "core WebAssembly module"),
        ("text.wasm", b"hello, world", "not WebAssembly"),
        ("absent.wasm", b"", "cannot read"),
    ];
    for (file, bytes, phrase) in cases {
        let path = dir.path().join(file);
        if file != "absent.wasm" {
            std::fs::write(&path, bytes).unwrap();
        }
        let report = suite().run_async(&path).await;
        assert!(!report.passed());
        let component = report.check(CheckId::Component).unwrap();
        assert_eq!(component.status, Status::Failed, "{}", report.to_human());
        assert!(
            component.problems[0].message.contains(phrase),
            "{}",
            report.to_human()
        );
        assert!(
            report.checks[1..].iter().all(|c| c.status == Status::Skipped),
            "{}",
            report.to_human()
        );
    }
}

#[test]
fn the_human_report_says_what_was_tried_and_how_to_fix_failures() {
    let out = conformance(&[&plugin("panic")], &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    for line in [
        "PASS  component",
        "FAIL  arguments",
        "SKIP  no-grants",
        "tried: made 1 call, a fresh instance each",
        "✗ tool `explode`: valid: the required fields only {\"n\":1} ended in trap",
        "fix: return a tool error instead of trapping",
        "FAILED: of 14 checks, 11 passed, 1 failed, 2 skipped",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    let out = conformance(&[&plugin("hello"), &plugin("calc")], &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("2 components checked: 2 passed conformance, 0 did not"),
        "{text}"
    );
}

#[test]
fn junit_output_is_xml_that_ci_systems_render() {
    let files = [plugin("hello"), plugin("panic"), plugin("bad-name")];
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.extend(["--format", "junit"]);
    let out = conformance(&args, &[]);
    assert_eq!(out.status.code(), Some(1));
    let xml = String::from_utf8(out.stdout).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("not XML: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let number = |node: roxmltree::Node, attr: &str| -> usize {
        node.attribute(attr)
            .unwrap_or_else(|| panic!("no {attr} on {node:?}"))
            .parse()
            .unwrap()
    };
    let suites: Vec<_> = root.children().filter(|n| n.has_tag_name("testsuite")).collect();
    assert_eq!(suites.len(), 3);
    let (mut tests, mut failures, mut skipped) = (0, 0, 0);
    for suite in &suites {
        let cases: Vec<_> = suite.children().filter(|n| n.has_tag_name("testcase")).collect();
        let names: Vec<&str> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
        let all: Vec<&str> = CheckId::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(names, all);
        let failed = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
            .count();
        let skips = cases
            .iter()
            .filter(|c| c.children().any(|n| n.has_tag_name("skipped")))
            .count();
        assert_eq!(number(*suite, "tests"), cases.len());
        assert_eq!(number(*suite, "failures"), failed);
        assert_eq!(number(*suite, "skipped"), skips);
        assert!(
            cases
                .iter()
                .all(|c| c.attribute("classname").is_some() && c.attribute("time").is_some())
        );
        tests += cases.len();
        failures += failed;
        skipped += skips;
    }
    assert_eq!(
        (
            number(root, "tests"),
            number(root, "failures"),
            number(root, "skipped")
        ),
        (tests, failures, skipped)
    );
    // The panic plugin's failure names the tool, in the message and the body.
    let failure = suites[1]
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert_eq!(failure.attribute("type"), Some("arguments"));
    assert!(
        failure
            .attribute("message")
            .unwrap()
            .starts_with("tool `explode`:")
    );
    assert!(failure.text().unwrap().contains("fix: return a tool error"));
    assert_eq!(suites[0].attribute("failures"), Some("0"));
}

#[tokio::test]
async fn the_json_report_lists_every_check_in_order() {
    let out = conformance(&[&plugin("hello"), "--format", "json"], &[]);
    assert!(out.status.success(), "{out:?}");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["passed"], true);
    let report = &json["components"][0];
    assert_eq!(report["tools"], serde_json::json!(["greet"]));
    assert_eq!(report["world"], "toolhost:plugin/plugin@0.3.1");
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    let all: Vec<&str> = CheckId::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names, all);
    // The library's report is the same document.
    let library = suite().run_async(&support::plugin_path("hello")).await;
    let mut from_library = library.to_json();
    let mut from_cli = report.clone();
    for value in [&mut from_library, &mut from_cli] {
        value["elapsed_ms"] = Value::Null;
        for check in value["checks"].as_array_mut().unwrap() {
            check["elapsed_ms"] = Value::Null;
        }
    }
    assert_eq!(from_library, from_cli);
}

/// `Suite::run` blocks, from plain code; `assert_passed` panics with the
/// human report.
#[test]
fn the_library_runs_from_cargo_test_and_asserts_with_the_report() {
    let passed: Report = suite().run(support::plugin_path("hello"));
    passed.assert_passed();
    let failed = suite().run(support::plugin_path("panic"));
    let panic = std::panic::catch_unwind(|| failed.assert_passed()).unwrap_err();
    let message = panic.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with("the component failed toolhost conformance:"),
        "{message}"
    );
    assert!(message.contains("✗ tool `explode`"), "{message}");
}

#[tokio::test]
async fn calls_count_what_the_guest_wrote_to_stdout() {
    let chatty = crate::load("chatty").await;
    let outcome = chatty
        .call("chatter", r#"{"lines": 3}"#, &Default::default(), None, 1)
        .await;
    assert_eq!(outcome.result.unwrap().content, r#""done""#);
    let expected: usize = (0..3)
        .map(|i| format!("stdout line {i}: not JSON-RPC\n").len())
        .sum();
    assert_eq!(outcome.stdout_bytes, expected as u64);
    let hello = crate::load("hello").await;
    let outcome = hello
        .call("greet", r#"{"name": "Ada"}"#, &Default::default(), None, 1)
        .await;
    assert_eq!(outcome.stdout_bytes, 0);
}

/// `toolhost new` writes a crate that builds for wasm32-wasip2 and passes
/// conformance as it is; it refuses bad names and existing folders.
#[test]
fn a_new_plugin_builds_and_passes_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let root = support::workspace_root();
    let new = |name: &str| {
        Command::new(support::toolhost_bin())
            .args(["new", name, "--dir"])
            .arg(dir.path())
            .arg("--toolhost-path")
            .arg(&root)
            .output()
            .unwrap()
    };
    let out = new("word-tool");
    assert!(out.status.success(), "{out:?}");
    let crate_dir = dir.path().join("word-tool");
    for file in [
        "Cargo.toml",
        "src/lib.rs",
        "tests/conformance.rs",
        ".cargo/config.toml",
        "README.md",
        ".gitignore",
    ] {
        assert!(crate_dir.join(file).is_file(), "{file} missing");
    }
    let config = std::fs::read_to_string(crate_dir.join(".cargo/config.toml")).unwrap();
    assert!(config.contains("--initial-heap=1048576"), "{config}");
    assert!(config.contains("target-feature=+simd128"), "{config}");
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"word-tool\""), "{manifest}");
    assert!(manifest.contains(&format!(
        "path = \"{}\"",
        root.join("sdk").canonicalize().unwrap().display()
    )));
    // Without --toolhost-path, the sources this binary was built from.
    let out = Command::new(support::toolhost_bin())
        .args(["new", "default-sources", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let manifest = std::fs::read_to_string(dir.path().join("default-sources/Cargo.toml")).unwrap();
    assert!(manifest.contains(&format!(
        "path = \"{}\"",
        root.join("sdk").canonicalize().unwrap().display()
    )));
    // A second time, or with a bad name: refused.
    assert!(!new("word-tool").status.success());
    let bad = new("9lives");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a crate name"));

    let wasm = build_new_crate(&crate_dir, "word_tool");
    let out = conformance(&[&wasm.display().to_string(), "--format", "json"], &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["components"][0]["tools"], serde_json::json!(["greet"]));
}

/// Builds the crate in `dir` as its own test does (`cargo build --release
/// --target wasm32-wasip2`), with the workspace's lock file (so nothing new
/// is resolved or downloaded) into the target folder the example plugin's
/// test uses, so that the dependencies are built once.
fn build_new_crate(dir: &Path, lib: &str) -> PathBuf {
    std::fs::copy(
        support::workspace_root().join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .unwrap();
    let target = support::workspace_root()
        .join("target")
        .join("tmp")
        .join("component");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "--quiet",
            "--offline",
            "--release",
            "--target",
            "wasm32-wasip2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    target
        .join("wasm32-wasip2")
        .join("release")
        .join(format!("{lib}.wasm"))
}
