//! The `ssh` backend: runs commands on a remote host with the OpenSSH
//! client, non-interactively and with a pinned identity and known-hosts
//! file.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::backend::Backend;
use crate::request::{DEFAULT_PATH, ExecError, ExecRequest};
use crate::runner::{Prepared, require_program};

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
    /// The remote command line: the working directory, then the command
    /// under `sh -c` with only the request's environment (the passed-through
    /// variables and the explicit ones, [`DEFAULT_PATH`] unless they set
    /// `PATH`; nothing of the remote login's). Where the remote host has
    /// `timeout` (coreutils), the command's process group is killed there
    /// at the request's timeout too, so that a timed-out command does not
    /// outlive its ssh connection.
    pub fn remote_command(&self, req: &ExecRequest) -> String {
        let mut run = vec!["env -i".to_string()];
        for (k, v) in &req.environment() {
            if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                run.push(shell_quote(&format!("{k}={v}")));
            }
        }
        run.push("/bin/sh -c".into());
        run.push(shell_quote(&req.command));
        let run = run.join(" ");
        // The timeout in whole seconds plus two: the local one acts first.
        let secs = req.timeout.as_secs() + 2;
        let mut line = String::new();
        if let Some(cwd) = &req.cwd {
            line.push_str(&format!("cd {} && ", shell_quote(&cwd.to_string_lossy())));
        }
        line.push_str(&format!(
            "if command -v timeout >/dev/null 2>&1; then exec timeout -s KILL {secs} {run}; else exec {run}; fi"
        ));
        line
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
        let ssh = require_program(
            "ssh",
            "install the OpenSSH client (Debian: apt-get install -y openssh-client)",
        )?;
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
