//! The `embed` example runs, and its batch comes back in call order.

#[path = "../../examples/embed.rs"]
#[allow(dead_code, reason = "the example's `main` is for `cargo run --example embed`")]
mod embed;

/// The example's host, with `toolhost serve --stdio` (the standard
/// plugins) bridged in: its own tools, an approval it answers, a plugin
/// admitted while it runs, a standard plugin, a bridged server's tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedding_example_runs() {
    let (_dir, config) = crate::mcp_server::temp_config("[[plugins]]\nbundled = \"calc\"\n");
    let bridged = (
        crate::support::toolhost_bin().display().to_string(),
        crate::mcp_server::serve_args(&["--stdio", "--config", &config]),
    );
    let results = embed::run(&crate::support::plugin_path("hello"), Some(bridged))
        .await
        .unwrap();
    let contents: Vec<serde_json::Value> = results.iter().map(|r| r.json()).collect();
    assert_eq!(contents[0], "Hello, Ada!");
    assert!(contents[1].as_u64().is_some(), "{}", contents[1]);
    assert_eq!(contents[2]["result"], "42", "{}", contents[2]);
    assert_eq!(contents[3], "deployed", "approved by the application");
    assert_eq!(contents[4]["error"], "Unknown tool: nope");
    assert_eq!(contents[5]["result"], "1024", "{}", contents[5]);
}
