//! `toolhost push FILE oci://HOST/REPO:TAG`: a component to an OCI registry
//! in the CNCF Wasm layout, with `FILE.minisig` attached when present.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use toolhost::internal::distribution::{OciClient, OciReference, Signature};
use toolhost::{ComponentHash, Error};

use super::args::RegistryArgs;

#[derive(Debug, Args)]
pub(crate) struct PushArgs {
    /// The component file. Its detached signature `FILE.minisig`, when
    /// present, is pushed with it (as an OCI referrer).
    file: PathBuf,
    /// Where to: oci://HOST[:PORT]/REPOSITORY:TAG.
    reference: String,
    /// Push without `FILE.minisig` even when it exists.
    #[arg(long)]
    no_signature: bool,
    #[command(flatten)]
    registry: RegistryArgs,
}

pub(crate) async fn run(args: PushArgs) -> anyhow::Result<ExitCode> {
    Ok(super::print_outcome(push(&args).await))
}

async fn push(args: &PushArgs) -> Result<serde_json::Value, Error> {
    let reference = OciReference::parse(&args.reference)?;
    let bytes = super::read_file(&args.file)?;
    let signatures = match args.no_signature {
        true => Vec::new(),
        false => Signature::next_to(&args.file)?.into_iter().collect(),
    };
    let client = OciClient::new(args.registry.options());
    let pushed = client.push(&reference, &bytes, &signatures).await?;
    Ok(json!({
        "reference": reference.to_string(),
        "digest": pushed.digest,
        "pinned": pushed.pinned.to_string(),
        "hash": ComponentHash::of(&bytes),
        "signed_by": signatures.iter().map(|s| s.key_id()).collect::<Vec<_>>(),
    }))
}
