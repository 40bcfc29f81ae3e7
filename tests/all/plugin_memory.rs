//! The `memory` plugin, as built, on real temporary stores: the record
//! tools, search ranking, persistence across instances, concurrent creates,
//! and a host killed mid-write many times over without a torn record.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use toolhost::internal::capabilities::DirMode;
use toolhost::{ErrorCode, LoadedComponent};

use crate::{call_err as err, call_ok as ok, load, load_with_dir, support};

async fn store() -> (tempfile::TempDir, Arc<LoadedComponent>) {
    let dir = tempfile::tempdir().unwrap();
    let c = load_with_dir("memory", dir.path(), "/memory", DirMode::Rw).await;
    (dir, c)
}

/// The names of the record files in `dir`.
fn record_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn records_are_created_read_updated_and_deleted_across_instances() {
    let (dir, c) = store().await;
    let saved = ok(
        &c,
        "memory_create",
        json!({"title": " Trip ", "content": "Lisbon in May", "tags": ["Travel", "travel", " family "]}),
    )
    .await;
    let id = saved["id"].as_str().unwrap().to_string();
    assert_eq!(saved["title"], "Trip");
    assert_eq!(saved["tags"], json!(["travel", "family"]));
    assert_eq!(record_files(dir.path()), [format!("{id}.json")]);

    // A second component loaded on the same directory sees the same state.
    let other = load_with_dir("memory", dir.path(), "/memory", DirMode::Rw).await;
    let got = ok(&other, "memory_get", json!({ "id": id })).await;
    assert_eq!(got["content"], "Lisbon in May");
    assert_eq!(got["created_at"], saved["created_at"]);

    let updated = ok(
        &other,
        "memory_update",
        json!({"id": id, "content": "Lisbon in June"}),
    )
    .await;
    assert_eq!(updated["title"], "Trip");
    let got = ok(&c, "memory_get", json!({ "id": id })).await;
    assert_eq!(got["content"], "Lisbon in June");
    assert_eq!(got["tags"], json!(["travel", "family"]));
    assert!(got["updated_at"].as_str() >= got["created_at"].as_str());
    ok(&c, "memory_update", json!({"id": id, "tags": []})).await;
    assert_eq!(ok(&c, "memory_get", json!({ "id": id })).await["tags"], json!([]));

    let second = ok(&c, "memory_create", json!({"title": "Second", "content": "b"})).await;
    let titles = ok(&c, "memory_list_titles", json!({})).await;
    assert_eq!(titles["total"], 2);
    assert_eq!(titles["entries"][0]["title"], "Second", "most recent first");
    let limited = ok(&c, "memory_list_titles", json!({"limit": 1})).await;
    assert_eq!(limited["truncated"], true);

    let deleted = ok(&c, "memory_delete", json!({ "id": id })).await;
    assert_eq!(deleted, json!({"id": id, "deleted": true}));
    for tool in ["memory_get", "memory_delete"] {
        let e = err(&c, tool, json!({ "id": id })).await;
        assert_eq!(e.code(), ErrorCode::ToolFailed);
        assert!(e.message().contains("no memory with id"), "{e}");
    }
    assert_eq!(
        record_files(dir.path()),
        [format!("{}.json", second["id"].as_str().unwrap())]
    );
}

#[tokio::test]
async fn bad_arguments_are_refused_before_anything_is_written() {
    let (dir, c) = store().await;
    for (tool, args) in [
        ("memory_create", json!({"title": "  ", "content": "x"})),
        ("memory_create", json!({"title": "t".repeat(201), "content": "x"})),
        (
            "memory_create",
            json!({"title": "t", "content": "x".repeat((256 << 10) + 1)}),
        ),
        (
            "memory_create",
            json!({"title": "t", "content": "x", "tags": ["t".repeat(51)]}),
        ),
        (
            "memory_create",
            json!({"title": "t", "content": "x", "colour": "red"}),
        ),
        ("memory_get", json!({"id": "../../etc/passwd"})),
        ("memory_get", json!({"id": "/memory/x"})),
        ("memory_delete", json!({"id": ""})),
        ("memory_update", json!({"id": "abc"})),
        ("memory_search", json!({"query": "   "})),
    ] {
        let e = err(&c, tool, args.clone()).await;
        assert_eq!(e.code(), ErrorCode::InvalidArguments, "{tool} {args}: {e}");
    }
    assert!(fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[tokio::test]
async fn search_ranks_title_and_tag_matches_above_content_matches() {
    let (_dir, c) = store().await;
    for (title, content, tags) in [
        ("Groceries", "milk, eggs and coffee beans", json!([])),
        ("Coffee order", "a flat white, no sugar", json!(["food"])),
        ("Holiday", "Lisbon; try the coffee there", json!(["travel"])),
        ("Unrelated", "nothing to see", json!([])),
    ] {
        ok(
            &c,
            "memory_create",
            json!({"title": title, "content": content, "tags": tags}),
        )
        .await;
    }
    let r = ok(&c, "memory_search", json!({"query": "COFFEE"})).await;
    assert_eq!(r["total_matches"], 3);
    assert_eq!(r["entries"][0]["title"], "Coffee order");
    assert!(r["entries"][0]["score"].as_u64() > r["entries"][1]["score"].as_u64());
    let snippet = r["entries"][1]["snippet"].as_str().unwrap();
    assert!(snippet.to_lowercase().contains("coffee"), "{snippet}");

    let tagged = ok(
        &c,
        "memory_search",
        json!({"query": "coffee", "tags": ["Travel"]}),
    )
    .await;
    assert_eq!(tagged["total_matches"], 1);
    assert_eq!(tagged["entries"][0]["title"], "Holiday");
    let phrase = ok(&c, "memory_search", json!({"query": "coffee beans"})).await;
    assert_eq!(phrase["entries"][0]["title"], "Groceries");
    let limited = ok(&c, "memory_search", json!({"query": "coffee", "limit": 1})).await;
    assert_eq!(limited["entries"].as_array().unwrap().len(), 1);
    assert_eq!(limited["total_matches"], 3);
    let none = ok(&c, "memory_search", json!({"query": "zebra"})).await;
    assert_eq!(none["entries"], json!([]));
}

#[tokio::test]
async fn concurrent_creates_in_separate_instances_never_share_an_id() {
    let (dir, c) = store().await;
    let calls = (0..16).map(|i| {
        let c = c.clone();
        async move {
            ok(
                &c,
                "memory_create",
                json!({"title": format!("note {i}"), "content": "x"}),
            )
            .await
        }
    });
    let saved = futures_join(calls).await;
    let mut ids: Vec<&str> = saved.iter().map(|s| s["id"].as_str().unwrap()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 16);
    assert_eq!(record_files(dir.path()).len(), 16);
    assert_eq!(ok(&c, "memory_list_titles", json!({})).await["total"], 16);
}

/// Runs the futures concurrently on the runtime and collects their outputs.
async fn futures_join<F: std::future::Future<Output = Value> + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<Value> {
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test]
async fn temp_files_and_damaged_files_are_never_taken_for_records() {
    let (dir, c) = store().await;
    ok(&c, "memory_create", json!({"title": "real", "content": "x"})).await;
    fs::write(
        dir.path().join(".tmp-0123456789abcdef.partial"),
        "{\"id\": \"torn",
    )
    .unwrap();
    fs::write(dir.path().join("deadbeef.json"), "{ not json").unwrap();
    fs::write(dir.path().join("notes.txt"), "not a record").unwrap();
    let titles = ok(&c, "memory_list_titles", json!({})).await;
    assert_eq!(titles["total"], 1);
    assert_eq!(titles["unreadable"], 1);
    let e = err(&c, "memory_get", json!({"id": "deadbeef"})).await;
    assert!(e.message().contains("not a valid record"), "{e}");
}

/// A small xorshift generator: the test needs varied kill moments, not
/// quality randomness.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn a_host_killed_mid_write_never_leaves_a_torn_record() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = support::plugin_path("memory");
    let cache = support::workspace_root()
        .join("target")
        .join("test-compile-cache");
    let grant = format!("{}:/memory:rw", dir.path().display());
    let run = |tool: &str, args: &Value| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        cmd.arg("call")
            .arg(&wasm)
            .arg(tool)
            .arg(args.to_string())
            .args(["--dir", &grant, "--cache-dir"])
            .arg(&cache)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        cmd
    };
    // Large contents (under the 128 KiB limit on one command-line argument),
    // so that writing one takes a while.
    let big = |c: char| c.to_string().repeat(100 << 10);
    let out = run("memory_create", &json!({"title": "kept", "content": big('a')}))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let kept: Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept_id = kept["id"].as_str().unwrap().to_string();

    // How long one whole call takes, to spread the kills over it.
    let start = Instant::now();
    let update = json!({"id": kept_id, "content": big('b')});
    assert!(run("memory_update", &update).output().unwrap().status.success());
    let span = start.elapsed().as_micros().max(1000) as u64;

    let mut rng = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64 | 1;
    let mut completed = 0;
    for i in 0..40 {
        let fill = if i % 2 == 0 { 'c' } else { 'd' };
        let args = if i % 3 == 0 {
            json!({"id": kept_id, "content": big(fill)})
        } else {
            json!({"title": format!("created {i}"), "content": big(fill)})
        };
        let tool = if i % 3 == 0 {
            "memory_update"
        } else {
            "memory_create"
        };
        let mut child = run(tool, &args).spawn().unwrap();
        std::thread::sleep(Duration::from_micros(next(&mut rng) % (2 * span)));
        if child.try_wait().unwrap().is_some() {
            completed += 1;
        } else {
            // SIGKILL, on Unix: no chance to clean up.
            child.kill().unwrap();
        }
        child.wait().unwrap();
    }
    eprintln!("{completed} of 40 calls finished before their kill");

    // Every record file parses, whole: its content is one of the contents
    // written, at full length. Anything else is a temp file.
    let (mut records, mut temps) = (0, 0);
    for entry in fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(id) = name.strip_suffix(".json") {
            let text = fs::read_to_string(dir.path().join(&name)).unwrap();
            let record: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is torn: {e}"));
            assert_eq!(record["id"], id);
            let content = record["content"].as_str().unwrap();
            assert_eq!(content.len(), 100 << 10, "{name}");
            assert!(['a', 'b', 'c', 'd'].iter().any(|&c| content == big(c)), "{name}");
            records += 1;
        } else {
            assert!(name.starts_with(".tmp-"), "unexpected file {name}");
            temps += 1;
        }
    }
    eprintln!("{records} records and {temps} temp files left");
    // The record written before the kills is still there, whole, and the
    // plugin lists exactly the record files, no temp file among them.
    assert!(dir.path().join(format!("{kept_id}.json")).exists());
    let out = run("memory_list_titles", &json!({"limit": 1000}))
        .output()
        .unwrap();
    let titles: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(titles["total"], records, "{titles}");
    assert!(titles.get("unreadable").is_none(), "{titles}");
}

#[tokio::test]
async fn without_a_grant_it_loads_and_every_tool_names_the_missing_grant() {
    let c = load("memory").await;
    assert_eq!(c.declared().dirs, ["/memory"]);
    for (tool, args) in [
        ("memory_create", json!({"title": "t", "content": "c"})),
        ("memory_get", json!({"id": "abc"})),
        ("memory_update", json!({"id": "abc", "title": "x"})),
        ("memory_delete", json!({"id": "abc"})),
        ("memory_search", json!({"query": "x"})),
        ("memory_list_titles", json!({})),
    ] {
        let e = err(&c, tool, args).await;
        assert_eq!(e.code(), ErrorCode::ToolFailed, "{tool}");
        assert!(
            e.message().contains("not granted to it: dir /memory"),
            "{tool}: {e}"
        );
    }
}
