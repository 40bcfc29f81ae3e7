//! The rules: what each resolved program does that needs approval.
//!
//! Rules see the normalized program name, its expanded arguments, how its
//! standard input is fed and the script's known state. Each file covers one
//! area: files and disks, system administration, version control and
//! infrastructure, networking, SQL, shells and inline interpreter code.

pub(crate) mod args;
mod awk;
mod clients;
mod code;
mod code_lex;
mod configs;
mod editors;
mod fs;
mod infra;
mod langs;
pub(crate) mod names;
mod net;
mod options;
mod outputs;
mod remotes;
mod scripts;
mod sed;
mod serve;
mod services;
pub(crate) mod shell;
mod sql;
mod system;

use super::analyze::{Analyzer, Input, Place};
use super::ast::{Assign, RedirOp, Redirect, Simple};
use super::expand::{Field, INHERITED, UNKNOWN};
use super::paths;
use super::payload::Payload;
use super::protected::Touch;
use super::resolve::{Invocation, Via, resolve_via};
use crate::verdict::Category;
pub(crate) use fs::find_starts;

/// One command as the rules see it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cmd<'a> {
    /// The resolved program.
    pub inv: &'a Invocation,
    /// The simple command it came from.
    pub simple: &'a Simple,
    /// Its standard input.
    pub stdin: &'a Input,
    /// Its place in the pipeline.
    pub place: Place<'a>,
}

impl Cmd<'_> {
    pub fn raw(&self) -> &str {
        &self.simple.raw
    }
    pub fn args(&self) -> &[Field] {
        &self.inv.args
    }
    /// The payload arriving on standard input, if any.
    pub fn stdin_payload(&self) -> Option<&Payload> {
        match self.stdin {
            Input::Pipe(p) | Input::Here(p) => Some(p),
            _ => None,
        }
    }
}

impl Analyzer {
    /// Applies every rule to one resolved command.
    pub(crate) fn judge(&mut self, inv: &Invocation, simple: &Simple, stdin: &Input, place: Place<'_>) {
        let c = Cmd {
            inv,
            simple,
            stdin,
            place,
        };
        let name = inv.name.as_str();
        for w in inv.wrappers.iter().copied().chain(std::iter::once(name)) {
            if !self.programs.iter().any(|p| p == w) && self.programs.len() < 1024 {
                self.programs.push(w.to_string());
            }
        }
        if let Some(ascii) = crate::sanitize::imitated(name) {
            // The folded reading judges it as what it imitates.
            self.add(
                Category::Opaque,
                c.raw(),
                format!(
                    "the program name {name} imitates `{ascii}` with look-alike characters: it runs a different program than it appears to"
                ),
            );
        }
        for f in &inv.env {
            if let Some((n, v)) = f.text.split_once('=') {
                let value = Field {
                    text: v.to_string(),
                    ..f.clone()
                };
                self.environment(n, &value, c.raw());
            }
        }
        self.program_file(&c);
        if names::SHELLS.contains(&name) {
            self.shell(&c);
        } else if let Some(lang) = names::interpreter(name) {
            self.interpreter(&c, lang);
        } else if names::SQL_CLIENTS.contains(&name) {
            self.sql_client(&c);
        }
        self.builtins(&c);
        self.files(&c);
        self.outputs(&c);
        self.system(&c);
        self.services(&c);
        self.infra(&c);
        self.clients(&c);
        self.network(&c);
        self.servers(&c);
        self.options(&c);
        self.editors(&c);
        self.credentials(&c);
        self.protected_rules(&c);
        self.build_files(&c);
        self.record_writes(name, &inv.args, c.stdin_payload());
        self.written_configs(c.raw());
    }

    /// Resolves and judges a command line embedded in another one
    /// (`find -exec`, `docker exec`, `kubectl exec`).
    pub(crate) fn judge_fields(&mut self, fields: Vec<Field>, via: Via, c: &Cmd<'_>) {
        let res = resolve_via(fields, via);
        for (w, args) in &res.wrapped {
            self.wrapper_options(w, args, c.raw());
        }
        for d in &res.dynamic {
            self.add(
                Category::DynamicCommand,
                c.raw(),
                format!("runs a command computed at run time ({d})"),
            );
        }
        if let Some(inv) = res.inv {
            self.judge(&inv, c.simple, &Input::None, c.place);
        }
    }

    /// The normalized path of a field, when its value is known.
    pub(crate) fn path(&self, f: &Field) -> Option<String> {
        if f.text.is_empty() || (f.text.contains(UNKNOWN) && !f.text.starts_with('/')) {
            return None;
        }
        Some(self.host.resolve(&f.text, self.scope.cwd.as_deref()))
    }

    /// Judges a path the command writes to.
    pub(crate) fn write_target(&mut self, f: &Field, matched: &str) {
        self.protected_touch(f, Touch::Write, matched);
        let Some(p) = self.path(f) else { return };
        if paths::is_net_device(&p) {
            self.add(
                Category::ReverseShell,
                matched,
                "connects a stream to a network socket (/dev/tcp)",
            );
        } else if paths::is_block_device(&p) {
            self.add(
                Category::FilesystemFormat,
                matched,
                format!("overwrites the disk device {p}"),
            );
        } else if p.starts_with("/dev/") && !paths::is_harmless_device(&p) {
            self.add(
                Category::DeviceWrite,
                matched,
                format!("writes to the device {p}"),
            );
        } else if paths::is_log_or_history(&p) {
            self.add(
                Category::LogTampering,
                matched,
                format!("overwrites the log or history file {p}"),
            );
        } else if let Some(why) = paths::system_write_reason(&p) {
            self.add(Category::SystemConfigOverwrite, matched, format!("{why}: {p}"));
        }
    }

    /// Judges one redirection of any command.
    pub(crate) fn redirect(&mut self, r: &Redirect) {
        let fields = self.expand(&r.target);
        match r.op {
            RedirOp::Out | RedirOp::Append | RedirOp::ReadWrite => {
                for f in &fields {
                    self.write_target(f, &r.raw);
                }
            }
            RedirOp::In => {
                for f in &fields {
                    self.credential_read(&f.text, &r.raw);
                    if self.path(f).is_some_and(|p| paths::is_net_device(&p)) {
                        self.add(
                            Category::ReverseShell,
                            &r.raw,
                            "reads commands from a network socket (/dev/tcp)",
                        );
                    }
                }
            }
            _ => {}
        }
    }

    /// The provenance of everything substituted into a command's words.
    pub(crate) fn provenance(&mut self, s: &Simple) -> Payload {
        let mut out = Payload::default();
        for w in &s.words {
            let p = self.word_payload(w);
            out.network |= p.network;
            out.decoded |= p.decoded;
            out.secret |= p.secret;
        }
        out
    }

    /// Tracks and judges an assignment (`persist`: it stands alone, so it
    /// changes the script's variables; otherwise it sets the environment
    /// of the command it prefixes).
    pub(crate) fn assignment(&mut self, a: &Assign, persist: bool) {
        if persist && self.array_assignment(a) {
            let first = self.scope.arrays.get(&a.name).and_then(|e| e.first()).cloned();
            let text = first.as_ref().and_then(|f| f.value().map(str::to_string));
            self.set_var(&a.name, text.as_deref(), &a.raw, persist);
            return;
        }
        let mut value = match a.value.first() {
            Some(w) => self.expand_value(w),
            None => Field::lit(""),
        };
        if a.raw.get(a.name.len()..).is_some_and(|r| r.starts_with("+=")) {
            // `NAME+=value` appends to the value held so far.
            let old = self.var_value(&a.name);
            value.text = format!("{}{}", old.as_deref().unwrap_or("\u{1}"), value.text);
            value.known &= old.is_some_and(|o| !o.contains(INHERITED));
        }
        self.environment(&a.name, &value, &a.raw);
        let text = value.value().map(str::to_string);
        if persist && let Some(w) = a.value.first() {
            let mut t = self.word_payload(w);
            t.text = None;
            self.scope.taint.insert(a.name.clone(), t);
        }
        self.set_var(&a.name, text.as_deref(), &a.raw, persist);
    }

    /// Records `name=value` (value `None` when unknown) and judges it.
    pub(crate) fn set_var(&mut self, name: &str, value: Option<&str>, raw: &str, persist: bool) {
        if matches!(name, "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST")
            && value.is_some_and(|v| v.is_empty() || v == "0" || v == "/dev/null")
        {
            self.add(Category::LogTampering, raw, "turns off shell history");
        }
        if persist {
            self.calls.version += 1;
            // In a conditional context the assignment may not happen: the
            // value stays known only if it does not change.
            let value = match self.scope.vars.get(name) {
                _ if self.cond == 0 => value,
                Some(Some(old)) if Some(old.as_str()) == value => value,
                _ => None,
            };
            if name == "IFS" {
                self.scope.ifs = value.map(str::to_string);
            }
            self.scope
                .vars
                .insert(name.to_string(), value.map(str::to_string));
        }
    }

    /// Rules on whole pipelines: a shell wired to a network tool.
    pub(crate) fn pipeline_rules(&mut self, invs: &[Invocation], raw: &str) {
        let shell = invs.iter().any(|i| {
            names::SHELLS.contains(&i.name.as_str())
                && !i
                    .args
                    .iter()
                    .any(|a| a.text.starts_with('-') && a.text.contains('c') && !a.text.starts_with("--"))
        });
        let net = invs.iter().find(|i| names::NET_TOOLS.contains(&i.name.as_str()));
        if let (true, Some(n)) = (shell, net) {
            self.add(
                Category::ReverseShell,
                raw,
                format!("pipes a shell to and from the network ({})", n.name),
            );
        }
    }
}
