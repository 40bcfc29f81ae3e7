//! The pull cache over the fake registry: its copy served when the registry
//! hangs, never when the registry's answer is refused; its files read only
//! when they are regular files within their caps.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toolhost_distribution::client::{DEFAULT_MAX_BLOB_BYTES, DEFAULT_PULL_TIMEOUT};
use toolhost_distribution::{ErrorKind, Fetched, Origin, PullCache};

use crate::fake::Reply;
use crate::registry::{Artifact, MANIFEST_TYPE, Mode, REPO, Setup, client, serve};

const OPEN: Setup = Setup {
    bearer: false,
    referrers_api: false,
};

async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), future)
        .await
        .expect("the fetch did not end within 30 s")
}

fn blob_path(dir: &Path, fetched: &Fetched) -> PathBuf {
    let hash = fetched.hash.to_string();
    dir.join("blobs")
        .join("blake3")
        .join(hash.strip_prefix("blake3:").unwrap_or(&hash))
}

fn mkfifo(path: &Path) {
    std::fs::remove_file(path).unwrap();
    let status = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn serves_its_copy_when_the_registry_hangs_and_never_when_it_sends_too_much() {
    let artifact = Arc::new(Artifact::new());
    let mode = Mode::default();
    let m = mode.clone();
    let fake = serve(artifact.clone(), OPEN, move |a, r, _| match m.get() {
        // The manifest drips, one byte every 2 s.
        1 => r.path.contains("/manifests/").then(|| Reply::Drip {
            headers: vec![("Content-Type".into(), MANIFEST_TYPE.into())],
            body: a.manifest.clone(),
            every: Duration::from_secs(2),
        }),
        // The manifest never ends.
        2 => r.path.contains("/manifests/").then(|| Reply::Stream {
            status: 200,
            headers: Vec::new(),
            length: None,
            total: 1 << 30,
        }),
        _ => None,
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let cache = PullCache::new(dir.path(), DEFAULT_MAX_BLOB_BYTES);
    let reference = fake.reference(&format!("{REPO}:v1"));
    let normal = client(DEFAULT_MAX_BLOB_BYTES, DEFAULT_PULL_TIMEOUT);

    let fetched = within(cache.fetch(&normal, &reference)).await.unwrap();
    assert_eq!(fetched.origin, Origin::Registry);
    assert_eq!(fetched.pulled.bytes, artifact.component);

    mode.set(1);
    let hasty = client(DEFAULT_MAX_BLOB_BYTES, Duration::from_secs(1));
    let cached = within(cache.fetch(&hasty, &reference)).await.unwrap();
    match &cached.origin {
        Origin::Cache { reason: Some(reason) } => assert!(reason.contains("deadline"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(cached.pulled.bytes, artifact.component);
    assert_eq!(cached.hash, fetched.hash);
    artifact.check_signatures(&cached.pulled.signatures);

    mode.set(2);
    let e = within(cache.fetch(&normal, &reference)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");

    // A registry that hangs, and no cached copy: the timeout, said so.
    mode.set(1);
    let empty = PullCache::new(dir.path().join("empty"), DEFAULT_MAX_BLOB_BYTES);
    let e = within(empty.fetch(&hasty, &reference)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.with_causes().contains("no cached copy"), "{e}");
}

#[tokio::test]
async fn refuses_cached_files_that_are_pipes_or_past_the_cap() {
    let artifact = Arc::new(Artifact::new());
    let fake = serve(artifact.clone(), OPEN, |_, _, _| None).await;
    let dir = tempfile::tempdir().unwrap();
    let cap = artifact.component.len() as u64;
    let cache = PullCache::new(dir.path(), cap);
    assert_eq!(cache.max_blob_bytes(), cap);
    let normal = client(DEFAULT_MAX_BLOB_BYTES, DEFAULT_PULL_TIMEOUT);
    let reference = fake.reference(&format!("{REPO}:v1"));
    let fetched = within(cache.fetch(&normal, &reference)).await.unwrap();
    let pinned = fake.reference(&format!("{REPO}@{}", fetched.pulled.digest));
    let blob = blob_path(dir.path(), &fetched);
    assert!(cache.lookup(&pinned).unwrap().is_some());

    // A named pipe in place of the blob: refused at once, not waited on.
    mkfifo(&blob);
    let e = within(cache.fetch(&normal, &pinned)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(
        e.with_causes().contains("named pipe") && e.with_causes().contains("delete the file"),
        "{e}"
    );

    // A blob past the cache's cap.
    std::fs::remove_file(&blob).unwrap();
    std::fs::write(&blob, vec![0u8; cap as usize + 1]).unwrap();
    let e = cache.lookup(&pinned).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    assert!(e.with_causes().contains(&blob.display().to_string()), "{e}");

    // A record that is a pipe.
    let hex = fetched.pulled.digest.strip_prefix("sha256:").unwrap();
    let record = dir
        .path()
        .join("digests")
        .join("sha256")
        .join(format!("{hex}.json"));
    mkfifo(&record);
    let e = within(cache.fetch(&normal, &pinned)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.with_causes().contains("named pipe"), "{e}");
}
