//! `toolhost new NAME [--dir DIR] [--toolhost-path SRC]`: a new Rust plugin
//! crate, ready to build and passing conformance as it is: `Cargo.toml`,
//! `src/lib.rs` (one tool written with toolhost-sdk), `tests/conformance.rs`
//! (builds the component and runs the conformance suite from `cargo test`),
//! `.cargo/config.toml` (the plugin's initial heap and vector instructions,
//! as toolhost's own plugins have them), a README and a `.gitignore`. Its
//! `src/` and `tests/` are those of `examples/rust-plugin`, which the
//! workspace's own `cargo test` runs.

use super::outln;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

/// The plugin's code: the example's, the same for every new plugin.
const LIB_RS: &str = include_str!("new/lib.rs.in");
/// Its conformance test: the example's (it names the crate through
/// `CARGO_PKG_NAME`, so it fits any crate).
const CONFORMANCE_RS: &str = include_str!("new/conformance.rs.in");
/// Its manifest, with `{name}`, `{lib}`, `{sdk}` and `{conformance}` to fill.
const CARGO_TOML: &str = include_str!("new/Cargo.toml.in");
/// Its cargo settings: toolhost's own plugins' (1 MiB of initial heap, so
/// that a call does not grow its memory; the file says why).
const CARGO_CONFIG: &str = include_str!("new/cargo-config.toml.in");
/// Its README, with `{name}` and `{lib}` to fill.
const README_MD: &str = include_str!("new/README.md.in");

#[derive(Debug, Args)]
pub(crate) struct NewArgs {
    /// The crate's name: a letter, then letters, digits, `-` or `_`.
    name: String,
    /// The folder to create the crate in (as DIR/NAME).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// A checkout of toolhost's sources, for the path dependencies on
    /// toolhost-sdk and toolhost-conformance [default: the sources this
    /// binary was built from].
    #[arg(long, value_name = "SRC")]
    toolhost_path: Option<PathBuf>,
}

pub(crate) fn run(args: NewArgs) -> anyhow::Result<ExitCode> {
    check_name(&args.name)?;
    let sources = match &args.toolhost_path {
        Some(path) => path.clone(),
        // This crate is host/toolhost/ of the sources it was built from.
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
    };
    let sources = sources.canonicalize().ok().filter(|s| s.join("sdk/Cargo.toml").is_file()).with_context(|| {
        format!(
            "{} is not a checkout of toolhost's sources (no sdk/Cargo.toml); pass --toolhost-path with one",
            sources.display()
        )
    })?;
    let root = args.dir.join(&args.name);
    if root.exists() {
        bail!("{} exists already; choose another name or --dir", root.display());
    }
    let lib = args.name.replace('-', "_");
    let path_of = |p: &str| sources.join(p).display().to_string().replace('\\', "/");
    let manifest = CARGO_TOML
        .replace("{name}", &args.name)
        .replace("{lib}", &lib)
        .replace("{sdk}", &path_of("sdk"))
        .replace("{conformance}", &path_of("host/conformance"));
    let readme = README_MD.replace("{name}", &args.name).replace("{lib}", &lib);
    let files: [(&str, &str); 6] = [
        ("Cargo.toml", &manifest),
        ("src/lib.rs", LIB_RS),
        ("tests/conformance.rs", CONFORMANCE_RS),
        (".cargo/config.toml", CARGO_CONFIG),
        ("README.md", &readme),
        (".gitignore", "/target\n"),
    ];
    for (relative, text) in files {
        let path = root.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    outln!(
        "created the plugin crate {name} in {dir}\n  build: cd {dir} && cargo build --release --target wasm32-wasip2\n  test:  cargo test   (builds the component and runs the conformance suite)",
        name = args.name,
        dir = root.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Refuses a name that is not a valid crate name.
fn check_name(name: &str) -> anyhow::Result<()> {
    let mut chars = name.chars();
    let starts_well = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !starts_well || !rest_ok || name.len() > 64 {
        bail!(
            "{name:?} is not a crate name: use a letter, then letters, digits, `-` or `_` (at most 64 characters)"
        );
    }
    Ok(())
}
