//! Files the command writes, and what running a file does.
//!
//! A script written and run in the same command is analysed like code
//! given inline: `echo 'rm -rf d' > f; sh f`, `cat > f <<EOF ... EOF;
//! bash f`, `printf '#!/bin/sh\n...' > x; chmod +x x; ./x`, `. ./f`. A
//! program copied, linked or renamed under a new name is judged as itself
//! (`cp /bin/rm x; ./x -rf d`, `ln -s $(which rm) y; ./y -rf d`).
//!
//! Any other script file is opaque: its content is not in the command (a
//! tool may have written it a moment earlier), so running it (`sh f`,
//! `source f`, `python3 f.py`, `./run.sh`) needs approval. Files in
//! installed locations ([`paths::is_installed`]) are the system's own and
//! stay benign (`source /etc/profile`, `/usr/bin/env`).

use std::collections::HashMap;

use super::analyze::{Analyzer, Input};
use super::ast::Redirect;
use super::expand::{Field, UNKNOWN};
use super::paths;
use super::payload::Payload;
use super::rules::args;
use super::rules::names::{SHELLS, interpreter};
use super::rules::shell::Sink;
use crate::verdict::Category;

/// The most files remembered per reading.
const MAX_FILES: usize = 1024;
/// Longer file contents are remembered as unknown.
const MAX_FILE_TEXT: usize = 256 * 1024;

/// What a file written by the command holds.
#[derive(Debug, Clone)]
pub(crate) enum Content {
    /// Data, with its text when known (a script).
    Data(Payload),
    /// A copy of (or link to) the named installed program.
    Program(String),
}

/// The files written so far, by normalized path.
#[derive(Debug, Default)]
pub(crate) struct Files {
    map: HashMap<String, Content>,
    /// Files being run, innermost last (a script that runs itself).
    running: Vec<String>,
    /// Depth of programs re-judged under their real name.
    pub renames: usize,
    /// Files written since the last [`Files::take_written`].
    written: Vec<String>,
}

impl Files {
    /// The files written since the last call.
    pub(crate) fn take_written(&mut self) -> Vec<String> {
        std::mem::take(&mut self.written)
    }
}

impl Analyzer {
    fn file_key(&self, f: &Field) -> Option<String> {
        if !f.known || f.glob || f.text.is_empty() {
            return None;
        }
        Some(self.host.resolve(&f.text, self.scope.cwd.as_deref()))
    }

    /// What the command wrote earlier into the file `f`, if it did.
    pub(crate) fn file_content(&self, f: &Field) -> Option<Content> {
        self.files.map.get(&self.file_key(f)?).cloned()
    }

    /// The data the command wrote earlier into `f` (a program copy is
    /// data of unknown text).
    pub(crate) fn file_data(&self, f: &Field) -> Option<Payload> {
        match self.file_content(f)? {
            Content::Data(p) => Some(p),
            Content::Program(_) => Some(Payload::default()),
        }
    }

    /// Remembers that `f` now holds `content` (appended to what it held).
    pub(crate) fn record_file(&mut self, f: &Field, content: Content, append: bool) {
        let Some(key) = self.file_key(f) else { return };
        let content = match (append, content) {
            (true, Content::Data(new)) => match self.files.map.remove(&key) {
                // Appending reuses the text held so far (no copy per append).
                Some(Content::Data(old)) => Content::Data(old.then(new)),
                Some(Content::Program(_)) => Content::Data(Payload::default()),
                None => Content::Data(new),
            },
            (_, c) => c,
        };
        let content = match content {
            Content::Data(mut p) if p.text.as_ref().is_some_and(|t| t.len() > MAX_FILE_TEXT) => {
                p.text = None;
                Content::Data(p)
            }
            c => c,
        };
        if self.files.map.len() < MAX_FILES || self.files.map.contains_key(&key) {
            if self.files.written.len() < MAX_FILES {
                self.files.written.push(key.clone());
            }
            self.files.map.insert(key, content);
        }
    }

    fn forget_file(&mut self, f: &Field) {
        if let Some(key) = self.file_key(f) {
            self.files.map.remove(&key);
        }
    }

    /// Records the files a command's output redirections write.
    pub(crate) fn record_redirects(&mut self, redirects: &[Redirect], output: Payload) {
        for r in redirects.iter().filter(|r| r.op.writes()) {
            let fd = r.raw.chars().take_while(char::is_ascii_digit).collect::<String>();
            let data = if fd.is_empty() || fd == "1" {
                output.clone()
            } else {
                Payload::default()
            };
            let append = r.op == super::ast::RedirOp::Append;
            for f in self.expand(&r.target) {
                self.record_file(&f, Content::Data(data.clone()), append);
            }
        }
    }

    /// What copying from `src` puts into the copy.
    fn copied(&self, src: &Field) -> Content {
        if let Some(c) = self.file_content(src) {
            return c;
        }
        match self.file_key(src) {
            Some(p) if p.starts_with('/') && paths::is_installed(&p) => {
                Content::Program(paths::basename(&p).to_lowercase())
            }
            _ => Content::Data(Payload::default()),
        }
    }

    /// Records the files written by `tee`, `cp`, `ln`, `mv`, `install`,
    /// `curl -o` and `wget -O`.
    pub(crate) fn record_writes(&mut self, name: &str, a: &[Field], stdin: Option<&Payload>) {
        match name {
            "tee" => {
                let p = args::parse(a, "", &[]);
                let data = stdin.cloned().unwrap_or_default();
                let append = p.short("a");
                for f in p.operands {
                    self.record_file(f, Content::Data(data.clone()), append);
                }
            }
            "cp" | "install" | "ln" | "mv" => {
                let p = args::parse(a, "tSmog", &["--target-directory", "--suffix", "--mode"]);
                let ops: Vec<Field> = p.operands.iter().map(|f| (*f).clone()).collect();
                let dir = p.value(&["t", "--target-directory"]).map(Field::lit);
                let (sources, dest, into_dir) = match (&dir, ops.as_slice()) {
                    (Some(d), all) => (all.to_vec(), d.clone(), true),
                    (None, [one]) if name == "ln" => (vec![one.clone()], Field::lit("."), true),
                    (None, [srcs @ .., last]) if !srcs.is_empty() => {
                        let into = srcs.len() > 1
                            || last.text.ends_with('/')
                            || matches!(last.text.as_str(), "." | "..");
                        (srcs.to_vec(), last.clone(), into)
                    }
                    _ => return,
                };
                for src in &sources {
                    let content = self.copied(src);
                    let target = if into_dir {
                        let base = paths::basename(src.text.trim_end_matches('/'));
                        Field {
                            text: format!("{}/{base}", dest.text.trim_end_matches('/')),
                            ..dest.clone()
                        }
                    } else {
                        dest.clone()
                    };
                    self.record_file(&target, content, false);
                    if name == "mv" {
                        self.forget_file(src);
                    }
                }
            }
            "curl" | "wget" => {
                let keys: &[&str] = if name == "curl" {
                    &["o", "--output"]
                } else {
                    &["O", "--output-document"]
                };
                let p = args::parse(a, "oO", &["--output", "--output-document"]);
                let fetched = Payload {
                    network: true,
                    ..Payload::default()
                };
                let targets: Vec<String> = p
                    .values_of(keys)
                    .filter(|v| *v != "-")
                    .map(str::to_string)
                    .collect();
                for t in targets {
                    self.record_file(&Field::lit(&t), Content::Data(fetched.clone()), false);
                }
            }
            _ => {}
        }
    }

    /// Runs the file `f` as code for `sink` with arguments `args`: known
    /// content is analysed, anything else is opaque.
    pub(crate) fn run_file(&mut self, f: &Field, sink: Sink, matched: &str, args: &[Field]) {
        if f.text == "/dev/null" {
            return;
        }
        let shown = f.text.replace(UNKNOWN, "…");
        match self.file_content(f) {
            Some(Content::Data(p)) => match p.text.clone() {
                Some(text) => {
                    if p.network || p.decoded {
                        self.run_unknown(&p, &shown, matched);
                    }
                    self.run_text(f, &text, sink, matched, args);
                }
                None => self.run_unknown(&p, &shown, matched),
            },
            Some(Content::Program(n)) => self.add(
                Category::Opaque,
                matched,
                format!("runs {shown}, a copy of the program {n}, as a script"),
            ),
            None if !f.known => self.add(
                Category::Opaque,
                matched,
                format!("runs a script file whose name is computed at run time ({shown})"),
            ),
            None => {
                let p = paths::normalize(&f.text, self.scope.cwd.as_deref());
                if !(p.starts_with('/') && paths::is_installed(&p)) {
                    self.add(
                        Category::Opaque,
                        matched,
                        format!("runs the script file {shown}, whose content the detector cannot see"),
                    );
                }
            }
        }
    }

    /// Runs a file this command wrote with unknown text.
    pub(crate) fn run_unknown(&mut self, p: &Payload, shown: &str, matched: &str) {
        if p.network {
            self.add(
                Category::RemoteCodeExecution,
                matched,
                format!("runs {shown}, which this command downloads from the network"),
            );
        } else if p.decoded {
            self.add(
                Category::DynamicCommand,
                matched,
                format!("runs {shown}, which holds decoded or transformed data"),
            );
        } else {
            self.add(
                Category::Opaque,
                matched,
                format!("runs {shown}, which this command writes with content that cannot be known"),
            );
        }
    }

    /// Runs the known text of a file, once at a time (a script that runs
    /// itself is not followed).
    fn run_text(&mut self, f: &Field, text: &str, sink: Sink, matched: &str, args: &[Field]) {
        let key = self.file_key(f).unwrap_or_default();
        if self.files.running.contains(&key) || !self.spend(text.len()) {
            return;
        }
        self.files.running.push(key);
        match sink {
            Sink::Shell => self.payload_with(text, Input::None, Some(args.to_vec())),
            Sink::Source => {
                let saved = self.scope.positional.clone();
                if !args.is_empty() {
                    self.scope.positional = Some(args.to_vec());
                }
                self.script(text, Input::None);
                self.scope.positional = saved;
            }
            Sink::Code(lang) => self.inline_code(lang, text, matched),
            Sink::Sql => self.sql_text(text, matched),
        }
        self.files.running.pop();
    }

    /// Runs the known text of an executable file: its `#!` line picks
    /// the interpreter (a shell when there is none).
    pub(crate) fn run_executable(&mut self, f: &Field, text: &str, matched: &str, args: &[Field]) {
        let sink = match shebang(text) {
            None => Sink::Shell,
            Some(n) if SHELLS.contains(&n.as_str()) => Sink::Shell,
            Some(n) => match interpreter(&n) {
                Some(lang) => Sink::Code(lang),
                None => {
                    self.add(
                        Category::Opaque,
                        matched,
                        format!(
                            "runs {} with the interpreter {n}, which the detector cannot follow",
                            f.text
                        ),
                    );
                    return;
                }
            },
        };
        self.run_text(f, text, sink, matched, args);
    }
}

/// The interpreter a `#!` line names (`#!/usr/bin/env -S python3 -u` →
/// `python3`), normalized.
fn shebang(text: &str) -> Option<String> {
    let line = text.strip_prefix("#!")?.lines().next()?;
    let mut words = line.split_whitespace();
    let first = paths::basename(words.next()?).to_lowercase();
    if first != "env" {
        return Some(first);
    }
    words
        .find(|w| !w.starts_with('-'))
        .map(|w| paths::basename(w).to_lowercase())
}
