//! Per-turn schema size, full vs. lazy registry mode, with 60 tools
//! registered (built-ins and the tools of three MCP servers), counted in
//! bytes of JSON and in tokens (tiktoken's `o200k_base` and `cl100k_base`);
//! then the mean time `definitions` takes in each mode.
//!
//! `cargo bench -p toolhost --bench schemas` (add `--profile dev` to reuse
//! the test build). A plain report rather than criterion: the figures that
//! matter here are sizes, which do not vary between runs.

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::runtime::Runtime;
use toolhost::internal::dispatch::{DispatchContext, Dispatcher, Session};
use toolhost::internal::registry::lazy::{RegistryMode, TOOL_SEARCH};
use toolhost::internal::registry::{FnTool, Registry, ToolOutput, ToolSpec};

const DOMAINS: [(&str, &str); 6] = [
    ("files", "a file or folder in the workspace"),
    ("github", "a GitHub repository, issue or pull request"),
    ("calendar", "an event in the user's calendar"),
    ("mail", "a message in the user's mailbox"),
    ("db", "a table or row in the project database"),
    ("web", "a web page or search result"),
];
const VERBS: [&str; 10] = [
    "list",
    "get",
    "create",
    "update",
    "delete",
    "search",
    "move",
    "copy",
    "watch",
    "summarize",
];

fn spec(domain: &str, what: &str, verb: &str) -> ToolSpec {
    ToolSpec::new(
        format!("{domain}_{verb}"),
        format!(
            "{verb} {what}. Returns JSON describing the result; fails with a clear message when the target does not exist or access is denied."
        ),
        json!({
            "type": "object",
            "properties": {
                "target": {"type": "string", "description": format!("The identifier or path of {what}.")},
                "query": {"type": "string", "description": "Optional filter expression, e.g. `status:open label:bug`."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "The most items to return (default 50)."},
                "dry_run": {"type": "boolean", "description": "Describe the change without making it."}
            },
            "required": ["target"],
            "additionalProperties": false
        }),
    )
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    for (i, (domain, what)) in DOMAINS.iter().enumerate() {
        for verb in VERBS {
            let tool = FnTool::new(spec(domain, what, verb), |args, _| async move {
                Ok(ToolOutput::json(&args))
            });
            match i {
                0 | 4 | 5 => registry.register(tool),
                _ => registry.register_mcp(tool, *domain),
            }
            .expect("unique names");
        }
    }
    registry
}

fn sizes(label: &str, defs: &[Value]) {
    let text = serde_json::to_string(defs).expect("json");
    let o200k = tiktoken_rs::o200k_base()
        .expect("o200k")
        .encode_ordinary(&text)
        .len();
    let cl100k = tiktoken_rs::cl100k_base()
        .expect("cl100k")
        .encode_ordinary(&text)
        .len();
    println!(
        "{label:<34} {:>3} tools {:>7} bytes {:>6} tokens (o200k) {:>6} tokens (cl100k)",
        defs.len(),
        text.len(),
        o200k,
        cl100k
    );
}

fn main() {
    let rt = Runtime::new().expect("runtime");
    let full = Dispatcher::builder(registry()).build().expect("full");
    let lazy = Dispatcher::builder(registry())
        .mode(RegistryMode::Lazy)
        .build()
        .expect("lazy");
    let session = Session::trusted("bench");
    let fresh = Session::trusted("fresh");
    let ctx = DispatchContext::new(session.clone());
    rt.block_on(async {
        for name in ["github_search", "files_get", "web_search"] {
            lazy.dispatch(TOOL_SEARCH, json!({ "name": name }), &ctx).await;
        }
    });
    println!(
        "per-turn schema size, {} tools registered:",
        full.registry().len()
    );
    sizes("full mode", &full.definitions(&session).expect("defs"));
    sizes("lazy mode, first turn", &lazy.definitions(&fresh).expect("defs"));
    sizes(
        "lazy mode, 3 tools activated",
        &lazy.definitions(&session).expect("defs"),
    );

    time("definitions, full mode", || {
        drop(black_box(full.definitions(&session)))
    });
    time("definitions, lazy mode", || {
        drop(black_box(lazy.definitions(&session)))
    });
    time("tool_search(query=\"search\")", || {
        black_box(rt.block_on(lazy.dispatch(TOOL_SEARCH, json!({"query": "search"}), &ctx)));
    });
}

fn time(label: &str, mut f: impl FnMut()) {
    const RUNS: u32 = 2_000;
    let start = Instant::now();
    for _ in 0..RUNS {
        f();
    }
    println!(
        "{label:<34} {:>9.1} µs per call (mean of {RUNS})",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(RUNS)
    );
}
