//! The backends: where and how a command runs.

use std::path::PathBuf;

use crate::approval::BoxFuture;
use crate::exec::request::{ExecError, ExecRequest, ExecResult};
use crate::exec::runner::{Prepared, find_program, run};

/// Runs commands somewhere. Object-safe (`Arc<dyn Backend>`).
pub trait Backend: Send + Sync + std::fmt::Debug {
    /// A short name (`local`, `sandbox`, `ssh`).
    fn name(&self) -> &'static str;

    /// The program, arguments, directory and environment that run `req`.
    ///
    /// # Errors
    /// [`ExecError::ProgramMissing`] when the backend's program is not
    /// installed; [`ExecError::InvalidCwd`] for a bad working directory.
    fn prepare(&self, req: &ExecRequest) -> Result<Prepared, ExecError>;

    /// Runs `req` to completion; see [`ExecRequest`] for the guarantees.
    /// Dropping the future kills the command's process group.
    fn run<'a>(&'a self, req: &'a ExecRequest) -> BoxFuture<'a, Result<ExecResult, ExecError>> {
        Box::pin(async move {
            let p = self.prepare(req)?;
            run(&p, req.timeout, req.output_cap).await
        })
    }
}

/// Runs commands on this machine with `sh -c`.
#[derive(Debug, Clone, Default)]
pub struct LocalBackend {
    /// The working directory when a request names none.
    pub default_cwd: Option<PathBuf>,
}

impl Backend for LocalBackend {
    fn name(&self) -> &'static str {
        "local"
    }

    fn prepare(&self, req: &ExecRequest) -> Result<Prepared, ExecError> {
        Ok(Prepared {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".to_string(), req.command.clone()],
            cwd: req.cwd.clone().or_else(|| self.default_cwd.clone()),
            env: req.environment(),
        })
    }
}

/// Runs commands under bubblewrap: the whole filesystem read-only except
/// the working directory, a private `/tmp`, no network unless granted,
/// all namespaces unshared, no capabilities.
#[derive(Debug, Clone, Default)]
pub struct SandboxBackend {
    /// Whether the command may use the network (`--share-net`).
    pub network: bool,
    /// The working directory when a request names none (else the current
    /// directory).
    pub default_cwd: Option<PathBuf>,
}

impl SandboxBackend {
    /// The `bwrap` arguments for `command` in `cwd`.
    pub fn bwrap_args(&self, cwd: &str, command: &str) -> Vec<String> {
        let mut a: Vec<&str> = vec!["--unshare-all"];
        if self.network {
            a.push("--share-net");
        }
        a.extend([
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--bind",
            cwd,
            cwd,
            "--chdir",
            cwd,
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--",
            "/bin/sh",
            "-c",
            command,
        ]);
        a.into_iter().map(str::to_string).collect()
    }
}

impl Backend for SandboxBackend {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn prepare(&self, req: &ExecRequest) -> Result<Prepared, ExecError> {
        let bwrap = find_program("bwrap").ok_or_else(|| ExecError::ProgramMissing {
            program: "bwrap".into(),
            hint: "install bubblewrap (Debian: apt-get install -y bubblewrap)".into(),
        })?;
        let cwd = req
            .cwd
            .clone()
            .or_else(|| self.default_cwd.clone())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let cwd = cwd
            .canonicalize()
            .map_err(|_| ExecError::InvalidCwd(cwd.clone()))?;
        let cwd_s = cwd.to_string_lossy().to_string();
        Ok(Prepared {
            program: bwrap,
            args: self.bwrap_args(&cwd_s, &req.command),
            cwd: Some(cwd),
            env: req.environment(),
        })
    }
}
