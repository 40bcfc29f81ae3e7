//! A well-behaved registry served by the fake: a component in the CNCF
//! Wasm layout, its signatures as referrers, with or without the referrers
//! API, behind a Bearer token challenge or open.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use sha2::Digest as _;
use toolhost_distribution::client::{SIGNATURE_ARTIFACT_TYPE, SIGNATURE_MEDIA_TYPE};
use toolhost_distribution::{ClientOptions, OciClient, PublicKey, Signature, TrustedKeys};

use crate::fake::{Fake, Reply, Request};

pub const REPO: &str = "tools/hello";
pub const TOKEN: &str = "good-token";
pub const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
pub const INDEX_TYPE: &str = "application/vnd.oci.image.index.v1+json";

pub fn sha256(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    format!(
        "sha256:{}",
        hash.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// A client for the fake (on the loopback: plain HTTP).
pub fn client(max_blob_bytes: u64, pull_timeout: Duration) -> OciClient {
    OciClient::new(ClientOptions {
        max_blob_bytes,
        pull_timeout,
        ..ClientOptions::default()
    })
}

/// A component artifact and one signature of it, as bytes and digests.
pub struct Artifact {
    pub component: Vec<u8>,
    pub component_digest: String,
    pub manifest: Vec<u8>,
    pub manifest_digest: String,
    pub signature_text: String,
    pub signature_manifest: Vec<u8>,
    pub signature_manifest_digest: String,
    pub index: Vec<u8>,
    pub trusted: TrustedKeys,
}

impl Artifact {
    pub fn new() -> Artifact {
        Artifact::declaring(None)
    }

    /// The artifact, its manifest declaring `size` for the component
    /// instead of its true size, when given.
    pub fn declaring(size: Option<u64>) -> Artifact {
        let mut component = b"\0asm\x0d\0\x01\0".to_vec();
        component.extend((0..5000u32).map(|i| (i % 251) as u8));
        let component_digest = sha256(&component);
        let config = br#"{"architecture":"wasm","os":"wasip2","layerDigests":[]}"#;
        let manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": {"mediaType": "application/vnd.wasm.config.v0+json", "digest": sha256(config), "size": config.len()},
            "layers": [{"mediaType": "application/wasm", "digest": component_digest, "size": size.unwrap_or(component.len() as u64)}],
        });
        let manifest = serde_json::to_vec(&manifest).unwrap();
        let manifest_digest = sha256(&manifest);

        let keys = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
        let signature_text = minisign::sign(
            Some(&keys.pk),
            &keys.sk,
            std::io::Cursor::new(&component),
            Some("timestamp:0\tfile:hello.wasm\thashed"),
            None,
        )
        .unwrap()
        .into_string();
        let key = PublicKey::parse(&keys.pk.to_base64(), "the test key").unwrap();
        let signature_manifest = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "artifactType": SIGNATURE_ARTIFACT_TYPE,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": sha256(b"{}"), "size": 2},
            "layers": [{"mediaType": SIGNATURE_MEDIA_TYPE, "digest": sha256(signature_text.as_bytes()), "size": signature_text.len()}],
            "subject": {"mediaType": MANIFEST_TYPE, "digest": manifest_digest, "size": manifest.len()},
        });
        let signature_manifest = serde_json::to_vec(&signature_manifest).unwrap();
        let signature_manifest_digest = sha256(&signature_manifest);
        // One signature, and a referrer of another type, which is skipped.
        let index = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": INDEX_TYPE,
            "manifests": [
                {"mediaType": MANIFEST_TYPE, "digest": signature_manifest_digest, "size": signature_manifest.len(), "artifactType": SIGNATURE_ARTIFACT_TYPE},
                {"mediaType": MANIFEST_TYPE, "digest": sha256(b"other"), "size": 5, "artifactType": "application/vnd.example.sbom"},
            ],
        });
        Artifact {
            component,
            component_digest,
            manifest,
            manifest_digest,
            signature_text,
            signature_manifest,
            signature_manifest_digest,
            index: serde_json::to_vec(&index).unwrap(),
            trusted: TrustedKeys::from_keys(vec![key]),
        }
    }

    /// Checks that `signatures` are this artifact's one signature, and
    /// that it verifies.
    pub fn check_signatures(&self, signatures: &[Signature]) {
        assert_eq!(signatures.len(), 1, "{signatures:?}");
        assert_eq!(signatures[0].text(), self.signature_text);
        self.trusted
            .check("hello", &self.component, signatures, true)
            .unwrap();
    }
}

/// How the well-behaved registry is set up.
#[derive(Clone, Copy)]
pub struct Setup {
    /// Ask for a Bearer token first.
    pub bearer: bool,
    /// Serve the referrers API (otherwise `404`, and the referrers tag).
    pub referrers_api: bool,
}

/// What the well-behaved registry answers `request` with (`404` with an
/// error envelope for a path it does not know).
pub fn answer(artifact: &Artifact, setup: Setup, addr: &str, request: &Request) -> Reply {
    let path = request.path.as_str();
    if path.starts_with("/token") {
        return Reply::ok("application/json", format!(r#"{{"token":"{TOKEN}"}}"#));
    }
    if setup.bearer && request.header("authorization") != Some(&format!("Bearer {TOKEN}")) {
        return Reply::Full {
            status: 401,
            headers: vec![(
                "WWW-Authenticate".into(),
                format!(
                    r#"Bearer realm="http://{addr}/token",service="fake",scope="repository:{REPO}:pull""#
                ),
            )],
            body: br#"{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}"#.to_vec(),
        };
    }
    let m = |suffix: &str| format!("/v2/{REPO}/manifests/{suffix}");
    let b = |digest: &str| format!("/v2/{REPO}/blobs/{digest}");
    let tag = artifact.manifest_digest.replace(':', "-");
    let digest_header = |body: &[u8]| ("Docker-Content-Digest".to_string(), sha256(body));
    let manifest = |body: &[u8], media: &str| Reply::Full {
        status: 200,
        headers: vec![("Content-Type".into(), media.into()), digest_header(body)],
        body: body.to_vec(),
    };
    if path == m("v1") || path == m(&artifact.manifest_digest) {
        return manifest(&artifact.manifest, MANIFEST_TYPE);
    }
    if path == b(&artifact.component_digest) {
        return Reply::ok("application/octet-stream", artifact.component.clone());
    }
    if path.starts_with(&format!("/v2/{REPO}/referrers/{}", artifact.manifest_digest)) {
        return if setup.referrers_api {
            manifest(&artifact.index, INDEX_TYPE)
        } else {
            Reply::status(404, "404 page not found\n")
        };
    }
    if path == m(&tag) && !setup.referrers_api {
        return manifest(&artifact.index, INDEX_TYPE);
    }
    if path == m(&artifact.signature_manifest_digest) {
        return manifest(&artifact.signature_manifest, MANIFEST_TYPE);
    }
    if path == b(&sha256(artifact.signature_text.as_bytes())) {
        return Reply::ok("application/octet-stream", artifact.signature_text.clone());
    }
    Reply::Full {
        status: 404,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: br#"{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}"#.to_vec(),
    }
}

/// A fake serving `artifact` as set up, where `hostile` (given the
/// artifact, the request and the fake's address) replaces the answer to
/// the requests it returns `Some` for.
pub async fn serve(
    artifact: Arc<Artifact>,
    setup: Setup,
    hostile: impl Fn(&Artifact, &Request, &str) -> Option<Reply> + Send + Sync + 'static,
) -> Fake {
    // The handler needs the address for the token realm: bound after start.
    let addr = Arc::new(std::sync::OnceLock::<String>::new());
    let a = addr.clone();
    let fake = Fake::start(move |request| {
        let addr = a.get().map(String::as_str).unwrap_or_default();
        hostile(&artifact, request, addr).unwrap_or_else(|| answer(&artifact, setup, addr, request))
    })
    .await;
    addr.set(fake.addr.to_string()).unwrap();
    fake
}

/// A switch a test flips to turn a registry hostile mid-test.
#[derive(Clone, Default)]
pub struct Mode(Arc<AtomicU8>);

impl Mode {
    pub fn get(&self) -> u8 {
        self.0.load(Ordering::SeqCst)
    }

    pub fn set(&self, mode: u8) {
        self.0.store(mode, Ordering::SeqCst);
    }
}
