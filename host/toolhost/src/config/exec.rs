//! The `[exec]` section: the `exec` and `process` built-ins and their
//! backend.
//!
//! The default backend is `auto`: the bubblewrap `sandbox` where bubblewrap
//! works on this machine, else `local` with a loud warning at start (and in
//! `toolhost tools --status`), since on `local` a command the detector
//! misjudges runs with all of the host user's powers.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;

use super::Config;
use super::protected::ProtectedPaths;
use crate::approval::ApprovalGate;
use crate::error::{Error, ErrorCode, Result};
use crate::exec::{
    Backend, BackgroundManager, ExecSettings, ExecTool, HostKeyCheck, LocalBackend, ProcessTool,
    ReceiptStore, SandboxBackend, SshBackend,
};
use crate::redact::Redactor;
use crate::registry::{Registration, Registry};

/// The `[exec]` section: shell commands behind the approval gate.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecConfig {
    /// `auto` (default: `sandbox` where bubblewrap works, else `local` with
    /// a warning), `sandbox` (bubblewrap: only the working directory
    /// writable, toolhost's own files hidden or read-only, no network
    /// unless `network = true`), `local`, or `ssh` (on the host of the
    /// `[exec.ssh]` table).
    #[serde(default = "default_backend")]
    pub backend: String,
    /// For the ssh backend: where and as whom to connect.
    pub ssh: Option<SshConfig>,
    /// For the sandbox backend: allow the network.
    #[serde(default)]
    pub network: bool,
    /// The working directory (relative to the config file; default its
    /// folder). Created at start when it lies in the storage folder.
    pub cwd: Option<PathBuf>,
    /// Parent environment variables passed to commands (none by default).
    #[serde(default)]
    pub env_passthrough: Vec<String>,
    /// The default timeout, in milliseconds (default 60 000).
    pub timeout_ms: Option<u64>,
    /// Output kept per command, in bytes (default 64 KiB).
    pub output_bytes: Option<usize>,
    /// The shell commands run with (`SHELL -c COMMAND`; default `/bin/sh`).
    /// For the sandbox backend, the shell inside the sandbox.
    pub shell: Option<PathBuf>,
    /// Whether secrets are redacted from results the model sees (default
    /// true). Process receipts are redacted regardless.
    #[serde(default = "default_true")]
    pub redact_output: bool,
}

fn default_true() -> bool {
    true
}

fn default_backend() -> String {
    "auto".into()
}

/// The `[exec.ssh]` table: the remote host of the `ssh` backend. Commands
/// run non-interactively (`BatchMode`) with only this identity, and the host
/// key is checked against `known_hosts`; `cwd` in `[exec]` is then a path on
/// the remote host (default: the remote user's home).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshConfig {
    /// Host name or address.
    pub host: String,
    /// Port (default 22).
    #[serde(default = "default_ssh_port")]
    pub port: u16,
    /// Remote user.
    pub user: String,
    /// Private key file (relative to the config file).
    pub identity_file: PathBuf,
    /// Known-hosts file holding the host's key (relative to the config file).
    pub known_hosts: PathBuf,
    /// `strict` (default: only hosts already in `known_hosts`) or
    /// `accept-new` (add unknown hosts, refuse changed keys).
    #[serde(default = "default_host_key_check")]
    pub host_key_check: String,
}

fn default_ssh_port() -> u16 {
    22
}

fn default_host_key_check() -> String {
    "strict".into()
}

/// Whether bubblewrap is installed and can make a sandbox here (it cannot
/// where unprivileged user namespaces are off, as in some containers).
pub fn sandbox_works() -> bool {
    let Some(bwrap) = crate::exec::find_program("bwrap") else {
        return false;
    };
    std::process::Command::new(bwrap)
        .args(["--unshare-all", "--ro-bind", "/", "/", "--", "/bin/true"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

impl ExecConfig {
    /// The backend `backend` names, `auto` decided: `sandbox` when
    /// [`sandbox_works`], else `local`.
    pub fn resolved_backend(&self) -> &str {
        match self.backend.as_str() {
            "auto" if sandbox_works() => "sandbox",
            "auto" => "local",
            other => other,
        }
    }
}

impl Config {
    /// The exec working directory, resolved against the config's folder
    /// (`None` for the ssh backend without `cwd`: the remote home).
    pub fn exec_cwd(&self) -> Option<PathBuf> {
        let exec = self.exec.as_ref()?;
        if exec.backend == "ssh" {
            return exec.cwd.clone();
        }
        Some(
            exec.cwd
                .as_ref()
                .map(|c| self.base_dir.join(c))
                .unwrap_or_else(|| self.base_dir.clone()),
        )
    }

    /// The folder exec's commands run in on this machine: its working
    /// directory, for the local and sandbox backends (`None` without
    /// `[exec]`, or on the ssh backend, whose folder is on another host).
    pub fn exec_workspace(&self) -> Option<PathBuf> {
        self.exec_cwd()
            .filter(|_| self.exec.as_ref().is_some_and(|e| e.backend != "ssh"))
    }

    /// Registers the configured built-ins (`exec` and `process` when
    /// `[exec]` is present), their commands judged by `gate` (see
    /// [`Config::approval_gate`]). Returns the backend's name, or `None`
    /// without `[exec]`.
    ///
    /// # Errors
    ///
    /// `config` for an unknown backend or inconsistent settings;
    /// `duplicate_tool` as [`Registry::register`].
    pub fn register_builtins(
        &self,
        registry: &mut Registry,
        gate: &Arc<ApprovalGate>,
    ) -> Result<Option<String>> {
        let Some(exec) = &self.exec else { return Ok(None) };
        let config_error = |message: String| Error::new(ErrorCode::Config, message);
        let name = exec.resolved_backend();
        if exec.shell.is_some() && name == "ssh" {
            return Err(config_error(
                "[exec] shell does not apply to the ssh backend (commands run under the remote /bin/sh)"
                    .into(),
            ));
        }
        if exec.ssh.is_some() && name != "ssh" {
            return Err(config_error(format!(
                "[exec.ssh] is set but backend = {:?}; set backend = \"ssh\" or remove [exec.ssh]",
                exec.backend
            )));
        }
        let cwd = self.exec_cwd();
        let backend: Arc<dyn Backend> = match name {
            "local" => {
                if exec.backend == "auto" {
                    tracing::warn!(
                        "[exec] backend = \"auto\": bubblewrap does not work on this machine, so commands run on the `local` backend, with all of this user's powers, judged only by the dangerous-command detector; install bubblewrap (Debian: apt-get install -y bubblewrap), or set backend = \"local\" to accept this"
                    );
                }
                Arc::new(LocalBackend {
                    default_cwd: cwd.clone(),
                    shell: exec.shell.clone(),
                })
            }
            "sandbox" => {
                let protected = ProtectedPaths::of(self);
                Arc::new(SandboxBackend {
                    network: exec.network,
                    default_cwd: cwd.clone(),
                    shell: exec.shell.clone(),
                    hidden: protected
                        .hidden_dirs()
                        .into_iter()
                        .filter(|d| d.is_dir())
                        .collect(),
                    read_only: protected.read_only_files(),
                })
            }
            "ssh" => Arc::new(self.ssh_backend(exec)?),
            other => {
                return Err(config_error(format!(
                    "[exec] backend = {other:?}: use \"auto\", \"sandbox\", \"local\" or \"ssh\""
                )));
            }
        };
        // Secrets the commands are given (passed-through variables whose
        // names say so) never reach a receipt, nor, by default, the model.
        let redactor = Redactor::with_env_secrets(&exec.env_passthrough);
        let receipts = ReceiptStore::new(
            self.storage_dir().join("receipts"),
            std::time::Duration::from_secs(7 * 24 * 3600),
            100,
        )
        .with_redactor(redactor.clone());
        let mut background = BackgroundManager::new(Arc::clone(&backend), receipts);
        if exec.redact_output {
            background = background.with_live_redaction(redactor);
        }
        let background = Arc::new(background);
        let mut settings = ExecSettings {
            default_cwd: cwd,
            env_passthrough: exec.env_passthrough.clone(),
            ..ExecSettings::default()
        };
        if let Some(ms) = exec.timeout_ms {
            settings.default_timeout = std::time::Duration::from_millis(ms);
        }
        if let Some(bytes) = exec.output_bytes {
            settings.output_cap = bytes;
        }
        settings.redact_output = exec.redact_output;
        let exec_tool = ExecTool::new(backend, Arc::clone(gate), Arc::clone(&background), settings);
        registry.register(Registration::new(exec_tool).toolset("exec").emoji("💻"))?;
        registry.register(Registration::new(ProcessTool::new(background)).toolset("exec"))?;
        Ok(Some(name.to_string()))
    }

    fn ssh_backend(&self, exec: &ExecConfig) -> Result<SshBackend> {
        let Some(ssh) = &exec.ssh else {
            return Err(Error::new(
                ErrorCode::Config,
                "[exec] backend = \"ssh\" needs an [exec.ssh] table (host, user, identity_file, known_hosts)",
            ));
        };
        let host_key_check = match ssh.host_key_check.as_str() {
            "strict" => HostKeyCheck::Strict,
            "accept-new" => HostKeyCheck::AcceptNew,
            other => {
                return Err(Error::new(
                    ErrorCode::Config,
                    format!("[exec.ssh] host_key_check = {other:?}: use \"strict\" or \"accept-new\""),
                ));
            }
        };
        Ok(SshBackend {
            host: ssh.host.clone(),
            port: ssh.port,
            user: ssh.user.clone(),
            identity_file: self.base_dir.join(&ssh.identity_file),
            known_hosts: self.base_dir.join(&ssh.known_hosts),
            host_key_check,
        })
    }
}
