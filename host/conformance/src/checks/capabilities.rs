//! The capabilities family: `capabilities`, the component's declaration
//! (its `toolhost:capabilities` section) against its imports. A capability
//! is usable only through an import, and some imports are refused or
//! useless without a declaration; a mismatch either way is a plugin that
//! cannot do what it says, or says less than it does.

use toolhost_runtime::capabilities::Declared;

use super::CheckId;
use super::artifact::Artifact;
use crate::report::{CheckReport, Problem, count};

/// The interface outbound HTTP goes through.
const HTTP: &str = "wasi:http/outgoing-handler";
/// The interface nested tool calls go through.
const TOOLS: &str = "toolhost:plugin/tools";
/// The interface elicitation and sampling (0.3.0) and roots (0.3.1) go
/// through.
const CLIENT: &str = "toolhost:plugin/client";
/// The interface granted directories are reached through.
const PREOPENS: &str = "wasi:filesystem/preopens";
/// The interface granted variables are read through.
const ENVIRONMENT: &str = "wasi:cli/environment";

/// `capabilities`: the declaration (its sections, with what `declare`
/// answered for a 0.2.0 component) matches the imports.
pub(crate) fn check(
    bytes: &[u8],
    artifact: Option<&Artifact>,
    answer: Option<&Declared>,
) -> (CheckReport, Option<Declared>) {
    let Some(artifact) = artifact else {
        return (
            CheckReport::skipped(CheckId::Capabilities, "the file is not a readable component"),
            None,
        );
    };
    let mut declared = match Declared::from_component(bytes) {
        Ok(declared) => declared,
        Err(e) => {
            let problem = Problem::component(
                e.message().to_string(),
                "write the declaration with toolhost_sdk::capabilities! (Rust): one `dir`, `env`, `http`, `secret`, `tool` or `client` line each",
            );
            return (
                CheckReport::ran(
                    CheckId::Capabilities,
                    "read its toolhost:capabilities section",
                    vec![problem],
                ),
                None,
            );
        }
    };
    let from = match answer {
        Some(answer) => {
            declared.merge(answer.clone());
            "its capability sections and declare()"
        }
        None => "its capability sections",
    };
    let tried = format!(
        "compared what {from} declare ({}) with its {}",
        describe(&declared),
        count(artifact.imports.len(), "import")
    );
    let problems = mismatches(&declared, artifact);
    (
        CheckReport::ran(CheckId::Capabilities, tried, problems).with_notes(notes(&declared, artifact)),
        Some(declared),
    )
}

/// The declaration in a few words: `dir /data, env TZ` or `nothing`.
fn describe(declared: &Declared) -> String {
    let mut parts = Vec::new();
    for (kind, values) in [
        ("dir", &declared.dirs),
        ("env", &declared.env),
        ("http", &declared.http),
        ("secret", &declared.secrets),
        ("tool", &declared.tools),
    ] {
        parts.extend(values.iter().map(|v| format!("{kind} {v}")));
    }
    for (wanted, what) in [
        (declared.elicitation, "client elicitation"),
        (declared.sampling, "client sampling"),
        (declared.roots, "client roots"),
    ] {
        if wanted {
            parts.push(what.to_string());
        }
    }
    if parts.is_empty() {
        "nothing declared".into()
    } else {
        parts.join(", ")
    }
}

/// What is worth telling the author but is not a failure.
///
/// Importing `toolhost:plugin/tools` without declaring a tool is not a
/// mismatch: componentize-py and jco import every interface of the world
/// whether the plugin calls tools or not, and the host denies an
/// undeclared nested call (fail-closed), so nothing can be reached
/// through the unused import.
fn notes(declared: &Declared, artifact: &Artifact) -> Vec<String> {
    let mut notes = Vec::new();
    if artifact.imports_interface(TOOLS) && declared.tools.is_empty() {
        notes.push(format!(
            "it imports {TOOLS} but declares no tool to call, so every nested call it makes is refused \
             (expected from componentize-py and jco, which import every interface of the world; \
             to call tools, declare them: Rust toolhost_sdk::capabilities! {{ tools: [\"name\"] }}, \
             any language on 0.2.0: return them from declare(), or `toolhost declare --tool NAME`)"
        ));
    }
    if artifact.imports_interface(CLIENT) && !declared.elicitation && !declared.sampling && !declared.roots {
        notes.push(format!(
            "it imports {CLIENT} but declares neither elicitation, sampling nor roots, so every question to the user, \
             request to the client's model and roots request it makes is refused (to ask, declare them: Rust \
             toolhost_sdk::capabilities! {{ elicitation: true, sampling: true, roots: true }}, any language: return \
             the first two from declare(), or `toolhost declare --elicitation --sampling --roots`)"
        ));
    }
    notes
}

fn mismatches(declared: &Declared, artifact: &Artifact) -> Vec<Problem> {
    let mut problems = Vec::new();
    let list = |values: &[String]| values.join(", ");
    let imports_http = artifact.imports_interface(HTTP);
    if imports_http && declared.http.is_empty() {
        problems.push(Problem::component(
            format!("it imports {HTTP} but declares no `http` host, so the host refuses to load it"),
            "declare the hosts it sends requests to (Rust: toolhost_sdk::capabilities! { http: [\"api.example.com\"] }; a 0.2.0 component in any language: return them from declare()), or drop the import (a JavaScript build: `jco componentize --disable http`)",
        ));
    }
    if !declared.http.is_empty() && !imports_http {
        problems.push(Problem::component(
            format!(
                "it declares `http {}` but does not import {HTTP}, so it can never send a request",
                list(&declared.http)
            ),
            "remove the `http` declaration, or send the requests through wasi:http (Rust: the wasip2 crate)",
        ));
    }
    if !declared.secrets.is_empty() && declared.http.is_empty() {
        problems.push(Problem::component(
            format!(
                "it declares `secret {}` but no `http` host: secrets are only ever sent with outbound requests",
                list(&declared.secrets)
            ),
            "declare the `http` hosts the secrets are for, or remove the `secret` declaration",
        ));
    }
    let imports_tools = artifact.imports_interface(TOOLS);
    if !declared.tools.is_empty() && !imports_tools {
        problems.push(Problem::component(
            format!(
                "it declares `tool {}` but does not import {TOOLS}, so it can never call them",
                list(&declared.tools)
            ),
            "remove the `tool` declaration, or call the tools (Rust: toolhost_sdk::tools::call)",
        ));
    }
    let asks: Vec<&str> = [
        (declared.elicitation, "elicitation"),
        (declared.sampling, "sampling"),
        (declared.roots, "roots"),
    ]
    .into_iter()
    .filter_map(|(wanted, what)| wanted.then_some(what))
    .collect();
    if !asks.is_empty() && !artifact.imports_interface(CLIENT) {
        problems.push(Problem::component(
            format!(
                "it declares `client {}` but does not import {CLIENT}, so it can never ask",
                asks.join("`, `client ")
            ),
            "remove the declaration, or ask the client (Rust: toolhost_sdk::client::elicit, sample or list_roots)",
        ));
    }
    if !declared.dirs.is_empty() && !artifact.imports_interface(PREOPENS) {
        problems.push(Problem::component(
            format!(
                "it declares `dir {}` but does not import {PREOPENS}, so it can never open the directory",
                list(&declared.dirs)
            ),
            "remove the `dir` declaration, or read the directory through WASI (Rust: std::fs)",
        ));
    }
    if !declared.env.is_empty() && !artifact.imports_interface(ENVIRONMENT) {
        problems.push(Problem::component(
            format!(
                "it declares `env {}` but does not import {ENVIRONMENT}, so it can never read the variable",
                list(&declared.env)
            ),
            "remove the `env` declaration, or read the variable through WASI (Rust: std::env::var)",
        ));
    }
    problems
}
