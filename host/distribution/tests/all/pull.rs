//! `OciClient::pull` against the fake registry: the happy paths, then each
//! hostile answer, refused early with its error kind.

use std::sync::Arc;
use std::time::Duration;

use toolhost_distribution::client::{DEFAULT_MAX_BLOB_BYTES, DEFAULT_PULL_TIMEOUT};
use toolhost_distribution::registry::{MAX_MANIFEST_BYTES, MAX_SIGNATURES};
use toolhost_distribution::{ErrorKind, OciClient, Pulled, Result};

use crate::fake::{Reply, Request};
use crate::registry::{Artifact, INDEX_TYPE, MANIFEST_TYPE, REPO, Setup, client, serve, sha256};

/// What a hostile registry offers: 1 GiB, streamed lazily.
const GIB: u64 = 1 << 30;
/// The most a refused stream may have managed to send: the cap, one chunk
/// and the loopback sockets' buffers (a few MiB each way), far below 1 GiB.
const STOPPED_EARLY: u64 = 64 << 20;

const OPEN: Setup = Setup {
    bearer: false,
    referrers_api: false,
};
const BEARER: Setup = Setup {
    bearer: true,
    referrers_api: false,
};

/// How many bytes the client says had arrived when it stopped reading (its
/// refusal says so when the body had no `Content-Length`, or lied in it):
/// at most the cap and one chunk, checked against `cap` plus 1 MiB (a
/// chunk is what one socket read gave hyper, well under that).
fn check_received(message: &str, cap: u64) {
    let Some(at) = message.find(" had arrived when toolhost stopped reading") else {
        return assert!(message.contains("it announced"), "{message}");
    };
    let digits: String = message[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let received: u64 = digits.parse().unwrap();
    assert!(received > cap && received <= cap + (1 << 20), "{message}");
}

/// Every test's own overall timeout: generous, for a busy machine.
async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("the pull did not end within 30 s")
}

fn default_client() -> OciClient {
    client(DEFAULT_MAX_BLOB_BYTES, DEFAULT_PULL_TIMEOUT)
}

async fn pull(client: &OciClient, fake: &crate::fake::Fake, rest: &str) -> Result<Pulled> {
    within(client.pull(&fake.reference(rest))).await
}

fn is_manifest(request: &Request, tag: &str) -> bool {
    request.path == format!("/v2/{REPO}/manifests/{tag}")
}

fn is_blob(request: &Request, digest: &str) -> bool {
    request.path == format!("/v2/{REPO}/blobs/{digest}")
}

/// A stream of `total` zero bytes, chunked, or with `Content-Length`.
fn stream(total: u64, length: Option<u64>) -> Reply {
    Reply::Stream {
        status: 200,
        headers: vec![("Content-Type".into(), MANIFEST_TYPE.into())],
        length,
        total,
    }
}

#[tokio::test]
async fn pulls_through_a_bearer_challenge_with_signatures_from_the_referrers_tag() {
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact.clone(), BEARER, |_, _, _| None).await;
    let pulled = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap();
    assert_eq!(pulled.bytes, artifact.component);
    assert_eq!(pulled.digest, artifact.manifest_digest);
    assert_eq!(pulled.digest, sha256(&artifact.manifest));
    artifact.check_signatures(&pulled.signatures);

    let requests = fake.requests();
    assert!(requests.iter().all(|r| r.method == "GET"), "{requests:?}");
    let token = requests
        .iter()
        .find(|r| r.path.starts_with("/token"))
        .expect("a token request");
    assert!(
        token.path.contains("scope=repository%3Atools%2Fhello%3Apull") && token.path.contains("service=fake"),
        "{}",
        token.path
    );
    assert!(
        token.header("authorization").is_none(),
        "anonymous: no credentials"
    );
    // Every request after the token carries it.
    let after: Vec<_> = requests
        .iter()
        .skip_while(|r| !r.path.starts_with("/token"))
        .skip(1)
        .collect();
    assert!(after.len() >= 5, "{after:?}");
    for r in &after {
        assert_eq!(r.header("authorization"), Some("Bearer good-token"), "{}", r.path);
    }
    // The referrers API answered 404, so the tag was read.
    assert!(fake.asked(&format!("/referrers/{}?artifactType=", artifact.manifest_digest)));
    assert!(fake.asked(&artifact.manifest_digest.replace(':', "-")));
    let accept = requests
        .iter()
        .find(|r| is_manifest(r, "v1"))
        .and_then(|r| r.header("accept"))
        .unwrap_or_default()
        .to_string();
    assert!(accept.contains(MANIFEST_TYPE), "{accept}");

    // By digest, too.
    let pinned = format!("{REPO}@{}", artifact.manifest_digest);
    let pulled = pull(&default_client(), &fake, &pinned).await.unwrap();
    assert_eq!(pulled.bytes, artifact.component);
}

#[tokio::test]
async fn pulls_signatures_from_the_referrers_api_and_follows_a_blob_redirect() {
    let artifact = Arc::new(Artifact::new());
    let setup = Setup {
        bearer: false,
        referrers_api: true,
    };
    let fake = serve(artifact.clone(), setup, |a, r, addr| {
        if is_blob(r, &a.component_digest) {
            return Some(Reply::Full {
                status: 307,
                headers: vec![("Location".into(), format!("http://{addr}/storage/component"))],
                body: Vec::new(),
            });
        }
        (r.path == "/storage/component").then(|| Reply::ok("application/octet-stream", a.component.clone()))
    })
    .await;
    let pulled = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap();
    assert_eq!(pulled.bytes, artifact.component);
    artifact.check_signatures(&pulled.signatures);
    assert!(fake.asked("/storage/component"));
    assert!(
        !fake.asked(&artifact.manifest_digest.replace(':', "-")),
        "the API answered: no tag"
    );
}

#[tokio::test]
async fn no_referrers_tag_means_no_signatures() {
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact.clone(), OPEN, |a, r, _| {
        is_manifest(r, &a.manifest_digest.replace(':', "-")).then(|| Reply::status(404, "404 page not found"))
    })
    .await;
    let pulled = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap();
    assert!(pulled.signatures.is_empty());
}

#[tokio::test]
async fn a_manifest_past_4_mib_is_refused_early() {
    for length in [None, Some(GIB)] {
        let artifact = Arc::new(Artifact::new());
        let fake = serve(artifact, OPEN, move |_, r, _| {
            is_manifest(r, "v1").then(|| stream(GIB, length))
        })
        .await;
        let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
        assert!(e.with_causes().contains(&MAX_MANIFEST_BYTES.to_string()), "{e}");
        check_received(e.message(), MAX_MANIFEST_BYTES);
        let sent = fake.streamed().await;
        assert!(sent < STOPPED_EARLY, "{length:?}: the fake sent {sent} bytes");
        assert!(!fake.asked("/blobs/"));
    }
    // Just past the cap, honestly announced.
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact, OPEN, |_, r, _| {
        is_manifest(r, "v1").then(|| stream(MAX_MANIFEST_BYTES + 1, Some(MAX_MANIFEST_BYTES + 1)))
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
}

#[tokio::test]
async fn a_blob_longer_than_declared_is_refused_as_soon_as_it_passes_its_size() {
    for length in [None, Some(GIB)] {
        let artifact = Arc::new(Artifact::new());
        let fake = serve(artifact, OPEN, move |a, r, _| {
            is_blob(r, &a.component_digest).then(|| stream(GIB, length))
        })
        .await;
        let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DigestMismatch, "{e}");
        assert!(e.with_causes().contains("more than the 5008 bytes"), "{e}");
        check_received(e.message(), 5008);
        let sent = fake.streamed().await;
        assert!(sent < STOPPED_EARLY, "{length:?}: the fake sent {sent} bytes");
    }
}

#[tokio::test]
async fn a_blob_shorter_than_declared_or_with_other_bytes_is_refused() {
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact, OPEN, |a, r, _| {
        is_blob(r, &a.component_digest).then(|| Reply::ok("application/wasm", a.component[..100].to_vec()))
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DigestMismatch, "{e}");
    assert!(e.with_causes().contains("sent 100 bytes"), "{e}");

    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact, OPEN, |a, r, _| {
        is_blob(r, &a.component_digest).then(|| {
            let mut other = a.component.clone();
            other[10] ^= 1;
            Reply::ok("application/wasm", other)
        })
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DigestMismatch, "{e}");
    assert!(e.with_causes().contains("digest is sha256:"), "{e}");
}

#[tokio::test]
async fn a_manifest_without_the_digest_of_the_reference_is_refused() {
    let artifact = Arc::new(Artifact::new());
    let other = sha256(b"another manifest");
    let fake = serve(artifact, OPEN, move |a, r, _| {
        r.path
            .contains("/manifests/")
            .then(|| Reply::ok(MANIFEST_TYPE, a.manifest.clone()))
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}@{other}"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DigestMismatch, "{e}");
    assert!(!fake.asked("/blobs/"));
}

#[tokio::test]
async fn a_declared_size_past_the_cap_is_refused_before_the_blob_is_requested() {
    let artifact = Arc::new(Artifact::declaring(Some(2 << 20)));
    let fake = serve(artifact, OPEN, |_, _, _| None).await;
    let e = pull(
        &client(1 << 20, DEFAULT_PULL_TIMEOUT),
        &fake,
        &format!("{REPO}:v1"),
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    assert!(
        e.with_causes().contains("2097152") && e.with_causes().contains("1048576"),
        "{e}"
    );
    assert!(!fake.asked("/blobs/"), "{:?}", fake.requests());
}

#[tokio::test]
async fn a_dripping_registry_stops_at_the_deadline() {
    // The manifest, or the blob, one byte every 2 s; the deadline is 1 s.
    for blob in [false, true] {
        let artifact = Arc::new(Artifact::new());
        let fake = serve(artifact, OPEN, move |a, r, _| {
            let drip = |body: &[u8]| Reply::Drip {
                headers: vec![("Content-Type".into(), MANIFEST_TYPE.into())],
                body: body.to_vec(),
                every: Duration::from_secs(2),
            };
            match blob {
                false => is_manifest(r, "v1").then(|| drip(&a.manifest)),
                true => is_blob(r, &a.component_digest).then(|| drip(&a.component)),
            }
        })
        .await;
        let client = client(DEFAULT_MAX_BLOB_BYTES, Duration::from_secs(1));
        let e = pull(&client, &fake, &format!("{REPO}:v1")).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
        assert!(e.with_causes().contains(&fake.addr.to_string()), "{e}");
        assert!(e.with_causes().contains("1 s"), "{e}");
        assert_eq!(fake.asked("/blobs/"), blob);
    }
}

#[tokio::test]
async fn a_huge_token_is_refused_early() {
    for length in [None, Some(GIB)] {
        let artifact = Arc::new(Artifact::new());
        let fake = serve(artifact, BEARER, move |_, r, _| {
            r.path.starts_with("/token").then(|| stream(GIB, length))
        })
        .await;
        let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
        check_received(e.message(), toolhost_distribution::registry::MAX_TOKEN_BYTES);
        let sent = fake.streamed().await;
        assert!(sent < STOPPED_EARLY, "{length:?}: the fake sent {sent} bytes");
        assert!(!fake.asked("/blobs/"));
    }
}

#[tokio::test]
async fn a_huge_error_body_is_not_read() {
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact, OPEN, |_, r, _| {
        is_manifest(r, "v1").then(|| Reply::Stream {
            status: 404,
            headers: vec![("Content-Type".into(), "text/plain".into())],
            length: None,
            total: GIB,
        })
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
    assert!(e.message().len() < 2000, "{e}");
    let sent = fake.streamed().await;
    assert!(sent < STOPPED_EARLY, "the fake sent {sent} bytes");
}

/// The referrers tag's index listing `count` times the signature manifest
/// `digest` of `size` bytes.
fn index_of(digest: &str, size: usize, count: usize) -> Reply {
    let entry = serde_json::json!({
        "mediaType": MANIFEST_TYPE,
        "digest": digest,
        "size": size,
        "artifactType": toolhost_distribution::client::SIGNATURE_ARTIFACT_TYPE,
    });
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": INDEX_TYPE,
        "manifests": vec![entry; count],
    });
    Reply::ok(INDEX_TYPE, serde_json::to_vec(&index).unwrap())
}

#[tokio::test]
async fn signatures_past_their_caps_are_refused() {
    // A signature manifest declaring its layer past 64 KiB: the layer is
    // never requested.
    let artifact = Arc::new(Artifact::new());
    let text = String::from_utf8(artifact.signature_manifest.clone()).unwrap();
    let size = format!(r#""size":{}"#, artifact.signature_text.len());
    assert!(text.contains(&size));
    let big = text.replace(&size, r#""size":65537"#).into_bytes();
    let big_digest = sha256(&big);
    let signature_blob = sha256(artifact.signature_text.as_bytes());
    let (d, b) = (big_digest.clone(), big.clone());
    let fake = serve(artifact, OPEN, move |a, r, _| {
        if is_manifest(r, &a.manifest_digest.replace(':', "-")) {
            return Some(index_of(&d, b.len(), 1));
        }
        is_manifest(r, &d).then(|| Reply::ok(MANIFEST_TYPE, b.clone()))
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    assert!(e.with_causes().contains("65537"), "{e}");
    assert!(fake.asked(&big_digest));
    assert!(!fake.asked(&signature_blob));

    // More signatures than are read: none is fetched.
    let artifact = Arc::new(Artifact::new());
    let signature_manifest = artifact.signature_manifest_digest.clone();
    let fake = serve(artifact, OPEN, |a, r, _| {
        is_manifest(r, &a.manifest_digest.replace(':', "-")).then(|| {
            index_of(
                &a.signature_manifest_digest,
                a.signature_manifest.len(),
                MAX_SIGNATURES + 1,
            )
        })
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    assert!(!fake.asked(&signature_manifest));
}

#[tokio::test]
async fn an_endless_redirect_is_refused() {
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact, OPEN, |a, r, addr| {
        (is_blob(r, &a.component_digest) || r.path.starts_with("/storage/")).then(|| Reply::Full {
            status: 302,
            headers: vec![(
                "Location".into(),
                format!("http://{addr}/storage/{}", r.path.len()),
            )],
            body: Vec::new(),
        })
    })
    .await;
    let e = pull(&default_client(), &fake, &format!("{REPO}:v1"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Registry, "{e}");
    let redirects = fake
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/storage/"))
        .count();
    assert!(
        redirects <= toolhost_distribution::registry::MAX_REDIRECTS,
        "{redirects}"
    );
}
