//! Prompts and resources beside the tools: registration rules, what each
//! session sees, and serving them through the dispatcher.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolhost_core::content::{ContentBlock, ResourceContents, Role};
use toolhost_core::dispatch::{CompletionRef, DispatchContext, Dispatcher, Session};
use toolhost_core::registry::{
    BoxFuture, CallContext, Catalog, Completion, FnPrompt, Prompt, PromptArgument, PromptMessage,
    PromptResult, PromptSpec, Registry, ResourceSpec, ResourceTemplateSpec, Resources, ToolSource,
};
use toolhost_core::toolsets::ToolsetSelection;
use toolhost_core::{ComponentHash, ErrorCode};

fn greeting(name: &str) -> impl Prompt {
    FnPrompt::new(
        PromptSpec::new(name, "Greets someone.").argument(PromptArgument::required("who")),
        |args: BTreeMap<String, String>, _ctx| async move {
            let text = format!("Say hello to {}.", args["who"]);
            Ok(PromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(text),
            )]))
        },
    )
}

/// Reads `notes://N` as the text `note N`, and completes ids from 1 to 150.
struct Notes;

impl Resources for Notes {
    fn read(
        &self,
        uri: &str,
        _ctx: CallContext,
    ) -> BoxFuture<'_, toolhost_core::Result<Vec<ResourceContents>>> {
        let uri = uri.to_string();
        Box::pin(async move {
            if uri == "notes://slow" {
                tokio::time::sleep(Duration::from_secs(30)).await;
            }
            let id = uri.trim_start_matches("notes://").to_string();
            Ok(vec![ResourceContents::Text {
                uri,
                mime_type: Some("text/plain".into()),
                text: format!("note {id}"),
                meta: None,
            }])
        })
    }

    fn complete(
        &self,
        _template: &str,
        _argument: &str,
        value: &str,
        _context: &BTreeMap<String, String>,
        _ctx: CallContext,
    ) -> BoxFuture<'_, toolhost_core::Result<Completion>> {
        let values = (1..=150)
            .map(|i| i.to_string())
            .filter(|v| v.starts_with(value))
            .collect();
        // More than MCP's 100: the dispatcher must hold it to the limit.
        Box::pin(async move {
            Ok(Completion {
                values,
                total: None,
                has_more: false,
            })
        })
    }
}

fn notes() -> Catalog {
    Catalog::new().resources(
        Arc::new(Notes),
        vec![
            ResourceSpec::new("notes://1", "first").mime_type("text/plain"),
            ResourceSpec::new("notes://slow", "slow"),
        ],
        vec![ResourceTemplateSpec::new("notes://{id}", "a note")],
    )
}

fn wasm(byte: u8) -> ToolSource {
    ToolSource::Wasm {
        component_hash: ComponentHash::of(&[byte]),
    }
}

fn text_of(result: &PromptResult) -> Vec<&str> {
    result
        .messages
        .iter()
        .filter_map(|m| m.content.as_text())
        .collect()
}

#[test]
fn a_taken_name_uri_or_template_is_refused_and_nothing_of_the_catalog_lands() {
    let mut registry = Registry::new();
    registry
        .register_catalog(wasm(1), notes().prompt(greeting("greet")))
        .unwrap();
    for (catalog, what) in [
        (Catalog::new().prompt(greeting("greet")), "prompt `greet`"),
        (
            Catalog::new().prompt(greeting("other")).resources(
                Arc::new(Notes),
                vec![ResourceSpec::new("notes://1", "x")],
                vec![],
            ),
            "resource `notes://1`",
        ),
        (
            Catalog::new().resources(
                Arc::new(Notes),
                vec![],
                vec![ResourceTemplateSpec::new("notes://{id}", "x")],
            ),
            "resource template `notes://{id}`",
        ),
    ] {
        let e = registry
            .register_catalog(ToolSource::Mcp { server: "s".into() }, catalog)
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::DuplicateTool);
        assert!(
            e.message().contains(what) && e.message().contains("already registered by component"),
            "{e}"
        );
    }
    assert!(registry.prompt("other").is_none(), "all or nothing");
    let twice = Catalog::new().prompt(greeting("x")).prompt(greeting("x"));
    assert_eq!(
        registry.register_catalog(wasm(2), twice).unwrap_err().code(),
        ErrorCode::DuplicateTool
    );
    let bad = Catalog::new().resources(Arc::new(Notes), vec![ResourceSpec::new("no scheme", "x")], vec![]);
    assert_eq!(
        registry.register_catalog(wasm(2), bad).unwrap_err().code(),
        ErrorCode::InvalidArguments
    );
    let bad_name = Catalog::new().prompt(greeting("has space"));
    assert_eq!(
        registry.register_catalog(wasm(2), bad_name).unwrap_err().code(),
        ErrorCode::InvalidArguments
    );
    // Unregistering a source takes its catalog along, and nothing else.
    registry
        .register_catalog(wasm(3), Catalog::new().prompt(greeting("kept")))
        .unwrap();
    registry.unregister_component(ComponentHash::of(&[1]));
    assert!(registry.prompt("greet").is_none() && registry.resources().next().is_none());
    assert!(registry.prompt("kept").is_some());
}

#[tokio::test]
async fn sessions_see_by_audience_and_toolset_and_hidden_is_not_found() {
    let mut registry = Registry::new();
    registry
        .register_catalog(
            wasm(1),
            notes().prompt(greeting("private_greet")).toolset("notes"),
        )
        .unwrap();
    registry
        .register_public_catalog(Catalog::new().prompt(greeting("public_greet")))
        .unwrap();
    registry
        .register_catalog(
            ToolSource::Mcp {
                server: "other".into(),
            },
            Catalog::new().prompt(greeting("other_greet")),
        )
        .unwrap();
    let dispatcher = Dispatcher::builder(registry.clone()).build().unwrap();
    let trusted = Session::trusted("t");
    let names = |d: &Dispatcher, s: &Session| -> Vec<String> {
        d.prompt_specs(s).unwrap().into_iter().map(|p| p.name).collect()
    };
    assert_eq!(
        names(&dispatcher, &trusted),
        ["other_greet", "private_greet", "public_greet"]
    );
    let public = Session::public("p");
    assert_eq!(names(&dispatcher, &public), ["public_greet"]);
    assert!(dispatcher.resource_specs(&public).unwrap().is_empty());
    let args = BTreeMap::from([("who".to_string(), "Ada".to_string())]);
    let e = dispatcher
        .get_prompt(
            "private_greet",
            args.clone(),
            &DispatchContext::new(Arc::clone(&public)),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "hidden reads as absent: {e}");
    let e = dispatcher
        .read_resource("notes://1", &DispatchContext::new(public))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);

    // Toolsets select catalogs as they select tools.
    let only_notes = Dispatcher::builder(registry.clone())
        .selection(ToolsetSelection::enabled(["notes"]))
        .build()
        .unwrap();
    assert_eq!(names(&only_notes, &trusted), ["private_greet"]);
    let without_notes = Dispatcher::builder(registry)
        .selection(ToolsetSelection {
            enabled: None,
            disabled: vec!["notes".into()],
        })
        .build()
        .unwrap();
    assert_eq!(names(&without_notes, &trusted), ["other_greet", "public_greet"]);
    assert!(
        without_notes
            .resource_template_specs(&trusted)
            .unwrap()
            .is_empty()
    );
    let e = without_notes
        .read_resource("notes://7", &DispatchContext::new(trusted))
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn prompts_resources_and_completions_are_served() {
    let mut registry = Registry::new();
    registry
        .register_catalog(wasm(1), notes().prompt(greeting("greet")))
        .unwrap();
    let dispatcher = Dispatcher::builder(registry).build().unwrap();
    let ctx = DispatchContext::new(Session::trusted("t"));
    let args = BTreeMap::from([("who".to_string(), "Ada".to_string())]);
    let out = dispatcher.get_prompt("greet", args, &ctx).await.unwrap();
    assert_eq!(text_of(&out), ["Say hello to Ada."]);
    let e = dispatcher
        .get_prompt("greet", BTreeMap::new(), &ctx)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    assert!(e.message().contains("`who`"), "{e}");

    // A listed resource, and one only its template offers.
    let listed = dispatcher.read_resource("notes://1", &ctx).await.unwrap();
    assert!(matches!(&listed[0], ResourceContents::Text { text, .. } if text == "note 1"));
    let templated = dispatcher.read_resource("notes://42", &ctx).await.unwrap();
    assert!(matches!(&templated[0], ResourceContents::Text { text, .. } if text == "note 42"));
    let e = dispatcher.read_resource("other://1", &ctx).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound);

    // A slow source is bounded by the deadline.
    let mut late = DispatchContext::new(Session::trusted("t"));
    late.deadline = Some(Instant::now() + Duration::from_millis(50));
    let e = dispatcher.read_resource("notes://slow", &late).await.unwrap_err();
    assert_eq!(e.code(), ErrorCode::Timeout);

    let reference = CompletionRef::ResourceTemplate("notes://{id}".into());
    let c = dispatcher
        .complete(&reference, "id", "", &BTreeMap::new(), &ctx)
        .await
        .unwrap();
    assert_eq!(c.values.len(), Completion::MAX_VALUES);
    assert!(c.has_more && c.values[0] == "1");
    let e = dispatcher
        .complete(&reference, "nope", "", &BTreeMap::new(), &ctx)
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArguments);
    let prompt_ref = CompletionRef::Prompt("greet".into());
    let none = dispatcher
        .complete(&prompt_ref, "who", "A", &BTreeMap::new(), &ctx)
        .await
        .unwrap();
    assert!(none.values.is_empty() && !none.has_more);
}
