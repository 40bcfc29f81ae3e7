//! The MCP conformance suite's fixture (`examples/mcp-conformance`) served
//! over stdio, driven through the official TypeScript and Python SDK
//! clients with the suite's own requests: each answer is checked as the
//! suite checks it over HTTP (`examples/mcp-conformance/run-suite`, run by
//! `.ci/run`), and more exactly where the fixture's answer is fixed.

use serde_json::{Value, json};

use crate::mcp_server::{Sdk, sdk_client_in, stdio_mode};
use crate::support;

/// The reference's image and sound, as MCP carries them.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The suite's requests, in the order of its scenarios.
fn steps() -> Value {
    let call = |name: &str| json!({"call": name, "args": {}});
    json!([
        {"set_level": "debug"},
        {"elicit": {"response": "yes"}},
        {"sample": "This is a test response from the client"},
        {"list": true},
        call("test_simple_text"),
        call("test_image_content"),
        call("test_audio_content"),
        call("test_embedded_resource"),
        call("test_multiple_content_types"),
        call("test_tool_with_logging"),
        {"call": "test_tool_with_progress", "args": {}, "progress": true},
        call("test_error_handling"),
        {"call": "test_sampling", "args": {"prompt": "Test prompt for sampling"}},
        {"call": "test_elicitation", "args": {"message": "Please provide your response"}},
        call("test_elicitation_sep1034_defaults"),
        call("test_elicitation_sep1330_enums"),
        {"call": "json_schema_2020_12_tool",
         "args": {"name": "Ada", "address": {"city": "London"}, "email": "ada@example.com"}},
        call("test_reconnection"),
        {"prompts": true},
        {"get_prompt": "test_simple_prompt"},
        {"get_prompt": "test_prompt_with_arguments", "args": {"arg1": "testValue1", "arg2": "testValue2"}},
        {"get_prompt": "test_prompt_with_embedded_resource", "args": {"resourceUri": "test://example-resource"}},
        {"get_prompt": "test_prompt_with_image"},
        {"resources": true},
        {"read": "test://static-text"},
        {"read": "test://static-binary"},
        {"read": "test://template/123/data"},
        {"complete": {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                      "argument": {"name": "arg1", "value": "test"}}},
        {"subscribe": "test://watched-resource"},
        {"unsubscribe": "test://watched-resource"},
    ])
}

pub(crate) fn fixture_config() -> String {
    let plugin = support::plugin_path("mcp-conformance");
    let template =
        std::fs::read_to_string(support::workspace_root().join("examples/mcp-conformance/toolhost.toml"))
            .expect("the fixture's config");
    // The same config, pointing at the plugin the tests built.
    template.replace(
        "../../target/plugins/wasm32-wasip2/plugin/mcp_conformance.wasm",
        &plugin.display().to_string(),
    )
}

#[test]
fn the_conformance_fixture_over_stdio_through_both_official_sdks() {
    let (_dir, config) = crate::mcp_server::temp_config(&fixture_config());
    for sdk in [Sdk::TypeScript, Sdk::Python] {
        let out = sdk_client_in(
            sdk,
            std::path::Path::new("."),
            &stdio_mode(&["--stdio", "--config", &config]),
            steps(),
        );
        check(sdk, &out);
    }
}

fn check(sdk: Sdk, out: &Value) {
    let s = &out["steps"];
    let step = |i: usize| &s[i];
    let content = |i: usize| step(i)["content"].as_array().cloned().unwrap_or_default();
    let caps = &out["capabilities"];
    for cap in ["tools", "prompts", "resources", "logging", "completions"] {
        assert!(caps[cap].is_object(), "{sdk:?}: no {cap} capability: {caps}");
    }
    assert_eq!(caps["resources"]["subscribe"], true, "{sdk:?}");

    // tools-list: each tool has a name, a description and a schema; the raw
    // 2020-12 schema is listed as written.
    let tools = step(3)["tools"].as_array().unwrap();
    let listed: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in [
        "test_simple_text",
        "test_image_content",
        "test_audio_content",
        "test_embedded_resource",
        "test_multiple_content_types",
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_error_handling",
        "test_reconnection",
        "test_sampling",
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
        "json_schema_2020_12_tool",
    ] {
        assert!(listed.contains(&name), "{sdk:?}: no {name} in {listed:?}");
    }
    for t in tools {
        assert!(
            t["description"].is_string() && t["input_schema"].is_object(),
            "{sdk:?}: {t}"
        );
    }
    let raw = &tools
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .unwrap()["input_schema"];
    assert_eq!(
        raw["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "{sdk:?}: {raw}"
    );
    assert_eq!(raw["$defs"]["address"]["type"], "object", "{sdk:?}: {raw}");
    assert_eq!(
        raw["properties"]["address"]["$ref"], "#/$defs/address",
        "{sdk:?}: {raw}"
    );
    assert_eq!(raw["additionalProperties"], false, "{sdk:?}: {raw}");
    // 2020-12's composition, conditional and anchor keywords pass through.
    assert_eq!(raw["$defs"]["address"]["$anchor"], "addressDef", "{sdk:?}: {raw}");
    assert!(raw["allOf"][0]["anyOf"].is_array(), "{sdk:?}: {raw}");
    assert_eq!(raw["then"], json!({"required": ["phone"]}), "{sdk:?}: {raw}");
    assert_eq!(raw["else"], json!({"required": ["email"]}), "{sdk:?}: {raw}");

    // Content of every kind, as the reference sends it.
    assert_eq!(
        content(4),
        [json!({"type": "text", "text": "This is a simple text response for testing."})],
        "{sdk:?}"
    );
    assert_eq!(
        content(5),
        [json!({"type": "image", "data": PNG, "mimeType": "image/png"})],
        "{sdk:?}"
    );
    assert_eq!(
        content(6),
        [json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"})],
        "{sdk:?}"
    );
    assert_eq!(
        content(7),
        [
            json!({"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}})
        ],
        "{sdk:?}"
    );
    let mixed = content(8);
    let kinds: Vec<&str> = mixed.iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image", "resource"], "{sdk:?}");
    let data: Value = serde_json::from_str(mixed[2]["resource"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(data, json!({"test": "data", "value": 123}), "{sdk:?}");
    for i in 4..=8 {
        assert_eq!(step(i)["is_error"], false, "{sdk:?}: step {i}");
    }

    // Logging: three records at info, in order, before the result.
    let logs: Vec<&Value> = out["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["level"] == "info")
        .collect();
    let data: Vec<&Value> = logs.iter().map(|l| &l["data"]).collect();
    assert_eq!(
        data,
        [
            &json!("Tool execution started"),
            &json!("Tool processing data"),
            &json!("Tool execution completed")
        ],
        "{sdk:?}: {}",
        out["logs"]
    );
    assert_eq!(
        step(9)["text"],
        "Tool with logging executed successfully",
        "{sdk:?}"
    );

    // Progress: three reports, 0, 50 and 100 of 100, in order.
    let progress: Vec<(f64, f64)> = step(10)["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["progress"].as_f64().unwrap(), p["total"].as_f64().unwrap()))
        .collect();
    assert_eq!(
        progress,
        [(0.0, 100.0), (50.0, 100.0), (100.0, 100.0)],
        "{sdk:?}: {}",
        step(10)
    );

    // A failing tool: an isError result saying why.
    assert_eq!(step(11)["is_error"], true, "{sdk:?}");
    assert!(
        step(11)["text"]
            .as_str()
            .unwrap()
            .contains("This tool intentionally returns an error for testing"),
        "{sdk:?}: {}",
        step(11)
    );

    // Sampling: the client's model was asked the prompt, and its answer came back.
    assert_eq!(step(12)["is_error"], false, "{sdk:?}: {}", step(12));
    assert_eq!(
        step(12)["text"],
        "LLM response: This is a test response from the client",
        "{sdk:?}"
    );
    let sampled = out["samplings"].as_array().unwrap();
    assert_eq!(sampled.len(), 1, "{sdk:?}");
    assert_eq!(sampled[0]["maxTokens"], 100, "{sdk:?}");
    assert_eq!(
        sampled[0]["messages"][0]["content"]["text"], "Test prompt for sampling",
        "{sdk:?}"
    );

    // Elicitation: three questions, their forms as the tools wrote them.
    for i in [13, 14, 15] {
        assert_eq!(step(i)["is_error"], false, "{sdk:?}: {}", step(i));
    }
    assert_eq!(
        step(13)["text"],
        r#"User response: action=accept, content={"response":"yes"}"#,
        "{sdk:?}"
    );
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked.len(), 3, "{sdk:?}");
    assert_eq!(asked[0]["message"], "Please provide your response", "{sdk:?}");
    assert_eq!(asked[0]["schema"]["required"], json!(["response"]), "{sdk:?}");
    let defaults = &asked[1]["schema"]["properties"];
    assert_eq!(defaults["name"]["default"], "John Doe", "{sdk:?}");
    assert_eq!(defaults["age"]["default"], 30, "{sdk:?}");
    assert_eq!(defaults["score"]["default"], 95.5, "{sdk:?}");
    assert_eq!(defaults["status"]["default"], "active", "{sdk:?}");
    assert_eq!(defaults["verified"]["default"], true, "{sdk:?}");
    let enums = &asked[2]["schema"]["properties"];
    assert_eq!(
        enums["titledSingle"]["oneOf"][1]["title"], "Second Option",
        "{sdk:?}"
    );
    assert_eq!(enums["legacyEnum"]["enumNames"][2], "Option Three", "{sdk:?}");
    assert_eq!(enums["untitledMulti"]["items"]["enum"][0], "option1", "{sdk:?}");
    assert_eq!(
        enums["titledMulti"]["items"]["anyOf"][2]["const"], "value3",
        "{sdk:?}"
    );

    assert_eq!(
        step(16)["text"],
        r#"JSON Schema 2020-12 tool called with: {"address":{"city":"London"},"email":"ada@example.com","name":"Ada"}"#,
        "{sdk:?}"
    );
    assert_eq!(step(17)["is_error"], false, "{sdk:?}");

    // Prompts: listed with their arguments; rendered as the reference does.
    let mut prompts: Vec<&str> = step(18)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    prompts.sort_unstable();
    assert_eq!(
        prompts,
        [
            "test_input_required_result_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_simple_prompt"
        ],
        "{sdk:?}"
    );
    let with_args = step(18)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "test_prompt_with_arguments")
        .unwrap();
    let args: Vec<(&str, bool)> = with_args["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["required"] == true))
        .collect();
    assert_eq!(args, [("arg1", true), ("arg2", true)], "{sdk:?}: {with_args}");
    let message = |i: usize, m: usize| &step(i)["messages"][m];
    assert_eq!(
        message(19, 0),
        &json!({"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}),
        "{sdk:?}"
    );
    assert_eq!(
        message(20, 0)["content"]["text"],
        "Prompt with arguments: arg1='testValue1', arg2='testValue2'",
        "{sdk:?}"
    );
    assert_eq!(
        message(21, 0)["content"],
        json!({"type": "resource", "resource": {"uri": "test://example-resource", "mimeType": "text/plain",
            "text": "Embedded resource content for testing."}}),
        "{sdk:?}"
    );
    assert_eq!(
        message(22, 0)["content"],
        json!({"type": "image", "data": PNG, "mimeType": "image/png"}),
        "{sdk:?}"
    );

    // Resources: listed; read as text, as bytes, and through the template.
    let mut uris: Vec<&str> = step(23)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    uris.sort_unstable();
    assert_eq!(
        uris,
        [
            "test://static-binary",
            "test://static-text",
            "test://watched-resource"
        ],
        "{sdk:?}"
    );
    assert_eq!(
        step(23)["templates"][0]["uriTemplate"],
        "test://template/{id}/data",
        "{sdk:?}"
    );
    assert_eq!(
        step(24)["contents"],
        json!([{"uri": "test://static-text", "mimeType": "text/plain",
            "text": "This is the content of the static text resource."}]),
        "{sdk:?}"
    );
    assert_eq!(
        step(25)["contents"],
        json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}]),
        "{sdk:?}"
    );
    let templated = &step(26)["contents"][0];
    assert_eq!(templated["uri"], "test://template/123/data", "{sdk:?}");
    let data: Value = serde_json::from_str(templated["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        data,
        json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"}),
        "{sdk:?}"
    );

    // Completion (no suggestions, as the reference), subscribe, unsubscribe.
    assert_eq!(
        step(27)["completion"]["values"],
        json!([]),
        "{sdk:?}: {}",
        step(27)
    );
    assert_eq!(step(28), &json!({}), "{sdk:?}");
    assert_eq!(step(29), &json!({}), "{sdk:?}");
}

/// `toolhost tools --catalog` lists the fixture's prompts, resources and
/// template, each saying where it comes from: the component, by its hash.
#[test]
fn the_catalog_listing_says_where_each_item_comes_from() {
    let (_dir, config) = crate::mcp_server::temp_config(&fixture_config());
    let out = std::process::Command::new(support::toolhost_bin())
        .args(["tools", "--catalog", "--config", &config, "--cache-dir"])
        .arg(support::cache_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let catalog: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hash = toolhost::ComponentHash::of(&support::plugin_bytes("mcp-conformance")).to_string();
    let items: Vec<&Value> = ["prompts", "resources", "templates"]
        .iter()
        .flat_map(|kind| catalog[kind].as_array().unwrap())
        .collect();
    assert_eq!(items.len(), 5 + 3 + 1, "{catalog}");
    for item in items {
        assert_eq!(item["source"], "wasm", "{item}");
        assert_eq!(item["componentHash"], hash, "{item}");
        assert_eq!(item["audience"], "trusted", "{item}");
        assert_eq!(item["toolset"], "conformance", "{item}");
    }
    assert_eq!(
        catalog["templates"][0]["uriTemplate"],
        "test://template/{id}/data"
    );
}
