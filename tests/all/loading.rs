//! What the host refuses at load, and what it reports about what it loads.

use toolhost::{ComponentHash, ErrorCode, LoadOptions};

use crate::{engine, support};

async fn load_err(bytes: Vec<u8>, options: LoadOptions) -> toolhost::Error {
    engine()
        .load(bytes, options)
        .await
        .expect_err("the load must fail")
}

#[tokio::test]
async fn a_component_is_identified_by_the_blake3_of_its_bytes() {
    let bytes = support::plugin_bytes("hello");
    let hash = ComponentHash::of(&bytes);
    assert_eq!(
        hash.to_string(),
        format!("blake3:{}", blake3::hash(&bytes).to_hex())
    );
    let loaded = engine()
        .load(
            bytes,
            LoadOptions {
                expected_hash: Some(hash),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(loaded.hash(), hash);
    let info = loaded.describe();
    assert_eq!(info["hash"], hash.to_string());
    assert_eq!(info["world"]["version"], "0.3.1");
    assert_eq!(info["tools"][0]["name"], "greet");
    assert_eq!(info["tools"][0]["description"], "Greets someone by name.");
    assert_eq!(
        info["tools"][0]["parameters"]["properties"]["name"]["description"],
        "Who to greet."
    );
    assert_eq!(info["tools"][0]["hints"]["readOnlyHint"], true);
}

#[tokio::test]
async fn a_pin_mismatch_is_refused() {
    let other = ComponentHash::of(b"something else");
    let err = load_err(
        support::plugin_bytes("hello"),
        LoadOptions {
            expected_hash: Some(other),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(err.code(), ErrorCode::HashMismatch);
    assert!(err.message().contains(&other.to_string()), "{}", err.message());
}

#[tokio::test]
async fn random_bytes_are_refused() {
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let err = load_err(bytes, LoadOptions::default()).await;
    assert_eq!(err.code(), ErrorCode::InvalidComponent);
    assert!(err.message().contains("not WebAssembly"), "{}", err.message());
    assert_eq!(
        load_err(Vec::new(), LoadOptions::default()).await.code(),
        ErrorCode::InvalidComponent
    );
}

#[tokio::test]
async fn a_core_module_is_not_a_component() {
    let err = load_err(b"\0asm\x01\0\0\0".to_vec(), LoadOptions::default()).await;
    assert_eq!(err.code(), ErrorCode::InvalidComponent);
    assert!(
        err.message().contains("core WebAssembly module, not a component"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn a_truncated_component_is_invalid() {
    let mut bytes = support::plugin_bytes("hello");
    bytes.truncate(bytes.len() / 2);
    assert_eq!(
        load_err(bytes, LoadOptions::default()).await.code(),
        ErrorCode::InvalidComponent
    );
}

#[tokio::test]
async fn a_component_of_another_world_is_refused() {
    let err = load_err(support::plugin_bytes("command-hello"), LoadOptions::default()).await;
    assert_eq!(err.code(), ErrorCode::UnsupportedWorld);
    assert!(err.message().contains("wasi:cli/run"), "{}", err.message());
    assert!(
        err.message().contains("toolhost:plugin/tool@0.1.0"),
        "{}",
        err.message()
    );
}

#[tokio::test]
async fn an_invalid_tool_name_is_refused_naming_the_tool() {
    let err = load_err(support::plugin_bytes("bad-name"), LoadOptions::default()).await;
    assert_eq!(err.code(), ErrorCode::InvalidComponent);
    assert!(err.message().contains("\"bad name!\""), "{}", err.message());
    crate::limits::hello_still_works().await;
}

#[tokio::test]
async fn a_duplicate_tool_name_is_refused_naming_the_tool() {
    let err = load_err(support::plugin_bytes("dup-name"), LoadOptions::default()).await;
    assert_eq!(err.code(), ErrorCode::InvalidComponent);
    assert!(err.message().contains("`twin` twice"), "{}", err.message());
    crate::limits::hello_still_works().await;
}

#[tokio::test]
async fn a_missing_import_is_refused_with_the_list() {
    let err = load_err(support::plugin_bytes("missing-import"), LoadOptions::default()).await;
    assert_eq!(err.code(), ErrorCode::MissingImports);
    assert!(
        err.message().contains("test:missing/telepathy@1.0.0"),
        "{}",
        err.message()
    );
    assert!(
        !err.message().contains("wasi:io"),
        "only the missing imports are listed: {}",
        err.message()
    );
}

#[tokio::test]
async fn a_memory_limit_above_the_engine_ceiling_is_refused() {
    let limits = toolhost::LimitsOverride {
        memory_mb: Some(1 << 20),
        ..Default::default()
    };
    let err = load_err(
        support::plugin_bytes("hello"),
        LoadOptions {
            limits,
            ..Default::default()
        },
    )
    .await;
    assert_eq!(err.code(), ErrorCode::Config);
}

/// A small deterministic generator (xorshift64), so that a failure can be
/// reproduced: the test names the iteration.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self, below: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % below.max(1) as u64) as usize
    }
}

#[tokio::test]
async fn mutated_components_are_refused_or_loaded_never_a_panic() {
    // An engine of its own, without a cache: mutants must not fill the
    // shared test cache.
    let engine = toolhost::Engine::new(toolhost::EngineConfig::default()).unwrap();
    let original = support::plugin_bytes("hello");
    let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
    let (mut refused, mut loaded) = (0, 0);
    for i in 0..30 {
        let mut bytes = original.clone();
        match i % 3 {
            0 => {
                for _ in 0..4 {
                    let at = rng.next(bytes.len());
                    bytes[at] ^= 1 << rng.next(8);
                }
            }
            1 => bytes.truncate(rng.next(bytes.len())),
            _ => {
                let at = rng.next(bytes.len());
                for b in bytes.iter_mut().skip(at).take(16) {
                    *b = rng.next(256) as u8;
                }
            }
        }
        match engine.load(bytes, LoadOptions::default()).await {
            Ok(_) => loaded += 1,
            Err(e) => {
                assert!(!e.message().is_empty(), "mutant {i}: an error without a message");
                refused += 1;
            }
        }
    }
    assert!(refused > 15, "{refused} refused, {loaded} loaded");
    crate::limits::hello_still_works().await;
}
