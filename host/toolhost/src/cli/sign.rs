//! `toolhost sign FILE --key SECRET`: a detached minisign signature,
//! `FILE.minisig`, that the `minisign` program verifies too.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use toolhost::Error;
use toolhost::internal::distribution::signature::{PASSWORD_ENV, sign, signature_path};

#[derive(Debug, Args)]
pub(crate) struct SignArgs {
    /// The file to sign.
    file: PathBuf,
    /// The minisign secret key file (`minisign -G` makes one). An encrypted
    /// key's password is read from the environment variable
    /// TOOLHOST_MINISIGN_PASSWORD, never from the command line.
    #[arg(long, value_name = "SECRET")]
    key: PathBuf,
    /// Where to write the signature [default: FILE.minisig].
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub(crate) fn run(args: SignArgs) -> anyhow::Result<ExitCode> {
    Ok(super::print_outcome(sign_file(&args)))
}

fn sign_file(args: &SignArgs) -> Result<serde_json::Value, Error> {
    let bytes = super::read_file(&args.file)?;
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let password = std::env::var(PASSWORD_ENV).ok();
    let signature = sign(&bytes, &args.key, password, &name)?;
    let output = args.output.clone().unwrap_or_else(|| signature_path(&args.file));
    std::fs::write(&output, signature.text())
        .map_err(|e| Error::io(format!("cannot write {}", output.display()), e))?;
    Ok(json!({
        "file": args.file,
        "signature": output,
        "signed_by": signature.key_id(),
    }))
}
