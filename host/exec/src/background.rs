//! Background processes: start one and get a handle, poll it, read its
//! output incrementally, kill it. Each finished process leaves exactly one
//! [`Receipt`], readable only by the session that started it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::backend::Backend;
use crate::output::Capped;
use crate::receipts::{Caller, Receipt, ReceiptStore};
use crate::request::{ExecError, ExecRequest};
use crate::runner::{GroupGuard, drain, spawn};
use toolhost_core::redact::Redactor;

/// The most live output kept per process for incremental reads.
pub const LIVE_LOG_BYTES: usize = 1024 * 1024;

/// The state of a background process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ProcState {
    /// Still running.
    Running,
    /// Finished.
    Exited {
        /// The exit code (`None` when killed by a signal).
        exit_code: Option<i32>,
        /// Whether its timeout ended it.
        timed_out: bool,
        /// Whether it was killed on request.
        killed: bool,
    },
}

/// Output read from a background process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputChunk {
    /// The output from the requested offset (lossy UTF-8).
    pub data: String,
    /// The offset to ask for next.
    pub next_offset: u64,
    /// Bytes before the kept window that could no longer be returned.
    pub skipped: u64,
}

#[derive(Debug, Default)]
struct Log {
    base: u64,
    bytes: VecDeque<u8>,
}

impl Log {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend(chunk);
        let over = self.bytes.len().saturating_sub(LIVE_LOG_BYTES);
        self.bytes.drain(..over);
        self.base += over as u64;
    }

    fn read(&self, offset: u64) -> OutputChunk {
        let start = offset.max(self.base);
        let skip = usize::try_from(start - self.base)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let data: Vec<u8> = self.bytes.iter().skip(skip).copied().collect();
        OutputChunk {
            data: String::from_utf8_lossy(&data).into_owned(),
            next_offset: self.base + self.bytes.len() as u64,
            skipped: start.saturating_sub(offset),
        }
    }
}

#[derive(Debug)]
struct Proc {
    owner: String,
    pgid: Option<i32>,
    killed: AtomicBool,
    log: Mutex<Log>,
    state: watch::Receiver<ProcState>,
}

/// Starts and tracks background processes of many sessions.
#[derive(Debug)]
pub struct BackgroundManager {
    backend: Arc<dyn Backend>,
    receipts: Arc<ReceiptStore>,
    procs: Mutex<HashMap<String, Arc<Proc>>>,
    counter: AtomicU64,
    /// Redacts live output read back, when set (receipts are redacted by
    /// the store regardless).
    live_redactor: Option<Redactor>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

impl BackgroundManager {
    /// A manager running commands on `backend`, keeping receipts in
    /// `receipts`.
    pub fn new(backend: Arc<dyn Backend>, receipts: ReceiptStore) -> BackgroundManager {
        BackgroundManager {
            backend,
            receipts: Arc::new(receipts),
            procs: Mutex::new(HashMap::new()),
            counter: AtomicU64::new(0),
            live_redactor: None,
        }
    }

    /// Redacts secrets from live output read back with
    /// [`BackgroundManager::read_output`] too (see [`toolhost_core::redact`]).
    pub fn with_live_redaction(mut self, redactor: Redactor) -> BackgroundManager {
        self.live_redactor = Some(redactor);
        self
    }

    fn get(&self, caller: &Caller<'_>, handle: &str) -> Option<Arc<Proc>> {
        let map = self.procs.lock().unwrap_or_else(|e| e.into_inner());
        map.get(handle).filter(|p| caller.owns(&p.owner)).cloned()
    }

    /// Starts `req` for `session`; returns its handle. Must be called
    /// within a Tokio runtime. The request's timeout bounds the lifetime.
    ///
    /// # Errors
    /// The backend's preparation errors, spawn failures, or no runtime.
    pub fn start(&self, session: &str, req: &ExecRequest) -> Result<String, ExecError> {
        let rt = tokio::runtime::Handle::try_current().map_err(|e| ExecError::Spawn {
            program: self.backend.name().into(),
            source: std::io::Error::other(e),
        })?;
        let prepared = self.backend.prepare(req)?;
        let (mut child, guard) = spawn(&prepared)?;
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let handle = format!("bg-{nanos:x}-{}-{n}", std::process::id());
        let (tx, rx) = watch::channel(ProcState::Running);
        let proc = Arc::new(Proc {
            owner: session.to_string(),
            pgid: guard.0,
            killed: AtomicBool::new(false),
            log: Mutex::new(Log::default()),
            state: rx,
        });
        {
            let mut map = self.procs.lock().unwrap_or_else(|e| e.into_inner());
            if map.len() > 1024 {
                map.retain(|_, p| *p.state.borrow() == ProcState::Running);
            }
            map.insert(handle.clone(), Arc::clone(&proc));
        }
        let (out, err) = (child.stdout.take(), child.stderr.take());
        let receipts = Arc::clone(&self.receipts);
        let (timeout, cap, command, started, h) = (
            req.timeout,
            req.output_cap,
            req.command.clone(),
            now_ms(),
            handle.clone(),
        );
        let combined = Arc::new(Mutex::new(Capped::new(cap)));
        let sink = |p: Arc<Proc>, c: Arc<Mutex<Capped>>| {
            move |chunk: &[u8]| {
                p.log.lock().unwrap_or_else(|e| e.into_inner()).push(chunk);
                c.lock().unwrap_or_else(|e| e.into_inner()).push(chunk);
            }
        };
        let (s1, s2) = (
            sink(Arc::clone(&proc), Arc::clone(&combined)),
            sink(Arc::clone(&proc), Arc::clone(&combined)),
        );
        rt.spawn(async move {
            let mut guard: GroupGuard = guard;
            let read_out = async move { if let Some(o) = out { drain(o, 0, s1).await; } };
            let read_err = async move { if let Some(e) = err { drain(e, 0, s2).await; } };
            let wait = async {
                let mut timed_out = false;
                let status = tokio::select! {
                    s = child.wait() => s.ok(),
                    () = tokio::time::sleep(timeout) => { timed_out = true; guard.kill(); child.wait().await.ok() }
                };
                guard.kill();
                (status, timed_out)
            };
            let ((status, timed_out), (), ()) = tokio::join!(wait, read_out, read_err);
            guard.disarm();
            let killed = proc.killed.load(Ordering::SeqCst);
            let exit_code = status.and_then(|s| s.code());
            let (output, truncated) = combined.lock().unwrap_or_else(|e| e.into_inner()).finish(cap);
            let h_log = h.clone();
            let receipt = Receipt { handle: h, owner_session: proc.owner.clone(), command, exit_code, timed_out, killed, started_ms: started, finished_ms: now_ms(), output, truncated };
            let written = tokio::task::spawn_blocking(move || receipts.write(&receipt)).await;
            if let Err(e) = written.map_err(|e| e.to_string()).and_then(|r| r.map_err(|e| e.to_string())) {
                tracing::warn!(handle = %h_log, "the process's receipt was not written: {e}");
            }
            let _ = tx.send(ProcState::Exited { exit_code, timed_out, killed });
        });
        Ok(handle)
    }

    /// The state of `handle` for `caller` (its session or one it continues).
    ///
    /// # Errors
    /// [`ExecError::UnknownHandle`] when the handle is unknown or belongs to
    /// another session.
    pub fn poll<'c>(&self, caller: impl Into<Caller<'c>>, handle: &str) -> Result<ProcState, ExecError> {
        let caller = caller.into();
        if let Some(p) = self.get(&caller, handle) {
            return Ok(*p.state.borrow());
        }
        let r = self.receipts.read(caller, handle)?;
        Ok(ProcState::Exited {
            exit_code: r.exit_code,
            timed_out: r.timed_out,
            killed: r.killed,
        })
    }

    /// Output from `offset` (0 for the start); pass `next_offset` to the
    /// next call to read only what is new.
    ///
    /// # Errors
    /// As [`BackgroundManager::poll`].
    pub fn read_output<'c>(
        &self,
        caller: impl Into<Caller<'c>>,
        handle: &str,
        offset: u64,
    ) -> Result<OutputChunk, ExecError> {
        let caller = caller.into();
        if let Some(p) = self.get(&caller, handle) {
            let mut chunk = p.log.lock().unwrap_or_else(|e| e.into_inner()).read(offset);
            if let Some(r) = &self.live_redactor {
                chunk.data = r.redact(&chunk.data);
            }
            return Ok(chunk);
        }
        let r = self.receipts.read(caller, handle)?;
        let bytes = r.output.as_bytes();
        let from = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
        Ok(OutputChunk {
            data: String::from_utf8_lossy(bytes.get(from..).unwrap_or_default()).into_owned(),
            next_offset: bytes.len() as u64,
            skipped: 0,
        })
    }

    /// Kills the process group of `handle`.
    ///
    /// # Errors
    /// As [`BackgroundManager::poll`].
    pub fn kill<'c>(&self, caller: impl Into<Caller<'c>>, handle: &str) -> Result<(), ExecError> {
        let caller = caller.into();
        let p = self
            .get(&caller, handle)
            .ok_or_else(|| ExecError::UnknownHandle(handle.to_string()))?;
        if *p.state.borrow() == ProcState::Running {
            p.killed.store(true, Ordering::SeqCst);
            GroupGuard(p.pgid).disarm_after_kill();
        }
        Ok(())
    }

    /// Waits until `handle` has finished and its receipt is written.
    ///
    /// # Errors
    /// As [`BackgroundManager::poll`].
    pub async fn wait<'c>(
        &self,
        caller: impl Into<Caller<'c>>,
        handle: &str,
    ) -> Result<ProcState, ExecError> {
        let caller = caller.into();
        let Some(p) = self.get(&caller, handle) else {
            return self.poll(caller, handle);
        };
        let mut rx = p.state.clone();
        let _ = rx.wait_for(|s| *s != ProcState::Running).await;
        let state = *rx.borrow();
        Ok(state)
    }

    /// The receipt of a finished process, for its owner only.
    ///
    /// # Errors
    /// [`ExecError::UnknownHandle`] when missing or owned by another session.
    pub fn receipt<'c>(&self, caller: impl Into<Caller<'c>>, handle: &str) -> Result<Receipt, ExecError> {
        self.receipts.read(caller, handle)
    }
}
