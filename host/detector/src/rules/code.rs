//! Inline interpreter code (`python -c`, `perl -e`, `node -e`, `ruby -e`,
//! `php -r`, `Rscript -e`, code piped to `tclsh` or `jshell`, ...).
//!
//! The code is split into string literals and the code around them, so
//! names inside strings are data. What each call does comes from the
//! language's row in the `langs` table: calls that run processes, delete
//! files or trees and evaluate code, plus calls common to all languages
//! that open sockets, fetch from the network or write files. When code
//! runs processes, its string literals (and lists of literals joined, as
//! in `subprocess.call(["rm", "-rf", "/"])`), backtick and `qx` commands
//! and `open("|cmd")` pipes are analysed as shell commands.

use super::awk;
use super::code_lex::{Lexed, any, has, lex};
use super::langs::{COMMON_RUNS, Dialect, Lang};
use crate::analyze::{Analyzer, Input};
use crate::expand::Field;
use crate::paths::{is_block_device, is_harmless_device, is_secret_path, normalize, system_write_reason};
use crate::protected::Touch;
use crate::verdict::Category;

const NET: &[&str] = &[
    "socket",
    "Socket",
    "TCPSocket",
    "fsockopen",
    "connect",
    "createConnection",
    "IO::Socket",
    "stream_socket_client",
    "TCPClient",
];
const FETCH: &[&str] = &[
    "urlopen",
    "urllib",
    "requests",
    "urlretrieve",
    "http.get",
    "https.get",
    "fetch",
    "LWP",
    "HTTP::Tiny",
    "Net::HTTP",
    "open-uri",
    "URI.open",
    "file_get_contents",
    "Invoke-WebRequest",
    "iwr",
    "DownloadString",
    "WebClient",
    "curl_exec",
    "axios",
    "httpx",
];
const WRITE: &[&str] = &[
    "write",
    "writeFile",
    "writeFileSync",
    "appendFile",
    "appendFileSync",
    "file_put_contents",
    "fopen",
    "Set-Content",
    "Out-File",
    "Add-Content",
    "copy",
    "copyfile",
    "move",
    "rename",
    "replace",
    "chmod",
    "chown",
    "remove",
    "unlink",
    "unlinkSync",
    "rmdir",
    "truncate",
    "write_text",
    "write_bytes",
    "symlink",
];

/// The entries of a call table that are one name.
fn single(entries: &'static [&'static [&'static str]]) -> Vec<&'static str> {
    entries
        .iter()
        .filter(|e| e.len() == 1)
        .filter_map(|e| e.first().copied())
        .collect()
}

/// The command lines after each `word` of `src` that starts a command
/// (`exec rm -rf d`, `[exec ls]`): up to `]`, `;` or the end of the line.
fn command_lines(src: &str, word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = src.get(from..).and_then(|r| r.find(word)) {
        let start = from + pos;
        let end = start + word.len();
        from = end;
        let before = src
            .get(..start)
            .and_then(|b| b.trim_end_matches([' ', '\t']).chars().next_back());
        let after = src.get(end..).and_then(|a| a.chars().next());
        let starts_command = before.is_none_or(|c| matches!(c, '[' | ';' | '\n' | '{'));
        if !starts_command || !after.is_some_and(char::is_whitespace) {
            continue;
        }
        let rest = src.get(end..).unwrap_or_default();
        let stop = rest.find([']', ';', '\n']).unwrap_or(rest.len());
        out.push(rest.get(..stop).unwrap_or_default().trim().to_string());
        if out.len() >= 64 {
            break;
        }
    }
    out
}

/// Whether every name of one of `entries` occurs in `code`.
fn calls(code: &str, entries: &[&[&str]]) -> bool {
    entries.iter().any(|all| all.iter().all(|n| has(code, n)))
}

impl Analyzer {
    /// Judges inline interpreter code of the language `lang` (a row of
    /// [`LANGUAGES`](super::langs::LANGUAGES)).
    pub(crate) fn inline_code(&mut self, lang: Lang, src: &str, raw: &str) {
        if !self.spend(src.len()) {
            return;
        }
        let lx = lex(src, lang);
        if lx.code.contains(crate::expand::UNKNOWN) {
            self.add(
                Category::DynamicCommand,
                raw,
                "inline interpreter code is partly computed at run time",
            );
        }
        // Case-insensitive languages are matched in lower case (their
        // table rows are written so).
        let code = if lang.dialect == Dialect::PowerShell || lang.name == "applescript" {
            lx.code.to_lowercase()
        } else {
            lx.code.clone()
        };
        let code = code.as_str();
        // A string naming a function calls it where strings are callables
        // (`array_map('unlink', glob('*'))`).
        let named =
            |names: &[&str]| lang.string_callables && lx.strings.iter().any(|s| names.contains(&s.as_str()));
        let mut exec =
            any(code, COMMON_RUNS) || any(code, lang.runs) || named(COMMON_RUNS) || named(lang.runs);
        let mut commands: Vec<String> = lx.shell.clone();
        if lang.pipe_open {
            // `open(F, "|cmd")`, `open("| cmd")`, Perl's `open(F, "cmd |")`.
            for s in &lx.strings {
                let t = s.trim();
                let cmd = t
                    .strip_prefix('|')
                    .or_else(|| t.strip_suffix('|').filter(|_| lang.name == "perl"));
                if let Some(cmd) = cmd.filter(|c| !c.trim().is_empty() && has(code, "open")) {
                    commands.push(cmd.trim_start_matches('-').to_string());
                    exec = true;
                }
            }
        }
        for w in lang.command_words {
            commands.extend(command_lines(src, w));
        }
        if lang.dialect == Dialect::Awk {
            let e = awk::scan(src);
            exec = !e.commands.is_empty();
            commands.extend(e.commands.into_iter().flatten());
            for w in e.writes.into_iter().flatten() {
                self.write_target(&Field::lit(&w), raw);
            }
        }
        let tree = calls(code, lang.tree_deletes) || named(&single(lang.tree_deletes));
        if tree {
            self.add(
                Category::RecursiveDelete,
                raw,
                "inline code deletes a directory tree",
            );
        }
        let deletes = calls(code, lang.deletes) || named(&single(lang.deletes));
        if deletes && !tree {
            self.add(Category::FileDestruction, raw, "inline code deletes files");
        }
        let fork = any(code, &["fork", "pcntl_fork"]);
        if fork && any(code, &["while", "for", "loop", "until", "forever"]) {
            self.add(Category::ForkBomb, raw, "inline code forks in a loop");
        }
        if any(code, NET) && (exec || any(code, &["dup2", "pty", "IO.copy", "pipe"])) {
            self.add(
                Category::ReverseShell,
                raw,
                "inline code connects a process to a network socket",
            );
        }
        let evals = has(code, "eval") || any(code, lang.evals) || named(lang.evals);
        if any(code, FETCH) && (evals || exec) {
            self.add(
                Category::RemoteCodeExecution,
                raw,
                "inline code runs code it downloads",
            );
        }
        if exec || !commands.is_empty() {
            self.add(
                Category::CodeExecution,
                raw,
                "inline interpreter code runs other programs",
            );
        } else if evals {
            self.add(
                Category::CodeExecution,
                raw,
                "inline interpreter code evaluates dynamically built code",
            );
        }
        if any(code, &["kill", "killpg", "stop-process", "Stop-Process"]) {
            self.add(Category::ProcessKill, raw, "inline code kills processes");
        }
        self.code_paths(code, &lx, raw, deletes || tree);
        if exec && lang.dialect != Dialect::Awk {
            commands.extend(lx.strings.iter().cloned());
            commands.extend(lx.groups.iter().cloned());
        }
        for cmd in commands {
            if !cmd.trim().is_empty() {
                self.payload(&cmd, Input::None);
            }
        }
    }

    /// Sensitive paths written, deleted or read by inline code.
    fn code_paths(&mut self, code: &str, lx: &Lexed, raw: &str, deletes: bool) {
        let mode_write = lx.strings.iter().any(|s| {
            matches!(
                s.as_str(),
                "w" | "a" | "x" | "w+" | "a+" | "r+" | "wb" | "ab" | "wt" | "at" | "rb+" | "wb+"
            )
        });
        let perl_write = lx
            .strings
            .iter()
            .any(|s| s.starts_with('>') || s.starts_with("+<"));
        let writes = any(code, WRITE) || (has(code, "open") && mode_write) || perl_write;
        let sends = any(code, FETCH) || any(code, NET);
        for s in &lx.strings {
            let target = s.trim_start_matches(['>', '+', '<']).trim();
            if target.is_empty() || target.len() > 4096 || target.contains(['\n', ' ']) {
                continue;
            }
            if writes || deletes {
                let how = if deletes { Touch::Remove } else { Touch::Write };
                self.protected_touch(&Field::lit(target), how, raw);
            }
            if target.contains('/') || target.starts_with('.') {
                self.credential_read(target, raw);
            }
            if !target.starts_with('/') && !target.starts_with('~') {
                continue;
            }
            let p = normalize(target, None);
            if writes {
                if is_block_device(&p) {
                    self.add(
                        Category::FilesystemFormat,
                        raw,
                        format!("inline code writes the disk device {p}"),
                    );
                } else if p.starts_with("/dev/") && !is_harmless_device(&p) {
                    self.add(
                        Category::DeviceWrite,
                        raw,
                        format!("inline code writes the device {p}"),
                    );
                } else if let Some(why) = system_write_reason(&p) {
                    self.add(
                        Category::SystemConfigOverwrite,
                        raw,
                        format!("inline code {why}: {p}"),
                    );
                }
            }
            if sends && is_secret_path(&p) {
                self.add(
                    Category::SecretExfiltration,
                    raw,
                    format!("inline code sends the secret file {p}"),
                );
            }
        }
    }
}
