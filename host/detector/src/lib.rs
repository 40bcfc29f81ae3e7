//! # toolhost-detector: judging shell commands before they run
//!
//! toolhost asks a person (or a reviewer) before an agent's shell command
//! runs when this crate says the command is dangerous. [`detect`] reads a
//! command the way a shell would and judges every simple command in it.
//!
//! | item | role |
//! | --- | --- |
//! | [`detect`] → [`Verdict`] | whether a command needs approval, and why |
//! | [`inspect`], [`inspect_in`], [`inspect_with`] → [`Inspection`] | the verdict plus every program the command runs |
//! | [`Context`] | where a command runs: working directory, home, protected paths, writable folders inside them |
//! | [`Verdict`], [`Match`], [`Category`] | the answer: each reason, its kind and the text that triggered it |
//! | [`UnknownCategory`] | the error of parsing a category name |
//! | [`normalized_program_name`] | the name a program word is judged by |
//! | [`MAX_COMMAND_BYTES`], [`MAX_MATCHES`], [`MAX_MATCHED_CHARS`] | the bounds of the analysis and of a verdict |
//!
//! ```
//! use toolhost_detector::{Category, detect};
//!
//! let v = detect("cd /tmp && sh -c 'rm -rf build'");
//! assert!(v.dangerous);
//! assert_eq!(v.categories, vec![Category::RecursiveDelete]);
//! assert!(!detect("echo 'rm -rf /'").dangerous);
//! ```
//!
//! ## How a command is read
//!
//! | stage | module | what it does |
//! | --- | --- | --- |
//! | readings | `sanitize` | the command as given, with terminal escapes and invisible characters removed, NFKC-normalized, and with look-alike letters and dashes of other scripts folded to the ASCII they imitate (`rm −rf /`, `ѕudo`); all are analysed, and a program name spelled with look-alikes is also `opaque` |
//! | parsing | `parser` | a tolerant, depth-bounded parser for the POSIX/bash language |
//! | expansion | `expand`, `payload` | brace expansion, variables and arrays the script sets, static output of `echo`/`printf`/`base64 -d` pipelines |
//! | definitions | `definitions` | aliases expanded where used; functions judged at every call with its arguments |
//! | written files | `files` | scripts and program copies the command writes, analysed when it runs them |
//! | resolution | `resolve` | program names normalized, wrappers (`sudo`, `env`, `watch`, `ssh`, ...) peeled; the command of a bulk runner (`xargs`, `parallel`, `find -exec`) judged with operands standing for any files (inside the folders `find` searches) |
//! | environment | `environ` | `PATH`, `LD_PRELOAD`, `BASH_ENV` and variables holding commands (`GIT_SSH_COMMAND`, `PAGER`) |
//! | rules | `rules` | per-program rules; shell payloads (`sh -c`, `eval`, piped code), commands in options (`tar --to-command`, `git -c core.pager`, `vim -c`) and inline interpreter code (one table row per language: Python, Perl, Ruby, JavaScript under Node/Deno/Bun, PHP, Lua, awk, AppleScript, PowerShell, R, Tcl, Julia, jshell, Groovy, Scala/Kotlin, Elixir, Raku, Clojure) analysed recursively; files a program writes or replaces through its own options and operands (`sort -o`, `uniq IN OUT`, `tar -xf A -C DIR`, `gzip FILE`, awk's `print > "f"`) judged like the target of a redirection |
//! | credentials, protected paths | `credentials`, `protected` | reading credential files; changing the paths the caller protects ([`Context`]) |
//!
//! Quoted text is data: it matters only where a program treats it as code
//! (`sh -c`, `eval`, `python -c`, SQL given to a database client, an
//! option that takes a command). A command that cannot be known without
//! running it (a computed command name, decoded or downloaded code)
//! needs approval.
//!
//! ## Opaque commands
//!
//! Some commands run code that is not in their text: a script file
//! (`sh cleanup.sh`, `. ./env.sh`, `python3 x.py`, `./run.sh`), a
//! program found through a changed `PATH`, an injected library, a file of
//! editor or debugger commands. A tool may have written that file a
//! moment earlier, so the detector cannot vouch for it: such a command
//! gets a [`Category::Opaque`] match and [`Verdict::opaque`] is set (as it
//! is for [`Category::DynamicCommand`], code computed at run time). An
//! opaque verdict always needs approval. Files the same command writes
//! before running them are analysed instead, and files in the system's
//! installed locations (`/usr`, `/etc`, `/opt`, ...) are the system's own:
//!
//! ```
//! use toolhost_detector::{Category, detect};
//!
//! let v = detect("sh cleanup.sh");
//! assert!(v.dangerous && v.opaque);
//! assert_eq!(v.categories, vec![Category::Opaque]);
//! let v = detect("echo 'rm -rf build' > c.sh; sh c.sh");
//! assert_eq!(v.categories, vec![Category::RecursiveDelete]);
//! assert!(!detect("source /etc/profile; make test").dangerous);
//! ```
//!
//! The analysis is bounded: input beyond [`MAX_COMMAND_BYTES`], nesting
//! beyond a fixed depth, work beyond a budget proportional to the input
//! or too many function calls and alias expansions yield an
//! `unanalyzable` match (which needs approval) instead of running long or
//! deep. [`detect`] never panics.

#![deny(missing_docs)]

mod analyze;
mod ast;
mod context;
mod credentials;
mod definitions;
mod environ;
mod expand;
mod files;
mod parser;
mod paths;
mod payload;
mod protected;
mod resolve;
mod rules;
mod sanitize;
mod verdict;

use std::panic::{AssertUnwindSafe, catch_unwind};

pub use context::Context;
use verdict::clip;
pub use verdict::{Category, MAX_MATCHED_CHARS, MAX_MATCHES, Match, UnknownCategory, Verdict};

/// The name a program word is judged by: the last path component, lower
/// case (`/usr/bin/../bin/RM` → `rm`). Quotes and escapes must already be
/// removed (see [`inspect`] for whole command lines).
pub fn normalized_program_name(word: &str) -> String {
    resolve::program_name(word)
}

/// The longest command analysed; longer input is analysed up to this size
/// and also flagged `unanalyzable`.
pub const MAX_COMMAND_BYTES: usize = 1024 * 1024;

/// Work units allowed per input byte (plus a fixed base), shared by all
/// readings and nested payloads.
const WORK_PER_BYTE: usize = 64;
const WORK_BASE: usize = 200_000;

/// The full result of analysing a command: the verdict and every program
/// it would run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Inspection {
    /// Whether and why the command needs approval.
    pub verdict: Verdict,
    /// The normalized names (see [`normalized_program_name`]) of every
    /// program and wrapper the command runs, including those inside shell
    /// payloads, substitutions, function bodies and `find -exec`, in order
    /// of appearance (at most 1024). A name the command defines as a
    /// function or alias is listed too: it may run the program of that
    /// name. Programs whose names are computed at run time are not listed;
    /// the verdict flags those as `dynamic_command`.
    pub programs: Vec<String>,
}

/// Judges a shell command line: whether it needs approval and why.
///
/// Guarantees: never panics, terminates in time roughly linear in the
/// input (bounded by a work budget), and flags (as `unanalyzable`) any
/// input it could not analyse completely.
pub fn detect(command: &str) -> Verdict {
    inspect(command).verdict
}

/// Like [`detect`], and also lists the programs the command runs (for
/// operator deny rules). Same guarantees as [`detect`].
pub fn inspect(command: &str) -> Inspection {
    inspect_in(command, None)
}

/// Like [`inspect`], for a command that runs in the working directory
/// `cwd`: relative paths in it are judged as the paths they name there
/// (`echo x > passwd` in `/etc` writes `/etc/passwd`). `None`: unknown.
/// The same as [`inspect_with`] with only a working directory.
pub fn inspect_in(command: &str, cwd: Option<&str>) -> Inspection {
    let mut cx = Context::new();
    if let Some(dir) = cwd {
        cx = cx.with_cwd(dir);
    }
    inspect_with(command, &cx)
}

/// Like [`inspect`], with what the caller knows about where the command
/// runs: its working directory, home folder and protected paths (see
/// [`Context`]). Writing a protected path is
/// [`Category::HostConfigWrite`]. Same guarantees as [`detect`].
pub fn inspect_with(command: &str, context: &Context<'_>) -> Inspection {
    let outcome = catch_unwind(AssertUnwindSafe(|| inspect_inner(command, context)));
    match outcome {
        Ok(v) => v,
        Err(_) => Inspection {
            verdict: Verdict::from_matches(vec![Match {
                category: Category::Unanalyzable,
                matched: clip(command),
                reason: "the detector failed on this command".to_string(),
            }]),
            programs: Vec::new(),
        },
    }
}

fn inspect_inner(command: &str, context: &Context<'_>) -> Inspection {
    let mut findings = Vec::new();
    let mut text = command;
    if command.len() > MAX_COMMAND_BYTES {
        let mut cut = MAX_COMMAND_BYTES;
        while !command.is_char_boundary(cut) {
            cut -= 1;
        }
        text = command.get(..cut).unwrap_or_default();
        findings.push(Match {
            category: Category::Unanalyzable,
            matched: clip(text),
            reason: format!("the command is longer than {MAX_COMMAND_BYTES} bytes"),
        });
    }
    let budget = WORK_BASE + text.len().saturating_mul(WORK_PER_BYTE);
    let host = protected::Host::new(context);
    let cwd = host.working_dir(context.cwd);
    let mut a = analyze::Analyzer::new(budget, host);
    for reading in sanitize::readings(text) {
        a.scope = analyze::Scope {
            cwd: cwd.clone(),
            ..analyze::Scope::default()
        };
        a.files = files::Files::default();
        a.calls = definitions::Calls::default();
        a.git_remotes.clear();
        a.script(&reading, analyze::Input::None);
    }
    findings.append(&mut a.findings);
    Inspection {
        verdict: Verdict::from_matches(findings),
        programs: a.programs,
    }
}
