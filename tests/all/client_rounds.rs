//! WIT 0.3.1's questions to the client: a plugin lists the client's roots
//! and asks several questions in one round (`client.list-roots`,
//! `client.ask`, `client.available`), through the official TypeScript and
//! Python SDK clients on the 2025 revision over stdio (server-initiated
//! `roots/list`, `elicitation/create`, `sampling/createMessage`), with the
//! conformance fixture's MRTR tools and prompt; a roots grant absent, or a
//! client without the capability, refuses that question alone, naming why;
//! and frozen 0.3.0 components (`tests/data/frozen/`) link to the 0.3.1
//! interfaces and are served as before, in process and over MCP.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use toolhost::internal::capabilities::{Grants, SamplingGrant};
use toolhost::internal::client::{
    Answer, AskKind, ClientHandle, ClientRequests, ElicitAction, ElicitResponse, Question, Request, Round,
    SampleResponse,
};
use toolhost::internal::content::{ContentBlock, Role};
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::registry::{BoxFuture, ComponentRegistration, RegisterComponent, Registry};
use toolhost::{ErrorCode, LoadOptions};

use crate::mcp_conformance::fixture_config;
use crate::mcp_server::{Sdk, python_client, sdk_client_in, stdio_mode, temp_config};
use crate::{engine, support};

/// What the client's user, model and roots answer: every form accepted with
/// all the fields the fixture's forms ask for.
fn answers() -> Vec<Value> {
    vec![
        json!({"elicit": {"name": "Alice", "color": "blue", "context": "tests", "ok": true, "value": "v"}}),
        json!({"sample": "Hello there!"}),
        json!({"roots": [{"uri": "file:///work/a", "name": "a"}, {"uri": "file:///work/b"}]}),
    ]
}

fn call(name: &str) -> Value {
    json!({"call": name, "args": {}})
}

fn steps(more: Vec<Value>) -> Value {
    Value::Array(answers().into_iter().chain(more).collect())
}

fn text(step: &Value) -> &str {
    step["text"].as_str().unwrap_or_default()
}

#[test]
fn a_plugin_lists_roots_and_asks_a_round_through_both_official_sdks() {
    let (_dir, config) = temp_config(&fixture_config());
    let steps = steps(vec![
        call("test_input_required_result_list_roots"),
        call("test_input_required_result_multiple_inputs"),
        call("test_input_required_result_capabilities"),
        call("test_input_required_result_multi_round"),
        call("test_input_required_result_elicitation"),
        call("test_input_required_result_sampling"),
        call("test_input_required_result_request_state"),
        call("test_missing_capability"),
        json!({"get_prompt": "test_input_required_result_prompt"}),
    ]);
    for sdk in [Sdk::TypeScript, Sdk::Python] {
        let out = sdk_client_in(
            sdk,
            std::path::Path::new("."),
            &stdio_mode(&["--stdio", "--config", &config]),
            steps.clone(),
        );
        let s = &out["steps"];
        let expected = [
            "Found 2 root(s)",
            "Name: Alice; Greeting: Hello there!; Roots: 2",
            "capabilities-ok: received elicit_input,sample_input",
            "Multi-round complete for Alice who likes blue",
            "Hello, Alice!",
            "Sampling result: Hello there!",
            "state-ok: requestState validated",
            "Success",
        ];
        for (i, want) in expected.iter().enumerate() {
            let step = &s[3 + i];
            assert_eq!(step["is_error"], false, "{sdk:?}: {step}");
            assert_eq!(text(step), *want, "{sdk:?}: {step}");
        }
        assert_eq!(
            s[11]["messages"][0]["content"]["text"], "Prompt with context: tests",
            "{sdk:?}: {}",
            s[11]
        );
        // Roots were listed twice (once alone, once in the round); the
        // round's question for the user and its sampling request reached
        // the client beside it, as asked.
        assert_eq!(out["roots_listed"], 2, "{sdk:?}");
        let asked: Vec<&str> = out["elicitations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["message"].as_str().unwrap())
            .collect();
        assert_eq!(
            asked,
            [
                "What is your name?",
                "Elicitation input",
                "Step 1: What is your name?",
                "Step 2: What is your favorite color?",
                "What is your name?",
                "Please confirm",
                "What context should the prompt use?",
            ],
            "{sdk:?}"
        );
        let sampled: Vec<&Value> = out["samplings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["messages"][0]["content"]["text"])
            .collect();
        assert_eq!(
            sampled,
            [
                "Generate a greeting",
                "Sample request",
                "What is the capital of France?",
                "Say OK."
            ],
            "{sdk:?}"
        );
    }
}

#[test]
fn a_question_not_granted_or_not_declared_is_refused_alone() {
    // The operator grants no roots: the roots question is refused, naming
    // the grant, and never asked; the round's other questions are asked.
    let ungranted = fixture_config().replace("roots = true\n", "");
    assert_ne!(ungranted, fixture_config());
    let (_dir, config) = temp_config(&ungranted);
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        steps(vec![
            call("test_input_required_result_list_roots"),
            call("test_input_required_result_multiple_inputs"),
        ]),
    );
    for i in [3, 4] {
        let step = &out["steps"][i];
        assert_eq!(step["is_error"], true, "{step}");
        assert!(
            text(step).contains("capability_not_granted")
                && text(step).contains("list the client's roots")
                && text(step).contains("roots = true"),
            "{step}"
        );
    }
    assert_eq!(out["roots_listed"], 0);
    assert_eq!(out["elicitations"].as_array().unwrap().len(), 1);
    assert_eq!(out["samplings"].as_array().unwrap().len(), 1);

    // Granted, but the client did not declare roots (nor elicitation): the
    // roots question is `unavailable`; `available` leaves out what it
    // cannot answer.
    let (_dir, config) = temp_config(&fixture_config());
    for sdk in [Sdk::TypeScript, Sdk::Python] {
        let out = sdk_client_in(
            sdk,
            std::path::Path::new("."),
            &stdio_mode(&["--stdio", "--config", &config]),
            json!([
                {"sample": "Hi"},
                call("test_input_required_result_list_roots"),
                call("test_input_required_result_capabilities"),
            ]),
        );
        let roots = &out["steps"][1];
        assert_eq!(roots["is_error"], true, "{sdk:?}: {roots}");
        assert!(
            text(roots).contains("did not declare the roots capability"),
            "{sdk:?}: {roots}"
        );
        assert_eq!(
            text(&out["steps"][2]),
            "capabilities-ok: received sample_input",
            "{sdk:?}"
        );
    }
}

/// Answers questions for the user with `{"decision": "yes"}`, sampling
/// requests with "four", and records the keys of what it was asked.
struct Answering {
    keys: Mutex<Vec<String>>,
}

impl ClientRequests for Answering {
    fn can_answer(&self, _: AskKind) -> bool {
        true
    }

    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        Box::pin(async move {
            let mut answers = Vec::new();
            for q in questions {
                self.keys.lock().unwrap().push(q.key.clone());
                answers.push(Ok(match q.request {
                    Request::Elicit(_) => {
                        let mut content = Map::new();
                        content.insert("decision".into(), json!("yes"));
                        Answer::Elicit(ElicitResponse {
                            action: ElicitAction::Accept,
                            content: Some(content),
                        })
                    }
                    Request::Sample(_) => Answer::Sample(SampleResponse {
                        role: Role::Assistant,
                        content: ContentBlock::text("four"),
                        model: "test-model".into(),
                        stop_reason: None,
                    }),
                    _ => Answer::Roots(Vec::new()),
                }));
            }
            Ok(answers)
        })
    }
}

const FROZEN_HELLO_3: &str = "hello-0.3.0.wasm";
const FROZEN_SHOWCASE_3: &str = "showcase-0.3.0.wasm";

#[tokio::test]
async fn frozen_0_3_0_components_link_to_the_0_3_1_interfaces() {
    let load = |file: &'static str, grants: Grants| async move {
        engine()
            .load_file(
                &support::frozen(file),
                LoadOptions {
                    grants,
                    ..Default::default()
                },
            )
            .await
            .unwrap_or_else(|e| panic!("loading frozen {file}: {e}"))
    };
    let hello = load(FROZEN_HELLO_3, Grants::default()).await;
    let showcase = load(
        FROZEN_SHOWCASE_3,
        Grants {
            elicitation: true,
            sampling: Some(SamplingGrant {
                requests: 2,
                max_tokens: 100,
            }),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(
        [hello.world().version(), showcase.world().version()],
        ["0.3.0", "0.3.0"]
    );
    // Its prompts and resources (the `server` world's exports) were found
    // under the 0.3.1 names.
    let mut registry = Registry::new();
    for c in [&hello, &showcase] {
        registry
            .register_component(c, &ComponentRegistration::default())
            .unwrap();
    }
    let d = Dispatcher::builder(registry).build().unwrap();
    let client = Arc::new(Answering {
        keys: Mutex::new(Vec::new()),
    });
    let ctx = DispatchContext {
        client: Some(ClientHandle(Arc::clone(&client) as Arc<dyn ClientRequests>)),
        ..DispatchContext::new(Session::trusted("frozen-0.3.0"))
    };
    let greeted = d.dispatch("greet", json!({"name": "Ada"}), &ctx).await;
    assert_eq!(greeted.error_code, None, "{greeted:?}");
    assert!(greeted.model_text().contains("Ada"), "{greeted:?}");
    let asked = d
        .dispatch("ask_user", json!({"question": "Proceed?"}), &ctx)
        .await;
    assert_eq!(
        asked.json(),
        json!({"action": "accept", "decision": "yes"}),
        "{asked:?}"
    );
    let sampled = d
        .dispatch("ask_model", json!({"prompt": "2+2?", "times": 2}), &ctx)
        .await;
    assert_eq!(sampled.error_code, None, "{sampled:?}");
    // 0.3.0's single questions are rounds of one, keyed by their count.
    assert_eq!(
        *client.keys.lock().unwrap(),
        ["elicitation-1", "sampling-1", "sampling-2"]
    );
    let over = d
        .dispatch("ask_model", json!({"prompt": "2+2?", "times": 3}), &ctx)
        .await;
    assert_eq!(over.error_code, Some(ErrorCode::ToolFailed), "{over:?}");
    assert!(over.content.contains("blocked"), "{}", over.content);
    let prompt = d
        .get_prompt("greeting", [("name".into(), "Ada".into())].into(), &ctx)
        .await
        .unwrap();
    assert!(!prompt.messages.is_empty());
    let readme = d.read_resource("showcase://readme", &ctx).await.unwrap();
    assert_eq!(readme.len(), 1);
}

#[test]
fn a_frozen_0_3_0_component_asks_an_official_client_over_mcp() {
    let showcase = support::frozen(FROZEN_SHOWCASE_3);
    let (_dir, config) = temp_config(&format!(
        "[[plugins]]\npath = {:?}\n[plugins.grants]\nelicitation = true\nsampling = {{ requests = 1, max_tokens = 100 }}\n",
        showcase.display().to_string()
    ));
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"elicit": "yes"},
            {"sample": "four"},
            {"call": "ask_user", "args": {"question": "Proceed?"}},
            {"call": "ask_model", "args": {"prompt": "2+2?"}},
        ]),
    );
    let asked = &out["steps"][2];
    assert_eq!(
        asked["structured"],
        json!({"action": "accept", "decision": "yes"}),
        "{asked}"
    );
    let sampled = &out["steps"][3];
    assert_eq!(sampled["is_error"], false, "{sampled}");
    assert_eq!(out["elicitations"][0]["message"], "Proceed?");
}
