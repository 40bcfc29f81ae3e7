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
use crate::signature::Signature;

/// The `artifactType` of a signature manifest.
pub const SIGNATURE_ARTIFACT_TYPE: &str = "application/vnd.toolhost.signature.minisign.v1";
/// The media type of a signature layer (the `.minisig` text).
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.toolhost.signature.minisign.v1+text";
/// The annotation on a signature manifest naming the key that signed.
pub const KEY_ID_ANNOTATION: &str = "dev.toolhost.minisign.key-id";
/// The OCI empty descriptor's media type (the config of a signature).
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The most bytes accepted for a signature layer.
const MAX_SIGNATURE_BYTES: i64 = 64 << 10;

/// How the client reaches registries.
#[derive(Debug, Clone, Default)]
pub struct ClientOptions {
    /// Registries (`HOST[:PORT]` or `HOST`) spoken to in plain HTTP besides
    /// the loopback ones. Every other registry is HTTPS only.
    pub insecure: Vec<String>,
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
        // The workspace's one crypto provider; a no-op when one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        OciClient { options }
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

    /// Pulls the component at `reference` with its signatures.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::DigestMismatch`] when the manifest or the layer does not
    /// have its digest (naming both values); [`ErrorKind::NotWasm`] when the
    /// artifact is not in the CNCF Wasm layout; the registry's errors
    /// ([`ErrorKind::Unreachable`], [`ErrorKind::NotFound`], …).
    pub async fn pull(&self, reference: &OciReference) -> Result<Pulled> {
        let (client, auth) = self.client(reference)?;
        let err = |e| map_error(reference, e);
        let oci = reference.as_oci();
        let (manifest, digest) = client.pull_image_manifest(oci, &auth).await.map_err(err)?;
        check_layout(reference, &manifest)?;
        let mut bytes = Vec::new();
        client
            .pull_blob(oci, &manifest.layers[0], &mut bytes)
            .await
            .map_err(err)?;
        let pinned = reference.with_digest(&digest);
        let referrers = client
            .pull_referrers(pinned.as_oci(), Some(SIGNATURE_ARTIFACT_TYPE))
            .await
            .map_err(err)?;
        let mut signatures = Vec::new();
        for entry in referrers.manifests {
            let at = reference.with_digest(&entry.digest);
            let (sig_manifest, _) = client
                .pull_image_manifest(at.as_oci(), &auth)
                .await
                .map_err(err)?;
            let layer = sig_manifest
                .layers
                .iter()
                .find(|l| l.media_type == SIGNATURE_MEDIA_TYPE && l.size <= MAX_SIGNATURE_BYTES)
                .ok_or_else(|| {
                    DistributionError::new(
                        ErrorKind::BadSignature,
                        format!(
                            "the signature {} of {reference} has no minisign layer",
                            entry.digest
                        ),
                    )
                })?;
            let mut text = Vec::new();
            client.pull_blob(oci, layer, &mut text).await.map_err(err)?;
            let text = String::from_utf8(text).map_err(|_| {
                DistributionError::new(
                    ErrorKind::BadSignature,
                    format!("the signature {} is not text", entry.digest),
                )
            })?;
            signatures.push(
                Signature::parse(&text).map_err(|e| e.context(format!("the signature {}", entry.digest)))?,
            );
        }
        Ok(Pulled {
            bytes,
            digest,
            signatures,
        })
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
        OciDistributionError::AuthenticationFailure(_) | OciDistributionError::UnauthorizedError { .. } => {
            (ErrorKind::Unauthorized, unauthorized(registry, &error))
        }
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
            (ErrorKind::Unauthorized, unauthorized(registry, &error))
        }
        OciDistributionError::ServerError { code: 404, .. } => {
            (ErrorKind::NotFound, format!("{reference} is not in the registry"))
        }
        OciDistributionError::ServerError { code: 401 | 403, .. } => {
            (ErrorKind::Unauthorized, unauthorized(registry, &error))
        }
        _ => (ErrorKind::Registry, format!("{reference}: {error}")),
    };
    DistributionError::new(kind, message)
}

fn unauthorized(registry: &str, error: &OciDistributionError) -> String {
    format!(
        "the registry {registry} refused access ({error}); give credentials with `docker login {registry}` (the Docker config file, or DOCKER_CONFIG) or {} and {}",
        crate::auth::USERNAME_ENV,
        crate::auth::PASSWORD_ENV
    )
}

/// An error and its sources, `a: b: c`.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        source = e.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_only_for_loopback_and_the_insecure_list() {
        let client = OciClient::new(ClientOptions {
            insecure: vec!["registry.lan:5000".into(), "lab.example".into()],
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
