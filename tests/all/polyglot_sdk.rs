//! What the Python and JavaScript SDKs give an author at
//! `toolhost:plugin@0.3.0`: components that import only the host interfaces
//! the plugin uses (read from the built components' bytes), SDK pages whose
//! code is the examples' own, and the examples' images, audio, links,
//! embedded resources, logs, elicitation, sampling, prompts and resources
//! served to the official MCP Python SDK by the real `toolhost` binary.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{self, JS_EXAMPLE, JS_RAW, PYTHON_EXAMPLE, PYTHON_RAW, PYTHON_TRAP, Polyglot};

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
            &["client@0.3.0", "host@0.3.0", "types@0.3.0"],
            &["prompts@0.3.0", "resources@0.3.0", "tool@0.3.0"],
        ),
        (
            &JS_EXAMPLE,
            &["client@0.3.0", "host@0.3.0", "types@0.3.0"],
            &["prompts@0.3.0", "resources@0.3.0", "tool@0.3.0"],
        ),
        (&PYTHON_RAW, &["types@0.3.0"], &["tool@0.3.0"]),
        (&JS_RAW, &["types@0.3.0"], &["tool@0.3.0"]),
        (&PYTHON_TRAP, &["types@0.3.0"], &["tool@0.3.0"]),
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
                format!("{kind} {}", name.trim_end_matches("@0.3.0"))
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
