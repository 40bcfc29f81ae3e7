//! # toolhost-distribution
//!
//! How components travel between hosts: as OCI artifacts in the registries
//! operators already run, signed with minisign, and cached where they land.
//! It knows the core's identity type and nothing of wasmtime, MCP or the
//! registry of tools.
//!
//! | concept | where |
//! |---|---|
//! | `oci://HOST/REPO:TAG` and `@sha256:…` references, plain HTTP rules | [`reference`](mod@reference) |
//! | the CNCF Wasm artifact layout (config and layer media types) | [`artifact`] |
//! | pushing and pulling, signatures as OCI referrers; the blob cap and the pull deadline ([`ClientOptions`]) | [`client`] |
//! | the pull's HTTP: one bounded reader for every registry body, the caps, Bearer and Basic authentication | [`registry`] |
//! | registry credentials (environment, Docker config read bounded) | [`auth`] |
//! | detached minisign signatures, trusted keys, the policy; signature and key files read bounded | [`signature`] |
//! | the pull cache under the storage folder, serving it when the registry is down or hangs; its files read bounded | [`cache`] |
//! | the typed error | [`error`] |
//!
//! ```no_run
//! # async fn demo() -> Result<(), toolhost_distribution::DistributionError> {
//! use toolhost_distribution::{ClientOptions, OciClient, OciReference, PullCache};
//!
//! let client = OciClient::new(ClientOptions::default());
//! let reference = OciReference::parse("oci://127.0.0.1:5000/tools/hello:v1")?;
//! let pushed = client.push(&reference, &std::fs::read("hello.wasm").unwrap(), &[]).await?;
//! let cache = PullCache::new(".toolhost/oci", client.options().max_blob_bytes);
//! let fetched = cache.fetch(&client, &pushed.pinned).await?;
//! println!("{} is {}", pushed.pinned, fetched.hash);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod artifact;
pub mod auth;
pub mod cache;
pub mod client;
pub mod error;
pub mod reference;
pub mod registry;
pub mod signature;

pub use cache::{Fetched, Origin, PullCache};
pub use client::{ClientOptions, OciClient, Pulled, Pushed};
pub use error::{DistributionError, ErrorKind, Result};
pub use reference::OciReference;
pub use signature::{KeyId, PublicKey, Signature, SignatureStatus, TrustedKeys};
