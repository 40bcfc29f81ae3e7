//! Lazy bridged servers (`lazy = true`), through `toolhost serve` and the
//! official Python SDK's client: two tools per server, the catalog with its
//! schemas, seed 003's result dict and error shapes, approval patterns on
//! the remote tool's bridged name, and the catalog cached for
//! `catalog_ttl_s`.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_server::{python_client, stdio_mode, temp_config};
use crate::support;

/// A `[[mcp.servers]]` entry for `tests/peers/catalog_server.py`, lazy,
/// named `name`, plus `extra` keys.
fn catalog_server(name: &str, extra: &str) -> String {
    catalog_server_with(name, 0, &format!("lazy = true\n{extra}"))
}

/// A `[[mcp.servers]]` entry for `tests/peers/catalog_server.py` with
/// `fillers` more tools, named `name`, with `extra` keys.
fn catalog_server_with(name: &str, fillers: usize, extra: &str) -> String {
    format!(
        "[[mcp.servers]]\nname = {name:?}\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}, \"{fillers}\"]\n{extra}\n",
        support::peer_python().display().to_string(),
        support::peer_script("catalog_server.py").display().to_string(),
    )
}

/// A step calling `call_tool` of server `server` with `tool` and `args`.
fn call(server: &str, tool: &str, args: Value) -> Value {
    json!({"call": format!("mcp__{server}__call_tool"), "args": {"tool_name": tool, "arguments": args}})
}

/// A step calling `list_tools` of server `server`.
fn list(server: &str) -> Value {
    json!({"call": format!("mcp__{server}__list_tools")})
}

/// Runs `steps` through `toolhost serve --stdio --config CONFIG` and the
/// Python client, once each lazy server of `servers` lists the tool named
/// beside it (a server still connecting, on a busy machine, may take longer
/// than the first listing waits). The output's steps are `steps`' own.
fn serve(config: &str, servers: &[(&str, &str)], steps: Value) -> Value {
    let mut all: Vec<Value> = servers
        .iter()
        .map(|(server, tool)| {
            json!({"call": format!("mcp__{server}__list_tools"), "until": format!("\"name\":\"{tool}\"")})
        })
        .collect();
    all.extend(steps.as_array().unwrap().iter().cloned());
    let mut out = python_client(&stdio_mode(&["--stdio", "--config", config]), Value::Array(all));
    let ready = out["steps"].as_array_mut().unwrap();
    for wait in ready.drain(..servers.len()) {
        assert_eq!(wait["is_error"], false, "a server never listed its tools: {wait}");
    }
    out
}

/// The remote names in a `list_tools` step's catalog.
fn catalog_names(step: &Value) -> Vec<String> {
    step["structured"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no catalog: {step}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// The dict of a `call_tool` step that failed as a call: an `isError`
/// result whose text is the dict.
fn refusal(step: &Value) -> Value {
    assert_eq!(step["is_error"], true, "expected a failed call: {step}");
    serde_json::from_str(step["text"].as_str().unwrap()).unwrap()
}

#[test]
fn a_lazy_server_is_two_tools_that_list_and_call_its_catalog() {
    let everything = support::server_everything().display().to_string();
    let (_dir, config) = temp_config(&format!(
        "[[mcp.servers]]\nname = \"everything\"\ntransport = \"stdio\"\ncommand = {everything:?}\nargs = [\"stdio\"]\nlazy = true\n"
    ));
    let steps = json!([
        {"list": true},
        list("everything"),
        call("everything", "echo", json!({"message": "hi"})),
        call("everything", "get-sum", json!({"a": 2, "b": 3})),
        call("everything", "ech", json!({"message": "hi"})),
        call("everything", "echo", json!({})),
        call("everything", "echo", json!({"message": 7})),
        call("everything", "get-tiny-image", json!({})),
        {"prompts": true},
        {"read": "demo://resource/static/document/architecture.md"},
    ]);
    let out = serve(&config, &[("everything", "echo")], steps);
    let direct = python_client(
        &["stdio".into(), everything, "stdio".into()],
        json!([{"list": true}]),
    );
    let steps = out["steps"].as_array().unwrap();

    // Two definitions, however many tools the server has.
    let mut bridged = crate::mcp_server::names(&steps[0]);
    bridged.retain(|n| n.starts_with("mcp__everything__"));
    assert_eq!(
        bridged,
        ["mcp__everything__call_tool", "mcp__everything__list_tools"]
    );
    let remote = &direct["steps"][0]["tools"];
    assert!(remote.as_array().unwrap().len() > 10, "{remote}");

    // The catalog: every remote tool, with its input schema as the server
    // gave it.
    let catalog = &steps[1]["structured"];
    assert_eq!(steps[1]["is_error"], false, "{}", steps[1]);
    assert_eq!(catalog["server"], "everything");
    let listed = catalog["tools"].as_array().unwrap();
    assert_eq!(listed.len(), remote.as_array().unwrap().len(), "{catalog}");
    for (mine, theirs) in listed.iter().zip(remote.as_array().unwrap()) {
        assert_eq!(mine["name"], theirs["name"]);
        assert_eq!(mine["description"], theirs["description"]);
        assert_eq!(mine["input_schema"], theirs["input_schema"]);
    }

    // A call: seed 003's dict, exactly.
    assert_eq!(steps[2]["is_error"], false, "{}", steps[2]);
    assert_eq!(
        steps[2]["structured"],
        json!({"ok": true, "server": "everything", "tool": "echo", "is_error": false, "result": "Echo: hi"})
    );
    assert_eq!(steps[3]["structured"]["result"], "The sum of 2 and 3 is 5.");

    // A name not in the catalog: a typed error in the same dict, naming
    // the nearest tool and where the catalog is.
    let unknown = refusal(&steps[4]);
    assert_eq!(unknown["error_code"], "unknown_tool", "{unknown}");
    assert_eq!(
        (
            &unknown["ok"],
            &unknown["server"],
            &unknown["tool"],
            &unknown["is_error"],
            &unknown["result"]
        ),
        (
            &json!(false),
            &json!("everything"),
            &json!("ech"),
            &json!(false),
            &Value::Null
        )
    );
    let why = unknown["error"].as_str().unwrap();
    assert!(
        why.contains("did you mean echo") && why.contains("mcp__everything__list_tools"),
        "{why}"
    );

    // Arguments the remote tool's schema refuses never reach it.
    for step in [&steps[5], &steps[6]] {
        let bad = refusal(step);
        assert_eq!(bad["error_code"], "invalid_arguments", "{bad}");
        assert_eq!(bad["tool"], "echo");
        assert!(bad["error"].as_str().unwrap().contains("message"), "{bad}");
    }

    // Content beyond text reaches the client as sent; `result` is the text.
    let image = &steps[7];
    assert_eq!(image["is_error"], false, "{image}");
    let kinds: Vec<&str> = image["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["type"].as_str())
        .collect();
    assert!(kinds.contains(&"image"), "{image}");
    assert_eq!(image["structured"]["ok"], true);
    assert!(image["structured"]["result"].is_string(), "{image}");

    // The server's prompts and resources are bridged as an eager server's.
    let prompts: Vec<&str> = steps[8]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", steps[8]))
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(prompts.contains(&"mcp__everything__simple-prompt"), "{prompts:?}");
    let contents = steps[9]["contents"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", steps[9]));
    assert!(!contents.is_empty() && contents[0]["text"].is_string());
}

#[test]
fn a_lazy_servers_errors_and_approvals_are_the_remote_tools() {
    let (_dir, config) = temp_config(&format!(
        "require_approval = [\"mcp__catalog__delete_*\"]\n\n{}",
        catalog_server("catalog", "")
    ));
    let steps = json!([
        {"list": true},
        {"elicit": "deny"},
        call("catalog", "delete_item", json!({"id": "7"})),
        {"elicit": "once"},
        call("catalog", "delete_item", json!({"id": "8"})),
        call("catalog", "echo", json!({"message": "no approval"})),
        list("catalog"),
        call("catalog", "fail", json!({"reason": "boom"})),
    ]);
    let out = serve(&config, &[("catalog", "echo")], steps);
    let steps = out["steps"].as_array().unwrap();

    // The pattern names the remote tool's bridged name: the person is asked
    // about that tool, with the arguments it would get.
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 2, "only the two delete_item calls ask: {asked:?}");
    for (ask, id) in asked.iter().zip(["7", "8"]) {
        let message = ask["message"].as_str().unwrap();
        assert!(
            message.contains("mcp__catalog__delete_item") && message.contains(id),
            "{message}"
        );
        assert!(!message.contains("call_tool"), "{message}");
    }
    assert_eq!(steps[2]["is_error"], true, "{}", steps[2]);
    assert!(
        steps[2]["text"].as_str().unwrap().contains("BLOCKED"),
        "{}",
        steps[2]
    );
    assert_eq!(steps[4]["structured"]["result"], "deleted 8", "{}", steps[4]);
    assert_eq!(steps[5]["structured"]["result"], "echo: no approval");

    // An error the remote tool reports does not fail the call: it is in
    // the dict, for the caller to check.
    assert_eq!(steps[7]["is_error"], false, "{}", steps[7]);
    let failed = &steps[7]["structured"];
    assert_eq!(
        (
            &failed["ok"],
            &failed["server"],
            &failed["tool"],
            &failed["is_error"]
        ),
        (&json!(false), &json!("catalog"), &json!("fail"), &json!(true)),
        "{failed}"
    );
    assert!(
        failed["result"].as_str().unwrap().contains("failed: boom"),
        "{failed}"
    );

    // From the command line, with no one to ask, the pattern blocks.
    let out = Command::new(support::toolhost_bin())
        .args(["call-tool", "mcp__catalog__call_tool"])
        .arg(r#"{"tool_name": "delete_item", "arguments": {"id": "9"}}"#)
        .args(["--config", &config])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "blocked", "{json}");
}

#[test]
fn a_lazy_servers_catalog_is_cached_for_its_ttl() {
    let (_dir, config) = temp_config(&format!(
        "{}\n{}",
        catalog_server("stale", "catalog_ttl_s = 3600"),
        catalog_server("fresh", "catalog_ttl_s = 1"),
    ));
    let steps = json!([
        {"list": true},
        // Within the TTL the catalog is the one listed at connection.
        list("stale"),
        list("stale"),
        call("stale", "lists", json!({})),
        call("stale", "grow", json!({"name": "added"})),
        list("stale"),
        call("stale", "added", json!({})),
        // The notifications so far: the servers' first registrations, if
        // they came after the session began.
        {"wait_list_changed": true},
        // Past it, the catalog is listed again.
        call("fresh", "grow", json!({"name": "added"})),
        {"call": "mcp__fresh__list_tools", "until": "\"added\""},
        call("fresh", "added", json!({})),
        call("fresh", "lists", json!({})),
        // A server that says its tools changed is listed again at once.
        call("stale", "grow", json!({"name": "told", "notify": true})),
        {"call": "mcp__stale__list_tools", "until": "\"told\""},
        call("stale", "told", json!({})),
        call("stale", "lists", json!({})),
        // None of this changes what toolhost's client sees.
        {"list": true},
        {"wait_list_changed": true},
    ]);
    let out = serve(&config, &[("stale", "echo"), ("fresh", "echo")], steps);
    let steps = out["steps"].as_array().unwrap();

    assert_eq!(catalog_names(&steps[1]), catalog_names(&steps[2]));
    assert_eq!(
        steps[3]["structured"]["result"], "1",
        "two list_tools calls, one listing: {}",
        steps[3]
    );
    assert_eq!(steps[4]["structured"]["result"], "grown added");
    assert!(!catalog_names(&steps[5]).contains(&"added".to_string()));
    assert_eq!(refusal(&steps[6])["error_code"], "unknown_tool");

    let before = &steps[7]["list_changed"];

    assert!(
        catalog_names(&steps[9]).contains(&"added".to_string()),
        "{}",
        steps[9]
    );
    assert_eq!(steps[10]["structured"]["result"], "I am added", "{}", steps[10]);
    let listings: u64 = steps[11]["structured"]["result"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(listings >= 2, "{}", steps[11]);

    assert!(
        catalog_names(&steps[13]).contains(&"told".to_string()),
        "{}",
        steps[13]
    );
    assert_eq!(steps[14]["structured"]["result"], "I am told");
    assert_eq!(steps[15]["structured"]["result"], "2", "{}", steps[15]);

    assert_eq!(
        crate::mcp_server::names(&steps[16]),
        crate::mcp_server::names(&steps[0])
    );
    assert_eq!(
        &steps[17]["list_changed"], before,
        "a new catalog is no news to toolhost's clients"
    );
}

#[test]
fn a_lazy_servers_status_shows_its_catalog() {
    let (_dir, config) = temp_config(&catalog_server("catalog", "catalog_ttl_s = 60"));
    let out = Command::new(support::toolhost_bin())
        .args(["tools", "--mcp-status", "--config", &config])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let server = &status[0];
    assert_eq!(server["lazy"], true, "{status}");
    assert_eq!(
        server["tools"],
        json!(["mcp__catalog__list_tools", "mcp__catalog__call_tool"])
    );
    let catalog = server["catalog"].as_array().unwrap();
    for tool in ["echo", "delete_item", "fail", "lists", "grow"] {
        assert!(catalog.contains(&json!(tool)), "{status}");
    }

    let out = Command::new(support::toolhost_bin())
        .args(["call-tool", "mcp__catalog__call_tool"])
        .arg(r#"{"tool_name": "echo", "arguments": {"message": "hi"}}"#)
        .args(["--config", &config])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["result"], "echo: hi", "{json}");
}

/// Seed 003's use: a codemode script calls a lazy server's two tools, checks
/// `ok` for a remote error (which does not raise), catches the
/// `ValueError` of a name not in the catalog, and its nested call of a
/// gated remote tool is asked about as that tool.
#[test]
fn a_script_calls_a_lazy_server_as_the_seed_describes() {
    let (_dir, config) = temp_config(&format!(
        "require_approval = [\"mcp__catalog__delete_*\"]\n\n[tools.codemode]\nenabled = true\nplugin = {:?}\n\n{}",
        support::plugin_path("codemode").display().to_string(),
        catalog_server("catalog", ""),
    ));
    let code = r#"
failed = await tools.mcp__catalog__call_tool(tool_name="fail", arguments={"reason": "boom"})
if not failed["ok"]:
    print("checked:", failed["result"])
listed = await tools.mcp__catalog__list_tools()
try:
    await tools.mcp__catalog__call_tool(tool_name="nope")
    unknown = "did not raise"
except ValueError as exc:
    unknown = str(exc)
deleted = await tools.mcp__catalog__call_tool(tool_name="delete_item", arguments={"id": "5"})
{"is_error": failed["is_error"], "names": [t["name"] for t in listed["tools"]], "unknown": unknown, "deleted": deleted["result"]}
"#;
    let out = serve(
        &config,
        &[("catalog", "echo")],
        json!([
            {"list": true},
            {"elicit": "once"},
            {"call": "run_tools_script", "args": {"code": code}},
        ]),
    );
    let step = &out["steps"][2];
    assert_eq!(step["is_error"], false, "{step}");
    let script: Value = serde_json::from_str(step["text"].as_str().unwrap()).unwrap();
    assert_eq!(script["ok"], true, "{script}");
    assert!(
        script["output"]
            .as_str()
            .unwrap()
            .contains("checked: Error executing tool fail: failed: boom"),
        "{script}"
    );
    let result = &script["result"];
    assert_eq!(result["is_error"], true);
    assert!(
        result["names"]
            .as_array()
            .unwrap()
            .contains(&json!("delete_item"))
    );
    assert!(
        result["unknown"].as_str().unwrap().starts_with("unknown_tool: "),
        "{result}"
    );
    assert_eq!(result["deleted"], "deleted 5");
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0]["message"]
            .as_str()
            .unwrap()
            .contains("mcp__catalog__delete_item"),
        "{}",
        asked[0]
    );
}

#[test]
fn lazy_keys_are_checked() {
    let entry = |extra: &str| {
        format!("[[mcp.servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\n{extra}\n")
    };
    let parse = |extra: &str| toolhost::config::Config::parse(&entry(extra), "c.toml".as_ref());
    let err = parse("catalog_ttl_s = 60").unwrap_err();
    assert!(err.message().contains("lazy servers only"), "{err}");
    let zero = parse("lazy = true\ncatalog_ttl_s = 0").unwrap();
    let err = zero.mcp.validate().unwrap_err();
    assert!(
        err.message().contains("catalog_ttl_s must be at least 1"),
        "{err}"
    );
    let config = parse("lazy = true\ncatalog_ttl_s = 18446744073709551615").unwrap();
    assert!(config.mcp.servers[0].lazy);
}

/// The point of lazy servers: one with more tools than a server may list
/// eagerly (256) costs two definitions, and every tool is callable.
#[test]
fn a_server_too_large_to_bridge_eagerly_is_two_tools_when_lazy() {
    let (_dir, config) = temp_config(&format!(
        "{}\n{}",
        catalog_server_with("eager", 300, ""),
        catalog_server_with("lazy", 300, "lazy = true"),
    ));
    let out = serve(
        &config,
        &[("lazy", "filler_299")],
        json!([
            {"list": true},
            list("lazy"),
            call("lazy", "filler_299", json!({"query": "q"})),
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let names = crate::mcp_server::names(&steps[0]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__eager__")), "{names:?}");
    let lazy: Vec<&String> = names.iter().filter(|n| n.starts_with("mcp__lazy__")).collect();
    assert_eq!(lazy, ["mcp__lazy__call_tool", "mcp__lazy__list_tools"]);
    assert_eq!(catalog_names(&steps[1]).len(), 305);
    assert_eq!(steps[2]["structured"]["result"], "filler 299: q", "{}", steps[2]);

    let out = Command::new(support::toolhost_bin())
        .args(["tools", "--mcp-status", "--config", &config])
        .output()
        .unwrap();
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let refused = status[0]["refused"][0].as_str().unwrap();
    assert!(
        refused.contains("more than the limit of 256") && refused.contains("lazy = true"),
        "{status}"
    );
}
