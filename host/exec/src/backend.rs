//! The backends: where and how a command runs.

use std::path::{Path, PathBuf};

use crate::approval::BoxFuture;
use crate::request::{ExecError, ExecRequest, ExecResult};
use crate::runner::{Prepared, require_program, run};

/// The shell commands run with unless a backend names another.
pub const DEFAULT_SHELL: &str = "/bin/sh";

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
    /// The shell (`SHELL -c COMMAND`); [`DEFAULT_SHELL`] when `None`.
    pub shell: Option<PathBuf>,
}

/// The shell a backend names, or [`DEFAULT_SHELL`].
fn shell_or_default(configured: Option<&Path>) -> &Path {
    configured.unwrap_or(Path::new(DEFAULT_SHELL))
}

/// The shell of a backend, which must exist.
fn shell(configured: Option<&Path>) -> Result<PathBuf, ExecError> {
    let shell = shell_or_default(configured);
    require_program(
        &shell.to_string_lossy(),
        "set `shell` in [exec] to an installed POSIX shell",
    )
}

impl Backend for LocalBackend {
    fn name(&self) -> &'static str {
        "local"
    }

    fn prepare(&self, req: &ExecRequest) -> Result<Prepared, ExecError> {
        Ok(Prepared {
            program: shell(self.shell.as_deref())?,
            args: vec!["-c".to_string(), req.command.clone()],
            cwd: req.cwd.clone().or_else(|| self.default_cwd.clone()),
            env: req.environment(),
        })
    }
}

/// Runs commands under bubblewrap: the whole filesystem read-only except
/// the workspace (the configured working directory), a private `/tmp`, no
/// network unless granted, all namespaces unshared, no capabilities. A
/// request's working directory must lie inside the workspace: it can move
/// the command within the writable area, never widen it. The
/// [`hidden`](SandboxBackend::hidden) folders are empty in the sandbox and
/// the [`read_only`](SandboxBackend::read_only) files stay read-only even
/// inside the workspace (toolhost's own storage and configuration: see
/// `toolhost::config::ProtectedPaths`).
#[derive(Debug, Clone, Default)]
pub struct SandboxBackend {
    /// Whether the command may use the network (`--share-net`).
    pub network: bool,
    /// The workspace: the one writable folder, and the working directory
    /// when a request names none. `None`: the host's current directory.
    pub default_cwd: Option<PathBuf>,
    /// The shell inside the sandbox; [`DEFAULT_SHELL`] when `None`.
    pub shell: Option<PathBuf>,
    /// Folders replaced by an empty tmpfs (what is under them is not
    /// visible); the workspace stays visible if it lies inside one.
    pub hidden: Vec<PathBuf>,
    /// Files bound read-only over themselves when they lie inside the
    /// workspace.
    pub read_only: Vec<PathBuf>,
}

impl SandboxBackend {
    /// The `bwrap` arguments for `command`, with `workspace` writable and
    /// `cwd` (inside it) as the working directory.
    pub fn bwrap_args(&self, workspace: &str, cwd: &str, command: &str) -> Vec<String> {
        let shell = shell_or_default(self.shell.as_deref())
            .to_string_lossy()
            .into_owned();
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
        ]);
        let hidden: Vec<String> = self
            .hidden
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let inside = |p: &&String| Path::new(p.as_str()).starts_with(workspace);
        // Hidden folders first (the workspace, bound after them, stays
        // visible even inside one); those inside the workspace once more,
        // over it, with the read-only files.
        for h in &hidden {
            a.extend(["--tmpfs", h]);
        }
        a.extend(["--bind", workspace, workspace]);
        for h in hidden.iter().filter(inside) {
            a.extend(["--tmpfs", h]);
        }
        let read_only: Vec<String> = self
            .read_only
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        for f in read_only.iter().filter(inside) {
            a.extend(["--ro-bind-try", f, f]);
        }
        a.extend([
            "--chdir",
            cwd,
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--",
            &shell,
            "-c",
            command,
        ]);
        a.into_iter().map(str::to_string).collect()
    }

    /// The workspace and the request's working directory, both resolved
    /// (symbolic links followed), the second inside the first.
    fn directories(&self, req: &ExecRequest) -> Result<(PathBuf, PathBuf), ExecError> {
        let workspace = self
            .default_cwd
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let workspace = workspace
            .canonicalize()
            .map_err(|_| ExecError::InvalidCwd(workspace.clone()))?;
        let Some(asked) = &req.cwd else {
            return Ok((workspace.clone(), workspace));
        };
        let cwd = workspace.join(asked);
        let cwd = cwd
            .canonicalize()
            .map_err(|_| ExecError::InvalidCwd(cwd.clone()))?;
        if !cwd.starts_with(&workspace) {
            return Err(ExecError::OutsideWorkspace { cwd, workspace });
        }
        Ok((workspace, cwd))
    }
}

impl Backend for SandboxBackend {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn prepare(&self, req: &ExecRequest) -> Result<Prepared, ExecError> {
        let bwrap = require_program(
            "bwrap",
            "install bubblewrap (Debian: apt-get install -y bubblewrap)",
        )?;
        let (workspace, cwd) = self.directories(req)?;
        let args = self.bwrap_args(&workspace.to_string_lossy(), &cwd.to_string_lossy(), &req.command);
        Ok(Prepared {
            program: bwrap,
            args,
            cwd: Some(cwd),
            env: req.environment(),
        })
    }
}
