//! The `ssh` backend: runs commands on a remote host with the OpenSSH
//! client, non-interactively and with a pinned identity and known-hosts
//! file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::exec::backend::Backend;
use crate::exec::request::{DEFAULT_PATH, ExecError, ExecRequest};
use crate::exec::runner::{Prepared, find_program};

/// How the host key is checked (`StrictHostKeyChecking`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HostKeyCheck {
    /// Only hosts already in the known-hosts file (`yes`).
    #[default]
    Strict,
    /// Add unknown hosts, refuse changed keys (`accept-new`).
    AcceptNew,
}

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshBackend {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// Remote user.
    pub user: String,
    /// Private key file (`-i`, with `IdentitiesOnly=yes`).
    pub identity_file: PathBuf,
    /// Known-hosts file (`UserKnownHostsFile`).
    pub known_hosts: PathBuf,
    /// Host key policy.
    pub host_key_check: HostKeyCheck,
}

/// Quotes `s` for a POSIX shell: `'...'` with embedded quotes escaped.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl SshBackend {
    /// The remote command line: working directory, explicit environment
    /// (the remote side's own environment otherwise), then `sh -c`.
    pub fn remote_command(&self, req: &ExecRequest) -> String {
        let mut parts = Vec::new();
        if let Some(cwd) = &req.cwd {
            parts.push(format!("cd {} &&", shell_quote(&cwd.to_string_lossy())));
        }
        parts.push("exec env -i".to_string());
        let mut env: BTreeMap<String, String> = req.env.clone();
        env.entry("PATH".into()).or_insert_with(|| DEFAULT_PATH.into());
        for (k, v) in &env {
            if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                parts.push(shell_quote(&format!("{k}={v}")));
            }
        }
        parts.push("/bin/sh -c".into());
        parts.push(shell_quote(&req.command));
        parts.join(" ")
    }

    /// The `ssh` client arguments for `req`.
    pub fn ssh_args(&self, req: &ExecRequest) -> Vec<String> {
        let check = match self.host_key_check {
            HostKeyCheck::Strict => "yes",
            HostKeyCheck::AcceptNew => "accept-new",
        };
        let mut a: Vec<String> = [
            "-F",
            "/dev/null",
            "-T",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "LogLevel=ERROR",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend([
            "-o".into(),
            format!("StrictHostKeyChecking={check}"),
            "-o".into(),
            format!("UserKnownHostsFile={}", self.known_hosts.display()),
            "-i".into(),
            self.identity_file.display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-l".into(),
            self.user.clone(),
            "--".into(),
            self.host.clone(),
            self.remote_command(req),
        ]);
        a
    }
}

impl Backend for SshBackend {
    fn name(&self) -> &'static str {
        "ssh"
    }

    fn prepare(&self, req: &ExecRequest) -> Result<Prepared, ExecError> {
        let ssh = find_program("ssh").ok_or_else(|| ExecError::ProgramMissing {
            program: "ssh".into(),
            hint: "install the OpenSSH client (Debian: apt-get install -y openssh-client)".into(),
        })?;
        let mut env = BTreeMap::new();
        env.insert("PATH".to_string(), DEFAULT_PATH.to_string());
        Ok(Prepared {
            program: ssh,
            args: self.ssh_args(req),
            cwd: None,
            env,
        })
    }
}
