//! toolhost-detector's integration tests: one binary, one module per area.
//! The indirection classes (names defined and used later, written files
//! and scripts, commands in options, the environment, interpreter APIs,
//! credentials, protected paths) each have a module with positive and
//! benign variants.

mod adversarial;
mod bulk;
mod clients;
mod confusables;
mod corpus;
mod credentials;
mod definitions;
mod environment;
mod interpreters;
mod lookalikes;
mod opaque;
mod options;
mod outputs;
mod protected;
mod remotes;
mod scripts;
mod services;
mod serving;

use toolhost_detector::{Category, Verdict, detect};

/// Asserts that `cmd` is flagged with category `cat`; returns the verdict.
#[track_caller]
pub fn flagged(cmd: &str, cat: Category) -> Verdict {
    let v = detect(cmd);
    assert!(
        v.categories.contains(&cat),
        "{cmd:?} should be {cat}, got {}",
        v.summary()
    );
    v
}

/// Asserts that `cmd` runs without approval.
#[track_caller]
pub fn clean(cmd: &str) {
    let v = detect(cmd);
    assert!(
        !v.dangerous,
        "{cmd:?} should run without approval, got {}",
        v.summary()
    );
}

/// Asserts that `cmd` is flagged opaque (needs approval because the
/// detector cannot see what runs).
#[track_caller]
pub fn opaque(cmd: &str) -> Verdict {
    let v = detect(cmd);
    assert!(v.opaque && v.dangerous, "{cmd:?} should be opaque, got {v:?}");
    v
}
