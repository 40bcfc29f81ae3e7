//! The `embed` example runs, and its batch comes back in call order.

#[path = "../../examples/embed.rs"]
#[allow(dead_code, reason = "the example's `main` is for `cargo run --example embed`")]
mod embed;

#[tokio::test]
async fn the_embedding_example_runs() {
    let results = embed::run(&crate::support::plugin_path("hello")).await.unwrap();
    let contents: Vec<serde_json::Value> = results.iter().map(|r| r.json()).collect();
    assert_eq!(contents[0], "Hello, Ada!");
    assert!(contents[1].as_u64().is_some());
    assert_eq!(contents[2], serde_json::json!(["write the README"]));
    assert_eq!(contents[3]["error"], "Unknown tool: nope");
}
