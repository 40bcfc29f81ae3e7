//! What the Python and JavaScript SDKs give an author at
//! `toolhost:plugin@0.3.1`: components that import only the host interfaces
//! the plugin uses (read from the built components' bytes), a
//! `toolhost:capabilities` section read from the Python plugin's source,
//! SDK pages whose code is the examples' own, and the examples' images,
//! audio, links, embedded resources, logs, elicitation, sampling, roots,
//! rounds of questions, what the client can be asked, prompts and
//! resources served to the official MCP SDKs' clients by the real
//! `toolhost` binary.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::mcp_server::{Sdk, python_client, sdk_client_in, stdio_mode};
use crate::peers::wait_until;
use crate::polyglot::{NOTES, setup};
use crate::support::{self, JS_EXAMPLE, JS_RAW, PYTHON_EXAMPLE, PYTHON_RAW, PYTHON_TRAP, Polyglot};
use crate::tasks::{Replica, ended, rpc};

/// A component's top-level imports and exports, from its bytes.
fn interfaces(path: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let bytes = std::fs::read(path).unwrap();
    let (mut imports, mut exports) = (BTreeSet::new(), BTreeSet::new());
    // Every module or component starts with `Version` and ends with `End`;
    // the component itself is depth 1.
    let mut depth = 0usize;
    for payload in wasmparser::Parser::new(0).parse_all(&bytes) {
        match payload.expect("a valid component") {
            wasmparser::Payload::Version { .. } => depth += 1,
            wasmparser::Payload::End(_) => depth -= 1,
            wasmparser::Payload::ComponentImportSection(reader) if depth == 1 => {
                imports.extend(reader.into_iter().map(|i| i.unwrap().name.name.to_string()));
            }
            wasmparser::Payload::ComponentExportSection(reader) if depth == 1 => {
                exports.extend(reader.into_iter().map(|e| e.unwrap().name.name.to_string()));
            }
            _ => {}
        }
    }
    (imports, exports)
}

fn toolhost_interfaces(names: &BTreeSet<String>) -> Vec<&str> {
    names
        .iter()
        .filter_map(|n| n.strip_prefix("toolhost:plugin/"))
        .collect()
}

/// componentize-py and componentize-js give a component every import of
/// the world they target; the SDKs' builds write a world of what the plugin
/// uses. The examples log and ask the client, so they import `host` and
/// `client` (and `types`, which their exports use), never `tools` or
/// `progress`; they offer prompts and resources, so they export both beside
/// `tool`. The plugins written against the bindings alone, and the one that
/// only traps, import nothing of the host's. The JavaScript example reads
/// the environment and a folder through `toolhost-wasi.js`, so its world
/// names those WASI interfaces.
#[test]
fn the_sdks_builds_import_only_what_the_plugin_uses() {
    let cases: [(&Polyglot, &[&str], &[&str]); 5] = [
        (
            &PYTHON_EXAMPLE,
            &["client@0.3.1", "host@0.3.1", "types@0.3.1"],
            &["prompts@0.3.1", "resources@0.3.1", "tool@0.3.1"],
        ),
        (
            &JS_EXAMPLE,
            &["client@0.3.1", "host@0.3.1", "types@0.3.1"],
            &["prompts@0.3.1", "resources@0.3.1", "tool@0.3.1"],
        ),
        (&PYTHON_RAW, &["types@0.3.1"], &["tool@0.3.1"]),
        (&JS_RAW, &["types@0.3.1"], &["tool@0.3.1"]),
        (&PYTHON_TRAP, &["types@0.3.1"], &["tool@0.3.1"]),
    ];
    for (plugin, want_imports, want_exports) in cases {
        let name = plugin.name;
        let (imports, exports) = interfaces(&support::polyglot(plugin));
        assert_eq!(
            toolhost_interfaces(&imports),
            want_imports,
            "{name} imports {imports:?}"
        );
        assert_eq!(
            toolhost_interfaces(&exports),
            want_exports,
            "{name} exports {exports:?}"
        );
    }
    let (js, _) = interfaces(&support::polyglot(&JS_EXAMPLE));
    for wasi in ["wasi:cli/environment@0.2.12", "wasi:filesystem/preopens@0.2.12"] {
        assert!(js.contains(wasi), "js-plugin does not import {wasi}: {js:?}");
    }
    assert!(
        !js.iter().any(|i| i.starts_with("wasi:http/outgoing-handler")),
        "js-plugin imports outgoing HTTP: {js:?}"
    );
}

/// The lines of `text`, each without its indentation.
fn trimmed(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).collect()
}

/// Every code block of the Python and JavaScript SDK pages is a run of
/// lines of the example plugin the tests build and serve, so the pages
/// show code that works (indentation aside: a tool's definition is shown
/// outside its list).
#[test]
fn the_sdk_pages_show_the_examples_code() {
    let root = support::workspace_root();
    for (page, example, fence) in [
        (
            "sdk/docs/python.md",
            "examples/python-plugin/app.py",
            "```python\n",
        ),
        (
            "sdk/docs/javascript.md",
            "examples/js-plugin/plugin.js",
            "```js\n",
        ),
    ] {
        let page_text = std::fs::read_to_string(root.join(page)).unwrap();
        let source = std::fs::read_to_string(root.join(example)).unwrap();
        let source = trimmed(&source);
        let blocks: Vec<&str> = page_text
            .split(fence)
            .skip(1)
            .map(|rest| rest.split("```").next().unwrap())
            .collect();
        assert!(blocks.len() >= 10, "{page} has only {} code blocks", blocks.len());
        for block in blocks {
            let lines = trimmed(block.trim_end_matches('\n'));
            assert!(
                source.windows(lines.len()).any(|w| w == lines.as_slice()),
                "{page} shows code that is not in {example}:\n{block}"
            );
        }
    }
}

/// The `import` and `export` lines of a world printed by a build's
/// `--print-world`, without `toolhost:plugin/` and the version.
fn world_lines(out: &std::process::Output) -> Vec<String> {
    assert!(
        out.status.success(),
        "--print-world failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim().trim_end_matches(';');
            let (kind, name) = l.split_once(' ')?;
            matches!(kind, "import" | "export").then(|| {
                let name = name.strip_prefix("toolhost:plugin/").unwrap_or(name);
                format!("{kind} {}", name.trim_end_matches("@0.3.1"))
            })
        })
        .collect()
}

/// `toolhost_build.py` reads the plugin's modules (the one it builds and
/// the local ones it imports) without running them: each name of the
/// helper's it uses brings its interface, by name or as an attribute of the
/// module; the helper's module passed around brings them all; a plugin
/// written against the bindings gets what it imports from them, and the
/// server exports when it defines `Prompts`.
#[test]
fn the_python_build_reads_what_the_plugin_uses() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "app.py",
            "from toolhost_plugin import tool, log\nimport helpers\n",
        ),
        (
            "helpers.py",
            "import toolhost_plugin as th\n\ndef ask():\n    return th.elicit('q', {})\n",
        ),
        ("catalog.py", "from toolhost_plugin import resource, progress\n"),
        (
            "raw.py",
            "from wit_world.imports import tools, types\n\nclass Prompts:\n    pass\n",
        ),
        ("passed.py", "import toolhost_plugin\nhelper = toolhost_plugin\n"),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let script = support::workspace_root().join("sdk/python/toolhost_build.py");
    let world = |module: &str| {
        world_lines(
            &std::process::Command::new("python3")
                .arg(&script)
                .args([module, "--print-world", "-p"])
                .arg(dir.path())
                .output()
                .unwrap(),
        )
    };
    let server = ["export tool", "export prompts", "export resources"];
    assert_eq!(world("app"), ["import host", "import client", "export tool"]);
    assert_eq!(world("catalog"), [&["import progress"][..], &server].concat());
    assert_eq!(world("raw"), [&["import tools"][..], &server].concat());
    let all = ["import host", "import progress", "import tools", "import client"];
    assert_eq!(world("passed"), [&all[..], &server].concat());
}

/// What the Python build reads from the plugin's source for the component's
/// `toolhost:capabilities` section (`--print-section`): `declare(roots=True)`
/// and each `@tool(task=...)`, by the tool's name (`name=`, else the
/// function's), however `declare` and `tool` were imported; a value that is
/// not a literal fails, naming the file and line. (A declaration the source
/// hides from it fails the build itself: the component checks what it
/// declared while componentize-py runs it.)
#[test]
fn the_python_build_reads_the_section_from_the_source() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "app.py",
            "import toolhost_plugin as th\nfrom toolhost_plugin import declare as d, tool\nimport helpers\n\
             d(env=['X'], roots=True)\n\
             @tool(task='optional')\ndef build() -> str:\n    'b'\n\
             @th.tool(name='train', task='required', deferred=True)\nasync def fit() -> str:\n    'f'\n",
        ),
        (
            "helpers.py",
            "from toolhost_plugin import *\n\ndef plain() -> str:\n    'p'\n\ntool(plain, task='optional')\ndeclare(roots=False)\n",
        ),
        (
            "bad.py",
            "from toolhost_plugin import tool\nSUPPORT = 'optional'\n\n@tool(task=SUPPORT)\ndef t() -> str:\n    't'\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let script = support::workspace_root().join("sdk/python/toolhost_build.py");
    let section = |module: &str| {
        std::process::Command::new("python3")
            .arg(&script)
            .args([module, "--print-section", "-p"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let out = section("app");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "client roots\ntask build optional\ntask train required deferred\ntask plain optional\n"
    );
    let out = section("bad");
    assert!(!out.status.success());
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("bad.py:4: write task= as a str literal"),
        "{error}"
    );
}

/// A declaration a build cannot honour fails it, saying why, with the real
/// toolchains: in Python, one the source hides from `toolhost_build.py`
/// (`declare(**options)`), which the component finds while componentize-py
/// runs the plugin; in JavaScript, the roots declared by a plugin that
/// never asks its client anything, whose component would not import
/// `toolhost:plugin/client`. Neither leaves a component behind.
#[test]
fn a_declaration_a_build_cannot_honour_fails_it() {
    let root = support::workspace_root();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hidden.py"),
        "from toolhost_plugin import declare, list_roots, tool\n\nOPTIONS = {'roots': True}\ndeclare(**OPTIONS)\n\n\
         @tool\ndef roots() -> str:\n    'Lists the roots.'\n    return str(list_roots())\n",
    )
    .unwrap();
    let sdk = root.join("sdk/js/toolhost-plugin.js");
    std::fs::write(
        dir.path().join("silent.js"),
        format!(
            "import {{ definePlugin }} from {:?};\nexport const tool = definePlugin({{ declare: {{ roots: true }}, \
             tools: [{{ name: \"t\", description: \"d\", parameters: {{ type: \"object\" }}, run: () => \"x\" }}] }});\n",
            sdk.display().to_string()
        ),
    )
    .unwrap();
    let python = dir.path().join("hidden.wasm");
    let js = dir.path().join("silent.wasm");
    let builds = [
        (
            std::process::Command::new(root.join("sdk/python/componentize"))
                .arg(dir.path())
                .arg("hidden")
                .arg(&python)
                .output()
                .unwrap(),
            &python,
            "read nothing from the plugin's source for its toolhost:capabilities section, but the plugin declared `client roots` when it ran",
        ),
        (
            std::process::Command::new(root.join("sdk/js/componentize"))
                .arg(dir.path().join("silent.js"))
                .arg(&js)
                .output()
                .unwrap(),
            &js,
            "declare: { roots: true }, but the plugin never calls listRoots or ask",
        ),
    ];
    for (out, wasm, why) in builds {
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{}: {said}", wasm.display());
        assert!(said.contains(why), "{}: {said}", wasm.display());
        assert!(!wasm.exists(), "{} was left behind", wasm.display());
    }
}

/// `toolhost-build.mjs` bundles the plugin as jco will and keeps the host's
/// interfaces the bundle still imports: what `toolhost-plugin.js` imports
/// but the plugin never calls is left out; `toolhost-wasi.js` brings the
/// WASI interfaces it reads through; exporting `resources` alone exports
/// `prompts` too (the build adds an empty one).
#[test]
fn the_javascript_build_keeps_what_the_bundle_uses() {
    let root = support::workspace_root();
    // Installed by tests/setup, as the other polyglot builds use it.
    let jco = root.join("target/peers/jco/node_modules/.bin/jco");
    let sdk = root.join("sdk/js");
    let dir = tempfile::tempdir().unwrap();
    let import = |names: &str, module: &str| {
        format!(
            "import {{ {names} }} from {:?};\n",
            sdk.join(module).display().to_string()
        )
    };
    let tool = "export const tool = definePlugin({ tools: [{ name: \"t\", description: \"d\", parameters: { type: \"object\" }, run: () => RUN }] });\n";
    let entries = [
        (
            "logs.js",
            import("definePlugin, log", "toolhost-plugin.js") + &tool.replace("RUN", "log(\"info\", \"x\")"),
        ),
        (
            "calls.js",
            import("definePlugin, callMany, sample", "toolhost-plugin.js")
                + &tool.replace("RUN", "callMany([]).concat(sample(\"q\", { maxTokens: 9 }))"),
        ),
        (
            "env.js",
            import("definePlugin, defineResources", "toolhost-plugin.js")
                + &import("env", "toolhost-wasi.js")
                + &tool.replace("RUN", "env(\"HOME\")")
                + "export const resources = defineResources({});\n",
        ),
    ];
    for (name, text) in &entries {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let world = |entry: &str| {
        world_lines(
            &std::process::Command::new("node")
                .arg(sdk.join("toolhost-build.mjs"))
                .arg(dir.path().join(entry))
                .arg("--print-world")
                .arg("--jco")
                .arg(&jco)
                .output()
                .unwrap(),
        )
    };
    assert_eq!(world("logs.js"), ["import host", "export tool"]);
    assert_eq!(
        world("calls.js"),
        ["import tools", "import client", "export tool"]
    );
    assert_eq!(
        world("env.js"),
        [
            "import wasi:cli/environment@0.2.12",
            "export tool",
            "export prompts",
            "export resources"
        ]
    );
}

/// The grants the examples need for everything they do: the environment
/// variable, the folder, asking the user, and one request to the client's
/// model per call.
const ALL_GRANTS: &str = r#"env = ["GREETING"]
dirs = [{ host = "workspace", guest = "/workspace", mode = "ro" }]
elicitation = true
sampling = { requests = 1, max_tokens = 200 }"#;

/// The width and height a PNG's header states.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

fn decoded(data: &Value) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(data.as_str().unwrap())
        .unwrap()
}

/// Each example, served by `toolhost serve` with the grants it declares, to
/// the official MCP Python SDK's client: a chart as a PNG image and a chime
/// as WAV audio, a file as a resource link and an embedded resource (with
/// annotations), log records at the level the client set, a question to the
/// user answered and declined, a completion from the client's model, a
/// prompt rendered and completed, a resource and a template read and
/// completed.
#[test]
fn the_examples_serve_content_logs_questions_prompts_and_resources_over_mcp() {
    for plugin in [&PYTHON_EXAMPLE, &JS_EXAMPLE] {
        let name = plugin.name;
        let dir = setup(&[(plugin, ALL_GRANTS)]);
        let config = dir.path().join("toolhost.toml");
        let out = python_client(
            &stdio_mode(&["--stdio", "--config", config.to_str().unwrap()]),
            json!([
                {"set_level": "info"},
                {"elicit": {"name": "Ada"}},
                {"sample": "Notes about a cat and a dog."},
                {"call": "word_chart", "args": {"path": "notes.txt", "top": 3}},
                {"call": "chime", "args": {"frequency": 880}},
                {"call": "share", "args": {"path": "notes.txt"}},
                {"call": "word_stats", "args": {"path": "notes.txt"}},
                {"call": "greet_me"},
                {"elicit": "decline"},
                {"call": "greet_me"},
                {"call": "summarize", "args": {"path": "notes.txt"}},
                {"prompts": true},
                {"get_prompt": "review", "args": {"notes": "the cat", "focus": "tone"}},
                {"complete": {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "focus", "value": "g"}}},
                {"resources": true},
                {"read": "notes://guide"},
                {"read": "notes://workspace/notes.txt"},
                {"complete": {"ref": {"type": "ref/resource", "uri": "notes://workspace/{name}"}, "argument": {"name": "name", "value": "no"}}},
            ]),
        );
        let steps = out["steps"].as_array().unwrap();
        // The chart: its caption, then a PNG of three bars.
        let chart = &steps[3];
        assert_eq!(chart["is_error"], false, "{name}: {chart}");
        assert_eq!(
            chart["content"][0]["text"], "Most common words of notes.txt: the (3), cat (1), and (1)",
            "{name}"
        );
        let image = &chart["content"][1];
        assert_eq!(image["type"], "image", "{name}: {image}");
        assert_eq!(image["mimeType"], "image/png", "{name}");
        assert_eq!(
            png_size(&decoded(&image["data"])),
            (200, 3 * 12 + 2 * 4),
            "{name}"
        );
        // The chime: a quarter of a second of 8 kHz WAV.
        let sound = &steps[4]["content"][0];
        assert_eq!(
            (&sound["type"], &sound["mimeType"]),
            (&json!("audio"), &json!("audio/wav")),
            "{name}: {sound}"
        );
        let wav = decoded(&sound["data"]);
        assert_eq!(
            (&wav[..4], &wav[8..12], wav.len()),
            (&b"RIFF"[..], &b"WAVE"[..], 44 + 2000),
            "{name}"
        );
        // The file as a link and embedded whole, for the model.
        assert_eq!(
            steps[5]["content"],
            json!([
                {"type": "resource_link", "uri": "notes://workspace/notes.txt", "name": "notes.txt", "mimeType": "text/plain", "size": 28},
                {"type": "resource", "resource": {"uri": "notes://workspace/notes.txt", "mimeType": "text/plain", "text": NOTES},
                 "annotations": {"audience": ["assistant"], "priority": 0.5}},
            ]),
            "{name}"
        );
        // Logs at the level the client set, named after their tool.
        let logs = out["logs"].as_array().unwrap();
        assert_eq!(logs[0]["level"], "info", "{name}: {logs:?}");
        assert_eq!(logs[0]["logger"], "word_stats", "{name}: {logs:?}");
        assert_eq!(
            logs[0]["data"],
            json!({"message": "counted words", "path": "notes.txt", "words": "7"}),
            "{name}"
        );
        // A question answered, then declined.
        assert_eq!(steps[7]["text"], "Hello, Ada!", "{name}: {}", steps[7]);
        assert_eq!(
            steps[9]["text"], "No name given (decline): no greeting.",
            "{name}: {}",
            steps[9]
        );
        let asked = out["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 2, "{name}: {asked:?}");
        assert_eq!(asked[0]["message"], "What is your name?", "{name}");
        assert_eq!(
            asked[0]["schema"]["properties"]["name"]["type"], "string",
            "{name}"
        );
        // The client's model's answer, and what it was asked.
        assert_eq!(
            steps[10]["text"], "Notes about a cat and a dog.",
            "{name}: {}",
            steps[10]
        );
        let sampled = &out["samplings"][0];
        assert_eq!(sampled["maxTokens"], 200, "{name}: {sampled}");
        assert_eq!(
            sampled["systemPrompt"], "You summarize notes faithfully and briefly.",
            "{name}"
        );
        assert!(
            sampled["messages"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .ends_with(NOTES),
            "{name}: {sampled}"
        );
        assert_eq!(
            logs.last().unwrap()["data"],
            json!({"message": "summarized", "path": "notes.txt", "model": "test-model"}),
            "{name}"
        );
        // The prompt, rendered and completed.
        let prompts = steps[11]["prompts"].as_array().unwrap();
        assert_eq!(prompts.len(), 1, "{name}: {prompts:?}");
        assert_eq!(prompts[0]["title"], "Review notes", "{name}");
        assert_eq!(
            prompts[0]["arguments"],
            json!([
                {"name": "notes", "description": "The notes to review.", "required": true},
                {"name": "focus", "description": "What the review looks at.", "required": false},
            ]),
            "{name}"
        );
        assert_eq!(
            steps[12]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Review these notes for tone; list the three changes that matter most.\n\nthe cat"}}]),
            "{name}"
        );
        assert_eq!(steps[13]["completion"]["values"], json!(["grammar"]), "{name}");
        // The resources, read and completed.
        assert_eq!(
            steps[14]["resources"][0]["uri"], "notes://guide",
            "{name}: {}",
            steps[14]
        );
        assert_eq!(
            steps[14]["templates"][0]["uriTemplate"], "notes://workspace/{name}",
            "{name}"
        );
        assert_eq!(
            steps[15]["contents"][0]["mimeType"], "text/markdown",
            "{name}: {}",
            steps[15]
        );
        assert_eq!(
            steps[16]["contents"],
            json!([{"uri": "notes://workspace/notes.txt", "mimeType": "text/plain", "text": NOTES}]),
            "{name}"
        );
        assert_eq!(steps[17]["completion"]["values"], json!(["notes.txt"]), "{name}");
    }
}

/// [`ALL_GRANTS`] and the client's roots: everything the examples ask.
fn asking_grants() -> String {
    format!("{ALL_GRANTS}\nroots = true")
}

/// WIT 0.3.1's questions through each example, served by `toolhost serve`
/// to both official SDKs' clients (Python and TypeScript), which answer
/// them: the client's roots listed (`list_roots` / `listRoots`); a round of
/// two questions (`ask`), one for the user and one for the model, both
/// answered; `available()` saying all three can be asked of this client;
/// `begin_task()` false, since the client does not support tasks.
#[test]
fn the_examples_list_roots_ask_a_round_and_say_what_they_may_ask_over_mcp() {
    const SUMMARY: &str = "A cat, a dog, the end.";
    for plugin in [&PYTHON_EXAMPLE, &JS_EXAMPLE] {
        let dir = setup(&[(plugin, &asking_grants())]);
        let config = dir.path().join("toolhost.toml");
        for sdk in [Sdk::Python, Sdk::TypeScript] {
            let name = format!("{} {sdk:?}", plugin.name);
            let out = sdk_client_in(
                sdk,
                dir.path(),
                &stdio_mode(&["--stdio", "--config", config.to_str().unwrap()]),
                json!([
                    {"elicit": {"name": "Ada"}},
                    {"sample": SUMMARY},
                    {"roots": [{"uri": "file:///work/notes", "name": "notes"}, {"uri": "file:///work/drafts"}]},
                    {"call": "client_roots"},
                    {"call": "report", "args": {"path": "notes.txt"}},
                    {"call": "can_ask"},
                    {"call": "index_words", "args": {"path": "notes.txt"}},
                ]),
            );
            let steps = &out["steps"];
            for step in 3..7 {
                assert_eq!(steps[step]["is_error"], false, "{name}: {}", steps[step]);
            }
            assert_eq!(
                steps[3]["text"], "2 root(s): file:///work/notes (notes), file:///work/drafts",
                "{name}"
            );
            assert_eq!(out["roots_listed"], 1, "{name}");
            // The round: the user's answer and the model's, together.
            assert_eq!(
                steps[4]["text"],
                format!("Report on notes.txt for Ada: {SUMMARY}"),
                "{name}"
            );
            let asked = out["elicitations"].as_array().unwrap();
            assert_eq!(asked.len(), 1, "{name}: {asked:?}");
            assert_eq!(asked[0]["message"], "Who is the report for?", "{name}");
            assert_eq!(
                asked[0]["schema"]["properties"]["name"]["type"], "string",
                "{name}"
            );
            let sampled = out["samplings"].as_array().unwrap();
            assert_eq!(sampled.len(), 1, "{name}: {sampled:?}");
            assert_eq!(sampled[0]["maxTokens"], 200, "{name}");
            assert!(
                sampled[0]["messages"][0]["content"]["text"]
                    .as_str()
                    .unwrap()
                    .ends_with(NOTES),
                "{name}: {sampled:?}"
            );
            assert_eq!(
                steps[5]["structured"],
                json!({"elicitation": true, "sampling": true, "roots": true}),
                "{name}"
            );
            assert_eq!(
                steps[6]["text"], "Indexed notes.txt: 7 words, 5 distinct (in the request).",
                "{name}"
            );
        }
    }
}

/// A tool declared deferred (`index_words`: `task index_words optional
/// deferred`, from `@tool(task="optional", deferred=True)` and `task:
/// "optional", deferred: true`) begins its task itself: served by `toolhost
/// serve --http`, to a client on MCP 2026-07-28 that declares the tasks
/// extension, `begin_task()` / `beginTask()` returns true, the request is
/// answered with a task, and the task's result says it ran as one; for a
/// client that does not declare it, it returns false and the call answers
/// in the request.
#[test]
fn a_deferred_tool_begins_its_task_for_a_client_that_supports_tasks() {
    for plugin in [&PYTHON_EXAMPLE, &JS_EXAMPLE] {
        let name = plugin.name;
        let dir = setup(&[(plugin, ALL_GRANTS)]);
        let replica = Replica::start(&dir.path().join("toolhost.toml"));
        let call = json!({"name": "index_words", "arguments": {"path": "notes.txt"}});
        let mut created = Value::Null;
        // Until the plugin is loaded and its tool listed.
        wait_until("index_words served as a task", || {
            created = rpc(replica.addr, "tools/call", call.clone(), true);
            created["result"]["resultType"] == "task"
        });
        let task = created["result"]["taskId"].as_str().unwrap();
        let end = ended(replica.addr, task);
        assert_eq!(end["status"], "completed", "{name}: {end}");
        assert_eq!(
            end["result"]["content"][0]["text"], "Indexed notes.txt: 7 words, 5 distinct (as a task).",
            "{name}: {end}"
        );
        let plain = rpc(replica.addr, "tools/call", call, false);
        assert_eq!(
            plain["result"]["content"][0]["text"], "Indexed notes.txt: 7 words, 5 distinct (in the request).",
            "{name}: {plain}"
        );
    }
}

/// The error of a failed call step, as the server sent it.
fn failure(step: &Value) -> Value {
    assert_eq!(step["is_error"], true, "expected an error result: {step}");
    serde_json::from_str(step["text"].as_str().unwrap()).unwrap()
}

/// A question a plugin cannot ask fails its tool with the host's reason, in
/// both SDKs (their `ClientError`, named after the function, or after the
/// key of a round's question): `unavailable` when the client cannot answer
/// (it did not declare the capability), `capability_not_granted` when the
/// operator did not grant it to the plugin, whatever the client could do.
/// `available()` says beforehand what may be asked: only what is granted
/// and the client can answer.
#[test]
fn the_examples_questions_fail_with_the_hosts_reason() {
    const DECLARED_ONLY: &str = r#"dirs = [{ host = "workspace", guest = "/workspace", mode = "ro" }]"#;
    let asking = asking_grants();
    let answers = [
        json!({"elicit": {"name": "Ada"}}),
        json!({"sample": "never sent"}),
        json!({"roots": [{"uri": "file:///work"}]}),
    ];
    /// The grants, what the client answers, each question's error code
    /// (none: answered), and what `available()` says.
    struct Case<'a> {
        grants: &'a str,
        answers: &'a [Value],
        codes: [Option<&'a str>; 4],
        available: Value,
    }
    let cases = [
        Case {
            grants: &asking,
            answers: &[],
            codes: [Some("unavailable"); 4],
            available: json!({"elicitation": false, "sampling": false, "roots": false}),
        },
        Case {
            grants: DECLARED_ONLY,
            answers: &answers,
            codes: [Some("capability_not_granted"); 4],
            available: json!({"elicitation": false, "sampling": false, "roots": false}),
        },
        Case {
            grants: &asking,
            answers: &answers[2..],
            codes: [
                Some("unavailable"),
                Some("unavailable"),
                None,
                Some("unavailable"),
            ],
            available: json!({"elicitation": false, "sampling": false, "roots": true}),
        },
    ];
    for (plugin, roots) in [(&PYTHON_EXAMPLE, "list_roots"), (&JS_EXAMPLE, "listRoots")] {
        let name = plugin.name;
        let questions = [
            ("elicit", json!({"call": "greet_me"})),
            (
                "sample",
                json!({"call": "summarize", "args": {"path": "notes.txt"}}),
            ),
            (roots, json!({"call": "client_roots"})),
            (
                "question reader",
                json!({"call": "report", "args": {"path": "notes.txt"}}),
            ),
        ];
        for Case {
            grants,
            answers,
            codes,
            available,
        } in &cases
        {
            let dir = setup(&[(plugin, grants)]);
            let config = dir.path().join("toolhost.toml");
            let steps: Vec<Value> = answers
                .iter()
                .cloned()
                .chain(questions.iter().map(|(_, step)| step.clone()))
                .chain([json!({"call": "can_ask"})])
                .collect();
            let out = python_client(
                &stdio_mode(&["--stdio", "--config", config.to_str().unwrap()]),
                Value::Array(steps),
            );
            let steps = &out["steps"].as_array().unwrap()[answers.len()..];
            for ((step, (request, _)), code) in steps.iter().zip(&questions).zip(codes) {
                let Some(code) = code else {
                    assert_eq!(step["is_error"], false, "{name} {request}: {step}");
                    continue;
                };
                let error = failure(step);
                assert_eq!(error["error_code"], "tool_failed", "{name} {code}: {error}");
                let message = error["error"].as_str().unwrap();
                assert!(
                    message.contains(&format!("{request} failed ({code})")),
                    "{name} {code}: {message}"
                );
            }
            assert_eq!(steps[4]["structured"], *available, "{name}: {}", steps[4]);
            assert!(
                out["elicitations"].as_array().unwrap().is_empty(),
                "{name}: {out}"
            );
            assert!(out["samplings"].as_array().unwrap().is_empty(), "{name}: {out}");
        }
    }
}
