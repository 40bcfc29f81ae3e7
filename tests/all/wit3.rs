//! `toolhost:plugin@0.3.0` through the Rust SDK (`plugins/showcase`, and
//! `plugins/nosy`, which asks without declaring): results as MCP content
//! (images, audio, embedded resources, annotations) beside structured JSON
//! checked against the output schema; logging at MCP's levels; elicitation
//! and sampling through a client, refused with typed codes when not granted,
//! not declared, headless or to a client without the capability, and not
//! counted against the call's deadline; prompts, resources, templates and
//! completions; all of it in process and over MCP with the Python SDK's
//! client.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use toolhost::internal::capabilities::{Grants, SamplingGrant};
use toolhost::internal::client::{
    Answer, AskKind, ClientHandle, ClientRequests, ElicitAction, ElicitResponse, Question, Request, Root,
    Round, SampleResponse,
};
use toolhost::internal::content::{Content, ContentBlock, ResourceContents, Role};
use toolhost::internal::dispatch::{CompletionRef, DispatchContext, Dispatcher, Session};
use toolhost::internal::logging::{LogLevel, LogRecord, LogSink};
use toolhost::internal::registry::{BoxFuture, ComponentRegistration, RegisterComponent, Registry};
use toolhost::{ErrorCode, LimitsOverride, LoadOptions, LoadedComponent};

use crate::mcp_server::{python_client, stdio_mode, temp_config};
use crate::{engine, support};

/// A client that answers every question with `answer` and every sampling
/// request with `"four"`, after `delay`, recording what it was asked.
struct TestClient {
    elicit: bool,
    sample: bool,
    roots: bool,
    answer: ElicitResponse,
    delay: Duration,
    asked: Mutex<Vec<Value>>,
}

impl TestClient {
    fn new(answer: ElicitResponse) -> Arc<TestClient> {
        Arc::new(TestClient {
            elicit: true,
            sample: true,
            roots: true,
            answer,
            delay: Duration::ZERO,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn accepting(decision: &str) -> Arc<TestClient> {
        let mut content = Map::new();
        content.insert("decision".into(), json!(decision));
        TestClient::new(ElicitResponse {
            action: ElicitAction::Accept,
            content: Some(content),
        })
    }

    fn asked(&self) -> Vec<Value> {
        self.asked.lock().unwrap().clone()
    }
}

impl ClientRequests for TestClient {
    fn can_answer(&self, kind: AskKind) -> bool {
        match kind {
            AskKind::Elicitation => self.elicit,
            AskKind::Sampling => self.sample,
            _ => self.roots,
        }
    }

    fn ask(&self, questions: Vec<Question>) -> BoxFuture<'_, Round> {
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            let mut answers = Vec::new();
            for question in questions {
                let kind = question.request.kind();
                if !self.can_answer(kind) {
                    answers.push(Err(toolhost::internal::client::not_declared(kind)));
                    continue;
                }
                let (asked, answer) = match question.request {
                    Request::Elicit(r) => (
                        serde_json::to_value(&r).unwrap(),
                        Answer::Elicit(self.answer.clone()),
                    ),
                    Request::Sample(r) => (
                        serde_json::to_value(&r).unwrap(),
                        Answer::Sample(SampleResponse {
                            role: Role::Assistant,
                            content: ContentBlock::text("four"),
                            model: "test-model".into(),
                            stop_reason: Some("endTurn".into()),
                        }),
                    ),
                    _ => (
                        json!({"roots": {}}),
                        Answer::Roots(vec![Root {
                            uri: "file:///work".into(),
                            name: Some("work".into()),
                        }]),
                    ),
                };
                self.asked.lock().unwrap().push(asked);
                answers.push(Ok(answer));
            }
            Ok(answers)
        })
    }
}

/// The grants `showcase` asks for: elicitation, and sampling with a budget
/// of two requests and 100 tokens a call.
fn showcase_grants() -> Grants {
    Grants {
        elicitation: true,
        sampling: Some(SamplingGrant {
            requests: 2,
            max_tokens: 100,
        }),
        ..Default::default()
    }
}

async fn load_with(name: &str, grants: Grants, limits: LimitsOverride) -> Arc<LoadedComponent> {
    engine()
        .load_file(
            &support::plugin_path(name),
            LoadOptions {
                grants,
                limits,
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("loading {name}: {e}"))
}

fn dispatcher(components: &[&Arc<LoadedComponent>]) -> Dispatcher {
    let mut registry = Registry::new();
    for c in components {
        registry
            .register_component(c, &ComponentRegistration::default())
            .unwrap();
    }
    Dispatcher::builder(registry).build().unwrap()
}

/// A trusted session's context whose client is `client`.
fn with_client(client: Option<Arc<TestClient>>) -> DispatchContext {
    DispatchContext {
        client: client.map(|c| ClientHandle(c as Arc<dyn ClientRequests>)),
        ..DispatchContext::new(Session::trusted("wit3"))
    }
}

#[tokio::test]
async fn a_result_is_content_blocks_beside_structured_json() {
    let showcase = load_with("showcase", Grants::default(), LimitsOverride::default()).await;
    assert_eq!(showcase.world().version(), "0.3.1");
    let media = showcase.tools().iter().find(|t| t.name == "media").unwrap();
    assert_eq!(media.title.as_deref(), Some("Media"));
    let d = dispatcher(&[&showcase]);
    let ctx = with_client(None);
    let out = d.dispatch("media", json!({}), &ctx).await;
    assert_eq!(out.error_code, None, "{out:?}");
    let wire = serde_json::to_value(&out.blocks).unwrap();
    assert_eq!(wire.as_array().unwrap().len(), 6, "{wire}");
    assert_eq!(
        wire[0],
        json!({"type": "text", "text": "a red dot, a silence, and two resources"})
    );
    assert_eq!(wire[1]["type"], "image");
    assert_eq!(wire[1]["mimeType"], "image/png");
    assert!(
        wire[1]["data"].as_str().unwrap().starts_with("iVBORw0KGgo"),
        "{wire}"
    );
    assert_eq!(
        wire[1]["annotations"],
        json!({"audience": ["user"], "priority": 0.8})
    );
    assert_eq!(wire[2]["type"], "audio");
    assert_eq!(wire[2]["mimeType"], "audio/wav");
    assert!(wire[2]["data"].as_str().unwrap().starts_with("UklGR"), "{wire}");
    assert_eq!(
        wire[3],
        json!({"type": "resource", "resource": {"uri": "showcase://readme", "mimeType": "text/markdown", "text": "# Showcase\n"}})
    );
    assert_eq!(wire[4]["resource"]["uri"], "showcase://logo");
    assert!(
        wire[4]["resource"]["blob"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    assert_eq!(wire[4]["annotations"]["lastModified"], "2026-01-31T12:00:00Z");
    assert_eq!(
        wire[5],
        json!({"type": "resource_link", "uri": "showcase://notes/1", "name": "note 1", "description": "the first note", "mimeType": "text/plain"})
    );
    // A caller without blocks reads the model's text and the blocks' JSON.
    assert_eq!(out.model_text(), "a red dot, a silence, and two resources");
    assert_eq!(out.json()[1]["type"], "image");

    // A structured result states its schema, is checked against it, and
    // keeps the text-only path: JSON for callers, text for the model.
    let count = showcase.tools().iter().find(|t| t.name == "count_words").unwrap();
    assert_eq!(
        count.output_schema.as_ref().unwrap()["required"],
        json!(["words", "longest"])
    );
    let counted = d.dispatch("count_words", json!({"text": "a bb ccc"}), &ctx).await;
    assert_eq!(counted.json(), json!({"words": 3, "longest": "ccc"}));
    assert_eq!(
        (counted.text.as_deref(), counted.blocks.len()),
        (Some("3 words"), 0)
    );
    let misfit = d.dispatch("count_words", json!({"text": ""}), &ctx).await;
    assert_eq!(misfit.error_code, Some(ErrorCode::ToolFailed), "{misfit:?}");
    assert!(
        misfit.content.contains("does not fit its output schema"),
        "{}",
        misfit.content
    );
}

/// A 0.3.0 component written against the WIT directly can break the
/// structured result's contract; the host refuses each such result as the
/// tool's failure, saying what is wrong, and never passes it on.
#[tokio::test]
async fn a_structured_result_that_breaks_the_contract_is_the_tools_failure() {
    let bad = load_with("bad-structured", Grants::default(), LimitsOverride::default()).await;
    for (tool, message) in [
        ("number", toolhost::internal::component::NOT_AN_OBJECT),
        ("garbled", toolhost::internal::component::NOT_JSON),
        ("unstructured", toolhost::internal::component::NO_STRUCTURED),
    ] {
        let err = crate::call_err(&bad, tool, json!({})).await;
        assert_eq!(err.code(), ErrorCode::ToolFailed, "{tool}: {err}");
        assert!(err.message().starts_with(message), "{tool}: {err}");
    }
}

#[tokio::test]
async fn log_records_reach_the_sink_from_its_level_up() {
    let showcase = load_with("showcase", Grants::default(), LimitsOverride::default()).await;
    let d = dispatcher(&[&showcase]);
    let seen: Arc<Mutex<Vec<LogRecord>>> = Arc::default();
    let sink = LogSink::new(LogLevel::Warning, {
        let seen = Arc::clone(&seen);
        move |r| seen.lock().unwrap().push(r)
    });
    let ctx = DispatchContext {
        log: Some(sink),
        ..with_client(None)
    };
    let out = d.dispatch("log_levels", json!({}), &ctx).await;
    assert_eq!(out.model_text(), "logged");
    let records = seen.lock().unwrap().clone();
    let levels: Vec<LogLevel> = records.iter().map(|r| r.level).collect();
    assert_eq!(
        levels,
        [
            LogLevel::Warning,
            LogLevel::Error,
            LogLevel::Critical,
            LogLevel::Alert,
            LogLevel::Emergency
        ]
    );
    assert_eq!(records[0].message, "a warning record");
    assert_eq!(records[0].logger.as_deref(), Some("log_levels"));
    assert_eq!(records[0].fields, [("round".to_string(), "0".to_string())]);

    // Capped per call: 20 rounds are 160 records, past the call's cap.
    seen.lock().unwrap().clear();
    let capped = LimitsOverride {
        log_records: Some(12),
        ..Default::default()
    };
    let ctx = DispatchContext {
        limits: capped,
        ..ctx
    };
    let out = d.dispatch("log_levels", json!({"rounds": 20}), &ctx).await;
    assert_eq!(out.error_code, None, "{out:?}");
    // The first 12 records are written (8 of round 0, 4 of round 1); the
    // sink keeps those from warning up.
    assert_eq!(seen.lock().unwrap().len(), 5 + 1, "{:?}", seen.lock().unwrap());
}

#[tokio::test]
async fn a_plugin_asks_the_user_and_the_model_through_the_client() {
    let showcase = load_with("showcase", showcase_grants(), LimitsOverride::default()).await;
    assert!(showcase.warnings().is_empty(), "{:?}", showcase.warnings());
    let d = dispatcher(&[&showcase]);
    let client = TestClient::accepting("yes");
    let ctx = with_client(Some(Arc::clone(&client)));
    let out = d
        .dispatch("ask_user", json!({"question": "Proceed?"}), &ctx)
        .await;
    assert_eq!(
        out.json(),
        json!({"action": "accept", "decision": "yes"}),
        "{out:?}"
    );
    let asked = client.asked();
    assert_eq!(asked[0]["message"], "Proceed?");
    assert_eq!(
        asked[0]["requestedSchema"]["properties"]["decision"]["type"],
        "string"
    );
    assert_eq!(asked[0]["requestedSchema"]["required"], json!(["decision"]));

    let declining = TestClient::new(ElicitResponse {
        action: ElicitAction::Decline,
        content: None,
    });
    let out = d
        .dispatch(
            "ask_user",
            json!({"question": "Proceed?"}),
            &with_client(Some(declining)),
        )
        .await;
    assert_eq!(out.json(), json!({"action": "decline"}));

    // Sampling, within the grant's budget: two requests of 50 tokens.
    let out = d
        .dispatch("ask_model", json!({"prompt": "2+2?", "times": 2}), &ctx)
        .await;
    assert_eq!(out.error_code, None, "{out:?}");
    let answers = &out.json()["answers"];
    assert_eq!(
        answers[1],
        json!({"text": "four", "model": "test-model", "stop_reason": "endTurn"})
    );
    let request = &client.asked()[1];
    assert_eq!(request["maxTokens"], 50);
    assert_eq!(request["systemPrompt"], "Answer briefly.");
    assert_eq!(request["temperature"], 0.5);
    assert_eq!(
        request["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "2+2?"}})
    );
    assert_eq!(request["messages"][1]["content"]["type"], "image");
    assert!(
        request["messages"][1]["content"]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBOR")
    );

    // Past the budget: a third request, or more tokens than are left.
    let third = d
        .dispatch("ask_model", json!({"prompt": "2+2?", "times": 3}), &ctx)
        .await;
    assert_eq!(third.error_code, Some(ErrorCode::ToolFailed), "{third:?}");
    assert!(
        third
            .content
            .contains("blocked: this call has made 2 sampling request"),
        "{}",
        third.content
    );
    let greedy = d
        .dispatch("ask_model", json!({"prompt": "2+2?", "max_tokens": 101}), &ctx)
        .await;
    assert!(
        greedy
            .content
            .contains("blocked: this request asks for up to 101 tokens"),
        "{}",
        greedy.content
    );
    // The budget is per call: a new call has all of it again.
    let again = d
        .dispatch("ask_model", json!({"prompt": "2+2?", "times": 2}), &ctx)
        .await;
    assert_eq!(again.error_code, None, "{again:?}");
}

/// The host error a tool failed with: the SDK makes a host error the
/// tool's `failed` error `CODE: MESSAGE`, which dispatch reports as
/// `Tool execution failed: tool_failed: CODE: MESSAGE`.
fn host_error_of(out: &toolhost::ToolResult) -> String {
    assert_eq!(out.error_code, Some(ErrorCode::ToolFailed), "{out:?}");
    let error = out.json()["error"].as_str().unwrap().to_string();
    error
        .strip_prefix("Tool execution failed: tool_failed: ")
        .unwrap_or_else(|| panic!("not a tool's failure: {error}"))
        .to_string()
}

#[tokio::test]
async fn asking_is_refused_with_a_typed_code_without_grant_declaration_or_client() {
    let client = TestClient::accepting("yes");
    // Declared, not granted.
    let ungranted = load_with("showcase", Grants::default(), LimitsOverride::default()).await;
    assert_eq!(
        ungranted.capabilities().not_granted,
        ["client elicitation", "client sampling"]
    );
    let d = dispatcher(&[&ungranted]);
    let ctx = with_client(Some(Arc::clone(&client)));
    let asked = d.dispatch("ask_user", json!({"question": "?"}), &ctx).await;
    let message = host_error_of(&asked);
    assert!(message.starts_with("capability_not_granted: "), "{message}");
    assert!(message.contains("elicitation = true"), "{message}");
    let sampled = d.dispatch("ask_model", json!({"prompt": "?"}), &ctx).await;
    assert!(host_error_of(&sampled).starts_with("capability_not_granted: "));
    assert!(client.asked().is_empty());

    // Granted, not declared: not given, and the load says so.
    let nosy = load_with("nosy", showcase_grants(), LimitsOverride::default()).await;
    assert_eq!(
        nosy.capabilities().not_declared,
        ["client elicitation", "client sampling"]
    );
    assert!(
        nosy.warnings()[0].contains("client elicitation"),
        "{:?}",
        nosy.warnings()
    );
    let d = dispatcher(&[&nosy]);
    for tool in ["pry", "gossip"] {
        let out = d.dispatch(tool, json!({}), &ctx).await;
        assert!(
            host_error_of(&out).starts_with("capability_not_granted: "),
            "{tool}"
        );
    }
    assert!(client.asked().is_empty());

    // Granted and declared, but no client to ask (headless), or one that
    // cannot answer.
    let showcase = load_with("showcase", showcase_grants(), LimitsOverride::default()).await;
    let d = dispatcher(&[&showcase]);
    let headless = d
        .dispatch("ask_user", json!({"question": "?"}), &with_client(None))
        .await;
    let message = host_error_of(&headless);
    assert!(
        message.starts_with("unavailable: this call has no client"),
        "{message}"
    );
    let mute = Arc::new(TestClient {
        elicit: false,
        sample: false,
        ..Arc::into_inner(TestClient::accepting("yes")).unwrap()
    });
    let ctx = with_client(Some(Arc::clone(&mute)));
    for (tool, args) in [
        ("ask_user", json!({"question": "?"})),
        ("ask_model", json!({"prompt": "?"})),
    ] {
        let out = d.dispatch(tool, args, &ctx).await;
        let message = host_error_of(&out);
        assert!(
            message.starts_with("unavailable: the client of this call did not declare"),
            "{message}"
        );
    }
    assert!(mute.asked().is_empty());

    // A public-audience session: a plugin's tools are trusted-only, so a
    // public turn never reaches one (and dispatch gives public turns no
    // client at all).
    let public = DispatchContext {
        client: Some(ClientHandle(client as Arc<dyn ClientRequests>)),
        ..DispatchContext::new(Session::public("wit3-public"))
    };
    let out = d.dispatch("ask_user", json!({"question": "?"}), &public).await;
    assert_eq!(out.error_code, Some(ErrorCode::AudienceDenied), "{out:?}");
}

#[tokio::test]
async fn waiting_for_the_user_does_not_count_against_the_deadline() {
    let limits = LimitsOverride {
        timeout_ms: Some(300),
        ..Default::default()
    };
    let showcase = load_with("showcase", showcase_grants(), limits).await;
    let d = dispatcher(&[&showcase]);
    let slow = Arc::new(TestClient {
        delay: Duration::from_millis(900),
        ..Arc::into_inner(TestClient::accepting("later")).unwrap()
    });
    let ctx = with_client(Some(slow));
    let started = Instant::now();
    let out = d
        .dispatch("ask_user", json!({"question": "Take your time"}), &ctx)
        .await;
    assert_eq!(
        out.json(),
        json!({"action": "accept", "decision": "later"}),
        "{out:?}"
    );
    let sampled = d.dispatch("ask_model", json!({"prompt": "slowly"}), &ctx).await;
    assert_eq!(sampled.json()["answers"][0]["text"], "four", "{sampled:?}");
    assert!(started.elapsed() >= Duration::from_millis(1800));
    // The deadline still holds for the plugin's own work: a 300 ms call
    // that spins is stopped (the `spin` plugin, with the same limit).
    let spin = load_with("spin", Grants::default(), limits).await;
    let err = crate::call_err(&spin, "busy", json!({"ms": 2000})).await;
    assert_eq!(err.code(), ErrorCode::Timeout, "{err}");
}

#[tokio::test]
async fn prompts_resources_and_completions_through_dispatch() {
    let showcase = load_with("showcase", Grants::default(), LimitsOverride::default()).await;
    let catalog = showcase.catalog();
    assert_eq!(
        catalog
            .prompts
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["greeting", "picture"]
    );
    let greeting = &catalog.prompts[0];
    assert_eq!(greeting.title.as_deref(), Some("A greeting"));
    assert_eq!(
        greeting.description.as_deref(),
        Some("Greets someone, in a style.")
    );
    assert_eq!(
        greeting
            .arguments
            .iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect::<Vec<_>>(),
        [("name", true), ("style", false)]
    );
    let d = dispatcher(&[&showcase]);
    let ctx = with_client(None);
    let session = Session::trusted("wit3-catalog");
    assert_eq!(d.prompt_specs(&session).unwrap().len(), 2);
    assert_eq!(d.resource_specs(&session).unwrap().len(), 2);

    let args = BTreeMap::from([
        ("name".to_string(), "Ada".to_string()),
        ("style".into(), "formal".into()),
    ]);
    let rendered = d.get_prompt("greeting", args, &ctx).await.unwrap();
    assert_eq!(rendered.description.as_deref(), Some("a greeting for Ada"));
    assert_eq!(rendered.messages[0].role, Role::User);
    assert_eq!(
        rendered.messages[0].content.as_text(),
        Some("Please greet Ada formally.")
    );
    assert_eq!(rendered.messages[1].role, Role::Assistant);
    let missing = d.get_prompt("greeting", BTreeMap::new(), &ctx).await.unwrap_err();
    assert_eq!(missing.code(), ErrorCode::InvalidArguments, "{missing}");
    let bad = BTreeMap::from([
        ("name".to_string(), "Ada".to_string()),
        ("style".into(), "loud".into()),
    ]);
    let refused = d.get_prompt("greeting", bad, &ctx).await.unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidArguments);
    assert!(refused.message().contains("unknown style `loud`"), "{refused}");
    let picture = d.get_prompt("picture", BTreeMap::new(), &ctx).await.unwrap();
    assert!(
        matches!(&picture.messages[0].content.content, Content::Image { mime_type, .. } if mime_type == "image/png")
    );

    let readme = d.read_resource("showcase://readme", &ctx).await.unwrap();
    assert!(
        matches!(&readme[0], ResourceContents::Text { text, mime_type: Some(m), .. } if text == "# Showcase\n" && m == "text/markdown")
    );
    let logo = d.read_resource("showcase://logo", &ctx).await.unwrap();
    assert!(matches!(&logo[0], ResourceContents::Blob { blob, .. } if blob.starts_with("iVBORw0KGgo")));
    let note = d.read_resource("showcase://notes/10", &ctx).await.unwrap();
    assert!(
        matches!(&note[0], ResourceContents::Text { uri, text, .. } if uri == "showcase://notes/10" && text == "note 10")
    );
    let absent = d.read_resource("showcase://notes/7", &ctx).await.unwrap_err();
    assert_eq!(absent.code(), ErrorCode::NotFound);
    assert!(absent.message().contains("there is no note 7"), "{absent}");

    let styles = d
        .complete(
            &CompletionRef::Prompt("greeting".into()),
            "style",
            "f",
            &BTreeMap::new(),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(
        (styles.values, styles.total),
        (vec!["formal".to_string()], Some(1))
    );
    let ids = d
        .complete(
            &CompletionRef::ResourceTemplate("showcase://notes/{id}".into()),
            "id",
            "1",
            &BTreeMap::new(),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(ids.values, ["1", "10"]);
}

/// Over MCP, to the Python SDK's client: the media result intact, log
/// records filtered by `logging/setLevel`, a question and a sampling
/// request answered by the client, and the plugin's prompts, resources,
/// template and completions.
#[test]
fn every_feature_over_mcp() {
    let (_dir, config) = temp_config(&format!(
        "[[plugins]]\npath = {:?}\n[plugins.grants]\nelicitation = true\nsampling = {{ requests = 2, max_tokens = 100 }}\n",
        support::plugin_path("showcase"),
    ));
    let out = python_client(
        &stdio_mode(&["--stdio", "--config", &config]),
        json!([
            {"list": true},
            {"call": "media"},
            {"set_level": "error"},
            {"call": "log_levels"},
            {"elicit": "yes"},
            {"call": "ask_user", "args": {"question": "Proceed?"}},
            {"sample": "four"},
            {"call": "ask_model", "args": {"prompt": "2+2?"}},
            {"prompts": true},
            {"get_prompt": "greeting", "args": {"name": "Ada"}},
            {"resources": true},
            {"read": "showcase://logo"},
            {"read": "showcase://notes/2"},
            {"complete": {"ref": {"type": "ref/prompt", "name": "greeting"}, "argument": {"name": "style", "value": "c"}}},
            {"complete": {"ref": {"type": "ref/resource", "uri": "showcase://notes/{id}"}, "argument": {"name": "id", "value": "1"}}},
            {"subscribe": "showcase://readme"},
            {"read": "showcase://notes/404"},
            {"call": "count_words", "args": {"text": "a bb"}},
        ]),
    );
    let steps = out["steps"].as_array().unwrap();
    let media_tool = steps[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "media")
        .unwrap();
    assert_eq!(media_tool["annotations"]["readOnlyHint"], true, "{media_tool}");

    // The image, the sound and the embedded resources, as the plugin gave
    // them.
    let media = &steps[1];
    assert_eq!(media["is_error"], false, "{media}");
    let content = media["content"].as_array().unwrap();
    assert_eq!(content.len(), 6, "{media}");
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/png");
    assert_eq!(content[1]["annotations"]["audience"], json!(["user"]));
    assert_eq!(content[2]["type"], "audio");
    assert_eq!(content[2]["mimeType"], "audio/wav");
    assert_eq!(content[3]["resource"]["text"], "# Showcase\n");
    assert_eq!(content[4]["resource"]["mimeType"], "image/png");
    assert_eq!(content[5]["type"], "resource_link");
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(content[1]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(png.len(), 69);
    assert_eq!(media["structured"], Value::Null);

    // Log records at error and above only, each at its level.
    let logs = out["logs"].as_array().unwrap();
    let levels: Vec<&str> = logs.iter().map(|l| l["level"].as_str().unwrap()).collect();
    assert_eq!(levels, ["error", "critical", "alert", "emergency"], "{logs:?}");
    assert_eq!(logs[0]["logger"], "log_levels");

    assert_eq!(
        steps[5]["structured"],
        json!({"action": "accept", "decision": "yes"}),
        "{}",
        steps[5]
    );
    let asked = out["elicitations"].as_array().unwrap();
    assert_eq!(asked[0]["message"], "Proceed?");
    assert_eq!(asked[0]["schema"]["properties"]["decision"]["type"], "string");
    assert_eq!(
        steps[7]["structured"]["answers"][0]["text"], "four",
        "{}",
        steps[7]
    );
    let sampled = &out["samplings"][0];
    assert_eq!(sampled["maxTokens"], 50, "{sampled}");
    assert_eq!(sampled["messages"][1]["content"]["type"], "image");

    let prompts = steps[8]["prompts"].as_array().unwrap();
    assert_eq!(prompts[0]["name"], "greeting");
    assert_eq!(
        prompts[0]["arguments"][0],
        json!({"name": "name", "description": "Who to greet.", "required": true})
    );
    assert_eq!(steps[9]["messages"][0]["content"]["text"], "Say hi to Ada.");
    assert_eq!(steps[9]["description"], "a greeting for Ada");
    let resources = &steps[10];
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["showcase://logo", "showcase://readme"]);
    assert_eq!(resources["templates"][0]["uriTemplate"], "showcase://notes/{id}");
    assert_eq!(steps[11]["contents"][0]["mimeType"], "image/png");
    assert!(
        steps[11]["contents"][0]["blob"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    assert_eq!(steps[12]["contents"][0]["text"], "note 2");
    assert_eq!(steps[13]["completion"]["values"], json!(["casual"]));
    assert_eq!(steps[14]["completion"]["values"], json!(["1", "10"]));
    assert_eq!(steps[15], json!({}));
    assert!(
        steps[16]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no note 404"),
        "{}",
        steps[16]
    );
    assert_eq!(steps[17]["structured"], json!({"words": 2, "longest": "bb"}));
    assert_eq!(steps[17]["text"], "2 words");
}
