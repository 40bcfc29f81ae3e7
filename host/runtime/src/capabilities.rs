//! # Capabilities: declared and granted
//!
//! A plugin gets nothing it was not granted. A capability is usable only when
//! the component **declares** it **and** the operator **grants** it in the
//! host config, for that plugin. A component declares in either of two ways,
//! whose union counts, and both travel with its hash:
//!
//! - a `toolhost:capabilities` custom section (the SDK's `capabilities!`
//!   macro writes one; `toolhost declare` adds one to any component);
//! - from `0.2.0` on, the answer of its `declare()` export, called once
//!   at load in a sandbox with no capabilities (any language can implement
//!   it).
//!
//! | capability | declared as | granted as | in the sandbox |
//! |---|---|---|---|
//! | a directory | `dirs /guest/path` | [`DirGrant`] (host folder, guest path, read-only or read-write) | a preopened directory; the host side is a capability handle (cap-std), so no path (`..`, absolute, symlink) can leave it |
//! | an environment variable | `env NAME` | its name in [`Grants::env`] | the host's value, under the same name |
//! | calling a tool | `tools NAME` | its name in [`Grants::tools`] | `toolhost:plugin/tools.call` may call it, through the dispatch pipeline |
//! | outbound HTTP | `http HOST` (`*`, `*.example.com`, a name or an address) | [`HttpGrant`]s in [`Grants::http`] | `wasi:http/outgoing-handler`, filtered: see [`crate::http`] |
//! | a secret | `secret NAME` | a [`SecretGrant`] in [`Grants::secrets`] | a request header the host adds for the granted hosts; the guest never sees the value |
//! | asking the user (elicitation) | `client elicitation` | [`Grants::elicitation`] | `toolhost:plugin/client.elicit` reaches the call's MCP client, when it has one that can answer |
//! | asking the client's model (sampling) | `client sampling` | a [`SamplingGrant`] in [`Grants::sampling`]: a budget of requests and tokens per call | `toolhost:plugin/client.sample` reaches the call's MCP client, within the budget |
//! | listing the client's roots | `client roots` (the section only: 0.3.x's `declare()` record has no field for it) | [`Grants::roots`] | `toolhost:plugin/client.list-roots` (0.3.1) reaches the call's MCP client, when it has one that can answer |
//!
//! A section may also say how the component's tools run, which is not a
//! capability and needs no grant: `task TOOL optional` or `task TOOL
//! required` lets the MCP server run that tool's calls as tasks (MCP's tasks
//! extension; see [`Declared::tasks`]). WIT records cannot gain fields
//! compatibly, so the section is where a released world's component says it.
//!
//! What a component declares but is not granted is simply absent (the guest
//! sees no such directory or variable); what is granted but not declared is
//! not given either. [`Effective`] is the intersection, computed at load and
//! reported by `toolhost inspect` and in the load log.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toolhost_core::registry::TaskSupport;

use crate::http::{HttpAccess, HttpGrant, SecretGrant};
use toolhost_core::error::{Error, ErrorCode, Result};

/// The name of the custom section holding a component's declarations.
pub const SECTION: &str = "toolhost:capabilities";

/// The most capabilities a component may declare, in all.
pub const MAX_DECLARED: usize = 1024;

/// The longest declared value (a path, a name, a host pattern), in bytes.
pub const MAX_DECLARED_VALUE: usize = 1024;

/// What a component asks for: the union of its `toolhost:capabilities`
/// custom sections and, from 0.2.0 on, what its `declare()` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Declared {
    /// Guest paths of directories it wants preopened.
    pub dirs: Vec<String>,
    /// Environment variable names it wants to read.
    pub env: Vec<String>,
    /// Names of tools it wants to call.
    pub tools: Vec<String>,
    /// Host patterns it wants to send HTTP requests to.
    pub http: Vec<String>,
    /// Names of secrets it wants sent with its requests.
    pub secrets: Vec<String>,
    /// Whether it asks the client's user questions (`client elicitation`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub elicitation: bool,
    /// Whether it asks the client's model for completions (`client
    /// sampling`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sampling: bool,
    /// Whether it lists the client's roots (`client roots`; declared in the
    /// custom section only, since `declare()`'s record has no such field).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub roots: bool,
    /// Tools whose calls may run as MCP tasks, and how (`task TOOL
    /// optional|required` lines; not a capability: no grant needed). A name
    /// the component does not list fails its load.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<(String, TaskSupport)>,
    /// Tools of [`Declared::tasks`] whose calls become tasks when the tool
    /// says so (`client.begin-task`, 0.3.1), not when they start: what
    /// they ask before is asked of the request itself (`task TOOL
    /// deferred`, or `deferred` after the support word). A name without
    /// task support fails the load.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tasks_deferred: Vec<String>,
}

/// The values of a `client` declaration line: what a plugin may ask the
/// client of a call.
const CLIENT_CAPABILITIES: [&str; 3] = ["elicitation", "sampling", "roots"];

impl Declared {
    /// Reads the declarations from a component's bytes: every
    /// `toolhost:capabilities` custom section, at any nesting depth (the SDK
    /// writes it into the core module the component wraps; `toolhost
    /// declare` appends one to the component itself).
    ///
    /// # Errors
    ///
    /// `invalid_component` when a section is not UTF-8 or has an unknown line.
    pub fn from_component(bytes: &[u8]) -> Result<Declared> {
        let mut declared = Declared::default();
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            let Ok(payload) = payload else { break };
            if let wasmparser::Payload::CustomSection(section) = payload
                && section.name() == SECTION
            {
                declared.add_section(section.data())?;
            }
        }
        declared.dedup();
        Ok(declared)
    }

    /// Adds the declarations of one `toolhost:capabilities` section: one
    /// `KIND VALUE` line each (`dir`, `env`, `http`, `secret`, `tool`, and
    /// `client elicitation`, `client sampling` or `client roots`).
    ///
    /// # Errors
    ///
    /// `invalid_component` when it is not UTF-8 or has an unknown line.
    pub(crate) fn add_section(&mut self, data: &[u8]) -> Result<()> {
        let text = std::str::from_utf8(data).map_err(|_| {
            Error::new(
                ErrorCode::InvalidComponent,
                "the toolhost:capabilities section is not UTF-8",
            )
        })?;
        self.parse(text)
    }

    /// The declaration as section text, one `KIND VALUE` line each (what
    /// [`Declared::from_component`] reads back).
    pub fn to_section(&self) -> String {
        let mut out = String::new();
        for (kind, values) in self.kinds() {
            for value in values {
                out.push_str(kind);
                out.push(' ');
                out.push_str(value);
                out.push('\n');
            }
        }
        for (wanted, name) in [
            (self.elicitation, "elicitation"),
            (self.sampling, "sampling"),
            (self.roots, "roots"),
        ] {
            if wanted {
                out.push_str("client ");
                out.push_str(name);
                out.push('\n');
            }
        }
        for (tool, support) in &self.tasks {
            out.push_str(&format!("task {tool} {}\n", support.as_str()));
        }
        for tool in &self.tasks_deferred {
            out.push_str(&format!("task {tool} deferred\n"));
        }
        out
    }

    fn kinds(&self) -> [(&'static str, &Vec<String>); 5] {
        [
            ("dir", &self.dirs),
            ("env", &self.env),
            ("http", &self.http),
            ("secret", &self.secrets),
            ("tool", &self.tools),
        ]
    }

    /// Adds everything `other` declares (a union; order kept, no repeats).
    pub fn merge(&mut self, other: Declared) {
        self.dirs.extend(other.dirs);
        self.env.extend(other.env);
        self.tools.extend(other.tools);
        self.http.extend(other.http);
        self.secrets.extend(other.secrets);
        self.elicitation |= other.elicitation;
        self.sampling |= other.sampling;
        self.roots |= other.roots;
        self.tasks.extend(other.tasks);
        self.tasks_deferred.extend(other.tasks_deferred);
        self.dedup();
    }

    /// Removes repeated values, keeping the first of each.
    pub(crate) fn dedup(&mut self) {
        fn dedup(values: &mut Vec<String>) {
            let mut seen = std::collections::HashSet::new();
            values.retain(|v| seen.insert(v.clone()));
        }
        dedup(&mut self.dirs);
        dedup(&mut self.env);
        dedup(&mut self.tools);
        dedup(&mut self.http);
        dedup(&mut self.secrets);
        dedup(&mut self.tasks_deferred);
        // The first declaration of a tool's task support counts.
        let mut seen = std::collections::HashSet::new();
        self.tasks.retain(|(tool, _)| seen.insert(tool.clone()));
    }

    /// Checks what a component's `declare()` returned, as it checks a
    /// section's lines: no empty or multi-line value, none longer than
    /// [`MAX_DECLARED_VALUE`] bytes, at most [`MAX_DECLARED`] values in all.
    ///
    /// # Errors
    ///
    /// `invalid_component`, naming the value.
    pub(crate) fn check(&self) -> Result<()> {
        let invalid = |m: String| Error::new(ErrorCode::InvalidComponent, m);
        let count: usize = self.kinds().iter().map(|(_, v)| v.len()).sum();
        if count > MAX_DECLARED {
            return Err(invalid(format!(
                "the component declares {count} capabilities, more than the limit of {MAX_DECLARED}"
            )));
        }
        for (kind, values) in self.kinds() {
            for value in values {
                if value.trim().is_empty() || value.contains(['\n', '\r']) || value.len() > MAX_DECLARED_VALUE
                {
                    let mut shown = value.clone();
                    toolhost_core::text::truncate_utf8(&mut shown, 80);
                    return Err(invalid(format!(
                        "the component declares `{kind}` {shown:?}, which is not a valid value: it must be one non-empty line of at most {MAX_DECLARED_VALUE} bytes"
                    )));
                }
            }
        }
        Ok(())
    }

    fn parse(&mut self, text: &str) -> Result<()> {
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (kind, value) = line.split_once(' ').unwrap_or((line, ""));
            let value = value.trim().to_string();
            match kind {
                "dir" | "dirs" if !value.is_empty() => self.dirs.push(value),
                "env" if !value.is_empty() => self.env.push(value),
                "tool" | "tools" if !value.is_empty() => self.tools.push(value),
                "http" if !value.is_empty() => self.http.push(value),
                "secret" if !value.is_empty() => self.secrets.push(value),
                "client" if value == CLIENT_CAPABILITIES[0] => self.elicitation = true,
                "client" if value == CLIENT_CAPABILITIES[1] => self.sampling = true,
                "client" if value == CLIENT_CAPABILITIES[2] => self.roots = true,
                "task" => {
                    let (tool, support, deferred) = task_line(line, &value)?;
                    if let Some(support) = support {
                        self.tasks.push((tool.clone(), support));
                    }
                    if deferred {
                        self.tasks_deferred.push(tool);
                    }
                }
                _ => {
                    return Err(Error::new(
                        ErrorCode::InvalidComponent,
                        format!("the toolhost:capabilities section has an unknown line {line:?}"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// True when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
            && self.env.is_empty()
            && self.tools.is_empty()
            && self.http.is_empty()
            && self.secrets.is_empty()
            && !self.elicitation
            && !self.sampling
            && !self.roots
            && self.tasks.is_empty()
            && self.tasks_deferred.is_empty()
    }
}

/// Reads the value of a `task TOOL WORD...` line: at most one support
/// word (`optional`, `required`, `forbidden`) and `deferred`, at least one
/// of them.
fn task_line(line: &str, value: &str) -> Result<(String, Option<TaskSupport>, bool)> {
    let bad = || {
        Error::new(
            ErrorCode::InvalidComponent,
            format!(
                "the toolhost:capabilities section has a bad task line {line:?}: write `task TOOL optional`, `task TOOL required` or `task TOOL forbidden`, with `deferred` after it (or on a line of its own) for a tool that begins its task itself"
            ),
        )
    };
    let mut words = value.split(' ');
    let tool = words.next().unwrap_or_default();
    if tool.is_empty() || tool.len() > MAX_DECLARED_VALUE {
        return Err(bad());
    }
    let (mut support, mut deferred) = (None, false);
    for word in words {
        match (word, TaskSupport::parse(word)) {
            ("deferred", _) if !deferred => deferred = true,
            (_, Some(s)) if support.is_none() => support = Some(s),
            _ => return Err(bad()),
        }
    }
    if support.is_none() && !deferred {
        return Err(bad());
    }
    Ok((tool.to_string(), support, deferred))
}

/// Adds the declarations in `more` to the component in `bytes`, whatever
/// built it: appends a `toolhost:capabilities` custom section (a custom
/// section at the end of a component is valid, and changes nothing but the
/// declaration and the hash) holding what `more` declares that the
/// component does not already. Returns the new bytes and what was added
/// (nothing added: the bytes unchanged). This is `toolhost declare`.
///
/// # Errors
///
/// `invalid_component` when `bytes` are not a component or its present
/// declaration does not parse; `config` when a value of `more` is not a
/// valid declaration (an empty or multi-line value, an `http` value that is
/// not a host pattern).
pub fn declare(bytes: &[u8], more: &Declared) -> Result<(Vec<u8>, Declared)> {
    if !wasmparser::Parser::is_component(bytes) {
        return Err(Error::new(
            ErrorCode::InvalidComponent,
            "these bytes are not a WebAssembly component; declare capabilities on the component a toolchain built (wasm32-wasip2, jco, componentize-py), not on a core module",
        ));
    }
    more.check()
        .map_err(|e| Error::new(ErrorCode::Config, e.message().to_string()))?;
    if let Some(bad) = more
        .http
        .iter()
        .find(|h| crate::http::HostPattern::parse(h).is_none())
    {
        return Err(Error::new(
            ErrorCode::Config,
            format!(
                "`http {bad}` is not a host pattern: use a name (api.example.com), `*.example.com`, `*` or an IP address"
            ),
        ));
    }
    let present = Declared::from_component(bytes)?;
    let new = |values: &[String], present: &[String]| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for v in values {
            if !present.contains(v) && !out.contains(v) {
                out.push(v.clone());
            }
        }
        out
    };
    let added = Declared {
        dirs: new(&more.dirs, &present.dirs),
        env: new(&more.env, &present.env),
        tools: new(&more.tools, &present.tools),
        http: new(&more.http, &present.http),
        secrets: new(&more.secrets, &present.secrets),
        elicitation: more.elicitation && !present.elicitation,
        sampling: more.sampling && !present.sampling,
        roots: more.roots && !present.roots,
        tasks: more
            .tasks
            .iter()
            .filter(|(tool, _)| !present.tasks.iter().any(|(t, _)| t == tool))
            .cloned()
            .collect(),
        tasks_deferred: new(&more.tasks_deferred, &present.tasks_deferred),
    };
    if added.is_empty() {
        return Ok((bytes.to_vec(), added));
    }
    let text = added.to_section();
    let section = wasm_encoder::CustomSection {
        name: SECTION.into(),
        data: text.as_bytes().into(),
    };
    let mut out = bytes.to_vec();
    wasm_encoder::Section::append_to(&section, &mut out);
    Ok((out, added))
}

/// Access to a granted directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DirMode {
    /// Read only (the default).
    #[default]
    Ro,
    /// Read and write.
    Rw,
}

/// A directory the operator grants to a plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirGrant {
    /// The folder on the host (relative paths are relative to the config file).
    pub host: PathBuf,
    /// Where the guest sees it; must match a declared `dir`.
    pub guest: String,
    /// `ro` (default) or `rw`.
    #[serde(default)]
    pub mode: DirMode,
}

/// What the operator grants one plugin (`[plugins.grants]` in the config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Directories.
    #[serde(default)]
    pub dirs: Vec<DirGrant>,
    /// Environment variable names passed through from the host.
    #[serde(default)]
    pub env: Vec<String>,
    /// Names of tools the plugin may call.
    #[serde(default)]
    pub tools: Vec<String>,
    /// Destinations for outbound HTTP.
    #[serde(default)]
    pub http: Vec<HttpGrant>,
    /// Secrets injected as request headers.
    #[serde(default)]
    pub secrets: Vec<SecretGrant>,
    /// Whether the plugin may ask the user of a call's MCP client questions
    /// (elicitation).
    #[serde(default)]
    pub elicitation: bool,
    /// Whether (and how much) the plugin may ask the call's MCP client for
    /// completions from its model (sampling).
    #[serde(default)]
    pub sampling: Option<SamplingGrant>,
    /// Whether the plugin may list the roots of a call's MCP client (the
    /// directories and files it exposes).
    #[serde(default)]
    pub roots: bool,
}

/// The budget of a sampling grant, per call: how many requests a call may
/// make, and how many tokens their answers may take in all (the sum of the
/// requests' `max_tokens`). A request past either is refused as `blocked`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SamplingGrant {
    /// Requests per call (default 1).
    #[serde(default = "SamplingGrant::default_requests")]
    pub requests: u32,
    /// Tokens per call, over all its requests (default 1024).
    #[serde(default = "SamplingGrant::default_max_tokens")]
    pub max_tokens: u32,
}

impl SamplingGrant {
    fn default_requests() -> u32 {
        1
    }

    fn default_max_tokens() -> u32 {
        1024
    }
}

impl Default for SamplingGrant {
    fn default() -> Self {
        SamplingGrant {
            requests: Self::default_requests(),
            max_tokens: Self::default_max_tokens(),
        }
    }
}

/// The capabilities a component actually gets: declared ∩ granted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Effective {
    /// Directories to preopen.
    pub dirs: Vec<DirGrant>,
    /// Environment variables, with the values they had at load.
    #[serde(serialize_with = "names_only")]
    pub env: Vec<(String, String)>,
    /// Tools it may call.
    pub tools: Vec<String>,
    /// Whether it may call any tool its caller accepts instead (see
    /// [`ToolCalls::Caller`](crate::component::ToolCalls::Caller)); never
    /// set by a grant.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tools_from_caller: bool,
    /// Outbound HTTP: declared hosts, granted rules, and secrets.
    pub http: HttpAccess,
    /// Whether it may ask the user of a call's client questions.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub elicitation: bool,
    /// Its sampling budget, when it may ask the client's model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingGrant>,
    /// Whether it may list the client's roots.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub roots: bool,
    /// Declared capabilities that were not granted (for the load log).
    pub not_granted: Vec<String>,
    /// Granted capabilities the component does not declare, which it
    /// therefore does not get (warned about at load: a grant that is
    /// silently useless is a configuration mistake).
    pub not_declared: Vec<String>,
}

fn names_only<S: serde::Serializer>(env: &[(String, String)], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(env.iter().map(|(k, _)| k))
}

impl Effective {
    /// A redactor for what the guest writes (its captured stdout and
    /// stderr, in logs and error messages): the credential shapes, the
    /// values of granted environment variables whose names look secret, and
    /// the values of the secrets the host injects into its requests.
    pub fn redactor(&self) -> toolhost_core::redact::Redactor {
        let env = self
            .env
            .iter()
            .filter(|(name, _)| toolhost_core::redact::is_secret_name(name))
            .map(|(_, value)| value.clone());
        let injected = self.http.secrets.iter().map(|s| s.raw.clone());
        toolhost_core::redact::Redactor::new(env.chain(injected))
    }

    /// Intersects `declared` with `grants`. A granted directory must exist on
    /// the host; a granted variable that is unset on the host is left out.
    ///
    /// # Errors
    ///
    /// `config` when a granted host directory does not exist or is not a
    /// directory, or an `http` or `secrets` grant is invalid;
    /// `invalid_component` when a declared `http` host is not a host pattern.
    pub fn resolve(declared: &Declared, grants: &Grants) -> Result<Effective> {
        let mut effective = Effective::default();
        for guest in &declared.dirs {
            match grants.dirs.iter().find(|g| &g.guest == guest) {
                Some(grant) => {
                    if !grant.host.is_dir() {
                        return Err(Error::new(
                            ErrorCode::Config,
                            format!(
                                "the directory granted as {guest} ({}) does not exist or is not a directory",
                                grant.host.display()
                            ),
                        ));
                    }
                    // The folder as it resolves now (symbolic links
                    // followed): each call preopens this path, so a link
                    // swapped in later cannot move the grant.
                    let host = grant.host.canonicalize().map_err(|e| {
                        Error::new(
                            ErrorCode::Config,
                            format!(
                                "the directory granted as {guest} ({}) cannot be resolved: {e}",
                                grant.host.display()
                            ),
                        )
                    })?;
                    effective.dirs.push(DirGrant {
                        host,
                        ..grant.clone()
                    });
                }
                None => effective.not_granted.push(format!("dir {guest}")),
            }
        }
        for name in &declared.env {
            if grants.env.contains(name) {
                if let Ok(value) = std::env::var(name) {
                    effective.env.push((name.clone(), value));
                }
            } else {
                effective.not_granted.push(format!("env {name}"));
            }
        }
        for name in &declared.tools {
            if grants.tools.contains(name) {
                effective.tools.push(name.clone());
            } else {
                effective.not_granted.push(format!("tool {name}"));
            }
        }
        match (declared.elicitation, grants.elicitation) {
            (true, true) => effective.elicitation = true,
            (true, false) => effective.not_granted.push("client elicitation".into()),
            (false, true) => effective.not_declared.push("client elicitation".into()),
            (false, false) => {}
        }
        match (declared.sampling, grants.sampling) {
            (true, Some(grant)) => effective.sampling = Some(grant),
            (true, None) => effective.not_granted.push("client sampling".into()),
            (false, Some(_)) => effective.not_declared.push("client sampling".into()),
            (false, None) => {}
        }
        match (declared.roots, grants.roots) {
            (true, true) => effective.roots = true,
            (true, false) => effective.not_granted.push("client roots".into()),
            (false, true) => effective.not_declared.push("client roots".into()),
            (false, false) => {}
        }
        let (http, not_granted) =
            HttpAccess::resolve(&declared.http, &declared.secrets, &grants.http, &grants.secrets)?;
        let undeclared = |kind: &str, granted: Vec<&String>, declared: &[String]| -> Vec<String> {
            granted
                .into_iter()
                .filter(|g| !declared.contains(g))
                .map(|g| format!("{kind} {g}"))
                .collect()
        };
        let client_undeclared = std::mem::take(&mut effective.not_declared);
        effective.not_declared = [
            undeclared(
                "dir",
                grants.dirs.iter().map(|g| &g.guest).collect(),
                &declared.dirs,
            ),
            undeclared("env", grants.env.iter().collect(), &declared.env),
            undeclared("tool", grants.tools.iter().collect(), &declared.tools),
            http.not_declared(&declared.secrets, &grants.secrets),
            client_undeclared,
        ]
        .concat();
        effective.http = http;
        effective.not_granted.extend(not_granted);
        Ok(effective)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_declared_and_granted_capabilities_are_effective() {
        let dir = std::env::temp_dir();
        let declared = Declared {
            dirs: vec!["/data".into(), "/other".into()],
            env: vec!["HOME".into(), "PATH".into()],
            tools: vec!["greet".into(), "wipe".into()],
            ..Default::default()
        };
        let grants = Grants {
            dirs: vec![
                DirGrant {
                    host: dir.clone(),
                    guest: "/data".into(),
                    mode: DirMode::Rw,
                },
                DirGrant {
                    host: dir,
                    guest: "/undeclared".into(),
                    mode: DirMode::Rw,
                },
            ],
            env: vec!["PATH".into(), "UNDECLARED".into()],
            tools: vec!["greet".into(), "undeclared".into()],
            ..Default::default()
        };
        let eff = Effective::resolve(&declared, &grants).unwrap();
        assert_eq!(eff.dirs.len(), 1);
        assert_eq!(eff.dirs[0].guest, "/data");
        assert_eq!(
            eff.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["PATH"]
        );
        assert_eq!(eff.tools, ["greet"]);
        assert_eq!(eff.not_granted, ["dir /other", "env HOME", "tool wipe"]);
        assert_eq!(
            eff.not_declared,
            ["dir /undeclared", "env UNDECLARED", "tool undeclared"]
        );
    }

    #[test]
    fn client_capabilities_need_a_declaration_and_a_grant() {
        let both = Declared {
            elicitation: true,
            sampling: true,
            roots: true,
            ..Default::default()
        };
        let budget = SamplingGrant {
            requests: 2,
            max_tokens: 100,
        };
        let granted = Grants {
            elicitation: true,
            sampling: Some(budget),
            roots: true,
            ..Default::default()
        };
        let eff = Effective::resolve(&both, &granted).unwrap();
        assert!(eff.elicitation && eff.roots);
        assert_eq!(eff.sampling, Some(budget));
        let ungranted = Effective::resolve(&both, &Grants::default()).unwrap();
        assert!(!ungranted.elicitation && ungranted.sampling.is_none() && !ungranted.roots);
        assert_eq!(
            ungranted.not_granted,
            ["client elicitation", "client sampling", "client roots"]
        );
        let undeclared = Effective::resolve(&Declared::default(), &granted).unwrap();
        assert!(!undeclared.elicitation && undeclared.sampling.is_none() && !undeclared.roots);
        assert_eq!(
            undeclared.not_declared,
            ["client elicitation", "client sampling", "client roots"]
        );
        let parsed: Grants =
            toml::from_str("elicitation = true\nsampling = { requests = 3 }\nroots = true").unwrap();
        assert!(parsed.roots);
        assert_eq!(
            parsed.sampling,
            Some(SamplingGrant {
                requests: 3,
                max_tokens: 1024
            })
        );
    }

    #[test]
    fn declarations_parse_strictly() {
        let mut d = Declared::default();
        d.parse("dir /a\nenv X\n\nhttp *\nsecret TOKEN\ntool greet\nclient sampling\nclient roots")
            .unwrap();
        assert_eq!(
            d,
            Declared {
                dirs: vec!["/a".into()],
                env: vec!["X".into()],
                tools: vec!["greet".into()],
                http: vec!["*".into()],
                secrets: vec!["TOKEN".into()],
                elicitation: false,
                sampling: true,
                roots: true,
                tasks: Vec::new(),
                tasks_deferred: Vec::new(),
            }
        );
        assert!(
            d.to_section()
                .ends_with("tool greet\nclient sampling\nclient roots\n")
        );
        assert!(d.parse("client everything").is_err());
        assert!(d.parse("net everything").is_err());
        assert!(d.parse("dirs").is_err());
    }

    #[test]
    fn task_support_is_declared_per_tool_and_read_back() {
        let mut d = Declared::default();
        d.parse("task build optional\ntask train required\ntask build required")
            .unwrap();
        d.dedup();
        assert_eq!(
            d.tasks,
            [
                ("build".to_string(), TaskSupport::Optional),
                ("train".to_string(), TaskSupport::Required)
            ]
        );
        assert!(
            d.to_section()
                .ends_with("task build optional\ntask train required\n")
        );
        for bad in [
            "task",
            "task build",
            "task build sometimes",
            "task  optional",
            "task build optional required",
            "task build deferred deferred",
        ] {
            assert!(Declared::default().parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_deferred_task_is_read_on_its_support_line_or_its_own() {
        let mut d = Declared::default();
        d.parse("task ask required deferred\ntask gather optional\ntask gather deferred\ntask ask deferred")
            .unwrap();
        d.dedup();
        assert_eq!(
            d.tasks,
            [
                ("ask".to_string(), TaskSupport::Required),
                ("gather".to_string(), TaskSupport::Optional)
            ]
        );
        assert_eq!(d.tasks_deferred, ["ask", "gather"]);
        let mut again = Declared::default();
        again.parse(&d.to_section()).unwrap();
        assert_eq!(again, d);
    }
}
