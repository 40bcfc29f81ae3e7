//! `toolhost pull oci://HOST/REPO(:TAG|@sha256:…) [-o FILE] [--key PUB]`: a
//! component from an OCI registry, with its signature as `FILE.minisig`,
//! within one deadline and size cap (`--timeout-s`,
//! `--max-component-bytes`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use toolhost::internal::distribution::client::{DEFAULT_MAX_BLOB_BYTES, DEFAULT_PULL_TIMEOUT};
use toolhost::internal::distribution::signature::signature_path;
use toolhost::internal::distribution::{ClientOptions, OciClient, OciReference, PublicKey, TrustedKeys};
use toolhost::{ComponentHash, Error};

use super::args::RegistryArgs;

#[derive(Debug, Args)]
pub(crate) struct PullArgs {
    /// What: oci://HOST[:PORT]/REPOSITORY:TAG or …@sha256:DIGEST (the
    /// manifest and the component are checked against their digests).
    reference: String,
    /// Where to write the component [default: the repository's last part
    /// with `.wasm`, in this folder]. A signature goes to `FILE.minisig`.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Refuse the component unless one of these public keys signed it
    /// (repeatable; minisign public key files).
    #[arg(long = "key", value_name = "PUB")]
    keys: Vec<PathBuf>,
    /// The most the whole pull may take (a registry that sends slowly or
    /// not at all is given up on then).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_PULL_TIMEOUT.as_secs())]
    timeout_s: u64,
    /// The most bytes the component may have (checked against its
    /// manifest before it is downloaded).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BLOB_BYTES)]
    max_component_bytes: u64,
    #[command(flatten)]
    registry: RegistryArgs,
}

pub(crate) async fn run(args: PullArgs) -> anyhow::Result<ExitCode> {
    Ok(super::print_outcome(pull(&args).await))
}

async fn pull(args: &PullArgs) -> Result<serde_json::Value, Error> {
    let reference = OciReference::parse(&args.reference)?;
    let keys = args
        .keys
        .iter()
        .map(|k| PublicKey::from_file(k))
        .collect::<Result<Vec<_>, _>>()?;
    let client = OciClient::new(ClientOptions {
        max_blob_bytes: args.max_component_bytes,
        pull_timeout: std::time::Duration::from_secs(args.timeout_s),
        ..args.registry.options()
    });
    let pulled = client.pull(&reference).await?;
    let signature = if keys.is_empty() {
        None
    } else {
        let status = TrustedKeys::from_keys(keys).check(
            &reference.to_string(),
            &pulled.bytes,
            &pulled.signatures,
            true,
        )?;
        Some(status)
    };
    let output = args.output.clone().unwrap_or_else(|| {
        let name = reference.repository().rsplit('/').next().unwrap_or("component");
        PathBuf::from(format!("{name}.wasm"))
    });
    let write = |path: &PathBuf, bytes: &[u8]| {
        std::fs::write(path, bytes).map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
    };
    write(&output, &pulled.bytes)?;
    if let Some(first) = pulled.signatures.first() {
        write(&signature_path(&output), first.text().as_bytes())?;
    }
    Ok(json!({
        "reference": reference.to_string(),
        "digest": pulled.digest,
        "pinned": reference.with_digest(&pulled.digest).to_string(),
        "hash": ComponentHash::of(&pulled.bytes),
        "file": output,
        "signatures": pulled.signatures.iter().map(|s| s.key_id()).collect::<Vec<_>>(),
        "verified": signature,
    }))
}
