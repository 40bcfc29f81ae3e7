//! `toolhost verify FILE --key PUB`: checks `FILE.minisig` (made by
//! `toolhost sign` or the `minisign` program) and says which key signed.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use toolhost::Error;
use toolhost::internal::distribution::signature::signature_path;
use toolhost::internal::distribution::{PublicKey, Signature};

#[derive(Debug, Args)]
pub(crate) struct VerifyArgs {
    /// The signed file.
    file: PathBuf,
    /// The minisign public key file to verify with.
    #[arg(long, value_name = "PUB")]
    key: PathBuf,
    /// The signature [default: FILE.minisig].
    #[arg(long)]
    signature: Option<PathBuf>,
}

pub(crate) fn run(args: VerifyArgs) -> anyhow::Result<ExitCode> {
    Ok(super::print_outcome(verify(&args)))
}

fn verify(args: &VerifyArgs) -> Result<serde_json::Value, Error> {
    let bytes = super::read_file(&args.file)?;
    let key = PublicKey::from_file(&args.key)?;
    let path = args
        .signature
        .clone()
        .unwrap_or_else(|| signature_path(&args.file));
    let signature = Signature::from_file(&path)?;
    key.verify(&bytes, &signature)
        .map_err(|e| e.context(args.file.display()))?;
    Ok(json!({
        "file": args.file,
        "verified": true,
        "signed_by": signature.key_id(),
        "trusted_comment": signature.trusted_comment(),
    }))
}
