//! Reading well-known credential files: private keys, cloud, registry and
//! cluster credentials, `.netrc`, `.env` files, `/etc/shadow`.
//!
//! Any program that takes such a file as an argument reads it (`cat`,
//! `less`, `head`, `grep`, `base64`, `xxd`, `tar`, `cp`, `scp`, `curl -T`,
//! `curl -F f=@...`, an editor, ...), as does any command whose input is
//! redirected from one (`< ~/.netrc`) and inline interpreter code naming
//! one. The exceptions are programs that use a credential without
//! showing it (`ssh -i`, `ssh-add`, `chmod 600`, `ls`, `git`, cloud and
//! cluster tools given a config path) and copies *to* a credential path
//! (`cp .env.example .env` writes `.env`, it does not read it).
//!
//! `.env` files are credentials (they conventionally hold API keys);
//! their templates (`.env.example`, `.env.sample`, `.env.template`,
//! `.env.dist`, `.env.defaults`) are not.

use super::analyze::Analyzer;
use super::expand::{Field, GENERATED, UNKNOWN};
use super::paths;
use super::rules::{Cmd, args};
use crate::verdict::Category;

/// Programs that use, manage or only name credential files without
/// printing their content.
const NON_READERS: &[&str] = &[
    "ls",
    "stat",
    "test",
    "[",
    "file",
    "du",
    "wc",
    "touch",
    "mkdir",
    "chmod",
    "chown",
    "chgrp",
    "chattr",
    "setfacl",
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "srm",
    "wipe",
    "trash",
    "trash-put",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "echo",
    "printf",
    "cd",
    "pushd",
    "which",
    "type",
    "command",
    "export",
    "source",
    ".",
    "tee",
    "find",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "cksum",
    "ssh",
    "ssh-add",
    "ssh-keygen",
    "ssh-copy-id",
    "ssh-agent",
    "git",
    "gpg",
    "gpg2",
    "kubectl",
    "helm",
    "aws",
    "gcloud",
    "az",
    "docker",
    "podman",
    "terraform",
    "tofu",
    "gh",
    "npm",
    "pnpm",
    "yarn",
    "pip",
    "pip3",
    "twine",
    "cargo",
    "mysql",
    "psql",
    "sudoedit",
    "visudo",
    "dotenv",
    "direnv",
    "vault",
    "op",
];

/// Credential files named by their last path components.
const SUFFIXES: &[&[&str]] = &[
    &[".aws", "credentials"],
    &[".docker", "config.json"],
    &[".kube", "config"],
    &[".config", "gh", "hosts.yml"],
    &[".config", "hub"],
    &[".config", "git", "credentials"],
    &[".cargo", "credentials"],
    &[".cargo", "credentials.toml"],
    &[".terraform.d", "credentials.tfrc.json"],
    &[".config", "gcloud", "credentials.db"],
    &[".config", "gcloud", "access_tokens.db"],
    &[".config", "gcloud", "application_default_credentials.json"],
    &[".azure", "accessTokens.json"],
    &[".azure", "msal_token_cache.json"],
    &[".config", "rclone", "rclone.conf"],
];

/// Credential files named by their file name alone.
const NAMES: &[&str] = &[
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".s3cfg",
    ".boto",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ecdsa_sk",
    "id_ed25519_sk",
    "privkey.pem",
];

/// Folders whose every file is a credential.
const DIRS: &[&[&str]] = &[
    &[".password-store"],
    &[".local", "share", "keyrings"],
    &[".aws", "sso", "cache"],
    &[".aws", "cli", "cache"],
    &[".config", "gcloud", "legacy_credentials"],
];

/// Absolute credential paths (files, or folders of them).
const ABSOLUTE: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/master.passwd",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/var/run/secrets",
    "/run/secrets",
];

/// Files inside `.ssh` that hold no secret.
const SSH_PUBLIC: &[&str] = &[
    "known_hosts",
    "known_hosts.old",
    "config",
    "authorized_keys",
    "authorized_keys2",
    "rc",
    "environment",
];

/// Why the (normalized) path names a credential file, if it does.
pub(crate) fn credential(p: &str) -> Option<&'static str> {
    let comps: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
    let base = *comps.last()?;
    // A wholly unknown name (`$f`, the names `find -exec` is handed) may
    // be any file of the folder; a partly known one is judged by nothing.
    if base.contains(UNKNOWN) && !base.chars().all(|c| c == UNKNOWN || c == GENERATED) {
        return None;
    }
    if ABSOLUTE.iter().any(|a| paths::under(p, a)) {
        return Some("a system password or secret file");
    }
    if comps.len() >= 3 && comps.first() == Some(&"proc") && base == "environ" {
        return Some("a process's environment (its secrets)");
    }
    if let Some(i) = comps.iter().position(|c| *c == ".ssh") {
        let inside = comps.get(i + 1..).unwrap_or_default();
        let public = inside
            .last()
            .is_some_and(|b| SSH_PUBLIC.contains(b) || b.ends_with(".pub"));
        if !public {
            return Some("an SSH private key or key folder");
        }
        return None;
    }
    if base.starts_with("ssh_host_") && base.ends_with("_key") {
        return Some("an SSH host private key");
    }
    if comps.contains(&".gnupg") && !base.ends_with(".conf") {
        return Some("the GnuPG keyring");
    }
    if DIRS.iter().any(|d| comps.windows(d.len()).any(|w| w == *d)) {
        return Some("a folder of stored credentials");
    }
    if SUFFIXES.iter().any(|s| comps.ends_with(s)) {
        return Some("cloud, registry or cluster credentials");
    }
    if NAMES.contains(&base) {
        return Some("a credentials or private key file");
    }
    if let Some(rest) = base.strip_prefix(".env") {
        let template = [
            "example", "sample", "template", "dist", "defaults", "schema", "tpl",
        ];
        let is_env = rest.is_empty() || rest.strip_prefix('.').is_some_and(|s| !template.contains(&s));
        if is_env {
            return Some("a .env file (conventionally API keys and passwords)");
        }
    }
    let key_ext = [".key", ".p12", ".pfx", ".kdbx", ".keystore", ".jks"];
    if key_ext.iter().any(|e| base.ends_with(e)) && base.len() > 4 {
        return Some("a private key or password database");
    }
    None
}

impl Analyzer {
    /// The credential a field names, with the normalized path.
    pub(crate) fn credential_path(&self, text: &str) -> Option<(String, &'static str)> {
        let t = text.rsplit_once('=').map_or(text, |(_, v)| v);
        let t = t.trim_start_matches(['@', '<']);
        if t.is_empty() || t.starts_with('-') {
            return None;
        }
        let p = self.host.resolve(t, self.scope.cwd.as_deref());
        credential(&p).map(|why| (p, why))
    }

    /// Flags a read of the credential `text` names, if it names one.
    pub(crate) fn credential_read(&mut self, text: &str, matched: &str) {
        if let Some((p, why)) = self.credential_path(text) {
            self.add(Category::CredentialAccess, matched, format!("reads {p}: {why}"));
        }
    }

    /// The credential rule for one command: its arguments.
    pub(crate) fn credentials(&mut self, c: &Cmd<'_>) {
        let name = c.inv.name.as_str();
        if NON_READERS.contains(&name) {
            return;
        }
        let a = c.args();
        let read: Vec<&Field> = match name {
            "cp" | "mv" | "install" | "ln" | "rsync" => {
                let p = args::parse(a, "tSmoge", &["--target-directory", "--rsh", "--suffix"]);
                let targeted = p.value(&["t", "--target-directory"]).is_some();
                let n = p.operands.len().saturating_sub(usize::from(!targeted));
                p.operands.into_iter().take(n).collect()
            }
            "scp" | "sftp" => args::parse(a, "cFiJlmoPSDX", &[]).operands,
            "sed"
                if a.iter()
                    .any(|f| f.text.starts_with("-i") || f.text.starts_with("--in-place")) =>
            {
                return;
            }
            _ => a.iter().collect(),
        };
        let texts: Vec<String> = read.iter().map(|f| f.text.clone()).collect();
        for t in texts {
            self.credential_read(&t, c.raw());
        }
    }
}
