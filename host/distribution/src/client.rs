//! Pushing and pulling components, and their signatures, with `oci-client`.
//!
//! A signature travels as an OCI 1.1 **referrer** of the component's
//! manifest, the way Notation and ORAS attach signatures: an image manifest
//! whose `artifactType` is [`SIGNATURE_ARTIFACT_TYPE`], whose `subject` is
//! the component's manifest, whose config is the OCI empty descriptor and
//! whose one layer is the `.minisig` text ([`SIGNATURE_MEDIA_TYPE`]). For
//! registries without the referrers API (the CNCF distribution server 2.x,
//! Debian's `docker-registry`), the referrers index is also kept under the
//! referrers tag schema, the tag `sha256-<digest of the component's
//! manifest>`; reading uses the API where it exists and that tag otherwise.
//!
//! **Pulling** reads registries through [`crate::registry`]: every response
//! body through one bounded reader (manifests and referrers indexes at most
//! [`MAX_MANIFEST_BYTES`], the
//! component at most the size its manifest declares and at most
//! [`ClientOptions::max_blob_bytes`], signatures at most
//! [`MAX_SIGNATURE_BYTES`]), the whole pull under one deadline,
//! [`ClientOptions::pull_timeout`]. **Pushing** still goes through
//! `oci-client`, which reads the registry's answers (upload locations,
//! errors, the referrers tag's index) without a bound: it is the operator
//! uploading to a registry of their choosing, on their command, not a host
//! loading what a registry sends.

use std::collections::BTreeMap;
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{
    ImageIndexEntry, OCI_IMAGE_INDEX_MEDIA_TYPE, OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageIndex,
    OciImageManifest, OciManifest,
};
use oci_client::secrets::RegistryAuth;
use sha2::Digest as _;

use crate::artifact::{CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, WasmConfig, check_component};
use crate::error::{DistributionError, ErrorKind, Result};
use crate::reference::OciReference;
use crate::registry::{
    Excess, INDEX_ACCEPT, MANIFEST_ACCEPT, MAX_MANIFEST_BYTES, MAX_SIGNATURES, Session, chain,
    install_crypto_provider, is_error_envelope, read_body, read_error_body, status_error,
};
use crate::signature::{MAX_SIGNATURE_BYTES, Signature};

/// The `artifactType` of a signature manifest.
pub const SIGNATURE_ARTIFACT_TYPE: &str = "application/vnd.toolhost.signature.minisign.v1";
/// The media type of a signature layer (the `.minisig` text).
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.toolhost.signature.minisign.v1+text";
/// The annotation on a signature manifest naming the key that signed.
pub const KEY_ID_ANNOTATION: &str = "dev.toolhost.minisign.key-id";
/// The OCI empty descriptor's media type (the config of a signature).
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";

/// The default [`ClientOptions::max_blob_bytes`]: 64 MiB, several times the
/// largest component toolhost runs (an interpreter with its standard
/// library is about 20 MiB).
pub const DEFAULT_MAX_BLOB_BYTES: u64 = 64 << 20;

/// The default [`ClientOptions::pull_timeout`]: 300 s, a 64 MiB component
/// over a slow (2 Mbit/s) link, with room to spare.
pub const DEFAULT_PULL_TIMEOUT: Duration = Duration::from_secs(300);

/// How the client reaches registries, and how much it takes from them.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Registries (`HOST[:PORT]` or `HOST`) spoken to in plain HTTP besides
    /// the loopback ones. Every other registry is HTTPS only.
    pub insecure: Vec<String>,
    /// The cap of a pulled component, in bytes: a manifest declaring a
    /// larger layer is refused ([`ErrorKind::TooLarge`]) before the layer
    /// is requested, and the pull cache refuses a cached blob past it.
    /// Default [`DEFAULT_MAX_BLOB_BYTES`].
    pub max_blob_bytes: u64,
    /// The one deadline of a pull: authentication, manifest, blob,
    /// referrers, signatures and redirects together; past it the pull
    /// stops with [`ErrorKind::Timeout`]. Default [`DEFAULT_PULL_TIMEOUT`].
    pub pull_timeout: Duration,
}

impl Default for ClientOptions {
    /// No `insecure` registry, [`DEFAULT_MAX_BLOB_BYTES`] and
    /// [`DEFAULT_PULL_TIMEOUT`].
    fn default() -> Self {
        ClientOptions {
            insecure: Vec::new(),
            max_blob_bytes: DEFAULT_MAX_BLOB_BYTES,
            pull_timeout: DEFAULT_PULL_TIMEOUT,
        }
    }
}

/// Pushes and pulls components; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct OciClient {
    options: ClientOptions,
}

/// What [`OciClient::push`] pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    /// The component's manifest digest (`sha256:…`).
    pub digest: String,
    /// The reference by digest (`oci://HOST/REPO@sha256:…`).
    pub pinned: OciReference,
    /// How many signatures were attached.
    pub signatures: usize,
}

/// What [`OciClient::pull`] pulled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    /// The component's bytes (their sha256 checked against the manifest).
    pub bytes: Vec<u8>,
    /// The manifest digest (checked against the reference's, if it names one).
    pub digest: String,
    /// The signatures attached to it.
    pub signatures: Vec<Signature>,
}

impl OciClient {
    /// A client with `options`.
    pub fn new(options: ClientOptions) -> OciClient {
        install_crypto_provider();
        OciClient { options }
    }

    /// Its options.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    /// Whether `reference`'s registry is spoken to in plain HTTP.
    pub fn plain_http(&self, reference: &OciReference) -> bool {
        reference.is_loopback()
            || self
                .options
                .insecure
                .iter()
                .any(|i| i == reference.registry() || i == reference.host())
    }

    fn client(&self, reference: &OciReference) -> Result<(oci_client::Client, RegistryAuth)> {
        let protocol = if self.plain_http(reference) {
            ClientProtocol::HttpsExcept(vec![reference.registry().to_string()])
        } else {
            ClientProtocol::Https
        };
        let config = ClientConfig {
            protocol,
            connect_timeout: Some(Duration::from_secs(10)),
            // Push only (pulls are bounded in crate::registry): a registry
            // that stops answering fails the push after this idle time.
            read_timeout: Some(Duration::from_secs(120)),
            platform_resolver: None,
            ..ClientConfig::default()
        };
        let client = oci_client::Client::try_from(config).map_err(|e| map_error(reference, e))?;
        Ok((client, crate::auth::credentials(reference.registry())?))
    }

    /// Pushes the component in `bytes` to `reference` (a tag; a digest
    /// reference is refused, the digest being the registry's to compute),
    /// then attaches each of `signatures`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::NotWasm`] for bytes that are not a component;
    /// [`ErrorKind::Reference`] for a digest reference; the registry's
    /// errors ([`ErrorKind::Unreachable`], [`ErrorKind::Unauthorized`], …).
    pub async fn push(
        &self,
        reference: &OciReference,
        bytes: &[u8],
        signatures: &[Signature],
    ) -> Result<Pushed> {
        if reference.digest().is_some() {
            return Err(DistributionError::new(
                ErrorKind::Reference,
                format!("push to a tag, not a digest: {reference}"),
            ));
        }
        check_component(bytes)?;
        let (client, auth) = self.client(reference)?;
        let layer = ImageLayer::new(bytes.to_vec(), LAYER_MEDIA_TYPE.to_string(), None);
        let config = WasmConfig::for_component(bytes, layer.sha256_digest())?;
        let config = Config::new(
            serde_json::to_vec(&config).map_err(|e| DistributionError::new(ErrorKind::Io, e.to_string()))?,
            CONFIG_MEDIA_TYPE.to_string(),
            None,
        );
        let mut manifest = OciImageManifest::build(std::slice::from_ref(&layer), &config, None);
        manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_string());
        let oci = reference.as_oci();
        client.store_auth_if_needed(oci.resolve_registry(), &auth).await;
        let err = |e| map_error(reference, e);
        client
            .push_blob(oci, layer.data.clone(), &manifest.layers[0].digest)
            .await
            .map_err(err)?;
        client
            .push_blob(oci, config.data.clone(), &manifest.config.digest)
            .await
            .map_err(err)?;
        let (digest, size) = push_manifest(&client, oci, &OciManifest::Image(manifest))
            .await
            .map_err(err)?;
        let pinned = reference.with_digest(&digest);
        let subject = OciDescriptor {
            media_type: OCI_IMAGE_MEDIA_TYPE.to_string(),
            digest: digest.clone(),
            size,
            ..OciDescriptor::default()
        };
        for signature in signatures {
            self.attach(&client, reference, &subject, signature).await?;
        }
        Ok(Pushed {
            digest,
            pinned,
            signatures: signatures.len(),
        })
    }

    /// Attaches `signature` to the component at `reference` (by tag or
    /// digest) as a referrer of its manifest.
    ///
    /// # Errors
    ///
    /// The registry's errors; [`ErrorKind::NotWasm`] when `reference` is not
    /// a component.
    pub async fn attach_signature(&self, reference: &OciReference, signature: &Signature) -> Result<String> {
        let (client, auth) = self.client(reference)?;
        let oci = reference.as_oci();
        // The subject descriptor names the bytes the registry holds.
        let (raw, digest) = client
            .pull_manifest_raw(oci, &auth, &[OCI_IMAGE_MEDIA_TYPE])
            .await
            .map_err(|e| map_error(reference, e))?;
        let manifest: OciImageManifest = serde_json::from_slice(&raw).map_err(|e| {
            DistributionError::new(
                ErrorKind::NotWasm,
                format!("{reference} is not an OCI image manifest: {e}"),
            )
        })?;
        check_layout(reference, &manifest)?;
        let subject = OciDescriptor {
            media_type: OCI_IMAGE_MEDIA_TYPE.to_string(),
            digest,
            size: raw.len() as i64,
            ..OciDescriptor::default()
        };
        self.attach(&client, reference, &subject, signature).await
    }

    async fn attach(
        &self,
        client: &oci_client::Client,
        reference: &OciReference,
        subject: &OciDescriptor,
        signature: &Signature,
    ) -> Result<String> {
        let err = |e| map_error(reference, e);
        let oci = reference.as_oci();
        let empty = b"{}".to_vec();
        let empty_digest = sha256(&empty);
        client
            .push_blob(oci, empty.clone(), &empty_digest)
            .await
            .map_err(err)?;
        let text = signature.text().as_bytes().to_vec();
        let text_digest = sha256(&text);
        client
            .push_blob(oci, text.clone(), &text_digest)
            .await
            .map_err(err)?;
        let key_id = signature.key_id().to_string();
        let annotations = BTreeMap::from([(KEY_ID_ANNOTATION.to_string(), key_id)]);
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(OCI_IMAGE_MEDIA_TYPE.to_string()),
            artifact_type: Some(SIGNATURE_ARTIFACT_TYPE.to_string()),
            config: OciDescriptor {
                media_type: EMPTY_MEDIA_TYPE.to_string(),
                digest: empty_digest,
                size: empty.len() as i64,
                ..OciDescriptor::default()
            },
            layers: vec![OciDescriptor {
                media_type: SIGNATURE_MEDIA_TYPE.to_string(),
                digest: text_digest,
                size: text.len() as i64,
                ..OciDescriptor::default()
            }],
            subject: Some(subject.clone()),
            annotations: Some(annotations.clone()),
        };
        let by_digest = |d: &str| reference.with_digest(d);
        let body = serde_json::to_vec(&manifest)
            .map_err(|e| DistributionError::new(ErrorKind::Io, e.to_string()))?;
        let digest = sha256(&body);
        client
            .push_manifest_raw(
                by_digest(&digest).as_oci(),
                body.clone(),
                OCI_IMAGE_MEDIA_TYPE.parse().expect("a valid header"),
            )
            .await
            .map_err(err)?;
        // The referrers tag schema, for registries without the API.
        let tag = subject.digest.replace(':', "-");
        let tagged = reference.with_tag(&tag);
        let mut index = match client
            .pull_manifest(tagged.as_oci(), &RegistryAuth::Anonymous)
            .await
        {
            Ok((OciManifest::ImageIndex(index), _)) => index,
            _ => OciImageIndex {
                schema_version: 2,
                media_type: Some(OCI_IMAGE_INDEX_MEDIA_TYPE.to_string()),
                manifests: Vec::new(),
                artifact_type: None,
                annotations: None,
            },
        };
        if !index.manifests.iter().any(|m| m.digest == digest) {
            index.manifests.push(ImageIndexEntry {
                media_type: OCI_IMAGE_MEDIA_TYPE.to_string(),
                digest: digest.clone(),
                size: body.len() as i64,
                platform: None,
                annotations: Some(annotations),
                artifact_type: Some(SIGNATURE_ARTIFACT_TYPE.to_string()),
            });
            push_manifest(client, tagged.as_oci(), &OciManifest::ImageIndex(index))
                .await
                .map_err(err)?;
        }
        Ok(digest)
    }

    /// Pulls the component at `reference` with its signatures, reading
    /// the registry only through [`crate::registry`]'s bounded reader and
    /// within [`ClientOptions::pull_timeout`] in all.
    ///
    /// Guarantees, for what it returns: the manifest's sha256 over the exact
    /// bytes received is the reference's digest (when it names one); the
    /// manifest is in the CNCF Wasm layout; the component's bytes are
    /// exactly the size and sha256 its manifest declares; each signature is
    /// a minisign signature, at most
    /// [`MAX_SIGNATURE_BYTES`], with
    /// the digest its manifest declares (whether it verifies is
    /// [`TrustedKeys::check`](crate::TrustedKeys::check)'s to say). Whatever
    /// the registry sends, at most a cap plus one chunk of any response is
    /// held in memory.
    ///
    /// Signatures are the referrers of the manifest whose `artifactType` is
    /// [`SIGNATURE_ARTIFACT_TYPE`] (filtered here too, for registries that
    /// ignore the filter), from the referrers API, or from the referrers tag
    /// `sha256-<hex>` when the API answers `404` (no such tag: no
    /// signatures).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::DigestMismatch`] when the manifest or the layer does not
    /// have its digest, or the layer not its declared size (naming both
    /// values); [`ErrorKind::TooLarge`] for a manifest, referrers index,
    /// token or signature past its cap, a layer declared larger than
    /// [`ClientOptions::max_blob_bytes`] (refused before it is requested)
    /// or more than [`MAX_SIGNATURES`]
    /// signatures; [`ErrorKind::Timeout`] past the deadline;
    /// [`ErrorKind::NotWasm`] when the artifact is not in the CNCF Wasm
    /// layout; the registry's errors ([`ErrorKind::Unreachable`],
    /// [`ErrorKind::NotFound`], [`ErrorKind::Unauthorized`], …).
    pub async fn pull(&self, reference: &OciReference) -> Result<Pulled> {
        let deadline = self.options.pull_timeout;
        match tokio::time::timeout(deadline, self.pull_within(reference)).await {
            Ok(pulled) => pulled,
            Err(_) => Err(DistributionError::new(
                ErrorKind::Timeout,
                format!(
                    "the registry {} did not finish serving {reference} within the pull deadline of {} (pull_timeout); it is too slow or hangs",
                    reference.registry(),
                    seconds(deadline)
                ),
            )),
        }
    }

    /// [`OciClient::pull`] without its deadline.
    async fn pull_within(&self, reference: &OciReference) -> Result<Pulled> {
        // The Docker config is a file and its credential helper a process:
        // both block, so off the async workers.
        let registry = reference.registry().to_string();
        let credentials = tokio::task::spawn_blocking(move || crate::auth::credentials(&registry))
            .await
            .map_err(|e| {
                DistributionError::new(
                    ErrorKind::Credentials,
                    format!("reading the credentials failed: {e}"),
                )
            })??;
        let mut session = Session::new(reference, self.plain_http(reference), credentials)?;

        // The manifest, by digest or tag.
        let at = reference.digest().or(reference.tag()).unwrap_or("latest");
        let (raw, digest) =
            fetch_manifest(&mut session, reference, at, MANIFEST_ACCEPT, "the manifest").await?;
        if let Some(expected) = reference.digest()
            && expected != digest
        {
            return Err(DistributionError::new(
                ErrorKind::DigestMismatch,
                format!(
                    "{reference}: the registry sent a manifest whose digest is {digest}, but {expected} was expected; refusing it (the artifact was tampered with, or the reference is wrong)"
                ),
            ));
        }
        let manifest = parse_image_manifest(reference, &raw)?;
        check_layout(reference, &manifest)?;

        // The component, within its declared size and the cap.
        let layer = &manifest.layers[0];
        let size = declared_size(
            reference,
            layer,
            (self.options.max_blob_bytes, "max_blob_bytes"),
            "the component",
        )?;
        let bytes = fetch_blob(
            &mut session,
            reference,
            &layer.digest,
            size,
            "the component's layer",
        )
        .await?;

        // Its signatures.
        let index = referrers(&mut session, reference, &digest).await?;
        let entries: Vec<_> = index
            .manifests
            .into_iter()
            .filter(|m| m.artifact_type.as_deref() == Some(SIGNATURE_ARTIFACT_TYPE))
            .collect();
        if entries.len() > MAX_SIGNATURES {
            return Err(DistributionError::new(
                ErrorKind::TooLarge,
                format!(
                    "{reference} has {} signatures attached, more than the {MAX_SIGNATURES} read; remove the stale ones from the registry",
                    entries.len()
                ),
            ));
        }
        let mut signatures = Vec::with_capacity(entries.len());
        for entry in entries {
            // The digest goes into a URL and messages: checked first.
            check_digest_syntax(reference, &entry.digest, "a signature in the referrers index")?;
            let what = format!("the signature {}", entry.digest);
            let (raw, _) = fetch_manifest(
                &mut session,
                reference,
                &entry.digest,
                OCI_IMAGE_MEDIA_TYPE,
                &format!("the manifest of {what}"),
            )
            .await?;
            let actual = sha256(&raw);
            if actual != entry.digest {
                return Err(DistributionError::new(
                    ErrorKind::DigestMismatch,
                    format!(
                        "{reference}: the registry sent a manifest whose digest is {actual} for {what}; refusing it"
                    ),
                ));
            }
            let sig_manifest = parse_image_manifest(reference, &raw).map_err(|e| {
                DistributionError::new(
                    ErrorKind::BadSignature,
                    format!("{what} of {reference}: {}", e.message()),
                )
            })?;
            let layer = sig_manifest
                .layers
                .iter()
                .find(|l| l.media_type == SIGNATURE_MEDIA_TYPE)
                .ok_or_else(|| {
                    DistributionError::new(
                        ErrorKind::BadSignature,
                        format!("{what} of {reference} has no minisign layer"),
                    )
                })?;
            let size = declared_size(
                reference,
                layer,
                (MAX_SIGNATURE_BYTES, "the cap of a signature"),
                &what,
            )?;
            let text = fetch_blob(&mut session, reference, &layer.digest, size, &what).await?;
            let text = String::from_utf8(text).map_err(|_| {
                DistributionError::new(
                    ErrorKind::BadSignature,
                    format!("{what} of {reference} is not text"),
                )
            })?;
            signatures.push(Signature::parse(&text).map_err(|e| e.context(&what))?);
        }
        Ok(Pulled {
            bytes,
            digest,
            signatures,
        })
    }
}

/// `300 s`, `1.5 s`.
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// Refuses a digest that is not `sha256:` and 64 lower-case hex digits: it
/// goes into a URL, and sha256 is the one algorithm checked here.
fn check_digest_syntax(reference: &OciReference, digest: &str, what: &str) -> Result<()> {
    let ok = digest
        .strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
    if ok {
        return Ok(());
    }
    Err(DistributionError::new(
        ErrorKind::Registry,
        format!(
            "{reference}: {what} has the digest {:?}, which is not a sha256 digest (the one algorithm toolhost checks)",
            digest.chars().take(100).collect::<String>()
        ),
    ))
}

/// The size `layer` declares, refused when negative or past `cap` (named
/// `cap_name` in the message).
fn declared_size(
    reference: &OciReference,
    layer: &OciDescriptor,
    (cap, cap_name): (u64, &str),
    what: &str,
) -> Result<u64> {
    let size = u64::try_from(layer.size).map_err(|_| {
        DistributionError::new(
            ErrorKind::Registry,
            format!(
                "{reference}: the manifest declares the size {} for {what}",
                layer.size
            ),
        )
    })?;
    if size > cap {
        return Err(DistributionError::new(
            ErrorKind::TooLarge,
            format!(
                "{reference}: the manifest declares {size} bytes for {what}, more than the cap of {cap} bytes ({cap_name}); not downloading it"
            ),
        ));
    }
    Ok(size)
}

/// The manifest at `at` (a tag or a digest) as the exact bytes received
/// (at most [`MAX_MANIFEST_BYTES`]), with their sha256.
async fn fetch_manifest(
    session: &mut Session<'_>,
    reference: &OciReference,
    at: &str,
    accept: &str,
    what: &str,
) -> Result<(Vec<u8>, String)> {
    let url = session.url(&format!("/v2/{}/manifests/{at}", reference.repository()));
    let response = session.get_ok(&url, Some(accept), what).await?;
    let header = response
        .headers()
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let raw = read_body(reference, response, MAX_MANIFEST_BYTES, |excess| {
        manifest_too_large(reference, what, excess)
    })
    .await?;
    let digest = sha256(&raw);
    // The registry's own digest, when it gives one in sha256, must agree
    // (another algorithm's cannot be checked here, and is not needed).
    if let Some(header) = header
        && header.starts_with("sha256:")
        && header != digest
    {
        return Err(DistributionError::new(
            ErrorKind::DigestMismatch,
            format!(
                "{reference}: the registry says {what} has the digest {header}, but the bytes it sent have {digest}; refusing them"
            ),
        ));
    }
    Ok((raw, digest))
}

fn manifest_too_large(reference: &OciReference, what: &str, excess: Excess) -> DistributionError {
    DistributionError::new(
        ErrorKind::TooLarge,
        format!(
            "{reference}: the registry sent more than {MAX_MANIFEST_BYTES} bytes for {what} ({excess}); a manifest is at most 4 MiB, refusing it"
        ),
    )
}

/// The blob `digest` of exactly `size` bytes with that sha256; reading
/// stops as soon as the body passes `size`.
async fn fetch_blob(
    session: &mut Session<'_>,
    reference: &OciReference,
    digest: &str,
    size: u64,
    what: &str,
) -> Result<Vec<u8>> {
    check_digest_syntax(reference, digest, what)?;
    let url = session.url(&format!("/v2/{}/blobs/{digest}", reference.repository()));
    let response = session.get_ok(&url, None, &format!("{what} ({digest})")).await?;
    let bytes = read_body(reference, response, size, |excess| {
        DistributionError::new(
            ErrorKind::DigestMismatch,
            format!(
                "{reference}: the registry sent more than the {size} bytes the manifest declares for {what} {digest} ({excess}); refusing it"
            ),
        )
    })
    .await?;
    if (bytes.len() as u64) < size {
        return Err(DistributionError::new(
            ErrorKind::DigestMismatch,
            format!(
                "{reference}: the registry sent {} bytes for {what}, where the manifest declares {size}; refusing them",
                bytes.len()
            ),
        ));
    }
    let actual = sha256(&bytes);
    if actual != digest {
        return Err(DistributionError::new(
            ErrorKind::DigestMismatch,
            format!(
                "{reference}: the registry sent bytes whose digest is {actual} for {what}, but {digest} was expected; refusing them (the artifact was tampered with, or the reference is wrong)"
            ),
        ));
    }
    Ok(bytes)
}

/// The referrers index of the manifest `digest`: from the referrers API,
/// or, when it answers `404` (registries without it), from the referrers
/// tag `sha256-<hex>` (none there: no referrers), as `oci-client` does.
async fn referrers(
    session: &mut Session<'_>,
    reference: &OciReference,
    digest: &str,
) -> Result<OciImageIndex> {
    let what = format!("the referrers of {digest}");
    let mut url =
        reqwest::Url::parse(&session.url(&format!("/v2/{}/referrers/{digest}", reference.repository())))
            .map_err(|e| DistributionError::new(ErrorKind::Reference, format!("{reference}: {e}")))?;
    url.query_pairs_mut()
        .append_pair("artifactType", SIGNATURE_ARTIFACT_TYPE);
    let response = session.get(url.as_str(), Some(INDEX_ACCEPT)).await?;
    let raw = match response.status() {
        reqwest::StatusCode::OK => {
            read_body(reference, response, MAX_MANIFEST_BYTES, |excess| {
                manifest_too_large(reference, &what, excess)
            })
            .await?
        }
        reqwest::StatusCode::NOT_FOUND => {
            drop(response);
            let tag = digest.replace(':', "-");
            let tag_what = format!("the referrers tag {tag}");
            let url = session.url(&format!("/v2/{}/manifests/{tag}", reference.repository()));
            let response = session.get(&url, Some(MANIFEST_ACCEPT)).await?;
            let status = response.status();
            if status == reqwest::StatusCode::OK {
                read_body(reference, response, MAX_MANIFEST_BYTES, |excess| {
                    manifest_too_large(reference, &tag_what, excess)
                })
                .await?
            } else if status == reqwest::StatusCode::NOT_FOUND {
                return Ok(empty_index());
            } else {
                let body = read_error_body(reference, response).await;
                // As oci-client: a registry's error envelope under another
                // 4xx (but 401) means no referrers tag either.
                if status.is_client_error()
                    && status != reqwest::StatusCode::UNAUTHORIZED
                    && is_error_envelope(&body)
                {
                    return Ok(empty_index());
                }
                return Err(status_error(reference, status, &body, &tag_what));
            }
        }
        _ => return Err(session.status_error(response, &what).await),
    };
    match serde_json::from_slice::<OciManifest>(&raw) {
        Ok(OciManifest::ImageIndex(index)) => Ok(index),
        Ok(OciManifest::Image(_)) => Err(DistributionError::new(
            ErrorKind::Registry,
            format!("{reference}: {what} is an image manifest, where an image index was expected"),
        )),
        Err(e) => Err(DistributionError::new(
            ErrorKind::Registry,
            format!("{reference}: {what} is not an image index: {e}"),
        )),
    }
}

fn empty_index() -> OciImageIndex {
    OciImageIndex {
        schema_version: 2,
        media_type: Some(OCI_IMAGE_INDEX_MEDIA_TYPE.to_string()),
        manifests: Vec::new(),
        artifact_type: None,
        annotations: None,
    }
}

/// `raw` as an OCI image manifest; an index or anything else is not a
/// component.
fn parse_image_manifest(reference: &OciReference, raw: &[u8]) -> Result<OciImageManifest> {
    let not = |why: String| {
        DistributionError::new(
            ErrorKind::NotWasm,
            format!("{reference} is not a WebAssembly component artifact: {why}"),
        )
    };
    match serde_json::from_slice::<OciManifest>(raw) {
        Ok(OciManifest::Image(manifest)) if manifest.schema_version == 2 => Ok(manifest),
        Ok(OciManifest::Image(manifest)) => Err(not(format!(
            "its manifest has the schema version {}, not 2",
            manifest.schema_version
        ))),
        Ok(OciManifest::ImageIndex(_)) => Err(not(
            "it is an image index (a multi-platform image), not an image manifest".to_string(),
        )),
        Err(e) => Err(not(format!("its manifest is not an OCI image manifest: {e}"))),
    }
}

/// Pushes `manifest` to `reference` (a tag or a digest) as the bytes whose
/// digest it returns, with their size.
async fn push_manifest(
    client: &oci_client::Client,
    reference: &oci_client::Reference,
    manifest: &OciManifest,
) -> std::result::Result<(String, i64), OciDistributionError> {
    let body = serde_json::to_vec(manifest)?;
    let digest = sha256(&body);
    let content_type = manifest.content_type().parse().expect("a valid header");
    let size = body.len() as i64;
    client.push_manifest_raw(reference, body, content_type).await?;
    Ok((digest, size))
}

fn sha256(bytes: &[u8]) -> String {
    let hash = sha2::Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in hash.iter() {
        hex.push_str(&format!("{byte:02x}"));
    }
    format!("sha256:{hex}")
}

/// Refuses an artifact that is not in the CNCF Wasm layout.
fn check_layout(reference: &OciReference, manifest: &OciImageManifest) -> Result<()> {
    let layers: Vec<&str> = manifest.layers.iter().map(|l| l.media_type.as_str()).collect();
    if manifest.config.media_type != CONFIG_MEDIA_TYPE || layers != [LAYER_MEDIA_TYPE] {
        return Err(DistributionError::new(
            ErrorKind::NotWasm,
            format!(
                "{reference} is not a WebAssembly component artifact: its config is {} and its layers are [{}], where a component has the config {CONFIG_MEDIA_TYPE} and one {LAYER_MEDIA_TYPE} layer",
                manifest.config.media_type,
                layers.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The typed error for an oci-client error about `reference`.
fn map_error(reference: &OciReference, error: OciDistributionError) -> DistributionError {
    use oci_client::errors::DigestError;
    let registry = reference.registry();
    let (kind, message) = match &error {
        OciDistributionError::RequestError(e) if e.is_connect() || e.is_timeout() => {
            let hint = if reference.is_loopback() {
                String::new()
            } else {
                " (a registry serving plain HTTP must be listed in `insecure`)".to_string()
            };
            (
                ErrorKind::Unreachable,
                format!("the registry {registry} cannot be reached: {}{hint}", chain(e)),
            )
        }
        OciDistributionError::RequestError(e) => (
            ErrorKind::Unreachable,
            format!("the registry {registry} failed: {}", chain(e)),
        ),
        OciDistributionError::DigestError(DigestError::VerificationError { expected, actual }) => (
            ErrorKind::DigestMismatch,
            format!(
                "{reference}: the registry sent bytes whose digest is {actual}, but {expected} was expected; refusing them (the artifact was tampered with, or the reference is wrong)"
            ),
        ),
        OciDistributionError::AuthenticationFailure(_) | OciDistributionError::UnauthorizedError { .. } => (
            ErrorKind::Unauthorized,
            crate::registry::unauthorized(registry, &error.to_string()),
        ),
        OciDistributionError::ImageManifestNotFoundError(_) => {
            (ErrorKind::NotFound, format!("{reference} is not in the registry"))
        }
        OciDistributionError::RegistryError { envelope, .. }
            if envelope.errors.iter().any(|e| {
                matches!(
                    e.code,
                    OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::BlobUnknown
                        | OciErrorCode::NotFound
                )
            }) =>
        {
            (
                ErrorKind::NotFound,
                format!("{reference} is not in the registry: {error}"),
            )
        }
        OciDistributionError::RegistryError { envelope, .. }
            if envelope
                .errors
                .iter()
                .any(|e| matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)) =>
        {
            (
                ErrorKind::Unauthorized,
                crate::registry::unauthorized(registry, &error.to_string()),
            )
        }
        OciDistributionError::ServerError { code: 404, .. } => {
            (ErrorKind::NotFound, format!("{reference} is not in the registry"))
        }
        OciDistributionError::ServerError { code: 401 | 403, .. } => (
            ErrorKind::Unauthorized,
            crate::registry::unauthorized(registry, &error.to_string()),
        ),
        _ => (ErrorKind::Registry, format!("{reference}: {error}")),
    };
    DistributionError::new(kind, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_for_loopback_and_the_insecure_list() {
        let client = OciClient::new(ClientOptions {
            insecure: vec!["registry.lan:5000".into(), "lab.example".into()],
            ..ClientOptions::default()
        });
        let plain = |r: &str| client.plain_http(&OciReference::parse(r).unwrap());
        assert!(plain("oci://127.0.0.1:5000/a:v1"));
        assert!(plain("oci://localhost:5000/a:v1"));
        assert!(plain("oci://registry.lan:5000/a:v1"));
        assert!(
            plain("oci://lab.example:443/a:v1"),
            "a host listed without its port"
        );
        assert!(
            !plain("oci://registry.lan:5001/a:v1"),
            "another port of a listed registry"
        );
        assert!(!plain("oci://registry.example.com/a:v1"));
        assert!(
            !plain("oci://10.0.0.8:5000/a:v1"),
            "a private address is not loopback"
        );
    }
}
