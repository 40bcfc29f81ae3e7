//! Spawning a prepared command in its own process group, capturing capped
//! output, enforcing the timeout, and killing the whole group on timeout,
//! on completion (stragglers left in the background) or when the future is
//! dropped (cancellation).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use crate::output::{Capped, combine};
use crate::request::{DEFAULT_PATH, ExecError, ExecResult};

/// A program and its arguments, ready to spawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// Its complete environment (nothing else is inherited).
    pub env: BTreeMap<String, String>,
}

/// Kills a process group when dropped, unless disarmed.
#[derive(Debug)]
pub(crate) struct GroupGuard(pub Option<i32>);

impl GroupGuard {
    /// Sends SIGKILL to the whole group.
    pub fn kill(&self) {
        if let Some(pgid) = self.0 {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }

    /// Stops guarding (the group has been killed and reaped), so a reused
    /// process id is never signalled.
    pub fn disarm(&mut self) {
        self.0 = None;
    }

    /// Kills now and never again.
    pub fn disarm_after_kill(mut self) {
        self.kill();
        self.disarm();
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Spawns `p` as the leader of a new process group, stdin closed,
/// stdout/stderr piped.
pub(crate) fn spawn(p: &Prepared) -> Result<(Child, GroupGuard), ExecError> {
    if let Some(cwd) = &p.cwd
        && !cwd.is_dir()
    {
        return Err(ExecError::InvalidCwd(cwd.clone()));
    }
    let mut cmd = Command::new(&p.program);
    cmd.args(&p.args)
        .env_clear()
        .envs(&p.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &p.cwd {
        cmd.current_dir(cwd);
    }
    let child = cmd.spawn().map_err(|source| ExecError::Spawn {
        program: p.program.display().to_string(),
        source,
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    Ok((child, GroupGuard(pgid)))
}

/// Reads a stream to its end into a capped buffer.
pub(crate) async fn drain(mut r: impl AsyncRead + Unpin, cap: usize, mut sink: impl FnMut(&[u8])) -> Capped {
    let mut c = Capped::new(cap);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or_default();
                c.push(chunk);
                sink(chunk);
            }
        }
    }
    c
}

/// Runs `p` to completion (or timeout) and collects its result. Dropping
/// the future kills the process group.
pub(crate) async fn run(p: &Prepared, timeout: Duration, cap: usize) -> Result<ExecResult, ExecError> {
    let start = Instant::now();
    let (mut child, mut guard) = spawn(p)?;
    let out = child.stdout.take();
    let err = child.stderr.take();
    let out_task = async move {
        match out {
            Some(o) => drain(o, cap, |_| {}).await,
            None => Capped::new(cap),
        }
    };
    let err_task = async move {
        match err {
            Some(e) => drain(e, cap, |_| {}).await,
            None => Capped::new(cap),
        }
    };
    let wait = async {
        let mut timed_out = false;
        let status = tokio::select! {
            s = child.wait() => s.ok(),
            () = tokio::time::sleep(timeout) => {
                timed_out = true;
                guard.kill();
                child.wait().await.ok()
            }
        };
        // Background stragglers would keep the pipes open: end the group.
        guard.kill();
        (status, timed_out)
    };
    let ((status, timed_out), o, e) = tokio::join!(wait, out_task, err_task);
    guard.disarm();
    let (stdout, stderr, truncated) = combine(&o, &e, cap);
    let exit_code = status.and_then(|s| s.code());
    Ok(ExecResult {
        ok: exit_code == Some(0) && !timed_out,
        exit_code,
        stdout,
        stderr,
        timed_out,
        truncated,
        duration_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// Finds `program` on the host's `PATH` (or, when `PATH` is not set at all,
/// in the usual system folders). A path with a slash is taken as it is, if
/// it names a file.
pub fn find_program(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return path.is_file().then_some(path);
    }
    let path = std::env::var("PATH").unwrap_or_else(|_| DEFAULT_PATH.to_string());
    path.split(':')
        .filter(|d| !d.is_empty())
        .map(|d| PathBuf::from(d).join(program))
        .find(|p| p.is_file())
}

/// `program` found by [`find_program`], or [`ExecError::ProgramMissing`]
/// with `hint` (what to install).
pub(crate) fn require_program(program: &str, hint: &str) -> Result<PathBuf, ExecError> {
    find_program(program).ok_or_else(|| ExecError::ProgramMissing {
        program: program.to_string(),
        hint: hint.to_string(),
    })
}
