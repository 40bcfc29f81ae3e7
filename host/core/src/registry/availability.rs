//! # Availability checks
//!
//! A [`Check`] decides whether a tool appears in the model's definitions: an
//! environment variable is set, a binary is on `PATH`, a service answers.
//! A check that returns an error or panics means "unavailable" (fail-safe).
//!
//! Several tools may share one check (clone the `Check`): within one
//! definitions call it runs once, and its answer is reused ([`CheckCache`]).
//!
//! ```
//! use toolhost_core::registry::Check;
//!
//! let always = Check::new(|| true);
//! let panics = Check::new(|| panic!("boom"));
//! assert!(always.run());
//! assert!(!panics.run());
//! assert!(!Check::env("TOOLHOST_SURELY_UNSET_VARIABLE").run());
//! ```

use std::collections::HashMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;

type CheckFn = dyn Fn() -> Result<bool, String> + Send + Sync;

/// An availability check. Clones share identity, so a check shared by
/// several tools runs once per definitions call.
#[derive(Clone)]
pub struct Check {
    label: Arc<str>,
    run: Arc<CheckFn>,
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Check").field(&self.label).finish()
    }
}

impl Check {
    /// A check from a closure returning whether the tool is available.
    pub fn new(check: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Check::fallible("custom", move || Ok(check()))
    }

    /// A check from a closure that may fail; a failure means unavailable.
    /// `label` names it in logs.
    pub fn fallible(
        label: impl Into<String>,
        check: impl Fn() -> Result<bool, String> + Send + Sync + 'static,
    ) -> Self {
        Check {
            label: label.into().into(),
            run: Arc::new(check),
        }
    }

    /// Available when environment variable `var` is set and not empty.
    pub fn env(var: impl Into<String>) -> Self {
        let var = var.into();
        Check::fallible(format!("env {var}"), move || {
            Ok(std::env::var_os(&var).is_some_and(|v| !v.is_empty()))
        })
    }

    /// Available when an executable named `binary` is on `PATH`.
    pub fn binary(binary: impl Into<String>) -> Self {
        let binary = binary.into();
        Check::fallible(format!("binary {binary}"), move || {
            let path = std::env::var_os("PATH").ok_or("PATH is not set")?;
            Ok(std::env::split_paths(&path).any(|dir| is_file(&dir.join(&binary))))
        })
    }

    /// What the check tests, for logs.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Runs the check. Never panics: an error or a panic is `false`.
    pub fn run(&self) -> bool {
        match catch_unwind(AssertUnwindSafe(|| (self.run)())) {
            Ok(Ok(available)) => available,
            Ok(Err(e)) => {
                tracing::debug!(check = %self.label, error = %e, "availability check failed");
                false
            }
            Err(_) => {
                tracing::warn!(check = %self.label, "availability check panicked");
                false
            }
        }
    }

    fn key(&self) -> usize {
        Arc::as_ptr(&self.run) as *const () as usize
    }
}

fn is_file(path: &Path) -> bool {
    path.metadata().is_ok_and(|m| m.is_file())
}

/// The answers of checks within one definitions (or dispatch) call: each
/// distinct check runs at most once.
#[derive(Debug, Default)]
pub struct CheckCache {
    answers: HashMap<usize, bool>,
}

impl CheckCache {
    /// An empty cache.
    pub fn new() -> Self {
        CheckCache::default()
    }

    /// Whether `check` passes (true when there is no check), running it only
    /// if it has not run in this cache yet.
    pub fn passes(&mut self, check: Option<&Check>) -> bool {
        let Some(check) = check else { return true };
        *self.answers.entry(check.key()).or_insert_with(|| check.run())
    }
}
