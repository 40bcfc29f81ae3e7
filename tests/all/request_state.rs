//! Sealed request states (MCP 2026-07-28 multi-round-trip results): a
//! state opens once, for the request it was issued for, under the key that
//! sealed it, before it expires; everything else is refused with a reason.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolhost::internal::mcp::request_state::{Answer, Asked, Binding, StateError, StateKey, StateSealer};
use toolhost::internal::mcp::{MemoryStore, Store};

fn key(byte: u8) -> StateKey {
    StateKey::from_secret(&[byte; 32]).unwrap()
}

fn sealer(byte: u8, store: Arc<dyn Store>) -> StateSealer {
    StateSealer::new(key(byte), store)
}

fn binding() -> Binding {
    Binding::new(
        "tools/call",
        "exec",
        &json!({"command": "rm -rf /tmp/x"}),
        "token=t\nclient=c",
    )
}

fn answers() -> Vec<Answer> {
    vec![Answer {
        at: 0,
        key: "approval".into(),
        fingerprint: "f1".into(),
        response: json!({"action": "accept", "content": {"decision": "once"}}),
    }]
}

#[tokio::test]
async fn a_state_opens_with_what_it_carries() {
    let s = sealer(1, Arc::new(MemoryStore::new()));
    let pending = vec![Asked {
        at: 1,
        key: "approval".into(),
        fingerprint: "f2".into(),
    }];
    let state = s.seal(&binding(), &answers(), &pending);
    let opened = s.open(&state, &binding()).await.unwrap();
    assert_eq!(opened.answers, answers());
    assert_eq!(opened.pending, pending);
}

#[tokio::test]
async fn every_changed_byte_is_refused() {
    let s = sealer(1, Arc::new(MemoryStore::new()));
    let state = s.seal(&binding(), &answers(), &[]);
    let dot = state.find('.').unwrap();
    // Every position past the version, changed to another base64url
    // character: none opens.
    for i in (dot + 1..state.len()).filter(|&i| &state[i..=i] != ".") {
        let mut bytes = state.clone().into_bytes();
        bytes[i] = if bytes[i] == b'x' { b'y' } else { b'x' };
        let changed = String::from_utf8(bytes).unwrap();
        let e = s.open(&changed, &binding()).await.unwrap_err();
        assert!(
            matches!(
                e,
                StateError::Tampered | StateError::OtherKey(_) | StateError::Malformed(_)
            ),
            "byte {i}: {e}"
        );
        assert_eq!(e.to_error_data().code.0, -32602);
    }
    // The unchanged state still opens (nothing above claimed its nonce).
    assert!(s.open(&state, &binding()).await.is_ok());
}

#[tokio::test]
async fn a_state_sealed_by_another_key_is_refused_as_such() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let state = sealer(1, Arc::clone(&store)).seal(&binding(), &[], &[]);
    let e = sealer(2, store).open(&state, &binding()).await.unwrap_err();
    assert!(matches!(e, StateError::OtherKey(_)), "{e}");
    assert!(e.to_string().contains("another key"), "{e}");
    // A forged state under the other key's identifier fails its tag.
    let other = key(2);
    let forged = state.replacen(key(1).id(), other.id(), 1);
    let e = sealer(2, Arc::new(MemoryStore::new()))
        .open(&forged, &binding())
        .await
        .unwrap_err();
    assert!(matches!(e, StateError::Tampered), "{e}");
}

#[tokio::test]
async fn an_expired_state_is_refused() {
    let s = sealer(1, Arc::new(MemoryStore::new())).with_ttl(Duration::ZERO);
    let state = s.seal(&binding(), &[], &[]);
    let e = s.open(&state, &binding()).await.unwrap_err();
    assert!(matches!(e, StateError::Expired), "{e}");
    assert_eq!(e.to_error_data().code.0, -32602);
}

#[tokio::test]
async fn a_state_opens_once_on_every_replica_sharing_the_store() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let (a, b) = (sealer(1, Arc::clone(&store)), sealer(1, store));
    let state = a.seal(&binding(), &answers(), &[]);
    assert!(
        b.open(&state, &binding()).await.is_ok(),
        "the other replica continues it"
    );
    for replica in [&a, &b] {
        let e = replica.open(&state, &binding()).await.unwrap_err();
        assert!(matches!(e, StateError::Replayed), "{e}");
    }
}

#[tokio::test]
async fn a_state_is_good_for_its_own_request_only() {
    let s = sealer(1, Arc::new(MemoryStore::new()));
    let others = [
        (
            "method",
            Binding::new(
                "prompts/get",
                "exec",
                &json!({"command": "rm -rf /tmp/x"}),
                "token=t\nclient=c",
            ),
        ),
        (
            "name",
            Binding::new(
                "tools/call",
                "shell",
                &json!({"command": "rm -rf /tmp/x"}),
                "token=t\nclient=c",
            ),
        ),
        (
            "arguments",
            Binding::new(
                "tools/call",
                "exec",
                &json!({"command": "rm -rf /"}),
                "token=t\nclient=c",
            ),
        ),
        (
            "caller",
            Binding::new(
                "tools/call",
                "exec",
                &json!({"command": "rm -rf /tmp/x"}),
                "token=u\nclient=c",
            ),
        ),
    ];
    for (what, other) in others {
        let state = s.seal(&binding(), &[], &[]);
        let e = s.open(&state, &other).await.unwrap_err();
        assert!(matches!(e, StateError::Bound(w) if w == what), "{what}: {e}");
        // Refused before its single use was spent: its own request opens it.
        assert!(s.open(&state, &binding()).await.is_ok());
    }
}

#[tokio::test]
async fn garbage_is_malformed_not_a_panic() {
    let s = sealer(1, Arc::new(MemoryStore::new()));
    for junk in [
        "",
        ".",
        "th1",
        "th1...",
        "th2.a.b.c",
        "th1.a.b.c.d",
        "\u{0}\u{ff}",
        &"x".repeat(2 << 20),
    ] {
        let e = s.open(junk, &binding()).await.unwrap_err();
        assert!(
            matches!(e, StateError::Malformed(_) | StateError::OtherKey(_)),
            "{junk:.20}: {e}"
        );
    }
}
