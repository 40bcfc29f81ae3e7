//! What a run of the suite found: a [`Report`] per component, one
//! [`CheckReport`] per check, and the human rendering of both.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::checks::CheckId;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The component passed the check.
    Passed,
    /// The component failed the check: see its problems.
    Failed,
    /// The check could not run (an earlier check failed) or does not apply;
    /// the report says why.
    Skipped,
}

/// One thing wrong with the component, found by a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The tool concerned, when the problem is one tool's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What is wrong, with what was tried (arguments, limits) when it helps.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl Problem {
    /// A problem of the whole component.
    pub(crate) fn component(message: impl Into<String>, fix: impl Into<String>) -> Self {
        Problem {
            tool: None,
            message: message.into(),
            fix: fix.into(),
        }
    }

    /// A problem of tool `tool`.
    pub(crate) fn tool(tool: &str, message: impl Into<String>, fix: impl Into<String>) -> Self {
        Problem {
            tool: Some(tool.to_string()),
            message: message.into(),
            fix: fix.into(),
        }
    }
}

/// What one check found.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// Which check.
    pub check: CheckId,
    /// Passed, failed or skipped. Failed exactly when `problems` is not
    /// empty.
    pub status: Status,
    /// What the check tried, in a sentence.
    pub tried: String,
    /// What it found wrong (empty unless failed).
    pub problems: Vec<Problem>,
    /// Why it was skipped (only when skipped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Remarks that are not failures (a tool that accepted arguments its
    /// schema forbids, say).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// How long the check took, in milliseconds.
    pub elapsed_ms: u64,
}

impl CheckReport {
    /// The report of a check that ran: failed if there are problems,
    /// passed otherwise.
    pub(crate) fn ran(check: CheckId, tried: impl Into<String>, problems: Vec<Problem>) -> Self {
        CheckReport {
            check,
            status: if problems.is_empty() {
                Status::Passed
            } else {
                Status::Failed
            },
            tried: tried.into(),
            problems,
            skipped: None,
            notes: Vec::new(),
            elapsed_ms: 0,
        }
    }

    /// The report of a check that could not run, and why.
    pub(crate) fn skipped(check: CheckId, why: impl Into<String>) -> Self {
        CheckReport {
            check,
            status: Status::Skipped,
            tried: "nothing".into(),
            problems: Vec::new(),
            skipped: Some(why.into()),
            notes: Vec::new(),
            elapsed_ms: 0,
        }
    }

    pub(crate) fn with_notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    pub(crate) fn took(mut self, elapsed: Duration) -> Self {
        self.elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        self
    }
}

/// The suite's findings on one component.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The component file, as given.
    pub file: String,
    /// Its identity (`blake3:…`), when it could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// The world it implements (`toolhost:plugin/plugin@0.1.0`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world: Option<String>,
    /// The names of its tools, as listed (empty if they could not be listed).
    pub tools: Vec<String>,
    /// Every check, in the order they ran (each of [`CheckId::ALL`] once).
    pub checks: Vec<CheckReport>,
    /// How long the whole run took, in milliseconds.
    pub elapsed_ms: u64,
}

impl Report {
    /// True when no check failed (skipped checks do not fail a report).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Failed)
    }

    /// The report of check `id`.
    pub fn check(&self, id: CheckId) -> Option<&CheckReport> {
        self.checks.iter().find(|c| c.check == id)
    }

    /// The checks that failed.
    pub fn failed(&self) -> impl Iterator<Item = &CheckReport> {
        self.checks.iter().filter(|c| c.status == Status::Failed)
    }

    /// How many checks passed, failed and were skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |s: Status| self.checks.iter().filter(|c| c.status == s).count();
        (
            count(Status::Passed),
            count(Status::Failed),
            count(Status::Skipped),
        )
    }

    /// Panics, with the human report as the message, unless every check
    /// passed or was skipped. For `cargo test`.
    #[track_caller]
    pub fn assert_passed(&self) {
        if !self.passed() {
            panic!(
                "the component failed toolhost conformance:\n\n{}",
                self.to_human()
            );
        }
    }

    /// The report as JSON (the shape of `toolhost conformance --format json`'s
    /// `components` items).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }))
    }

    /// The report for a person: a line per check (`PASS`, `FAIL`, `SKIP`,
    /// its name and what it checks), what it tried, and each problem with
    /// the tool concerned and its fix.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.file);
        let mut about = Vec::new();
        if let Some(hash) = &self.hash {
            about.push(hash.clone());
        }
        if let Some(world) = &self.world {
            about.push(world.clone());
        }
        if !self.tools.is_empty() {
            let plural = if self.tools.len() == 1 { "" } else { "s" };
            about.push(format!(
                "{} tool{plural}: {}",
                self.tools.len(),
                self.tools.join(", ")
            ));
        }
        if !about.is_empty() {
            let _ = writeln!(out, "  {}", about.join(" · "));
        }
        out.push('\n');
        for check in &self.checks {
            let mark = match check.status {
                Status::Passed => "PASS",
                Status::Failed => "FAIL",
                Status::Skipped => "SKIP",
            };
            let _ = writeln!(
                out,
                "  {mark}  {:<14}{}",
                check.check.as_str(),
                check.check.title()
            );
            match &check.skipped {
                Some(why) => {
                    let _ = writeln!(out, "        skipped: {why}");
                }
                None => {
                    let _ = writeln!(out, "        tried: {}", check.tried);
                }
            }
            for problem in &check.problems {
                let who = match &problem.tool {
                    Some(tool) => format!("tool `{tool}`: "),
                    None => String::new(),
                };
                let _ = writeln!(out, "        ✗ {who}{}", problem.message);
                let _ = writeln!(out, "          fix: {}", problem.fix);
            }
            for note in &check.notes {
                let _ = writeln!(out, "        note: {note}");
            }
        }
        let (passed, failed, skipped) = self.counts();
        let verdict = if failed == 0 { "PASSED" } else { "FAILED" };
        let _ = writeln!(
            out,
            "\n  {verdict}: of {} checks, {passed} passed, {failed} failed, {skipped} skipped ({} ms)",
            self.checks.len(),
            self.elapsed_ms
        );
        out
    }
}

/// The human reports of several components, one after the other, with a
/// closing line when there is more than one.
pub fn human_summary(reports: &[Report]) -> String {
    let mut out = reports
        .iter()
        .map(Report::to_human)
        .collect::<Vec<_>>()
        .join("\n");
    if reports.len() > 1 {
        let failed = reports.iter().filter(|r| !r.passed()).count();
        let _ = writeln!(
            out,
            "\n{} components checked: {} passed conformance, {failed} did not",
            reports.len(),
            reports.len() - failed
        );
    }
    out
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// `n` and `what`, plural unless one: `1 tool`, `3 tools`.
pub(crate) fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
